"""Every notebook of the book executes on its own, in a fresh kernel, from its own folder.

The book build executes chapters too, but inside one Sphinx process; these tests are what a
student sees when opening a single chapter as a notebook in class.
"""

from __future__ import annotations

import ast
from pathlib import Path

import jupytext
import pytest
from nbclient import NotebookClient

from tests._book import ROOT, notebook_documents

NOTEBOOKS = notebook_documents()


def library_function_names() -> set[str]:
    names = set()
    # The grader's exercise specifications are not the library the chapters show.
    for module in (ROOT / "rlfound").rglob("*.py"):
        if "grading" in module.relative_to(ROOT / "rlfound").parts:
            continue
        tree = ast.parse(module.read_text(encoding="utf-8"))
        names.update(
            node.name
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        )
    return names


def code_cell_sources(path: Path) -> list[str]:
    notebook = jupytext.read(path)
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def test_the_toc_has_notebooks():
    assert any(path.parent.name == "chapters" for path in NOTEBOOKS)


@pytest.mark.chapters
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: str(path.relative_to(ROOT)))
def test_notebook_executes_in_a_fresh_kernel(path: Path):
    notebook = jupytext.read(path)
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert not errors


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: str(path.relative_to(ROOT)))
def test_notebook_does_not_redefine_library_functions(path: Path):
    library = library_function_names()
    defined = set()
    for source in code_cell_sources(path):
        # IPython magics are not Python; they cannot define functions either.
        python = "\n".join(
            line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))
        )
        tree = ast.parse(python)
        defined.update(node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef))
    assert not defined & library, f"{path.name} redefines library functions"
