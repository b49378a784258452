"""The book's MyST Markdown notebooks as notebooks that read in any Jupyter.

The class pack (``rlfound classpack``), the executed notebooks of the book's download menu
(``_ext/notebook_downloads.py``) and the notebooks Colab opens (``make notebooks``) all go
through :func:`plain_notebook`: every Markdown cell is converted from MyST to plain Markdown
(:mod:`._convert`, on markdown-it tokens), each figure gets its number and caption below it,
and the works the notebook cites are listed at its end. :func:`myst_left` finds, with the
same parser, any MyST syntax a text still holds.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rlfound.grading.distribution.plain._citations import Bibliography
from rlfound.grading.distribution.plain._convert import Context, convert_markdown
from rlfound.grading.distribution.plain._numbers import BookIndex, Target, book_index
from rlfound.grading.distribution.plain._parse import directive, roles, walk

__all__ = [
    "Bibliography",
    "Book",
    "BookIndex",
    "Context",
    "Target",
    "convert_markdown",
    "linker",
    "load_book",
    "myst_left",
    "plain_notebook",
]


@dataclass(frozen=True)
class Book:
    """The pages a converter may refer to, their numbers, the bibliography, and the folders
    of the top-level names a ``listing`` reads without importing them (``{"solutions":
    ...}``, :attr:`~._convert.Context.roots`)."""

    pages: Mapping[str, Path]
    index: BookIndex
    bibliography: Bibliography
    roots: Mapping[str, Path]


def _pages(folders: Mapping[str, Path]) -> dict[str, Path]:
    return {
        f"{name}/{path.stem}": path
        for name, folder in folders.items()
        for path in sorted(folder.glob("[0-9][0-9]_*.md"))
    }


@lru_cache(maxsize=4)
def _cached(folders: tuple, bibliography: Path, roots: tuple) -> Book:
    pages = _pages(dict(folders))
    return Book(pages, book_index(pages), Bibliography.read(bibliography), dict(roots))


def load_book(folders: Mapping[str, Path], bibliography: Path, roots: Mapping[str, Path]) -> Book:
    """The book made of the numbered pages (``NN_name.md``) of ``folders`` (``{"chapters":
    path, "solutions": path}``; pages under ``chapters`` are the numbered chapters), read
    once per process; its listings read the names of ``roots`` (:class:`Book`) from there.

    Raises
    ------
    ValueError
        If two pages define one label.
    """
    return _cached(tuple(sorted(folders.items())), bibliography, tuple(sorted(roots.items())))


def linker(page: str, notebooks: Mapping[str, str], book_url: str | None = None):
    """The link function of a page's notebook, for :class:`~._convert.Context`.

    With ``book_url``, a reference links to the book's page and the element on it. Without,
    it links to the notebook of the target's page where the reader has one (``notebooks``
    maps a page to its notebook's path, relative to one folder), and is text alone
    elsewhere and within the page itself.
    """
    here = posixpath.dirname(notebooks.get(page, page))

    def link(target_page: str, target: Target | None) -> str | None:
        if book_url:
            anchor = f"#{target.anchor}" if target is not None else ""
            return f"{book_url.rstrip('/')}/{target_page}.html{anchor}"
        if target_page == page or target_page not in notebooks:
            return None
        return posixpath.relpath(notebooks[target_page], here or ".")

    return link


def plain_notebook(notebook, page: str, book: Book, link) -> None:
    """Convert a notebook of the book's page ``page`` in place (see the module).

    Raises
    ------
    ValueError
        As :func:`convert_markdown`.
    """
    import nbformat

    context = Context(page, book.index, book.bibliography, link, book.roots)
    cells = []
    for cell in notebook.cells:
        cells.append(cell)
        if cell.cell_type == "markdown":
            cell.source = convert_markdown(cell.source, context)
        figure = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
        target = book.index.target(figure.get("name", ""))
        if cell.cell_type == "code" and target is not None:
            caption = convert_markdown(" ".join(target.title.split()), context)
            shown = nbformat.v4.new_markdown_cell(f"*{target.numbered}* {caption}")
            shown["id"] = f"{cell.get('id', 'cell')}-caption"
            cells.append(shown)
    if context.cited:
        works = "\n".join(f"- {line}" for line in book.bibliography.references(context.cited))
        end = nbformat.v4.new_markdown_cell(f"## References\n\n{works}")
        end["id"] = f"{posixpath.basename(page)}-references"
        cells.append(end)
    notebook.cells = cells


def myst_left(text: str) -> list[str]:
    """The MyST syntax left in a Markdown text, found with the book's parser: roles,
    directives, ``(label)=`` targets and equation labels, each as a short description.

    Examples
    --------
    >>> myst_left("See {eq}`eq-a`.\\n\\n```{note}\\nHi\\n```\\n\\n```python\\nx = 1\\n```\\n")
    ['role {eq}', 'directive {note}']
    """
    found = []
    for token in walk(text):
        if token.type == "inline":
            found += [f"role {{{role.meta['name']}}}" for role in roles(token)]
        elif token.type == "myst_target":
            found.append(f"target ({token.content})=")
        elif token.type == "math_block_label":
            found.append(f"equation label ({token.info})")
        elif directive(token) is not None:
            found.append(f"directive {{{directive(token).name}}}")
    return found
