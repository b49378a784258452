"""Find submissions and read their code as text, without running any of it.

A submission is a ``.py`` file, a ``.ipynb`` notebook (its code cells, in order), or a folder
of those (each file in it is one submission). Its name is the file's stem, made safe for use
as a folder name. Reading a notebook is parsing JSON with ``nbformat``; IPython magics
(``%timeit``, ``!pip``) are commented out so the code is plain Python.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

#: Largest submission file read; anything bigger is reported, not read.
MAX_BYTES = 2 * 1024 * 1024
SUFFIXES = (".py", ".ipynb")


@dataclasses.dataclass(frozen=True)
class Submission:
    """One submission: its name, where it came from, and its code or why there is none."""

    name: str
    path: Path
    source: str | None
    error: str | None = None


def safe_name(stem: str) -> str:
    """A file-system-safe name: letters, digits, ``.``, ``_`` and ``-``; no leading dot.

    Examples
    --------
    >>> safe_name("../../etc/passwd")
    'etc_passwd'
    >>> safe_name("Ana María")
    'Ana_Mar_a'
    """
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", stem).strip("._-") or "submission"
    return name[:100]


def notebook_code(text: str) -> str:
    """The code cells of a notebook, joined, with IPython magics commented out.

    Raises
    ------
    ValueError
        If the text is not a readable notebook.
    """
    import nbformat

    try:
        notebook = nbformat.reads(text, as_version=4)
    except Exception as error:  # nbformat raises many types for malformed JSON
        raise ValueError(f"not a readable notebook ({type(error).__name__})") from None
    cells = []
    for cell in notebook.cells:
        if cell.get("cell_type") != "code":
            continue
        lines = []
        for line in str(cell.get("source", "")).splitlines():
            stripped = line.lstrip()
            magic = stripped.startswith(("%", "!")) or stripped.endswith("?")
            lines.append(f"# (magic removed) {line}" if magic else line)
        cells.append("\n".join(lines))
    return "\n\n".join(cells) + "\n"


def read_submission(path: Path, name: str | None = None) -> Submission:
    """Read one submission file; a problem becomes the submission's ``error``, not an exception."""
    path = Path(path)
    name = name or safe_name(path.stem)
    try:
        if not path.is_file():
            return Submission(name, path, None, f"submission not found: {path}")
        if path.stat().st_size > MAX_BYTES:
            return Submission(name, path, None, f"submission is larger than {MAX_BYTES} bytes")
        text = path.read_bytes().decode("utf-8")
        if path.suffix == ".ipynb":
            text = notebook_code(text)
    except UnicodeDecodeError:
        return Submission(name, path, None, "submission is not UTF-8 text")
    except (OSError, ValueError) as error:
        return Submission(name, path, None, f"submission could not be read: {error}")
    return Submission(name, path, text)


def expand(paths: list[str | Path]) -> list[tuple[str, Path]]:
    """Turn command-line paths into ``(name, file)`` pairs with unique names.

    A folder contributes its ``.py`` and ``.ipynb`` files (not recursively), sorted. A path
    that does not exist is kept, so that the submission is reported as missing.
    """
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files += sorted(p for p in path.iterdir() if p.suffix in SUFFIXES and p.is_file())
        else:
            files.append(path)
    named, seen = [], {"grades.csv"}  # that name is taken by the class's grade sheet
    for path in files:
        base = safe_name(path.stem)
        name, counter = base, 2
        while name in seen:
            name, counter = f"{base}-{counter}", counter + 1
        seen.add(name)
        named.append((name, path))
    return named
