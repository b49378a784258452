"""``make pdf``: the whole book as one PDF through XeLaTeX, with nothing left unresolved.

The test builds the PDF as ``make pdf`` does (``jupyter-book build --builder pdflatex`` with
warnings as errors), into a temporary folder, and reads it back with poppler's ``pdfinfo``,
``pdftotext`` and ``pdfimages``: every chapter, solution page and the bibliography are in it,
no reference came out as ``??``, every figure is embedded, the equations are numbered, and
XeLaTeX found a glyph for every character (Greek letters and symbols in text and code), and no
line of a listing or a display equation runs past the text column, where the page cuts it; the
API pages show the book's equations with the chapters' numbers.
It executes every chapter once more, so ``make test`` leaves it out (``make test-pdf`` runs it);
it skips, saying what to install, where LaTeX or poppler is missing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests._book import ROOT, toc_documents

pytestmark = pytest.mark.pdf

JUPYTER_BOOK = Path(sys.executable).with_name("jupyter-book")
SPHINX_PROBLEM = re.compile(r"(^|: )(WARNING|ERROR|CRITICAL):")
PROGRAMS = {
    "xelatex": "texlive-xetex",
    "latexmk": "latexmk",
    "pdfinfo": "poppler-utils",
    "pdftotext": "poppler-utils",
    "pdfimages": "poppler-utils",
}


#: TeX's report of a line wider than the column: a line of a paragraph (a code block's lines
#: are paragraphs that Sphinx wraps at spaces and punctuation, reported when a line has no
#: break point left) or a display equation, which TeX never breaks.
OVERFULL = re.compile(
    r"^Overfull \\hbox \((?P<points>[\d.]+)pt too wide\) "
    r"(?:in paragraph at lines (?P<first>\d+)--\d+|detected at line (?P<line>\d+))",
    re.MULTILINE,
)
#: The environments whose overfull lines are a cut listing or equation, and what they are.
BLOCKS = {"sphinxVerbatim": "code", "equation": "display", "equation*": "display"}
ENVIRONMENT = re.compile(r"\\(begin|end)\{(" + "|".join(map(re.escape, BLOCKS)) + r")\}")
#: How far past the column a line may reach (TeX's own \hfuzz is 0.1 pt; a point is a third
#: of a millimeter, well inside the page's margin).
TOLERANCE_POINTS = 1.0


def overfull_blocks(latex_log: str, tex: str) -> list[tuple[str, float, int]]:
    """(kind, points too wide, line of the .tex) of each line of a code block or display
    equation that TeX set wider than the column.

    TeX numbers the lines of the file it reads; Sphinx writes the book into one ``.tex``,
    so a line number points into it.
    """
    inside: list[str | None] = []
    current: list[str] = []
    for text in tex.splitlines():
        inside.append(current[-1] if current else None)
        for match in ENVIRONMENT.finditer(text):
            if match[1] == "begin":
                current.append(match[2])
            elif current and current[-1] == match[2]:
                current.pop()
    found = []
    for match in OVERFULL.finditer(latex_log):
        line = int(match["first"] or match["line"])
        environment = inside[line - 1] if line <= len(inside) else None
        if environment is not None:
            found.append((BLOCKS[environment], float(match["points"]), line))
    return found


def title_of(document: str) -> str:
    for line in (ROOT / f"{document}.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    raise AssertionError(f"{document} has no title")


@pytest.fixture(scope="module")
def pdf_build(tmp_path_factory) -> tuple[Path, str]:
    missing = sorted(
        {package for program, package in PROGRAMS.items() if not shutil.which(program)}
    )
    if missing:
        pytest.skip(f"the PDF build needs {', '.join(missing)} (see the README's 'make pdf')")
    output = tmp_path_factory.mktemp("pdf")
    command = [JUPYTER_BOOK, "build", ROOT, "--builder", "pdflatex", "--path-output", output]
    completed = subprocess.run(
        [str(part) for part in (*command, "-W", "-n", "--keep-going")],
        capture_output=True,
        text=True,
        timeout=5400,
        check=False,
    )
    log = completed.stdout + completed.stderr
    assert completed.returncode == 0, log[-6000:]
    warnings = [line for line in log.splitlines() if SPHINX_PROBLEM.search(line)]
    assert not warnings, "\n".join(warnings)
    return output / "_build" / "latex", log


def run(*command) -> str:
    return subprocess.run(
        [str(part) for part in command], capture_output=True, text=True, check=True, timeout=300
    ).stdout


@pytest.fixture(scope="module")
def pdf_text(pdf_build) -> str:
    return run("pdftotext", "-layout", pdf_build[0] / "rlfound.pdf", "-")


def test_the_pdf_has_every_page_of_the_book(pdf_build, pdf_text):
    info = run("pdfinfo", pdf_build[0] / "rlfound.pdf")
    pages = int(re.search(r"^Pages:\s+(\d+)$", info, re.MULTILINE)[1])
    assert pages > 150, info
    flat = " ".join(pdf_text.split())
    for document in toc_documents()[1:]:
        assert title_of(document) in flat, document


def test_no_reference_is_left_unresolved(pdf_build, pdf_text):
    assert "??" not in pdf_text
    latex_log = (pdf_build[0] / "rlfound.log").read_text(encoding="utf-8", errors="replace")
    assert not re.search(r"undefined (references|citations)|Reference `.*' .* undefined", latex_log)


def test_every_character_has_a_glyph(pdf_build, pdf_text):
    """XeLaTeX writes 'Missing character' for a character the fonts lack (and drops it)."""
    latex_log = (pdf_build[0] / "rlfound.log").read_text(encoding="utf-8", errors="replace")
    assert "Missing character" not in latex_log
    # Greek in prose and in code listings and outputs (the code uses γ, λ, π in comments).
    assert all(letter in pdf_text for letter in "γλπθ")


def test_figures_equations_and_bibliography_are_there(pdf_build, pdf_text):
    folder = pdf_build[0]
    tex = (folder / "rlfound.tex").read_text(encoding="utf-8")
    figures = len(re.findall(r"\\sphinxincludegraphics", tex))
    images = run("pdfimages", "-list", folder / "rlfound.pdf").splitlines()[2:]
    assert figures > 20 and len(images) >= figures
    # Numbered equations, by chapter: (1.1) is the first of chapter 1.
    assert len(re.findall(r"\\label\{equation:", tex)) > 100
    assert "(1.1)" in pdf_text and "(4.1)" in pdf_text
    # The bibliography, with a reference the book cites.
    flat = " ".join(pdf_text.split())
    assert "Schulman" in flat and "proximal policy optimization" in flat.lower()


def test_no_listing_or_display_equation_runs_past_the_column(pdf_build):
    """A listing's long line wraps (Sphinx breaks code lines at spaces and punctuation) and a
    long display equation is broken over lines in the source: neither is cut at the margin."""
    folder = pdf_build[0]
    latex_log = (folder / "rlfound.log").read_text(encoding="utf-8", errors="replace")
    tex = (folder / "rlfound.tex").read_text(encoding="utf-8")
    lines = tex.splitlines()
    cut = [
        f"{kind}, {points:.1f} pt too wide at rlfound.tex:{line}: {lines[line - 1][:80]}"
        for kind, points, line in overfull_blocks(latex_log, tex)
        if points > TOLERANCE_POINTS
    ]
    assert not cut, "\n".join(cut)


SAMPLE = """Sample
======

.. code-block:: python

   name = "{unbroken}"
   total = combine(first_argument, second_argument, third_argument, fourth_argument, last)

.. math::

   s = {sum}

.. math::

   t = a + b
"""


def test_the_check_finds_a_cut_code_line_and_a_cut_equation(tmp_path):
    """A small document through Sphinx's LaTeX and XeLaTeX, as the book: an unbreakable code
    line and an over-long display are found, a long code line with spaces is wrapped."""
    if not (shutil.which("xelatex") and shutil.which("latexmk")):
        pytest.skip("the check needs xelatex and latexmk (see the README's 'make pdf')")
    (tmp_path / "conf.py").write_text("latex_engine = 'xelatex'\n", encoding="utf-8")
    sample = SAMPLE.format(unbroken="a" * 150, sum=" + ".join("abcdefghijklmnopqrstuvwxyz" * 2))
    (tmp_path / "index.rst").write_text(sample, encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-M", "latexpdf", tmp_path, tmp_path / "_build", "-q"],
        capture_output=True,
        check=True,
        timeout=600,
    )
    (tex_path,) = (tmp_path / "_build" / "latex").glob("*.tex")
    tex = tex_path.read_text(encoding="utf-8")
    latex_log = tex_path.with_suffix(".log").read_text(encoding="utf-8", errors="replace")
    found = overfull_blocks(latex_log, tex)
    lines = tex.splitlines()
    assert [kind for kind, _, _ in found] == ["code", "display"], found
    assert all(points > 100 for _, points, _ in found), found
    assert "a" * 50 in lines[found[0][2] - 1]
    # TeX reports a display at its end: the line after the formula.
    assert "s = a + b + c" in lines[found[1][2] - 2]


def test_api_pages_tag_the_books_equations(pdf_build, pdf_text):
    """An API entry's copy of a book equation is one display, tagged with the chapter's
    number (a link to it), as the chapter shows it: (1.2) after discounted_cumsum's."""
    tex = (pdf_build[0] / "rlfound.tex").read_text(encoding="utf-8")
    assert r"\begin{sphinxuseclass}{book-equation}" not in tex
    tags = re.findall(r"\\tag\*\{\(\\ref\{equation:([^}]+)\}\)\}", tex)
    assert len(tags) >= 100
    assert "chapters/01_foundations:eq-return-recursion" in tags
    # The API entry, not the chapter's listing of the same function (which has no Book: line).
    flat = " ".join(pdf_text.split())
    entry = r"Discounted sums from every step.{0,600}?Book: equation \(1\.2\), chapter 1\."
    assert re.search(entry + r" [^()]{10,80} \(1\.2\) ", flat)
