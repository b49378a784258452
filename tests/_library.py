"""The library's public modules, in the order the book teaches them (``rlfound.__all__``)."""

from __future__ import annotations

import importlib

import rlfound

#: Every public module of the library (the grader excluded), as module objects.
MODULES = [
    importlib.import_module(f"rlfound.{name}") for name in rlfound.__all__ if name != "__version__"
]
