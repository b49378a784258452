"""Exercise specifications, starters and notebooks: the reference scores full marks, its
starter scores zero, and instructors can add exercises in the same format."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import numpy as np
import pytest
from _grading_helpers import checked_double, requires_bwrap, write_instructor_exercise

from rlfound.grading import Grader, load_exercises
from rlfound.grading.authoring.spec import Answer, Compare, Exercise, Function, Raises, load_file
from rlfound.grading.authoring.starter import (
    exercise_of,
    starter_notebook,
    starter_source,
    strip_solutions,
)
from rlfound.grading.intake.submissions import (
    Submission,
    notebook_cells,
    notebook_code,
    read_submission,
)

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


@pytest.mark.slow
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


@pytest.mark.slow
@requires_bwrap
@pytest.mark.parametrize("exercise_id", IDS)
def test_reference_scores_full_marks_in_strong_mode(exercise_id):
    exercise = EXERCISES[exercise_id]
    grader = Grader(exercise, seed=3, mode="strong")
    reference = Submission("reference", None, exercise.solution_path.read_text())
    assert grader.grade(reference).score == exercise.max_score


WITH_ERROR_CHECKS = [i for i in IDS if any(isinstance(c, Raises) for c in EXERCISES[i].checks)]


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", WITH_ERROR_CHECKS)
def test_a_submission_that_raises_on_every_input_scores_zero(exercise_id):
    # Raising ValueError whatever the input would pass every error check on its own.
    exercise = EXERCISES[exercise_id]
    source = "".join(
        f"def {function.name}(*arguments):\n    raise ValueError('no input is good')\n\n"
        for function in exercise.functions
    )
    result = Grader(exercise, seed=3, mode="default").grade(Submission("raiser", None, source))
    assert result.score == 0, result.checks
    error_checks = {c.name for c in exercise.checks if isinstance(c, Raises)}
    for check in result.checks:
        if check.name in error_checks:
            assert "it returned no numbers on any valid input of the other checks" in check.message


def test_an_error_check_counts_for_a_function_that_returns_on_good_input(tmp_path):
    # The same error check, passed by a function that also returns numbers, right or wrong:
    # its points stand. A function that returns no numbers on good input earns nothing.
    exercise = checked_double(
        tmp_path,
        (
            Answer(name="two", function="double", kwargs={"x": 1.0}, expected=2.0, points=1),
            Raises(name="refuses-nan", function="double", kwargs={"x": float("nan")}, points=1),
        ),
    )
    grader = Grader(exercise, mode="default")
    sources = {
        "right": (tmp_path / "reference.py").read_text(),
        "wrong": "import math\n\ndef double(x):\n"
        "    if math.isnan(x):\n        raise ValueError('no')\n    return 3 * x\n",
        "garbage": "import math\n\ndef double(x):\n"
        "    if math.isnan(x):\n        raise ValueError('no')\n    return 'two'\n",
        "raiser": "def double(x):\n    raise ValueError('no')\n",
    }
    scores = {
        name: grader.grade(Submission(name, None, source)) for name, source in sources.items()
    }
    assert [c.score for c in scores["right"].checks] == [1.0, 1.0]
    assert [c.score for c in scores["wrong"].checks] == [0.0, 1.0]
    assert [c.score for c in scores["garbage"].checks] == [0.0, 0.0]
    assert [c.score for c in scores["raiser"].checks] == [0.0, 0.0]


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


def test_notebook_cells_become_python_as_jupyter_runs_them():
    """IPython's own transformer: magics, shell escapes and help become get_ipython() calls
    (which the worker answers with a stand-in), a '?' inside a docstring stays, and a cell
    magic other than %%python is skipped with a note."""
    notebook = json.loads(starter_notebook(EXERCISES["bellman-arithmetic"]))
    extra = [
        "%timeit 1\n!pip install x\nY = 2\nY?",
        'def f():\n    """Is this a question?\n    """\n    return 1',
        "%%bash\necho not python",
        "%%writefile x.py\nprint(1)",
        "%%python\nZ = 3",
    ]
    for number, source in enumerate(extra):
        notebook["cells"].append(
            {
                "cell_type": "code",
                "metadata": {},
                "source": source,
                "outputs": [],
                "execution_count": None,
                "id": f"extra-{number}",
            }
        )
    cells, notes = notebook_cells(json.dumps(notebook))
    labels = [label for label, _ in cells]
    assert labels == ["code cell 1", "code cell 2", "code cell 3", "code cell 6"]
    code = dict(cells)
    assert "def chain_values(gamma):" in code["code cell 1"]
    assert "get_ipython().run_line_magic('timeit', '1')" in code["code cell 2"]
    assert (
        "get_ipython().system('pip install x')" in code["code cell 2"]
        and "Y = 2" in code["code cell 2"]
    )
    assert '"""Is this a question?' in code["code cell 3"]
    assert code["code cell 6"].strip() == "Z = 3"
    assert any("code cell 4 starts with %%bash" in note for note in notes)
    assert any("code cell 5 starts with %%writefile" in note for note in notes)
    assert any("code cell 2 uses IPython syntax" in note for note in notes)
    compile(notebook_code(json.dumps(notebook)), "notebook.py", "exec")
    with pytest.raises(ValueError, match="not a readable notebook"):
        notebook_code("{not json")


def test_a_failing_cell_does_not_hide_the_cells_after_it(tmp_path):
    exercise = EXERCISES["bellman-arithmetic"]
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("import a_missing_optional_module"),
        nbformat.v4.new_code_cell("assert False, 'my own check failed'"),
        nbformat.v4.new_code_cell(exercise.solution_path.read_text()),
        nbformat.v4.new_code_cell("raise SystemExit(3)"),
    ]
    (tmp_path / "cells.ipynb").write_text(nbformat.writes(notebook))
    result = Grader(exercise, seed=1, mode="default").grade(
        read_submission(tmp_path / "cells.ipynb")
    )
    assert result.score == exercise.max_score
    notes = " ".join(result.notes)
    assert "code cell 1 raised" in notes and "a_missing_optional_module" in notes
    assert "code cell 2 raised" in notes and "my own check failed" in notes
    assert "code cell 4 raised" in notes and "SystemExit" in notes


def test_odd_but_valid_files(tmp_path):
    """A byte-order mark, and a notebook holding a lone surrogate, get their marks."""
    exercise = EXERCISES["bellman-arithmetic"]
    reference = exercise.solution_path.read_text()
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + reference.encode())
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(reference + '\nMARK = "\ud800"\n')]
    (tmp_path / "surrogate.ipynb").write_text(json.dumps(notebook, ensure_ascii=True))
    grader = Grader(exercise, seed=1, mode="default")
    for name in ("bom.py", "surrogate.ipynb"):
        result = grader.grade(read_submission(tmp_path / name))
        assert result.score == exercise.max_score, (name, result)


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
    from rlfound.grading.intake.submissions import expand

    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "same.py").write_text("")
    (tmp_path / "a" / "grades.csv.py").write_text("")
    names = [name for name, _ in expand([tmp_path / "a", tmp_path / "b", tmp_path / "x.py"])]
    assert len(set(names)) == 4 and names[-1] == "x"
    assert names[0].startswith("grades.csv-") and names[0] != "grades.csv"
    assert names[1].startswith("same-") and names[2].startswith("same-")


def test_a_look_alike_never_takes_a_classmates_name(tmp_path):
    """Own names first: whatever sorts first, ``alice.py`` is ``alice``; a file whose name had
    to be changed, or that shares a stem, gets a name no other file's name gives."""
    from rlfound.grading.intake.submissions import scan

    for name in (
        "alice!.py",
        "alice.py",
        " alice.py",
        "alice_.py",
        "alice-2.py",
        "bob.py",
        "bob.ipynb",
        "skipped.csv.py",
        "Grades.csv.py",
    ):
        (tmp_path / name).write_text("")
    entries = {Path(e.path).name: e.name for e in scan([tmp_path]).entries}
    assert entries["alice.py"] == "alice" and entries["alice-2.py"] == "alice-2"
    assert entries["alice_.py"].startswith("alice-") and entries["alice!.py"].startswith("alice-")
    assert entries[" alice.py"].startswith("alice-")
    assert entries["bob.py"] != entries["bob.ipynb"] and "bob" not in entries.values()
    assert entries["skipped.csv.py"].startswith("skipped.csv-")
    assert entries["Grades.csv.py"].startswith("Grades.csv-")
    assert len(set(entries.values())) == len(entries)
    # Stable: the same folder gives the same names, whatever else is added to it.
    (tmp_path / "zed.py").write_text("")
    again = {Path(e.path).name: e.name for e in scan([tmp_path]).entries}
    assert all(again[name] == entries[name] for name in entries)


def test_the_submissions_folder_is_data(tmp_path):
    """Links, FIFOs, sockets and folders are never read; each is reported with the reason."""
    import socket

    from rlfound.grading.intake.submissions import scan

    folder = tmp_path / "class"
    folder.mkdir()
    reference = EXERCISES["gae-recursion"].solution_path
    (folder / "link.py").symlink_to(reference)
    (folder / "linkdir").symlink_to(reference.parent)
    os.mkfifo(folder / "fifo.py")
    os.mkfifo(folder / "fifo")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "sock.ipynb"))
    server.close()
    (folder / "folder.py").mkdir()
    (folder / "sub").mkdir()
    (folder / "notes.md").write_text("")
    (folder / "ok.py").write_text("x = 1\n")
    found = scan([folder, tmp_path / "missing.py", folder / "link.py"])
    problems = {
        Path(e.path).name + ("@cli" if e.path.parent != folder else ""): e.problem
        for e in found.entries
    }
    assert problems["ok.py"] is None
    assert "symbolic link" in problems["link.py"]
    assert "FIFO" in problems["fifo.py"] and "socket" in problems["sock.ipynb"]
    assert "a folder" in problems["folder.py"] and problems["missing.py@cli"] == "not found"
    skipped = {Path(entry).name: reason for entry, reason in found.skipped}
    assert set(skipped) == {"linkdir", "fifo", "sub", "notes.md"}
    assert "symbolic link" in skipped["linkdir"] and "one level deep" in skipped["sub"]
    grader = Grader(EXERCISES["gae-recursion"], mode="default")
    for entry in found.entries:
        submission = read_submission(entry.path, entry=entry)
        if entry.problem is not None:
            assert submission.source is None and entry.problem in submission.error
    # A link named on the command line is not followed either.
    link = next(e for e in found.entries if e.path == folder / "link.py" and e.problem)
    assert grader.grade(read_submission(link.path, entry=link)).score == 0
