"""Grade submissions: make each check concrete, ask a worker, judge the replies here.

A :class:`Grader` is built once per exercise and seed. It imports the trusted reference
solution, draws every check's inputs and computes the expected outputs in this process, once
for the whole batch. For each submission it starts a :class:`~rlfound.grading.sandbox.Worker`,
sends one request per function of each check (that function's calls in the check), coerces
each reply to a float64 array, and lets the check judge it. One crash, hang or exit costs the
check it happened in: the worker is killed and a fresh one answers the remaining checks.

Time is CPU time (:class:`~rlfound.grading.sandbox.Limits`). A function that runs out of time
costs one timeout, not one per check: its later calls in the submission fail at once, "not
run: timed out earlier", while the other functions still run; and the whole submission's CPU
time is bounded by ``Limits.total``, after which the remaining checks fail unrun.
"""

from __future__ import annotations

import numpy as np

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
from rlfound.grading.scoring import reproduce, student_tests
from rlfound.grading.scoring.results import CheckResult, SubmissionResult

__all__ = ["Grader", "SignatureMismatch", "positional_calls", "prepare_check"]

_MAX_ERROR_CHARS = text.MESSAGE_CHARS
#: Most classes accepted in an exception's method resolution order (real ones have a few).
_MAX_CLASSES = 64


def _exception_classes(raw) -> tuple[tuple[str, str], ...]:
    """The ``classes`` of a worker's error reply, checked and capped; ``()`` unless they look
    like the method resolution order of an exception class (``[module, name]`` pairs of short
    strings, ending with ``object`` and holding ``BaseException``), so that a garbled list
    names no class at all."""
    if type(raw) is not list or not 2 <= len(raw) <= _MAX_CLASSES:
        return ()
    classes = []
    for item in raw:
        if type(item) is not list or len(item) != 2:
            return ()
        if any(type(part) is not str or not 0 < len(part) <= text.NAME_CHARS for part in item):
            return ()
        classes.append(tuple(text.clean(part, text.NAME_CHARS) for part in item))
    if classes[-1] != ("builtins", "object") or ("builtins", "BaseException") not in classes:
        return ()
    return tuple(classes)


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
    classes = _exception_classes(reply.get("classes"))
    return CallError(text.clean(message, _MAX_ERROR_CHARS), classes)


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
    error check. ``answered`` holds, per function, whether each of its calls in the other
    checks returned numbers (True) or not (False: an exception, a value that is not numbers,
    a crash, a timeout, a call not run). Only numbers count: a function that crashes the
    worker or loops on every valid input earns no error check either. A function the other
    checks do not call keeps its points (there is no valid input to judge it by).
    """
    if not (
        isinstance(check, Raises)
        and result.passed
        and check.function in answered
        and True not in answered[check.function]
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


class _Run:
    """One submission's run: its worker (restarted after a crash or a timeout), the CPU time
    spent so far, and the functions that timed out.

    Each function of a check is one request, so a timeout names its function, which is not
    called again. A request gets the worker's limits (``Limits.timeout`` of CPU time, the
    hang guard ``Limits.wall``), its CPU time capped by what is left of ``Limits.total``.
    """

    def __init__(self, worker: Worker, limits: Limits):
        self.worker = worker
        self.limits = limits
        self.running = False
        self.cpu = 0.0
        self.timed_out: dict[str, str] = {}  # function -> which limit stopped it
        self.spent = False  # the total budget ran out
        self.import_error: str | None = None
        self.grader_error: str | None = None

    def _budget(self) -> tuple[float, bool]:
        """CPU seconds the next request may use, and whether the total budget sets them."""
        left = self.limits.total - self.cpu
        return (left, True) if left < self.limits.timeout else (self.limits.timeout, False)

    def _budget_message(self, where: str) -> str:
        return (
            f"stopped: the submission used up its total budget of {self.limits.total:g} s of "
            f"CPU time (all its checks and imports together) {where}; the remaining checks "
            "are not run"
        )

    def _skip(self, function: str) -> str | None:
        """Why ``function`` is not called now, or None."""
        if function in self.timed_out:
            return (
                f"not run: timed out earlier ({function} {self.timed_out[function]} in an "
                "earlier check, so it is not called again)"
            )
        if self.spent or self._budget()[0] <= 0:
            self.spent = True
            return (
                f"not run: the submission used up its total budget of {self.limits.total:g} s "
                "of CPU time (all its checks and imports together)"
            )
        return None

    def _start(self) -> str | None:
        """Start the worker and import the submission unless it runs; None, or why no call
        can be made (``import_error`` is set if the submission cannot be imported, and
        ``grader_error`` too if the worker did not start before any student code ran)."""
        if self.running:
            return None
        try:
            self.worker.start()
        except WorkerError as failure:
            self.import_error = self.grader_error = text.clean(failure.reason, text.ERROR_CHARS)
            return self.import_error
        cpu, total = self._budget()
        try:
            error = self.worker.load(cpu=cpu)
        except WorkerError as failure:
            if failure.limit == "cpu" and total:
                self.spent = True
                return self._budget_message("while importing it again")
            reason = text.clean(failure.reason, 500)
            self.import_error = f"the submission could not be imported: {reason}"
            return self.import_error
        finally:
            self.cpu += self.worker.request_cpu
        if error is not None:
            self.worker.kill()
            error = text.clean(error, text.ERROR_CHARS)
            self.import_error = f"the submission could not be imported:\n{error}"
            return self.import_error
        self.running = True
        return None

    def _call(self, function: str, calls: list[tuple]) -> list | str:
        """The replies to ``function``'s calls in one check (one request), or why there are
        none."""
        reason = self._skip(function) or self._start()
        if reason is not None:
            return reason
        cpu, total = self._budget()
        try:
            return self.worker.call(calls, cpu=cpu)
        except WorkerError as error:
            self.running = False
            reason = text.clean(error.reason, 500)
            if error.limit == "cpu" and total:
                self.spent = True
                return self._budget_message(f"in {function}")
            if error.limit is not None:
                self.timed_out[function] = (
                    f"used more than {cpu:g} s of CPU time"
                    if error.limit == "cpu"
                    else f"ran for more than {self.limits.wall:g} s of wall-clock time"
                )
                return f"{reason}, in {function}; it is not called again in this submission"
            return reason
        finally:
            self.cpu += self.worker.request_cpu

    def check(self, calls: list[tuple]) -> tuple[list, str | None]:
        """Make one check's calls: one value per call (a float64 array or a
        :class:`CallError`), and the message the check fails with if a call did not run to
        its end (a crash, a timeout, a call not made), else None (the check judges them)."""
        values: list = [None] * len(calls)
        failure = None
        by_function: dict[str, list[int]] = {}
        for index, (function, _) in enumerate(calls):
            by_function.setdefault(function, []).append(index)
        for function, indices in by_function.items():
            replies = self._call(function, [calls[i] for i in indices])
            if self.import_error is not None:
                return [CallError(self.import_error)] * len(calls), self.import_error
            if isinstance(replies, str):
                failure = failure or replies
                replies = [CallError(replies)] * len(indices)
            else:
                replies = [_reply_to_value(r) for r in replies]
            for index, value in zip(indices, replies, strict=True):
                values[index] = value
        return values, failure


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
        Resource limits of the workers, the CPU time of a check and of a whole submission.
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
        #: The student's own test functions, run after the checks (no automatic points).
        self.student_tests = student_tests.student_test_names(exercise)

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
        run = _Run(worker, self.limits)
        try:
            for check, prepared, calls in self.checks:
                if run.import_error is not None:
                    results.append(CheckResult.failed(check, _NOT_IMPORTED))
                    continue
                values, failure = run.check(calls)
                if failure is not None:
                    results.append(CheckResult.failed(check, failure))
                else:
                    results.append(self._judge(check, prepared, values))
                if not isinstance(check, Raises):
                    for (function, _), value in zip(calls, values, strict=True):
                        answered.setdefault(function, set()).add(isinstance(value, np.ndarray))
            tests = []
            for name in self.student_tests if run.import_error is None else ():
                tests.append(student_tests.judge_test(name, run._call(name, [(name, [])])))
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
            run.import_error,
            output,
            run.grader_error or worker.cleanup_error,
            notes=tuple(notes),
            file_name=submission.file_name,
            student_tests=tuple(tests),
        )

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
        message = text.clean(outcome.message, text.MESSAGE_CHARS)
        if not outcome.passed and outcome.case is not None and prepared.cases:
            # How to reproduce it goes last, and the message is cut to leave room for it.
            try:
                how = reproduce.describe_case(
                    self.exercise,
                    check,
                    outcome.case,
                    prepared.cases[outcome.case],
                    check.functions,
                )
            except Exception:  # an input the description cannot show costs only the hint
                how = "The inputs of this case cannot be shown."
            room = text.MESSAGE_CHARS - len(how) - 2
            message = f"{text.clean(outcome.message, max(room, 200))}\n\n{how}"
            message = text.clean(message, text.MESSAGE_CHARS)
        return CheckResult(
            check.name,
            score,
            check.points,
            outcome.passed,
            message,
            check.public,
            check.description,
        )
