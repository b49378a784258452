"""Offer every notebook page of the book as an executed ``.ipynb`` in the download menu.

sphinx-book-theme lists a page's notebook in its download menu when the page context names
one in ``ipynb_source`` (a path under ``_sources/``), but only fills that in, and copies the
notebook there, when a launch button (Binder, JupyterHub, ...) is configured. This extension
does it for every page whose source is a notebook (a MyST Markdown file with a kernelspec):
it names the notebook before the theme builds its header buttons, so that the theme renders
the menu entry beside the ``.md`` source and print-to-PDF, and writes the executed notebook,
outputs included, next to the page's source once the theme's handlers have run.

The executed notebook is the one myst-nb writes under ``jupyter_execute/``, except where the
outputs came from the jupyter-cache (``execute_notebooks: cache``, as the test-suite's second
edition builds): myst-nb 1.x then writes the notebook without its outputs, so they are merged
in from the cache here, as myst-nb itself does for the page.

Its Markdown is then converted from MyST to plain Markdown, as the class pack's is
(:mod:`rlfound.grading.distribution.plain`), so that it reads in any Jupyter: numbers as the
page shows them, linked to the page on the site at ``html_baseurl`` where the book sets one,
else to the notebook downloaded beside it.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: sphinx-book-theme builds its header buttons, and copies a notebook for its launch buttons,
#: at priority 501; handlers with a lower number run before, with a higher one after.
BEFORE_THE_THEME, AFTER_THE_THEME = 499, 502


def _is_notebook(app, pagename: str, doctree) -> bool:
    return doctree is not None and "kernelspec" in app.env.metadata.get(pagename, {})


def _executed(app, pagename: str) -> Path:
    return Path(app.env.mystnb_config.output_folder) / f"{pagename}.ipynb"


def _name_the_notebook(app, pagename, templatename, context, doctree):
    if not _is_notebook(app, pagename, doctree):
        return
    if not _executed(app, pagename).is_file():
        logger.warning(
            "no executed notebook for %s at %s; its page offers no .ipynb download",
            pagename,
            _executed(app, pagename),
            location=pagename,
        )
        return
    context["ipynb_source"] = f"{pagename}.ipynb"


def _write_the_notebook(app, pagename, templatename, context, doctree):
    if context.get("ipynb_source") != f"{pagename}.ipynb":
        return
    notebook = nbformat.read(_executed(app, pagename), as_version=nbformat.NO_CONVERT)
    config = app.env.mystnb_config
    if config.execution_mode == "cache":
        from jupyter_cache import get_cache

        try:
            _, notebook = get_cache(config.execution_cache_path).merge_match_into_notebook(notebook)
        except KeyError:
            logger.warning(
                "the outputs of %s are not in the jupyter-cache %s; its .ipynb has none",
                pagename,
                config.execution_cache_path,
                location=pagename,
            )
    _convert(app, pagename, notebook)
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)


def _book(app):
    from rlfound.grading.distribution import plain

    source = Path(app.srcdir)
    folders = {name: source / name for name in ("chapters", "solutions")}
    # The folders {listing} reads solution code from (_ext/listing.py's listing_roots).
    roots = {name: source / folder for name, folder in app.config.listing_roots.items()}
    bibliography = Path(app.srcdir, app.config.bibtex_bibfiles[0])
    return plain.load_book(folders, bibliography, roots)


def _convert(app, pagename: str, notebook) -> None:
    from rlfound.grading.distribution import plain

    book = _book(app)
    # The site's notebook pages; in the student edition the solutions are not among them.
    notebooks = {name: f"{name}.ipynb" for name in book.pages if name in app.env.found_docs}
    link = plain.linker(pagename, notebooks, app.config.html_baseurl or None)
    plain.plain_notebook(notebook, pagename, book, link)


def setup(app):
    app.connect("html-page-context", _name_the_notebook, priority=BEFORE_THE_THEME)
    app.connect("html-page-context", _write_the_notebook, priority=AFTER_THE_THEME)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
