"""Shared fixtures: the hogwild CLI (built beside the module) and data it generates."""

import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def cli():
    """Runs the hogwild command line; returns its CompletedProcess (text output)."""
    path = os.environ.get("HOGWILD_CLI")
    if not path:
        pytest.skip("HOGWILD_CLI is not set (ctest sets it)")

    # Under a sanitizer ctest preloads the sanitizer's runtime into the interpreter; the tool
    # is a sanitized executable with its own copy, which must not meet a second.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}

    def run(*args, check=True):
        result = subprocess.run([path, *map(str, args)], capture_output=True, text=True, env=env)
        if check and result.returncode != 0:
            raise AssertionError(f"hogwild {' '.join(map(str, args))}: exit {result.returncode}: "
                                 f"{result.stderr}")
        return result

    return run


@pytest.fixture(scope="session")
def sparse_files(cli, tmp_path_factory):
    """RCV1-like LIBSVM training and test files (binary labels, power-law features)."""
    root = tmp_path_factory.mktemp("sparse")
    train, test = root / "train.svm", root / "test.svm"
    cli("gen", "sparse", "--rows", 3000, "--features", 2000, "--nnz-per-row", 20, "--seed", 5,
        "--out", train, "--test-rows", 1000, "--test-out", test)
    return train, test
