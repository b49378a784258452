"""Claims made in chapter 1, each recomputed independently of the cell that prints it.

The chapter's own numbers, figures and worked examples, with its parameters and seeds:

- section "Values and the Bellman equation": at gamma = 1 the full matrix I - P_pi is
  singular for every row-stochastic P_pi, while the live block I - P_LL is invertible exactly
  when every live state reaches a terminal state (checked against a graph search); the
  chain whose state 1 loops forever;
- section "REINFORCE on a bandit" and figure fig-reinforce-baselines: the batch-mean
  advantage is (N - 1)/N times the leave-one-out advantage, sample by sample, so a
  batch-mean run is a leave-one-out run with a shorter step; the expected updates of both
  baselines by enumeration of every batch; a baseline shrinks the spread across seeds and
  makes the learner immune to a constant reward shift;
- section "Importance sampling" and figure fig-importance-variance: the example's
  estimates, the exact mean, variance and MSE of the ordinary and the self-normalized
  estimate by enumeration of the multinomial counts, their large-N variances, the failure
  without support, the 0.81/p variance and the effective sample size;
- figure fig-gae-bias-variance: the exact bias and variance of the lambda-return, its
  monotone trade-off in lambda and the lambda with the smallest mean squared error.

Facts about single library functions are tested in the library's unit tests.
"""

from __future__ import annotations

import collections
import itertools
import math

import numpy as np
import pytest

from rlfound import advantages, bandits, importance, mdp
from tests.oracles import bandit_gradient_by_hand, random_distributions, softmax_rows

# ---------------------------------------------------------------------------------------------
# Section "Values and the Bellman equation": the Bellman system at gamma = 1
# ---------------------------------------------------------------------------------------------


def smallest_singular_value(matrix):
    return np.linalg.svd(matrix, compute_uv=False).min()


def every_live_state_reaches_a_terminal_state(transition, terminal):
    """Graph search backwards from the terminal states along edges of positive probability."""
    reaches = set(np.flatnonzero(terminal).tolist())
    queue = collections.deque(reaches)
    while queue:
        target = queue.popleft()
        for source in np.flatnonzero(transition[:, target] > 0).tolist():
            if source not in reaches:
                reaches.add(source)
                queue.append(source)
    return len(reaches) == len(terminal)


@pytest.mark.parametrize("num_states", [1, 2, 3, 5, 8])
def test_full_bellman_matrix_is_singular_at_gamma_one_for_any_stochastic_matrix(num_states):
    rng = np.random.default_rng(num_states)
    for sparse in (False, True):
        for _ in range(20):
            transition = random_distributions(rng, (num_states, num_states), sparse=sparse)
            full = np.eye(num_states) - transition
            np.testing.assert_allclose(full @ np.ones(num_states), 0.0, atol=1e-12)
            assert smallest_singular_value(full) < 1e-12


def test_live_block_is_invertible_exactly_when_every_live_state_reaches_a_terminal_state():
    rng = np.random.default_rng(11)
    outcomes = collections.Counter()
    for _ in range(400):
        num_states = int(rng.integers(2, 7))
        transition = random_distributions(rng, (num_states, num_states), sparse=True)
        terminal = rng.random(num_states) < 0.3
        terminal[rng.integers(num_states)] = False  # at least one live state
        live = ~terminal
        block = np.eye(live.sum()) - transition[np.ix_(live, live)]
        reaches = every_live_state_reaches_a_terminal_state(transition, terminal)
        singular_value = smallest_singular_value(block)
        if reaches:
            assert singular_value > 1e-9
        else:
            assert singular_value < 1e-12
        outcomes[reaches] += 1
    assert min(outcomes[True], outcomes[False]) >= 50  # both cases are exercised


def looping_chain():
    """The chapter's chain with state 1 moving back to itself instead of to state 2."""
    transition = np.array([[0.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    return transition, np.array([0.0, 1.0, 0.0]), np.array([False, False, True])


def test_looping_chain_has_a_singular_live_block():
    transition, _, terminal = looping_chain()
    live = ~terminal
    block = np.eye(2) - transition[np.ix_(live, live)]
    assert np.linalg.matrix_rank(block) == 1  # the chapter prints "1 of 2"
    assert not every_live_state_reaches_a_terminal_state(transition, terminal)


def test_looping_chain_values_below_gamma_one():
    transition, reward, terminal = looping_chain()
    gamma = 0.9
    loop_value = 1.0 / (1.0 - gamma)  # 1 + gamma + gamma^2 + ... in state 1
    np.testing.assert_allclose(
        mdp.evaluate_policy(transition, reward, gamma, terminal),
        [gamma * loop_value, loop_value, 0.0],  # the printed [9, 10, 0]
        rtol=1e-12,
    )


# ---------------------------------------------------------------------------------------------
# Section "REINFORCE on a bandit" and figure fig-reinforce-baselines
# ---------------------------------------------------------------------------------------------

BANDIT = np.array([0.2, 0.5, 1.0])
SEEDS = range(20)
STEPS, BATCH_SIZE, LR = 200, 8, 0.2
SHIFT = 5.0


@pytest.mark.equation("eq-mean-vs-loo")
@pytest.mark.parametrize("batch_size", [2, 3, 8, 50])
def test_batch_mean_advantage_is_the_scaled_leave_one_out_advantage(batch_size):
    rewards = np.random.default_rng(batch_size).normal(size=batch_size)
    mean = sum(rewards) / batch_size
    for i in range(batch_size):
        leave_one_out = sum(rewards[j] for j in range(batch_size) if j != i) / (batch_size - 1)
        scaled = (batch_size - 1) / batch_size * (rewards[i] - leave_one_out)
        assert rewards[i] - mean == pytest.approx(scaled, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_batch_mean_run_is_the_leave_one_out_run_with_a_shorter_step(seed):
    settings = dict(num_steps=STEPS, batch_size=BATCH_SIZE, rng=seed)
    mean_run = bandits.reinforce_bandit_history(BANDIT, lr=LR, baseline="mean", **settings)
    shorter = LR * (BATCH_SIZE - 1) / BATCH_SIZE
    loo_run = bandits.reinforce_bandit_history(
        BANDIT, lr=shorter, baseline="leave_one_out", **settings
    )
    np.testing.assert_allclose(mean_run, loo_run, rtol=0, atol=1e-12)


def expected_update(logits, batch_size, baseline):
    """Exact expectation of the batch REINFORCE estimate, by enumerating every batch."""
    probs = softmax_rows(logits)
    total = np.zeros_like(probs)
    for batch in itertools.product(range(len(probs)), repeat=batch_size):
        actions = np.array(batch)
        rewards = BANDIT[actions]
        if baseline == "mean":
            b = np.full(batch_size, rewards.mean())
        else:
            b = (rewards.sum() - rewards) / (batch_size - 1)
        estimate = bandits.reinforce_gradient_estimate(logits, actions, rewards, b)
        total += np.prod(probs[actions]) * estimate
    return total


LOGITS = np.array([0.3, -0.2, 0.1])


@pytest.mark.parametrize("batch_size", [2, 3, 4])
def test_leave_one_out_update_is_unbiased(batch_size):
    np.testing.assert_allclose(
        expected_update(LOGITS, batch_size, "leave_one_out"),
        bandit_gradient_by_hand(LOGITS, BANDIT),
        atol=1e-12,
    )


@pytest.mark.parametrize("batch_size", [2, 3, 4])
def test_batch_mean_update_is_the_gradient_times_n_minus_one_over_n(batch_size):
    np.testing.assert_allclose(
        expected_update(LOGITS, batch_size, "mean"),
        (batch_size - 1) / batch_size * bandit_gradient_by_hand(LOGITS, BANDIT),
        atol=1e-12,
    )


def best_arm_curves(action_rewards, baseline):
    """P(best arm) after every step, shape (seeds, STEPS + 1), as in the chapter's figure."""
    curves = []
    for seed in SEEDS:
        logits = bandits.reinforce_bandit_history(
            action_rewards,
            num_steps=STEPS,
            batch_size=BATCH_SIZE,
            lr=LR,
            baseline=baseline,
            rng=seed,
        )
        curves.append(softmax_rows(logits)[:, -1])
    return np.array(curves)


@pytest.fixture(scope="module")
def bandit_curves():
    return {
        (shift, baseline): best_arm_curves(BANDIT + shift, baseline)
        for shift in (0.0, SHIFT)
        for baseline in ("none", "leave_one_out")
    }


@pytest.mark.slow
@pytest.mark.parametrize("step", [25, 50])
def test_baseline_shrinks_spread_across_seeds(bandit_curves, step):
    spread_none = bandit_curves[0.0, "none"][:, step].std()
    spread_loo = bandit_curves[0.0, "leave_one_out"][:, step].std()
    assert spread_loo < 0.6 * spread_none


@pytest.mark.slow
@pytest.mark.parametrize("baseline", ["none", "leave_one_out"])
def test_all_variants_reach_the_same_place_on_the_chapter_bandit(bandit_curves, baseline):
    final = bandit_curves[0.0, baseline][:, -1]
    assert final.min() > 0.94
    assert final.mean() == pytest.approx(0.965, abs=0.01)


@pytest.mark.slow
def test_reward_shift_derails_plain_reinforce(bandit_curves):
    final_none = bandit_curves[SHIFT, "none"][:, -1]
    final_loo = bandit_curves[SHIFT, "leave_one_out"][:, -1]
    assert final_none.mean() < final_loo.mean() - 0.1
    assert final_none.min() < 0.5  # some seed locked onto a wrong arm


@pytest.mark.parametrize("baseline", ["mean", "leave_one_out"])
def test_baseline_runs_are_invariant_to_a_reward_shift(baseline):
    for seed in (0, 1, 2):
        settings = dict(num_steps=STEPS, batch_size=BATCH_SIZE, lr=LR, baseline=baseline, rng=seed)
        plain = bandits.reinforce_bandit_history(BANDIT, **settings)
        shifted = bandits.reinforce_bandit_history(BANDIT + SHIFT, **settings)
        np.testing.assert_allclose(plain, shifted, rtol=0, atol=1e-10)


# ---------------------------------------------------------------------------------------------
# Section "Importance sampling": the three-action example
# ---------------------------------------------------------------------------------------------

REWARDS_3 = np.array([0.0, 1.0, 2.0])
BEHAVIOR_3 = np.array([0.5, 0.3, 0.2])
TARGET_3 = np.array([0.2, 0.3, 0.5])
TRUE_VALUE_3 = 1.3  # 0.3 * 1 + 0.5 * 2
N_EXAMPLE = 5000


@pytest.fixture(scope="module")
def logged_example():
    rng = np.random.default_rng(0)  # the chapter's seed
    actions = rng.choice(3, size=N_EXAMPLE, p=BEHAVIOR_3)
    return actions, REWARDS_3[actions]


def test_ordinary_estimate_of_the_example_recovers_the_target_value(logged_example):
    actions, rewards = logged_example
    estimate = importance.off_policy_value(actions, rewards, TARGET_3, BEHAVIOR_3)
    per_action = TARGET_3 / BEHAVIOR_3 * REWARDS_3
    variance = BEHAVIOR_3 @ per_action**2 - TRUE_VALUE_3**2  # 3.61, by enumeration
    assert abs(estimate - TRUE_VALUE_3) < 3 * np.sqrt(variance / N_EXAMPLE)


def test_self_normalized_estimate_of_the_example_recovers_the_target_value(logged_example):
    actions, rewards = logged_example
    estimate = importance.weighted_off_policy_value(actions, rewards, TARGET_3, BEHAVIOR_3)
    ratio = TARGET_3 / BEHAVIOR_3
    large_n_variance = BEHAVIOR_3 @ (ratio**2 * (REWARDS_3 - TRUE_VALUE_3) ** 2)
    assert abs(estimate - TRUE_VALUE_3) < 3 * np.sqrt(large_n_variance / N_EXAMPLE)


def test_mean_of_logged_rewards_estimates_the_behavior_value(logged_example):
    _, rewards = logged_example
    assert abs(rewards.mean() - BEHAVIOR_3 @ REWARDS_3) < 0.05
    assert abs(rewards.mean() - TRUE_VALUE_3) > 0.5


def exact_estimator_moments(n_logged):
    """Exact (mean, variance, MSE) of the ordinary and the self-normalized estimate.

    Both depend on the logged actions only through the counts (n_0, n_1, n_2), which are
    multinomial; the probabilities are written out with log-factorials.
    """
    ratio = TARGET_3 / BEHAVIOR_3
    probability, plain, weighted = [], [], []
    for n0 in range(n_logged + 1):
        for n1 in range(n_logged + 1 - n0):
            counts = (n0, n1, n_logged - n0 - n1)
            log_p = math.lgamma(n_logged + 1) + sum(
                k * math.log(m) - math.lgamma(k + 1)
                for k, m in zip(counts, BEHAVIOR_3, strict=True)
            )
            weighted_sum = sum(k * w * r for k, w, r in zip(counts, ratio, REWARDS_3, strict=True))
            probability.append(math.exp(log_p))
            plain.append(weighted_sum / n_logged)
            weighted.append(weighted_sum / sum(k * w for k, w in zip(counts, ratio, strict=True)))
    probability = np.array(probability)
    moments = {}
    for name, estimates in (("ordinary", np.array(plain)), ("weighted", np.array(weighted))):
        mean = probability @ estimates
        variance = probability @ (estimates - mean) ** 2
        mse = probability @ (estimates - TRUE_VALUE_3) ** 2
        moments[name] = (mean, variance, mse)
    return moments


@pytest.fixture(scope="module")
def exact_moments():
    return {n: exact_estimator_moments(n) for n in (5, 10, 50, 200)}


@pytest.mark.parametrize("n_logged", [5, 10, 50])
def test_ordinary_estimate_is_unbiased_with_variance_3_61_over_n(exact_moments, n_logged):
    mean, variance, _ = exact_moments[n_logged]["ordinary"]
    assert mean == pytest.approx(TRUE_VALUE_3, rel=1e-10)
    assert variance == pytest.approx(3.61 / n_logged, rel=1e-9)


def test_self_normalized_mean_lies_between_behavior_and_target_values_at_n5(exact_moments):
    mean, _, _ = exact_moments[5]["weighted"]
    assert BEHAVIOR_3 @ REWARDS_3 < mean < TRUE_VALUE_3


def test_self_normalized_bias_shrinks_towards_zero_as_n_grows(exact_moments):
    biases = [exact_moments[n]["weighted"][0] - TRUE_VALUE_3 for n in (5, 10, 50, 200)]
    assert all(bias < 0 for bias in biases)  # "biased low"
    assert np.all(np.diff(np.abs(biases)) < 0)
    assert abs(biases[-1]) < 0.005


def test_self_normalized_variance_at_n10_is_about_27_percent(exact_moments):
    _, variance, _ = exact_moments[10]["weighted"]
    _, ordinary_variance, _ = exact_moments[10]["ordinary"]
    assert variance == pytest.approx(0.098, abs=5e-4)
    assert ordinary_variance == pytest.approx(0.361, abs=5e-4)
    assert variance / ordinary_variance == pytest.approx(0.27, abs=0.005)


def test_self_normalized_mse_at_n10_is_under_30_percent(exact_moments):
    _, _, mse = exact_moments[10]["weighted"]
    _, ordinary_variance, _ = exact_moments[10]["ordinary"]
    assert mse == pytest.approx(0.103, abs=5e-4)
    assert mse / ordinary_variance < 0.30


def test_large_n_variances_and_their_ratio(exact_moments):
    ratio = TARGET_3 / BEHAVIOR_3
    ordinary = (
        sum(m * (w * r) ** 2 for m, w, r in zip(BEHAVIOR_3, ratio, REWARDS_3, strict=True)) - 1.3**2
    )
    weighted = sum(
        m * w**2 * (r - TRUE_VALUE_3) ** 2
        for m, w, r in zip(BEHAVIOR_3, ratio, REWARDS_3, strict=True)
    )
    assert ordinary == pytest.approx(3.61, rel=1e-12)
    assert weighted == pytest.approx(0.775, abs=5e-4)
    assert weighted / ordinary == pytest.approx(0.21, abs=0.005)
    # the large-N formula is the limit of the exact N * variance
    assert 200 * exact_moments[200]["weighted"][1] == pytest.approx(weighted, rel=0.02)


def test_missing_support_biases_the_estimate_towards_the_covered_part():
    no_support = np.array([0.6, 0.4, 0.0])
    rng = np.random.default_rng(5)
    actions = rng.choice(3, size=N_EXAMPLE, p=no_support)
    estimate = importance.off_policy_value(actions, REWARDS_3[actions], TARGET_3, no_support)
    covered_value = TARGET_3[:2] @ REWARDS_3[:2]  # 0.3: action 2 is never logged
    assert estimate == pytest.approx(covered_value, abs=0.05)


# ---------------------------------------------------------------------------------------------
# Figure fig-importance-variance
# ---------------------------------------------------------------------------------------------

TARGET_2 = np.array([0.1, 0.9])
REWARDS_2 = np.array([0.0, 1.0])
P_POINTS = np.array([0.9, 0.3, 0.1, 0.03, 0.01, 0.003])  # the chapter's Monte Carlo points
N_LOGGED = 20_000


def behavior(p):
    return np.array([1.0 - p, p])


@pytest.mark.parametrize("p", [0.9, 0.5, 0.1, 0.01, 0.001])
def test_plotted_variance_is_0_81_over_p_minus_0_81(p):
    plotted = importance.importance_sampling_variance(TARGET_2, behavior(p), REWARDS_2)
    assert plotted == pytest.approx(0.81 / p - 0.81, rel=1e-12)


@pytest.fixture(scope="module")
def sampled_ess():
    rng = np.random.default_rng(1)  # the chapter's seed and sampling order
    ess, means = [], []
    for p in P_POINTS:
        mu = behavior(p)
        actions = rng.choice(2, size=N_LOGGED, p=mu)
        rho = TARGET_2[actions] / mu[actions]
        ess.append(importance.effective_sample_size(rho) / N_LOGGED)
        means.append(np.mean(rho * REWARDS_2[actions]))
    return np.array(ess), np.array(means)


def test_effective_sample_size_falls_as_the_behavior_probability_shrinks(sampled_ess):
    ess, _ = sampled_ess
    assert np.all(np.diff(ess) < 0)


def test_effective_sample_size_is_n_on_policy(sampled_ess):
    ess, _ = sampled_ess
    assert ess[0] == pytest.approx(1.0, abs=1e-12)  # p = 0.9: every ratio is 1


def test_smallest_p_is_worth_fewer_than_a_hundred_samples(sampled_ess):
    ess, _ = sampled_ess
    assert ess[-1] * N_LOGGED < 100


def test_effective_sample_size_follows_its_large_n_limit(sampled_ess):
    ess, _ = sampled_ess
    limit = np.array([1.0 / np.sum(TARGET_2**2 / behavior(p)) for p in P_POINTS])
    np.testing.assert_allclose(ess, limit, rtol=0.2)


def test_sampled_estimates_scatter_around_the_target_value(sampled_ess):
    _, means = sampled_ess
    for p, m in zip(P_POINTS, means, strict=True):
        se = np.sqrt((0.81 / p - 0.81) / N_LOGGED)
        assert abs(m - 0.9) < 4 * se


# ---------------------------------------------------------------------------------------------
# Figure fig-gae-bias-variance: bias and variance of the lambda-return
# ---------------------------------------------------------------------------------------------

T, GAMMA, SIGMA, CRITIC_FRACTION = 20, 0.95, 1.0, 0.7
LAMBDAS = np.linspace(0.0, 1.0, 101)


def chain_setup(critic_fraction=CRITIC_FRACTION):
    """Mean rewards, true values v(s_0..s_T) and the critic, computed without rlfound."""
    mean_rewards = np.ones(T)
    true_values = np.array([sum(GAMMA**i for i in range(T - t)) for t in range(T + 1)])
    critic = critic_fraction * true_values  # v(s_T) = 0, so the critic is exact there
    return mean_rewards, true_values, critic


def closed_form_bias(lam, critic_fraction=CRITIC_FRACTION):
    """(1 - lam) sum_{j >= 1} gamma^j lam^(j-1) Delta V(s_{t+j}), derived in the chapter."""
    _, true_values, critic = chain_setup(critic_fraction)
    critic_error = critic - true_values
    return np.array(
        [
            (1 - lam)
            * sum(GAMMA**j * lam ** (j - 1) * critic_error[t + j] for j in range(1, T - t + 1))
            for t in range(T)
        ]
    )


def library_bias(lam):
    """E[G^lambda_t] - v(s_t), using linearity: GAE applied to the mean rewards."""
    mean_rewards, true_values, critic = chain_setup()
    mean_target = advantages.gae_recursive(mean_rewards, critic, GAMMA, lam) + critic[:-1]
    return mean_target - true_values[:-1]


def library_variance(lam):
    """Var[G^lambda_t] from the weight of each reward, found by perturbing one reward at a time."""
    mean_rewards, _, critic = chain_setup()
    base = advantages.gae_recursive(mean_rewards, critic, GAMMA, lam)
    weights = np.array(
        [
            advantages.gae_recursive(mean_rewards + np.eye(T)[j], critic, GAMMA, lam) - base
            for j in range(T)
        ]
    )  # weights[j, t] = d G^lambda_t / d r_j
    return SIGMA**2 * np.sum(weights**2, axis=0)


def formula_variance(lam, sigma=SIGMA):
    return sigma**2 * np.array(
        [sum((GAMMA * lam) ** (2 * i) for i in range(T - t)) for t in range(T)]
    )


@pytest.mark.parametrize("lam", [0.3, 0.89, 0.95])  # the ends: the two tests below
def test_bias_of_the_lambda_return_matches_the_closed_form(lam):
    np.testing.assert_allclose(library_bias(lam), closed_form_bias(lam), atol=1e-12)


@pytest.mark.parametrize("lam", [0.0, 0.3, 0.89, 0.95, 1.0])
def test_variance_of_the_lambda_return_matches_the_formula(lam):
    np.testing.assert_allclose(library_variance(lam), formula_variance(lam), rtol=1e-9)


def test_bias_vanishes_at_lambda_one():
    np.testing.assert_allclose(library_bias(1.0), 0.0, atol=1e-12)  # printed: 1.8e-15


def test_bias_is_gamma_times_the_next_critic_error_at_lambda_zero():
    _, true_values, critic = chain_setup()
    np.testing.assert_allclose(
        library_bias(0.0), GAMMA * (critic - true_values)[1:], rtol=1e-12, atol=1e-12
    )


def test_bias_falls_with_lambda_in_every_state():
    abs_bias = np.array([np.abs(closed_form_bias(lam)) for lam in LAMBDAS])  # (lambdas, T)
    assert np.all(np.diff(abs_bias, axis=0) <= 1e-12)
    assert np.all(np.diff(np.mean(abs_bias**2, axis=1)) < 0)


def test_variance_rises_with_lambda():
    variance = np.array([formula_variance(lam) for lam in LAMBDAS])
    assert np.all(np.diff(np.mean(variance, axis=1)) > 0)


def exact_mse(critic_fraction=CRITIC_FRACTION, sigma=SIGMA):
    return np.array(
        [
            np.mean(closed_form_bias(lam, critic_fraction) ** 2)
            + np.mean(formula_variance(lam, sigma))
            for lam in LAMBDAS
        ]
    )


def test_mse_is_smallest_at_an_intermediate_lambda():
    mse = exact_mse()
    assert mse.min() < mse[0] - 1.0
    assert mse.min() < mse[-1] - 1.0


@pytest.mark.parametrize(
    ("critic_fraction", "sigma", "expected"),
    [(0.7, 1.0, 0.89), (0.9, 1.0, 0.09), (0.5, 1.0, 0.96), (0.7, 2.0, 0.25)],
)
def test_best_lambda_moves_with_critic_quality_and_reward_noise(critic_fraction, sigma, expected):
    best = LAMBDAS[np.argmin(exact_mse(critic_fraction, sigma))]
    assert best == pytest.approx(expected, abs=1e-9)  # printed in the chapter


def test_monte_carlo_agrees_with_the_exact_curves():
    mean_rewards, true_values, critic = chain_setup()
    n = 4000
    rng = np.random.default_rng(2024)  # the chapter's seed
    rewards = mean_rewards + SIGMA * rng.standard_normal((n, T))
    critic_batch = np.tile(critic, (n, 1))
    for lam in np.linspace(0.0, 1.0, 11):
        targets = advantages.gae_recursive(rewards, critic_batch, GAMMA, lam) + critic[:-1]
        exact_var = formula_variance(lam)
        standard_error = np.sqrt(exact_var / n)
        mc_bias = targets.mean(axis=0) - true_values[:-1]
        assert np.all(np.abs(mc_bias - closed_form_bias(lam)) < 4.5 * standard_error)
        np.testing.assert_allclose(targets.var(axis=0, ddof=1), exact_var, rtol=0.12)
