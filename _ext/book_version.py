"""The book's version, build date and how to cite it, all from one place.

The version is ``pyproject.toml``'s (``[project] version``); the title and authors of the
citation are ``CITATION.cff``'s (tests/book/test_citation.py checks that its version and date agree
with pyproject.toml and the changelog). This extension

- sets Sphinx's ``version`` and ``release`` and writes "Version X.Y.Z, built YYYY-MM-DD" with a
  link to the "Changes and errata" page at the foot of every page (sphinx-book-theme's
  ``extra_footer``); the build date honors ``SOURCE_DATE_EPOCH`` for reproducible builds;
- adds the ``{how-to-cite}`` directive, which the preface uses: a box with the citation in
  words and as a BibTeX entry.
"""

from __future__ import annotations

import datetime
import html
import os
from pathlib import Path

import tomllib
import yaml
from docutils import nodes
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[1]


def version(root: Path = ROOT) -> str:
    """The version in ``pyproject.toml``."""
    with open(root / "pyproject.toml", "rb") as file:
        return tomllib.load(file)["project"]["version"]


def build_date() -> datetime.date:
    """Today, or the date of ``SOURCE_DATE_EPOCH`` when it is set."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        return datetime.datetime.fromtimestamp(int(epoch), tz=datetime.timezone.utc).date()
    return datetime.date.today()


def footer(root: Path = ROOT, date: datetime.date | None = None, errata: str = "") -> str:
    """The footer's HTML: the version, the build date, a link to the changes."""
    date = date or build_date()
    text = f"Version {html.escape(version(root))}, built {date.isoformat()}."
    link = f' <a href="{html.escape(errata)}">Changes and errata</a>.' if errata else ""
    return f'<p class="rlfound-version">{text}{link}</p>'


def citation(root: Path = ROOT) -> dict:
    """``CITATION.cff`` as a dictionary."""
    return yaml.safe_load((root / "CITATION.cff").read_text(encoding="utf-8"))


def bibtex(root: Path = ROOT) -> str:
    """The book's BibTeX entry: CITATION.cff's title, authors and date, pyproject's version."""
    cff = citation(root)
    authors = " and ".join(
        "{" + author["name"] + "}" if "name" in author else
        f"{author['family-names']}, {author['given-names']}"
        for author in cff["authors"]
    )  # fmt: skip
    fields = {
        "title": cff["title"],
        "author": authors,
        "year": str(cff["date-released"])[:4],
        "version": version(root),
        "note": f"Version {version(root)}",
    }
    url = cff.get("repository-code") or cff.get("url")
    if url:
        fields["url"] = url
    width = max(len(name) for name in fields)
    body = ",\n".join(f"  {name:<{width}} = {{{value}}}" for name, value in fields.items())
    return f"@book{{rlfound,\n{body}\n}}"


class HowToCite(SphinxDirective):
    """``{how-to-cite}``: a box with the citation in words and in BibTeX."""

    has_content = False

    def run(self):
        cff = citation()
        names = ", ".join(
            a.get("name") or f"{a['given-names']} {a['family-names']}" for a in cff["authors"]
        )
        words = f"{names}. {cff['title']}. Version {version()}, {str(cff['date-released'])[:4]}."
        box = nodes.admonition(classes=["tip", "how-to-cite"])
        box += nodes.title(text="How to cite")
        box += nodes.paragraph(text=f"Cite this book as: {words} As a BibTeX entry:")
        box += nodes.literal_block(bibtex(), bibtex(), language="bibtex")
        box += nodes.paragraph(
            text="The repository's CITATION.cff holds the same, for tools that read it."
        )
        return [box]


def _configure(app, config) -> None:
    config.version = config.release = version()
    errata = "errata.html"
    options = dict(config.html_theme_options or {})
    options["extra_footer"] = footer(errata=errata)
    config.html_theme_options = options


def _relative_links(app, pagename, templatename, context, doctree) -> None:
    # The footer is the same on every page; its link must be relative to each page's folder.
    options = context.get("theme_extra_footer")
    if options:
        depth = pagename.count("/")
        context["theme_extra_footer"] = options.replace(
            'href="errata.html"', f'href="{"../" * depth}errata.html"'
        )


def setup(app):
    app.connect("config-inited", _configure)
    app.connect("html-page-context", _relative_links)
    app.add_directive("how-to-cite", HowToCite)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
