"""Every figure a notebook draws carries alt text, written in the cell that draws it.

A figure in the book is the image output of a code cell. Its alt text is the cell's
``mystnb: image: alt:`` metadata, which myst-nb copies to the ``alt`` attribute of the image,
so a reader with a screen reader hears what the figure shows. Without it the page says only
the image's file name. These checks read the sources; tests/book/test_book.py checks the ``alt``
of every image of the built pages.

Which cells draw is decided from their code, as the inline backend decides it: a cell draws
when it calls pyplot (``plt.subplots``, ``plt.plot``, ``plt.show`` ...; not the helpers that
draw nothing, such as ``plt.close`` or ``plt.MaxNLocator``), calls a library plotting function
(``diagnostics.plot_history``: every ``plot_*``), or calls a function of the notebook that
does either.
"""

from __future__ import annotations

import ast
from pathlib import Path

import jupytext
import pytest

from tests._book import ROOT, notebook_documents

NOTEBOOKS = notebook_documents()
#: pyplot names that neither create nor draw a figure.
NOT_DRAWING = {
    "close",
    "ioff",
    "ion",
    "isinteractive",
    "get_cmap",
    "colormaps",
    "rcParams",
    "rc_context",
    "style",
    "cm",
    "matplotlib",
    "MaxNLocator",
    "MultipleLocator",
    "NullFormatter",
    "FuncFormatter",
    "FormatStrFormatter",
    "LogLocator",
}
#: Alt text says what the figure shows; these openings say only that there is one.
EMPTY_OPENINGS = ("figure", "a figure", "the figure", "image", "an image", "plot of", "a plot")


def pyplot_aliases(tree: ast.Module) -> set[str]:
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update(a.asname or a.name for a in node.names if a.name == "matplotlib.pyplot")
        elif isinstance(node, ast.ImportFrom) and node.module == "matplotlib":
            aliases.update(a.asname or a.name for a in node.names if a.name == "pyplot")
    return aliases


def executed_nodes(node: ast.AST):
    """``node`` and what runs when it runs: not the bodies of the functions it defines."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from executed_nodes(child)


def called_names(node: ast.AST) -> list[tuple[str | None, str]]:
    """Every call that running ``node`` makes, as (the name it is an attribute of, or None;
    its name)."""
    calls = []
    for call in executed_nodes(node):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if isinstance(func, ast.Name):
            calls.append((None, func.id))
        elif isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else ""
            calls.append((owner, func.attr))
    return calls


def python_source(source: str) -> str:
    # IPython magics and shell escapes are not Python.
    return "\n".join(
        line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))
    )


def drawing_cells(path: Path) -> list[tuple[str, bool, dict]]:
    """(where, draws, metadata) of every code cell of the notebook, in order."""
    notebook = jupytext.read(path)
    cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    trees = [ast.parse(python_source(cell.source)) for cell in cells]
    aliases = {"plt"}.union(*(pyplot_aliases(tree) for tree in trees))

    def draws_directly(node: ast.AST) -> bool:
        return any(
            (owner in aliases and name not in NOT_DRAWING) or name.startswith("plot_")
            for owner, name in called_names(node)
        )

    functions = {
        node.name: ast.Module(body=node.body, type_ignores=[])
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
    }
    drawing = {name for name, node in functions.items() if draws_directly(node)}
    # A function that calls a drawing function draws too; iterate to the fixed point.
    while True:
        more = {
            name
            for name, node in functions.items()
            if name not in drawing
            and any(owner is None and called in drawing for owner, called in called_names(node))
        }
        if not more:
            break
        drawing |= more

    def draws(tree: ast.Module) -> bool:
        return draws_directly(tree) or any(
            owner is None and name in drawing for owner, name in called_names(tree)
        )

    return [
        (f"code cell {index} ({first_line(cell.source)!r})", draws(tree), cell.metadata)
        for index, (cell, tree) in enumerate(zip(cells, trees, strict=True))
    ]


def first_line(source: str) -> str:
    return next((line for line in source.splitlines() if line.strip()), "")


def alt_text(metadata: dict) -> object:
    return metadata.get("mystnb", {}).get("image", {}).get("alt")


@pytest.mark.slow
def test_the_rule_finds_the_figures():
    drawn = [draws for path in NOTEBOOKS for _, draws, _ in drawing_cells(path)]
    # Every chapter has at least one figure (the developers' guide asks for it).
    chapters = [path for path in NOTEBOOKS if path.parent.name == "chapters"]
    assert sum(drawn) >= len(chapters)


def test_the_rule_follows_helpers_and_ignores_non_drawing_calls(tmp_path: Path):
    notebook = tmp_path / "example.md"
    notebook.write_text(
        "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
        "kernelspec:\n  name: python3\n  display_name: Python 3\n---\n\n"
        "```{code-cell} ipython3\nimport matplotlib.pyplot as pyplot\n"
        "def band(ax):\n    ax.plot([0, 1])\n\ndef draw():\n    fig, ax = pyplot.subplots()\n"
        "    band(ax)\n\ndef wrapped():\n    draw()\n```\n\n"
        "```{code-cell} ipython3\nwrapped()\n```\n\n"
        "```{code-cell} ipython3\npyplot.close('all')\nlocator = pyplot.MaxNLocator(5)\n```\n\n"
        "```{code-cell} ipython3\nfigure = diagnostics.plot_history([])\n```\n",
        encoding="utf-8",
    )
    assert [draws for _, draws, _ in drawing_cells(notebook)] == [False, True, False, True]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_figure_has_alt_text(path: Path):
    problems = []
    for where, draws, metadata in drawing_cells(path):
        alt = alt_text(metadata)
        if not draws:
            if alt is not None:
                problems.append(f"{where} has alt text but draws no figure")
            continue
        if not isinstance(alt, str) or not alt.strip():
            problems.append(f"{where} draws a figure without `mystnb: image: alt:`")
            continue
        words = alt.split()
        if len(words) < 8 or alt.lower().startswith(EMPTY_OPENINGS):
            problems.append(f"{where}: alt text should say what it shows: {alt!r}")
        if "$" in alt or "\\" in alt:
            # A screen reader reads alt text literally: no TeX.
            problems.append(f"{where}: alt text contains TeX: {alt!r}")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)
