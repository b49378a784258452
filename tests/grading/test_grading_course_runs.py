"""``rlfound grade --assignment`` on a small class: the rows, the regrades (``--force``,
``--only``), and the command's refusals with their exact messages and exit status.

Expected scores come from what each student handed in, not from re-running the grader: the
book's reference solution scores every automatic point, the starter none (``rlfound verify``
holds both), and the known-buggy GAE (its recursion forgets gamma) fails exactly the checks
that compare ``gae_recursive`` where gamma is not 1.
"""

from __future__ import annotations

import csv
import json
import shutil
import zipfile

import pytest
from _course_helpers import hw1_toml
from _grading_helpers import (
    BUGGY_GAE,
    REPO,
    requirements_only_venv,
    run_autograder,
    run_cli,
    unpack_like_gradescope,
)

from rlfound.grading.authoring import public
from rlfound.grading.authoring.spec import load_exercises

EXERCISES = load_exercises()
GAE, GROUP = EXERCISES["gae-recursion"], EXERCISES["group-advantages"]
FAST = ("--mode", "default", "--seed", "0", "--jobs", "2", "--no-progress")
HW1 = hw1_toml(penalty=0.25, max_late_days=2)


def without(exercise, *checks):
    """The automatic points of ``exercise`` minus those of the named checks."""
    lost = {check.name: check.points for check in exercise.checks}
    return exercise.max_score - sum(lost[name] for name in checks)


def _calls(check, function):
    named = check.function
    return function == named or (isinstance(named, tuple) and function in named)


#: The buggy recursion is wrong wherever gamma < 1 and lambda > 0: every check that calls
#: gae_recursive (the public ones and the graded-only ones) except the lambda = 0 property
#: and the bad-shape check, which never see the bug.
BUGGY_GAE_POINTS = without(
    GAE,
    *(
        check.name
        for check in GAE.checks
        if _calls(check, "gae_recursive") and check.name not in ("lambda-zero", "values-length")
    ),
)
MAX_TOTAL = GAE.max_score + GROUP.max_score + GAE.manual_points + GROUP.manual_points


def _reference(name):
    return (REPO / "solutions" / name).read_text()


@pytest.fixture
def course(tmp_path):
    """alice: both reference solutions (a folder); bob: the buggy GAE and the group starter;
    carol: on the roster, hands in nothing."""
    hand_ins = tmp_path / "hand-ins"
    (hand_ins / "alice").mkdir(parents=True)
    (hand_ins / "bob").mkdir()
    (hand_ins / "alice" / "gae_recursion.py").write_text(_reference("gae_recursion.py"))
    (hand_ins / "alice" / "group_advantages.py").write_text(_reference("group_advantages.py"))
    (hand_ins / "bob" / "gae_recursion.py").write_text(BUGGY_GAE)
    (hand_ins / "bob" / "group_advantages.py").write_text(public.public_starter(GROUP))
    files = {
        "hw1.toml": HW1,
        "roster.csv": "student,id,name\nalice,11,Alice\nbob,12,Bob\ncarol,13,Carol\n",
        # bob: 25 hours late, so 2 late days at 0.25: half the points.
        "submitted.csv": "student,submitted_at\nbob,2026-03-04T05:59:00Z\n",
        "manual.csv": "student,exercise,item,points,comment\n"
        "alice,gae-recursion,k-step-telescoping,2,\n"
        "alice,gae-recursion,recursion-derivation,1.5,a step skipped\n"
        "alice,gae-recursion,test-function,,\n"
        "alice,group-advantages,,2,\n"
        "bob,group-advantages,,1,\n",
    }
    for name, body in files.items():
        (tmp_path / name).write_text(body)
    return tmp_path


def _grade(capsys, course, *extra, out="out"):
    argv = ["grade", "--assignment", str(course / "hw1.toml"), str(course / "hand-ins")]
    argv += ["--out", str(course / out), "--roster", str(course / "roster.csv"), *FAST]
    return run_cli(capsys, *argv, *extra)


def _rows(path):
    with open(path, newline="") as stream:
        return {row["student"]: row for row in csv.DictReader(stream)}


def _files(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_an_assignment_grades_every_student_with_manual_points_and_late_days(capsys, course):
    extra = ("--submitted", str(course / "submitted.csv"), "--manual", str(course / "manual.csv"))
    status, _, err = _grade(capsys, course, *extra)
    assert status == 0, err
    assert "no hand-in from 1 roster student(s) (0 points): carol" in err
    # Off a terminal, one plain line per exercise graded (two students, two exercises).
    lines = [line for line in err.splitlines() if line.startswith("[")]
    assert sorted(line.split("] ")[0] for line in lines) == ["[1/4", "[2/4", "[3/4", "[4/4"]
    assert f"alice gae-recursion: {GAE.max_score:g} / {GAE.max_score:g}" in err
    rows = _rows(course / "out" / "grades.csv")
    assert list(rows) == ["alice", "bob", "carol"]
    assert list(rows["alice"]) == [
        "student", "gae-recursion", "group-advantages", "manual", "late_days", "penalty",
        "total", "max_total", "status",
    ]  # fmt: skip
    alice_raw = GAE.max_score + GROUP.max_score + 2 + 1.5 + 2
    assert rows["alice"] == {
        "student": "alice",
        "gae-recursion": f"{GAE.max_score:g}",
        "group-advantages": f"{GROUP.max_score:g}",
        "manual": "5.5",
        "late_days": "0",
        "penalty": "0",
        "total": f"{alice_raw:g}",
        "max_total": f"{MAX_TOTAL:g}",
        "status": "submission time unknown: counted on time; "
        "by hand: 1 of 4 item(s) not graded yet",
    }
    bob_raw = BUGGY_GAE_POINTS + 0 + 1
    assert rows["bob"] == {
        "student": "bob",
        "gae-recursion": f"{BUGGY_GAE_POINTS:g}",
        "group-advantages": "0",
        "manual": "1",
        "late_days": "2",
        "penalty": f"{bob_raw / 2:g}",
        "total": f"{bob_raw / 2:g}",
        "max_total": f"{MAX_TOTAL:g}",
        "status": "late 2 day(s); by hand: 3 of 4 item(s) not graded yet",
    }
    assert (rows["carol"]["total"], rows["carol"]["status"]) == ("0", "no submission")
    feedback = (course / "out" / "alice" / "feedback.md").read_text()
    assert "`gae-recursion` / `recursion-derivation`: 1.5 / 2 — a step skipped" in feedback
    assert "# GAE: the recursion and the explicit sum — feedback for alice" in feedback
    assert f"# {GROUP.title} — feedback for alice" in feedback
    status, _, err = run_cli(
        capsys, "export", "canvas", str(course / "out"), "--roster",
        str(course / "roster.csv"), "-o", str(course / "canvas.csv"),
    )  # fmt: skip
    assert status == 0, err
    assert (course / "canvas.csv").read_text().splitlines() == [
        "Student,ID,SIS User ID,SIS Login ID,Section,Homework 1",
        f"    Points Possible,,,,,{MAX_TOTAL:g}",
        f"Alice,11,,,,{alice_raw:g}",
        f"Bob,12,,,,{bob_raw / 2:g}",
        "Carol,13,,,,0",
    ]
    assert "1 roster student(s) handed nothing in and get 0: carol" in err


def test_a_regrade_needs_force_and_replaces_the_whole_output(capsys, course):
    status, _, err = _grade(capsys, course)
    assert status == 0, err
    first = _files(course / "out")
    status, _, err = _grade(capsys, course)
    assert status == 2
    assert err.splitlines()[-1] == (
        f"rlfound grade: error: argument --out: {course / 'out'} is not empty; pass --force to "
        "replace all of it, or --only STUDENT to regrade one student"
    )
    (course / "out" / "dave").mkdir()  # a stale student folder from some earlier run
    (course / "out" / "dave" / "feedback.md").write_text("stale")
    status, _, err = _grade(capsys, course, "--force")
    assert status == 0, err
    assert _files(course / "out") == first  # same seed, same bytes; dave is gone
    assert sorted(p.name for p in course.iterdir() if p.name.startswith(".")) == []


def test_only_regrades_one_student_and_keeps_every_other_row_and_manual_point(capsys, course):
    status, _, err = _grade(capsys, course, "--manual", str(course / "manual.csv"))
    assert status == 0, err
    before = (course / "out" / "grades.csv").read_text().splitlines()
    alice_feedback = (course / "out" / "alice" / "feedback.md").read_bytes()
    # bob fixes his GAE; the regrade is given no --manual: his 1 point by hand stays.
    (course / "hand-ins" / "bob" / "gae_recursion.py").write_text(_reference("gae_recursion.py"))
    status, _, err = _grade(capsys, course, "--only", "bob")
    assert status == 0, err
    after = (course / "out" / "grades.csv").read_text().splitlines()
    assert after[0:2] == before[0:2] and after[3] == before[3]  # header, alice, carol
    bob = after[2].split(",")
    assert bob[:4] == ["bob", f"{GAE.max_score:g}", "0", "1"]
    assert bob[6] == f"{GAE.max_score + 1:g}"
    assert (course / "out" / "alice" / "feedback.md").read_bytes() == alice_feedback
    # The class's reports are the full run's: the command says so and summary.md is marked.
    assert (
        "note: checks.csv, summary.md and similarity.csv are the last full run's, from before "
        "the regrade of bob; grade the class again with --force to update them"
    ) in err.splitlines()
    summary = (course / "out" / "summary.md").read_text().splitlines()
    assert summary[0] == (
        "> **Out of date:** written before the regrade of bob; their new scores are in "
        "grades.csv, not here. Grade the class again with --force to bring this summary, "
        "checks.csv and similarity.csv up to date."
    )
    assert summary[1:3] == ["", "# Grading summary"]
    # A second regrade adds its student to the one mark; a full run writes a fresh summary.
    status, _, err = _grade(capsys, course, "--only", "alice")
    assert status == 0, err
    summary = (course / "out" / "summary.md").read_text().splitlines()
    assert summary[0].startswith("> **Out of date:** written before the regrade of alice, bob;")
    assert summary[1:3] == ["", "# Grading summary"]
    status, _, err = _grade(capsys, course, "--force")
    assert status == 0, err
    assert (course / "out" / "summary.md").read_text().startswith("# Grading summary\n")
    assert "note: checks.csv" not in err


def _last(err):
    return err.splitlines()[-1]


def test_bad_course_input_is_exit_2_naming_it(capsys, course):
    (course / "bad-manual.csv").write_text(
        "student,exercise,item,points,comment\nalice,gae-recursion,test-function,3,\n"
    )
    status, _, err = _grade(capsys, course, "--manual", str(course / "bad-manual.csv"))
    assert (status, _last(err)) == (
        2,
        f"rlfound grade: error: argument --manual: {course / 'bad-manual.csv'}:2: points: 3 is "
        "outside [0, 2], the item's range",
    )
    (course / "times.csv").write_text("student,submitted_at\nzed,2026-03-01T00:00:00Z\n")
    status, _, err = _grade(capsys, course, "--submitted", str(course / "times.csv"))
    assert (status, _last(err)) == (
        2,
        f"rlfound grade: error: argument --submitted: {course / 'times.csv'}:2: unknown "
        "student 'zed'",
    )
    (course / "ext.csv").write_text("student,days\nbob,-2\n")
    status, _, err = _grade(capsys, course, "--extensions", str(course / "ext.csv"))
    assert (status, _last(err)) == (
        2,
        f"rlfound grade: error: argument --extensions: {course / 'ext.csv'}:2: days: expected a "
        "number >= 0; got '-2'",
    )
    status, _, err = _grade(capsys, course, "--only", "bob")
    assert (status, _last(err)) == (
        2,
        f"rlfound grade: error: argument --only: {course / 'out' / 'grades.csv'} not found: grade "
        "the assignment first",
    )
    assert not (course / "out").exists()
    status, _, err = _grade(capsys, course)
    assert status == 0, err
    status, _, err = _grade(capsys, course, "--only", "zed")
    assert (status, _last(err)) == (
        2,
        f"rlfound grade: error: argument --only: no hand-in of 'zed' in {course / 'hand-ins'}",
    )
    shutil.rmtree(course / "out")
    status, _, err = run_cli(
        capsys, "grade", "--assignment", str(course / "hw1.toml"), str(course / "absent"),
        "--out", str(course / "out"), *FAST,
    )  # fmt: skip
    assert (status, _last(err)) == (
        2,
        f"rlfound grade: error: argument SUBMISSIONS: submissions path {course / 'absent'} "
        "does not exist",
    )
    status, _, err = run_cli(
        capsys, "grade", "gae-recursion", str(course / "hand-ins"), "--out",
        str(course / "out"), "--manual", str(course / "manual.csv"),
    )  # fmt: skip
    assert (status, _last(err)) == (
        2,
        "rlfound grade: error: argument --manual: needs --assignment FILE",
    )


def test_one_gradescope_autograder_grades_the_whole_hand_in(capsys, course):
    bundle = course / "hw1.zip"
    status, _, err = run_cli(
        capsys, "gradescope", "--assignment", str(course / "hw1.toml"), "-o", str(bundle),
        "--seed", "0",
    )  # fmt: skip
    assert status == 0, err
    assert "add the parts graded by hand as manually graded questions" in err
    with zipfile.ZipFile(bundle) as archive:
        run = archive.read("run_autograder").decode()
        assert archive.read("course-secret") == b"0\n"  # the seed, in a file, not on the line
        # Each exercise's reference and graded-only checks ride along.
        wanted = {
            f"rlfound_instructor/{folder}{module}.py"
            for module in ("gae_recursion", "group_advantages")
            for folder in ("", "graded/")
        }
        assert wanted <= set(archive.namelist())
    assert "--exercise gae-recursion --exercise group-advantages --seed-file " in run
    root = course / "autograder"
    script = unpack_like_gradescope(bundle, root)
    requirements_only_venv(root)
    (root / "submission" / "gae_recursion.py").write_text(_reference("gae_recursion.py"))
    (root / "submission" / "group_advantages.py").write_text(public.public_starter(GROUP))
    completed = run_autograder(script, root)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    document = json.loads((root / "results" / "results.json").read_text())
    # The reference scores every automatic point of gae-recursion, the starter none.
    assert document["score"] == GAE.max_score
    tests = document["tests"]
    assert sum(t["max_score"] for t in tests) == GAE.max_score + GROUP.max_score
    assert {t["name"].split(": ")[0] for t in tests} == {"gae-recursion", "group-advantages"}
    by_hand = [t for t in tests if "(graded by hand)" in t["name"]]
    assert len(by_hand) == len(GAE.manual) + len(GROUP.manual)
    assert all(t["max_score"] == 0 for t in by_hand)  # automatic points only


def test_a_hand_in_the_roster_lacks_is_graded_and_the_canvas_export_refuses_it(capsys, course):
    (course / "hand-ins" / "dave").mkdir()
    (course / "hand-ins" / "dave" / "gae_recursion.py").write_text(_reference("gae_recursion.py"))
    status, _, err = _grade(capsys, course)
    assert status == 0, err
    dave = _rows(course / "out" / "grades.csv")["dave"]
    assert (dave["gae-recursion"], dave["group-advantages"]) == (f"{GAE.max_score:g}", "0")
    assert dave["status"].startswith("not in the roster; ")
    target = course / "canvas.csv"
    status, _, err = run_cli(
        capsys, "export", "canvas", str(course / "out"), "--roster",
        str(course / "roster.csv"), "-o", str(target),
    )  # fmt: skip
    assert (status, _last(err)) == (
        2,
        "rlfound export canvas: error: argument DIR: 1 graded student(s) not in the roster: "
        "dave; add them to the roster (or remove their hand-ins) and grade again",
    )
    assert not target.exists()
