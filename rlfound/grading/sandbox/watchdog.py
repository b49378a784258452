"""The watchdog of one request: the submission's CPU time, its hang guard (wall-clock time
less the time it spent waiting for a CPU) and its memory, checked on every poll while the
grader waits for a reply (see :class:`~rlfound.grading.sandbox.lifecycle.Worker`)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable

from rlfound.grading.sandbox import stopping
from rlfound.grading.sandbox.inside import protocol

__all__ = ["Expired", "Watch", "lower_priority", "run_queue_waits"]

#: CPU time per wall-clock second above which a worker without a CPU controller is reniced.
_GREEDY_RATE = 1.5


class Expired(Exception):
    """A request went over one of the submission's limits (the message says which);
    ``limit`` is ``"cpu"``, ``"wall"`` or None (memory)."""

    def __init__(self, reason: str, limit: str | None = None):
        super().__init__(reason)
        self.limit = limit


def run_queue_waits(pids) -> dict[int, float]:
    """Seconds each thread of ``pids`` has spent runnable but waiting for a CPU (the second
    field of ``/proc/<pid>/task/<tid>/schedstat``), by thread id; threads the kernel does not
    report on are left out."""
    waits = {}
    for pid in pids:
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in threads:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as handle:
                    waits[int(tid)] = int(handle.read().split()[1]) / 1e9
            except (OSError, ValueError, IndexError):
                continue
    return waits


def lower_priority(pids, niced: set[int]) -> None:
    """``nice 19`` for every thread of ``pids`` not in ``niced`` (a process may not undo it);
    adds the threads it reniced to ``niced``."""
    for pid in pids:
        try:
            threads = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        except OSError:
            continue
        for tid in threads:
            if tid in niced:
                continue
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, tid, 19)
                niced.add(tid)


class Watch:
    """The limits of one request, checked by :meth:`poll`, which raises :class:`Expired`.

    The hang guard's clock is the wall-clock time less the longest wait for a CPU of any of
    the submission's threads: a correct submission on a machine busy with other work is
    runnable all the while it is not running, so the load does not count against it, while
    one that sleeps or blocks waits for nothing and is stopped after ``wall``.

    Parameters
    ----------
    what : str
        What the request does, for the messages ("calling f").
    cpu, wall : float
        The request's CPU-time allowance and its hang guard, in seconds.
    memory : int or None
        The memory limit in bytes, or None where a control group enforces it.
    processes, cpu_seconds, memory_bytes : callable
        The submission's process ids, their CPU time, and the memory they hold.
    alive : callable
        False once the worker process has exited.
    renice : callable or None
        Lowers the submission's priority; None where a CPU controller shares the CPU fairly.
    """

    def __init__(
        self,
        what: str,
        cpu: float,
        wall: float,
        *,
        memory: int | None,
        processes: Callable[[], set[int]],
        cpu_seconds: Callable[[], float],
        memory_bytes: Callable[[], int],
        alive: Callable[[], bool],
        renice: Callable[[], None] | None,
    ):
        self.what, self.cpu, self.wall, self.memory = what, cpu, wall, memory
        self._processes, self._cpu_seconds = processes, cpu_seconds
        self._memory_bytes, self._alive, self._renice = memory_bytes, alive, renice
        self.start = time.monotonic()
        self.cpu0 = cpu_seconds()
        self._rate_time, self._rate_cpu = self.start, self.cpu0
        self._greedy = False
        self._used = 0.0
        self._waits = run_queue_waits(processes())
        self._waited = 0.0

    def waited(self) -> float:
        """The longest wait for a CPU of one thread since the request began (threads born
        since then waited for it all, from zero)."""
        now = run_queue_waits(self._processes())
        longest = max((w - self._waits.get(tid, 0.0) for tid, w in now.items()), default=0.0)
        self._waited = max(self._waited, longest)
        return self._waited

    def poll(self) -> None:
        stopping.check()  # a signal stops the grader: give up this request at once
        # A worker that died while a process it started holds its pipe open: no end of file
        # will come, so do not wait for one.
        if not self._alive():
            raise protocol.Closed
        now = time.monotonic()
        used = self._cpu_seconds()
        self._used = max(self._used, used - self.cpu0)
        if used - self.cpu0 > self.cpu:
            raise Expired(
                f"timed out: the submission used more than {self.cpu:g} s of CPU time "
                f"while {self.what}",
                "cpu",
            )
        # The waits are read only once the clock, counting the last known waits, is up.
        elapsed = now - self.start
        if elapsed - self._waited >= self.wall and elapsed - self.waited() >= self.wall:
            raise Expired(f"timed out after {self.wall:g} s (wall clock) while {self.what}", "wall")
        if self.memory is not None and self._memory_bytes() > self.memory:
            raise Expired(
                f"stopped: the submission's processes used more than "
                f"{self.memory // 2**20} MiB of memory while {self.what}"
            )
        if self._renice is not None and now - self._rate_time >= 0.5:
            rate = (used - self._rate_cpu) / (now - self._rate_time)
            self._rate_time, self._rate_cpu = now, used
            if rate > _GREEDY_RATE or self._greedy:
                self._greedy = True
                self._renice()

    def used(self) -> float:
        """CPU seconds the request used (after a kill, what was measured last stands)."""
        return max(self._used, self._cpu_seconds() - self.cpu0)
