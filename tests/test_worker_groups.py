"""The parallel test run keeps each group of tests on one pytest-xdist worker.

``make test`` relies on it: the book's tests share two builds that must be made once, and the
grader's tests watch every process on the machine, so two of them must never run at once.
pytest-xdist groups by a suffix it adds to each test's node ID, which pytest 9.2 silently
stopped honoring (pytest-dev/pytest-xdist#1386): the tests then still pass, spread over the
workers, and the builds run twice. This runs two of the grader's quick test modules in two
workers, as ``make test`` would, and reads which worker ran each test.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests._book import ROOT

MODULES = ["tests/grading/test_grading_spec.py", "tests/grading/test_grading_compare.py"]
RESULT = re.compile(r"^\[(gw\d+)\] .*PASSED (\S+)", re.MULTILINE)


@pytest.mark.slow
def test_the_graders_tests_run_on_one_worker_in_a_parallel_run():
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-v",
            "-p",
            "no:cacheprovider",
            *MODULES,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout[-3000:]
    results = RESULT.findall(completed.stdout)
    assert len(results) >= 10, completed.stdout[-3000:]
    workers = {worker for worker, _ in results}
    assert len(workers) == 1, f"the grader's tests ran on {sorted(workers)}"
    assert all(test.endswith("@grading") for _, test in results), results[:3]
