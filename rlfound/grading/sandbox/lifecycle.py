"""One worker per submission: start it, send it requests, watch its CPU time and memory,
and kill and clean up every process it made (see :mod:`rlfound.grading.sandbox`)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import psutil

from rlfound.grading.intake import files, submissions, text
from rlfound.grading.sandbox import accounts, cgroups, ipc, runtime, stopping, watchdog
from rlfound.grading.sandbox.inside import protocol
from rlfound.grading.sandbox.modes import (
    INSIDE,
    base_environment,
    bwrap_as_user_problem,
    bwrap_prefix,
    interpreter_binds,
    private_ipc_problem,
    stdlib_dirs,
    system_binds,
)
from rlfound.grading.sandbox.tracking import (
    TOKEN_VARIABLE,
    in_namespace,
    namespace_of,
    sweep,
    tree_of,
)

__all__ = ["HARD_WALL_FACTOR", "STARTUP_SECONDS", "Limits", "Worker", "WorkerError"]

#: How long a worker may take to start Python and import NumPy.
STARTUP_SECONDS = 60.0
#: Largest share of one CPU the watchdog's memory measure may take (it runs on every poll;
#: between two measures it reports the last one).
_MEASURE_SHARE = 0.1
#: A request ends after this many times its wall-clock allowance in all, waits for a busy CPU
#: included: the last backstop, for a kernel that does not report those waits.
HARD_WALL_FACTOR = 10


@dataclasses.dataclass(frozen=True)
class Limits:
    """Resource limits of one submission's worker.

    Attributes
    ----------
    timeout : float
        CPU seconds that the submission's processes together may use for importing the
        submission, and for the calls of one function in one check (all of them, one
        request: the grader sends each function's calls of a check together, so a function
        that times out is known, and only its own CPU time counts against it).
    total_timeout : float or None
        CPU seconds of the whole submission: every check and every import (a fresh worker
        imports the submission again after a crash or a timeout) together. None means
        ``10 * timeout``: a correct submission uses a small part of it, and one whose every
        function is slow costs the batch at most that much. Once spent, the remaining checks
        fail without running.
    wall_timeout : float or None
        The hang guard: seconds of wall-clock time after which a request (an import, or a
        function's calls in one check) ends whatever its CPU use (a submission that sleeps or
        waits), not counting the time its processes spend waiting for a CPU the machine is
        busy with, so that load costs no correct submission a point; None means
        ``3 * timeout + 5``. Where the kernel does not report those waits
        (``/proc/<pid>/task/<tid>/schedstat``) the guard counts plain wall-clock time, and no
        request lasts more than :data:`HARD_WALL_FACTOR` times it in any case.
    address_space : int
        Bytes of virtual memory of each process (``RLIMIT_AS``).
    memory : int
        Bytes of memory of all the submission's processes together (a control group, or the
        watchdog's measure where there is none).
    cpu_seconds : int
        CPU seconds of each process for its whole life (``RLIMIT_CPU``), a backstop.
    file_size : int
        Largest file the worker may write (``RLIMIT_FSIZE``), which also caps its output file.
    open_files : int
        Open file descriptors (``RLIMIT_NOFILE``).
    processes : int
        Processes and threads of the submission (a control group's ``pids.max``, and
        ``RLIMIT_NPROC`` of the worker user; the kernel enforces neither for root).
    output_chars : int
        Characters of the submission's stdout and stderr kept (each); the rest is dropped.
    folder_bytes : int
        Size of the writable folder in strong mode (a private tmpfs).
    """

    timeout: float = 10.0
    total_timeout: float | None = None
    wall_timeout: float | None = None
    address_space: int = 2 * 1024**3
    memory: int = 2 * 1024**3
    cpu_seconds: int = 600
    file_size: int = 8 * 1024**2
    open_files: int = 64
    processes: int = 256
    output_chars: int = 20_000
    folder_bytes: int = 64 * 1024**2

    @property
    def wall(self) -> float:
        """The hang guard of one request, in seconds (see ``wall_timeout``)."""
        return self.wall_timeout if self.wall_timeout is not None else 3 * self.timeout + 5

    @property
    def total(self) -> float:
        """The CPU seconds of a whole submission (see ``total_timeout``)."""
        return self.total_timeout if self.total_timeout is not None else 10 * self.timeout


class WorkerError(Exception):
    """The worker did not answer properly; ``reason`` is what the student is told.

    ``limit`` says which time limit stopped it: ``"cpu"`` (the CPU time the request was
    given), ``"wall"`` (the hang guard), or None for anything else (a crash, an exit, the
    memory limit, a broken reply).
    """

    def __init__(self, reason: str, limit: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.limit = limit


class Worker:
    """One worker for one submission; restartable after a crash or a timeout.

    Parameters
    ----------
    source : str
        The submission's code.
    name : str
        Its name, used as the file name ``<name>.py`` inside the sandbox.
    mode : {"strong", "user", "default"}
        See the module docstring.
    limits : Limits
        Resource limits and the per-check timeout.
    block_processes : bool
        Whether the audit hook refuses process creation. The tests turn it off to prove that
        the kernel and the watchdog alone clean up forked and detached processes.
    audit_hook : bool
        Whether to install the audit hook at all. The tests turn it off to prove what the
        kernel modes enforce alone.
    cells : sequence of Cell
        A notebook's code cells (run one after another); empty for a ``.py`` file.
    private_ipc : bool
        Whether the root fallback and default mode give the worker an IPC namespace of its
        own where the kernel allows it (strong mode always has one). The tests turn it off
        to prove that the grader counts and removes what a worker user makes in the
        machine's namespace, as where the kernel refuses one.

    Raises
    ------
    OSError
        If the worker's folders cannot be made (a full disk); nothing is left behind.
    accounts.Unavailable
        If the mode needs a worker user and none can be had.
    """

    def __init__(
        self,
        source: str,
        name: str,
        *,
        mode: str = "default",
        limits: Limits | None = None,
        block_processes: bool = True,
        audit_hook: bool = True,
        cells=(),
        private_ipc: bool = True,
    ):
        self.mode = mode
        self.private_ipc = private_ipc
        self.audit_hook = audit_hook
        self.limits = limits or Limits()
        self.block_processes = block_processes
        self.cells = [
            {"label": c.label, "first_line": c.first_line, "line_count": c.line_count}
            for c in cells
        ]
        self.filename = f"{submissions.safe_name(name)}.py"
        self.process: subprocess.Popen | None = None
        self.token = ""
        self.account: accounts.Account | None = None
        self.box: cgroups.Box | None = None
        self.namespace: str | None = None
        self.tree: runtime.Tree | None = None
        self.notes: list[str] = []
        self.cleanup_error: str | None = None
        #: CPU seconds the last request (a load or a call) used, whatever its outcome.
        self.request_cpu = 0.0
        self._next_id = 0
        self._oom_seen = 0
        self._niced: set[int] = set()
        self._measured = (0.0, 0)  # (when the memory measure may run again, its last value)
        as_user = self.mode == "user" or (
            self.mode == "strong" and os.geteuid() == 0 and bwrap_as_user_problem() is None
        )
        # A worker user must reach its folders by their path (bubblewrap's bind mounts).
        folder = runtime.worker_folder() if as_user else tempfile.mkdtemp(prefix="rlfound-grade-")
        self.root = Path(folder).resolve()
        self.output_path = self.root / "output"
        self.work = self.root / "work"
        try:
            if as_user:
                self.account = accounts.acquire()
                self.tree = runtime.tree()
            self._prepare(source)
        except BaseException:
            self.close()
            raise

    def _prepare(self, source: str) -> None:
        data = source.encode("utf-8", "backslashreplace")
        if self.mode == "user":
            self.work = self.tree.work / secrets.token_hex(12)
            self.work.mkdir(mode=0o700)
            os.chown(self.work, self.account.uid, self.account.gid)
        else:
            self.runtime = self.root / "runtime"
            (self.runtime / "site").mkdir(parents=True)
            self.work.mkdir()
            shutil.copy(INSIDE / "worker.py", self.runtime / "worker.py")
            shutil.copy(INSIDE / "protocol.py", self.runtime / "protocol.py")
            if self.mode == "default":
                for directory in runtime.numpy_dirs():
                    (self.runtime / "site" / directory.name).symlink_to(directory)
            if self.account is not None:  # bubblewrap, run as the worker user, binds these
                os.chmod(self.root, 0o711)
                for folder in (self.runtime, self.runtime / "site", self.work):
                    os.chmod(folder, 0o755)
                for name in ("worker.py", "protocol.py"):
                    os.chmod(self.runtime / name, 0o644)
        path = self.work / self.filename
        with open(path, "xb") as handle:
            handle.write(data)
        os.chmod(path, 0o644)
        with open(self.output_path, "xb"):
            pass
        os.chmod(self.output_path, 0o600)

    # ------------------------------------------------------------------ life cycle

    def _inside(self) -> tuple[str, str, str]:
        """The runtime, site and working folders as the worker sees them."""
        if self.mode == "strong":
            return f"{runtime.OPT}/runtime", f"{runtime.OPT}/site", "/submission"
        if self.mode == "user":
            return f"{runtime.OPT}/runtime", f"{runtime.OPT}/site", f"/work/{self.work.name}"
        return str(self.runtime), str(self.runtime / "site"), str(self.work)

    def _config(self) -> dict:
        limits = {
            "address_space": self.limits.address_space,
            "cpu_seconds": self.limits.cpu_seconds,
            "file_size": self.limits.file_size,
            "open_files": self.limits.open_files,
            "processes": self.limits.processes,
        }
        runtime_dir, site, work = self._inside()
        numpy = [] if self.mode != "default" else [str(d) for d in runtime.numpy_dirs()]
        read_roots = [
            *stdlib_dirs(),
            *numpy,
            runtime_dir,
            site,
            work,
            "/dev/null",
            "/dev/urandom",
            "/sys/devices/system/cpu",
        ]
        return {
            "output_chars": self.limits.output_chars,
            "limits": limits,
            "sys_path": [site],
            "workdir": work,
            "submission": f"{work}/{self.filename}",
            "audit": self.audit_hook,
            "read_roots": read_roots,
            "write_roots": [work],
            "block_processes": self.block_processes,
            "cells": self.cells,
        }

    def _environment(self) -> dict:
        return {**base_environment(self._inside()[2]), TOKEN_VARIABLE: self.token}

    def _command(self) -> list[str]:
        python = str(runtime.interpreter())
        config = json.dumps(self._config())
        if self.mode == "default":
            command = [python, "-I", "-S", str(self.runtime / "worker.py"), config]
            if not self.private_ipc or private_ipc_problem() is not None:
                return command
            launch = {"ipc": True, "argv": command}
            return [python, "-I", "-S", str(INSIDE / "launcher.py"), json.dumps(launch)]
        if self.mode == "user":
            launch = {
                "root": str(self.tree.root),
                "uid": self.account.uid,
                "gid": self.account.gid,
                "ipc": self.private_ipc,
                "cwd": self._inside()[2],
                "argv": [
                    self.tree.interpreter,
                    "-I",
                    "-S",
                    f"{runtime.OPT}/runtime/worker.py",
                    config,
                ],
            }
            return [python, "-I", "-S", str(INSIDE / "launcher.py"), json.dumps(launch)]
        command = bwrap_prefix()
        for key, value in self._environment().items():
            command += ["--setenv", key, value]
        command = system_binds(command)
        command += interpreter_binds(self.tree)
        command += ["--ro-bind", str(self.runtime), f"{runtime.OPT}/runtime"]
        command += ["--proc", "/proc", "--dev", "/dev"]
        # The only writable place: a small private tmpfs holding a read-only submission copy.
        command += ["--size", str(self.limits.folder_bytes), "--tmpfs", "/submission"]
        command += ["--ro-bind", str(self.work / self.filename), f"/submission/{self.filename}"]
        command += ["--chdir", "/submission"]
        # bubblewrap builds the sandbox on a writable tmpfs; freeze it and its /dev.
        command += ["--remount-ro", "/dev", "--remount-ro", "/"]
        command += [python, "-I", "-S", f"{runtime.OPT}/runtime/worker.py", config]
        return command

    def start(self) -> None:
        """Start a fresh worker and wait until it has imported NumPy.

        Raises
        ------
        WorkerError
            If the worker cannot start or does not report ready.
        stopping.Stopped
            If the grader is stopping (a signal): no new worker starts.
        """
        self.kill()  # a previous worker, if any, is gone before the next one starts
        stopping.check()
        self.token = secrets.token_hex(16)
        if self.box is None:
            self.box = cgroups.create(self.limits.memory, self.limits.processes)
        as_user = {}
        if self.mode == "strong" and self.account is not None:
            as_user = {"user": self.account.uid, "group": self.account.gid, "extra_groups": []}
        try:
            # The output file is the worker's stderr: outside the folders the submission can
            # write, so it cannot be swapped for a link to a file the parent would then read.
            with open(self.output_path, "ab") as log:
                self.process = subprocess.Popen(
                    self._command(),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    cwd=self.root if self.mode != "default" else self.work,
                    env=self._environment(),
                    start_new_session=True,
                    close_fds=True,
                    **as_user,
                )
        except OSError as error:
            raise WorkerError(f"the grader could not start a worker: {error}") from None
        os.set_blocking(self.process.stdin.fileno(), False)
        try:
            self._receive(time.monotonic() + STARTUP_SECONDS, poll=stopping.check)
        except WorkerError:
            self.kill()
            detail = self.output(limit=2000).strip().splitlines()[-3:]
            raise WorkerError(
                "the grader's worker failed to start (before any student code ran): "
                + " | ".join(detail)
            ) from None
        # Every process of the worker goes into its control groups before student code runs.
        pids = tree_of(self.process.pid)
        if self.box is not None:
            self.box.add(pids)
            self._oom_seen = self.box.oom_kills()
        if self.mode == "strong":
            ours = namespace_of(os.getpid())
            self.namespace = next(
                (ns for ns in map(namespace_of, sorted(pids)) if ns and ns != ours), None
            )

    def load(self, *, cpu: float | None = None) -> str | None:
        """Run the submission's module code (a notebook's cells one after another); return
        None, or the error it raised. A notebook's cells that raised are in ``notes``.

        ``cpu`` is the CPU time it may use (default: the per-check ``timeout``).

        Raises
        ------
        WorkerError
            If the worker died, hung or broke the protocol while importing.
        """
        reply = self._request({"op": "load"}, "importing the submission", cpu=cpu)
        notes = reply.get("notes")
        if type(notes) is list:
            self.notes = [text.clean(n, text.NOTE_CHARS) for n in notes[: text.MAX_NOTES]]
        if reply.get("ok") is True:
            return None
        error = reply.get("error")
        return error if type(error) is str else "the submission could not be imported"

    def call(self, calls: list[tuple[str, list]], *, cpu: float | None = None) -> list[dict]:
        """Call submission functions; one reply item (``ok``/``value`` or ``error``) per call.

        ``cpu`` is the CPU time the request may use (default: the per-check ``timeout``);
        afterward ``request_cpu`` says what it used.

        Raises
        ------
        WorkerError
            If the worker died, hung, or replied with anything off-schema.
        """
        request = {
            "op": "call",
            "calls": [
                {"function": name, "args": protocol.encode_value(list(args))}
                for name, args in calls
            ],
        }
        reply = self._request(request, "running this check", cpu=cpu)
        results = reply.get("results")
        if type(results) is not list or len(results) != len(calls):
            self.kill()
            raise WorkerError("the worker's reply did not match the request")
        return results

    # ------------------------------------------------------------------ the watchdog

    def _processes(self) -> set[int]:
        """The submission's processes, by what they cannot shed (group, user), and its tree."""
        found = set()
        if self.box is not None:
            found |= self.box.pids()
        if self.account is not None and self.mode == "user":
            # In strong mode the namespace's processes are all below bubblewrap (its init
            # adopts orphans), so the tree is enough; here an orphan goes to the machine's init.
            found |= set(accounts.processes_of(self.account.uid))
        if self.process is not None:
            found |= tree_of(self.process.pid)
        return found

    def _cpu_seconds(self) -> float:
        """CPU time of the submission's processes (exact with a control group; otherwise of
        the processes alive and the children they waited for)."""
        if self.box is not None:
            used = self.box.cpu_seconds()
            if used is not None:
                return used
        total = 0.0
        for pid in self._processes():
            with contextlib.suppress(psutil.Error):
                times = psutil.Process(pid).cpu_times()
                total += times.user + times.system + times.children_user + times.children_system
        return total

    def _memory_bytes(self) -> int:
        """Memory the submission holds (:func:`~rlfound.grading.sandbox.ipc.memory_of`).

        Its cost grows with the processes and their memory, so it runs again only after
        ``1 / _MEASURE_SHARE - 1`` times as long as it took, and reports its last value
        in between.
        """
        start = time.monotonic()
        ready, last = self._measured
        if start < ready:
            return last
        uid = self.account.uid if self.account is not None else None
        total = ipc.memory_of(self._processes(), uid)
        took = time.monotonic() - start
        self._measured = (start + took / _MEASURE_SHARE, total)
        return total

    def _watch(self, what: str, cpu: float, wall: float) -> watchdog.Watch:
        """The watchdog of one request (a memory limit of its own only without a control
        group's, and a lower priority for a greedy submission only without a CPU controller)."""
        fair = self.box is not None and "cpu" in self.box.controllers
        measured = self.box is not None and "memory" in self.box.controllers
        self._measured = (0.0, 0)  # one taken for an earlier request (a worker since killed)
        return watchdog.Watch(
            what,
            cpu,
            wall,
            memory=None if measured else self.limits.memory,
            processes=self._processes,
            cpu_seconds=self._cpu_seconds,
            memory_bytes=self._memory_bytes,
            alive=lambda: self.process is not None and self.process.poll() is None,
            renice=None
            if fair
            else lambda: watchdog.lower_priority(self._processes(), self._niced),
        )

    def _request(self, message: dict, what: str, *, cpu: float | None = None) -> dict:
        self.request_cpu = 0.0
        if self.process is None or self.process.poll() is not None:
            raise WorkerError("the worker is not running")
        self._next_id += 1
        message = {**message, "id": self._next_id}
        cpu = self.limits.timeout if cpu is None else cpu
        wall = self.limits.wall
        watch = self._watch(what, cpu, wall)
        # The hang guard is kept by ``poll``; the deadline is the backstop of the backstop.
        # Writing the request has no poll: a worker that does not read it within ``wall`` hangs.
        hard = HARD_WALL_FACTOR * wall
        deadline = time.monotonic() + hard
        try:
            protocol.write_frame(self.process.stdin.fileno(), message, time.monotonic() + wall)
            while True:
                reply = self._receive(deadline, what, hard, watch.poll)
                number = reply.get("id")
                # A stale reply (to an earlier request) can only be left over from a frame the
                # submission wrote itself; skip it. Anything else out of order ends the worker.
                if type(number) is int and number < self._next_id:
                    continue
                if number != self._next_id:
                    self.kill()
                    raise WorkerError("the worker's reply did not match the request")
                return reply
        except protocol.Timeout:  # writing the request (reading it times out in _receive)
            self.kill()
            raise WorkerError(
                f"timed out after {wall:g} s (wall clock) while {what}", "wall"
            ) from None
        except watchdog.Expired as expired:
            self.kill()
            raise WorkerError(str(expired), expired.limit) from None
        except protocol.Closed:
            raise self._died(what) from None
        finally:
            self.request_cpu = watch.used()

    def _receive(self, deadline: float, what: str = "starting", timeout: float = 0.0, poll=None):
        try:
            reply = protocol.read_frame(self.process.stdout.fileno(), deadline, poll)
        except protocol.Timeout:
            self.kill()
            raise WorkerError(
                f"timed out after {timeout:g} s (wall clock) while {what}", "wall"
            ) from None
        except protocol.Closed:
            raise self._died(what) from None
        except protocol.ProtocolError as error:
            self.kill()
            raise WorkerError(f"the worker sent a malformed reply ({error})") from None
        if type(reply) is not dict:
            self.kill()
            raise WorkerError("the worker sent a malformed reply (not an object)")
        return reply

    def _died(self, what: str) -> WorkerError:
        code = None
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = self.process.wait(timeout=5)
        out_of_memory = self.box is not None and self.box.oom_kills() > self._oom_seen
        self.kill()
        if self.mode == "strong" and code is not None and code > 128:
            code = 128 - code  # bubblewrap reports a child killed by signal N as 128 + N
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            how = f"was killed by {name}"
            if -code == signal.SIGXCPU:
                how += " (CPU time limit)"
        elif code is not None:
            how = f"exited with status {code}"
        else:
            how = "closed its pipe"
        if out_of_memory:
            how += (
                f" (out of memory: the submission's processes may use "
                f"{self.limits.memory // 2**20} MiB together)"
            )
        return WorkerError(f"the process {how} while {what}")

    # ------------------------------------------------------------------ cleanup

    def leftovers(self) -> list[int]:
        """Processes of this worker still alive (none once :meth:`kill` returned)."""
        found = set()
        if self.box is not None:
            found |= self.box.pids()
        if self.account is not None:
            found |= set(accounts.processes_of(self.account.uid))
        if self.namespace is not None:
            found |= set(in_namespace(self.namespace))
        return sorted(found)

    def kill(self) -> None:
        """Kill the worker and every process of the submission: by its control group, its
        user, its PID namespace, its process tree and (default mode) its token; then check
        that none is left."""
        process = self.process
        if process is None:
            return
        descendants = tree_of(process.pid) - {process.pid}
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        for pid in descendants:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            process.kill()
        if self.account is not None:
            if not accounts.kill_all(self.account.uid):
                self.cleanup_error = f"processes of {self.account.name} could not be killed"
            # What the worker made in the machine's IPC namespace dies with it, as it does
            # in a namespace of its own, so a restarted worker does not inherit it.
            ipc.remove_owned(self.account.uid)
        if self.box is not None and not self.box.kill():
            self.cleanup_error = "processes in the submission's control group could not be killed"
        process.wait()
        for stream in (process.stdin, process.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        if self.mode == "default":
            sweep(self.token)
        if self.namespace is not None:
            deadline = time.monotonic() + 10
            while in_namespace(self.namespace):
                if time.monotonic() > deadline:
                    self.cleanup_error = "processes in the submission's namespace are alive"
                    break
                for pid in in_namespace(self.namespace):
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
                time.sleep(0.01)
        self.process = None

    def output(self, limit: int = text.OUTPUT_CHARS) -> str:
        """The first ``limit`` characters the submission printed (inert; never parsed)."""
        try:
            data = files.read_regular(self.output_path, limit * 4)
        except OSError:
            return ""
        return text.clean(data.decode("utf-8", "replace"), limit)

    def close(self) -> None:
        """Ask the worker to exit, kill whatever is left, and delete the temporary folders.

        A problem is kept in ``cleanup_error`` (the grade stands; the instructor is told).
        """
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(protocol.Timeout, protocol.Closed, OSError):
                protocol.write_frame(
                    self.process.stdin.fileno(), {"op": "exit"}, time.monotonic() + 1
                )
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=1)
        self.kill()
        for folder in {self.root, self.work}:
            try:
                files.remove_tree(folder)
            except OSError as error:
                self.cleanup_error = f"the temporary folder {folder} could not be removed: {error}"
        if self.box is not None:
            self.box.remove()
            self.box = None
        if self.account is not None:
            problem = self.account.release()
            if problem is not None:
                self.cleanup_error = problem
            self.account = None

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
