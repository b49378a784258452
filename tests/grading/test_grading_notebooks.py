"""Notebooks: their conversion to Python runs under a limit, in ``grade``, ``check`` and
Gradescope's runner, and the cell magics that run their body as Python (``%%time``,
``%%capture``, ``%%timeit``) count as Python (ISSUE: notebook conversion under a limit, and
Python cell magics).

The commands run as separate processes, as a teacher or a student runs them, with a generous
timeout: it guards against a hang (the bug this file is about), it times nothing.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import psutil
import pytest
from _grading_helpers import REPO, copy_reference

from rlfound.grading.intake import notebooks
from rlfound.grading.intake.submissions import notebook_cells

EXERCISE = "gae-recursion"
SOLUTION = (REPO / "solutions" / "gae_recursion.py").read_text()
#: Only a hang guard: the crafted notebook is stopped after a few seconds of CPU time.
HANG_GUARD = 900
#: Cell magics whose body is Python run in the notebook's namespace, as a student writes them.
PYTHON_MAGICS = ["%%time", "%%capture", "%%capture out --no-stderr", "%%timeit -n1 -r1"]
#: Cell magics whose body is not Python the notebook runs.
OTHER_MAGICS = ["%%bash", "%%writefile gae.py", "%%html", "%%script python3"]
#: Python that would cost the recursion its points if the grader ran it.
SABOTAGE = "def gae_recursive(*args, **kwargs):\n    raise RuntimeError('this cell ran')\n"
#: The reason a notebook past the CPU-time limit gets: on a machine so busy that the child
#: does not get that much CPU time before the wall-clock guard, the guard's reason.
LIMIT_REASON = re.compile(
    f"converting its cells to Python (took more than {notebooks.CPU_SECONDS} s of CPU time"
    f"|did not finish within {notebooks.WALL_SECONDS:g} s)"
)


def crafted_notebook() -> str:
    """One large cell full of magics: IPython's transformer tokenizes the whole cell again for
    each magic it rewrites, so converting it without a limit takes many minutes of CPU time
    (hours for a few such cells), well within the size of a submission."""
    cell = "%time 1\n" * 499 + "x = 1\n" * 100_000
    text = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)]))
    assert len(text.encode()) < notebooks.MAX_INPUT_BYTES
    return text


def notebook(*sources: str) -> str:
    return nbformat.writes(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    )


def slug(magic: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in magic.strip("%")).strip("_")


def command(*argv: str, timeout: float = HANG_GUARD) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """One class graded with ``rlfound grade``: an honest ``.py`` file, the crafted notebook,
    the solution inside each Python cell magic, and the solution followed by a sabotaging
    cell under each other cell magic. ``(completed process, rows of grades.csv by name,
    output folder)``."""
    root = tmp_path_factory.mktemp("notebooks")
    folder = root / "class"
    copy_reference(folder, "honest")
    (folder / "crafted.ipynb").write_text(crafted_notebook())
    for magic in PYTHON_MAGICS:
        (folder / f"magic_{slug(magic)}.ipynb").write_text(notebook(f"{magic}\n{SOLUTION}"))
    for magic in OTHER_MAGICS:
        text = notebook(SOLUTION, f"{magic}\n{SABOTAGE}")
        (folder / f"other_{slug(magic)}.ipynb").write_text(text)
    out = root / "out"
    argv = ["-m", "rlfound", "grade", EXERCISE, str(folder), "--out", str(out), "--jobs", "2"]
    argv += ["--seed", "0"]  # module-scoped: set up before the tests' own seed fixture
    completed = command(*argv, "--no-progress")
    rows = {}
    if (out / "grades.csv").exists():
        with open(out / "grades.csv", newline="") as handle:
            rows = {row["submission"]: row for row in csv.DictReader(handle)}
    return completed, rows, out


def test_a_crafted_notebook_is_a_recorded_failure_and_the_batch_goes_on(batch):
    completed, rows, out = batch
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert set(rows) == {
        "honest",
        "crafted",
        *(f"magic_{slug(m)}" for m in PYTHON_MAGICS),
        *(f"other_{slug(m)}" for m in OTHER_MAGICS),
    }
    crafted = rows["crafted"]
    assert float(crafted["score"]) == 0 and float(crafted["max_score"]) > 0
    assert LIMIT_REASON.search(crafted["note"]), crafted
    assert rows["honest"]["score"] == rows["honest"]["max_score"], rows["honest"]
    results = json.loads((out / "crafted" / "results.json").read_text())
    assert results["score"] == 0 and LIMIT_REASON.search(results["output"])


@pytest.mark.parametrize("magic", PYTHON_MAGICS)
def test_a_python_cell_magic_runs_its_body_in_grade(batch, magic):
    _, rows, out = batch
    name = f"magic_{slug(magic)}"
    assert rows[name]["score"] == rows[name]["max_score"] and not rows[name]["note"], rows[name]
    results = json.loads((out / name / "results.json").read_text())
    assert "Note:" not in results["output"]  # nothing skipped, no cell raised


@pytest.mark.parametrize("magic", OTHER_MAGICS)
def test_a_cell_magic_that_is_not_python_is_not_run(batch, magic):
    _, rows, out = batch
    name = f"other_{slug(magic)}"
    assert rows[name]["score"] == rows[name]["max_score"], rows[name]
    feedback = (out / name / "feedback.md").read_text()
    assert f"code cell 2 starts with {magic.split()[0]}: it is not Python" in feedback


def test_check_stops_a_crafted_notebook_with_the_reason(tmp_path):
    crafted = tmp_path / "crafted.ipynb"
    crafted.write_text(crafted_notebook())
    completed = command("-m", "rlfound", "check", str(crafted), "--exercise", EXERCISE)
    assert completed.returncode == 2, completed.stderr[-2000:]
    assert LIMIT_REASON.search(completed.stderr)


def gradescope(tmp_path: Path, name: str, text: str) -> dict:
    """Run Gradescope's runner on an upload of one file; its results.json."""
    upload = tmp_path / "submission"
    upload.mkdir()
    (upload / name).write_text(text)
    results = tmp_path / "results.json"
    completed = command(
        "-m",
        "rlfound.grading.distribution.gradescope",
        "--exercise",
        EXERCISE,
        "--submission-dir",
        str(upload),
        "--results",
        str(results),
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    return json.loads(results.read_text())


def test_gradescope_records_a_crafted_notebook_with_the_reason(tmp_path):
    results = gradescope(tmp_path, "crafted.ipynb", crafted_notebook())
    assert results["score"] == 0 and LIMIT_REASON.search(results["output"]), results


@pytest.mark.parametrize("magic", PYTHON_MAGICS)
def test_a_python_cell_magic_scores_full_in_check_and_gradescope(tmp_path, magic):
    submission = tmp_path / "mine.ipynb"
    submission.write_text(notebook(f"{magic}\n{SOLUTION}"))
    completed = command("-m", "rlfound", "check", str(submission), "--exercise", EXERCISE)
    assert completed.returncode == 0, completed.stdout + completed.stderr[-2000:]
    assert "FAIL" not in completed.stdout and "PASS" in completed.stdout
    results = gradescope(tmp_path, "mine.ipynb", submission.read_text())
    assert results["score"] > 0 and all(
        test["score"] == test["max_score"] for test in results["tests"]
    ), results


def test_python_cell_magics_become_their_body_once():
    """The body runs once; a %%timeit setup statement runs before it; a name %%capture or
    %%timeit -v would store its result in holds the worker's stand-in; magics nest; a line
    magic inside still becomes a call; options IPython refuses make the cell skipped, as
    Jupyter would not run it."""
    cells, notes = notebook_cells(
        notebook(
            "%%timeit -n1 -r1 import math\nA = math.pi",
            "%%capture out\nB = 2",
            "\n%%capture\n%%time\nC = 3\n%ls",
            "%%timeit -v res -n 1\nD = 4",
            "%%time E = 5\nF = 6",
            "%%timeit -z\nG = 7",
            "%%capture one two\nH = 8",
        )
    )
    code = dict(cells)
    assert code["code cell 1"] == "import math\nA = math.pi\n"
    assert code["code cell 2"] == "B = 2\nout = get_ipython()\n"
    assert code["code cell 3"] == "C = 3\nget_ipython().run_line_magic('ls', '')\n"
    assert code["code cell 4"] == "D = 4\nres = get_ipython()\n"
    assert sorted(code) == [f"code cell {n}" for n in (1, 2, 3, 4)]
    assert any("code cell 3 uses IPython syntax" in note for note in notes)
    assert not any("code cell 2 uses IPython syntax" in note for note in notes)
    assert any("code cell 5 starts with %%time, which takes no statement" in n for n in notes)
    assert any("code cell 6 starts with %%timeit, which has options IPython" in n for n in notes)
    assert any("code cell 7 starts with %%capture, which has options IPython" in n for n in notes)


def memory_notebook() -> str:
    """A notebook whose reading needs a few hundred MiB: 600,000 empty objects in its
    metadata (nbformat builds and copies a dictionary for each)."""
    document = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    document.metadata["padding"] = [{}] * 600_000
    text = json.dumps(document, separators=(",", ":"))
    assert len(text.encode()) < notebooks.MAX_INPUT_BYTES
    return text


def converter_processes() -> list[psutil.Process]:
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if any("notebook_converter" in part for part in child.cmdline()):
                found.append(child)
        except psutil.Error:
            continue
    return found


#: One limit each: the limits changed for the test (so that only that one can stop the
#: conversion), the notebook, and the reason the student reads.
LIMITS = {
    "cpu-time": (
        {"WALL_SECONDS": 3600.0},
        crafted_notebook,
        f"took more than {notebooks.CPU_SECONDS} s of CPU time",
    ),
    "wall-clock": (
        {"CPU_SECONDS": 3600, "WALL_SECONDS": 1.0},
        crafted_notebook,
        "did not finish within 1 s (the grader's wall-clock limit",
    ),
    "memory": (
        {"ADDRESS_SPACE": 150 * 2**20},
        memory_notebook,
        "needed more than 150 MiB of memory",
    ),
    "output-size": (
        {"MAX_OUTPUT_BYTES": 1000},
        lambda: notebook("x = 1\n" * 400),
        "its cells, as Python, are larger than 1000 bytes",
    ),
    "input-size": (
        {},
        lambda: notebook("x = 1\n" * (notebooks.MAX_INPUT_BYTES // 5)),
        f"the notebook is larger than {notebooks.MAX_INPUT_BYTES} bytes",
    ),
}


@pytest.mark.parametrize("limit", LIMITS)
def test_each_limit_stops_the_conversion_with_its_reason(monkeypatch, limit):
    changes, make, reason = LIMITS[limit]
    for name, value in changes.items():
        monkeypatch.setattr(notebooks, name, value)
    with pytest.raises(ValueError) as raised:
        notebook_cells(make())
    assert reason in str(raised.value)
    assert not converter_processes()  # the child stopped, or was killed and reaped


def test_an_honest_notebook_converts_within_the_limits():
    """The memory notebook is large but honest: under the real limits it converts."""
    cells, _ = notebook_cells(memory_notebook())
    assert cells == [("code cell 1", "x = 1\n")]
