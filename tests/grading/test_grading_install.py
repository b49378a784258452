"""rlfound outside a checkout: the wheel carries the reference solutions, and a teacher who
pip-installs it in a fresh virtual environment can use every subcommand on every exercise.

The ``install`` tests build the wheel from a copy of this checkout, install it with its
requirements from PyPI into a new virtual environment outside the repository and run the
installed ``rlfound`` command from yet another folder, without PYTHONPATH, so that nothing of
the checkout can be imported by accident.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from _grading_helpers import (
    BUGGY_GAE,
    HOSTILE,
    REPO,
    outside_environment,
    require_pypi,
    requirements_only_venv,
)

from rlfound.grading import load_exercises
from rlfound.grading.authoring import spec

EXERCISES = load_exercises()
#: What a clean checkout holds, minus build output, environments and caches (.gitignore).
IGNORED = shutil.ignore_patterns(
    ".git",
    ".venv",
    "_build",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    "*.py[cod]",
    ".pytest_cache",
    ".hypothesis",
    ".ruff_cache",
    ".ipynb_checkpoints",
    ".jupyter_cache",
    "jupyter_execute",
)


def test_the_book_solutions_are_found_through_the_package():
    found = importlib.util.find_spec("rlfound.solutions")
    assert found is not None, "rlfound.solutions is missing: run pip install -e '.[dev]'"
    (folder,) = found.submodule_search_locations
    assert Path(folder).resolve() == (REPO / "solutions").resolve() == spec.BOOK_SOLUTIONS
    assert all(e.solution_path.parent == spec.BOOK_SOLUTIONS for e in EXERCISES.values())


def test_a_checkout_that_is_not_installed_finds_them_next_to_the_package(tmp_path):
    """``PYTHONPATH=checkout python -m rlfound``, with rlfound not installed, still works."""
    venv = requirements_only_venv(tmp_path)
    completed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "rlfound", "starter", "bellman-arithmetic", "-o", "-"],
        cwd=tmp_path,
        env={**outside_environment(), "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "def chain_values(gamma):" in completed.stdout


def test_pyproject_lists_every_package():
    """Packages are listed, not discovered (rlfound.solutions lives in solutions/, and
    rlfound.chapters in chapters/): a new subpackage of rlfound must be added to the list, or
    the wheel would lack it."""
    tomllib = pytest.importorskip("tomllib")
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    book = {"rlfound.solutions": "solutions", "rlfound.chapters": "chapters"}
    assert setuptools["package-dir"] == book
    found = {
        ".".join(path.parent.relative_to(REPO).parts)
        for path in (REPO / "rlfound").rglob("__init__.py")
        if "__pycache__" not in path.parts
    }
    assert sorted(setuptools["packages"]) == sorted(found | set(book))
    assert all((REPO / folder / "__init__.py").is_file() for folder in book.values())


# ---------------------------------------------------------------- the installed wheel


def run(*command, cwd: Path, check: bool = True, timeout: float = 600):
    completed = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=outside_environment(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if check:
        assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return completed


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from a copy of this checkout (the build writes next to its sources)."""
    require_pypi()  # the build fetches setuptools into an isolated environment
    work = tmp_path_factory.mktemp("wheel")
    shutil.copytree(REPO, work / "rlfound", ignore=IGNORED)
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "-w",
        work / "dist",
        work / "rlfound",
        cwd=work,
    )
    (built,) = (work / "dist").glob("rlfound-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtual environment, outside the repository, with the wheel pip-installed."""
    venv = tmp_path_factory.mktemp("teacher-env") / "venv"
    assert REPO.resolve() not in venv.resolve().parents
    run(sys.executable, "-m", "venv", venv, cwd=venv.parent)
    run(venv / "bin" / "python", "-m", "pip", "install", wheel, cwd=venv.parent)
    return venv


@pytest.mark.install
def test_the_wheel_ships_the_solutions_and_the_chapters(wheel):
    """The reference solutions and, for rlfound classpack, the pages of the chapters and of
    the solutions with the chapters' data; nothing else of the book, no tests."""
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    patterns = {"solutions": ("*.py", "*.md"), "chapters": ("*.py", "*.md", "data/*.*")}
    for folder, globs in patterns.items():
        books = {
            path.relative_to(REPO / folder).as_posix()
            for pattern in globs
            for path in (REPO / folder).glob(pattern)
            if path.suffix in (".py", ".md", ".npz")
        }
        prefix = f"rlfound/{folder}/"
        assert {n.removeprefix(prefix) for n in names if n.startswith(prefix)} == books
    assert "data/trainer_batch.npz" in books and "__init__.py" in books
    book_pages = [n for n in names if n.endswith(".md")]
    assert len(book_pages) == 2 * len(list((REPO / "chapters").glob("*.md")))
    assert not any(name.endswith(".ipynb") for name in names)
    assert not any(name.startswith(("solutions/", "tests/", "chapters/")) for name in names)
    specs = {f"rlfound/grading/authoring/exercises/{e.source.name}" for e in EXERCISES.values()}
    assert specs <= names


@pytest.mark.install
def test_a_teacher_uses_every_subcommand_from_an_installed_wheel(installed, tmp_path):
    """exercises, starter, check, grade, gradescope and verify, from a folder with no checkout."""
    teacher = tmp_path / "course"
    teacher.mkdir()
    python, rlfound = installed / "bin" / "python", installed / "bin" / "rlfound"
    probe = (
        "import sys, rlfound, rlfound.solutions\n"
        "print(rlfound.__file__, sys.path, rlfound.solutions.__file__, sep='\\n')"
    )
    where = run(python, "-c", probe, cwd=teacher).stdout.splitlines()
    assert installed.resolve() in Path(where[0]).resolve().parents
    assert str(REPO) not in where[1]
    assert installed.resolve() in Path(where[2]).resolve().parents

    listing = run(rlfound, "exercises", cwd=teacher).stdout
    assert all(exercise_id in listing for exercise_id in EXERCISES)
    for exercise_id in EXERCISES:
        run(rlfound, "starter", exercise_id, cwd=teacher)
        starter = (teacher / (exercise_id.replace("-", "_") + ".py")).read_text()
        assert starter.startswith(f"# rlfound exercise: {exercise_id}")
        assert "raise NotImplementedError" in starter

    reference = (REPO / "solutions" / "gae_recursion.py").read_text()
    (teacher / "mine.py").write_text(reference)
    checked = run(rlfound, "check", "mine.py", "--exercise", "gae-recursion", cwd=teacher)
    assert checked.stdout.count("PASS") == 7 and "FAIL" not in checked.stdout

    (teacher / "class").mkdir()
    (teacher / "class" / "ana.py").write_text(reference)
    (teacher / "class" / "ben.py").write_text(BUGGY_GAE)
    # The installed reference solutions are as unreadable to a submission as a checkout's
    # (default mode: the audit hook's allowed folders; strong mode does not mount them at all).
    installed_solutions = Path(where[2]).parent
    attack = (HOSTILE / "read_reference.py").read_text()
    attack = attack.replace("__REPO__/solutions", str(installed_solutions))
    (teacher / "class" / "eve.py").write_text(attack)
    grade = ("grade", "gae-recursion", "class", "--out", "grades", "--seed", "3")
    run(rlfound, *grade, "--mode", "default", cwd=teacher)
    with open(teacher / "grades" / "grades.csv", newline="") as sheet:
        rows = {row["submission"]: row for row in csv.DictReader(sheet)}
    assert rows["ana"]["score"] == rows["ana"]["max_score"] == "11"
    assert 0 < float(rows["ben"]["score"]) < 11
    assert rows["eve"]["score"] == "10" and rows["eve"]["recursive-edges"] == "0"
    assert json.loads((teacher / "grades" / "ana" / "results.json").read_text())["score"] == 11

    run(rlfound, "gradescope", "gae-recursion", "-o", "autograder.zip", cwd=teacher)
    with zipfile.ZipFile(teacher / "autograder.zip") as archive:
        names = set(archive.namelist())
        requirements = archive.read("requirements.txt").decode()
    assert {"setup.sh", "run_autograder", "rlfound/solutions/gae_recursion.py"} <= names
    assert "numpy" in requirements and "matplotlib" not in requirements

    verified = run(rlfound, "verify", "bellman-arithmetic", cwd=teacher)
    assert "every property holds" in verified.stdout


#: Executes a notebook in a fresh kernel started in the notebook's folder, then prints where
#: the kernel ran (folder and interpreter), so a test can see that it was the pack's folder
#: and the installed environment.
EXECUTE_NOTEBOOK = """
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

path = Path(sys.argv[1]).resolve()
notebook = nbformat.read(path, as_version=4)
where = "import os, sys; print(os.getcwd()); print(sys.prefix)"
notebook.cells.append(nbformat.v4.new_code_cell(where))
folder = {"metadata": {"path": str(path.parent)}}
client = NotebookClient(notebook, timeout=600, kernel_name="python3", resources=folder)
client.execute()
print(notebook.cells[-1].outputs[0]["text"], end="")
"""


@pytest.mark.install
def test_a_teacher_makes_a_class_pack_from_an_installed_wheel(installed, wheel, tmp_path):
    """rlfound classpack outside a checkout: the same files as from the checkout, starters
    without solutions, the README's commands work, and a chapter that reads its data runs in
    a fresh kernel from the pack's folder."""
    from rlfound.grading.authoring import starter
    from rlfound.grading.distribution import classpack
    from tests.test_classpack import files_of, long_solution_regions, pack_lines

    teacher = tmp_path / "course"
    teacher.mkdir()
    python, rlfound = installed / "bin" / "python", installed / "bin" / "rlfound"
    run(rlfound, "classpack", "--out", "pack", cwd=teacher)
    pack = teacher / "pack"
    expected = classpack.pack_files(EXERCISES, with_solutions=False)
    assert files_of(pack) == set(expected)
    for exercise in EXERCISES.values():
        name = exercise.id.replace("-", "_")
        assert (pack / "exercises" / f"{name}.py").read_text() == starter.starter_source(exercise)
    for name in expected:
        if name.startswith("chapters/") and name.endswith(".ipynb"):
            cells = nbformat.read(pack / name, as_version=4).cells
            ours = nbformat.reads(expected[name].decode(), as_version=4).cells
            assert [c.source for c in cells] == [c.source for c in ours], name
    lines = pack_lines(pack)
    assert not any(region in lines for _, region in long_solution_regions())

    again = run(rlfound, "classpack", "--out", "pack", cwd=teacher, check=False)
    assert again.returncode == 2 and "pass --force" in again.stderr
    assert files_of(pack) == set(expected)

    run(rlfound, "classpack", "--out", "teaching", "--with-solutions", cwd=teacher)
    solutions = teacher / "teaching" / classpack.SOLUTIONS
    assert (solutions / "gae_recursion.py").read_bytes() == (
        REPO / "solutions" / "gae_recursion.py"
    ).read_bytes()
    assert len(list(solutions.glob("*.ipynb"))) == len(list((REPO / "solutions").glob("*.md")))

    # The README's commands: install this very wheel, then self-check a starter.
    readme = (pack / "README.md").read_text()
    assert f"pip install {wheel.name} matplotlib jupyterlab" in readme
    checked = run(
        rlfound, "check", "exercises/gae_recursion.py", "--mode", "default", cwd=pack, check=False
    )
    assert checked.returncode == 1 and "FAIL" in checked.stdout
    assert "rlfound check exercises/" in readme

    # The README installs Matplotlib and a Jupyter front end; a kernel and a client suffice here.
    run(python, "-m", "pip", "install", "matplotlib", "ipykernel", "nbclient", cwd=teacher)
    script = teacher / "execute_notebook.py"
    script.write_text(EXECUTE_NOTEBOOK)
    chapter = pack / "chapters" / "12_estimator_diagnostics.ipynb"
    executed = run(python, script, chapter, cwd=teacher).stdout.splitlines()
    assert Path(executed[-2]) == chapter.parent.resolve()
    assert Path(executed[-1]).resolve() == installed.resolve()
