"""scikit-learn's SGDClassifier (log loss) on a LIBSVM training and test file, as its users run it:
load_svmlight_files (float64 CSR, what it fits on), then fit; writes a JSON record of the load
and fit times, the test accuracy and the test log loss. Run under /usr/bin/python3 (Debian's
python3-sklearn).

    sklearn_sgd.py TRAIN TEST EPOCHS SEED ALPHA OUT.json
"""

import json
import sys
import time
import warnings

from sklearn.datasets import load_svmlight_files
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import log_loss


def main(train, test, epochs, seed, alpha, out):
    warnings.filterwarnings("ignore")  # max_iter reached: the epochs are the budget
    t0 = time.perf_counter()
    x_train, y_train, x_test, y_test = load_svmlight_files([train, test])
    t1 = time.perf_counter()
    clf = SGDClassifier(loss="log_loss", max_iter=int(epochs), tol=None, alpha=float(alpha),
                        random_state=int(seed))
    clf.fit(x_train, y_train)
    t2 = time.perf_counter()
    record = {"load_seconds": t1 - t0, "train_seconds": t2 - t1,
              "test_accuracy": clf.score(x_test, y_test),
              "test_loss": log_loss(y_test, clf.predict_proba(x_test), labels=clf.classes_)}
    with open(out, "w") as f:
        json.dump(record, f)


if __name__ == "__main__":
    main(*sys.argv[1:])
