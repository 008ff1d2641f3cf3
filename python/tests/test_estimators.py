"""The estimators in scikit-learn's machinery, against scikit-learn's own models."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits, make_regression
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from hogwild import HogwildClassifier, HogwildRegressor


def _split(X, y):
    return train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)


@pytest.mark.parametrize("threads", [1, 2])
def test_binary_classifier_in_a_pipeline_matches_logistic_regression(threads):
    X_train, X_test, y_train, y_test = _split(*load_breast_cancer(return_X_y=True))
    ours = make_pipeline(StandardScaler(), HogwildClassifier(threads=threads)).fit(X_train,
                                                                                  y_train)
    reference = make_pipeline(StandardScaler(), LogisticRegression()).fit(X_train, y_train)
    assert ours.score(X_test, y_test) >= reference.score(X_test, y_test) - 0.03


@pytest.fixture(scope="module")
def digits_and_reference_accuracy():
    # Fitted once for both models: lbfgs on the digits takes 10 s under ThreadSanitizer, whose
    # interceptors slow numpy's allocations, and its accuracy does not depend on the model.
    X_train, X_test, y_train, y_test = _split(*load_digits(return_X_y=True))
    reference = LogisticRegression(max_iter=2000).fit(X_train, y_train)
    return (X_train, X_test, y_train, y_test), reference.score(X_test, y_test)


@pytest.mark.parametrize("model", ["softmax", "mlp"])
def test_multiclass_digits_match_logistic_regression(model, digits_and_reference_accuracy):
    (X_train, X_test, y_train, y_test), reference_accuracy = digits_and_reference_accuracy
    ours = HogwildClassifier(model=model, epochs=20, threads=1).fit(X_train, y_train)
    assert ours.score(X_test, y_test) >= reference_accuracy - 0.03
    proba = ours.predict_proba(X_test)
    assert proba.shape == (len(y_test), 10)
    np.testing.assert_array_equal(ours.classes_[np.argmax(proba, axis=1)], ours.predict(X_test))


def test_string_labels_map_back_to_themselves():
    X, y = load_breast_cancer(return_X_y=True)
    names = np.array(["benign", "malignant"])[y]
    clf = make_pipeline(StandardScaler(), HogwildClassifier(threads=1)).fit(X, names)
    assert set(clf.predict(X)) == {"benign", "malignant"}
    assert clf.score(X, names) > 0.95


def test_grid_search_picks_among_steps():
    X, y = load_breast_cancer(return_X_y=True)
    search = GridSearchCV(make_pipeline(StandardScaler(), HogwildClassifier(threads=1)),
                          {"hogwildclassifier__step": [1e-4, 0.1]}, cv=3).fit(X, y)
    assert search.best_params_ == {"hogwildclassifier__step": 0.1}


def test_regressor_finds_the_least_squares_fit():
    X, y = make_regression(n_samples=2000, n_features=10, noise=1.0, bias=4.0, random_state=1)
    ours = HogwildRegressor(threads=1, epochs=30).fit(X, y)
    reference = LinearRegression().fit(X, y)
    np.testing.assert_allclose(ours.coef_.ravel(), reference.coef_, atol=0.05 * np.abs(y).std())
    assert ours.intercept_[0] == pytest.approx(reference.intercept_, abs=0.5)
    assert ours.score(X, y) >= reference.score(X, y) - 0.01


def test_hinge_has_no_probabilities_and_refuses_three_classes():
    clf = HogwildClassifier(model="hinge")
    assert not hasattr(clf, "predict_proba")
    X, y = load_digits(return_X_y=True)
    with pytest.raises(ValueError, match="model: expected two classes for hinge, found 10"):
        clf.fit(X, y)


def test_options_reach_every_model_and_those_it_does_not_take_are_refused():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    # A linear model takes minibatches and a step schedule: the run says it used them.
    clf = HogwildClassifier(batch=4, step_schedule="inverse", threads=1, epochs=2).fit(X, y)
    assert clf.report_["config"]["schedule"] == "fixed:4"
    assert clf.report_["config"]["step_schedule"] == "inverse"
    for options, message in ((dict(hidden=[8]), "--hidden: expected only with --model mlp"),
                             (dict(optimizer="adam"), "--optimizer: expected sgd for the linear"),
                             (dict(model="softmax", hidden=[8]), "--hidden: expected only with")):
        with pytest.raises(ValueError, match=message):
            HogwildClassifier(threads=1, epochs=1, **options).fit(X, y)
    with pytest.raises(ValueError, match="fit_intercept: expected True for softmax"):
        HogwildClassifier(model="softmax", fit_intercept=False, epochs=1).fit(X, y)


def test_training_loss_from_a_sample_of_large_data_and_from_all_when_told():
    # 12,000 rows: the estimators measure the training loss on 10,000 of them; the weights are
    # those of measuring all (one thread, the same seed), and options can ask for every row.
    X, y = make_regression(n_samples=12000, n_features=5, noise=1.0, random_state=2)
    sampled = HogwildRegressor(threads=1, epochs=2).fit(X, y)
    full = HogwildRegressor(threads=1, epochs=2, options={"train_loss_sample": 0}).fit(X, y)
    assert sampled.report_["config"]["train_loss_sample"] == 10000
    assert "train_loss_sample" not in full.report_["config"]
    np.testing.assert_array_equal(sampled.model_.weights, full.model_.weights)
    residual = y - full.predict(X)
    assert full.report_["epochs"][-1]["train_loss"] == pytest.approx(0.5 * np.mean(residual**2),
                                                                      rel=1e-4)
    assert sampled.report_["epochs"][-1]["train_loss"] != full.report_["epochs"][-1]["train_loss"]
    small = HogwildRegressor(threads=1, epochs=2).fit(X[:5000], y[:5000])
    assert "train_loss_sample" in small.report_["config"]  # asked for, and covering every row


@pytest.mark.parametrize("make", [HogwildClassifier, HogwildRegressor])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_sparse_rows_with_a_non_finite_value_are_refused_in_fit_and_predict(make, bad):
    # scikit-learn's finiteness check is skipped for sparse X: the native copy makes it.
    import scipy.sparse as sp

    X = sp.random(40, 6, density=0.5, format="csr", random_state=0)
    y = np.arange(40) % 2
    fitted = make(epochs=1, threads=1).fit(X, y)
    broken = X.copy()
    broken.data[broken.indptr[7]] = bad
    with pytest.raises(ValueError, match=r"X: row 7: expected a finite value"):
        make(epochs=1, threads=1).fit(broken, y)
    with pytest.raises(ValueError, match=r"X: row 7: expected a finite value"):
        fitted.predict(broken)


@pytest.mark.parametrize("y", [
    np.repeat([3.0, 1.0, 2.0], 1000),  # the third class first met beyond the first 1,024 labels
    np.random.default_rng(1).choice([-1.0, 1.0], 5000),
    np.random.default_rng(2).integers(0, 10, 3000),
    np.random.default_rng(3).random(2000) < 0.3,
    np.array([7]),
    np.array(["b", "a", "c", "a"], dtype=object),
])
def test_classes_and_their_indices_are_those_of_np_unique(y):
    from hogwild.estimators import _classes_of
    classes, indices = _classes_of(y)
    expected = np.unique(y)
    np.testing.assert_array_equal(classes, expected)
    np.testing.assert_array_equal(indices, np.searchsorted(expected, y))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_squared_row_norms_are_the_rows_sums_in_index_order(dtype):
    import scipy.sparse as sp
    from hogwild.estimators import _squared_norms
    rng = np.random.default_rng(4)
    # Rows of 0 to 60 nonzeros, so that groups of rows have unequal lengths; 4,099 rows: a
    # group left over at the end.
    X = sp.random(4099, 500, density=0.06, format="csr", random_state=rng, dtype=dtype)
    X.data = (X.data * 10).astype(dtype)
    norms = [sum(float(v) * float(v) for v in X.data[X.indptr[i]:X.indptr[i + 1]])
             for i in range(X.shape[0])]
    largest, mean = _squared_norms(X)
    assert largest == max(norms)
    assert mean == pytest.approx(sum(norms) / len(norms), rel=1e-12)
