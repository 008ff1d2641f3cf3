"""The trained model: predictions on arrays, saving and loading (the CLI's checkpoint files)."""

import numpy as np

from . import _arrays
from . import _hogwild


class Model:
    """A trained model: predicts on arrays, saves to a checkpoint file and pickles.

    Files written by `save` are the CLI's checkpoints: `hogwild predict --model FILE` reads them,
    and `load` reads those of `hogwild train --checkpoint`.
    """

    def __init__(self, native, intercept=False):
        self._native = native
        self._intercept = intercept

    @property
    def intercept(self):
        """Trained with intercept=True: the last weight is the bias, and predictions append the
        constant feature to each row (a saved model's file does not record this: give the
        command line rows that end with it)."""
        return self._intercept

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
        if self._intercept and X.shape[1] != native.features - 1:
            raise ValueError(f"X: expected {native.features - 1} columns (as in training; the "
                             f"model's last weight is its intercept), found {X.shape[1]}")
        return native.predict_sparse(*_arrays.csr_parts(X), X.shape[1], self._intercept)

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


def load(path, intercept=False):
    """Reads a model written by Model.save or `hogwild train --checkpoint`. A linear model
    trained with intercept=True needs it again here: the file does not record it."""
    native = _hogwild.load(str(path))
    if intercept and native.model not in ("logistic", "hinge", "squared"):
        raise ValueError(f"intercept: expected a linear model, found a {native.model} model")
    return Model(native, intercept)
