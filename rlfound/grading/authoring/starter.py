"""Student starters, generated from the reference solution: one source, two editions.

Every region between a ``### BEGIN SOLUTION`` line and a ``### END SOLUTION`` line (the
nbgrader convention) becomes ``raise NotImplementedError`` at the region's indentation. The
rest (docstrings, signatures, imports) is kept, and a header names the exercise so that
``rlfound check`` knows which one a file belongs to.
"""

from __future__ import annotations

import re

from rlfound.grading.authoring.spec import Exercise
from rlfound.grading.intake.submissions import EXERCISE_HEADER

__all__ = [
    "BEGIN",
    "END",
    "MARKER",
    "exercise_of",
    "header",
    "starter_notebook",
    "starter_source",
    "strip_solutions",
]

BEGIN = re.compile(r"^(?P<indent>[ \t]*)### BEGIN SOLUTION[ \t]*$")
END = re.compile(r"^[ \t]*### END SOLUTION[ \t]*$")
#: The header line that ties a starter (and the submission made from it) to its exercise
#: (defined by intake, which reads it in every hand-in).
MARKER = EXERCISE_HEADER


def strip_solutions(source: str) -> str:
    """Replace each solution region with ``raise NotImplementedError``.

    Raises
    ------
    ValueError
        If a region is not closed, is nested, or an END has no BEGIN.

    Examples
    --------
    >>> code = "def f(x):\\n    ### BEGIN SOLUTION\\n    return 2 * x\\n    ### END SOLUTION\\n"
    >>> print(strip_solutions(code), end="")
    def f(x):
        raise NotImplementedError
    """
    lines, indent = [], None
    for number, line in enumerate(source.splitlines(), start=1):
        begin, end = BEGIN.match(line), END.match(line)
        if begin:
            if indent is not None:
                raise ValueError(f"source: nested BEGIN SOLUTION at line {number}")
            indent = begin["indent"]
        elif end:
            if indent is None:
                raise ValueError(f"source: END SOLUTION without BEGIN at line {number}")
            lines.append(f"{indent}raise NotImplementedError")
            indent = None
        elif indent is None:
            lines.append(line)
    if indent is not None:
        raise ValueError("source: BEGIN SOLUTION without END SOLUTION")
    return "\n".join(lines) + "\n"


def header(exercise: Exercise) -> str:
    return (
        f"# rlfound exercise: {exercise.id}\n"
        f"# {exercise.title} (chapter {exercise.chapter}, {'★' * exercise.stars}).\n"
        "# Replace each `raise NotImplementedError` with your code; check your work with\n"
        "#     rlfound check THIS_FILE\n"
    )


def starter_source(exercise: Exercise) -> str:
    """The student's ``.py`` starter for ``exercise``."""
    source = exercise.solution_path.read_text(encoding="utf-8")
    return header(exercise) + "\n" + strip_solutions(source)


def starter_notebook(exercise: Exercise, source: str | None = None) -> str:
    """The starter as a notebook (JSON text): instructions, then the code to complete
    (``source``, by default :func:`starter_source`)."""
    import nbformat

    if source is None:
        source = starter_source(exercise)
    manual = "".join(
        f"\n- **{part.name}** ({part.points:g} points, graded by hand): {part.description}"
        for part in exercise.manual
    )
    intro = (
        f"# {exercise.title}\n\n"
        f"Exercise `{exercise.id}`, chapter {exercise.chapter}, {'★' * exercise.stars}.\n\n"
        "Complete the functions in the code cell below (replace each "
        "`raise NotImplementedError`). Check your work from a terminal with "
        "`rlfound check THIS_NOTEBOOK.ipynb`; the grader runs only the code cells."
        + (f"\n\nAlso hand in, in Markdown cells:{manual}" if manual else "")
    )
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell(intro),
        nbformat.v4.new_code_cell(source.rstrip("\n")),
    ]
    notebook.metadata["kernelspec"] = {
        "display_name": "Python 3",
        "language": "python",
        "name": "python3",
    }
    # Fixed cell ids, so the same exercise always gives the same file.
    for number, cell in enumerate(notebook.cells):
        cell["id"] = f"rlfound-{exercise.id}-{number}"
    return nbformat.writes(notebook) + "\n"


def exercise_of(source: str) -> str | None:
    """The exercise id named in a file's ``# rlfound exercise:`` header, if any."""
    match = MARKER.search(source)
    return match["id"] if match else None
