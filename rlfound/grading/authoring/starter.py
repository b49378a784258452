"""Student starters, generated from the reference solution: one source, two editions.

Every region between a ``### BEGIN SOLUTION`` line and a ``### END SOLUTION`` line (the
nbgrader convention) becomes ``raise NotImplementedError`` at the region's indentation. The
rest (docstrings, signatures, imports) is kept, and a header names the exercise so that
``rlfound check`` knows which one a file belongs to.

Each part graded by hand (:class:`~rlfound.grading.authoring.spec.Manual`) gets a place to
write its answer, under a marked heading ``### By hand: NAME (P points)`` followed by the
prompt as a ``>`` quote: in the ``.py`` starter, inside a string ``BY_HAND_ANSWERS`` at the
end of the file (:func:`by_hand_block`); in the notebook starter, a Markdown cell per part
after the code. :func:`rlfound.grading.intake.extract_manual_text` reads the answers back
from those headings.
"""

from __future__ import annotations

# The marks are defined where they are read back (intake); the starters write them.
from rlfound._listing import BEGIN_SOLUTION, END_SOLUTION
from rlfound.grading.authoring.spec import Exercise
from rlfound.grading.intake.manual_text import BY_HAND_END, BY_HAND_HEADING, PLACEHOLDER
from rlfound.grading.intake.submissions import EXERCISE_HEADER

__all__ = [
    "BEGIN",
    "BY_HAND_END",
    "BY_HAND_HEADING",
    "BY_HAND_START",
    "END",
    "MARKER",
    "PLACEHOLDER",
    "by_hand_block",
    "by_hand_section",
    "exercise_of",
    "header",
    "starter_notebook",
    "starter_source",
    "strip_solutions",
]

# The markers are the book's too: its solution pages show the region between them.
BEGIN, END = BEGIN_SOLUTION, END_SOLUTION
#: The header line that ties a starter (and the submission made from it) to its exercise
#: (defined by intake, which reads it in every hand-in).
MARKER = EXERCISE_HEADER
#: The first line of the ``.py`` starter's by-hand block.
BY_HAND_START = "# ---- Parts graded by hand " + "-" * 20


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


def by_hand_section(part) -> str:
    """The marked heading, the prompt and the placeholder of one part graded by hand.

    Examples
    --------
    >>> from rlfound.grading.authoring.spec import Manual
    >>> print(by_hand_section(Manual(name="proof", points=2, description="Show it.")))
    ### By hand: proof (2 points)
    > Show it.
    <BLANKLINE>
    (Write your answer here.)
    """
    prompt = "\n".join(f"> {line}".rstrip() for line in part.description.splitlines())
    return f"### By hand: {part.name} ({part.points:g} points)\n{prompt}\n\n{PLACEHOLDER}"


def by_hand_block(exercise: Exercise) -> str:
    """The end of the ``.py`` starter where the by-hand answers go ("" if there are none).

    A raw string, so that a backslash of LaTeX stays as written; the only thing an answer
    must not hold is three double quotes in a row, which would end the string.
    """
    if not exercise.manual:
        return ""
    sections = "\n\n".join(by_hand_section(part) for part in exercise.manual)
    return (
        f"\n\n{BY_HAND_START}\n"
        "# Write the answer of each part graded by hand under its heading, inside this string\n"
        "# (plain text or Markdown; never three double quotes in a row). Your instructor\n"
        "# reads it; it is not run.\n"
        f'BY_HAND_ANSWERS = r"""\n{sections}\n\n{BY_HAND_END}\n"""\n'
    )


def starter_source(exercise: Exercise) -> str:
    """The student's ``.py`` starter for ``exercise``: the header, the solution with its
    solution regions stripped, and the place of the by-hand answers."""
    source = exercise.solution_path.read_text(encoding="utf-8")
    code = header(exercise) + "\n" + strip_solutions(source)
    block = by_hand_block(exercise)
    return code.rstrip("\n") + block if block else code


def starter_notebook(exercise: Exercise, source: str | None = None) -> str:
    """The starter as a notebook (JSON text): instructions, then the code to complete
    (``source``, by default :func:`starter_source`)."""
    import nbformat

    if source is None:
        source = starter_source(exercise)
    # The answers have Markdown cells of their own here, not the .py starter's string.
    source = source.split(f"\n\n{BY_HAND_START}\n", 1)[0]
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
        + (
            "\n\nAlso hand in, each in the Markdown cell of its own below the code (write "
            f"under its heading, in place of the placeholder):{manual}"
            if manual
            else ""
        )
    )
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell(intro),
        nbformat.v4.new_code_cell(source.rstrip("\n")),
        *(nbformat.v4.new_markdown_cell(by_hand_section(part)) for part in exercise.manual),
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
