"""Conversions of numpy arrays and scipy.sparse matrices to the layouts the native module takes.

Each function copies only what is not already in the target layout: a C-contiguous float32 matrix,
or CSR with sorted indices and no duplicates, goes through as it is.
"""

import numpy as np
import scipy.sparse as sp


def is_sparse(X):
    """True for a scipy.sparse matrix or array."""
    return sp.issparse(X)


def matrix(X, what="X"):
    """X as a scipy.sparse matrix or a 2-d numpy array."""
    if not sp.issparse(X):
        X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"{what}: expected a matrix (2 dimensions), found {X.ndim} dimension(s)")
    return X


# Column indices are 32-bit, one kept free for an intercept's constant feature.
_MAX_COLUMNS = 2**32 - 1


def csr_parts(X):
    """X as CSR arrays: uint64 indptr, and the column indices (sorted within each row) and values
    as scipy holds them; the native module converts those to its own types in its copy of the
    rows."""
    if X.shape[1] > _MAX_COLUMNS:
        raise ValueError(f"X: expected at most {_MAX_COLUMNS} columns, found {X.shape[1]}")
    # A CSR matrix goes through as it is: scipy keeps what has_canonical_format found on it, so
    # fits on the same matrix check its rows once.
    if not (sp.issparse(X) and X.format == "csr"):
        X = sp.csr_matrix(X)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return (
        np.ascontiguousarray(X.indptr, dtype=np.uint64),
        np.ascontiguousarray(X.indices),
        np.ascontiguousarray(X.data),
    )


def dense_rows(X):
    """X as a C-contiguous float32 matrix (a sparse one made dense)."""
    if sp.issparse(X):
        X = X.toarray()
    return np.ascontiguousarray(matrix(X), dtype=np.float32)


def pairs(X, what="X"):
    """(user, item) pairs, a matrix of two integer columns, as two uint32 arrays."""
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"{what}: expected (user, item) pairs, a matrix of 2 columns, "
                         f"found shape {X.shape}")
    if X.size and (not np.all(np.equal(np.mod(X, 1), 0)) or X.min() < 0 or X.max() >= 2**32):
        raise ValueError(f"{what}: expected non-negative integer user and item ids")
    return (np.ascontiguousarray(X[:, 0], dtype=np.uint32),
            np.ascontiguousarray(X[:, 1], dtype=np.uint32))


def labels_of(y, rows, dtype, what="y"):
    """y as a 1-d array of `rows` finite values of `dtype`; integer dtypes need integral values
    in their range."""
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != rows:
        raise ValueError(f"{what}: expected {rows} labels (one per row), found shape {y.shape}")
    if not np.issubdtype(y.dtype, np.number) and y.dtype != np.bool_:
        raise ValueError(f"{what}: expected numeric labels, found dtype {y.dtype}")
    _first_bad(what, y, ~np.isfinite(y), "a finite label")
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        _first_bad(what, y, np.not_equal(np.mod(y, 1), 0),
                   "an integer class label (softmax and mlp on dense rows)")
        _first_bad(what, y, (y < info.min) | (y > info.max),
                   f"a class label in [{info.min}, {info.max}]")
    else:
        _first_bad(what, y, np.abs(y) > np.finfo(dtype).max, f"a label within {dtype.__name__}")
    return np.ascontiguousarray(y, dtype=dtype)


def _first_bad(what, y, bad, expected):
    if bad.any():
        row = int(np.argmax(bad))
        raise ValueError(f"{what}: row {row}: expected {expected}, found {y[row]}")
