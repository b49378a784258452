"""System V IPC and shared memory cannot outlive a submission or escape ``--memory``.

* Each worker has an IPC namespace of its own: in strong mode (bubblewrap's ``--unshare-all``),
  in the root fallback (its launcher's ``unshare``, as root) and in default mode where the
  kernel allows one; whatever the submission makes there dies with its last process.
* Where the kernel refuses the root fallback a namespace (a container without
  ``CAP_SYS_ADMIN``; the tests ask for none with ``private_ipc=False``), the grader removes
  what the worker user made in the machine's namespace, in ``/dev/shm`` and in the temporary
  folders: when the submission ends, when the grader exits holding the user, and when the next
  grader takes a user that a killed one held.
* Without control groups (as in Gradescope's containers) the watchdog measures memory: a
  submission whose processes share anonymous ``MAP_SHARED`` memory, or that holds System V
  segments no process has mapped, beyond ``--memory`` is stopped with the memory reason, and
  an honest neighbor in the same batch keeps its grade.

The hostile fixtures (``sysv_leftovers``, ``sysv_hoard``, ``shared_mappings``) make the objects
through ``ctypes`` and ``fork``, which the audit hook refuses: the batches here run without it,
to show what the kernel modes hold alone.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import secrets
import stat
import subprocess
import sys
import textwrap

import psutil
import pytest
from _grading_helpers import (
    copy_hostile,
    copy_reference,
    leftover_processes,
    recording_tokens,
    requires_bwrap,
    requires_user_mode,
)

from rlfound.grading import load_exercises
from rlfound.grading.intake import files
from rlfound.grading.sandbox import Limits, Worker, accounts, cgroups, ipc
from rlfound.grading.sandbox.modes import private_ipc_problem
from rlfound.grading.sandbox.tracking import tree_of
from rlfound.grading.scoring import grader as grader_module
from rlfound.grading.scoring.batch import grade_batch

EXERCISE = load_exercises()["gae-recursion"]
ALL = {check.name for check in EXERCISE.checks}
EDGE = {"recursive-edges"}
#: Memory of a submission's processes together: below what each memory attack holds (480 and
#: 640 MiB), far above what the reference needs.
MEMORY = 400 * 2**20
LIMITS = Limits(timeout=5.0, wall_timeout=20.0, address_space=2**30, memory=MEMORY)

requires_private_ipc = pytest.mark.skipif(
    private_ipc_problem() is not None,
    reason=f"no IPC namespace for a worker of this grader: {private_ipc_problem()}",
)
#: (mode, whether the worker is given an IPC namespace of its own).
SETUPS = [
    pytest.param(("strong", True), id="strong", marks=requires_bwrap),
    pytest.param(("user", True), id="user", marks=[requires_user_mode, requires_private_ipc]),
    pytest.param(("user", False), id="user-machine-namespace", marks=requires_user_mode),
    pytest.param(("default", True), id="default", marks=requires_private_ipc),
]
#: The memory attacks, graded where the grader claims to hold them (not in default mode).
MEMORY_ATTACKS = ("sysv_hoard", "shared_mappings")


def _own_ipc_namespace() -> str:
    return ipc.namespace_of(os.getpid())


# ---------------------------------------------------------------- a namespace per worker


@pytest.mark.parametrize("setup", SETUPS)
def test_each_worker_has_an_ipc_namespace_of_its_own(setup):
    """Where the worker is given one; otherwise (as where the kernel refuses one) it is the
    grader's, which shows that the test tells the two apart."""
    mode, private_ipc = setup
    with Worker("x = 1\n", "probe", mode=mode, limits=LIMITS, private_ipc=private_ipc) as worker:
        worker.start()
        assert worker.load() is None
        pythons = [
            pid
            for pid in tree_of(worker.process.pid)
            if psutil.Process(pid).name().startswith("python")
        ]
        namespaces = {ipc.namespace_of(pid) for pid in pythons}
    assert pythons
    if private_ipc:
        assert _own_ipc_namespace() not in namespaces
    else:
        assert namespaces == {_own_ipc_namespace()}


# ---------------------------------------------------------------- one batch per mode


@dataclasses.dataclass
class Batch:
    mode: str
    key: int
    results: dict
    started: list
    without_groups: int  # workers started on the path without a control group


@pytest.fixture(scope="module", params=SETUPS)
def batch(request, tmp_path_factory):
    """The fixtures and the reference, graded in one batch without control groups and
    without the audit hook."""
    mode, private_ipc = request.param
    folder = tmp_path_factory.mktemp(f"ipc-{mode}")
    key = 0x52460000 + secrets.randbelow(0xFFF0)
    names = ["sysv_leftovers", *(MEMORY_ATTACKS if mode != "default" else ())]
    paths = copy_hostile(
        names,
        folder / "submissions",
        out_dir=folder / "out",
        marker=folder / "marker",
        fill={"__KEY__": str(key)},
    )
    paths.append(copy_reference(folder / "submissions", "reference"))
    asked = []

    def no_group(memory, processes):
        asked.append((memory, processes))
        return None

    worker = functools.partial(Worker, audit_hook=False, private_ipc=private_ipc)
    with pytest.MonkeyPatch.context() as patch, recording_tokens() as started:
        patch.setattr(cgroups, "create", no_group)
        patch.setattr(grader_module, "Worker", worker)
        grader = grader_module.Grader(EXERCISE, seed=7, mode=mode, limits=LIMITS)
        results = grade_batch(grader, paths, folder / "out", jobs=2, progress=False)
    return Batch(mode, key, {r.name: r for r in results}, started, len(asked))


def _failed(result) -> dict[str, str]:
    return {check.name: check.message for check in result.checks if not check.passed}


def test_an_honest_neighbor_keeps_its_grade(batch):
    assert set(batch.results) >= {"reference", "sysv_leftovers"}
    assert batch.results["reference"].score == EXERCISE.max_score
    assert batch.results["reference"].grader_error is None
    failed = _failed(batch.results["sysv_leftovers"])
    assert set(failed) == EDGE, failed
    assert "exited with status 0" in failed["recursive-edges"]


def test_nothing_is_left_in_system_v_ipc(batch):
    """After the batch, the grader's IPC namespace holds none of the objects the submission
    made (found by their keys) and nothing of the worker users (by owner and creator)."""
    tables = ipc.read_tables()
    keys = {"shm": batch.key, "sem": batch.key + 1, "msg": batch.key + 2}
    left = [
        (kind, row) for kind, rows in tables.items() for row in rows if row["key"] == keys[kind]
    ]
    for uid in {record.uid for record in batch.started if record.uid is not None}:
        left += [(kind, row) for kind, rows in ipc.owned_by(tables, uid).items() for row in rows]
    assert left == []
    assert leftover_processes(batch.started) == []


@pytest.mark.parametrize("name", MEMORY_ATTACKS)
def test_shared_memory_counts_against_the_limit(batch, name):
    if batch.mode == "default":
        pytest.skip("default mode does not claim to hold a submission to its memory limit")
    if batch.mode == "strong" and name == "sysv_hoard" and os.geteuid() != 0:
        pytest.skip(
            "a grader that is not root cannot join the sandbox's IPC namespace, so without a "
            "control group the segments there are not counted (the README says so)"
        )
    assert batch.without_groups >= len(batch.started) > 0  # no worker had a control group
    failed = _failed(batch.results[name])
    assert set(failed) == EDGE, failed
    assert f"more than {MEMORY // 2**20} MiB of memory" in failed["recursive-edges"]


# ---------------------------------------------------------------- what a worker user leaves

#: A grader that takes a worker user, leaves System V objects, files and a detached process
#: of that user behind, then ends as ``sys.argv[1]`` says.
LEAVER = textwrap.dedent(
    """
    import json, os, subprocess, sys
    from rlfound.grading.sandbox import accounts

    how, token = sys.argv[1], sys.argv[2]
    account = accounts.acquire()
    as_user = {"user": account.uid, "group": account.gid, "extra_groups": []}
    for option in (["-M", "1048576"], ["-S", "2"], ["-Q"]):
        subprocess.run(["ipcmk", *option], check=True, capture_output=True, **as_user)
    made = []
    for folder in ("/dev/shm", "/tmp", "/var/tmp"):
        path = os.path.join(folder, f"rlfound-test-{token}")
        with open(path, "w") as handle:
            handle.write("left")
        os.chown(path, account.uid, account.gid)
        made.append(path)
    inner = f"/tmp/rlfound-test-{token}-shared/left"
    with open(inner, "w") as handle:
        handle.write("left")
    os.chown(inner, account.uid, account.gid)
    made.append(inner)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    subprocess.Popen(["sleep", "600"], start_new_session=True, **quiet, **as_user)
    print(json.dumps({"uid": account.uid, "made": made}), flush=True)
    if how == "released":
        assert account.release() is None
    elif how == "killed":
        os._exit(0)  # no exit handlers: the next grader to take the user cleans up
    """
)


def _left_by(uid: int, made) -> list:
    left = [row for rows in ipc.owned_by(ipc.read_tables(), uid).values() for row in rows]
    return left + [path for path in made if os.path.lexists(path)] + accounts.processes_of(uid)


@requires_user_mode
@pytest.mark.parametrize("how", ["released", "exits", "killed"])
def test_what_a_worker_user_leaves_is_removed(tmp_path, how):
    token = secrets.token_hex(6)
    shared = f"/tmp/rlfound-test-{token}-shared"  # a folder anyone may write in
    os.mkdir(shared)
    os.chmod(shared, 0o1777 | stat.S_IRWXU)
    try:
        completed = subprocess.run(
            [sys.executable, "-c", LEAVER, how, token],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert completed.returncode == 0, completed.stderr
        report = json.loads(completed.stdout)
        uid, made = report["uid"], report["made"]
        if how == "killed":
            assert len(_left_by(uid, made)) >= 3 + len(made) + 1  # the test made what it claims
            taken = []
            try:
                while not taken or taken[-1].uid != uid:
                    taken.append(accounts.acquire())
            finally:
                for account in taken:
                    account.release()
        assert _left_by(uid, made) == []
    finally:
        for path in (f"/dev/shm/rlfound-test-{token}", f"/tmp/rlfound-test-{token}"):
            files.remove_tree(path)
        files.remove_tree(f"/var/tmp/rlfound-test-{token}")
        files.remove_tree(shared)
