"""Which sandbox mode this machine allows, what each protects against, and the command
lines and environment that bubblewrap and the private root need (see
:mod:`rlfound.grading.sandbox`)."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from rlfound.grading.sandbox import accounts, cgroups, ipc, runtime

__all__ = [
    "INSIDE",
    "MODES",
    "NO_BWRAP_VARIABLE",
    "base_environment",
    "bwrap_as_user_problem",
    "bwrap_prefix",
    "bwrap_works",
    "describe_mode",
    "interpreter_binds",
    "private_ipc_problem",
    "resolve_mode",
    "stdlib_dirs",
    "system_binds",
    "user_mode_problem",
]

#: Modes, from the strongest (see :mod:`rlfound.grading.sandbox`).
MODES = ("strong", "user", "default")
#: Set to 1 to make the grader behave as on a machine without bubblewrap (tests use it).
NO_BWRAP_VARIABLE = "RLFOUND_NO_BWRAP"
#: The folder whose files are copied into the sandbox (standard library only).
INSIDE = Path(__file__).resolve().parent / "inside"


def bwrap_prefix() -> list[str]:
    return [
        shutil.which("bwrap") or "bwrap",
        # Every namespace: PID, network, mount, user, UTS, cgroup and IPC (the submission's
        # System V shared memory dies with the sandbox and is not the machine's).
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--clearenv",
    ]


@functools.cache
def _bwrap_probe() -> bool:
    path = shutil.which("bwrap")
    if path is None:
        return False
    try:
        probe = subprocess.run(
            [path, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true"],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def bwrap_works() -> bool:
    """Whether ``bwrap`` is installed and can create the namespaces strong mode needs (and
    :data:`NO_BWRAP_VARIABLE` does not ask the grader to act as if it could not)."""
    if os.environ.get(NO_BWRAP_VARIABLE, "") not in ("", "0"):
        return False
    return _bwrap_probe()


def system_binds(command: list[str]) -> list[str]:
    for path in ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin"):
        if os.path.lexists(path):
            if os.path.islink(path):
                command += ["--symlink", os.readlink(path), path]
            else:
                command += ["--ro-bind", path, path]
    return command


def interpreter_binds(tree: runtime.Tree | None) -> list[str]:
    """Bind mounts of the interpreter and NumPy; from the private root when bubblewrap runs
    as a worker user (who may not be able to read them where they are)."""
    python = str(runtime.interpreter())
    prefix = str(Path(sys.base_prefix).resolve())
    binds = []
    source = str(tree.outside(prefix)) if tree is not None else prefix
    binds += ["--ro-bind", source, prefix]
    if not python.startswith(prefix + os.sep) and not python.startswith("/usr/"):
        source = str(tree.outside(python)) if tree is not None else python
        binds += ["--ro-bind", source, python]
    for directory in runtime.numpy_dirs():
        target = f"{runtime.OPT}/site/{directory.name}"
        source = str(tree.outside(target)) if tree is not None else str(directory)
        binds += ["--ro-bind", source, target]
    return binds


@functools.cache
def bwrap_as_user_problem() -> str | None:
    """Why bubblewrap cannot run as a worker user here (None when it can)."""
    if os.geteuid() != 0:
        return "the grader is not root"
    try:
        tree = runtime.tree()
        account = accounts.acquire()
    except (OSError, accounts.Unavailable) as error:
        return str(error)
    try:
        command = system_binds(bwrap_prefix()) + interpreter_binds(tree)
        command += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/"]
        command += [str(runtime.interpreter()), "-I", "-S", "-c", _IMPORT_PROBE]
        completed = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            user=account.uid,
            group=account.gid,
            extra_groups=[],
            cwd="/",
        )
        if completed.returncode != 0:
            return f"bubblewrap does not run as {account.name}: {completed.stderr.strip()[-300:]}"
        return None
    except (OSError, subprocess.SubprocessError) as error:
        return f"bubblewrap does not run as a worker user: {error}"
    finally:
        accounts.kill_all(account.uid)
        account.release()


_IMPORT_PROBE = f"import sys; sys.path.append('{runtime.OPT}/site'); import numpy"


@functools.cache
def user_mode_problem() -> str | None:
    """Why the root fallback (``user`` mode) cannot run here, or None when it can."""
    if os.geteuid() != 0:
        return "the grader is not root"
    try:
        tree = runtime.tree()
        account = accounts.acquire()
    except (OSError, accounts.Unavailable) as error:
        return str(error)
    try:
        config = {
            "root": str(tree.root),
            "uid": account.uid,
            "gid": account.gid,
            "cwd": "/",
            "argv": [tree.interpreter, "-I", "-S", "-c", _IMPORT_PROBE],
        }
        completed = subprocess.run(
            [
                str(runtime.interpreter()),
                "-I",
                "-S",
                str(INSIDE / "launcher.py"),
                json.dumps(config),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env=base_environment("/"),
        )
        if completed.returncode != 0:
            return f"a worker cannot start in the private root: {completed.stderr.strip()[-300:]}"
        return None
    except (OSError, subprocess.SubprocessError) as error:
        return f"a worker cannot start in the private root: {error}"
    finally:
        accounts.kill_all(account.uid)
        account.release()


_NAMESPACE_PROBE = "import os; print(os.readlink('/proc/self/ns/ipc'))"


@functools.cache
def private_ipc_problem() -> str | None:
    """Why a worker that the grader starts itself (the root fallback, default mode) cannot
    have an IPC namespace of its own here, or None when it can. Strong mode always has one
    (bubblewrap's ``--unshare-all``).

    A root grader needs ``CAP_SYS_ADMIN``, which containers often drop; any other grader
    needs the kernel to allow unprivileged user namespaces.
    """
    ours = ipc.namespace_of(os.getpid())
    python = str(runtime.interpreter())
    config = {"ipc": True, "argv": [python, "-I", "-S", "-c", _NAMESPACE_PROBE]}
    try:
        completed = subprocess.run(
            [python, "-I", "-S", str(INSIDE / "launcher.py"), json.dumps(config)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env=base_environment("/"),
            cwd="/",
        )
    except (OSError, subprocess.SubprocessError) as error:
        return f"the probe for an IPC namespace could not run: {error}"
    theirs = completed.stdout.strip()
    if completed.returncode != 0 or not theirs.startswith("ipc:"):
        return f"the probe for an IPC namespace failed: {completed.stderr.strip()[-300:]}"
    if theirs == ours:
        if os.geteuid() == 0:
            return "the kernel does not let this grader create an IPC namespace"
        return "the kernel allows no unprivileged user namespace here"
    return None


def resolve_mode(mode: str) -> str:
    """Map ``auto`` to the strongest mode that works here: ``strong`` when bubblewrap works,
    else ``user`` when the grader is root and can run workers as other users, else
    ``default``.

    Raises
    ------
    ValueError
        If ``mode`` is unknown, or a mode is asked for that cannot run here (with the reason).
    """
    if mode == "auto":
        if bwrap_works():
            return "strong"
        return "user" if user_mode_problem() is None else "default"
    if mode == "strong" and not bwrap_works():
        raise ValueError("mode 'strong' needs bubblewrap (bwrap), which is missing or not working")
    if mode == "user" and user_mode_problem() is not None:
        raise ValueError(f"mode 'user' cannot run here: {user_mode_problem()}")
    if mode not in MODES:
        raise ValueError(f"mode must be 'auto', {', '.join(map(repr, MODES))}; got {mode!r}")
    return mode


def describe_mode(mode: str) -> str:
    """One paragraph for the instructor: what isolates the submissions in ``mode`` here."""
    groups = cgroups.describe()
    if mode == "strong":
        who = (
            "as unprivileged worker users"
            if os.geteuid() == 0 and bwrap_as_user_problem() is None
            else "as your user"
        )
        return (
            f"strong mode: each submission runs in bubblewrap ({who}; its own PID and IPC "
            f"namespaces, no network, no view of the course files), with {groups}"
        )
    if mode == "user":
        if private_ipc_problem() is None:
            shared = "its own IPC namespace"
        else:
            shared = "the machine's System V IPC (its objects removed by user)"
        return (
            "user mode (root fallback): each submission runs as an unprivileged worker user in "
            f"a private root without the course files, with {shared}, tracked and killed by "
            f"user, with {groups}"
        )
    problem = private_ipc_problem()
    if problem is None:
        kernel = "no isolation by the kernel but an IPC namespace of their own"
    else:
        kernel = (
            "no isolation by the kernel, and the System V shared memory they make outlives "
            f"them ({problem})"
        )
    return (
        f"WARNING: default mode: submissions run as your user, with {kernel} ({groups}). Its "
        "Python-level checks catch mistakes, not adversaries: use bubblewrap (strong mode) or "
        "grade as root (the root fallback) for untrusted submissions"
    )


# ---------------------------------------------------------------- paths


def stdlib_dirs() -> list[str]:
    """The folders ``python -I -S`` puts on ``sys.path``: the standard library only."""
    prefix = Path(sys.base_prefix).resolve()
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return [
        str(prefix / "lib" / version),
        str(prefix / "lib" / f"python3{sys.version_info.minor}.zip"),
    ]


def base_environment(home: str) -> dict:
    return {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": home,
        "TMPDIR": home,
        # One BLAS thread: faster for small arrays, and fewer threads to account for.
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
