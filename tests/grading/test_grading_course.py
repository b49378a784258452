"""The course layer without grading anything: assignment files, the late policy at its
boundaries, rosters and time tables, points graded by hand, the grade sheet's arithmetic, the
Canvas export and the output folder's swap. Every expected number is worked out by hand in
the test; every bad input has its exact message and exit status."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import textwrap

import pytest
from _course_helpers import hw1_toml
from _grading_helpers import run_cli

from rlfound.grading.authoring.spec import load_exercises
from rlfound.grading.course import (
    canvas_csv,
    folders,
    gradebook,
    late_days,
    load_assignment,
    multiplier,
    read_extensions,
    read_manual,
    read_roster,
    read_submitted,
)
from rlfound.grading.course.manual import ManualPoints

EXERCISES = load_exercises()
HW1 = hw1_toml(penalty=0.1, max_late_days=3, grace_minutes=10)
#: Points of the two exercises (automatic, by hand), read off their specifications.
GAE = (EXERCISES["gae-recursion"].max_score, EXERCISES["gae-recursion"].manual_points)
GROUP = (EXERCISES["group-advantages"].max_score, EXERCISES["group-advantages"].manual_points)


def _write(folder, name, body):
    path = folder / name
    path.write_text(textwrap.dedent(body))
    return path


@pytest.fixture
def hw1(tmp_path):
    return load_assignment(_write(tmp_path, "hw1.toml", HW1), EXERCISES)


def test_the_book_exercises_have_the_parts_these_tests_count_on():
    # The manual items below: gae-recursion has three parts of 2 points, group-advantages one.
    assert [(p.name, p.points) for p in EXERCISES["gae-recursion"].manual] == [
        ("k-step-telescoping", 2),
        ("recursion-derivation", 2),
        ("test-function", 2),
    ]
    assert [p.name for p in EXERCISES["group-advantages"].manual] == ["rloo-identity-proof"]


def test_an_assignment_file_reads_as_written(hw1):
    assert hw1.name == "Homework 1"
    assert hw1.ids == ["gae-recursion", "group-advantages"]
    assert hw1.due == dt.datetime(2026, 3, 3, 4, 59, tzinfo=dt.timezone.utc)
    assert (hw1.late_penalty_per_day, hw1.max_late_days, hw1.grace_minutes) == (0.1, 3, 10)
    assert hw1.max_automatic == GAE[0] + GROUP[0]
    assert hw1.max_manual == GAE[1] + GROUP[1]


def test_assignment_check_says_what_the_file_means(capsys, tmp_path):
    path = _write(tmp_path, "hw1.toml", HW1)
    status, out, err = run_cli(capsys, "assignment", "check", str(path))
    assert status == 0, err
    assert out.splitlines()[0] == "Homework 1: 2 exercise(s), due 2026-03-02T23:59:00-05:00"
    assert "late: 0.1 of the score lost per day, 0 after 3 day(s), 10 minute(s) of grace" in out


BAD_ASSIGNMENTS = [
    (HW1.replace("gae-recursion", "gae-recursoin"), "exercises: unknown exercise 'gae-recursoin'"),
    (
        HW1.replace('"group-advantages"', '"gae-recursion"'),
        "exercises: 'gae-recursion' is listed twice",
    ),
    (
        HW1.replace("2026-03-02T23:59:00-05:00", "2026-03-02T23:59:00"),
        "due: a time with its UTC offset is required (e.g. 2026-03-02T23:59:00-05:00 or "
        "...Z); got '2026-03-02T23:59:00'",
    ),
    (
        HW1.replace("2026-03-02T23:59:00-05:00", '"2026-03-02T23:59"'),
        "due: a time with its UTC offset is required (e.g. 2026-03-02T23:59:00-05:00 or "
        "...Z); got '2026-03-02T23:59'",
    ),
    (
        HW1.replace("2026-03-02T23:59:00-05:00", '"next monday"'),
        "due: not an ISO 8601 time; got 'next monday'",
    ),
    (HW1.replace("= 0.1", "= 1.5"), "late_penalty_per_day: expected a number in [0, 1]; got 1.5"),
    (HW1.replace("= 0.1", "= -0.1"), "late_penalty_per_day: expected a number in [0, 1]; got -0.1"),
    (HW1.replace("= 0.1", "= true"), "late_penalty_per_day: expected a number; got True"),
    (
        HW1.replace("max_late_days = 3", "max_late_days = -1"),
        "max_late_days: expected an integer >= 0; got -1",
    ),
    (
        HW1.replace("max_late_days = 3", "max_late_days = 1.5"),
        "max_late_days: expected an integer >= 0; got 1.5",
    ),
    (
        HW1.replace("grace_minutes = 10", "grace_minutes = -5"),
        "grace_minutes: expected a number >= 0; got -5",
    ),
    (
        HW1 + "late_penalty_perday = 0.5\n",
        "late_penalty_perday: unknown key (the keys are name, exercises, due, "
        "late_penalty_per_day, max_late_days, grace_minutes)",
    ),
    (HW1.replace('name = "Homework 1"', ""), "name: missing"),
    (HW1.replace('"Homework 1"', '"  "'), "name: expected a non-empty string; got '  '"),
    (
        HW1.replace('["gae-recursion", "group-advantages"]', "[]"),
        "exercises: expected a non-empty list of exercise ids; got []",
    ),
]


@pytest.mark.parametrize(("body", "message"), BAD_ASSIGNMENTS)
def test_a_bad_assignment_file_is_exit_2_naming_the_field(capsys, tmp_path, body, message):
    path = _write(tmp_path, "hw1.toml", body)
    status, _, err = run_cli(capsys, "assignment", "check", str(path))
    assert status == 2
    if message.startswith("exercises: unknown"):
        message += f" (choose from {', '.join(sorted(EXERCISES))})"
    assert (
        err.splitlines()[-1] == f"rlfound assignment check: error: argument FILE: {path}: {message}"
    )


def test_an_assignment_file_that_is_not_toml_or_not_there(capsys, tmp_path):
    status, _, err = run_cli(capsys, "assignment", "check", str(tmp_path / "nope.toml"))
    assert (status, err.splitlines()[-1]) == (
        2,
        f"rlfound assignment check: error: argument FILE: {tmp_path / 'nope.toml'}: no such file",
    )
    path = _write(tmp_path, "bad.toml", "name = \n")
    status, _, err = run_cli(capsys, "assignment", "check", str(path))
    assert status == 2
    assert err.splitlines()[-1].startswith(
        f"rlfound assignment check: error: argument FILE: {path}: not valid TOML"
    )


def _at(text):
    return dt.datetime.fromisoformat(text)


# Due 2026-03-02 23:59 in New York (UTC-5), 10 minutes of grace: on time up to 2026-03-03
# 00:09:00-05:00 = 05:09:00Z = 06:09:00+01:00. Each case's days worked out by hand.
LATE_CASES = [
    ("2026-03-02T12:00:00-05:00", 0, 0),  # early
    ("2026-03-03T00:09:00-05:00", 0, 0),  # exactly at due + grace
    ("2026-03-03T00:09:01-05:00", 0, 1),  # one second after
    ("2026-03-04T00:09:00-05:00", 0, 1),  # exactly one day after
    ("2026-03-04T00:09:00.000001-05:00", 0, 2),  # one microsecond more
    ("2026-03-03T06:09:00+01:00", 0, 0),  # Berlin, the same instant as due + grace
    ("2026-03-03T05:09:01Z", 0, 1),  # UTC, one second after
    ("2026-03-03T14:09:00+09:00", 0, 0),  # Tokyo: the calendar says 3 March, still on time
    ("2026-03-05T00:09:00-05:00", 2, 0),  # exactly at the end of a 2-day extension
    ("2026-03-05T00:09:01-05:00", 2, 1),  # one second after it
    ("2026-03-03T12:09:00-05:00", 0.5, 0),  # a half-day extension, exactly used
    ("2026-03-03T12:09:01-05:00", 0.5, 1),
]


@pytest.mark.parametrize(("submitted", "extension", "days"), LATE_CASES)
def test_late_days_at_the_day_boundaries_and_across_time_zones(hw1, submitted, extension, days):
    assert late_days(hw1, _at(submitted), extension) == days


def test_the_penalty_keeps_a_fraction_and_is_total_after_max_late_days(hw1):
    # 0.1 per day, 0 after 3 days.
    assert [multiplier(hw1, d) for d in range(6)] == pytest.approx([1, 0.9, 0.8, 0.7, 0, 0])


def test_lateness_without_a_time_uses_the_lms_mark_and_says_so(hw1):
    assert gradebook.lateness(hw1, None, True, 0) == gradebook.Lateness(
        1, "marked late by the LMS, no submission time: counted as 1 late day(s)"
    )
    assert gradebook.lateness(hw1, None, True, 2).days == 0
    assert gradebook.lateness(hw1, None, None, 0) == gradebook.Lateness(
        0, "submission time unknown: counted on time"
    )
    late = gradebook.lateness(hw1, _at("2026-03-04T00:09:01-05:00"), False, 1)
    assert late == gradebook.Lateness(1, "late 1 day(s); extension 1 day(s)")
    # Where lateness costs nothing, an unknown time is not worth a word in every row.
    free = dataclasses.replace(hw1, late_penalty_per_day=0.0, max_late_days=None)
    assert gradebook.lateness(free, None, None, 0) == gradebook.Lateness(0, "")
    assert gradebook.lateness(free, None, None, 2) == gradebook.Lateness(0, "extension 2 day(s)")
    assert gradebook.lateness(free, _at("2026-03-04T00:09:01-05:00"), None, 0).note == (
        "late 2 day(s)"
    )


ROSTER = """\
student,id,name,sis_user_id,sis_login_id,section
alice,101,"Liddell, Alice",S1,alice@u,A
bob,102,"Builder, Bob",S2,bob@u,B
"""


def test_a_roster_reads_by_student(tmp_path):
    roster = read_roster(_write(tmp_path, "roster.csv", ROSTER))
    assert list(roster) == ["alice", "bob"]
    assert roster["alice"].name == "Liddell, Alice"
    assert (roster["bob"].id, roster["bob"].section) == ("102", "B")
    minimal = read_roster(_write(tmp_path, "r.csv", "student,id\ncarol,7\n"))
    assert minimal["carol"].sis_user_id == ""


BAD_TABLES = [
    (
        read_roster,
        "student,name\nalice,A\n",
        "r.csv:1: missing column 'id' (the header has ['student', 'name'])",
    ),
    (
        read_roster,
        "student,id,email\nalice,1,a@u\n",
        "r.csv:1: unknown column 'email' (the columns are student, id, name, sis_user_id, "
        "sis_login_id, section)",
    ),
    (
        read_roster,
        "student,id\nalice,1\nbob,2\nalice,3\n",
        "r.csv:4: student 'alice' is listed twice (first at r.csv:2)",
    ),
    (
        read_roster,
        "student,id\nalice,1\nbob,1\n",
        "r.csv:3: id '1' is listed twice (first at r.csv:2)",
    ),
    (
        read_roster,
        "student,id\n../alice,1\n",
        "r.csv:2: student '../alice' cannot name a folder of reports (letters, digits, '.', "
        "'_', '-', not first '.', and none of grades.csv, skipped.csv, course.json)",
    ),
    (read_roster, "student,id\n,1\n", "r.csv:2: student is empty"),
    (
        read_roster,
        "student,id\ncourse.json,1\n",
        "r.csv:2: student 'course.json' cannot name a folder of reports (letters, digits, '.', "
        "'_', '-', not first '.', and none of grades.csv, skipped.csv, course.json)",
    ),
    (read_roster, "student,id\nalice,1,extra\n", "r.csv:2: 3 cells, more than the header's 2"),
    (
        read_submitted,
        "student,submitted_at\nalice,2026-03-02T10:00:00\n",
        "r.csv:2: submitted_at: a time with its UTC offset is required (e.g. "
        "2026-03-02T23:59:00-05:00 or ...Z); got '2026-03-02T10:00:00'",
    ),
    (
        read_submitted,
        "student,submitted_at\nalice,yesterday\n",
        "r.csv:2: submitted_at: not an ISO 8601 time; got 'yesterday'",
    ),
    (
        read_extensions,
        "student,days\nalice,-1\n",
        "r.csv:2: days: expected a number >= 0; got '-1'",
    ),
    (
        read_extensions,
        "student,days\nalice,two\n",
        "r.csv:2: days: expected a number >= 0; got 'two'",
    ),
    (
        read_extensions,
        "student,days\nalice,1\n\nalice,2\n",
        "r.csv:4: student 'alice' is listed twice (first at r.csv:2)",
    ),
]


@pytest.mark.parametrize(("reader", "body", "message"), BAD_TABLES)
def test_a_bad_table_row_is_named_by_file_and_line(tmp_path, reader, body, message):
    path = _write(tmp_path, "r.csv", body)
    with pytest.raises(ValueError) as error:
        reader(path)
    assert str(error.value) == message.replace("r.csv", str(path))


def test_times_and_extensions_read_as_written(tmp_path):
    times = read_submitted(
        _write(tmp_path, "s.csv", "student,submitted_at\nalice,2026-03-03T05:09:01Z\n")
    )
    assert times["alice"][0] == dt.datetime(2026, 3, 3, 5, 9, 1, tzinfo=dt.timezone.utc)
    extensions = read_extensions(_write(tmp_path, "e.csv", "student,days\nbob,1.5\n"))
    assert extensions["bob"][0] == 1.5


MANUAL = """\
student,exercise,item,points,comment
alice,gae-recursion,k-step-telescoping,2,clean
alice,gae-recursion,recursion-derivation,1.5,a step skipped
alice,group-advantages,,2,
bob,gae-recursion,test-function,,
"""


def test_manual_points_merge_and_blanks_wait(tmp_path, hw1):
    merged = read_manual(_write(tmp_path, "m.csv", MANUAL), hw1, {"alice", "bob"})
    assert merged == {
        ("alice", "gae-recursion", "k-step-telescoping"): ManualPoints(2.0, "clean"),
        ("alice", "gae-recursion", "recursion-derivation"): ManualPoints(1.5, "a step skipped"),
        ("alice", "group-advantages", "rloo-identity-proof"): ManualPoints(2.0, ""),
        ("bob", "gae-recursion", "test-function"): ManualPoints(None, ""),
    }


HEADER = "student,exercise,item,points,comment\n"
BAD_MANUAL = [
    (
        "alice,gae-recursion,k-step-telescoping,2.5,",
        "m.csv:2: points: 2.5 is outside [0, 2], the item's range",
    ),
    (
        "alice,gae-recursion,k-step-telescoping,-1,",
        "m.csv:2: points: -1 is outside [0, 2], the item's range",
    ),
    (
        "alice,gae-recursion,k-step-telescoping,two,",
        "m.csv:2: points: expected a number; got 'two'",
    ),
    (
        "alice,gae-recursion,k-step-telescoping,nan,",
        "m.csv:2: points: expected a number; got 'nan'",
    ),
    ("mallory,gae-recursion,k-step-telescoping,1,", "m.csv:2: unknown student 'mallory'"),
    (
        "alice,ppo-clip,,1,",
        "m.csv:2: unknown exercise 'ppo-clip' (the assignment has gae-recursion, group-advantages)",
    ),
    (
        "alice,gae-recursion,proof,1,",
        "m.csv:2: unknown item 'proof' of gae-recursion (its parts graded by hand are "
        "k-step-telescoping, recursion-derivation, test-function)",
    ),
    (
        "alice,gae-recursion,,1,",
        "m.csv:2: item is blank, but gae-recursion has 3 parts graded by hand "
        "(k-step-telescoping, recursion-derivation, test-function): name one",
    ),
    (
        "alice,group-advantages,,1,\nalice,group-advantages,rloo-identity-proof,2,",
        "m.csv:3: a second row for alice, group-advantages, rloo-identity-proof (the first "
        "is m.csv:2)",
    ),
]


@pytest.mark.parametrize(("rows", "message"), BAD_MANUAL)
def test_a_bad_manual_row_is_named(tmp_path, hw1, rows, message):
    path = _write(tmp_path, "m.csv", HEADER + rows + "\n")
    with pytest.raises(ValueError) as error:
        read_manual(path, hw1, {"alice", "bob"})
    assert str(error.value) == message.replace("m.csv", str(path))


class _Result:
    """A stand-in for a SubmissionResult: only its score counts in a row."""

    def __init__(self, score):
        self.score = score


def test_a_row_adds_automatic_and_manual_points_and_applies_the_penalty(hw1):
    manual = {
        ("alice", "gae-recursion", "k-step-telescoping"): ManualPoints(2.0),
        ("alice", "gae-recursion", "recursion-derivation"): ManualPoints(1.5),
        ("alice", "group-advantages", "rloo-identity-proof"): ManualPoints(None),
    }
    results = {"gae-recursion": _Result(9.0), "group-advantages": _Result(4.0)}
    timing = gradebook.Lateness(2, "late 2 day(s)")
    row = gradebook.make_row(hw1, "alice", results, manual, timing)
    # raw = 9 + 4 + 2 + 1.5 = 16.5; two days at 0.1 keep 0.8: total 13.2, penalty 3.3.
    assert row.cells == {
        "student": "alice",
        "gae-recursion": "9",
        "group-advantages": "4",
        "manual": "3.5",
        "late_days": "2",
        "penalty": "3.3",
        "total": "13.2",
        "max_total": gradebook.number(GAE[0] + GROUP[0] + GAE[1] + GROUP[1]),
        "status": "late 2 day(s); by hand: 2 of 4 item(s) not graded yet",
    }
    missing = gradebook.make_row(hw1, "zoe", None, manual, gradebook.Lateness(0, ""))
    assert (missing.cells["total"], missing.cells["status"]) == ("0", "no submission")
    assert "no submission; by hand" not in missing.cells["status"]


def _graded_folder(tmp_path, hw1, rows):
    out = tmp_path / "out"
    out.mkdir()
    (out / "grades.csv").write_text(gradebook.grades_csv(hw1, rows))
    (out / "course.json").write_text(json.dumps({"assignment": hw1.name, "max_total": 31}))
    return out


def _row(hw1, student, total, status="graded"):
    cells = dict.fromkeys(gradebook.columns(hw1), "0")
    cells.update(student=student, total=total, status=status)
    return gradebook.Row(student, cells)


def test_the_canvas_export_has_the_points_row_and_every_roster_student(tmp_path, hw1):
    roster = read_roster(_write(tmp_path, "roster.csv", ROSTER + "carol,103,,,,A\n"))
    out = _graded_folder(
        tmp_path, hw1, [_row(hw1, "alice", "13.2"), _row(hw1, "bob", "0", "no submission")]
    )
    body, missing = canvas_csv(out, roster)
    assert body.splitlines() == [
        "Student,ID,SIS User ID,SIS Login ID,Section,Homework 1",
        "    Points Possible,,,,,31",
        '"Liddell, Alice",101,S1,alice@u,A,13.2',
        '"Builder, Bob",102,S2,bob@u,B,0',
        "carol,103,,,A,0",
    ]
    assert missing == ["bob", "carol"]


def test_the_canvas_export_refuses_a_student_the_roster_lacks(capsys, tmp_path, hw1):
    roster = _write(tmp_path, "roster.csv", ROSTER)
    out = _graded_folder(tmp_path, hw1, [_row(hw1, "alice", "1"), _row(hw1, "mallory", "5")])
    target = tmp_path / "canvas.csv"
    status, _, err = run_cli(
        capsys, "export", "canvas", str(out), "--roster", str(roster), "-o", str(target)
    )
    assert status == 2
    assert err.splitlines()[-1] == (
        "rlfound export canvas: error: argument DIR: 1 graded student(s) not in the roster: "
        "mallory; add "
        "them to the roster (or remove their hand-ins) and grade again"
    )
    assert not target.exists()


def test_an_output_folder_that_is_not_empty_needs_force(tmp_path):
    out = tmp_path / "out"
    folders.check_out(out, force=False, only=None)  # absent: fine
    (out / "stale").mkdir(parents=True)
    with pytest.raises(ValueError) as error:
        folders.check_out(out, force=False, only=None)
    assert str(error.value) == (
        f"argument --out: {out} is not empty; pass --force to replace all of it, or "
        "--only STUDENT to regrade one student"
    )
    folders.check_out(out, force=True, only=None)
    with folders.staging(out) as stage:
        (stage / "alice").mkdir()
        folders.swap_in(stage, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # nothing beside it
    assert [p.name for p in out.iterdir()] == ["alice"]  # nothing stale in it


def _argv_cases(tmp_path):
    toml = _write(tmp_path, "hw1.toml", HW1)
    roster = _write(tmp_path, "roster.csv", "student,id\nalice,1\nalice,2\n")
    (tmp_path / "hand-ins").mkdir()
    grade = ["grade", "--assignment", str(toml), str(tmp_path / "hand-ins")]
    return [
        (
            [*grade, "--out", str(tmp_path / "o"), "--roster", str(roster)],
            f"argument --roster: {roster}:3: student 'alice' is listed twice (first at {roster}:2)",
        ),
        (
            [*grade, str(tmp_path), "--out", str(tmp_path / "o")],
            "argument SUBMISSIONS: with --assignment, give one folder (or zip) of hand-ins; "
            "got 2 paths",
        ),
        (
            ["gradescope", "gae-recursion", "--assignment", str(toml)],
            "argument EXERCISE: give an exercise id or --assignment, not both",
        ),
        (
            ["gradescope", "--assignment", str(tmp_path / "none.toml")],
            f"argument --assignment: {tmp_path / 'none.toml'}: no such file",
        ),
        (["gradescope"], "argument EXERCISE: give an exercise id, or --assignment FILE"),
        (
            ["export", "canvas", str(tmp_path), "--roster", str(roster), "-o", "x.csv"],
            f"argument --roster: {roster}:3: student 'alice' is listed twice (first at {roster}:2)",
        ),
    ]


def test_course_command_lines_that_cannot_work_are_exit_2_naming_the_argument(capsys, tmp_path):
    for argv, message in _argv_cases(tmp_path):
        status, _, err = run_cli(capsys, *argv)
        command = " ".join(argv[:2] if argv[0] == "export" else argv[:1])
        assert (status, err.splitlines()[-1]) == (2, f"rlfound {command}: error: {message}"), argv
    assert not (tmp_path / "o").exists()


def test_the_canvas_export_needs_an_assignments_output(capsys, tmp_path):
    roster = _write(tmp_path, "roster.csv", ROSTER)
    status, _, err = run_cli(
        capsys, "export", "canvas", str(tmp_path), "--roster", str(roster), "-o", "x.csv"
    )
    assert (status, err.splitlines()[-1]) == (
        2,
        f"rlfound export canvas: error: argument DIR: {tmp_path} is not the output of "
        "`rlfound grade --assignment` (no readable course.json)",
    )
