"""Grade a class: many submissions in parallel, each report written as it finishes.

Each submission is graded inside its own failure boundary: whatever happens while it is read,
graded or reported (bad text, a full disk, a worker that cannot be prepared, a report that
cannot be written, a bug of the grader's), that submission gets a zero with the reason and the
batch goes on. So the batch always ends with a row for every entry in ``grades.csv``, and
``skipped.csv`` lists every other entry of the submissions folders with the reason it was not
graded.

``grades.csv`` and ``skipped.csv`` are written last, atomically, once every worker has been
closed (each worker's processes are killed and checked gone by what they cannot shed: their
control group, their user, their PID namespace), and read back to check they hold what was
written. Then come the teaching team's reports (:mod:`rlfound.grading.output.team`):
``checks.csv``, ``summary.md`` with ``scores.png``, and ``similarity.csv``.

Progress goes to stderr: a tqdm bar when stderr is a terminal, otherwise (a log file, a CI
job, ``--no-progress``) one plain line per submission as it finishes, which a log keeps
readable where a bar's carriage returns would not.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rlfound.grading.intake import layouts, submissions, text
from rlfound.grading.output import manual_template, report, team
from rlfound.grading.sandbox import stopping
from rlfound.grading.scoring.grader import Grader
from rlfound.grading.scoring.results import SubmissionResult

__all__ = ["Graded", "Progress", "grade_batch", "grade_one"]


class Graded(list):
    """The results of a batch (a list, sorted by name), with ``skipped``: ``(entry, reason)``
    for every entry of the submissions folders that was not graded, and ``team_reports``: what the
    teaching team's reports hold (:class:`rlfound.grading.output.team.TeamReports`)."""

    skipped: list[tuple[str, str]]
    team_reports: team.TeamReports | None = None


def _describe(error: BaseException) -> str:
    try:
        detail = str(error)
    except Exception:  # an exception whose text cannot be made
        detail = ""
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__


class Progress:
    """A tqdm bar on a terminal, else one plain line per submission (both on stderr).

    ``Progress(total, bar)``; ``update(result)`` after each graded submission, ``close()``
    at the end. An assignment's pipeline shows one for the whole hand-in the same way.
    """

    def __init__(self, total: int, bar: bool):
        from tqdm import tqdm

        self.total = total
        self.done = 0
        self.bar = tqdm(total=total, unit="submission", file=sys.stderr) if bar else None

    def update(self, result: SubmissionResult) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update()
            return
        name = text.clean(result.name, text.NAME_CHARS)
        verdict = "could not be graded" if result.error else "graded"
        print(
            f"[{self.done}/{self.total}] {name}: {verdict}, "
            f"{result.score:g} / {result.max_score:g}",
            file=sys.stderr,
            flush=True,
        )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def grade_one(
    grader: Grader,
    entry: submissions.Entry,
    out_dir: Path,
    *,
    sources: dict[str, str] | None = None,
) -> SubmissionResult:
    """Grade and report one entry inside its failure boundary; never raises an Exception.

    Writes ``results.json`` and ``feedback.md``, and ``manual.md`` where the exercise has
    parts graded by hand (:mod:`rlfound.grading.output.manual_template`). ``sources``, when
    given, receives the submission's code under its name (for the similarity report).
    """
    submission = None
    try:
        submission = submissions.read_submission(entry.path, entry=entry)
        if sources is not None and submission.source is not None:
            sources[entry.name] = submission.source
        result = grader.grade(submission)
    except Exception as error:  # the failure boundary: this submission only
        message = f"the grader failed on this submission ({_describe(error)})"
        result = grader.not_run(
            entry.name, entry.path, message, grader_error=True, file_name=entry.file_name
        )
    try:
        report.write_submission(out_dir / entry.name, grader.exercise, result)
        if grader.exercise.manual:
            answers = manual_template.answers_of(entry.path, grader.exercise, entry=entry)
            manual_template.write_manual(
                out_dir / entry.name, entry.name, [(grader.exercise, answers)]
            )
    except Exception as error:
        reason = text.clean(f"its reports could not be written ({_describe(error)})", 500)
        result = dataclasses.replace(result, grader_error=reason)
    return result


def grade_batch(
    grader: Grader,
    paths: Sequence[str | Path],
    out_dir: str | Path,
    *,
    jobs: int = 1,
    progress: bool | None = None,
    on_result: Callable[[SubmissionResult], None] | None = None,
    similarity_threshold: float = team.THRESHOLD,
) -> Graded:
    """Grade many submissions in parallel and write every report.

    Writes ``out_dir/<name>/results.json`` and ``feedback.md`` (and ``manual.md``) as each
    submission finishes, then ``out_dir/grades.csv`` and ``out_dir/skipped.csv``, then the
    teaching team's ``checks.csv``, ``summary.md``, ``scores.png`` and ``similarity.csv``;
    every file is written atomically.

    Parameters
    ----------
    grader : Grader
        The grader of the exercise.
    paths : sequence of path
        Hand-ins, or folders or archives of them, in any layout
        :func:`rlfound.grading.intake.collect` reads (files, notebooks, per-student folders
        and zips, Canvas and Gradescope downloads); each student's file for the exercise is
        found by its header or name (:func:`rlfound.grading.intake.find_exercise_file`).
    out_dir : path
        Where the reports go (created if needed).
    jobs : int
        Submissions graded at the same time (one worker each).
    progress : bool or None
        Show a progress bar (True) or one line per submission (False) on stderr; None shows
        the bar when stderr is a terminal.
    on_result : callable, optional
        Called with each result as it completes.
    similarity_threshold : float
        The lowest similarity listed in ``similarity.csv`` (see
        :func:`rlfound.grading.output.similarity.find_similar`).

    Returns
    -------
    Graded
        The results, sorted by submission name, and the entries skipped.

    Raises
    ------
    ValueError
        Naming a path of ``paths`` that does not exist or holds no submission (nothing is
        graded).
    OSError
        If ``grades.csv`` or ``skipped.csv`` cannot be written, or does not read back as
        written.
    stopping.Stopped
        If the grader was stopped (a signal, :mod:`rlfound.grading.sandbox.stopping`): the
        submissions being graded are given up, their workers closed, and the class's files
        are not written; the reports of the submissions graded before stay.
    """
    collected = layouts.collect_all(paths)
    entries = [layouts.exercise_entry(hand_in, grader.exercise.id) for hand_in in collected]
    skipped = [*collected.skipped, *(item for h in collected for item in h.skipped)]
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if progress is None:
        progress = sys.stderr.isatty()
    bar = Progress(len(entries), bool(progress))
    results = Graded()
    sources: dict[str, str] = {}
    with (
        contextlib.closing(bar),
        concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool,
    ):
        futures = [
            pool.submit(grade_one, grader, entry, out_dir, sources=sources) for entry in entries
        ]
        delivered = set()

        def deliver(future) -> None:
            delivered.add(future)
            results.append(future.result())
            bar.update(results[-1])
            if on_result is not None:
                with contextlib.suppress(Exception):
                    on_result(results[-1])

        try:
            for future in concurrent.futures.as_completed(futures):
                deliver(future)
        except BaseException:
            # Stopped by a signal (or a Ctrl-C): leaving the block would wait for every
            # queued submission to be graded. Drop those, and wait only for the running ones,
            # which stop at once and close their workers.
            with stopping.stop_workers():
                pool.shutdown(wait=True, cancel_futures=True)
            # A submission whose reports were written before the stop counts as graded, even
            # when the signal came before its result was taken here.
            # (One dropped or stopped raises from ``result`` and is left out.)
            for future in futures:
                if future not in delivered and future.done():
                    with contextlib.suppress(BaseException):
                        deliver(future)
            raise
    results.sort(key=lambda r: r.name)
    results.skipped = skipped
    # Every worker is closed: its processes are dead. Only now the class's files are written.
    grades = report.grades_csv(grader.check_names, results)
    skipped = report.skipped_csv(results.skipped)
    report.write_grades(out_dir / "grades.csv", grader.check_names, results)
    report.write_skipped(out_dir / "skipped.csv", results.skipped)
    for name, expected in (("grades.csv", grades), ("skipped.csv", skipped)):
        if (out_dir / name).read_bytes() != expected.encode("utf-8", "backslashreplace"):
            raise OSError(f"{out_dir / name} does not hold what the grader wrote")
    exercise = grader.exercise
    results.team_reports = team.write_team_reports(
        out_dir,
        {exercise.id: results},
        {exercise.id: sources},
        {exercise.id: team.starter_code(exercise)},
        threshold=similarity_threshold,
    )
    return results
