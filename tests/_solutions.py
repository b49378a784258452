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
