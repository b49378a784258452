"""``make pdf``: the whole book as one PDF through XeLaTeX, with nothing left unresolved.

The test builds the PDF as ``make pdf`` does (``jupyter-book build --builder pdflatex`` with
warnings as errors), into a temporary folder, and reads it back with poppler's ``pdfinfo``,
``pdftotext`` and ``pdfimages``: every chapter, solution page and the bibliography are in it,
no reference came out as ``??``, every figure is embedded, the equations are numbered, and
XeLaTeX found a glyph for every character (Greek letters and symbols in text and code), no
line of a listing, a display equation or a table cell runs past the text column, where the page
cuts it or the next cell overprints it, and no table runs past the bottom of a page; the API
pages show the book's equations with the chapters' numbers.
It executes every chapter once more, so ``make test`` leaves it out (``make test-pdf`` runs it);
it skips, saying what to install, where LaTeX or poppler is missing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from tests._book import ROOT, toc_documents
from tests._solutions import load_module

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
#: break point left; so is a table cell's) or a display equation, which TeX never breaks. The
#: next line of the log shows the line's text.
OVERFULL = re.compile(
    r"^Overfull \\hbox \((?P<points>[\d.]+)pt too wide\) "
    r"(?:in paragraph at lines (?P<first>\d+)--\d+|detected at line (?P<line>\d+))\n(?P<text>.*)",
    re.MULTILINE,
)
#: The environments whose overfull lines are a cut listing, equation or table cell, and what
#: they are. tabulary sets its cells at its end, so TeX reports them at ``\end{tabulary}``.
BLOCKS = {
    "sphinxVerbatim": "code",
    "equation": "display",
    "equation*": "display",
    "tabulary": "table",
    "tabular": "table",
    "longtable": "table",
}
ENVIRONMENT = re.compile(r"\\(begin|end)\{(" + "|".join(map(re.escape, BLOCKS)) + r")\}")
#: How far past the column a line may reach (TeX's own \hfuzz is 0.1 pt; a point is a third
#: of a millimeter, well inside the page's margin).
TOLERANCE_POINTS = 1.0
#: TeX's report of a page whose content is taller than the page: a tabular, which cannot
#: break, taller than a page runs past its bottom edge and loses its last rows. The log
#: writes the page's number when it ships the page, after the report.
PAGE_OVERFLOW = re.compile(
    r"^Overfull \\vbox \((?P<points>[\d.]+)pt too high\) has occurred while \\output is active"
    r".*?\[(?P<page>\d+)",
    re.MULTILINE | re.DOTALL,
)
#: TeX reading the table of contents or the index that the previous run wrote (``(./x.toc``);
#: the group is the file's name.
PREVIOUS_RUN = re.compile(r"\(\./(?P<file>[^\s()]+\.(?:toc|ind))\b")
#: Where a page of the book starts in the .tex.
DOCUMENT = re.compile(r"\\label\{\\detokenize\{([^}]*)::doc\}\}")


class Overfull(NamedTuple):
    kind: str  # code, display or table
    points: float  # how much too wide
    line: int  # of the .tex
    text: str  # the log's rendering of the line (fonts, then the text)


def overfull_blocks(latex_log: str, tex: str) -> list[Overfull]:
    """Each line of a code block, display equation or table that TeX set wider than the
    column.

    TeX numbers the lines of the file it reads; Sphinx writes the book into one ``.tex``,
    so a line number points into it, except while TeX reads the table of contents or the
    index of its previous run (:data:`PREVIOUS_RUN`), whose lines those are.
    """
    previous_run = []
    for opened in PREVIOUS_RUN.finditer(latex_log):
        # TeX opens the table of contents for writing once it has read it; the index is
        # read last, after the whole .tex.
        rewritten = re.compile(r"^\\openout\d+ = `" + re.escape(opened["file"]) + "'", re.MULTILINE)
        closed = rewritten.search(latex_log, opened.end())
        previous_run.append((opened.start(), closed.start() if closed else len(latex_log)))
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
        if any(start <= match.start() < end for start, end in previous_run):
            continue
        line = int(match["first"] or match["line"])
        environment = inside[line - 1] if line <= len(inside) else None
        if environment is not None:
            found.append(Overfull(BLOCKS[environment], float(match["points"]), line, match["text"]))
    return found


def overflowing_pages(latex_log: str) -> list[tuple[float, int]]:
    """(points too high, page number) of each page whose content runs past its bottom."""
    return [
        (float(match["points"]), int(match["page"])) for match in PAGE_OVERFLOW.finditer(latex_log)
    ]


def document_at(tex_lines: list[str], line: int) -> str:
    """The book's page that line ``line`` of the .tex belongs to (its document name)."""
    for text in reversed(tex_lines[:line]):
        if match := DOCUMENT.search(text):
            return match[1]
    return "the front matter"


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


def test_no_listing_equation_or_table_runs_past_the_column(pdf_build):
    """A listing's long line wraps (Sphinx breaks code lines at spaces and punctuation), a
    long display equation is broken over lines in the source, and a table's cells wrap
    within their column (inline code and paths break at punctuation): none is cut at the
    margin or runs into the next cell."""
    folder = pdf_build[0]
    latex_log = (folder / "rlfound.log").read_text(encoding="utf-8", errors="replace")
    tex = (folder / "rlfound.tex").read_text(encoding="utf-8")
    lines = tex.splitlines()
    cut = [
        f"{found.kind} in {document_at(lines, found.line)}, {found.points:.1f} pt too wide at"
        f" rlfound.tex:{found.line}: {lines[found.line - 1][:60]} | {found.text[:80]}"
        for found in overfull_blocks(latex_log, tex)
        if found.points > TOLERANCE_POINTS
    ]
    assert not cut, "\n".join(cut)


def test_nothing_runs_past_the_bottom_of_a_page(pdf_build):
    """A table taller than a page is a longtable, which continues on the next page; a
    tabular, which cannot break, would be cut at the bottom edge (so would anything else
    taller than a page)."""
    latex_log = (pdf_build[0] / "rlfound.log").read_text(encoding="utf-8", errors="replace")
    cut = [
        f"page {page} (TeX's numbering) runs {points:.1f} pt past its bottom"
        for points, page in overflowing_pages(latex_log)
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

.. list-table::
   :widths: 25 75

   * - ``stable_baselines3/common/on_policy_algorithm.py``, in stable_baselines3/common/buffers.py
     - a path in inline code and one in text, in a narrow column
   * - {word}
     - a word that cannot break

.. list-table::
   :widths: 50 50

{tall}

.. list-table::
   :widths: 50 50
   :class: longtable

{tall}
"""


@pytest.mark.parametrize("settings", ["sphinx", "book"])
def test_the_check_finds_a_cut_line_and_a_table_past_the_page(tmp_path, settings):
    """A small document through Sphinx's LaTeX and XeLaTeX, as the book, with Sphinx's own
    settings and with the book's (_ext/latex_book.py): an unbreakable code line, an over-long
    display, an unbreakable word in a table cell and a tabular three pages tall are found;
    a long code line with spaces is wrapped and a longtable continues over the pages. With
    Sphinx's settings the paths in a narrow table column run past it as well (inline code
    breaks at neither the underscore nor the dot, text at neither that nor the slash); with
    the book's they wrap."""
    if not (shutil.which("xelatex") and shutil.which("latexmk")):
        pytest.skip("the check needs xelatex and latexmk (see the README's 'make pdf')")
    conf = "latex_engine = 'xelatex'\n"
    if settings == "book":
        conf += f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        conf += "extensions = ['latex_book']\n"
    (tmp_path / "conf.py").write_text(conf, encoding="utf-8")
    row = "   * - " + "left " * 60 + "\n     - " + "right " * 50 + "\n"
    sample = SAMPLE.format(
        unbroken="a" * 150,
        sum=" + ".join("abcdefghijklmnopqrstuvwxyz" * 2),
        word="b" * 60,
        tall=row * 25,
    )
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
    code, display, *table = found
    assert (code.kind, display.kind) == ("code", "display"), found
    assert code.points > 100 and display.points > 100, found
    assert "a" * 50 in lines[code.line - 1]
    # TeX reports a display at its end: the line after the formula.
    assert "s = a + b + c" in lines[display.line - 2]
    assert {cell.kind for cell in table} == {"table"}, found
    words = [cell for cell in table if "b" * 50 in cell.text]
    paths = [cell for cell in table if "b" * 50 not in cell.text]
    assert len(words) == 1 and words[0].points > 100, table
    assert "b" * 50 in lines[words[0].line]
    if settings == "sphinx":
        assert {"policy", "buffers"} <= {
            name for cell in paths for name in ("policy", "buffers") if name in cell.text
        }, table
        assert all(cell.points > TOLERANCE_POINTS for cell in paths), table
    else:
        assert not [cell for cell in paths if cell.points > TOLERANCE_POINTS], table
    # The tabular runs past the bottom of its page by over a page; the longtable does not.
    ((points, page),) = overflowing_pages(latex_log)
    assert points > 500 and page >= 1


def test_a_line_of_the_table_of_contents_or_the_index_is_not_one_of_the_tex():
    """TeX numbers a report by the file it reads: the same report of line 2 while it reads
    the table of contents, then the .tex, then the index, is the .tex's once."""
    tex = "\\begin{sphinxVerbatim}\ncode\n\\end{sphinxVerbatim}\n"
    report = "Overfull \\hbox (5.0pt too wide) in paragraph at lines 2--2\n[]text\n"
    log = f"(./book.toc\n{report}\\openout6 = `book.toc'.\n{report}(./book.ind [7]\n{report}"
    assert overfull_blocks(log, tex) == [Overfull("code", 5.0, 2, "[]text")]


def test_text_in_a_table_breaks_inside_paths_and_names_only():
    """Where the book's LaTeX lets a word of a table cell's text break (_ext/latex_book.py)."""
    latex_book = load_module(ROOT / "_ext" / "latex_book.py", "_latex_book")
    split = latex_book.WORD_BREAK.split
    assert split("in verl/utils/torch_functional.py") == [
        "in verl/",
        "utils/",
        "torch_functional.",
        "py",
    ]
    assert split("algorithm.adv_estimator=gae") == ["algorithm.", "adv_estimator=", "gae"]
    for unbroken in ("gamma=0.99", "e.g. a 1/2 step", "x/y", "v1.2"):
        assert split(unbroken) == [unbroken]


def test_a_table_cell_breaks_in_a_path_and_a_list_of_symbols_not_in_code():
    """The LaTeX builder's transform of a table cell: a break point (a raw LaTeX penalty)
    after each slash and dot of a path in its text, after the comma of a list of symbols in
    a formula; inline code is left to the preamble and text outside a table is untouched."""
    from docutils import frontend, nodes, utils

    latex_book = load_module(ROOT / "_ext" / "latex_book.py", "_latex_book")
    document = utils.new_document("sample", frontend.get_default_settings())
    cell = nodes.paragraph(
        "",
        "",
        nodes.Text("in verl/utils.py, "),
        nodes.literal("", "verl/utils.py"),
        nodes.math("", r"v_\pi(s),\ q_\pi(s, a)"),
    )
    outside = nodes.paragraph("", "verl/utils.py")
    document += nodes.table(
        "", nodes.tgroup("", nodes.tbody("", nodes.row("", nodes.entry("", cell))))
    )
    document += outside
    latex_book.BreakWordsInTables(document).run()
    penalty = r"\penalty\exhyphenpenalty{}"
    assert [(type(child).__name__, child.astext()) for child in cell.children] == [
        ("Text", "in verl/"),
        ("raw", penalty),
        ("Text", "utils."),
        ("raw", penalty),
        ("Text", "py, "),
        ("literal", "verl/utils.py"),
        ("math", r"v_\pi(s),\allowbreak\ q_\pi(s, a)"),
    ]
    assert all(child["format"] == "latex" for child in cell.findall(nodes.raw))
    assert outside.astext() == "verl/utils.py" and len(outside.children) == 1


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
