"""The code a ``listing`` or ``literalinclude`` directive shows, as a Markdown code block.

Jupyter cannot resolve either directive, so a plain notebook holds the code itself: a
``listing`` read by the book's own reader (:mod:`rlfound._listing`), a ``literalinclude``
read as Sphinx reads it (the object, then ``start-after`` and ``end-before``, then ``dedent``).
"""

from __future__ import annotations

import ast
import posixpath
import textwrap
from pathlib import Path

from rlfound._listing import find_definition, read_listing

__all__ = ["included", "listed", "python_object_lines", "resolve"]

_INCLUDE_OPTIONS = {"language", "pyobject", "start-after", "end-before", "dedent", "caption"}
# Line numbers and highlighting are the web page's; a notebook's code block has neither.
_LISTING_OPTIONS = {"caption", "linenos", "lineno-start", "emphasize-lines"}


def python_object_lines(source: str, name: str) -> list[str]:
    """The lines of a class or function (``Class.method`` for nested ones) in ``source``, its
    decorators included, as Sphinx's ``:pyobject:`` option shows them.

    Raises
    ------
    ValueError
        If ``source`` defines no such object.

    Examples
    --------
    >>> code = "x = 1\\n\\n@cache\\ndef f(y):\\n    return y\\n\\nz = 2\\n"
    >>> python_object_lines(code, "f")
    ['@cache', 'def f(y):', '    return y']
    """
    node = ast.parse(source)
    for part in name.split("."):
        node = find_definition(node, part)
        if node is None:
            raise ValueError(f"pyobject: no class or function {name!r} in the source")
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return source.splitlines()[start - 1 : node.end_lineno]


def _code_block(code: str, language: str, caption: object) -> str:
    # A fence longer than any run of backticks in the code.
    longest = run = 0
    for character in code:
        run = run + 1 if character == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    block = f"{fence}{language}\n{code.rstrip()}\n{fence}"
    return f"*{caption}*\n\n{block}" if caption else block


def listed(object_path: str, options: dict) -> str:
    """The code block of ``{listing} object_path``, as the book shows it.

    Raises
    ------
    ValueError
        If an option is one a notebook cannot show.
    """
    unknown = sorted(set(options) - _LISTING_OPTIONS)
    if unknown:
        raise ValueError(f"listing: unsupported option(s) {unknown} for {object_path}")
    return _code_block(read_listing(object_path).code, "python", options.get("caption"))


def included(source: Path, relative: str, options: dict) -> str:
    """The code block of ``{literalinclude} relative`` written in the page ``source``.

    Raises
    ------
    ValueError
        If an option is unsupported, or a marker or object is not in the file.
    """
    unknown = sorted(set(options) - _INCLUDE_OPTIONS)
    if unknown:
        raise ValueError(f"literalinclude: unsupported option(s) {unknown} for {relative}")
    text = source.read_text(encoding="utf-8")
    if "pyobject" in options:
        lines = python_object_lines(text, str(options["pyobject"]))
    else:
        lines = text.splitlines()
    for option, after in (("start-after", True), ("end-before", False)):
        if option not in options:
            continue
        marker = str(options[option])
        found = [i for i, line in enumerate(lines) if marker in line]
        if not found:
            raise ValueError(f"literalinclude: {option} {marker!r} not in {relative}")
        lines = lines[found[0] + 1 :] if after else lines[: found[0]]
    if "dedent" in options:
        if options["dedent"] is None:  # no width: remove the common indentation
            lines = textwrap.dedent("\n".join(lines)).splitlines()
        else:
            lines = [line[int(options["dedent"]) :] for line in lines]
    return _code_block("\n".join(lines), options.get("language") or "", options.get("caption"))


def resolve(page_folder: str, relative: str, roots: dict[str, Path]) -> Path:
    """The file a path written in a page of ``page_folder`` names, under the book's roots.

    Raises
    ------
    ValueError
        If the path leaves the book's folders.
    """
    path = posixpath.normpath(posixpath.join(page_folder, relative))
    top, _, rest = path.partition("/")
    if top not in roots or not rest:
        raise ValueError(f"literalinclude: {relative!r} in {page_folder}/ is outside the book")
    return roots[top] / rest
