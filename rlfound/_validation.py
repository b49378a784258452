"""Input checks shared by every public function of :mod:`rlfound`.

Each check either returns a clean value (a float64 array, a Python float or int) or raises
``ValueError`` with a message that begins with the argument's name, states what was expected
and shows what was given, for example ``"gamma must be in [0, 1]; got 1.5"``. Keeping the
checks here lets the public functions open with one or two calls and then read like the
mathematics they implement.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = [
    "as_float_array",
    "as_float_array_like",
    "check_actions",
    "check_distribution",
    "check_episode_flags",
    "check_mask",
    "check_nonnegative_int",
    "check_nonnegative_real",
    "check_positive_int",
    "check_positive_real",
    "check_unit_interval",
    "check_values_for_rewards",
]


def _first_index(mask: np.ndarray) -> tuple[int, ...]:
    """Index (as a tuple of ints) of the first True entry of ``mask``, in C order."""
    return tuple(int(i) for i in np.argwhere(mask)[0])


def _at(index: tuple[int, ...]) -> str:
    """' at index (i, j)' for an array entry; nothing for a scalar, which has no index."""
    return f" at index {index}" if index else ""


def _show(value: Any) -> str:
    """Short, unambiguous text for a scalar in an error message."""
    if isinstance(value, (bool, np.bool_)):
        return repr(bool(value))
    if isinstance(value, numbers.Integral):
        return repr(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    return repr(value)


def _as_array(x: Any, name: str) -> np.ndarray:
    """``np.asarray`` that names the argument when the input is ragged or not array-like."""
    try:
        return np.asarray(x)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be a rectangular array of numbers; got {x!r}") from error


def as_float_array(x: Any, name: str, *, min_ndim: int = 0, ndim: int | None = None) -> np.ndarray:
    """Convert ``x`` to a finite float64 array of the required dimension.

    Parameters
    ----------
    x : array_like
        Real numbers (integer or floating dtype; booleans, complex numbers, strings and
        objects are rejected).
    name : str
        The argument's name, used to start every error message.
    min_ndim : int, optional
        Smallest number of dimensions accepted.
    ndim : int or None, optional
        Exact number of dimensions required (overrides ``min_ndim``).

    Returns
    -------
    numpy.ndarray
        A float64 array (a copy only when a conversion was needed).

    Raises
    ------
    ValueError
        If ``x`` is not a real numeric array, has the wrong number of dimensions, or holds a
        NaN or an infinity (the message names the first bad index).
    """
    array = _as_array(x, name)
    if array.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold real numbers; got dtype {array.dtype}")
    if ndim is not None and array.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array; got shape {array.shape}")
    if array.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimension{'' if min_ndim == 1 else 's'}; "
            f"got shape {array.shape}"
        )
    array = array.astype(np.float64, copy=False)
    not_finite = ~np.isfinite(array)
    if not_finite.any():
        index = _first_index(not_finite)
        raise ValueError(f"{name} must be finite; got {_show(array[index])}{_at(index)}")
    return array


def as_float_array_like(x: Any, name: str, shape: tuple[int, ...], like: str) -> np.ndarray:
    """Convert ``x`` to a finite float64 array that has exactly ``shape``, the shape of ``like``.

    No broadcasting: a per-step array that silently broadcast against the rewards would
    pair the wrong numbers. ``like`` is the name of the argument whose shape is required.

    Raises
    ------
    ValueError
        As :func:`as_float_array`, and if the shape differs from ``shape``.
    """
    array = as_float_array(x, name)
    if array.shape != shape:
        raise ValueError(f"{name} must have the shape of {like}, {shape}; got shape {array.shape}")
    return array


def _as_real_scalar(x: Any, name: str) -> float:
    """A Python float from a real scalar (Python or NumPy number, or a 0-d array)."""
    if isinstance(x, (bool, np.bool_)):
        raise ValueError(f"{name} must be a real number; got {x!r}")
    if isinstance(x, np.ndarray):
        if x.ndim != 0 or x.dtype.kind not in "iuf":
            raise ValueError(f"{name} must be a real scalar; got an array of shape {x.shape}")
        x = x.item()
    if not isinstance(x, numbers.Real):
        raise ValueError(f"{name} must be a real number; got {x!r}")
    return float(x)


def check_unit_interval(x: Any, name: str) -> float:
    """Return ``x`` as a float after checking that it lies in [0, 1] (for gamma and lam).

    Raises
    ------
    ValueError
        If ``x`` is not a real scalar or lies outside [0, 1] (NaN included).
    """
    value = _as_real_scalar(x, name)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1]; got {_show(value)}")
    return value


def check_positive_real(x: Any, name: str) -> float:
    """Return ``x`` as a float after checking that it is finite and > 0."""
    value = _as_real_scalar(x, name)
    if not (np.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be a positive finite number; got {_show(value)}")
    return value


def check_nonnegative_real(x: Any, name: str) -> float:
    """Return ``x`` as a float after checking that it is finite and >= 0."""
    value = _as_real_scalar(x, name)
    if not (np.isfinite(value) and value >= 0.0):
        raise ValueError(f"{name} must be a non-negative finite number; got {_show(value)}")
    return value


def _as_int(x: Any, name: str, what: str) -> int:
    # bool is an int subclass in Python, but True is never a sensible count.
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise ValueError(f"{name} must be {what}; got {x!r}")
    return int(x)


def check_positive_int(x: Any, name: str) -> int:
    """Return ``x`` as an int after checking that it is an integer >= 1.

    Floats such as ``2.0`` are rejected rather than truncated.
    """
    value = _as_int(x, name, "a positive integer")
    if value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value}")
    return value


def check_nonnegative_int(x: Any, name: str) -> int:
    """Return ``x`` as an int after checking that it is an integer >= 0 (e.g. a seed)."""
    value = _as_int(x, name, "a non-negative integer")
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer; got {value}")
    return value


def check_distribution(p: Any, name: str, *, atol: float = 1e-8) -> np.ndarray:
    """Return ``p`` as float64 after checking that its last axis holds probability vectors.

    Every entry must be non-negative and every slice along the last axis must sum to 1
    within ``atol``. A 2-D input is therefore a row-stochastic matrix.

    Raises
    ------
    ValueError
        If ``p`` is not a finite real array with at least one dimension, has a negative
        entry, or has a slice whose sum differs from 1 by more than ``atol``.
    """
    probabilities = as_float_array(p, name, min_ndim=1)
    negative = probabilities < 0.0
    if negative.any():
        index = _first_index(negative)
        raise ValueError(
            f"{name} must be non-negative probabilities; "
            f"got {_show(probabilities[index])}{_at(index)}"
        )
    totals = probabilities.sum(axis=-1)
    off = np.abs(totals - 1.0) > atol
    if off.any():
        index = _first_index(off)
        raise ValueError(
            f"{name} must sum to 1 along the last axis; got sum {_show(totals[index])}{_at(index)}"
        )
    return probabilities


def check_actions(
    actions: Any,
    name: str,
    num_actions: int,
    *,
    ndim: int | None = None,
    minimum: int = 0,
    kind: str = "action",
) -> np.ndarray:
    """Return ``actions`` as int64 indices after checking they lie in ``[minimum, num_actions)``.

    Integer dtypes are accepted, and so are floats whose values are whole numbers
    (``2.0``); booleans and fractional values are rejected. ``minimum=-1`` admits the
    padding index -1 used for steps that carry no action (after an episode ended, or on
    tokens the policy did not generate). ``kind`` names what is indexed in the messages
    ("state", "token", ...), since the same check serves every kind of index.

    Raises
    ------
    ValueError
        If an action is not an integer, lies outside ``[minimum, num_actions)``, or the array
        does not have ``ndim`` dimensions (when ``ndim`` is given).
    """
    array = _as_array(actions, name)
    if ndim is not None and array.ndim != ndim:
        what = f"a scalar {kind} index" if ndim == 0 else f"a {ndim}-D array of {kind} indices"
        raise ValueError(f"{name} must be {what}; got shape {array.shape}")
    integers = f"an integer {kind} index" if array.ndim == 0 else f"integer {kind} indices"
    if array.dtype.kind == "f":
        fractional = ~np.isfinite(array) | (array != np.round(array))
        if fractional.any():
            index = _first_index(fractional)
            raise ValueError(f"{name} must be {integers}; got {_show(array[index])}{_at(index)}")
    elif array.dtype.kind not in "iu":
        raise ValueError(f"{name} must be {integers}; got dtype {array.dtype}")
    outside = (array < minimum) | (array >= num_actions)
    if outside.any():
        index = _first_index(outside)
        raise ValueError(
            f"{name} must be in [{minimum}, {num_actions}); got {_show(array[index])}{_at(index)}"
        )
    return array.astype(np.int64)


def check_mask(mask: Any, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Return ``mask`` as a bool array of exactly ``shape``.

    Booleans are accepted, and so are integers or floats that are all 0 or 1 (a mask stored
    as numbers); anything else would silently turn into a weight, so it is rejected.

    Raises
    ------
    ValueError
        If the shape differs from ``shape`` (no broadcasting) or an entry is not 0/1.
    """
    array = _as_array(mask, name)
    if array.shape != shape:
        raise ValueError(f"{name} must have shape {shape}; got shape {array.shape}")
    if array.dtype == np.bool_:
        return array
    if array.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be a boolean (or 0/1) mask; got dtype {array.dtype}")
    not_binary = (array != 0) & (array != 1)
    if not_binary.any():
        index = _first_index(not_binary)
        raise ValueError(
            f"{name} must be a boolean (or 0/1) mask; got {_show(array[index])}{_at(index)}"
        )
    return array.astype(bool)


def check_episode_flags(
    terminated: Any, truncated: Any, shape: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Return the ``terminated`` and ``truncated`` masks after checking they are consistent.

    Both must have ``shape``. A step cannot both reach a true terminal state and be cut by a
    time limit: the two call for opposite bootstrapping rules, so the pair is ambiguous.

    Raises
    ------
    ValueError
        If a mask has the wrong shape or a non-0/1 entry (naming that mask), or a step has
        both flags set (naming ``truncated``).
    """
    terminated = check_mask(terminated, "terminated", shape)
    truncated = check_mask(truncated, "truncated", shape)
    both = terminated & truncated
    if both.any():
        index = _first_index(both)
        raise ValueError(
            "truncated must be False where terminated is True (a step either ends in a true "
            f"terminal state or is cut by a time limit); got both True{_at(index)}"
        )
    return terminated, truncated


def check_values_for_rewards(rewards: Any, values: Any) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(rewards, values)`` as float64 after checking that their shapes agree.

    ``rewards`` has shape ``(..., T)``; ``values`` must have shape ``(..., T + 1)`` with the
    same leading (batch) shape, its last entry being the bootstrap value V(s_T).

    Raises
    ------
    ValueError
        If either array is not finite and real with at least one dimension, or the shapes
        do not agree exactly (no broadcasting is attempted).
    """
    rewards = as_float_array(rewards, "rewards", min_ndim=1)
    values = as_float_array(values, "values", min_ndim=1)
    horizon = rewards.shape[-1]
    if values.shape[-1] != horizon + 1:
        raise ValueError(
            "values must have one more entry than rewards along the last axis "
            f"(T+1 = {horizon + 1}); got shape {values.shape}"
        )
    if values.shape[:-1] != rewards.shape[:-1]:
        raise ValueError(
            f"values must have the same leading (batch) shape as rewards, "
            f"{rewards.shape[:-1]}; got shape {values.shape}"
        )
    return rewards, values
