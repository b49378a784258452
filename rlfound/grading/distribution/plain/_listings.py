"""The code a ``listing`` directive shows, as a Markdown code block.

Jupyter cannot resolve the directive, so a plain notebook holds the code itself, read by the
book's own reader (:mod:`rlfound._listing`): a library function as its listing shows it, a
reference solution's region (``:solution:``) or whole object (``:verbatim:``) from the folder
that ``roots`` maps ``solutions`` to. The book shows no other file's code (a
``literalinclude`` has no plain form; :func:`~._convert.convert_markdown` refuses it).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rlfound._listing import read_listing

__all__ = ["listed"]

# Line numbers and highlighting are the web page's; a notebook's code block has neither.
_OPTIONS = {"caption", "linenos", "lineno-start", "emphasize-lines", "solution", "verbatim"}


def _code_block(code: str, language: str, caption: object) -> str:
    # A fence longer than any run of backticks in the code.
    longest = run = 0
    for character in code:
        run = run + 1 if character == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    block = f"{fence}{language}\n{code.rstrip()}\n{fence}"
    return f"*{caption}*\n\n{block}" if caption else block


def listed(object_path: str, options: dict, roots: Mapping[str, Path]) -> str:
    """The code block of ``{listing} object_path``, as the book shows it; ``roots`` maps
    top-level names to folders (``{"solutions": folder}``, see :func:`rlfound._listing.
    read_listing`).

    Raises
    ------
    ValueError
        If an option is one a notebook cannot show, or the listing cannot be read
        (:class:`rlfound._listing.ListingError`).
    """
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise ValueError(f"listing: unsupported option(s) {unknown} for {object_path}")
    listing = read_listing(
        object_path,
        roots,
        solution="solution" in options,
        verbatim="verbatim" in options,
    )
    return _code_block(listing.code, "python", options.get("caption"))
