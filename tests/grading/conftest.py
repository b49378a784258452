"""pytest configuration of the grader's tests.

The hostile submissions under ``hostile/`` are data, not tests: pytest must never import them
(``--doctest-modules`` would otherwise run ``sys.exit``, forks and memory bombs in pytest);
``run_as_test_user.py`` is a script that runs pytest itself.
"""

import pytest

from rlfound.grading.authoring import secret

collect_ignore = ["hostile", "run_as_test_user.py"]


@pytest.fixture(autouse=True)
def grading_seed(monkeypatch, tmp_path_factory):
    """Every test grades with seed 0 (what the tests were written for) given as the course's
    seed, unless it deletes it to test the refusal; no real course secret of this machine's
    user is ever read (the secret file points into the test's temporary folder)."""
    monkeypatch.setenv(secret.SEED_VARIABLE, "0")
    folder = tmp_path_factory.mktemp("course-secret")
    monkeypatch.setenv(secret.SECRET_VARIABLE, str(folder / "course-secret"))
