"""Notebooks handed to readers are plain Markdown: no MyST left, numbers as the book's.

The conversion (``rlfound.grading.distribution.plain``) is checked three ways: exactly, on a
small book written here; against the built book (tests/book/test_book.py, which owns the builds,
runs the checks defined here), whose HTML is the oracle of every equation, figure, exercise and
theorem number, of every section title a ``{ref}`` shows and of every citation label; and on
every notebook a reader gets (the class pack's and the download menu's of both editions),
which the book's own parser must find free of roles, directives, targets and equation labels.
"""

from __future__ import annotations

import posixpath
import re
import shutil
import types
from pathlib import Path

import nbformat
import pytest
import yaml
from bs4 import BeautifulSoup

from rlfound.cli import main
from rlfound.grading.distribution import classpack, plain
from tests._book import ROOT, toc_documents
from tests._solutions import load_module

BIB = """@book{sutton2018,
  author = {Sutton, Richard S. and Barto, Andrew G.},
  title = {Reinforcement Learning: An Introduction},
  publisher = {MIT Press}, year = {2018}
}
@article{williams1992,
  author = {Williams, Ronald J.}, title = {Simple statistical gradient-following algorithms},
  journal = {Machine Learning}, year = {1992}
}
@inproceedings{schulman2016,
  author = {Schulman, John and Moritz, Philipp and Levine, Sergey},
  title = {High-dimensional continuous control}, booktitle = {ICLR}, year = {2016}
}
"""
TWICE = '''def twice(x):
    """Twice x."""
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION
'''
HEADER = "---\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n\n"
FIRST = """(ch-one)=
# One

$$
x = 1
$$ (eq-one)

$$
y = 2
$$ (eq-two)

```{prf:theorem} Big
:label: thm-big

It holds {cite:p}`sutton2018,williams1992`.
```

```{admonition} Key equations
:class: note

- $x = 1$. {checked}`eq-one`
```
"""
SECOND = """# Two

(sec-two)=
## Second section

By {eq}`eq-one` and {eq}`eq-four`, {prf:ref}`thm-big` and {numref}`ex-two` of
{ref}`ch-one`, as {cite:t}`schulman2016` say; see {ref}`the second <sec-two>`,
{doc}`01_one` and {numref}`Exercise {number}: {name} <ex-two>`.

```{exercise} ★ Try
:label: ex-two

Show {eq}`eq-four`:

$$
z = 4
$$ (eq-four)
```
"""


@pytest.fixture
def small_book(tmp_path) -> plain.Book:
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    (chapters / "01_one.md").write_text(HEADER + FIRST, encoding="utf-8")
    (chapters / "02_two.md").write_text(HEADER + SECOND, encoding="utf-8")
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    # A folder of reference solutions, which its listings read as the top-level name solutions.
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "twice.py").write_text(TWICE, encoding="utf-8")
    roots = {"solutions": tmp_path / "reference"}
    return plain.load_book({"chapters": chapters}, tmp_path / "refs.bib", roots)


def convert(book: plain.Book, page: str, text: str, book_url: str | None = None) -> str:
    notebooks = {name: f"{name}.ipynb" for name in book.pages}
    link = plain.linker(page, notebooks, book_url)
    context = plain.Context(page, book.index, book.bibliography, link, book.roots)
    return plain.convert_markdown(text, context)


def test_a_small_book_converts_exactly(small_book):
    assert convert(small_book, "chapters/01_one", FIRST) == (
        "# One\n\n$$\nx = 1\n\\tag{1.1}\n$$\n\n$$\ny = 2\n\\tag{1.2}\n$$\n\n"
        "**Theorem 1.1** (Big)\n\n"
        "It holds (Sutton and Barto, 2018; Williams, 1992).\n\n"
        "> **Key equations**\n>\n> - $x = 1$.\n"
    )
    assert convert(small_book, "chapters/02_two", SECOND) == (
        "# Two\n\n## Second section\n\n"
        "By [(1.1)](01_one.ipynb) and (2.1), [Theorem 1.1](01_one.ipynb) and Exercise 2.1 of\n"
        "[One](01_one.ipynb), as Schulman et al. (2016) say; see the second,\n"
        "[One](01_one.ipynb) and Exercise 2.1: ★ Try.\n\n"
        "**Exercise 2.1** (★ Try)\n\nShow (2.1):\n\n$$\nz = 4\n\\tag{2.1}\n$$\n"
    )


def test_with_a_book_url_references_link_to_its_pages(small_book):
    text = "{eq}`eq-one`, {ref}`sec-two`"
    assert convert(small_book, "chapters/02_two", text, "https://b.example/rl/") == (
        "[(1.1)](https://b.example/rl/chapters/01_one.html#equation-eq-one), "
        "[Second section](https://b.example/rl/chapters/02_two.html#sec-two)"
    )


def test_a_notebook_lists_the_works_it_cites_at_its_end(small_book):
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell("{cite:t}`williams1992` and {cite:p}`sutton2018`")]
    )
    plain.plain_notebook(notebook, "chapters/01_one", small_book, lambda page, target: None)
    assert notebook.cells[0].source == "Williams (1992) and (Sutton and Barto, 2018)"
    assert notebook.cells[-1].source.splitlines() == [
        "## References",
        "",
        "- Sutton and Barto, 2018. Richard S. Sutton and Andrew G. Barto. Reinforcement "
        "Learning: An Introduction. MIT Press, 2018.",
        "- Williams, 1992. Ronald J. Williams. Simple statistical gradient-following "
        "algorithms. Machine Learning, 1992.",
    ]


def test_a_solution_listing_is_its_code_from_the_books_folder(small_book):
    text = (
        "Before.\n\n```{listing} solutions.twice.twice\n:solution:\n:caption: twice(x)\n```\n\n"
        "````{note}\n```{listing} solutions.twice.twice\n:verbatim:\n```\n````\n"
    )
    assert convert(small_book, "chapters/01_one", text) == (
        "Before.\n\n*twice(x)*\n\n```python\nreturn 2 * x\n```\n\n"
        '> **Note**\n>\n> ```python\n> def twice(x):\n>     """Twice x."""\n'
        ">     return 2 * x\n> ```\n"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("```{margin}\nHi\n```", "chapters/01_one: a {margin} directive has no plain Markdown"),
        ("{sub-ref}`x`", "chapters/01_one: a {sub-ref} role has no plain Markdown form"),
        ("{cite:p}`nobody2020`", "cite: no work 'nobody2020' in the bibliography"),
        ("{eq}`eq-missing`", "chapters/01_one: {eq} to 'eq-missing', which is not defined"),
        ("```{solution} ex-missing\nHi\n```", "chapters/01_one: a solution of 'ex-missing'"),
        # Code is shown through {listing} alone: the pack no longer reads literalinclude.
        (
            "```{literalinclude} twice.py\n:pyobject: twice\n```",
            "chapters/01_one: a {literalinclude} directive has no plain Markdown form",
        ),
        (
            "```{listing} solutions.twice.twice\n:dedent:\n```",
            "listing: unsupported option(s) ['dedent'] for solutions.twice.twice",
        ),
        (
            "```{listing} solutions.missing.twice\n:solution:\n```",
            "no module 'solutions.missing' in ",
        ),
    ],
)
def test_what_has_no_plain_form_is_an_error(small_book, text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        convert(small_book, "chapters/01_one", text)


def test_the_parser_finds_myst_left_in_a_text():
    text = "(lab)=\n# T {ref}`lab`\n\n$$\nx\n$$ (eq-x)\n\n:::{note}\nHi\n:::\n\n`{eq}` in code\n"
    assert plain.myst_left(text) == [
        "target (lab)=",
        "role {ref}",
        "equation label (eq-x)",
        "directive {note}",
    ]


def test_the_book_numbers_its_chapters_in_the_order_of_their_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    numbered = [
        e["file"] for part in toc["parts"] if part.get("numbered") for e in part["chapters"]
    ]
    assert numbered == sorted(f"chapters/{p.stem}" for p in ROOT.glob("chapters/[0-9][0-9]_*.md"))


def test_the_colab_button_opens_the_generated_notebook_and_only_on_chapters():
    colab = load_module(ROOT / "_ext" / "colab_notebooks.py", "_colab_notebooks")
    options = {"repository_branch": "notebooks", "path_to_docs": "book/"}
    app = types.SimpleNamespace(config=types.SimpleNamespace(html_theme_options=options))

    def buttons(page: str) -> list[dict]:
        source = f"https://colab.research.google.com/github/o/r/blob/notebooks/book/{page}.md"
        context = {
            "header_buttons": [
                {"label": "launch-buttons", "buttons": [{"text": "Colab", "url": source}]}
            ]
        }
        colab._point_colab_at_the_notebook(app, page, "page.html", context, None)
        return context["header_buttons"][0]["buttons"]

    assert buttons("chapters/04_x") == [
        {
            "text": "Colab",
            "url": "https://colab.research.google.com/github/o/r/blob/notebooks/book/notebooks/"
            "chapters/04_x.ipynb",
        }
    ]
    assert buttons("solutions/04_x") == []


@pytest.mark.parametrize(
    "repository", ["https://gitlab.com/o/r", "https://github.com/o", "github.com/o/r"]
)
def test_make_notebooks_needs_a_github_repository(repository, capsys):
    colab = load_module(ROOT / "_ext" / "colab_notebooks.py", "_colab_notebooks")
    with pytest.raises(SystemExit) as stopped:
        colab.main(["--repository", repository, "--out", "/nonexistent"])
    assert stopped.value.code == 2
    assert (
        "argument --repository: repository must be https://github.com/OWNER/NAME "
        f"(Colab opens GitHub), got {repository!r}" in capsys.readouterr().err
    )


def markdown_of(notebook: nbformat.NotebookNode) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == "markdown"]


def assert_plain(path: Path, notebook: nbformat.NotebookNode, folder: Path) -> None:
    """No MyST in ``notebook``'s Markdown, and every relative link names a notebook there."""
    for source in markdown_of(notebook):
        assert plain.myst_left(source) == [], (path.name, source[:300])
        for url in re.findall(r"\]\(([^)\s]+\.ipynb)\)", source):
            assert (path.parent / url).resolve().is_relative_to(folder.resolve()), url
            assert (path.parent / url).is_file(), (path.name, url)


@pytest.fixture(scope="module")
def teaching_pack(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pack") / "pack"
    assert main(["classpack", "--out", str(folder), "--with-solutions"]) == 0
    return folder


@pytest.mark.slow
def test_every_pack_notebook_is_plain_markdown(teaching_pack):
    folder = teaching_pack
    notebooks = sorted(folder.rglob("*.ipynb"))
    assert len(notebooks) > len(list(ROOT.glob("chapters/[0-9][0-9]_*.md")))
    for path in notebooks:
        assert_plain(path, nbformat.read(path, as_version=4), folder)
    chapter = nbformat.read(folder / "chapters" / "04_critics_gae_timeouts.ipynb", as_version=4)
    text = "\n".join(markdown_of(chapter))
    assert "\\tag{4.1}" in text and "**Exercise 4.1** (★ An optimistic critic)" in text
    assert "[Solution](../solutions-teaching-team-only/04_critics_gae_timeouts.ipynb)" in text
    assert markdown_of(chapter)[-1].startswith("## References\n\n- ")


#: What a MyST construct leaves in rendered text: a role, a fence, an option line, a target.
MYST_TEXT = re.compile(r"\{[a-z:-]+\}`|```|^:[a-z-]+:|^\([a-z0-9-]+\)=$", re.MULTILINE)
SCREENSHOTS = ROOT / "_build" / "screenshots" / "pack"


@pytest.mark.slow
def test_pack_chapters_read_cleanly_in_a_plain_nbconvert_rendering(teaching_pack, tmp_path):
    """Rendered by nbconvert (no MyST extension), every Markdown cell of every chapter shows
    text: no role, fence, option or target; the boxes are blockquotes with bold titles. With a
    browser, the first screen of each rendering is kept in _build/screenshots/pack/."""
    from nbconvert import HTMLExporter

    from tests import _browser

    rendered = tmp_path / "html"
    rendered.mkdir()
    for path in sorted((teaching_pack / "chapters").glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        html, _ = HTMLExporter().from_notebook_node(notebook)
        cells = BeautifulSoup(html, "html.parser").select(".jp-MarkdownCell")
        assert len(cells) == len(markdown_of(notebook)), path.name
        for cell in cells:
            text = cell.get_text("\n")
            assert not MYST_TEXT.search(text), (path.name, MYST_TEXT.search(text)[0], text[:300])
        titles = [b.get_text() for c in cells for b in c.select("blockquote strong")]
        assert "Learning objectives" in titles, path.name
        (rendered / f"{path.stem}.html").write_text(html, encoding="utf-8")
    if _browser.unavailable():
        return
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    SCREENSHOTS.mkdir(parents=True)
    with _browser.open_site(rendered, SCREENSHOTS) as session:
        for page in sorted(rendered.glob("*.html")):
            tab, _ = session.open(page.name)
            tab.screenshot(path=str(SCREENSHOTS / f"{page.stem}.png"))
            tab.close()
    assert len(list(SCREENSHOTS.glob("*.png"))) == len(list(rendered.glob("*.html")))


def html_numbers(site: Path, page: str) -> dict[str, str]:
    """Label to number text ("(4.1)", "Fig. 4.2", "Exercise 4.1") as a built page shows it,
    for its labeled equations, figures, exercises and theorems."""
    soup = BeautifulSoup((site / f"{page}.html").read_text("utf-8"), "html.parser")
    found = {}
    for eqno in soup.select("span.eqno"):
        label = eqno.find("a", class_="headerlink")["href"].removeprefix("#equation-")
        found[label] = eqno.get_text().replace("#", "").strip()
    for number in soup.select("span.caption-number"):
        owner = number.find_parent(id=True)["id"]
        if not re.fullmatch(r"id\d+", owner):  # an unlabeled captioned listing
            found[owner] = " ".join(number.get_text().split())
    return found


def html_section_title(site: Path, target: plain.Target) -> str:
    soup = BeautifulSoup((site / f"{target.page}.html").read_text("utf-8"), "html.parser")
    heading = soup.find(id=target.anchor).find_next(re.compile(r"h[1-6]"))
    for extra in heading.select("span.section-number, a.headerlink"):
        extra.decompose()
    text = heading.get_text().replace("\\(", "$").replace("\\)", "$").strip()
    # Docutils writes typographic quotes; the sources (and so the notebooks) have plain ones.
    return text.translate(str.maketrans("‘’“”", "''\"\""))


def pages_in(site: Path) -> list[str]:
    return [name for name in toc_documents() if name.startswith(("chapters/", "solutions/"))]


# -- Against the built book (run by tests/book/test_book.py) -------------------------------------


def check_numbers(built_site: Path) -> None:
    """Every number and every section title a {ref} shows are the built book's."""
    book = classpack.book()
    assert set(pages_in(built_site)) == set(book.pages)
    for page in book.pages:
        ours = {
            target.anchor.removeprefix("equation-"): target.numbered
            for target in book.index.targets.values()
            if target.page == page and target.number
        }
        assert ours == html_numbers(built_site, page), page
    sections = [t for t in book.index.targets.values() if t.kind == "section"]
    assert len(sections) >= len(pages_in(built_site))
    for target in sections:
        assert plain.convert_markdown(
            target.title,
            plain.Context(target.page, book.index, book.bibliography, lambda *a: None),
        ) == html_section_title(built_site, target), target


def check_citations(built_site: Path) -> None:
    """Every citation label of a built page is in its downloadable notebook's text."""
    for page in pages_in(built_site):
        soup = BeautifulSoup((built_site / f"{page}.html").read_text("utf-8"), "html.parser")
        shown = {
            " ".join(a.get_text().split()) for a in soup.select("a[href*='bibliography.html#']")
        }
        ours = "\n".join(markdown_of(nbformat.read(built_site / "_sources" / f"{page}.ipynb", 4)))
        ours = " ".join(ours.split())
        for label in shown:
            # "Author, year" inside (…; …), or the year alone after "Author" for {cite:t}.
            assert label in ours, (page, label)


def check_plain_folder(folder: Path) -> None:
    """Every notebook under ``folder`` is plain Markdown, linking only to notebooks there."""
    notebooks = sorted(folder.rglob("*.ipynb"))
    assert any(posixpath.basename(str(p)).startswith("04_") for p in notebooks)
    for path in notebooks:
        assert_plain(path, nbformat.read(path, as_version=4), folder)


def check_downloads(site: Path) -> None:
    """Every downloadable notebook of a built site is plain Markdown."""
    check_plain_folder(site / "_sources")
