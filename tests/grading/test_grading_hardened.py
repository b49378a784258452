"""The grader, hardened: one class of attacks and odd-but-valid files, graded in one batch with
honest neighbors, in every mode this machine supports, by the real command.

The class (``gae-recursion``, 11 points) holds

* honest work that must keep full marks: the reference, a file with a byte-order mark, a
  notebook with a ``?`` in a docstring, ``%%bash`` and ``%%writefile`` cells, magics and two
  cells that raise, a notebook holding a lone surrogate, a file whose name carries an escape
  sequence, files named ``grades.csv.py`` and ``skipped.csv.py``, and a correct but slow
  submission (0.1 s of CPU per call) graded next to one that starts forty busy processes;
* work that must earn exactly nothing: the starter, all zeros, and a look-alike of a
  classmate's file name (``alice!.py``) that must not take her row;
* text attacks (lone surrogates in what is raised and printed, a traceback with huge
  identifiers, terminal escape sequences), which must cost only the attacked check and leave
  every report small, inert and encodable;
* file-system entries made at run time (links to the reference and to its folder, a FIFO, a
  socket, a folder named like a submission, a folder thousands of levels deep), which are
  never read and are reported with the reason;
* in the modes with kernel isolation, process attacks through primitives that raise no audit
  event: a daemon that rewrites every report for a minute (during grading and after the grader
  has exited), forty busy processes in their own sessions, processes that fill 2.4 GiB, SIGKILL
  sent through process file descriptors and to every process (``kill -1``), and reads of the
  reference, of a classmate's file, of the grader's command line, after switching the audit
  hook off through its own state.

After the command exits, each mode's test checks the rows and scores, the reasons, the
reports' sizes and contents, that no worker process and no temporary folder is left, and that
nothing changes the results afterward (it waits, then compares the bytes).

Modes: ``strong`` (bubblewrap; as root its workers run as worker users), ``user`` (the root
fallback: bubblewrap made unavailable with ``RLFOUND_NO_BWRAP=1``, ``--mode auto``), the root
fallback without control groups (``RLFOUND_NO_CGROUPS=1``, as in Gradescope's containers), the same
class graded by an unprivileged test user (whatever ``auto`` gives that user here), and
``default`` (no kernel isolation, so without the process attacks: the README says plainly
that its Python-level checks catch mistakes, not adversaries). A mode the machine does not
support is skipped with the reason.
"""

from __future__ import annotations

import csv
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from _grading_helpers import (
    REPO,
    chown_tree,
    hostile_source,
    non_root_runner,
    orphaned_worker_processes,
    processes_of_user,
    requires_bwrap,
    requires_user_mode,
)

from rlfound.grading import load_exercises
from rlfound.grading.authoring.starter import starter_source
from rlfound.grading.intake import files
from rlfound.grading.output import report
from rlfound.grading.sandbox import NO_BWRAP_VARIABLE
from rlfound.grading.sandbox.cgroups import NO_CGROUPS_VARIABLE

#: Every test here grades a whole class, 10 to 35 seconds each: left out of make test-fast.
pytestmark = pytest.mark.slow

EXERCISE = load_exercises()["gae-recursion"]
FULL = EXERCISE.max_score
REFERENCE = (REPO / "solutions" / "gae_recursion.py").read_text()
TIMEOUT = "3"  # CPU seconds per check; the wall-clock backstop is 3 * 3 + 5 = 14 s
MEMORY = "1024"  # MiB for all of a submission's processes
ESCAPE_NAME = "\x1b[2Jevil"
#: Depth of the folder chain in the submissions folder (deeper than Python's recursion limit;
#: removed after each test, since pytest's own clean-up of old temporary folders recurses).
DEEP = 1200

#: name in grades.csv -> (expected score, checks that must fail); None: at most the score.
HONEST = {
    "reference": (FULL, set()),
    "bom": (FULL, set()),
    "notebook": (FULL, set()),
    "alice": (FULL, set()),
    "slow_neighbor": (FULL, set()),
    "surrogate_notebook": (FULL, set()),
    "deep_chain": (FULL, set()),
    "starter": (0, None),
    "zeros": (0, None),
    "surrogate_error": (FULL - 1, {"recursive-edges"}),
    "escape_sequences": (FULL - 1, {"recursive-edges"}),
    "huge_identifiers": (0, None),
}
#: Process attacks, run where the kernel isolates submissions: (at most, must fail).
ADVERSARIAL = {
    "detached_rewriter": (FULL, set()),
    "spinners": (5, {"recursive-edges", "forms-agree"}),
    "memory_hogs": (FULL - 1, {"recursive-edges"}),
    "signals": (FULL - 1, {"recursive-edges"}),
    "reach_out": (FULL - 1, {"recursive-edges"}),
}
#: Entries that are not regular files: a zero row, and the reason in the note.
NOT_READ = {
    "linked": "a symbolic link",
    "relative_link": "a symbolic link",
    "linkdir": "a symbolic link",
    "fifo": "a FIFO",
    "sock": "a socket",
    "bob": "a folder",
    # A student's folder of 1200 nested folders and no file: read down to the cap only.
    "deep": "has no file for gae-recursion",
}
#: Entries listed in skipped.csv.
SKIPPED = {"/d": "nested deeper than", "notes.txt": "not a .py, .ipynb or .zip file"}


def odd_notebook() -> str:
    """A correct notebook as students write them: markdown, cell magics, line magics, help
    syntax, a docstring line ending in '?', and cells that raise before the definitions."""
    notebook = nbformat.v4.new_notebook()
    # A docstring line that ends in '?' is not IPython's help syntax.
    code = REFERENCE.replace("Remember that ``0 ** 0 == 1``", "Is ``0 ** 0 == 1``?\n", 1)
    assert code != REFERENCE
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# My GAE"),
        nbformat.v4.new_code_cell("%%bash\necho 'not python'"),
        nbformat.v4.new_code_cell("%%writefile helper.py\nprint('not run')"),
        nbformat.v4.new_code_cell("import a_missing_optional_module"),
        nbformat.v4.new_code_cell("assert 1 + 1 == 3, 'a failed assert'"),
        nbformat.v4.new_code_cell(code + "\n%matplotlib inline\n!pip install nothing\n"),
        nbformat.v4.new_code_cell("gae_recursive?\n%timeit 1 + 1"),
    ]
    return nbformat.writes(notebook)


def surrogate_notebook() -> str:
    """A correct notebook whose cell holds a lone surrogate (valid JSON: an escape)."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(REFERENCE + '\nLABEL = "\ud800"\n')]
    return json.dumps(nbformat.from_dict(notebook), ensure_ascii=True)


def build_class(folder: Path, out_dir: Path, *, adversarial: bool) -> dict[str, tuple]:
    """Write the class into ``folder``; return the expected (score, failing checks) by name."""
    folder.mkdir(parents=True)
    expected = dict(HONEST)
    names = [n for n in HONEST if n not in ("reference", "bom", "notebook", "alice", "starter")]
    if adversarial:
        names += list(ADVERSARIAL)
        expected.update(ADVERSARIAL)
    for name in [n for n in names if n != "surrogate_notebook"]:
        text = hostile_source(name)
        text = text.replace("__REPO__", str(REPO)).replace("__OUT_DIR__", str(out_dir))
        text = text.replace("__SUBMISSIONS__", str(folder))
        (folder / f"{name}.py").write_text(text)
    (folder / "reference.py").write_text(REFERENCE)
    (folder / "alice.py").write_text(REFERENCE)
    (folder / "bom.py").write_bytes(b"\xef\xbb\xbf" + REFERENCE.encode())
    (folder / "notebook.ipynb").write_text(odd_notebook())
    (folder / "surrogate_notebook.ipynb").write_text(surrogate_notebook())
    (folder / "starter.py").write_text(starter_source(EXERCISE))
    # Look-alikes and reserved names: they must not take a classmate's row or the sheets'.
    (folder / "alice!.py").write_text(starter_source(EXERCISE))
    (folder / "grades.csv.py").write_text(REFERENCE)
    (folder / "skipped.csv.py").write_text(REFERENCE)
    (folder / f"{ESCAPE_NAME}.py").write_text(REFERENCE)
    # Entries that are not regular files.
    solution = EXERCISE.solution_path
    (folder / "linked.py").symlink_to(solution)
    (folder / "relative_link.py").symlink_to(os.path.relpath(solution, folder))
    (folder / "linkdir.py").symlink_to(solution.parent, target_is_directory=True)
    os.mkfifo(folder / "fifo.py")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "sock.py"))
    server.close()
    (folder / "bob.py").mkdir()
    (folder / "bob.py" / "inside.py").write_text(REFERENCE)
    (folder / "notes.txt").write_text("not a submission")
    deep = folder / "deep"
    deep.mkdir()
    descriptor = os.open(deep, os.O_RDONLY)
    try:
        for _ in range(DEEP):
            os.mkdir("d", dir_fd=descriptor)
            inner = os.open("d", os.O_RDONLY, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = inner
    finally:
        os.close(descriptor)
    for name in ("grades.csv", "skipped.csv", ESCAPE_NAME):
        expected[name] = (FULL, set())
    expected["alice!"] = (0, None)
    for name in NOT_READ:
        expected[name] = (0, None)
    return expected


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


class Batch:
    """One class graded by ``rlfound grade`` in one mode, and what the test saw after."""

    def __init__(self, root: Path, mode: str):
        self.root, self.mode = root, mode
        self.submissions = root / "class"
        self.out = root / "out"
        self.tmp = root / "tmp"
        self.tmp.mkdir(parents=True)

    def remove_deep(self) -> None:
        files.remove_tree(self.submissions / "deep")

    def grade(self, argv_prefix, *, adversarial: bool, env_extra=(), owner=None):
        self.expected = build_class(self.submissions, self.out, adversarial=adversarial)
        self.alice_before = (self.submissions / "alice.py").read_bytes()
        if owner is not None:
            chown_tree(self.root.parent, owner)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": str(self.root),
            "TMPDIR": str(self.tmp),
            # A run of the suite "without bubblewrap" holds for the test user too.
            NO_BWRAP_VARIABLE: os.environ.get(NO_BWRAP_VARIABLE, ""),
            **dict(env_extra),
        }
        command = [*argv_prefix, sys.executable, "-m", "rlfound", "grade", "gae-recursion"]
        command += [str(self.submissions), "--out", str(self.out), "--jobs", "2", "--seed", "5"]
        command += ["--timeout", TIMEOUT, "--memory", MEMORY, "--no-progress"]
        if self.mode in ("strong", "default"):
            command += ["--mode", self.mode]
        start = time.monotonic()
        with subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=self.root,
        ) as process:
            out, err = process.communicate(timeout=900)
        self.completed = subprocess.CompletedProcess(command, process.returncode, out, err)
        self.seconds = time.monotonic() - start
        # What a grader run as root makes for its worker users lives in /tmp (see runtime).
        self.left_in_tmp_of_root = sorted(
            str(p) for p in Path("/tmp").glob(f"rlfound-{process.pid}-*") if not argv_prefix
        )
        self.first = snapshot(self.out)
        time.sleep(3)  # a daemon the grader missed would rewrite the reports now
        self.second = snapshot(self.out)
        self.orphans = orphaned_worker_processes()
        self.user_processes = processes_of_user(owner) if owner is not None else []
        self.left_in_tmp = sorted(os.listdir(self.tmp))
        assert (self.out / "grades.csv").is_file(), self.completed.stderr[-3000:]
        with open(self.out / "grades.csv", newline="", encoding="utf-8") as sheet:
            self.rows = {row["submission"]: row for row in csv.DictReader(sheet)}
        with open(self.out / "skipped.csv", newline="", encoding="utf-8") as sheet:
            self.skipped = {row["entry"]: row["reason"] for row in csv.DictReader(sheet)}
        return self


def by_name(batch: Batch) -> dict[str, dict]:
    """The rows, keyed by the original name (the look-alikes and reserved names are keyed by
    the name their file gives, which their row does not carry)."""
    rows = {}
    for row in batch.rows.values():
        stem = Path(row["file"]).name
        for suffix in (".py", ".ipynb"):
            stem = stem.removesuffix(suffix)
        rows[stem.replace("\\x1b", "\x1b")] = row
    return rows


def check_batch(batch: Batch) -> None:
    completed = batch.completed
    assert completed.returncode == 0, completed.stderr[-3000:]
    rows = by_name(batch)
    # A row for every entry named like a submission, and nothing else.
    assert sorted(rows) == sorted(batch.expected), completed.stderr[-2000:]
    for name, (score, failing) in batch.expected.items():
        row = rows[name]
        got = float(row["score"])
        if name in ADVERSARIAL:
            assert got <= score, (name, row)
        else:
            assert got == score, (name, row, batch.mode)
        for check in failing or ():
            assert row[check] == "0", (name, check, row)
        document = json.loads((batch.out / row["submission"] / "results.json").read_text())
        assert document["score"] == got
    # Names: honest files keep their own; look-alikes and reserved names get another one.
    assert batch.rows["alice"]["score"] == str(int(FULL))
    assert rows["alice!"]["submission"] != "alice"
    assert rows["alice!"]["submission"].startswith("alice-")
    assert rows["alice!"]["file"].endswith("alice!.py")
    for reserved in ("grades.csv", "skipped.csv"):
        assert rows[reserved]["submission"].startswith(f"{reserved}-")
    assert "\x1b" not in rows[ESCAPE_NAME]["file"] and "\\x1b" in rows[ESCAPE_NAME]["file"]
    # Entries that are not regular files: a zero and the reason; the rest in skipped.csv.
    for name, reason in NOT_READ.items():
        assert reason in rows[name]["note"], rows[name]
    for entry, reason in SKIPPED.items():
        assert any(k.endswith(entry) and reason in v for k, v in batch.skipped.items())
    assert "skipped.csv" in completed.stderr
    # Reports: encodable, inert, bounded.
    limit = report.max_report_bytes(EXERCISE)
    control = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]")
    for relative, data in batch.first.items():
        if relative.endswith(".png"):  # the class's score histogram: a picture, of our making
            assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) < 2**20, relative
            continue
        decoded = data.decode("utf-8")  # every report is valid UTF-8
        assert not control.search(decoded), relative
        assert len(data) <= limit, (relative, len(data))
    huge = batch.out / rows["huge_identifiers"]["submission"]
    assert (huge / "results.json").stat().st_size < 64 * 1024
    assert "\\x1b" in (batch.out / "escape_sequences" / "feedback.md").read_text()
    feedback = (batch.out / "notebook" / "feedback.md").read_text()
    assert "%%bash" in feedback and "%%writefile" in feedback
    assert "AssertionError: a failed assert" in feedback
    assert "a_missing_optional_module" in feedback
    # Nothing left behind, nothing changed afterward.
    assert batch.second == batch.first, "the reports changed after the grader exited"
    assert batch.orphans == [] and batch.user_processes == []
    assert batch.left_in_tmp == [] and batch.left_in_tmp_of_root == []
    assert (batch.submissions / "alice.py").read_bytes() == batch.alice_before


@pytest.fixture
def batch_in(tmp_path):
    """A :class:`Batch` factory whose deep folders are removed afterward."""
    made = []

    def make(mode, *, shared=False):
        # A folder other users can reach (pytest's own is root's only), for the test user.
        root = Path(tempfile.mkdtemp(prefix="rlfound-test-")) if shared else tmp_path / mode
        made.append(Batch(root / "batch", mode))
        return made[-1]

    yield make
    for batch in made:
        batch.remove_deep()
        if batch.root.parent != tmp_path:
            files.remove_tree(batch.root.parent)


@requires_bwrap
def test_strong_mode(batch_in):
    batch = batch_in("strong").grade([], adversarial=True)
    assert "strong mode" in batch.completed.stderr
    if os.geteuid() == 0:  # bubblewrap itself runs as the worker users
        assert "as unprivileged worker users" in batch.completed.stderr
    check_batch(batch)


@requires_user_mode
def test_root_fallback(batch_in):
    """Bubblewrap unavailable, the grader root: ``auto`` picks the root fallback."""
    batch = batch_in("auto").grade([], adversarial=True, env_extra={NO_BWRAP_VARIABLE: "1"})
    assert "user mode (root fallback)" in batch.completed.stderr
    check_batch(batch)


@requires_user_mode
def test_root_fallback_without_control_groups(batch_in):
    """As in Gradescope's containers: root, no bubblewrap, no control groups. The worker users
    alone bound the processes; the watchdog measures memory and CPU, and lowers the priority
    of a submission that uses more than one CPU."""
    variables = {NO_BWRAP_VARIABLE: "1", NO_CGROUPS_VARIABLE: "1"}
    batch = batch_in("auto").grade([], adversarial=True, env_extra=variables)
    assert "user mode (root fallback)" in batch.completed.stderr
    assert "no control group" in batch.completed.stderr
    check_batch(batch)


def test_as_a_non_root_user(batch_in):
    """The same class, graded by an unprivileged user with ``--mode auto``."""
    prefix, reason = non_root_runner()
    if prefix is None:
        pytest.skip(reason)
    batch = batch_in("auto", shared=True)
    probe = subprocess.run(
        [*prefix, "bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"],
        capture_output=True,
        check=False,
    )
    # Strong mode for this user where bubblewrap works for it (and is not made unavailable);
    # default mode otherwise.
    kernel = probe.returncode == 0 and os.environ.get(NO_BWRAP_VARIABLE, "") in ("", "0")
    batch.grade(prefix, adversarial=kernel, owner="rlfound-tester")
    assert ("strong mode" if kernel else "default mode") in batch.completed.stderr
    check_batch(batch)


def test_default_mode(batch_in):
    """No kernel isolation: the text, file and odd-file classes only (not the process
    attacks, which default mode does not claim to stop)."""
    batch = batch_in("default").grade([], adversarial=False)
    assert "WARNING: default mode" in batch.completed.stderr
    assert "catch mistakes, not adversaries" in batch.completed.stderr
    check_batch(batch)
