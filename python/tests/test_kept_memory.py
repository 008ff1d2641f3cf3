"""The row storage kept from one copy of sparse rows for the next: what is kept, and that runs
on kept storage are the runs on fresh storage, bit for bit."""

import numpy as np
import scipy.sparse as sp

import hogwild


def _rows(rows, seed):
    rng = np.random.default_rng(seed)
    X = sp.random(rows, 300, density=0.05, format="csr", random_state=rng, dtype=np.float64)
    y = np.where(rng.random(rows) < 0.5, -1.0, 1.0)
    return X, y


_SERIAL = dict(policy="serial", threads=1, epochs=3, step=0.2, seed=3)


def test_sparse_runs_keep_their_copies_of_the_rows_until_released():
    hogwild.release_memory()
    X, y = _rows(2000, 1)
    hogwild.train(X, y, **_SERIAL)
    # Offsets (8 bytes a row and one) and an index and a value (4 bytes each) per nonzero.
    least = 8 * (X.shape[0] + 1) + 8 * X.nnz
    kept = hogwild.kept_memory()
    assert kept >= least
    # A smaller copy keeps its own storage beside the first (as a prediction's would) ...
    small, y_small = _rows(100, 2)
    hogwild.train(small, y_small, **_SERIAL)
    both = hogwild.kept_memory()
    assert both > kept
    # ... which the next copy of its size takes and gives back: nothing is added.
    hogwild.train(small, y_small, **_SERIAL)
    assert hogwild.kept_memory() == both
    # A copy that fits in neither is kept in place of the smallest: two copies at most.
    larger, y_larger = _rows(3000, 3)
    hogwild.train(larger, y_larger, **_SERIAL)
    assert hogwild.kept_memory() > kept + 8 * (larger.shape[0] + 1) + 8 * larger.nnz - 1
    assert hogwild.kept_memory() < both + 8 * (larger.shape[0] + 1) + 8 * larger.nnz
    total = hogwild.kept_memory()
    assert hogwild.release_memory() == total
    assert hogwild.kept_memory() == 0
    assert hogwild.release_memory() == 0


def test_dense_rows_keep_nothing():
    hogwild.release_memory()
    X, y = _rows(200, 3)
    hogwild.train(X.toarray(), (y > 0).astype(int), model="softmax", **_SERIAL)
    assert hogwild.kept_memory() == 0


def test_runs_and_predictions_on_kept_storage_are_those_on_fresh_storage():
    # Larger, yet less than twice as large: the copy of X takes its storage.
    large, y_large = _rows(1500, 4)
    X, y = _rows(1000, 5)
    X_test, _ = _rows(500, 6)
    hogwild.release_memory()
    fresh, fresh_report = hogwild.train(X, y, intercept=True, **_SERIAL)
    fresh_scores = fresh.predict_proba(X_test)
    # The kept storage is larger than these rows and holds another run's values.
    hogwild.release_memory()
    hogwild.train(large, y_large, **_SERIAL)
    assert hogwild.kept_memory() > 0
    kept, kept_report = hogwild.train(X, y, intercept=True, **_SERIAL)
    np.testing.assert_array_equal(kept.weights, fresh.weights)
    assert [e["train_loss"] for e in kept_report["epochs"]] == \
        [e["train_loss"] for e in fresh_report["epochs"]]
    np.testing.assert_array_equal(kept.predict_proba(X_test), fresh_scores)
    # Rows that outgrow the kept storage get storage of their own, and are kept in turn.
    before = hogwild.kept_memory()
    larger, y_larger = _rows(6000, 7)
    hogwild.train(larger, y_larger, **_SERIAL)
    assert hogwild.kept_memory() > before


def test_runs_in_several_python_threads_share_the_kept_storage_safely():
    from concurrent.futures import ThreadPoolExecutor

    data = [_rows(rows, seed) for rows, seed in ((800, 8), (1500, 9), (400, 10), (1200, 11))]
    hogwild.release_memory()
    alone = [hogwild.train(X, y, **_SERIAL)[0].weights for X, y in data]
    for workers in (2, 4):
        with ThreadPoolExecutor(workers) as pool:
            together = list(pool.map(lambda d: hogwild.train(*d, **_SERIAL)[0].weights,
                                     data * 2))
        for got, expected in zip(together, alone * 2):
            np.testing.assert_array_equal(got, expected)
