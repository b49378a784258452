"""rlfound outside a checkout, as its users get it: two wheels from one source.

Students install the ``rlfound`` wheel: it holds no reference solution, no worked solution and
no graded-only check, yet ``rlfound check`` works (the public checks' expected outputs were
recorded when it was built), and ``grade`` says which package it needs. The teaching team
installs ``rlfound-instructor`` beside it, and every subcommand works on every exercise.

The ``install`` tests build both wheels from a copy of this checkout, as ``make wheels`` does,
install them with their requirements from PyPI into new virtual environments outside the
repository and run the installed ``rlfound`` command from yet another folder, without
PYTHONPATH, so that nothing of the checkout can be imported by accident. What they install is
searched for answers by ``_answers.py``, written independently of the packaging.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the tomli backport, a dependency there
    import tomli as tomllib

import nbformat
import pytest
from _answers import find_answers, reference_regions, worked_runs
from _grading_helpers import (
    BUGGY_GAE,
    REPO,
    hostile_source,
    outside_environment,
    require_pypi,
    requirements_only_venv,
)

from rlfound.grading import load_exercises
from rlfound.grading.authoring import instructor, spec

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


def test_a_checkout_is_the_teaching_teams_side():
    """In the repository the instructor material is solutions/, and every book exercise has
    its graded-only checks from solutions/graded/."""
    assert instructor.instructor_folder() == (REPO / "solutions").resolve() == spec.BOOK_SOLUTIONS
    for exercise in EXERCISES.values():
        assert exercise.complete and exercise.solution_path.parent == spec.BOOK_SOLUTIONS
        assert any(not check.public for check in exercise.checks), exercise.id
        assert (REPO / "solutions" / "graded" / exercise.source.name).is_file()


def test_a_book_specification_holds_public_checks_only():
    """The specifications ship to students; their graded checks are in solutions/graded/."""
    for exercise in EXERCISES.values():
        assert "public=False" not in exercise.source.read_text(), exercise.source.name
        graded = (REPO / "solutions" / "graded" / exercise.source.name).read_text()
        assert "public=False" in graded


def test_a_graded_check_in_a_book_specification_is_refused(tmp_path, monkeypatch):
    builtin = tmp_path / "exercises"
    shutil.copytree(spec.BUILTIN_DIR, builtin)
    path = builtin / "gae_recursion.py"
    text = path.read_text()
    assert 'name="recursive-random",' in text
    path.write_text(
        text.replace('name="recursive-random",', 'name="recursive-random", public=False,')
    )
    monkeypatch.setattr(spec, "BUILTIN_DIR", builtin)
    with pytest.raises(ValueError, match=r"public checks only; move \['recursive-random'\]"):
        spec.load_exercises()


def test_without_the_instructor_material_an_exercise_has_its_public_checks(monkeypatch):
    monkeypatch.setattr(instructor, "instructor_folder", lambda: None)
    for exercise_id, exercise in spec.load_exercises().items():
        assert not exercise.complete
        full = EXERCISES[exercise_id].checks
        assert [c.name for c in exercise.checks] == [c.name for c in full if c.public]


def test_pyproject_lists_every_package():
    """Packages are listed, not discovered (rlfound.chapters lives in chapters/): a new
    subpackage of rlfound must be added to the list, or the wheel would lack it. The book's
    solutions/ is not among them: it is the instructor wheel. Every folder of chapters/ that
    holds Python is listed too (chapters/data's script): setuptools warns that it may stop
    shipping an importable folder left out of the list."""
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setuptools["package-dir"] == {"rlfound.chapters": "chapters"}
    found = {
        ".".join(path.parent.relative_to(REPO).parts)
        for path in (REPO / "rlfound").rglob("__init__.py")
        if "__pycache__" not in path.parts
    }
    book = {
        ".".join(("rlfound", *path.parent.relative_to(REPO).parts))
        for path in (REPO / "chapters").rglob("*.py")
        if not {"__pycache__", "_build"} & set(path.parts)
    }
    assert book == {"rlfound.chapters", "rlfound.chapters.data"}
    assert sorted(setuptools["packages"]) == sorted(found | book)


# ---------------------------------------------------------------- the installed wheels


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


def run_with(environment: dict, *command, cwd: Path, check: bool = True):
    """:func:`run` with some environment variables set, and the tests' own seed removed."""
    base = {k: v for k, v in outside_environment().items() if not k.startswith("RLFOUND_")}
    completed = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env={**base, **environment},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if check:
        assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return completed


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> tuple[Path, Path]:
    """The students' and the teaching team's wheels, built from a copy of this checkout as
    ``make wheels`` builds them (the builds write next to their sources)."""
    require_pypi()  # the builds fetch setuptools, NumPy and SciPy into isolated environments
    work = tmp_path_factory.mktemp("wheel")
    checkout = work / "rlfound"
    shutil.copytree(REPO, checkout, ignore=IGNORED)
    # The Makefile's commands, from the checkout's root, with its relative dist/.
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", "dist", ".", cwd=checkout)
    run(sys.executable, "packaging/build_instructor_wheel.py", "--dist", "dist", cwd=checkout)
    dist = checkout / "dist"
    (student,) = dist.glob("rlfound-*.whl")
    (teaching,) = dist.glob("rlfound_instructor-*.whl")
    return student, teaching


@pytest.fixture(scope="module")
def wheel(wheels) -> Path:
    """The students' wheel."""
    return wheels[0]


def _venv(folder: Path, *wheels: Path) -> Path:
    venv = folder / "venv"
    assert REPO.resolve() not in venv.resolve().parents
    run(sys.executable, "-m", "venv", venv, cwd=folder)
    run(venv / "bin" / "python", "-m", "pip", "install", *wheels, cwd=folder)
    return venv


@pytest.fixture(scope="module")
def student_env(wheels, tmp_path_factory) -> Path:
    """A fresh virtual environment, outside the repository, with the students' wheel only."""
    return _venv(tmp_path_factory.mktemp("student-env"), wheels[0])


@pytest.fixture(scope="module")
def installed(wheels, tmp_path_factory) -> Path:
    """A fresh virtual environment with both wheels: the teaching team's install."""
    return _venv(tmp_path_factory.mktemp("teacher-env"), *wheels)


def site_packages(venv: Path) -> Path:
    (site,) = (venv / "lib").glob("python3*/site-packages")
    return site


@pytest.mark.install
def test_the_students_wheel_holds_no_answer(wheels):
    """No reference code (normalized ASTs), no worked-solution prose, no graded-only check, and
    the public checks' data of every exercise. The instructor wheel holds every answer, which
    shows that the search finds them."""
    student, teaching = wheels
    with zipfile.ZipFile(student) as archive:
        names = set(archive.namelist())
        specs = [archive.read(n).decode() for n in names if "/authoring/exercises/" in n]
    assert not any(n.startswith(("rlfound/solutions/", "rlfound_instructor/")) for n in names)
    assert specs and not any("public=False" in text for text in specs)
    public_data = {n for n in names if "/authoring/public_data/" in n}
    assert public_data == {f"rlfound/grading/authoring/public_data/{e}.json" for e in EXERCISES}
    assert find_answers(student) == []

    found = {finding.split(": ", 1)[1] for finding in find_answers(teaching)}
    assert {f"the code of a solution region of {name}" for name, _, _ in reference_regions()} <= (
        found
    )
    pages = {page for page, _ in worked_runs()}
    assert all(any(f"worked solution prose of {page}" in f for f in found) for page in pages)
    with zipfile.ZipFile(teaching) as archive:
        teaching_names = set(archive.namelist())
    graded = {f"rlfound_instructor/graded/{e.source.name}" for e in EXERCISES.values()}
    assert graded <= teaching_names


@pytest.mark.install
def test_both_wheels_carry_the_license_as_pep_639_metadata(wheels):
    """An SPDX expression and the license's text in each wheel (core metadata 2.4), the form
    setuptools keeps building; the TOML table it replaced stops building in 2027."""
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            (metadata,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
            fields = archive.read(metadata).decode().split("\n\n", 1)[0].splitlines()
            licenses = metadata.replace("METADATA", "licenses/LICENSE")
            assert archive.read(licenses).decode() == text, wheel.name
        assert "License-Expression: MIT" in fields, wheel.name
        assert "License-File: LICENSE" in fields, wheel.name
        assert not any(field.startswith("License: ") for field in fields), wheel.name


@pytest.mark.install
def test_a_student_install_checks_but_cannot_grade(student_env, tmp_path):
    """From a fresh environment with the students' wheel alone: nothing installed holds an
    answer; starters and the self-check work; grade, verify, gradescope and the teaching pack
    refuse, naming the instructor package; a class pack holds no answer either."""
    from rlfound.grading.authoring import starter

    assert find_answers(site_packages(student_env) / "rlfound") == []
    assert not list(site_packages(student_env).glob("rlfound_instructor*"))
    student = tmp_path / "student"
    student.mkdir()
    rlfound = student_env / "bin" / "rlfound"
    listing = run(rlfound, "exercises", cwd=student).stdout
    assert all(exercise_id in listing for exercise_id in EXERCISES)
    for exercise_id, exercise in EXERCISES.items():
        text = run(rlfound, "starter", exercise_id, "-o", "-", cwd=student).stdout
        assert text == starter.starter_source(exercise)

    (student / "mine.py").write_text((REPO / "solutions" / "gae_recursion.py").read_text())
    checked = run(rlfound, "check", "mine.py", "--exercise", "gae-recursion", cwd=student)
    public = [c for c in EXERCISES["gae-recursion"].checks if c.public]
    assert checked.stdout.count("PASS") == len(public) and "FAIL" not in checked.stdout
    assert "grading adds checks on inputs you have not seen" in checked.stdout
    (student / "buggy.py").write_text(BUGGY_GAE)
    wrong = run(
        rlfound, "check", "buggy.py", "--exercise", "gae-recursion", cwd=student, check=False
    )
    assert wrong.returncode == 1 and "FAIL  recursive-random" in wrong.stdout
    assert "case 2 of 5" in wrong.stdout and "expected -1.71459, got -1.857" in wrong.stdout
    assert "PASS  explicit-random" in wrong.stdout

    for command in (
        ("grade", "gae-recursion", "mine.py", "--out", "out", "--seed", "3"),
        ("verify", "gae-recursion"),
        ("gradescope", "gae-recursion", "-o", "a.zip", "--seed", "3"),
        ("classpack", "--out", "teaching", "--with-solutions"),
    ):
        refused = run(rlfound, *command, cwd=student, check=False)
        assert refused.returncode == 2, (command, refused.stderr)
        assert "rlfound-instructor" in refused.stderr and "make instructor-wheel" in refused.stderr
    assert not any((student / name).exists() for name in ("out", "a.zip", "teaching"))

    run(rlfound, "classpack", "--out", "pack", cwd=student)
    assert find_answers(student / "pack") == []


@pytest.mark.install
def test_a_teacher_uses_every_subcommand_from_an_installed_wheel(installed, tmp_path):
    """With rlfound-instructor beside rlfound: exercises, starter, check, grade (once the
    course secret is set), gradescope and verify, from a folder with no checkout."""
    teacher = tmp_path / "course"
    teacher.mkdir()
    python, rlfound = installed / "bin" / "python", installed / "bin" / "rlfound"
    probe = (
        "import sys, rlfound, rlfound_instructor\n"
        "print(rlfound.__file__, sys.path, rlfound_instructor.__file__, sep='\\n')"
    )
    where = run(python, "-c", probe, cwd=teacher).stdout.splitlines()
    assert installed.resolve() in Path(where[0]).resolve().parents
    assert str(REPO) not in where[1]
    assert installed.resolve() in Path(where[2]).resolve().parents

    listing = run(rlfound, "exercises", cwd=teacher).stdout
    assert all(exercise_id in listing for exercise_id in EXERCISES)
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
    attack = hostile_source("read_reference")
    attack = attack.replace("__REPO__/solutions", str(installed_solutions))
    (teacher / "class" / "eve.py").write_text(attack)
    grade = ("grade", "gae-recursion", "class", "--out", "grades", "--mode", "default")
    # No course secret yet: grading with the public seed is refused, and says why.
    config = {"XDG_CONFIG_HOME": str(teacher / "config")}
    refused = run_with(config, rlfound, *grade, cwd=teacher, check=False)
    assert refused.returncode == 2 and "rlfound secret" in refused.stderr
    assert not (teacher / "grades").exists()
    made = run_with(config, rlfound, "secret", cwd=teacher)
    secret_file = teacher / "config" / "rlfound" / "course-secret"
    assert str(secret_file) in made.stderr and (secret_file.stat().st_mode & 0o777) == 0o600
    graded = run_with(config, rlfound, *grade, cwd=teacher)
    assert f"the course secret {secret_file}" in graded.stderr
    with open(teacher / "grades" / "grades.csv", newline="") as sheet:
        rows = {row["submission"]: row for row in csv.DictReader(sheet)}
    assert rows["ana"]["score"] == rows["ana"]["max_score"] == "11"
    assert rows["ana"]["graded-recursive"] == "1"
    assert 0 < float(rows["ben"]["score"]) < 11
    assert rows["eve"]["score"] == "10" and rows["eve"]["recursive-edges"] == "0"
    assert json.loads((teacher / "grades" / "ana" / "results.json").read_text())["score"] == 11

    run_with(config, rlfound, "gradescope", "gae-recursion", "-o", "autograder.zip", cwd=teacher)
    with zipfile.ZipFile(teacher / "autograder.zip") as archive:
        names = set(archive.namelist())
        requirements = archive.read("requirements.txt").decode()
    assert {
        "setup.sh",
        "run_autograder",
        "rlfound_instructor/gae_recursion.py",
        "rlfound_instructor/graded/gae_recursion.py",
    } <= names
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
    from tests.book.test_classpack import files_of, long_solution_regions, pack_lines

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
    assert f"pip install {wheel.name} -r requirements.txt" in readme
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
