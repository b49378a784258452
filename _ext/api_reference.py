"""The API reference (``api/``): library docstrings as book pages, linked to the chapters.

Autodoc reads the docstrings and numpydoc renders them. Before numpydoc parses a docstring,
this extension

- turns its "Book: ..." line into links: ``(eq-...)`` becomes a reference to that numbered
  equation, ``(sec-...)`` a reference to that section, and "chapter N" a link to chapter N
  (a dangling one fails the strict build like any broken reference);
- typesets after the paragraph of "Book:" lines each equation they name, as the book does:
  the LaTeX of that labeled equation, read from the chapter's source, and its number,
  linked to the chapter. The docstring itself states its equation in plain Unicode, which
  ``help()`` shows as it is; the LaTeX never enters it, so it cannot drift from the book's.
  A label that no chapter defines is a build warning, hence an error in the strict build;
- shows every indented block of its free text (the summary and the Notes), which is an
  equation or an aligned table in plain Unicode, as preformatted text: laid out as in the
  source, its alignment kept, and never read as reStructuredText;
- escapes ``|`` and a trailing ``_`` in the rest of its text (but not in its literals, roles,
  tables, literal blocks and examples): ``|A_i|`` and ``f_+`` there are mathematics, not a
  substitution and a link;
- documents the constants a package re-exports from its private files (``rlfound.contract``'s
  ``FILL``, defined in ``_fields.py``) under the public name, with the ``#:`` comment of their
  definition: autodoc reads comments only in the module it documents.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import textwrap
from functools import cache
from pathlib import Path

from equation_checks import book_equation_latex
from sphinx.pycode import ModuleAnalyzer
from sphinx.util import logging

ROOT = Path(__file__).resolve().parents[1]
LOGGER = logging.getLogger(__name__)

#: A numpydoc section heading, the line after it being dashes.
SECTION_NAME = re.compile(r"^[A-Z][A-Za-z ]*$")
#: The sections of running text, whose indented blocks are equations.
FREE_TEXT_SECTIONS = {None, "Notes", "Warnings"}
BOOK_LINE = re.compile(r"^\s*Book:")
EQUATION = re.compile(r"\((eq-[a-z0-9-]+)\)")
SECTION = re.compile(r"\((sec-[a-z0-9-]+)\)")
CHAPTER = re.compile(r"\bchapter (\d+)\b")
#: Inline literals, roles and interpreted text, where nothing is escaped.
PROTECTED = re.compile(r"(``.+?``|(?::[\w:.-]+:)?`[^`]+`_{0,2})")
#: A trailing underscore that reStructuredText would read as a reference, as in ``f_+``.
TRAILING_UNDERSCORE = re.compile(r"(?<=\w)_(?=$|[\s\-.,:;!?/'\")\]}>+])")
TABLE_BORDER = re.compile(r"^\s*=+( +=+)+\s*$")
#: Holds only a stylesheet: Jupyter Book 1 injects every .js file under the static paths.
STATIC = Path(__file__).resolve().parent / "api_reference_static"


@cache
def chapter_document(number: int) -> str | None:
    """The document name of chapter ``number`` (``chapters/01_foundations``), if it exists."""
    found = sorted((ROOT / "chapters").glob(f"{number:02d}_*.md"))
    return f"chapters/{found[0].stem}" if found else None


def link_book_line(line: str, where: str) -> str:
    """A docstring's "Book: ..." line with its equations, sections and chapters as links."""

    def chapter_link(match: re.Match) -> str:
        document = chapter_document(int(match[1]))
        if document is None:
            LOGGER.warning(f"{where}: the book has no chapter {match[1]}", type="api_reference")
            return match[0]
        return f":doc:`chapter {match[1]} </{document}>`"

    line = EQUATION.sub(r":eq:`\1`", line)
    line = SECTION.sub(r"(:ref:`\1`)", line)
    return CHAPTER.sub(chapter_link, line)


@cache
def _book_equations() -> dict[str, str]:
    return book_equation_latex(ROOT)


def typeset_book_equations(lines: list[str], where: str) -> list[str]:
    """reStructuredText that typesets each equation the "Book:" ``lines`` name: the book's
    LaTeX of that label, with the equation's number (a link to it) beside it."""
    blocks = []
    for label in EQUATION.findall(" ".join(lines)):
        latex = _book_equations().get(label)
        if latex is None:
            LOGGER.warning(f"{where}: the book has no equation {label}", type="api_reference")
            continue
        blocks += ["", ".. container:: book-equation", "", "   .. math::", ""]
        blocks += [f"      {text}" for text in latex.splitlines()]
        blocks += ["", f"   :eq:`{label}`"]
    return [*blocks, ""] if blocks else []


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def escape_markup(line: str) -> str:
    """``line`` with ``|`` and a word's trailing ``_`` escaped outside literals and roles.

    In the docstrings they are mathematics (``|A_i|``, ``f_+``), which reStructuredText would
    read as a substitution or a link.
    """
    parts = PROTECTED.split(line)
    for index in range(0, len(parts), 2):
        parts[index] = TRAILING_UNDERSCORE.sub(r"\\_", parts[index].replace("|", r"\|"))
    return "".join(parts)


def _indented_block(lines: list[str], index: int) -> tuple[list[str], int]:
    """The indented lines (and the blank lines among them) from ``index``; the next index."""
    block = []
    while index < len(lines) and (not lines[index].strip() or _indent(lines[index]) > 0):
        block.append(lines[index])
        index += 1
    while block and not block[-1].strip():
        block.pop()
        index -= 1
    return block, index


def rewrite_docstring(lines: list[str], where: str) -> list[str]:
    """The docstring lines with links to the book and equations as preformatted blocks."""
    result: list[str] = []
    section = None
    table_borders = 0
    index = 0
    while index < len(lines):
        line = lines[index]
        following = lines[index + 1] if index + 1 < len(lines) else ""
        previous = next((text for text in reversed(result) if text.strip()), "")
        starts_block = _indent(line) > 0 and (not result or not result[-1].strip())
        if SECTION_NAME.match(line) and re.fullmatch(r"-{3,}", following.strip()):
            section = line.strip()
            result.extend([line, following])
            index += 2
        elif section == "Examples":
            result.append(line)
            index += 1
        elif TABLE_BORDER.match(line) or table_borders:
            # A simple table of reStructuredText: its columns are aligned, leave it as it is.
            table_borders = (table_borders + bool(TABLE_BORDER.match(line))) % 3
            result.append(line)
            index += 1
        elif starts_block and previous.endswith("::"):
            block, index = _indented_block(lines, index)
            result.extend(block)
        elif starts_block and section in FREE_TEXT_SECTIONS:
            block, index = _indented_block(lines, index)
            result.extend([".. code-block:: none", "   :class: docstring-equation", ""])
            block = textwrap.dedent("\n".join(block)).splitlines()
            result.extend(f"   {text}" if text.strip() else "" for text in block)
            result.append("")
        elif BOOK_LINE.match(line):
            # The paragraph of consecutive "Book:" lines, then the equations they name.
            book_lines = []
            while index < len(lines) and BOOK_LINE.match(lines[index]):
                book_lines.append(lines[index])
                index += 1
            result.extend(link_book_line(text, where) for text in book_lines)
            result.extend(typeset_book_equations(book_lines, where))
        else:
            result.append(escape_markup(line))
            index += 1
    return result


def _private_files(package: str) -> list[str]:
    module = importlib.import_module(package)
    return [
        f"{package}.{info.name}" for info in pkgutil.iter_modules(getattr(module, "__path__", []))
    ]


@cache
def reexported_constant_comment(name: str) -> tuple[str, ...] | None:
    """The ``#:`` comment of the constant ``package.NAME`` where a private file of ``package``
    defines it, or None (not a package, or not defined with a comment in one of its files)."""
    package, _, attribute = name.rpartition(".")
    try:
        files = _private_files(package)
    except ImportError:
        return None
    for file in files:
        comment = ModuleAnalyzer.for_module(file).find_attr_docs().get(("", attribute))
        if comment:
            return tuple(comment)
    return None


@cache
def _reexported_constants() -> dict[tuple[str, int], str]:
    """The package of every constant a library package re-exports, keyed by (name, id of the
    object), in the order of the packages and of their ``__all__``."""
    found = {}
    for info in pkgutil.iter_modules(importlib.import_module("rlfound").__path__, "rlfound."):
        if not info.ispkg or info.name.rpartition(".")[2].startswith("_"):
            continue
        package = importlib.import_module(info.name)
        for attribute in getattr(package, "__all__", ()):
            value = getattr(package, attribute)
            if not callable(value) and reexported_constant_comment(f"{info.name}.{attribute}"):
                found[(attribute, id(value))] = info.name
    return found


def add_reexported_constants(app, docname, source):
    """Append an ``autodata`` of each constant the page's package re-exports (autodoc's
    ``automodule`` documents a constant only where its comment is in the module itself)."""
    if not docname.startswith("api/"):
        return
    package = "rlfound." + docname.partition("/")[2]
    names = [name for (name, _), owner in _reexported_constants().items() if owner == package]
    if names:
        blocks = "".join(f".. autodata:: {package}.{name}\n   :no-value:\n\n" for name in names)
        source[0] += f"\n```{{eval-rst}}\n{blocks}```\n"


def process_docstring(app, what, name, obj, options, lines):
    if what == "data" and (comment := reexported_constant_comment(name)):
        lines[:] = [*comment, ""]
    lines[:] = rewrite_docstring(list(lines), name)


def _add_stylesheet(app, config):
    config.html_static_path.append(str(STATIC))


def setup(app):
    app.connect("config-inited", _add_stylesheet)
    app.add_css_file("api_reference.css")
    # Before numpydoc (priority 500) splits the docstring into its sections.
    app.connect("autodoc-process-docstring", process_docstring, priority=400)
    app.connect("source-read", add_reexported_constants)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
