"""The specification format as instructors read it: keyword fields with visible defaults, a
docstring example that runs, and a grader whose modules import each other without cycles."""

from __future__ import annotations

import ast
import inspect
import pydoc
import re
import textwrap

import pytest
from _grading_helpers import REPO

import rlfound.grading
from rlfound.grading.authoring import spec
from rlfound.grading.authoring.spec import (
    BOOK_SOLUTIONS,
    BUILTIN_DIR,
    Answer,
    Compare,
    Exercise,
    Function,
    Gradient,
    Manual,
    Property,
    Raises,
    load_file,
)

KINDS = [Answer, Compare, Gradient, Property, Raises, Manual, Function, Exercise]


def docstring_example() -> str:
    """The code block of the :mod:`rlfound.grading.authoring.spec` docstring (after ``::``)."""
    block = re.search(r"::\n\n((?: {4}.*\n|\n)+)", spec.__doc__)
    return textwrap.dedent(block[1])


def test_the_docstring_example_loads_and_validates(tmp_path):
    path = tmp_path / "example.py"
    path.write_text(docstring_example())
    exercise = load_file(path)  # loads, and validates
    assert exercise.id == "bellman-arithmetic"
    assert exercise.solution_path == BOOK_SOLUTIONS / "bellman_arithmetic.py"
    exercise.reference()  # the declared signature matches the solution's
    assert exercise.max_score == 2 and exercise.manual_points == 1


def test_the_docstring_example_names_its_solution_as_the_book_does():
    """The example and the built-in specifications name the solution the same way."""
    pattern = 'solution=BOOK_SOLUTIONS / "'
    assert pattern in docstring_example()
    for path in sorted(BUILTIN_DIR.glob("[!_]*.py")):
        assert pattern in path.read_text(), path.name


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.__name__)
def test_every_field_is_a_keyword_with_its_default_shown(kind):
    parameters = inspect.signature(kind).parameters
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters.values())
    text = pydoc.render_doc(kind, renderer=pydoc.plaintext)
    for name, parameter in parameters.items():
        assert name in text
        if parameter.default is not inspect.Parameter.empty:
            assert f"{name}: " in text and f"= {parameter.default!r}" in text


def test_the_defaults_are_the_documented_ones():
    compare = inspect.signature(Compare).parameters
    assert (compare["rtol"].default, compare["atol"].default) == (1e-7, 1e-9)
    assert (compare["points"].default, compare["public"].default) == (1.0, True)
    assert inspect.signature(Raises).parameters["error"].default == "ValueError"
    assert inspect.signature(Gradient).parameters["eps"].default == 1e-6


def positional_constructions(source: str) -> list[str]:
    """``Kind(...)`` calls of a specification kind that pass anything by position."""
    names = {kind.__name__ for kind in KINDS}
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in names and node.args:
            found.append(f"{node.func.id} at line {node.lineno}")
    return found


def readme_teaching_section() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return readme.split("## Teaching with rlfound", 1)[1].split("\n## ", 1)[0]


def test_specifications_and_examples_use_keywords():
    sources = {path.name: path.read_text() for path in BUILTIN_DIR.glob("*.py")}
    sources["spec docstring"] = docstring_example()
    # The README shows constructors inline, as `Compare(name=..., ...)`.
    inline = re.findall(
        r"`((?:Answer|Compare|Gradient|Property|Raises|Manual)\(.*?\))`", readme_teaching_section()
    )
    assert inline, "the README's teaching section shows no check in the keyword form"
    sources.update({f"README: {code}": code for code in inline})
    offenders = {
        name: found
        for name, source in sources.items()
        if (found := positional_constructions(source))
    }
    assert not offenders


def test_positional_fields_are_refused():
    with pytest.raises(TypeError, match="positional"):
        Compare("random", "f", [])
    with pytest.raises(TypeError, match="unexpected keyword argument 'tolerance'"):
        Compare(name="random", function="f", inputs=[], tolerance=1e-3)


def test_the_package_keeps_its_public_names():
    from rlfound.grading import Grader, grade_batch
    from rlfound.grading.scoring.batch import grade_batch as batch_grade_batch
    from rlfound.grading.scoring.grader import Grader as grader_Grader

    assert grade_batch is batch_grade_batch and Grader is grader_Grader
    assert all(hasattr(rlfound.grading, name) for name in rlfound.grading.__all__)
    assert {"Exercise", "Grader", "Limits", "SubmissionResult", "grade_batch"} <= set(
        rlfound.grading.__all__
    )
