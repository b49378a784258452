"""Which exercise functions the library already answers: "answer in the book".

Some exercises ask for a function that rlfound itself implements and the book shows as a
listing (``gae-recursion``'s ``gae_recursive`` is :func:`rlfound.advantages.gae_recursive`).
A student has the library, so such an exercise is fine for self-study and weak for credit.
The grader refuses a submission that imports rlfound; this module tells the instructor which
exercises are affected, by behavior rather than by name: a library function answers an
exercise function when it accepts the same parameters and passes every one of the exercise's
own public checks of that function, judged exactly as a student's answer is.

The library is trusted code, so its candidates run here, in this process.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import warnings

import numpy as np

import rlfound
from rlfound.grading.authoring import public
from rlfound.grading.authoring.spec import CallError, Exercise, Raises, copy_arguments

__all__ = ["LibraryAnswer", "library_answers", "library_functions"]


@dataclasses.dataclass(frozen=True)
class LibraryAnswer:
    """An exercise function the library answers: ``function`` of the exercise is
    ``library`` (``rlfound.<module>.<name>``), on ``checks`` of its public checks."""

    function: str
    library: str
    checks: tuple[str, ...]


@functools.cache
def library_functions() -> tuple[tuple[str, object], ...]:
    """Every public function of rlfound's public modules, as ``(dotted name, function)``."""
    found = []
    for module_name in rlfound.__all__:
        module = getattr(rlfound, module_name)
        if not inspect.ismodule(module):
            continue  # __version__
        for name in getattr(module, "__all__", ()):
            target = getattr(module, name, None)
            if inspect.isfunction(target):
                found.append((f"rlfound.{module_name}.{name}", target))
    return tuple(found)


def _accepts(function, names: list[str]) -> bool:
    """Whether ``function`` can be called with exactly these keywords."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return False
    try:
        signature.bind(**dict.fromkeys(names))
    except TypeError:
        return False
    return True


def _reply(function, kwargs: dict):
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return np.array(function(**copy_arguments(kwargs)), dtype=np.float64)
    except Exception as error:  # a candidate that does not fit the exercise's inputs
        return CallError(f"{type(error).__name__}: {error}")


def library_answers(exercise: Exercise) -> list[LibraryAnswer]:
    """The exercise functions that a public rlfound function answers (see the module
    docstring); checks that need a reference use the recorded outputs where the reference
    solution is not installed."""
    reference = public.public_reference(exercise)
    answers = []
    for declared in exercise.functions:
        checks = [
            check
            for check in exercise.checks
            if check.public
            and not isinstance(check, Raises)
            and tuple(check.functions) == (declared.name,)
        ]
        if not checks:
            continue
        prepared = [(c, c.prepare(exercise.rng(c, None), reference)) for c in checks]
        # A function of the same name first: the answer the book most plainly shows.
        candidates = sorted(
            library_functions(), key=lambda item: item[0].rsplit(".", 1)[1] != declared.name
        )
        for dotted, candidate in candidates:
            if not _accepts(candidate, declared.parameter_names):
                continue
            passed = all(
                p.judge([_reply(candidate, call.kwargs) for call in p.calls]).passed
                for _, p in prepared
            )
            if passed:
                answers.append(
                    LibraryAnswer(declared.name, dotted, tuple(c.name for c, _ in prepared))
                )
                break
    return answers
