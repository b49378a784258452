"""Turn a notebook's code cells into Python: the child process that does it under limits.

:mod:`rlfound.grading.intake.notebooks` runs this file as a script, ``python -I
notebook_converter.py LIMITS``, with the notebook's JSON text on stdin; it answers one JSON
document on stdout, ``{"cells": [[label, code], ...], "notes": [...]}`` or ``{"error":
reason}``. IPython's input transformer can spend hours on a crafted cell (it tokenizes the
whole cell again for every magic it rewrites), so it never runs in the grader's own process:
here it runs behind a CPU-time limit, an address-space limit and an output-size limit that this
script sets on itself before it reads a byte of the notebook, and a wall-clock guard kept by
the parent. The script reads only stdin and writes only stdout and stderr; it imports nothing
of ``rlfound`` (isolated mode would not find this checkout anyway), only the standard library,
nbformat and IPython.

A cell is turned into Python the way Jupyter runs it, with IPython's own transformer (as
nbconvert's Python exporter does): line magics, shell escapes and help syntax become calls of
``get_ipython()``, which the worker answers with a stand-in that does nothing. A cell that
starts with a cell magic other than ``%%python`` (``%%bash``, ``%%writefile``, ...) is not
Python and is skipped, with a note.
"""

import json
import os
import re
import resource
import signal
import sys

__all__ = [
    "EXIT_MEMORY",
    "EXIT_TOO_LARGE",
    "PYTHON_CELL_MAGICS",
    "convert_cells",
    "main",
]

#: Exit status when the conversion ran out of memory (its address-space limit).
EXIT_MEMORY = 3
#: Exit status when the converted code is larger than the output limit.
EXIT_TOO_LARGE = 4
#: Cell magics whose body is Python: the body runs.
PYTHON_CELL_MAGICS = ("python", "python3")
_CELL_MAGIC = re.compile(r"%%[A-Za-z_][\w.-]*")


def _lower(which, soft, hard):
    """Set a limit no higher than the one this process inherited (only root may raise one)."""
    _, inherited = resource.getrlimit(which)
    if inherited != resource.RLIM_INFINITY:
        soft, hard = min(soft, inherited), min(hard, inherited)
    resource.setrlimit(which, (soft, hard))


def _set_limits(limits):
    """Lower this process's limits before the notebook is read."""
    cpu = int(limits["cpu_seconds"])
    _lower(resource.RLIMIT_CORE, 0, 0)
    # The soft limit sends SIGXCPU, which kills (Python installs no handler); the hard limit
    # one second later is SIGKILL, in case anything blocks SIGXCPU.
    _lower(resource.RLIMIT_CPU, cpu, cpu + 1)
    _lower(resource.RLIMIT_AS, limits["address_space"], limits["address_space"])
    # stdout and stderr are files: a write past the cap fails (EFBIG) instead of killing us,
    # so a long log line of nbformat's cannot hide the answer.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    size = limits["output_bytes"] + 4096
    _lower(resource.RLIMIT_FSIZE, size, size)


def _split_cell_magics(label, source):
    """A cell as Python: ``(python, note)``, with ``python`` None (and the reason in
    ``note``) when the cell starts with a cell magic other than ``%%python``."""
    stripped = source.lstrip("\n")
    first, _, body = stripped.partition("\n")
    magic = _CELL_MAGIC.match(first.strip())
    if magic is None:
        return source, None
    name = magic[0][2:]
    if name not in PYTHON_CELL_MAGICS:
        note = f"{label} starts with %%{name[:40]}: it is not Python, so the grader skipped it"
        return None, note
    return body, None


def convert_cells(data):
    """The code cells of a notebook as Python, and notes on the cells not run (see the module
    docstring): ``{"cells": [[label, code], ...], "notes": [...]}``, or ``{"error": reason}``
    for a text that is not a readable notebook."""
    import nbformat
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        notebook = nbformat.reads(data, as_version=4)
    except MemoryError:
        raise
    except Exception as error:  # nbformat raises many types for malformed JSON
        return {"error": f"not a readable notebook ({type(error).__name__})"}
    transformer = TransformerManager()
    cells, notes = [], []
    number = 0
    for cell in notebook.get("cells", []):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        number += 1
        label = f"code cell {number}"
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(str(part) for part in source)
        source, note = _split_cell_magics(label, str(source))
        if source is None:
            notes.append(note)
            continue
        try:
            code = transformer.transform_cell(source)
        except MemoryError:
            raise
        except Exception:  # IPython could not parse it: let Python report the error
            code = source
        if code.count("get_ipython()") > source.count("get_ipython()"):
            notes.append(
                f"{label} uses IPython syntax (a magic, a shell command or help): "
                "the grader ran the Python around it and skipped those lines"
            )
        cells.append([label, code])
    return {"cells": cells, "notes": notes}


def main(argv):
    """Convert the notebook on stdin; the limits come as JSON in ``argv[1]``."""
    limits = json.loads(argv[1])
    _set_limits(limits)
    try:
        data = sys.stdin.buffer.read().decode("utf-8", "surrogatepass")
        answer = convert_cells(data)
    except MemoryError:
        os._exit(EXIT_MEMORY)
    except Exception as error:  # a reason, never a traceback that would echo the notebook
        answer = {"error": f"the notebook could not be converted ({type(error).__name__})"}
    # ASCII JSON: a lone surrogate in a cell survives as an escape.
    payload = json.dumps(answer).encode("ascii")
    if len(payload) > limits["output_bytes"]:
        os._exit(EXIT_TOO_LARGE)
    view = memoryview(payload)
    while view:
        view = view[os.write(1, view) :]
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
