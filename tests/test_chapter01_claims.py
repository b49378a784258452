"""Claims made in chapter 1 that are not already facts about single library functions.

Each test recomputes a number or a shape the chapter's text relies on, with the chapter's
own parameters and seeds, and where possible against an independent computation:

- figure fig-reinforce-baselines: a baseline shrinks the spread of REINFORCE across seeds,
  makes the learner immune to a constant reward shift, and the batch-mean baseline shrinks
  the expected update by (N - 1)/N while leave-one-out does not;
- the off-policy example and figure fig-importance-variance: the importance-weighted
  estimate recovers the target value, lack of support biases it, and the effective sample
  size falls as the behaviour probability of the rewarded action shrinks;
- figure fig-gae-bias-variance: on the chapter's chain with an imperfect critic the bias of
  the lambda-return is zero at lambda = 1 and falls with lambda, its variance rises with
  lambda, and the mean squared error is smallest at an intermediate lambda that moves with
  the quality of the critic and the noise of the rewards.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rlfound import advantages, importance, policy_gradient, returns

# ---------------------------------------------------------------------------------------------
# Figure fig-reinforce-baselines: REINFORCE with and without a baseline
# ---------------------------------------------------------------------------------------------

BANDIT = np.array([0.2, 0.5, 1.0])
SEEDS = range(20)
STEPS, BATCH_SIZE, LR = 200, 8, 0.2
SHIFT = 5.0


def best_arm_curves(action_values, baseline):
    """P(best arm) after every step, shape (seeds, STEPS + 1), as in the chapter's figure."""
    curves = []
    for seed in SEEDS:
        logits = policy_gradient.reinforce_bandit_history(
            action_values, steps=STEPS, batch_size=BATCH_SIZE, lr=LR, seed=seed, baseline=baseline
        )
        z = np.exp(logits - logits.max(axis=1, keepdims=True))  # softmax, computed here
        curves.append(z[:, -1] / z.sum(axis=1))
    return np.array(curves)


@pytest.fixture(scope="module")
def bandit_curves():
    return {
        (shift, baseline): best_arm_curves(BANDIT + shift, baseline)
        for shift in (0.0, SHIFT)
        for baseline in ("none", "leave_one_out")
    }


@pytest.mark.parametrize("step", [25, 50])
def test_baseline_shrinks_spread_across_seeds(bandit_curves, step):
    spread_none = bandit_curves[0.0, "none"][:, step].std()
    spread_loo = bandit_curves[0.0, "leave_one_out"][:, step].std()
    assert spread_loo < 0.6 * spread_none


def test_all_variants_reach_the_same_place_on_the_chapter_bandit(bandit_curves):
    for baseline in ("none", "leave_one_out"):
        final = bandit_curves[0.0, baseline][:, -1]
        assert final.min() > 0.94
        assert final.mean() == pytest.approx(0.965, abs=0.01)


def test_reward_shift_derails_plain_reinforce_only(bandit_curves):
    final_none = bandit_curves[SHIFT, "none"][:, -1]
    final_loo = bandit_curves[SHIFT, "leave_one_out"][:, -1]
    assert final_none.mean() < final_loo.mean() - 0.1
    assert final_none.min() < 0.5  # some seed locked onto a wrong arm
    assert final_loo.min() > 0.94


@pytest.mark.parametrize("baseline", ["mean", "leave_one_out"])
def test_baseline_runs_are_invariant_to_a_reward_shift(baseline):
    for seed in (0, 1, 2):
        kwargs = dict(steps=STEPS, batch_size=BATCH_SIZE, lr=LR, seed=seed, baseline=baseline)
        plain = policy_gradient.reinforce_bandit_history(BANDIT, **kwargs)
        shifted = policy_gradient.reinforce_bandit_history(BANDIT + SHIFT, **kwargs)
        np.testing.assert_allclose(plain, shifted, rtol=0, atol=1e-10)


def expected_update(logits, batch_size, baseline):
    """Exact expectation of the batch REINFORCE estimate, by enumerating every batch."""
    probs = policy_gradient.softmax(logits)
    total = np.zeros_like(probs)
    for batch in itertools.product(range(len(probs)), repeat=batch_size):
        actions = np.array(batch)
        rewards = BANDIT[actions]
        if baseline == "mean":
            b = np.full(batch_size, rewards.mean())
        else:
            b = (rewards.sum() - rewards) / (batch_size - 1)
        estimate = policy_gradient.reinforce_gradient_estimate(logits, actions, rewards, b)
        total += np.prod(probs[actions]) * estimate
    return total


@pytest.mark.parametrize("batch_size", [2, 3, 4])
def test_mean_baseline_shrinks_update_by_n_minus_one_over_n(batch_size):
    logits = np.array([0.3, -0.2, 0.1])
    probs = np.exp(logits) / np.exp(logits).sum()
    exact = probs * (BANDIT - probs @ BANDIT)  # eq-bandit-gradient, written out here
    np.testing.assert_allclose(
        expected_update(logits, batch_size, "mean"),
        (batch_size - 1) / batch_size * exact,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        expected_update(logits, batch_size, "leave_one_out"), exact, atol=1e-12
    )


# ---------------------------------------------------------------------------------------------
# Off-policy example and figure fig-importance-variance
# ---------------------------------------------------------------------------------------------

REWARDS_3 = np.array([0.0, 1.0, 2.0])
BEHAVIOR_3 = np.array([0.5, 0.3, 0.2])
TARGET_3 = np.array([0.2, 0.3, 0.5])


def test_off_policy_example_recovers_the_target_value():
    rng = np.random.default_rng(0)
    actions = rng.choice(3, size=5000, p=BEHAVIOR_3)
    rewards = REWARDS_3[actions]
    estimate = importance.off_policy_value(actions, rewards, TARGET_3, BEHAVIOR_3)
    # standard error from the exact per-sample variance, computed here by enumeration
    per_sample = TARGET_3 / BEHAVIOR_3 * REWARDS_3
    variance = BEHAVIOR_3 @ per_sample**2 - (BEHAVIOR_3 @ per_sample) ** 2
    assert abs(estimate - TARGET_3 @ REWARDS_3) < 3 * np.sqrt(variance / 5000)
    assert abs(rewards.mean() - BEHAVIOR_3 @ REWARDS_3) < 0.05  # the naive mean is off-target


def test_missing_support_biases_the_estimate_towards_the_covered_part():
    no_support = np.array([0.6, 0.4, 0.0])
    rng = np.random.default_rng(5)
    actions = rng.choice(3, size=5000, p=no_support)
    estimate = importance.off_policy_value(actions, REWARDS_3[actions], TARGET_3, no_support)
    covered_value = TARGET_3[:2] @ REWARDS_3[:2]  # 0.3: action 2 is never logged
    assert estimate == pytest.approx(covered_value, abs=0.05)
    assert abs(estimate - TARGET_3 @ REWARDS_3) > 0.9
    with pytest.raises(ValueError, match=r"^behavior_probs"):
        importance.importance_sampling_variance(TARGET_3, no_support, REWARDS_3)


TARGET_2 = np.array([0.1, 0.9])
REWARDS_2 = np.array([0.0, 1.0])
P_POINTS = np.array([0.9, 0.3, 0.1, 0.03, 0.01, 0.003])  # the chapter's Monte Carlo points
N_LOGGED = 20_000


def behaviour(p):
    return np.array([1.0 - p, p])


@pytest.mark.parametrize("p", [0.9, 0.5, 0.1, 0.01, 0.001])
def test_exact_variance_matches_enumeration_and_one_over_p(p):
    mu = behaviour(p)
    estimate_per_action = TARGET_2 / mu * REWARDS_2
    by_enumeration = mu @ estimate_per_action**2 - (mu @ estimate_per_action) ** 2
    library = importance.importance_sampling_variance(TARGET_2, mu, REWARDS_2)
    assert library == pytest.approx(by_enumeration, rel=1e-12)
    assert library == pytest.approx(0.81 / p - 0.81, rel=1e-12)


@pytest.fixture(scope="module")
def sampled_ess():
    rng = np.random.default_rng(1)  # the chapter's seed and sampling order
    ess, means = [], []
    for p in P_POINTS:
        mu = behaviour(p)
        actions = rng.choice(2, size=N_LOGGED, p=mu)
        rho = importance.importance_ratios(actions, TARGET_2, mu)
        ess.append(importance.effective_sample_size(rho) / N_LOGGED)
        means.append(np.mean(rho * REWARDS_2[actions]))
    return np.array(ess), np.array(means)


def test_effective_sample_size_falls_as_behaviour_probability_shrinks(sampled_ess):
    ess, _ = sampled_ess
    assert np.all(np.diff(ess) < 0)
    assert ess[0] == pytest.approx(1.0, abs=1e-12)  # p = 0.9: on-policy, all ratios equal 1
    assert ess[-1] * N_LOGGED < 100  # "fewer than a hundred on-policy samples"
    limit = np.array([1.0 / np.sum(TARGET_2**2 / behaviour(p)) for p in P_POINTS])
    assert np.all(np.diff(limit) < 0)
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
    """(1 - lam) sum_{j >= 1} gamma^j lam^(j-1) e_{t+j}, derived in the chapter."""
    _, true_values, critic = chain_setup(critic_fraction)
    error = critic - true_values
    return np.array(
        [
            (1 - lam) * sum(GAMMA**j * lam ** (j - 1) * error[t + j] for j in range(1, T - t + 1))
            for t in range(T)
        ]
    )


def library_bias(lam):
    """E[R^lambda_t] - v(s_t), using linearity: GAE applied to the mean rewards."""
    mean_rewards, true_values, critic = chain_setup()
    mean_target = advantages.gae_recursive(mean_rewards, critic, GAMMA, lam) + critic[:-1]
    return mean_target - true_values[:-1]


def library_variance(lam):
    """Var[R^lambda_t] from the weight of each reward, found by perturbing one reward at a time."""
    mean_rewards, _, critic = chain_setup()
    base = advantages.gae_recursive(mean_rewards, critic, GAMMA, lam)
    weights = np.array(
        [
            advantages.gae_recursive(mean_rewards + np.eye(T)[j], critic, GAMMA, lam) - base
            for j in range(T)
        ]
    )  # weights[j, t] = d R^lambda_t / d r_j
    return SIGMA**2 * np.sum(weights**2, axis=0)


def formula_variance(lam, sigma=SIGMA):
    return sigma**2 * np.array(
        [sum((GAMMA * lam) ** (2 * i) for i in range(T - t)) for t in range(T)]
    )


@pytest.mark.parametrize("lam", [0.0, 0.3, 0.89, 0.95, 1.0])
def test_exact_bias_and_variance_formulas(lam):
    np.testing.assert_allclose(library_bias(lam), closed_form_bias(lam), atol=1e-12)
    np.testing.assert_allclose(library_variance(lam), formula_variance(lam), rtol=1e-9)


def test_bias_is_exactly_zero_at_lambda_one_and_gamma_e_at_lambda_zero():
    _, true_values, critic = chain_setup()
    np.testing.assert_allclose(library_bias(1.0), 0.0, atol=1e-12)
    np.testing.assert_allclose(library_bias(0.0), GAMMA * (critic - true_values)[1:], atol=1e-12)


def test_bias_falls_and_variance_rises_with_lambda():
    abs_bias = np.array([np.abs(library_bias(lam)) for lam in LAMBDAS])  # (lambdas, states)
    variance = np.array([formula_variance(lam) for lam in LAMBDAS])
    assert np.all(np.diff(abs_bias, axis=0) <= 1e-12)  # every state, not only on average
    assert np.all(np.diff(np.mean(abs_bias**2, axis=1)) < 0)
    assert np.all(np.diff(np.mean(variance, axis=1)) > 0)


def test_mse_is_smallest_at_an_intermediate_lambda():
    mse = np.array(
        [np.mean(library_bias(lam) ** 2) + np.mean(formula_variance(lam)) for lam in LAMBDAS]
    )
    best = LAMBDAS[np.argmin(mse)]
    assert best == pytest.approx(0.89, abs=1e-9)  # the value the chapter prints
    assert mse.min() < mse[0] - 1.0
    assert mse.min() < mse[-1] - 1.0


@pytest.mark.parametrize(
    ("critic_fraction", "sigma", "expected"),
    [(0.7, 1.0, 0.89), (0.9, 1.0, 0.09), (0.5, 1.0, 0.96), (0.7, 2.0, 0.25)],
)
def test_best_lambda_moves_with_critic_quality_and_reward_noise(critic_fraction, sigma, expected):
    mse = [
        np.mean(closed_form_bias(lam, critic_fraction) ** 2) + np.mean(formula_variance(lam, sigma))
        for lam in LAMBDAS
    ]
    assert LAMBDAS[np.argmin(mse)] == pytest.approx(expected, abs=1e-9)  # printed in the chapter


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


def test_true_values_are_the_discounted_returns_of_the_mean_rewards():
    mean_rewards, true_values, _ = chain_setup()
    np.testing.assert_allclose(
        returns.discounted_returns(mean_rewards, GAMMA), true_values[:-1], rtol=1e-12
    )
