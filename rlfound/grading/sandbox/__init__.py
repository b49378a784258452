"""Start, watch and clean up the worker processes that run student code.

The parent never imports a submission. For each submission it runs one worker (restarted
after a crash or a timeout), ``python -I -S worker.py CONFIG``, with a scrubbed environment,
and asks it to call the student's functions. Three modes, from the strongest:

``strong`` (bubblewrap works here)
    The worker runs inside bubblewrap (``bwrap``): no network, a read-only view of the
    interpreter, the system libraries and NumPy only (no home folders, no course folder, no
    reference solutions, no grades), all capabilities dropped, read-only ``/`` and ``/dev``,
    and only ``/submission``, a small private tmpfs, writable. Its processes live in their own
    PID namespace, which is what the grader tracks: when the sandbox ends, the kernel kills
    every process in it, detached or not. When the grader is root, bubblewrap itself runs as
    a worker user (:mod:`rlfound.grading.sandbox.accounts`), so the kernel also limits the number of
    processes (``RLIMIT_NPROC`` is not enforced for root).

``user`` (the root fallback: the grader is root, bubblewrap cannot run)
    The worker runs as an unprivileged user of its own (one per worker graded at the same
    time), inside a private root that holds only the interpreter, the standard library and
    NumPy (:mod:`~rlfound.grading.sandbox.runtime`,
    :mod:`~rlfound.grading.sandbox.inside.launcher`):
    the reference
    solutions, the grader's code, the submissions and the results are not there to read or
    write. The kernel enforces the process limit for that user and lets it signal only its
    own processes; the grader tracks and kills the submission's processes by that user. The
    worker has an IPC namespace of its own where the kernel allows it (as in strong mode);
    elsewhere the grader removes the System V objects and shared-memory files its user
    leaves (:mod:`~rlfound.grading.sandbox.ipc`, :mod:`~rlfound.grading.sandbox.accounts`).

``default`` (neither: a teacher's laptop)
    The worker runs as the grader's user, and only Python-level checks (resource limits it
    sets on itself, an audit hook) stand in its way. They catch mistakes, not adversaries:
    the grader says so when it starts.

In every mode, where the kernel lets the grader create control groups
(:mod:`rlfound.grading.sandbox.cgroups`), each worker gets its own: a total memory limit, a process
limit, a fair share of the CPU, and exact CPU accounting. The time limit of a check counts the
CPU time the submission's processes use (the group's accounting, or the tracked processes'
times), so a busy machine does not turn a neighbor's slow but correct code into a timeout; a
wall-clock backstop ends a submission that sleeps. Where there is no group, the watchdog
measures the submission's memory (shared memory once, among the processes sharing it, and its
System V segments and message queues) and, when its processes together use more than a CPU,
lowers their priority to the least (``nice 19``), so that they cannot starve another
submission.

Files: :mod:`~rlfound.grading.sandbox.modes` (what this machine allows),
:mod:`~rlfound.grading.sandbox.lifecycle` (one worker's life),
:mod:`~rlfound.grading.sandbox.watchdog` (the limits of one request),
:mod:`~rlfound.grading.sandbox.tracking` (a submission's processes),
:mod:`~rlfound.grading.sandbox.cgroups`, :mod:`~rlfound.grading.sandbox.accounts`,
:mod:`~rlfound.grading.sandbox.ipc` (System V IPC and shared memory),
:mod:`~rlfound.grading.sandbox.runtime` (the private root),
:mod:`~rlfound.grading.sandbox.stopping` (SIGTERM and SIGINT stop the grader with the clean-up
of a normal exit), and ``inside/``, the only files
copied into the sandbox (the wire protocol, the worker's main script and the private root's
launcher), which import the standard library only.
"""

from rlfound.grading.sandbox.lifecycle import STARTUP_SECONDS, Limits, Worker, WorkerError
from rlfound.grading.sandbox.modes import (
    MODES,
    NO_BWRAP_VARIABLE,
    bwrap_works,
    describe_mode,
    resolve_mode,
    user_mode_problem,
)
from rlfound.grading.sandbox.tracking import TOKEN_VARIABLE, in_namespace, sweep

__all__ = [
    "MODES",
    "NO_BWRAP_VARIABLE",
    "STARTUP_SECONDS",
    "TOKEN_VARIABLE",
    "Limits",
    "Worker",
    "WorkerError",
    "bwrap_works",
    "describe_mode",
    "in_namespace",
    "resolve_mode",
    "sweep",
    "user_mode_problem",
]
