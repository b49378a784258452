"""Which chapter makes the book slow? Each notebook's execution time, slowest first.

Executes every notebook of the table of contents (chapters and solutions) in a fresh kernel
started in its own folder, exactly as the book build and a student's "Run all" do, and
prints a table of wall-clock and CPU seconds (the kernel's user + system time, which other
work on the machine does not inflate) per notebook, with the slowest cells. Run from the
repository root::

    .venv/bin/python benchmarks/build_time.py               # every notebook, one at a time
    .venv/bin/python benchmarks/build_time.py --jobs 2      # two at a time, as the build does
    .venv/bin/python benchmarks/build_time.py chapters/04_critics_gae_timeouts.md --cells 5

Budgets (issue 11): each chapter under 30 s top to bottom, the whole book built in under
3 minutes on two cores. Notebooks over the per-chapter budget are marked. This is a
benchmark, not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jupytext
import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "_ext"))
sys.path.insert(0, str(REPO))

from parallel_execution import execute_in_pool, worker_count  # noqa: E402

from tests._book import notebook_documents  # noqa: E402

#: Seconds a chapter may take top to bottom in a fresh kernel.
CHAPTER_BUDGET = 30.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every toc notebook")
    parser.add_argument("--jobs", type=int, default=1, help="kernels at a time (default 1)")
    parser.add_argument("--cells", type=int, default=3, help="slowest cells shown per notebook")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    args = parser.parse_args()
    paths = [path.resolve() for path in args.notebooks] or notebook_documents()
    jobs = [
        (
            str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path),
            nbformat.writes(jupytext.read(path)),
            str(path.parent),
        )
        for path in paths
    ]
    workers = min(worker_count(args.jobs), len(jobs))
    print(f"Executing {len(jobs)} notebooks, {workers} at a time ...", flush=True)
    start = time.perf_counter()
    results = {}
    for name, result in execute_in_pool(jobs, workers, args.timeout):
        results[name] = result
        state = "FAILED" if result["error"] else "ok"
        print(f"  {state:6} {name} ({result['cpu_seconds']:.1f} s CPU)", flush=True)
    elapsed = time.perf_counter() - start

    width = max(len(name) for name in results)
    print(f"\n{'notebook':{width}}  {'wall s':>7}  {'CPU s':>7}")
    ordered = sorted(results.items(), key=lambda item: -item[1]["cpu_seconds"])
    for name, result in ordered:
        over = "  over budget" if result["wall_seconds"] > CHAPTER_BUDGET else ""
        failed = "  FAILED" if result["error"] else ""
        print(
            f"{name:{width}}  {result['wall_seconds']:7.1f}  {result['cpu_seconds']:7.1f}"
            f"{over}{failed}"
        )
    total_cpu = sum(result["cpu_seconds"] for result in results.values())
    print(f"{'total':{width}}  {elapsed:7.1f}  {total_cpu:7.1f}   ({workers} at a time)")

    if args.cells:
        print(f"\nSlowest {args.cells} cells of each notebook over 1 s (wall s, cell, first line):")
        for name, result in ordered:
            slow = sorted(result["cells"], key=lambda cell: -cell[1])[: args.cells]
            slow = [cell for cell in slow if cell[1] >= 1.0]
            for index, seconds, source in slow:
                first = next((line for line in source.splitlines() if line.strip()), "")
                print(f"  {name} cell {index:3}: {seconds:6.1f}  {first[:70]}")
    for name, result in ordered:
        if result["error"]:
            print(f"\n{name} failed:\n{result['error'][-3000:]}")
    return 1 if any(result["error"] for result in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
