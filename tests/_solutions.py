"""Loading the reference solutions in ``solutions/`` for the tests.

Each solution file imports only NumPy (student code built from it runs where :mod:`rlfound`
is absent), and the grader loads it by path; the tests do the same, under a private module
name that is not registered in :data:`sys.modules`, so every call gives a fresh module.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

#: The book's reference solutions, one ``.py`` file per code exercise.
SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions"


def load_module(path: Path, name: str) -> ModuleType:
    """Import the Python file at ``path`` as a module called ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_solution(name: str) -> ModuleType:
    """Import ``solutions/<name>.py`` under the private module name ``_solution_<name>``."""
    return load_module(SOLUTIONS / f"{name}.py", f"_solution_{name}")


def run_checks(exercise, module, seed: int = 7) -> dict:
    """Score every check of ``exercise`` against ``module`` in this process, without the sandbox.

    For testing a specification and its reference solution quickly: the grader itself never
    imports student code. Returns the verdict of each check by name.
    """
    import traceback

    import numpy as np

    from rlfound.grading.authoring import spec

    reference = exercise.reference()
    outcomes = {}
    for check in exercise.checks:
        prepared = check.prepare(exercise.rng(check, seed), reference)
        replies = []
        for request in prepared.calls:
            try:
                value = getattr(module, request.function)(**request.kwargs)
                replies.append(np.asarray(value, dtype=np.float64))
            except Exception:  # the verdict, not the test, decides what an error means
                replies.append(spec.CallError(traceback.format_exc()))
        outcomes[check.name] = prepared.judge(replies)
    return outcomes


def load_starter(source: str, folder: Path, name: str) -> ModuleType:
    """The student starter generated from a reference solution's ``source``, imported."""
    from rlfound.grading.authoring.starter import strip_solutions

    path = Path(folder) / f"starter_{name}.py"
    path.write_text(strip_solutions(source), encoding="utf-8")
    return load_module(path, f"_starter_{name}")


def book_exercise(spec_file: Path):
    """A book exercise with all its checks: its specification (public checks) and, from the
    instructor material in ``solutions/graded/``, its graded-only checks, as ``rlfound grade``
    loads it."""
    from rlfound.grading.authoring import spec

    path = Path(spec_file).resolve()
    (exercise,) = [e for e in spec.load_exercises().values() if e.source == path]
    return exercise
