"""Helpers shared by the grader's tests (imported by name; pytest puts this folder on the path)."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import urllib.request
import zipfile
from pathlib import Path
from unittest import mock

import psutil
import pytest

from rlfound.grading.sandbox import TOKEN_VARIABLE, Worker, bwrap_works

HOSTILE = Path(__file__).resolve().parent / "hostile"
REPO = Path(__file__).resolve().parents[2]

requires_bwrap = pytest.mark.skipif(
    not bwrap_works(),
    reason="strong mode needs bubblewrap (bwrap) with working namespaces; not available here",
)

#: The book's solution of gae-recursion with one bug: the recursion forgets gamma.
BUGGY_GAE = (
    (REPO / "solutions" / "gae_recursion.py")
    .read_text()
    .replace("running = delta + gamma * lam * running", "running = delta + lam * running")
)


def _worker_processes():
    """(pid, environ entries) of every live, non-zombie process that carries a worker token."""
    marker = f"{TOKEN_VARIABLE}=".encode()
    for pid in psutil.pids():
        if pid == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read().split(b"\0")
            process = psutil.Process(pid)
            if process.status() == psutil.STATUS_ZOMBIE:
                continue
            parent = process.ppid()
        except (OSError, psutil.Error):
            continue
        if any(item.startswith(marker) for item in environ):
            yield pid, parent, environ


def leftover_processes(tokens) -> list[int]:
    """Processes still carrying one of ``tokens`` (workers started by this test)."""
    wanted = {f"{TOKEN_VARIABLE}={token}".encode() for token in tokens}
    return [pid for pid, _, environ in _worker_processes() if wanted.intersection(environ)]


def orphaned_worker_processes() -> list[int]:
    """Processes carrying any worker token whose grader is gone (reparented or parentless).

    For a grader run as a separate command, whose tokens the test cannot record; unlike
    :func:`leftover_processes` it ignores the live workers of other graders on the machine.
    """
    return [
        pid
        for pid, parent, _ in _worker_processes()
        if parent == 1 or not psutil.pid_exists(parent)
    ]


@contextlib.contextmanager
def recording_tokens():
    """Record the token of every worker started inside the block (a list, filled as they
    start)."""
    tokens: list[str] = []
    original = Worker.start

    def start(self):
        try:
            original(self)
        finally:
            tokens.append(self.token)

    with mock.patch.object(Worker, "start", start):
        yield tokens


def copy_hostile(names, folder: Path, *, out_dir: Path, marker: Path) -> list[Path]:
    """Copy hostile fixtures into ``folder``, filling in the paths they attack."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        text = (HOSTILE / f"{name}.py").read_text()
        text = text.replace("__REPO__", str(REPO))
        text = text.replace("__OUT_DIR__", str(out_dir)).replace("__MARKER__", str(marker))
        path = folder / f"{name}.py"
        path.write_text(text)
        paths.append(path)
    return paths


def copy_reference(folder: Path, stem: str, solution: str = "gae_recursion.py") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.py"
    shutil.copyfile(REPO / "solutions" / solution, path)
    return path


def write_instructor_exercise(folder: Path) -> None:
    """An instructor's exercise `double-it` (4 automatic points, 1 by hand) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "double_solution.py").write_text(
        textwrap.dedent(
            '''
            def double(x):
                """Twice x."""
                ### BEGIN SOLUTION
                return 2 * x
                ### END SOLUTION
            '''
        )
    )
    (folder / "double.py").write_text(
        textwrap.dedent(
            """
            from rlfound.grading.spec import Answer, Compare, Exercise, Function, Manual

            def inputs(rng):
                return [{"x": rng.normal(size=4)} for _ in range(3)]

            EXERCISE = Exercise(
                id="double-it",
                title="Double it",
                chapter=2,
                stars=1,
                solution="double_solution.py",
                functions=[Function(name="double", parameters="x")],
                checks=[
                    Answer(name="two", function="double", kwargs={"x": 1.0}, expected=2.0),
                    Compare(
                        name="random", function="double", inputs=inputs, public=False, points=3
                    ),
                ],
                manual=[Manual(name="why", points=1, description="Explain.")],
            )
            """
        )
    )


def outside_environment() -> dict:
    """The environment of a command run as a teacher outside this checkout would run it: no
    PYTHONPATH, no virtual environment of this checkout on PATH, so that nothing here can be
    imported by accident."""
    hidden = {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV"}
    environment = {k: v for k, v in os.environ.items() if k not in hidden}
    ours = (Path(sys.prefix) / "bin").resolve()
    paths = environment.get("PATH", "/usr/bin:/bin").split(os.pathsep)
    environment["PATH"] = os.pathsep.join(p for p in paths if p and Path(p).resolve() != ours)
    return environment


@functools.cache
def pypi_reachable() -> bool:
    """Whether PyPI answers (tests that install rlfound's requirements need it)."""
    try:
        with urllib.request.urlopen("https://pypi.org/simple/pip/", timeout=15) as response:
            return response.status == 200
    except OSError:
        return False


def require_pypi() -> None:
    """Skip the calling test, with the reason, when PyPI cannot be reached."""
    if not pypi_reachable():
        pytest.skip("PyPI is not reachable from this machine; the test installs packages from it")


def unpack_like_gradescope(bundle: Path, root: Path) -> Path:
    """Lay a bundle out as Gradescope does in ``/autograder``, with ``root`` for /autograder.

    The zip's contents go into ``root/source``, ``run_autograder`` is copied to ``root``,
    and ``submission/`` and ``results/`` are created. Returns ``root/run_autograder``.
    """
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
        # Restore each file's permissions from the zip, as unzip does (zipfile does not).
        for info in archive.infolist():
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                (root / "source" / info.filename).chmod(mode)
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    (root / "results").mkdir()
    return root / "run_autograder"


def run_autograder(script: Path, root: Path, **options) -> subprocess.CompletedProcess:
    """Run ``script`` with ``root`` as the working folder, as Gradescope runs it."""
    return subprocess.run(
        [str(script)],
        cwd=root,
        env=outside_environment(),
        capture_output=True,
        text=True,
        timeout=options.get("timeout", 300),
        check=False,
    )


def requirements_only_venv(root: Path) -> Path:
    """``root/venv``, as ``setup.sh`` leaves it: rlfound's requirements, but not rlfound.

    A virtual environment without pip whose ``.pth`` file adds this environment's
    site-packages. Python adds a ``.pth`` file's folders to ``sys.path`` but does not run the
    ``.pth`` files inside them, so the editable install of rlfound (a ``.pth`` hook) stays out.
    """
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = (venv / "lib").glob("python3*/site-packages")
    (site / "requirements.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    probe = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import numpy, scipy, nbformat, psutil, tqdm, rlfound",
        ],
        cwd=root,
        env=outside_environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert "No module named 'rlfound'" in probe.stderr, probe.stderr
    return venv
