"""The book builds with warnings as errors, and the built site works offline."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from tests._book import ROOT, toc_documents

pytestmark = pytest.mark.book

JUPYTER_BOOK = Path(sys.executable).with_name("jupyter-book")


@pytest.fixture(scope="module")
def built_site(tmp_path_factory) -> Path:
    """Build the whole book once, as `make book` does, into a temporary folder."""
    output = tmp_path_factory.mktemp("book")
    command = [str(JUPYTER_BOOK), "build", str(ROOT), "-W", "-n", "--keep-going"]
    completed = subprocess.run(
        [*command, "--path-output", str(output)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    log = completed.stdout + completed.stderr
    assert completed.returncode == 0, log[-6000:]
    # Sphinx reports problems as "WARNING: ..." or "file:line: WARNING: ..."; other tools'
    # log lines (the kernel's "[IPKernelApp] WARNING | ...") are not build problems.
    sphinx_problem = re.compile(r"(^|: )(WARNING|ERROR|CRITICAL):")
    warnings = [line for line in log.splitlines() if sphinx_problem.search(line)]
    assert not warnings, "\n".join(warnings)
    return output / "_build" / "html"


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


def test_the_student_edition_builds_without_solutions(tmp_path: Path):
    completed = subprocess.run(
        [sys.executable, str(ROOT / "_ext" / "student_edition.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    log = completed.stdout + completed.stderr
    assert completed.returncode == 0, log[-6000:]
    sphinx_problem = re.compile(r"(^|: )(WARNING|ERROR|CRITICAL):")
    assert not [line for line in log.splitlines() if sphinx_problem.search(line)]
    site = tmp_path / "_build" / "html"
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
