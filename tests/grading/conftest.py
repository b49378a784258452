"""pytest configuration of the grader's tests.

The hostile submissions under ``hostile/`` are data, not tests: pytest must never import them
(``--doctest-modules`` would otherwise run ``sys.exit``, forks and memory bombs in pytest);
``run_as_test_user.py`` is a script that runs pytest itself.
"""

collect_ignore = ["hostile", "run_as_test_user.py"]
