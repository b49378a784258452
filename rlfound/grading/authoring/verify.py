"""Check an exercise specification before students see it (``rlfound verify``).

A specification can be wrong in ways that grading would only reveal on students' work: a
reference solution that fails its own checks, a check that gives points to the empty starter
or to another submission that does nothing (all zeros, a constant, an argument returned
unchanged),
inputs whose keywords are not the declared parameters, or inputs that change from one run to
the next (an input generator that draws from NumPy's global generator, :mod:`random` or the
clock instead of the generator it is given), so that regrading with the same seed gives other
grades. :func:`verify` looks for each of these with the grader itself and reports, for each,
whether it holds and what is wrong.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import traceback
from pathlib import Path

import numpy as np

from rlfound.grading.authoring import answers, spec
from rlfound.grading.authoring.starter import starter_source
from rlfound.grading.intake.submissions import Submission
from rlfound.grading.output import report
from rlfound.grading.sandbox import Limits
from rlfound.grading.sandbox.inside import protocol
from rlfound.grading.scoring.grader import (
    Grader,
    SignatureMismatch,
    positional_calls,
    prepare_check,
)

__all__ = ["Finding", "Verification", "verify", "verify_file"]

#: Lines of detail shown per problem (a failing check's message can be long).
_DETAIL_LINES = 6
_LOADS = "the specification loads and is valid"


@dataclasses.dataclass(frozen=True)
class Finding:
    """One property of a specification and what was found.

    ``status`` is ``"PASS"``, ``"FAIL"``, or ``"SKIP"`` when an earlier failure made the
    property impossible to check; ``details`` explain a failure.
    """

    claim: str
    status: str
    details: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Verification:
    """The findings on one specification."""

    title: str
    context: tuple[str, ...]
    findings: list[Finding]

    @property
    def ok(self) -> bool:
        return all(finding.status == "PASS" for finding in self.findings)

    def report(self) -> str:
        """A readable report: what was verified, then PASS, FAIL or SKIP per property."""
        lines = [f"Verifying {self.title}", *self.context, ""]
        for finding in self.findings:
            lines.append(f"{finding.status}  {finding.claim}")
            lines += [f"      {line}" for line in finding.details]
        problems = sum(finding.status == "FAIL" for finding in self.findings)
        lines.append("")
        if problems:
            lines.append(f"{problems} problem(s) found; the specification is not ready.")
        else:
            lines.append("The specification is ready: every property holds.")
        return "\n".join(lines) + "\n"


def _describe(error: BaseException, origin: Path | None = None) -> list[str]:
    """The exception, and where in ``origin`` (a specification or solution) it happened."""
    lines = []
    if origin is not None:
        for frame in traceback.extract_tb(error.__traceback__):
            if Path(frame.filename).resolve() == origin.resolve():
                lines = [f"{origin.name}, line {frame.lineno}, in {frame.name}"]
    text = "".join(traceback.format_exception_only(type(error), error)).strip()
    return [*lines, *text.splitlines()]


def _fingerprint(value):
    """A comparable summary of an input value; arrays by dtype, shape and a hash of their bytes
    (their ``repr`` elides the middle of large arrays)."""
    if isinstance(value, np.ndarray):
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        return ("ndarray", value.dtype.str, value.shape, digest)
    if isinstance(value, dict):
        return ("dict", sorted((str(k), _fingerprint(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_fingerprint(item) for item in value])
    if isinstance(value, float):
        return ("float", value.hex())
    return (type(value).__name__, repr(value))


def _truncate(lines: list[str]) -> list[str]:
    if len(lines) <= _DETAIL_LINES:
        return lines
    return [*lines[:_DETAIL_LINES], f"... ({len(lines) - _DETAIL_LINES} more line(s))"]


def _prepare_all(exercise: spec.Exercise, reference, seed: int):
    """Prepare every check as a grading run would; return the prepared checks and the problems
    (a check whose keywords are not the declared parameters, or whose code failed)."""
    prepared, problems = {}, []
    for check in exercise.checks:
        try:
            prepared[check.name] = prepare_check(exercise, check, reference, seed)
        except SignatureMismatch as error:
            problems.append(str(error))
        except Exception as error:  # the specification's own code failed
            problems.append(
                f"check {check.name!r} could not draw its inputs or compute the expected values:"
            )
            problems += [f"  {line}" for line in _describe(error, exercise.source)]
    return prepared, problems


def _unsendable(exercise: spec.Exercise, prepared: dict) -> list[str]:
    """Checks that pass a value the worker cannot receive: it takes numbers, booleans, None,
    lists and arrays."""
    problems = []
    for check in exercise.checks:
        if check.name not in prepared:
            continue
        for function, arguments in positional_calls(exercise, check, prepared[check.name]):
            try:
                protocol.encode_value(arguments)
            except TypeError as error:
                problems.append(
                    f"check {check.name!r} passes {function} a value the worker cannot receive "
                    f"({error}); inputs must be numbers, booleans, None, lists or arrays"
                )
                break
    return problems


def _differing_inputs(exercise: spec.Exercise, first: dict, second: dict) -> list[str]:
    differing = []
    for check in exercise.checks:
        if check.name not in first or check.name not in second:
            continue
        a, b = first[check.name].calls, second[check.name].calls
        if [(c.function, _fingerprint(c.kwargs)) for c in a] != [
            (c.function, _fingerprint(c.kwargs)) for c in b
        ]:
            seed = "the public seed" if check.public else "the grading seed"
            differing.append(
                f"check {check.name!r} drew other inputs the second time with {seed}: its "
                "input generator must draw only from the rng it is given (not np.random.*, "
                "random, the time or anything else that changes between runs)"
            )
    return differing


def _trivial_kinds(reference, exercise: spec.Exercise, prepared: spec.Prepared) -> dict:
    """The replies trivial submissions give to a prepared check's calls, by kind.

    Shapes come from the reference's own outputs on the same inputs, so "all zeros" is the
    strongest version of itself: zeros of exactly the expected shape.
    """
    functions = {f.name: f for f in exercise.functions}
    shapes, arguments = [], []
    for call in prepared.calls:
        try:
            value = getattr(reference, call.function)(**spec.copy_arguments(call.kwargs))
            shapes.append(np.shape(np.asarray(value, dtype=np.float64)))
        except Exception:  # a call the reference refuses (a Raises check)
            shapes.append(())
        names = functions[call.function].parameter_names
        arguments.append([call.kwargs[n] for n in names])
    kinds = {
        "all zeros (of the expected shape)": [np.zeros(s) for s in shapes],
        "the number 0": [np.zeros(()) for _ in shapes],
    }
    for constant in (1.0, -1.0, 0.5):
        kinds[f"the constant {constant:g} (of the expected shape)"] = [
            np.full(s, constant) for s in shapes
        ]
    widest = max((len(a) for a in arguments), default=0)
    for index in range(widest):
        replies = []
        for args in arguments:
            if index >= len(args):
                replies.append(spec.CallError("NoSuchArgument: the function has fewer parameters"))
                continue
            try:
                replies.append(np.array(args[index], dtype=np.float64))
            except (TypeError, ValueError):
                replies.append(spec.CallError("NotNumbers: the argument is not numbers"))
        kinds[f"its argument number {index + 1} returned unchanged"] = replies
    return kinds


def _trivial_points(exercise: spec.Exercise, reference, prepared: dict) -> list[str]:
    """Checks that give points to a trivial submission, and to which."""
    problems = []
    for check in exercise.checks:
        if check.name not in prepared or check.points <= 0:
            continue
        for kind, replies in _trivial_kinds(reference, exercise, prepared[check.name]).items():
            try:
                passed = prepared[check.name].judge(replies).passed
            except Exception:  # a property that crashes on odd output gives nothing
                passed = False
            if passed:
                problems.append(
                    f"check {check.name!r} gives {check.points:g} point(s) to a submission whose "
                    f"functions return {kind}"
                )
                break
    return problems


def _first_difference(name: str, a: str, b: str) -> list[str]:
    diff = difflib.unified_diff(
        a.splitlines(), b.splitlines(), f"run 1/{name}", f"run 2/{name}", n=0, lineterm=""
    )
    return list(diff)[:_DETAIL_LINES]


def _in_the_book(exercise: spec.Exercise) -> list[str]:
    """Context lines naming the exercise functions that the library answers."""
    try:
        found = answers.library_answers(exercise)
    except Exception:  # a broken reference is reported by the properties below
        return []
    return [
        f"answer in the book: {a.function} behaves as {a.library} on the public checks "
        f"{', '.join(a.checks)} (students have the library: fine for self-study, weak for "
        "credit; submissions cannot import rlfound)"
        for a in found
    ]


def verify(
    exercise: spec.Exercise,
    *,
    seed: int = 0,
    mode: str = "auto",
    limits: Limits | None = None,
) -> Verification:
    """Verify a loaded exercise specification.

    Checks, in order: the reference solution imports and defines the declared functions;
    every check's inputs match the declared signatures; the inputs drawn with the same seed
    are the same in two runs; the reference scores full marks; the starter scores zero;
    trivial submissions score zero (functions that return all zeros of the expected shape, the
    number 0, a constant, or one of their arguments unchanged: no check may give them a point);
    two grading runs with the same seed give byte-identical ``results.json`` and
    ``feedback.md``.
    A property that cannot be checked because an earlier one failed is reported as skipped.

    Parameters
    ----------
    exercise : Exercise
        The specification, as :func:`~rlfound.grading.authoring.spec.load_file` returns it.
    seed : int
        Grading seed of the graded-only checks.
    mode : {"auto", "default", "strong"}
        Sandbox mode of the grading runs.
    limits : Limits
        Resource limits and timeout of the grading runs.

    Returns
    -------
    Verification
    """
    signatures = ", ".join(f.signature for f in exercise.functions)
    claims = [
        _LOADS,
        f"the reference solution imports and defines {signatures}",
        "every check's inputs match the declared signatures",
        f"two runs with seed {seed} draw the same inputs",
        "the reference solution scores full marks",
        "the starter scores zero",
        "trivial submissions (all zeros, constants, an argument returned unchanged) score zero",
        f"two runs with seed {seed} give byte-identical results",
    ]
    findings = [Finding(_LOADS, "PASS")]
    context = (
        f"specification: {exercise.source}",
        f"reference solution: {exercise.solution_path}",
        f"grading seed {seed}",
        *_in_the_book(exercise),
    )

    def found(problems, suffix=""):
        claim = claims[len(findings)] + suffix
        findings.append(Finding(claim, "FAIL" if problems else "PASS", tuple(problems)))

    def done(reason=""):
        remaining = claims[len(findings) :]
        findings.extend(Finding(claim, "SKIP", (reason,)) for claim in remaining)
        return Verification(exercise.summary(), context, findings)

    try:
        # Two imports, as two grading runs would make: a reference with state of its own
        # would show in the comparison of the runs.
        references = [exercise.reference(), exercise.reference()]
    except Exception as error:  # the reference is trusted code, but it may well be broken
        found(_describe(error, exercise.solution_path))
        return done("needs a working reference solution")
    found([])

    (first, problems), (second, _) = (_prepare_all(exercise, r, seed) for r in references)
    problems += _unsendable(exercise, first)
    count = sum(len(prepared.calls) for prepared in first.values())
    found(problems, "" if problems else f" ({count} call{'' if count == 1 else 's'})")
    differing = _differing_inputs(exercise, first, second)
    if problems:
        if differing:  # among the checks that did prepare
            found(differing)
        return done("needs every check to prepare inputs that match the declared signatures")
    found(differing)

    texts = {"reference": exercise.solution_path.read_text(encoding="utf-8")}
    try:
        texts["starter"] = starter_source(exercise)
    except ValueError as error:
        starter_error = str(error)
    runs = []
    for _ in range(2):
        grader = Grader(exercise, seed=seed, mode=mode, limits=limits)
        runs.append(
            {name: grader.grade(Submission(name, None, text)) for name, text in texts.items()}
        )

    reference = runs[0]["reference"]
    problems = []
    if reference.error:
        problems = _truncate(reference.error.splitlines())
    else:
        for check in reference.checks:
            if not check.passed:
                problems.append(f"check {check.name!r} fails on the reference:")
                problems += [f"  {line}" for line in _truncate(check.message.splitlines())]
    found(problems, f" ({reference.score:g} / {reference.max_score:g})")

    if "starter" not in texts:
        found([f"the starter cannot be made: {starter_error}"])
    else:
        starter = runs[0]["starter"]
        found(
            [
                f"check {check.name!r} gives {check.score:g} point(s) to the starter, whose "
                "functions only raise NotImplementedError"
                for check in starter.checks
                if check.score > 0
            ],
            f" ({starter.score:g} / {starter.max_score:g})",
        )
    found(_trivial_points(exercise, references[0], first))

    different = []
    for name in texts:
        for filename, render in (
            ("results.json", report.results_text),
            ("feedback.md", report.feedback_markdown),
        ):
            one, two = (render(exercise, run[name]) for run in runs)
            if one != two:
                different.append(f"the {name}'s {filename} differs between the two runs:")
                different += [f"  {line}" for line in _first_difference(filename, one, two)]
    found(different)
    return done()


def verify_file(path: str | Path, **options) -> Verification:
    """Load the specification at ``path`` and :func:`verify` it; a specification that does not
    load is a failed verification, not an exception."""
    path = Path(path).resolve()
    try:
        exercise = spec.load_file(path)
    except Exception as error:  # the specification is the instructor's code
        finding = Finding(_LOADS, "FAIL", tuple(_describe(error, path)))
        return Verification(path.name, (f"specification: {path}",), [finding])
    return verify(exercise, **options)
