"""The Gradescope bundle, laid out and run the way Gradescope's autograder specification says.

Gradescope extracts the uploaded zip into ``/autograder/source``, runs ``setup.sh`` once as
root while it builds the image, copies ``run_autograder`` to ``/autograder/run_autograder``
and runs it from ``/autograder`` with the submission in ``/autograder/submission``; the
results go to ``/autograder/results/results.json``. These tests do the same in a temporary
folder that plays ``/autograder``. The fast ones stand in for ``setup.sh`` with a virtual
environment that has rlfound's requirements but not rlfound (so only the bundle's copy can
be imported); the ``install`` one runs the real ``setup.sh``.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the tomli backport, a dependency there
    import tomli as tomllib

import pytest
from _grading_helpers import (
    BUGGY_GAE,
    REPO,
    outside_environment,
    require_pypi,
    requirements_only_venv,
    run_autograder,
    unpack_like_gradescope,
    write_instructor_exercise,
)

from rlfound.cli import main
from rlfound.grading.authoring import spec
from rlfound.grading.distribution import gradescope

REFERENCE_GAE = (REPO / "solutions" / "gae_recursion.py").read_text()


def build(tmp_path: Path, exercise: str, *argv: str) -> Path:
    """``rlfound gradescope EXERCISE -o tmp_path/autograder.zip --seed 5 ARGV``."""
    bundle = tmp_path / "autograder.zip"
    assert main(["gradescope", exercise, "-o", str(bundle), "--seed", "5", *argv]) == 0
    return bundle


def grade_in(root: Path, script: Path, files: dict[str, str]) -> dict:
    """Put ``files`` in ``root/submission``, run ``script`` from ``root``, return the results."""
    shutil.rmtree(root / "submission")
    (root / "submission").mkdir()
    for name, text in files.items():
        (root / "submission" / name).write_text(text)
    (root / "results" / "results.json").unlink(missing_ok=True)
    completed = run_autograder(script, root)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return json.loads((root / "results" / "results.json").read_text())


def test_the_zip_has_gradescopes_layout(tmp_path):
    bundle = build(tmp_path, "gae-recursion")
    with zipfile.ZipFile(bundle) as archive:
        names = set(archive.namelist())
        modes = {name: archive.getinfo(name).external_attr >> 16 for name in names}
        scripts = {name: archive.read(name).decode() for name in ("setup.sh", "run_autograder")}
    # setup.sh and run_autograder at the root of the archive, the package next to them.
    assert {"setup.sh", "run_autograder", "requirements.txt"} <= names
    assert {
        "rlfound/__init__.py",
        "rlfound/grading/sandbox/inside/worker.py",
        "rlfound/cli/__init__.py",
    } <= names
    assert not any(name.startswith("source/") for name in names)
    for script in scripts.values():
        subprocess.run(["bash", "-n"], input=script, text=True, check=True)
    assert all(stat.S_IMODE(modes[name]) == 0o755 for name in scripts)
    # The seed is in a file only its owner reads, never on a command line (/proc shows those).
    assert '--seed-file "$source_dir/course-secret"' in scripts["run_autograder"]
    assert "--seed " not in scripts["run_autograder"]
    with zipfile.ZipFile(bundle) as archive:
        assert archive.read("course-secret") == b"5\n"
    assert stat.S_IMODE(modes["course-secret"]) == 0o600
    # Only the exercise's own reference solution and graded checks, and no specification
    # outside the package; the package itself holds no solution.
    solutions = sorted(name for name in names if name.startswith("rlfound_instructor/"))
    assert solutions == [
        "rlfound_instructor/__init__.py",
        "rlfound_instructor/gae_recursion.py",
        "rlfound_instructor/graded/gae_recursion.py",
    ]
    assert not any(name.startswith(("rlfound/solutions/", "solutions/")) for name in names)
    assert not any(name.startswith("exercises/") or name.endswith(".pyc") for name in names)


def test_the_same_inputs_give_the_same_zip(tmp_path):
    first = build(tmp_path / "one", "gae-recursion").read_bytes()
    second = build(tmp_path / "two", "gae-recursion").read_bytes()
    assert first == second


@pytest.fixture(scope="module")
def autograder(tmp_path_factory):
    """A gae-recursion bundle unpacked as on Gradescope, with a stand-in for setup.sh's venv."""
    tmp_path = tmp_path_factory.mktemp("gradescope")
    bundle = build(tmp_path, "gae-recursion")
    root = tmp_path / "autograder"
    script = unpack_like_gradescope(bundle, root)
    requirements_only_venv(root)
    return root, script


@pytest.mark.slow
def test_a_correct_submission_scores_full_marks(autograder):
    root, script = autograder
    document = grade_in(root, script, {"my_gae.py": REFERENCE_GAE, "README.md": "hello"})
    assert document["score"] == 11
    # nine checks, the student's own test function (run, 0 points), three parts by hand
    assert len(document["tests"]) == 9 + 1 + 3
    assert all(t["status"] == "passed" for t in document["tests"] if "status" in t)


@pytest.mark.slow
def test_a_wrong_submission_scores_less(autograder):
    root, script = autograder
    document = grade_in(root, script, {"my_gae.py": BUGGY_GAE})
    assert 0 < document["score"] < 11
    failed = {t["name"].split(":")[0] for t in document["tests"] if t.get("status") == "failed"}
    assert "recursive-random" in failed and "explicit-random" not in failed


@pytest.mark.slow
def test_a_link_in_the_upload_is_never_followed(autograder):
    """An upload holding a link to the reference solution next to the grader (a GitHub
    submission can hold links) is graded on its regular files only."""
    root, script = autograder
    shutil.rmtree(root / "submission")
    (root / "submission").mkdir()
    reference = root / "source" / "rlfound_instructor" / "gae_recursion.py"
    assert reference.is_file()
    (root / "submission" / "a_link.py").symlink_to(reference)
    (root / "submission" / "mine.py").write_text(BUGGY_GAE)
    (root / "results" / "results.json").unlink(missing_ok=True)
    completed = run_autograder(script, root)
    assert completed.returncode == 0, completed.stderr
    document = json.loads((root / "results" / "results.json").read_text())
    assert 0 < document["score"] < 11
    choice = gradescope.choose_submission(
        root / "submission", spec.load_exercises()["gae-recursion"]
    )
    assert choice.path == root / "submission" / "mine.py"


@pytest.mark.slow
def test_the_copy_in_the_source_folder_finds_the_same_folders(autograder):
    """run_autograder also works where the zip put it (/autograder/source/run_autograder)."""
    root, _ = autograder
    document = grade_in(root, root / "source" / "run_autograder", {"my_gae.py": REFERENCE_GAE})
    assert document["score"] == 11


@pytest.mark.slow
def test_an_instructors_exercise_is_bundled_with_its_solution(tmp_path):
    write_instructor_exercise(tmp_path / "mine")
    bundle = build(tmp_path, "double-it", "--exercises", str(tmp_path / "mine"))
    root = tmp_path / "autograder"
    script = unpack_like_gradescope(bundle, root)
    assert (root / "source" / "exercises" / "double.py").is_file()
    assert (root / "source" / "exercises" / "double_solution.py").is_file()
    # Only the instructor's own solution: no book material at all.
    assert not (root / "source" / "rlfound_instructor").exists()
    assert not (root / "source" / "rlfound" / "solutions").exists()
    requirements_only_venv(root)
    document = grade_in(root, script, {"answer.py": "def double(x):\n    return 2 * x\n"})
    assert document["score"] == 4


def test_a_solution_outside_the_specifications_folder_is_refused(tmp_path, capsys):
    write_instructor_exercise(tmp_path / "mine")
    shutil.move(tmp_path / "mine" / "double_solution.py", tmp_path / "double_solution.py")
    spec_file = tmp_path / "mine" / "double.py"
    spec_file.write_text(
        spec_file.read_text().replace('"double_solution.py"', '"../double_solution.py"')
    )
    with pytest.raises(SystemExit) as exit_:
        build(tmp_path, "double-it", "--exercises", str(tmp_path / "mine"))
    assert exit_.value.code == 2
    assert "inside its specification's folder" in capsys.readouterr().err


# ---------------------------------------------------------------- what the bundle installs


def _distribution(requirement: str) -> str:
    """The normalized distribution name of a requirement such as ``numpy>=1.24``."""
    name = re.match(r"[A-Za-z0-9._-]+", requirement)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def _optional_imports(tree: ast.Module) -> set[int]:
    """ids of the import statements inside a ``try`` that handles ImportError: an optional
    package (matplotlib for ``diagnostics.plot_history``), which the grader never needs."""
    optional = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        caught = {
            getattr(handler.type, "id", None)
            for handler in node.handlers
            if handler.type is not None
        }
        if caught & {"ImportError", "ModuleNotFoundError"}:
            optional |= {
                id(inner)
                for statement in node.body
                for inner in ast.walk(statement)
                if isinstance(inner, ast.Import | ast.ImportFrom)
            }
    return optional


def third_party_imports(package: Path) -> set[str]:
    """Top-level names the package's files import, minus the standard library, the package
    itself, a script's sibling modules (the worker imports ``protocol`` next to it) and
    optional packages imported under ``try: ... except ImportError``."""
    names = set()
    for path in package.rglob("*.py"):
        local = {"rlfound", "__future__"} | {p.stem for p in path.parent.glob("*.py")}
        tree = ast.parse(path.read_text(encoding="utf-8"))
        optional = _optional_imports(tree)
        for node in ast.walk(tree):
            if id(node) in optional:
                continue
            if isinstance(node, ast.Import):
                found = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                found = [node.module]
            else:
                continue
            top = {name.split(".")[0] for name in found}
            names |= {n for n in top if n not in sys.stdlib_module_names and n not in local}
    return names


def test_the_bundle_installs_exactly_what_the_package_imports(tmp_path):
    bundle = build(tmp_path, "gae-recursion")
    with zipfile.ZipFile(bundle) as archive:
        lines = archive.read("requirements.txt").decode().splitlines()
    installed = [line for line in lines if line and not line.startswith("#")]
    # From the package metadata, extras excluded: not a second hand-written list.
    assert installed == gradescope.requirements()
    assert "matplotlib" not in {_distribution(r) for r in installed}
    imports = third_party_imports(REPO / "rlfound") | third_party_imports(spec.BOOK_SOLUTIONS)
    providers = importlib.metadata.packages_distributions()
    imported = {_distribution(d) for name in imports for d in providers.get(name, [name])}
    assert {_distribution(r) for r in installed} == imported


def test_the_metadata_is_the_pyprojects(tmp_path):
    """The bundle reads the installed metadata; it must not be older than pyproject.toml."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert sorted(map(_distribution, gradescope.requirements())) == sorted(
        map(_distribution, declared)
    ), "the installed rlfound is older than pyproject.toml: run pip install -e '.[dev]'"


# ---------------------------------------------------------------- the real setup.sh


@pytest.mark.install
def test_setup_sh_builds_an_autograder_that_grades(tmp_path):
    """Run the bundle's own setup.sh as Gradescope does (as root, with apt-get), then grade."""
    if os.geteuid() != 0:
        pytest.skip("setup.sh installs system packages as root, as on Gradescope; not root here")
    if shutil.which("apt-get") is None:
        pytest.skip("setup.sh installs Python with apt-get, as on Gradescope; no apt-get here")
    require_pypi()
    bundle = build(tmp_path, "gae-recursion")
    root = tmp_path / "autograder"
    script = unpack_like_gradescope(bundle, root)
    setup = subprocess.run(
        ["bash", "./setup.sh"],
        cwd=root / "source",
        env=outside_environment(),
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert setup.returncode == 0, setup.stdout[-4000:] + setup.stderr[-4000:]
    python = root / "venv" / "bin" / "python"  # next to the source folder, as /autograder/venv
    assert python.is_file()
    probe = subprocess.run(
        [str(python), "-c", "import rlfound"],
        cwd=root,
        env=outside_environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert "No module named 'rlfound'" in probe.stderr  # only the bundle's copy is graded with
    assert grade_in(root, script, {"my_gae.py": REFERENCE_GAE})["score"] == 11
    assert 0 < grade_in(root, script, {"my_gae.py": BUGGY_GAE})["score"] < 11


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "does not exist"),
        ("seven\n", "must hold a non-negative integer seed; got 'seven\\n'"),
    ],
)
def test_the_runner_refuses_a_seed_file_it_cannot_read(tmp_path, capsys, content, message):
    secret = tmp_path / "course-secret"
    if content is not None:
        secret.write_text(content)
    argv = ["--exercise", "gae-recursion", "--seed-file", str(secret)]
    argv += ["--results", str(tmp_path / "results.json")]
    with pytest.raises(SystemExit) as stopped:
        gradescope.main(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "argument --seed-file: " in err and message in err
    assert not (tmp_path / "results.json").exists()
