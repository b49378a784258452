"""The browser checks of the book test (``tests/_browser.py``) see what they look for.

A small site holds, next to a correct page, a page with each fault the book test must catch:
a formula MathJax cannot parse, an undefined macro, TeX outside any formula, a formula cut
in two by a list, a formula on a page without MathJax, a missing image, an image from another
host, an error logged to the console, and a listing and a display equation wider than their
boxes.
"""

from __future__ import annotations

import base64
import shutil
from importlib.metadata import distribution
from pathlib import Path

import pytest

from tests import _browser

# A 1x1 transparent PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)
MATHJAX_HEAD = """<script>window.MathJax = {options: {processHtmlClass: "math"}}</script>
<script defer src="mathjax/tex-chtml.js"></script>"""
#: The theme's rules for the boxes of listings and display equations (pydata-sphinx-theme),
#: in a column of 320 pixels.
BOXES = """<style>
  .column { width: 320px; }
  pre { overflow: auto; padding: 16px; font-family: monospace; font-size: 14px; }
  div.math { display: flex; flex-direction: row-reverse; overflow: hidden; }
  div.math mjx-container { flex-grow: 1; overflow: auto; }
</style>"""


def blocks(code: str, tex: str) -> str:
    """A listing of ``code`` and the labeled display equation ``tex`` in the column."""
    return (
        "<div class='column'><div class='library-listing highlight-python'><div class='highlight'>"
        f"<pre>{code}</pre></div></div><div class='math' id='equation-eq-shown'>"
        f"<span class='eqno'>(1.1)</span>\\[{tex}\\]</div></div>"
    )


SHORT = blocks("def f(x):\n    return x", r"y = x^2")
#: A code line of 88 characters and a sum of 30 terms: both far wider than 320 pixels.
LONG = blocks(
    "def f(x):\n    return " + " + ".join(["x"] * 20),
    " + ".join(f"x_{{{index}}}" for index in range(30)),
)


def page(head: str, body: str) -> str:
    # As in Sphinx's pages, MathJax looks for TeX only in elements of the class "math".
    body = f"<body><div class='tex2jax_ignore mathjax_ignore'>{body}</div></body>"
    return f"<!DOCTYPE html><html><head>{head}</head>{body}</html>"


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    reason = _browser.unavailable()
    if reason:
        pytest.skip(f"no browser for the browser tests: {reason}")
    site = tmp_path_factory.mktemp("site")
    mathjax = Path(str(distribution("sphinx-mathjax-offline").locate_file(""))) / (
        "sphinx-mathjax-offline/static/mathjax"
    )
    shutil.copytree(mathjax, site / "mathjax")
    (site / "pixel.png").write_bytes(PIXEL)
    (site / "good.html").write_text(
        page(
            MATHJAX_HEAD + BOXES,
            r"<p><span class='math'>\(x^2\)</span></p><img src='pixel.png'>" + SHORT,
        )
    )
    (site / "faulty.html").write_text(
        page(
            MATHJAX_HEAD + BOXES,
            LONG
            + r"<p><span class='math'>\(x^\)</span> <span class='math'>\(\undefinedmacro\)</span>"
            r"</p><p>raw \(y\) in prose</p>"
            "<p>a formula $6c</p><ul><li>1.2 = 0$ cut by a list</li></ul>"
            "<img src='missing.png'><img src='https://example.com/remote.png'>"
            "<script>console.error('deliberate failure')</script>",
        )
    )
    (site / "no-mathjax.html").write_text(page("", r"<span class='math'>\(z\)</span>"))
    with _browser.open_site(site, tmp_path_factory.mktemp("screenshots")) as opened:
        yield opened


@pytest.mark.slow
def test_a_correct_page_reports_nothing(session):
    report = session.inspect("good")
    assert report.console_errors == []
    assert report.failed_requests == []
    assert report.raw_tex == []
    assert report.images == {"count": 1, "broken": []}
    assert report.math["loaded"]
    assert report.math["formulas"] == report.math["containers"] == 2
    assert report.wide_blocks == []
    assert report.math["untypeset"] == report.math["errors"] == []
    assert (session.screenshots / "good.png").stat().st_size > 0


@pytest.mark.slow
def test_every_fault_of_a_page_is_reported(session):
    report = session.inspect("faulty")
    assert report.math["errors"] == [
        "Missing superscript or subscript argument",
        r"undefined macro \undefinedmacro",
    ]
    assert any(r"\(y\)" in snippet for snippet in report.raw_tex), report.raw_tex
    assert any("$6c" in snippet for snippet in report.raw_tex), report.raw_tex
    assert any("0$ cut" in snippet for snippet in report.raw_tex), report.raw_tex
    assert sorted(url.rsplit("/", 1)[1] for url in report.images["broken"]) == [
        "missing.png",
        "remote.png",
    ]
    assert any("deliberate failure" in error for error in report.console_errors)
    listing, equation = report.wide_blocks
    assert listing.startswith('listing "def f(x):": ') and listing.endswith(" px box")
    assert equation.startswith("equation eq-shown: ") and equation.endswith(" px box")
    # The widths are the rendered ones: content wider than the 320-pixel column's box.
    for problem in (listing, equation):
        content, box = (int(word) for word in problem.split() if word.isdigit())
        assert box <= 320 < content, problem
    assert "blocked request to https://example.com/remote.png" in report.failed_requests
    assert any(
        problem.startswith("HTTP 404") and problem.endswith("/missing.png")
        for problem in report.failed_requests
    ), report.failed_requests


@pytest.mark.slow
def test_a_formula_without_mathjax_is_reported_untypeset(session):
    report = session.inspect("no-mathjax")
    assert not report.math["loaded"]
    assert report.math["untypeset"] == [r"\(z\)"]
    assert report.raw_tex
