"""Helpers shared by the grader's tests (imported by name; pytest puts this folder on the path)."""

from __future__ import annotations

import contextlib
import os
import shutil
import textwrap
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
                functions=[Function("double", "x")],
                checks=[
                    Answer("two", "double", {"x": 1.0}, 2.0),
                    Compare("random", "double", inputs, public=False, points=3),
                ],
                manual=[Manual("why", 1, "Explain.")],
            )
            """
        )
    )
