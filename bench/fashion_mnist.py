"""Fashion-MNIST as numpy arrays, for the Python benchmarks (Debian's dataset-fashion-mnist)."""
import gzip

import numpy as np

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    """An IDX file (gzip-compressed) as a uint8 array of its stored shape."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * d:8 + 4 * d], "big") for d in range(dims)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)
