"""Listings of library functions that read like a book: ``{listing} rlfound.module.function``.

A chapter shows a library function as it is in ``rlfound/``, read from the module's file when
the book is built (one source, no copies), but without the reference part of its numpydoc
docstring: the listing keeps the signature, the summary with its equation, and the code, and
links to the function's page in the API reference, where the parameters, return values,
errors, references and examples are.

The trimmed docstring is the summary line, and, when the extended summary has an equation (an
indented block), every paragraph up to that equation and the sentence that goes on after it
(a paragraph starting in lower case, up to its first full stop; a further equation if that
sentence leads to one). The "Book: ..." line is left out (the reader is in the
book). Prose is re-wrapped to :data:`PROSE_WIDTH` columns, so that no docstring line makes the
listing scroll sideways; equation lines are kept as written, their alignment matters.

Options, as for ``code-block``: ``:caption:``, ``:linenos:``, ``:lineno-start:`` and
``:emphasize-lines:`` (line numbers of the listing as shown, its ``def`` line being 1).

The worked-solution pages show the reference solutions the same way:
``{listing} solutions.gae_recursion.gae_recursive`` reads ``solutions/gae_recursion.py``. The
top-level names the configuration value ``listing_roots`` maps to folders of the book
(``{"solutions": "solutions"}`` by default, relative to the book's root) are read from those
folders, not imported. Their code is no library function: it has no API page, so its listing
has no link and no ``library-listing`` class, and two more options say what it shows:
``:solution:`` the object's ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` region, dedented,
``:verbatim:`` the whole object as written (the reader, :mod:`rlfound._listing`, explains both).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.directives.code import container_wrapper
from sphinx.util import parselinenos
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import set_source_info

# The reading and trimming live in the package, shared with the class pack's notebooks.
from rlfound._listing import (  # noqa: F401 (re-exported for the tests)
    PROSE_WIDTH,
    Listing,
    ListingError,
    format_docstring,
    read_listing,
    split_object_path,
    trim_docstring,
)


class ListingDirective(SphinxDirective):
    """``{listing} rlfound.module.function``: a trimmed listing and a link to its API page."""

    required_arguments = 1
    has_content = False
    option_spec: ClassVar[dict] = {
        "caption": directives.unchanged_required,
        "linenos": directives.flag,
        "lineno-start": int,
        "emphasize-lines": directives.unchanged_required,
        "solution": directives.flag,
        "verbatim": directives.flag,
    }

    def run(self) -> list[nodes.Node]:
        roots = listing_roots(self.config.listing_roots, self.env.srcdir)
        try:
            listing = read_listing(
                self.arguments[0],
                roots,
                solution="solution" in self.options,
                verbatim="verbatim" in self.options,
            )
        except (ListingError, OSError, SyntaxError) as error:
            raise self.error(f"listing {self.arguments[0]!r}: {error}") from error
        self.env.note_dependency(str(listing.path))
        library = listing.module.partition(".")[0] not in roots

        block = nodes.literal_block(listing.code, listing.code)
        block["language"] = "python"
        if library:
            block["classes"].append("library-listing")
        if "linenos" in self.options or "lineno-start" in self.options:
            block["linenos"] = True
            block["highlight_args"] = {"linenostart": self.options.get("lineno-start", 1)}
        if "emphasize-lines" in self.options:
            try:
                numbers = parselinenos(self.options["emphasize-lines"], listing.code.count("\n"))
            except ValueError as error:
                raise self.error(f"emphasize-lines: {error}") from error
            block.setdefault("highlight_args", {})["hl_lines"] = [n + 1 for n in numbers]
        set_source_info(self, block)
        shown: nodes.Element = block
        if "caption" in self.options:
            shown = container_wrapper(self, block, self.options["caption"])
        if not library:
            return [shown]

        reference = addnodes.pending_xref(
            "",
            nodes.literal(listing.qualified_name, listing.qualified_name, classes=["xref"]),
            refdomain="py",
            reftype=listing.kind,
            reftarget=listing.qualified_name,
            refexplicit=True,
            refwarn=True,
            refdoc=self.env.docname,
        )
        link = nodes.paragraph("", "API reference: ", reference, classes=["listing-api-link"])
        set_source_info(self, link)
        return [shown, link]


def listing_roots(configured: dict[str, str], srcdir: str | Path) -> dict[str, Path]:
    """The folders of ``listing_roots`` (paths relative to the book's root), as paths."""
    return {name: Path(srcdir, folder) for name, folder in configured.items()}


def setup(app):
    app.add_config_value("listing_roots", {"solutions": "solutions"}, "env", [dict])
    app.add_directive("listing", ListingDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
