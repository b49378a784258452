"""How a student reproduces a failed case: its inputs in full when they are small, otherwise
their shapes and three lines of code that rebuild them.

A check's cases are drawn by its ``inputs`` function from a generator the exercise seeds for
that check (:meth:`rlfound.grading.authoring.spec.Exercise.rng`), so a case is fixed by the
exercise, the check, its number and the seed: :func:`rebuild_case` draws the same cases
again, on the student's own machine, from the specification in the student's install. The
seed of a public check is the fixed public one, so the snippet needs no secret; the seed of a
graded-only check is the course's secret, which is never written into a student's feedback,
so such a case is shown in full when it is small and otherwise only by its shapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rlfound.grading.authoring.spec import Check, Exercise

__all__ = ["SMALL_CHARS", "SMALL_ENTRIES", "describe_case", "rebuild_case"]

#: Most entries of one array shown in full.
SMALL_ENTRIES = 24
#: Most characters of a call shown in full.
SMALL_CHARS = 700


def rebuild_case(
    exercise: str,
    check: str,
    number: int,
    *,
    seed: int | None = None,
    exercises: Sequence[str | Path] = (),
) -> dict:
    """The keyword arguments of case ``number`` (1-based, as the feedback counts) of a check.

    Parameters
    ----------
    exercise : str
        The exercise id.
    check : str
        The check's name.
    number : int
        The case's number, from 1.
    seed : int, optional
        The grading seed, for a graded-only check (the public seed is used for a public one).
    exercises : sequence of path
        Folders of the instructor's own specifications (``--exercises``).

    Returns
    -------
    dict
        The case's keyword arguments, as the grader passed them.

    Raises
    ------
    ValueError
        If the exercise, the check or the case does not exist, or the check draws no cases.

    Examples
    --------
    >>> sorted(rebuild_case("gae-recursion", "recursive-edges", 1))
    ['gamma', 'lam', 'rewards', 'values']
    """
    from rlfound.grading.authoring.spec import load_exercises

    found = load_exercises(exercises)
    if exercise not in found:
        raise ValueError(f"exercise: unknown exercise {exercise!r}")
    spec = found[exercise]
    chosen = next((c for c in spec.checks if c.name == check), None)
    if chosen is None or not hasattr(chosen, "inputs"):
        raise ValueError(f"check: {exercise} has no check {check!r} that draws cases")
    inputs = chosen.inputs
    cases = inputs(spec.rng(chosen, seed)) if callable(inputs) else inputs
    if not isinstance(number, int) or not 1 <= number <= len(cases):
        raise ValueError(f"number: the check has cases 1 to {len(cases)}; got {number!r}")
    return dict(cases[number - 1])


def _literal(value) -> str | None:
    """``value`` as exact Python source, or None when it is too large to show."""
    if isinstance(value, np.ndarray):
        if value.size > SMALL_ENTRIES:
            return None
        kinds = {"f": "", "b": ", dtype=bool"}
        dtype = kinds.get(value.dtype.kind, f", dtype=np.{value.dtype.name}")
        return f"np.array({value.tolist()!r}{dtype})"
    if isinstance(value, list | tuple):
        try:
            small = np.size(value) <= SMALL_ENTRIES
        except ValueError:  # ragged: NumPy cannot count it, so it is not shown in full
            return None
        return repr(value) if small else None
    return repr(value)


def _shape(value) -> str:
    if isinstance(value, np.ndarray | list | tuple):
        try:
            return f"shape {np.shape(value)}"
        except ValueError:
            return f"a ragged {type(value).__name__} of {len(value)} items"
    return repr(value)


def describe_case(
    exercise: Exercise, check: Check, index: int, case: dict, functions: Sequence[str]
) -> str:
    """The lines that tell a student how to reproduce a failed case.

    Parameters
    ----------
    exercise : Exercise
        The exercise.
    check : Check
        The check that failed.
    index : int
        The failed case's index (from 0).
    case : dict
        Its keyword arguments.
    functions : sequence of str
        The functions the check calls with them.

    Examples
    --------
    >>> from rlfound.grading.authoring.spec import load_exercises
    >>> exercise = load_exercises()["gae-recursion"]
    >>> check = next(c for c in exercise.checks if c.name == "recursive-edges")
    >>> case = {"rewards": np.array([1.0]), "values": np.array([0.0, 0.5]), "gamma": 0.0,
    ...         "lam": 1.0}
    >>> print(describe_case(exercise, check, 0, case, ["gae_recursive"]))
    To reproduce, call:
        gae_recursive(rewards=np.array([1.0]), values=np.array([0.0, 0.5]), gamma=0.0, lam=1.0)
    """
    shown = [_literal(value) for value in case.values()]
    if all(item is not None for item in shown):
        arguments = ", ".join(f"{k}={v}" for k, v in zip(case, shown, strict=True))
        calls = [f"    {name}({arguments})" for name in functions]
        if sum(len(call) for call in calls) <= SMALL_CHARS:
            return "\n".join(["To reproduce, call:", *calls])
    shapes = ", ".join(f"{k}: {_shape(v)}" for k, v in case.items())
    drawn = callable(getattr(check, "inputs", None))
    if not check.public:
        origin = " (drawn from the course's private seed)" if drawn else ""
        return (
            f"The inputs ({shapes}) are graded-only{origin}: your instructor can rebuild "
            "them for you."
        )
    origin = "drawn from the public seed" if drawn else "fixed by the exercise"
    first = functions[0]
    return "\n".join(
        [
            f"The inputs ({shapes}) are {origin}; rebuild them with:",
            "    from rlfound.grading.scoring.reproduce import rebuild_case",
            f"    case = rebuild_case({exercise.id!r}, {check.name!r}, {index + 1})",
            f"    print({first}(**case))",
        ]
    )
