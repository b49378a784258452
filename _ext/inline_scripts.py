"""Write each of a page's scripts once.

Sphinx 7.4 adds a script that an extension registers after the HTML builder has started
(sphinx-thebe's inline configuration, registered when the sources are read) to the page's
scripts twice, once as registered and once when it prepares writing; the two differ only in
an empty file name written as ``None`` or ``""``. The second copy re-declares the first one's
constants, so every page logged an uncaught ``SyntaxError`` in the reader's browser. This
extension drops such repeats from each page's list of scripts before the page is written.
"""

from __future__ import annotations

#: After every other handler that may still add a script to the page.
LAST = 900


def _script_key(script) -> tuple:
    return (
        getattr(script, "filename", script) or "",
        getattr(script, "priority", None),
        tuple(sorted(getattr(script, "attributes", {}).items())),
    )


def _write_each_script_once(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen = set()
    unique = []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    # In place: the builder renders the page from this very list.
    scripts[:] = unique


def setup(app):
    app.connect("html-page-context", _write_each_script_once, priority=LAST)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
