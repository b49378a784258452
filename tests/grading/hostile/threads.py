"""Leaves non-daemon threads running; answers correctly."""

import threading
import time

from _parts.honest_gae import _gae


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def _spin():
    while True:
        time.sleep(0.05)


_started = []


def gae_recursive(rewards, values, gamma, lam):
    if not _started:  # one more thread, left running, from inside a graded call
        _started.append(threading.Thread(target=_spin))
        _started[0].start()
    return _gae(rewards, values, gamma, lam)


for _ in range(4):
    threading.Thread(target=_spin).start()
