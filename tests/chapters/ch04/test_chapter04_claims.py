"""Claims made in chapter 4 (critics, GAE and timeouts), recomputed independently.

Each test rebuilds one number, identity or figure property that the chapter's text relies on,
with the chapter's own parameters, by a route that shares no code with the library functions
the chapter calls: values by a linear solve of the policy-averaged model, episodes enumerated
by hand, GAE by its explicit sum over TD errors, packed streams through per-episode loops (all
in ``tests.oracles``, which also builds the chapter's three tasks, shared with the tests of
the solutions page), and gradients by central differences. Exact computations replace
iteration and sampling wherever one exists; the two Monte Carlo claims of the chapter (sampled
TD errors, the markers of the timeout figure) are checked on the chapter's own samples with
explicit tolerances.

Sections: the submit-or-work task (eq-td-unbiased, eq-td-critic-bias, eq-pg-occupancy, the
optimistic critic, the lambda = 1 conditions, eq-gae-critic-bias, fig-critic-lambda); the
token-level critic (eq-token-advantage, eq-outcome-credit, eq-token-gae, fig-token-critic);
packed streams (the worked example, eq-timeout-folding, eq-timeout-error, the check for
understanding); the task without an end (fig-timeout-targets).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rlfound import episodes
from tests.oracles import (
    BUSY,
    FOUR,
    HUB,
    JOB,
    JOB_GAMMA,
    JOB_LAM,
    QUICK,
    REVISED,
    START,
    SUBMIT,
    SUBMIT_OR_WORK,
    TOKEN_BIGRAM,
    WORK,
    central_differences,
    fold_truncations,
    gae_from_deltas,
    linear_solve_values,
    packed_gae_loop,
    packed_returns_loop,
    padded_episodes_by_hand,
    random_mdp,
    random_packed,
    softmax_rows,
    steps_to_truncation,
    token_gradient_variance,
    token_task,
    trained_state_only_critic,
    window_gae,
)

# ---------------------------------------------------------------------------------------------
# The submit-or-work task
# ---------------------------------------------------------------------------------------------

# The task, its policy and its exact solution (tests.oracles.SUBMIT_OR_WORK), by their names here.
TRANSITION, REWARD, TERMINAL, POLICY, INITIAL, GAMMA, V, P_PI, ADV, OCCUPANCY = SUBMIT_OR_WORK
LIVE = SUBMIT_OR_WORK.live
OPTIMISM = np.where(LIVE, 0.25, 0.0)  # Delta V of the chapter's optimistic critic
expected_update = SUBMIT_OR_WORK.expected_update  # d(s) pi(a|s) (Abar - pi . Abar), live states
td_bias = SUBMIT_OR_WORK.td_bias  # eq-td-critic-bias: gamma E[Delta V(s') | s, a] - Delta V(s)


def gae_mean_closed_form(error, lam):
    """eq-gae-critic-bias."""
    resolvent = np.zeros(5)
    resolvent[LIVE] = np.linalg.solve(
        np.eye(3) - GAMMA * lam * P_PI[np.ix_(LIVE, LIVE)], error[LIVE]
    )
    return ADV - error[:, None] + GAMMA * (1 - lam) * np.einsum("sat,t->sa", TRANSITION, resolvent)


def gae_mean_by_tail_solve(error, lam):
    """E[A_hat | s, a] from the proof's sum: first TD error, then f = mean_td + gamma lam P f."""
    mean_td = GAMMA * P_PI @ error - error  # mean TD error of a state under pi
    tail = np.zeros(5)
    tail[LIVE] = np.linalg.solve(np.eye(3) - GAMMA * lam * P_PI[np.ix_(LIVE, LIVE)], mean_td[LIVE])
    return ADV + td_bias(error) + GAMMA * lam * np.einsum("sat,t->sa", TRANSITION, tail)


def objective(logits):
    """J = p_0 . v_pi for the softmax policy of the logits, by the linear solve."""
    values, _ = linear_solve_values(TRANSITION, REWARD, softmax_rows(logits), GAMMA, TERMINAL)
    return INITIAL @ values


@pytest.fixture(scope="module")
def full_episodes():
    """Every episode of up to 25 steps (the rest has probability ~1e-13)."""
    return padded_episodes_by_hand(TRANSITION, REWARD, POLICY, INITIAL, 25, TERMINAL)


def test_value_table_printed_by_the_chapter():
    np.testing.assert_allclose(V[LIVE], [0.4137, 0.5710, 0.7222], atol=5e-5)
    np.testing.assert_allclose(
        ADV[LIVE], [[-0.2137, 0.0916], [-0.0710, 0.0710], [0.1778, -0.2667]], atol=5e-5
    )


@pytest.mark.equation("eq-td-unbiased")
@pytest.mark.parametrize("seed", range(4))
def test_td_error_of_the_true_value_is_the_advantage(seed):
    """eq-td-unbiased on the chapter's task and on random MDPs, against q from its own solve."""
    if seed == 0:
        transition, reward, policy, terminal, gamma = TRANSITION, REWARD, POLICY, TERMINAL, 1.0
    else:
        rng = np.random.default_rng(seed)
        transition, reward, policy, terminal, _ = random_mdp(rng, 6, 3, num_terminal=2)
        gamma = 0.9
    values, _ = linear_solve_values(transition, reward, policy, gamma, terminal)
    # q_pi by the Bellman equation on state-action pairs, q = r + gamma P Pi q, solved directly.
    num_states, num_actions = policy.shape
    pairs = num_states * num_actions
    continuing = transition * ~terminal[None, None, :]
    step = np.einsum("sat,tb->satb", continuing, policy * ~terminal[:, None]).reshape(pairs, pairs)
    expected_reward = np.einsum("sat,sat->sa", transition, reward).reshape(pairs)
    q = np.linalg.solve(np.eye(pairs) - gamma * step, expected_reward).reshape(policy.shape)
    mean_delta = np.einsum("sat,sat->sa", transition, reward + gamma * values) - values[:, None]
    np.testing.assert_allclose(mean_delta[~terminal], (q - values[:, None])[~terminal], atol=1e-10)


@pytest.mark.equation("eq-td-critic-bias")
@pytest.mark.parametrize("seed", range(1, 4))
def test_td_bias_of_an_arbitrary_critic(seed):
    """eq-td-critic-bias on random MDPs: the mean TD error summed over next states by loops."""
    rng = np.random.default_rng(seed)
    transition, reward, policy, terminal, _ = random_mdp(rng, 6, 3, num_terminal=2)
    gamma = 0.9
    values, _ = linear_solve_values(transition, reward, policy, gamma, terminal)
    error = np.where(terminal, 0.0, rng.normal(size=6))
    critic = values + error
    for s in np.flatnonzero(~terminal):
        for a in range(3):
            mean_delta = (
                sum(transition[s, a, t] * (reward[s, a, t] + gamma * critic[t]) for t in range(6))
                - critic[s]
            )
            advantage = (
                sum(transition[s, a, t] * (reward[s, a, t] + gamma * values[t]) for t in range(6))
                - values[s]
            )
            bias = gamma * transition[s, a] @ error - error[s]
            assert mean_delta == pytest.approx(advantage + bias, abs=1e-10)


def test_sampled_td_errors_lie_within_two_standard_errors():
    """The chapter's 20 000 sampled episodes (rng=2): each mean TD error within 2 s.e."""
    batch = episodes.sample_episodes(
        TRANSITION,
        REWARD,
        POLICY,
        INITIAL,
        horizon=40,
        num_episodes=20_000,
        terminal=TERMINAL,
        rng=2,
    )
    now, after = batch.states[:, :-1], batch.states[:, 1:]
    deltas = batch.rewards + GAMMA * V[after] - V[now]  # V = 0 at terminal states
    for s, a in itertools.product(range(3), range(2)):
        sample = deltas[(now == s) & (batch.actions == a)]
        standard_error = sample.std(ddof=1) / np.sqrt(sample.size)
        assert abs(sample.mean() - ADV[s, a]) < 2 * standard_error


def test_optimistic_critic_bias_table():
    bias = td_bias(OPTIMISM)
    np.testing.assert_allclose(bias[LIVE, SUBMIT], -0.25, atol=1e-12)
    np.testing.assert_allclose(bias[LIVE, WORK], [0.0, 0.0, -0.075], atol=1e-12)


@pytest.mark.equation("eq-pg-occupancy")
def test_occupancy_gradient_matches_finite_differences():
    """eq-pg-occupancy with the exact advantages is the gradient of J = p_0 . v_pi."""
    numerical = central_differences(objective, np.log(POLICY))
    np.testing.assert_allclose(expected_update(ADV), numerical[LIVE], atol=1e-8)
    np.testing.assert_allclose(OCCUPANCY[LIVE], [1.0753, 0.7527, 0.4182], atol=5e-5)


def test_optimistic_critic_updates_printed_by_the_chapter():
    true = expected_update(ADV)
    td = expected_update(ADV + td_bias(OPTIMISM))
    np.testing.assert_allclose(true[:, SUBMIT], [-0.0689, -0.0267, 0.0446], atol=5e-5)
    np.testing.assert_allclose(td[:, SUBMIT], [-0.1254, -0.0738, 0.0270], atol=5e-5)
    assert np.linalg.norm(td - true) / np.linalg.norm(true) == pytest.approx(0.88, abs=0.005)
    assert np.all(td[:, SUBMIT] < true[:, SUBMIT])  # favors working in every state


def test_optimistic_critic_matters_most_in_the_revised_state():
    """The text leads with the revised draft (almost 3x), then the draft (almost 2x)."""
    ratio = expected_update(ADV + td_bias(OPTIMISM))[:, SUBMIT] / expected_update(ADV)[:, SUBMIT]
    np.testing.assert_allclose(ratio, [1.82, 2.76, 0.61], atol=0.005)
    assert np.argmax(ratio) == REVISED


def test_critic_as_a_baseline_leaves_the_update_exact(full_episodes):
    """Full episodes, lambda = 1, the optimistic critic: the expected update of
    sum_t (G_t - V(s_t)) score_t over every episode equals the gradient of J."""
    states, actions, rewards, _, probs = full_episodes
    critic = V + OPTIMISM
    now, after = states[:, :-1], states[:, 1:]
    deltas = np.where(actions >= 0, rewards + GAMMA * critic[after] - critic[now], 0.0)
    estimates = gae_from_deltas(deltas, GAMMA, 1.0)  # G_t - V(s_t): the critic's values telescope
    score = np.eye(2)[np.maximum(actions, 0)] - POLICY[now]
    at_state = np.eye(5)[now] * (actions >= 0)[..., None]
    update = np.einsum("n,nt,nts,nta->sa", probs, estimates, at_state, score)[LIVE]
    numerical = central_differences(objective, np.log(POLICY))
    np.testing.assert_allclose(update, numerical[LIVE], atol=1e-8)


def window_update(error, horizon):
    """Exact expected update of lambda = 1 over windows of ``horizon`` steps, cut and
    bootstrapped from the critic v + error: E[A_t | s, a] = A - dV(s) + (P_a P^(k-1) dV)(s)."""
    distribution = INITIAL.copy()
    total = np.zeros((5, 2))
    for t in range(horizon):
        k = horizon - t  # steps from t to the cut
        at_cut = np.linalg.matrix_power(P_PI, k - 1) @ error
        mean = ADV - error[:, None] + GAMMA**k * np.einsum("sat,t->sa", TRANSITION, at_cut)
        centered = mean - np.sum(POLICY * mean, axis=1, keepdims=True)
        total += distribution[:, None] * POLICY * centered
        distribution = distribution @ P_PI
    return total[LIVE]


def test_lambda_one_is_biased_when_a_time_limit_bootstraps_from_the_critic():
    """The erratum's condition: windows cut and bootstrapped from the optimistic critic."""
    horizons = (2, 3, 4, 6, 8)
    gaps = [
        np.linalg.norm(window_update(OPTIMISM, h) - window_update(np.zeros(5), h))
        / np.linalg.norm(window_update(np.zeros(5), h))
        for h in horizons
    ]
    np.testing.assert_allclose(gaps, [0.694, 0.319, 0.131, 0.019, 0.002], atol=5e-4)
    assert gaps[0] > 0.5  # "off by more than half of its size"
    assert np.all(np.diff(gaps) < 0)  # fades as the window grows


def test_window_update_agrees_with_the_enumerated_windows():
    """The closed form used above against every window of 3 steps, enumerated here."""
    horizon = 3
    states, actions, rewards, running, probs = padded_episodes_by_hand(
        TRANSITION, REWARD, POLICY, INITIAL, horizon, TERMINAL
    )
    critic = V + OPTIMISM
    now, after = states[:, :-1], states[:, 1:]
    deltas = rewards + GAMMA * critic[after] - critic[now]  # critic = 0 at terminal states
    deltas[actions < 0] = 0.0  # padding after the end
    estimates = gae_from_deltas(deltas, GAMMA, 1.0)
    score = np.eye(2)[np.maximum(actions, 0)] - POLICY[now]
    at_state = np.eye(5)[now] * (actions >= 0)[..., None]
    update = np.einsum("n,nt,nts,nta->sa", probs, estimates, at_state, score)[LIVE]
    assert running.any()
    np.testing.assert_allclose(update, window_update(OPTIMISM, horizon), atol=1e-12)


@pytest.mark.equation("eq-gae-critic-bias")
@pytest.mark.parametrize("lam", [0.0, 0.3, 0.8, 0.95, 1.0])
def test_gae_bias_closed_form_equals_the_tail_solve(lam):
    """eq-gae-critic-bias against the proof's unsimplified sum, each by a linear solve."""
    rng = np.random.default_rng(7)
    for _ in range(3):
        error = np.where(LIVE, rng.normal(size=5), 0.0)
        np.testing.assert_allclose(
            gae_mean_closed_form(error, lam)[LIVE],
            gae_mean_by_tail_solve(error, lam)[LIVE],
            atol=1e-12,
        )


@pytest.mark.equation("eq-gae-critic-bias")
def test_gae_bias_closed_form_equals_the_enumerated_conditional_mean(full_episodes):
    """eq-gae-critic-bias for the optimistic critic, lambda = 0.6, over every episode."""
    states, actions, rewards, _, probs = full_episodes
    lam = 0.6
    critic = V + OPTIMISM
    now, after = states[:, :-1], states[:, 1:]
    deltas = np.where(actions >= 0, rewards + GAMMA * critic[after] - critic[now], 0.0)
    estimates = gae_from_deltas(deltas, GAMMA, lam)
    closed = gae_mean_closed_form(OPTIMISM, lam)
    for s, a in itertools.product(range(3), range(2)):
        visits = (now == s) & (actions == a)
        mean = np.sum(probs[:, None] * estimates * visits) / np.sum(probs[:, None] * visits)
        assert mean == pytest.approx(closed[s, a], abs=1e-9)


LAM_GRID = np.linspace(0.0, 1.0, 101)
LAM_POINTS = np.array([0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0])
OPTIMISMS = (0.0, 0.1, 0.25, 0.5)


def squared_bias(c):
    error = np.where(LIVE, c, 0.0)
    true = expected_update(ADV)
    return np.array(
        [
            np.sum((expected_update(gae_mean_closed_form(error, lam)) - true) ** 2)
            for lam in LAM_GRID
        ]
    )


def test_figure_critic_lambda_bias_vanishes_at_lambda_one():
    for c in OPTIMISMS:
        assert squared_bias(c)[-1] < 1e-28
    assert squared_bias(0.0).max() < 1e-28  # an exact critic is unbiased at every lambda


def test_figure_critic_lambda_bias_falls_with_lambda():
    for c in OPTIMISMS[1:]:
        assert np.all(np.diff(squared_bias(c)) < 0)


def test_figure_critic_lambda_bias_at_lambda_zero():
    np.testing.assert_allclose(
        [squared_bias(c)[0] for c in OPTIMISMS[1:]], [0.00183, 0.01142, 0.04567], atol=5e-6
    )


@pytest.fixture(scope="module")
def exact_gradient_variances(full_episodes):
    """Total variance of the one-episode gradient estimate, exactly, by critic and lambda."""
    states, actions, rewards, _, probs = full_episodes
    now, after = states[:, :-1], states[:, 1:]
    taken = actions >= 0
    at_state = np.eye(5)[now] * taken[..., None]
    score = np.eye(2)[np.maximum(actions, 0)] - POLICY[now]
    variances = {}
    for c in OPTIMISMS:
        critic = V + np.where(LIVE, c, 0.0)
        deltas = np.where(taken, rewards + GAMMA * critic[after] - critic[now], 0.0)
        row = []
        for lam in LAM_POINTS:
            grads = np.einsum(
                "nt,nts,nta->nsa", gae_from_deltas(deltas, GAMMA, lam), at_state, score
            )
            mean = np.einsum("n,nsa->sa", probs, grads)
            row.append(probs @ np.sum((grads - mean)[:, LIVE] ** 2, axis=(1, 2)))
        variances[c] = np.array(row)
    return variances


@pytest.mark.slow
def test_figure_critic_lambda_variance_rises_with_lambda(exact_gradient_variances):
    for c in OPTIMISMS:
        assert np.all(np.diff(exact_gradient_variances[c]) > 0)


@pytest.mark.slow
def test_figure_critic_lambda_variance_rises_with_the_critic_error(exact_gradient_variances):
    by_critic = np.array([exact_gradient_variances[c] for c in OPTIMISMS])
    assert np.all(np.diff(by_critic, axis=0) > 0)  # at every lambda


@pytest.mark.slow
def test_figure_critic_lambda_best_lambda_moves_toward_one(exact_gradient_variances):
    best = {}
    for c in OPTIMISMS:
        variance = np.interp(LAM_GRID, LAM_POINTS, exact_gradient_variances[c])
        best[c] = LAM_GRID[np.argmin(squared_bias(c) + variance / 16)]
    assert best[0.0] == 0.0
    assert best[0.0] < best[0.1] < best[0.25] < best[0.5]
    assert best[0.5] > 0.7


# ---------------------------------------------------------------------------------------------
# The token-level critic: the 2 + 2 task, every response enumerated (tests.oracles.token_task)
# ---------------------------------------------------------------------------------------------

ESTIMATORS = (
    "outcome copied",
    "outcome - J",
    "critic, lambda = 1.0",
    "critic, lambda = 0.95",
    "critic, lambda = 0.0",
)


def token_credits(outcome, prefix_value, probs):
    """Per-token credit of each estimator, from eq-token-gae by its explicit sum."""
    length = prefix_value.shape[1] - 1
    critic = prefix_value.copy()
    critic[:, -1] = 0.0  # the finished response is terminal
    rewards = np.zeros((len(outcome), length))
    rewards[:, -1] = outcome
    deltas = rewards + critic[:, 1:] - critic[:, :-1]
    copied = np.repeat(outcome[:, None], length, axis=1)
    credits = {"outcome copied": copied, "outcome - J": copied - probs @ outcome}
    for lam in (1.0, 0.95, 0.0):
        credits[f"critic, lambda = {lam}"] = gae_from_deltas(deltas, 1.0, lam)
    return credits


def token_true_advantages(prefix_value):
    """eq-token-advantage: v(x_<=j) - v(x_<j), with v of the whole response R(x)."""
    return prefix_value[:, 1:] - prefix_value[:, :-1]


def conditional_mean(responses, probs, values, k):
    """E[values | first k tokens] for every response, by explicit grouping."""
    keys = [tuple(x[:k]) for x in responses]
    total, mass = {}, {}
    for key, p, value in zip(keys, probs, values, strict=True):
        total[key] = total.get(key, 0.0) + p * value
        mass[key] = mass.get(key, 0.0) + p
    return np.array([total[key] / mass[key] for key in keys])


TOKEN = token_task(4)


def test_token_task_success_probability():
    _, _, probs, outcome, prefix_value = TOKEN
    assert len(probs) == 81 and probs.sum() == pytest.approx(1.0)
    assert probs @ outcome == pytest.approx(0.248, abs=1e-12)
    np.testing.assert_allclose(prefix_value[:, 0], 0.248, atol=1e-12)  # v_pi(prompt) = J


@pytest.mark.parametrize(
    ("text", "advantages"),
    [
        ("45..", [0.248, -0.016, 0.12, 0.4]),
        ("4..5", [0.248, 0.024, 0.08, -0.6]),
        ("5...", [-0.248, 0.0, 0.0, 0.0]),
        ("4.5.", [0.248, 0.024, -0.12, 0.6]),
    ],
)
def test_token_true_advantages_printed_by_the_chapter(text, advantages):
    responses, _, _, _, prefix_value = TOKEN
    row = np.flatnonzero((responses == ["45.".index(c) for c in text]).all(axis=1))[0]
    np.testing.assert_allclose(token_true_advantages(prefix_value)[row], advantages, atol=1e-12)


def test_tokens_after_a_wrong_answer_have_zero_advantage_but_copied_credit():
    responses, _, probs, outcome, prefix_value = TOKEN
    wrong = responses[:, 0] != FOUR
    true = token_true_advantages(prefix_value)
    np.testing.assert_allclose(true[wrong][:, 1:], 0.0, atol=1e-15)
    copied = token_credits(outcome, prefix_value, probs)["outcome - J"]
    np.testing.assert_allclose(copied[wrong], -0.248, atol=1e-12)
    critic = token_credits(outcome, prefix_value, probs)["critic, lambda = 0.95"]
    np.testing.assert_allclose(critic[wrong][:, 1:], 0.0, atol=1e-15)


@pytest.mark.equation("eq-outcome-credit")
def test_outcome_credit_inherits_the_credit_of_the_prefix():
    """eq-outcome-credit: E[R - b | x_<=j] = A_pi(x_<j, x_j) + v_pi(x_<j) - b."""
    responses, _, probs, outcome, prefix_value = TOKEN
    true = token_true_advantages(prefix_value)
    for b in (0.0, probs @ outcome, 0.7):
        for j in range(4):
            mean = conditional_mean(responses, probs, outcome - b, j + 1)
            np.testing.assert_allclose(mean, true[:, j] + prefix_value[:, j] - b, atol=1e-12)


def test_inherited_credit_by_position_printed_by_the_chapter():
    responses, _, probs, outcome, prefix_value = TOKEN
    true = token_true_advantages(prefix_value)
    credits = token_credits(outcome, prefix_value, probs)
    printed = {
        "outcome copied": [0.0615, 0.1230, 0.1232, 0.1280],
        "outcome - J": [0.0, 0.0615, 0.0617, 0.0665],
    }
    for name in ESTIMATORS:
        expected = np.column_stack(
            [conditional_mean(responses, probs, credits[name][:, j], j + 1) for j in range(4)]
        )
        inherited = probs @ (expected - true) ** 2
        np.testing.assert_allclose(inherited, printed.get(name, np.zeros(4)), atol=5e-5)


def test_mean_squared_credit_error_printed_by_the_chapter():
    _, _, probs, outcome, prefix_value = TOKEN
    credits = token_credits(outcome, prefix_value, probs)
    printed = {
        "outcome copied": [0.1865, 0.2478, 0.2432, 0.1280],
        "outcome - J": [0.1250, 0.1863, 0.1817, 0.0665],
        "critic, lambda = 1.0": [0.1250, 0.1248, 0.1200, 0.0],
        "critic, lambda = 0.95": [0.0923, 0.1021, 0.1083, 0.0],
        "critic, lambda = 0.0": [0.0, 0.0, 0.0, 0.0],  # the credit is the advantage itself
    }
    true = token_true_advantages(prefix_value)
    for name in ESTIMATORS:
        mse = probs @ (credits[name] - true) ** 2
        np.testing.assert_allclose(mse, printed[name], atol=5e-5)


def test_every_token_estimator_has_the_exact_gradient_as_its_mean():
    responses, previous, probs, outcome, prefix_value = TOKEN

    def success(table):
        return token_task(4, softmax_rows(table))[2] @ outcome

    exact = central_differences(success, np.log(TOKEN_BIGRAM))
    for credit in token_credits(outcome, prefix_value, probs).values():
        mean, _ = token_gradient_variance(responses, previous, probs, credit)
        np.testing.assert_allclose(mean, exact, atol=1e-8)


def test_gradient_variances_printed_by_the_chapter():
    responses, previous, probs, outcome, prefix_value = TOKEN
    credits = token_credits(outcome, prefix_value, probs)
    variances = [
        token_gradient_variance(responses, previous, probs, credits[n])[1] for n in ESTIMATORS
    ]
    np.testing.assert_allclose(variances, [0.4541, 0.3615, 0.2824, 0.2472, 0.0873], atol=5e-5)
    assert np.all(np.diff(variances) < 0)  # copying is noisiest; lambda = 0 quietest


@pytest.fixture(scope="module")
def variance_by_length():
    table = {}
    for length in range(2, 8):
        responses, previous, probs, outcome, prefix_value = token_task(length)
        credits = token_credits(outcome, prefix_value, probs)
        table[length] = {
            n: token_gradient_variance(responses, previous, probs, credits[n])[1]
            for n in ESTIMATORS
        }
    return table


@pytest.mark.slow
def test_figure_token_critic_copying_variance_grows_with_every_token(variance_by_length):
    for name in ESTIMATORS[:4]:
        assert np.all(np.diff([variance_by_length[n][name] for n in range(2, 8)]) > 0)
    assert variance_by_length[7]["outcome copied"] == pytest.approx(0.9508, abs=5e-5)


@pytest.mark.slow
def test_figure_token_critic_lambda_zero_hardly_grows(variance_by_length):
    lambda_zero = [variance_by_length[n]["critic, lambda = 0.0"] for n in range(2, 8)]
    assert max(lambda_zero[1:]) - min(lambda_zero[1:]) < 0.005  # from L = 3 on
    ratio = variance_by_length[7]["outcome copied"] / variance_by_length[7]["critic, lambda = 0.0"]
    assert ratio > 10  # "more than ten times"


# ---------------------------------------------------------------------------------------------
# Packed streams
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


def test_worked_example_hand_checked_entries():
    rewards, values, next_values, terminated, truncated = worked_example()
    gae = packed_gae_loop(rewards, values, next_values, terminated, truncated, 0.9, 0.8)
    deltas = packed_gae_loop(rewards, values, next_values, terminated, truncated, 0.9, 0.0)
    assert deltas[2] == gae[2] == pytest.approx(0.1)  # 1 - 0.9, no bootstrap at the terminal
    assert deltas[5] == gae[5] == pytest.approx(0.02)  # 0.9 * 0.8 - 0.7
    assert gae[4] == pytest.approx(0.53 + 0.72 * 0.02)
    g = packed_returns_loop(rewards, next_values, terminated, truncated, 0.9)
    assert g[5] == pytest.approx(0.72) and g[8] == pytest.approx(1.45)


def test_worked_example_table():
    """The rows the chapter prints: A, A + V and G at every step."""
    rewards, values, next_values, terminated, truncated = worked_example()
    gae = packed_gae_loop(rewards, values, next_values, terminated, truncated, 0.9, 0.8)
    g = packed_returns_loop(rewards, next_values, terminated, truncated, 0.9)
    printed_a = [0.1610, 0.1820, 0.1000, 0.5320, 0.5444, 0.0200, 0.6194, 0.6520, 0.8500]
    printed_g = [0.8100, 0.9000, 1.0000, 1.0332, 1.1480, 0.7200, 1.1745, 1.3050, 1.4500]
    np.testing.assert_allclose(gae, printed_a, atol=5e-5)
    np.testing.assert_allclose(g, printed_g, atol=5e-5)


def test_worked_example_lambda_one_gae_plus_values_is_the_bootstrapped_return():
    rewards, values, next_values, terminated, truncated = worked_example()
    lam_one = packed_gae_loop(rewards, values, next_values, terminated, truncated, 0.9, 1.0)
    g = packed_returns_loop(rewards, next_values, terminated, truncated, 0.9)
    np.testing.assert_allclose(lam_one + values, g, atol=1e-12)


@pytest.mark.equation("eq-timeout-folding")
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("lam", [0.0, 0.95, 1.0])
def test_folding_a_truncation_into_the_reward(seed, lam):
    """eq-timeout-folding on random packed streams, both sides by the per-episode loop."""
    rewards, values, next_values, terminated, truncated = random_packed(np.random.default_rng(seed))
    gamma = 0.99
    direct = packed_gae_loop(rewards, values, next_values, terminated, truncated, gamma, lam)
    folded = packed_gae_loop(
        *fold_truncations(rewards, values, next_values, terminated, truncated, gamma), gamma, lam
    )
    np.testing.assert_allclose(direct, folded, atol=1e-12)


@pytest.mark.equation("eq-timeout-error")
@pytest.mark.parametrize("seed", range(3))
def test_timeout_marked_terminal_loses_exactly_the_bootstrap_terms(seed):
    """eq-timeout-error: -gamma (gamma lam)^k V_next at k steps before each truncation."""
    rewards, values, next_values, terminated, truncated = random_packed(np.random.default_rng(seed))
    gamma, lam = 0.99, 0.9
    right = packed_gae_loop(rewards, values, next_values, terminated, truncated, gamma, lam)
    wrong = packed_gae_loop(
        rewards, values, next_values, terminated | truncated, np.zeros_like(truncated), gamma, lam
    )
    k, cut_value = steps_to_truncation(terminated, truncated, next_values)
    predicted = -gamma * (gamma * lam) ** k * cut_value
    assert truncated.any()
    np.testing.assert_allclose(wrong - right, predicted, atol=1e-12)


def test_check_for_understanding_answer():
    rewards = np.ones(3)
    values = np.full(3, 2.0)
    cut = np.array([False, False, True])
    nothing = np.zeros(3, dtype=bool)
    right = packed_gae_loop(rewards, values, values, nothing, cut, 0.5, 1.0)
    wrong = packed_gae_loop(rewards, values, values, cut, nothing, 0.5, 1.0)
    assert right[0] == pytest.approx(0.0)
    assert wrong[0] == pytest.approx(-0.25)


# ---------------------------------------------------------------------------------------------
# The task without an end (figure fig-timeout-targets)
# ---------------------------------------------------------------------------------------------

# The task, its policy and its exact solution (tests.oracles.JOB), by their names here.
JOB_T, JOB_R, JOB_PI, JOB_V, JOB_P = JOB.transition, JOB.reward, JOB.policy, JOB.values, JOB.p_pi
JOB_Q = np.einsum("sat,sat->sa", JOB_T, JOB_R + JOB_GAMMA * JOB_V)
JOB_PREFERENCE = JOB_Q[HUB, START] - JOB_Q[HUB, QUICK]


def test_job_task_values():
    assert JOB_V[HUB] == pytest.approx(24.659, abs=5e-4)
    assert JOB_V[BUSY] == pytest.approx(25.669, abs=5e-4)
    assert JOB_PREFERENCE == pytest.approx(0.4796, abs=5e-5)


def exact_window_targets(window):
    """E[lambda-return target] by step with the true critic, timeouts marked terminal."""
    distribution = np.array([1.0, 0.0])
    mean_v = []
    for _ in range(window + 1):
        mean_v.append(distribution @ JOB_V)
        distribution = distribution @ JOB_P
    mean_v = np.array(mean_v)
    steps_left = window - 1 - np.arange(window)
    return mean_v, mean_v[:-1] - JOB_GAMMA * (JOB_GAMMA * JOB_LAM) ** steps_left * mean_v[-1]


def test_targets_marked_terminal_collapse_near_the_limit():
    mean_v, marked = exact_window_targets(20)
    assert marked[0] == pytest.approx(19.444, abs=1e-3)
    assert marked[0] / JOB_V[HUB] == pytest.approx(0.79, abs=0.01)  # "about 80%"
    np.testing.assert_allclose(marked[[10, 15, 18, 19]], [13.604, 7.639, 2.698, 0.762], atol=1e-3)
    assert np.all(np.diff(marked[1:]) < 0)
    np.testing.assert_allclose(mean_v[[0, 10]], [24.659, 25.417], atol=1e-3)


def test_figure_timeout_targets_markers_agree_with_the_lines():
    """The chapter's 2000 sampled windows (rng=3) against the exact lines, 4 s.e."""
    window = 20
    batch = episodes.sample_episodes(
        JOB_T, JOB_R, JOB_PI, [1.0, 0.0], window, num_episodes=2000, rng=3
    )
    now, after = batch.states[:, :-1], batch.states[:, 1:]
    mean_v, marked = exact_window_targets(window)
    for marked_terminal, exact in ((False, mean_v[:-1]), (True, marked)):
        targets = window_gae(
            batch.rewards, JOB_V[now], JOB_V[after], JOB_GAMMA, JOB_LAM, marked_terminal
        )
        targets = targets + JOB_V[now]
        standard_error = targets.std(axis=0, ddof=1) / np.sqrt(len(targets))
        assert np.all(np.abs(targets.mean(axis=0) - exact) < 4 * standard_error + 1e-9)


@pytest.fixture(scope="module")
def trained():
    return {
        (h, lam, marked): trained_state_only_critic(h, lam, marked)
        for h in range(3, 13)
        for lam in (0.0, JOB_LAM)
        for marked in (False, True)
    }


@pytest.mark.slow
def test_bootstrapped_truncation_recovers_the_true_critic(trained):
    for h, lam in itertools.product(range(3, 13), (0.0, JOB_LAM)):
        critic, preference = trained[h, lam, False]
        np.testing.assert_allclose(critic, JOB_V, rtol=1e-8)
        assert preference == pytest.approx(JOB_PREFERENCE, abs=1e-8)


@pytest.mark.slow
def test_timeouts_marked_terminal_shrink_the_critic_4_to_22_times(trained):
    ratios = [
        JOB_V[HUB] / trained[h, lam, True][0][HUB] for h in range(3, 13) for lam in (0.0, JOB_LAM)
    ]
    assert min(ratios) == pytest.approx(4.0, abs=0.05)
    assert max(ratios) == pytest.approx(22.4, abs=0.05)
    assert trained[5, 0.0, True][0][HUB] == pytest.approx(2.7013, abs=1e-4)


@pytest.mark.slow
def test_timeouts_marked_terminal_flip_the_one_step_preference_up_to_nine_steps(trained):
    flipped = [h for h in range(3, 13) if trained[h, 0.0, True][1] < 0]
    assert flipped == list(range(3, 10))
    assert trained[5, 0.0, True][1] == pytest.approx(-0.2647, abs=1e-4)


@pytest.mark.slow
def test_timeouts_marked_terminal_shrink_but_keep_the_lambda_095_preference(trained):
    for h in range(3, 13):
        assert 0 < trained[h, JOB_LAM, True][1] < JOB_PREFERENCE
