"""The table of bench/peers.sh: medians over its rounds of each contender's wall time, training
time, test accuracy and test log loss, read from the files the rounds left in its directory.

    peers_table.py DIR REPS DATASETS USE_LIBLINEAR SKLEARN_ALPHAS N_HOGWILD HOGWILD_CONFIG...
                   FASTTEXT_CONFIG...
"""

import json
import math
import statistics
import sys

EPSILON = 1e-15  # probabilities are clipped to [EPSILON, 1 - EPSILON] before their logarithm


def clipped_log(p):
    return math.log(min(max(p, EPSILON), 1 - EPSILON))


def fasttext_scores(pred_path, test_path):
    """Accuracy and mean log loss of `predict-prob ... 2` lines against the test file's labels."""
    right, loss, n = 0, 0.0, 0
    with open(pred_path) as pred, open(test_path) as test:
        for p_line, t_line in zip(pred, test, strict=True):
            truth = t_line.split(maxsplit=1)[0]
            fields = p_line.split()
            probs = dict(zip(fields[0::2], map(float, fields[1::2])))
            right += max(probs, key=probs.get) == truth
            loss -= clipped_log(probs.get(truth, 0.0))
            n += 1
    return right / n, loss / n


def liblinear_scores(pred_path, test_path):
    """Accuracy and mean log loss of `liblinear-predict -b 1` output against the LIBSVM labels."""
    right, loss, n = 0, 0.0, 0
    with open(pred_path) as pred, open(test_path) as test:
        labels = [float(x) for x in pred.readline().split()[1:]]
        for p_line, t_line in zip(pred, test, strict=True):
            truth = float(t_line.split(maxsplit=1)[0])
            fields = p_line.split()
            right += float(fields[0]) == truth
            loss -= clipped_log(float(fields[1 + labels.index(truth)]))
            n += 1
    return right / n, loss / n


def main(tmp, reps, datasets, use_liblinear, alphas, n_hogwild, *configs):
    reps, n_hogwild = int(reps), int(n_hogwild)
    hogwild_configs, fasttext_configs = configs[:n_hogwild], configs[n_hogwild:]
    rounds = range(1, reps + 1)
    med = statistics.median

    def wall(stem):
        return med(float(open(f"{tmp}/{stem}-{r}.wall").read()) for r in rounds)

    def from_json(stem, key):
        return med(json.load(open(f"{tmp}/{stem}-{r}.json"))[key] for r in rounds)

    print(f"medians of {reps} rounds, every contender once a round")
    print("| data | contender | options | wall s | train s | test accuracy | test log loss "
          "| wall s / hogwild's |")
    print("|---|---|---|---|---|---|---|---|")
    for name in datasets.split():
        data = open(f"{tmp}/{name}.data").read().strip()
        rows = []  # (contender, options, wall s, train s or None, accuracy, log loss)
        for h, options in enumerate(hogwild_configs):
            reports = [json.load(open(f"{tmp}/{name}-hogwild-{h}-{r}.json")) for r in rounds]
            rows.append(("hogwild", options, wall(f"{name}-hogwild-{h}"),
                         med(j["train_seconds"] for j in reports),
                         med(j["final"]["test_accuracy"] for j in reports),
                         med(j["final"]["test_loss"] for j in reports)))
        if name != "rcv1":
            for f, options in enumerate(fasttext_configs):
                scores = [fasttext_scores(f"{tmp}/{name}-fasttext-{f}-{r}.pred",
                                          f"{tmp}/{name}.test.txt") for r in rounds]
                rows.append(("fastText", options, wall(f"{name}-fasttext-{f}"), None,
                             med(s[0] for s in scores), med(s[1] for s in scores)))
        if use_liblinear == "1":
            scores = [liblinear_scores(f"{tmp}/{name}-liblinear-{r}.pred", f"{data}.test.svm")
                      for r in rounds]
            rows.append(("LIBLINEAR", "-s 0", wall(f"{name}-liblinear"), None,
                         med(s[0] for s in scores), med(s[1] for s in scores)))
        for a in alphas.split():
            stem = f"{name}-sklearn-{a}"
            rows.append(("SGDClassifier", f"alpha={a}", wall(stem),
                         from_json(stem, "train_seconds"), from_json(stem, "test_accuracy"),
                         from_json(stem, "test_loss")))
        base = rows[0][2]
        for contender, options, wall_s, train_s, accuracy, loss in rows:
            train = "-" if train_s is None else f"{train_s:.2f}"
            print(f"| {name} | {contender} | {options} | {wall_s:.2f} | {train} | "
                  f"{100 * accuracy:.2f}% | {loss:.4f} | {wall_s / base:.2f}x |")


if __name__ == "__main__":
    main(*sys.argv[1:])
