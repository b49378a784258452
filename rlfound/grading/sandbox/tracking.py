"""Finding and killing a submission's processes by what they cannot shed: a PID namespace (and,
in default mode only, an environment token as the last sweep)."""

from __future__ import annotations

import contextlib
import os
import signal

import psutil

__all__ = ["TOKEN_VARIABLE", "in_namespace", "namespace_of", "sweep", "tree_of"]

#: Environment variable that marks every process a worker starts (a diagnostic, and the
#: default mode's last sweep; never what the kernel modes rely on).
TOKEN_VARIABLE = "RLFOUND_WORKER_TOKEN"


def tree_of(pid: int) -> set[int]:
    found = {pid}
    with contextlib.suppress(psutil.Error):
        found |= {child.pid for child in psutil.Process(pid).children(recursive=True)}
    return found


def namespace_of(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def in_namespace(namespace: str) -> list[int]:
    """Live processes in the PID namespace ``namespace`` (as ``readlink`` names it)."""
    found = []
    for pid in psutil.pids():
        if namespace_of(pid) == namespace:
            with contextlib.suppress(psutil.Error):
                if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                    found.append(pid)
    return found


# ---------------------------------------------------------------- the worker


def sweep(token: str) -> list[int]:
    """Kill every process whose environment carries ``token``; return their ids.

    Default mode's last resort for a process that forked twice and called ``setsid``: it has
    left the worker's process group and tree, but it still carries the environment it
    inherited, unless it replaced it (which is why the kernel modes do not rely on this).
    """
    if not token:
        return []
    marker = f"{TOKEN_VARIABLE}={token}".encode()
    killed = []
    for pid in psutil.pids():
        if pid == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
    for pid in killed:
        # Reap it if it happens to be our child, so it does not linger as a zombie.
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)
    return killed
