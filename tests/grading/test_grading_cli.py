"""The ``rlfound`` command: exercises, starter, check, grade and gradescope."""

from __future__ import annotations

import json
import subprocess
import sys

import nbformat
import pytest
from _grading_helpers import BUGGY_GAE, copy_reference, run_cli

run = run_cli


def test_exercises_lists_ids_chapters_stars_and_points(capsys):
    status, out, _ = run(capsys, "exercises")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["id", "chapter", "stars", "points"]
    gae = next(line for line in lines if line.startswith("gae-recursion"))
    assert gae.split()[1:4] == ["1", "★★★", "11"]


def test_starter_writes_a_file_and_never_overwrites_one(capsys, tmp_path):
    target = tmp_path / "mine.py"
    status, _, err = run(capsys, "starter", "gae-recursion", "-o", str(target))
    assert status == 0 and "rlfound check" in err
    assert "raise NotImplementedError" in target.read_text()
    target.write_text("my work")
    status, _, err = run(capsys, "starter", "gae-recursion", "-o", str(target))
    assert status == 2 and "argument -o/--output" in err and "exists" in err
    assert target.read_text() == "my work"
    status, out, _ = run(capsys, "starter", "bellman-arithmetic", "-o", "-")
    assert status == 0 and out.startswith("# rlfound exercise: bellman-arithmetic")


def test_starter_notebook_is_a_valid_notebook(capsys, tmp_path):
    target = tmp_path / "mine.ipynb"
    assert run(capsys, "starter", "importance-sampling", "--notebook", "-o", str(target))[0] == 0
    notebook = nbformat.read(target, as_version=4)
    nbformat.validate(notebook)
    assert "def importance_sampling_value" in notebook.cells[1].source


def test_check_passes_the_reference_and_explains_failures(capsys, tmp_path):
    reference = copy_reference(tmp_path, "mine")
    status, out, _ = run(capsys, "check", str(reference), "--exercise", "gae-recursion")
    assert status == 0
    assert out.count("PASS") == 7 and "FAIL" not in out
    assert "graded-recursive" not in out  # graded-only checks are not run by students

    buggy = tmp_path / "buggy.py"
    buggy.write_text("# rlfound exercise: gae-recursion\n" + BUGGY_GAE)
    status, out, _ = run(capsys, "check", str(buggy))
    assert status == 1
    assert "FAIL  recursive-random" in out and "PASS  explicit-random" in out
    assert "max abs error" in out and "worst at index" in out and "expected" in out
    # Never the reference's code.
    assert "for t in reversed" not in out and "running" not in out


def test_check_reports_shape_errors(capsys, tmp_path):
    wrong = tmp_path / "wrong.py"
    wrong.write_text("def chain_values(gamma):\n    return [gamma, 1.0]\n")
    status, out, _ = run(capsys, "check", str(wrong), "--exercise", "bellman-arithmetic")
    assert status == 1 and "expected shape (3,), got shape (2,)" in out


def test_check_needs_to_know_the_exercise(capsys, tmp_path):
    anonymous = tmp_path / "anonymous.py"
    anonymous.write_text("x = 1\n")
    status, _, err = run(capsys, "check", str(anonymous))
    assert status == 2 and "argument --exercise" in err
    status, _, err = run(capsys, "check", str(tmp_path / "missing.py"))
    assert status == 2 and "argument FILE" in err


@pytest.mark.parametrize(
    ("argv", "argument"),
    [
        (["grade", "no-such", "x.py", "--out", "o"], "argument EXERCISE"),
        (["grade", "gae-recursion", "x.py", "--out", "o", "--jobs", "0"], "argument --jobs"),
        (["grade", "gae-recursion", "x.py", "--out", "o", "--timeout", "-1"], "argument --timeout"),
        (
            ["grade", "gae-recursion", "x.py", "--out", "o", "--total-timeout", "0"],
            "argument --total-timeout",
        ),
        (["grade", "gae-recursion", "x.py", "--out", "o", "--seed", "abc"], "argument --seed"),
        (["grade", "gae-recursion", "x.py"], "--out"),
        (["grade", "gae-recursion", "--out", "o"], "SUBMISSION"),
        (["exercises", "--exercises", "/no/such/folder"], "--exercises"),
        (["check", "x.py", "--mode", "weird"], "argument --mode"),
        (["verify", "no-such-exercise"], "argument SPEC_OR_ID"),
        (["verify", "missing/spec.py"], "argument SPEC_OR_ID"),
        (["verify", "gae-recursion", "--seed", "-1"], "argument --seed"),
        (["verify", "gae-recursion", "--timeout", "0"], "argument --timeout"),
        (["verify"], "SPEC_OR_ID"),
        (["gradescope", "no-such", "-o", "x.zip"], "argument EXERCISE"),
    ],
)
def test_bad_arguments_name_the_argument(capsys, argv, argument):
    status, _, err = run(capsys, *argv)
    assert status == 2
    assert argument in err


def test_grade_writes_reports_and_regrades_identically(capsys, tmp_path):
    folder = tmp_path / "class"
    copy_reference(folder, "ana")
    (folder / "ben.py").write_text(BUGGY_GAE)
    (folder / "notes.txt").write_text("not a submission")
    outputs = []
    for run_number in (1, 2):
        out_dir = tmp_path / f"out{run_number}"
        argv = ["grade", "gae-recursion", str(folder)]
        argv += ["--out", str(out_dir), "--jobs", "2", "--seed", "11", "--mode", "default"]
        status, _, err = run(capsys, *argv)
        assert status == 0, err
        outputs.append(
            {p.relative_to(out_dir): p.read_bytes() for p in out_dir.rglob("*") if p.is_file()}
        )
    assert outputs[0] == outputs[1]
    files = outputs[0]
    assert sorted(map(str, files)) == [
        "ana/feedback.md",
        "ana/manual.md",
        "ana/results.json",
        "ben/feedback.md",
        "ben/manual.md",
        "ben/results.json",
        "checks.csv",
        "grades.csv",
        "scores.png",
        "similarity.csv",
        "skipped.csv",
        "summary.md",
    ]
    grades = files[next(p for p in files if str(p) == "grades.csv")].decode().splitlines()
    assert grades[0].startswith("submission,file,score,max_score,recursive-random,")
    assert grades[0].endswith(",note")
    assert grades[1].startswith(f"ana,{folder / 'ana.py'},11,11,")
    skipped = files[next(p for p in files if str(p) == "skipped.csv")].decode().splitlines()
    assert skipped == ["entry,reason", f'{folder / "notes.txt"},"not a .py, .ipynb or .zip file"']
    results = json.loads(files[next(p for p in files if str(p) == "ben/results.json")])
    assert set(results) >= {"score", "tests"}
    for test in results["tests"]:
        assert set(test) >= {"name", "score", "max_score", "output", "visibility"}
    statuses = {t["name"].split(":")[0]: t.get("status") for t in results["tests"]}
    assert statuses["recursive-random"] == "failed" and statuses["explicit-random"] == "passed"
    assert any("graded by hand" in t["name"] for t in results["tests"])
    feedback = files[next(p for p in files if str(p) == "ben/feedback.md")].decode()
    assert "Graded by hand" in feedback and "recursive-random" in feedback


def test_python_dash_m_rlfound_runs_the_command():
    completed = subprocess.run(
        [sys.executable, "-m", "rlfound", "exercises"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert "gae-recursion" in completed.stdout


def test_gradescope_runner_reports_an_empty_upload(tmp_path):
    from rlfound.grading.distribution.gradescope import main as gradescope_main

    (tmp_path / "submission").mkdir()
    results = tmp_path / "results.json"
    argv = ["--exercise", "bellman-arithmetic", "--submission-dir", str(tmp_path / "submission")]
    assert gradescope_main([*argv, "--results", str(results)]) == 0
    document = json.loads(results.read_text())
    assert document["score"] == 0 and "no .py or .ipynb" in document["output"]


def test_a_grader_failure_is_not_reported_as_a_zero(capsys, tmp_path, monkeypatch):
    """If the worker cannot even start, `grade` says so and exits 1."""
    from rlfound.grading.sandbox import runtime

    monkeypatch.setattr(runtime, "interpreter", lambda: tmp_path / "no-python")
    copy_reference(tmp_path / "class", "ana")
    argv = ["grade", "gae-recursion", str(tmp_path / "class"), "--out", str(tmp_path / "out")]
    status, _, err = run(capsys, *argv, "--mode", "default")
    assert status == 1
    assert "the grader failed on 1 submission(s)" in err
