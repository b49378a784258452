"""``make pdf``: the whole book as one PDF through XeLaTeX, with nothing left unresolved.

The test builds the PDF as ``make pdf`` does (``jupyter-book build --builder pdflatex`` with
warnings as errors), into a temporary folder, and reads it back with poppler's ``pdfinfo``,
``pdftotext`` and ``pdfimages``: every chapter, solution page and the bibliography are in it,
no reference came out as ``??``, every figure is embedded, the equations are numbered, and
XeLaTeX found a glyph for every character (Greek letters and symbols in text and code). It
executes every chapter once more, so ``make test`` leaves it out (``make test-pdf`` runs it);
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
