"""Old keyword names that still work for one release, with a warning that names the new one.

A public argument renamed to the library's one name for its meaning (``num_steps`` for a count
of steps, ``tolerance`` for a tolerance) keeps its old keyword for one release, so that code
written against the previous release runs and says what to change. Its own file: nothing else
in :mod:`rlfound._validation` is about the calling convention rather than the values.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["renamed_keywords"]

_F = TypeVar("_F", bound=Callable[..., Any])


def _removal_release(since: str) -> str:
    """The release that drops a name renamed after release ``since`` (X.Y.Z).

    The next minor release still accepts the old name; the one after it removes it.
    """
    major, minor, *_ = (int(part) for part in since.split("."))
    return f"{major}.{minor + 2}.0"


def renamed_keywords(*, since: str, **renames: str) -> Callable[[_F], _F]:
    """Accept the old keyword ``old`` of each ``old="new"`` pair for one more release.

    A call that passes ``old=value`` runs as if it passed ``new=value`` and warns with a
    ``DeprecationWarning`` naming both names and the release that removes ``old``; a call
    that passes both raises ``TypeError``, as Python does for an argument given twice.
    ``since`` is the last release whose public name was ``old`` (the version in
    ``pyproject.toml`` when the rename was made).

    The wrapper keeps the function's name, docstring and ``inspect.signature`` (which shows
    the new names only), so the API reference and the book show the new names. It goes
    *below* ``@finite_output``: the guard stays the outermost wrapper, as every public
    function's is (a test checks it), and the function the guard calls has already mapped
    an old name to the new one. (A guard given ``inputs=`` binds the arguments by the new
    names before mapping, so a function with ``inputs=`` should not take an old name.)

    Examples
    --------
    >>> @renamed_keywords(steps="num_steps", since="0.1.0")
    ... def run(num_steps=1):
    ...     return num_steps
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     run(steps=3)
    3
    >>> str(caught[0].message).split(";")[0]
    'run: the argument steps is renamed num_steps (after rlfound 0.1.0)'
    """
    removal = _removal_release(since)

    def decorate(function: _F) -> _F:
        name = function.__name__
        parameters = inspect.signature(function).parameters
        for old, new in renames.items():
            # A typo here would make the old keyword fail later, in a user's call.
            if new not in parameters or old in parameters:
                raise TypeError(
                    f"renamed_keywords: {name} must take {new!r} and not {old!r}"
                )

        @functools.wraps(function)
        def renamed(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(
                        f"{name}() got multiple values for argument {new!r}: "
                        f"{old!r} is its old name"
                    )
                warnings.warn(
                    f"{name}: the argument {old} is renamed {new} (after rlfound "
                    f"{since}); {old}= still works, with this warning, until "
                    f"rlfound {removal} removes it",
                    DeprecationWarning,
                    stacklevel=3,
                )
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return renamed  # type: ignore[return-value]

    return decorate
