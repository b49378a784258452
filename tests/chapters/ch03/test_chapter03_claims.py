"""The numbers, figures and tables of chapter 3, recomputed independently.

Every test checks one claim of the chapter, with the chapter's parameters and seeds. The
references are independent of the library: the rated conversation is enumerated by hand and
its values come from backward induction, the REINFORCE estimates and the group expectations
from explicit loops (all in ``tests.oracles``), gradients from central differences, and the
rates of the Monte Carlo table from a normal approximation. The
library is called only where the claim is about a run of it (the seeded Monte Carlo table).
Facts about single library functions are tested in the library's own test files.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from rlfound import episodes
from tests.oracles import (
    P_GOOD,
    bandit_gradient_by_hand,
    central_differences,
    conversation_arrays,
    conversation_logits,
    conversation_mdp,
    conversation_return,
    conversation_values,
    enumerate_conversations,
    group_expectation_by_hand,
    reinforce_by_hand,
    returns_loop,
    softmax_rows,
)

ANSWER, CLARIFY = 0, 1
LOGITS = conversation_logits(2)
POLICY = softmax_rows(LOGITS)

# ---------------------------------------------------------------------------------------------
# REINFORCE estimates and exact moments over the enumerated conversations
# ---------------------------------------------------------------------------------------------


def estimates(logits, listed, gamma, form, baseline=None, keep_discount=True):
    """tests.oracles.reinforce_by_hand on every listed conversation, shape (n, S, A).

    form "total": weight G_0 on every step; "to-go": γ^t G_t (G_t without γ^t if not
    keep_discount); a baseline b (one entry per state, or per conversation and step) is
    subtracted as γ^t b.
    """
    baseline = None if baseline is None else np.asarray(baseline, dtype=np.float64)
    per_step = baseline is not None and baseline.ndim == 2
    return np.array(
        [
            reinforce_by_hand(
                logits,
                states,
                actions,
                rewards,
                gamma,
                reward_to_go=form != "total",
                baseline=None if per_step else baseline,
                keep_discount=keep_discount,
                step_baseline=baseline[i] if per_step else None,
            )
            for i, (_, states, actions, rewards) in enumerate(listed)
        ]
    )


def turn_returns(rewards):
    """G_t = Σ_{k >= t} r_k of every row (tests.oracles.returns_loop, γ = 1)."""
    return np.array([returns_loop(row, 1.0) for row in rewards])


def moments(listed, values):
    """Exact mean and total variance (trace of the covariance) of per-conversation values."""
    probabilities = np.array([p for p, *_ in listed])
    mean = np.tensordot(probabilities, values, axes=1)
    deviation = (values - mean).reshape(len(values), -1)
    return mean, float(probabilities @ np.sum(deviation**2, axis=1))


def true_gradient(num_turns=2, gamma=1.0, logits=None):
    logits = conversation_logits(num_turns) if logits is None else logits
    return central_differences(lambda x: conversation_return(x, num_turns, gamma), logits)


# ---------------------------------------------------------------------------------------------
# Values, action values and advantages
# ---------------------------------------------------------------------------------------------


def test_values_and_action_values_solved_by_hand():
    v, q = conversation_values(2)
    np.testing.assert_allclose(v, [1.14, 0.74, 0.54, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(q[:3], [[1.26, 1.02], [0.8, 0.5], [0.3, 0.7]], atol=1e-12)


def test_advantages_quoted_in_the_text():
    v, q = conversation_values(2)
    advantage = q[:3] - v[:3, None]
    np.testing.assert_allclose(advantage, [[0.12, -0.12], [0.06, -0.24], [-0.24, 0.16]], atol=1e-12)


# ---------------------------------------------------------------------------------------------
# The Monte Carlo table and its coverage rates
# ---------------------------------------------------------------------------------------------

TABLE_ENTRIES = [(state, action) for state in range(3) for action in (None, ANSWER, CLARIFY)]


def table_exact_values():
    v, q = conversation_values(2)
    return np.array([v[s] if a is None else q[s, a] for s, a in TABLE_ENTRIES])


def test_monte_carlo_table_every_estimate_within_two_standard_errors():
    """The chapter's run: 20 000 conversations sampled with rng=0."""
    transition, reward, terminal, initial = conversation_mdp(2)
    batch = episodes.sample_episodes(
        transition, reward, POLICY, initial, 2, num_episodes=20_000, terminal=terminal, rng=0
    )
    to_go = np.stack([batch.rewards[:, 0] + batch.rewards[:, 1], batch.rewards[:, 1]], axis=1)
    visited = batch.states[:, :-1]
    for (state, action), exact in zip(TABLE_ENTRIES, table_exact_values(), strict=True):
        mask = visited == state
        if action is not None:
            mask &= batch.actions == action
        sample = to_go[mask]
        error = sample.std(ddof=1) / np.sqrt(sample.size)
        assert abs(sample.mean() - exact) < 2 * error, (state, action)


def test_clarifying_after_a_good_turn_happens_one_conversation_in_ten():
    listed = enumerate_conversations(2, LOGITS)
    probability = sum(p for p, states, actions, _ in listed if states[1] == 1 and actions[1] == 1)
    assert probability == pytest.approx(0.1, abs=1e-12)


def table_correlation():
    """Correlation of the nine z-scores for a large sample (delta method, exact moments).

    Entry j is a ratio of sums over conversations, Σ n_τ X_j(τ) / Σ n_τ Y_j(τ); to first order
    its error is Σ n_τ D_j(τ) / Σ n_τ Y_j(τ) with D_j = X_j - μ_j Y_j, so the z-scores are
    asymptotically normal with the correlation matrix of the D_j.
    """
    listed = enumerate_conversations(2, LOGITS)
    probabilities = np.array([p for p, *_ in listed])
    exact = table_exact_values()
    deviations = np.zeros((len(listed), len(TABLE_ENTRIES)))
    for i, (_, states, actions, rewards) in enumerate(listed):
        for j, (state, action) in enumerate(TABLE_ENTRIES):
            for t in range(2):
                if states[t] == state and (action is None or actions[t] == action):
                    deviations[i, j] += sum(rewards[t:]) - exact[j]
    covariance = (probabilities[:, None] * deviations).T @ deviations
    scale = np.sqrt(np.diag(covariance))
    return covariance / np.outer(scale, scale)


def test_each_estimate_alone_lies_within_two_standard_errors_19_times_in_20():
    per_estimate = stats.norm.cdf(2.0) - stats.norm.cdf(-2.0)
    assert per_estimate == pytest.approx(0.954, abs=5e-4)
    assert round(per_estimate * 20) == 19
    assert per_estimate**9 == pytest.approx(0.66, abs=5e-3)  # "if they were independent"


def test_the_whole_table_lies_within_two_standard_errors_about_72_percent_of_the_time():
    correlation = table_correlation()
    normal = stats.multivariate_normal(np.zeros(9), correlation, abseps=1e-3, releps=1e-3)
    joint = normal.cdf(np.full(9, 2.0), lower_limit=np.full(9, -2.0), rng=np.random.default_rng(0))
    assert joint == pytest.approx(0.72, abs=0.01)
    assert not np.allclose(correlation, np.eye(9), atol=0.1)  # "they are not independent"


# ---------------------------------------------------------------------------------------------
# The probability of a trajectory and its score
# ---------------------------------------------------------------------------------------------


def tau_log_probability(logits, p_good=P_GOOD):
    """log p(τ) for τ = (0, answer, 1, clarify, 4), written out factor by factor."""
    policy = softmax_rows(logits)
    return (
        np.log(policy[0, ANSWER])
        + np.log(p_good[0, ANSWER])
        + np.log(policy[1, CLARIFY])
        + np.log(1.0 - p_good[1, CLARIFY])
    )


def test_trajectory_probability_is_003_and_00225_for_the_harsh_user():
    assert np.exp(tau_log_probability(LOGITS)) == pytest.approx(0.03, abs=1e-12)
    assert np.exp(tau_log_probability(LOGITS, 0.5 * P_GOOD)) == pytest.approx(0.0225, abs=1e-12)


@pytest.mark.parametrize("p_good", [P_GOOD, 0.5 * P_GOOD, 0.5 + 0.5 * P_GOOD])
def test_trajectory_score_does_not_depend_on_the_user(p_good):
    expected = np.zeros((5, 2))
    expected[0] = [0.5, -0.5]
    expected[1] = [-0.8, 0.8]
    numerical = central_differences(lambda x: tau_log_probability(x, p_good), LOGITS)
    np.testing.assert_allclose(numerical, expected, atol=1e-8)


# ---------------------------------------------------------------------------------------------
# REINFORCE: unbiasedness, variances, the closed-form gradient, the dropped discount
# ---------------------------------------------------------------------------------------------

FORMS = ("total", "to-go", "baseline")


@pytest.mark.parametrize("gamma", [1.0, 0.9])
@pytest.mark.parametrize("form", FORMS)
def test_the_three_estimators_are_unbiased(gamma, form):
    v, _ = conversation_values(2, gamma)
    listed = enumerate_conversations(2, LOGITS)
    baseline = v if form == "baseline" else None
    mean, _ = moments(listed, estimates(LOGITS, listed, gamma, form, baseline))
    np.testing.assert_allclose(mean, true_gradient(2, gamma), atol=1e-8)


@pytest.mark.parametrize(
    ("gamma", "printed"), [(1.0, (1.4662, 1.1270, 0.3830)), (0.9, (1.3139, 0.9926, 0.3374))]
)
def test_the_three_estimators_have_the_printed_variances(gamma, printed):
    v, _ = conversation_values(2, gamma)
    listed = enumerate_conversations(2, LOGITS)
    for form, expected in zip(FORMS, printed, strict=True):
        baseline = v if form == "baseline" else None
        _, variance = moments(listed, estimates(LOGITS, listed, gamma, form, baseline))
        assert variance == pytest.approx(expected, abs=5e-5), form


def test_reward_to_go_removes_a_quarter_and_the_value_two_thirds_of_the_rest():
    v, _ = conversation_values(2)
    listed = enumerate_conversations(2, LOGITS)
    total, to_go, baseline = (
        moments(listed, estimates(LOGITS, listed, 1.0, form, v if form == "baseline" else None))[1]
        for form in FORMS
    )
    assert 0.2 < 1 - to_go / total < 0.3  # "about a quarter"
    assert 0.6 < 1 - baseline / to_go < 0.7  # "about two thirds of what is left"


def test_dropping_the_discount_factor_scales_the_second_turn_by_one_over_gamma():
    gamma = 0.9
    listed = enumerate_conversations(2, LOGITS)
    mean, _ = moments(listed, estimates(LOGITS, listed, gamma, "to-go", keep_discount=False))
    gradient = true_gradient(2, gamma)
    assert np.abs(mean - gradient).max() == pytest.approx(0.0048, abs=5e-5)  # printed
    np.testing.assert_allclose(mean[0], gradient[0], atol=1e-8)
    np.testing.assert_allclose(mean[1:3], gradient[1:3] / gamma, atol=1e-8)


@pytest.mark.equation("eq-tabular-gradient")
def test_gradient_is_visits_times_policy_times_advantage():
    v, q = conversation_values(2)
    advantage = q - v[:, None]
    advantage[3:] = 0.0
    visits = np.array([1.0, 0.5, 0.5, 0.0, 0.0])  # turn 1 surely, each turn-2 state half the time
    gradient = true_gradient()
    np.testing.assert_allclose(visits[:, None] * POLICY * advantage, gradient, atol=1e-8)
    assert gradient[0, ANSWER] == pytest.approx(1 * 0.5 * 0.12, abs=1e-8)  # 0.06


@pytest.fixture(scope="module")
def variance_by_turns():
    """Exact variances of the three estimators for T = 1..7 turns, and the per-turn split."""
    totals, per_turn = {form: [] for form in FORMS}, {}
    for num_turns in range(1, 8):
        logits = conversation_logits(num_turns)
        v, _ = conversation_values(num_turns)
        listed = enumerate_conversations(num_turns, logits)
        probabilities = np.array([p for p, *_ in listed])
        turn_of_state = (np.arange(2 * num_turns + 1) + 1) // 2
        for form in FORMS:
            values = estimates(logits, listed, 1.0, form, v if form == "baseline" else None)
            mean = np.tensordot(probabilities, values, axes=1)
            per_state = np.tensordot(probabilities, (values - mean) ** 2, axes=1).sum(axis=1)
            totals[form].append(per_state.sum())
            if num_turns == 7:
                per_turn[form] = np.array([per_state[turn_of_state == k].sum() for k in range(7)])
    return {form: np.array(row) for form, row in totals.items()}, per_turn


@pytest.mark.slow
@pytest.mark.parametrize(
    ("table", "printed"),
    [
        (  # totals by number of turns, 1 to 7
            0,
            {
                "total": [0.25, 1.47, 4.61, 10.67, 20.65, 35.58, 56.48],
                "to-go": [0.25, 1.13, 3.02, 6.27, 11.21, 18.19, 27.55],
                "baseline": [0.12, 0.38, 0.78, 1.30, 1.94, 2.71, 3.60],
            },
        ),
        (  # per turn of the 7-turn episodes
            1,
            {
                "total": [11.26, 8.03, 7.49, 7.40, 7.39, 7.40, 7.50],
                "to-go": [11.26, 6.62, 4.39, 2.80, 1.58, 0.71, 0.19],
                "baseline": [1.11, 0.76, 0.60, 0.47, 0.34, 0.22, 0.10],
            },
        ),
    ],
    ids=["by-number-of-turns", "by-turn"],
)
def test_figure_variance_matches_the_printed_table(variance_by_turns, table, printed):
    computed = variance_by_turns[table]
    for form, row in printed.items():
        np.testing.assert_allclose(computed[form], row, atol=0.006)


@pytest.mark.slow
def test_with_one_turn_the_two_forms_coincide(variance_by_turns):
    totals, _ = variance_by_turns
    assert totals["total"][0] == pytest.approx(totals["to-go"][0], abs=1e-12)


@pytest.mark.slow
def test_at_seven_turns_total_return_is_twice_and_fifteen_times_noisier(variance_by_turns):
    totals, _ = variance_by_turns
    assert np.all(totals["total"][1:] > totals["to-go"][1:])
    assert np.all(totals["to-go"] > totals["baseline"])
    assert 1.9 < totals["total"][-1] / totals["to-go"][-1] < 2.2  # "about twice"
    assert totals["total"][-1] / totals["baseline"][-1] > 15  # "more than fifteen times"


@pytest.mark.slow
def test_late_turns_are_quiet_only_with_the_reward_to_go(variance_by_turns):
    _, per_turn = variance_by_turns
    assert np.all(np.diff(per_turn["to-go"]) < 0) and np.all(np.diff(per_turn["baseline"]) < 0)
    late = per_turn["total"][1:]
    assert np.ptp(late) < 0.1 * late.mean()  # the last turn as noisy as the second


def test_with_only_a_final_reward_the_two_forms_are_identical():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(7, 2))
    listed = [(1.0, [0, 1, 4], [0, 1, 1], [0.0, 0.0, r]) for r in (1.0, -2.0)]
    total = estimates(logits, listed, 1.0, "total")
    to_go = estimates(logits, listed, 1.0, "to-go")
    np.testing.assert_allclose(total, to_go, atol=1e-15)


# ---------------------------------------------------------------------------------------------
# Tokens
# ---------------------------------------------------------------------------------------------


def test_token_weights_of_the_example_conversation():
    v, _ = conversation_values(2)
    turn_returns = np.array([1.0 + 0.0, 0.0])  # G_0, G_1 of rewards (1, 0)
    advantages = turn_returns - v[[0, 1]]  # G_t - v(s_t) at states 0 and 1
    np.testing.assert_allclose(advantages, [-0.14, -0.74], atol=1e-12)


def test_the_good_first_reply_has_a_negative_estimate_but_a_positive_advantage():
    v, q = conversation_values(2)
    assert 1.0 - v[0] < 0.0  # the whole conversation earned 1 against an expected 1.14
    assert q[0, ANSWER] - v[0] == pytest.approx(0.12, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# Baselines in the conversation
# ---------------------------------------------------------------------------------------------


def test_an_arbitrary_state_baseline_adds_nothing_in_expectation():
    listed = [(p, s, a, [0.0] * len(r)) for p, s, a, r in enumerate_conversations(2, LOGITS)]
    baseline = np.array([3.0, -2.0, 7.5, 100.0, -40.0])
    mean, _ = moments(listed, estimates(LOGITS, listed, 1.0, "to-go", baseline))
    np.testing.assert_allclose(mean, 0.0, atol=1e-12)


def test_a_baseline_that_sees_the_action_removes_the_whole_update():
    _, q = conversation_values(2)
    listed = enumerate_conversations(2, LOGITS)
    states, actions, _, _ = conversation_arrays(2, LOGITS)
    mean, _ = moments(listed, estimates(LOGITS, listed, 1.0, "to-go", q[states[:, :-1], actions]))
    np.testing.assert_allclose(mean, 0.0, atol=1e-12)
    assert np.abs(true_gradient()).max() == pytest.approx(0.06, abs=1e-8)


# ---------------------------------------------------------------------------------------------
# The variance-optimal baseline (section sec-optimal-baseline)
# ---------------------------------------------------------------------------------------------


def two_action_optimal_baseline():
    """eq-optimal-baseline-two-actions: each action value weighted by the other's probability."""
    _, q = conversation_values(2)
    b_star = POLICY[:, CLARIFY] * q[:, ANSWER] + POLICY[:, ANSWER] * q[:, CLARIFY]
    b_star[3:] = 0.0
    return b_star


def test_optimal_baseline_values_quoted_in_the_text():
    np.testing.assert_allclose(two_action_optimal_baseline(), [1.14, 0.56, 0.46, 0, 0], atol=1e-12)
    assert 2 * (1 - 0.2) ** 2 / (2 * (1 - 0.8) ** 2) == pytest.approx(16.0)  # 1.28 vs 0.08


def group_mean_limit():
    """E[G_t] of each state's turn, from the enumeration."""
    _, _, rewards, probabilities = conversation_arrays(2, LOGITS)
    turn_mean = probabilities @ turn_returns(rewards)
    return np.array([turn_mean[0], turn_mean[1], turn_mean[1], 0.0, 0.0])


BASELINE_VARIANCES = {"none": 1.1270, "group": 0.3851, "value": 0.3830, "optimal": 0.3763}


def candidate_baselines():
    v, _ = conversation_values(2)
    return {
        "none": np.zeros(5),
        "group": group_mean_limit(),
        "value": v,
        "optimal": two_action_optimal_baseline(),
    }


def test_large_group_mean_is_the_turn_average_of_the_values():
    np.testing.assert_allclose(group_mean_limit(), [1.14, 0.64, 0.64, 0.0, 0.0], atol=1e-12)


def test_variance_under_each_baseline_matches_the_printed_table():
    listed = enumerate_conversations(2, LOGITS)
    for name, baseline in candidate_baselines().items():
        _, variance = moments(listed, estimates(LOGITS, listed, 1.0, "to-go", baseline))
        assert variance == pytest.approx(BASELINE_VARIANCES[name], abs=5e-5), name


def test_the_optimal_baseline_has_the_smallest_variance_the_value_is_close():
    listed = enumerate_conversations(2, LOGITS)
    variance = {
        name: moments(listed, estimates(LOGITS, listed, 1.0, "to-go", baseline))[1]
        for name, baseline in candidate_baselines().items()
    }
    assert min(variance, key=variance.get) == "optimal"
    assert variance["value"] / variance["optimal"] - 1 == pytest.approx(0.018, abs=5e-4)
    assert variance["group"] / variance["optimal"] - 1 == pytest.approx(0.023, abs=5e-4)


@pytest.mark.equation("eq-baseline-excess")
def test_excess_variance_is_the_weighted_squared_distance_to_the_optimum():
    """eq-baseline-excess, against the exact variances."""
    listed = enumerate_conversations(2, LOGITS)
    squared_score = np.sum((np.eye(2)[None] - POLICY[:, None, :]) ** 2, axis=-1)  # (S, A)
    visits = np.array([1.0, 0.5, 0.5, 0.0, 0.0])
    weight = visits * np.sum(POLICY * squared_score, axis=1)
    b_star = two_action_optimal_baseline()
    _, optimal = moments(listed, estimates(LOGITS, listed, 1.0, "to-go", b_star))
    for baseline in candidate_baselines().values():
        _, variance = moments(listed, estimates(LOGITS, listed, 1.0, "to-go", baseline))
        assert variance - optimal == pytest.approx(weight @ (baseline - b_star) ** 2, abs=1e-12)


def group_member_variance_by_brute_force(size):
    """Total variance of one member's estimate when its baseline at turn t is the mean G_t of
    the other size - 1 members, by enumerating every group of conversations."""
    listed = enumerate_conversations(2, LOGITS)
    _, _, rewards, probabilities = conversation_arrays(2, LOGITS)
    to_go = turn_returns(rewards)
    n = len(listed)
    values, weights = [], []
    for others in itertools.product(range(n), repeat=size - 1):
        baseline = to_go[list(others)].mean(axis=0)  # b_t, the same for every conversation
        values.append(estimates(LOGITS, listed, 1.0, "to-go", np.tile(baseline, (n, 1))))
        weights.append(probabilities * np.prod(probabilities[list(others)]))
    values, weights = np.concatenate(values), np.concatenate(weights)
    mean = np.tensordot(weights, values, axes=1)
    return float(weights @ np.sum((values - mean).reshape(len(values), -1) ** 2, axis=1))


def group_member_variance_by_formula(size):
    """The chapter's formula: variance at E[G_t] plus Σ_t Var(G_t) E||ψ_t||² / (N - 1)."""
    listed = enumerate_conversations(2, LOGITS)
    states, actions, rewards, probabilities = conversation_arrays(2, LOGITS)
    to_go = turn_returns(rewards)
    turn_variance = probabilities @ (to_go - probabilities @ to_go) ** 2
    squared_score = np.sum((np.eye(2)[actions] - POLICY[states[:, :-1]]) ** 2, axis=-1)
    _, at_mean = moments(listed, estimates(LOGITS, listed, 1.0, "to-go", group_mean_limit()))
    return at_mean + turn_variance / (size - 1) @ (probabilities @ squared_score)


@pytest.mark.parametrize("size", [2, 3])
def test_group_mean_variance_formula_against_every_group(size):
    assert group_member_variance_by_formula(size) == pytest.approx(
        group_member_variance_by_brute_force(size), rel=1e-10
    )


def test_a_small_group_pays_for_the_noise_of_its_mean():
    optimal = BASELINE_VARIANCES["optimal"]
    two = group_member_variance_by_brute_force(2)
    assert two == pytest.approx(0.7674, abs=5e-5)
    assert round(two / optimal - 1, 2) == pytest.approx(1.04)  # "doubles the variance"
    assert group_member_variance_by_formula(4) == pytest.approx(0.5125, abs=5e-5)
    assert round(group_member_variance_by_formula(8) / optimal - 1, 2) == pytest.approx(0.17)
    assert round(group_member_variance_by_formula(32) / optimal - 1, 2) == pytest.approx(0.06)


# ---------------------------------------------------------------------------------------------
# Group baselines on the bandit: bias measured by exact enumeration
# ---------------------------------------------------------------------------------------------

BANDIT_Q = np.array([0.2, 0.5, 1.0])
BANDIT_LOGITS = np.array([0.5, 0.3, -0.6])
BANDIT_PI = softmax_rows(BANDIT_LOGITS)
BANDIT_GRADIENT = bandit_gradient_by_hand(BANDIT_LOGITS, BANDIT_Q)


def scale_cosine(update, gradient):
    return (
        update @ gradient / (gradient @ gradient),
        update @ gradient / np.linalg.norm(update) / np.linalg.norm(gradient),
    )


def leave_one_out(r):
    return r - (r.sum() - r) / (len(r) - 1)


def mean_including_self(r):
    return r - r.mean()


def standardized(ddof, eps=1e-6):
    def rule(r):
        centered = r - r.mean()
        return centered / (np.sqrt(np.sum(centered**2) / (len(r) - ddof)) + eps)

    return rule


def plain(r):
    return r


GROUP_SIZES = [2, 3, 4, 5, 6]


@pytest.mark.parametrize("size", GROUP_SIZES)
def test_leave_one_out_is_unbiased(size):
    update = group_expectation_by_hand(BANDIT_LOGITS, BANDIT_Q, size, leave_one_out)
    np.testing.assert_allclose(update, BANDIT_GRADIENT, atol=1e-12)


@pytest.mark.parametrize("size", GROUP_SIZES)
def test_mean_including_the_sample_is_short_by_n_minus_one_over_n(size):
    update = group_expectation_by_hand(BANDIT_LOGITS, BANDIT_Q, size, mean_including_self)
    np.testing.assert_allclose(update, (size - 1) / size * BANDIT_GRADIENT, atol=1e-12)


@pytest.fixture(scope="module")
def grpo_scales():
    """(scale, cosine) of GRPO with ddof 0 and 1 for N = 2..6."""
    return {
        ddof: np.array(
            [
                scale_cosine(
                    group_expectation_by_hand(BANDIT_LOGITS, BANDIT_Q, size, standardized(ddof)),
                    BANDIT_GRADIENT,
                )
                for size in GROUP_SIZES
            ]
        )
        for ddof in (0, 1)
    }


def test_grpo_ddof_0_is_205_to_333_times_too_long(grpo_scales):
    scales = grpo_scales[0][:, 0]
    assert (round(scales.min(), 2), round(scales.max(), 2)) == (2.05, 3.33)


def test_grpo_ddof_1_is_145_to_304_times_too_long(grpo_scales):
    scales = grpo_scales[1][:, 0]
    assert (round(scales.min(), 2), round(scales.max(), 2)) == (1.45, 3.04)


def test_grpo_ddof_changes_only_the_scale_by_a_constant_factor(grpo_scales):
    np.testing.assert_allclose(grpo_scales[0][:, 1], grpo_scales[1][:, 1], atol=1e-6)
    factors = np.sqrt([(size - 1) / size for size in GROUP_SIZES])
    np.testing.assert_allclose(grpo_scales[1][:, 0], grpo_scales[0][:, 0] * factors, rtol=1e-5)


def test_grpo_turns_the_update_cosine_0958_at_two(grpo_scales):
    cosines = grpo_scales[0][:, 1]
    assert round(cosines[0], 3) == 0.958
    assert np.all(cosines < 0.99) and np.all(np.diff(cosines) > 0)  # toward 1 as N grows


def test_grpo_scale_approaches_one_over_the_reward_sd_from_below(grpo_scales):
    sigma = np.sqrt(BANDIT_PI @ (BANDIT_Q - BANDIT_PI @ BANDIT_Q) ** 2)
    assert 1 / sigma == pytest.approx(3.612, abs=5e-4)
    scales = grpo_scales[0][:, 0]
    assert np.all(np.diff(scales) > 0) and scales[-1] < 1 / sigma


@pytest.mark.parametrize(
    ("p", "printed"), [(0.05, 2.473), (0.2, 2.107), (0.5, 1.856), (0.8, 2.107), (0.95, 2.473)]
)
def test_binary_reward_grpo_factor_with_eight_samples(p, printed):
    q = np.array([1.0, 0.0])
    gradient = p * (1 - p) * np.array([1.0, -1.0])
    scale, cosine = scale_cosine(
        group_expectation_by_hand(np.log([p, 1 - p]), q, 8, standardized(0)), gradient
    )
    assert scale == pytest.approx(printed, abs=5e-4)
    assert cosine == pytest.approx(1.0, abs=1e-12)
    loo, _ = scale_cosine(
        group_expectation_by_hand(np.log([p, 1 - p]), q, 8, leave_one_out), gradient
    )
    assert loo == pytest.approx(1.0, abs=1e-10)


@pytest.mark.parametrize(("p", "limit"), [(0.5, 2.0), (0.05, 4.6)])
def test_binary_reward_factor_limit_for_large_groups(p, limit):
    """c(p, N) = E[sqrt(M (N - M))] / (N p (1 - p)), M ~ Binomial(N, p), for a large N."""
    size = 4096
    successes = np.arange(size + 1)
    expectation = stats.binom.pmf(successes, size, p) @ np.sqrt(successes * (size - successes))
    factor = expectation / (size * p * (1 - p))
    assert factor == pytest.approx(1 / np.sqrt(p * (1 - p)), rel=2e-3)
    assert 1 / np.sqrt(p * (1 - p)) == pytest.approx(limit, abs=0.05)


def antithetic_joint(pi):
    """P(a_1 = i, a_2 = j), a_1 = F^-1(U), a_2 = F^-1(1 - U): exact, by cutting [0, 1] at every
    point where either member changes action and reading the pair off each piece's midpoint."""
    edges = np.cumsum(pi)[:-1]
    cuts = np.unique(np.concatenate([[0.0, 1.0], edges, 1.0 - edges]))
    joint = np.zeros((len(pi), len(pi)))
    for low, high in itertools.pairwise(cuts):
        u = (low + high) / 2
        first = np.searchsorted(edges, u, side="right")
        second = np.searchsorted(edges, 1.0 - u, side="right")
        joint[first, second] += high - low
    return joint


def test_antithetic_pairs_keep_plain_reinforce_unbiased():
    joint = antithetic_joint(BANDIT_PI)
    np.testing.assert_allclose(joint.sum(axis=0), BANDIT_PI, atol=1e-12)
    np.testing.assert_allclose(joint.sum(axis=1), BANDIT_PI, atol=1e-12)
    update = group_expectation_by_hand(BANDIT_LOGITS, BANDIT_Q, 2, plain, joint)
    np.testing.assert_allclose(update, BANDIT_GRADIENT, atol=1e-12)


def test_antithetic_pairs_bias_leave_one_out():
    joint = antithetic_joint(BANDIT_PI)
    update = group_expectation_by_hand(BANDIT_LOGITS, BANDIT_Q, 2, leave_one_out, joint)
    scale, cosine = scale_cosine(update, BANDIT_GRADIENT)
    assert (round(scale, 3), round(cosine, 4)) == (1.815, 0.9719)
    assert round(scale, 1) == 1.8  # "about 1.8 times too long"


def test_a_shared_seed_zeroes_leave_one_out_but_not_plain_reinforce():
    shared = np.diag(BANDIT_PI)
    update = group_expectation_by_hand(BANDIT_LOGITS, BANDIT_Q, 2, leave_one_out, shared)
    np.testing.assert_allclose(update, 0.0, atol=1e-15)
    update = group_expectation_by_hand(BANDIT_LOGITS, BANDIT_Q, 2, plain, shared)
    np.testing.assert_allclose(update, BANDIT_GRADIENT, atol=1e-12)


def test_sampling_without_replacement_biases_both_estimators():
    pi = BANDIT_PI
    without = np.array(
        [[0.0 if i == j else pi[i] * pi[j] / (1 - pi[i]) for j in range(3)] for i in range(3)]
    )
    assert not np.allclose(without.sum(axis=0), pi)
    for rule, printed in [(plain, (1.263, 0.9954)), (leave_one_out, (1.590, 0.9972))]:
        scale, cosine = scale_cosine(
            group_expectation_by_hand(BANDIT_LOGITS, BANDIT_Q, 2, rule, without), BANDIT_GRADIENT
        )
        assert (round(scale, 3), round(cosine, 4)) == printed


# ---------------------------------------------------------------------------------------------
# A constant reward teaches nothing
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", GROUP_SIZES)
@pytest.mark.parametrize(
    "rule", [leave_one_out, mean_including_self, standardized(0), standardized(1)]
)
def test_constant_reward_gives_zero_centered_advantages(size, rule):
    # Zero up to rounding: a 1e-16 deviation from the mean, divided by a std of 0 + 1e-6.
    np.testing.assert_allclose(rule(np.full(size, 0.7)), 0.0, atol=1e-9)


@pytest.mark.parametrize("size", GROUP_SIZES)
def test_constant_reward_plain_reinforce_is_zero_only_on_average(size):
    q = np.full(3, 0.7)
    update = group_expectation_by_hand(BANDIT_LOGITS, q, size, plain)
    np.testing.assert_allclose(update, 0.0, atol=1e-15)
    assert plain(np.full(size, 0.7)).max() == pytest.approx(0.7)  # every single weight is 0.7


def test_constant_reward_in_the_conversation():
    """Every reply earns 1: the return is 2, v = (2, 1, 1, 0, 0), the value-baselined estimate
    of every conversation is 0, and plain REINFORCE is 0 only on average."""
    listed = [(p, s, a, [1.0] * len(r)) for p, s, a, r in enumerate_conversations(2, LOGITS)]
    values = np.array([2.0, 1.0, 1.0, 0.0, 0.0])
    np.testing.assert_allclose(estimates(LOGITS, listed, 1.0, "to-go", values), 0.0, atol=1e-15)
    singles = estimates(LOGITS, listed, 1.0, "to-go")
    mean, _ = moments(listed, singles)
    np.testing.assert_allclose(mean, 0.0, atol=1e-15)
    assert np.abs(singles).max() == pytest.approx(1.0)
