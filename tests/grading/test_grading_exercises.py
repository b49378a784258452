"""Exercise specifications, starters and notebooks: the reference scores full marks, its
starter scores zero, and instructors can add exercises in the same format."""

from __future__ import annotations

import json

import nbformat
import numpy as np
import pytest
from _grading_helpers import requires_bwrap, write_instructor_exercise

from rlfound.grading import Grader, load_exercises
from rlfound.grading.spec import Answer, Compare, Exercise, Function, load_file
from rlfound.grading.starter import (
    exercise_of,
    starter_notebook,
    starter_source,
    strip_solutions,
)
from rlfound.grading.submissions import Submission, notebook_code, read_submission

EXERCISES = load_exercises()
IDS = sorted(EXERCISES)


def test_the_four_chapter_one_exercises_are_declared():
    chapter_one = [e for e in EXERCISES.values() if e.chapter == 1]
    assert sorted(e.id for e in chapter_one) == [
        "bellman-arithmetic",
        "gae-recursion",
        "importance-sampling",
        "score-function-gradient",
    ]
    signatures = {f.signature for e in chapter_one for f in e.functions}
    assert signatures == {
        "chain_values(gamma)",
        "bandit_gradient(logits, action_rewards)",
        "importance_sampling_value(target_probs, behavior_probs, rewards)",
        "gae_recursive(rewards, values, gamma, lam)",
        "gae_explicit(rewards, values, gamma, lam)",
    }
    for exercise in EXERCISES.values():
        assert any(check.public for check in exercise.checks)
        assert any(not check.public for check in exercise.checks)
        exercise.reference()  # signatures match the reference solution


def test_the_importance_sampling_exercise_checks_the_books_numbers():
    check = next(c for c in EXERCISES["importance-sampling"].checks if c.name == "book-numbers")
    assert check.expected == 2.5
    assert check.kwargs["behavior_probs"].tolist() == [0.8, 0.2]


def test_derivations_are_marked_for_manual_grading():
    assert EXERCISES["gae-recursion"].manual_points > 0
    assert EXERCISES["score-function-gradient"].manual_points > 0
    assert EXERCISES["importance-sampling"].manual_points > 0


@pytest.mark.parametrize("exercise_id", IDS)
@pytest.mark.parametrize("notebook", [False, True], ids=["py", "ipynb"])
def test_reference_scores_full_marks_and_starter_zero(tmp_path, exercise_id, notebook):
    exercise = EXERCISES[exercise_id]
    grader = Grader(exercise, seed=3, mode="default")
    reference = exercise.solution_path.read_text()
    starter = starter_notebook(exercise) if notebook else starter_source(exercise)
    suffix = ".ipynb" if notebook else ".py"
    (tmp_path / f"starter{suffix}").write_text(starter)
    if notebook:  # the student's notebook: the starter's cells, the code cell completed
        document = nbformat.reads(starter, as_version=4)
        document.cells[1].source = reference
        reference = nbformat.writes(document)
    (tmp_path / f"reference{suffix}").write_text(reference)
    full = grader.grade(read_submission(tmp_path / f"reference{suffix}"))
    zero = grader.grade(read_submission(tmp_path / f"starter{suffix}"))
    assert full.score == full.max_score == exercise.max_score, full.checks
    assert zero.score == 0
    assert all("NotImplementedError" in c.message for c in zero.checks)


@requires_bwrap
@pytest.mark.parametrize("exercise_id", IDS)
def test_reference_scores_full_marks_in_strong_mode(exercise_id):
    exercise = EXERCISES[exercise_id]
    grader = Grader(exercise, seed=3, mode="strong")
    reference = Submission("reference", None, exercise.solution_path.read_text())
    assert grader.grade(reference).score == exercise.max_score


def test_starter_replaces_each_solution_region():
    exercise = EXERCISES["gae-recursion"]
    starter = starter_source(exercise)
    assert "### BEGIN SOLUTION" not in starter and "### END SOLUTION" not in starter
    assert starter.count("\n    raise NotImplementedError\n") == 3  # two functions, the test
    assert "def gae_recursive(rewards, values, gamma, lam):" in starter
    assert "for t in reversed" not in starter
    assert exercise_of(starter) == "gae-recursion"
    compile(starter, "starter.py", "exec")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("### BEGIN SOLUTION\nx = 1\n", "without END"),
        ("### END SOLUTION\n", "without BEGIN"),
        ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n", "nested"),
    ],
)
def test_unbalanced_solution_regions_are_errors(source, message):
    with pytest.raises(ValueError, match=message):
        strip_solutions(source)


def test_notebook_code_cells_are_read_as_text_with_magics_removed():
    notebook = starter_notebook(EXERCISES["bellman-arithmetic"])
    data = json.loads(notebook)
    data["cells"].append(
        {
            "cell_type": "code",
            "metadata": {},
            "source": "%timeit 1\n!pip install x\nY = 2",
            "outputs": [],
            "execution_count": None,
            "id": "extra",
        }
    )
    code = notebook_code(json.dumps(data))
    assert "def chain_values(gamma):" in code
    assert "# (magic removed) %timeit 1" in code and "Y = 2" in code
    compile(code, "notebook.py", "exec")
    with pytest.raises(ValueError, match="not a readable notebook"):
        notebook_code("{not json")


def test_missing_and_unreadable_submissions_score_zero(tmp_path):
    grader = Grader(EXERCISES["bellman-arithmetic"], mode="default")
    missing = grader.grade(read_submission(tmp_path / "nobody.py"))
    assert missing.score == 0 and "not found" in missing.error
    (tmp_path / "binary.py").write_bytes(b"\xff\xfe\x00")
    unreadable = grader.grade(read_submission(tmp_path / "binary.py"))
    assert unreadable.score == 0 and "UTF-8" in unreadable.error
    broken = grader.grade(Submission("broken", None, "def chain_values(:\n"))
    assert broken.score == 0 and "SyntaxError" in broken.checks[0].message


def test_instructors_add_exercises_in_the_same_format(tmp_path):
    write_instructor_exercise(tmp_path / "mine")
    exercises = load_exercises([tmp_path / "mine"])
    exercise = exercises["double-it"]
    assert set(EXERCISES) < set(exercises)
    assert exercise.max_score == 4 and exercise.manual_points == 1
    grader = Grader(exercise, seed=1, mode="default")
    good = grader.grade(Submission("good", None, "def double(x):\n    return x + x\n"))
    assert good.score == 4
    starter = grader.grade(Submission("starter", None, starter_source(exercise)))
    assert starter.score == 0


def test_invalid_specifications_name_the_field(tmp_path):
    def make(**changes):
        fields = dict(
            id="ok-id",
            title="t",
            chapter=1,
            stars=1,
            solution="s.py",
            functions=[Function(name="f", parameters="x")],
            checks=[Answer(name="a", function="f", kwargs={"x": 1.0}, expected=1.0)],
        )
        fields.update(changes)
        return Exercise(**fields)

    with pytest.raises(ValueError, match="id must be"):
        make(id="Not A Slug").validate()
    with pytest.raises(ValueError, match="stars"):
        make(stars=9).validate()
    with pytest.raises(ValueError, match="undeclared"):
        make(checks=[Answer(name="a", function="g", kwargs={"x": 1.0}, expected=1.0)]).validate()
    with pytest.raises(ValueError, match="unique"):
        twice = Answer(name="a", function="f", kwargs={}, expected=1.0)
        make(checks=[twice, twice]).validate()
    with pytest.raises(TypeError, match="unexpected keyword argument 'tolerance'"):
        Compare(name="c", function="f", inputs=[], tolerance=1)
    with pytest.raises(TypeError, match="positional"):
        Compare("c", "f", [])
    bad = tmp_path / "bad.py"
    bad.write_text("EXERCISE = 1\n")
    with pytest.raises(ValueError, match="must define EXERCISE"):
        load_file(bad)
    with pytest.raises(ValueError, match="solution"):
        make(source=tmp_path / "spec.py").reference()


def test_graded_only_inputs_follow_the_seed():
    exercise = EXERCISES["gae-recursion"]
    public = next(c for c in exercise.checks if c.public)
    hidden = next(c for c in exercise.checks if not c.public)
    draw = lambda check, seed: exercise.rng(check, seed).normal(size=3)  # noqa: E731
    assert np.array_equal(draw(public, 1), draw(public, 2))
    assert np.array_equal(draw(hidden, 1), draw(hidden, 1))
    assert not np.array_equal(draw(hidden, 1), draw(hidden, 2))


def test_submission_names_are_unique_and_safe(tmp_path):
    from rlfound.grading.submissions import expand

    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "same.py").write_text("")
    (tmp_path / "a" / "grades.csv.py").write_text("")
    names = [name for name, _ in expand([tmp_path / "a", tmp_path / "b", tmp_path / "x.py"])]
    assert names == ["grades.csv-2", "same", "same-2", "x"]
