"""The private root a worker runs in when the grader is root and bubblewrap cannot run.

The worker user of the root fallback (:mod:`rlfound.grading.sandbox.accounts`) must be able to run
Python and NumPy, and nothing else of the machine should be visible to it: not the reference
solutions, not the grader's code folder (on Gradescope it holds the grading seed), not the
submissions folder (another student's code), not the results. Rather than changing the
permissions of the instructor's files, the grader builds, once per run, a folder holding only
what a worker needs, each file at the path it has on the machine, and the worker changes its
root to it (``chroot``, :mod:`rlfound.grading.sandbox.inside.launcher`) before it drops root:

* the interpreter and every shared library it and NumPy load (found by starting the
  interpreter once, importing NumPy and every extension module of the standard library, and
  reading its memory map), with the links the dynamic loader follows to them;
* the standard library (without its tests, ``site-packages`` and the tools that need a
  display);
* NumPy, and the worker's two scripts, in ``/opt/rlfound``;
* ``/work``, where each worker gets an empty folder of its own that only its user can enter.

Files are hard links to the machine's (instant, no copy) where the file system allows it, and
copies otherwise; a file anyone may write, or a set-user-id one, is always copied, without
those bits. Folders are root's and read-only to the worker. There is no ``/proc``, no
``/dev``, no ``/tmp``, no ``/home``. The folder is removed when the grader exits.

Strong mode uses the same folder as the source of its bind mounts when the grader is root and
runs bubblewrap as the worker user (who cannot read an interpreter kept under ``/root``).
Since bubblewrap, run as that user, must reach the sources of its bind mounts by their path,
the folder (and each such worker's own folder, :func:`worker_folder`) is made in a
temporary folder every user may pass through (``/tmp`` when ``TMPDIR`` is private), never
listable by them (mode 0711).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from rlfound.grading.intake import files

__all__ = [
    "OPT",
    "Tree",
    "base",
    "build",
    "interpreter",
    "numpy_dirs",
    "remove_base",
    "tree",
    "worker_folder",
]

_INSIDE = Path(__file__).resolve().parent / "inside"
#: Where the worker's scripts and NumPy are, inside the private root and inside bubblewrap.
OPT = "/opt/rlfound"
#: Parts of the standard library a worker never needs (and the largest ones).
_SKIP = {
    "site-packages",
    "dist-packages",
    "test",
    "tests",
    "idlelib",
    "tkinter",
    "turtledemo",
    "ensurepip",
    "lib2to3",
    "__phello__",
}
#: Extension modules not loaded by the probe (a display, a terminal, test helpers).
_PROBE_SKIP = ("_tkinter", "readline", "_curses", "_curses_panel", "_gdbm", "_dbm", "_test")
_PROBE = r"""
import json, os, sys
sys.path.append(sys.argv[1])
import numpy, numpy.linalg, numpy.fft, numpy.random
skip = tuple(json.loads(sys.argv[2]))
for folder in list(sys.path[:-1]):
    if os.path.isdir(folder) and folder.endswith("lib-dynload"):
        for name in sorted(os.listdir(folder)):
            module = name.split(".")[0]
            if module.startswith(skip) or module.startswith("xx"):
                continue
            try:
                __import__(module)
            except Exception:
                pass
mapped = set()
with open("/proc/self/maps") as handle:
    for line in handle:
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[5].startswith("/"):
            mapped.add(fields[5].rstrip("\n"))
print(json.dumps({"maps": sorted(mapped), "path": sys.path[:-1]}))
"""


@dataclasses.dataclass(frozen=True)
class Tree:
    """The private root: its folder on the machine, and paths as a worker sees them."""

    root: Path
    interpreter: str
    stdlib: tuple[str, ...]
    prefix: str

    @property
    def work(self) -> Path:
        """Folder (on the machine) holding one folder per worker."""
        return self.root / "work"

    def outside(self, inside: str) -> Path:
        """The machine's path of a path inside the private root."""
        return self.root / inside.lstrip("/")


def numpy_dirs() -> list[Path]:
    """The installed NumPy package and its bundled libraries (``numpy.libs``), resolved."""
    import numpy

    package = Path(numpy.__file__).resolve().parent
    return [p for p in (package, package.parent / "numpy.libs") if p.is_dir()]


def interpreter() -> Path:
    """The real interpreter binary (a virtual environment's ``python`` is only a link)."""
    return Path(sys.executable).resolve()


def _directory(path: Path) -> None:
    """``path`` and its parents, as root's folders readable by everyone."""
    missing = []
    while not path.exists() and not path.is_symlink():
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o755)
        os.chmod(folder, 0o755)


def _place(source: Path, target: Path) -> None:
    """``source`` at ``target``: a hard link where safe, else a copy without special bits."""
    if target.exists() or target.is_symlink():
        return
    _directory(target.parent)
    info = os.stat(source)
    risky = info.st_mode & (stat.S_ISUID | stat.S_ISGID | stat.S_IWOTH | stat.S_IWGRP)
    if not risky:
        with contextlib.suppress(OSError):
            os.link(source, target)
            return
    shutil.copyfile(source, target)
    os.chmod(target, stat.S_IMODE(info.st_mode) & 0o755 | 0o444)


def _place_tree(source: Path, target: Path) -> None:
    """A folder (standard library, NumPy) at ``target``, links kept as links."""
    for folder, subfolders, names in os.walk(source, followlinks=False):
        subfolders[:] = [s for s in subfolders if s not in _SKIP and not s.startswith("config-")]
        relative = Path(folder).relative_to(source)
        _directory(target / relative)
        for name in names + [s for s in list(subfolders) if os.path.islink(Path(folder) / s)]:
            path = Path(folder) / name
            destination = target / relative / name
            if path.is_symlink():
                if not destination.is_symlink():
                    os.symlink(os.readlink(path), destination)
            elif path.is_file():
                _place(path, destination)
        subfolders[:] = [s for s in subfolders if not os.path.islink(Path(folder) / s)]


def _elf_interpreter(path: Path) -> str | None:
    """The dynamic loader an ELF executable names (``PT_INTERP``), or None."""
    with open(path, "rb") as handle:
        data = handle.read(1 << 16)
    if data[:4] != b"\x7fELF":
        return None
    wide, order = data[4] == 2, "<" if data[5] == 1 else ">"
    if wide:
        (phoff,) = struct.unpack_from(order + "Q", data, 0x20)
        size, count = struct.unpack_from(order + "HH", data, 0x36)
    else:
        (phoff,) = struct.unpack_from(order + "I", data, 0x1C)
        size, count = struct.unpack_from(order + "HH", data, 0x2A)
    for index in range(count):
        at = phoff + index * size
        (kind,) = struct.unpack_from(order + "I", data, at)
        if kind != 3:  # PT_INTERP
            continue
        if wide:
            offset, length = (
                struct.unpack_from(order + "Q", data, at + 8)[0],
                struct.unpack_from(order + "Q", data, at + 32)[0],
            )
        else:
            offset, length = (
                struct.unpack_from(order + "I", data, at + 4)[0],
                struct.unpack_from(order + "I", data, at + 16)[0],
            )
        return data[offset : offset + length].rstrip(b"\0").decode()
    return None


def _place_chain(root: Path, path: str, depth: int = 0) -> None:
    """A path as the machine resolves it, every link on the way recreated inside ``root``."""
    if depth > 20:
        return
    parts = Path(path).parts[1:]
    current = Path("/")
    for index, part in enumerate(parts):
        step = current / part
        if step.is_symlink():
            link = root / str(step).lstrip("/")
            target = os.readlink(step)
            _directory(link.parent)
            if not link.is_symlink() and not link.exists():
                os.symlink(target, link)
            resolved = os.path.normpath(os.path.join(current, target))
            _place_chain(root, os.path.join(resolved, *parts[index + 1 :]), depth + 1)
            return
        current = step
    if current.is_file():
        _place(current, root / str(current).lstrip("/"))


def _probe(python: Path, site: Path) -> dict:
    completed = subprocess.run(
        [str(python), "-I", "-S", "-c", _PROBE, str(site), json.dumps(list(_PROBE_SKIP))],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1"},
    )
    if completed.returncode != 0:
        raise OSError(f"the interpreter could not be probed: {completed.stderr.strip()[-500:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def build(folder: Path) -> Tree:
    """Build the private root in ``folder`` (see the module docstring)."""
    python = interpreter()
    numpy = numpy_dirs()
    found = _probe(python, numpy[0].parent)
    root = folder / "tree"
    _directory(root)
    os.chmod(root, 0o755)
    # The links at the top of the machine's tree (/lib -> usr/lib on merged-/usr systems).
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            os.symlink(os.readlink(top), root / top.lstrip("/"))
    stdlib = []
    for entry in found["path"]:
        path = Path(entry)
        if path.is_dir():
            _place_tree(path, root / str(path).lstrip("/"))
            stdlib.append(str(path))
    # Every shared object the interpreter, NumPy and the standard library's extensions load,
    # and the links by which the loader finds them.
    skip = [str(d) for d in (*numpy, *map(Path, stdlib))]
    mapped = [
        Path(p)
        for p in found["maps"]
        if not any(p == s or p.startswith(s + os.sep) for s in skip) and os.path.isfile(p)
    ]
    for path in mapped:
        _place(path, root / str(path).lstrip("/"))
    real = {str(path) for path in mapped}
    for directory in sorted({path.parent for path in mapped}):
        with contextlib.suppress(OSError), os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_symlink() and os.path.realpath(entry.path) in real:
                    _place_chain(root, entry.path)
    _place_chain(root, str(python))
    loader = _elf_interpreter(python)
    if loader:
        _place_chain(root, loader)
    if os.path.isfile("/etc/ld.so.cache"):
        _place(Path("/etc/ld.so.cache"), root / "etc" / "ld.so.cache")
    for directory in numpy:
        _place_tree(directory, root / OPT.lstrip("/") / "site" / directory.name)
    runtime = root / OPT.lstrip("/") / "runtime"
    _directory(runtime)
    for name in ("worker.py", "protocol.py"):
        shutil.copyfile(_INSIDE / name, runtime / name)
        os.chmod(runtime / name, 0o644)
    (root / "work").mkdir(mode=0o711)
    os.chmod(root / "work", 0o711)
    return Tree(root, str(python), tuple(stdlib), str(Path(sys.base_prefix).resolve()))


_lock = threading.Lock()
_built: dict[str, object] = {}


def _open_to_all(folder: Path) -> bool:
    """Whether every user may pass through ``folder`` and each folder above it."""
    try:
        return all(os.stat(p).st_mode & stat.S_IXOTH for p in (folder, *folder.parents))
    except OSError:
        return False


def base() -> Path:
    """This grader process's folder for what worker users must reach (made once, mode 0711,
    removed at exit)."""
    with _lock:
        if "base" not in _built:
            candidates = [Path(tempfile.gettempdir()), Path("/tmp"), Path("/var/tmp")]
            parent = next((c for c in candidates if _open_to_all(c)), candidates[0])
            folder = Path(tempfile.mkdtemp(prefix=f"rlfound-{os.getpid()}-", dir=parent))
            os.chmod(folder, 0o711)
            atexit.register(_remove, folder)
            _built["base"] = folder
        return _built["base"]


def worker_folder() -> Path:
    """A new private folder (0700, root's) in :func:`base`, for one worker's files."""
    return Path(tempfile.mkdtemp(prefix="rlfound-grade-", dir=base()))


def tree() -> Tree:
    """The private root of this grader process, built the first time it is needed.

    Raises
    ------
    OSError
        If it cannot be built (the message says why).
    """
    folder = base()
    with _lock:
        if "tree" not in _built:
            try:
                _built["tree"] = build(folder)
            except Exception as error:
                _built["tree"] = OSError(f"the private root could not be built: {error}")
        built = _built["tree"]
    if isinstance(built, Exception):
        raise built
    return built


def remove_base() -> None:
    """Remove this process's folder of :func:`base` (the private root with it) now, as at exit;
    a worker started later gets a new one.

    For a grader stopped by a signal (:mod:`rlfound.grading.sandbox.stopping`), once its
    workers are closed: then a second signal is still ignored, which at exit it no longer is.
    """
    with _lock:
        folder = _built.pop("base", None)
        _built.pop("tree", None)
    if folder is not None:
        _remove(folder)


def _remove(folder: Path) -> None:
    with contextlib.suppress(OSError):
        files.remove_tree(folder)
