"""Finds the teaching team's answers in a student artifact: a wheel, an installed environment,
a class pack, the student edition's HTML.

Written independently of the grader's packaging: it reads the repository's ``solutions/`` and
looks for three things in every file of the artifact.

* A reference solution's code: each solution region (between ``### BEGIN SOLUTION`` and
  ``### END SOLUTION``) as a sequence of normalized statements (``ast.dump``, so formatting,
  comments and line numbers do not matter), found inside any function of any Python file or
  notebook code cell of the artifact.
* The same region as text (its stripped lines, in order), in any text file: HTML, Markdown,
  JSON, notebooks. A region shorter than 40 characters is too generic to be evidence.
* A worked solution's prose: every run of 50 or more characters of a solution page's
  paragraphs that holds no markup (so it reads the same in HTML and in a notebook), unless the
  same run is also in the chapters (public text the solutions quote).
"""

from __future__ import annotations

import ast
import functools
import json
import re
import textwrap
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = REPO / "solutions"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
#: Characters of markup: a run of prose between them reads the same wherever it is rendered.
_MARKUP = re.compile(r"[$`{}*_\[\]\\<>|#]")
_SPACE = re.compile(r"\s+")
TEXT_SUFFIXES = {".py", ".md", ".ipynb", ".html", ".htm", ".txt", ".json", ".js", ".csv", ".toml"}


def _regions(source: str) -> list[str]:
    regions, current = [], None
    for line in source.splitlines():
        if line.strip() == BEGIN:
            current = []
        elif line.strip() == END and current is not None:
            regions.append(textwrap.dedent("\n".join(current)))
            current = None
        elif current is not None:
            current.append(line)
    return regions


def _statements(body: list[ast.stmt]) -> list[str]:
    return [ast.dump(node) for node in body]


@functools.cache
def reference_regions() -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """Every solution region: (file name, its statements normalized, its stripped lines)."""
    found = []
    for path in sorted(SOLUTIONS.glob("*.py")):
        for region in _regions(path.read_text(encoding="utf-8")):
            statements = tuple(_statements(ast.parse(region).body))
            lines = "\n".join(line.strip() for line in region.splitlines() if line.strip())
            found.append((path.name, statements, lines))
    return tuple(found)


def _plain_runs(text: str) -> set[str]:
    runs = set()
    for piece in _MARKUP.split(text):
        piece = _SPACE.sub(" ", piece).strip(" .,;:()")
        if len(piece) >= 50:
            runs.add(piece)
    return runs


def _paragraphs(markdown: str) -> list[str]:
    """Prose paragraphs of a MyST page: without code cells, fences, directive options and
    display maths (the prose inside a solution box is kept)."""
    paragraphs, current = [], []
    in_code = in_math = False
    for line in markdown.splitlines():
        stripped = line.strip()
        if in_code:
            in_code = not stripped.startswith("```") or stripped.startswith("```{")
            continue
        if stripped.startswith("$$"):
            in_math = not in_math if stripped == "$$" else in_math
            _flush(paragraphs, current)
            continue
        if in_math:
            continue
        if stripped.startswith("```{code-cell}"):
            in_code = True
            _flush(paragraphs, current)
            continue
        if not stripped or stripped.startswith(("```", "~~~", ":", "(", "---", "|", "#")):
            _flush(paragraphs, current)
            continue
        current.append(stripped)
    _flush(paragraphs, current)
    return paragraphs


def _flush(paragraphs: list[str], current: list[str]) -> None:
    if current:
        paragraphs.append(" ".join(current))
        current.clear()


@functools.cache
def _public_runs() -> frozenset[str]:
    runs = set()
    for page in [*REPO.glob("chapters/*.md"), *REPO.glob("*.md")]:
        runs |= _plain_runs(page.read_text(encoding="utf-8"))
    return frozenset(runs)


@functools.cache
def worked_runs() -> tuple[tuple[str, str], ...]:
    """(page name, run) for every plain run of a worked-solution page not in the chapters."""
    public = _public_runs()
    found = []
    for page in sorted(SOLUTIONS.glob("*.md")):
        for paragraph in _paragraphs(page.read_text(encoding="utf-8")):
            found += [(page.name, run) for run in sorted(_plain_runs(paragraph) - public)]
    return tuple(found)


def _contains(haystack: list[str], needle: tuple[str, ...]) -> bool:
    width = len(needle)
    return width > 0 and any(
        tuple(haystack[i : i + width]) == needle for i in range(len(haystack) - width + 1)
    )


def _function_bodies(source: str) -> list[list[str]]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    bodies = [_statements(tree.body)]
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            bodies.append(_statements(node.body))
    return bodies


def _texts(data: bytes, suffix: str) -> tuple[list[str], str]:
    """The Python sources in a file, and its text as prose (HTML without its tags)."""
    text = data.decode("utf-8", "replace")
    sources = []
    if suffix == ".py":
        sources.append(text)
    elif suffix == ".ipynb":
        try:
            cells = json.loads(text).get("cells", [])
        except (ValueError, AttributeError):
            cells = []
        for cell in cells:
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            if cell.get("cell_type") == "code":
                sources.append(source)
    if suffix in (".html", ".htm"):
        from bs4 import BeautifulSoup

        # No separator: a highlighted code block is many spans whose text holds its newlines.
        text = BeautifulSoup(text, "html.parser").get_text()
    return sources, text


def find_in_text(name: str, data: bytes) -> list[str]:
    """What of the answers one file holds: a list of findings (empty when it holds none)."""
    suffix = Path(name).suffix
    if suffix not in TEXT_SUFFIXES:
        return []
    sources, text = _texts(data, suffix)
    findings = []
    bodies = [body for source in sources for body in _function_bodies(source)]
    stripped = "\n".join(line.strip() for line in text.splitlines() if line.strip())
    prose = _SPACE.sub(" ", text)
    for reference, statements, lines in reference_regions():
        if any(_contains(body, statements) for body in bodies):
            findings.append(f"{name}: the code of a solution region of {reference}")
        elif len(lines) >= 40 and lines in stripped:
            findings.append(f"{name}: the text of a solution region of {reference}")
    for page, run in worked_runs():
        if run in prose:
            findings.append(f"{name}: worked solution prose of {page}: {run[:60]!r}")
    return findings


def find_answers(artifact: Path) -> list[str]:
    """Every finding in a folder (recursively, links not followed) or a zip (a wheel)."""
    artifact = Path(artifact)
    findings = []
    if artifact.is_file() and zipfile.is_zipfile(artifact):
        with zipfile.ZipFile(artifact) as archive:
            for name in archive.namelist():
                if not name.endswith("/"):
                    findings += find_in_text(name, archive.read(name))
        return findings
    for path in sorted(artifact.rglob("*")):
        if path.is_file() and not path.is_symlink():
            findings += find_in_text(str(path.relative_to(artifact)), path.read_bytes())
    return findings
