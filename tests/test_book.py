"""The book builds with warnings as errors, every notebook executes once, and the built site
works offline.

Both editions are built here, strictly (``-W -n --keep-going``), against one fresh
jupyter-cache folder: the full edition executes every notebook of the table of contents, in
parallel before Sphinx reads them (``_ext/parallel_execution.py``), each in a fresh kernel
started in the notebook's own folder (what a student gets when opening one chapter as a
notebook), and the student edition reuses those outputs instead of executing the chapters a
second time. A fresh cache per run means no stale output can hide a library change
(tests/test_parallel_execution.py checks that the cache also empties itself when the library
changes).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from tests._book import ROOT, notebook_documents, toc_documents
from tests._solutions import load_module

#: The build script of the two editions (``make book-student`` runs it).
editions = load_module(ROOT / "_ext" / "student_edition.py", "_student_edition")

pytestmark = pytest.mark.book

JUPYTER_BOOK = Path(sys.executable).with_name("jupyter-book")
#: Sphinx reports problems as "WARNING: ..." or "file:line: WARNING: ..."; other tools' log
#: lines (the kernel's "[IPKernelApp] WARNING | ...") are not build problems.
SPHINX_PROBLEM = re.compile(r"(^|: )(WARNING|ERROR|CRITICAL):")
#: What the parallel execution logs for each notebook it executed, and what myst-nb logs
#: when it executes one itself (which, with every notebook executed beforehand, it must not).
EXECUTED = re.compile(r"^rlfound: executed (?P<document>\S+) \(", re.MULTILINE)
EXECUTED_WHILE_READING = re.compile(r"^\S+: Executing notebook", re.MULTILINE)


def strict_build(output: Path, *, student: bool, cache: Path) -> str:
    """Build an edition into ``output``; assert success without warnings; return the log."""
    command = editions.command(output, student=student, cache=cache)
    completed = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    log = completed.stdout + completed.stderr
    assert completed.returncode == 0, log[-6000:]
    warnings = [line for line in log.splitlines() if SPHINX_PROBLEM.search(line)]
    assert not warnings, "\n".join(warnings)
    return log


@pytest.fixture(scope="module")
def execution_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("jupyter-cache")


@pytest.fixture(scope="module")
def full_build(tmp_path_factory, execution_cache) -> tuple[Path, str]:
    """The full edition (the one `make book` builds), into a temporary folder: (site, log)."""
    output = tmp_path_factory.mktemp("book")
    log = strict_build(output, student=False, cache=execution_cache)
    return output / "_build" / "html", log


@pytest.fixture(scope="module")
def built_site(full_build) -> Path:
    return full_build[0]


@pytest.fixture(scope="module")
def student_build(tmp_path_factory, execution_cache, full_build) -> tuple[Path, str]:
    """The student edition, built after the full one with the same execution cache."""
    output = tmp_path_factory.mktemp("student")
    log = strict_build(output, student=True, cache=execution_cache)
    return output / "_build" / "html", log


def test_every_notebook_is_executed_once_before_it_is_read(full_build):
    _, log = full_build
    executed = [ROOT / f"{match['document']}.md" for match in EXECUTED.finditer(log)]
    assert sorted(executed) == sorted(notebook_documents())
    # Sphinx then reads every notebook's outputs from the cache and executes none itself.
    assert not EXECUTED_WHILE_READING.search(log)
    assert log.count("Using cached notebook") == len(executed)


def test_the_student_edition_executes_nothing_again(student_build):
    _, log = student_build
    assert not EXECUTED.search(log)
    assert not EXECUTED_WHILE_READING.search(log)
    assert "Using cached notebook" in log


def html_pages(site: Path) -> list[Path]:
    return [site / f"{document}.html" for document in toc_documents()]


def test_every_toc_document_is_rendered(built_site: Path):
    for page in html_pages(built_site):
        assert page.is_file(), page


def test_mathjax_is_served_from_the_site(built_site: Path):
    pages_with_math = 0
    for page in html_pages(built_site):
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        sources = [tag["src"] for tag in soup.find_all("script", src=True)]
        mathjax = [src for src in sources if "mathjax" in src.lower()]
        if soup.select(".math"):
            pages_with_math += 1
            assert mathjax, f"{page.name} has mathematics but loads no MathJax"
        for src in mathjax:
            assert not re.match(r"^(https?:)?//", src), f"{page.name} loads MathJax from {src}"
            target = (page.parent / src.split("?")[0]).resolve()
            assert target.is_file(), f"{page.name} points at missing {src}"
            assert target.is_relative_to(built_site.resolve())
    assert pages_with_math >= 2
    # tex-chtml renders with web fonts that must be there too.
    fonts = list((built_site / "_static" / "mathjax").rglob("*.woff"))
    assert fonts


def test_chapters_show_executed_outputs(built_site: Path):
    chapter = built_site / "chapters" / "01_foundations.html"
    soup = BeautifulSoup(chapter.read_text(encoding="utf-8"), "html.parser")
    assert soup.select(".cell_output"), "no executed output in chapter 1"
    assert soup.find("img"), "no figure in chapter 1"


def test_bibliography_lists_the_cited_works(built_site: Path):
    text = (built_site / "bibliography.html").read_text(encoding="utf-8")
    for author in ("Williams", "Sutton", "Schulman", "Lambert"):
        assert author in text


def test_solutions_appendix_has_every_exercise_solution(built_site: Path):
    text = (built_site / "solutions" / "01_foundations.html").read_text(encoding="utf-8")
    for label in (
        "sol-bellman-arithmetic",
        "sol-score-function-gradient",
        "sol-importance-sampling",
        "sol-gae-recursion",
    ):
        assert f'id="{label}"' in text, label


def test_a_failing_cell_fails_the_build(tmp_path: Path):
    """With the book's own configuration, an exception in any cell stops the build."""
    (tmp_path / "_config.yml").write_text(
        (ROOT / "_config.yml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (tmp_path / "references.bib").write_text(
        (ROOT / "references.bib").read_text(encoding="utf-8"), encoding="utf-8"
    )
    shutil.copytree(ROOT / "_ext", tmp_path / "_ext")
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: index\n", encoding="utf-8")
    (tmp_path / "index.md").write_text(
        (ROOT / "chapters" / "01_foundations.md").read_text(encoding="utf-8").split("\n---\n")[0]
        + "\n---\n# Broken\n\n```{code-cell} ipython3\nraise RuntimeError('cell failed')\n```\n",
        encoding="utf-8",
    )
    completed = subprocess.run(
        [str(JUPYTER_BOOK), "build", str(tmp_path), "-W", "-n", "--keep-going"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode != 0
    assert "cell failed" in completed.stdout + completed.stderr


def test_the_student_edition_has_no_solutions(student_build):
    site, _ = student_build
    assert not (site / "solutions").exists()
    chapters = [site / f"{document}.html" for document in toc_documents()]
    chapters = [page for page in chapters if page.parent.name == "chapters"]
    assert chapters
    for page in chapters:
        html = page.read_text(encoding="utf-8")
        assert 'id="sol-' not in html
        assert 'href="../solutions/' not in html, page.name
        # Every exercise still says where its solution is, without a dangling link.
        text = " ".join(BeautifulSoup(html, "html.parser").get_text().split())
        assert "Solution (instructor edition)" in text, page.name


def test_the_student_edition_shows_the_executed_chapters(student_build):
    site, _ = student_build
    soup = BeautifulSoup(
        (site / "chapters" / "01_foundations.html").read_text("utf-8"), "html.parser"
    )
    assert soup.select(".cell_output")
