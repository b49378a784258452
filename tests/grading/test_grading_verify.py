"""``rlfound verify``: every built-in specification holds, and broken ones are explained.

An instructor's specification is verified before students see it: the reference scores full
marks, the starter and every other trivial submission (all zeros, constants, an argument
returned unchanged) zero, every check's inputs match the declared signatures, and the same
seed draws the same inputs and gives byte-identical results in two runs.
"""

from __future__ import annotations

import textwrap

import pytest

from rlfound.cli import main
from rlfound.grading import load_exercises
from rlfound.grading.authoring.spec import BUILTIN_DIR

IDS = sorted(load_exercises())
TRIVIAL = "trivial submissions (all zeros, constants, an argument returned unchanged) score zero"

SOLUTION = '''
"""An instructor's exercise: double a number, with a helper the student is given."""


def double(x):
    """Twice x."""
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION


def helper(x):
    """Three times x (given to the student, not an exercise)."""
    return 3 * x
'''

GOOD_CHECKS = """
Answer(name="two", function="double", kwargs={"x": 1.0}, expected=2.0),
Compare(name="random", function="double", inputs=random_inputs, public=False, points=2),
"""


def write_spec(folder, checks=GOOD_CHECKS, *, solution=SOLUTION, functions=None):
    """An instructor's specification ``folder/spec.py`` with its solution next to it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "double_solution.py").write_text(solution)
    functions = functions or '[Function(name="double", parameters="x")]'
    text = textwrap.dedent(
        """
        import random
        import time

        import numpy as np

        from rlfound.grading.authoring.spec import (
            Answer,
            Compare,
            Exercise,
            Function,
            Property,
            Raises,
        )


        def random_inputs(rng):
            return [{"x": rng.normal(size=4)} for _ in range(3)]


        EXERCISE = Exercise(
            id="double-it",
            title="Double it",
            chapter=1,
            stars=1,
            solution="double_solution.py",
            functions=FUNCTIONS,
            checks=[
        CHECKS
            ],
        )
        """
    )
    text = text.replace("FUNCTIONS", functions)
    text = text.replace("CHECKS", textwrap.indent(checks.strip(), " " * 8))
    (folder / "spec.py").write_text(text)
    return folder / "spec.py"


def verify(capsys, *argv):
    """Run ``rlfound verify`` in-process; return (exit status, stdout, stderr)."""
    try:
        status = main(["verify", *map(str, argv)])
    except SystemExit as exit_:
        status = exit_.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def lines_of(out: str, status: str) -> list[str]:
    return [line[len(status) + 2 :] for line in out.splitlines() if line.startswith(status)]


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", IDS)
def test_every_built_in_specification_verifies(capsys, exercise_id):
    status, out, _ = verify(capsys, exercise_id)
    assert status == 0, out
    assert not lines_of(out, "FAIL") and not lines_of(out, "SKIP"), out
    passed = lines_of(out, "PASS")
    assert len(passed) == 8, out
    assert any(line.startswith("the reference solution scores full marks") for line in passed)
    assert any(line.startswith("the starter scores zero (0 / ") for line in passed)
    assert TRIVIAL in passed, out
    assert "every property holds" in out


def test_trivial_submissions_earn_nothing(capsys, tmp_path):
    """A check that zeros, a constant or an argument returned unchanged would pass is named,
    with what passes it."""
    checks = """
    Answer(name="two", function="double", kwargs={"x": 1.0}, expected=2.0),
    Property(
        name="even",
        function="double",
        inputs=[{"x": 1.0}, {"x": 2.5}],
        holds=lambda y, case: abs(float(y) % 2) < 1e-12 or abs(float(y) % 2 - 2) < 1e-12,
    ),
    Property(
        name="same-sign",
        function="double",
        inputs=[{"x": 1.0}, {"x": 3.0}],
        holds=lambda y, case: float(y) * case["x"] > 0,
    ),
    Property(
        name="echo",
        function="double",
        inputs=[{"x": 1.0}],
        holds=lambda y, case: float(y) >= case["x"],
    ),
    """
    spec = write_spec(tmp_path, textwrap.dedent(checks))
    status, out, _ = verify(capsys, spec, "--mode", "default")
    assert status == 1
    assert f"FAIL  {TRIVIAL}" in out
    assert "check 'even' gives 1 point(s) to a submission whose functions return all zeros" in out
    constant = "gives 1 point(s) to a submission whose functions return the constant 1"
    assert f"check 'same-sign' {constant}" in out and f"check 'echo' {constant}" in out
    assert "check 'two'" not in out.split(TRIVIAL)[1]
    assert "PASS  the starter scores zero" in out


def test_a_specification_file_verifies_by_its_path(capsys):
    status, out, _ = verify(capsys, BUILTIN_DIR / "bellman_arithmetic.py", "--seed", "9")
    assert status == 0, out
    assert "PASS  two runs with seed 9 give byte-identical results" in out


def test_a_good_instructor_specification_verifies(capsys, tmp_path):
    status, out, _ = verify(capsys, write_spec(tmp_path), "--mode", "default")
    assert status == 0, out
    assert "PASS  the reference solution scores full marks (3 / 3)" in out
    assert "PASS  the starter scores zero (0 / 3)" in out


def test_a_reference_that_fails_its_own_check(capsys, tmp_path):
    checks = 'Answer(name="two", function="double", kwargs={"x": 1.0}, expected=3.0),'
    status, out, _ = verify(capsys, write_spec(tmp_path, checks), "--mode", "default")
    assert status == 1
    assert "FAIL  the reference solution scores full marks (0 / 1)" in out
    assert "check 'two' fails on the reference:" in out
    assert "expected 3, got 2" in out
    assert "1 problem(s) found" in out


def test_a_check_that_passes_a_wrong_argument_name(capsys, tmp_path):
    checks = 'Compare(name="by-name", function="double", inputs=[{"y": 1.0}]),'
    status, out, _ = verify(capsys, write_spec(tmp_path, checks), "--mode", "default")
    assert status == 1
    assert "FAIL  every check's inputs match the declared signatures" in out
    assert (
        "check 'by-name' passes (y) to double, declared as double(x): missing x; unexpected y"
        in out
    )
    # Grading needs matching inputs: what depends on it is skipped, and says why.
    assert "SKIP  the reference solution scores full marks" in out
    assert "needs every check to prepare inputs that match the declared signatures" in out


def test_a_check_that_passes_a_value_the_worker_cannot_receive(capsys, tmp_path):
    checks = 'Raises(name="text", function="double", kwargs={"x": "one"}, error="TypeError"),'
    status, out, _ = verify(capsys, write_spec(tmp_path, checks), "--mode", "default")
    assert status == 1
    assert "check 'text' passes double a value the worker cannot receive" in out
    assert "unsupported type builtins.str" in out


@pytest.mark.parametrize(
    "draw",
    [
        "np.random.normal(size=3)",  # NumPy's global generator
        "random.random()",  # the standard library's global generator
        "time.time()",  # the clock
    ],
)
def test_an_input_generator_that_ignores_its_rng(capsys, tmp_path, draw):
    checks = f"""
    Compare(
        name="noisy",
        function="double",
        inputs=lambda rng: [{{"x": {draw}}}],
        public=False,
    ),
    """
    status, out, _ = verify(
        capsys, write_spec(tmp_path, textwrap.dedent(checks)), "--mode", "default"
    )
    assert status == 1
    assert "FAIL  two runs with seed 0 draw the same inputs" in out
    assert "check 'noisy' drew other inputs the second time with the grading seed" in out
    assert "must draw only from the rng it is given" in out


def test_a_check_that_gives_points_to_the_starter(capsys, tmp_path):
    functions = '[Function(name="double", parameters="x"), Function(name="helper", parameters="x")]'
    checks = """
    Answer(name="two", function="double", kwargs={"x": 1.0}, expected=2.0),
    Answer(name="given", function="helper", kwargs={"x": 1.0}, expected=3.0),
    """
    spec = write_spec(tmp_path, textwrap.dedent(checks), functions=functions)
    status, out, _ = verify(capsys, spec, "--mode", "default")
    assert status == 1
    assert "FAIL  the starter scores zero (1 / 2)" in out
    assert "check 'given' gives 1 point(s) to the starter" in out
    assert "PASS  the reference solution scores full marks (2 / 2)" in out


def test_a_reference_without_the_declared_function(capsys, tmp_path):
    solution = SOLUTION.replace("def double(x):", "def double(value):")
    status, out, _ = verify(capsys, write_spec(tmp_path, solution=solution))
    assert status == 1
    assert "FAIL  the reference solution imports and defines double(x)" in out
    assert "double is declared as double(x) but the solution has (value)" in out
    assert "SKIP  the starter scores zero" in out and "needs a working reference solution" in out


def test_a_specification_that_does_not_load(capsys, tmp_path):
    spec = write_spec(tmp_path)
    spec.write_text(spec.read_text().replace("chapter=1,", "chapter=undefined_name,"))
    status, out, _ = verify(capsys, spec)
    assert status == 1
    assert "FAIL  the specification loads and is valid" in out
    assert "NameError: name 'undefined_name' is not defined" in out
    assert "spec.py, line" in out
