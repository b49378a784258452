"""``rlfound classpack``: what a teacher hands out, from a checkout.

The pack's chapters are the book's pages as notebooks (every ``listing`` turned into the code
the book shows: a library function as the book's directive reads it, a reference solution as
Sphinx's own literalinclude reader, which the solution pages used before, shows it), its
starters are the starters of ``rlfound starter`` and hold no solution code, the solutions come
only when asked for, a used folder is never overwritten by accident, and the student README's
commands work. The tests marked ``book`` execute a chapter and a solution page from a pack in
a fresh kernel started in the pack's folder. tests/grading/test_grading_install.py makes a
pack from an installed wheel, outside the checkout.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import types
from pathlib import Path

import nbformat
import pytest
import yaml

from rlfound.cli import main
from rlfound.grading import load_exercises
from rlfound.grading.authoring import starter
from rlfound.grading.authoring.spec import BOOK_SOLUTIONS
from rlfound.grading.distribution import classpack
from tests._book import library_listings, solution_listings
from tests._solutions import load_module

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, published separately before Python 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
book_listing = load_module(ROOT / "_ext" / "listing.py", "_book_listing")
EXERCISES = load_exercises()
CHAPTER_PAGES = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))
SOLUTION_PAGES = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.md"))


def write(folder: Path, *options: str) -> int:
    return main(["classpack", "--out", str(folder), *options])


@pytest.fixture(scope="module")
def student_pack(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pack") / "course"
    assert write(folder) == 0
    return folder


@pytest.fixture(scope="module")
def teaching_pack(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pack") / "course"
    assert write(folder, "--with-solutions") == 0
    return folder


def files_of(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def solution_regions(source: str) -> list[list[str]]:
    """The stripped, non-blank lines of each BEGIN/END SOLUTION region of a reference file."""
    regions, current = [], None
    for line in source.splitlines():
        if starter.BEGIN.match(line):
            current = []
        elif starter.END.match(line):
            regions.append([text for text in current if text])
            current = None
        elif current is not None:
            current.append(line.strip())
    return regions


@pytest.mark.slow
def test_a_student_pack_holds_every_chapter_data_file_and_starter(student_pack):
    names = {ex.id.replace("-", "_") for ex in EXERCISES.values()}
    expected = (
        {"README.md", "requirements.txt", "environment.yml"}
        | {f"chapters/{page.stem}.ipynb" for page in CHAPTER_PAGES}
        | {f"chapters/data/{p.name}" for p in (ROOT / "chapters" / "data").iterdir()}
        | {f"exercises/{name}{suffix}" for name in names for suffix in (".py", ".ipynb")}
    )
    assert files_of(student_pack) == expected
    data = ROOT / "chapters" / "data" / "trainer_batch.npz"
    assert (student_pack / "chapters" / "data" / data.name).read_bytes() == data.read_bytes()


@pytest.mark.slow
def test_the_chapters_are_the_books_pages_as_notebooks(student_pack):
    for page in CHAPTER_PAGES:
        notebook = nbformat.read(student_pack / "chapters" / f"{page.stem}.ipynb", as_version=4)
        nbformat.validate(notebook)
        assert notebook.metadata.kernelspec.name == "python3"
        assert "jupytext" not in notebook.metadata
        code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
        text = page.read_text(encoding="utf-8")
        # Every code cell of the page, in order, and nothing else (its options become metadata).
        cells = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", text, re.S)
        assert code == [
            re.sub(r"\A(?:---\n.*?\n---\n|(?:[ \t]*:[\w-]+:.*\n)*)", "", body, flags=re.S).strip(
                "\n"
            )
            for body in cells
        ]
        assert all(not cell.get("outputs") for cell in notebook.cells if "outputs" in cell)
        assert "{literalinclude}" not in nbformat.writes(notebook)
        assert "{listing}" not in nbformat.writes(notebook)


def sphinx_listing(object_path: str, options: dict[str, str]) -> str:
    """What Sphinx's literalinclude shows of a reference solution, as the solution pages
    asked it before they had ``{listing}``: the object, from the line after its BEGIN
    SOLUTION marker (``:solution:``) and dedented, or whole (``:verbatim:``, which leaves
    out the SOLUTION markers, the grader's, which Sphinx showed)."""
    from sphinx.directives.code import LiteralIncludeReader

    _, module, name = object_path.split(".")
    include = {"pyobject": name}
    if "solution" in options:
        include |= {"start-after": "### BEGIN SOLUTION", "dedent": None}
    config = types.SimpleNamespace(source_encoding="utf-8-sig")
    path = BOOK_SOLUTIONS / f"{module}.py"
    text, _ = LiteralIncludeReader(str(path), include, config).read()
    if "verbatim" in options:
        markers = ("### BEGIN SOLUTION", "### END SOLUTION")
        text = "".join(line for line in text.splitlines(True) if line.strip() not in markers)
    return text.rstrip("\n")


@pytest.mark.slow
@pytest.mark.parametrize("page", CHAPTER_PAGES + SOLUTION_PAGES, ids=lambda p: p.stem)
def test_every_listing_is_the_code_the_book_shows(page, teaching_pack):
    folder = "chapters" if page.parent.name == "chapters" else classpack.SOLUTIONS
    notebook = nbformat.read(teaching_pack / folder / f"{page.stem}.ipynb", as_version=4)
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    library, solutions = library_listings(page), solution_listings(page)
    assert library or solutions, f"{page.name} shows no listing"
    for object_path in library:
        # The book's {listing} directive reads the same function the same way (_ext/listing.py).
        shown = book_listing.read_listing(object_path).code.rstrip("\n")
        assert f"```python\n{shown}\n```" in markdown, (page.name, object_path)
    for object_path, options in solutions:
        block = f"```python\n{sphinx_listing(object_path, options)}\n```"
        if "caption" in options:
            block = f"*{yaml.safe_load(options['caption'])}*\n\n{block}"
        assert block in markdown, (page.name, object_path, options)


@pytest.mark.slow
def test_the_starters_are_the_starters(student_pack):
    for exercise in EXERCISES.values():
        name = exercise.id.replace("-", "_")
        source = (student_pack / "exercises" / f"{name}.py").read_text(encoding="utf-8")
        assert source == starter.starter_source(exercise)
        assert starter.exercise_of(source) == exercise.id
        assert "raise NotImplementedError" in source
        notebook = (student_pack / "exercises" / f"{name}.ipynb").read_text(encoding="utf-8")
        assert notebook == starter.starter_notebook(exercise)


def pack_lines(folder: Path) -> str:
    """Every non-blank line of a pack's text files, stripped; a notebook's from its cells."""
    lines = []
    for name in sorted(files_of(folder)):
        if name.endswith(".npz"):
            continue
        text = (folder / name).read_text(encoding="utf-8")
        if name.endswith(".ipynb"):
            cells = nbformat.reads(text, as_version=4).cells
            text = "\n".join(cell.source for cell in cells)
        lines += [line.strip() for line in text.splitlines() if line.strip()]
    return "\n".join(lines)


def long_solution_regions() -> list[tuple[str, str]]:
    """Each reference file's solution regions of more than 40 characters, as stripped lines."""
    return [
        (reference.name, "\n".join(region))
        for reference in sorted(BOOK_SOLUTIONS.glob("*.py"))
        for region in solution_regions(reference.read_text(encoding="utf-8"))
        if len("".join(region)) > 40
    ]


@pytest.mark.slow
def test_a_student_pack_holds_no_solution_text(student_pack):
    regions = long_solution_regions()
    assert len(regions) >= len(EXERCISES)
    lines = pack_lines(student_pack)
    for name, region in regions:
        assert region not in lines, (name, region[:200])
    assert "BEGIN SOLUTION" not in lines and "{solution}" not in lines
    assert not (student_pack / classpack.SOLUTIONS).exists()


@pytest.mark.slow
def test_the_solution_text_check_finds_the_teaching_packs_solutions(teaching_pack):
    lines = pack_lines(teaching_pack)
    assert all(region in lines for _, region in long_solution_regions())


@pytest.mark.slow
def test_a_teaching_pack_adds_the_solutions_in_their_own_folder(student_pack, teaching_pack):
    added = files_of(teaching_pack) - files_of(student_pack)
    references = {p.name for p in BOOK_SOLUTIONS.glob("*.py") if p.name != "__init__.py"}
    assert added == {
        f"{classpack.SOLUTIONS}/{name}"
        for name in {"README.md"} | references | {f"{p.stem}.ipynb" for p in SOLUTION_PAGES}
    }
    for name in references:
        shipped = (teaching_pack / classpack.SOLUTIONS / name).read_bytes()
        assert shipped == (BOOK_SOLUTIONS / name).read_bytes()
    # The student files are the same, but for the chapters' links to the teaching team's
    # folder (a student's chapter shows the link text alone); the README also names it.
    to_solutions = re.compile(rf"\[([^\[\]\n]*)\]\(\.\./{classpack.SOLUTIONS}/[^)\n]*\)")
    linked = 0
    for name in files_of(student_pack) - {"README.md"}:
        teaching, student = (teaching_pack / name).read_bytes(), (student_pack / name).read_bytes()
        if name.startswith("chapters/") and name.endswith(".ipynb"):
            teaching, student = (nbformat.reads(n, as_version=4) for n in (teaching, student))
            for ours in teaching.cells:
                linked += len(to_solutions.findall(ours.source))
                ours.source = to_solutions.sub(r"\1", ours.source)
        assert teaching == student, name
    assert linked >= len(SOLUTION_PAGES)
    readme = (teaching_pack / "README.md").read_text(encoding="utf-8")
    assert f"`{classpack.SOLUTIONS}/`" in readme and "teaching team only" in readme
    assert classpack.SOLUTIONS not in (student_pack / "README.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_used_folder_is_never_overwritten_without_force(tmp_path, capsys):
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(SystemExit) as stopped:
        write(folder)
    assert stopped.value.code == 2
    assert "argument --out" in capsys.readouterr().err
    assert files_of(folder) == {"notes.txt"}
    file = tmp_path / "file"
    file.write_text("x")
    with pytest.raises(SystemExit) as stopped:
        write(file, "--force")
    assert stopped.value.code == 2 and file.read_text() == "x"
    # An empty folder is fine.
    (tmp_path / "empty").mkdir()
    assert write(tmp_path / "empty") == 0


@pytest.mark.slow
def test_force_replaces_the_pack_and_keeps_the_rest(tmp_path, student_pack):
    folder = tmp_path / "course"
    assert write(folder, "--with-solutions") == 0
    (folder / "notes.txt").write_text("mine")
    (folder / "exercises" / "stale.py").write_text("old")
    assert write(folder, "--force") == 0
    assert files_of(folder) == files_of(student_pack) | {"notes.txt"}
    assert (folder / "notes.txt").read_text() == "mine"


def bash_blocks(readme: str) -> list[list[str]]:
    return [
        [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
        for block in re.findall(r"```bash\n(.*?)```", readme, re.S)
    ]


@pytest.mark.slow
def test_the_student_readme_commands(student_pack):
    """The README's commands name files of the pack and do what it says they do."""
    readme = (student_pack / "README.md").read_text(encoding="utf-8")
    commands = [command for block in bash_blocks(readme) for command in block]
    version = __import__("importlib.metadata").metadata.version("rlfound")
    assert f"pip install rlfound-{version}-py3-none-any.whl -r requirements.txt" in commands
    # What that installs, and the conda file installs the same through pip.
    lines = (student_pack / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert "--find-links ." in lines  # the wheel may sit in the pack's folder
    requirements = [line for line in lines if not line.startswith(("#", "--"))]
    book_extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (matplotlib,) = [r for r in book_extra["optional-dependencies"]["book"] if "matplotlib" in r]
    assert requirements == [f"rlfound=={version}", matplotlib, "jupyterlab"]
    environment = yaml.safe_load((student_pack / "environment.yml").read_text(encoding="utf-8"))
    assert environment["dependencies"][-1] == {"pip": ["--find-links .", *requirements]}
    assert "conda env create -f environment.yml" in readme
    # cd chapters, then open a chapter there.
    at = commands.index("cd chapters")
    opened = shlex.split(commands[at + 1])
    assert opened[:2] == ["jupyter", "lab"]
    assert (student_pack / "chapters" / opened[2]).is_file()
    # The self-check: the untouched starter fails its public checks, saying why.
    (check,) = [shlex.split(c) for c in commands if c.startswith("rlfound check")]
    assert (student_pack / check[2]).is_file()
    completed = subprocess.run(
        [sys.executable, "-m", "rlfound", *check[1:], "--mode", "default"],
        cwd=student_pack,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr
    assert "FAIL" in completed.stdout and "PASS" not in completed.stdout
    assert "NotImplementedError" in completed.stdout
    for exercise in EXERCISES.values():
        assert f"`{exercise.id.replace('-', '_')}.py`" in readme


def execute(notebook_path: Path) -> nbformat.NotebookNode:
    """Execute a notebook of a pack in a fresh kernel started in the notebook's folder."""
    from nbclient import NotebookClient

    notebook = nbformat.read(notebook_path, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell("import os; print(os.getcwd())"))
    NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(notebook_path.parent)}},
    ).execute()
    assert notebook.cells[-1].outputs[0]["text"].strip() == str(notebook_path.parent)
    return notebook


@pytest.mark.slow
@pytest.mark.book
def test_a_chapter_that_reads_data_runs_from_the_pack(student_pack):
    notebook = execute(student_pack / "chapters" / "12_estimator_diagnostics.ipynb")
    assert any(
        output.get("output_type") == "display_data"
        for c in notebook.cells
        for output in c.get("outputs", [])
    )


@pytest.mark.slow
@pytest.mark.book
def test_a_solution_notebook_runs_from_the_teaching_folder(teaching_pack):
    execute(teaching_pack / classpack.SOLUTIONS / "12_estimator_diagnostics.ipynb")
