"""Start, watch and clean up the worker processes that run student code.

The parent never imports a submission. For each submission it makes a private temporary
folder::

    rlfound-grade-XXXX/
        runtime/        worker.py, protocol.py, site/numpy -> the installed NumPy (read-only)
        work/           <name>.py, the submission's code (default mode's working folder)
        output          what the submission printed (stdout and stderr, capped)

and runs ``python -I -S runtime/worker.py CONFIG`` with a scrubbed environment, ``work/`` as
its working folder and a new session (so the worker and anything it forks share one process
group that the parent can kill). Two modes:

``default``
    The worker lowers its own resource limits and installs an audit hook before the student's
    code exists; the parent keeps a wall-clock watchdog per request, kills the process group
    when it expires and sweeps leftover processes (any process carrying this worker's random
    token in its environment, or descended from the worker). This contains accidents and
    ordinary mischief; it is *not* a security boundary against native code (a C extension
    or a crafted ``ctypes`` call can undo the audit hook and read anything this user can).

``strong``
    The same worker inside bubblewrap (``bwrap``): no network, a read-only view of the
    interpreter and NumPy only (no ``/home``, no ``/root`` beyond the interpreter, no course
    folder, no reference solutions), its own PID namespace (a process that detaches itself
    still dies with the sandbox), all capabilities dropped, a read-only root and ``/dev``,
    and only ``/submission``, a small private tmpfs, writable.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from rlfound.grading import protocol

#: Environment variable that marks every process a worker starts (for the sweep).
TOKEN_VARIABLE = "RLFOUND_WORKER_TOKEN"
#: How long a worker may take to start Python and import NumPy.
STARTUP_SECONDS = 60.0
_HERE = Path(__file__).resolve().parent
_SANDBOX_ROOT = "/opt/rlfound"


@dataclasses.dataclass(frozen=True)
class Limits:
    """Resource limits of one worker.

    Attributes
    ----------
    timeout : float
        Wall-clock seconds for one check (all its calls) and for importing the submission.
    address_space : int
        Bytes of virtual memory (``RLIMIT_AS``).
    cpu_seconds : int
        CPU seconds for the worker's whole life (``RLIMIT_CPU``), a backstop for processes that
        escape the watchdog.
    file_size : int
        Largest file the worker may write (``RLIMIT_FSIZE``), which also caps its output file.
    open_files : int
        Open file descriptors (``RLIMIT_NOFILE``).
    processes : int
        Processes of the user (``RLIMIT_NPROC``; the kernel does not enforce it for root).
    output_chars : int
        Characters of the submission's stdout and stderr kept (each); the rest is dropped.
    folder_bytes : int
        Size of the writable folder in strong mode (a private tmpfs).
    """

    timeout: float = 10.0
    address_space: int = 2 * 1024**3
    cpu_seconds: int = 600
    file_size: int = 8 * 1024**2
    open_files: int = 64
    processes: int = 256
    output_chars: int = 20_000
    folder_bytes: int = 64 * 1024**2


class WorkerError(Exception):
    """The worker did not answer properly; ``reason`` is what the student is told."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@functools.cache
def bwrap_works() -> bool:
    """Whether ``bwrap`` is installed and can create the namespaces strong mode needs."""
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


def resolve_mode(mode: str) -> str:
    """Map ``auto`` to ``strong`` when bubblewrap works here, else ``default``.

    Raises
    ------
    ValueError
        If ``mode`` is unknown, or ``strong`` is asked for and bubblewrap does not work.
    """
    if mode == "auto":
        return "strong" if bwrap_works() else "default"
    if mode == "strong" and not bwrap_works():
        raise ValueError("mode 'strong' needs bubblewrap (bwrap), which is missing or not working")
    if mode not in ("default", "strong"):
        raise ValueError(f"mode must be 'auto', 'default' or 'strong'; got {mode!r}")
    return mode


def _numpy_dirs() -> list[Path]:
    """The installed NumPy package and its bundled libraries (``numpy.libs``), resolved."""
    import numpy

    package = Path(numpy.__file__).resolve().parent
    return [p for p in (package, package.parent / "numpy.libs") if p.is_dir()]


def _stdlib_dirs() -> list[str]:
    """The folders ``python -I -S`` puts on ``sys.path``: the standard library only."""
    prefix = Path(sys.base_prefix).resolve()
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return [
        str(prefix / "lib" / version),
        str(prefix / "lib" / f"python3{sys.version_info.minor}.zip"),
    ]


def _interpreter() -> Path:
    """The real interpreter binary (a virtual environment's ``python`` is only a link)."""
    return Path(sys.executable).resolve()


class Worker:
    """One worker process for one submission; restartable after a crash or a timeout.

    Parameters
    ----------
    source : str
        The submission's code.
    name : str
        Its name, used as the file name ``<name>.py`` inside the sandbox.
    mode : {"default", "strong"}
        See the module docstring.
    limits : Limits
        Resource limits and the per-check timeout.
    block_processes : bool
        Whether the audit hook refuses process creation. The tests turn it off to prove that
        the watchdog and the sweep alone clean up forked and detached processes.
    audit_hook : bool
        Whether to install the audit hook at all. The tests turn it off to prove what strong
        mode enforces through the kernel alone.
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
    ):
        self.mode = mode
        self.audit_hook = audit_hook
        self.limits = limits or Limits()
        self.block_processes = block_processes
        self.root = Path(tempfile.mkdtemp(prefix="rlfound-grade-")).resolve()
        self.runtime = self.root / "runtime"
        self.work = self.root / "work"
        (self.runtime / "site").mkdir(parents=True)
        self.work.mkdir()
        shutil.copy(_HERE / "worker.py", self.runtime / "worker.py")
        shutil.copy(_HERE / "protocol.py", self.runtime / "protocol.py")
        if mode == "default":
            for directory in _numpy_dirs():
                (self.runtime / "site" / directory.name).symlink_to(directory)
        self.filename = f"{name}.py"
        (self.work / self.filename).write_text(source, encoding="utf-8")
        self.output_path = self.root / "output"
        self.process: subprocess.Popen | None = None
        self.token = ""
        self._next_id = 0

    # ------------------------------------------------------------------ life cycle

    def _config(self) -> dict:
        limits = {
            "address_space": self.limits.address_space,
            "cpu_seconds": self.limits.cpu_seconds,
            "file_size": self.limits.file_size,
            "open_files": self.limits.open_files,
            "processes": self.limits.processes,
        }
        if self.mode == "strong":
            runtime, site, work = (
                f"{_SANDBOX_ROOT}/runtime",
                f"{_SANDBOX_ROOT}/site",
                "/submission",
            )
        else:
            runtime, site, work = str(self.runtime), str(self.runtime / "site"), str(self.work)
        read_roots = [
            *_stdlib_dirs(),
            *(str(d) for d in _numpy_dirs()),
            runtime,
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
        }

    def _environment(self) -> dict:
        return {
            "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "HOME": "/submission" if self.mode == "strong" else str(self.work),
            "TMPDIR": "/submission" if self.mode == "strong" else str(self.work),
            # One BLAS thread: faster for small arrays, and fewer threads to account for.
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            TOKEN_VARIABLE: self.token,
        }

    def _command(self) -> list[str]:
        python = str(_interpreter())
        config = json.dumps(self._config())
        if self.mode == "default":
            return [python, "-I", "-S", str(self.runtime / "worker.py"), config]
        command = [
            shutil.which("bwrap") or "bwrap",
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--clearenv",
        ]
        for key, value in self._environment().items():
            command += ["--setenv", key, value]
        for path in ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin"):
            if os.path.lexists(path):
                if os.path.islink(path):
                    command += ["--symlink", os.readlink(path), path]
                else:
                    command += ["--ro-bind", path, path]
        prefix = str(Path(sys.base_prefix).resolve())
        command += ["--ro-bind", prefix, prefix]
        if not python.startswith(prefix + os.sep) and not python.startswith("/usr/"):
            command += ["--ro-bind", python, python]
        for directory in _numpy_dirs():
            command += ["--ro-bind", str(directory), f"{_SANDBOX_ROOT}/site/{directory.name}"]
        command += ["--ro-bind", str(self.runtime), f"{_SANDBOX_ROOT}/runtime"]
        command += ["--proc", "/proc", "--dev", "/dev"]
        # The only writable place: a small private tmpfs holding a read-only submission copy.
        command += ["--size", str(self.limits.folder_bytes), "--tmpfs", "/submission"]
        command += ["--ro-bind", str(self.work / self.filename), f"/submission/{self.filename}"]
        command += ["--chdir", "/submission"]
        # bubblewrap builds the sandbox on a writable tmpfs; freeze it and its /dev.
        command += ["--remount-ro", "/dev", "--remount-ro", "/"]
        command += [python, "-I", "-S", f"{_SANDBOX_ROOT}/runtime/worker.py", config]
        return command

    def start(self) -> None:
        """Start a fresh worker and wait until it has imported NumPy.

        Raises
        ------
        WorkerError
            If the worker cannot start or does not report ready.
        """
        self.kill()  # a previous worker, if any, is gone before the next one starts
        self.token = secrets.token_hex(16)
        try:
            # The output file is the worker's stderr: outside the folders the submission can
            # write, so it cannot be swapped for a link to a file the parent would then read.
            with open(self.output_path, "ab") as log:
                self.process = subprocess.Popen(
                    self._command(),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    cwd=self.work,
                    env=self._environment(),
                    start_new_session=True,
                    close_fds=True,
                )
        except OSError as error:
            raise WorkerError(f"the grader could not start a worker: {error}") from None
        os.set_blocking(self.process.stdin.fileno(), False)
        try:
            self._receive(time.monotonic() + STARTUP_SECONDS)
        except WorkerError:
            self.kill()
            detail = self.output(limit=100_000).strip().splitlines()[-3:]
            raise WorkerError(
                "the grader's worker failed to start (before any student code ran): "
                + " | ".join(detail)
            ) from None

    def load(self) -> str | None:
        """Run the submission's module code; return None, or the error it raised.

        Raises
        ------
        WorkerError
            If the worker died, hung or broke the protocol while importing.
        """
        reply = self._request({"op": "load"}, self.limits.timeout, "importing the submission")
        if reply.get("ok") is True:
            return None
        error = reply.get("error")
        return error if type(error) is str else "the submission could not be imported"

    def call(self, calls: list[tuple[str, list]]) -> list[dict]:
        """Call submission functions; one reply item (``ok``/``value`` or ``error``) per call.

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
        reply = self._request(request, self.limits.timeout, "running this check")
        results = reply.get("results")
        if type(results) is not list or len(results) != len(calls):
            self.kill()
            raise WorkerError("the worker's reply did not match the request")
        return results

    def _request(self, message: dict, timeout: float, what: str) -> dict:
        if self.process is None or self.process.poll() is not None:
            raise WorkerError("the worker is not running")
        self._next_id += 1
        message = {**message, "id": self._next_id}
        deadline = time.monotonic() + timeout
        try:
            protocol.write_frame(self.process.stdin.fileno(), message, deadline)
        except protocol.Timeout:
            self.kill()
            raise WorkerError(f"timed out after {timeout:g} s while {what}") from None
        except protocol.Closed:
            raise self._died(what) from None
        while True:
            reply = self._receive(deadline, what, timeout)
            number = reply.get("id")
            # A stale reply (to an earlier request) can only be left over from a frame the
            # submission wrote itself; skip it. Anything else out of order ends the worker.
            if type(number) is int and number < self._next_id:
                continue
            if number != self._next_id:
                self.kill()
                raise WorkerError("the worker's reply did not match the request")
            return reply

    def _receive(self, deadline: float, what: str = "starting", timeout: float = 0.0) -> dict:
        try:
            reply = protocol.read_frame(self.process.stdout.fileno(), deadline)
        except protocol.Timeout:
            self.kill()
            raise WorkerError(f"timed out after {timeout:g} s while {what}") from None
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
        return WorkerError(f"the process {how} while {what}")

    # ------------------------------------------------------------------ cleanup

    def kill(self) -> None:
        """Kill the worker, its process group and every process that carries its token."""
        process = self.process
        if process is None:
            return
        descendants = []
        with contextlib.suppress(psutil.Error):
            descendants = psutil.Process(process.pid).children(recursive=True)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        for child in descendants:
            with contextlib.suppress(psutil.Error):
                child.kill()
        with contextlib.suppress(OSError):
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        sweep(self.token)
        self.process = None

    def output(self, limit: int = 4000) -> str:
        """The first ``limit`` characters the submission printed (never parsed)."""
        try:
            descriptor = os.open(self.output_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return ""
        with os.fdopen(descriptor, "rb") as handle:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return ""
            data = handle.read(limit * 4)
        return data.decode("utf-8", "replace")[:limit]

    def close(self) -> None:
        """Ask the worker to exit, kill whatever is left, and delete the temporary folder."""
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(protocol.Timeout, protocol.Closed, OSError):
                protocol.write_frame(
                    self.process.stdin.fileno(), {"op": "exit"}, time.monotonic() + 1
                )
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=1)
        self.kill()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def sweep(token: str) -> list[int]:
    """Kill every process whose environment carries ``token``; return their ids.

    A process that forked twice and called ``setsid`` has left the worker's process group and
    its process tree, but it still carries the environment it inherited.
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
