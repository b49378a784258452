"""The reference solution of chapter 9's code exercise is right, and so are the numbers of
the solutions page.

The solution is checked against loops written from the definitions, against optimal values of
every deterministic policy (tests.oracles.optimal_values_by_enumeration). Its specification
(the reference passes every check, the starter none) is checked with every exercise's in
``test_exercises.py``, and its typical mistakes in ``test_mutants.py``. The numbers the
solutions page states for the derivation exercises (the terminal potential threshold, the lossy
snapshot, the process-reward threshold, the option discounts) are recomputed on the chapter's
tasks as ``tests.oracles`` builds them. The file itself (solution markers, starter, imports,
docstring examples) is checked with every other solution file in ``test_solution_files.py``."""

from __future__ import annotations

import numpy as np
import pytest

from tests._solutions import (
    load_solution,
)
from tests.oracles import (
    ADVANCE,
    CLAIM,
    DEBUG_START,
    SUBMIT_NOW,
    TEXT,
    TOOL,
    debug_task,
    linear_solve_values,
    optimal_values_by_enumeration,
    random_mdp,
    tool_task,
)

solution = load_solution("potential_shaping")


# --- the functions themselves ----------------------------------------------------------------


def shaped_by_loops(reward, potential, gamma, terminal):
    out = np.array(reward, dtype=float)
    num_states = out.shape[0]
    for s in range(num_states):
        if terminal[s]:
            continue
        for a in range(out.shape[1]):
            for x in range(num_states):
                out[s, a, x] += gamma * (0.0 if terminal[x] else potential[x]) - potential[s]
    return out


@pytest.mark.parametrize("seed", range(4))
def test_shaped_reward_matches_the_loops_and_keeps_the_optimal_actions(seed):
    rng = np.random.default_rng(seed)
    transition, reward, _, terminal, _ = random_mdp(rng, 4, 3, num_terminal=1)
    potential = rng.normal(size=4) * 3.0
    gamma = 0.8
    got = solution.shaped_reward(reward, potential, gamma, terminal)
    np.testing.assert_allclose(got, shaped_by_loops(reward, potential, gamma, terminal), atol=1e-14)
    _, q = optimal_values_by_enumeration(transition, reward, gamma, terminal)
    _, q_shaped = optimal_values_by_enumeration(transition, got, gamma, terminal)
    live = ~terminal
    np.testing.assert_allclose(q_shaped[live], (q - potential[:, None])[live], atol=1e-9)


def test_shaped_episode_rewards_by_hand():
    got = solution.shaped_episode_rewards([[1.0, 0.0], [0.0, 2.0]], [[0, 1, 0], [2, 2, 0]], 0.5)
    np.testing.assert_allclose(got, [[1.0 + 0.5, 0.0 - 1.0], [0.0 + 1.0 - 2.0, 2.0 - 2.0]])


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: solution.shaped_reward(np.zeros((2, 1, 2)), [0.5], 0.9, [0, 1]), "potential"),
        (lambda: solution.shaped_reward(np.zeros((2, 1, 3)), [0.5, 1], 0.9, [0, 1]), "reward"),
        (lambda: solution.shaped_reward(np.zeros((2, 1, 2)), [0.5, 1], 0.9, [0, 1, 0]), "terminal"),
        (lambda: solution.shaped_reward(np.zeros((2, 1, 2)), [0.5, 1], -0.1, [0, 1]), "gamma"),
        (
            lambda: solution.shaped_reward(np.zeros((2, 1, 2)), [np.inf, 1], 0.9, [0, 1]),
            "potential",
        ),
        (lambda: solution.shaped_episode_rewards([0.0, 1.0], [0.5, 0.2], 0.9), "potentials"),
        (lambda: solution.shaped_episode_rewards([0.0, np.nan], [0.5, 0.2, 0.0], 0.9), "rewards"),
        (lambda: solution.shaped_episode_rewards([0.0, 1.0], [0.5, 0.2, 0.0], 2.0), "gamma"),
    ],
)
def test_bad_input_raises_a_value_error_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name}"):
        call()


# --- the grading specification, evaluated in-process ---------------------------------------


# --- the numbers of the solutions page -------------------------------------------------------

DEBUG_T, DEBUG_R, DEBUG_TERMINAL = debug_task()


def shaped_table(reward, phi, gamma, terminal, zero_terminal=True):
    out = reward.copy()
    for s in np.flatnonzero(~terminal):
        for x in range(len(phi)):
            end = 0.0 if (zero_terminal and terminal[x]) else phi[x]
            out[s, :, x] += gamma * end - phi[s]
    return out


def first_action_with_terminal_potential(c, gamma=0.9):
    phi = np.array([0.0, 1.0, 2.0, c, c])
    kept = shaped_table(DEBUG_R, phi, gamma, DEBUG_TERMINAL, zero_terminal=False)
    _, q = optimal_values_by_enumeration(DEBUG_T, kept, gamma, DEBUG_TERMINAL)
    return q[DEBUG_START].argmax(), q[1:3].argmax(axis=1)


def test_the_terminal_potential_threshold():
    gamma = 0.9
    _, q_star = optimal_values_by_enumeration(DEBUG_T, DEBUG_R, gamma, DEBUG_TERMINAL)
    advancing = np.zeros((5, 3))
    advancing[:, ADVANCE] = 1.0
    # E[γ^T] after advancing from the start: the value of a reward of γ^... computed as the
    # value of 1 paid on entering a terminal state, times γ.
    ending = np.zeros_like(DEBUG_R)
    ending[:3, :, 3:] = 1.0
    values, _ = linear_solve_values(DEBUG_T, ending, advancing, gamma, DEBUG_TERMINAL)
    discount_at_end = gamma * values[DEBUG_START]
    assert discount_at_end == pytest.approx(0.6820, abs=5e-5)
    threshold = (q_star[DEBUG_START, ADVANCE] - 0.05) / (gamma - discount_at_end)
    assert threshold == pytest.approx(2.8989, abs=5e-5)  # "about 2.9", just below 3
    below, later_below = first_action_with_terminal_potential(threshold - 1e-3)
    above, later_above = first_action_with_terminal_potential(threshold + 1e-3)
    assert below == ADVANCE and above == SUBMIT_NOW
    assert np.all(later_below == ADVANCE) and np.all(later_above == ADVANCE)


def value_iteration_by_hand(transition, reward, terminal, sweeps=5000):
    """q* with gamma = 1 by repeated Bellman backups, state by state (some policies of the
    debugging task loop forever without reward, so not every policy can be evaluated by a
    linear solve)."""
    q = np.zeros(transition.shape[:2])
    for _ in range(sweeps):
        values = [0.0 if terminal[x] else q[x].max() for x in range(len(terminal))]
        new = np.zeros_like(q)
        for s in np.flatnonzero(~terminal):
            for a in range(q.shape[1]):
                new[s, a] = transition[s, a] @ (reward[s, a] + np.array(values))
        if np.max(np.abs(new - q)) < 1e-13:
            return new
        q = new
    raise AssertionError("no convergence")


def test_a_shared_terminal_potential_with_gamma_one_shifts_by_a_constant():
    q = value_iteration_by_hand(DEBUG_T, DEBUG_R, DEBUG_TERMINAL)
    phi = np.array([0.0, 1.0, 2.0, 3.0, 3.0])
    kept = shaped_table(DEBUG_R, phi, 1.0, DEBUG_TERMINAL, zero_terminal=False)
    q_kept = value_iteration_by_hand(DEBUG_T, kept, DEBUG_TERMINAL)
    np.testing.assert_allclose(q_kept[:3], (q - phi[:, None] + 3.0)[:3], atol=1e-9)


TRANSITION, REWARD, TERMINAL, POLICY = tool_task()


def test_the_lossy_snapshot_biases_and_updates():
    values, p_pi = linear_solve_values(TRANSITION, REWARD, POLICY, 1.0, TERMINAL)
    q = np.einsum("sat,sat->sa", TRANSITION, REWARD + values)
    adv = q - values[:, None]
    bias = np.array([adv[2 * t] - adv[2 * t + 1] for t in (1, 2, 3)])
    np.testing.assert_allclose(
        bias, [[0.2953, -0.0984], [0.3938, -0.1312], [0.525, -0.175]], atol=5e-5
    )
    live = np.flatnonzero(~TERMINAL)
    occupancy = np.zeros(len(TERMINAL))
    occupancy[live] = np.linalg.solve(
        np.eye(live.size) - p_pi[np.ix_(live, live)].T, np.eye(len(TERMINAL))[0][live]
    )
    lossy_tool = [
        occupancy[2 * t + 1]
        * POLICY[2 * t + 1, TOOL]
        * (bias[t - 1, TOOL] - POLICY[2 * t + 1] @ bias[t - 1])
        for t in (1, 2, 3)
    ]
    np.testing.assert_allclose(lossy_tool, [0.0177, 0.0295, 0.0453], atol=5e-5)
    assert np.all(np.diff(lossy_tool) > 0)  # "grows with the turn"
    assert adv[3, TEXT] == 0.0 and adv[3, TOOL] == 0.0  # zero in truth


@pytest.mark.slow
def test_the_process_reward_threshold():
    transition, outcome, terminal, _ = tool_task(actions=3)
    scores = np.array([0.2, 0.2, 1.0])
    score_reward = np.zeros_like(outcome)
    score_reward[~terminal] = scores[None, :, None]
    threshold = 0.7 / (scores[CLAIM] - scores[TOOL])
    assert threshold == pytest.approx(0.875)
    for lam, calls in [(threshold - 0.01, True), (threshold + 0.01, False)]:
        _, q = optimal_values_by_enumeration(
            transition, outcome + lam * score_reward, 1.0, terminal
        )
        greedy = np.zeros_like(q)
        greedy[np.arange(len(q)), q.argmax(axis=1)] = 1.0
        values, _ = linear_solve_values(transition, outcome, greedy, 1.0, terminal)
        assert values[0] == pytest.approx(0.9 if calls else 0.2, abs=1e-12)


def test_the_option_discounts():
    for q, gamma, expected in [(0.5, 0.99, 0.980198), (0.25, 0.9, 0.692308)]:
        geometric = sum(gamma**n * (1 - q) ** (n - 1) * q for n in range(1, 2000))
        assert geometric == pytest.approx(expected, abs=5e-7)
    assert 0.9**9 == pytest.approx(0.3874, abs=5e-5)  # the slow option's discounted reward
    assert 0.9**10 == pytest.approx(0.3487, abs=5e-5)  # and its E[gamma^k]
