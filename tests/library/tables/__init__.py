"""Per-module tables for the library-wide convention and bad-input tests.

tests/library/test_conventions.py and tests/library/test_bad_input.py check every public
function of every library module, and fail when a function has no entry. A module's entries
may live in its own file here, ``tests/library/tables/<module>.py``, which defines any of

- ``EXAMPLES``: a list of :class:`tests.library.tables.kinds.Example` (one valid call per public
  function and the kind of what it returns);
- ``VALID``: a dict from each public function to a dict of valid keyword arguments;
- ``CASES``: a list of :func:`tests.library.tables.kinds.case` rows (a function, the argument a bad
  value is given to, the changed keyword arguments, the exact start of the message).

The two tests add these to their own tables, so a new module's tables never touch a file that
other modules' authors edit.
"""

from __future__ import annotations

import importlib
from pathlib import Path

_HERE = Path(__file__).resolve().parent


def _modules():
    for path in sorted(_HERE.glob("*.py")):
        if path.stem not in ("__init__", "kinds"):
            yield importlib.import_module(f"tests.library.tables.{path.stem}")


def collect_list(name: str) -> list:
    """The concatenation of the list ``name`` of every table file that defines it."""
    return [item for module in _modules() for item in getattr(module, name, [])]


def collect_dict(name: str) -> dict:
    """The union of the dict ``name`` of every table file that defines it."""
    merged: dict = {}
    for module in _modules():
        merged.update(getattr(module, name, {}))
    return merged
