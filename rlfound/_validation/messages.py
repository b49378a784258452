"""The parts of an error message that point at an entry: the first bad index and its value.

Every check that refuses an array names the first offending entry, in C order, so that the
reader can find it: ``"loss must be finite where mask is True; got nan at index (1, 3)"``.
:func:`raise_first` is the whole raise block of such a check; :func:`first_index`,
:func:`at_index` and :func:`show_value` are its parts, for a message that says more.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["at_index", "first_index", "raise_first", "show_value"]


def first_index(bad: ArrayLike) -> tuple[int, ...]:
    """The index of the first True entry of ``bad`` in C order, as a tuple of ints.

    A 0-d ``bad`` (a scalar has no index) gives ``()``. ``bad`` must have a True entry.

    Examples
    --------
    >>> first_index([[False, False], [False, True]])
    (1, 1)
    >>> first_index(True)
    ()
    """
    bad = np.asarray(bad)
    if bad.ndim == 0:
        return ()
    return tuple(int(i) for i in np.argwhere(bad)[0])


def at_index(index: tuple[int, ...]) -> str:
    """``" at index (i, j)"`` for an array entry; nothing for a scalar, which has no index.

    Examples
    --------
    >>> at_index((2,)), at_index(())
    (' at index (2,)', '')
    """
    return f" at index {index}" if index else ""


def show_value(value: Any) -> str:
    """Short, unambiguous text for a scalar in an error message (a NumPy scalar as Python's).

    Examples
    --------
    >>> show_value(np.float64(0.5)), show_value(np.int64(3)), show_value(np.bool_(True))
    ('0.5', '3', 'True')
    """
    if isinstance(value, (bool, np.bool_)):
        return repr(bool(value))
    if isinstance(value, numbers.Integral):
        return repr(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    return repr(value)


def raise_first(
    bad: ArrayLike,
    message: str,
    *,
    values: ArrayLike | None = None,
    got: str | None = None,
) -> None:
    """Raise ``ValueError`` naming the first True entry of ``bad``, if there is one.

    The message is ``f"{message}; got {what}{at_index(index)}"``: ``what`` is ``got`` when
    given (``"none"``, ``"-1"``), else the entry of ``values`` at the first bad index.

    Raises
    ------
    ValueError
        If any entry of ``bad`` is True.

    Examples
    --------
    >>> loss = np.array([0.5, np.nan])
    >>> raise_first(~np.isfinite(loss), "loss must be finite", values=loss)
    Traceback (most recent call last):
    ...
    ValueError: loss must be finite; got nan at index (1,)
    >>> raise_first(np.isnan(loss[:1]), "loss must be finite", values=loss)  # nothing bad
    """
    if (got is None) == (values is None):
        raise TypeError("raise_first needs exactly one of values= and got=")
    bad = np.asarray(bad)
    if not bad.any():
        return
    index = first_index(bad)
    what = got if got is not None else show_value(np.asarray(values)[index])
    raise ValueError(f"{message}; got {what}{at_index(index)}")
