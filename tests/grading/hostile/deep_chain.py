"""At import, builds a chain of 3000 nested folders in its working folder, with a FIFO, a
link loop and folders without any permission in it, for the clean-up to remove; correct."""

import os

import numpy as np


def _build():
    descriptors = []
    try:
        os.mkdir("chain")
        descriptor = os.open("chain", os.O_RDONLY)
        for level in range(3000):
            os.mkdir("d", dir_fd=descriptor)
            if level % 500 == 0:
                os.mkfifo("fifo", dir_fd=descriptor)
                os.symlink("loop", "loop", dir_fd=descriptor)
            inner = os.open("d", os.O_RDONLY, dir_fd=descriptor)
            if level % 700 == 0:
                descriptors.append(descriptor)  # its "d" loses every permission below
            else:
                os.close(descriptor)
            descriptor = inner
        os.close(descriptor)
        for descriptor in descriptors:
            os.chmod("d", 0, dir_fd=descriptor)
    except OSError:
        pass
    finally:
        for descriptor in descriptors:
            try:
                os.close(descriptor)
            except OSError:
                pass


_build()


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
    return _gae(rewards, values, gamma, lam)
