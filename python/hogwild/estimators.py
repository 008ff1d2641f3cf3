"""scikit-learn estimators that train with hogwild: HogwildClassifier and HogwildRegressor.

They follow scikit-learn's conventions (fit/predict/score, get_params/set_params, Pipeline and
GridSearchCV, classes_, n_features_in_, coef_ and intercept_ where the model has them) and take
hogwild's option names. Every parameter left at None takes the model's default, as on the
command line.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from . import _hogwild
from .model import Model  # noqa: F401 (the type of model_)

_LINEAR = ("logistic", "hinge", "squared")
# Input values the estimators take as they are: scikit-learn's float32 conversion is slower than
# the native module's, which makes its float32 copy of the rows anyway.
_FLOATS = (np.float64, np.float32)


def _squared_norms(X):
    """The largest and the mean squared L2 norm of X's rows."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        if X.dtype not in (np.float32, np.float64) or X.indptr.dtype not in (np.int32, np.int64):
            X = sp.csr_matrix(X, dtype=np.float64)
            X.indptr = X.indptr.astype(np.int64)
        return _hogwild.squared_norms(X.indptr, X.data)
    squares = np.einsum("ij,ij->i", X, X, dtype=np.float64)
    return (float(np.max(squares, initial=0.0)), float(np.mean(squares)) if squares.size else 0.0)


def _default_step(X, model, optimizer, intercept):
    """The step of a run that gives none: the command line's default, made smaller where the
    rows are longer than on the data it was chosen on, so that data of any scale trains.

    Linear models (command line: 0.5): SGD on one example is stable below 2 / L, L the loss's
    curvature along the example (||x||^2, a quarter of it for the logistic loss); the step is at
    most 1 / L for the longest row, the step scikit-learn's SAG solver takes.
    Softmax and MLP with plain SGD (command line: 0.1, chosen on Fashion-MNIST, whose rows have a
    mean squared norm of 162): the step shrinks in proportion to the mean squared norm beyond
    that. Adaptive optimisers, the MLP's default Adam among them, keep the command line's
    default (None: the step calibrated on a sample).
    """
    largest, mean = _squared_norms(X)
    if intercept:
        largest, mean = largest + 1, mean + 1
    if model in _LINEAR:
        longest = largest * (0.25 if model == "logistic" else 1.0)
        return min(0.5, 1.0 / longest) if 0 < longest < np.inf else 0.5
    if optimizer not in (None, "sgd") or (model == "mlp" and optimizer is None):
        return None
    return 0.1 * min(1.0, _FASHION_MNIST_SQUARED_NORM / mean) if 0 < mean < np.inf else 0.1


_FASHION_MNIST_SQUARED_NORM = 162.0
_TRAIN_LOSS_SAMPLE = 10000


def _classes_of(y):
    """The sorted distinct labels of y, and each label's place among them.

    Numeric labels of at most four classes: the classes of the first 1,024 labels, once every
    label is found equal to one of them, a pass over y per class (1.0 ms for two classes in 100k
    labels, where np.unique and the search of its classes took 2.3-3.6 ms; docs/python.md).
    Else np.unique and a search of its sorted classes, faster than its return_inverse (a stable
    sort of y).
    """
    if y.dtype.kind in "biuf" and y.size:
        classes = np.unique(y[:_CLASSES_PREFIX])
        if len(classes) <= _FEW_CLASSES:
            indices = np.zeros(y.shape, dtype=np.intp)
            found = np.zeros(y.shape, dtype=bool)
            for place, value in enumerate(classes):
                equal = y == value
                indices[equal] = place
                found |= equal
            if found.all():
                return classes, indices
    classes = np.unique(y)
    return classes, np.searchsorted(classes, y)


_CLASSES_PREFIX = 1024
_FEW_CLASSES = 4


class _HogwildEstimator(BaseEstimator):
    """What the classifier and the regressor share: options, inputs, the fitted model."""

    def _train_options(self, model, X, intercept):
        """The options of `hogwild train` for `model` on X (and a constant feature)."""
        options = dict(model=model, epochs=self.epochs, step=self.step, l2=self.l2,
                       policy=self.policy, threads=self.threads, seed=self.seed)
        # Passed whatever the model: train() refuses one the model does not take (an adaptive
        # optimiser for a linear model, hidden layers but for mlp) rather than ignore it.
        for name in ("batch", "optimizer", "step_schedule", "decay"):
            options[name] = getattr(self, name, None)
        hidden = getattr(self, "hidden", None)
        if hidden is not None:
            options["hidden"] = [int(width) for width in np.atleast_1d(hidden)]
        extra = dict(self.options or {})
        if "model" in extra:
            raise ValueError("options: expected options other than model (a parameter of the "
                             f"estimator), found model={extra['model']!r}")
        options.update(extra)
        options = {key: value for key, value in options.items() if value is not None}
        if "step" not in options:
            step = _default_step(X, model, options.get("optimizer"), intercept)
            if step is not None:
                options["step"] = step
        return options

    def _fit_model(self, X, y, model):
        from . import train

        # Linear models have no bias of their own: with fit_intercept, every row gets a constant
        # feature of 1 (LIBLINEAR's -B 1), regularised as the other weights are; with replicas,
        # merges add the workers' mean change of its weight (TrainConfig::kMeanMergeMinShare).
        intercept = self.fit_intercept and model in _LINEAR
        if not self.fit_intercept and model not in _LINEAR:
            raise ValueError(f"fit_intercept: expected True for {model} (its biases are part of "
                             "the model), found False")
        options = self._train_options(model, X, intercept)
        # The training loss after each epoch (report_, the divergence check) from 10,000 examples
        # rather than a pass over all of them, which on large data costs about an epoch of
        # training and which scikit-learn's SGD estimators do not make; its spread is about
        # 2% of the mean on the RCV1-like data (docs/benchmarks.md).
        options.setdefault("train_loss_sample", _TRAIN_LOSS_SAMPLE)
        self.model_, self.report_ = train(X, y, intercept=intercept, **options)
        self.n_iter_ = self.model_.epoch
        return self

    def _validated(self, X, y="no_validation", **checks):
        """X (and y) through scikit-learn's checks; the finiteness of sparse X's values is left
        to the native copy, which reads every value anyway and names the first bad one's row
        (ValueError), where scikit-learn's check is another pass over them."""
        return self._validate_data(X, y, accept_sparse="csr", dtype=_FLOATS,
                                   force_all_finite=not sp.issparse(X), **checks)

    def _predictions(self, X):
        check_is_fitted(self)
        X = self._validated(X, reset=False)
        return self.model_.predictions(X)

    @property
    def coef_(self):
        """Linear models: the weights, (1, n_features); softmax: (n_classes, n_features)."""
        return self._coefficients()[0]

    @property
    def intercept_(self):
        """Linear models with fit_intercept: the bias, (1,) (0 without); softmax: (n_classes,)."""
        return self._coefficients()[1]

    def _coefficients(self):
        check_is_fitted(self)
        w, d = self.model_.weights, self.n_features_in_
        if self.model_.model in _LINEAR:
            return w[:d].reshape(1, d), (w[d:d + 1] if self.fit_intercept else np.zeros(1))
        if self.model_.model == "softmax":
            k = len(self.model_.labels)
            return w[:d * k].reshape(d, k).T, w[d * k:d * k + k]
        raise AttributeError(f"coef_: a {self.model_.model} model has no linear coefficients")

    def _more_tags(self):
        # Racy updates from several threads make each fit a little different.
        return {"non_deterministic": self.threads != 1 and self.policy != "serial"}



class HogwildClassifier(ClassifierMixin, _HogwildEstimator):
    """A classifier trained with lock-free parallel SGD.

    model: auto (logistic for two classes, softmax for more), logistic, hinge (two classes),
    softmax or mlp. epochs, step, l2, batch, optimizer, step_schedule, decay, hidden, policy,
    threads (0 = every core) and seed are `hogwild train`'s options of those names; options is a
    dict of any other (say {"order": "rows"}); an option the model does not take is refused
    (ValueError). fit_intercept appends a constant feature to linear models (softmax and mlp
    have biases of their own: False is refused). Fitted: classes_, model_ (a hogwild.Model), report_ (the training report, its
    training loss from 10,000 examples unless options gives train_loss_sample), n_iter_
    (epochs), coef_ and intercept_ (linear and softmax models).
    """

    def __init__(self, model="auto", *, epochs=10, step=None, l2=None, batch=None,
                 optimizer=None, step_schedule=None, decay=None, hidden=None,
                 fit_intercept=True, policy="racy", threads=0, seed=1, options=None):
        self.model = model
        self.epochs = epochs
        self.step = step
        self.l2 = l2
        self.batch = batch
        self.optimizer = optimizer
        self.step_schedule = step_schedule
        self.decay = decay
        self.hidden = hidden
        self.fit_intercept = fit_intercept
        self.policy = policy
        self.threads = threads
        self.seed = seed
        self.options = options

    def _model_for(self, classes):
        if self.model == "auto":
            return "logistic" if classes == 2 else "softmax"
        if self.model not in ("logistic", "hinge", "softmax", "mlp"):
            raise ValueError(f"model: expected auto, logistic, hinge, softmax or mlp, found "
                             f"'{self.model}'")
        if self.model in ("logistic", "hinge") and classes > 2:
            raise ValueError(f"model: expected two classes for {self.model}, found {classes} "
                             f"classes (softmax and mlp take more)")
        return self.model

    def fit(self, X, y):
        """Trains on X (numpy array or scipy.sparse matrix) and class labels y."""
        X, y = self._validated(X, y)
        # scikit-learn's check of the targets looks at their distinct values and how many there
        # are: on numbers it is made on the classes, saving it a sort of y; other labels (of
        # mixed types, say) are checked before np.unique, which cannot sort them.
        numeric = y.dtype.kind in "biuf"
        if not numeric:
            check_classification_targets(y)
        self.classes_, indices = _classes_of(y)
        if numeric:
            check_classification_targets(self.classes_)
        if len(self.classes_) < 2:
            raise ValueError(f"y: expected two or more classes, found one class "
                             f"({self.classes_[0]!r})")
        return self._fit_model(X, indices, self._model_for(len(self.classes_)))

    def predict(self, X):
        """The predicted class of each row."""
        indices = self._predictions(X)["values"].astype(np.intp)
        return self.classes_[indices]

    def decision_function(self, X):
        """Two classes: the margin per row (positive: classes_[1]); more: each class's score."""
        p = self._predictions(X)
        if "margins" in p:
            return p["margins"]
        scores = p["class_scores"]
        return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores

    def _more_tags(self):
        return {**super()._more_tags(), "binary_only": self.model in ("logistic", "hinge")}

    def _has_proba(self):
        return self.model != "hinge"

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Each class's probability per row (not for hinge)."""
        check_is_fitted(self)
        X = self._validated(X, reset=False)
        return self.model_.predict_proba(X)

    @available_if(_has_proba)
    def predict_log_proba(self, X):
        """The logarithm of predict_proba."""
        return np.log(self.predict_proba(X))


class HogwildRegressor(RegressorMixin, _HogwildEstimator):
    """Least-squares linear regression trained with lock-free parallel SGD.

    epochs, step, l2, policy, threads (0 = every core) and seed are `hogwild train`'s options of
    those names; options is a dict of any other. fit_intercept appends a constant feature.
    The model is the mean of the epochs' weights, epoch k weighted by k (`hogwild train
    --average epochs`, the squared loss's default; options={"average": "off"} keeps the last).
    Fitted: model_, report_ (its training loss from 10,000 examples unless options gives
    train_loss_sample), n_iter_, coef_, intercept_.
    """

    def __init__(self, *, epochs=10, step=None, l2=None, fit_intercept=True, policy="racy",
                 threads=0, seed=1, options=None):
        self.epochs = epochs
        self.step = step
        self.l2 = l2
        self.fit_intercept = fit_intercept
        self.policy = policy
        self.threads = threads
        self.seed = seed
        self.options = options

    def fit(self, X, y):
        """Trains on X (numpy array or scipy.sparse matrix) and target values y."""
        X, y = self._validated(X, y, y_numeric=True)
        return self._fit_model(X, y, "squared")


    def predict(self, X):
        """The predicted value of each row."""
        return self._predictions(X)["values"]
