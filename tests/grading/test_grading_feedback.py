"""Feedback a student can act on (issue 22, section 6) and the places of the by-hand answers
(section 2): reproducing a failed case, the student's own test, ``rlfound check`` finding the
exercise, each subcommand's usage, and ``manual.md`` / ``rlfound manual``."""

from __future__ import annotations

import csv
import io
import json
import re
import zlib

import nbformat
import numpy as np
import pytest
from _grading_helpers import BUGGY_GAE, REPO, run_cli

from rlfound.grading.authoring import spec, starter
from rlfound.grading.intake import extract_manual_text
from rlfound.grading.intake.submissions import Submission
from rlfound.grading.output import manual_template, report
from rlfound.grading.scoring import reproduce
from rlfound.grading.scoring.grader import Grader

run = run_cli
EXERCISES = spec.load_exercises()
GAE = EXERCISES["gae-recursion"]
REFERENCE = (REPO / "solutions" / "gae_recursion.py").read_text()


def _check(exercise, name):
    return next(c for c in exercise.checks if c.name == name)


def _drawn(exercise, check, seed=None):
    """The cases of a check drawn here, from the generator the specification format
    documents (the public seed, the exercise's and the check's CRC-32), not the grader's."""
    words = [zlib.crc32(exercise.id.encode()), zlib.crc32(check.name.encode())]
    if check.public:
        rng = np.random.default_rng([spec.PUBLIC_SEED, *words])
    else:
        rng = np.random.default_rng([seed, *words, 1])
    return check.inputs(rng)


# ------------------------------------------------------------------ reproducing a case


def test_rebuild_case_draws_the_case_the_grader_drew():
    check = _check(GAE, "recursive-random")
    cases = _drawn(GAE, check)
    for number, want in enumerate(cases, start=1):
        got = reproduce.rebuild_case("gae-recursion", "recursive-random", number)
        assert sorted(got) == sorted(want)
        for key in want:
            np.testing.assert_array_equal(got[key], want[key])


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("no-such", "x", 1), "exercise: unknown exercise 'no-such'"),
        (
            ("gae-recursion", "no-such", 1),
            "check: gae-recursion has no check 'no-such' that draws cases",
        ),
        (
            ("gae-recursion", "values-length", 1),
            "check: gae-recursion has no check 'values-length'",
        ),
        (("gae-recursion", "recursive-random", 0), "number: the check has cases 1 to 5; got 0"),
    ],
)
def test_rebuild_case_refuses_what_does_not_exist(arguments, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        reproduce.rebuild_case(*arguments)


def _failed(result, name):
    return next(c for c in result.checks if c.name == name)


@pytest.fixture(scope="module")
def buggy_public():
    """The buggy recursion graded on the public checks, as ``rlfound check`` does."""
    grader = Grader(GAE, public_only=True, mode="default")
    return grader.grade(Submission("cy", None, BUGGY_GAE))


def test_a_small_failed_case_is_shown_as_a_call_that_rebuilds_it_exactly(buggy_public):
    check = _failed(buggy_public, "recursive-random")
    assert not check.passed
    where = re.match(r"^case (\d+) of \d+", check.message)
    case = _drawn(GAE, _check(GAE, "recursive-random"))[int(where[1]) - 1]
    call = re.search(r"To reproduce, call:\n    (gae_recursive\(.*\))$", check.message, re.M)
    assert call is not None, check.message
    captured = {}
    eval(call[1], {"np": np, "gae_recursive": lambda **kw: captured.update(kw)})
    assert sorted(captured) == sorted(case)
    for key, value in case.items():
        np.testing.assert_array_equal(captured[key], value)  # every digit, no rounding


#: A case too large to show in full, and how the feedback names its inputs.
BIG = {"rewards": np.zeros(40), "values": np.zeros(41), "gamma": 0.9, "lam": 0.5}
BIG_INPUTS = "The inputs (rewards: shape (40,), values: shape (41,), gamma: 0.9, lam: 0.5) are "


def test_a_large_public_case_is_shown_by_its_shapes_and_three_lines():
    check = _check(GAE, "recursive-random")
    text = reproduce.describe_case(GAE, check, 2, BIG, ["gae_recursive"])
    assert text == (
        f"{BIG_INPUTS}drawn from the public seed; rebuild them with:\n"
        "    from rlfound.grading.scoring.reproduce import rebuild_case\n"
        "    case = rebuild_case('gae-recursion', 'recursive-random', 3)\n"
        "    print(gae_recursive(**case))"
    )
    snippet = "\n".join(line.strip() for line in text.splitlines()[1:3])
    scope = {}
    exec(snippet, scope)
    want = _drawn(GAE, check)[2]
    np.testing.assert_array_equal(scope["case"]["rewards"], want["rewards"])


def test_a_large_graded_only_case_never_reveals_the_course_seed():
    check = spec.Compare(
        name="hidden", function="gae_recursive", inputs=lambda rng: [], public=False
    )
    text = reproduce.describe_case(GAE, check, 0, BIG, ["gae_recursive"])
    assert text == (
        f"{BIG_INPUTS}graded-only (drawn from the course's private seed): your instructor "
        "can rebuild them for you."
    )
    assert "rebuild_case" not in text


def test_integer_and_boolean_arrays_keep_their_dtype_in_the_call():
    check = _check(GAE, "recursive-random")
    case = {"mask": np.array([True, False]), "steps": np.array([1, 2], dtype=np.int64)}
    text = reproduce.describe_case(GAE, check, 0, case, ["f"])
    call = text.splitlines()[1].strip()
    assert (
        call
        == "f(mask=np.array([True, False], dtype=bool), steps=np.array([1, 2], dtype=np.int64))"
    )
    captured = {}
    eval(call, {"np": np, "f": lambda **kw: captured.update(kw)})
    assert captured["mask"].dtype == bool and captured["steps"].dtype == np.int64


# ------------------------------------------------------------------ the student's own test


def test_the_student_test_is_found_where_the_exercise_asks_for_one():
    from rlfound.grading.scoring.student_tests import student_test_names

    assert student_test_names(GAE) == ("test_gae_matches_explicit_sum",)
    assert student_test_names(EXERCISES["bellman-arithmetic"]) == ()


FAILING_TEST = REFERENCE.replace(
    "def test_gae_matches_explicit_sum():",
    "def test_gae_matches_explicit_sum():\n    assert 1 == 2, 'my own check'\n",
)


@pytest.mark.parametrize(
    ("source", "passed", "words"),
    [
        (REFERENCE, True, ""),
        (FAILING_TEST, False, "AssertionError: my own check"),
        (starter.starter_source(GAE), False, "NotImplementedError"),
    ],
    ids=["reference", "failing", "starter"],
)
def test_the_student_test_is_run_and_reported(tmp_path, source, passed, words):
    grader = Grader(GAE, public_only=True, mode="default")
    result = grader.grade(Submission("ann", None, source))
    (run_,) = result.student_tests
    assert (run_.name, run_.passed) == ("test_gae_matches_explicit_sum", passed)
    assert words in run_.message
    feedback = report.feedback_markdown(GAE, result)
    verdict = "passed" if passed else "**failed**"
    assert f"- `test_gae_matches_explicit_sum()`: {verdict}" in feedback
    tests = report.results_json(GAE, result)["tests"]
    entry = next(t for t in tests if "test_gae_matches_explicit_sum" in t["name"])
    assert entry["max_score"] == 0 and entry["status"] == ("passed" if passed else "failed")
    # It earns nothing automatically: the score is the checks' alone.
    assert result.score == sum(c.score for c in result.checks)


def test_rlfound_check_prints_the_student_test(capsys, tmp_path):
    path = tmp_path / "gae_recursion.py"
    path.write_text(FAILING_TEST)
    status, out, _ = run(capsys, "check", str(path), "--mode", "default")
    assert status == 0  # the checks all pass; the test is reported, not scored
    assert "TEST  your test_gae_matches_explicit_sum() failed" in out
    assert "AssertionError: my own check" in out


# ------------------------------------------------------------------ rlfound check FILE


@pytest.mark.parametrize(
    "name", ["gae_recursion.py", "alice-gae-recursion.py", "GAE_Recursion_final.ipynb"]
)
def test_check_infers_the_exercise_from_the_file_name(capsys, tmp_path, name):
    path = tmp_path / name
    if name.endswith(".ipynb"):
        notebook = nbformat.v4.new_notebook()
        notebook.cells = [nbformat.v4.new_code_cell(REFERENCE)]
        path.write_text(nbformat.writes(notebook))
    else:
        path.write_text(REFERENCE)
    status, out, err = run(capsys, "check", str(path), "--mode", "default")
    assert status == 0, err
    assert out.startswith("gae-recursion (chapter 1")


def test_the_header_names_the_exercise_whatever_the_file_name(capsys, tmp_path):
    path = tmp_path / "bellman_arithmetic.py"
    path.write_text("# rlfound exercise: gae-recursion\n" + REFERENCE)
    status, out, _ = run(capsys, "check", str(path), "--mode", "default")
    assert status == 0 and out.startswith("gae-recursion (chapter 1")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "gae_timeouts_or_gae_recursion.py",
            "rlfound check: error: argument --exercise: the file name "
            "'gae_timeouts_or_gae_recursion.py' names several exercises (gae-recursion, "
            "gae-timeouts); pass --exercise ID\n",
        ),
        (
            "homework.py",
            "rlfound check: error: argument --exercise: homework.py has no '# rlfound exercise: "
            "ID' header and its name names no exercise; pass --exercise ID (`rlfound exercises` "
            "lists them)\n",
        ),
    ],
)
def test_check_without_a_single_exercise_exits_2_naming_the_candidates(
    capsys, tmp_path, name, message
):
    path = tmp_path / name
    path.write_text(REFERENCE)
    status, _, err = run(capsys, "check", str(path))
    assert status == 2
    assert err.startswith("usage: rlfound check ")
    assert err.endswith(message)


def test_a_header_naming_an_unknown_exercise_is_named(capsys, tmp_path):
    path = tmp_path / "gae_recursion.py"
    path.write_text("# rlfound exercise: no-such\n" + REFERENCE)
    status, _, err = run(capsys, "check", str(path))
    assert status == 2
    assert "argument FILE (its '# rlfound exercise:' header): unknown exercise 'no-such'" in err


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["starter", "no-such"], "usage: rlfound starter "),
        (["check", "missing.py", "--exercise", "gae-recursion"], "usage: rlfound check "),
        (["grade", "no-such", "x.py", "--out", "o"], "usage: rlfound grade "),
        (["manual"], "usage: rlfound manual "),
        (["verify", "no-such"], "usage: rlfound verify "),
    ],
)
def test_a_subcommands_error_prints_that_subcommands_usage(capsys, argv, usage):
    status, _, err = run(capsys, *argv)
    assert status == 2
    assert err.startswith(usage)
    assert "usage: rlfound [-h]" not in err


def test_starter_says_exists_without_blaming_an_option_not_given(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gae_recursion.py").write_text("my work")
    status, _, err = run(capsys, "starter", "gae-recursion")
    assert status == 2
    assert err.endswith(
        "rlfound starter: error: gae_recursion.py exists; pass --force to overwrite it\n"
    )
    assert "-o/--output" not in err.splitlines()[-1]
    assert (tmp_path / "gae_recursion.py").read_text() == "my work"


# ------------------------------------------------------------------ by-hand answers

PARTS = [part.name for part in GAE.manual]


def _filled_py(answers: dict[str, str]) -> str:
    source = starter.starter_source(GAE)
    for name in PARTS:
        heading = next(
            line for line in source.splitlines() if line.startswith(f"### By hand: {name} ")
        )
        at = source.index(heading)
        place = source.index(starter.PLACEHOLDER, at)
        source = (
            source[:place]
            + answers.get(name, starter.PLACEHOLDER)
            + source[place + len(starter.PLACEHOLDER) :]
        )
    return source


def test_the_py_starter_has_a_marked_place_for_every_part():
    source = starter.starter_source(GAE)
    headings = re.findall(r"^### By hand: ([a-z-]+) \((\d+) points\)$", source, re.M)
    assert headings == [(p.name, f"{p.points:g}") for p in GAE.manual]
    compile(source, "starter.py", "exec")  # still Python
    assert extract_manual_text(source, False, GAE) == dict.fromkeys(PARTS, "")


def test_the_notebook_starter_has_a_markdown_cell_for_every_part():
    notebook = nbformat.reads(starter.starter_notebook(GAE), as_version=4)
    nbformat.validate(notebook)
    cells = notebook.cells[2:]
    assert [c.cell_type for c in cells] == ["markdown"] * len(PARTS)
    assert [c.source.splitlines()[0] for c in cells] == [
        f"### By hand: {p.name} ({p.points:g} points)" for p in GAE.manual
    ]
    assert "BY_HAND_ANSWERS" not in notebook.cells[1].source


def test_answers_are_read_back_from_the_py_starter():
    answers = {PARTS[0]: "It telescopes:\n\n    sum_l gamma^l delta", PARTS[2]: "A double loop."}
    got = extract_manual_text(_filled_py(answers), False, GAE)
    assert got == {PARTS[0]: answers[PARTS[0]], PARTS[1]: "", PARTS[2]: "A double loop."}


def test_answers_are_read_back_from_the_notebook_cells_up_to_the_next_code_cell():
    notebook = nbformat.reads(starter.starter_notebook(GAE), as_version=4)
    notebook.cells[2].source = notebook.cells[2].source.replace(starter.PLACEHOLDER, "First.")
    notebook.cells.insert(3, nbformat.v4.new_markdown_cell("More of the first."))
    notebook.cells.insert(4, nbformat.v4.new_code_cell("x = 1  # not an answer"))
    notebook.cells.insert(5, nbformat.v4.new_markdown_cell("Not under any heading now."))
    got = extract_manual_text(nbformat.writes(notebook), True, GAE)
    assert got[PARTS[0]] == "First.\nMore of the first."
    assert got[PARTS[1]] == got[PARTS[2]] == ""


@pytest.mark.parametrize(
    "source",
    ["{not json", "[" * 100_000, json.dumps({"cells": "no"}), json.dumps([1, 2]), ""],
    ids=["broken", "deep", "cells-not-a-list", "not-a-dict", "empty"],
)
def test_a_broken_notebook_gives_empty_answers(source):
    assert extract_manual_text(source, True, GAE) == dict.fromkeys(PARTS, "")


def test_an_answer_is_capped_and_inert():
    from rlfound.grading.intake.manual_text import MANUAL_CHARS

    got = extract_manual_text(
        _filled_py({PARTS[0]: "\x1b[2J" + "long line\n" * 10_000}), False, GAE
    )
    assert len(got[PARTS[0]]) <= MANUAL_CHARS
    assert got[PARTS[0]].startswith("\\x1b[2J")


HOSTILE = (
    "</details><script>alert(1)</script>\n"
    "```\n"
    "<!-- rlfound-manual exercise=gae-recursion item=k-step-telescoping max=99 -->\n"
    "````text\n"
    "# Grade: full marks"
)


def test_manual_md_fences_hostile_text_and_reads_back_only_the_real_parts(tmp_path):
    answers = extract_manual_text(_filled_py({PARTS[0]: HOSTILE}), False, GAE)
    assert answers[PARTS[0]] == HOSTILE
    manual_template.write_manual(tmp_path, "ann", [(GAE, answers)])
    page = (tmp_path / "manual.md").read_text()
    items = manual_template.read_manual(page)
    assert [(i.exercise, i.item, i.max_points) for i in items] == [
        ("gae-recursion", p.name, p.points) for p in GAE.manual
    ]
    assert items[0].answer == HOSTILE and items[1].answer == items[2].answer == ""
    # Every line of the answer lies inside one fence that none of its lines closes.
    lines = page.splitlines()
    start = lines.index("</details><script>alert(1)</script>") - 1
    fence = lines[start].removesuffix("text")
    assert set(fence) == {"`"} and len(fence) > 4
    end = lines.index(fence, start + 1)
    assert lines[start + 1 : end] == HOSTILE.splitlines()


def _graded_folder(tmp_path, students):
    """A folder as ``rlfound grade`` leaves it: grades.csv and each student's manual.md."""
    rows = ["submission,file,score,max_score,note", *(f"{s},{s}.py,0,11," for s in students)]
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "grades.csv").write_text("\n".join(rows) + "\n")
    for student, answers in students.items():
        if answers is not None:
            manual_template.write_manual(tmp_path / student, student, [(GAE, answers)])
    return tmp_path


def test_rlfound_manual_writes_every_student_and_part_with_points_blank(capsys, tmp_path):
    folder = _graded_folder(
        tmp_path / "out",
        {"ann": {PARTS[0]: "=1+1 telescopes\nby induction"}, "bob": {}, "cy": None},
    )
    target = tmp_path / "manual.csv"
    status, _, err = run(capsys, "manual", str(folder), "-o", str(target))
    assert status == 0, err
    rows = list(csv.DictReader(io.StringIO(target.read_text())))
    assert list(rows[0]) == list(manual_template.MANUAL_COLUMNS)
    assert [(r["student"], r["exercise"], r["item"]) for r in rows] == [
        (s, "gae-recursion", p) for s in ("ann", "bob") for p in PARTS
    ]
    assert all(r["points"] == r["comment"] == "" for r in rows)
    assert [r["max_points"] for r in rows] == [f"{p.points:g}" for p in GAE.manual] * 2
    assert rows[0]["answer"] == "'=1+1 telescopes\nby induction"  # never a formula
    assert f"wrote {target}: 6 part(s) to grade by hand" in err
    assert "no manual.md for 1 student(s), left out: cy" in err


def test_rlfound_manual_never_reads_outside_the_folder(capsys, tmp_path):
    (tmp_path / "secret").mkdir()
    manual_template.write_manual(tmp_path / "secret", "x", [(GAE, {PARTS[0]: "secret"})])
    folder = _graded_folder(tmp_path / "out", {"ann": {}})
    with (folder / "grades.csv").open("a") as grades:
        grades.write("../secret,x.py,0,11,\n")
    body, missing = manual_template.manual_template_csv(folder)
    assert "secret" not in body and missing == ["../secret"]


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("none", "rlfound manual: error: argument DIR: {dir} is not a folder\n"),
        (
            "empty",
            "rlfound manual: error: argument DIR: {dir} has no readable grades.csv; grade it "
            "first\n",
        ),
        ("exists", "rlfound manual: error: {out} exists; pass --force to overwrite it\n"),
    ],
)
def test_rlfound_manual_bad_input_exits_2_naming_it(capsys, tmp_path, setup, message):
    folder, target = tmp_path / "out", tmp_path / "manual.csv"
    if setup != "none":
        folder.mkdir()
    if setup == "exists":
        _graded_folder(folder, {"ann": {}})
        target.write_text("my grading")
    status, _, err = run(capsys, "manual", str(folder), "-o", str(target))
    assert status == 2
    assert err.endswith(message.format(dir=folder, out=target))
    if setup == "exists":
        assert target.read_text() == "my grading"


@pytest.mark.parametrize(
    ("inputs", "value", "words"),
    [
        (lambda rng: [], [[1.0, 2.0], [3.0]], "(x: a ragged list of 2 items) are drawn from"),
        ([{"x": np.zeros(30)}], np.zeros(30), "(x: shape (30,)) are fixed by the exercise;"),
    ],
    ids=["ragged", "fixed"],
)
def test_a_case_that_cannot_be_shown_in_full_says_where_it_comes_from(inputs, value, words):
    check = spec.Compare(name="demo", function="f", inputs=inputs)
    text = reproduce.describe_case(GAE, check, 0, {"x": value}, ["f"])
    assert text.startswith(f"The inputs {words}")
    assert text.endswith("case = rebuild_case('gae-recursion', 'demo', 1)\n    print(f(**case))")
