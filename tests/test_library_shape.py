"""The library keeps its shape as it grows (DESIGN.md, "The library").

- every public name of today's API (``tests/tables/public_names.txt``) still resolves, so a
  module can become a package of private files without breaking user code or the book;
- no module or private file of the library (the grader and the command line excluded) is over
  :data:`MAX_CODE_LINES` lines of code, docstrings and comments not counted;
- the modules of the library import each other without a cycle.
"""

from __future__ import annotations

import importlib

import pytest

from tests._book import ROOT

LIBRARY = ROOT / "rlfound"
PUBLIC_NAMES = ROOT / "tests" / "tables" / "public_names.txt"
#: The size rule of DESIGN.md: past it, a module becomes a package of private files.
MAX_CODE_LINES = 500


def recorded_names() -> list[str]:
    lines = PUBLIC_NAMES.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line and not line.startswith("#")]


def test_the_table_of_public_names_covers_every_module():
    names = recorded_names()
    assert len(names) == len(set(names))
    modules = {name for name in names if name.count(".") == 1}
    assert {"rlfound.diagnostics", "rlfound.contract", "rlfound.invariants"} <= modules
    assert all(name.rpartition(".")[0] in modules | {"rlfound"} for name in names)


@pytest.mark.parametrize("object_path", recorded_names())
def test_a_public_name_of_the_api_still_resolves(object_path: str):
    module_name, _, name = object_path.rpartition(".")
    module = importlib.import_module(module_name)
    assert hasattr(module, name), f"{object_path} is gone"
    if not name.isupper():
        assert name in module.__all__, f"{object_path} is no longer in {module_name}.__all__"
