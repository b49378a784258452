"""System V IPC and shared memory: what a submission holds, and removing what it leaves.

Memory a submission holds without a control group is measured by the watchdog
(:class:`~rlfound.grading.sandbox.lifecycle.Worker`, with :func:`memory_of`), and two kinds
of it are no process's own resident memory:

* anonymous ``MAP_SHARED`` memory and mapped shared memory, which a few processes can share
  (``fork`` after ``mmap``): :func:`process_bytes` counts each page once among the processes
  that map it (the proportional set size, ``Pss_Anon + Pss_Shmem`` of ``smaps_rollup``);
* System V shared-memory segments, which live on after the last process detaches, and message
  queues, whose messages are kernel memory: :func:`held_bytes` counts the resident size of
  every segment and the bytes of every queue of the submission.

System V objects also outlive their creator, the batch and the grader unless removed.
The root fallback gives each worker an IPC namespace of its own where the kernel allows it
(:mod:`~rlfound.grading.sandbox.inside.launcher`), as strong mode's bubblewrap does: every
object in it is destroyed with its last process. Where the kernel refuses (a container without
``CAP_SYS_ADMIN``) the worker user shares the machine's namespace, and :func:`remove_owned`
removes what that user created or owns when its submission ends.

The grader reads another namespace's tables (``/proc/sysvipc`` shows those of the reader's
namespace) from a thread of its own that joins it (``setns``, root only) and ends after the
read, so the rest of the grader never leaves its namespace.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import threading

import psutil

__all__ = [
    "CLONE_NEWIPC",
    "KINDS",
    "held_bytes",
    "memory_of",
    "namespace_of",
    "owned_by",
    "process_bytes",
    "read_tables",
    "remove_owned",
]

#: ``unshare`` / ``setns`` flag of an IPC namespace.
CLONE_NEWIPC = 0x08000000
#: The System V IPC tables: shared-memory segments, semaphore sets, message queues.
KINDS = ("shm", "sem", "msg")
_ID_COLUMN = {"shm": "shmid", "sem": "semid", "msg": "msqid"}
_IPC_RMID = 0
_libc = ctypes.CDLL(None, use_errno=True)

Tables = dict[str, list[dict[str, int]]]


def _parse(text: str) -> list[dict[str, int]]:
    """Rows of one ``/proc/sysvipc`` table as ``{column: number}``."""
    lines = text.splitlines()
    if not lines:
        return []
    header = lines[0].split()
    rows = []
    for line in lines[1:]:
        fields = line.split()
        if len(fields) != len(header):
            continue
        with contextlib.suppress(ValueError):
            rows.append(dict(zip(header, map(int, fields), strict=True)))
    return rows


def _read_own() -> Tables:
    tables: Tables = {}
    for kind in KINDS:
        try:
            with open(f"/proc/sysvipc/{kind}") as handle:
                tables[kind] = _parse(handle.read())
        except OSError:
            tables[kind] = []
    return tables


def namespace_of(pid: int) -> str | None:
    """The IPC namespace of process ``pid`` (as ``readlink`` names it), or None."""
    try:
        return os.readlink(f"/proc/{pid}/ns/ipc")
    except OSError:
        return None


def read_tables(pid: int | None = None) -> Tables | None:
    """The System V IPC tables of the grader's namespace, or of process ``pid``'s.

    Returns None when ``pid``'s namespace cannot be joined (the grader is not root, or the
    process is gone).
    """
    if pid is None:
        return _read_own()
    found: list[Tables] = []

    def join_and_read():
        # setns changes this thread only; the thread ends right after reading.
        try:
            descriptor = os.open(f"/proc/{pid}/ns/ipc", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return
        try:
            if _libc.setns(descriptor, CLONE_NEWIPC) != 0:
                return
        finally:
            os.close(descriptor)
        found.append(_read_own())

    reader = threading.Thread(target=join_and_read, name="rlfound-ipc-reader", daemon=True)
    reader.start()
    reader.join()
    return found[0] if found else None


def owned_by(tables: Tables, uid: int) -> Tables:
    """The rows of ``tables`` that ``uid`` created or owns (an owner may give an object to
    another user, never its creator)."""
    return {
        kind: [row for row in rows if uid in (row.get("uid"), row.get("cuid"))]
        for kind, rows in tables.items()
    }


def _bytes(tables: Tables) -> int:
    total = 0
    for row in tables.get("shm", []):
        # Kernels without the rss column: the whole size, as if every page were resident.
        total += row.get("rss", row.get("size", 0)) + row.get("swap", 0)
    for row in tables.get("msg", []):
        total += row.get("cbytes", 0)
    return total


def held_bytes(pids, uid: int | None) -> int:
    """Bytes of System V IPC that a submission holds: in every IPC namespace of its processes
    ``pids`` other than the grader's, all of it (where the grader may join the namespace: as
    root); in the grader's, what worker user ``uid`` created or owns (nothing when ``uid`` is
    None: default mode's user is the grader's, whose objects are not the submission's).

    A segment counts at its resident size whether or not a process has it attached: its
    pages a process maps also count in that process's :func:`process_bytes`, which errs on
    the strict side, whereas leaving attached segments out would miss the pages no attached
    process has touched (one process fills a segment, another attaches it, the first exits).
    """
    own = namespace_of(os.getpid())
    total = _bytes(owned_by(_read_own(), uid)) if uid is not None else 0
    seen = {own}
    for pid in sorted(pids):
        namespace = namespace_of(pid)
        if namespace is None or namespace in seen:
            continue
        seen.add(namespace)  # one that cannot be joined now will not be later either
        tables = read_tables(pid)
        if tables is not None:
            total += _bytes(tables)
    return total


_ROLLUP_FIELDS = (b"Pss_Anon:", b"Pss_Shmem:", b"SwapPss:")


def process_bytes(pid: int) -> int | None:
    """Memory of process ``pid`` that is its own or its share of what it shares: anonymous
    and shared-memory pages, each divided among the processes mapping it, and its share of
    swapped pages (files' pages are left out: the page cache holds them, and they can be
    read again). None when ``smaps_rollup`` cannot be read."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    fields = {}
    for line in lines:
        name, _, rest = line.partition(b" ")
        value = rest.split()
        if value and value[0].isdigit():
            fields[name] = int(value[0]) * 1024
    if not fields:
        return 0  # a process whose memory is gone (it is exiting): nothing left to count
    if b"Pss_Anon:" not in fields:  # kernels before 5.9: the whole PSS, files included
        return fields.get(b"Pss:", 0) + fields.get(b"SwapPss:", 0)
    return sum(fields.get(name, 0) for name in _ROLLUP_FIELDS)


def memory_of(pids, uid: int | None) -> int:
    """Memory a submission holds: :func:`process_bytes` of each of its processes ``pids``
    (their resident memory, shared pages in full, where it cannot be read) and
    :func:`held_bytes`."""
    pids = set(pids)
    total = 0
    for pid in pids:
        own = process_bytes(pid)
        if own is None:
            with contextlib.suppress(psutil.Error):
                own = psutil.Process(pid).memory_info().rss
        total += own or 0
    return total + held_bytes(pids, uid)


def _remove(kind: str, number: int) -> bool:
    if kind == "shm":
        result = _libc.shmctl(number, _IPC_RMID, None)
    elif kind == "sem":
        result = _libc.semctl(number, 0, _IPC_RMID)
    else:
        result = _libc.msgctl(number, _IPC_RMID, None)
    # Already gone (removed by its owner meanwhile) is as good as removed.
    return result == 0 or ctypes.get_errno() in (errno.EINVAL, errno.EIDRM)


def remove_owned(uid: int) -> list[str]:
    """Remove every System V shared-memory segment, semaphore set and message queue of the
    grader's IPC namespace that ``uid`` created or owns; return those that could not be.

    A segment still attached is destroyed when its last process detaches, so call this once
    ``uid``'s processes are gone.
    """
    left = []
    for kind, rows in owned_by(_read_own(), uid).items():
        for row in rows:
            number = row.get(_ID_COLUMN[kind])
            if number is not None and not _remove(kind, number):
                left.append(f"{kind} {number}")
    return left
