"""The finite-output guard: a public function returns finite floats or raises ``ValueError``.

Its own file, apart from the size limits and tolerances of :mod:`rlfound._validation.limits`,
because it converts the inputs it names with :func:`rlfound._validation.arrays.as_float_array`,
and the array checks read those tolerances: limits <- arrays <- guard, no cycle.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import inspect
import math
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from scipy.linalg import blas

from rlfound._validation.arrays import as_float_array

__all__ = ["FiniteBlocks", "check_finite_result", "finite_output"]

_T = TypeVar("_T")


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

    An inf or NaN makes the sum of squares inf or NaN; only a sum that is not finite (which
    finite entries can also give, by overflow, from about 1e154 on) needs the entry by entry
    check, which writes a mask as large as the array. The sum of squares of a contiguous
    float64 array is BLAS ``ddot`` of the array with itself: one vectorized read, about a
    third of the time of ``np.sum``'s pairwise summation. A small array takes the entry by
    entry check at once: cheaper than either call.
    """
    if array.size >= 1 << 14:
        if array.dtype == np.float64 and array.flags.c_contiguous:
            flat = array.reshape(-1)
            if math.isfinite(blas.ddot(flat, flat)):
                return True
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                if np.isfinite(np.sum(array)):
                    return True
    return bool(np.isfinite(array).all())


def check_finite_result(
    result: _T, quantity: str, *, log_of_zero: bool = False
) -> _T:
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
            raise ValueError(_overflow_in_result(quantity))
    return result


def _overflow_in_result(quantity: str) -> str:
    return (
        f"overflow in {quantity}: the inputs are finite but the result is not "
        "(it exceeds the float64 range, about 1.8e308); rescale the inputs"
    )


@dataclasses.dataclass
class _Call:
    """A guarded call that is running: what it computes, and a result already checked."""

    quantity: str
    checked: Any = None


_call: contextvars.ContextVar[_Call | None] = contextvars.ContextVar(
    "rlfound_guarded_call", default=None
)


class FiniteBlocks:
    """The result check of a guarded call, done a block at a time as the result is built.

    The fast scan writes its result a block at a time. Each finished block is read once
    by :meth:`add` while it is still in cache, instead of the whole result being read
    again from memory after the call: as in ``_all_finite``, an inf or NaN makes the sum
    of squares (BLAS ``ddot``) inf or NaN, and only a sum that is not finite needs the
    entry by entry check. :meth:`check` raises the error :func:`check_finite_result`
    would, naming the guarded call's quantity, and otherwise tells the guard that this
    array is checked, so that it is not read again when the call returns it.
    """

    def __init__(self, array: np.ndarray) -> None:
        """The check of the C-contiguous ``array``; outside a guarded call it does nothing."""
        self.array, self.call, self.squares = array, _call.get(), 0.0
        self.flat = array.reshape(-1)

    def add(self, start: int, end: int) -> None:
        """Count the finished flat entries ``start`` to ``end - 1`` of the array."""
        if self.call is not None:
            block = self.flat[start:end]
            self.squares += blas.ddot(block, block)

    def check(self) -> None:
        """Check the array once every block is added.

        Raises
        ------
        ValueError
            Starting ``"overflow in <quantity>"``, if an entry is inf or NaN.
        """
        if self.call is None:
            return
        if (
            not math.isfinite(self.squares)
            and not np.isfinite(self.array).all()
        ):
            raise ValueError(_overflow_in_result(self.call.quantity))
        self.call.checked = self.array


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

        def check_inputs(
            args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> None:
            if signature is None:
                return
            arguments = signature.bind(*args, **kwargs).arguments
            for name in inputs:
                try:
                    array = as_float_array(
                        arguments[name], name, check_finite=False
                    )
                except ValueError:
                    continue  # not an array of numbers: the function's own error stands
                as_float_array(
                    array, name
                )  # raises, naming the first inf or NaN

        @functools.wraps(function)
        def guarded(*args: Any, **kwargs: Any) -> _T:
            call = _Call(what)
            token = _call.set(call)
            try:
                with np.errstate(
                    over="raise", invalid="raise", divide="raise"
                ):
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
            finally:
                _call.reset(token)
            if not check_result or result is call.checked:
                return result  # not checked, or checked as it was built
            try:
                return check_finite_result(
                    result, what, log_of_zero=log_of_zero
                )
            except ValueError:
                check_inputs(args, kwargs)
                raise

        return guarded

    return decorate
