"""Hostile submissions cannot crash the grader, hang the batch, read the reference or forge
a score.

Each fixture in ``hostile/`` answers ``gae-recursion``. Most are correct except on the edge
case gamma = lam = 0 (the check ``recursive-edges``), where they attack; so every test shows
both halves of the promise: the attacked check scores nothing, and the submission's correct
checks still score. All fixtures are graded in one batch together with the reference solution
and the starter, which must be graded normally.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from _grading_helpers import (
    copy_hostile,
    copy_reference,
    leftover_processes,
    orphaned_worker_processes,
    recording_tokens,
    requires_bwrap,
)

from rlfound.grading import load_exercises
from rlfound.grading.batch import grade_batch
from rlfound.grading.grader import Grader
from rlfound.grading.sandbox import Limits
from rlfound.grading.starter import starter_source

TIMEOUT = 5.0
#: Address space of a worker in these tests: enough for NumPy, small enough to fill fast.
MEMORY = 1024**3
EXERCISE = load_exercises()["gae-recursion"]
ALL = {check.name for check in EXERCISE.checks}
EDGE = {"recursive-edges"}

#: Checks each submission must fail; every other check must pass.
EXPECTED_FAILURES = {
    "exit_at_import": ALL,
    "sleep_at_import": ALL,
    "import_rlfound_toplevel": ALL,
    "exit_in_call": EDGE,
    "os_exit": EDGE,
    "segfault": EDGE,
    "infinite_loop": EDGE,
    "ignore_signals": EDGE,
    "memory_bomb": EDGE,
    "write_results": EDGE,
    "monkeypatch": EDGE,
    "eq_always_true": EDGE,
    "ndarray_subclass": EDGE,
    "nan_inf": EDGE,
    "import_rlfound": EDGE,
    "read_reference": EDGE,
    "malicious_reduce": EDGE,
    "daemon": EDGE,
    "fork_children": EDGE,
    "stdout_flood": set(),
    "threads": set(),
    "wrong_shape": {"recursive-random", "forms-agree", "lambda-zero", "graded-recursive"},
    "reference": set(),
    "starter": ALL,
}
#: A submission that forges protocol frames sabotages its own later replies; it may lose
#: correct checks too, but must never gain one.
FORGERS = {"fake_results_json": EDGE}
#: Words the failure message of the attacked check must contain.
MESSAGES = {
    "exit_at_import": "SystemExit",
    "sleep_at_import": "timed out",
    "import_rlfound_toplevel": "No module named 'rlfound'",
    "exit_in_call": "SystemExit",
    "os_exit": "exited with status 0",
    "segfault": "SIGSEGV",
    "infinite_loop": "timed out",
    "ignore_signals": "timed out",
    "memory_bomb": "MemoryError",
    "eq_always_true": "unsupported",
    "ndarray_subclass": "unsupported",
    "malicious_reduce": "unsupported",
    "nan_inf": "non-finite",
    "wrong_shape": "expected shape (1,), got shape (1, 1)",
    "monkeypatch": "max abs error",
}


def _grade(tmp_path, mode, names, *, block_processes=True, jobs=2):
    submissions = tmp_path / "submissions"
    out_dir = tmp_path / "out"
    marker = tmp_path / "unpickled"
    paths = copy_hostile(
        [n for n in names if n not in ("reference", "starter")],
        submissions,
        out_dir=out_dir,
        marker=marker,
    )
    if "reference" in names:
        paths.append(copy_reference(submissions, "reference"))
    if "starter" in names:
        (submissions / "starter.py").write_text(starter_source(EXERCISE))
        paths.append(submissions / "starter.py")
    grader = Grader(
        EXERCISE,
        seed=7,
        mode=mode,
        limits=Limits(timeout=TIMEOUT, address_space=MEMORY),
        block_processes=block_processes,
    )
    with recording_tokens() as tokens:
        results = grade_batch(grader, paths, out_dir, jobs=jobs, progress=False)
    return {r.name: r for r in results}, out_dir, marker, tokens


@pytest.fixture(scope="module")
def default_batch(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("hostile-default")
    results, out_dir, marker, tokens = _grade(tmp_path, "default", [*EXPECTED_FAILURES, *FORGERS])
    return results, out_dir, marker, leftover_processes(tokens)


def _assert_graded(name, result, failures=None):
    failures = EXPECTED_FAILURES[name] if failures is None else failures
    failed = {check.name for check in result.checks if not check.passed}
    assert failed == failures, f"{name}: {[(c.name, c.message) for c in result.checks]}"
    expected_score = sum(c.points for c in EXERCISE.checks if c.name not in failures)
    assert result.score == expected_score
    assert result.max_score == EXERCISE.max_score
    if name in MESSAGES:
        messages = " ".join(c.message for c in result.checks if c.name in failures)
        assert MESSAGES[name] in messages


@pytest.mark.parametrize("name", sorted(EXPECTED_FAILURES))
def test_hostile_submission_default_mode(default_batch, name):
    results, out_dir, marker, leftovers = default_batch
    result = results[name]
    _assert_graded(name, result)
    # The reports on disk are the grader's, not anything the submission wrote there.
    document = json.loads((out_dir / name / "results.json").read_text())
    assert document["score"] == result.score
    assert [t["score"] for t in document["tests"][: len(ALL)]] == [c.score for c in result.checks]
    assert not marker.exists()
    assert leftovers == []


def test_forged_frames_gain_nothing(default_batch):
    results, *_ = default_batch
    result = results["fake_results_json"]
    failed = {check.name for check in result.checks if not check.passed}
    assert FORGERS["fake_results_json"] <= failed
    assert result.score <= EXERCISE.max_score - 1


def test_batch_report_is_complete(default_batch):
    results, out_dir, _, _ = default_batch
    lines = (out_dir / "grades.csv").read_text().splitlines()
    assert lines[0].split(",")[:3] == ["submission", "score", "max_score"]
    assert len(lines) == 1 + len(results)
    rows = {line.split(",")[0]: line.split(",") for line in lines[1:]}
    assert rows["reference"][1:3] == ["11", "11"]
    assert rows["write_results"][1] == "10"
    assert rows["starter"][1] == "0"


def test_output_is_capped(default_batch):
    results, out_dir, _, _ = default_batch
    feedback = (out_dir / "stdout_flood" / "feedback.md").read_text()
    assert len(feedback) < 10_000
    assert len(results["stdout_flood"].output) <= 4000


@pytest.mark.parametrize("mode", ["default", pytest.param("strong", marks=requires_bwrap)])
def test_processes_are_swept_without_the_audit_hook(tmp_path, mode):
    """With process creation allowed, forks, daemons and threads still leave nothing behind."""
    names = ["daemon", "fork_children", "threads", "reference"]
    results, _, _, tokens = _grade(tmp_path, mode, names, block_processes=False)
    for name in names:
        _assert_graded(name, results[name])
    assert len(tokens) >= len(names)
    assert leftover_processes(tokens) == []


STRONG = [
    "exit_in_call",
    "os_exit",
    "segfault",
    "infinite_loop",
    "memory_bomb",
    "write_results",
    "import_rlfound",
    "import_rlfound_toplevel",
    "read_reference",
    "malicious_reduce",
    "daemon",
    "fork_children",
    "stdout_flood",
    "reference",
    "starter",
]


@requires_bwrap
def test_hostile_submissions_strong_mode(tmp_path):
    results, _, marker, tokens = _grade(tmp_path, "strong", STRONG)
    for name in STRONG:
        _assert_graded(name, results[name])
    assert not marker.exists()
    assert leftover_processes(tokens) == []


def test_a_submission_cannot_kill_the_grader(tmp_path):
    """Run the real command, so that a successful attack would kill it, not pytest."""
    paths = copy_hostile(["kill_parent"], tmp_path / "in", out_dir=tmp_path, marker=tmp_path)
    reference = copy_reference(tmp_path / "in", "reference")
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "rlfound",
            "grade",
            "gae-recursion",
            *map(str, [*paths, reference]),
            "--out",
            str(tmp_path / "out"),
            "--timeout",
            str(TIMEOUT),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    grades = (tmp_path / "out" / "grades.csv").read_text().splitlines()
    assert grades[1].startswith("kill_parent,10,11")
    assert grades[2].startswith("reference,11,11")
    assert orphaned_worker_processes() == []


PROBE = """
import os, socket

def probe():
    target = "__TARGET__"
    outcomes = []
    attempts = [
        lambda: open(target).read(),
        lambda: open("/escape.txt", "w").write("x"),
        lambda: open("/dev/shm/escape", "w").write("x"),
        lambda: socket.create_connection(("1.1.1.1", 53), timeout=1),
        lambda: open("/submission/scratch.txt", "w").write("allowed"),
    ]
    for attempt in attempts:
        try:
            attempt()
            outcomes.append(1)
        except OSError:
            outcomes.append(0)
    return outcomes
"""


@requires_bwrap
def test_strong_mode_holds_without_the_audit_hook():
    """The kernel, not Python, stops reading the reference, writing outside the folder and
    the network in strong mode."""
    from rlfound.grading.sandbox import Worker

    source = PROBE.replace("__TARGET__", str(EXERCISE.solution_path))
    with Worker(source, "probe", mode="strong", audit_hook=False) as worker:
        worker.start()
        assert worker.load() is None
        (reply,) = worker.call([("probe", [])])
    assert reply == {"ok": True, "value": [0, 0, 0, 0, 1]}
