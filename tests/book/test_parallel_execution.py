"""The book's parallel execution (_ext/parallel_execution.py): fresh kernels in the notebook's
folder, failures left to myst-nb, and a cache that empties itself when the library changes.

The whole build with it is tested in tests/book/test_book.py (marker ``book``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tests._book import ROOT
from tests._solutions import load_module

execution = load_module(ROOT / "_ext" / "parallel_execution.py", "_parallel_execution")

NOTEBOOK_HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""


def notebook_json(*sources: str) -> str:
    notebook = new_notebook(
        cells=[new_markdown_cell("# A notebook"), *(new_code_cell(s) for s in sources)],
        metadata={"kernelspec": {"name": "python3", "language": "python", "display_name": "P"}},
    )
    return nbformat.writes(notebook)


@pytest.mark.slow
def test_a_notebook_runs_in_a_fresh_kernel_started_in_its_folder(tmp_path):
    folder = tmp_path / "chapters"
    folder.mkdir()
    (folder / "data.txt").write_text("42", encoding="utf-8")
    result = execution.execute_notebook(
        notebook_json(
            "import os\nprint(os.getcwd())",
            "print(open('data.txt').read(), 'fresh' if 'leftover' not in dir() else 'reused')",
        ),
        str(folder),
        timeout=120,
    )
    assert result["error"] is None
    notebook = nbformat.reads(result["notebook"], as_version=4)
    outputs = [cell.outputs[0]["text"].strip() for cell in notebook.cells[1:]]
    assert outputs == [str(folder), "42 fresh"]
    # One timing per code cell for the report, none left in the notebook that is cached.
    assert [index for index, _, _ in result["cells"]] == [1, 2]
    assert all("execution" not in cell.metadata for cell in notebook.cells)
    # The kernel is a child process that has finished: its CPU time is counted.
    assert result["cpu_seconds"] > 0
    assert result["wall_seconds"] >= max(seconds for _, seconds, _ in result["cells"])


@pytest.mark.slow
def test_a_failing_cell_returns_the_error_and_no_notebook(tmp_path):
    result = execution.execute_notebook(
        notebook_json("x = 1", "raise RuntimeError('cell failed')", "never = 2"),
        str(tmp_path),
        timeout=120,
    )
    assert result["notebook"] is None
    assert "RuntimeError" in result["error"]
    assert "cell failed" in result["error"]


@pytest.mark.slow
def test_the_kernels_own_stderr_is_kept_apart_from_the_notebook_and_the_build_log(tmp_path, capfd):
    """The kernel process's stderr (its logs, here written to file descriptor 2 past
    ipykernel's capture) goes to the result, not to the build's log; what a cell writes to
    sys.stderr is the cell's output, as always."""
    result = execution.execute_notebook(
        notebook_json(
            "import os\nos.write(2, b'ERROR:tornado.general:kernel noise\\n')",
            "import sys\nprint('in the cell', file=sys.stderr)",
        ),
        str(tmp_path),
        timeout=120,
    )
    assert result["error"] is None
    assert "ERROR:tornado.general:kernel noise" in result["kernel_stderr"]
    assert "kernel noise" not in capfd.readouterr().err
    notebook = nbformat.reads(result["notebook"], as_version=4)
    assert notebook.cells[2].outputs[0]["name"] == "stderr"
    assert notebook.cells[2].outputs[0]["text"] == "in the cell\n"


@pytest.fixture
def book(tmp_path, monkeypatch):
    """A notebook, a data file next to it, a page, and an importable package they use."""
    package = tmp_path / "site" / "demo_library"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("SCALE = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    chapters = tmp_path / "book" / "chapters"
    chapters.mkdir(parents=True)
    (chapters / "one.md").write_text(NOTEBOOK_HEADER + "# One\n", encoding="utf-8")
    (chapters / "data.csv").write_text("1,2\n", encoding="utf-8")
    (tmp_path / "book" / "intro.md").write_text("# Intro\n", encoding="utf-8")
    return SimpleNamespace(root=tmp_path / "book", package=package, chapters=chapters)


def test_the_fingerprint_follows_the_library_and_data_but_not_prose(book):
    def current():
        return execution.fingerprint(book.root, packages=("demo_library",))

    first = current()
    assert current() == first
    # Prose, byte code and build output change no notebook's outputs.
    (book.chapters / "one.md").write_text(NOTEBOOK_HEADER + "# One, reworded\n", "utf-8")
    (book.chapters / "__pycache__").mkdir()
    (book.chapters / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (book.root / "_build").mkdir()
    (book.root / "_build" / "page.html").write_text("<p>built</p>", encoding="utf-8")
    assert current() == first
    # The library (imported from outside the book's folder) and the data do.
    (book.package / "__init__.py").write_text("SCALE = 2\n", encoding="utf-8")
    second = current()
    assert second != first
    (book.chapters / "data.csv").write_text("1,3\n", encoding="utf-8")
    assert current() not in (first, second)


def fake_app(book, cache, mode="cache"):
    documents = {"chapters/one": book.chapters / "one.md", "intro": book.root / "intro.md"}
    config = SimpleNamespace(execution_mode=mode, execution_cache_path=str(cache))
    env = SimpleNamespace(
        mystnb_config=config, found_docs=set(documents), doc2path=lambda name: documents[name]
    )
    return SimpleNamespace(env=env, srcdir=str(book.root), outdir=str(book.root / "_build"))


def test_a_stale_cache_is_emptied_and_its_notebooks_read_again(book, monkeypatch):
    monkeypatch.setattr(execution, "_PACKAGES", ("demo_library",))
    cache = book.root / "_build" / ".jupyter_cache"
    app = fake_app(book, cache)
    refresh = execution._refresh_stale_cache

    # First build: no fingerprint yet; the notebook (not the page) is to be read.
    assert refresh(app, app.env, set(), set(), set()) == ["chapters/one"]
    (cache / "an-executed-notebook").write_text("outputs", encoding="utf-8")
    # Nothing changed: the cache is kept and nothing more is read.
    assert refresh(app, app.env, set(), set(), set()) == []
    assert (cache / "an-executed-notebook").is_file()
    # The library changed: the outputs go, and the notebook is read (so executed) again.
    (book.package / "__init__.py").write_text("SCALE = 3\n", encoding="utf-8")
    assert refresh(app, app.env, set(), set(), set()) == ["chapters/one"]
    assert not (cache / "an-executed-notebook").exists()
    # A notebook Sphinx reads anyway is not listed twice.
    (book.chapters / "data.csv").write_text("9\n", encoding="utf-8")
    assert refresh(app, app.env, set(), {"chapters/one"}, set()) == []


def test_without_the_cache_mode_the_extension_does_nothing(book):
    cache = book.root / "_build" / ".jupyter_cache"
    app = fake_app(book, cache, mode="force")
    assert execution._refresh_stale_cache(app, app.env, set(), set(), set()) == []
    assert execution._execute_before_reading(app, app.env, ["chapters/one"]) is None
    assert not cache.exists()


@pytest.mark.slow
def test_the_build_time_benchmark_times_each_notebook(book):
    (book.chapters / "one.md").write_text(
        NOTEBOOK_HEADER + "# One\n\n```{code-cell} ipython3\nprint(open('data.csv').read())\n```\n",
        encoding="utf-8",
    )
    (book.chapters / "two.md").write_text(
        NOTEBOOK_HEADER + "# Two\n\n```{code-cell} ipython3\nraise ValueError('two')\n```\n",
        encoding="utf-8",
    )
    completed = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "build_time.py"),
            *(str(book.chapters / name) for name in ("one.md", "two.md")),
            *("--jobs", "2", "--cells", "0"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 1, completed.stdout + completed.stderr
    lines = completed.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("notebook"))
    rows = [line.split() for line in lines[header + 1 : header + 4]]
    assert [Path(row[0]).name for row in rows[:2]] == ["one.md", "two.md"] or [
        Path(row[0]).name for row in rows[:2]
    ] == ["two.md", "one.md"]
    table = {Path(row[0]).name: row for row in rows[:2]}
    for row in rows:
        assert float(row[1]) > 0 and float(row[2]) > 0  # wall and CPU seconds
    assert rows[2][0] == "total"
    assert table["two.md"][-1] == "FAILED"
    assert table["one.md"][-1] != "FAILED"
    assert "ValueError: two" in completed.stdout
