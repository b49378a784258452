"""The library keeps its shape as it grows (DESIGN.md, "The library").

- every public name of today's API (``tests/library/tables/public_names.txt``) still resolves,
  so a module can become a package of private files without breaking user code or the book;
- no module or private file of the library (the grader and the command line excluded) is over
  :data:`MAX_CODE_LINES` lines of code, docstrings and comments not counted;
- the modules of the library import each other without a cycle.
"""

from __future__ import annotations

import ast
import graphlib
import importlib
from pathlib import Path

import pytest

from tests._book import ROOT

LIBRARY = ROOT / "rlfound"
PUBLIC_NAMES = ROOT / "tests" / "library" / "tables" / "public_names.txt"
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


def library_files() -> list[Path]:
    """The library's modules and private files, without the grader and the command line."""
    return [
        path
        for path in sorted(LIBRARY.rglob("*.py"))
        if not {"grading", "cli"} & set(path.relative_to(LIBRARY).parts)
    ]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def code_lines(source: str) -> int:
    """Lines of code: lines holding a token of a statement, docstrings and comments left out."""
    tree = ast.parse(source)
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                docstrings.update(range(body[0].lineno, body[0].end_lineno + 1))
    return sum(
        1
        for number, line in enumerate(source.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#") and number not in docstrings
    )


def test_code_lines_leave_out_docstrings_comments_and_blank_lines():
    source = '"""Module.\n\nMore."""\n\n# why\nx = 1\n\n\ndef f():\n    """F."""\n    return x\n'
    assert code_lines(source) == 3


@pytest.mark.parametrize("path", library_files(), ids=lambda path: module_name(path))
def test_no_library_file_is_over_the_size_rule(path: Path):
    size = code_lines(path.read_text(encoding="utf-8"))
    assert size <= MAX_CODE_LINES, (
        f"{path.relative_to(ROOT)} has {size} lines of code (more than {MAX_CODE_LINES}): make "
        "it a package of private files behind the same public names (DESIGN.md)"
    )


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """The library modules a file imports, resolved as Python resolves them.

    ``from rlfound import kl`` imports ``rlfound.kl``; ``from ._report import report`` the
    sibling ``_report``. The package ``rlfound`` itself (whose ``__init__`` imports every
    module) is not counted as a dependency of the modules inside it.
    """
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                origin = ".".join([*base, node.module] if node.module else base)
            else:
                origin = node.module
            found.add(origin)
            found.update(f"{origin}.{alias.name}" for alias in node.names)
    return {module for module in found & known if module != "rlfound" and module != name}


def import_graph() -> dict[str, set[str]]:
    files = library_files()
    known = {module_name(path) for path in files}
    return {module_name(path): imported_modules(path, known) for path in files}


def test_the_import_graph_sees_the_imports():
    graph = import_graph()
    assert "rlfound.kl" in graph["rlfound.diagnostics._policy"]
    assert "rlfound.diagnostics._common" in graph["rlfound.diagnostics._policy"]
    assert "rlfound._validation" in graph["rlfound.returns"]


def test_the_library_imports_without_a_cycle():
    try:
        tuple(graphlib.TopologicalSorter(import_graph()).static_order())
    except graphlib.CycleError as error:
        pytest.fail(f"import cycle: {' -> '.join(error.args[1])}")
