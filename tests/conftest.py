"""Shared pytest configuration: hypothesis profiles that keep the property tests fast, and the
groups that keep some tests on one pytest-xdist worker.

``rlfound`` is used locally and in CI (50 examples per property, no per-example deadline,
because a loaded 2-core CI machine makes wall-clock deadlines flaky). ``thorough`` is for a
deliberate deep run: ``pytest --hypothesis-profile=thorough``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "rlfound",
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "fast",
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("rlfound")


def pytest_itemcollected(item):
    """Mark the grader's tests ``grading``, and keep the tests that must not run side by side
    on one pytest-xdist worker each.

    ``make test`` runs the suite in two processes (``-n auto --dist loadgroup``). The grader's
    tests create worker users, chroots and sandboxed processes, and some look for every live
    worker process on the machine: they run one after the other on one worker, as they would
    without xdist. The book's tests share session fixtures (two builds against one execution
    cache) that must be built once: they run on one worker too. The other tests are spread.
    The marks are added as each test is collected: pytest-xdist reads the groups, and ``-m``
    the ``grading`` mark, once collection is over (a ``pytest_collection_modifyitems`` here
    could run after pytest-xdist's, which would then see no group).
    """
    grading = item.config.rootpath / "tests" / "grading"
    if item.get_closest_marker("book") is not None:
        item.add_marker(pytest.mark.xdist_group("book"))
    elif Path(item.path).is_relative_to(grading):
        item.add_marker(pytest.mark.grading)
        item.add_marker(pytest.mark.xdist_group("grading"))
