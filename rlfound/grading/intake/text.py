"""Student text made bounded and inert before the grader stores or shows it.

Everything a submission controls that ends up in a report (what it printed, the messages of
its exceptions and their tracebacks, its file name, the notes on its notebook cells) passes
through :func:`clean` first:

* it is cut to a fixed number of characters, so one submission cannot make a report of
  hundreds of megabytes (the cut is marked, and the marker counts toward the limit);
* control characters other than newline and tab are made visible (``\\x1b`` instead of the
  escape character itself), so that ``cat``-ing a feedback file cannot clear the screen, move
  the cursor or draw a fake score table; the same holds for carriage returns, C1 controls,
  Unicode line separators and the bidirectional overrides that make text display in another
  order than it is stored;
* lone UTF-16 surrogates (which no UTF-8 file can hold) are written the same way
  (``\\ud800``), so every report encodes, whatever the submission raised or printed.

The limits are documented in the README ("What the sandbox protects against"), and
``tests/grading`` checks the largest reports a hostile submission can cause.
"""

from __future__ import annotations

import re

__all__ = [
    "CUT",
    "ERROR_CHARS",
    "MAX_NOTES",
    "MESSAGE_CHARS",
    "NAME_CHARS",
    "NOTE_CHARS",
    "OUTPUT_CHARS",
    "clean",
    "csv_cell",
    "inert",
]

#: Characters of one check's message (a failure, with the submission's traceback).
MESSAGE_CHARS = 2000
#: Characters of why a submission could not be graded at all (an import error, a bad file).
ERROR_CHARS = 4000
#: Characters of what the submission printed that are kept.
OUTPUT_CHARS = 4000
#: Notes on a notebook's cells (a cell that raised, a cell magic skipped), and their length.
MAX_NOTES = 20
NOTE_CHARS = 300
#: Characters of a file name shown in ``grades.csv`` and the feedback.
NAME_CHARS = 200
#: Marker appended to text that was cut.
CUT = " [... cut by the grader]"

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# C0 controls but tab and newline, DEL, C1 controls, line/paragraph separators, bidirectional
# controls and lone surrogates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029" + _BIDI + "\ud800-\udfff]")


def _visible(match: re.Match) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: str) -> str:
    """``text`` with every unsafe character written as a visible escape.

    Examples
    --------
    >>> inert("ok\\tfine\\n\\x1b[2J\\r")
    'ok\\tfine\\n\\\\x1b[2J\\\\x0d'
    >>> inert("\\ud800")
    '\\\\ud800'
    """
    return _UNSAFE.sub(_visible, text)


def clean(text, limit: int) -> str:
    """``text`` (anything; not a str is described by its type) made inert and cut to ``limit``
    characters, the marker included.

    Examples
    --------
    >>> clean("abc", 10)
    'abc'
    >>> len(clean("x" * 100, 50))
    50
    >>> clean(b"bytes", 10)
    '<bytes>'
    """
    if type(text) is not str:
        text = f"<{type(text).__name__}>"
    was_cut = len(text) > limit
    text = inert(text[:limit])  # escapes lengthen it; cut again below
    if was_cut or len(text) > limit:
        keep = max(0, limit - len(CUT))
        text = text[:keep]
        # Never leave half of an escape sequence at the end.
        tail = text.rfind("\\", max(0, len(text) - 6))
        if tail != -1 and re.fullmatch(r"\\(x[0-9a-f]?|u[0-9a-f]{0,3})", text[tail:]):
            text = text[:tail]
        text += CUT
    return text


_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(text: str, limit: int = NAME_CHARS) -> str:
    """A student-controlled CSV cell: cleaned, capped, and never read as a spreadsheet formula
    (a leading ``=``, ``+``, ``-`` or ``@`` gets a ``'`` in front).

    Examples
    --------
    >>> csv_cell("=cmd|'/c calc'!A1.py")
    "'=cmd|'/c calc'!A1.py"
    """
    text = clean(text, limit)
    return "'" + text if text.startswith(_FORMULA) else text
