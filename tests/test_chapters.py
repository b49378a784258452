"""The chapters show the library and never replace it.

Executing the notebooks is the book build's job (tests/test_book.py executes each one once,
in a fresh kernel, from its own folder). These checks read the sources only:

- a chapter never redefines a library function (it imports and calls it);
- every listing is a ``literalinclude`` of a public library function or of a reference
  solution, and names an object that exists in that file;
- every "Book: equation (eq-...), chapter N" line in a library docstring names a label that
  exists in chapter N, so the reader of a docstring can find its derivation.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupytext
import pytest

from tests._book import ROOT, notebook_documents

NOTEBOOKS = notebook_documents()
LIBRARY = ROOT / "rlfound"
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))
LISTING = re.compile(
    r"```\{literalinclude\}\s+(?P<path>\S+)\n(?P<options>(?::[^\n]*\n)*)", re.MULTILINE
)
BOOK_LINE = re.compile(r"Book: equations? (?P<labels>.+?), chapter (?P<chapter>\d+)\.")


def library_modules() -> list[Path]:
    """The library's modules, without the grader (its exercise specifications are not shown)."""
    return [
        path
        for path in sorted(LIBRARY.rglob("*.py"))
        if "grading" not in path.relative_to(LIBRARY).parts and path.name != "cli.py"
    ]


def top_level_functions(path: Path) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def code_cell_sources(path: Path) -> list[str]:
    notebook = jupytext.read(path)
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def test_the_toc_has_notebooks():
    assert any(path.parent.name == "chapters" for path in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: str(path.relative_to(ROOT)))
def test_notebook_does_not_redefine_library_functions(path: Path):
    library = {name for module in library_modules() for name in top_level_functions(module)}
    defined = set()
    for source in code_cell_sources(path):
        # IPython magics are not Python; they cannot define functions either.
        python = "\n".join(
            line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))
        )
        tree = ast.parse(python)
        defined.update(node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef))
    assert not defined & library, f"{path.name} redefines library functions"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: str(path.relative_to(ROOT)))
def test_listings_show_existing_public_functions(path: Path):
    text = path.read_text(encoding="utf-8")
    for match in LISTING.finditer(text):
        target = (path.parent / match["path"]).resolve()
        assert target.is_file(), f"{path.name}: listing of a missing file {match['path']}"
        options = dict(
            line[1:].split(":", 1) for line in match["options"].splitlines() if ":" in line[1:]
        )
        name = options.get("pyobject", "").strip()
        assert name, f"{path.name}: listing of {match['path']} without :pyobject:"
        assert not name.startswith("_"), f"{path.name} shows the private helper {name}"
        assert name in top_level_functions(target), f"{path.name}: {name} not in {target.name}"


def test_library_docstrings_name_equations_that_exist():
    labels = {
        int(chapter.name[:2]): set(re.findall(r"\$\$ \((eq-[a-z0-9-]+)\)", chapter.read_text()))
        for chapter in CHAPTERS
    }
    missing = []
    for module in library_modules():
        for line in BOOK_LINE.finditer(module.read_text(encoding="utf-8")):
            chapter = int(line["chapter"])
            for label in re.findall(r"eq-[a-z0-9-]+", line["labels"]):
                if label not in labels.get(chapter, set()):
                    missing.append(f"{module.name}: {label} (chapter {chapter})")
    assert not missing, "docstrings cite equations the book does not have:\n" + "\n".join(missing)
