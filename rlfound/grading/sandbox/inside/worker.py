"""The grading worker: the only process that runs a student's code.

This file is not imported by the grader. The parent copies it, with ``protocol.py``, into a
fresh runtime folder and runs it as a script with ``python -I -S``: isolated mode (no
environment variables, no user site, not even the script's own folder on ``sys.path``) and no
``site`` (so no ``.pth`` file, in particular not the one that makes an installed ``rlfound``
importable). The worker then puts on ``sys.path`` only its runtime folder and a folder that
holds NumPy, so a submission that imports ``rlfound`` gets ``ModuleNotFoundError``.

It answers one kind of question, "call function f with these arguments", and replies with
plain numbers and arrays. It never sees a reference solution or an expected value: the parent
alone compares and scores. Whatever the student's code does in this process (monkeypatch the
worker, write to its pipes, forge a reply) can only change what the parent is told the
function returned, which a student could have done by returning that value; the score is
decided elsewhere.

Before the student's code runs the worker

* keeps the protocol pipes on private descriptors and points descriptors 0, 1 and 2 away
  from them (stdin to ``/dev/null``, stdout and stderr to the size-capped output file the
  parent opened), so printing a fake reply reaches only that file;
* lowers its resource limits (address space, CPU time, file size, open files, core dumps,
  processes) from the configuration the parent passes, and asks the kernel to grant it and
  its children no new privileges;
* installs an audit hook (defense in depth, not a security boundary: Python code can reach
  around it, which is why the grader's strong and user modes rely on the kernel) that refuses
  reads outside the allowed folders, writes outside the working folder, process creation,
  signals to other processes, sockets, ``ctypes`` and raising resource limits.

A notebook's code cells (already turned into Python by the grader) are run one after
another, as Jupyter runs them: a cell that raises is reported in a note, and the cells after
it still run. ``get_ipython()`` returns a stand-in whose every method does nothing, so the
magics and shell commands IPython's transformer turned into calls are skipped.
"""

import json
import os
import resource
import signal
import sys
import traceback
import types

if __name__ == "__main__":
    # Isolated mode leaves the script's folder off sys.path; protocol.py sits next to us.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import protocol
else:  # imported as rlfound.grading.sandbox.inside.worker (documentation, doctests)
    from rlfound.grading.sandbox.inside import protocol


def _within(path, roots, sep=os.sep):
    # A plain loop, not any(): the submission may replace builtins after the hook is set.
    for root in roots:
        if path == root or path.startswith(root + sep):
            return True
    return False


def install_audit_hook(read_roots, write_roots, block_processes):
    """Refuse file access outside the allowed folders and, optionally, process creation.

    Every function the hook uses is bound now, as a default argument, so that replacing
    ``os.path.realpath`` or ``os.fsdecode`` later does not change what the hook calls.
    """
    pid = os.getpid()
    read_roots, write_roots = tuple(read_roots), tuple(write_roots)
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    process_events = frozenset(
        {
            "os.fork",
            "os.forkpty",
            "os.posix_spawn",
            "os.exec",
            "os.spawn",
            "os.system",
            "os.startfile",
            "subprocess.Popen",
            "pty.spawn",
        }
    )
    path_write_events = frozenset(
        {
            "os.remove",
            "os.rmdir",
            "os.mkdir",
            "os.rename",
            "os.truncate",
            "os.chmod",
            "os.chown",
            "os.utime",
            "os.symlink",
            "shutil.rmtree",
            "shutil.copyfile",
            "shutil.move",
        }
    )
    always_blocked = frozenset(
        {
            "os.link",  # a hard link would give a readable name inside the working folder
            "resource.setrlimit",  # root may raise its hard limits
            "resource.prlimit",
            "socket.__new__",
            "socket.connect",
            "socket.bind",
            "os.killpg",
        }
    )

    def refuse(event):
        raise PermissionError(f"{event} is not allowed in a graded submission")

    def hook(
        event,
        args,
        realpath=os.path.realpath,
        fsdecode=os.fsdecode,
        allowed=_within,
        int_type=int,
        str_type=str,
        text_types=(str, bytes),
        type_=type,
    ):
        if event == "open":
            path, mode, flags = args
            if path is None or type_(path) is int_type:
                return
            full = realpath(fsdecode(path))
            writing = (
                type_(mode) is str_type
                and ("w" in mode or "a" in mode or "x" in mode or "+" in mode)
            ) or (type_(flags) is int_type and flags & write_flags)
            if writing:
                if not allowed(full, write_roots):
                    refuse(f"writing {full}")
            elif not allowed(full, read_roots):
                refuse(f"reading {full}")
        elif event in always_blocked or event.startswith("ctypes."):
            refuse(event)
        elif event == "os.kill":
            if args[0] != pid:
                refuse(event)
        elif event in path_write_events:
            for path in args[:2]:
                if type_(path) in text_types and not allowed(realpath(fsdecode(path)), write_roots):
                    refuse(f"{event} on {fsdecode(path)}")
        elif block_processes and event in process_events:
            refuse(event)

    sys.addaudithook(hook)


class CappedText:
    """A text stream that keeps the first ``cap`` characters written and drops the rest.

    Dropping instead of raising keeps a chatty but correct submission correct.
    """

    def __init__(self, fd, cap):
        self._fd = fd
        self._left = cap
        self._warned = False

    def write(self, text):
        text = str(text)
        if self._left > 0:
            chunk = text[: self._left]
            self._left -= len(chunk)
            try:
                os.write(self._fd, chunk.encode("utf-8", "replace"))
            except OSError:
                self._left = 0
        elif not self._warned:
            self._warned = True
            try:
                os.write(self._fd, b"\n[output truncated by the grader]\n")
            except OSError:
                pass
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False

    encoding = "utf-8"

    def fileno(self):
        return self._fd

    def writable(self):
        return True

    def readable(self):
        return False

    def seekable(self):
        return False


def set_limits(limits):
    """Lower this process's limits; children inherit them."""
    pairs = {
        "address_space": resource.RLIMIT_AS,
        "cpu_seconds": resource.RLIMIT_CPU,
        "file_size": resource.RLIMIT_FSIZE,
        "open_files": resource.RLIMIT_NOFILE,
        "processes": resource.RLIMIT_NPROC,
    }
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for name, which in pairs.items():
        value = limits.get(name)
        if value is not None:
            resource.setrlimit(which, (value, value))


def describe_error(error, filename, cell=None):
    """One readable error message: the submission's own frames, then the exception.

    Every part is cut short (a frame's function name, the exception's text), so that huge
    identifiers cannot make the message huge; the parent cuts it again, since a submission
    can forge any reply.
    """
    lines = []
    try:
        for frame in traceback.extract_tb(error.__traceback__):
            if frame.filename == filename:
                where = f"line {frame.lineno}, in {str(frame.name)[:80]}"
                lines.append(f"  {filename}, {where}"[:200])
        try:
            text = str(error)
        except BaseException:
            text = "<exception text could not be formatted>"
        name = str(type(error).__name__)[:100]
        lines.append(f"{name}: {text[:1500]}" if text else name)
    except BaseException:
        lines = ["an exception was raised (it could not be formatted)"]
    body = "\n".join(lines[-12:])
    return (f"{cell} raised:\n{body}" if cell else body)[:2000]


def exception_classes(error):
    """The exception's class and every class of its method resolution order, most derived
    first, as ``[module, name]`` pairs of plain strings (``[["builtins", "ValueError"], ...,
    ["builtins", "object"]]``), each part cut short.

    The parent judges an error check by these (the module tells a student's own class named
    ``ValueError`` from the built-in one), never by the exception's text. It caps and checks
    them again, since a submission can forge any reply.
    """
    try:
        return [[str(c.__module__)[:200], str(c.__name__)[:200]] for c in type(error).__mro__[:64]]
    except BaseException:
        return []


class _IPythonStandIn:
    """What ``get_ipython()`` returns in the worker: notebook magics, shell commands and help
    (turned into calls by IPython's transformer in the grader) do nothing."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def _no_new_privileges():
    """Ask the kernel never to grant this process or its children new privileges (set-user-id
    programs run without them). Best effort: Linux only."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    except Exception:
        pass


def run_cells(source, filename, cells, namespace):
    """Run a notebook's cells one after another, as Jupyter does; return one note per cell
    that raised (the cells after it still run)."""
    lines = source.split("\n")
    notes = []
    for cell in cells:
        label, first, count = cell["label"], cell["first_line"], cell["line_count"]
        code = "\n" * (first - 1) + "\n".join(lines[first - 1 : first - 1 + count]) + "\n"
        try:
            exec(compile(code, filename, "exec"), namespace)
        except BaseException as error:  # SystemExit too: Jupyter reports it and goes on
            notes.append(describe_error(error, filename, label))
    return notes


def main():
    config = json.loads(sys.argv[1])
    # Keep the protocol pipes on private descriptors before the student's code exists.
    fd_in, fd_out = os.dup(0), os.dup(1)
    try:
        devnull = os.open(os.devnull, os.O_RDONLY)
    except OSError:  # a private root (the root fallback) has no /dev: read an empty pipe
        devnull, writer = os.pipe()
        os.close(writer)
    os.dup2(devnull, 0)
    os.close(devnull)
    # The parent started us with stderr on the capped output file, which lives outside every
    # folder the submission can write to; stdout joins it.
    os.dup2(2, 1)
    # A write past RLIMIT_FSIZE then fails with EFBIG instead of killing the worker.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    sys.stdout = CappedText(1, config["output_chars"])
    sys.stderr = CappedText(2, config["output_chars"])
    sys.stdin = None
    set_limits(config["limits"])
    _no_new_privileges()
    sys.path[:] = [*sys.path, *config["sys_path"]]
    import numpy  # noqa: F401  (before the audit hook: NumPy loads ctypes and shared objects)

    os.chdir(config["workdir"])
    if config["audit"]:
        read_roots = [*config["read_roots"], f"/proc/{os.getpid()}"]
        install_audit_hook(read_roots, config["write_roots"], config["block_processes"])

    filename = os.path.basename(config["submission"])
    module = None
    protocol.write_frame(fd_out, {"ready": True})
    while True:
        try:
            request = protocol.read_frame(fd_in)
        except protocol.Closed:
            os._exit(0)
        op = request.get("op")
        if op == "exit":
            os._exit(0)
        if op == "load":
            module = types.ModuleType("submission")
            module.__file__ = filename
            module.get_ipython = _IPythonStandIn
            sys.modules["submission"] = module
            try:
                with open(config["submission"], encoding="utf-8") as handle:
                    source = handle.read()
                if config.get("cells"):
                    notes = run_cells(source, filename, config["cells"], module.__dict__)
                    reply = {"id": request["id"], "ok": True, "notes": notes}
                else:
                    exec(compile(source, filename, "exec"), module.__dict__)
                    reply = {"id": request["id"], "ok": True}
            except BaseException as error:  # SystemExit too: the submission, not us, exits
                reply = {"id": request["id"], "ok": False, "error": describe_error(error, filename)}
            try:
                protocol.write_frame(fd_out, reply)
            except protocol.ProtocolError:
                reply = {"id": request["id"], "ok": False, "error": "the error is too large"}
                protocol.write_frame(fd_out, reply)
        elif op == "call":
            results = [call(module, item, filename) for item in request["calls"]]
            try:
                protocol.write_frame(fd_out, {"id": request["id"], "results": results})
            except protocol.ProtocolError:
                too_large = {"ok": False, "error": "the returned values are too large to send"}
                reply = {"id": request["id"], "results": [too_large] * len(results)}
                protocol.write_frame(fd_out, reply)


def call(module, item, filename):
    """Call one function of the submission and encode what it returned."""
    name = item["function"]
    try:
        function = getattr(module, name, None) if module is not None else None
        if not callable(function):
            return {"ok": False, "error": f"the submission defines no function {name}()"}
        args = protocol.decode_value(item["args"])
        value = function(*args)
    except BaseException as error:
        return {
            "ok": False,
            "error": describe_error(error, filename),
            "classes": exception_classes(error),
        }
    try:
        return {"ok": True, "value": protocol.encode_value(value)}
    except TypeError as error:
        return {"ok": False, "error": f"unsupported return value: {error}"}
    except BaseException as error:
        return {"ok": False, "error": describe_error(error, filename)}


if __name__ == "__main__":
    main()
