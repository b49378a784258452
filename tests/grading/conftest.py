"""pytest configuration of the grader's tests.

The hostile submissions under ``hostile/`` are data, not tests: pytest must never import them
(``--doctest-modules`` would otherwise run ``sys.exit``, forks and memory bombs in pytest).
"""

collect_ignore = ["hostile"]
