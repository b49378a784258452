"""Notebook conversion under a limit: a notebook's cells become Python in a capped child.

IPython's input transformer, which turns a notebook's cells into the Python Jupyter runs, can
be made to work for hours by one crafted cell (a large cell full of magics: it tokenizes the
whole cell again for each magic it rewrites). So the grader never runs it in its own process.
:func:`convert` runs :mod:`~rlfound.grading.intake.notebook_converter` as a script in a child,
``python -I`` (no environment variables, no user site, not even its own folder on
``sys.path``), in an empty temporary folder that is also its home, with an environment of two
variables. The child receives only the notebook's JSON text on stdin and answers JSON on
stdout; it sets its limits on itself before it reads the notebook (CPU time, address space,
the size of what it writes), and this process keeps a wall-clock guard and kills it past that.
Whatever the notebook does to the converter, the result is cells and notes, or a
:class:`NotebookError` with the reason, which the caller records as that submission's failure.

The limits are this module's constants: generous for honest notebooks (the book's largest
chapter converts in a few hundredths of a second, after a fraction of a second to start),
bounded for crafted ones.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile

from rlfound.grading.intake import notebook_converter, text

__all__ = [
    "ADDRESS_SPACE",
    "CPU_SECONDS",
    "MAX_INPUT_BYTES",
    "MAX_OUTPUT_BYTES",
    "WALL_SECONDS",
    "NotebookError",
    "convert",
]

#: CPU seconds the conversion of one notebook may use (``RLIMIT_CPU`` of the child), startup
#: included; an honest notebook needs well under one.
CPU_SECONDS = 5
#: Wall-clock seconds after which the child is killed whatever its CPU use: a generous hang
#: guard for a busy machine, not a budget.
WALL_SECONDS = 60.0
#: Bytes of virtual memory of the child (``RLIMIT_AS``).
ADDRESS_SPACE = 1024**3
#: Largest notebook text converted (the size of a submission file read).
MAX_INPUT_BYTES = 2 * 1024**2
#: Largest answer of the child, the converted code with its JSON framing.
MAX_OUTPUT_BYTES = 8 * 1024**2


class NotebookError(ValueError):
    """A notebook that could not be turned into Python: not a notebook, or past a limit."""


def _run(data: bytes) -> tuple[int | None, bytes, bytes]:
    """Run the converter on ``data``; ``(exit status or None if it was killed by the
    wall-clock guard, stdout, last bytes of stderr)``.

    Raises
    ------
    OSError
        If the child cannot be started (the grader's problem, not the notebook's).
    """
    limits = {
        "cpu_seconds": CPU_SECONDS,
        "address_space": ADDRESS_SPACE,
        "output_bytes": MAX_OUTPUT_BYTES,
    }
    if not sys.executable:
        raise OSError("no Python interpreter is known to convert notebooks with")
    command = [sys.executable, "-I", notebook_converter.__file__, json.dumps(limits)]
    # Files, not pipes: the child can neither block on a full pipe nor make this process
    # read more than the cap.
    with (
        tempfile.TemporaryDirectory(prefix="rlfound-notebook-") as home,
        tempfile.TemporaryFile() as stdin,
        tempfile.TemporaryFile() as stdout,
        tempfile.TemporaryFile() as stderr,
    ):
        stdin.write(data)
        stdin.seek(0)
        child = subprocess.Popen(
            command,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            cwd=home,
            env={"HOME": home, "LC_ALL": "C.UTF-8"},
            close_fds=True,
        )
        try:
            status = child.wait(timeout=WALL_SECONDS)
        except subprocess.TimeoutExpired:
            status = None
        finally:  # also when this thread is interrupted: never leave the child running
            if child.poll() is None:
                child.kill()
                child.wait()
        stdout.seek(0)
        answer = stdout.read(MAX_OUTPUT_BYTES + 1)
        stderr.seek(0, 2)
        stderr.seek(max(0, stderr.tell() - 2000))
        return status, answer, stderr.read()


def _failure(status: int | None, errors: bytes) -> str:
    """The reason the converter gave no answer, from its exit status."""
    if status is None:
        return (
            f"converting its cells to Python did not finish within {WALL_SECONDS:g} s "
            "(the grader's wall-clock limit for one notebook)"
        )
    if status in (-signal.SIGXCPU, -signal.SIGKILL):
        return (
            f"converting its cells to Python took more than {CPU_SECONDS} s of CPU time "
            "(the grader's CPU-time limit for one notebook)"
        )
    if status == notebook_converter.EXIT_MEMORY:
        return (
            f"converting its cells to Python needed more than {ADDRESS_SPACE // 2**20} MiB "
            "of memory (the grader's memory limit for one notebook)"
        )
    if status in (notebook_converter.EXIT_TOO_LARGE, -signal.SIGXFSZ):
        return f"its cells, as Python, are larger than {MAX_OUTPUT_BYTES} bytes"
    if status < 0:
        try:
            how = signal.Signals(-status).name
        except ValueError:
            how = f"signal {-status}"
        return f"the notebook converter failed ({how})"
    # The converter's own last words (a missing IPython, say), for the teaching team.
    lines = errors.decode("utf-8", "replace").strip().splitlines()
    detail = f": {text.clean(lines[-1], 200)}" if lines else ""
    return f"the notebook converter failed (exit status {status}{detail})"


def _cells(answer: bytes) -> tuple[list[tuple[str, str]], list[str]]:
    """The converter's answer, checked: it is made from the student's notebook."""
    try:
        document = json.loads(answer)
    except (ValueError, RecursionError):
        raise NotebookError("the notebook converter gave no readable answer") from None
    if not isinstance(document, dict):
        raise NotebookError("the notebook converter gave no readable answer")
    if isinstance(document.get("error"), str):
        raise NotebookError(text.clean(document["error"], text.ERROR_CHARS))
    cells, notes = document.get("cells"), document.get("notes")
    if (
        not isinstance(cells, list)
        or not isinstance(notes, list)
        or not all(
            isinstance(cell, list)
            and len(cell) == 2
            and all(isinstance(part, str) for part in cell)
            for cell in cells
        )
        or not all(isinstance(note, str) for note in notes)
    ):
        raise NotebookError("the notebook converter gave no readable answer")
    return [(label, code) for label, code in cells], notes


def convert(data: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The code cells of a notebook as Python, and notes on the cells not run, converted in a
    child process under the limits of this module (see
    :mod:`~rlfound.grading.intake.notebook_converter` for how cells become Python).

    Parameters
    ----------
    data : str
        The notebook's JSON text.

    Returns
    -------
    cells : list of (str, str)
        ``(label, code)`` of each code cell that runs, in order.
    notes : list of str
        Remarks for the student (cells skipped, IPython syntax skipped); not yet cleaned.

    Raises
    ------
    NotebookError
        If the text is not a readable notebook, is larger than :data:`MAX_INPUT_BYTES`, or
        its conversion went past a limit or failed.
    OSError
        If the converter cannot be started.
    """
    encoded = data.encode("utf-8", "surrogatepass")
    if len(encoded) > MAX_INPUT_BYTES:
        raise NotebookError(f"the notebook is larger than {MAX_INPUT_BYTES} bytes")
    status, answer, errors = _run(encoded)
    if status != 0:
        raise NotebookError(_failure(status, errors))
    if len(answer) > MAX_OUTPUT_BYTES:
        raise NotebookError(f"its cells, as Python, are larger than {MAX_OUTPUT_BYTES} bytes")
    return _cells(answer)
