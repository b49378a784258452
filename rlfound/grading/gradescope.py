"""Gradescope: build an autograder bundle, and the entry point the bundle runs.

The bundle (``rlfound gradescope EXERCISE -o autograder.zip``) holds ``setup.sh``,
``run_autograder`` and ``source/`` (the ``rlfound`` package, the exercise's specification and
its reference solution). On Gradescope, ``run_autograder`` calls
``python -m rlfound.grading.gradescope``, which grades the one submission in
``/autograder/submission`` with the same grader as ``rlfound grade`` and writes
``/autograder/results/results.json``.
"""

from __future__ import annotations

import argparse
import io
import json
import shlex
import sys
import zipfile
from pathlib import Path

from rlfound.grading import report, spec, submissions
from rlfound.grading.sandbox import Limits

#: Packages the autograder installs (the same lower bounds as rlfound's own).
REQUIREMENTS = ("numpy>=1.24", "scipy>=1.10", "psutil>=5.9", "nbformat>=5.9", "tqdm>=4.66")
_PACKAGE = Path(__file__).resolve().parents[1]

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder image.
set -euo pipefail
apt-get update
apt-get install -y python3 python3-venv python3-pip
# bubblewrap enables the grader's strong sandbox where the image allows namespaces.
apt-get install -y bubblewrap || true
python3 -m venv /autograder/venv
/autograder/venv/bin/pip install --upgrade pip
/autograder/venv/bin/pip install {requirements}
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission.
set -euo pipefail
cd /autograder/source
PYTHONPATH=/autograder/source exec /autograder/venv/bin/python -m rlfound.grading.gradescope \\
    --exercise {exercise_id} --seed {seed} --timeout {timeout}{exercises}
"""


def _add_tree(bundle: zipfile.ZipFile, folder: Path, prefix: str) -> None:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            bundle.write(path, f"{prefix}/{path.relative_to(folder).as_posix()}")


def _add_text(bundle: zipfile.ZipFile, name: str, text: str, executable: bool) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = (0o755 if executable else 0o644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    bundle.writestr(info, text)


def build_bundle(exercise: spec.Exercise, output: Path, *, seed: int, timeout: float) -> None:
    """Write a Gradescope autograder zip for ``exercise``.

    Raises
    ------
    ValueError
        If the exercise's reference solution is missing, or an instructor's exercise names its
        solution by an absolute path (the bundle needs it next to the specification).
    """
    exercise.reference()  # fail now, not on Gradescope, if the reference is broken
    builtin = exercise.source is not None and exercise.source.parent == spec.BUILTIN_DIR
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        _add_text(
            bundle,
            "setup.sh",
            SETUP_SH.format(requirements=" ".join(shlex.quote(r) for r in REQUIREMENTS)),
            True,
        )
        extra = "" if builtin else " --exercises /autograder/source/exercises"
        run = RUN_AUTOGRADER.format(
            exercise_id=exercise.id, seed=int(seed), timeout=float(timeout), exercises=extra
        )
        _add_text(bundle, "run_autograder", run, True)
        _add_tree(bundle, _PACKAGE, "source/rlfound")
        if builtin:
            bundle.write(exercise.solution_path, f"source/solutions/{exercise.solution_path.name}")
        else:
            relative = Path(exercise.solution)
            if relative.is_absolute():
                raise ValueError(
                    f"solution of {exercise.id!r} must be relative to its specification to be "
                    f"bundled; got {relative}"
                )
            bundle.write(exercise.source, f"source/exercises/{exercise.source.name}")
            bundle.write(exercise.solution_path, f"source/exercises/{relative.as_posix()}")
    report.write_atomic_bytes(output, buffer.getvalue())


def choose_submission(folder: Path, exercise: spec.Exercise) -> Path | None:
    """The file to grade among a student's upload: the one that names or defines the exercise."""
    from rlfound.grading.starter import exercise_of

    files = sorted(p for p in folder.rglob("*") if p.suffix in submissions.SUFFIXES and p.is_file())
    if len(files) <= 1:
        return files[0] if files else None

    def rank(path: Path) -> int:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return 2
        if exercise_of(text) == exercise.id:
            return 0
        if all(f"def {f.name}(" in text for f in exercise.functions):
            return 1
        return 2

    return min(files, key=rank)


def main(argv: list[str] | None = None) -> int:
    """Grade ``/autograder/submission`` and write ``/autograder/results/results.json``."""
    from rlfound.grading.grader import Grader, SubmissionResult

    parser = argparse.ArgumentParser(prog="python -m rlfound.grading.gradescope")
    parser.add_argument("--exercise", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=Limits.timeout)
    parser.add_argument("--exercises", action="append", default=[])
    parser.add_argument("--submission-dir", type=Path, default=Path("/autograder/submission"))
    parser.add_argument("--results", type=Path, default=Path("/autograder/results/results.json"))
    args = parser.parse_args(argv)
    exercises = spec.load_exercises(args.exercises)
    if args.exercise not in exercises:
        parser.error(f"argument --exercise: unknown exercise {args.exercise!r}")
    exercise = exercises[args.exercise]
    grader = Grader(exercise, seed=args.seed, limits=Limits(timeout=args.timeout))
    chosen = choose_submission(args.submission_dir, exercise)
    if chosen is None:
        message = f"no .py or .ipynb file found in the submission ({args.submission_dir})"
        result = SubmissionResult(
            "submission",
            None,
            [grader.failed_result(check, message) for check, _, _ in grader.checks],
            message,
        )
    else:
        result = grader.grade(submissions.read_submission(chosen))
    document = report.results_json(grader, result)
    report.write_atomic(args.results, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    print(document["output"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
