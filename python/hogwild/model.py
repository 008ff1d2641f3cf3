"""The trained model: predictions on arrays, saving and loading (the CLI's checkpoint files)."""

import numpy as np

from . import _arrays
from . import _hogwild


class Model:
    """A trained model: predicts on arrays, saves to a checkpoint file and pickles.

    Files written by `save` are the CLI's checkpoints: `hogwild predict --model FILE` reads them,
    and `load` reads those of `hogwild train --checkpoint`.
    """

    def __init__(self, native):
        self._native = native

    @property
    def intercept(self):
        """Trained with intercept=True: the last weight is the bias, and predictions append the
        constant feature to each row (the saved file records it: `load` and `hogwild predict`
        do the same)."""
        return self._native.intercept

    @property
    def model(self):
        """logistic, hinge, squared, softmax, mlp or mf."""
        return self._native.model

    @property
    def labels(self):
        """The label value of each class index (binary models: negative, positive)."""
        return np.asarray(self._native.labels)

    @property
    def features(self):
        """Input dimension (not for mf)."""
        return self._native.features

    @property
    def weights(self):
        """A copy of the parameters, in the model's layout (linear models: one per feature)."""
        return self._native.weights

    @property
    def epoch(self):
        """Epochs the model was trained for."""
        return self._native.epoch

    def predictions(self, X):
        """A dict of arrays: `values` (labels or predicted values) and, where the model gives
        them, `scores` (logistic: the positive label's probability; hinge: the margin),
        `margins` (binary models: w.x) and `class_scores` (softmax, mlp: rows x classes logits)."""
        native = self._native
        if native.format == "ratings":
            return native.predict_ratings(*_arrays.pairs(X))
        if native.format == "idx":
            return native.predict_dense(_arrays.dense_rows(X))
        X = _arrays.matrix(X)
        if native.intercept and X.shape[1] != native.features - 1:
            raise ValueError(f"X: expected {native.features - 1} columns (as in training; the "
                             f"model's last weight is its intercept), found {X.shape[1]}")
        return native.predict_sparse(*_arrays.csr_parts(X), X.shape[1])

    def predict(self, X):
        """The predicted label (classifiers) or value of each row."""
        return self.predictions(X)["values"]

    def decision_function(self, X):
        """Binary models: the margin w.x per row; softmax and mlp: each class's logit per row."""
        p = self.predictions(X)
        if "margins" in p:
            return p["margins"]
        if "class_scores" in p:
            return p["class_scores"]
        raise ValueError(f"decision_function: expected a classifier, found a {self.model} model")

    def predict_proba(self, X):
        """Each class's probability per row (logistic, softmax and mlp models)."""
        p = self.predictions(X)
        if "class_scores" in p:
            z = p["class_scores"]
            z = np.exp(z - z.max(axis=1, keepdims=True))
            return z / z.sum(axis=1, keepdims=True)
        if self.model == "logistic":
            positive = p["scores"]
            return np.column_stack([1 - positive, positive])
        raise ValueError(f"predict_proba: expected a logistic, softmax or mlp model, found a "
                         f"{self.model} model")

    def save(self, path):
        """Writes the model to `path` atomically, as a checkpoint file."""
        self._native.save(str(path))

    def __repr__(self):
        return f"hogwild.Model({self.model}, {self.features} features, epoch {self.epoch})"


def load(path, intercept=None):
    """Reads a model written by Model.save or `hogwild train --checkpoint`; whether its last
    weight is an intercept comes from the file. intercept=True reads a linear model's file
    written before files recorded it as one trained with intercept=True."""
    native = _hogwild.load(str(path))
    if intercept and not native.intercept:
        if native.model not in ("logistic", "hinge", "squared"):
            raise ValueError(f"intercept: expected a linear model, found a {native.model} model")
        native = native.with_intercept()
    elif intercept is False and native.intercept:
        raise ValueError(f"intercept: {path} records a model trained with an intercept, "
                         f"found intercept=False")
    return Model(native)
