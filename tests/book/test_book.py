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
The student edition is built as an institution would publish it for a course, with launch
buttons for a sample JupyterHub.

The full edition is then opened in headless Chromium with the network off (``tests/_browser.py``):
every chapter and solution page must typeset all of its mathematics, load all of its figures,
log no error, show no listing or display equation wider than its box at a 1280-pixel window,
and offer its executed notebook for download. Screenshots of each page's first
screen are kept in ``_build/screenshots/`` (whole pages with
``RLFOUND_FULL_PAGE_SCREENSHOTS=1``).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import jupytext
import nbformat
import pytest
from bs4 import BeautifulSoup

import rlfound
from tests import _browser
from tests._book import (
    ROOT,
    library_listings,
    notebook_documents,
    solution_listings,
    toc_documents,
)
from tests._solutions import load_module
from tests.book import test_citation as citation
from tests.book import test_notebook_conversion as notebook_conversion

#: The build script of the two editions (``make book-student`` runs it).
editions = load_module(ROOT / "_ext" / "student_edition.py", "_student_edition")

pytestmark = pytest.mark.book

JUPYTER_BOOK = Path(sys.executable).with_name("jupyter-book")
#: How much lower the book's builds and browser run than the rest of the tests (see below).
BOOK_NICENESS = 10
#: Sphinx reports problems as "WARNING: ..." or "file:line: WARNING: ..."; other tools' log
#: lines (the kernel's "[IPKernelApp] WARNING | ...") are not build problems.
SPHINX_PROBLEM = re.compile(r"(^|: )(WARNING|ERROR|CRITICAL):")
#: What the parallel execution logs for each notebook it executed, and what myst-nb logs
#: when it executes one itself (which, with every notebook executed beforehand, it must not).
EXECUTED = re.compile(r"^rlfound: executed (?P<document>\S+) \(", re.MULTILINE)
EXECUTED_WHILE_READING = re.compile(r"^\S+: Executing notebook", re.MULTILINE)


#: The two ``_config.yml`` entries the README tells a teacher to set for launch buttons, with
#: a sample hub, Colab and a sample repository.
SAMPLE_HUB = "https://hub.example.edu"
COLAB = "https://colab.research.google.com"
SAMPLE_REPOSITORY = "https://github.com/example-university/rlfound"
LAUNCH_SETTINGS = {
    "launch_buttons": {"jupyterhub_url": SAMPLE_HUB, "colab_url": COLAB},
    "repository": {"url": SAMPLE_REPOSITORY, "branch": "main"},
}
colab_notebooks = load_module(ROOT / "_ext" / "colab_notebooks.py", "_colab_notebooks")


def strict_build(output: Path, *, student: bool, cache: Path, settings: dict | None = None) -> str:
    """Build an edition into ``output``; assert success without warnings; return the log."""
    command = editions.command(output, student=student, cache=cache, settings=settings)
    completed = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    log = completed.stdout + completed.stderr
    assert completed.returncode == 0, log[-6000:]
    warnings = [line for line in log.splitlines() if SPHINX_PROBLEM.search(line)]
    assert not warnings, "\n".join(warnings)
    return log


# Session scope, not module scope: pytest-xdist may run another module's test between two of
# this module's on the same worker, which would tear module fixtures down and build again.
@pytest.fixture(scope="session")
def execution_cache(tmp_path_factory) -> Path:
    # The builds, their kernels and the browser yield the CPU to the grader's tests, which
    # time submissions by the wall clock on another worker of the same run (make test).
    # Niceness only goes up: this worker stays at the lower priority for the rest of the run.
    os.nice(BOOK_NICENESS)
    return tmp_path_factory.mktemp("jupyter-cache")


@pytest.fixture(scope="session")
def full_build(tmp_path_factory, execution_cache) -> tuple[Path, str]:
    """The full edition (the one `make book` builds), into a temporary folder: (site, log)."""
    output = tmp_path_factory.mktemp("book")
    log = strict_build(output, student=False, cache=execution_cache)
    return output / "_build" / "html", log


@pytest.fixture(scope="session")
def built_site(full_build) -> Path:
    return full_build[0]


@pytest.fixture(scope="session")
def student_build(tmp_path_factory, execution_cache, full_build) -> tuple[Path, str]:
    """The student edition, built after the full one with the same execution cache, with
    launch buttons for a sample JupyterHub."""
    output = tmp_path_factory.mktemp("student")
    log = strict_build(output, student=True, cache=execution_cache, settings=LAUNCH_SETTINGS)
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


def test_every_image_has_alt_text(built_site: Path):
    # Without alt metadata myst-nb's images fall back to their file name as alt text.
    images, missing = 0, []
    for page in html_pages(built_site):
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for image in soup.select("article img"):
            images += 1
            alt = image.get("alt", "").strip()
            if not alt or alt == image.get("src") or re.search(r"\.(png|jpe?g|svg|gif)$", alt):
                missing.append(f"{page.relative_to(built_site)}: {image.get('src')} alt={alt!r}")
    assert images >= 14, "expected at least one figure per chapter"
    assert not missing, "images without alt text:\n" + "\n".join(missing)


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


@functools.lru_cache(maxsize=32)
def soup_of(page: Path) -> BeautifulSoup:
    """The parsed page, parsed once (read only: the tests that share it never change it)."""
    return BeautifulSoup(page.resolve().read_text(encoding="utf-8"), "html.parser")


def test_listings_are_trimmed_and_link_to_the_api_reference(built_site: Path):
    shown = 0
    for path in notebook_documents():
        objects = library_listings(path)
        page = built_site / path.relative_to(ROOT).with_suffix(".html")
        blocks = soup_of(page).select("div.library-listing")
        assert len(blocks) == len(objects), page.name
        for object_path, block in zip(objects, blocks, strict=True):
            module, _, name = object_path.rpartition(".")
            text = block.get_text()
            assert f"def {name}(" in text, object_path
            for left_out in ("Parameters", "Returns\n", "Examples", ">>>", "Book:"):
                assert left_out not in text, f"{page.name}: {object_path} shows {left_out!r}"
            link = block.find_next_sibling("p", class_="listing-api-link")
            assert link is not None and link.find("a") is not None, object_path
            href = link.find("a")["href"]
            assert href == f"../api/{module.rpartition('.')[2]}.html#{object_path}"
            target = soup_of(page.parent / href.split("#")[0])
            assert target.find("dt", id=object_path) is not None, object_path
            shown += 1
    assert shown >= 100


def test_solution_listings_show_the_reference_code(built_site: Path):
    """A solution page's listings show the code the pack's notebooks show (the same reader,
    tests/book/test_classpack.py); not being library listings, they are not among the boxes
    the test above counts."""
    listing = load_module(ROOT / "_ext" / "listing.py", "_book_listing")
    roots = {"solutions": ROOT / "solutions"}
    shown = 0
    for path in notebook_documents():
        listed = solution_listings(path)
        page = soup_of(built_site / path.relative_to(ROOT).with_suffix(".html"))
        boxes = [box.get_text() for box in page.select("div.highlight-python pre")]
        for object_path, options in listed:
            forms = {form: True for form in ("solution", "verbatim") if form in options}
            code = listing.read_listing(object_path, roots, **forms).code
            assert code in boxes, (path.name, object_path)
            shown += 1
    assert shown >= len(list((ROOT / "solutions").glob("[0-9][0-9]_*.md")))


@pytest.mark.parametrize("module_name", [name for name in rlfound.__all__ if name[0] != "_"])
def test_every_public_function_is_on_its_api_page(built_site: Path, module_name: str):
    module = importlib.import_module(f"rlfound.{module_name}")
    soup = soup_of(built_site / "api" / f"{module_name}.html")
    documented = {tag["id"] for tag in soup.select("dt[id]")}
    public = [
        name
        for name in module.__all__
        if inspect.isfunction(getattr(module, name)) or inspect.isclass(getattr(module, name))
    ]
    assert public
    missing = [name for name in public if f"{module.__name__}.{name}" not in documented]
    assert not missing, f"{module_name} page lacks {missing}"


def chapter_page(number: int) -> str:
    (source,) = (ROOT / "chapters").glob(f"{number:02d}_*.md")
    return f"../chapters/{source.stem}.html"


def api_entries(built_site: Path):
    """(``module.name``, docstring, the entry's ``dd`` on the API page) of every public
    function and class of the library."""
    for module_name in (name for name in rlfound.__all__ if name[0] != "_"):
        module = importlib.import_module(f"rlfound.{module_name}")
        soup = soup_of(built_site / "api" / f"{module_name}.html")
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            entry = soup.find("dt", id=f"{module.__name__}.{name}").find_next_sibling("dd")
            yield f"{module_name}.{name}", inspect.getdoc(obj) or "", entry


def test_book_lines_link_to_the_equation_and_the_chapter(built_site: Path):
    checked = 0
    for where, docstring, entry in api_entries(built_site):
        line = re.search(r"^Book: equations? (.+), chapter (\d+)\.$", docstring, re.MULTILINE)
        if line is None:
            continue
        chapter = chapter_page(int(line[2]))
        paragraph = next(p for p in entry.find_all("p") if p.get_text().startswith("Book:"))
        links = {a["href"] for a in paragraph.find_all("a")}
        assert chapter in links, f"{where}: {links}"
        for label in re.findall(r"eq-[a-z0-9-]+", line[1]):
            assert f"{chapter}#equation-{label}" in links, f"{where}: {label}"
            anchors = soup_of(built_site / "api" / chapter).find_all(id=f"equation-{label}")
            assert anchors, f"{chapter} has no equation {label}"
        checked += 1
    assert checked >= 100


def displayed_latex(block) -> str:
    """The LaTeX of a typeset display (a ``div.math``), without its number and the delimiters
    and ``split`` wrapper Sphinx adds; line by line, since MyST keeps the source's line breaks
    around it and reStructuredText does not."""
    text = "".join(child.get_text() for child in block.children if child.name != "span")
    text = text.strip().removeprefix("\\[").removesuffix("\\]").strip()
    text = text.removeprefix("\\begin{split}").removesuffix("\\end{split}")
    return "\n".join(line.strip() for line in text.strip().splitlines())


def test_api_entries_typeset_the_books_equations(built_site: Path):
    """Every public function whose "Book:" line names an equation shows it typeset, the same
    LaTeX as the chapter's, each with the chapter's number linked to it."""
    checked = 0
    for where, docstring, entry in api_entries(built_site):
        book = " ".join(re.findall(r"^Book:.*$", docstring, re.MULTILINE))
        labels = re.findall(r"\((eq-[a-z0-9-]+)\)", book)
        if not labels:
            continue
        shown = entry.select("div.book-equation")
        assert len(shown) == len(labels), where
        for label, block in zip(labels, shown, strict=True):
            number = block.select_one("p > a")
            chapter, _, anchor = number["href"].partition("#")
            assert anchor == f"equation-{label}", where
            original = soup_of(built_site / "api" / chapter).find(id=anchor)
            eqno = original.select_one("span.eqno").find(string=True).strip()
            assert number.get_text() == eqno, label
            latex = displayed_latex(block.select_one("div.math"))
            assert latex and latex == displayed_latex(original), where
        checked += 1
    assert checked >= 100


def test_api_entries_typeset_the_latex_of_their_notes(built_site: Path):
    """An equation the book has no numbered display for is typeset from the ``.. math::``
    block of the docstring's Notes (tests/book/test_api_reference.py says which have one)."""
    checked = 0
    for where, docstring, entry in api_entries(built_site):
        blocks = re.findall(r"^\.\. math::\n\n((?:   .*\n|\n)+)", docstring + "\n", re.M)
        shown = [displayed_latex(block) for block in entry.select("div.math")]
        for body in blocks:
            latex = "\n".join(line.strip() for line in body.strip().splitlines())
            assert latex in shown, f"{where}: {shown}"
        checked += bool(blocks)
    assert checked >= 7


def test_an_api_entry_shows_its_equation_and_examples(built_site: Path):
    soup = soup_of(built_site / "api" / "returns.html")
    entry = soup.find("dt", id="rlfound.returns.discounted_cumsum").find_next_sibling("dd")
    equation = entry.select_one("div.docstring-equation")
    assert equation.get_text().startswith("y_t = x_t + c_t y_{t+1},    y_T = 0,")
    assert "discounted_cumsum([1.0, 0.0, 2.0], 0.5)" in entry.select_one("div.doctest").get_text()
    assert [dt.get_text() for dt in entry.select("dl.field-list > dt")][:3] == [
        "Parameters:",
        "Returns:",
        "Raises:",
    ]


def test_a_failing_cell_fails_the_build(tmp_path: Path):
    """With the book's own configuration, an exception in any cell stops the build."""
    # The configuration and what its extensions read: the citations, the version and the
    # citation metadata of the footer.
    for name in ("_config.yml", "references.bib", "pyproject.toml", "CITATION.cff"):
        shutil.copy(ROOT / name, tmp_path / name)
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


def test_the_student_edition_holds_no_answer(student_build, built_site):
    """No page, source or download of the student edition holds a reference solution's code
    or a worked solution's prose; the full edition holds them, which shows the search finds
    them (tests/grading/_answers.py)."""
    from tests.grading._answers import find_answers, reference_regions

    site, _ = student_build
    assert find_answers(site) == []
    found = " ".join(find_answers(built_site))
    assert all(name in found for name, _, lines in reference_regions() if len(lines) >= 40)
    assert "worked solution prose" in found


def test_the_student_edition_has_the_api_reference(student_build):
    site, _ = student_build
    soup = soup_of(site / "api" / "returns.html")
    assert soup.find("dt", id="rlfound.returns.discounted_cumsum")


def test_the_student_edition_shows_the_executed_chapters(student_build):
    site, _ = student_build
    soup = BeautifulSoup(
        (site / "chapters" / "01_foundations.html").read_text("utf-8"), "html.parser"
    )
    assert soup.select(".cell_output")


def notebook_pages(*, student: bool = False) -> list[str]:
    """The documents rendered from notebooks (chapters and, in the full edition, solutions)."""
    documents = [path.relative_to(ROOT).with_suffix("").as_posix() for path in notebook_documents()]
    return [name for name in documents if not (student and name.startswith("solutions/"))]


def download_links(site: Path, document: str) -> dict[str, str]:
    """The entries of a page's download menu: text to link, as written in the HTML."""
    soup = BeautifulSoup((site / f"{document}.html").read_text("utf-8"), "html.parser")
    menu = soup.select(".dropdown-download-buttons .dropdown-menu > li > *")
    return {" ".join(item.get_text().split()): item.get("href", "") for item in menu}


def assert_executed_copy(notebook: nbformat.NotebookNode, document: str) -> None:
    """``notebook`` is a valid notebook of ``document``'s code, executed, with outputs."""
    nbformat.validate(notebook)
    source = jupytext.read(ROOT / f"{document}.md")
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.source for cell in code] == [
        cell.source for cell in source.cells if cell.cell_type == "code"
    ], document
    assert all(cell.execution_count for cell in code), f"{document}: a cell was not executed"
    assert any(cell.outputs for cell in code), f"{document}: no outputs"


@pytest.mark.parametrize("edition", ["full", "student"])
def test_every_notebook_page_offers_its_executed_notebook(edition, request):
    site, _ = request.getfixturevalue(f"{edition}_build")
    documents = notebook_pages(student=edition == "student")
    assert any(name.startswith("chapters/") for name in documents)
    for document in documents:
        links = download_links(site, document)
        assert ".ipynb" in links, f"{document}: download menu offers only {sorted(links)}"
        target = (site / document).parent / links[".ipynb"]
        assert target.resolve() == (site / "_sources" / f"{document}.ipynb").resolve()
        assert_executed_copy(nbformat.read(target, as_version=4), document)
    # Pages that are not notebooks offer no notebook.
    assert ".ipynb" not in download_links(site, "intro")


@pytest.mark.parametrize("edition", ["full", "student"])
def test_every_downloadable_notebook_is_plain_markdown(edition, request):
    """No MyST left in a Markdown cell; every link to a notebook names one the site offers."""
    site, _ = request.getfixturevalue(f"{edition}_build")
    notebook_conversion.check_downloads(site)


def test_the_plain_notebooks_numbers_and_citations_are_the_books(built_site):
    """tests/book/test_notebook_conversion.py: equation, figure, exercise and theorem numbers,
    section titles and citation labels of the converted notebooks, against the HTML."""
    notebook_conversion.check_numbers(built_site)
    notebook_conversion.check_citations(built_site)


def test_every_page_shows_the_version_and_links_to_the_errata(built_site):
    """tests/book/test_citation.py: pyproject.toml's version and the build date in every footer."""
    citation.check_footer(built_site)


def test_launch_buttons_open_the_chapters_from_the_repository(student_build):
    """With the two settings of the README, each chapter's JupyterHub button pulls the
    repository onto the hub and opens that chapter's notebook, a file of the repository."""
    site, _ = student_build
    repository_name = SAMPLE_REPOSITORY.rsplit("/", 1)[1]
    documents = notebook_pages(student=True)
    for document in documents:
        soup = BeautifulSoup((site / f"{document}.html").read_text("utf-8"), "html.parser")
        buttons = soup.select(".dropdown-launch-buttons .dropdown-menu a")
        assert [" ".join(a.get_text().split()) for a in buttons] == ["JupyterHub", "Colab"]
        url = urlsplit(buttons[0]["href"])
        assert f"{url.scheme}://{url.netloc}" == SAMPLE_HUB
        assert url.path == "/hub/user-redirect/git-pull"
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        assert query["repo"] == SAMPLE_REPOSITORY
        assert query["branch"] == "main"
        # nbgitpuller clones into a folder named after the repository; the rest of the path
        # is the notebook's path in the repository.
        prefix = f"tree/{repository_name}/"
        assert query["urlpath"].startswith(prefix), query["urlpath"]
        opened = ROOT / query["urlpath"][len(prefix) :]
        assert opened == ROOT / f"{document}.md"
        assert opened in notebook_documents()
    # Pages without a notebook have nothing to launch.
    soup = BeautifulSoup((site / "intro.html").read_text("utf-8"), "html.parser")
    assert not soup.select(".dropdown-launch-buttons")


def test_colab_buttons_open_the_notebooks_make_notebooks_writes(student_build, tmp_path):
    """Each chapter's Colab button opens, from the sample repository, the notebook that
    ``make notebooks`` writes for it; that notebook is plain and installs rlfound first."""
    site, _ = student_build
    written = colab_notebooks.write_notebooks(tmp_path / "notebooks", SAMPLE_REPOSITORY, "main")
    opened = set()
    for document in notebook_pages(student=True):
        soup = BeautifulSoup((site / f"{document}.html").read_text("utf-8"), "html.parser")
        (button,) = [
            a
            for a in soup.select(".dropdown-launch-buttons .dropdown-menu a")
            if a.get_text().strip() == "Colab"
        ]
        prefix = f"{COLAB}/github/example-university/rlfound/blob/main/"
        assert button["href"].startswith(prefix), button["href"]
        path = tmp_path / button["href"][len(prefix) :]
        assert path == tmp_path / "notebooks" / f"{document}.ipynb"
        opened.add(path)
    assert opened == set(written)
    first = nbformat.read(written[0], as_version=4).cells[0]
    assert 'if "google.colab" in sys.modules:' in first.source
    assert f'%pip install --quiet "rlfound @ git+{SAMPLE_REPOSITORY}@main"' in first.source
    notebook_conversion.check_plain_folder(tmp_path / "notebooks")


# -- In a real browser, offline -------------------------------------------------------------

SCREENSHOTS = ROOT / "_build" / "screenshots"
BROWSER_PAGES = [
    document for document in toc_documents() if document.startswith(("chapters/", "solutions/"))
]
#: A word of chapter 4's text that few other pages use.
SEARCH_TERM, SEARCH_PAGE = "Gymnasium", "chapters/04_critics_gae_timeouts"


@pytest.fixture(scope="module")  # Playwright's sync API allows one browser per thread at a time
def browser(request):
    """Headless Chromium over the full edition, served locally; skips without a browser."""
    reason = _browser.unavailable()
    if reason:
        pytest.skip(f"no browser for the browser tests: {reason}")
    site = request.getfixturevalue("built_site")
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    with _browser.open_site(site, SCREENSHOTS) as session:
        yield session


@pytest.mark.parametrize("document", BROWSER_PAGES)
def test_a_page_renders_offline_in_a_browser(browser, document):
    report = browser.inspect(document)
    assert not report.failed_requests, report.failed_requests
    assert not report.console_errors, report.console_errors
    math = report.math
    assert not math["errors"], f"MathJax errors: {math['errors']}"
    assert not math["untypeset"], f"formulas left as TeX: {math['untypeset']}"
    assert not report.raw_tex, f"raw TeX in the text: {report.raw_tex}"
    if math["formulas"]:
        assert math["loaded"] and math["containers"] > 0, math
    assert not report.images["broken"], f"images not loaded: {report.images['broken']}"
    # At the 1280-pixel window of the browser (tests/_browser.py): no listing or display
    # equation makes the reader scroll sideways.
    assert not report.wide_blocks, f"{document}: wider than their box: {report.wide_blocks}"
    assert (browser.screenshots / f"{document}.png").stat().st_size > 0
    assert ".ipynb" in report.downloads, f"download menu: {sorted(report.downloads)}"
    assert_executed_copy(nbformat.reads(report.notebook, as_version=4), document)


def test_browser_pages_cover_every_chapter_and_solution():
    assert len([page for page in BROWSER_PAGES if page.startswith("chapters/")]) >= 14
    assert len([page for page in BROWSER_PAGES if page.startswith("solutions/")]) >= 14


#: How many of the matched elements a reader sees (laid out and not hidden).
VISIBLE_COUNT = (
    "elements => elements.filter(e => e.getClientRects().length > 0"
    " && getComputedStyle(e).visibility !== 'hidden').length"
)


def test_a_page_has_one_search_control(browser):
    """The header's search button only: the sidebar's second field to the same dialog is gone."""
    page, _ = browser.open(f"{SEARCH_PAGE}.html")
    try:
        assert page.locator("button.search-button__button").evaluate_all(VISIBLE_COUNT) == 1
    finally:
        page.close()


def test_search_finds_a_term_of_chapter_4(browser):
    page, report = browser.open(f"search.html?q={SEARCH_TERM}")
    try:
        summary = page.locator("#search-results .search-summary")
        summary.wait_for(state="visible")
        page.wait_for_function(
            "() => /finished|did not match/i.test("
            "document.querySelector('#search-results .search-summary')"
            ".textContent)"
        )
        links = page.locator("#search-results ul.search li a").evaluate_all(
            "(links) => links.map((link) => link.href)"
        )
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "search.png"), full_page=browser.full_page)
    finally:
        page.close()
    assert not report.failed_requests and not report.console_errors, report
    assert any(link.split("#")[0].endswith(f"{SEARCH_PAGE}.html") for link in links), links
