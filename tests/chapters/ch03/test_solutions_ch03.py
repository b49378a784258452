"""The reference solutions of chapter 3's code exercises are right.

Every solution is checked against the library and against an independent hand computation.
The grading specifications are checked to reject known wrong answers, and the numbers the
solutions page states for the derivation exercises are recomputed here. The files themselves
(solution markers, starters, imports, docstring examples) are checked for every exercise in
``test_solution_files.py``.
"""

from __future__ import annotations

import functools
from math import comb

import numpy as np
import pytest

from rlfound import bandits, episodes, groups, mdp, policy_gradient
from rlfound.grading.authoring.spec import BUILTIN_DIR, load_file
from tests._solutions import load_solution
from tests.oracles import (
    central_differences,
    conversation_logits,
    conversation_mdp,
    conversation_return,
    random_mdp,
    reinforce_by_hand,
    softmax_rows,
)

action_values = load_solution("action_values")
reinforce = load_solution("reward_to_go_reinforce")

# The chapter's two-turn conversation and policy (terminal rows uniform, never used).
TRANSITION, REWARD, TERMINAL, INITIAL = conversation_mdp(2)
POLICY = softmax_rows(conversation_logits(2))


def conversation():
    return TRANSITION.copy(), REWARD.copy()


# --- Action values -----------------------------------------------------------------------


def test_q_values_for_the_conversation_by_hand():
    transition, reward = conversation()
    q = action_values.q_values(transition, reward, POLICY, 1.0, TERMINAL)
    # By hand: turn 2 rows are the rating probabilities; turn 1 adds the turn-2 values.
    v1, v2 = 0.8 * 0.8 + 0.2 * 0.5, 0.4 * 0.3 + 0.6 * 0.7
    expected = [
        [0.6 * (1 + v1) + 0.4 * v2, 0.4 * (1 + v1) + 0.6 * v2],
        [0.8, 0.5],
        [0.3, 0.7],
        [0.0, 0.0],
        [0.0, 0.0],
    ]
    np.testing.assert_allclose(q, expected, atol=1e-12)
    np.testing.assert_allclose(q[0], [1.26, 1.02], atol=1e-12)


@pytest.mark.parametrize("gamma", [0.0, 0.5, 0.9, 0.99])
def test_q_values_match_the_library_and_satisfy_both_identities(gamma):
    rng = np.random.default_rng(int(gamma * 100))
    for num_states, num_actions in [(1, 1), (2, 2), (3, 3), (6, 2), (8, 4)]:
        transition, reward, policy, terminal, _ = random_mdp(rng, num_states, num_actions)
        if num_states == 1:
            terminal = np.array([False])
        q = action_values.q_values(transition, reward, policy, gamma, terminal)
        assert q.shape == (num_states, num_actions) and q.dtype == np.float64
        library = mdp.action_values(transition, reward, policy, gamma, terminal)
        np.testing.assert_allclose(q, library, rtol=1e-10, atol=1e-12)
        v = mdp.state_values(transition, reward, policy, gamma, terminal)
        np.testing.assert_allclose((policy * q).sum(axis=1), v, atol=1e-10)
        # The Bellman equation for q, written out with loops.
        for s in np.flatnonzero(~terminal):
            for a in range(num_actions):
                target = sum(
                    transition[s, a, t]
                    * (reward[s, a, t] + gamma * (0.0 if terminal[t] else policy[t] @ q[t]))
                    for t in range(num_states)
                )
                assert q[s, a] == pytest.approx(target, abs=1e-10)
        np.testing.assert_allclose(q[terminal], 0.0)


def test_q_values_ignores_terminal_rows():
    transition, reward = conversation()
    garbage = transition.copy()
    garbage[3:] = 0.0  # not distributions: must not matter
    policy = POLICY.copy()
    policy[3:] = [[7.0, -1.0], [0.0, 0.0]]
    q = action_values.q_values(garbage, reward, policy, 1.0, TERMINAL)
    np.testing.assert_allclose(q, action_values.q_values(transition, reward, POLICY, 1.0, TERMINAL))


@pytest.mark.parametrize(
    ("change", "name"),
    [
        (lambda a: {**a, "transition": a["transition"][:, :, :4]}, "transition"),
        (lambda a: {**a, "reward": a["reward"][:4]}, "reward"),
        (lambda a: {**a, "policy": 2.0 * a["policy"]}, "policy"),
        (lambda a: {**a, "policy": a["policy"][:, :1]}, "policy"),
        (lambda a: {**a, "gamma": 1.5}, "gamma"),
        (lambda a: {**a, "gamma": float("nan")}, "gamma"),
        (lambda a: {**a, "terminal": np.array([0, 0, 0, 1, 1])}, "terminal"),
        (lambda a: {**a, "reward": np.where(a["reward"] == 1.0, np.nan, 0.0)}, "reward"),
    ],
)
def test_q_values_rejects_bad_input(change, name):
    transition, reward = conversation()
    arguments = change(
        {
            "transition": transition,
            "reward": reward,
            "policy": POLICY,
            "gamma": 1.0,
            "terminal": TERMINAL,
        }
    )
    with pytest.raises(ValueError, match=rf"^{name}"):
        action_values.q_values(**arguments)


def test_q_values_refuses_undiscounted_loops():
    loop = np.zeros((2, 1, 2))
    loop[0, 0, 0] = loop[1, 0, 1] = 1.0
    with pytest.raises(ValueError, match=r"^gamma"):
        action_values.q_values(loop, np.ones((2, 1, 2)), np.ones((2, 1)), 1.0, [False, True])
    q = action_values.q_values(loop, np.ones((2, 1, 2)), np.ones((2, 1)), 0.5, np.array([0, 1]) > 0)
    np.testing.assert_allclose(q, [[2.0], [0.0]])  # 1 / (1 - 0.5)


# --- REINFORCE estimates -----------------------------------------------------------------


def test_reinforce_estimates_for_the_chapter_episode():
    logits = np.log(POLICY)
    args = (logits, [[0, 1, 4]], [[0, 1]], [[1.0, 0.0]], 1.0)
    np.testing.assert_allclose(
        reinforce.reinforce_estimates(*args, True)[0, :2], [[0.5, -0.5], [0, 0]]
    )
    np.testing.assert_allclose(
        reinforce.reinforce_estimates(*args, False)[0, :2], [[0.5, -0.5], [-0.8, 0.8]]
    )


@pytest.mark.parametrize("gamma", [0.0, 0.7, 1.0])
@pytest.mark.parametrize("reward_to_go", [True, False])
def test_reinforce_estimates_match_hand_and_library(gamma, reward_to_go):
    rng = np.random.default_rng(5)
    transition, reward, policy, terminal, _ = random_mdp(rng, 5, 3)
    logits = np.log(policy)
    batch = episodes.sample_episodes(
        transition, reward, policy, np.ones(5) / 5, 6, num_episodes=40, terminal=terminal, rng=2
    )
    ours = reinforce.reinforce_estimates(
        logits, batch.states, batch.actions, batch.rewards, gamma, reward_to_go
    )
    assert ours.shape == (40, 5, 3)
    assert (batch.actions < 0).any()  # some episodes ended early: padding is exercised
    for n, length in enumerate(batch.lengths):
        hand = reinforce_by_hand(
            logits,
            batch.states[n, :length],
            batch.actions[n, :length],
            batch.rewards[n, :length],
            gamma,
            reward_to_go,
        )
        np.testing.assert_allclose(ours[n], hand, atol=1e-12)
        library = policy_gradient.reinforce_trajectory_gradient(
            logits,
            batch.states[n],
            batch.actions[n],
            batch.rewards[n],
            gamma,
            reward_to_go=reward_to_go,
        )
        np.testing.assert_allclose(ours[n], library, atol=1e-12)


@pytest.mark.parametrize("gamma", [1.0, 0.9])
@pytest.mark.parametrize("reward_to_go", [True, False])
def test_reinforce_estimates_are_unbiased_on_the_conversation(gamma, reward_to_go):
    logits = np.random.default_rng(1).normal(size=(5, 2))
    listed = episodes.enumerate_episodes(
        TRANSITION, REWARD, softmax_rows(logits), INITIAL, 2, TERMINAL
    )
    estimates = reinforce.reinforce_estimates(
        logits, listed.states, listed.actions, listed.rewards, gamma, reward_to_go
    )
    mean = np.tensordot(listed.weights, estimates, axes=1)
    gradient = central_differences(lambda x: conversation_return(x, 2, gamma), logits)
    np.testing.assert_allclose(mean, gradient, atol=1e-8)


@pytest.mark.parametrize(
    ("change", "name"),
    [
        (lambda a: {**a, "logits": np.zeros(2)}, "logits"),
        (lambda a: {**a, "actions": np.array([[-1, 1]])}, "actions"),
        (lambda a: {**a, "actions": np.array([[0, 2]])}, "actions"),
        (lambda a: {**a, "actions": np.array([[0.0, 1.0]])}, "actions"),
        (lambda a: {**a, "states": np.array([[0, 1]])}, "states"),
        (lambda a: {**a, "states": np.array([[0, 1, 9]])}, "states"),
        (lambda a: {**a, "rewards": np.array([[1.0]])}, "rewards"),
        (
            lambda a: {**a, "actions": np.array([[0, -1]]), "rewards": np.array([[1.0, 2.0]])},
            "rewards",
        ),
        (lambda a: {**a, "gamma": -0.5}, "gamma"),
        (lambda a: {**a, "reward_to_go": "yes"}, "reward_to_go"),
    ],
)
def test_reinforce_estimates_rejects_bad_input(change, name):
    arguments = change(
        {
            "logits": np.log(POLICY),
            "states": np.array([[0, 1, 4]]),
            "actions": np.array([[0, 1]]),
            "rewards": np.array([[1.0, 0.0]]),
            "gamma": 1.0,
            "reward_to_go": True,
        }
    )
    with pytest.raises(ValueError, match=rf"^{name}"):
        reinforce.reinforce_estimates(**arguments)


# --- The grading specifications reject known wrong answers --------------------------------


def undiscounted_reward_to_go(logits, states, actions, rewards, gamma, reward_to_go):
    """A common bug: weight step t by G_t instead of gamma^t G_t (the total form is right)."""
    estimates = np.zeros((len(actions), *logits.shape))
    for n in range(len(actions)):
        estimates[n] = reinforce_by_hand(
            logits, states[n], actions[n], rewards[n], gamma, reward_to_go, keep_discount=False
        )
    return estimates


def test_the_unbiasedness_check_rejects_a_missing_discount():
    spec = load_file(BUILTIN_DIR / "reward_to_go_reinforce.py")
    check = next(c for c in spec.checks if c.name == "unbiased")
    for case in check.inputs(np.random.default_rng(0)):
        assert check.holds(reinforce.reinforce_estimates(**case), case) is True
        verdict = check.holds(undiscounted_reward_to_go(**case), case)
        if case["reward_to_go"] and case["gamma"] < 1.0:
            assert isinstance(verdict, str), case["gamma"]
        else:
            assert verdict is True


def test_the_bellman_check_rejects_state_values_copied_into_q():
    spec = load_file(BUILTIN_DIR / "action_values.py")
    check = next(c for c in spec.checks if c.name == "bellman-q")
    for case in check.inputs(np.random.default_rng(0)):
        good = action_values.q_values(**case)
        assert check.holds(good, case) is True
        v = mdp.state_values(
            case["transition"], case["reward"], case["policy"], case["gamma"], case["terminal"]
        )
        wrong = np.repeat(v[:, None], good.shape[1], axis=1)  # q(s, a) = v(s) for every a
        if good.shape[1] > 1:
            assert isinstance(check.holds(wrong, case), str)


# --- Numbers the solutions page states -----------------------------------------------------


def test_a_user_sharing_the_parameters_adds_two_thirds_to_the_score():
    """d/dθ log σ(θ) at θ = log 0.5, the extra gradient entry the solutions page quotes."""

    def log_sigmoid(theta):
        return -np.log1p(np.exp(-theta[0]))

    extra = central_differences(log_sigmoid, np.array([np.log(0.5)]))[0]
    assert extra == pytest.approx(2.0 / 3.0, abs=1e-8)


def grpo_scale(p, size):
    expectation = sum(
        comb(size, k) * p**k * (1 - p) ** (size - k) * np.sqrt(k * (size - k))
        for k in range(size + 1)
    )
    return expectation / (size * p * (1 - p))


@pytest.mark.parametrize("p", [0.05, 0.1, 0.5, 0.7, 0.9])
@pytest.mark.parametrize("size", [2, 3, 4, 8])
def test_grpo_binary_scale_closed_form(p, size):
    logits = np.log([p, 1 - p])
    q = np.array([1.0, 0.0])
    gradient = bandits.exact_bandit_gradient(logits, q)
    grpo = functools.partial(groups.group_normalized_advantages, eps=0.0)
    update = groups.enumerate_group_gradient(logits, q, size, grpo)
    np.testing.assert_allclose(update, grpo_scale(p, size) * gradient, rtol=1e-10, atol=1e-15)
    loo = groups.enumerate_group_gradient(logits, q, size, groups.leave_one_out_advantages)
    np.testing.assert_allclose(loo, gradient, rtol=1e-10, atol=1e-15)
    assert grpo_scale(p, size) <= np.sqrt((size - 1) / size / (p * (1 - p))) + 1e-12
    if size == 2:
        assert grpo_scale(p, size) == pytest.approx(1.0)
    # One group with k successes gives sqrt(k (G - k)) / G (1, -1), whatever p is.
    for k in range(1, size):
        rewards = np.array([1.0] * k + [0.0] * (size - k))
        advantages = groups.group_normalized_advantages(rewards, eps=0.0)
        pi = np.array([p, 1 - p])
        scores = np.where(rewards[:, None] == 1.0, [1.0, 0.0], [0.0, 1.0]) - pi
        np.testing.assert_allclose(
            advantages @ scores / size, np.sqrt(k * (size - k)) / size * np.array([1.0, -1.0])
        )


def test_grpo_scale_tends_to_one_over_the_reward_sd():
    assert grpo_scale(0.1, 512) == pytest.approx(1 / np.sqrt(0.09), rel=0.005)
    assert grpo_scale(0.1, 32) == pytest.approx(3.1440, abs=5e-4)
    factors = [grpo_scale(p, 8) for p in (0.9, 0.5, 0.1)]
    np.testing.assert_allclose(factors, [2.328, 1.856, 2.328], atol=5e-4)


def search_agent(cost):
    """The solutions page's counterexample, written out independently."""
    transition = np.zeros((5, 2, 5))
    reward = np.zeros_like(transition)
    for turn, success in enumerate((0.2, 0.5, 0.8)):
        transition[turn, 0, [3, 4]] = success, 1 - success
        reward[turn, 0, 3] = 1.0
        if turn < 2:
            transition[turn, 1, [turn + 1, 4]] = 0.8, 0.2
        else:
            transition[turn, 1, 4] = 1.0
        reward[turn, 1] = -cost
    transition[3, :, 3] = transition[4, :, 4] = 1.0
    return transition, reward


AGENT_LOGITS = np.array([[0.0, 0.5], [0.3, 0.0], [1.0, -1.0], [0.0, 0.0], [0.0, 0.0]])
AGENT_TERMINAL = np.array([False, False, False, True, True])


def counterexample_variances(cost):
    transition, reward = search_agent(cost)
    listed = episodes.enumerate_episodes(
        transition, reward, softmax_rows(AGENT_LOGITS), np.eye(5)[0], 3, AGENT_TERMINAL
    )
    result = []
    for reward_to_go in (False, True):
        estimates = np.array(
            [
                reinforce_by_hand(AGENT_LOGITS, s[:n], a[:n], r[:n], 1.0, reward_to_go)
                for s, a, r, n in zip(
                    listed.states, listed.actions, listed.rewards, listed.lengths, strict=True
                )
            ]
        )
        mean = np.tensordot(listed.weights, estimates, axes=1)
        result.append(listed.weights @ np.sum((estimates - mean) ** 2, axis=(1, 2)))
    return result


def test_reward_to_go_counterexample():
    total, to_go = counterexample_variances(0.1)
    assert (round(total, 4), round(to_go, 4)) == (0.2151, 0.2345)
    assert total < to_go
    total, to_go = counterexample_variances(0.0)
    assert total == pytest.approx(to_go, abs=1e-12)
    total, to_go = counterexample_variances(-0.1)
    assert total > to_go


def search_agent_optimal_baseline(cost):
    """b* of the search agent's turns by eq-optimal-baseline-two-actions, with q written out.

    Turn t: answer pays 1 with probability 0.2, 0.5, 0.8; search pays -cost and reaches the
    next turn with probability 0.8 (never from the last turn).
    """
    policy = softmax_rows(AGENT_LOGITS)
    success = (0.2, 0.5, 0.8)
    values = np.zeros(4)
    b_star = np.zeros(3)
    for turn in reversed(range(3)):
        answer = success[turn]
        search = -cost + (0.8 * values[turn + 1] if turn < 2 else 0.0)
        values[turn] = policy[turn] @ [answer, search]
        b_star[turn] = policy[turn, 1] * answer + policy[turn, 0] * search
    return b_star


def test_search_agent_optimal_baseline_quoted_on_the_solutions_page():
    b_star = search_agent_optimal_baseline(0.1)
    assert b_star[0] > 0.2 and round(b_star[1], 2) == 0.47 and round(b_star[2], 2) == 0.01
    transition, reward = search_agent(0.1)
    listed = episodes.enumerate_episodes(
        transition, reward, softmax_rows(AGENT_LOGITS), np.eye(5)[0], 3, AGENT_TERMINAL
    )
    library = policy_gradient.optimal_state_baseline(
        AGENT_LOGITS, listed.states, listed.actions, listed.rewards, 1.0, listed.weights
    )
    np.testing.assert_allclose(library[:3], b_star, atol=1e-12)


def test_search_agent_total_return_form_is_less_noisy_by_00193():
    total, to_go = counterexample_variances(0.1)
    assert total - to_go == pytest.approx(-0.0193, abs=5e-5)
