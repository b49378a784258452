"""Gradescope: build an autograder bundle, and the entry point the bundle runs.

``rlfound gradescope EXERCISE -o autograder.zip`` writes a zip laid out as Gradescope's
autograder specification asks: Gradescope extracts it into ``/autograder/source``, so its
root holds

* ``setup.sh``, which Gradescope runs once, as root, while it builds the image: it installs
  Python and (where the image allows it) bubblewrap with ``apt-get``, creates the virtual
  environment ``/autograder/venv`` and installs ``requirements.txt`` into it;
* ``requirements.txt``, rlfound's runtime requirements, read from its package metadata;
* ``run_autograder``, which Gradescope copies to ``/autograder/run_autograder`` and runs from
  ``/autograder`` for each submission: it runs
  ``python -m rlfound.grading.distribution.gradescope``, which grades the file in
  ``/autograder/submission`` with the same grader as ``rlfound grade`` and
  writes ``/autograder/results/results.json``;
* ``rlfound/``, the package (it holds no solution); for a book exercise
  ``rlfound_instructor/`` with only that exercise's reference solution and graded-only checks
  (:mod:`rlfound.grading.authoring.instructor`), and for an instructor's exercise
  ``exercises/`` with its specification and reference solution. Gradescope never shows the
  autograder to students.

Both scripts find these folders from their own location (``setup.sh`` sits in the source
folder, ``run_autograder`` in its parent), so the bundle can be tried in any folder laid out
like ``/autograder``; on Gradescope the paths are exactly Gradescope's.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import io
import json
import re
import sys
import zipfile
from pathlib import Path

from rlfound.grading.authoring import instructor, spec
from rlfound.grading.authoring.secret import read_secret
from rlfound.grading.distribution.upload import Choice, choose_submission
from rlfound.grading.intake import submissions, text
from rlfound.grading.output import report
from rlfound.grading.output.atomic import write_atomic, write_atomic_bytes
from rlfound.grading.sandbox import Limits, describe_mode, stopping
from rlfound.grading.scoring.grader import Grader

__all__ = [
    "RUN_AUTOGRADER",
    "SECRET_FILE",
    "SETUP_SH",
    "Choice",
    "assignment_command",
    "build_assignment_bundle",
    "build_bundle",
    "choose_submission",
    "main",
    "requirements",
]

_PACKAGE = Path(__file__).resolve().parents[2]
#: A requirement that belongs to an extra (``...; extra == "book"``), not to the grader.
_EXTRA_MARKER = re.compile(r"\bextra\s*==")
#: Fixed timestamp of every file in the zip, so the same inputs give the same bundle.
_DATE = (2020, 1, 1, 0, 0, 0)
#: The bundle's file holding the course seed (mode 0600), which run_autograder names.
SECRET_FILE = "course-secret"

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder image. It sits in the
# bundle's folder (/autograder/source); the virtual environment goes next to that folder
# (/autograder/venv), wherever the bundle was unpacked.
set -euo pipefail
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$source_dir")"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y python3 python3-venv python3-pip
  # bubblewrap gives the grader its strong sandbox where the image allows namespaces.
  apt-get install -y bubblewrap || echo "no bubblewrap: the grader uses its default sandbox"
fi
python3 -m venv "$root/venv"
"$root/venv/bin/python" -m pip install --upgrade pip
"$root/venv/bin/python" -m pip install -r "$source_dir/requirements.txt"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope copies this file to /autograder/run_autograder and runs it from /autograder for
# every submission. It grades the file in /autograder/submission and writes
# /autograder/results/results.json. It finds those folders from its own location, so the copy
# in the bundle's folder (/autograder/source/run_autograder) works too.
set -euo pipefail
here="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
if [ -d "$here/source/rlfound" ]; then root="$here"; else root="$(dirname "$here")"; fi
source_dir="$root/source"
cd "$source_dir"
PYTHONPATH="$source_dir" exec "$root/venv/bin/python" -m rlfound.grading.distribution.gradescope \\
    {exercise_options} --seed-file "$source_dir/{secret}" --timeout {timeout}{exercises} \\
    --submission-dir "$root/submission" --results "$root/results/results.json"
"""


def requirements() -> list[str]:
    """rlfound's runtime requirements, from its installed package metadata, extras excluded.

    Raises
    ------
    ValueError
        If rlfound is not installed, so that it has no metadata to read.
    """
    try:
        declared = importlib.metadata.requires("rlfound") or []
    except importlib.metadata.PackageNotFoundError:
        raise ValueError(
            "rlfound is not installed, so its requirements are unknown; install it with pip"
        ) from None
    return [r for r in declared if not _EXTRA_MARKER.search(r.partition(";")[2])]


def _add(
    bundle: zipfile.ZipFile, name: str, data: bytes, *, executable: bool = False, mode=None
) -> None:
    info = zipfile.ZipInfo(name, date_time=_DATE)
    info.external_attr = (mode if mode is not None else 0o755 if executable else 0o644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    bundle.writestr(info, data)


def _package_files() -> dict[str, Path]:
    """The rlfound package's files by their name in the zip (it holds no solution)."""
    files = {}
    for path in sorted(_PACKAGE.rglob("*")):
        relative = path.relative_to(_PACKAGE)
        if "__pycache__" in relative.parts or path.suffix == ".pyc" or not path.is_file():
            continue
        files[f"rlfound/{relative.as_posix()}"] = path
    return files


def build_bundle(exercise: spec.Exercise, output: Path, *, seed: int, timeout: float) -> None:
    """Write a Gradescope autograder zip for ``exercise`` (see the module docstring).

    Raises
    ------
    ValueError
        If the exercise's reference solution is broken, a built-in exercise's solution is not
        among the book's, an instructor's exercise names its solution by an absolute path or
        outside the specification's folder (the bundle needs it next to the specification),
        or rlfound is not installed.
    """
    _write_bundle([exercise], output, seed=seed, timeout=timeout)


def build_assignment_bundle(assignment, output: Path, *, seed: int, timeout: float) -> None:
    """Write one Gradescope autograder zip for every exercise of an assignment
    (:class:`~rlfound.grading.course.assignment.Assignment`).

    The student uploads every file of the hand-in at once; the autograder finds each
    exercise's file in the upload as the one-exercise bundle does, grades it, and reports
    every exercise's checks as tests named ``<exercise>: <check>``, scored with automatic
    points only. The parts graded by hand are added on Gradescope as manually graded
    questions (the README says how); Gradescope applies its own late policy.

    Raises
    ------
    ValueError
        As :func:`build_bundle`, for any of the exercises.
    """
    _write_bundle(list(assignment.exercises), output, seed=seed, timeout=timeout)


def assignment_command(args: argparse.Namespace, exercises) -> int:
    """``rlfound gradescope --assignment FILE -o FILE``: write the assignment's bundle.

    Raises
    ------
    ValueError
        Naming the argument: an exercise id given too, a bad assignment file, no course seed.
    InstructorMissing
        Where the teaching team's package is not installed.
    """
    from rlfound.grading.authoring.secret import resolve_seed
    from rlfound.grading.course.commands import read_assignment

    if args.exercise is not None:
        raise ValueError("argument EXERCISE: give an exercise id or --assignment, not both")
    assignment = read_assignment(args.assignment, exercises, "--assignment")
    if not all(exercise.complete for exercise in assignment.exercises):
        raise instructor.InstructorMissing("rlfound gradescope")
    seed, origin = resolve_seed(args.seed, public_seed=args.public_seed)
    build_assignment_bundle(assignment, Path(args.output), seed=seed, timeout=args.timeout)
    print(
        f"wrote {args.output}: one autograder for {', '.join(assignment.ids)} (graded-only "
        f"inputs from {origin}); add the parts graded by hand as manually graded questions",
        file=sys.stderr,
    )
    return 0


def _exercise_files(exercise: spec.Exercise, files: dict[str, Path]) -> bool:
    """Add what grading ``exercise`` needs to ``files``; True for an instructor's exercise."""
    exercise.reference()  # fail now, not on Gradescope, if the reference is broken
    solution = exercise.solution_path
    if exercise.builtin:
        # The bundle carries the instructor material of these exercises only: Gradescope
        # never shows the autograder to students.
        folder = instructor.require_instructor("a Gradescope autograder of a book exercise")
        if solution.parent != folder:
            raise ValueError(f"solution of {exercise.id!r} must be in {folder}; got {solution}")
        package = instructor.PACKAGE
        files[f"{package}/__init__.py"] = folder / "__init__.py"
        files[f"{package}/{solution.name}"] = solution
        graded = folder / instructor.GRADED / exercise.source.name
        files[f"{package}/{instructor.GRADED}/{graded.name}"] = graded
        return False
    relative = Path(exercise.solution)
    if relative.is_absolute() or ".." in relative.parts:
        raise ValueError(
            f"solution of {exercise.id!r} must be a path inside its specification's folder "
            f"to be bundled; got {exercise.solution}"
        )
    files[f"exercises/{exercise.source.name}"] = exercise.source
    files[f"exercises/{relative.as_posix()}"] = solution
    return True


def _write_bundle(
    exercises: list[spec.Exercise], output: Path, *, seed: int, timeout: float
) -> None:
    files = _package_files()
    own = [_exercise_files(exercise, files) for exercise in exercises]
    run = RUN_AUTOGRADER.format(
        exercise_options=" ".join(f"--exercise {e.id}" for e in exercises),
        secret=SECRET_FILE,
        timeout=float(timeout),
        exercises=' --exercises "$source_dir/exercises"' if any(own) else "",
    )
    needed = "".join(f"{line}\n" for line in requirements())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        _add(bundle, "setup.sh", SETUP_SH.encode(), executable=True)
        _add(bundle, "run_autograder", run.encode(), executable=True)
        # The seed in a file only root reads, not on the runner's command line, which every
        # process on the machine can read in /proc (the submission's included).
        _add(bundle, SECRET_FILE, f"{int(seed)}\n".encode(), mode=0o600)
        header = "# rlfound's runtime requirements, from its package metadata\n"
        _add(bundle, "requirements.txt", (header + needed).encode())
        for name, path in sorted(files.items()):
            _add(bundle, name, path.read_bytes())
    write_atomic_bytes(output, buffer.getvalue())


def _describe(error: BaseException) -> str:
    try:
        detail = str(error)
    except Exception:  # an exception whose text cannot be made
        detail = ""
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__


def _document(message: str) -> dict:
    """A ``results.json`` in Gradescope's format that grades nothing and says why."""
    return {
        "score": 0,
        "output": text.clean(message, text.ERROR_CHARS),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [],
    }


def _grade_upload(exercise: spec.Exercise, args: argparse.Namespace) -> dict:
    """Grade the upload; the results in Gradescope's format, whatever the upload holds."""
    grader = Grader(exercise, seed=args.seed, limits=Limits(timeout=args.timeout))
    print(describe_mode(grader.mode), file=sys.stderr)
    choice = None
    try:
        # The search is inside the failure boundary too: an upload it cannot handle costs
        # this submission a zero with the reason, never an unwritten results.json.
        choice = choose_submission(args.submission_dir, exercise)
        if choice.path is None:
            result = grader.not_run("submission", None, choice.message)
        else:
            result = grader.grade(submissions.read_submission(choice.path))
    except Exception as error:  # the failure boundary: a results file in every case
        message = f"the autograder failed: {_describe(error)}"
        result = grader.not_run("submission", None, message, grader_error=True)
        choice = None
    document = report.results_json(exercise, result)
    if choice is not None and choice.path is not None:
        document["output"] = (
            f"{text.clean(choice.message, text.ERROR_CHARS)}\n\n" + document["output"]
        )
    return document


def _results(args: argparse.Namespace) -> tuple[dict, int]:
    """The results document of the upload and the exit status (2: the bundle names an exercise
    it does not hold)."""
    try:
        exercises = spec.load_exercises(args.exercises)
        unknown = [e for e in args.exercise if e not in exercises]
        if unknown:
            print(f"error: argument --exercise: unknown exercise {unknown[0]!r}", file=sys.stderr)
            return _document(f"the autograder failed: unknown exercise {unknown[0]!r}"), 2
        documents = [
            # In a thread of its own, so that a signal stops it only where it can close its
            # worker.
            stopping.run(_grade_upload, exercises[exercise_id], args)
            for exercise_id in args.exercise
        ]
        if len(documents) == 1:
            return documents[0], 0
        return _combined(args.exercise, documents), 0
    except Exception as error:  # the bundle's own failure (a broken reference, a bug)
        return _document(f"the autograder failed: {_describe(error)}"), 0


def _combined(ids: list[str], documents: list[dict]) -> dict:
    """One results document for an assignment: every exercise's tests, prefixed by its id."""
    tests = [
        {**test, "name": f"{exercise_id}: {test['name']}"}
        for exercise_id, document in zip(ids, documents, strict=True)
        for test in document["tests"]
    ]
    return {
        "score": sum(document["score"] for document in documents),
        "output": "\n\n".join(document["output"] for document in documents),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def _stopped(stop: stopping.Stopped) -> dict:
    return _document(
        f"The autograder was stopped ({stop.name}) before it finished grading this "
        "submission, so nothing was graded; ask your instructor to run it again."
    )


def _write(path: Path, document: dict) -> bool:
    try:
        write_atomic(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    except OSError as error:
        print(f"error: {path} could not be written: {error}", file=sys.stderr)
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    """Grade ``/autograder/submission`` and write ``/autograder/results/results.json``.

    Every run that gets past its arguments writes a valid ``results.json``, whatever the
    upload holds: a grading failure, even of the grader itself, is a score of 0 with the
    reason in its ``output``, and the status is 0. SIGTERM and SIGINT stop it with the clean-up
    of a normal exit, a ``results.json`` that says so, and the status ``128 + N``. The status
    is 1 when ``results.json`` cannot be written, 2 for bad arguments.
    """
    parser = argparse.ArgumentParser(prog="python -m rlfound.grading.distribution.gradescope")
    parser.add_argument("--exercise", required=True, action="append")
    seeds = parser.add_mutually_exclusive_group()
    seeds.add_argument("--seed", type=int, default=0)
    seeds.add_argument("--seed-file", type=Path, help="a file holding the seed (the bundle's)")
    parser.add_argument("--timeout", type=float, default=Limits.timeout)
    parser.add_argument("--exercises", action="append", default=[])
    parser.add_argument("--submission-dir", type=Path, default=Path("/autograder/submission"))
    parser.add_argument("--results", type=Path, default=Path("/autograder/results/results.json"))
    args = parser.parse_args(argv)
    if args.seed_file is not None:
        try:
            args.seed = read_secret(args.seed_file)
        except (OSError, ValueError) as error:
            parser.error(f"argument --seed-file: {error}")
        if args.seed is None:
            parser.error(f"argument --seed-file: {args.seed_file} does not exist")
    with stopping.stop_on_signals():
        try:
            document, status = _results(args)
        except stopping.Stopped as stop:
            document, status = _stopped(stop), stop.status
        try:
            written = _write(args.results, document)
        except stopping.Stopped as stop:
            # Stopped while writing (the temporary file is gone): write again, since a second
            # signal no longer interrupts.
            status = stop.status
            written = _write(args.results, document)
    if not written:
        return 1
    print(document["output"], file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
