"""A class pack: what a teacher hands out for a course, written by ``rlfound classpack``.

::

    DIR/README.md            how to install, run the notebooks and self-check (for students)
    DIR/chapters/            every chapter as a Jupyter notebook (.ipynb)
    DIR/chapters/data/       the data files the chapters read (by relative path)
    DIR/exercises/           every code exercise's starter, as .py and as .ipynb
    DIR/solutions-teaching-team-only/   with ``with_solutions``: the worked solutions as
                             notebooks and the reference solution of every code exercise

The chapters and the solution pages are the book's MyST Markdown notebooks, shipped in the
wheel as ``rlfound.chapters`` and next to ``rlfound.solutions`` (``pyproject.toml`` maps the
book's folders into the package), converted with jupytext. A ``literalinclude`` or ``listing``
directive, which Jupyter cannot resolve, becomes the code it shows (a ``listing`` through the
book's own reader, :mod:`rlfound._listing`); the starters are those of
``rlfound starter``, so a pack never holds solution code unless asked to.
"""

from __future__ import annotations

import ast
import importlib.util
import posixpath
import re
import shutil
import textwrap
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

from rlfound._listing import find_definition, read_listing
from rlfound.grading.authoring import public
from rlfound.grading.authoring.spec import BOOK_SOLUTIONS, Exercise
from rlfound.grading.output.atomic import write_atomic_bytes

__all__ = [
    "CHAPTERS",
    "EXERCISES",
    "PACK_ENTRIES",
    "README",
    "SOLUTIONS",
    "book_chapters",
    "notebook_of_page",
    "occupied",
    "pack_files",
    "python_object_lines",
    "write_pack",
]

#: The pack's folders (and its README), the only entries ``force`` replaces in a used folder.
CHAPTERS = "chapters"
EXERCISES = "exercises"
SOLUTIONS = "solutions-teaching-team-only"
README = "README.md"
PACK_ENTRIES = (README, CHAPTERS, EXERCISES, SOLUTIONS)

_LITERALINCLUDE = re.compile(
    r"^(?P<fence>`{3,}|~{3,})\{literalinclude\}[ \t]+(?P<path>\S+)[ \t]*\n"
    r"(?P<options>(?:[ \t]*:[\w-]+:.*\n)*)"
    r"(?P=fence)[ \t]*$",
    re.MULTILINE,
)
_SUPPORTED_OPTIONS = {"language", "pyobject", "start-after", "end-before", "dedent", "caption"}
_LISTING = re.compile(
    r"^(?P<fence>`{3,}|~{3,})\{listing\}[ \t]+(?P<object>\S+)[ \t]*\n"
    r"(?P<options>(?:[ \t]*:[\w-]+:.*\n)*)"
    r"(?P=fence)[ \t]*$",
    re.MULTILINE,
)
# Line numbers and highlighting are the web page's; a notebook's code block has neither.
_LISTING_OPTIONS = {"caption", "linenos", "lineno-start", "emphasize-lines"}


def _book_folder(package: str, folder: str) -> Path:
    """The folder of a book directory mapped into the package (``chapters``, ``solutions``)."""
    found = importlib.util.find_spec(package)
    if found is not None and found.submodule_search_locations:
        return Path(next(iter(found.submodule_search_locations))).resolve()
    # A checkout used without installing it (PYTHONPATH=.): the folder sits next to rlfound.
    return Path(__file__).resolve().parents[3] / folder


def book_chapters() -> Path:
    """The folder of the book's chapters: the subpackage ``rlfound.chapters``."""
    return _book_folder("rlfound.chapters", "chapters")


def _book_file(page_folder: str, relative: str) -> Path:
    """Resolve a path written in a page of the book (``../rlfound/x.py`` in chapters/) to the
    file in this installation: the book's root folders are the package's folders."""
    path = posixpath.normpath(posixpath.join(page_folder, relative))
    top, _, rest = path.partition("/")
    roots = {
        "rlfound": Path(__file__).resolve().parents[2],
        "chapters": book_chapters(),
        "solutions": BOOK_SOLUTIONS,
    }
    if top not in roots or not rest:
        raise ValueError(f"literalinclude: {relative!r} in {page_folder}/ is outside the book")
    return roots[top] / rest


def python_object_lines(source: str, name: str) -> list[str]:
    """The lines of a class or function (``Class.method`` for nested ones) in ``source``, its
    decorators included, as Sphinx's ``:pyobject:`` option shows them.

    Raises
    ------
    ValueError
        If ``source`` defines no such object.

    Examples
    --------
    >>> code = "x = 1\\n\\n@cache\\ndef f(y):\\n    return y\\n\\nz = 2\\n"
    >>> python_object_lines(code, "f")
    ['@cache', 'def f(y):', '    return y']
    """
    node = ast.parse(source)
    for part in name.split("."):
        node = find_definition(node, part)
        if node is None:
            raise ValueError(f"pyobject: no class or function {name!r} in the source")
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return source.splitlines()[start - 1 : node.end_lineno]


def _directive_options(match: re.Match) -> dict:
    """A directive's ``:name: value`` lines, read as MyST does (YAML: values may be quoted)."""
    import yaml

    block = "\n".join(
        line.strip()[1:].replace(":", ": ", 1) for line in match["options"].splitlines()
    )
    return yaml.safe_load(block) or {}


def _listed(match: re.Match) -> str:
    """The Markdown code block that a ``listing`` directive stands for, as the book shows it."""
    options = _directive_options(match)
    unknown = sorted(set(options) - _LISTING_OPTIONS)
    if unknown:
        raise ValueError(f"listing: unsupported option(s) {unknown} for {match['object']}")
    shown = read_listing(match["object"])
    fence = "`" * max(3, len(match["fence"]))
    code = f"{fence}python\n{shown.code.rstrip()}\n{fence}"
    caption = options.get("caption")
    return f"*{caption}*\n\n{code}" if caption else code


def _included(page_folder: str, match: re.Match) -> str:
    """The Markdown code block that a ``literalinclude`` directive stands for."""
    options = _directive_options(match)
    unknown = sorted(set(options) - _SUPPORTED_OPTIONS)
    if unknown:
        raise ValueError(f"literalinclude: unsupported option(s) {unknown} for {match['path']}")
    text = _book_file(page_folder, match["path"]).read_text(encoding="utf-8")
    if "pyobject" in options:
        lines = python_object_lines(text, str(options["pyobject"]))
    else:
        lines = text.splitlines()
    # Sphinx's order: the object, then start-after and end-before, then dedent.
    if "start-after" in options:
        marker = str(options["start-after"])
        found = [i for i, line in enumerate(lines) if marker in line]
        if not found:
            raise ValueError(f"literalinclude: start-after {marker!r} not in {match['path']}")
        lines = lines[found[0] + 1 :]
    if "end-before" in options:
        marker = str(options["end-before"])
        found = [i for i, line in enumerate(lines) if marker in line]
        if not found:
            raise ValueError(f"literalinclude: end-before {marker!r} not in {match['path']}")
        lines = lines[: found[0]]
    if "dedent" in options:
        if options["dedent"] is None:  # no width: remove the common indentation
            lines = textwrap.dedent("\n".join(lines)).splitlines()
        else:
            lines = [line[int(options["dedent"]) :] for line in lines]
    fence = "`" * max(3, len(match["fence"]))
    code = f"{fence}{options.get('language') or ''}\n" + "\n".join(lines) + f"\n{fence}"
    caption = options.get("caption")
    return f"*{caption}*\n\n{code}" if caption else code


def notebook_of_page(path: Path, page_folder: str) -> str:
    """A page of the book (a MyST Markdown notebook) as ``.ipynb`` JSON text, unexecuted.

    ``page_folder`` is the page's folder in the book (``chapters`` or ``solutions``), against
    which its ``literalinclude`` paths are resolved.

    Raises
    ------
    ValueError
        If a ``literalinclude`` or ``listing`` directive cannot be turned into the code it
        shows.
    """
    import jupytext
    import nbformat

    notebook = jupytext.reads(path.read_text(encoding="utf-8"), fmt="md:myst")
    # A plain notebook: no pairing with a text file, which a student does not have.
    notebook.metadata.pop("jupytext", None)
    for number, cell in enumerate(notebook.cells):
        # Fixed cell ids: the same book gives byte-identical notebooks.
        cell["id"] = f"{path.stem}-{number}"
        if cell.cell_type != "markdown":
            continue
        cell.source = _LITERALINCLUDE.sub(lambda m: _included(page_folder, m), cell.source)
        cell.source = _LISTING.sub(_listed, cell.source)
        for directive in ("{literalinclude}", "{listing}"):
            if directive in cell.source:
                raise ValueError(
                    f"{path.name}: a {directive[1:-1]} directive the class pack cannot read "
                    "(write its options as ':name: value' lines)"
                )
    nbformat.validate(notebook)
    return nbformat.writes(notebook) + "\n"


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem


def _starter_name(exercise: Exercise) -> str:
    return exercise.id.replace("-", "_")


def _readme(chapters: list[Path], exercises: list[Exercise], with_solutions: bool) -> str:
    version = metadata.version("rlfound")
    first = _starter_name(exercises[0]) if exercises else "EXERCISE"
    chapter_lines = "\n".join(f"- `{path.stem}.ipynb`: {_title(path)}" for path in chapters)
    exercise_lines = "\n".join(
        f"- `{_starter_name(e)}.py` / `.ipynb`: {e.title} (chapter {e.chapter}, "
        f"{'★' * e.stars}, {e.max_score:g} points"
        + (f" and {e.manual_points:g} graded by hand" if e.manual else "")
        + ")"
        for e in exercises
    )
    teaching = (
        f"\n**For the teaching team only:** `{SOLUTIONS}/` holds the worked solutions as "
        "notebooks and the reference solution of every code exercise. Remove it before you "
        "hand this folder to students (or write a student pack without `--with-solutions`).\n"
        if with_solutions
        else ""
    )
    return f"""# RL Foundations: class pack

The chapters of *RL Foundations* as Jupyter notebooks, and the starters of its code
exercises (rlfound {version}).
{teaching}
## Set up once

You need Python 3.10 or newer. Make a virtual environment and install `rlfound` (version
{version}, from the wheel your teacher hands out or from wherever your course publishes
it), Matplotlib for the figures, and JupyterLab:

```bash
python3 -m venv rlfound-env
. rlfound-env/bin/activate
pip install rlfound-{version}-py3-none-any.whl matplotlib jupyterlab
```

Chapters are written in MyST Markdown: `pip install jupyterlab-myst` makes JupyterLab render
their cross-references and boxes as the book does (optional).

## Run a chapter

Start Jupyter from the `chapters` folder: the notebooks read their data from `data/` by a
relative path.

```bash
cd chapters
jupyter lab 01_foundations.ipynb
```

Run the cells from the top (Run → Run All Cells). The chapters:

{chapter_lines}

## Do an exercise and check it yourself

Each code exercise has a starter in `exercises/`, as a Python file and as a notebook: replace
every `raise NotImplementedError` with your code, then run the public checks from a terminal
(in the environment above):

```bash
rlfound check exercises/{first}.py
```

It prints PASS or FAIL for each check, with what to fix, and the points you have. Grading adds
checks on inputs you have not seen; derivations are graded by hand. A notebook is checked the
same way (`rlfound check exercises/{first}.ipynb`): only its code cells run.

{exercise_lines}
"""


def _teaching_readme() -> str:
    return f"""# Solutions: for the teaching team only

The worked solutions of every chapter as notebooks, and the reference solution of every code
exercise (the `.py` files; the starters in `../{EXERCISES}/` are generated from them). Run the
notebooks from this folder: they import the reference solutions next to them.

Do not hand this folder to students.
"""


def pack_files(exercises: Mapping[str, Exercise], *, with_solutions: bool) -> dict[str, bytes]:
    """Every file of a class pack: its path relative to the pack folder, and its bytes.

    Raises
    ------
    ValueError
        If a page cannot be converted or two exercises' files would share a name.
    """
    ordered = sorted(exercises.values(), key=lambda e: (e.chapter, e.stars, e.id))
    chapter_pages = sorted(book_chapters().glob("*.md"))
    files: dict[str, bytes] = {}

    def add(name: str, text: str) -> None:
        if name in files:
            raise ValueError(f"two files of the class pack would be {name}")
        files[name] = text.encode("utf-8")

    add(README, _readme(chapter_pages, ordered, with_solutions))
    for page in chapter_pages:
        add(f"{CHAPTERS}/{page.stem}.ipynb", notebook_of_page(page, "chapters"))
    data = book_chapters() / "data"
    for path in sorted(data.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            files[f"{CHAPTERS}/data/{path.relative_to(data).as_posix()}"] = path.read_bytes()
    for exercise in ordered:
        name = _starter_name(exercise)
        add(f"{EXERCISES}/{name}.py", public.public_starter(exercise))
        add(f"{EXERCISES}/{name}.ipynb", public.public_starter_notebook(exercise))
    if with_solutions:
        add(f"{SOLUTIONS}/{README}", _teaching_readme())
        for page in sorted(BOOK_SOLUTIONS.glob("*.md")):
            add(f"{SOLUTIONS}/{page.stem}.ipynb", notebook_of_page(page, "solutions"))
        references = {p for p in BOOK_SOLUTIONS.glob("*.py") if p.name != "__init__.py"}
        references |= {exercise.solution_path for exercise in ordered}
        for path in sorted(references):
            add(f"{SOLUTIONS}/{path.name}", path.read_text(encoding="utf-8"))
    return files


def occupied(folder: Path) -> bool:
    """Whether ``folder`` exists and is not an empty folder."""
    return folder.is_symlink() or (
        folder.exists() and (not folder.is_dir() or any(folder.iterdir()))
    )


def write_pack(
    folder: str | Path,
    exercises: Mapping[str, Exercise],
    *,
    with_solutions: bool = False,
    force: bool = False,
) -> dict[str, bytes]:
    """Write a class pack into ``folder`` and return its files (as :func:`pack_files`).

    Every file is made before the first is written, so a pack that cannot be made writes
    nothing. In a folder that is not empty, ``force`` replaces the pack's own entries
    (``README.md``, ``chapters/``, ``exercises/``, ``solutions-teaching-team-only/``; so a
    pack written again without solutions loses those of an earlier one) and leaves any other.

    Raises
    ------
    FileExistsError
        If ``folder`` is not an empty folder and ``force`` is false, or is not a folder.
    ValueError
        As :func:`pack_files`.
    """
    folder = Path(folder)
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise FileExistsError(f"{folder} exists and is not a folder")
    if occupied(folder) and not force:
        raise FileExistsError(f"{folder} is not empty; pass --force to replace the pack in it")
    files = pack_files(exercises, with_solutions=with_solutions)
    for entry in PACK_ENTRIES:
        path = folder / entry
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
    for name, data in files.items():
        write_atomic_bytes(folder / name, data)
    return files
