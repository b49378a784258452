"""One name per meaning in the public API, and the old keywords that still work for one release.

The names table of DESIGN.md: a count of steps is ``num_steps``, a tolerance is
``tolerance`` (or an ``atol``/``rtol`` pair), a log-probability array is ``logprobs``. A
renamed argument keeps its old keyword for one release through
:func:`rlfound._validation.renamed_keywords`; the test below that scans every public
signature keeps the retired spellings from coming back.
"""

from __future__ import annotations

import inspect
import re
import warnings

import numpy as np
import pytest

from rlfound import bandits, mdp
from rlfound._validation import renamed_keywords
from tests._library import public_functions

BANDIT = np.array([0.2, 0.5, 1.0])


def _chain():
    """State 0 moves to the terminal state 1 with reward 1 (q*(0, .) = 1)."""
    transition = np.zeros((2, 1, 2))
    transition[:, 0, 1] = 1.0
    reward = np.zeros((2, 1, 2))
    reward[0, 0, 1] = 1.0
    return transition, reward, 0.9, [False, True]


def _message(function: str, old: str, new: str) -> str:
    return (
        f"{function}: the argument {old} is renamed {new} (after rlfound 0.1.0); {old}= "
        f"still works, with this warning, until rlfound 0.3.0 removes it"
    )


# (function, positional arguments, old keyword, new keyword, value)
RENAMED = [
    (bandits.reinforce_bandit_history, (BANDIT,), "steps", "num_steps", 3),
    (bandits.reinforce_bandit, (BANDIT,), "steps", "num_steps", 3),
    (mdp.value_iteration, _chain(), "tol", "tolerance", 1e-6),
]
IDS = [f"{function.__name__}-{old}" for function, _, old, _, _ in RENAMED]


@pytest.mark.parametrize(("function", "args", "old", "new", "value"), RENAMED, ids=IDS)
def test_the_old_keyword_gives_the_same_result_and_warns(function, args, old, new, value):
    extra = {"rng": 0} if function is not mdp.value_iteration else {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new name warns about nothing
        expected = function(*args, **{new: value}, **extra)
    with pytest.warns(DeprecationWarning, match=re.escape(_message(function.__name__, old, new))):
        got = function(*args, **{old: value}, **extra)
    got, expected = (r if isinstance(r, tuple) else (r,) for r in (got, expected))
    for got_part, expected_part in zip(got, expected, strict=True):
        np.testing.assert_array_equal(got_part, expected_part)


def test_the_old_keyword_changes_what_is_computed():
    """The comparison above would pass if the old keyword were dropped and the default used:
    with 3 steps instead of the default 200 the history has 4 rows."""
    with pytest.warns(DeprecationWarning):
        history = bandits.reinforce_bandit_history(BANDIT, steps=3, rng=0)
    assert history.shape == (4, 3)
    with pytest.warns(DeprecationWarning):
        with pytest.raises(ValueError, match=r"^tolerance must be a positive finite number; got"):
            mdp.value_iteration(*_chain(), tol=0.0)


@pytest.mark.parametrize(("function", "args", "old", "new", "value"), RENAMED, ids=IDS)
def test_both_names_at_once_is_a_type_error(function, args, old, new, value):
    with pytest.raises(
        TypeError,
        match=re.escape(
            f"{function.__name__}() got multiple values for argument {new!r}: "
            f"{old!r} is its old name"
        ),
    ):
        function(*args, **{old: value, new: value})


@pytest.mark.parametrize(("function", "args", "old", "new", "value"), RENAMED, ids=IDS)
def test_the_signature_shows_only_the_new_name(function, args, old, new, value):
    parameters = inspect.signature(function).parameters
    assert new in parameters
    assert old not in parameters


def test_the_decorator_sits_below_the_guard_and_the_guard_still_raises():
    """The overflow guard is the outermost wrapper (the public-function test reads its code
    name) and still turns an overflow into its ValueError when the old keyword is used."""
    assert bandits.reinforce_bandit.__code__.co_name == "guarded"
    assert bandits.reinforce_bandit.__wrapped__.__code__.co_name == "renamed"
    with pytest.warns(DeprecationWarning):
        with pytest.raises(ValueError, match=r"^overflow in the REINFORCE updates"):
            bandits.reinforce_bandit([1e308, -1e308], steps=2, rng=0)


def test_the_warning_points_at_the_caller():
    with pytest.warns(DeprecationWarning) as caught:
        bandits.reinforce_bandit(BANDIT, steps=1, rng=0)
    assert caught[0].filename == __file__


def test_the_removal_release_is_two_minor_releases_on():
    @renamed_keywords(size="num_cases", since="1.4.2")
    def count(num_cases=0):
        return num_cases

    with pytest.warns(DeprecationWarning, match=re.escape("until rlfound 1.6.0 removes it")):
        assert count(size=5) == 5
    assert count(7) == 7
    assert count.__name__ == "count"


def test_a_rename_to_a_name_the_function_does_not_take_is_refused():
    with pytest.raises(
        TypeError, match=re.escape("renamed_keywords: count must take 'num_case' and not 'size'")
    ):

        @renamed_keywords(size="num_case", since="0.1.0")
        def count(num_cases=0):
            return num_cases


# --- one name per meaning across the public API --------------------------------------------

#: Parameter names that the names table retires, with what replaces them.
RETIRED = {
    "tol": "tolerance",
    "steps": "num_steps",
    "n_steps": "num_steps",
    "nsteps": "num_steps",
    "n_iter": "max_iterations",
    "n_cases": "num_cases",
    "n_episodes": "num_episodes",
    "n_actions": "num_actions",
    "log_probs": "logprobs",
    "logp": "logprobs",
    "logprob": "logprobs",
    "old_log_probs": "old_logprobs",
    "ref_log_probs": "ref_logprobs",
}

#: The one documented exception: ``plot_history``'s ``steps`` are the x-axis values of the
#: logged steps (a sequence, not a count), as in the loggers whose histories it plots.
EXCEPTIONS = {("rlfound.diagnostics.plot_history", "steps")}


def retired_parameters(functions) -> list[str]:
    """``"path(name=): use new"`` for each parameter of ``functions`` (pairs of path and
    function) that has a retired spelling and is not an exception."""
    return [
        f"{path}({parameter}=): use {RETIRED[parameter]}"
        for path, function in functions
        for parameter in inspect.signature(function).parameters
        if parameter in RETIRED and (path, parameter) not in EXCEPTIONS
    ]


def test_no_public_parameter_uses_a_retired_spelling():
    assert not retired_parameters(public_functions())


def test_the_scan_finds_a_retired_spelling_and_follows_the_wrapper():
    """The scan reads signatures through the guard and the renaming wrapper (the new names),
    so it would find an old one that came back."""

    def run(values, tol=1e-8, steps=3):
        return values

    assert retired_parameters([("rlfound.toy.run", run)]) == [
        "rlfound.toy.run(tol=): use tolerance",
        "rlfound.toy.run(steps=): use num_steps",
    ]
    assert retired_parameters([("rlfound.mdp.value_iteration", mdp.value_iteration)]) == []
    assert len(dict(public_functions())) > 100


def test_the_exceptions_are_still_needed():
    """An exception whose function lost the name is stale: remove it from the list."""
    functions = dict(public_functions())
    for path, parameter in EXCEPTIONS:
        assert parameter in inspect.signature(functions[path]).parameters, path
