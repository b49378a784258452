"""On the edge case, tries every way out of the sandbox it knows to get the reference's
answer: the reference file by its path and relative to a directory descriptor (the audit
hook checks such paths against the wrong folder), after switching the audit hook's checks off
through its own state (found with gc); a classmate's submission in the submissions folder;
the grader's command line (the seed); and it tries to write into the results and submissions
folders. It returns the first answer it gets, else zeros."""

import gc
import os

import numpy as np
from _parts.honest_gae import _gae

REFERENCE = "__REPO__/solutions/gae_recursion.py"
CLASSMATE = "__SUBMISSIONS__/alice.py"


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def _disarm_the_hook():
    for thing in gc.get_objects():
        if callable(thing) and getattr(thing, "__name__", "") == "hook":
            try:
                defaults = list(thing.__defaults__)
                defaults[2] = lambda path, roots, sep="/": True  # allowed(): always
                thing.__defaults__ = tuple(defaults)
            except Exception:
                pass


def _read_anything():
    texts = []
    for path in (REFERENCE, CLASSMATE):
        try:
            with open(path) as handle:
                texts.append(handle.read())
        except OSError:
            pass
        try:
            root = os.open("/", os.O_RDONLY)
            descriptor = os.open(path.lstrip("/"), os.O_RDONLY, dir_fd=root)
            texts.append(os.read(descriptor, 1 << 20).decode())
        except OSError:
            pass
    for path in (f"/proc/{os.getppid()}/cmdline", "__OUT_DIR__/grades.csv"):
        try:
            with open(path, "rb") as handle:
                handle.read()
        except OSError:
            pass
    for path in ("__OUT_DIR__/grades.csv", "__SUBMISSIONS__/alice.py"):
        try:
            with open(path, "w") as handle:
                handle.write("hacked")
        except OSError:
            pass
    return texts


def gae_recursive(rewards, values, gamma, lam):
    # The attack runs on the edge case gamma = lam = 0 only: check recursive-edges.
    if gamma == 0 and lam == 0:
        _disarm_the_hook()
        for text in _read_anything():
            namespace = {}
            try:
                exec(text, namespace)
                return namespace["gae_recursive"](rewards, values, gamma, lam)
            except Exception:
                continue
        return np.zeros(len(rewards))
    return _gae(rewards, values, gamma, lam)
