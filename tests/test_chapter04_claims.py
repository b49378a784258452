"""Claims made in chapter 4 (critics, GAE and timeouts), recomputed independently.

Each test rebuilds a number, an identity or a shape of a figure that the chapter's text relies
on, with the chapter's own parameters, and where possible by a route that shares no code with
the library function the chapter calls:

- eq-td-unbiased and eq-td-critic-bias on the submit-or-work task and on random MDPs, with
  values from a hand-written Bellman solve;
- eq-gae-critic-bias against a fixed-point iteration and against Monte Carlo;
- the optimistic-critic example, the critic-as-baseline claim and figure fig-critic-lambda
  (bias zero at lambda = 1, best lambda moving towards 1 as the critic worsens);
- eq-gae-timeouts on the worked example (hand values) and on random packed batches against a
  per-episode loop; eq-timeout-folding and eq-timeout-error;
- figure fig-timeout-targets: the targets collapse near the limit, a state-only critic trained
  with bootstrapped truncations recovers v_pi exactly, marked terminal it is 4 to 22 times too
  small, and with lambda = 0 the implied preference flips for windows of up to nine steps;
- the check-for-understanding answer.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rlfound import advantages, mdp, returns

# ---------------------------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------------------------


def bellman_values(transition, reward, policy, gamma, terminal):
    """v_pi by a direct solve written here: v = r_pi + gamma P_pi v on the live states."""
    num_states = transition.shape[0]
    live = ~terminal
    p_pi = np.zeros((num_states, num_states))
    r_pi = np.zeros(num_states)
    for s in np.flatnonzero(live):
        for a in range(transition.shape[1]):
            p_pi[s] += policy[s, a] * transition[s, a]
            r_pi[s] += policy[s, a] * transition[s, a] @ reward[s, a]
    values = np.zeros(num_states)
    idx = np.flatnonzero(live)
    values[idx] = np.linalg.solve(np.eye(idx.size) - gamma * p_pi[np.ix_(idx, idx)], r_pi[idx])
    return values, p_pi


def loop_gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    """Per-episode GAE on 2-D arrays: split every row at its boundaries, scalar recursion."""
    rewards = np.atleast_2d(rewards)
    out = np.zeros_like(rewards, dtype=float)
    rows, horizon = rewards.shape
    for row in range(rows):
        start = 0
        for end in range(horizon):
            t_flag, c_flag = bool(terminated[row, end]), bool(truncated[row, end])
            if not (t_flag or c_flag or end == horizon - 1):
                continue
            running = 0.0
            for t in range(end, start - 1, -1):
                if t == end:
                    bootstrap = 0.0 if t_flag else next_values[row, t]
                else:
                    bootstrap = values[row, t + 1]
                delta = rewards[row, t] + gamma * bootstrap - values[row, t]
                running = delta + gamma * lam * running
                out[row, t] = running
            start = end + 1
    return out


def vector_gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    """A second, vectorised-over-rows GAE written here for the enumerated windows."""
    deltas = rewards + gamma * next_values * (1.0 - terminated) - values
    keep = 1.0 - (terminated | truncated)
    out = np.zeros_like(deltas)
    acc = np.zeros(deltas.shape[0])
    for t in range(deltas.shape[1] - 1, -1, -1):
        acc = deltas[:, t] + gamma * lam * keep[:, t] * acc
        out[:, t] = acc
    return out


# ---------------------------------------------------------------------------------------------
# The submit-or-work task
# ---------------------------------------------------------------------------------------------

DRAFT, REVISED, TESTED, PASSED, FAILED = range(5)
SUBMIT, WORK = 0, 1


def submit_or_work():
    transition = np.zeros((5, 2, 5))
    reward = np.zeros((5, 2, 5))
    for state, p_pass in [(DRAFT, 0.2), (REVISED, 0.5), (TESTED, 0.9)]:
        transition[state, SUBMIT, [PASSED, FAILED]] = [p_pass, 1.0 - p_pass]
    transition[DRAFT, WORK, [REVISED, DRAFT]] = [0.9, 0.1]
    transition[REVISED, WORK, [TESTED, REVISED]] = [0.8, 0.2]
    transition[TESTED, WORK, [TESTED, FAILED]] = [0.7, 0.3]
    transition[[PASSED, FAILED], :, [PASSED, FAILED]] = 1.0
    reward[:, SUBMIT, PASSED] = 1.0
    reward[[DRAFT, REVISED, TESTED], WORK, :] = -0.05
    terminal = np.array([False, False, False, True, True])
    policy = np.array([[0.3, 0.7], [0.5, 0.5], [0.6, 0.4], [0.5, 0.5], [0.5, 0.5]])
    return transition, reward, terminal, policy


TRANSITION, REWARD, TERMINAL, POLICY = submit_or_work()
LIVE = ~TERMINAL
INITIAL = np.eye(5)[DRAFT]
GAMMA = 1.0
V, P_PI = bellman_values(TRANSITION, REWARD, POLICY, GAMMA, TERMINAL)
Q = np.einsum("sat,sat->sa", TRANSITION, REWARD + GAMMA * V)
ADV = np.where(LIVE[:, None], Q - V[:, None], 0.0)
OCCUPANCY = np.zeros(5)
OCCUPANCY[LIVE] = np.linalg.solve((np.eye(3) - GAMMA * P_PI[np.ix_(LIVE, LIVE)]).T, INITIAL[LIVE])


def expected_update(mean_advantage):
    centred = mean_advantage - np.sum(POLICY * mean_advantage, axis=1, keepdims=True)
    return (OCCUPANCY[:, None] * POLICY * centred)[LIVE]


def gae_mean_by_iteration(error, lam, sweeps=400):
    """E[A_hat | s, a] from f = beta + gamma lam P_pi f (policy-averaged tail), iterated."""
    beta = GAMMA * P_PI @ error - error
    beta[TERMINAL] = 0.0
    tail = np.zeros(5)
    for _ in range(sweeps):
        tail = beta + GAMMA * lam * P_PI @ tail
        tail[TERMINAL] = 0.0
    first = np.einsum("sat,t->sa", TRANSITION, GAMMA * error) - error[:, None]
    return ADV + first + GAMMA * lam * np.einsum("sat,t->sa", TRANSITION, tail)


def gae_mean_closed_form(error, lam):
    """eq-gae-critic-bias."""
    resolvent = np.zeros(5)
    resolvent[LIVE] = np.linalg.solve(
        np.eye(3) - GAMMA * lam * P_PI[np.ix_(LIVE, LIVE)], error[LIVE]
    )
    return ADV - error[:, None] + GAMMA * (1 - lam) * np.einsum("sat,t->sa", TRANSITION, resolvent)


def test_library_values_match_the_hand_solve():
    np.testing.assert_allclose(
        mdp.state_values(TRANSITION, REWARD, POLICY, GAMMA, TERMINAL), V, atol=1e-12
    )
    np.testing.assert_allclose(
        mdp.advantage_values(TRANSITION, REWARD, POLICY, GAMMA, TERMINAL), ADV, atol=1e-12
    )
    # The numbers the chapter's table prints.
    np.testing.assert_allclose(V[LIVE], [0.4137, 0.5710, 0.7222], atol=5e-5)
    assert ADV[DRAFT, SUBMIT] < 0 < ADV[TESTED, SUBMIT]


def test_td_error_of_the_true_value_is_the_advantage_exactly():
    # eq-td-unbiased: E[delta | s, a] by summing over next states.
    expected_delta = np.einsum("sat,sat->sa", TRANSITION, REWARD + GAMMA * V) - V[:, None]
    np.testing.assert_allclose(expected_delta[LIVE], ADV[LIVE], atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_td_bias_formula_on_random_mdps(seed):
    rng = np.random.default_rng(seed)
    num_states, num_actions = 6, 3
    transition = rng.dirichlet(np.ones(num_states), size=(num_states, num_actions))
    reward = rng.normal(size=(num_states, num_actions, num_states))
    terminal = np.zeros(num_states, dtype=bool)
    terminal[-2:] = True
    reward[terminal] = 0.0
    policy = rng.dirichlet(np.ones(num_actions), size=num_states)
    gamma = 0.9
    values, _ = bellman_values(transition, reward, policy, gamma, terminal)
    adv = np.einsum("sat,sat->sa", transition, reward + gamma * values) - values[:, None]
    # eq-td-unbiased with the true values, eq-td-critic-bias with an arbitrary critic.
    library_adv = mdp.advantage_values(transition, reward, policy, gamma, terminal)
    np.testing.assert_allclose(library_adv[~terminal], adv[~terminal], atol=1e-10)
    error = np.where(terminal, 0.0, rng.normal(size=num_states))
    critic = values + error
    mean_delta = np.einsum("sat,sat->sa", transition, reward + gamma * critic) - critic[:, None]
    bias = gamma * np.einsum("sat,t->sa", transition, error) - error[:, None]
    np.testing.assert_allclose(mean_delta[~terminal], (adv + bias)[~terminal], atol=1e-10)


def test_td_errors_of_sampled_episodes_average_to_the_advantage():
    batch = mdp.sample_episodes(
        TRANSITION,
        REWARD,
        POLICY,
        INITIAL,
        horizon=40,
        seed=2,
        num_episodes=20_000,
        terminal=TERMINAL,
    )
    states, actions = batch["states"], batch["actions"]
    deltas = advantages.batched_gae(
        batch["rewards"],
        V[states[:, :-1]],
        V[states[:, 1:]],
        batch["terminated"],
        batch["truncated"],
        GAMMA,
        0.0,
    )
    for s, a in itertools.product(range(3), range(2)):
        sample = deltas[(states[:, :-1] == s) & (actions == a)]
        standard_error = sample.std(ddof=1) / np.sqrt(sample.size)
        assert abs(sample.mean() - ADV[s, a]) < 2 * standard_error  # as the chapter says


def test_optimistic_critic_example():
    error = np.where(LIVE, 0.25, 0.0)
    bias = GAMMA * np.einsum("sat,t->sa", TRANSITION, error) - error[:, None]
    # Submitting always ends the episode; working ends it only from the tested state (0.3).
    np.testing.assert_allclose(bias[LIVE, SUBMIT], -0.25, atol=1e-12)
    np.testing.assert_allclose(bias[LIVE, WORK], [0.0, 0.0, -0.075], atol=1e-12)
    true = expected_update(ADV)
    td = expected_update(ADV + bias)
    np.testing.assert_allclose(true[:, SUBMIT], [-0.0689, -0.0267, 0.0446], atol=5e-5)
    assert np.all(td[:, SUBMIT] < true[:, SUBMIT])  # pushes harder towards working everywhere
    assert td[DRAFT, SUBMIT] / true[DRAFT, SUBMIT] == pytest.approx(1.82, abs=0.01)
    relative = np.linalg.norm(td - true) / np.linalg.norm(true)
    assert relative == pytest.approx(0.88, abs=0.005)
    # Used only as a baseline (lambda = 1) the same critic leaves the update exact.
    np.testing.assert_allclose(expected_update(ADV - error[:, None]), true, atol=1e-15)


@pytest.mark.parametrize("lam", [0.0, 0.3, 0.8, 0.95, 1.0])
def test_gae_bias_closed_form_matches_a_fixed_point_iteration(lam):
    rng = np.random.default_rng(7)
    for _ in range(3):
        error = np.where(LIVE, rng.normal(size=5), 0.0)
        np.testing.assert_allclose(
            gae_mean_closed_form(error, lam)[LIVE],
            gae_mean_by_iteration(error, lam)[LIVE],
            atol=1e-10,
        )
    # At lambda = 1 only the action-independent -e(s) remains.
    if lam == 1.0:
        np.testing.assert_allclose(
            gae_mean_closed_form(error, lam)[LIVE], (ADV - error[:, None])[LIVE], atol=1e-12
        )


def test_gae_bias_closed_form_matches_monte_carlo():
    batch = mdp.sample_episodes(
        TRANSITION,
        REWARD,
        POLICY,
        INITIAL,
        horizon=40,
        seed=5,
        num_episodes=20_000,
        terminal=TERMINAL,
    )
    states, actions = batch["states"], batch["actions"]
    error = np.where(LIVE, 0.25, 0.0)
    critic = V + error
    lam = 0.6
    estimates = loop_gae(
        batch["rewards"][:4000],
        critic[states[:4000, :-1]],
        critic[states[:4000, 1:]],
        batch["terminated"][:4000],
        batch["truncated"][:4000],
        GAMMA,
        lam,
    )
    library = advantages.batched_gae(
        batch["rewards"],
        critic[states[:, :-1]],
        critic[states[:, 1:]],
        batch["terminated"],
        batch["truncated"],
        GAMMA,
        lam,
    )
    np.testing.assert_allclose(library[:4000], estimates, atol=1e-12)
    closed = gae_mean_closed_form(error, lam)
    for s, a in itertools.product(range(3), range(2)):
        sample = library[(states[:, :-1] == s) & (actions == a)]
        standard_error = sample.std(ddof=1) / np.sqrt(sample.size)
        assert abs(sample.mean() - closed[s, a]) < 4 * standard_error


def test_figure_critic_lambda_claims():
    true = expected_update(ADV)
    lam_grid = np.linspace(0.0, 1.0, 101)
    squared_bias = {}
    for c in (0.0, 0.1, 0.25, 0.5):
        error = np.where(LIVE, c, 0.0)
        squared_bias[c] = np.array(
            [
                np.sum((expected_update(gae_mean_closed_form(error, lam)) - true) ** 2)
                for lam in lam_grid
            ]
        )
        assert squared_bias[c][-1] < 1e-28  # zero at lambda = 1
    assert squared_bias[0.0].max() < 1e-28  # an exact critic is unbiased at every lambda
    for c in (0.1, 0.25, 0.5):
        assert np.all(np.diff(squared_bias[c]) < 0)  # falls monotonically with lambda
    assert squared_bias[0.1][0] < squared_bias[0.25][0] < squared_bias[0.5][0]
    np.testing.assert_allclose(
        [squared_bias[c][0] for c in (0.1, 0.25, 0.5)], [0.00183, 0.01142, 0.04567], atol=5e-6
    )


def test_figure_critic_lambda_variance_and_best_lambda():
    batch = mdp.sample_episodes(
        TRANSITION,
        REWARD,
        POLICY,
        INITIAL,
        horizon=40,
        seed=1,
        num_episodes=4000,
        terminal=TERMINAL,
    )
    states, actions = batch["states"], batch["actions"]
    valid = actions >= 0
    one_hot_state = np.eye(5)[states[:, :-1]] * valid[..., None]
    score = np.eye(2)[np.maximum(actions, 0)] - POLICY[states[:, :-1]]
    lam_points = np.array([0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0])
    lam_grid = np.linspace(0.0, 1.0, 101)
    true = expected_update(ADV)
    best, variances = {}, {}
    for c in (0.0, 0.1, 0.25, 0.5):
        critic = V + np.where(LIVE, c, 0.0)
        var = []
        for lam in lam_points:
            estimates = loop_gae(
                batch["rewards"],
                critic[states[:, :-1]],
                critic[states[:, 1:]],
                batch["terminated"],
                batch["truncated"],
                GAMMA,
                lam,
            )
            weights = estimates * valid  # gamma = 1: no discount factor
            grads = np.einsum("nt,nts,nta->nsa", weights, one_hot_state, score)[:, LIVE]
            var.append(grads.var(axis=0, ddof=1).sum())
        variances[c] = np.array(var)
        assert np.all(np.diff(variances[c]) > 0)  # variance rises with lambda
        error = np.where(LIVE, c, 0.0)
        bias2 = np.array(
            [
                np.sum((expected_update(gae_mean_closed_form(error, lam)) - true) ** 2)
                for lam in lam_grid
            ]
        )
        mse = bias2 + np.interp(lam_grid, lam_points, variances[c]) / 16
        best[c] = lam_grid[np.argmin(mse)]
    for lam_index in range(len(lam_points)):  # a worse critic costs variance at every lambda
        column = [variances[c][lam_index] for c in (0.0, 0.1, 0.25, 0.5)]
        assert np.all(np.diff(column) > 0)
    assert best[0.0] == 0.0
    assert best[0.0] < best[0.1] < best[0.25] < best[0.5]
    assert best[0.5] > 0.7


# ---------------------------------------------------------------------------------------------
# Episode boundaries
# ---------------------------------------------------------------------------------------------


def worked_example():
    rewards = np.array([0.0, 0.0, 1.0, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0])
    values = np.array([0.6, 0.7, 0.9, 0.4, 0.6, 0.7, 0.3, 0.5, 0.6])
    terminated = np.zeros(9, dtype=bool)
    truncated = np.zeros(9, dtype=bool)
    terminated[2] = True
    truncated[5] = True
    next_values = np.append(values[1:], 0.5)
    next_values[2] = 99.0
    next_values[5] = 0.8
    return rewards, values, next_values, terminated, truncated


def test_worked_example_hand_values():
    rewards, values, next_values, terminated, truncated = worked_example()
    gae = advantages.batched_gae(rewards, values, next_values, terminated, truncated, 0.9, 0.8)
    assert gae[2] == pytest.approx(0.1)  # 1 - 0.9, no bootstrap at the terminal step
    assert gae[5] == pytest.approx(0.02)  # 0.9 * 0.8 - 0.7
    assert gae[4] == pytest.approx(0.53 + 0.72 * 0.02)
    reference = loop_gae(
        rewards[None],
        values[None],
        next_values[None],
        terminated[None],
        truncated[None],
        0.9,
        0.8,
    )[0]
    np.testing.assert_allclose(gae, reference, atol=1e-12)
    g = returns.batched_discounted_returns(
        rewards, terminated, truncated, 0.9, next_values=next_values
    )
    assert g[5] == pytest.approx(0.72) and g[8] == pytest.approx(1.45)
    assert g[2] == pytest.approx(1.0)
    # The nonsense next value at the terminal step is never read.
    changed = next_values.copy()
    changed[2] = -1e6
    np.testing.assert_array_equal(
        advantages.batched_gae(rewards, values, changed, terminated, truncated, 0.9, 0.8), gae
    )
    # lambda = 1: A + V equals the bootstrapped returns.
    lam_one = advantages.batched_gae(rewards, values, next_values, terminated, truncated, 0.9, 1)
    np.testing.assert_allclose(lam_one + values, g, atol=1e-12)


def random_packed(seed, shape=(4, 12)):
    rng = np.random.default_rng(seed)
    kind = rng.choice(3, size=shape, p=[0.7, 0.15, 0.15])
    return (
        rng.normal(size=shape),
        rng.normal(size=shape),
        rng.normal(size=shape),
        kind == 1,
        kind == 2,
    )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("lam", [0.0, 0.9, 1.0])
def test_batched_gae_against_a_per_episode_loop_and_folding(seed, lam):
    rewards, values, next_values, terminated, truncated = random_packed(seed)
    # Make next_values consistent inside episodes, as a collector stores them.
    inside = ~(terminated | truncated)[:, :-1]
    next_values[:, :-1][inside] = values[:, 1:][inside]
    gamma = 0.99
    got = advantages.batched_gae(rewards, values, next_values, terminated, truncated, gamma, lam)
    reference = loop_gae(rewards, values, next_values, terminated, truncated, gamma, lam)
    np.testing.assert_allclose(got, reference, atol=1e-12)
    folded = advantages.batched_gae(
        rewards + gamma * truncated * next_values,
        values,
        next_values,
        terminated | truncated,
        np.zeros_like(truncated),
        gamma,
        lam,
    )
    np.testing.assert_allclose(got, folded, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_timeout_marked_terminal_loses_exactly_the_bootstrap_terms(seed):
    rewards, values, next_values, terminated, truncated = random_packed(seed)
    inside = ~(terminated | truncated)[:, :-1]
    next_values[:, :-1][inside] = values[:, 1:][inside]
    gamma, lam = 0.99, 0.9
    right = loop_gae(rewards, values, next_values, terminated, truncated, gamma, lam)
    no_truncation = np.zeros_like(truncated)
    wrong = loop_gae(
        rewards, values, next_values, terminated | truncated, no_truncation, gamma, lam
    )
    predicted = np.zeros(rewards.shape)
    rows, horizon = rewards.shape
    for row in range(rows):
        for t in range(horizon):
            end = t
            while not (terminated[row, end] or truncated[row, end] or end == horizon - 1):
                end += 1
            if truncated[row, end]:
                k = end - t
                predicted[row, t] = -gamma * (gamma * lam) ** k * next_values[row, end]
    np.testing.assert_allclose(wrong - right, predicted, atol=1e-12)
    library = advantages.batched_gae(
        rewards, values, next_values, terminated | truncated, no_truncation, gamma, lam
    )
    np.testing.assert_allclose(library, wrong, atol=1e-12)


def test_check_for_understanding_answer():
    rewards = np.ones((1, 3))
    values = np.full((1, 3), 2.0)
    cut = np.array([[False, False, True]])
    nothing = np.zeros((1, 3), dtype=bool)
    right = loop_gae(rewards, values, values, nothing, cut, 0.5, 1.0)
    wrong = loop_gae(rewards, values, values, cut, nothing, 0.5, 1.0)
    assert right[0, 0] == pytest.approx(0.0)
    assert wrong[0, 0] == pytest.approx(-0.25)


# ---------------------------------------------------------------------------------------------
# The task without an end (figure fig-timeout-targets)
# ---------------------------------------------------------------------------------------------

HUB, BUSY = 0, 1
QUICK, START = 0, 1
JOB_GAMMA, JOB_LAM = 0.97, 0.95


def job_task():
    transition = np.zeros((2, 2, 2))
    reward = np.zeros((2, 2, 2))
    transition[HUB, QUICK, HUB] = 1.0
    reward[HUB, QUICK, HUB] = 0.5
    transition[HUB, START, BUSY] = 1.0
    transition[BUSY, :, HUB] = 1 / 6
    transition[BUSY, :, BUSY] = 5 / 6
    reward[BUSY, :, HUB] = 5.6
    policy = np.array([[0.5, 0.5], [1.0, 0.0]])
    return transition, reward, policy


JOB_T, JOB_R, JOB_PI = job_task()
JOB_V, JOB_P = bellman_values(JOB_T, JOB_R, JOB_PI, JOB_GAMMA, np.zeros(2, dtype=bool))
JOB_Q = np.einsum("sat,sat->sa", JOB_T, JOB_R + JOB_GAMMA * JOB_V)
JOB_PREFERENCE = JOB_Q[HUB, START] - JOB_Q[HUB, QUICK]


def all_windows(horizon):
    """Every window of `horizon` steps from the hub, with its probability, built here."""
    states, actions, rewards, probs = [], [], [], []

    def extend(path_states, path_actions, path_rewards, prob):
        if len(path_actions) == horizon:
            states.append(path_states)
            actions.append(path_actions)
            rewards.append(path_rewards)
            probs.append(prob)
            return
        s = path_states[-1]
        for a in range(2):
            for s_next in range(2):
                p = JOB_PI[s, a] * JOB_T[s, a, s_next]
                if p > 0:
                    extend(
                        [*path_states, s_next],
                        [*path_actions, a],
                        [*path_rewards, JOB_R[s, a, s_next]],
                        prob * p,
                    )

    extend([HUB], [], [], 1.0)
    return np.array(states), np.array(actions), np.array(rewards), np.array(probs)


def trained_state_only_critic(horizon, lam, marked_terminal):
    states, actions, rewards, probs = all_windows(horizon)
    weights = np.repeat(probs[:, None], horizon, axis=1)
    cut = np.zeros(rewards.shape, dtype=bool)
    cut[:, -1] = True
    none = np.zeros_like(cut)
    terminated, truncated = (cut, none) if marked_terminal else (none, cut)

    def gae_for(critic):
        return vector_gae(
            rewards,
            critic[states[:, :-1]],
            critic[states[:, 1:]],
            terminated,
            truncated,
            JOB_GAMMA,
            lam,
        )

    def refit(critic):
        targets = gae_for(critic) + critic[states[:, :-1]]
        return np.array(
            [
                np.sum((weights * targets)[states[:, :-1] == s])
                / np.sum(weights[states[:, :-1] == s])
                for s in (HUB, BUSY)
            ]
        )

    # Iterate the regression until it stops changing (the chapter solves the affine map).
    critic = np.zeros(2)
    for _ in range(5000):
        updated = refit(critic)
        if np.max(np.abs(updated - critic)) < 1e-11:
            critic = updated
            break
        critic = updated
    estimates = gae_for(critic)
    at_hub = states[:, :-1] == HUB
    means = [
        np.sum((weights * estimates)[at_hub & (actions == a)])
        / np.sum(weights[at_hub & (actions == a)])
        for a in (QUICK, START)
    ]
    return critic, means[1] - means[0]


def test_job_task_values():
    np.testing.assert_allclose(mdp.state_values(JOB_T, JOB_R, JOB_PI, JOB_GAMMA), JOB_V, atol=1e-10)
    assert JOB_V[HUB] == pytest.approx(24.659, abs=5e-4)
    assert JOB_PREFERENCE == pytest.approx(0.4796, abs=5e-5)


def test_targets_with_the_true_critic_collapse_near_the_limit():
    window = 20
    batch = mdp.sample_episodes(JOB_T, JOB_R, JOB_PI, [1.0, 0.0], window, seed=3, num_episodes=2000)
    s_now, s_next = batch["states"][:, :-1], batch["states"][:, 1:]
    assert batch["truncated"][:, -1].all() and not batch["terminated"].any()
    none = np.zeros_like(batch["truncated"])
    right = (
        vector_gae(
            batch["rewards"],
            JOB_V[s_now],
            JOB_V[s_next],
            none,
            batch["truncated"],
            JOB_GAMMA,
            JOB_LAM,
        )
        + JOB_V[s_now]
    )
    wrong = (
        vector_gae(
            batch["rewards"],
            JOB_V[s_now],
            JOB_V[s_next],
            batch["truncated"],
            none,
            JOB_GAMMA,
            JOB_LAM,
        )
        + JOB_V[s_now]
    )
    # Exact expectations: the state distribution at each step, pushed through P_pi.
    dist = np.array([1.0, 0.0])
    mean_v = []
    for _ in range(window + 1):
        mean_v.append(dist @ JOB_V)
        dist = dist @ JOB_P
    mean_v = np.array(mean_v)
    steps_left = window - 1 - np.arange(window)
    exact_wrong = mean_v[:-1] - JOB_GAMMA * (JOB_GAMMA * JOB_LAM) ** steps_left * mean_v[-1]
    assert exact_wrong[0] == pytest.approx(19.444, abs=1e-3)
    assert exact_wrong[0] / JOB_V[HUB] == pytest.approx(0.79, abs=0.01)  # "about 80%"
    standard_error = right.std(axis=0, ddof=1) / np.sqrt(right.shape[0])
    assert np.all(np.abs(right.mean(axis=0) - mean_v[:-1]) < 4 * standard_error + 1e-9)
    assert np.all(np.abs(wrong.mean(axis=0) - exact_wrong) < 4 * standard_error + 1e-9)
    # The last target is the last reward alone.
    np.testing.assert_allclose(wrong[:, -1], batch["rewards"][:, -1], atol=1e-12)
    assert np.all(np.diff(exact_wrong[1:]) < 0)


@pytest.fixture(scope="module")
def trained():
    return {
        (h, lam, marked): trained_state_only_critic(h, lam, marked)
        for h in range(3, 13)
        for lam in (0.0, JOB_LAM)
        for marked in (False, True)
    }


def test_bootstrapped_truncation_recovers_the_true_critic(trained):
    for h in range(3, 13):
        for lam in (0.0, JOB_LAM):
            critic, preference = trained[h, lam, False]
            np.testing.assert_allclose(critic, JOB_V, rtol=1e-8)
            assert preference == pytest.approx(JOB_PREFERENCE, abs=1e-8)


def test_timeouts_marked_terminal_break_critic_and_preference(trained):
    ratios = [
        JOB_V[HUB] / trained[h, lam, True][0][HUB] for h in range(3, 13) for lam in (0.0, JOB_LAM)
    ]
    assert min(ratios) == pytest.approx(4.0, abs=0.05)
    assert max(ratios) == pytest.approx(22.4, abs=0.05)
    flipped = [h for h in range(3, 13) if trained[h, 0.0, True][1] < 0]
    assert flipped == list(range(3, 10))  # "for every window of up to nine steps"
    for h in range(3, 13):
        assert 0 < trained[h, JOB_LAM, True][1] < JOB_PREFERENCE
    assert trained[5, 0.0, True][0][HUB] == pytest.approx(2.7013, abs=1e-4)
    assert trained[5, 0.0, True][1] == pytest.approx(-0.2647, abs=1e-4)
