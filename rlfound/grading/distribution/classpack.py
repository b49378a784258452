"""A class pack: what a teacher hands out for a course, written by ``rlfound classpack``.

::

    DIR/README.md            how to install, run the notebooks and self-check (for students)
    DIR/requirements.txt     what the README installs; DIR/environment.yml the same for conda
    DIR/chapters/            every chapter as a Jupyter notebook (.ipynb)
    DIR/chapters/data/       the data files the chapters read (by relative path)
    DIR/exercises/           every code exercise's starter, as .py and as .ipynb
    DIR/solutions-teaching-team-only/   with ``with_solutions``: the worked solutions as
                             notebooks and the reference solution of every code exercise

The chapters and the solution pages are the book's MyST Markdown notebooks, the chapters
shipped in the students' wheel as ``rlfound.chapters`` (``pyproject.toml`` maps the book's
folder into the package), the solution pages in the teaching team's ``rlfound_instructor``
or a checkout's ``solutions/`` (:data:`~rlfound.grading.authoring.spec.BOOK_SOLUTIONS`),
converted with jupytext, and their Markdown converted from MyST to plain Markdown
(:mod:`rlfound.grading.distribution.plain`): boxes, numbered cross-references, citations and
the code of every ``listing`` (a library function, or a reference solution read from that
folder) read in any Jupyter without an extension. Cross-references link to the pack's own
notebooks. The starters are those of ``rlfound starter``, so a pack never holds solution code
unless asked to.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

from rlfound.grading.authoring import public
from rlfound.grading.authoring.spec import BOOK_SOLUTIONS, Exercise
from rlfound.grading.distribution import plain
from rlfound.grading.output.atomic import write_atomic_bytes

__all__ = [
    "CHAPTERS",
    "ENVIRONMENT",
    "EXERCISES",
    "PACK_ENTRIES",
    "README",
    "REQUIREMENTS",
    "SOLUTIONS",
    "book",
    "book_bibliography",
    "book_chapters",
    "notebook_of_page",
    "occupied",
    "pack_files",
    "requirements",
    "write_pack",
]

#: The pack's folders (and its README), the only entries ``force`` replaces in a used folder.
CHAPTERS = "chapters"
EXERCISES = "exercises"
SOLUTIONS = "solutions-teaching-team-only"
README = "README.md"
REQUIREMENTS = "requirements.txt"
ENVIRONMENT = "environment.yml"
PACK_ENTRIES = (README, REQUIREMENTS, ENVIRONMENT, CHAPTERS, EXERCISES, SOLUTIONS)


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


def book_bibliography() -> Path:
    """The book's ``references.bib``: in the wheel next to the chapters (setup.py copies it
    there), in a checkout at the book's root."""
    shipped = book_chapters() / "references.bib"
    return shipped if shipped.is_file() else book_chapters().parent / "references.bib"


def book() -> plain.Book:
    """The pages of this installation's book (the solutions where the teaching team's
    package or a checkout has them), for converting its notebooks."""
    folders = {"chapters": book_chapters()}
    if BOOK_SOLUTIONS.is_dir():
        folders["solutions"] = BOOK_SOLUTIONS
    # The solution pages' {listing} solutions.<file>.<object> reads the reference solutions
    # here: the checkout's solutions/ or the teaching team's package (the book's listing_roots).
    roots = {"solutions": folders["solutions"]} if "solutions" in folders else {}
    return plain.load_book(folders, book_bibliography(), roots)


def notebook_of_page(
    path: Path,
    page_folder: str,
    *,
    notebooks: Mapping[str, str] | None = None,
    book_url: str | None = None,
) -> str:
    """A page of the book (a MyST Markdown notebook) as ``.ipynb`` JSON text, unexecuted, its
    Markdown converted to plain Markdown (:mod:`~rlfound.grading.distribution.plain`).

    ``page_folder`` is the page's folder in the book (``chapters`` or ``solutions``).
    ``notebooks`` maps the book's pages to the notebooks the reader has (paths relative to
    one folder; by default each page's ``.ipynb`` beside its source), which cross-references
    link to; with ``book_url`` they link to the book's pages there instead.

    Raises
    ------
    ValueError
        If a directive or role has no plain Markdown form (a ``listing`` that cannot be
        read, or a ``literalinclude``, among others).
    """
    import jupytext
    import nbformat

    the_book = book()
    page = f"{page_folder}/{path.stem}"
    if notebooks is None:
        notebooks = {name: f"{name}.ipynb" for name in the_book.pages}
    notebook = jupytext.reads(path.read_text(encoding="utf-8"), fmt="md:myst")
    # A plain notebook: no pairing with a text file, which a student does not have.
    notebook.metadata.pop("jupytext", None)
    for number, cell in enumerate(notebook.cells):
        # Fixed cell ids: the same book gives byte-identical notebooks.
        cell["id"] = f"{path.stem}-{number}"
    plain.plain_notebook(notebook, page, the_book, plain.linker(page, notebooks, book_url))
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
it) with what `{REQUIREMENTS}` lists (Matplotlib for the figures, JupyterLab):

```bash
python3 -m venv rlfound-env
. rlfound-env/bin/activate
pip install rlfound-{version}-py3-none-any.whl -r {REQUIREMENTS}
```

With the wheel in this folder, `pip install -r {REQUIREMENTS}` alone does the same, and with
conda, `conda env create -f {ENVIRONMENT}` makes the same environment. The notebooks are
plain Jupyter notebooks: any Jupyter front end shows their text, equations and figures.

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


def requirements() -> list[str]:
    """What a student installs to run the pack's notebooks: this rlfound, Matplotlib (at the
    version the book's figures need, read from rlfound's own metadata) and JupyterLab."""
    version = metadata.version("rlfound")
    declared = [
        line.split(";")[0].strip()
        for line in metadata.requires("rlfound") or []
        if line.startswith("matplotlib")
    ]
    return [f"rlfound=={version}", *(declared[:1] or ["matplotlib"]), "jupyterlab"]


#: pip looks for the rlfound wheel in the folder it runs in (the pack's) before any index.
_FIND_LINKS = "--find-links ."


def _requirements_file() -> str:
    lines = "".join(f"{line}\n" for line in requirements())
    return (
        f"# pip install -r {REQUIREMENTS}, from this folder: the rlfound wheel your teacher\n"
        f"# hands out may sit here, next to this file.\n{_FIND_LINKS}\n{lines}"
    )


def _environment() -> str:
    lines = "\n".join(f"      - {line}" for line in (_FIND_LINKS, *requirements()))
    return f"""# conda env create -f {ENVIRONMENT}: the environment of {README}, through pip.
name: rlfound
channels:
  - conda-forge
dependencies:
  - python>=3.10
  - pip
  - pip:
{lines}
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
    chapter_pages = sorted(book_chapters().glob("[0-9][0-9]_*.md"))
    files: dict[str, bytes] = {}

    def add(name: str, text: str) -> None:
        if name in files:
            raise ValueError(f"two files of the class pack would be {name}")
        files[name] = text.encode("utf-8")

    add(README, _readme(chapter_pages, ordered, with_solutions))
    add(REQUIREMENTS, _requirements_file())
    add(ENVIRONMENT, _environment())
    solution_pages = sorted(BOOK_SOLUTIONS.glob("[0-9][0-9]_*.md")) if with_solutions else []
    # Cross-references link to the notebooks of the pack: the solutions only in its
    # teaching team's folder.
    notebooks = {f"chapters/{page.stem}": f"{CHAPTERS}/{page.stem}.ipynb" for page in chapter_pages}
    notebooks |= {
        f"solutions/{page.stem}": f"{SOLUTIONS}/{page.stem}.ipynb" for page in solution_pages
    }
    for page in chapter_pages:
        add(
            f"{CHAPTERS}/{page.stem}.ipynb", notebook_of_page(page, "chapters", notebooks=notebooks)
        )
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
        for page in solution_pages:
            notebook = notebook_of_page(page, "solutions", notebooks=notebooks)
            add(f"{SOLUTIONS}/{page.stem}.ipynb", notebook)
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
    (``README.md``, the two environment files, ``chapters/``, ``exercises/``,
    ``solutions-teaching-team-only/``; so a
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
