"""hogwild.train and hogwild.Model against the command line on the same data, and the errors."""

import json
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

import hogwild


def _load(path, features=None):
    X, y = load_svmlight_file(str(path), n_features=features, dtype=np.float32)
    return X, y


def test_a_serial_run_is_the_command_lines_run_on_the_same_data(cli, sparse_files, tmp_path):
    train, test = sparse_files
    X, y = _load(train)
    X_test, y_test = _load(test, X.shape[1])
    options = dict(policy="serial", epochs=4, step=0.3, l2=1e-4, seed=7)
    model, report = hogwild.train(X, y, X_test=X_test, y_test=y_test, **options)
    cli("train", "--train", train, "--test", test, "--policy", "serial", "--epochs", 4, "--step",
        0.3, "--l2", 1e-4, "--seed", 7, "--json", tmp_path / "r.json", "--checkpoint",
        tmp_path / "m.ckpt")
    expected = json.loads((tmp_path / "r.json").read_text())
    assert [e["train_loss"] for e in report["epochs"]] == \
        [e["train_loss"] for e in expected["epochs"]]
    assert [e["test_accuracy"] for e in report["epochs"]] == \
        [e["test_accuracy"] for e in expected["epochs"]]
    assert report["config"] == expected["config"]
    assert report["conversion_seconds"] >= 0
    # The command line's model predicts what the Python one does, read back either way.
    np.testing.assert_array_equal(hogwild.load(tmp_path / "m.ckpt").weights, model.weights)
    predicted = cli("predict", "--model", tmp_path / "m.ckpt", "--data", test).stdout.split("\n")
    labels = np.array([float(line.split()[0]) for line in predicted if line])
    np.testing.assert_array_equal(labels, model.predict(X_test))


def test_a_saved_model_is_a_checkpoint_the_command_line_predicts_with(cli, sparse_files,
                                                                      tmp_path):
    train, test = sparse_files
    X, y = _load(train)
    X_test, _ = _load(test, X.shape[1])
    model, _ = hogwild.train(X, y, epochs=2, threads=2)
    model.save(tmp_path / "saved.ckpt")
    lines = cli("predict", "--model", tmp_path / "saved.ckpt", "--data", test).stdout.split("\n")
    cli_scores = np.array([float(line.split()[1]) for line in lines if line])
    np.testing.assert_allclose(cli_scores, model.predictions(X_test)["scores"], rtol=1e-5)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(X_test), model.predict(X_test))
    np.testing.assert_array_equal(hogwild.load(tmp_path / "saved.ckpt").weights, model.weights)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_every_thread_count_learns_what_the_serial_run_does(sparse_files, threads):
    train, test = sparse_files
    X, y = _load(train)
    X_test, y_test = _load(test, X.shape[1])
    _, serial = hogwild.train(X, y, X_test=X_test, y_test=y_test, policy="serial")
    _, report = hogwild.train(X, y, X_test=X_test, y_test=y_test, threads=threads)
    assert report["config"]["threads"] == threads
    assert report["final"]["test_accuracy"] >= serial["final"]["test_accuracy"] - 0.02


def test_softmax_and_mlp_on_dense_rows_predict_what_they_report():
    rng = np.random.default_rng(3)
    centers = rng.normal(scale=3, size=(4, 10))
    y = rng.integers(0, 4, size=1200)
    X = (centers[y] + rng.normal(size=(1200, 10))).astype(np.float32)
    for options in (dict(model="softmax"), dict(model="mlp", hidden=[16, 8])):
        model, report = hogwild.train(X[:900], y[:900], X_test=X[900:], y_test=y[900:],
                                      policy="serial", **options)
        accuracy = np.mean(model.predict(X[900:]) == y[900:])
        assert accuracy == pytest.approx(report["final"]["test_accuracy"], abs=1e-12)
        assert accuracy > 0.9
        proba = model.predict_proba(X[900:])
        np.testing.assert_allclose(proba.sum(axis=1), 1, rtol=1e-6)
        np.testing.assert_array_equal(np.argmax(proba, axis=1), model.predict(X[900:]))


def test_factorisation_of_planted_ratings_beats_the_mean():
    rng = np.random.default_rng(4)
    users, items = rng.normal(size=(300, 3)), rng.normal(size=(200, 3))
    pairs = rng.permutation(
        np.array([(u, i) for u in range(300) for i in rng.choice(200, 40, replace=False)]))
    ratings = np.einsum("ij,ij->i", users[pairs[:, 0]], items[pairs[:, 1]])
    model, report = hogwild.train(pairs[:10000], ratings[:10000], X_test=pairs[10000:],
                                  y_test=ratings[10000:], model="mf", rank=3, epochs=30)
    rmse = np.sqrt(np.mean((model.predict(pairs[10000:]) - ratings[10000:]) ** 2))
    assert rmse == pytest.approx(report["final"]["test_rmse"], rel=1e-4)
    assert rmse < 0.1 * np.std(ratings)


def test_canonical_and_unsorted_duplicate_csr_train_the_same_model():
    rng = np.random.default_rng(5)
    X = sp.random(400, 50, density=0.1, format="coo", random_state=5, dtype=np.float32)
    y = rng.integers(0, 2, size=400)
    # The same matrix with each entry split in two halves, in reverse order.
    rows = np.concatenate([X.row, X.row])[::-1]
    cols = np.concatenate([X.col, X.col])[::-1]
    halves = np.concatenate([X.data / 2, X.data / 2])[::-1]
    messy = sp.csr_matrix((halves, (rows, cols)), shape=X.shape)
    messy.has_canonical_format = False
    a, _ = hogwild.train(X.tocsr(), y, policy="serial")
    b, _ = hogwild.train(messy, y, policy="serial")
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("index_type", [np.int32, np.int64, np.int16])
@pytest.mark.parametrize("value_type", [np.float64, np.float32, np.int8])
def test_every_index_and_value_type_trains_what_float32_and_int32_rows_do(index_type,
                                                                          value_type):
    rng = np.random.default_rng(9)
    X = sp.random(300, 40, density=0.2, format="csr", random_state=9, dtype=np.float64)
    X.data = np.round(X.data * 8) - 4  # values every type holds exactly, negative ones too
    y = rng.integers(0, 2, size=300)
    reference = sp.csr_matrix(X, dtype=np.float32)
    reference.indices = reference.indices.astype(np.int32)
    typed = sp.csr_matrix(X, dtype=value_type)
    typed.indices = typed.indices.astype(index_type)
    a, _ = hogwild.train(reference, y, policy="serial", intercept=True)
    b, _ = hogwild.train(typed, y, policy="serial", intercept=True)
    np.testing.assert_array_equal(a.weights, b.weights)
    np.testing.assert_array_equal(a.predict(reference), b.predict(typed))


def test_csr_arrays_the_float32_rows_cannot_hold_raise_value_error():
    X = sp.csr_matrix(np.eye(4))
    y = np.array([0, 1, 0, 1])
    big = X.copy()
    big.data[2] = 1e300
    with pytest.raises(ValueError, match=r"X: row 2: expected a value within float32's range, "
                                         r"found 1e\+300"):
        hogwild.train(big, y)
    # Built from arrays, as scipy itself does not check them.
    negative = sp.csr_matrix((X.data, np.array([0, 1, -2, 3]), X.indptr), shape=X.shape)
    with pytest.raises(ValueError, match="X: row 2: expected increasing column indices below 4, "
                                         "found -2"):
        hogwild.train(negative, y)
    wide = sp.csr_matrix((X.data, np.array([0, 1, 2, 2**40], np.int64), X.indptr),
                         shape=(4, 2**41))
    with pytest.raises(ValueError, match="X: expected at most 4294967295 columns"):
        hogwild.train(wide, y)


@pytest.mark.parametrize("options, message", [
    (dict(step="abc"), "--step: expected a number or auto, found 'abc'"),
    (dict(epochs=0), "--epochs: expected"),
    (dict(policy="fast"), "--policy: expected one of racy, atomic, striped, locked, serial"),
    (dict(hidden=[8]), "--hidden: expected only with --model mlp"),
    (dict(json="r.json"), "json: expected one of the options of hogwild train"),
    (dict(learning_rate=0.1), "learning_rate: expected one of the options of hogwild train"),
    (dict(model="softmax", momentum=0.5),
     "--momentum: expected only with --optimizer momentum or nesterov, found --optimizer sgd"),
])
def test_bad_options_raise_value_error_with_the_command_lines_message(options, message):
    X, y = np.eye(4, dtype=np.float32), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        hogwild.train(X, y, **options)


def test_bad_data_raises_value_error_naming_what_is_wrong(tmp_path):
    X, y = np.eye(4, dtype=np.float32), np.array([0, 1, 0, 1])
    bad = X.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="X: row 2: expected a finite value, found nan"):
        hogwild.train(bad, y)
    with pytest.raises(ValueError, match=r"y: expected 4 labels \(one per row\)"):
        hogwild.train(X, y[:3])
    with pytest.raises(ValueError, match=r"y: expected two label classes for a binary model, "
                                         r"found a third, 2, in row 2 \(after 0 and 1\)"):
        hogwild.train(X, np.array([0, 1, 2, 1]))
    with pytest.raises(ValueError, match="X_test: expected 4 features"):
        hogwild.train(X, y, X_test=X[:, :3], y_test=y)
    for model in ("logistic", "squared", "softmax"):  # where it reported a test loss of 0
        with pytest.raises(ValueError, match="X_test: expected at least one test example"):
            hogwild.train(X, y, X_test=X[:0], y_test=y[:0], model=model)
    with pytest.raises(ValueError, match="X_test: expected at least one test example"):
        hogwild.train(np.array([[0, 1], [1, 0]]), np.array([3.0, 4.0]), model="mf",
                      X_test=np.zeros((0, 2), dtype=int), y_test=np.zeros(0))
    with pytest.raises(ValueError, match=r"y: row 0: expected an integer class label"):
        hogwild.train(X, y + 0.5, model="softmax")
    with pytest.raises(ValueError, match=r"y: row 1: expected a class label in \[-2147483648"):
        hogwild.train(X, np.array([0, 2**32, 0, 1]), model="softmax")
    with pytest.raises(ValueError, match="y: row 3: expected a finite label, found nan"):
        hogwild.train(X, np.array([0, 1, 0, np.nan]))
    with pytest.raises(ValueError, match="y_test: row 0: expected a finite label, found inf"):
        hogwild.train(X, y, X_test=X, y_test=np.array([np.inf, 0, 1, 0]))
    with pytest.raises(ValueError, match="X: row 2, column 1: expected a finite value, found nan"):
        hogwild.train(bad, y, model="softmax")
    with pytest.raises(ValueError, match="X_test: expected X_test and y_test together"):
        hogwild.train(X, y, X_test=X)
    with pytest.raises(ValueError, match=r"X: expected a model of at most 5 parameters "
                                         r"\(max_parameters\), found one of 10"):
        hogwild.train(X, y, max_parameters=5, model="softmax")
    (tmp_path / "junk.ckpt").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="junk.ckpt"):
        hogwild.load(tmp_path / "junk.ckpt")
    with pytest.raises(OSError, match="nothing.ckpt"):
        hogwild.load(tmp_path / "nothing.ckpt")


def test_a_diverging_run_raises_divergence_error():
    rng = np.random.default_rng(6)
    X = rng.normal(scale=10, size=(200, 5)).astype(np.float32)
    with pytest.raises(hogwild.DivergenceError, match="diverged"):
        hogwild.train(X, X[:, 0] * 3, model="squared", step=10)
    assert issubclass(hogwild.DivergenceError, ArithmeticError)


def test_an_intercept_is_the_last_weight_and_predictions_need_the_training_width(tmp_path, cli):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(500, 4)).astype(np.float32)
    y = (X[:, 0] + 3 > 0.5 * rng.normal(size=500) + 3).astype(int)
    model, _ = hogwild.train(X + 5, y, intercept=True, policy="serial")
    assert model.features == 5 and model.intercept
    margins = (X + 5) @ model.weights[:4] + model.weights[4]
    np.testing.assert_allclose(model.decision_function(X + 5), margins, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="X: expected 4 columns"):
        model.predict(X[:, :3])
    # The file records the intercept: loading and the command line add the bias alike.
    model.save(tmp_path / "m.ckpt")
    again = hogwild.load(tmp_path / "m.ckpt")
    assert again.intercept
    np.testing.assert_array_equal(again.predict(X + 5), model.predict(X + 5))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict(X + 5),
                                  model.predict(X + 5))
    with pytest.raises(ValueError, match="records a model trained with an intercept"):
        hogwild.load(tmp_path / "m.ckpt", intercept=False)
    rows = tmp_path / "rows.svm"
    rows.write_text("".join(f"0 {' '.join(f'{j + 1}:{v!r}' for j, v in enumerate(x))}\n"
                            for x in (X + 5).tolist()))
    lines = cli("predict", "--model", tmp_path / "m.ckpt", "--data", rows).stdout.split("\n")
    scores = np.array([float(line.split()[1]) for line in lines if line])
    np.testing.assert_allclose(scores, 1 / (1 + np.exp(-margins)), rtol=1e-4, atol=1e-5)


def test_a_file_written_before_files_recorded_the_intercept_loads_with_intercept_true(tmp_path):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    # Such a file: the weights of an intercept model with no record of it, as training on the
    # constant column appended by hand writes.
    model, _ = hogwild.train(np.hstack([X, np.ones((200, 1), np.float32)]), y, policy="serial")
    assert not model.intercept
    model.save(tmp_path / "old.ckpt")
    old = hogwild.load(tmp_path / "old.ckpt", intercept=True)
    assert old.intercept and old.features == 4
    np.testing.assert_array_equal(old.decision_function(X), model.decision_function(
        np.hstack([X, np.ones((200, 1), np.float32)])))
    softmax, _ = hogwild.train(X, y, model="softmax")
    softmax.save(tmp_path / "softmax.ckpt")
    with pytest.raises(ValueError, match="intercept: expected a linear model"):
        hogwild.load(tmp_path / "softmax.ckpt", intercept=True)


def test_predictions_of_no_rows_have_every_key_and_shape():
    X, y = np.eye(6, dtype=np.float32), np.array([0, 1, 2, 0, 1, 2])
    for options in (dict(model="softmax"), dict()):
        labels = y if options else y % 2
        model, _ = hogwild.train(X, labels, **options)
        empty = np.zeros((0, 6), dtype=np.float32)
        assert model.predict(empty).shape == (0,)
        assert model.predict_proba(empty).shape == (0, len(set(labels)))


def test_a_stop_before_the_run_stops_it_at_once_and_the_next_run_is_whole():
    X, y = np.eye(4, dtype=np.float32), np.array([0, 1, 0, 1])
    control = hogwild.Control()
    control.stop()
    _, stopped = hogwild.train(X, y, epochs=50, control=control)
    assert stopped["interrupted"] is True
    _, whole = hogwild.train(X, y, epochs=5, control=control)
    assert whole["interrupted"] is False and len(whole["epochs"]) == 6


def test_verbose_lines_go_to_python_sys_stderr(capsys):
    X, y = np.eye(4, dtype=np.float32), np.array([0, 1, 0, 1])
    hogwild.train(X, y, epochs=2, verbose=True)
    err = capsys.readouterr().err.splitlines()
    assert [line.split(":")[0] for line in err] == ["epoch 0", "epoch 1", "epoch 2"]
