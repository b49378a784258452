"""The library's public modules, in the order the book teaches them (``rlfound.__all__``)."""

from __future__ import annotations

import importlib
import inspect

import rlfound

#: Every public module of the library (the grader excluded), as module objects.
MODULES = [
    importlib.import_module(f"rlfound.{name}") for name in rlfound.__all__ if name != "__version__"
]


def public_module(obj) -> str:
    """The public module of a library function or class: its ``__module__`` up to the first
    private part, so ``rlfound.diagnostics._report`` (a private file of the package
    ``rlfound.diagnostics``) gives ``rlfound.diagnostics``.

    >>> from rlfound import returns
    >>> public_module(returns.discounted_returns)
    'rlfound.returns'
    """
    parts = obj.__module__.split(".")
    private = [index for index, part in enumerate(parts) if part.startswith("_")]
    return ".".join(parts[: private[0]] if private else parts)


def public_functions():
    """``(rlfound.<module>.<name>, function)`` for every function in a public module's
    ``__all__`` (classes and constants left out), for the tests that hold every public
    function to a rule."""
    for module in MODULES:
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isfunction(value):
                yield f"{module.__name__}.{name}", value
