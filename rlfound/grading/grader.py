"""Grade submissions: make each check concrete, ask a worker, judge the replies here.

A :class:`Grader` is built once per exercise and seed. It imports the trusted reference
solution, draws every check's inputs and computes the expected outputs in this process, once
for the whole batch. For each submission it starts a :class:`~rlfound.grading.sandbox.Worker`,
sends one request per check (the calls of that check), coerces each reply to a float64 array,
and lets the check judge it. One crash, hang or exit costs the check it happened in: the
worker is killed and a fresh one answers the remaining checks.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rlfound.grading import protocol, report, submissions
from rlfound.grading.sandbox import Limits, Worker, WorkerError, resolve_mode
from rlfound.grading.spec import CallError, Check, Exercise, Outcome, Prepared

_MAX_ERROR_CHARS = 2000


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """The result of one check for one submission."""

    name: str
    score: float
    max_score: float
    passed: bool
    message: str
    public: bool
    description: str


@dataclasses.dataclass(frozen=True)
class SubmissionResult:
    """All check results of one submission, plus what it printed.

    ``error`` is why the submission could not be run at all (missing, unreadable, failed to
    import); ``grader_error`` is set instead when the grader itself failed (its worker could
    not start), which is not the student's doing.
    """

    name: str
    path: Path | None
    checks: list[CheckResult]
    error: str | None = None
    output: str = ""
    grader_error: str | None = None

    @property
    def score(self) -> float:
        return float(sum(check.score for check in self.checks))

    @property
    def max_score(self) -> float:
        return float(sum(check.max_score for check in self.checks))


def _reply_to_value(reply):
    """A worker's reply item -> float64 ndarray, or CallError for anything else."""
    if type(reply) is not dict:
        return CallError("the worker's reply was malformed")
    if reply.get("ok") is True and "value" in reply:
        try:
            return protocol.to_float64(reply["value"])
        except protocol.ProtocolError as error:
            return CallError(f"returned a value the grader cannot use: {error}")
    message = reply.get("error")
    if type(message) is not str:
        return CallError("the function failed")
    return CallError(message[:_MAX_ERROR_CHARS])


class Grader:
    """Grades submissions of one exercise with one seed.

    Parameters
    ----------
    exercise : Exercise
        The exercise specification.
    seed : int
        Seed of the graded-only checks' inputs. The same seed regrades identically.
    public_only : bool
        Run only the public checks (the students' self-check).
    mode : {"auto", "default", "strong"}
        Sandbox mode; ``auto`` uses bubblewrap when it works.
    limits : Limits
        Resource limits and per-check timeout of the workers.
    block_processes : bool
        Let the worker's audit hook refuse process creation (see ``Worker``).
    """

    def __init__(
        self,
        exercise: Exercise,
        *,
        seed: int = 0,
        public_only: bool = False,
        mode: str = "auto",
        limits: Limits | None = None,
        block_processes: bool = True,
    ):
        self.exercise = exercise
        self.seed = seed
        self.mode = resolve_mode(mode)
        self.limits = limits or Limits()
        self.block_processes = block_processes
        reference = exercise.reference()
        parameters = {f.name: f.parameter_names for f in exercise.functions}
        self.checks: list[tuple[Check, Prepared, list]] = []
        for check in exercise.checks:
            if public_only and not check.public:
                continue
            prepared = check.prepare(exercise.rng(check, seed), reference)
            calls = []
            for call in prepared.calls:
                names = parameters[call.function]
                if sorted(call.kwargs) != sorted(names):
                    raise ValueError(
                        f"check {check.name!r} passes {sorted(call.kwargs)} to {call.function}, "
                        f"which takes {names}"
                    )
                calls.append((call.function, [call.kwargs[n] for n in names]))
            self.checks.append((check, prepared, calls))

    @property
    def max_score(self) -> float:
        return float(sum(check.points for check, _, _ in self.checks))

    def grade(self, submission: submissions.Submission) -> SubmissionResult:
        """Grade one submission; never raises for anything the submission does."""
        if submission.source is None:
            failed = [self.failed_result(check, submission.error) for check, _, _ in self.checks]
            return SubmissionResult(submission.name, submission.path, failed, submission.error)
        worker = Worker(
            submission.source,
            submission.name,
            mode=self.mode,
            limits=self.limits,
            block_processes=self.block_processes,
        )
        results: list[CheckResult] = []
        import_error = grader_error = None
        try:
            running = False
            for check, prepared, calls in self.checks:
                if import_error is not None:
                    results.append(self.failed_result(check, import_error))
                    continue
                if not running:
                    import_error, infrastructure = self._start(worker)
                    if infrastructure:
                        grader_error = import_error
                    if import_error is not None:
                        results.append(self.failed_result(check, import_error))
                        continue
                    running = True
                try:
                    replies = worker.call(calls)
                except WorkerError as error:
                    results.append(self.failed_result(check, error.reason))
                    running = False
                    continue
                results.append(self._judge(check, prepared, [_reply_to_value(r) for r in replies]))
        finally:
            output = worker.output()
            worker.close()
        return SubmissionResult(
            submission.name, submission.path, results, import_error, output, grader_error
        )

    def _start(self, worker: Worker) -> tuple[str | None, bool]:
        """Start the worker and import the submission.

        Returns the error message (None on success) and whether the grader, not the
        submission, failed (the worker did not start before any student code ran).
        """
        try:
            worker.start()
        except WorkerError as failure:
            return failure.reason, True
        try:
            error = worker.load()
        except WorkerError as failure:
            return f"the submission could not be imported: {failure.reason}", False
        if error is not None:
            worker.kill()
            return f"the submission could not be imported:\n{error}", False
        return None, False

    def failed_result(self, check: Check, message: str | None) -> CheckResult:
        """A zero-score result of ``check`` with ``message``."""
        return CheckResult(
            check.name,
            0.0,
            check.points,
            False,
            message or "failed",
            check.public,
            check.description,
        )

    def _judge(self, check: Check, prepared: Prepared, values: list) -> CheckResult:
        try:
            outcome = prepared.judge(values)
        except Exception as error:  # a specification's property crashed on odd output
            outcome = Outcome(False, f"the output could not be judged ({type(error).__name__})")
        score = check.points if outcome.passed else 0.0
        return CheckResult(
            check.name,
            score,
            check.points,
            outcome.passed,
            outcome.message,
            check.public,
            check.description,
        )


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
        report.write_submission(out_dir / name, grader, result)
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
    report.write_grades(out_dir / "grades.csv", grader, results)
    return results
