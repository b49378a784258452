"""The answers of the parts graded by hand, read from where the starters ask for them.

Each part has a marked heading, ``### By hand: NAME (P points)``, followed by its prompt as a
``>`` quote and a placeholder (:mod:`rlfound.grading.authoring.starter`). An answer is what
stands under the heading up to the next such heading, the end marker, or the end of the
``.py`` starter's answers string; in a notebook, what stands in the Markdown cells from the
heading's cell up to the next code cell. The prompt's lines and the placeholder are not part
of it. Only the text is read: nothing is run, and a file that is not Python (a syntax error)
or not a notebook gives empty answers, never an exception.

Everything here is student text, so each answer is made inert and capped
(:func:`rlfound.grading.intake.text.clean`) before the grader keeps it. The marks themselves
are defined here, where they are read, and the starters write them from here.
"""

from __future__ import annotations

import json
import re

from rlfound.grading.intake import text

__all__ = ["BY_HAND_END", "BY_HAND_HEADING", "MANUAL_CHARS", "PLACEHOLDER", "extract_manual_text"]

#: The heading of a part graded by hand, in either starter.
BY_HAND_HEADING = re.compile(
    r"^[ \t]*#{2,4}[ \t]+By hand:[ \t]+(?P<name>[a-z0-9]+(?:-[a-z0-9]+)*)\b.*$", re.MULTILINE
)
#: The line that ends the by-hand answers of the ``.py`` starter.
BY_HAND_END = "### End of the by-hand answers"
#: What stands where the student writes; it is not counted as an answer.
PLACEHOLDER = "(Write your answer here.)"

#: Characters kept of one answer.
MANUAL_CHARS = 8000
#: Characters of a file that are searched for the headings.
_MAX_SOURCE = 2_000_000
_CELL_BREAK = "\x00code cell\x00"


def _notebook_text(source: str) -> str:
    """The Markdown cells of a notebook's JSON, joined, with a break line for each code cell;
    "" when it is not a notebook."""
    try:
        document = json.loads(source)
    except (ValueError, RecursionError):
        return ""
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        return ""
    parts = []
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        body = cell.get("source", "")
        if isinstance(body, list):
            body = "".join(piece for piece in body if isinstance(piece, str))
        if not isinstance(body, str):
            continue
        parts.append(body if cell.get("cell_type") == "markdown" else _CELL_BREAK)
    return "\n".join(parts)


def _is_end(line: str) -> bool:
    stripped = line.strip()
    return stripped in (BY_HAND_END, _CELL_BREAK) or stripped.startswith('"""')


def extract_manual_text(source: str, is_notebook: bool, exercise) -> dict[str, str]:
    """The student's answer of each part of ``exercise`` graded by hand.

    Parameters
    ----------
    source : str
        The file as handed in: Python code, or a notebook's JSON text.
    is_notebook : bool
        Whether ``source`` is a notebook.
    exercise : Exercise
        The exercise (:class:`rlfound.grading.authoring.spec.Exercise`), whose ``manual``
        parts are looked for by their ``name``; each part's ``description`` is its prompt.

    Returns
    -------
    dict of str to str
        Every part's name and its answer (``""`` when there is none), inert and capped at
        :data:`MANUAL_CHARS` characters. A heading that names no part of the exercise is
        ignored; a part whose heading appears twice gets both answers, one after the other.

    Examples
    --------
    >>> from rlfound.grading.authoring.spec import load_exercises
    >>> exercise = load_exercises()["gae-recursion"]
    >>> from rlfound.grading.authoring.starter import PLACEHOLDER, by_hand_section
    >>> code = by_hand_section(exercise.manual[0]).replace(PLACEHOLDER, "It telescopes.")
    >>> extract_manual_text(code, False, exercise)["k-step-telescoping"]
    'It telescopes.'
    """
    names = [part.name for part in exercise.manual]
    prompts = {
        part.name: {f"> {line}".rstrip() for line in part.description.splitlines()}
        for part in exercise.manual
    }
    found: dict[str, list[str]] = {name: [] for name in names}
    if not isinstance(source, str):
        return dict.fromkeys(names, "")
    body = _notebook_text(source[:_MAX_SOURCE]) if is_notebook else source[:_MAX_SOURCE]
    current: str | None = None
    for line in body.splitlines():
        heading = BY_HAND_HEADING.match(line)
        if heading is not None:
            current = heading["name"] if heading["name"] in found else None
            continue
        if current is None:
            continue
        if _is_end(line):
            current = None
            continue
        if line.strip() == PLACEHOLDER or line.rstrip() in prompts[current]:
            continue
        if sum(len(kept) + 1 for kept in found[current]) <= MANUAL_CHARS:
            found[current].append(line)
    return {name: text.clean("\n".join(kept).strip(), MANUAL_CHARS) for name, kept in found.items()}
