"""How fast does the grader grade a class? Submissions per second for ``gae-recursion``.

Builds a class of 200 submissions (reference solutions, starters and solutions with a bug,
in a fixed mix), grades them with ``--jobs 2`` in default mode and prints the throughput.
Run from the repository root::

    .venv/bin/python benchmarks/grade_speed.py [--submissions 200] [--jobs 2] [--mode default]

This is a benchmark, not a test: the figure depends on the machine and its load.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rlfound.grading import Grader, grade_batch, load_exercises
from rlfound.grading.authoring.starter import starter_source

REPO = Path(__file__).resolve().parents[1]


def make_class(folder: Path, size: int, exercise) -> list[Path]:
    """Write ``size`` submissions: 70% correct, 20% with an off-by-one bug, 10% starters."""
    reference = (REPO / "solutions" / "gae_recursion.py").read_text()
    buggy = reference.replace("range(horizon - t)", "range(horizon - t - 1)")
    starter = starter_source(exercise)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for number in range(size):
        kind = number % 10
        text = starter if kind == 9 else buggy if kind >= 7 else reference
        path = folder / f"student{number:04d}.py"
        path.write_text(text)
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--mode", choices=("default", "strong", "auto"), default="default")
    args = parser.parse_args()
    exercise = load_exercises()["gae-recursion"]
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        paths = make_class(folder / "class", args.submissions, exercise)
        start = time.perf_counter()
        grader = Grader(exercise, seed=1, mode=args.mode)
        results = grade_batch(grader, paths, folder / "out", jobs=args.jobs, progress=False)
        elapsed = time.perf_counter() - start
    scores = sorted({r.score for r in results})
    print(
        f"graded {len(results)} submissions of gae-recursion in {elapsed:.1f} s with "
        f"--jobs {args.jobs} in {grader.mode} mode: {len(results) / elapsed:.1f} submissions/s "
        f"(distinct scores: {scores})"
    )


if __name__ == "__main__":
    main()
