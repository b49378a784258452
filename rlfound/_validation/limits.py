"""The numerical edges of the library: size limits, tolerances, and the finite-output guard.

Every public function keeps one promise for inputs of the right types: it either returns
finite numbers or raises ``ValueError``. Three kinds of guard make that hold at the edge of
the valid domain, and they live here so that every function uses the same ones:

- **Size limits.** A size argument (a horizon, a batch size, a number of steps, of actions,
  of samples, ...) is checked with exact integer arithmetic before any work starts, against
  :data:`MAX_ENUMERATION` (items of an exact enumeration), :data:`MAX_ARRAY_ENTRIES` (entries
  of an array whose size the argument controls) or :data:`MAX_ITERATIONS` (passes of a loop
  it controls). The message names the argument and gives the limit and the requested size.
- **Tolerances.** A probability that must be positive (the support condition) must exceed
  :data:`SUPPORT_TOLERANCE`; a discounted row γ·Σ P(s, ·) may exceed 1 by at most
  :data:`ROW_SUM_TOLERANCE` and counts as "ending" (leaking probability) only when it is
  below 1 by more than that.
- **Finite output.** :func:`finite_output` wraps a public function: floating-point overflow,
  invalid operations and division by zero inside it raise (``numpy.errstate``), and every
  float it returns is checked to be finite. Either failure becomes a ``ValueError`` that
  names the quantity that overflowed.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import numbers
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "MAX_ARRAY_ENTRIES",
    "MAX_ENUMERATION",
    "MAX_ITERATIONS",
    "ROW_SUM_TOLERANCE",
    "SUPPORT_TOLERANCE",
    "capped_power",
    "check_enumeration_size",
    "check_finite_result",
    "check_size",
    "finite_output",
]

#: Largest number of items (episodes, sequences, tuples) an exact enumeration may list:
#: beyond it the brute-force references of the library would take minutes or fill memory.
MAX_ENUMERATION = 1_000_000

#: Largest number of entries of an array whose size an argument controls (10^8 float64
#: numbers are 800 MB): a larger request is refused before anything is allocated.
MAX_ARRAY_ENTRIES = 100_000_000

#: Largest number of passes of a loop that an argument controls (steps of an algorithm,
#: random cases of a check): beyond it a call would not finish in any reasonable time.
MAX_ITERATIONS = 10_000_000

#: A probability that must be positive (the support condition) must exceed this, the
#: smallest normal float64 (about 2.2e-308): a subnormal probability has lost its relative
#: precision, and dividing by it overflows.
SUPPORT_TOLERANCE = float(np.finfo(np.float64).tiny)

#: Slack of the discounted row-sum condition γ·Σ_s' P(s, s') <= 1 (rounding in a sum of
#: probabilities): a row above 1 + this would make the discounted series diverge, and a row
#: counts as leaking (the process ends or is discounted from it) only below 1 - this.
ROW_SUM_TOLERANCE = 1e-12

_T = TypeVar("_T")


def check_size(count: int, name: str, limit: int, what: str) -> int:
    """Refuse a size above ``limit``, compared exactly as Python integers, before any work.

    ``count`` is the size the argument ``name`` asks for, an ``int`` (never a float, which
    would round or overflow); ``what`` says what is counted, e.g. ``"array entries"``. The
    message reads ``"batch_size must keep ... to at most 100000000 array entries; got
    1000000000000000000"``.

    Raises
    ------
    ValueError
        Naming ``name``, with the limit and the requested size, if ``count > limit``.
    """
    if not isinstance(count, numbers.Integral) or isinstance(count, bool):
        raise TypeError(f"a size must be counted with integers; got {count!r}")
    if int(count) > limit:
        raise ValueError(f"{name} must keep the call to at most {limit} {what}; got {int(count)}")
    return int(count)


def check_enumeration_size(count: int, name: str, what: str) -> None:
    """Refuse an exact enumeration of more than :data:`MAX_ENUMERATION` items before building it.

    ``count`` is an exact ``int`` (see :func:`capped_power` for counts like V**L);
    ``what`` describes it for the message, e.g. ``"2**30 = 1073741824 sequences"``.
    """
    if not isinstance(count, numbers.Integral) or isinstance(count, bool):
        raise TypeError(f"an enumeration must be counted with integers; got {count!r}")
    if int(count) > MAX_ENUMERATION:
        raise ValueError(
            f"{name} must keep the exact enumeration to at most {MAX_ENUMERATION} items; got {what}"
        )


def capped_power(base: int, exponent: int, cap: int = MAX_ENUMERATION) -> int:
    """``base ** exponent`` exactly if it is at most ``cap``, otherwise ``cap + 1``.

    The power is never formed when it is large (10**(10**18) would never finish), so a
    guard can compare it with the limit at once.
    """
    if base <= 1 or exponent == 0:
        return base**exponent if exponent else 1
    result = 1
    for _ in range(exponent):
        result *= base
        if result > cap:
            return cap + 1
    return result


def _leaves(result: Any):
    """The float arrays and floats inside a result (tuples, lists, dicts and dataclasses)."""
    if isinstance(result, np.ndarray):
        if result.dtype.kind in "fc":
            yield result
    elif isinstance(result, (float, np.floating)):
        yield np.asarray(result)
    elif isinstance(result, (tuple, list)):
        for item in result:
            yield from _leaves(item)
    elif isinstance(result, dict):
        for item in result.values():
            yield from _leaves(item)
    elif dataclasses.is_dataclass(result) and not isinstance(result, type):
        for field in dataclasses.fields(result):
            yield from _leaves(getattr(result, field.name))


def _all_finite(array: np.ndarray) -> bool:
    """Whether every entry of ``array`` is finite, in one reading pass for a large array.

    An inf or NaN makes the sum inf or NaN; only a sum that is not finite (which finite
    entries can also give, by overflow) needs the entry by entry check, which writes a mask
    as large as the array. A small array takes that check at once: cheaper than the sum's
    floating-point state.
    """
    if array.size >= 1 << 14:
        with np.errstate(over="ignore", invalid="ignore"):
            if np.isfinite(np.sum(array)):
                return True
    return bool(np.isfinite(array).all())


def check_finite_result(result: _T, quantity: str, *, log_of_zero: bool = False) -> _T:
    """Return ``result`` after checking that every float in it is finite.

    ``log_of_zero=True`` admits -inf, for a log-probability whose exact value is log 0 (an
    impossible event); +inf and NaN are still refused.

    Raises
    ------
    ValueError
        Starting ``"overflow in <quantity>"``, if a float of the result is inf or NaN.
    """
    for leaf in _leaves(result):
        if log_of_zero:
            leaf = np.where(leaf == -np.inf, 0.0, leaf)
        if not _all_finite(leaf):
            raise ValueError(
                f"overflow in {quantity}: the inputs are finite but the result is not "
                "(it exceeds the float64 range, about 1.8e308); rescale the inputs"
            )
    return result


def finite_output(
    quantity: str | None = None,
    *,
    check_result: bool = True,
    log_of_zero: bool = False,
    inputs: tuple[str, ...] = (),
) -> Callable[[Callable[..., _T]], Callable[..., _T]]:
    """Decorate a public function so that it returns finite floats or raises ``ValueError``.

    Inside the call, NumPy's overflow, invalid-operation and division-by-zero conditions
    raise (a function that expects one, such as log 0 masked out later, says so with its
    own ``numpy.errstate``); a Python float overflow raises too. Either becomes a
    ``ValueError`` starting ``"overflow in <quantity>"``, and so does a returned float that is
    inf or NaN; a linear system that is singular in floating point (``LinAlgError``) becomes
    one too. ``quantity`` names what is computed, e.g. ``"the Bellman solve"``; by default the
    function's name. ``check_result=False`` is for the functions that hand their input's
    arrays back (a training batch validated or packed), which may hold anything, NaN
    included, at positions their masks exclude; the floating-point guard still applies.
    ``log_of_zero=True`` is for a log-probability that is exactly -inf for an impossible
    event (see :func:`check_finite_result`).

    ``inputs`` names array arguments that the function converts with
    ``check_finite=False`` (see :func:`rlfound._validation.arrays.as_float_array`): an inf
    or NaN in them that the function reads reaches the result, so the guard checks them
    only when the result is not finite or a floating-point error was raised, and then
    raises the error their own check would have raised, naming the first of them that is
    not finite and its first bad entry; only if all are finite is it an overflow. This
    saves a pass over every such array on every call, and an entry that is never read (a
    next value at a terminal step) may hold anything.
    """

    def decorate(function: Callable[..., _T]) -> Callable[..., _T]:
        what = quantity or function.__name__
        signature = inspect.signature(function) if inputs else None

        def check_inputs(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            if signature is None:
                return
            from rlfound._validation.arrays import as_float_array  # arrays imports limits

            arguments = signature.bind(*args, **kwargs).arguments
            for name in inputs:
                try:
                    array = as_float_array(arguments[name], name, check_finite=False)
                except ValueError:
                    continue  # not an array of numbers: the function's own error stands
                as_float_array(array, name)  # raises, naming the first inf or NaN

        @functools.wraps(function)
        def guarded(*args: Any, **kwargs: Any) -> _T:
            try:
                with np.errstate(over="raise", invalid="raise", divide="raise"):
                    result = function(*args, **kwargs)
            except (FloatingPointError, OverflowError) as error:
                check_inputs(args, kwargs)
                raise ValueError(
                    f"overflow in {what}: the inputs are finite but an intermediate "
                    f"result is not ({error}); rescale the inputs"
                ) from error
            except ValueError:
                # A check inside the function (of an array computed from the inputs) may be
                # the first to meet an inf or NaN: the input it came from is named instead.
                check_inputs(args, kwargs)
                raise
            except np.linalg.LinAlgError as error:
                raise ValueError(
                    f"overflow in {what}: the inputs are finite but its linear system is "
                    f"singular in floating point ({error})"
                ) from error
            if not check_result:
                return result
            try:
                return check_finite_result(result, what, log_of_zero=log_of_zero)
            except ValueError:
                check_inputs(args, kwargs)
                raise

        return guarded

    return decorate
