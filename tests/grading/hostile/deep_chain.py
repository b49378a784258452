"""At import, builds a chain of 3000 nested folders in its working folder, with a FIFO, a
link loop and folders without any permission in it, for the clean-up to remove; correct."""

import os

from _parts.honest_gae import _gae


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


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)
