"""Scoring rules a submission cannot game and a busy machine cannot break.

* An error check (``Raises``) is judged by the class raised, not by its text, and counts only
  for a function that returned numbers on valid input (a crash or a timeout is no answer).
* A function that times out costs one timeout: its later calls are not run.
* A whole submission's CPU time is bounded by a total budget.
* Budgets are CPU time: a correct submission keeps full marks under load, while one that
  sleeps is still stopped by the wall-clock hang guard.
* An answer right only to float32 precision is told to compute in float64.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from unittest import mock

import numpy as np
import pytest
from _grading_helpers import BUGGY_GAE, REPO, checked_double, hostile_source, recording_tokens
from test_grading_cli import run

from rlfound.grading import load_exercises
from rlfound.grading.authoring.spec import Answer, Exercise, Raises
from rlfound.grading.intake.submissions import Submission
from rlfound.grading.sandbox import Limits, Worker
from rlfound.grading.scoring.batch import grade_batch
from rlfound.grading.scoring.compare import FLOAT32_HINT, compare
from rlfound.grading.scoring.grader import Grader

EXERCISE = load_exercises()["gae-recursion"]
#: The checks that call gae_recursive, in the order they run.
RECURSIVE = [check.name for check in EXERCISE.checks if "gae_recursive" in check.functions]
MODES = ["default", Grader(EXERCISE).mode]
#: CPU seconds per check in these tests: small, so that a loop costs little.
TIMEOUT = 1.0


def hostile(name: str) -> Submission:
    return Submission(name, None, hostile_source(name))


@contextlib.contextmanager
def cpu_meter():
    """The CPU seconds of every request (imports and calls) made inside the block, as the
    worker measured them (a list, filled as they end)."""
    spent: list[float] = []

    def metered(original):
        def method(self, *args, **kwargs):
            try:
                return original(self, *args, **kwargs)
            finally:
                spent.append(self.request_cpu)

        return method

    with (
        mock.patch.object(Worker, "call", metered(Worker.call)),
        mock.patch.object(Worker, "load", metered(Worker.load)),
    ):
        yield spent


# ---------------------------------------------------------------- error checks


def double_exercise(tmp_path) -> Exercise:
    """``double(x)``: its error check first, so that it runs before any valid input does."""
    return checked_double(
        tmp_path,
        (
            Raises(name="refuses-nan", function="double", kwargs={"x": float("nan")}),
            Answer(name="two", function="double", kwargs={"x": 1.0}, expected=2.0),
            Answer(name="three", function="double", kwargs={"x": 1.5}, expected=3.0),
        ),
    )


def double_source(refuse: str, otherwise: str, prelude: str = "") -> str:
    """A ``double`` that raises ``refuse`` on NaN and runs ``otherwise`` on other input."""
    return (
        f"import math, os\n{prelude}\n\ndef double(x):\n"
        f"    if math.isnan(x):\n        raise {refuse}\n    {otherwise}\n"
    )


@pytest.mark.parametrize(
    ("prelude", "refuse", "otherwise", "scores"),
    [
        # A subclass of ValueError is a ValueError.
        ("class BadNumber(ValueError):\n    pass", "BadNumber('nan')", "return 2 * x", [1, 1, 1]),
        # The last line of the text reads like a ValueError's.
        ("", "TypeError('bad x\\nValueError: x is nan')", "return 2 * x", [0, 1, 1]),
        ("class ValueError(Exception):\n    pass", "ValueError('nan')", "return 2 * x", [0, 1, 1]),
        # The error check runs first and passes; the crash or the loop on valid input then
        # shows that the function never returns numbers, which takes its point away again.
        ("", "ValueError('nan')", "os._exit(0)", [0, 0, 0]),
        ("", "ValueError('nan')", "while True: pass", [0, 0, 0]),
    ],
    ids=["subclass", "type-error-text", "own-value-error-class", "crash", "loop"],
)
def test_error_checks_count_real_value_errors_of_functions_that_answer(
    tmp_path, prelude, refuse, otherwise, scores
):
    grader = Grader(double_exercise(tmp_path), mode="default", limits=Limits(timeout=TIMEOUT))
    result = grader.grade(Submission("student", None, double_source(refuse, otherwise, prelude)))
    assert [c.score for c in result.checks] == scores, [c.message for c in result.checks]
    if scores == [0, 0, 0]:
        assert "returned no numbers on any valid input" in result.checks[0].message


VALUE_ERROR = [["builtins", n] for n in ("ValueError", "Exception", "BaseException", "object")]


@pytest.mark.parametrize(
    ("classes", "counts"),
    [
        (VALUE_ERROR, True),
        (VALUE_ERROR[:-1], False),  # no object at the end: not a method resolution order
        ([VALUE_ERROR[0], VALUE_ERROR[-1]], False),  # no BaseException: not an exception's
        ([["builtins", "ValueError" + " " * 200], *VALUE_ERROR[1:]], False),  # a name too long
        ([VALUE_ERROR[0], *VALUE_ERROR[1:-1] * 40, VALUE_ERROR[-1]], False),  # too many
        ([["builtins", "ValueError", "x"], *VALUE_ERROR[1:]], False),
        ("ValueError", False),
        (None, False),
    ],
    ids=[
        "real",
        "no-object",
        "no-base-exception",
        "long-name",
        "too-many",
        "triple",
        "text",
        "none",
    ],
)
def test_the_parent_checks_the_classes_a_worker_reports(tmp_path, classes, counts):
    # The submission's process could send any reply: what it names is checked here.
    def call(self, calls, *, cpu=None):
        replies = []
        for _, (x,) in calls:
            if np.isnan(x):
                replies.append({"ok": False, "error": "ValueError: nan", "classes": classes})
            else:
                replies.append({"ok": True, "value": 2 * x})
        return replies

    grader = Grader(double_exercise(tmp_path), mode="default")
    with mock.patch.object(Worker, "call", call):
        result = grader.grade(Submission("forger", None, "def double(x):\n    return 2 * x\n"))
    assert [c.score for c in result.checks] == [float(counts), 1.0, 1.0]


# ---------------------------------------------------------------- time budgets


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_a_looping_function_costs_one_timeout(mode):
    grader = Grader(EXERCISE, seed=7, mode=mode, limits=Limits(timeout=TIMEOUT))
    with recording_tokens() as starts, cpu_meter() as spent:
        result = grader.grade(hostile("loop_on_valid_input"))
    messages = {check.name: check.message for check in result.checks}
    first, *later = RECURSIVE
    assert messages[first].startswith("timed out: "), messages[first]
    assert "not called again" in messages[first]
    for name in later:
        assert messages[name].startswith("not run: timed out earlier"), messages[name]
    # The other function still runs, and keeps its points.
    assert all(check.passed for check in result.checks if check.name not in RECURSIVE)
    assert len(starts) == 2  # the first worker, and one after the timeout
    # One timeout's worth of CPU time in all (plus imports and quick calls), not one a check.
    assert sum(spent) < 2 * TIMEOUT, spent


@pytest.mark.slow
def test_the_total_budget_stops_a_submission_whose_functions_are_all_slow():
    # Every call burns 0.3 s: each check is well within 5 s, the submission is not within 2 s.
    limits = Limits(timeout=5.0, total_timeout=2.0)
    grader = Grader(EXERCISE, seed=7, mode="default", limits=limits)
    with cpu_meter() as spent:
        result = grader.grade(hostile("slow_everywhere"))
    first, *rest = result.checks
    assert first.passed, first.message
    failed = [i for i, check in enumerate(rest) if not check.passed]
    assert failed, "every check ran: the total budget stopped nothing"
    stopped = failed[0]
    assert rest[stopped].message.startswith("stopped: the submission used up its total budget")
    for check in rest[stopped + 1 :]:
        assert check.message.startswith("not run: the submission used up its total budget")
    assert sum(spent) < limits.total + 0.5, spent


#: A correct submission that burns 1.6 s of CPU time on each valid call, within the budget.
HONEST_BUT_SLOW = double_source(
    "ValueError('nan')",
    "return slow_double(x)",
    "import time\n\ndef slow_double(x):\n    end = time.process_time() + 1.6\n"
    "    while time.process_time() < end:\n        pass\n    return 2 * x",
)
SLEEPER = double_source("ValueError('nan')", "time.sleep(3600)", "import time")


@pytest.fixture
def busy_machine():
    """Twice as many busy processes as the machine has cores, at the default priority, for
    the test's duration; killed whatever happens.

    Each runs in a session of its own, as other people's work does: Linux shares the CPU
    between sessions first (autogroups), so busy processes in the test's own session would
    barely slow a worker, which runs in a session of its own too.
    """
    processes = []
    try:
        for _ in range(2 * (os.cpu_count() or 1)):
            processes.append(
                subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
            )
        yield processes
    finally:
        for process in processes:
            process.kill()
        for process in processes:
            process.wait()


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_under_load_a_correct_submission_keeps_full_marks_and_a_sleeper_is_stopped(
    tmp_path, busy_machine, mode
):
    # The hang guard is tight on purpose: 3 s, less than the 1.6 s of CPU time of a check
    # takes when the load leaves the submission less than half a core. Only the waits for a
    # CPU are not counted; sleeping is.
    limits = Limits(timeout=2.5, wall_timeout=3.0)
    exercise = double_exercise(tmp_path)
    grader = Grader(exercise, mode=mode, limits=limits)
    assert all(process.poll() is None for process in busy_machine)
    honest = grader.grade(Submission("honest", None, HONEST_BUT_SLOW))
    assert honest.score == honest.max_score, [c.message for c in honest.checks]
    sleeper = grader.grade(Submission("sleeper", None, SLEEPER))
    assert sleeper.score == 0
    assert "timed out after 3 s (wall clock)" in sleeper.checks[1].message
    assert sleeper.checks[2].message.startswith("not run: timed out earlier")


# ---------------------------------------------------------------- the float32 hint

FLOAT32_GAE = (
    (REPO / "solutions" / "gae_recursion.py")
    .read_text()
    .replace("dtype=np.float64", "dtype=np.float32")
    .replace("np.zeros(len(rewards))", "np.zeros(len(rewards), dtype=np.float32)")
)


@pytest.mark.parametrize(
    ("got", "hint"),
    [
        (np.float32, True),  # float32 numbers within float32 arithmetic's error
        (lambda x: x.astype(np.float32).astype(np.float64) * (1 + 1e-7), True),
        (lambda x: x * 1.01, False),  # wrong, in float64
        (lambda x: (x * 1.01).astype(np.float32), False),  # wrong, in float32
        (lambda x: x + 1e-3, False),
    ],
    ids=["float32", "float32-rounded-inputs", "wrong", "wrong-float32", "off"],
)
def test_the_float32_hint_is_for_float32_answers_only(got, hint):
    expected = np.cumsum(np.random.default_rng(0).normal(size=300))
    answer = np.asarray(got(expected), dtype=np.float64)
    verdict = compare(answer, expected, rtol=1e-9, atol=1e-9)
    assert not verdict.passed
    assert verdict.float32 is hint and (FLOAT32_HINT in verdict.message) is hint


def test_check_and_feedback_tell_a_float32_answer_to_use_float64(capsys, tmp_path):
    mine = tmp_path / "mine.py"
    mine.write_text("# rlfound exercise: gae-recursion\n" + FLOAT32_GAE)
    status, out, _ = run(capsys, "check", str(mine), "--mode", "default")
    assert status == 1
    assert f"      {FLOAT32_HINT}" in out  # under the failed check
    (hint,) = [line for line in out.splitlines() if line.startswith("hint: ")]
    assert "recursive-random" in hint and hint.endswith(FLOAT32_HINT)

    buggy = tmp_path / "buggy.py"
    buggy.write_text("# rlfound exercise: gae-recursion\n" + BUGGY_GAE)
    status, out, _ = run(capsys, "check", str(buggy), "--mode", "default")
    assert status == 1 and "FAIL" in out
    assert "float32" not in out

    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "mine.py").write_text(FLOAT32_GAE)
    grade_batch(Grader(EXERCISE, mode="default"), [tmp_path / "class"], tmp_path / "out")
    assert FLOAT32_HINT in (tmp_path / "out" / "mine" / "feedback.md").read_text()
