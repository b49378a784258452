"""Control groups: a total memory limit, a process limit, CPU accounting and a fair CPU share
per submission, where the kernel lets the grader make them.

Each worker gets its own group (:class:`Box`), created under the grader's own group in each
hierarchy, so that whatever limits the machine already puts on the grader still hold. The
grader moves the worker into it before any student code runs (every process the worker then
starts, detached or not, is born inside); the group is the submission's:

``memory``
    total memory of all its processes (``memory.max``, or ``memory.limit_in_bytes`` in
    cgroup v1); the kernel's out-of-memory killer acts inside the group only.
``pids``
    number of processes and threads (``pids.max``).
``cpu``
    a group of its own, so the scheduler shares the CPU between submissions, not between
    processes: forty busy processes of one submission weigh as much as one of another.
``cpuacct`` (cgroup v1) / ``cpu.stat`` (v2)
    the CPU time of every process the submission ever ran, which the per-check time limit
    measures.

cgroup v2 is used where the grader's group delegates the controllers (its
``cgroup.subtree_control`` lists them, or they can be enabled there); otherwise cgroup v1
hierarchies where the grader may create groups (usually as root). :func:`available` says what
this machine gives; where it gives nothing the grader falls back to what each mode has (the
process tree, the worker's user) and says so.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import secrets
import signal
import threading
import time
from pathlib import Path

__all__ = ["CONTROLLERS", "NO_CGROUPS_VARIABLE", "Box", "available", "create", "describe"]

#: Controllers used, by the name of their cgroup v1 hierarchy.
CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")
_V2_NAMES = {"memory": "memory", "pids": "pids", "cpu": "cpu", "cpuacct": "cpu"}
#: Set to 1 to make the grader behave as where it may create no control group (tests use it:
#: Gradescope's containers, for one, give none).
NO_CGROUPS_VARIABLE = "RLFOUND_NO_CGROUPS"
_counter = itertools.count()
_lock = threading.Lock()
_live = [0]  # groups alive now (the parent's CPU weight follows it)


def _read(path: Path) -> str:
    with open(path) as handle:
        return handle.read()


def _write(path: Path, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, file-system type, super options) of every cgroup mount."""
    found = []
    try:
        lines = _read(Path("/proc/self/mountinfo")).splitlines()
    except OSError:
        return found
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        point = fields[4].replace("\\040", " ")
        found.append((point, tail[0], set(tail[2].split(","))))
    return found


def _own_groups() -> dict[str, str]:
    """The grader's group per hierarchy: controllers (comma-joined, or '' for v2) -> path."""
    groups = {}
    try:
        lines = _read(Path("/proc/self/cgroup")).splitlines()
    except OSError:
        return groups
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3:
            groups[parts[1]] = parts[2]
    return groups


class _Group:
    """One directory of one hierarchy, for one controller (or several, in v2)."""

    def __init__(self, path: Path, version: int):
        self.path = path
        self.version = version


@functools.cache
def _parents() -> dict[str, _Group]:
    """The folder, per controller, under which this process may create groups (made once per
    process, removed at exit)."""
    found: dict[str, _Group] = {}
    if os.environ.get(NO_CGROUPS_VARIABLE, "") not in ("", "0"):
        return found
    mounts, own = _mounts(), _own_groups()
    name = f"rlfound-{os.getpid()}-{secrets.token_hex(4)}"
    # cgroup v1: one hierarchy per controller (or a few mounted together).
    for point, kind, options in mounts:
        if kind != "cgroup":
            continue
        for controller in CONTROLLERS:
            if controller not in options or controller in found:
                continue
            key = next((k for k in own if controller in k.split(",")), None)
            if key is None:
                continue
            parent = Path(point) / own[key].lstrip("/") / name
            try:
                parent.mkdir(exist_ok=True)
            except OSError:
                continue
            found[controller] = _Group(parent, 1)
    # cgroup v2 for whatever v1 did not give, where the grader's group delegates it.
    missing = [c for c in CONTROLLERS if c not in found]
    unified = next((point for point, kind, _ in mounts if kind == "cgroup2"), None)
    if missing and unified and "" in own:
        base = Path(unified) / own[""].lstrip("/")
        wanted = sorted({_V2_NAMES[c] for c in missing})
        try:
            enabled = set(_read(base / "cgroup.subtree_control").split())
            if not set(wanted) <= enabled:
                with contextlib.suppress(OSError):
                    _write(base / "cgroup.subtree_control", " ".join(f"+{w}" for w in wanted))
                enabled = set(_read(base / "cgroup.subtree_control").split())
            usable = [w for w in wanted if w in enabled]
            if usable:
                parent = base / name
                parent.mkdir(exist_ok=True)
                _write(parent / "cgroup.subtree_control", " ".join(f"+{w}" for w in usable))
                for controller in missing:
                    if _V2_NAMES[controller] in usable:
                        found[controller] = _Group(parent, 2)
        except OSError:
            pass
    import atexit

    atexit.register(_remove_parents, found)
    return found


def _remove_parents(found: dict[str, _Group]) -> None:
    for group in {id(g): g for g in found.values()}.values():
        with contextlib.suppress(OSError):
            group.path.rmdir()


def available() -> list[str]:
    """The controllers this process can give each worker, e.g. ``["memory", "pids", "cpu",
    "cpuacct"]``; empty where the kernel lets it make no group."""
    return [c for c in CONTROLLERS if c in _parents()]


def describe() -> str:
    """What :func:`available` means, for the line the grader prints when it starts."""
    found = _parents()
    if not found:
        return "no control group (the kernel lets this user create none)"
    versions = sorted({f"v{g.version}" for g in found.values()})
    return f"a control group per submission ({', '.join(available())}; cgroup {'/'.join(versions)})"


class Box:
    """The control groups of one worker; see the module docstring."""

    def __init__(self, memory: int, processes: int):
        parents = _parents()
        self.dirs: dict[str, _Group] = {}
        with _lock:
            name = f"w{next(_counter)}"
        made: dict[Path, _Group] = {}
        for controller, parent in parents.items():
            path = parent.path / name
            if path not in made:
                try:
                    path.mkdir()
                except OSError:
                    continue
                made[path] = _Group(path, parent.version)
            self.dirs[controller] = made[path]
        self.memory = self.processes = None
        self._configure(memory, processes)
        if "cpu" in self.dirs:
            _rebalance(parents["cpu"], +1)
        self._counted = "cpu" in self.dirs

    def _file(self, controller: str, v1: str, v2: str) -> Path | None:
        group = self.dirs.get(controller)
        if group is None:
            return None
        return group.path / (v1 if group.version == 1 else v2)

    def _configure(self, memory: int, processes: int) -> None:
        memory_file = self._file("memory", "memory.limit_in_bytes", "memory.max")
        if memory_file is not None:
            try:
                _write(memory_file, str(memory))
                self.memory = memory
            except OSError:
                self.dirs.pop("memory", None)
            # No swap beyond the limit, where the kernel accounts swap.
            swap = self._file("memory", "memory.memsw.limit_in_bytes", "memory.swap.max")
            if swap is not None and swap.exists():
                with contextlib.suppress(OSError):
                    _write(swap, str(memory) if self.dirs["memory"].version == 1 else "0")
        pids_file = self._file("pids", "pids.max", "pids.max")
        if pids_file is not None:
            try:
                _write(pids_file, str(processes))
                self.processes = processes
            except OSError:
                self.dirs.pop("pids", None)

    @property
    def controllers(self) -> list[str]:
        return sorted(self.dirs)

    def add(self, pids) -> None:
        """Move processes (every one of the worker's, before the student's code runs) in."""
        for group in {id(g): g for g in self.dirs.values()}.values():
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    _write(group.path / "cgroup.procs", str(pid))

    def pids(self) -> set[int]:
        """Every process in the groups."""
        found = set()
        for group in {id(g): g for g in self.dirs.values()}.values():
            with contextlib.suppress(OSError):
                found |= {int(x) for x in _read(group.path / "cgroup.procs").split()}
        return found

    def cpu_seconds(self) -> float | None:
        """CPU time of every process that ever ran in the group (None without accounting)."""
        path = self._file("cpuacct", "cpuacct.usage", "cpu.stat")
        if path is None:
            return None
        try:
            content = _read(path)
        except OSError:
            return None
        if self.dirs["cpuacct"].version == 1:
            return int(content.strip()) / 1e9
        for line in content.splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) / 1e6
        return None

    def oom_kills(self) -> int:
        """How many processes the out-of-memory killer ended inside the group."""
        path = self._file("memory", "memory.oom_control", "memory.events")
        if path is None:
            return 0
        with contextlib.suppress(OSError, ValueError):
            for line in _read(path).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def kill(self, timeout: float = 10.0) -> bool:
        """Kill every process in the groups; True once none is left."""
        pids_file = self._file("pids", "pids.max", "pids.max")
        if pids_file is not None:  # no new process while the others are being killed
            with contextlib.suppress(OSError):
                _write(pids_file, "0")
        for group in {id(g): g for g in self.dirs.values()}.values():
            if group.version == 2 and (group.path / "cgroup.kill").exists():
                with contextlib.suppress(OSError):
                    _write(group.path / "cgroup.kill", "1")
        deadline = time.monotonic() + timeout
        while True:
            left = self.pids()
            if not left:
                break
            if time.monotonic() > deadline:
                return False
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)
        if pids_file is not None and self.processes is not None:
            with contextlib.suppress(OSError):
                _write(pids_file, str(self.processes))
        return True

    def remove(self) -> None:
        """Kill what is left and delete the groups."""
        self.kill()
        if self._counted:
            _rebalance(_parents()["cpu"], -1)
            self._counted = False
        for group in {id(g): g for g in self.dirs.values()}.values():
            for _ in range(50):
                try:
                    group.path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
        self.dirs = {}


def _rebalance(parent: _Group, change: int) -> None:
    """Give the grader's parent group the CPU weight of as many ordinary processes as it has
    workers, so that each worker weighs one process against the rest of the machine (the
    workers share it equally among themselves)."""
    with _lock:
        _live[0] = max(0, _live[0] + change)
        count = max(1, _live[0])
    if parent.version == 1:
        name, value = "cpu.shares", 1024 * count
    else:
        name, value = "cpu.weight", min(10_000, 100 * count)
    with contextlib.suppress(OSError):
        _write(parent.path / name, str(value))


def create(memory: int, processes: int) -> Box | None:
    """A new group per controller for one worker, or None where none can be made."""
    if not _parents():
        return None
    box = Box(memory, processes)
    return box if box.dirs else None
