"""Two distributions from one source, in-process: the self-check from recorded data where no
reference is installed, the course secret that hidden inputs come from, and the exercises the
library answers ("answer in the book"). The wheels themselves are tested from a fresh
environment in ``test_grading_install.py``."""

from __future__ import annotations

import json
import stat

import numpy as np
import pytest
from _grading_helpers import BUGGY_GAE, REPO, copy_reference, run_cli

from rlfound import advantages
from rlfound.grading import Grader, load_exercises
from rlfound.grading.authoring import answers, instructor, public, secret, spec
from rlfound.grading.intake import submissions

EXERCISES = load_exercises()


run = run_cli


@pytest.fixture
def student_side(monkeypatch, tmp_path):
    """The grader as the students' wheel has it: no instructor material, the public data the
    build records in its own folder."""
    data = tmp_path / "public_data"
    public.write_public_data(EXERCISES.values(), data)
    monkeypatch.setattr(public, "DATA_DIR", data)
    monkeypatch.setattr(instructor, "instructor_folder", lambda: None)
    missing = tmp_path / "no-solutions"
    monkeypatch.setattr(spec, "BOOK_SOLUTIONS", missing)
    exercises = {}
    for exercise_id, exercise in EXERCISES.items():
        relocated = missing / exercise.solution_path.name
        exercises[exercise_id] = spec.dataclasses.replace(
            exercise,
            solution=relocated,
            checks=[c for c in exercise.checks if c.public],
            complete=False,
        )
    monkeypatch.setattr(spec, "load_exercises", lambda extra=(): dict(exercises))
    return exercises


# ---------------------------------------------------------------- recorded public checks


def test_the_recorded_data_holds_public_outputs_only():
    """The data is the same with the graded-only checks removed: nothing of theirs is in it,
    and it holds every exercise's starter."""
    for exercise in EXERCISES.values():
        data = public.record_exercise(exercise)
        assert data["exercise"] == exercise.id and data["format"] == public.FORMAT
        public_only = spec.dataclasses.replace(
            exercise, checks=[c for c in exercise.checks if c.public]
        )
        assert public.record_exercise(public_only) == data, exercise.id
        assert data["starter"].startswith(f"# rlfound exercise: {exercise.id}")


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_the_self_check_from_recorded_data_scores_the_reference_in_full(exercise_id, student_side):
    """Without any reference solution installed, the public checks of every exercise give the
    reference full marks, as they do with the reference."""
    exercise = student_side[exercise_id]
    assert not exercise.solution_path.exists()
    grader = Grader(exercise, public_only=True, mode="default")
    source = (REPO / "solutions" / exercise.solution_path.name).read_text()
    result = grader.grade(submissions.Submission(name="ana", path=None, source=source))
    assert result.score == result.max_score > 0, [c.message for c in result.checks]
    with_reference = Grader(EXERCISES[exercise_id], public_only=True, mode="default")
    assert grader.check_names == with_reference.check_names


def test_the_self_check_from_recorded_data_explains_a_wrong_answer(student_side):
    grader = Grader(student_side["gae-recursion"], public_only=True, mode="default")
    result = grader.grade(submissions.Submission(name="ben", path=None, source=BUGGY_GAE))
    failed = {c.name: c.message for c in result.checks if not c.passed}
    assert "recursive-random" in failed and "explicit-random" not in failed
    assert "case " in failed["recursive-random"]


def test_a_call_that_was_not_recorded_is_refused_with_the_reason():
    data = public.record_exercise(EXERCISES["gae-recursion"])
    reference = public.RecordedReference("gae-recursion", data["calls"], data["numpy"])
    with pytest.raises(ValueError, match="was not recorded when this rlfound was built"):
        reference.gae_recursive(rewards=np.ones(3), values=np.zeros(4), gamma=0.5, lam=0.5)


def test_public_data_of_another_format_is_refused(student_side, tmp_path):
    path = public.DATA_DIR / "gae-recursion.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "format": public.FORMAT + 1}))
    with pytest.raises(ValueError, match="is not public data of format"):
        public.public_reference(student_side["gae-recursion"])


def test_without_public_data_or_reference_the_self_check_says_what_is_missing(
    student_side, monkeypatch, tmp_path
):
    monkeypatch.setattr(public, "DATA_DIR", tmp_path / "nothing")
    with pytest.raises(ValueError, match="public check data of 'gae-recursion' is missing"):
        Grader(student_side["gae-recursion"], public_only=True, mode="default")


def test_the_student_side_refuses_to_grade_naming_the_instructor_package(student_side):
    with pytest.raises(instructor.InstructorMissing, match="rlfound-instructor"):
        Grader(student_side["gae-recursion"], mode="default")
    with pytest.raises(instructor.InstructorMissing, match="make instructor-wheel"):
        student_side["gae-recursion"].reference()


def test_the_starters_are_the_same_on_both_sides(student_side):
    for exercise_id, exercise in student_side.items():
        assert public.public_starter(exercise) == public.public_starter(EXERCISES[exercise_id])


# ---------------------------------------------------------------- the course secret


def test_grade_refuses_the_public_seed_and_says_why(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv(secret.SEED_VARIABLE)
    copy_reference(tmp_path / "class", "ana")
    out = tmp_path / "out"
    argv = ["grade", "gae-recursion", str(tmp_path / "class"), "--out", str(out)]
    status, _, err = run(capsys, *argv, "--mode", "default")
    assert status == 2 and "course secret" in err and "rlfound secret" in err
    assert "--public-seed" in err and not out.exists()
    status, _, err = run(capsys, "gradescope", "gae-recursion", "-o", str(tmp_path / "a.zip"))
    assert status == 2 and "rlfound secret" in err and not (tmp_path / "a.zip").exists()

    status, _, err = run(capsys, *argv, "--mode", "default", "--public-seed")
    assert status == 0 and "--public-seed (the public default: not for credit)" in err


@pytest.mark.parametrize(
    ("how", "origin"),
    [("seed", "--seed"), ("environment", "RLFOUND_SEED"), ("secret", "the course secret")],
)
def test_the_seed_comes_from_the_option_the_environment_or_the_secret(
    how, origin, capsys, tmp_path, monkeypatch
):
    monkeypatch.delenv(secret.SEED_VARIABLE)
    options = []
    if how == "seed":
        options = ["--seed", "7"]
    elif how == "environment":
        monkeypatch.setenv(secret.SEED_VARIABLE, "7")
    else:
        status, _, err = run(capsys, "secret")
        assert status == 0 and str(secret.secret_path()) in err
        secret.secret_path().write_text("7\n")
    copy_reference(tmp_path / "class", "ana")
    out = tmp_path / "out"
    argv = ["grade", "gae-recursion", str(tmp_path / "class"), "--out", str(out)]
    status, _, err = run(capsys, *argv, "--mode", "default", *options)
    assert status == 0 and f"graded-only inputs from {origin}" in err
    # The same seed grades the same hidden inputs whatever gave it.
    expected = Grader(EXERCISES["gae-recursion"], seed=7, mode="default")
    graded = json.loads((out / "ana" / "results.json").read_text())
    assert graded["score"] == expected.max_score


def test_the_secret_is_private_random_and_never_replaced_by_accident(capsys, monkeypatch):
    status, _, _ = run(capsys, "secret")
    path = secret.secret_path()
    assert status == 0 and stat.S_IMODE(path.stat().st_mode) == 0o600
    first = secret.read_secret()
    assert first is not None and first != secret.PUBLIC_DEFAULT
    status, _, err = run(capsys, "secret")
    assert status == 2 and "exists; pass --force" in err and secret.read_secret() == first
    assert run(capsys, "secret", "--force")[0] == 0 and secret.read_secret() != first


@pytest.mark.parametrize("text", ["seven", "-3", ""])
def test_a_bad_seed_is_refused_naming_where_it_came_from(text, capsys, tmp_path, monkeypatch):
    monkeypatch.delenv(secret.SEED_VARIABLE)
    secret.secret_path().parent.mkdir(parents=True, exist_ok=True)
    secret.secret_path().write_text(text)
    copy_reference(tmp_path / "class", "ana")
    argv = ["grade", "gae-recursion", str(tmp_path / "class"), "--out", str(tmp_path / "out")]
    status, _, err = run(capsys, *argv, "--mode", "default")
    assert status == 2 and f"the course secret {secret.secret_path()} must hold" in err
    monkeypatch.setenv(secret.SEED_VARIABLE, "x")
    status, _, err = run(capsys, *argv, "--mode", "default")
    assert status == 2 and "RLFOUND_SEED must hold a non-negative integer seed" in err


# ---------------------------------------------------------------- answer in the book


def test_the_library_answers_gae_recursion_by_its_behavior():
    found = {a.function: a.library for a in answers.library_answers(EXERCISES["gae-recursion"])}
    assert found == {
        "gae_recursive": "rlfound.advantages.gae_recursive",
        "gae_explicit": "rlfound.advantages.gae_explicit",
    }


def test_the_answer_is_found_by_behavior_not_by_name(monkeypatch):
    """A library function under another name is found; a wrong one of the same name is not."""

    def renamed(rewards, values, gamma, lam):
        return advantages.gae_recursive(rewards, values, gamma, lam)

    def gae_recursive(rewards, values, gamma, lam):
        return advantages.gae_recursive(rewards, values, gamma, lam) + 1e-3

    fake = (("rlfound.fake.renamed", renamed), ("rlfound.fake.gae_recursive", gae_recursive))
    monkeypatch.setattr(answers, "library_functions", lambda: fake)
    found = {a.function: a.library for a in answers.library_answers(EXERCISES["gae-recursion"])}
    # The recursion and the explicit sum are one estimator: the renamed function answers both.
    assert found == {
        "gae_recursive": "rlfound.fake.renamed",
        "gae_explicit": "rlfound.fake.renamed",
    }


def test_an_exercise_the_library_does_not_answer_is_not_marked():
    assert answers.library_answers(EXERCISES["target-action-mask"]) == []


def test_exercises_and_verify_mark_the_answers_in_the_book(capsys):
    status, out, _ = run(capsys, "exercises")
    assert status == 0 and "in the book" in out.splitlines()[0]
    gae = next(line for line in out.splitlines() if line.startswith("gae-recursion"))
    assert "2 of 2" in gae
    mask = next(line for line in out.splitlines() if line.startswith("target-action-mask"))
    assert "of" not in mask.split("★")[-1].split()[2:3]
    status, out, _ = run(capsys, "verify", "gae-recursion", "--mode", "default")
    assert "answer in the book: gae_recursive behaves as rlfound.advantages.gae_recursive" in out


IN_THE_BOOK = sorted(
    (exercise_id, answer.function, answer.library)
    for exercise_id, exercise in EXERCISES.items()
    for answer in answers.library_answers(exercise)
)


@pytest.mark.slow
@pytest.mark.parametrize(("exercise_id", "function", "library"), IN_THE_BOOK)
def test_a_submission_that_imports_the_answer_from_the_library_earns_nothing(
    exercise_id, function, library
):
    """Every answer in the book: a submission that imports it from rlfound cannot be loaded
    (the worker has no rlfound), so it scores nothing, in the strongest mode available."""
    exercise = EXERCISES[exercise_id]
    module, name = library.rsplit(".", 1)
    source = f"from {module} import {name} as {function}\n"
    result = Grader(exercise, mode="auto").grade(
        submissions.Submission(name="eve", path=None, source=source)
    )
    assert result.score == 0
    assert all("rlfound" in c.message or "import" in c.message for c in result.checks)
    assert len(IN_THE_BOOK) >= 13
