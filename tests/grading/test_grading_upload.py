"""Gradescope's run path writes a valid ``results.json`` whatever the student uploads.

Each upload below is hostile or odd (a folder chain 2,000 levels deep, 100,000 files, link
loops, a FIFO, a name that is not UTF-8, unreadable entries, nothing to grade, several
candidates); the runner (``python -m rlfound.grading.distribution.gradescope``, run here
in-process) must exit 0 with a ``results.json`` in Gradescope's format whose ``output`` says
which file was graded and why. A failure of the autograder itself (the search, the grader)
is a results file with a zero and the reason, too.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
from _grading_helpers import (
    REPO,
    gradescope_results,
    requirements_only_venv,
    run_autograder,
    unpack_like_gradescope,
)

from rlfound.cli import main as rlfound_main
from rlfound.grading import load_exercises
from rlfound.grading.distribution import gradescope, upload
from rlfound.grading.intake import files
from rlfound.grading.scoring.grader import Grader

EXERCISE = load_exercises()["bellman-arithmetic"]
FULL = EXERCISE.max_score
CORRECT = (REPO / "solutions" / "bellman_arithmetic.py").read_text()
WRONG = "def chain_values(gamma):\n    return [0.0, 0.0, 0.0]\n"
HEADER = "# rlfound exercise: bellman-arithmetic\n"


@dataclasses.dataclass(frozen=True)
class Expected:
    """What the results say: the file graded (as shown to the student; None for none), the
    score, and phrases of the output."""

    graded: str | None
    score: float
    phrases: tuple[str, ...] = ()


def chain(folder: Path, depth: int) -> None:
    """``folder/d/d/.../d``, ``depth`` levels, made through descriptors (deeper than any path
    the kernel accepts), with a file at the bottom."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=descriptor)
            inner = os.open("d", os.O_RDONLY, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = inner
        # At the bottom, a file the search would pick if it got there (it names the exercise).
        bottom = os.open("buried.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=descriptor)
        os.write(bottom, (HEADER + WRONG).encode())
        os.close(bottom)
    finally:
        os.close(descriptor)


def deep(folder: Path) -> Expected:
    chain(folder, 2000)
    (folder / "answer.py").write_text(CORRECT)
    return Expected("answer.py", FULL, ("the only .py or .ipynb file", "not searched"))


def many(folder: Path) -> Expected:
    (folder / "many").mkdir()
    descriptor = os.open(folder / "many", os.O_RDONLY)
    try:
        for number in range(100_000):
            os.close(
                os.open(f"f{number:06d}.py", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=descriptor)
            )
    finally:
        os.close(descriptor)
    (folder / "answer.py").write_text(HEADER + CORRECT)
    return Expected("answer.py", FULL, ("names this exercise", "more than 10000 entries"))


def links(folder: Path) -> Expected:
    (folder / "loop").symlink_to(".", target_is_directory=True)
    (folder / "self.py").symlink_to("self.py")
    (folder / "reference.py").symlink_to(EXERCISE.solution_path)
    (folder / "answer.py").write_text(WRONG)
    return Expected(
        "answer.py", 0, ("self.py is a symbolic link", "reference.py is a symbolic link")
    )


def fifo(folder: Path) -> Expected:
    os.mkfifo(folder / "answer.py")
    return Expected(None, 0, ("no .py or .ipynb file", "answer.py is a FIFO"))


def undecodable(folder: Path) -> Expected:
    name = os.path.join(os.fsencode(folder), b"\xff\xfeanswer.py")
    with open(name, "w") as handle:
        handle.write(CORRECT)
    return Expected("\\xff\\xfeanswer.py", FULL)


def unreadable(folder: Path) -> Expected:
    (folder / "answer.py").write_text(CORRECT)
    (folder / "answer.py").chmod(0)
    (folder / "closed").mkdir()
    (folder / "closed" / "other.py").write_text(WRONG)
    (folder / "closed").chmod(0)
    if os.geteuid() == 0:  # root reads them all the same
        return Expected("answer.py", FULL, ("Not graded: closed/other.py",))
    return Expected("answer.py", 0, ("could not be read", "folders that could not be read: closed"))


def nothing(folder: Path) -> Expected:
    (folder / "README.md").write_text("my answer is in my head")
    (folder / "data").mkdir()
    (folder / "data" / "values.csv").write_text("0.8,1,0\n")
    (folder / "py").mkdir()  # a folder named like nothing but a suffix
    return Expected(None, 0, ("no .py or .ipynb file",))


def several_by_header(folder: Path) -> Expected:
    (folder / "scratch.py").write_text(WRONG)
    (folder / "notes.py").write_text("x = 1\n")
    (folder / "hw").mkdir()
    (folder / "hw" / "mine.py").write_text(HEADER + CORRECT)
    # Copies that are not the student's work: never candidates, never named.
    (folder / ".ipynb_checkpoints").mkdir()
    (folder / ".ipynb_checkpoints" / "mine-checkpoint.py").write_text(HEADER + WRONG)
    (folder / "__MACOSX").mkdir()
    (folder / "__MACOSX" / "mine.py").write_text(HEADER + WRONG)
    (folder / "._mine.py").write_bytes(b"\x00\x05\x16\x07")
    phrases = ("3 .py or .ipynb files", "names this exercise", "Not graded: scratch.py, notes.py")
    return Expected("hw/mine.py", FULL, phrases)


def several_by_functions(folder: Path) -> Expected:
    (folder / "notes.py").write_text("x = 1\n")
    (folder / "answer.py").write_text(CORRECT)
    # It defines the function too, but says it belongs to another exercise.
    (folder / "another.py").write_text("# rlfound exercise: gae-recursion\n" + WRONG)
    return Expected("answer.py", FULL, ("it defines chain_values", "another.py"))


def several_by_name(folder: Path) -> Expected:
    (folder / "aaa.py").write_text("x = 1\n")
    lambda_answer = "import numpy as np\nchain_values = lambda gamma: np.array([gamma, 1.0, 0.0])\n"
    (folder / "bellman_arithmetic.py").write_text(lambda_answer)
    return Expected("bellman_arithmetic.py", FULL, ("the starter's name", "Not graded: aaa.py"))


def notebook(folder: Path) -> Expected:
    cells = [nbformat.v4.new_code_cell(HEADER + CORRECT)]
    (folder / "work.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook(cells=cells)))
    (folder / "scratch.py").write_text(WRONG)
    return Expected("work.ipynb", FULL, ("names this exercise",))


UPLOADS: list[Callable[[Path], Expected]] = [
    deep,
    pytest.param(many, marks=pytest.mark.slow),
    links,
    fifo,
    undecodable,
    unreadable,
    nothing,
    several_by_header,
    several_by_functions,
    several_by_name,
    notebook,
]


def run_runner(tmp_path: Path, folder: Path, *argv: str) -> tuple[int, Path]:
    results = tmp_path / "results" / "results.json"
    argv = ("--exercise", EXERCISE.id, "--timeout", "5", *argv)
    status = gradescope.main([*argv, "--submission-dir", str(folder), "--results", str(results)])
    return status, results


@pytest.mark.parametrize("build", UPLOADS)
def test_every_upload_gets_a_results_file(tmp_path, build):
    folder = tmp_path / "submission"
    folder.mkdir()
    try:
        expected = build(folder)
        status, results = run_runner(tmp_path, folder)
    finally:
        files.remove_tree(folder)  # pytest's own clean-up recurses, and 2,000 levels is deep
    assert status == 0
    document = gradescope_results(results)
    output = document["output"]
    assert document["score"] == expected.score, output
    if expected.graded is None:
        assert "Graded" not in output
    else:
        assert output.startswith(f"Graded {expected.graded}, "), output
    for phrase in expected.phrases:
        assert phrase in output


def test_a_missing_upload_folder_gets_a_results_file(tmp_path):
    status, results = run_runner(tmp_path, tmp_path / "no-such-folder")
    assert status == 0
    document = gradescope_results(results)
    assert document["score"] == 0 and "could not be read" in document["output"]


def _raise(error: BaseException):
    def raising(*args, **kwargs):
        raise error

    return raising


@pytest.mark.parametrize(
    ("target", "error"),
    [
        ((upload, "_search"), RecursionError("maximum recursion depth exceeded")),
        ((gradescope, "choose_submission"), OSError(36, "File name too long")),
        ((Grader, "grade"), RuntimeError("a bug in the grader")),
        ((Grader, "__init__"), ValueError("the reference solution is broken")),
    ],
    ids=["search", "choice", "grade", "grader"],
)
def test_a_failure_of_the_autograder_still_writes_results(tmp_path, monkeypatch, target, error):
    monkeypatch.setattr(*target, _raise(error))
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "answer.py").write_text(CORRECT)
    status, results = run_runner(tmp_path, folder)
    assert status == 0  # results were written: what Gradescope expects
    document = gradescope_results(results)
    assert document["score"] == 0
    assert f"the autograder failed: {type(error).__name__}: {error}" in document["output"]


def test_a_bundle_naming_an_unknown_exercise_still_writes_results(tmp_path, capsys):
    folder = tmp_path / "submission"
    folder.mkdir()
    results = tmp_path / "results.json"
    argv = ["--exercise", "no-such", "--submission-dir", str(folder), "--results", str(results)]
    assert gradescope.main(argv) == 2
    assert "unknown exercise 'no-such'" in capsys.readouterr().err
    assert "the autograder failed" in gradescope_results(results)["output"]


def test_results_that_cannot_be_written_are_an_error(tmp_path, capsys):
    (tmp_path / "submission").mkdir()
    (tmp_path / "results").write_text("a file where the results folder should be")
    status, _ = run_runner(tmp_path, tmp_path / "submission")
    assert status == 1
    assert "could not be written" in capsys.readouterr().err


@pytest.mark.slow
def test_the_bundle_grades_a_deep_upload(tmp_path):
    """Through the real run_autograder of a bundle: a folder chain 2,000 levels deep."""
    bundle = tmp_path / "autograder.zip"
    assert rlfound_main(["gradescope", EXERCISE.id, "-o", str(bundle), "--timeout", "5"]) == 0
    root = tmp_path / "autograder"
    script = unpack_like_gradescope(bundle, root)
    requirements_only_venv(root)
    try:
        deep(root / "submission")
        completed = run_autograder(script, root)
    finally:
        files.remove_tree(root / "submission" / "d")
    assert completed.returncode == 0, completed.stderr[-2000:]
    document = gradescope_results(root / "results" / "results.json")
    assert document["score"] == FULL
    assert document["output"].startswith("Graded answer.py, the only .py or .ipynb file.")
