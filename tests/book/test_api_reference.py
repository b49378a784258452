"""The API reference part of the book (``api/``), checked from its sources.

tests/book/test_book.py checks the built pages (its build fixtures live there): every public
function on its module's page, the "Book:" lines as links to the equation and the chapter, the
equations they name typeset as the chapter typesets them. Here: every module of the library
has its page in the table of contents, every public name is defined where autodoc documents
it (so no object is documented twice), and the docstring rewriting of
``_ext/api_reference.py`` gives reStructuredText that links to the book, typesets the book's
equation each "Book:" line names, and leaves the docstring's own plain-Unicode mathematics
alone.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import re
import subprocess
import sys
import textwrap

import pytest
import yaml

import rlfound
from tests._book import ROOT
from tests._library import public_module
from tests._solutions import load_module

# The API reference reads the book's equations with the {checked} role's reader, which it
# imports as Sphinx loads it: from the extensions' folder on the path.
if str(ROOT / "_ext") not in sys.path:
    sys.path.append(str(ROOT / "_ext"))
api_reference = load_module(ROOT / "_ext" / "api_reference.py", "_api_reference")
equation_checks = load_module(ROOT / "_ext" / "equation_checks.py", "_equation_checks")

MODULES = [name for name in rlfound.__all__ if name != "__version__"]


def library_files() -> list:
    """The library's source files, packages' private files included (the grader's are not)."""
    library = ROOT / "rlfound"
    return [
        path
        for path in sorted(library.rglob("*.py"))
        if "grading" not in path.relative_to(library).parts
    ]


def api_part() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    (part,) = [part for part in toc["parts"] if part["caption"] == "API reference"]
    return [entry["file"] for entry in part["chapters"]]


def test_every_module_has_its_page_in_the_api_part():
    pages = api_part()
    assert pages[0] == "api/index"
    assert sorted(pages[1:]) == sorted(f"api/{module}" for module in MODULES)
    for module in MODULES:
        text = (ROOT / "api" / f"{module}.md").read_text(encoding="utf-8")
        assert f".. automodule:: rlfound.{module}\n   :members:\n" in text, module


def test_the_api_part_comes_after_the_chapters():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    captions = [part["caption"] for part in toc["parts"]]
    api = captions.index("API reference")
    assert all(caption.startswith("Part ") for caption in captions[:api])


@pytest.mark.parametrize("module_name", MODULES)
def test_public_names_are_defined_in_their_module(module_name: str):
    """A function documented on two pages would be two objects with one name.

    A package's private file (``rlfound.diagnostics._report``) counts as the package: no API
    page documents a private file.
    """
    module = importlib.import_module(f"rlfound.{module_name}")
    for name in module.__all__:
        value = getattr(module, name)
        if inspect.isfunction(value) or inspect.isclass(value):
            assert public_module(value) == module.__name__, f"{module.__name__}.{name}"


def test_a_book_line_links_the_equation_and_the_chapter():
    line = api_reference.link_book_line("Book: equation (eq-return-recursion), chapter 1.", "x")
    assert line == (
        "Book: equation :eq:`eq-return-recursion`, :doc:`chapter 1 </chapters/01_foundations>`."
    )
    line = api_reference.link_book_line(
        "Book: equations (eq-return) and (eq-return-recursion), chapter 1.", "x"
    )
    assert ":eq:`eq-return` and :eq:`eq-return-recursion`" in line
    line = api_reference.link_book_line("Book: chapter 5 (sec-retokenization); chapter 13.", "x")
    assert line == (
        "Book: :doc:`chapter 5 </chapters/05_off_policy_ppo>` (:ref:`sec-retokenization`); "
        ":doc:`chapter 13 </chapters/13_batch_contract>`."
    )


def test_every_book_line_of_the_library_becomes_links():
    """After rewriting, a "Book:" line holds no bare label and no bare chapter number."""
    for path in library_files():
        for line in re.findall(r"^\s*Book:.*$", path.read_text(encoding="utf-8"), re.MULTILINE):
            linked = api_reference.link_book_line(line, path.name)
            bare = re.sub(r":\w+:`[^`]+`", "", linked)
            assert not re.search(r"\b(eq|sec)-[a-z]", bare), (path.name, linked)
            assert not re.search(r"chapter \d", bare), (path.name, linked)


def docstring_lines(obj) -> list[str]:
    return inspect.getdoc(obj).splitlines()


def test_an_equation_becomes_a_preformatted_block():
    from rlfound import returns

    lines = api_reference.rewrite_docstring(docstring_lines(returns.discounted_cumsum), "x")
    text = "\n".join(lines)
    assert (
        ".. code-block:: none\n   :class: docstring-equation\n\n"
        "   y_t = x_t + c_t y_{t+1},    y_T = 0,\n"
    ) in text
    # The examples stay doctest blocks, the parameter section stays numpydoc.
    assert ">>> discounted_cumsum([1.0, 0.0, 2.0], 0.5)" in lines
    assert "Parameters" in lines and "----------" in lines


def test_mathematics_in_prose_is_not_read_as_markup():
    lines = [
        "Largest |A_i| of every case; f_+ counts ``x_|y|`` and :func:`a_b`.",
        "",
        "Examples",
        "--------",
        ">>> abs(-1) | 0",
        "1",
    ]
    rewritten = api_reference.rewrite_docstring(lines, "x")
    assert rewritten[0] == (
        r"Largest \|A_i\| of every case; f\_+ counts ``x_|y|`` and :func:`a_b`."
    )
    assert rewritten[2:] == lines[2:]


def test_a_literal_block_and_a_table_are_left_as_written():
    lines = [
        "Use it so::",
        "",
        "    check(|x|)",
        "",
        "====  =====",
        "a_   |b|",
        "====  =====",
        "c_   |d|",
        "====  =====",
        "",
        "After |e|.",
    ]
    rewritten = api_reference.rewrite_docstring(lines, "x")
    assert rewritten[:10] == lines[:10]
    assert rewritten[10] == r"After \|e\|."


def test_the_docstrings_name_chapters_that_exist():
    numbers = set()
    for path in library_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                numbers.update(int(n) for n in re.findall(r"Book:.*?chapter (\d+)", node.value))
    assert numbers
    for number in numbers:
        assert api_reference.chapter_document(number) is not None, number


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("$$\nx = 1\n$$ (eq-one)\n", {"eq-one": "x = 1"}),
        ("$$ a\n  + b\n$$ (eq-two)\n", {"eq-two": "a\n  + b"}),
        # An unlabeled display before a labeled one does not leak into its body.
        ("$$\nu\n$$\n\ntext\n\n$$\nv\n$$ (eq-v)\n", {"eq-v": "v"}),
        ("```{math}\n:label: eq-m\n:nowrap:\n\nm = 2\n```\n", {"eq-m": "m = 2"}),
        (":::{math}\n:label: eq-c\nc\n:::\n", {"eq-c": "c"}),
    ],
)
def test_the_latex_of_a_labeled_equation_is_read_from_the_source(source, expected):
    assert equation_checks.equation_latex(source) == expected


def test_every_labeled_equation_of_the_book_has_its_latex():
    """The two readers of _ext/equation_checks.py agree on every source of the book."""
    for path in equation_checks.book_sources():
        text = path.read_text(encoding="utf-8")
        latex = equation_checks.equation_latex(text)
        assert list(latex) == equation_checks.equation_labels(text), path.name
        assert all(body and "$$" not in body and "\n\n" not in body for body in latex.values())


def test_a_book_line_typesets_the_equations_it_names():
    from rlfound import groups

    lines = api_reference.rewrite_docstring(docstring_lines(groups.leave_one_out_advantages), "x")
    text = "\n".join(lines)
    book = equation_checks.book_equation_latex()
    start = text.index("Book: equation :eq:`eq-loo-baseline`")
    # Both lines stay one paragraph; the equations follow it, each with its number.
    for label in ("eq-loo-baseline", "eq-rloo-identity"):
        block = (
            ".. container:: book-equation\n\n   .. math::\n\n"
            + "\n".join(f"      {line}" for line in book[label].splitlines())
            + f"\n\n   :eq:`{label}`\n"
        )
        assert text.index(block) > start, label
    assert "\n\nBook: equation :eq:`eq-rloo-identity`" not in text
    # The docstring's own equation stays its plain-Unicode block.
    assert "   A_i = R_i - (1 / (N - 1)) Σ_{k≠i} R_k\n" in text


def _public_docstrings():
    """(module name, name, docstring) of every public module, function and class."""
    for module_name in MODULES:
        module = importlib.import_module(f"rlfound.{module_name}")
        for name in ("", *module.__all__):
            yield module_name, name, inspect.getdoc(getattr(module, name) if name else module) or ""


def _notes_math(docstring: str) -> list[str]:
    """The bodies of the ``.. math::`` blocks of a docstring's Notes section."""
    notes = re.search(
        r"^Notes\n-----\n(.*?)(?=^[A-Z][A-Za-z ]*\n-{3,}$|\Z)", docstring, re.M | re.S
    )
    return re.findall(r"^\.\. math::\n\n((?:   .*\n|\n)+)", notes[1] if notes else "", re.M)


def test_the_docstrings_hold_latex_only_in_the_math_of_their_notes():
    """``help()`` shows the docstrings as written: their summaries' mathematics is plain
    Unicode. The LaTeX on the API pages comes from the book, or, for an equation the book does
    not state as a numbered display, from a ``.. math::`` block in the Notes."""
    for module_name, name, docstring in _public_docstrings():
        outside = docstring
        for body in _notes_math(docstring):
            outside = outside.replace(body, "")
        found = re.findall(r"\\[A-Za-z]{2,}|:math:`", outside)
        assert not found, (module_name, name, found)
        if _notes_math(docstring):
            assert not re.search(r"^Book: equations? \(eq-", docstring, re.M), (
                f"{module_name}.{name}: the book's equation is typeset from the book"
            )


def test_every_equation_of_a_docstring_is_typeset_on_its_api_page():
    """A function whose summary states an equation (an indented block of its free text) names
    the book's equation in its "Book:" line, or carries the equation in LaTeX in its Notes."""
    untypeset = []
    for module_name, name, docstring in _public_docstrings():
        obj = getattr(importlib.import_module(f"rlfound.{module_name}"), name) if name else None
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        summary = re.split(r"^[A-Z][A-Za-z ]*\n-{3,}$", docstring, maxsplit=1, flags=re.M)[0]
        states = re.search(r"\n\n {4}\S", summary)
        book = re.search(r"^Book: equations? \(eq-", docstring, re.M)
        if states and not book and not _notes_math(docstring):
            untypeset.append(f"{module_name}.{name}")
    assert not untypeset, untypeset
    (k_abs,) = _notes_math(inspect.getdoc(rlfound.kl.k_abs))
    assert k_abs.strip() == (
        r"k_{\mathrm{abs}}(x) = \left| \log \pi(x) - \log \pi_{\mathrm{ref}}(x) \right|"
    )


SAMPLE = '''
def lookup(x):
    """Return x.

    Book: equation (eq-no-such-equation), chapter 1.
    """
    return x
'''


def test_a_book_line_naming_no_equation_of_the_book_fails_the_strict_build(tmp_path):
    """As the book is built (``-W --keep-going``), with the extension and numpydoc."""
    (tmp_path / "sample_api.py").write_text(textwrap.dedent(SAMPLE), encoding="utf-8")
    (tmp_path / "conf.py").write_text(
        "extensions = ['sphinx.ext.autodoc', 'numpydoc', 'api_reference']\n", encoding="utf-8"
    )
    (tmp_path / "index.rst").write_text(
        "Sample\n======\n\n.. autofunction:: sample_api.lookup\n", encoding="utf-8"
    )
    environment = {**os.environ, "PYTHONPATH": f"{ROOT / '_ext'}:{tmp_path}:{ROOT}"}
    sphinx = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    completed = subprocess.run(
        [*sphinx, str(tmp_path), str(tmp_path / "_build")],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )
    assert completed.returncode != 0
    assert (
        "WARNING: sample_api.lookup: the book has no equation eq-no-such-equation"
        in completed.stderr
    ), completed.stderr
