"""Grade submissions: make each check concrete, ask a worker, judge the replies here.

A :class:`Grader` is built once per exercise and seed. It imports the trusted reference
solution, draws every check's inputs and computes the expected outputs in this process, once
for the whole batch. For each submission it starts a :class:`~rlfound.grading.sandbox.Worker`,
sends one request per check (the calls of that check), coerces each reply to a float64 array,
and lets the check judge it. One crash, hang or exit costs the check it happened in: the
worker is killed and a fresh one answers the remaining checks.
"""

from __future__ import annotations

from rlfound.grading.authoring import public
from rlfound.grading.authoring.instructor import InstructorMissing
from rlfound.grading.authoring.spec import (
    CallError,
    Check,
    Exercise,
    Function,
    Outcome,
    Prepared,
    Raises,
)
from rlfound.grading.intake import submissions, text
from rlfound.grading.sandbox import Limits, Worker, WorkerError, accounts, resolve_mode
from rlfound.grading.sandbox.inside import protocol
from rlfound.grading.scoring.results import CheckResult, SubmissionResult

__all__ = ["Grader", "SignatureMismatch", "positional_calls", "prepare_check"]

_MAX_ERROR_CHARS = text.MESSAGE_CHARS


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
    return CallError(text.clean(message, _MAX_ERROR_CHARS))


#: The message of the checks after the first when the submission could not be imported.
_NOT_IMPORTED = (
    "not run: the submission could not be imported (the reason is at the top of the report)"
)


class SignatureMismatch(ValueError):
    """A check calls a function with keywords other than its declared parameters."""


def _check_keywords(check: Check, function: Function, keywords) -> None:
    names = function.parameter_names
    if sorted(keywords) == sorted(names):
        return
    missing = [n for n in names if n not in keywords]
    unexpected = [n for n in keywords if n not in names]
    details = "; ".join(
        f"{label} {', '.join(found)}"
        for label, found in (("missing", missing), ("unexpected", unexpected))
        if found
    )
    raise SignatureMismatch(
        f"check {check.name!r} passes ({', '.join(keywords)}) to {function.name}, declared as "
        f"{function.signature}: {details}"
    )


class _DeclaredReference:
    """The reference module seen through the declared signatures: a declared function called
    with other keywords raises :class:`SignatureMismatch` before the reference runs, instead
    of a ``TypeError`` from deep inside a check."""

    def __init__(self, module, exercise: Exercise, check: Check):
        self._module = module
        self._functions = {f.name: f for f in exercise.functions}
        self._check = check

    def __getattr__(self, name):
        target = getattr(self._module, name)
        declared = self._functions.get(name)
        if declared is None or not callable(target):
            return target

        def call(**kwargs):
            _check_keywords(self._check, declared, kwargs)
            return target(**kwargs)

        return call


def prepare_check(exercise: Exercise, check: Check, reference, seed: int | None) -> Prepared:
    """Draw a check's inputs with the exercise's generator for ``seed`` and compute what is
    expected with ``reference`` (the imported reference solution).

    Raises
    ------
    SignatureMismatch
        If the check calls a declared function with keywords other than its parameters.
    """
    prepared = check.prepare(
        exercise.rng(check, seed), _DeclaredReference(reference, exercise, check)
    )
    positional_calls(exercise, check, prepared)
    return prepared


def positional_calls(exercise: Exercise, check: Check, prepared: Prepared) -> list[tuple]:
    """The calls of a prepared check as ``(function, arguments in declared order)``.

    The worker passes arguments by position, so each call's keywords must be exactly the
    declared parameters of its function.

    Raises
    ------
    SignatureMismatch
        Naming the check, the function, and the keywords missing or unexpected.
    """
    functions = {f.name: f for f in exercise.functions}
    calls = []
    for call in prepared.calls:
        function = functions[call.function]
        _check_keywords(check, function, call.kwargs)
        calls.append((call.function, [call.kwargs[n] for n in function.parameter_names]))
    return calls


def _unless_raising_everywhere(
    check: Check, result: CheckResult, answered: dict[str, set[bool]]
) -> CheckResult:
    """A passed ``Raises`` check, failed if its function returned no numbers on valid input.

    Raising on bad input shows that the function checks its input only if it returns on
    good input: a function that raises whatever it is given would otherwise earn every
    error check. ``answered`` holds, per function, whether each of its completed calls in
    the other checks returned numbers (True) or not (an exception, or a value that is not
    numbers: what an exception's text says is the student's to write, so it is not relied
    on). A function none of whose calls in the other checks completed keeps its points.
    """
    if not (
        isinstance(check, Raises) and result.passed and answered.get(check.function) == {False}
    ):
        return result
    message = (
        f"{check.function} raises {check.error} here, but it returned no numbers on any "
        "valid input of the other checks; an error check counts once the function also "
        "returns values"
    )
    return CheckResult(
        check.name,
        0.0,
        check.points,
        False,
        text.clean(message, text.MESSAGE_CHARS),
        check.public,
        check.description,
    )


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
    mode : {"auto", "strong", "user", "default"}
        Sandbox mode (:mod:`rlfound.grading.sandbox`); ``auto`` picks the strongest that
        works here.
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
        if public_only:
            reference = public.public_reference(exercise)
        elif not exercise.complete:
            raise InstructorMissing(f"grading {exercise.id!r} with its graded-only checks")
        else:
            reference = exercise.reference()
        self.checks: list[tuple[Check, Prepared, list]] = []
        for check in exercise.checks:
            if public_only and not check.public:
                continue
            prepared = prepare_check(exercise, check, reference, seed)
            self.checks.append((check, prepared, positional_calls(exercise, check, prepared)))

    @property
    def max_score(self) -> float:
        return float(sum(check.points for check, _, _ in self.checks))

    @property
    def check_names(self) -> list[str]:
        """Names of the checks this grader runs, in order."""
        return [check.name for check, _, _ in self.checks]

    def grade(self, submission: submissions.Submission) -> SubmissionResult:
        """Grade one submission; never raises for anything the submission does.

        A worker that cannot be prepared (a full disk, no worker user) makes the submission
        score zero with the reason, marked as the grader's failure, not the student's.
        """
        if submission.source is None:
            return self.not_run(
                submission.name, submission.path, submission.error, file_name=submission.file_name
            )
        try:
            worker = Worker(
                submission.source,
                submission.name,
                mode=self.mode,
                limits=self.limits,
                block_processes=self.block_processes,
                cells=submission.cells,
            )
        except (OSError, accounts.Unavailable) as error:
            message = f"the grader could not prepare a worker for this submission: {error}"
            return self.not_run(
                submission.name,
                submission.path,
                message,
                grader_error=True,
                file_name=submission.file_name,
            )
        results: list[CheckResult] = []
        # Per function: whether its calls in the other checks returned numbers (True) or not.
        answered: dict[str, set[bool]] = {}
        import_error = grader_error = None
        try:
            running = False
            for check, prepared, calls in self.checks:
                if import_error is not None:
                    results.append(CheckResult.failed(check, _NOT_IMPORTED))
                    continue
                if not running:
                    import_error, infrastructure = self._start(worker)
                    if infrastructure:
                        grader_error = import_error
                    if import_error is not None:
                        results.append(CheckResult.failed(check, import_error))
                        continue
                    running = True
                try:
                    replies = worker.call(calls)
                except WorkerError as error:
                    results.append(CheckResult.failed(check, text.clean(error.reason, 500)))
                    running = False
                    continue
                values = [_reply_to_value(r) for r in replies]
                results.append(self._judge(check, prepared, values))
                if not isinstance(check, Raises):
                    for (function, _), value in zip(calls, values, strict=False):
                        answered.setdefault(function, set()).add(not isinstance(value, CallError))
        finally:
            output = worker.output()
            worker.close()
        results = [
            _unless_raising_everywhere(check, result, answered)
            for (check, _, _), result in zip(self.checks, results, strict=True)
        ]
        notes = (*submission.notes, *worker.notes)[: text.MAX_NOTES]
        return SubmissionResult(
            submission.name,
            submission.path,
            results,
            import_error,
            output,
            grader_error or worker.cleanup_error,
            notes=tuple(notes),
            file_name=submission.file_name,
        )

    def _start(self, worker: Worker) -> tuple[str | None, bool]:
        """Start the worker and import the submission.

        Returns the error message (None on success) and whether the grader, not the
        submission, failed (the worker did not start before any student code ran).
        """
        try:
            worker.start()
        except WorkerError as failure:
            return text.clean(failure.reason, text.ERROR_CHARS), True
        try:
            error = worker.load()
        except WorkerError as failure:
            reason = text.clean(failure.reason, 500)
            return f"the submission could not be imported: {reason}", False
        if error is not None:
            worker.kill()
            error = text.clean(error, text.ERROR_CHARS)
            return f"the submission could not be imported:\n{error}", False
        return None, False

    def not_run(
        self,
        name: str,
        path,
        message: str,
        *,
        grader_error: bool = False,
        file_name: str = "",
    ) -> SubmissionResult:
        """The result of a submission that could not be run at all: every check fails; the
        first says why."""
        message = text.clean(message or "failed", text.ERROR_CHARS)
        failed = [
            CheckResult.failed(check, message if index == 0 else _NOT_IMPORTED)
            for index, (check, _, _) in enumerate(self.checks)
        ]
        return SubmissionResult(
            name,
            path,
            failed,
            message,
            grader_error=message if grader_error else None,
            file_name=file_name,
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
            text.clean(outcome.message, text.MESSAGE_CHARS),
            check.public,
            check.description,
        )
