"""Regressions at the numerical edges of the valid domain (issue 14).

Each test is one finding of an independent fuzzer: an extreme but finite input, a
probability below floating-point resolution, or a size nothing can allocate. Each asserts
either the exact ``ValueError`` (naming the argument or the quantity that overflowed) or the
stable, correct value. The library-wide property is in tests/library/test_fuzz.py.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlfound import (
    advantages,
    bandits,
    constrained,
    credit,
    episodes,
    gradcheck,
    groups,
    importance,
    mdp,
    policy_gradient,
    tokens,
)
from rlfound._validation import (
    MAX_ARRAY_ENTRIES,
    MAX_ENUMERATION,
    MAX_ITERATIONS,
    ROW_SUM_TOLERANCE,
    SUPPORT_TOLERANCE,
    capped_power,
    check_enumeration_size,
    check_finite_result,
    check_size,
)
from tests._library import public_functions


def raises(message: str):
    """``pytest.raises(ValueError)`` whose message must start with ``message`` exactly."""
    return pytest.raises(ValueError, match="^" + re.escape(message))


# --- the shared guards --------------------------------------------------------------------------


def test_the_limits_and_tolerances_are_the_documented_numbers():
    assert (MAX_ENUMERATION, MAX_ARRAY_ENTRIES, MAX_ITERATIONS) == (10**6, 10**8, 10**7)
    assert SUPPORT_TOLERANCE == np.finfo(np.float64).tiny
    assert ROW_SUM_TOLERANCE == 1e-12


def test_capped_power_is_exact_below_the_cap_and_never_forms_a_huge_power():
    assert [capped_power(b, e) for b, e in [(0, 0), (0, 5), (1, 10**18), (3, 4), (2, 19)]] == [
        1,
        0,
        1,
        81,
        2**19,
    ]
    assert capped_power(2, 20) == MAX_ENUMERATION + 1  # 1048576 > 10**6: capped
    assert capped_power(2, 10**18) == MAX_ENUMERATION + 1  # returns at once
    assert capped_power(10, 6) == 10**6  # exactly at the cap: still exact


@settings(deadline=None)
@given(
    size=st.integers(1, 3 << 14),
    scale=st.sampled_from([1.0, 1e150, 1e200, 1e308]),
    bad=st.sampled_from([None, np.inf, -np.inf, np.nan]),
    strided=st.booleans(),
    data=st.data(),
)
def test_the_result_check_finds_every_inf_and_nan_and_passes_every_finite_array(
    size, scale, bad, strided, data
):
    """The one-pass check (a sum of squares by BLAS, or a sum) against np.isfinite, entry by
    entry: squares overflow from about 1e154 on, where it must fall back, not fail."""
    values = scale * np.random.default_rng(size).uniform(-1, 1, size=2 * size if strided else size)
    array = values[::2] if strided else values
    if bad is not None:
        array[data.draw(st.integers(0, size - 1))] = bad
    expected = bool(np.isfinite(array).all())
    if expected:
        assert check_finite_result(array, "the test") is array
    else:
        with raises("overflow in the test: the inputs are finite but the result is not"):
            check_finite_result(array, "the test")


def test_size_guards_count_with_integers_only():
    with pytest.raises(TypeError):
        check_size(1e3, "steps", 10, "steps")
    with pytest.raises(TypeError):
        check_enumeration_size(float("nan"), "horizon", "")
    assert check_size(10, "steps", 10, "steps") == 10
    with raises("steps must keep the call to at most 10 steps; got 11"):
        check_size(11, "steps", 10, "steps")


# --- 1. enumerations guarded with exact integers --------------------------------------------


def _two_way_loop():
    """One state, two actions that both stay: 2**H episodes of horizon H."""
    return {
        "transition": np.ones((1, 2, 1)),
        "reward": np.zeros((1, 2, 1)),
        "policy": np.full((1, 2), 0.5),
        "initial": [1.0],
    }


@pytest.mark.parametrize("horizon", [20, 1024, 1025, 5000])
def test_enumerate_episodes_refuses_2_to_the_horizon_episodes(horizon):
    # The float count of old became inf at 1024 and NaN at 1025, and NaN > limit is False.
    with raises(
        "horizon must keep the exact enumeration to at most 1000000 items; got horizon "
        f"{horizon} with more than 1000000 episodes"
    ):
        episodes.enumerate_episodes(**_two_way_loop(), horizon=horizon)


def test_enumerate_episodes_just_below_the_limit_is_exact():
    listed = episodes.enumerate_episodes(**_two_way_loop(), horizon=3)
    assert len(listed) == 8 and np.isclose(listed.weights.sum(), 1.0)


def test_enumerate_episodes_refuses_a_horizon_of_10_to_the_18_at_once():
    with raises(
        "horizon must keep the call to at most 100000000 entries per episode (horizon + 1); "
        "got 1000000000000000001"
    ):
        episodes.enumerate_episodes(**_two_way_loop(), horizon=10**18)


def test_enumerate_episodes_stops_counting_when_every_episode_has_ended():
    # One episode of one step, padded to a long horizon: the count settles after a step.
    transition = np.zeros((2, 1, 2))
    transition[:, 0, 1] = 1.0
    listed = episodes.enumerate_episodes(
        transition, np.zeros((2, 1, 2)), [[1.0], [1.0]], [1.0, 0.0], 10_000, [False, True]
    )
    assert listed.actions.shape == (1, 10_000) and listed.actions[0, 0] == 0
    assert (listed.actions[0, 1:] == -1).all()


# --- 2. and 3. the Bellman solves: reachability and γ·(row sum) <= 1 --------------------------

NEVER_ENDS = "gamma must be < 1 unless every state can reach a terminal state; got gamma = 1.0 "
NEVER_ENDS += "and state 0 never terminates"


def _sub_resolution_exit():
    """State 0 stays with probability 1 and 'exits' with 1e-17, which vanishes next to 1."""
    transition = np.zeros((2, 1, 2))
    transition[0, 0] = [1.0, 1e-17]
    transition[1, 0] = [0.0, 1.0]
    return transition, np.ones((2, 1, 2)) * [[[1.0, 0.0]], [[0.0, 0.0]]]


BELLMAN_SOLVES = {
    "evaluate_policy": lambda P, R: mdp.evaluate_policy(P[:, 0], [1.0, 0.0], 1.0, [0, 1]),
    "state_values": lambda P, R: mdp.state_values(P, R, [[1.0], [1.0]], 1.0, [0, 1]),
    "action_values": lambda P, R: mdp.action_values(P, R, [[1.0], [1.0]], 1.0, [0, 1]),
    "advantage_values": lambda P, R: mdp.advantage_values(P, R, [[1.0], [1.0]], 1.0, [0, 1]),
    "expected_return": lambda P, R: policy_gradient.expected_return(
        [[0.0], [0.0]], P, R, [1.0, 0.0], 1.0, [0, 1]
    ),
    "discounted_occupancy": lambda P, R: mdp.discounted_occupancy(
        P, [[1.0], [1.0]], [1.0, 0.0], 1.0, [0, 1]
    ),
    "value_and_gradient": lambda P, R: constrained.value_and_gradient(
        [[0.0], [0.0]], P, R, [1.0, 0.0], 1.0, [0, 1]
    ),
}


@pytest.mark.parametrize("solve", BELLMAN_SOLVES.values(), ids=BELLMAN_SOLVES)
def test_an_exit_below_resolution_does_not_count_as_reaching_the_end(solve):
    # The exit passed the old test (> 0) and LinAlgError: Singular matrix escaped.
    with raises(NEVER_ENDS):
        solve(*_sub_resolution_exit())


def test_an_exit_above_the_row_tolerance_is_solved_exactly():
    exit_probability = 1e-6
    values = mdp.evaluate_policy(
        [[1.0 - exit_probability, exit_probability], [0.0, 1.0]], [1.0, 0.0], 1.0, [0, 1]
    )
    np.testing.assert_allclose(values, [1.0 / exit_probability, 0.0], rtol=1e-9)


def test_a_discounted_row_above_one_is_refused():
    # The row-sum tolerance (1e-8) let γ·(row sum) exceed 1: the solve returned -2e8 for +1.
    with raises(
        "transition_pi must satisfy gamma * (row sum) <= 1 (within 1e-12) so that the "
        "discounted values are finite; got gamma * 1.000000005 = "
    ):
        mdp.evaluate_policy([[1.000000005]], [1.0], gamma=0.9999999999)


def test_a_discount_within_the_row_tolerance_of_one_needs_a_terminal_state():
    gamma = 1.0 - 1e-15
    with raises(
        f"gamma must be below 1 - 1e-12 unless every state can reach a terminal state; got "
        f"gamma = {gamma!r} and state 0 never terminates"
    ):
        mdp.evaluate_policy([[1.0]], [1.0], gamma=gamma)


def test_a_row_just_below_one_from_rounding_is_accepted_at_gamma_one():
    third = 1.0 / 3.0  # the row sums to 1 - 1e-16 or so; the terminal state is reached
    values = mdp.evaluate_policy(
        [[third, third, third], [third, third, third], [0.0, 0.0, 1.0]],
        [1.0, 1.0, 0.0],
        1.0,
        [0, 0, 1],
    )
    np.testing.assert_allclose(values, [3.0, 3.0, 0.0])


def test_an_option_whose_stop_vanishes_below_resolution_can_run_forever():
    # The option's own equations (I - γ P_o (I - B)) get the same tolerances.
    transition = np.zeros((2, 1, 2))
    transition[0, 0, 0] = transition[1, 0, 1] = 1.0
    with raises(
        "termination must let the option stop with probability 1 when gamma = 1; got an "
        "option that can run forever from state 0"
    ):
        credit.option_model(transition, np.zeros((2, 1, 2)), [[1.0], [1.0]], [1e-17, 1.0], 1.0)
    _, ends = credit.option_model(transition, np.zeros((2, 1, 2)), [[1.0], [1.0]], [0.5, 1.0], 1.0)
    np.testing.assert_allclose(ends[0], [1.0, 0.0])


# --- 4. group normalization: scale before the variance ----------------------------------------


@pytest.mark.parametrize("include_self", [True, False])
def test_group_normalized_advantages_of_huge_rewards_are_plus_minus_one(include_self):
    rewards = np.array([1e308, -1e308, 1e308, -1e308])
    expected = groups.group_normalized_advantages([1.0, -1.0, 1.0, -1.0], 0.0, 0, include_self)
    result = groups.group_normalized_advantages(rewards, 0.0, 0, include_self)
    np.testing.assert_allclose(result, expected, rtol=1e-15)
    if include_self:
        np.testing.assert_array_equal(result, [1.0, -1.0, 1.0, -1.0])


def test_group_normalized_advantages_batch_scale_of_huge_rewards():
    rewards = np.array([[1e308, -1e308], [5e307, -5e307]])
    expected = groups.group_normalized_advantages(rewards / 1e308, eps=0.0, scale="batch")
    result = groups.group_normalized_advantages(rewards, eps=0.0, scale="batch")
    np.testing.assert_allclose(result, expected, rtol=1e-15)


def test_group_normalized_advantages_scales_eps_with_the_rewards():
    # (R - mean) / (std + eps) is computed exactly as written, only in a scaled form.
    rewards = np.array([3.0, 1.0, 0.0, 8.0])
    centered = rewards - rewards.mean()
    np.testing.assert_allclose(
        groups.group_normalized_advantages(rewards, eps=0.5),
        centered / (rewards.std() + 0.5),
        rtol=1e-15,
    )


def test_group_normalized_advantages_of_a_subnormal_spread_are_zero_with_eps():
    np.testing.assert_array_equal(
        groups.group_normalized_advantages([5e-324, 0.0, 0.0, 0.0]), np.zeros(4)
    )


def test_dr_grpo_centering_is_finite_when_the_sum_overflows_but_the_result_does_not():
    result = groups.group_normalized_advantages([1e308, 1e308, -1e308], scale=None)
    third = 1e308 / 3.0
    np.testing.assert_allclose(result, [2 * third, 2 * third, -4 * third], rtol=1e-15)


def test_dr_grpo_centering_whose_result_overflows_raises():
    # Leaving member 0 out, the others' mean is -1e308: its advantage 2e308 is not a float.
    with raises("overflow in group_normalized_advantages: the inputs are finite"):
        groups.group_normalized_advantages([1e308, -1e308], include_self=False, scale=None)


# --- 5. the support tolerance -------------------------------------------------------------------

SUBNORMAL = "behavior_probs must be positive for every logged action (the support condition); "
SUBNORMAL += "got 5e-324, below the support tolerance at index (1,)"


@pytest.mark.parametrize(
    "call",
    [
        lambda mu: importance.importance_ratios([0, 1], [0.5, 0.5], mu),
        lambda mu: importance.off_policy_value([0, 1], [1.0, 1.0], [0.5, 0.5], mu),
        lambda mu: importance.weighted_off_policy_value([0, 1], [1.0, 1.0], [0.5, 0.5], mu),
    ],
    ids=["importance_ratios", "off_policy_value", "weighted_off_policy_value"],
)
def test_a_subnormal_behavior_probability_fails_the_support_condition(call):
    with raises(SUBNORMAL):
        call([1.0, 5e-324])


def test_the_variance_functions_apply_the_same_support_tolerance():
    with raises(
        "behavior_probs must be positive wherever π(a) q(a) is non-zero (the support "
        "condition); got 5e-324, below the support tolerance at index (1,)"
    ):
        importance.importance_sampling_variance([0.5, 0.5], [1.0, 5e-324], [1.0, 1.0])
    with raises(
        "behavior_probs must be positive wherever target_probs is positive (the support "
        "condition); got 5e-324, below the support tolerance at index (1,)"
    ):
        importance.sequence_ratio_variance([0.5, 0.5], [1.0, 5e-324], 3)


def test_the_smallest_normal_probability_passes_the_support_condition():
    small = 4.0 * float(np.finfo(np.float64).tiny)  # a normal number, above the tolerance
    ratios = importance.importance_ratios([1], [1.0 - 1e-300, 1e-300], [1.0 - small, small])
    np.testing.assert_allclose(ratios, [1e-300 / small])
    assert np.isfinite(ratios).all()


# --- 6. a finite-difference step that cannot change x -----------------------------------------


def _squares(x):
    return float(np.sum(x**2))


def test_numerical_gradient_refuses_a_step_that_vanishes_in_x_plus_eps():
    message = "eps must be large enough to change x (x + eps != x - eps); got eps = 1e-20 and "
    with raises(message + "x = 1.0 at index (0,)"):
        gradcheck.numerical_gradient(_squares, [1.0, 2.0], eps=1e-20)
    with raises(message + "x = 1.0 at index (0,)"):
        gradcheck.check_gradient(_squares, lambda x: 2 * x, [1.0, 2.0], eps=1e-20)


def test_numerical_gradient_accepts_a_tiny_step_at_zero():
    # At x = 0 every positive step is representable: the gradient is exact.
    np.testing.assert_allclose(
        gradcheck.numerical_gradient(lambda x: float(3.0 * x[0]), [0.0], 1e-300), [3.0]
    )


# --- 7. sizes nothing can allocate --------------------------------------------------------------

HUGE = 10**18


def _chain():
    transition = np.zeros((2, 1, 2))
    transition[:, 0, 1] = 1.0
    return transition, np.zeros((2, 1, 2)), np.ones((2, 1)), [1.0, 0.0]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: tokens.parser_marginal(np.log([0.5, 0.5]), [0, 1], num_actions=HUGE),
            "num_actions must keep the call to at most 100000000 entries; got 2000000000000000000",
        ),
        (
            lambda: episodes.sample_episodes(*_chain(), horizon=HUGE, terminal=[0, 1], rng=0),
            "num_episodes * (horizon + 1) must keep the call to at most 100000000 array "
            "entries; got 1000000000000000001",
        ),
        (
            lambda: bandits.reinforce_bandit([0.0, 1.0], batch_size=HUGE, rng=0),
            "batch_size must keep the call to at most 100000000 actions per step; got "
            "1000000000000000000",
        ),
        (
            lambda: bandits.reinforce_bandit([0.0, 1.0], num_steps=HUGE, rng=0),
            "num_steps must keep the call to at most 10000000 updates; got 1000000000000000000",
        ),
        (
            lambda: bandits.reinforce_bandit_history([0.0, 1.0], num_steps=HUGE, rng=0),
            "num_steps must keep the call to at most 10000000 updates; got 1000000000000000000",
        ),
        (
            lambda: tokens.enumerate_sequences(2, HUGE),
            "length must keep the exact enumeration to at most 1000000 items; got V**L = "
            "2**1000000000000000000 > 1000000 sequences",
        ),
        (
            lambda: groups.enumerate_group_gradient(
                [0.0, 0.0], [1.0, 2.0], HUGE, groups.leave_one_out_advantages
            ),
            "group_size must keep the exact enumeration to at most 1000000 items; got K**N = "
            "2**1000000000000000000 > 1000000",
        ),
        (
            lambda: mdp.value_iteration(*_chain()[:2], 0.9, [0, 1], max_iterations=HUGE),
            "max_iterations must keep the call to at most 10000000 iterations; got "
            "1000000000000000000",
        ),
    ],
    ids=[
        "parser_marginal",
        "sample_episodes",
        "reinforce_bandit-batch_size",
        "reinforce_bandit-steps",
        "reinforce_bandit_history",
        "enumerate_sequences",
        "enumerate_group_gradient",
        "value_iteration",
    ],
)
def test_sizes_beyond_the_limits_are_refused_before_any_work(call, message):
    with raises(message):
        call()


def test_an_integer_beyond_64_bits_is_refused_with_its_name():
    with raises(
        "num_actions must be a positive integer that fits in 64 bits; got 2**63".replace(
            "2**63", str(2**63)
        )
    ):
        tokens.parser_marginal(np.log([0.5, 0.5]), [0, 1], num_actions=2**63)


# --- 8. the REINFORCE batch mean ---------------------------------------------------------------


def test_reinforce_bandit_names_the_overflowing_update_not_the_baseline():
    with raises("overflow in the REINFORCE updates: the inputs are finite but an intermediate"):
        bandits.reinforce_bandit([1e308, -1e308], rng=0)


# --- 9. the terminal mask goes through the shared mask check --------------------------------


def test_a_ragged_terminal_is_named():
    transition, reward, policy, _ = _chain()
    with raises("terminal must be a rectangular array of numbers; got [[0, 1], [1]]"):
        mdp.state_values(transition, reward, policy, 1.0, terminal=[[0, 1], [1]])


def test_terminal_accepts_zero_one_integers_like_every_mask():
    transition, reward, policy, _ = _chain()
    np.testing.assert_array_equal(
        mdp.state_values(transition, reward, policy, 1.0, terminal=[0, 1]),
        mdp.state_values(transition, reward, policy, 1.0, terminal=[False, True]),
    )


# --- 10. finite inputs, finite outputs ----------------------------------------------------------


def test_evaluate_policy_raises_when_the_values_exceed_the_float64_range():
    with raises("overflow in the Bellman solve: the inputs are finite but the result is not"):
        mdp.evaluate_policy([[0.5, 0.5], [0.5, 0.5]], [1e308, 1e308], gamma=0.9)


def test_expected_return_raises_when_the_values_exceed_the_float64_range():
    transition, _, _, initial = _chain()
    reward = np.full((2, 1, 2), 1e308)
    reward[1] = 0.0
    transition = np.zeros((2, 1, 2))
    transition[0, 0] = [0.5, 0.5]
    transition[1, 0, 1] = 1.0
    with raises("overflow in the Bellman solve: the inputs are finite but the result is not"):
        policy_gradient.expected_return([[0.0], [0.0]], transition, reward, initial, 1.0, [0, 1])


def test_td_errors_raise_instead_of_returning_infinities():
    with raises("overflow in td_errors: the inputs are finite but an intermediate result is not"):
        advantages.td_errors([0.0], [1e308, -1e308], 1.0)


# --- the README states the promise with these numbers ---------------------------------------


def test_the_readme_states_the_limits_and_tolerances_the_tests_check():
    from tests._book import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### The promise at the numerical edges", 1)[1].split("\n## ", 1)[0]
    words = " ".join(section.split())
    for text in [
        "at most 10^6 items in an exact enumeration",
        "10^8 entries in an array",
        "10^7 passes of a loop",
        f"about {SUPPORT_TOLERANCE:.1e}",
        f"γ·(row sum) ≤ 1 + {ROW_SUM_TOLERANCE:g}",
        "overflow in the Bellman solve",
        "gives ±1",
    ]:
        assert text in words, text
    assert (MAX_ENUMERATION, MAX_ARRAY_ENTRIES, MAX_ITERATIONS) == (10**6, 10**8, 10**7)


def test_every_public_function_carries_the_finite_output_guard():
    """A file split or a refactor can drop the decorator and nothing else notices: the fuzz
    test finds the overflow only when Hypothesis happens to draw it."""
    unguarded = [
        name
        for name, function in public_functions()
        if getattr(function, "__code__", None) is not None
        and function.__code__.co_name != "guarded"
    ]
    assert not unguarded, f"without @finite_output: {unguarded}"
