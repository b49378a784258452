"""The reference solution of chapter 4's code exercise is right, and so are the numbers of
the solutions page.

The solution is checked against the per-episode loops of ``tests.oracles``, against hand
computations. Its specification (the reference passes every check, the starter none) is checked
with every exercise's in ``test_exercises.py``, and its typical mistakes in
``test_mutants.py``. The numbers the solutions page states for the derivation exercises (the
pessimistic critic, folding, the clock, the prefix-blind critic) are recomputed here, on the
chapter's tasks as ``tests.oracles`` builds them for the claims tests too. The file itself
(solution markers, starter, imports, docstring examples) is checked with every other solution
file in ``test_solution_files.py``."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests._solutions import (
    load_solution,
)
from tests.oracles import (
    BEGIN,
    DRAFT,
    HUB,
    JOB,
    JOB_GAMMA,
    JOB_LAM,
    QUICK,
    REVISED,
    START,
    SUBMIT,
    SUBMIT_OR_WORK,
    TESTED,
    TOKEN_BIGRAM,
    central_differences,
    gae_from_deltas,
    hub_preference,
    packed_gae_loop,
    packed_returns_loop,
    padded_episodes_by_hand,
    policy_average,
    random_packed,
    softmax_rows,
    steps_to_truncation,
    token_gradient_variance,
    token_task,
    trained_state_only_critic,
)

solution = load_solution("gae_timeouts")
gae = solution.gae_with_timeouts


# --- the function itself -------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(1,), (7,), (3, 10), (2, 3, 15)])
@pytest.mark.parametrize(("gamma", "lam"), [(0.99, 0.95), (1.0, 1.0), (0.0, 0.0), (0.9, 0.0)])
def test_matches_a_per_episode_loop(shape, gamma, lam):
    rng = np.random.default_rng([*shape, round(100 * gamma), round(100 * lam)])
    batch = random_packed(rng, shape, p_end=0.2)
    got = gae(*batch, gamma, lam)
    assert got.shape == shape and got.dtype == np.float64
    np.testing.assert_allclose(got, packed_gae_loop(*batch, gamma, lam), atol=1e-12)


def test_hand_computed_edge_cases():
    r = np.array([1.0, 2.0, 3.0])
    v = np.full(3, 0.5)
    v_next = np.full(3, 4.0)
    yes, no = np.ones(3, dtype=bool), np.zeros(3, dtype=bool)
    np.testing.assert_allclose(gae(r, v, v_next, yes, no, 0.9, 0.9), r - v)
    np.testing.assert_allclose(gae(r, v, v_next, no, yes, 0.9, 0.9), r + 0.9 * v_next - v)
    # No boundary: one episode cut by the array end, the plain recursion with bootstrap 4.
    chain = np.array([0.5, 0.5, 4.0])
    deltas = r + 0.9 * chain - v
    expected = [
        deltas[0] + 0.81 * deltas[1] + 0.81**2 * deltas[2],
        deltas[1] + 0.81 * deltas[2],
        deltas[2],
    ]
    np.testing.assert_allclose(gae(r, v, chain, no, no, 0.9, 0.9), expected)
    # T = 1.
    assert gae([1.0], [0.5], [2.0], [False], [True], 0.9, 0.95).tolist() == pytest.approx([2.3])
    assert gae([1.0], [0.5], [2.0], [True], [False], 0.9, 0.95).tolist() == pytest.approx([0.5])
    assert gae([1.0], [0.5], [2.0], [False], [False], 0.9, 0.95).tolist() == pytest.approx([2.3])


def test_lambda_one_plus_values_is_the_bootstrapped_return():
    rewards, values, next_values, terminated, truncated = random_packed(
        np.random.default_rng(3), (4, 12), p_end=0.2
    )
    got = gae(rewards, values, next_values, terminated, truncated, 0.97, 1.0) + values
    expected = packed_returns_loop(rewards, next_values, terminated, truncated, 0.97)
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_terminal_next_values_are_never_read():
    rewards, values, next_values, terminated, truncated = random_packed(
        np.random.default_rng(4), (3, 9), p_end=0.2
    )
    changed = np.where(terminated, 1e6, next_values)
    np.testing.assert_array_equal(
        gae(rewards, values, next_values, terminated, truncated, 0.9, 0.8),
        gae(rewards, values, changed, terminated, truncated, 0.9, 0.8),
    )


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"truncated": [False, True, False]}, "truncated"),  # both flags at step 1
        ({"values": [0.0, 0.0]}, "values"),
        ({"next_values": np.zeros((1, 3))}, "next_values"),
        ({"terminated": [False, False]}, "terminated"),
        ({"terminated": [0, 2, 0]}, "terminated"),
        ({"gamma": 1.5}, "gamma"),
        ({"lam": -0.1}, "lam"),
        ({"gamma": float("nan")}, "gamma"),
        ({"rewards": [0.0, float("inf"), 0.0]}, "rewards"),
        ({"rewards": 1.0, "values": 1.0, "next_values": 1.0}, "rewards"),
    ],
)
def test_bad_input_raises_a_value_error_naming_the_argument(change, name):
    arguments = {
        "rewards": [0.0, 1.0, 0.0],
        "values": [0.0, 0.0, 0.0],
        "next_values": [0.0, 0.0, 0.0],
        "terminated": [False, True, False],
        "truncated": [False, False, False],
        "gamma": 0.9,
        "lam": 0.9,
    }
    arguments.update(change)
    with pytest.raises(ValueError, match=rf"^{name}"):
        gae(**arguments)


# --- the grading specification, evaluated in-process ---------------------------------------


# --- the numbers of the solutions page ------------------------------------------------------


# The submit-or-work task and its exact solution, the job task, and the 2 + 2 token task are
# those of tests.oracles (section "Chapter 4's tasks").
TASK = SUBMIT_OR_WORK


def pessimistic_updates(c=-0.25):
    """The TD actor-critic's expected update with V = v + c, and the true gradient."""
    bias = TASK.td_bias(np.where(TASK.live, c, 0.0))
    return TASK.expected_update(TASK.advantages + bias), TASK.expected_update(TASK.advantages), bias


def test_pessimistic_critic_bias_table():
    _, _, bias = pessimistic_updates()
    np.testing.assert_allclose(
        bias[TASK.live], [[0.25, 0.0], [0.25, 0.0], [0.25, 0.075]], atol=1e-12
    )


def test_pessimistic_critic_update_numbers():
    td, true, _ = pessimistic_updates()
    np.testing.assert_allclose(td[:, SUBMIT], [-0.0125, 0.0203, 0.0622], atol=5e-5)
    np.testing.assert_allclose(td[:, SUBMIT] / true[:, SUBMIT], [0.181, -0.761, 1.394], atol=5e-4)
    assert np.all(td[:, SUBMIT] > true[:, SUBMIT])  # every "submit" component moves up


def test_pessimistic_critic_matters_most_in_the_revised_state():
    """The page leads with the sign flip in the revised state; the draft keeps < 1/5."""
    td, true, _ = pessimistic_updates()
    assert true[REVISED, SUBMIT] < 0 < td[REVISED, SUBMIT]
    assert 0 < td[DRAFT, SUBMIT] / true[DRAFT, SUBMIT] < 0.2
    assert td[TESTED, SUBMIT] / true[TESTED, SUBMIT] == pytest.approx(1.4, abs=0.01)


def test_a_constant_error_cancels_when_no_action_can_end_the_episode():
    """gamma = 0.9, every transition into a terminal state sent back to the draft instead."""
    looping = TASK.transition.copy()
    looping[:3, :, DRAFT] += looping[:3, :, TASK.terminal].sum(axis=2)
    looping[:3, :, TASK.terminal] = 0.0
    error = np.where(TASK.live, -0.25, 0.0)
    bias = 0.9 * np.einsum("sat,t->sa", looping, error) - error[:, None]
    centered = bias - np.sum(TASK.policy * bias, axis=1, keepdims=True)
    np.testing.assert_allclose(centered[TASK.live], 0.0, atol=1e-15)


@pytest.mark.parametrize("seed", range(3))
def test_lambda_one_targets_lose_the_discounted_bootstrap(seed):
    """Timeouts marked terminal: each lambda = 1 target k steps before a cut loses
    gamma^(k + 1) V_next, and nothing changes elsewhere."""
    rewards, _, next_values, terminated, truncated = random_packed(
        np.random.default_rng(seed), (5, 15)
    )
    gamma = 0.95
    honored = packed_returns_loop(rewards, next_values, terminated, truncated, gamma)
    marked = packed_returns_loop(
        rewards, next_values, terminated | truncated, np.zeros_like(truncated), gamma
    )
    k, cut_value = steps_to_truncation(terminated, truncated, next_values)
    predicted = -(gamma ** (k + 1)) * cut_value
    assert truncated.any()
    np.testing.assert_allclose(marked - honored, predicted, atol=1e-12)


# The time-limited job task: values with n steps left, by backward induction.
JOB_HORIZON = 5


def finite_horizon_values():
    """v_n = r_pi + gamma P_pi v_(n-1), v_0 = 0, and the preference q_n(start) - q_n(quick)."""
    _, r_pi = policy_average(JOB.transition, JOB.reward, JOB.policy, JOB.terminal)
    values = np.zeros((JOB_HORIZON + 1, 2))
    preference = np.zeros(JOB_HORIZON + 1)
    for n in range(1, JOB_HORIZON + 1):
        values[n] = r_pi + JOB_GAMMA * JOB.p_pi @ values[n - 1]
        q = np.einsum("sat,sat->sa", JOB.transition, JOB.reward + JOB_GAMMA * values[n - 1])
        preference[n] = q[HUB, START] - q[HUB, QUICK]
    return values, preference


def job_windows():
    """Every window of JOB_HORIZON steps from the hub: (states, actions, rewards, probs)."""
    states, actions, rewards, _, probs = padded_episodes_by_hand(
        JOB.transition, JOB.reward, JOB.policy, JOB.initial, JOB_HORIZON, JOB.terminal
    )
    return states, actions, rewards, probs


def test_finite_horizon_values_and_preferences():
    values, preference = finite_horizon_values()
    np.testing.assert_allclose(values[[1, 5], HUB], [0.25, 2.8358], atol=5e-5)
    assert preference[1] == pytest.approx(-0.5)
    assert np.all(preference[2:] > 0)


@pytest.mark.parametrize("lam", [0.0, 0.5, 0.95, 1.0])
def test_time_aware_critic_reaches_the_finite_horizon_values_in_h_rounds(lam):
    """Regression on lambda-return targets of (state, steps left) from a random start."""
    values, _ = finite_horizon_values()
    states, _, rewards, probs = job_windows()
    weights = np.repeat(probs[:, None], JOB_HORIZON, axis=1)
    left = np.broadcast_to(JOB_HORIZON - np.arange(JOB_HORIZON), rewards.shape)
    now = states[:, :-1]
    table = np.random.default_rng(0).normal(size=(2, JOB_HORIZON + 1))
    table[:, 0] = 0.0  # no steps left: the deadline is a true termination, worth 0
    for _ in range(JOB_HORIZON):
        deltas = rewards + JOB_GAMMA * table[states[:, 1:], left - 1] - table[now, left]
        targets = gae_from_deltas(deltas, JOB_GAMMA, lam) + table[now, left]
        for s, n in itertools.product(range(2), range(1, JOB_HORIZON + 1)):
            cell = (now == s) & (left == n)
            if cell.any():
                table[s, n] = np.sum(weights[cell] * targets[cell]) / np.sum(weights[cell])
    visited = [(s, n) for s in range(2) for n in range(1, 6) if ((now == s) & (left == n)).any()]
    for s, n in visited:
        assert table[s, n] == pytest.approx(values[n, s], abs=1e-12)


def test_time_aware_preference_averaged_over_the_hub_visits():
    values, _ = finite_horizon_values()
    states, actions, rewards, probs = job_windows()
    left = np.broadcast_to(JOB_HORIZON - np.arange(JOB_HORIZON), rewards.shape)
    now, after = states[:, :-1], states[:, 1:]
    deltas = rewards + JOB_GAMMA * values[left - 1, after] - values[left, now]
    weights = np.repeat(probs[:, None], JOB_HORIZON, axis=1)
    for lam in (0.0, 0.95):
        estimates = gae_from_deltas(deltas, JOB_GAMMA, lam)
        preference = hub_preference(estimates, weights, now, actions)
        assert preference == pytest.approx(0.3094, abs=5e-5)


def test_state_only_critic_of_the_time_limited_task():
    """The page's state-only numbers: V(hub) 2.70 and preferences -0.26 and +0.25."""
    critic, preference = trained_state_only_critic(JOB_HORIZON, 0.0, True)
    assert critic[HUB] == pytest.approx(2.7013, abs=5e-5)
    assert preference == pytest.approx(-0.2647, abs=5e-5)
    _, preference = trained_state_only_critic(JOB_HORIZON, JOB_LAM, True)
    assert preference == pytest.approx(0.2540, abs=5e-5)


# The prefix-blind critic on the 2 + 2 task.
BLIND_LAMBDAS = (0.0, 0.5, 0.95, 1.0)
TOKEN = token_task(4)


def blind_critic_updates():
    responses, previous, probs, outcome, _ = TOKEN
    length = responses.shape[1]
    success = probs @ outcome
    rewards = np.zeros(responses.shape)
    rewards[:, -1] = outcome
    critic = np.zeros((len(responses), length + 1))
    critic[:, :length] = success  # the least-squares fit of every position is J
    deltas = rewards + critic[:, 1:] - critic[:, :-1]

    def exact_objective(table):
        return token_task(length, softmax_rows(table))[2] @ outcome

    exact = central_differences(exact_objective, np.log(TOKEN_BIGRAM))
    updates = {}
    for lam in BLIND_LAMBDAS:
        credit = gae_from_deltas(deltas, 1.0, lam)
        updates[lam], _ = token_gradient_variance(responses, previous, probs, credit)
    return updates, exact


def test_prefix_blind_critic_is_the_average_of_the_exact_critic():
    """V_j = E[v_pi(x_<j)] = J = 0.248 at every position (the tower property)."""
    _, _, probs, outcome, prefix_value = TOKEN
    assert probs @ outcome == pytest.approx(0.248, abs=1e-12)
    np.testing.assert_allclose(probs @ prefix_value[:, :-1], 0.248, atol=1e-12)


def test_prefix_blind_critic_scales_the_first_token_by_lambda_to_the_l_minus_1():
    updates, exact = blind_critic_updates()
    for lam in BLIND_LAMBDAS:
        ratio = updates[lam][BEGIN] / exact[BEGIN]
        np.testing.assert_allclose(ratio, lam**3, atol=1e-7)


def test_prefix_blind_critic_cosines_printed_on_the_page():
    updates, exact = blind_critic_updates()
    cosines = [
        np.sum(updates[lam] * exact) / np.linalg.norm(updates[lam]) / np.linalg.norm(exact)
        for lam in BLIND_LAMBDAS
    ]
    np.testing.assert_allclose(cosines, [0.558, 0.714, 0.998, 1.000], atol=5e-4)


def test_prefix_blind_critic_thousand_token_weight():
    assert 0.95**999 == pytest.approx(5.6e-23, rel=0.01)  # "about 6e-23": nothing
