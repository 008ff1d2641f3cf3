"""Training releases the GIL, stops on request from another thread, and stops cleanly on Ctrl-C.

No timing is asserted: each test waits for an event that only happens if the behaviour holds
(a run of a million epochs ends only when it is stopped), and a run that is never stopped fails
the test by its timeout.
"""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np

import hogwild


def _data():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(300, 8)).astype(np.float32)
    return X, (X[:, 0] > 0).astype(int)


def test_another_thread_runs_while_training_and_stops_it():
    X, y = _data()
    control = hogwild.Control()
    results = {}

    def fit():
        results["model"], results["report"] = hogwild.train(X, y, epochs=1_000_000,
                                                            control=control)

    worker = threading.Thread(target=fit)
    worker.start()
    # This thread runs Python while the worker trains only if training released the GIL.
    while control.epochs < 3:
        time.sleep(0.001)
    control.stop()
    worker.join(timeout=300)
    assert not worker.is_alive()
    report = results["report"]
    assert report["interrupted"] is True
    assert len(report["epochs"]) - 1 >= 3
    assert results["model"].predict(X).shape == y.shape


_CHILD = textwrap.dedent("""
    import numpy as np, sys, hogwild
    rng = np.random.default_rng(8)
    X = rng.normal(size=(300, 8)).astype(np.float32)
    control = hogwild.Control()
    try:
        hogwild.train(X, (X[:, 0] > 0).astype(int), epochs=1_000_000, verbose=True,
                      control=control)
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt after {control.epochs} epochs", flush=True)
        sys.exit(130)
    print("finished", flush=True)
""")


def test_ctrl_c_stops_training_and_raises_keyboard_interrupt():
    child = subprocess.Popen([sys.executable, "-c", _CHILD], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    # Training has started once the first epoch's line is printed (after the initial model's).
    assert child.stderr.readline().startswith("epoch 0:")
    assert child.stderr.readline().startswith("epoch 1:")
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=300)
    assert child.returncode == 130, out
    assert out.startswith("KeyboardInterrupt after ")
