"""Unprivileged worker users, for a grader that runs as root.

Where the grader is root (Gradescope's containers, CI, many teaching servers) each worker runs
as a user of its own, ``rlfound-worker-0``, ``rlfound-worker-1``, ... (system users without a
home or a login shell, created with ``useradd`` the first time they are needed). A user is
something a process cannot shed: the kernel

* enforces ``RLIMIT_NPROC`` for it (not for root), so a submission cannot start more than
  :attr:`~rlfound.grading.sandbox.Limits.processes` processes and threads;
* lets it signal only its own processes, never the grader or another submission's worker;
* lets it read and write only what its user may (the worker runs in a private root, see
  :mod:`rlfound.grading.sandbox.runtime`).

When the submission is done, :func:`kill_all` kills every process of that user, whatever it
did to detach itself, and checks that none is left. Each user serves one worker at a time:
:func:`acquire` takes a lock (``flock`` on a file in a root-only folder) that another grader
on the same machine respects.

What a user's processes leave outlives them: System V shared memory, semaphores and message
queues in the machine's IPC namespace (where the kernel gave the worker no namespace of its
own, :mod:`rlfound.grading.sandbox.ipc`), POSIX shared memory and message queues, files in
the machine's temporary folders. :func:`remove_leftovers` removes all of it once the user's
processes are gone: when the account is released (:meth:`Account.release`), when it is
acquired (what an earlier grader that was killed left), and when the grader exits (every
account it still holds).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import fcntl
import grp
import os
import pwd
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import psutil

from rlfound.grading.intake import files
from rlfound.grading.sandbox import ipc

__all__ = [
    "MAX_ACCOUNTS",
    "PREFIX",
    "SHARED_FOLDERS",
    "Account",
    "Unavailable",
    "acquire",
    "ensure",
    "kill_all",
    "processes_of",
    "remove_leftovers",
]

#: Name prefix of the worker users.
PREFIX = "rlfound-worker-"
#: Most worker users a machine gets (one per submission graded at the same time).
MAX_ACCOUNTS = 64
_LOCK_DIRS = (Path("/run/rlfound"), Path(tempfile.gettempdir()) / "rlfound-root-locks")
#: Folders any user may write in, where a worker user's files would outlive it: POSIX shared
#: memory and message queues, and the machine's temporary folders.
SHARED_FOLDERS = ("/dev/shm", "/dev/mqueue", "/tmp", "/var/tmp")
_create_lock = threading.Lock()
_held_lock = threading.Lock()
_held: dict[int, Account] = {}  # accounts this process holds, released at its exit
_held_at_exit = False  # whether _release_held is registered


class Unavailable(Exception):
    """No worker user can be used here; the message says why."""


@dataclasses.dataclass
class Account:
    """A worker user held by one worker (release it when the worker is done)."""

    name: str
    uid: int
    gid: int
    lock: int | None

    def release(self) -> str | None:
        """Kill what is left of the user's processes, remove what they leave
        (:func:`remove_leftovers`) and unlock the user; return what went wrong, or None."""
        if self.lock is None:
            return None
        problems = []
        if not kill_all(self.uid):
            problems.append(f"processes of {self.name} could not be killed")
        left = remove_leftovers(self.uid)
        if left:
            problems.append(f"what {self.name} left could not be removed: {', '.join(left[:5])}")
        with contextlib.suppress(OSError):
            os.close(self.lock)
        self.lock = None
        with _held_lock:
            _held.pop(id(self), None)
        return "; ".join(problems) or None


def _hold(account: Account) -> None:
    global _held_at_exit
    with _held_lock:
        if not _held_at_exit:
            # Registered once the private root exists (it is made before the first account),
            # so it runs before the root's removal at exit: processes die before their folder.
            atexit.register(_release_held)
            _held_at_exit = True
        _held[id(account)] = account


def _release_held() -> None:
    """At the grader's exit: release every account it still holds (a worker never closed)."""
    with _held_lock:
        held = list(_held.values())
    for account in held:
        with contextlib.suppress(Exception):
            account.release()


def _lock_dir() -> Path:
    for folder in _LOCK_DIRS:
        with contextlib.suppress(OSError):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            info = os.lstat(folder)
        except OSError:
            continue
        # Root's own folder, not a link, not writable by anyone else.
        if stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and not info.st_mode & 0o022:
            return folder
    raise Unavailable("no root-only folder for the worker users' locks (/run or the temp folder)")


def _lookup(name: str) -> tuple[int, int] | None:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return None
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        raise Unavailable(f"user {name} exists but is privileged (uid or gid 0)")
    with contextlib.suppress(KeyError):
        if grp.getgrgid(entry.pw_gid).gr_mem:
            raise Unavailable(f"the group of {name} has other members")
    return entry.pw_uid, entry.pw_gid


def _create(name: str) -> tuple[int, int]:
    useradd = shutil.which("useradd") or next(
        (p for p in ("/usr/sbin/useradd", "/sbin/useradd") if os.path.exists(p)), None
    )
    if useradd is None:
        raise Unavailable("useradd is missing, so the worker users cannot be created")
    shell = next(
        (p for p in ("/usr/sbin/nologin", "/sbin/nologin", "/bin/false") if os.path.exists(p)),
        "/bin/false",
    )
    command = [
        useradd,
        "--system",
        "--user-group",
        "--no-create-home",
        "--home-dir",
        "/nonexistent",
        "--shell",
        shell,
        "--comment",
        "rlfound grading worker (no login)",
        name,
    ]
    with _create_lock:
        found = _lookup(name)
        if found is not None:
            return found
        completed = subprocess.run(command, capture_output=True, text=True, check=False)
        found = _lookup(name)  # another grader may have created it at the same time
        if found is None:
            raise Unavailable(f"useradd could not create {name}: {completed.stderr.strip()}")
        return found


def ensure(count: int = 1) -> list[tuple[str, int, int]]:
    """The first ``count`` worker users, created where missing (root only).

    Raises
    ------
    Unavailable
        If the grader is not root, or the users cannot be created.
    """
    if os.geteuid() != 0:
        raise Unavailable("the grader is not root, so it cannot run workers as other users")
    found = []
    for number in range(count):
        name = f"{PREFIX}{number}"
        uid, gid = _lookup(name) or _create(name)
        found.append((name, uid, gid))
    return found


def acquire() -> Account:
    """A worker user that no other worker uses, locked for the caller, with none of its
    processes left from an earlier run.

    Raises
    ------
    Unavailable
        If no worker user can be used (not root, no useradd, all in use).
    """
    if os.geteuid() != 0:
        raise Unavailable("the grader is not root, so it cannot run workers as other users")
    folder = _lock_dir()
    for number in range(MAX_ACCOUNTS):
        name = f"{PREFIX}{number}"
        descriptor = os.open(
            folder / f"{name}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
        )
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            continue
        try:
            uid, gid = _lookup(name) or _create(name)
            if not kill_all(uid):
                raise Unavailable(f"processes of {name} from an earlier run cannot be killed")
            # What an earlier grader, killed before it released the user, left. Root removes
            # anything, so what resists is not the submission's doing; it is not fatal.
            remove_leftovers(uid)
        except BaseException:
            os.close(descriptor)
            raise
        account = Account(name, uid, gid, descriptor)
        _hold(account)
        return account
    raise Unavailable(f"all {MAX_ACCOUNTS} worker users are in use")


def processes_of(uid: int) -> list[int]:
    """Live (not zombie) processes with ``uid`` as their real, effective or saved user."""
    found = []
    for process in psutil.process_iter(["uids", "status"]):
        info = process.info
        uids = info.get("uids")
        if uids is None or info.get("status") == psutil.STATUS_ZOMBIE:
            continue
        if uid in (uids.real, uids.effective, uids.saved):
            found.append(process.pid)
    return found


def kill_all(uid: int, timeout: float = 10.0) -> bool:
    """Kill every process of ``uid`` until none is left; True when none is.

    A process killed while it forks cannot finish the fork, and the kernel's limit on the
    user's processes bounds how many can appear between two rounds.
    """
    deadline = time.monotonic() + timeout
    while True:
        victims = processes_of(uid)
        if not victims:
            return True
        if time.monotonic() > deadline:
            return False
        for pid in victims:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)


def _remove_files(folder: str, uid: int, *, descend: bool = True) -> list[str]:
    """Remove the entries of ``folder`` that ``uid`` owns; with ``descend``, also those in the
    folders below it that anyone may write in (``/tmp/.X11-unix``)."""
    left = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return left
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if info.st_uid == uid:
            try:
                files.remove_tree(entry.path)
            except OSError as error:
                left.append(f"{entry.path} ({error.strerror or error})")
        elif descend and stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_IWOTH:
            left += _remove_files(entry.path, uid, descend=False)
    return left


def remove_leftovers(uid: int) -> list[str]:
    """Remove what user ``uid`` left behind: its System V IPC objects in the grader's IPC
    namespace (:func:`~rlfound.grading.sandbox.ipc.remove_owned`), and its entries in
    :data:`SHARED_FOLDERS`; return what could not be removed.

    Call it once the user's processes are gone (:func:`kill_all`): a process still alive
    could make more, and a segment it has attached lives until it detaches.
    """
    left = ipc.remove_owned(uid)
    for folder in SHARED_FOLDERS:
        left += _remove_files(folder, uid)
    return left
