"""The grader's own process: bounded and inert reports, a failure boundary per submission,
clean-up of whatever a submission left, and limits that measure the submission's own use."""

from __future__ import annotations

import csv
import errno
import json
import os
import subprocess
import sys
from unittest import mock

import pytest
from _grading_helpers import (
    BUGGY_GAE,
    REPO,
    copy_reference,
    hostile_source,
    non_root_runner,
    private_tempdir,
    recording_tokens,
    requires_user_mode,
)

from rlfound.grading import load_exercises
from rlfound.grading.intake import files, text
from rlfound.grading.output import report
from rlfound.grading.sandbox import Limits, Worker, cgroups, runtime
from rlfound.grading.scoring.batch import grade_batch
from rlfound.grading.scoring.grader import Grader
from rlfound.grading.scoring.results import CheckResult, SubmissionResult

EXERCISE = load_exercises()["gae-recursion"]
CONTROL = [chr(c) for c in (*range(0, 9), *range(11, 32), 127, 0x9B, 0x202E, 0x2028)]


def hostile_text(size: int) -> str:
    """Text that is as long, as wide and as unsafe as it gets."""
    return ('\ud800\x1b[2J"\\😀\r' + "".join(CONTROL)) * (size // 10 + 1)


def worst_result(exercise) -> SubmissionResult:
    message = text.clean(hostile_text(100_000), text.MESSAGE_CHARS)
    checks = [
        CheckResult(c.name, 0.0, c.points, False, message, c.public, c.description)
        for c in exercise.checks
    ]
    return SubmissionResult(
        "name",
        None,
        checks,
        text.clean(hostile_text(100_000), text.ERROR_CHARS),
        text.clean(hostile_text(100_000), text.OUTPUT_CHARS),
        notes=tuple(text.clean(hostile_text(9999), text.NOTE_CHARS) for _ in range(20)),
        file_name=text.clean(hostile_text(9999), text.NAME_CHARS),
    )


def test_student_text_is_capped_and_inert():
    cleaned = text.clean(hostile_text(10_000), 500)
    assert 490 <= len(cleaned) <= 500 and cleaned.endswith(text.CUT)
    assert not any(c in cleaned for c in CONTROL) and "\ud800" not in cleaned
    assert "\\x1b" in cleaned and "\\ud800" in cleaned and "😀" in cleaned
    assert text.clean("keeps\nnew lines\tand tabs", 100) == "keeps\nnew lines\tand tabs"
    assert text.csv_cell("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert text.clean(object(), 10) == "<object>"


@pytest.mark.parametrize("exercise_id", sorted(load_exercises()))
def test_no_report_exceeds_its_documented_size(tmp_path, exercise_id):
    """The worst a submission can do to its reports: every piece of text at its cap, made of
    the widest characters and the ones JSON escapes."""
    exercise = load_exercises()[exercise_id]
    result = worst_result(exercise)
    report.write_submission(tmp_path, exercise, result)  # raises if over the limit
    limit = report.max_report_bytes(exercise)
    for name in ("results.json", "feedback.md"):
        data = (tmp_path / name).read_bytes()
        assert len(data) <= limit
        decoded = data.decode("utf-8")
        assert not any(c in decoded for c in CONTROL)
    assert json.loads((tmp_path / "results.json").read_text())["score"] == 0
    # The README's figure: under 100 KiB plus 9 KiB per automatic check.
    assert limit <= 100 * 1024 + 9 * 1024 * len(exercise.checks)
    sheet = report.grades_csv([c.name for c in exercise.checks], [result])
    assert not any(c in sheet.replace("\n", "") for c in CONTROL)


def _batch(tmp_path, names):
    folder = tmp_path / "class"
    for name in names:
        copy_reference(folder, name)
    return [folder]


def test_one_submission_cannot_end_the_batch(tmp_path, monkeypatch):
    """A grader failure on one submission (a bug, a full disk, a report that cannot be
    written) is that submission's zero with the reason; every other row is graded."""
    grader = Grader(EXERCISE, seed=1, mode="default")
    original_grade, original_write = Grader.grade, report.write_submission

    def grade(self, submission):
        if submission.name == "crashes":
            raise RuntimeError("a bug in the grader \ud800\x1b[2J")
        return original_grade(self, submission)

    def mkdtemp(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    def write_submission(folder, exercise, result):
        if result.name == "unwritable":
            raise OSError(errno.ENOSPC, "No space left on device")
        return original_write(folder, exercise, result)

    monkeypatch.setattr(Grader, "grade", grade)
    monkeypatch.setattr(report, "write_submission", write_submission)
    paths = _batch(tmp_path, ["ana", "crashes", "unwritable", "zoe"])
    (tmp_path / "class" / "full.py").write_text(BUGGY_GAE)
    original_init = Worker.__init__

    def init(self, source, name, **options):
        if name == "full":  # the disk that holds the temporary folders is full
            import tempfile

            with (
                mock.patch.object(tempfile, "mkdtemp", mkdtemp),
                mock.patch.object(runtime, "worker_folder", mkdtemp),
            ):
                return original_init(self, source, name, **options)
        return original_init(self, source, name, **options)

    monkeypatch.setattr(Worker, "__init__", init)
    results = {r.name: r for r in grade_batch(grader, paths, tmp_path / "out", jobs=2)}
    monkeypatch.undo()
    assert sorted(results) == ["ana", "crashes", "full", "unwritable", "zoe"]
    assert results["ana"].score == results["zoe"].score == results["unwritable"].score == 11
    assert results["crashes"].score == 0 and "a bug in the grader" in results["crashes"].error
    assert results["full"].score == 0 and "No space left" in results["full"].grader_error
    assert "its reports could not be written" in results["unwritable"].grader_error
    with open(tmp_path / "out" / "grades.csv", newline="") as sheet:
        rows = {row["submission"]: row for row in csv.DictReader(sheet)}
    assert rows["crashes"]["score"] == "0" and "\\x1b" in rows["crashes"]["note"]
    assert rows["full"]["note"].startswith("the grader could not prepare a worker")
    assert (
        rows["unwritable"]["score"] == "11"
        and "reports could not be written" in (rows["unwritable"]["note"])
    )


def test_a_grader_failure_makes_the_command_fail(tmp_path, monkeypatch, capsys):
    from rlfound.cli import main

    def mkdtemp(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    copy_reference(tmp_path / "class", "ana")
    import tempfile

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    argv = ["grade", "gae-recursion", str(tmp_path / "class"), "--out", str(tmp_path / "out")]
    assert main([*argv, "--mode", "default"]) == 1
    assert "the grader failed on 1 submission(s)" in capsys.readouterr().err
    assert "No space left" in (tmp_path / "out" / "grades.csv").read_text()


def test_a_grade_sheet_that_cannot_be_written_fails_the_command(tmp_path, capsys):
    from rlfound.cli import main

    copy_reference(tmp_path / "class", "ana")
    (tmp_path / "out" / "grades.csv").mkdir(parents=True)  # in the way of the grade sheet
    argv = ["grade", "gae-recursion", str(tmp_path / "class"), "--out", str(tmp_path / "out")]
    assert main([*argv, "--mode", "default"]) == 1
    assert "the class's grade sheet could not be written" in capsys.readouterr().err


def test_a_check_may_not_take_a_column_of_the_grade_sheet():
    import dataclasses

    from rlfound.grading.authoring.spec import Answer

    column = Answer(name="note", function="gae_recursive", kwargs={}, expected=0.0)
    with pytest.raises(ValueError, match=r"columns of grades\.csv"):
        dataclasses.replace(EXERCISE, checks=[*EXERCISE.checks, column]).validate()


def test_a_link_where_a_report_goes_is_replaced_not_followed(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "ana").symlink_to(elsewhere, target_is_directory=True)
    grader = Grader(EXERCISE, seed=1, mode="default")
    grade_batch(grader, _batch(tmp_path, ["ana"]), out)
    assert list(elsewhere.iterdir()) == []
    assert (out / "ana").is_dir() and not (out / "ana").is_symlink()


def _deep_tree(root, depth=3000):
    """A chain of folders deeper than Python's recursion limit and PATH_MAX, with FIFOs,
    links (to / and to themselves) and folders without any permission on the way."""
    os.mkdir(root)
    descriptor = os.open(root, os.O_RDONLY)
    closed = []
    try:
        for level in range(depth):
            os.mkdir("d", dir_fd=descriptor)
            if level % 400 == 0:
                os.mkfifo("fifo", dir_fd=descriptor)
                os.symlink("/", "root-link", dir_fd=descriptor)
                os.symlink("loop", "loop", dir_fd=descriptor)
            inner = os.open("d", os.O_RDONLY, dir_fd=descriptor)
            if level % 900 == 1:
                closed.append(descriptor)
            else:
                os.close(descriptor)
            descriptor = inner
        for parent in closed:
            os.chmod("d", 0, dir_fd=parent)
    finally:
        os.close(descriptor)
        for parent in closed:
            os.close(parent)


def test_remove_tree_removes_whatever_a_submission_left(tmp_path):
    root = tmp_path / "work"
    _deep_tree(root)
    files.remove_tree(root)
    assert not root.exists()
    files.remove_tree(root)  # already gone: fine
    assert os.path.exists("/")  # the links to / were removed, not followed


@pytest.mark.slow
def test_remove_tree_as_an_unprivileged_user(tmp_path):
    """The owner of a tree without permissions (not root, who may bypass them) removes it."""
    prefix, reason = non_root_runner()
    if prefix is None:
        pytest.skip(reason)
    import tempfile

    from _grading_helpers import chown_tree

    shared = tempfile.mkdtemp(prefix="rlfound-test-")
    try:
        os.chmod(shared, 0o755)
        code = (
            "import os, sys\n"
            f"sys.path.insert(0, {str(REPO)!r})\n"
            f"sys.path.insert(0, {str(REPO / 'tests' / 'grading')!r})\n"
            "from test_grading_robust import _deep_tree\n"
            "from rlfound.grading.intake.files import remove_tree\n"
            f"_deep_tree({shared + '/work'!r})\n"
            f"os.chmod({shared + '/work'!r}, 0)\n"
            f"remove_tree({shared + '/work'!r})\n"
            f"print(os.path.exists({shared + '/work'!r}), os.getuid())\n"
        )
        chown_tree(shared)
        completed = subprocess.run(
            [*prefix, sys.executable, "-I", "-c", code],
            capture_output=True,
            text=True,
            check=False,
            cwd=shared,
        )
        assert completed.returncode == 0, completed.stderr[-2000:]
        exists, uid = completed.stdout.split()
        assert exists == "False" and uid != "0"
    finally:
        files.remove_tree(shared)


def test_no_temporary_folder_is_left(tmp_path):
    """Even by a submission that leaves a deep chain of folders without permissions."""
    source = hostile_source("deep_chain")
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "deep_chain.py").write_text(source)
    grader = Grader(EXERCISE, seed=1, mode=Grader(EXERCISE).mode)
    with private_tempdir(tmp_path / "tmp") as tmp:
        (result,) = grade_batch(grader, [tmp_path / "class"], tmp_path / "out")
        left = sorted(p.name for p in tmp.iterdir() if p.name.startswith("rlfound-grade-"))
    assert result.score == 11 and result.grader_error is None
    assert left == []


SLEEPY = """
import time

def nap(seconds):
    time.sleep(seconds)
    return 1.0

def busy(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return 1.0
"""


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["default", Grader(EXERCISE).mode])
def test_the_time_limit_counts_the_submissions_cpu(mode):
    """A check may wait (a busy machine, a sleep) for as long as the wall-clock backstop
    allows; it is its own CPU time that is limited."""
    with Worker(SLEEPY, "sleepy", mode=mode, limits=Limits(timeout=1.0, wall_timeout=60)) as worker:
        worker.start()
        assert worker.load() is None
        assert worker.call([("nap", [2.0])]) == [{"ok": True, "value": 1.0}]  # 2 s > 1 s
        with pytest.raises(Exception, match="used more than 1 s of CPU time"):
            worker.call([("busy", [30.0])])
    with Worker(SLEEPY, "sleepy", mode=mode, limits=Limits(timeout=1.0, wall_timeout=3)) as worker:
        worker.start()
        assert worker.load() is None
        with pytest.raises(Exception, match=r"timed out after 3 s \(wall clock\)"):
            worker.call([("nap", [60.0])])


FORK = """
import os, time

def spawn(count):
    pids = []
    for _ in range(count):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        pids.append(pid)
    return len(pids)

def hold(megabytes):
    block = bytearray(megabytes * 2**20)
    for at in range(0, len(block), 4096):
        block[at] = 1
    return len(block)
"""


@pytest.mark.skipif(
    not cgroups.available(), reason="this user cannot create control groups on this machine"
)
@pytest.mark.parametrize("mode", ["default", Grader(EXERCISE).mode])
def test_a_control_group_per_submission(mode):
    """Where the kernel gives control groups, a submission's processes together are held to
    the process and memory limits, and its group is gone once it is done."""
    limits = Limits(timeout=5.0, processes=20, memory=300 * 2**20)
    with (
        recording_tokens() as started,
        Worker(FORK, "forks", mode=mode, limits=limits, block_processes=False) as worker,
    ):
        worker.start()
        assert worker.load() is None
        assert worker.box is not None
        assert {"memory", "pids"} <= set(worker.box.controllers)
        folders = [group.path for group in worker.box.dirs.values()]
        (reply,) = worker.call([("spawn", [50])])
        assert reply["ok"] and reply["value"] < 20
        assert len(worker.box.pids()) <= 20
        with pytest.raises(Exception, match=r"out of memory|killed"):
            worker.call([("hold", [600])])
    assert started
    assert not any(folder.exists() for folder in folders)


@requires_user_mode
def test_each_concurrent_worker_has_its_own_user():
    limits = Limits(timeout=5.0)
    workers = [Worker("x = 1\n", f"w{n}", mode="user", limits=limits) for n in range(3)]
    try:
        users = {worker.account.uid for worker in workers}
        assert len(users) == 3 and 0 not in users
    finally:
        for worker in workers:
            worker.close()
