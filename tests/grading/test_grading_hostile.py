"""Hostile submissions cannot crash the grader, hang the batch, read the reference or forge
a score.

Each fixture in ``hostile/`` answers ``gae-recursion``. Most are correct except on the edge
case gamma = lam = 0 (the check ``recursive-edges``), where they attack; so every test shows
both halves of the promise: the attacked check scores nothing, and the submission's correct
checks still score (a function that loops there costs one timeout: it is not called again, so
its later checks fail too). All fixtures are graded in one batch together with the reference
solution and the starter, which must be graded normally.
"""

from __future__ import annotations

import ast
import csv
import json
import subprocess
import sys

import pytest
from _grading_helpers import (
    HOSTILE,
    REPO,
    copy_hostile,
    copy_reference,
    hostile_source,
    leftover_processes,
    orphaned_worker_processes,
    recording_tokens,
    requires_bwrap,
    requires_user_mode,
)

from rlfound.grading import load_exercises
from rlfound.grading.authoring.starter import starter_source
from rlfound.grading.sandbox import Limits
from rlfound.grading.scoring.batch import grade_batch
from rlfound.grading.scoring.grader import Grader

TIMEOUT = 5.0
#: Address space of a worker in these tests: enough for NumPy, small enough to fill fast.
MEMORY = 1024**3
EXERCISE = load_exercises()["gae-recursion"]
ALL = {check.name for check in EXERCISE.checks}
EDGE = {"recursive-edges"}
#: The checks that call gae_recursive, in order: a function that times out fails the rest.
RECURSIVE = [check.name for check in EXERCISE.checks if "gae_recursive" in check.functions]
FROM_EDGE = set(RECURSIVE[RECURSIVE.index("recursive-edges") :])

#: Checks each submission must fail; every other check must pass.
EXPECTED_FAILURES = {
    "exit_at_import": ALL,
    "sleep_at_import": ALL,
    "import_rlfound_toplevel": ALL,
    "exit_in_call": EDGE,
    "os_exit": EDGE,
    "segfault": EDGE,
    "infinite_loop": FROM_EDGE,
    "ignore_signals": FROM_EDGE,
    "memory_bomb": EDGE,
    "write_results": EDGE,
    "monkeypatch": EDGE,
    "eq_always_true": EDGE,
    "ndarray_subclass": EDGE,
    "nan_inf": EDGE,
    "import_rlfound": EDGE,
    "type_error_as_text": {"values-length"},
    "own_value_error": {"values-length"},
    "crash_on_valid_input": set(RECURSIVE),
    "loop_on_valid_input": set(RECURSIVE),
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
    "infinite_loop": "not run: timed out earlier",
    "ignore_signals": "not run: timed out earlier",
    "type_error_as_text": "should raise ValueError; it raised TypeError",
    "own_value_error": "not the built-in ValueError",
    "crash_on_valid_input": "returned no numbers on any valid input",
    "loop_on_valid_input": "not run: timed out earlier",
    "memory_bomb": "MemoryError",
    "eq_always_true": "unsupported",
    "ndarray_subclass": "unsupported",
    "malicious_reduce": "unsupported",
    "nan_inf": "non-finite",
    "wrong_shape": "expected shape (1,), got shape (1, 1)",
    "monkeypatch": "max abs error",
}


def test_every_hostile_fixture_is_a_self_contained_submission():
    """The parts several fixtures share (hostile/_parts/) are spliced into each: what is
    submitted imports no test code and defines every name the part defines."""
    parts = {path.stem: path for path in (HOSTILE / "_parts").glob("*.py")}
    users = {part: [] for part in parts}
    problems = []
    for path in sorted(HOSTILE.glob("*.py")):
        tree = ast.parse(hostile_source(path.stem))
        modules = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        modules += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        if any(module.split(".")[0] == "_parts" for module in modules):
            problems.append(f"{path.name} still imports from _parts")
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        for part, part_path in parts.items():
            if f"from _parts.{part} import" in path.read_text():
                users[part].append(path.name)
                wanted = {
                    n.name
                    for n in ast.parse(part_path.read_text()).body
                    if isinstance(n, ast.FunctionDef)
                }
                if not wanted <= defined:
                    problems.append(f"{path.name} lacks {sorted(wanted - defined)}")
    assert not problems, problems
    # A part used by one fixture only belongs in that fixture.
    assert all(len(names) >= 2 for names in users.values()), users


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
        limits=Limits(timeout=TIMEOUT, wall_timeout=2 * TIMEOUT, address_space=MEMORY),
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_forged_frames_gain_nothing(default_batch):
    results, *_ = default_batch
    result = results["fake_results_json"]
    failed = {check.name for check in result.checks if not check.passed}
    assert FORGERS["fake_results_json"] <= failed
    assert result.score <= EXERCISE.max_score - 1


@pytest.mark.slow
def test_batch_report_is_complete(default_batch):
    results, out_dir, _, _ = default_batch
    with open(out_dir / "grades.csv", newline="") as sheet:
        rows = {row["submission"]: row for row in csv.DictReader(sheet)}
    assert list(next(iter(rows.values())))[:4] == ["submission", "file", "score", "max_score"]
    assert len(rows) == len(results)
    assert (rows["reference"]["score"], rows["reference"]["max_score"]) == ("11", "11")
    assert rows["write_results"]["score"] == "10"
    assert rows["starter"]["score"] == "0"


@pytest.mark.slow
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


@requires_user_mode
def test_processes_are_killed_by_user_in_the_root_fallback(tmp_path):
    """The root fallback kills a submission's processes by its worker user: with process
    creation allowed (no audit hook in the way), forks, daemons and threads die with it."""
    names = ["daemon", "fork_children", "threads", "reference"]
    results, _, _, tokens = _grade(tmp_path, "user", names, block_processes=False)
    for name in names:
        _assert_graded(name, results[name])
    assert all(token.uid is not None for token in tokens)
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


@pytest.mark.slow
@pytest.mark.parametrize(
    "mode",
    [pytest.param("strong", marks=requires_bwrap), pytest.param("user", marks=requires_user_mode)],
)
def test_hostile_submissions_kernel_modes(tmp_path, mode):
    results, _, marker, tokens = _grade(tmp_path, mode, STRONG)
    for name in STRONG:
        _assert_graded(name, results[name])
    assert not marker.exists()
    assert leftover_processes(tokens) == []


@pytest.mark.slow
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
    with open(tmp_path / "out" / "grades.csv", newline="") as sheet:
        rows = {row["submission"]: row for row in csv.DictReader(sheet)}
    assert (rows["kill_parent"]["score"], rows["kill_parent"]["max_score"]) == ("10", "11")
    assert (rows["reference"]["score"], rows["reference"]["max_score"]) == ("11", "11")
    assert orphaned_worker_processes() == []


PROBE = """
import os, socket

def probe():
    target = "__TARGET__"
    outcomes = []
    attempts = [
        lambda: open(target).read(),
        lambda: open("__CLASS__").read(),  # a classmate's submission
        lambda: os.listdir("__REPO__"),  # the checkout: grader code, solutions, the book
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
def test_strong_mode_holds_without_the_audit_hook(tmp_path):
    """The kernel, not Python, stops reading the reference, writing outside the folder and
    the network in strong mode."""
    from rlfound.grading.sandbox import Worker

    classmate = tmp_path / "alice.py"
    classmate.write_text("x = 1\n")
    source = PROBE.replace("__TARGET__", str(EXERCISE.solution_path))
    source = source.replace("__CLASS__", str(classmate)).replace("__REPO__", str(REPO))
    with Worker(source, "probe", mode="strong", audit_hook=False) as worker:
        worker.start()
        assert worker.load() is None
        (reply,) = worker.call([("probe", [])])
    assert reply == {"ok": True, "value": [0, 0, 0, 0, 0, 0, 1]}


USER_PROBE = """
import os, socket

def probe():
    outcomes = []
    attempts = [
        lambda: open("__TARGET__").read(),  # the reference solution
        lambda: open("__CLASS__").read(),  # a classmate's submission
        lambda: os.listdir("__REPO__"),  # the checkout: grader code, solutions, the book
        lambda: open("/proc/1/cmdline").read(),  # the grader's command line (its seed)
        lambda: os.kill(1, 9),
        lambda: open("/etc/passwd").read(),
        lambda: open(os.path.join(os.getcwd(), "scratch.txt"), "w").write("allowed"),
        lambda: open("/opt/rlfound/runtime/worker.py", "a").write("x"),  # the worker's code
        lambda: os.setuid(0),
    ]
    import ctypes
    for attempt in attempts:
        try:
            attempt()
            outcomes.append(1)
        except OSError:
            outcomes.append(0)
    no_new_privileges = ctypes.CDLL(None).prctl(39, 0, 0, 0, 0)  # PR_GET_NO_NEW_PRIVS
    return outcomes + [int(os.getuid() != 0), no_new_privileges]
"""


@requires_user_mode
def test_root_fallback_holds_without_the_audit_hook(tmp_path):
    """In the root fallback the kernel, not Python, keeps the reference, the other
    submissions, the grader's processes and the worker's own code out of reach: the worker is
    an unprivileged user in a private root."""
    from rlfound.grading.sandbox import Worker

    classmate = tmp_path / "alice.py"
    classmate.write_text("x = 1\n")
    source = USER_PROBE.replace("__TARGET__", str(EXERCISE.solution_path))
    source = source.replace("__CLASS__", str(classmate)).replace("__REPO__", str(REPO))
    with Worker(source, "probe", mode="user", audit_hook=False) as worker:
        worker.start()
        assert worker.load() is None
        (reply,) = worker.call([("probe", [])])
    assert reply == {"ok": True, "value": [0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 1]}
