"""Helpers shared by the grader's tests (imported by name; pytest puts this folder on the path)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import numbers
import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import textwrap
import time
import urllib.request
import zipfile
from pathlib import Path
from unittest import mock

import psutil
import pytest

from rlfound.grading.sandbox import (
    TOKEN_VARIABLE,
    Worker,
    accounts,
    bwrap_works,
    in_namespace,
    runtime,
    user_mode_problem,
)

HOSTILE = Path(__file__).resolve().parent / "hostile"
REPO = Path(__file__).resolve().parents[2]

requires_bwrap = pytest.mark.skipif(
    not bwrap_works(),
    reason="strong mode needs bubblewrap (bwrap) with working namespaces; not available here",
)
requires_user_mode = pytest.mark.skipif(
    user_mode_problem() is not None,
    reason=f"the root fallback (user mode) cannot run here: {user_mode_problem()}",
)

#: The book's solution of gae-recursion with one bug: the recursion forgets gamma.
BUGGY_GAE = (
    (REPO / "solutions" / "gae_recursion.py")
    .read_text()
    .replace("running = delta + gamma * lam * running", "running = delta + lam * running")
)


def _worker_processes():
    """(pid, parent, environ entries) of every live, non-zombie process that carries a worker
    token."""
    marker = f"{TOKEN_VARIABLE}=".encode()
    for pid in psutil.pids():
        if pid == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read().split(b"\0")
            process = psutil.Process(pid)
            if process.status() == psutil.STATUS_ZOMBIE:
                continue
            parent = process.ppid()
        except (OSError, psutil.Error):
            continue
        if any(item.startswith(marker) for item in environ):
            yield pid, parent, environ


@dataclasses.dataclass(frozen=True)
class Started:
    """What identifies one started worker's processes: its token (an environment variable,
    which a child can drop), its user and its PID namespace (which it cannot shed)."""

    token: str
    uid: int | None
    namespace: str | None


def leftover_processes(records, *, settle: float = 5.0) -> list[int]:
    """Processes of the workers started by this test that are still alive, found by token, by
    worker user and by PID namespace.

    A process the grader has killed can take a moment to be gone on a busy machine (the
    kernel first frees its memory, its parent then reaps it), and it runs no code meanwhile:
    one that is still there after ``settle`` seconds was left behind.
    """
    deadline = time.monotonic() + settle
    while (found := _live_processes(records)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def _live_processes(records) -> list[int]:
    records = [r if isinstance(r, Started) else Started(r, None, None) for r in records]
    wanted = {f"{TOKEN_VARIABLE}={r.token}".encode() for r in records if r.token}
    found = {pid for pid, _, environ in _worker_processes() if wanted.intersection(environ)}
    for record in records:
        if record.uid is not None:
            found |= set(accounts.processes_of(record.uid))
        if record.namespace is not None:
            found |= set(in_namespace(record.namespace))
    return sorted(found)


def worker_user_processes(*, orphaned_only: bool = False) -> list[int]:
    """Live processes of any worker user (rlfound-worker-N); with ``orphaned_only``, those
    no grader is above any more (another grader's live workers, on a shared machine, have
    their grader, which is not a worker user, among their ancestors)."""
    uids = {e.pw_uid for e in pwd.getpwall() if e.pw_name.startswith(accounts.PREFIX)}
    found = []
    for uid in uids:
        for pid in accounts.processes_of(uid):
            if orphaned_only and _has_a_grader_above(pid, uids):
                continue
            found.append(pid)
    return found


def _has_a_grader_above(pid: int, worker_uids: set[int]) -> bool:
    try:
        for parent in psutil.Process(pid).parents():
            if parent.pid > 1 and parent.uids().real not in worker_uids:
                return True
    except psutil.Error:
        return False
    return False


def orphaned_worker_processes() -> list[int]:
    """Processes left by a grader run as a separate command: any process of a worker user no
    grader is above, and any process carrying a worker token whose grader is gone (reparented
    or parentless).

    Unlike :func:`leftover_processes` it ignores the live workers of other graders on the
    machine.
    """
    orphans = [
        pid
        for pid, parent, _ in _worker_processes()
        if parent == 1 or not psutil.pid_exists(parent)
    ]
    return sorted(set(orphans) | set(worker_user_processes(orphaned_only=True)))


@contextlib.contextmanager
def recording_tokens():
    """Record every worker started inside the block (a list of :class:`Started`, filled as
    they start)."""
    records: list[Started] = []
    original = Worker.start

    def start(self):
        try:
            original(self)
        finally:
            uid = self.account.uid if self.account is not None else None
            records.append(Started(self.token, uid, self.namespace))

    with mock.patch.object(Worker, "start", start):
        yield records


@contextlib.contextmanager
def private_tempdir(folder: Path):
    """Make the grader's temporary folders in ``folder`` (so a test can see what is left)."""
    import tempfile

    folder.mkdir(parents=True, exist_ok=True)
    with mock.patch.object(tempfile, "tempdir", str(folder)):
        yield folder


# ---------------------------------------------------------------- a non-root user

TEST_USER = "rlfound-tester"


def _first_closed_ancestor(path: Path) -> Path | None:
    """The first folder above ``path`` that other users cannot enter, if any."""
    for folder in [*reversed(path.parents)][1:]:
        if not os.stat(folder).st_mode & stat.S_IXOTH:
            return folder
    return None


@functools.cache
def non_root_runner() -> tuple[list[str] | None, str]:
    """A command prefix that runs a command as an unprivileged test user, and the reason when
    there is none.

    The test user (``rlfound-tester``, a system user without a home) is created if missing.
    Where the interpreter sits in a folder other users cannot enter (``/root/.pyenv``), the
    command runs in a private mount namespace in which that folder is replaced by the grader's
    private root (:mod:`rlfound.grading.sandbox.runtime`), which holds the same interpreter and
    standard library, readable by everyone; nothing changes for the rest of the machine.
    """
    if os.geteuid() != 0:
        return None, "the tests do not run as root, so they cannot switch to another user"
    runuser = shutil.which("runuser") or shutil.which("setpriv")
    if runuser is None:
        return None, "neither runuser nor setpriv is installed"
    try:
        pwd.getpwnam(TEST_USER)
    except KeyError:
        created = subprocess.run(
            [
                "useradd",
                "--system",
                "--user-group",
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/usr/sbin/nologin",
                TEST_USER,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if created.returncode != 0:
            return None, f"the test user cannot be created: {created.stderr.strip()}"
    if Path(runuser).name == "runuser":
        switch = [runuser, "-u", TEST_USER, "--"]
    else:
        entry = pwd.getpwnam(TEST_USER)
        switch = [runuser, f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups"]
    for needed in (REPO, Path(sys.prefix)):
        closed = _first_closed_ancestor(needed / "x")
        if closed is not None:
            return None, f"{closed} is closed to other users, and the checkout is under it"
    closed = _first_closed_ancestor(runtime.interpreter())
    prefix = switch
    if closed is not None:
        try:
            tree = runtime.tree()
        except OSError as error:
            return None, str(error)
        unshare = shutil.which("unshare")
        if unshare is None:
            return None, f"{closed} is closed to other users and unshare is missing"
        script = 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
        prefix = [
            unshare,
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            "sh",
            str(tree.outside(str(closed))),
            str(closed),
            *switch,
        ]
    probe = subprocess.run(
        [*prefix, sys.executable, "-c", "import os, numpy, rlfound.grading; print(os.getuid())"],
        capture_output=True,
        text=True,
        check=False,
        cwd="/",
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"},
    )
    if probe.returncode != 0 or probe.stdout.strip() == "0":
        return None, f"the test user cannot run this interpreter: {probe.stderr.strip()[-300:]}"
    return prefix, ""


def chown_tree(path: Path, user: str = TEST_USER) -> None:
    """Give ``path`` and everything under it to ``user`` (links themselves, never followed)."""
    # chown walks trees of any depth (os.walk recurses).
    subprocess.run(["chown", "-R", "-h", f"{user}:", str(path)], check=True)


def processes_of_user(user: str = TEST_USER) -> list[int]:
    return accounts.processes_of(pwd.getpwnam(user).pw_uid)


#: The line of a hostile fixture that stands for a shared part: ``from _parts.<part> import ...``.
_PART_IMPORT = re.compile(r"^from _parts\.(?P<part>\w+) import [\w, ]+$", re.MULTILINE)


def _part_text(part: str) -> str:
    """The imports and definitions of ``hostile/_parts/<part>.py``, without its docstring."""
    text = (HOSTILE / "_parts" / f"{part}.py").read_text()
    return text[text.index('"""', 3) + 3 :].strip("\n")


def hostile_source(name: str) -> str:
    """The source of the hostile fixture ``hostile/<name>.py`` as a student would submit it.

    A fixture is graded as a self-contained submission, which can import no test code: the
    parts several fixtures share (the honest GAE, the audit-free process start) are written
    once in ``hostile/_parts/`` and spliced in here where the fixture imports them.
    """
    text = (HOSTILE / f"{name}.py").read_text()
    return _PART_IMPORT.sub(lambda match: _part_text(match["part"]), text)


def copy_hostile(names, folder: Path, *, out_dir: Path, marker: Path, fill=None) -> list[Path]:
    """Copy hostile fixtures into ``folder``, filling in the paths they attack (and any other
    placeholder in ``fill``, placeholder -> text)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        text = hostile_source(name)
        text = text.replace("__REPO__", str(REPO))
        text = text.replace("__OUT_DIR__", str(out_dir)).replace("__MARKER__", str(marker))
        for placeholder, value in (fill or {}).items():
            text = text.replace(placeholder, value)
        path = folder / f"{name}.py"
        path.write_text(text)
        paths.append(path)
    return paths


def copy_reference(folder: Path, stem: str, solution: str = "gae_recursion.py") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.py"
    shutil.copyfile(REPO / "solutions" / solution, path)
    return path


def checked_double(folder: Path, checks) -> object:
    """The exercise ``checked-double``: ``double(x)`` with ``checks``, its reference (which
    refuses NaN with a ValueError) written to ``folder/reference.py``."""
    from rlfound.grading.authoring.spec import Exercise, Function

    (folder / "reference.py").write_text(
        "import math\n\ndef double(x):\n"
        "    if math.isnan(x):\n        raise ValueError('x must be a number')\n"
        "    return 2 * x\n"
    )
    return Exercise(
        id="checked-double",
        title="Checked double",
        chapter=1,
        stars=1,
        functions=(Function(name="double", parameters="x"),),
        checks=tuple(checks),
        solution=folder / "reference.py",
    )


def write_instructor_exercise(folder: Path) -> None:
    """An instructor's exercise `double-it` (4 automatic points, 1 by hand) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "double_solution.py").write_text(
        textwrap.dedent(
            '''
            def double(x):
                """Twice x."""
                ### BEGIN SOLUTION
                return 2 * x
                ### END SOLUTION
            '''
        )
    )
    (folder / "double.py").write_text(
        textwrap.dedent(
            """
            from rlfound.grading.authoring.spec import Answer, Compare, Exercise, Function, Manual

            def inputs(rng):
                return [{"x": rng.normal(size=4)} for _ in range(3)]

            EXERCISE = Exercise(
                id="double-it",
                title="Double it",
                chapter=2,
                stars=1,
                solution="double_solution.py",
                functions=[Function(name="double", parameters="x")],
                checks=[
                    Answer(name="two", function="double", kwargs={"x": 1.0}, expected=2.0),
                    Compare(
                        name="random", function="double", inputs=inputs, public=False, points=3
                    ),
                ],
                manual=[Manual(name="why", points=1, description="Explain.")],
            )
            """
        )
    )


def outside_environment() -> dict:
    """The environment of a command run as a teacher outside this checkout would run it: no
    PYTHONPATH, no virtual environment of this checkout on PATH, so that nothing here can be
    imported by accident."""
    hidden = {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV"}
    environment = {k: v for k, v in os.environ.items() if k not in hidden}
    ours = (Path(sys.prefix) / "bin").resolve()
    paths = environment.get("PATH", "/usr/bin:/bin").split(os.pathsep)
    environment["PATH"] = os.pathsep.join(p for p in paths if p and Path(p).resolve() != ours)
    return environment


@functools.cache
def pypi_reachable() -> bool:
    """Whether PyPI answers (tests that install rlfound's requirements need it)."""
    try:
        with urllib.request.urlopen("https://pypi.org/simple/pip/", timeout=15) as response:
            return response.status == 200
    except OSError:
        return False


def require_pypi() -> None:
    """Skip the calling test, with the reason, when PyPI cannot be reached."""
    if not pypi_reachable():
        pytest.skip("PyPI is not reachable from this machine; the test installs packages from it")


def unpack_like_gradescope(bundle: Path, root: Path) -> Path:
    """Lay a bundle out as Gradescope does in ``/autograder``, with ``root`` for /autograder.

    The zip's contents go into ``root/source``, ``run_autograder`` is copied to ``root``,
    and ``submission/`` and ``results/`` are created. Returns ``root/run_autograder``.
    """
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
        # Restore each file's permissions from the zip, as unzip does (zipfile does not).
        for info in archive.infolist():
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                (root / "source" / info.filename).chmod(mode)
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    (root / "results").mkdir()
    return root / "run_autograder"


def run_autograder(script: Path, root: Path, **options) -> subprocess.CompletedProcess:
    """Run ``script`` with ``root`` as the working folder, as Gradescope runs it."""
    return subprocess.run(
        [str(script)],
        cwd=root,
        env=outside_environment(),
        capture_output=True,
        text=True,
        timeout=options.get("timeout", 300),
        check=False,
    )


def requirements_only_venv(root: Path) -> Path:
    """``root/venv``, as ``setup.sh`` leaves it: rlfound's requirements, but not rlfound.

    A virtual environment without pip whose ``.pth`` file adds this environment's
    site-packages. Python adds a ``.pth`` file's folders to ``sys.path`` but does not run the
    ``.pth`` files inside them, so the editable install of rlfound (a ``.pth`` hook) stays out.
    """
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = (venv / "lib").glob("python3*/site-packages")
    (site / "requirements.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    probe = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import numpy, scipy, nbformat, psutil, tqdm, rlfound",
        ],
        cwd=root,
        env=outside_environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert "No module named 'rlfound'" in probe.stderr, probe.stderr
    return venv


def run_cli(capsys, *argv):
    """Run the ``rlfound`` command in-process; return (exit status, stdout, stderr)."""
    from rlfound.cli import main

    try:
        status = main(list(argv))
    except SystemExit as exit_:
        status = exit_.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def gradescope_results(path: Path) -> dict:
    """The ``results.json`` at ``path``, checked to be what Gradescope reads: a JSON object
    with a numeric ``score``, a text ``output`` and a ``tests`` list, each test with a name,
    a score and a maximum (and the top-level score their sum, when there are tests)."""
    assert path.is_file(), f"{path} was not written"
    document = json.loads(path.read_bytes().decode("utf-8"))
    assert isinstance(document, dict)

    def number(value):
        return isinstance(value, numbers.Real) and not isinstance(value, bool)

    assert number(document["score"]) and isinstance(document["output"], str)
    assert isinstance(document["tests"], list)
    for test in document["tests"]:
        assert isinstance(test["name"], str) and number(test["score"])
        assert number(test["max_score"]) and isinstance(test.get("output", ""), str)
    if document["tests"]:
        assert document["score"] == pytest.approx(sum(t["score"] for t in document["tests"]))
    return document
