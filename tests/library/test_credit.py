"""rlfound.credit: turn-level reward-to-go, potential-based shaping, branching estimates,
option models and semi-Markov returns.

References: per-turn loops; optimal values by evaluating every deterministic policy
(tests.oracles.optimal_values_by_enumeration) for the invariance of shaping, as hypothesis
properties over random potentials and random MDPs; exact means and variances of returns by
enumerating every episode (rlfound.episodes.enumerate_episodes is itself tested against
tests.oracles.episodes_by_hand); option models by pushing probability mass forward
(tests.oracles.option_model_by_propagation) and closed forms for geometric durations.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlfound import credit, episodes, mdp
from rlfound.returns import discounted_returns
from tests.oracles import (
    ADVANCE,
    BACK,
    DEBUG_LOCATED,
    DEBUG_PATCHED,
    DEBUG_START,
    SUBMIT_NOW,
    TEXT,
    TOOL,
    debug_task,
    linear_solve_values,
    optimal_values_by_enumeration,
    option_model_by_propagation,
    random_mdp,
    stage_task,
    tool_task,
)

seeds = st.integers(0, 2**32 - 1)
unit = st.floats(0.0, 1.0, allow_nan=False)
finite = st.floats(-5.0, 5.0, allow_nan=False, allow_infinity=False)


# --- turn_reward_to_go -----------------------------------------------------------------------


def turn_reward_to_go_loop(turn_rewards, ids, gamma):
    """Each token's turn k, then Σ_{j >= k} γ^(j-k) r_j summed term by term; 0 for id -1."""
    out = np.zeros(len(ids))
    for position, k in enumerate(ids):
        if k >= 0:
            out[position] = sum(
                gamma ** (j - k) * turn_rewards[j] for j in range(k, len(turn_rewards))
            )
    return out


def test_turn_reward_to_go_by_hand():
    # Turn rewards (0, 0.5, 1), γ = 0.5: G = (0 + 0.25 + 0.25, 0.5 + 0.5, 1) = (0.5, 1, 1).
    got = credit.turn_reward_to_go([0.0, 0.5, 1.0], [-1, 0, 0, -1, 1, 2, 2, -1], 0.5)
    np.testing.assert_allclose(got, [0.0, 0.5, 0.5, 0.0, 1.0, 1.0, 1.0, 0.0])


@pytest.mark.equation("eq-turn-reward-to-go")
@given(
    data=st.data(),
    num_turns=st.integers(1, 5),
    length=st.integers(1, 12),
    gamma=unit,
)
def test_turn_reward_to_go_equals_the_per_turn_sum(data, num_turns, length, gamma):
    turn_rewards = np.array(data.draw(st.lists(finite, min_size=num_turns, max_size=num_turns)))
    ids = np.array(
        data.draw(st.lists(st.integers(-1, num_turns - 1), min_size=length, max_size=length))
    )
    np.testing.assert_allclose(
        credit.turn_reward_to_go(turn_rewards, ids, gamma),
        turn_reward_to_go_loop(turn_rewards, ids, gamma),
        atol=1e-12,
    )


def test_turn_reward_to_go_discounts_turns_not_tokens():
    # A long first turn (5 tokens) and a one-token second turn: the second turn's reward
    # reaches the first turn discounted once, whatever the number of tokens.
    got = credit.turn_reward_to_go([0.0, 1.0], [0, 0, 0, 0, 0, -1, 1], 0.9)
    np.testing.assert_allclose(got, [0.9] * 5 + [0.0, 1.0])


def test_turn_reward_to_go_batches_rows_independently():
    rewards = np.array([[1.0, 0.0], [0.0, 2.0]])
    ids = np.array([[0, 1, -1], [1, 1, 0]])
    got = credit.turn_reward_to_go(rewards, ids, 0.5)
    for row in range(2):
        np.testing.assert_allclose(got[row], turn_reward_to_go_loop(rewards[row], ids[row], 0.5))


def test_earlier_turn_rewards_never_enter_a_later_turns_credit():
    base = credit.turn_reward_to_go([0.0, 0.0, 1.0], [0, 1, 2], 1.0)
    changed = credit.turn_reward_to_go([7.0, 0.0, 1.0], [0, 1, 2], 1.0)
    np.testing.assert_array_equal(base[1:], changed[1:])
    assert changed[0] == base[0] + 7.0


# --- shaped_reward: invariance of the optimal policy ------------------------------------------


def greedy_sets(q, terminal, gap=1e-6):
    """The set of maximizing actions of each live state, and whether the best is clear."""
    sets, clear = [], []
    for s in np.flatnonzero(~terminal):
        best = q[s].max()
        sets.append(frozenset(np.flatnonzero(q[s] >= best - 1e-9)))
        others = q[s][q[s] < best - 1e-9]
        clear.append(others.size == 0 or best - others.max() > gap)
    return sets, clear


@pytest.mark.equation("eq-shaped-values")
@given(
    seed=seeds,
    gamma=st.floats(0.0, 0.95),
    num_states=st.integers(2, 5),
    num_actions=st.integers(2, 3),
    potential=st.lists(finite, min_size=5, max_size=5),
)
def test_shaping_shifts_optimal_action_values_by_the_potential(
    seed, gamma, num_states, num_actions, potential
):
    """q*_shaped(s, a) = q*(s, a) - Φ(s) and the optimal actions are unchanged (Ng et al.)."""
    rng = np.random.default_rng(seed)
    transition, reward, _, terminal, _ = random_mdp(rng, num_states, num_actions, num_terminal=1)
    phi = np.array(potential[:num_states])
    shaped = credit.shaped_reward(reward, phi, gamma, terminal)
    _, q = optimal_values_by_enumeration(transition, reward, gamma, terminal)
    _, q_shaped = optimal_values_by_enumeration(transition, shaped, gamma, terminal)
    live = ~terminal
    np.testing.assert_allclose(q_shaped[live], (q - phi[:, None])[live], atol=1e-9)
    sets, clear = greedy_sets(q, terminal)
    shaped_sets, _ = greedy_sets(q_shaped, terminal)
    for before, after, unambiguous in zip(sets, shaped_sets, clear, strict=True):
        if unambiguous:
            assert before == after


@given(seed=seeds, potential=st.lists(finite, min_size=4, max_size=4))
def test_shaping_invariance_holds_with_gamma_one_when_episodes_end(seed, potential):
    rng = np.random.default_rng(seed)
    transition, reward, _, terminal, _ = random_mdp(rng, 4, 2, num_terminal=1)
    phi = np.array(potential)
    _, q = optimal_values_by_enumeration(transition, reward, 1.0, terminal)
    _, q_shaped = optimal_values_by_enumeration(
        transition, credit.shaped_reward(reward, phi, 1.0, terminal), 1.0, terminal
    )
    np.testing.assert_allclose(q_shaped[~terminal], (q - phi[:, None])[~terminal], atol=1e-8)


@pytest.mark.equation("eq-shaped-values")
@given(seed=seeds, gamma=st.floats(0.0, 1.0), potential=st.lists(finite, min_size=5, max_size=5))
def test_shaping_shifts_the_values_of_every_policy(seed, gamma, potential):
    """v'_π = v_π - Φ for any policy π, not only the optimal one (γ = 1 included: every policy
    of a random_mdp ends its episodes)."""
    rng = np.random.default_rng(seed)
    transition, reward, policy, terminal, _ = random_mdp(rng, 5, 2, num_terminal=2)
    phi = np.array(potential)
    values, _ = linear_solve_values(transition, reward, policy, gamma, terminal)
    shaped, _ = linear_solve_values(
        transition, credit.shaped_reward(reward, phi, gamma, terminal), policy, gamma, terminal
    )
    np.testing.assert_allclose(shaped[~terminal], (values - phi)[~terminal], atol=1e-8)


def test_a_terminal_potential_that_is_kept_can_change_the_optimal_policy():
    """The debugging task with the stage counter Φ = (0, 1, 2) and both endings counted as
    3 stages done, γ = 0.9: kept, the terminal potential pays for ending early and the optimal
    first action becomes 'submit now'; set to 0, nothing changes."""
    transition, reward, terminal = debug_task()
    phi = np.array([0.0, 1.0, 2.0, 3.0, 3.0])
    _, q = optimal_values_by_enumeration(transition, reward, 0.9, terminal)
    kept = credit.shaped_reward(reward, phi, 0.9, terminal, zero_terminal=False)
    zeroed = credit.shaped_reward(reward, phi, 0.9, terminal)
    _, q_kept = optimal_values_by_enumeration(transition, kept, 0.9, terminal)
    _, q_zeroed = optimal_values_by_enumeration(transition, zeroed, 0.9, terminal)
    assert q[DEBUG_START].argmax() == ADVANCE
    assert q_kept[DEBUG_START].argmax() == SUBMIT_NOW
    assert q_zeroed[DEBUG_START].argmax() == ADVANCE


def test_equal_terminal_potentials_are_harmless_with_gamma_one():
    """With γ = 1 a potential c shared by all terminal states adds the constant c to every
    return, so q' = q - Φ(s) + c: the optimal actions stay (every random_mdp policy ends)."""
    rng = np.random.default_rng(5)
    transition, reward, _, terminal, _ = random_mdp(rng, 5, 3, num_terminal=2)
    phi = np.array([0.4, -1.0, 2.0, 1.5, 1.5])  # states 3 and 4 are terminal
    kept = credit.shaped_reward(reward, phi, 1.0, terminal, zero_terminal=False)
    _, q = optimal_values_by_enumeration(transition, reward, 1.0, terminal)
    _, q_kept = optimal_values_by_enumeration(transition, kept, 1.0, terminal)
    live = ~terminal
    np.testing.assert_allclose(q_kept[live], (q - phi[:, None] + 1.5)[live], atol=1e-8)


@given(seed=seeds, gamma=st.floats(0.0, 0.9), potential=st.lists(finite, min_size=4, max_size=4))
def test_an_absorbing_end_that_keeps_paying_shaping_needs_no_zero_potential(seed, gamma, potential):
    """If the end of an episode is an absorbing live state whose self-loop pays no reward but
    keeps receiving γΦ - Φ forever (the formulation of Ng et al.), the term γ^T Φ(end) is paid
    back and any potential preserves q* - Φ, for γ < 1."""
    rng = np.random.default_rng(seed)
    transition, reward, _, terminal, _ = random_mdp(rng, 4, 2, num_terminal=1)
    end = int(np.flatnonzero(terminal)[0])
    absorbing = transition.copy()
    absorbing[end] = 0.0
    absorbing[end, :, end] = 1.0
    reward = reward.copy()
    reward[end] = 0.0
    no_terminal = np.zeros(4, dtype=bool)
    phi = np.array(potential)
    _, q = optimal_values_by_enumeration(absorbing, reward, gamma, no_terminal)
    shaped = credit.shaped_reward(reward, phi, gamma)  # no terminal state: Φ(end) is kept
    _, q_shaped = optimal_values_by_enumeration(absorbing, shaped, gamma, no_terminal)
    np.testing.assert_allclose(q_shaped, q - phi[:, None], atol=1e-8)


def test_shaped_reward_by_hand():
    reward = np.zeros((2, 2, 2))
    reward[0, 1, 1] = 1.0
    got = credit.shaped_reward(reward, [0.5, 2.0], 0.9, terminal=[False, True])
    # From state 0: to state 0 pays 0.9 * 0.5 - 0.5; to the terminal state 0 - 0.5.
    np.testing.assert_allclose(got[0], [[-0.05, -0.5], [-0.05, 0.5]])
    np.testing.assert_array_equal(got[1], reward[1])  # terminal rows are not shaped
    kept = credit.shaped_reward(reward, [0.5, 2.0], 0.9, [False, True], zero_terminal=False)
    np.testing.assert_allclose(kept[0], [[-0.05, 1.3], [-0.05, 2.3]])


def test_a_milestone_bonus_makes_the_optimal_policy_loop():
    """+0.1 for entering 'located' or 'patched' (not potential-based): with γ = 0.9 the optimal
    policy goes back and forth between them and never submits, while the potential-based
    version of the same idea, Φ = (0, 0.1, 0.2), keeps the optimal policy."""
    transition, reward, terminal = debug_task()
    bonus = reward.copy()
    bonus[:3, :, [DEBUG_LOCATED, DEBUG_PATCHED]] += 0.1
    _, q_bonus = optimal_values_by_enumeration(transition, bonus, 0.9, terminal)
    assert q_bonus[DEBUG_PATCHED].argmax() == BACK and q_bonus[DEBUG_LOCATED].argmax() == ADVANCE
    potential = credit.shaped_reward(reward, [0.0, 0.1, 0.2, 0.0, 0.0], 0.9, terminal)
    _, q_potential = optimal_values_by_enumeration(transition, potential, 0.9, terminal)
    _, q = optimal_values_by_enumeration(transition, reward, 0.9, terminal)
    np.testing.assert_array_equal(q_potential[:3].argmax(axis=1), q[:3].argmax(axis=1))
    assert np.all(q[:3].argmax(axis=1) == ADVANCE)


# --- shaped_episode_rewards ------------------------------------------------------------------


@st.composite
def episodes_with_potentials(draw):
    horizon = draw(st.integers(1, 8))
    rewards = np.array(draw(st.lists(finite, min_size=horizon, max_size=horizon)))
    potentials = np.array(draw(st.lists(finite, min_size=horizon + 1, max_size=horizon + 1)))
    return rewards, potentials


@pytest.mark.equation("eq-shaping-telescoping")
@given(episode=episodes_with_potentials(), gamma=unit)
def test_shaped_episode_rewards_telescope(episode, gamma):
    """Σ_t γ^t r'_t = G_0 - Φ(s_0) + γ^T Φ(s_T), summed term by term."""
    rewards, potentials = episode
    shaped = credit.shaped_episode_rewards(rewards, potentials, gamma)
    horizon = len(rewards)
    total = sum(gamma**t * shaped[t] for t in range(horizon))
    ret = sum(gamma**t * rewards[t] for t in range(horizon))
    assert total == pytest.approx(ret - potentials[0] + gamma**horizon * potentials[-1], abs=1e-9)


@pytest.mark.equation("eq-shaping-baseline")
@given(episode=episodes_with_potentials(), gamma=unit)
def test_reward_to_go_of_shaped_rewards_is_the_return_minus_a_state_baseline(episode, gamma):
    rewards, potentials = episode
    potentials = potentials.copy()
    potentials[-1] = 0.0  # the episode terminated
    shaped = credit.shaped_episode_rewards(rewards, potentials, gamma)
    np.testing.assert_allclose(
        discounted_returns(shaped, gamma),
        discounted_returns(rewards, gamma) - potentials[:-1],
        atol=1e-9,
    )


def test_shaped_episode_rewards_by_hand_and_in_a_batch():
    got = credit.shaped_episode_rewards([[0.0, 1.0], [1.0, 0.0]], [[0.5, 0.2, 0.0], [0, 1, 3]], 0.5)
    np.testing.assert_allclose(got, [[0.1 - 0.5, 1.0 - 0.2], [1.0 + 0.5, 1.5 - 1.0]])


# --- branch_advantage ------------------------------------------------------------------------

TOOL_TASK = tool_task()


def exact_return_moments(transition, reward, policy, gamma, terminal, start, horizon):
    """Mean and variance of the return of every episode of at most ``horizon`` steps from
    ``start`` (a distribution), by enumerating them."""
    every = episodes.enumerate_episodes(transition, reward, policy, start, horizon, terminal)
    returns = discounted_returns(every.rewards, gamma)[:, 0]
    mean = every.weights @ returns
    return mean, every.weights @ (returns - mean) ** 2


def branch_moments(transition, reward, policy, gamma, terminal, state, action, horizon):
    """E[Â] and K Var[Â] for K = 1: the moments of one branch with the action minus one with π."""
    num_states = transition.shape[0]
    after = transition[state, action]
    # First step by hand, then the enumerated continuation from the state it reached.
    mean_q, second_q = 0.0, 0.0
    for following in np.flatnonzero(after):
        r = reward[state, action, following]
        if terminal[following] or horizon == 1:
            m, var = 0.0, 0.0
        else:
            m, var = exact_return_moments(
                transition,
                reward,
                policy,
                gamma,
                terminal,
                np.eye(num_states)[following],
                horizon - 1,
            )
        mean_q += after[following] * (r + gamma * m)
        second_q += after[following] * ((r + gamma * m) ** 2 + gamma**2 * var)
    mean_v, var_v = exact_return_moments(
        transition, reward, policy, gamma, terminal, np.eye(num_states)[state], horizon
    )
    return mean_q - mean_v, second_q - mean_q**2 + var_v


@pytest.mark.slow
@pytest.mark.equation("eq-branch-advantage", "eq-branch-variance")
@pytest.mark.parametrize(("state", "action"), [(0, TOOL), (0, TEXT), (2, TOOL), (3, TOOL)])
def test_branch_advantage_is_unbiased_with_the_predicted_variance(state, action):
    transition, reward, terminal, policy = TOOL_TASK
    exact_a = mdp.advantage_values(transition, reward, policy, 1.0, terminal)[state, action]
    mean, one_branch_var = branch_moments(
        transition, reward, policy, 1.0, terminal, state, action, horizon=4
    )
    assert mean == pytest.approx(exact_a, abs=1e-12)
    k, repeats = 4, 3000
    rng = np.random.default_rng(state * 10 + action)
    estimates = np.array(
        [
            credit.branch_advantage(
                transition, reward, policy, state, action, 1.0, k, 4, terminal, rng
            )
            for _ in range(repeats)
        ]
    )
    # The mean within 4 standard errors; the variance within 10 % (3000 draws: ~2.6 % s.e.).
    assert abs(estimates.mean() - exact_a) < 4 * np.sqrt(one_branch_var / k / repeats)
    assert estimates.var(ddof=1) == pytest.approx(one_branch_var / k, rel=0.1)


def test_branch_advantage_is_exact_when_nothing_is_random():
    # Deterministic chain and deterministic policy: every branch returns the same number.
    transition = np.zeros((3, 2, 3))
    transition[0, 0, 1] = transition[0, 1, 2] = transition[1, :, 2] = 1.0
    reward = np.zeros((3, 2, 3))
    reward[1, :, 2] = 2.0
    reward[0, 1, 2] = 1.0
    policy = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0]])
    got = credit.branch_advantage(transition, reward, policy, 0, 0, 0.5, 3, 5, [0, 0, 1], rng=1)
    assert got == pytest.approx(0.5 * 2.0 - 1.0, abs=1e-15)  # q(0, 0) - v(0) = 1 - 1 = 0
    got = credit.branch_advantage(transition, reward, policy, 0, 0, 0.9, 3, 5, [0, 0, 1], rng=1)
    assert got == pytest.approx(0.9 * 2.0 - 1.0, abs=1e-12)


def test_a_short_horizon_targets_the_truncated_values():
    # With horizon 1 the branches see only the first reward: Â -> r(s, a) - E_π r(s, ·).
    transition, reward, terminal, policy = TOOL_TASK
    estimate = credit.branch_advantage(
        transition, reward, policy, 6, TOOL, 1.0, 20000, 1, terminal, rng=0
    )
    immediate = np.einsum("at,at->a", transition[6], reward[6])
    assert estimate == pytest.approx(immediate[TOOL] - policy[6] @ immediate, abs=0.02)


def test_a_clone_that_loses_the_flag_estimates_the_advantage_of_another_state():
    """Turn 1 after the tool was called (state 3): a repeated call is worth exactly 0. A
    restore that drops the tool's result starts every branch in state 2 instead."""
    transition, reward, terminal, policy = TOOL_TASK
    adv = mdp.advantage_values(transition, reward, policy, 1.0, terminal)
    assert adv[3, TOOL] == pytest.approx(0.0, abs=1e-15)
    biased = credit.branch_advantage(
        transition, reward, policy, 2, TOOL, 1.0, 20000, 4, terminal, rng=4
    )
    assert biased == pytest.approx(adv[2, TOOL], abs=0.015)
    assert adv[2, TOOL] > 0.25


def test_one_generator_gives_different_branches_on_each_call():
    transition, reward, terminal, policy = TOOL_TASK
    rng = np.random.default_rng(0)
    first = credit.branch_advantage(transition, reward, policy, 0, TOOL, 1.0, 5, 4, terminal, rng)
    second = credit.branch_advantage(transition, reward, policy, 0, TOOL, 1.0, 5, 4, terminal, rng)
    assert first != second


# --- option_model ----------------------------------------------------------------------------


@pytest.mark.equation("eq-option-model")
@given(seed=seeds, gamma=st.floats(0.0, 0.95), num_terminal=st.integers(0, 2))
def test_option_model_matches_forward_propagation(seed, gamma, num_terminal):
    rng = np.random.default_rng(seed)
    transition, reward, policy, terminal, _ = random_mdp(rng, 5, 2, num_terminal)
    termination = rng.random(5)
    got_r, got_m = credit.option_model(transition, reward, policy, termination, gamma, terminal)
    want_r, want_m = option_model_by_propagation(
        transition, reward, policy, termination, gamma, terminal
    )
    np.testing.assert_allclose(got_r, want_r, atol=1e-10)
    np.testing.assert_allclose(got_m, want_m, atol=1e-10)


@given(seed=seeds, gamma=unit)
def test_a_one_step_option_is_its_primitive_action(seed, gamma):
    rng = np.random.default_rng(seed)
    transition, reward, _, terminal, _ = random_mdp(rng, 4, 3, num_terminal=1)
    for action in range(3):
        policy = np.zeros((4, 3))
        policy[:, action] = 1.0
        got_r, got_m = credit.option_model(transition, reward, policy, np.ones(4), gamma, terminal)
        live = ~terminal
        expected_r = np.einsum("st,st->s", transition[:, action], reward[:, action])
        np.testing.assert_allclose(got_r[live], expected_r[live], atol=1e-12)
        np.testing.assert_allclose(got_m[live], gamma * transition[live, action], atol=1e-12)
        assert np.all(got_r[terminal] == 0.0) and np.all(got_m[terminal] == 0.0)


@pytest.mark.parametrize(("p_advance", "gamma"), [(0.5, 0.99), (0.25, 0.95), (1.0, 0.9)])
def test_a_subgoal_option_discounts_by_its_geometric_duration(p_advance, gamma):
    """Repeating the right action until the stage is done takes τ ~ Geometric(q) steps:
    E[γ^τ] = qγ / (1 - (1 - q)γ), and the reward 1 for the last stage is worth that much."""
    transition, reward, terminal = stage_task(3, 6, p_advance)
    expected = p_advance * gamma / (1.0 - (1.0 - p_advance) * gamma)
    for stage in range(3):
        policy = np.zeros((4, 6))
        policy[:, stage] = 1.0
        termination = np.ones(4)
        termination[stage] = 0.0
        option_reward, option_transition = credit.option_model(
            transition, reward, policy, termination, gamma, terminal
        )
        assert option_transition[stage, stage + 1] == pytest.approx(expected, rel=1e-12)
        assert option_transition[stage].sum() == pytest.approx(expected, rel=1e-12)
        assert option_reward[stage] == pytest.approx(expected / gamma if stage == 2 else 0.0)


def smdp_optimal_values(option_rewards, option_transitions, terminal, sweeps=20000):
    """V(s) = max_o [R_o(s) + Σ_x M_o(s, x) V(x)] by repeated sweeps, state by state."""
    values = np.zeros(len(terminal))
    for _ in range(sweeps):
        new = values.copy()
        for s in np.flatnonzero(~terminal):
            new[s] = max(
                option_rewards[o][s] + option_transitions[o][s] @ values
                for o in range(len(option_rewards))
            )
        if np.max(np.abs(new - values)) < 1e-14:
            return new
        values = new
    raise AssertionError("no convergence")


@pytest.mark.equation("eq-smdp-bellman")
def test_subgoal_options_reach_the_flat_optimum_and_one_step_options_are_the_flat_mdp():
    transition, reward, terminal = stage_task(3, 6, 0.5)
    gamma = 0.99
    flat, _ = optimal_values_by_enumeration(transition, reward, gamma, terminal)
    for stops_elsewhere in (True, False):
        models = []
        for stage in range(3):
            policy = np.zeros((4, 6))
            policy[:, stage] = 1.0
            termination = np.ones(4)
            if stops_elsewhere:  # subgoal options: keep going while the stage is not done
                termination[stage] = 0.0
            models.append(
                credit.option_model(transition, reward, policy, termination, gamma, terminal)
            )
        rewards, transitions = zip(*models, strict=True)
        np.testing.assert_allclose(
            smdp_optimal_values(rewards, transitions, terminal), flat, atol=1e-10
        )


def test_an_option_that_never_stops_is_refused_with_gamma_one_and_worth_nothing_below():
    transition, reward, terminal = stage_task(3, 6, 0.5)
    policy = np.zeros((4, 6))
    policy[:, 0] = 1.0  # the first stage's action, forever: stuck once stage 0 is done
    termination = np.zeros(4)
    with pytest.raises(ValueError, match=r"^termination must let the option stop"):
        credit.option_model(transition, reward, policy, termination, 1.0, terminal)
    option_reward, option_transition = credit.option_model(
        transition, reward, policy, termination, 0.9, terminal
    )
    np.testing.assert_allclose(option_reward, 0.0, atol=1e-15)
    np.testing.assert_allclose(option_transition, 0.0, atol=1e-15)


def test_an_option_model_with_gamma_one_gives_end_state_probabilities_and_durations():
    transition, reward, terminal = stage_task(3, 6, 0.25)
    policy = np.zeros((4, 6))
    policy[:, 1] = 1.0
    termination = np.array([1.0, 0.0, 1.0, 1.0])
    _, ends = credit.option_model(transition, reward, policy, termination, 1.0, terminal)
    np.testing.assert_allclose(ends[1], [0.0, 0.0, 1.0, 0.0], atol=1e-12)
    steps = np.zeros_like(reward)
    steps[:3] = 1.0  # one unit of "reward" per step: R_o is the expected duration
    durations, _ = credit.option_model(transition, steps, policy, termination, 1.0, terminal)
    assert durations[1] == pytest.approx(4.0) and durations[0] == pytest.approx(1.0)


# --- option_segments and option_returns ------------------------------------------------------


@st.composite
def episodes_with_option_starts(draw):
    horizon = draw(st.integers(1, 12))
    rewards = np.array(draw(st.lists(finite, min_size=horizon, max_size=horizon)))
    starts = np.array(draw(st.lists(st.booleans(), min_size=horizon, max_size=horizon)))
    starts[0] = True
    return rewards, starts


@pytest.mark.equation("eq-option-return")
@given(episode=episodes_with_option_starts(), gamma=unit)
def test_the_manager_return_at_an_option_start_is_the_flat_return(episode, gamma):
    rewards, starts = episode
    option_rewards, durations = credit.option_segments(rewards, starts, gamma)
    np.testing.assert_allclose(
        credit.option_returns(option_rewards, durations, gamma),
        discounted_returns(rewards, gamma)[starts],
        atol=1e-9,
    )
    assert durations.sum() == len(rewards) and durations.dtype == np.int64


@given(episode=episodes_with_option_starts(), gamma=unit)
def test_option_segments_by_their_definition(episode, gamma):
    rewards, starts = episode
    option_rewards, durations = credit.option_segments(rewards, starts, gamma)
    begin = np.flatnonzero(starts)
    for k, t in enumerate(begin):
        assert durations[k] == (begin[k + 1] if k + 1 < begin.size else len(rewards)) - t
        expected = sum(gamma**j * rewards[t + j] for j in range(durations[k]))
        assert option_rewards[k] == pytest.approx(expected, abs=1e-9)


def test_option_returns_by_hand_and_with_unit_durations():
    np.testing.assert_allclose(credit.option_returns([1.5, 1.0], [3, 1], 0.5), [1.625, 1.0])
    rewards = np.array([[1.0, 0.0, 2.0], [0.5, 0.5, 0.5]])
    np.testing.assert_allclose(
        credit.option_returns(rewards, np.ones((2, 3)), 0.9), discounted_returns(rewards, 0.9)
    )
    # Whole-number floats are accepted as durations.
    np.testing.assert_allclose(credit.option_returns([1.0, 1.0], [2.0, 1.0], 0.5), [1.25, 1.0])
