"""Issue 22's "done when": a class of 30 students in mixed layouts (folders, zips, a Canvas
download, notebooks, a late hand-in, an extension, a student with no hand-in, a zip bomb)
graded on a two-exercise assignment with a roster and points graded by hand, every number of
``grades.csv`` and ``canvas.csv`` checked against values worked out here from what each
student handed in.

What each student handed in comes from :func:`_class_fixtures.make_mixed_class`: for each
exercise the reference solution (every automatic point), the untouched starter (none: it
raises on every call), or nothing (0, and the status says there was no file). The late policy
and the points graded by hand are applied here by hand, from the tables below.
"""

from __future__ import annotations

import csv
import math

import pytest
from _class_fixtures import MISSING, make_mixed_class
from _course_helpers import hw1_toml
from _grading_helpers import run_cli

from rlfound.grading.authoring.spec import load_exercises
from rlfound.grading.course import load_assignment, read_manual

EXERCISES = load_exercises()
IDS = ("gae-recursion", "group-advantages")
AUTOMATIC = {e: EXERCISES[e].max_score for e in IDS}
BY_HAND = {e: EXERCISES[e].manual_points for e in IDS}
MAX_TOTAL = sum(AUTOMATIC.values()) + sum(BY_HAND.values())
PENALTY, MAX_LATE = 0.1, 3
HW1 = hw1_toml(penalty=PENALTY, max_late_days=MAX_LATE, grace_minutes=10)
#: Submission times given with --submitted, and the late days each is, by hand: on time up to
#: 2026-03-03T00:09:00-05:00 (due + grace) = 05:09:00Z.
SUBMITTED = {
    "ana": ("2026-03-03T06:09:00+01:00", 0),  # Berlin: exactly due + grace
    "dev": ("2026-03-04T01:00:00-05:00", 2),  # 1 day 51 minutes past due + grace
    "eli": ("2026-03-04T01:00:00-05:00", 0),  # the same, but a 2-day extension covers it
    "fay": ("2026-03-06T05:09:01Z", 4),  # 3 days and 1 second: past max_late_days, scores 0
    "gus": ("2026-03-03T05:09:01Z", 1),  # one second late
}
EXTENSIONS = {"eli": 2}
#: Canvas's late mark with no time is 1 late day.
LATE_MARKED = {"leeann": 1}
#: Points graded by hand: (student, exercise, item) -> points; blank cells are not graded yet.
MANUAL = {
    ("ana", "gae-recursion", "k-step-telescoping"): 2,
    ("ana", "gae-recursion", "recursion-derivation"): 2,
    ("ana", "gae-recursion", "test-function"): 1.5,
    ("ana", "group-advantages", ""): 2,
    ("dev", "group-advantages", ""): 1,
    ("leeann", "gae-recursion", "test-function"): 0.5,
    ("pia", "gae-recursion", "k-step-telescoping"): None,
}
#: The roster knows the Canvas student "leeann" by her Canvas id only, as "lee_ann".
RENAMED = {"leeann": "lee_ann"}


def _days(student):
    if student in SUBMITTED:
        return SUBMITTED[student][1]
    return LATE_MARKED.get(student, 0)


def fmt(x):
    x = round(x, 6)
    return str(int(x)) if float(x).is_integer() else repr(x)


@pytest.fixture()
def graded(tmp_path_factory):
    """The class and its tables: (folder, the class's description, the output folder)."""
    tmp_path = tmp_path_factory.mktemp("course-class")
    mixed = make_mixed_class(tmp_path)
    ids = {key: s.lms_id or str(2000 + n) for n, (key, s) in enumerate(mixed.students.items())}
    ids[MISSING] = "2999"
    roster = ["student,id,name,sis_user_id,sis_login_id,section"]
    for key in mixed.roster:
        row = RENAMED.get(key, key)
        roster.append(f"{row},{ids[key]},Student {row},SIS-{ids[key]},{row}@uni,A")
    (tmp_path / "roster.csv").write_text("\n".join(roster) + "\n")
    (tmp_path / "hw1.toml").write_text(HW1)
    (tmp_path / "submitted.csv").write_text(
        "student,submitted_at\n" + "".join(f"{s},{t}\n" for s, (t, _) in SUBMITTED.items())
    )
    (tmp_path / "ext.csv").write_text(
        "student,days\n" + "".join(f"{s},{d}\n" for s, d in EXTENSIONS.items())
    )
    (tmp_path / "manual.csv").write_text(
        "student,exercise,item,points,comment\n"
        + "".join(
            f"{RENAMED.get(s, s)},{e},{i},{'' if p is None else p},\n"
            for (s, e, i), p in MANUAL.items()
        )
    )
    return tmp_path, mixed, tmp_path / "out"


def _run(capsys, *argv):
    status, _, err = run_cli(capsys, *argv)
    assert status == 0, err
    return err


def test_thirty_students_every_number_of_grades_and_canvas(capsys, graded):
    tmp_path, mixed, out = graded
    assert (len(mixed.students), len(mixed.roster)) == (30, 31)  # and zoe, who hands in none
    err = _run(
        capsys, "grade", "--assignment", str(tmp_path / "hw1.toml"), str(mixed.folder),
        "--out", str(out), "--roster", str(tmp_path / "roster.csv"),
        "--submitted", str(tmp_path / "submitted.csv"), "--extensions", str(tmp_path / "ext.csv"),
        "--manual", str(tmp_path / "manual.csv"),
        "--mode", "default", "--seed", "0", "--jobs", "2", "--no-progress",
    )  # fmt: skip
    assert f"no hand-in from 1 roster student(s) (0 points): {MISSING}" in err
    with open(out / "grades.csv", newline="") as stream:
        rows = {row["student"]: row for row in csv.DictReader(stream)}
    expected_keys = sorted(RENAMED.get(k, k) for k in mixed.roster)
    assert list(rows) == expected_keys
    canvas_rows = {}
    for key in mixed.roster:
        student = RENAMED.get(key, key)
        row = rows[student]
        if key == MISSING:
            assert row == {
                "student": MISSING, **dict.fromkeys(IDS, "0"), "manual": "0", "late_days": "0",
                "penalty": "0", "total": "0", "max_total": fmt(MAX_TOTAL),
                "status": "no submission",
            }  # fmt: skip
            canvas_rows[student] = "0"
            continue
        answers = mixed.students[key].answers
        refused = mixed.students[key].refused
        automatic = {
            e: AUTOMATIC[e] if answers.get(e) == "reference" and not refused else 0 for e in IDS
        }
        manual = sum(p for (s, _, _), p in MANUAL.items() if s == key and p is not None)
        days = _days(key)
        kept = 0.0 if days > MAX_LATE else max(0.0, 1 - PENALTY * days)
        raw = sum(automatic.values()) + manual
        total = raw * kept
        assert {c: row[c] for c in row if c != "status"} == {
            "student": student,
            **{e: fmt(automatic[e]) for e in IDS},
            "manual": fmt(manual),
            "late_days": str(days),
            "penalty": fmt(raw - total),
            "total": fmt(total),
            "max_total": fmt(MAX_TOTAL),
        }, key
        assert math.isclose(float(row["total"]) + float(row["penalty"]), raw)
        canvas_rows[student] = fmt(total)
    # What the statuses must say, for the students whose situation is special.
    assert rows["ned"]["status"].startswith("the hand-in could not be read: ")
    assert rows["lee_ann"]["status"].startswith(
        "marked late by the LMS, no submission time: counted as 1 late day(s)"
    )
    assert rows["eli"]["status"].startswith("extension 2 day(s)")
    assert rows["dev"]["status"].startswith("late 2 day(s)")
    assert rows["ana"]["status"] == "graded"  # on time to the second, every item graded
    assert rows["pia"]["status"].endswith("by hand: 4 of 4 item(s) not graded yet")
    assert (
        "uma" in rows and "group-advantages: no file of group-advantages" in (rows["uma"]["status"])
    )
    err = _run(
        capsys, "export", "canvas", str(out), "--roster", str(tmp_path / "roster.csv"),
        "-o", str(tmp_path / "canvas.csv"),
    )  # fmt: skip
    assert f"1 roster student(s) handed nothing in and get 0: {MISSING}" in err
    lines = (tmp_path / "canvas.csv").read_text().splitlines()
    assert lines[:2] == [
        "Student,ID,SIS User ID,SIS Login ID,Section,Homework 1",
        f"    Points Possible,,,,,{fmt(MAX_TOTAL)}",
    ]
    with open(tmp_path / "roster.csv", newline="") as stream:
        roster = list(csv.DictReader(stream))
    assert lines[2:] == [
        f"Student {r['student']},{r['id']},{r['sis_user_id']},{r['sis_login_id']},A,"
        f"{canvas_rows[r['student']]}"
        for r in roster
    ]
    # The teaching team's files cover the whole class, and `rlfound manual` reads every
    # student's manual.md into the template that --manual takes back.
    assert (out / "summary.md").is_file()
    with open(out / "checks.csv", newline="") as stream:
        assert len(list(csv.DictReader(stream))) == sum(len(EXERCISES[e].checks) for e in IDS)
    template = tmp_path / "template.csv"
    err = _run(capsys, "manual", str(out), "-o", str(template))
    with open(template, newline="") as stream:
        cells = list(csv.DictReader(stream))
    parts = [(e, part.name) for e in IDS for part in EXERCISES[e].manual]
    assert sorted((c["student"], c["exercise"], c["item"]) for c in cells) == sorted(
        (RENAMED.get(key, key), e, item) for key in mixed.students for e, item in parts
    )
    assert MISSING in err  # no hand-in, no manual.md
    assignment = load_assignment(tmp_path / "hw1.toml", EXERCISES)
    merged = read_manual(template, assignment, set(rows))
    assert len(merged) == len(cells) and all(m.points is None for m in merged.values())
    # A regrade of one student, given none of the tables again: course.json brings back the
    # roster (lee_ann is found by her Canvas id), her point graded by hand and her late mark.
    before = (out / "grades.csv").read_bytes()
    err = _run(
        capsys, "grade", "--assignment", str(tmp_path / "hw1.toml"), str(mixed.folder),
        "--out", str(out), "--only", "lee_ann",
        "--mode", "default", "--seed", "0", "--no-progress",
    )  # fmt: skip
    assert "regraded lee_ann" in err
    assert (out / "grades.csv").read_bytes() == before
