"""The student's own test functions: which an exercise asks for, and how a run is judged.

An exercise asks for a test where its reference solution, and so its starter, defines a
top-level ``test_*`` function of no parameters (``test_gae_matches_explicit_sum``): the
starter leaves its body to the student. The grader calls each such function in the
submission's worker, after the checks, like any other function, and reports whether it
returned or raised; it earns no automatic points (the teaching team grades the test by hand),
but the student and the grader both see that it ran and what it raised.
"""

from __future__ import annotations

import ast

from rlfound.grading.authoring.spec import Exercise
from rlfound.grading.intake import text
from rlfound.grading.scoring.results import StudentTest

__all__ = ["MAX_TESTS", "judge_test", "student_test_names"]

#: Most test functions run per exercise.
MAX_TESTS = 5
#: The worker's words for a return value it cannot send back: the test returned, so it passed.
_UNSENDABLE = "unsupported return value"


def student_test_names(exercise: Exercise) -> tuple[str, ...]:
    """The test functions the exercise asks for: its starter's top-level ``test_*``
    functions without parameters, in order (at most :data:`MAX_TESTS`).

    Examples
    --------
    >>> from rlfound.grading.authoring.spec import load_exercises
    >>> student_test_names(load_exercises()["gae-recursion"])
    ('test_gae_matches_explicit_sum',)
    """
    from rlfound.grading.authoring import public

    try:
        tree = ast.parse(public.public_starter(exercise))
    except (SyntaxError, ValueError, OSError):
        return ()
    names = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and node.name.startswith("test_")
        and not (node.args.args or node.args.posonlyargs or node.args.kwonlyargs)
    ]
    return tuple(names[:MAX_TESTS])


def judge_test(name: str, replies) -> StudentTest:
    """The verdict on one test run: ``replies`` is the worker's reply list for the call, or
    a string saying why it was not made (a timeout, the budget spent)."""
    if isinstance(replies, str):
        return StudentTest(name, False, text.clean(replies, text.MESSAGE_CHARS))
    reply = replies[0] if isinstance(replies, list) and replies else None
    if type(reply) is not dict:
        return StudentTest(name, False, "the worker's reply was malformed")
    error = reply.get("error")
    if reply.get("ok") is True or (type(error) is str and error.startswith(_UNSENDABLE)):
        return StudentTest(name, True)
    message = error if type(error) is str else "the test failed"
    return StudentTest(name, False, text.clean(message, text.MESSAGE_CHARS))
