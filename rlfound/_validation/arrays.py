"""Checks of arrays, scalars, masks, indices and random generators.

Each check either returns a clean value (a float64 array, a Python float or int, a bool mask,
an int64 index array, a ``numpy.random.Generator``) or raises ``ValueError`` with a message
that begins with the argument's name, states what was expected and shows what was given, for
example ``"gamma must be in [0, 1]; got 1.5"``.
"""

from __future__ import annotations

import numbers
import operator
from typing import Any

import numpy as np
from scipy import special

from rlfound._validation.limits import SUPPORT_TOLERANCE
from rlfound._validation.messages import (
    at_index,
    first_index,
    raise_first,
    show_value,
)

__all__ = [
    "as_array",
    "as_float_array",
    "as_float_array_like",
    "check_axis",
    "check_bool",
    "check_callable",
    "check_categories",
    "check_choice",
    "check_clip_ranges",
    "check_distribution",
    "check_episode_flags",
    "check_indices",
    "check_last_axis",
    "check_leading_shape",
    "check_logits",
    "check_logprob_pair",
    "check_logprobs",
    "check_mask",
    "check_nonnegative_int",
    "check_nonnegative_real",
    "check_optional_mask",
    "check_positive_entries",
    "check_positive_int",
    "check_positive_real",
    "check_real",
    "check_rng",
    "check_sequence_logprobs",
    "check_shape",
    "check_support",
    "check_unit_interval",
    "check_values_for_rewards",
    "check_weights",
    "float_or_array",
]


def as_array(x: Any, name: str) -> np.ndarray:
    """``np.asarray`` that names the argument when the input is ragged or not array-like."""
    try:
        return np.asarray(x)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"{name} must be a rectangular array of numbers; got {x!r}"
        ) from error


def as_float_array(
    x: Any,
    name: str,
    *,
    min_ndim: int = 0,
    ndim: int | None = None,
    check_finite: bool = True,
) -> np.ndarray:
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
    check_finite : bool, optional
        False leaves out the check for inf and NaN, a pass over the whole array, for a
        function whose guard checks its result instead and names the input at fault (see
        ``finite_output(inputs=...)``).

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
    array = as_array(x, name)
    if array.dtype.kind not in "iuf":
        raise ValueError(
            f"{name} must hold real numbers; got dtype {array.dtype}"
        )
    if ndim is not None and array.ndim != ndim:
        raise ValueError(
            f"{name} must be a {ndim}-D array; got shape {array.shape}"
        )
    if array.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimension{'' if min_ndim == 1 else 's'}; "
            f"got shape {array.shape}"
        )
    array = array.astype(np.float64, copy=False)
    if check_finite:
        raise_first(
            ~np.isfinite(array), f"{name} must be finite", values=array
        )
    return array


def as_float_array_like(
    x: Any,
    name: str,
    shape: tuple[int, ...],
    like: str,
    *,
    check_finite: bool = True,
) -> np.ndarray:
    """Convert ``x`` to a finite float64 array that has exactly ``shape``, the shape of ``like``.

    No broadcasting: a per-step array that silently broadcast against the rewards would
    pair the wrong numbers. ``like`` is the name of the argument whose shape is required.

    Raises
    ------
    ValueError
        As :func:`as_float_array` (``check_finite`` too), and if the shape differs from
        ``shape``.
    """
    array = as_float_array(x, name, check_finite=check_finite)
    if array.shape != shape:
        raise ValueError(
            f"{name} must have the shape of {like}, {shape}; got shape {array.shape}"
        )
    return array


def _as_real_scalar(x: Any, name: str) -> float:
    """A Python float from a real scalar (Python or NumPy number, or a 0-d array)."""
    if isinstance(x, (bool, np.bool_)):
        raise ValueError(f"{name} must be a real number; got {x!r}")
    if isinstance(x, np.ndarray):
        if x.ndim != 0 or x.dtype.kind not in "iuf":
            raise ValueError(
                f"{name} must be a real scalar; got an array of shape {x.shape}"
            )
        x = x.item()
    if not isinstance(x, numbers.Real):
        raise ValueError(f"{name} must be a real number; got {x!r}")
    return float(x)


def check_real(x: Any, name: str) -> float:
    """Return ``x`` (a Python or NumPy number, or a 0-d array) as a finite Python float.

    Examples
    --------
    >>> check_real(np.float32(0.5), "reward_value")
    0.5
    """
    value = _as_real_scalar(x, name)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite; got {show_value(value)}")
    return value


def float_or_array(result: Any) -> float | np.ndarray:
    """A Python float for a 0-d result, a float64 array otherwise (the library's return rule).

    Examples
    --------
    >>> float_or_array(np.array(2.0)), float_or_array(np.array([1, 2]))
    (2.0, array([1., 2.]))
    """
    result = np.asarray(result, dtype=np.float64)
    return float(result) if result.ndim == 0 else result


def check_logprob_pair(
    logprobs: Any, other: Any, mask: Any, other_name: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two arrays of token log-probabilities of one shape (..., L), and a bool mask of it.

    ``logprobs`` are the current policy's; ``other`` (named ``other_name``) the behavior's
    or the reference's. A ``mask`` of None selects every token.

    Examples
    --------
    >>> logprobs, ref, mask = check_logprob_pair([-0.5], [-1.0], None, "ref_logprobs")
    >>> mask
    array([ True])
    """
    logprobs = check_logprobs(logprobs, "logprobs")
    other = check_logprobs(other, other_name)
    check_shape(other, other_name, logprobs.shape, "the shape of logprobs")
    mask = check_optional_mask(mask, "mask", logprobs.shape)
    return logprobs, other, mask


def check_unit_interval(x: Any, name: str) -> float:
    """Return ``x`` as a float after checking that it lies in [0, 1] (for gamma and lam).

    Raises
    ------
    ValueError
        If ``x`` is not a real scalar or lies outside [0, 1] (NaN included).
    """
    value = _as_real_scalar(x, name)
    if not 0.0 <= value <= 1.0:
        raise ValueError(
            f"{name} must be in [0, 1]; got {show_value(value)}"
        )
    return value


def check_positive_real(x: Any, name: str) -> float:
    """Return ``x`` as a float after checking that it is finite and > 0."""
    value = _as_real_scalar(x, name)
    if not (np.isfinite(value) and value > 0.0):
        raise ValueError(
            f"{name} must be a positive finite number; got {show_value(value)}"
        )
    return value


def check_clip_ranges(
    clip_low: Any, clip_high: Any, dual_clip: Any
) -> tuple[float, float, float | None]:
    """PPO's clip ranges: ε_low in [0, 1), ε_high >= 0 (None: ε_low), a dual clip > 1 or None.

    Examples
    --------
    >>> check_clip_ranges(0.2, None, 3.0)
    (0.2, 0.2, 3.0)
    """
    clip_low = check_nonnegative_real(clip_low, "clip_low")
    if clip_low >= 1.0:
        raise ValueError(
            f"clip_low must be in [0, 1) so that 1 - clip_low > 0; got {clip_low!r}"
        )
    clip_high = (
        clip_low
        if clip_high is None
        else check_nonnegative_real(clip_high, "clip_high")
    )
    if dual_clip is not None:
        dual_clip = check_positive_real(dual_clip, "dual_clip")
        if dual_clip <= 1.0:
            raise ValueError(
                f"dual_clip must be > 1 (a bound on ρ for negative advantages); got {dual_clip!r}"
            )
    return clip_low, clip_high, dual_clip


def check_nonnegative_real(x: Any, name: str) -> float:
    """Return ``x`` as a float after checking that it is finite and >= 0."""
    value = _as_real_scalar(x, name)
    if not (np.isfinite(value) and value >= 0.0):
        raise ValueError(
            f"{name} must be a non-negative finite number; got {show_value(value)}"
        )
    return value


_INT64_MAX = int(np.iinfo(np.int64).max)


def _as_int(x: Any, name: str, what: str) -> int:
    # bool is an int subclass in Python, but True is never a sensible count.
    if isinstance(x, (bool, np.bool_)) or not isinstance(
        x, numbers.Integral
    ):
        raise ValueError(f"{name} must be {what}; got {x!r}")
    # Integers are stored as int64 (versions, ids, seeds): a larger one would not convert.
    if abs(int(x)) > _INT64_MAX:
        raise ValueError(
            f"{name} must be {what} that fits in 64 bits; got {int(x)}"
        )
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
        raise ValueError(
            f"{name} must be a non-negative integer; got {value}"
        )
    return value


def check_distribution(
    p: Any, name: str, *, atol: float = 1e-8
) -> np.ndarray:
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
    raise_first(
        negative,
        f"{name} must be non-negative probabilities",
        values=probabilities,
    )
    totals = probabilities.sum(axis=-1)
    off = np.abs(totals - 1.0) > atol
    if off.any():
        total = show_value(totals[first_index(off)])
        raise_first(
            off,
            f"{name} must sum to 1 along the last axis",
            got=f"sum {total}",
        )
    return probabilities


def check_indices(
    indices: Any,
    name: str,
    size: int,
    *,
    ndim: int | None = None,
    min_ndim: int = 0,
    minimum: int = 0,
    kind: str = "action",
) -> np.ndarray:
    """Return ``indices`` as int64 after checking they lie in ``[minimum, size)``.

    Integer dtypes are accepted, and so are floats whose values are whole numbers
    (``2.0``); booleans and fractional values are rejected. ``minimum=-1`` admits the
    padding index -1 used for steps that carry no action (after an episode ended, or on
    tokens the policy did not generate). ``kind`` names what is indexed in the messages
    ("state", "token", ...), since the same check serves every kind of index.

    Raises
    ------
    ValueError
        If an index is not an integer, lies outside ``[minimum, size)``, or the array does
        not have ``ndim`` dimensions (when ``ndim`` is given).
    """
    array = as_array(indices, name)
    if ndim is not None and array.ndim != ndim:
        what = (
            f"a scalar {kind} index"
            if ndim == 0
            else f"a {ndim}-D array of {kind} indices"
        )
        raise ValueError(f"{name} must be {what}; got shape {array.shape}")
    if array.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimension{'' if min_ndim == 1 else 's'} "
            f"of {kind} indices; got shape {array.shape}"
        )
    integers = (
        f"an integer {kind} index"
        if array.ndim == 0
        else f"integer {kind} indices"
    )
    if array.dtype.kind == "f":
        fractional = ~np.isfinite(array) | (array != np.round(array))
        raise_first(fractional, f"{name} must be {integers}", values=array)
    elif array.dtype.kind not in "iu":
        raise ValueError(
            f"{name} must be {integers}; got dtype {array.dtype}"
        )
    outside = (array < minimum) | (array >= size)
    raise_first(
        outside, f"{name} must be in [{minimum}, {size})", values=array
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
    array = as_array(mask, name)
    if array.shape != shape:
        raise ValueError(
            f"{name} must have shape {shape}; got shape {array.shape}"
        )
    if array.dtype == np.bool_:
        return array
    if array.dtype.kind not in "iuf":
        raise ValueError(
            f"{name} must be a boolean (or 0/1) mask; got dtype {array.dtype}"
        )
    not_binary = (array != 0) & (array != 1)
    raise_first(
        not_binary, f"{name} must be a boolean (or 0/1) mask", values=array
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
        index = first_index(both)
        raise ValueError(
            "truncated must be False where terminated is True (a step either ends in a true "
            f"terminal state or is cut by a time limit); got both True{at_index(index)}"
        )
    return terminated, truncated


def check_values_for_rewards(
    rewards: Any, values: Any
) -> tuple[np.ndarray, np.ndarray]:
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


def check_shape(
    array: np.ndarray, name: str, shape: tuple[int, ...], what: str
) -> np.ndarray:
    """Return ``array`` after checking that it has exactly ``shape`` (no broadcasting).

    ``what`` says why that shape, e.g. ``"one entry per action"``; the message reads
    ``"rewards must have one entry per action, shape (3,); got shape (2,)"``.
    """
    if array.shape != tuple(shape):
        raise ValueError(
            f"{name} must have {what}, shape {tuple(shape)}; got shape {array.shape}"
        )
    return array


def check_axis(axis: int, shape: tuple[int, ...]) -> int:
    """``axis`` as a non-negative index of an axis of an array of ``shape``.

    Raises
    ------
    ValueError
        If ``axis`` is not an integer in [-ndim, ndim).
    """
    ndim = len(shape)
    try:
        index = operator.index(axis)
    except TypeError:
        index = None
    if index is None or isinstance(axis, bool) or not -ndim <= index < ndim:
        raise ValueError(
            f"axis must be an integer in [-{ndim}, {ndim}) for arrays of shape {shape}; "
            f"got {axis!r}"
        )
    return index % ndim


def check_last_axis(
    array: np.ndarray, name: str, minimum: int, what: str
) -> np.ndarray:
    """Return ``array`` after checking that its last axis has at least ``minimum`` entries.

    ``what`` names the entries, e.g. ``"members per group on the last axis"``.
    """
    if array.ndim == 0 or array.shape[-1] < minimum:
        raise ValueError(
            f"{name} must have at least {minimum} {what}; got shape {array.shape}"
        )
    return array


def check_bool(x: Any, name: str) -> bool:
    """Return ``x`` as a bool after checking that it is True or False (not 0, 1 or "yes")."""
    if not isinstance(x, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False; got {x!r}")
    return bool(x)


def check_choice(x: Any, name: str, choices: tuple[str, ...]) -> str:
    """Return ``x`` after checking that it is one of the strings ``choices``."""
    if not isinstance(x, str) or x not in choices:
        raise ValueError(f"{name} must be one of {choices}; got {x!r}")
    return x


def check_callable(f: Any, name: str) -> Any:
    """Return ``f`` after checking that it can be called."""
    if not callable(f):
        raise ValueError(f"{name} must be callable; got {f!r}")
    return f


def check_rng(rng: Any) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from ``rng``: a Generator, an int seed, or None.

    This is the convention of the Scientific Python SPEC 7: a Generator is used as it is (so
    a caller can thread one generator through several functions), a non-negative int seeds a
    new one (reproducible), and None seeds a new one from the operating system (not
    reproducible). The legacy ``RandomState`` and the global ``np.random`` state are refused,
    so no function of the library ever draws from hidden global state.

    Raises
    ------
    ValueError
        If ``rng`` is not a Generator, a non-negative int or None.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    seed = _as_int(
        rng,
        "rng",
        "a numpy.random.Generator, a non-negative integer seed or None",
    )
    if seed < 0:
        raise ValueError(
            f"rng must be a numpy.random.Generator, a non-negative integer seed or None; got {seed}"
        )
    return np.random.default_rng(seed)


def check_logits(
    logits: Any,
    *,
    axis: int = -1,
    ndim: int | None = None,
    min_ndim: int = 1,
) -> np.ndarray:
    """Finite float64 logits with at least one category along ``axis``.

    Raises
    ------
    ValueError
        Naming ``logits``, if they are not finite and real, do not have ``ndim`` (or at
        least ``min_ndim``) dimensions or have no category along ``axis``; naming ``axis``
        if it is not an integer axis of ``logits``.
    """
    logits = as_float_array(logits, "logits", min_ndim=min_ndim, ndim=ndim)
    axis = _as_int(axis, "axis", "an integer")
    if not -logits.ndim <= axis < logits.ndim:
        raise ValueError(
            f"axis must be in [-{logits.ndim}, {logits.ndim}) for logits of shape "
            f"{logits.shape}; got {axis}"
        )
    if logits.shape[axis] == 0:
        raise ValueError(
            f"logits must have at least one category along axis {axis}; got shape {logits.shape}"
        )
    return logits


def check_logprobs(
    logprobs: Any, name: str, *, ndim: int | None = None
) -> np.ndarray:
    """Finite log-probabilities, at least 1-D, never above 0 (a probability is at most 1)."""
    logprobs = as_float_array(logprobs, name, min_ndim=1, ndim=ndim)
    positive = logprobs > 0.0
    raise_first(
        positive, f"{name} must be log-probabilities (<= 0)", values=logprobs
    )
    return logprobs


def check_optional_mask(
    mask: Any, name: str, shape: tuple[int, ...]
) -> np.ndarray:
    """A bool (or 0/1) mask of exactly ``shape``; None means every position counts."""
    if mask is None:
        return np.ones(shape, dtype=bool)
    return check_mask(mask, name, shape)


def check_categories(
    indices: Any, name: str, logits: np.ndarray, *, kind: str = "action"
) -> np.ndarray:
    """Indices into the last axis of ``logits``: one per distribution, or any shape for one.

    ``logits`` of shape (..., K) hold one distribution per index, so ``indices`` must have the
    leading shape ``logits.shape[:-1]``; a single distribution of shape (K,) may be indexed by
    an array of any shape (every index is drawn from the same distribution).
    """
    indices = check_indices(indices, name, logits.shape[-1], kind=kind)
    if logits.ndim > 1 and indices.shape != logits.shape[:-1]:
        raise ValueError(
            f"{name} must have the leading shape of logits, {logits.shape[:-1]}, one "
            f"{kind} per distribution; got shape {indices.shape}"
        )
    return indices


def check_sequence_logprobs(logprobs: Any, name: str) -> np.ndarray:
    """Log-probabilities of N distinct outcomes of one distribution: 1-D, total mass <= 1.

    A total above 1 means an outcome was listed twice or the numbers do not come from one
    distribution, and sums over them would not be probabilities.
    """
    logprobs = check_logprobs(logprobs, name, ndim=1)
    total = (
        float(np.exp(special.logsumexp(logprobs))) if logprobs.size else 0.0
    )
    if total > 1.0 + 1e-9:
        raise ValueError(
            f"{name} must describe distinct outcomes of one distribution (probabilities "
            f"summing to at most 1); got total {total!r}"
        )
    return logprobs


def check_leading_shape(
    array: np.ndarray, name: str, leading: tuple[int, ...], like: str
) -> np.ndarray:
    """Return ``array`` after checking it is ``leading`` (the batch shape of ``like``) + (L,)."""
    if array.ndim != len(leading) + 1 or array.shape[:-1] != tuple(leading):
        raise ValueError(
            f"{name} must have shape {tuple(leading)} + (L,), the leading (batch) shape of "
            f"{like} and one more axis; got shape {array.shape}"
        )
    return array


def check_support(
    probabilities: np.ndarray,
    name: str,
    what: str,
    needed: np.ndarray | None = None,
) -> np.ndarray:
    """The support condition: ``probabilities`` (already valid) must be positive where needed.

    Positive means above :data:`~rlfound._validation.limits.SUPPORT_TOLERANCE`, the smallest
    normal float64 (about 2.2e-308): a subnormal probability such as 5e-324 has lost its
    precision and a ratio over it overflows, so it counts as 0. ``needed`` marks the entries
    that must be positive (default: all of them), and ``what`` says which they are; the
    message gives the value and index of the first missing one.
    """
    missing = ~(probabilities > SUPPORT_TOLERANCE)
    if needed is not None:
        missing &= needed
    if missing.any():
        index = first_index(missing)
        value = probabilities[index]
        shown = (
            "0"
            if value == 0.0
            else f"{show_value(value)}, below the support tolerance"
        )
        raise ValueError(
            f"{name} must be positive {what} (the support condition); got {shown}{at_index(index)}"
        )
    return probabilities


def check_weights(weights: Any, name: str) -> np.ndarray:
    """Finite, non-negative 1-D weights that are not all zero."""
    weights = as_float_array(weights, name, ndim=1)
    negative = weights < 0.0
    raise_first(negative, f"{name} must be non-negative", values=weights)
    if not (weights > 0.0).any():
        raise ValueError(
            f"{name} must not all be zero; got shape {weights.shape}"
        )
    return weights


def check_positive_entries(
    array: np.ndarray, name: str, what: str = ""
) -> np.ndarray:
    """Return ``array`` (already finite) after checking that every entry is > 0.

    ``what`` may say why, e.g. ``" (a ratio of two probabilities)"``; the message reads
    ``"ratio must be positive (a ratio of two probabilities); got 0.0 at index (1,)"``.
    """
    not_positive = ~(array > 0.0)
    raise_first(not_positive, f"{name} must be positive{what}", values=array)
    return array
