"""Grade a class: many submissions in parallel, each report written as it finishes.

Each submission is graded inside its own failure boundary (the :class:`Grader` never raises
for anything a submission does), so the batch always ends with a row for every entry.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rlfound.grading import report, submissions
from rlfound.grading.grader import Grader
from rlfound.grading.results import SubmissionResult


def grade_batch(
    grader: Grader,
    paths: Sequence[str | Path],
    out_dir: str | Path,
    *,
    jobs: int = 1,
    progress: bool | None = None,
    on_result: Callable[[SubmissionResult], None] | None = None,
) -> list[SubmissionResult]:
    """Grade many submissions in parallel and write every report.

    Writes ``out_dir/<name>/results.json`` and ``feedback.md`` as each submission finishes,
    then ``out_dir/grades.csv``; every file is written atomically.

    Parameters
    ----------
    grader : Grader
        The grader of the exercise.
    paths : sequence of path
        Submission files or folders of them.
    out_dir : path
        Where the reports go (created if needed).
    jobs : int
        Submissions graded at the same time (one worker each).
    progress : bool or None
        Show a progress bar; None shows it when stderr is a terminal.
    on_result : callable, optional
        Called with each result as it completes.

    Returns
    -------
    list of SubmissionResult
        Sorted by submission name.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    named = submissions.expand(list(paths))
    if progress is None:
        progress = sys.stderr.isatty()
    from tqdm import tqdm

    bar = tqdm(total=len(named), unit="submission", disable=not progress, file=sys.stderr)

    def work(item):
        name, path = item
        result = grader.grade(submissions.read_submission(path, name))
        report.write_submission(out_dir / name, grader.exercise, result)
        return result

    results = []
    with (
        contextlib.closing(bar),
        concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool,
    ):
        futures = [pool.submit(work, item) for item in named]
        for future in concurrent.futures.as_completed(futures):
            result = future.result()
            results.append(result)
            bar.update()
            if on_result is not None:
                on_result(result)
    results.sort(key=lambda r: r.name)
    report.write_grades(out_dir / "grades.csv", grader.check_names, results)
    return results
