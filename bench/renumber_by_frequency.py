#!/usr/bin/env python3
"""Writes a LIBSVM file with its features renumbered by descending frequency (1 the most
frequent, ties by index), each row's nonzeros sorted by the new numbers; with a test file,
the test rows numbered the same way (features the training file lacks after all of its own).

What `--feature-order frequency` does inside a run, done offline: the rows' order of nonzeros
changes here, so a run on the output ends in the last digits away from one on the input.

    bench/renumber_by_frequency.py TRAIN OUT [TEST TEST_OUT]
"""
import collections
import sys


def read(path):
    with open(path) as f:
        return [line.split() for line in f if line.strip()]


def write(path, rows, number):
    with open(path, "w") as f:
        for row in rows:
            pairs = sorted((number(int(t.split(":")[0])), t.split(":")[1]) for t in row[1:])
            f.write(" ".join([row[0]] + [f"{j}:{v}" for j, v in pairs]) + "\n")


def main(argv):
    if len(argv) not in (3, 5):
        sys.exit(__doc__)
    train = read(argv[1])
    count = collections.Counter(int(t.split(":")[0]) for row in train for t in row[1:])
    order = sorted(count, key=lambda j: (-count[j], j))
    new = {j: i + 1 for i, j in enumerate(order)}

    def number(j):
        return new.get(j, len(new) + j)

    write(argv[2], train, number)
    if len(argv) == 5:
        write(argv[4], read(argv[3]), number)


if __name__ == "__main__":
    main(sys.argv)
