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
``get_ipython()``, which the worker answers with a stand-in that does nothing. The cell magics
that run their body as Python in the notebook's namespace, ``%%time``, ``%%capture`` and
``%%timeit`` (``%%python`` too, as before), are replaced by their body, which runs once: a
``%%timeit`` setup statement runs before it, and a name that ``%%capture NAME`` or ``%%timeit
-v NAME`` would store the result in holds the same stand-in. A cell that starts with any other
cell magic (``%%bash``, ``%%writefile``, ...) is not Python and is skipped, with a note.
"""

import json
import keyword
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
#: Cell magics whose body is Python run in the notebook's namespace: the body runs once.
PYTHON_CELL_MAGICS = ("python", "python3", "time", "capture", "timeit")
#: What ``%%timeit`` accepts (IPython's own option string), the statement after them is setup.
_TIMEIT_OPTIONS = "n:r:tcp:qov:"
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


def _magic_problem(name, args):
    """Why IPython would refuse a Python cell magic's line (None if it accepts it), and the
    setup statement and the names it binds, as ``(problem, setup, names)``."""
    from IPython.core import magic_arguments
    from IPython.core.magics.execution import ExecutionMagics

    try:
        if name == "time":
            if hasattr(ExecutionMagics.time, "parser"):  # newer IPython: --no-raise-error
                _, extra = magic_arguments.parse_argstring(ExecutionMagics.time, args, partial=True)
            else:
                extra = args.split()
            if extra:  # IPython: "Can't use statement directly after '%%time'!"
                return "takes no statement on its line", "", []
            return None, "", []
        if name == "capture":
            parsed = magic_arguments.parse_argstring(ExecutionMagics.capture, args)
            return None, "", [parsed.output]
        if name == "timeit":
            options, setup = ExecutionMagics(None).parse_options(
                args, _TIMEIT_OPTIONS, posix=False, strict=False, preserve_non_opts=True
            )
            for number in ("n", "r", "p"):  # IPython turns these into int before it runs
                if number in options:
                    int(options[number])
            return None, setup.strip(), [options.get("v", "")]
    except MemoryError:
        raise
    # IPython's UsageError, a ValueError of int(), SystemExit of argparse's --help.
    except (Exception, SystemExit) as error:
        return f"has options IPython refuses ({type(error).__name__})", "", []
    return None, "", []  # python, python3: the body alone


def _split_cell_magics(label, source):
    """Peel the Python cell magics off a cell: ``(python, note)``, with ``python`` None (and
    the reason in ``note``) when the cell is not Python. A cell without a cell magic is
    returned as it is."""
    setups, bindings, rest = [], [], source
    while True:
        stripped = rest.lstrip("\n")
        first, _, body = stripped.partition("\n")
        if not _CELL_MAGIC.match(first.strip()):
            break
        # IPython's own split: the magic's name runs up to the first space.
        name, _, args = first.strip()[2:].partition(" ")
        shown = name[:40]
        if name not in PYTHON_CELL_MAGICS:
            note = f"{label} starts with %%{shown}: it is not Python, so the grader skipped it"
            return None, note
        problem, setup, names = _magic_problem(name, args)
        if problem is not None:
            return None, f"{label} starts with %%{shown}, which {problem}: the grader skipped it"
        if setup:
            setups.append(setup)
        bindings += [n for n in names if n.isidentifier() and not keyword.iskeyword(n)]
        rest = body
    if rest is source:
        return source, None
    # A binding comes after the body, as IPython stores the result once the body has run
    # (and a body that starts with `from __future__ import ...` stays valid).
    tail = [f"{name} = get_ipython()" for name in bindings]
    return "\n".join([*setups, rest.rstrip("\n"), *tail]) + "\n", None


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
        # A count, not a search: a name a cell magic binds is bound to get_ipython() too.
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
