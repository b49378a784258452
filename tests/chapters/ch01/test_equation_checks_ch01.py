"""Labeled equations of chapter 1 that no other test computes, checked on concrete numbers
(the rule: tests/chapters/test_equations.py)."""

from __future__ import annotations

import numpy as np
import pytest

from rlfound.mdp import action_values, state_values
from rlfound.returns import discounted_returns
from tests.chapters._surrogates import (
    state_action_power_series,
)
from tests.oracles import (
    policy_average,
    power_series_values,
    random_mdp,
)


@pytest.mark.equation("eq-return-recursion", "eq-reward-to-go")
def test_explicit_returns_satisfy_the_one_step_recursion():
    rng = np.random.default_rng(11)
    rewards, gamma = rng.normal(size=9), 0.85
    horizon = len(rewards)
    explicit = np.array(
        [sum(gamma ** (k - t) * rewards[k] for k in range(t, horizon)) for t in range(horizon)]
    )
    following = np.append(explicit[1:], 0.0)  # G_T = 0
    np.testing.assert_allclose(explicit, rewards + gamma * following, atol=1e-12)
    np.testing.assert_allclose(discounted_returns(rewards, gamma), explicit, atol=1e-12)


def mdp_with_power_series_values(seed, gamma):
    """A random MDP with v_π = Σ_n γ^n P_π^n r_π, the expected discounted reward, summed."""
    rng = np.random.default_rng(seed)
    transition, reward, policy, terminal, _ = random_mdp(rng, 5, 3, num_terminal=1)
    p_pi, r_pi = policy_average(transition, reward, policy, terminal)
    return transition, reward, policy, terminal, power_series_values(p_pi, r_pi, gamma)


@pytest.mark.equation("eq-bellman-v", "eq-bellman-v-mdp")
@pytest.mark.parametrize("gamma", [0.5, 0.95])
def test_the_expected_discounted_reward_satisfies_the_bellman_equation(gamma):
    transition, reward, policy, terminal, values = mdp_with_power_series_values(3, gamma)
    num_states, num_actions, _ = transition.shape
    for s in np.flatnonzero(~terminal):
        one_step = sum(
            policy[s, a]
            * transition[s, a, s_next]
            * (reward[s, a, s_next] + gamma * (0.0 if terminal[s_next] else values[s_next]))
            for a in range(num_actions)
            for s_next in range(num_states)
        )
        assert one_step == pytest.approx(values[s], abs=1e-10)
    np.testing.assert_allclose(
        state_values(transition, reward, policy, gamma, terminal), values, atol=1e-10
    )


@pytest.mark.equation("eq-q-value", "eq-bellman-q-mdp")
@pytest.mark.parametrize("gamma", [0.5, 0.95])
def test_action_values_are_one_step_lookaheads_of_the_values(gamma):
    transition, reward, policy, terminal, values = mdp_with_power_series_values(4, gamma)
    q = state_action_power_series(transition, reward, policy, terminal, gamma)
    num_states, num_actions, _ = transition.shape
    live_values = np.where(terminal, 0.0, values)
    live_q = np.where(terminal[:, None], 0.0, q)
    for s in np.flatnonzero(~terminal):
        for a in range(num_actions):
            expected_next = sum(
                transition[s, a, s_next] * (reward[s, a, s_next] + gamma * live_values[s_next])
                for s_next in range(num_states)
            )
            assert q[s, a] == pytest.approx(expected_next, abs=1e-10)
            bellman_q = sum(
                transition[s, a, s_next]
                * (reward[s, a, s_next] + gamma * policy[s_next] @ live_q[s_next])
                for s_next in range(num_states)
            )
            assert q[s, a] == pytest.approx(bellman_q, abs=1e-10)
    np.testing.assert_allclose(
        action_values(transition, reward, policy, gamma, terminal)[~terminal],
        q[~terminal],
        atol=1e-10,
    )
