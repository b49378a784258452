"""Every labeled equation of the book is checked by a test or declared a definition.

The book promises that its mathematics is executed. A test checks an equation when it computes
both sides on concrete numbers and carries ``@pytest.mark.equation("eq-...")``; an equation
that only defines a symbol or states an assumption is listed, with its reason, in
``tests/equation_definitions.py``. The index of markers is read statically from the test files
(``_ext/equation_checks.py``), the same index the book's ``{checked}`` role shows.
"""

from __future__ import annotations

import ast
import io

import pytest

from tests._book import ROOT
from tests._solutions import load_module
from tests.equation_definitions import DEFINITIONS

equation_checks = load_module(ROOT / "_ext" / "equation_checks.py", "_equation_checks")
EQUATIONS = equation_checks.book_equations()
CHECKED = equation_checks.checked_equations()


def where(label: str) -> str:
    return EQUATIONS[label].relative_to(ROOT).as_posix()


def test_the_book_has_labeled_equations():
    assert len(EQUATIONS) > 100


def test_every_labeled_equation_is_checked_or_declared():
    unaccounted = sorted(set(EQUATIONS) - set(CHECKED) - set(DEFINITIONS))
    assert not unaccounted, (
        "labeled equations that no test marks with pytest.mark.equation and that "
        "tests/equation_definitions.py does not declare:\n"
        + "\n".join(f"  {label} ({where(label)})" for label in unaccounted)
    )


def test_marked_labels_exist():
    stale = sorted(set(CHECKED) - set(EQUATIONS))
    assert not stale, "tests mark equations the book does not have:\n" + "\n".join(
        f"  {label}: {', '.join(CHECKED[label])}" for label in stale
    )


def test_declared_definitions_exist_and_give_a_reason():
    stale = sorted(set(DEFINITIONS) - set(EQUATIONS))
    assert not stale, f"tests/equation_definitions.py declares missing labels: {stale}"
    unexplained = sorted(label for label, reason in DEFINITIONS.items() if not reason.strip())
    assert not unexplained, f"definitions without a reason: {unexplained}"


def test_no_label_is_both_declared_and_checked():
    both = sorted(set(DEFINITIONS) & set(CHECKED))
    assert not both, (
        "labels both declared definitions and checked by a test (keep one):\n"
        + "\n".join(f"  {label}: {', '.join(CHECKED[label])}" for label in both)
    )


def test_labels_are_unique_across_the_book():
    seen: dict[str, str] = {}
    for path in equation_checks.book_sources():
        for label in equation_checks.equation_labels(path.read_text(encoding="utf-8")):
            name = path.relative_to(ROOT).as_posix()
            assert label not in seen, f"{label} is labeled in {seen[label]} and {name}"
            seen[label] = name


def test_markers_sit_on_tests():
    """A marker on a helper checks nothing: pytest never runs it."""
    for node_ids in CHECKED.values():
        for node_id in node_ids:
            path, *names = node_id.split("::")
            assert path.startswith("tests/") and path.rsplit("/", 1)[-1].startswith("test_")
            if names:
                assert names[-1].startswith("test_"), f"{node_id} is not a test"
                if len(names) == 2:
                    assert names[0].startswith("Test"), f"{node_id} is not in a test class"


def test_the_marker_is_registered():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"equation(*labels):' in pyproject


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("$$\nx = 1\n$$ (eq-one)\n", ["eq-one"]),
        ("$$ x $$\n", []),
        ("```{math}\n:label: eq-two\n:nowrap:\n\nx\n```\n", ["eq-two"]),
        (":::{math}\n:label: eq-colon\nx\n:::\n", ["eq-colon"]),
        ("$$\na\n$$ (eq-a)\n\ntext\n\n```{math}\n:label: eq-b\nb\n```\n", ["eq-a", "eq-b"]),
    ],
)
def test_both_label_forms_are_found(source, expected):
    assert equation_checks.equation_labels(source) == expected


def test_the_index_reads_functions_classes_and_pytestmark(tmp_path):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_sample.py").write_text(
        "import pytest\n"
        "pytestmark = [pytest.mark.slow, pytest.mark.equation('eq-module')]\n"
        "@pytest.mark.equation('eq-a', 'eq-b')\n"
        "def test_function(): ...\n"
        "@pytest.mark.equation('eq-class')\n"
        "class TestGroup:\n"
        "    @pytest.mark.equation('eq-a')\n"
        "    def test_method(self): ...\n",
        encoding="utf-8",
    )
    assert equation_checks.checked_equations(tmp_path) == {
        "eq-module": ["tests/test_sample.py"],
        "eq-a": [
            "tests/test_sample.py::test_function",
            "tests/test_sample.py::TestGroup::test_method",
        ],
        "eq-b": ["tests/test_sample.py::test_function"],
        "eq-class": ["tests/test_sample.py::TestGroup"],
    }


def test_the_index_refuses_labels_it_cannot_read(tmp_path):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_sample.py").write_text(
        "import pytest\nLABEL = 'eq-a'\n@pytest.mark.equation(LABEL)\ndef test_f(): ...\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="literal label strings"):
        equation_checks.checked_equations(tmp_path)


def test_the_role_is_a_local_extension():
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["sphinx"]["local_extensions"].get("equation_checks") == "_ext"
    tree = ast.parse((ROOT / "_ext" / "equation_checks.py").read_text(encoding="utf-8"))
    assert any(isinstance(node, ast.FunctionDef) and node.name == "setup" for node in tree.body)


@pytest.mark.slow
def test_the_role_names_the_test_and_warns_about_an_unchecked_label(tmp_path):
    """A small Sphinx project with the extension: the note is rendered, an unknown label warns."""
    from sphinx.application import Sphinx

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_sample.py").write_text(
        "import pytest\n"
        "@pytest.mark.equation('eq-one')\ndef test_first(): ...\n"
        "@pytest.mark.equation('eq-one', 'eq-two')\ndef test_second(): ...\n",
        encoding="utf-8",
    )
    (tmp_path / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        "extensions = ['myst_parser', 'equation_checks']\n",
        encoding="utf-8",
    )
    (tmp_path / "index.md").write_text(
        "# Page\n\nKnown {checked}`eq-one eq-two`, unknown {checked}`eq-three`.\n",
        encoding="utf-8",
    )
    warnings = io.StringIO()
    app = Sphinx(
        str(tmp_path), str(tmp_path), str(tmp_path / "_build"), str(tmp_path / "_doctrees"),
        "html", status=None, warning=warnings, freshenv=True,
    )  # fmt: skip
    app.build()
    html = (tmp_path / "_build" / "index.html").read_text(encoding="utf-8")
    assert "checked by" in html and "tests/test_sample.py::test_first" in html
    assert 'title="tests/test_sample.py::test_second"' in html  # the other test, in the tooltip
    assert "1 more test" in html
    assert "eq-three" in warnings.getvalue() and "pytest.mark.equation" in warnings.getvalue()
    assert (tmp_path / "_build" / "_static" / "equation_checks.css").is_file()
