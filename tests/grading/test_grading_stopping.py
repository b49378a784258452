"""A grader stopped by SIGTERM or SIGINT cleans up as at a normal exit.

Each test starts the real command (``rlfound grade`` on a class, ``rlfound check``, or
Gradescope's runner) as a subprocess on a submission that sleeps while it is imported, waits
until the worker of that submission runs, sends the signal and waits for the command to
exit. Then the status is the conventional ``128 + N``; no process of that run's workers is
left (found by token, worker user and PID namespace); no private root, no worker folder and
no other temporary folder of that run remains; and no worker user owns a file the run made
in the temporary folders. What was graded before the signal stays: its reports are complete,
and ``grades.csv`` is not written (never half of it). In every mode this machine supports.
"""

from __future__ import annotations

import os
import pwd
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from _grading_helpers import (
    REPO,
    Started,
    gradescope_results,
    hostile_source,
    leftover_processes,
    recording_tokens,
    requires_bwrap,
    requires_user_mode,
)

from rlfound.grading import load_exercises
from rlfound.grading.sandbox import NO_BWRAP_VARIABLE, TOKEN_VARIABLE, Limits, accounts, stopping
from rlfound.grading.scoring.batch import grade_batch
from rlfound.grading.scoring.grader import Grader

#: Every test starts a grader and waits for a worker: left out of make test-fast.
pytestmark = pytest.mark.slow

EXERCISE = "gae-recursion"
REFERENCE = (REPO / "solutions" / "gae_recursion.py").read_text()
SLEEPER = hostile_source("sleep_at_import")
#: Hang guard of one command, in seconds (it stops within a few once signaled).
HANG = 300

#: Modes as (name, extra arguments of grade and check, environment): the root fallback is
#: the grader without bubblewrap, as in the README.
MODES = [
    pytest.param(("strong", ["--mode", "strong"], {}), id="strong", marks=requires_bwrap),
    pytest.param(
        ("user", ["--mode", "auto"], {NO_BWRAP_VARIABLE: "1"}), id="user", marks=requires_user_mode
    ),
    pytest.param(("default", ["--mode", "default"], {}), id="default"),
]
SIGNALS = [pytest.param(s, id=s.name) for s in (signal.SIGTERM, signal.SIGINT)]


def _environment(tmp: Path, extra: dict) -> dict:
    environment = {k: v for k, v in os.environ.items() if k != NO_BWRAP_VARIABLE}
    tmp.mkdir()
    environment.update(extra, TMPDIR=str(tmp), PYTHONPATH=str(REPO))
    return environment


def _default_signals() -> None:
    # A child inherits ignored signals (a background job of a script): the command under test
    # would then rightly leave them ignored. Start it as an interactive shell would.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)


def _workers(pid: int) -> dict[int, Started]:
    """The processes below ``pid`` that carry a worker token, as :class:`Started` records."""
    found = {}
    try:
        below = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return found
    marker = f"{TOKEN_VARIABLE}=".encode()
    for process in below:
        try:
            with open(f"/proc/{process.pid}/environ", "rb") as handle:
                environ = handle.read().split(b"\0")
            uid = process.uids().real
            pwd.getpwuid(uid)
            namespace = os.readlink(f"/proc/{process.pid}/ns/pid")
            command = " ".join(process.cmdline())
        except (OSError, KeyError, psutil.Error):
            continue
        tokens = [item[len(marker) :].decode() for item in environ if item.startswith(marker)]
        if tokens:
            # Only a worker user tracks a run's processes (not root, not the test user),
            worker = pwd.getpwuid(uid).pw_name.startswith(accounts.PREFIX)
            # And only bubblewrap's namespace, not the machine's.
            own = namespace if namespace != os.readlink("/proc/self/ns/pid") else None
            found[process.pid] = (Started(tokens[0], uid if worker else None, own), command)
    return found


def stop_while_sleeping(command, environment, signum, ready=lambda: True):
    """Run ``command``, send ``signum`` once the sleeper's worker runs and ``ready()`` holds
    (SIGINT twice, as an impatient user does); return the finished process, its stderr, and
    the workers seen."""
    process = subprocess.Popen(
        command,
        env=environment,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_signals,
    )
    records: dict[int, Started] = {}
    deadline = time.monotonic() + HANG
    try:
        while True:
            assert process.poll() is None, process.stderr.read()
            assert time.monotonic() < deadline, "no worker of the sleeper started"
            seen = _workers(process.pid)
            records.update({pid: record for pid, (record, _) in seen.items()})
            if any("sleeper" in command for _, command in seen.values()) and ready():
                break
            time.sleep(0.1)
        process.send_signal(signum)
        if signum == signal.SIGINT:
            # An impatient second Ctrl-C must not cut the clean-up the first one started.
            time.sleep(0.3)
            process.send_signal(signum)
        _, err = process.communicate(timeout=HANG)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process, err, list(records.values())


def _owned(roots: list[Path], uids: set[int], since: float, depth: int = 6) -> list[str]:
    """Entries under ``roots`` (``depth`` levels, links not followed) that a user of ``uids``
    owns and that changed since ``since`` (older ones are another run's)."""
    found, pending = [], [(root, 0) for root in roots]
    while pending:
        folder, level = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_uid in uids and info.st_ctime >= since:
                found.append(entry.path)
            if stat.S_ISDIR(info.st_mode) and level < depth:
                pending.append((Path(entry.path), level + 1))
    return found


def assert_cleaned_up(process, records, tmp: Path, since: float) -> None:
    assert records, "no worker was seen"
    assert leftover_processes(records) == []
    # The private root's base folder (runtime.base: named after the grader's process id, in
    # the first temporary folder every user may pass through) and the workers' folders.
    bases = [
        p for d in (tmp, Path("/tmp"), Path("/var/tmp")) for p in d.glob(f"rlfound-{process.pid}-*")
    ]
    assert bases == []
    assert sorted(p.name for p in tmp.iterdir()) == []
    uids = {r.uid for r in records if r.uid is not None}
    if uids:
        assert _owned([tmp, Path("/tmp")], uids, since) == []


@pytest.mark.parametrize("signum", SIGNALS)
@pytest.mark.parametrize("mode", MODES)
def test_a_stopped_batch_cleans_up_and_keeps_what_was_graded(tmp_path, mode, signum):
    _, arguments, extra = mode
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    (folder / "a_reference.py").write_text(REFERENCE)
    for number in (1, 2, 3):
        (folder / f"sleeper_{number}.py").write_text(SLEEPER)
    command = [sys.executable, "-m", "rlfound", "grade", EXERCISE, str(folder), "--out", str(out)]
    command += ["--jobs", "2", "--timeout", "10", "--no-progress", *arguments]
    since = time.time() - 1
    process, err, records = stop_while_sleeping(
        command,
        _environment(tmp_path / "tmp", extra),
        signum,
        ready=lambda: (out / "a_reference" / "results.json").is_file(),
    )
    assert process.returncode == 128 + signum, err
    assert_cleaned_up(process, records, tmp_path / "tmp", since)
    graded = int(re.search(rf"stopped by {signum.name} after (\d+) submission", err)[1])
    # The reports of what was graded before, whole; nothing for what was not; no grade sheet.
    folders = sorted(p.name for p in out.iterdir())
    assert "a_reference" in folders and len(folders) == graded < 4, err
    assert gradescope_results(out / "a_reference" / "results.json")["score"] == 11
    for name in folders:
        # gae-recursion has parts graded by hand, so each report has its manual.md too.
        reports = sorted(p.name for p in (out / name).iterdir())
        assert reports == ["feedback.md", "manual.md", "results.json"]
        gradescope_results(out / name / "results.json")
    assert not (out / "grades.csv").exists() and not (out / "skipped.csv").exists()
    assert not (out / "checks.csv").exists() and not (out / "summary.md").exists()


@pytest.mark.parametrize("mode", MODES)
def test_a_stopped_check_cleans_up(tmp_path, mode):
    _, arguments, extra = mode
    sleeper = tmp_path / "sleeper.py"
    sleeper.write_text(SLEEPER)
    command = [sys.executable, "-m", "rlfound", "check", str(sleeper), "--exercise", EXERCISE]
    command += ["--timeout", "10", *arguments]
    since = time.time() - 1
    process, err, records = stop_while_sleeping(
        command, _environment(tmp_path / "tmp", extra), signal.SIGINT
    )
    assert process.returncode == 130, err
    assert "stopped by SIGINT" in err
    assert_cleaned_up(process, records, tmp_path / "tmp", since)


@pytest.mark.parametrize("signum", SIGNALS)
@pytest.mark.parametrize("mode", [m for m in MODES if m.id != "default"])
def test_a_stopped_gradescope_runner_cleans_up_and_says_so(tmp_path, mode, signum):
    """Gradescope's runner picks its mode itself (as root: strong, or the root fallback)."""
    _, _, extra = mode
    if os.geteuid() != 0:
        pytest.skip("Gradescope runs its autograder as root; these tests do not run as root")
    upload = tmp_path / "submission"
    upload.mkdir()
    (upload / "sleeper.py").write_text(SLEEPER)
    results = tmp_path / "results" / "results.json"
    command = [sys.executable, "-m", "rlfound.grading.distribution.gradescope"]
    command += ["--exercise", EXERCISE, "--timeout", "10", "--submission-dir", str(upload)]
    command += ["--results", str(results)]
    since = time.time() - 1
    process, err, records = stop_while_sleeping(
        command, _environment(tmp_path / "tmp", extra), signum
    )
    assert process.returncode == 128 + signum, err
    assert_cleaned_up(process, records, tmp_path / "tmp", since)
    document = gradescope_results(results)
    assert document["score"] == 0
    assert f"The autograder was stopped ({signum.name})" in document["output"]


def test_an_interrupted_batch_grades_nothing_more_and_can_grade_again(tmp_path):
    """A library user's Ctrl-C (no signal handler of the grader's): the queued submissions
    are dropped, the running one stops and closes its worker, and the next batch of the same
    process grades as usual."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "a_reference.py").write_text(REFERENCE)
    for name in ("b_sleeper", "c_sleeper"):
        (folder / f"{name}.py").write_text(SLEEPER)
    grader = Grader(load_exercises()[EXERCISE], mode="default", limits=Limits(timeout=10))

    def interrupt(result):
        raise KeyboardInterrupt

    with recording_tokens() as records, pytest.raises(KeyboardInterrupt):
        grade_batch(grader, [folder], tmp_path / "out", jobs=1, on_result=interrupt)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a_reference"]
    assert leftover_processes(records) == []
    assert not stopping.stopping()
    again = grade_batch(grader, [folder / "a_reference.py"], tmp_path / "again")
    assert [r.score for r in again] == [11]


def test_a_stop_after_a_report_is_written_still_counts_it(tmp_path, monkeypatch):
    """The signal can come after a submission's reports are written and before the batch takes
    its result: the batch still hands that result on, so the count matches the folders."""
    import concurrent.futures

    from rlfound.grading.scoring import batch

    def stopped_once_all_finished(futures):
        concurrent.futures.wait(futures)
        raise stopping.Stopped(signal.SIGTERM)
        yield  # a generator, as as_completed is

    monkeypatch.setattr(batch.concurrent.futures, "as_completed", stopped_once_all_finished)
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    for name in ("ana", "ben"):
        (folder / f"{name}.py").write_text(REFERENCE)
    grader = Grader(load_exercises()[EXERCISE], mode="default")
    done = []
    with pytest.raises(stopping.Stopped):
        grade_batch(grader, [folder], out, jobs=2, progress=False, on_result=done.append)
    assert sorted(result.name for result in done) == ["ana", "ben"]
    assert sorted(p.name for p in out.iterdir()) == ["ana", "ben"]
    assert not (out / "grades.csv").exists()
