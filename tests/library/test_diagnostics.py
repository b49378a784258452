"""rlfound.diagnostics: the estimator diagnostics of chapter 12 and the report of a batch.

References: every statistic written again as explicit loops over rows, positions and groups
(``math`` for logarithms and square roots), exact enumeration (a batch that holds each token
as often as its probability says) for the claims about expectations, a batch built token by
token for the report, and hypothesis for the invariants: θ = θ_old gives log-ratios 0, ESS = N
and no clipping (the section-19 invariant that every valid ratio is one); padding on either
side and the order of the rows change nothing; a constant added to the critic changes no
explained variance; the tail mean lies between the minimum and the mean.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound import contract, diagnostics, kl
from rlfound.diagnostics import (
    approximate_kl,
    calibration_by_horizon,
    explained_variance,
    gradient_norms,
    group_variance_statistics,
    grouped_statistics,
    importance_ess,
    log_ratio_summary,
    mean_by_position,
    pearson_correlation,
    plot_history,
    policy_lag,
    report,
    reward_statistics,
    tail_mean,
)

finite = st.floats(min_value=-10.0, max_value=10.0, allow_nan=False, allow_infinity=False)
logprob = st.floats(min_value=-8.0, max_value=0.0, allow_nan=False)


@st.composite
def masked_arrays(draw, elements=finite, min_rows=1, max_rows=4, max_length=6):
    """(values, mask) of shape (rows, length) with at least one selected entry."""
    shape = (draw(st.integers(min_rows, max_rows)), draw(st.integers(1, max_length)))
    values = draw(hnp.arrays(np.float64, shape, elements=elements))
    mask = draw(hnp.arrays(np.bool_, shape))
    mask.flat[draw(st.integers(0, mask.size - 1))] = True
    return values, mask


def selected_lists(values, mask):
    """The selected values of each row, in order, as Python lists."""
    return [
        [float(v) for v, m in zip(row, keep, strict=True) if m]
        for row, keep in zip(values, mask, strict=True)
    ]


def mean(xs):
    return sum(xs) / len(xs)


def population_variance(xs):
    m = mean(xs)
    return sum((x - m) ** 2 for x in xs) / len(xs)


# --- reward_statistics --------------------------------------------------------------------------


@pytest.mark.equation("eq-diag-component-stats")
@given(data=masked_arrays(), bins=st.integers(1, 6))
def test_reward_statistics_equal_loops(data, bins):
    values, mask = data
    flat = [x for row in selected_lists(values, mask) for x in row]
    got_mean, got_std, counts, edges = reward_statistics(values, mask, bins)
    assert got_mean == pytest.approx(mean(flat), abs=1e-12)
    assert got_std == pytest.approx(math.sqrt(population_variance(flat)), abs=1e-9)
    lower, upper = min(flat), max(flat)
    if lower == upper:  # NumPy widens an empty range by 0.5 on each side
        lower, upper = lower - 0.5, upper + 0.5
    np.testing.assert_allclose(edges, np.linspace(lower, upper, bins + 1), rtol=1e-12, atol=1e-12)
    by_hand = [0] * bins
    for x in flat:
        k = bins - 1 if x == edges[-1] else int(np.searchsorted(edges, x, side="right")) - 1
        by_hand[k] += 1
    assert counts.tolist() == by_hand and counts.sum() == len(flat)


def test_reward_statistics_by_hand_with_a_range():
    mean_, std, counts, edges = reward_statistics(
        [-6.0, 0.0, 0.5, 1.0, 9.0], mask=[1, 1, 1, 1, 0], bins=2, value_range=(-1.0, 1.0)
    )
    assert mean_ == pytest.approx(-1.125) and std == pytest.approx(math.sqrt(8.046875))
    # -6 lies outside the range and is not counted; 1.0 falls in the last, closed bin.
    assert edges.tolist() == [-1.0, 0.0, 1.0] and counts.tolist() == [0.0, 3.0]


# --- tail_mean ----------------------------------------------------------------------------------


def tail_by_quantile_integral(xs, alpha):
    """(1 / α) ∫_0^α q(u) du for the empirical quantile function, piece by piece."""
    ordered, n, total, covered = sorted(xs), len(xs), 0.0, 0.0
    for i, x in enumerate(ordered):
        piece = min((i + 1) / n, alpha) - i / n  # the part of [i/n, (i+1)/n) below α
        if piece <= 0:
            break
        total += piece * x
        covered += piece
    return total / covered


@pytest.mark.equation("eq-diag-tail-mean")
@given(data=masked_arrays(), alpha=st.floats(0.01, 1.0))
def test_tail_mean_is_the_integral_of_the_quantile_function(data, alpha):
    values, mask = data
    flat = [x for row in selected_lists(values, mask) for x in row]
    assert tail_mean(values, alpha, mask) == pytest.approx(
        tail_by_quantile_integral(flat, alpha), abs=1e-9
    )


@given(data=masked_arrays(), a=st.floats(0.01, 1.0), b=st.floats(0.01, 1.0))
def test_tail_mean_lies_between_minimum_and_mean_and_grows_with_the_fraction(data, a, b):
    values, mask = data
    selected = values[mask]
    low, high = sorted((a, b))
    t_low, t_high = tail_mean(values, low, mask), tail_mean(values, high, mask)
    assert selected.min() - 1e-9 <= t_low <= t_high + 1e-9 <= selected.mean() + 2e-9
    assert tail_mean(values, 1.0, mask) == pytest.approx(selected.mean(), abs=1e-9)
    assert tail_mean(values, 0.999 / selected.size, mask) == pytest.approx(selected.min())


@given(data=masked_arrays(), shift=finite, scale=st.floats(0.1, 10.0), alpha=st.floats(0.05, 1))
def test_tail_mean_moves_with_shifts_and_positive_scales(data, shift, scale, alpha):
    values, mask = data
    assert tail_mean(scale * values + shift, alpha, mask) == pytest.approx(
        scale * tail_mean(values, alpha, mask) + shift, abs=1e-8
    )


def test_tail_mean_of_a_rare_severe_value():
    # 1 violation of -5 among 100 episodes of reward 1: the mean hides it, the 5% tail does not.
    rewards = np.array([1.0] * 99 + [-5.0])
    assert rewards.mean() == pytest.approx(0.94)
    assert tail_mean(rewards, 0.05) == pytest.approx((-5.0 + 4 * 1.0) / 5)


# --- grouped_statistics -------------------------------------------------------------------------


@pytest.mark.equation("eq-diag-grouped")
@given(data=masked_arrays(), labels_seed=st.integers(0, 2**16))
def test_grouped_statistics_equal_a_dictionary_of_lists(data, labels_seed):
    values, mask = data
    labels = np.random.default_rng(labels_seed).integers(-2, 3, size=values.shape)
    groups = {}
    for v, label, m in zip(values.ravel(), labels.ravel(), mask.ravel(), strict=True):
        if m:
            groups.setdefault(int(label), []).append(float(v))
    keys, means, stds, counts = grouped_statistics(values, labels, mask)
    assert keys.tolist() == sorted(groups)
    for k, key in enumerate(keys):
        xs = groups[int(key)]
        assert means[k] == pytest.approx(mean(xs), abs=1e-12)
        assert stds[k] == pytest.approx(math.sqrt(population_variance(xs)), abs=1e-9)
        assert counts[k] == len(xs)


# --- group_variance_statistics ------------------------------------------------------------------


def group_stats_by_loops(rewards, group_ids, ddof=0, atol=0.0):
    groups = {}
    for r, g in zip(rewards, group_ids, strict=True):
        groups.setdefault(int(g), []).append(float(r))
    variances = [sum((x - mean(xs)) ** 2 for x in xs) / (len(xs) - ddof) for xs in groups.values()]
    equal = [max(xs) - min(xs) <= atol for xs in groups.values()]
    return mean(variances), sum(equal) / len(equal)


@pytest.mark.equation("eq-diag-all-equal")
@given(
    rewards=hnp.arrays(np.float64, st.integers(2, 30), elements=st.sampled_from([0.0, 0.5, 1.0])),
    seed=st.integers(0, 2**16),
    atol=st.sampled_from([0.0, 0.5]),
)
def test_group_variance_statistics_equal_loops(rewards, seed, atol):
    group_ids = np.random.default_rng(seed).integers(0, 4, size=rewards.size)
    got = group_variance_statistics(rewards, group_ids, atol=atol)
    np.testing.assert_allclose(got, group_stats_by_loops(rewards, group_ids, atol=atol), atol=1e-12)


def test_group_variance_statistics_with_ddof_and_unequal_groups():
    rewards, group_ids = [1.0, 0.0, 0.0, 2.0, 2.0, 5.0], [0, 0, 0, 3, 3, 9]
    got = group_variance_statistics(rewards, group_ids, ddof=0)
    assert got == pytest.approx((2 / 9 / 3, 2 / 3))
    assert got == pytest.approx(group_stats_by_loops(rewards, group_ids))
    with pytest.raises(ValueError, match=r"^ddof must be smaller"):
        group_variance_statistics(rewards, group_ids, ddof=1)  # group 9 has one member


@given(seed=st.integers(0, 2**16))
def test_group_statistics_ignore_the_order_of_rows_and_a_shift_of_a_group(seed):
    rng = np.random.default_rng(seed)
    rewards = rng.integers(0, 2, size=24).astype(float)
    group_ids = np.repeat(np.arange(6), 4)
    base = group_variance_statistics(rewards, group_ids)
    order = rng.permutation(24)
    assert group_variance_statistics(rewards[order], group_ids[order]) == pytest.approx(base)
    shifted = rewards + np.where(group_ids == 2, 3.0, 0.0)  # a constant added to one group
    assert group_variance_statistics(shifted, group_ids) == pytest.approx(base)


# --- log-ratios, KL, ESS --------------------------------------------------------------------------


@st.composite
def token_pairs(draw):
    logprobs, mask = draw(masked_arrays(elements=logprob))
    old = draw(hnp.arrays(np.float64, logprobs.shape, elements=logprob))
    return logprobs, old, mask


@given(pair=token_pairs())
def test_log_ratio_summary_equals_loops(pair):
    logprobs, old, mask = pair
    rows = selected_lists(logprobs - old, mask)
    tokens = [d for row in rows for d in row]
    sequences = [sum(row) for row in rows if row]
    for level, ds in (("token", tokens), ("sequence", sequences)):
        got_mean, got_max, q = log_ratio_summary(logprobs, old, mask, (0.0, 0.5, 1.0), level)
        assert got_mean == pytest.approx(mean(ds), abs=1e-9)
        assert got_max == pytest.approx(max(abs(d) for d in ds), abs=1e-12)
        ordered = sorted(ds)
        median = (ordered[(len(ds) - 1) // 2] + ordered[len(ds) // 2]) / 2
        np.testing.assert_allclose(q, [ordered[0], median, ordered[-1]], atol=1e-9)


@given(data=masked_arrays(elements=logprob))
def test_at_theta_old_every_ratio_is_one(data):
    """Section 19: with θ = θ_old every valid importance ratio is one."""
    logprobs, mask = data
    mean_, max_abs, q = log_ratio_summary(logprobs, logprobs, mask)
    assert mean_ == 0.0 and max_abs == 0.0 and not q.any()
    assert importance_ess(logprobs, logprobs, mask) == pytest.approx(mask.sum())
    rows = mask.any(axis=1).sum()
    assert importance_ess(logprobs, logprobs, mask, "sequence") == pytest.approx(rows)
    for estimator in ("k1", "k2", "k3"):
        assert approximate_kl(logprobs, logprobs, mask, estimator) == 0.0


# A behavior policy with probabilities that are multiples of 1/8, a current policy and a
# reference: a batch holding each token as often as μ says is an exact enumeration of E_μ.
MU = np.array([1, 2, 4, 1]) / 8
PI = np.array([0.4, 0.3, 0.2, 0.1])
REF = np.array([0.1, 0.2, 0.3, 0.4])
ENUMERATED = np.repeat(np.arange(4), (MU * 8).astype(int))


def kl_by_hand(p, q):
    return sum(a * math.log(a / b) for a, b in zip(p, q, strict=True))


@pytest.mark.equation("eq-diag-log-ratio")
def test_the_mean_log_ratio_under_mu_is_minus_kl_mu_pi():
    mean_, _, _ = log_ratio_summary(np.log(PI)[ENUMERATED], np.log(MU)[ENUMERATED])
    assert mean_ == pytest.approx(-kl_by_hand(MU, PI), abs=1e-12)


@pytest.mark.equation("eq-diag-kl")
@pytest.mark.parametrize("estimator", ["k1", "k3"])
def test_kl_to_the_current_policy_from_behavior_samples_is_kl_mu_pi(estimator):
    old, new = np.log(MU)[ENUMERATED], np.log(PI)[ENUMERATED]
    got = approximate_kl(old, new, estimator=estimator)
    assert got == pytest.approx(kl_by_hand(MU, PI), abs=1e-12)
    assert got != pytest.approx(kl_by_hand(PI, MU), abs=1e-3)  # the other direction differs


def test_k2_is_half_the_mean_squared_log_ratio():
    old, new = np.log(MU)[ENUMERATED], np.log(PI)[ENUMERATED]
    by_hand = sum(m * 0.5 * math.log(m / p) ** 2 for m, p in zip(MU, PI, strict=True))
    assert approximate_kl(old, new, estimator="k2") == pytest.approx(by_hand, abs=1e-12)


@given(pair=token_pairs(), estimator=st.sampled_from(["k1", "k2", "k3"]))
def test_approximate_kl_reductions_equal_loops(pair, estimator):
    logprobs, ref, mask = pair
    k = {
        "k1": lambda d: d,
        "k2": lambda d: 0.5 * d * d,
        "k3": lambda d: math.exp(-d) - 1 + d,
    }[estimator]
    rows = [[k(d) for d in row] for row in selected_lists(logprobs - ref, mask)]
    tokens = [x for row in rows for x in row]
    assert approximate_kl(logprobs, ref, mask, estimator) == pytest.approx(
        mean(tokens), rel=1e-9, abs=1e-12
    )
    sequences = [sum(row) for row in rows if row]
    assert approximate_kl(logprobs, ref, mask, estimator, "sequence") == pytest.approx(
        mean(sequences), rel=1e-9, abs=1e-12
    )


def test_approximate_kl_reuses_the_library_estimators():
    logprobs, ref = np.log([[0.5, 0.2, 0.9]]), np.log([[0.4, 0.3, 0.9]])
    mask = np.array([[True, True, False]])
    for name, estimator in (("k1", kl.k1), ("k2", kl.k2), ("k3", kl.k3)):
        expected = estimator(logprobs, ref, mask).sum() / 2
        assert approximate_kl(logprobs, ref, mask, name) == pytest.approx(expected, rel=1e-15)


@pytest.mark.equation("eq-diag-ess")
@given(pair=token_pairs())
def test_importance_ess_equals_the_definition(pair):
    logprobs, old, mask = pair
    rows = selected_lists(logprobs - old, mask)
    for level, log_weights in (
        ("token", [d for row in rows for d in row]),
        ("sequence", [sum(row) for row in rows if row]),
    ):
        weights = [math.exp(d) for d in log_weights]
        by_hand = sum(weights) ** 2 / sum(w * w for w in weights)
        assert importance_ess(logprobs, old, mask, level) == pytest.approx(by_hand, rel=1e-9)


def test_importance_ess_of_huge_sequence_ratios_does_not_overflow():
    # Two sequences of 300 tokens whose log-ratios sum to 1200 and 1199: weights e^1 : 1.
    logprobs = np.full((2, 300), -0.01)
    old = np.stack([np.full(300, -4.01), np.full(300, -4.01 + 1 / 300)])
    weights = np.array([math.e, 1.0])
    expected = weights.sum() ** 2 / np.sum(weights**2)
    assert importance_ess(logprobs, old, level="sequence") == pytest.approx(expected, rel=1e-9)


# --- policy lag ---------------------------------------------------------------------------------


@pytest.mark.equation("eq-diag-policy-lag")
@given(
    versions=hnp.arrays(
        np.int64, st.tuples(st.integers(1, 4), st.integers(1, 5)), elements=st.integers(0, 20)
    ),
    ahead=st.integers(0, 5),
)
def test_policy_lag_equals_loops(versions, ahead):
    learner = int(versions.max()) + ahead
    lags = [learner - int(v) for v in versions.ravel()]
    assert policy_lag(versions, learner) == pytest.approx((mean(lags), max(lags)))


def test_policy_lag_reads_only_the_selected_tokens_of_a_batch():
    batch = contract.build_batch(
        [
            {
                "segments": [
                    {"kind": "user", "tokens": [1]},
                    {"kind": "policy", "tokens": [2, 3], "logprobs": [-1.0, -1.0], "version": 7},
                    {"kind": "tool", "tokens": [4]},
                    {"kind": "policy", "tokens": [5], "logprobs": [-1.0], "version": 9},
                ],
                "rewards": [0.0, 1.0],
            }
        ]
    )
    # Tokens by versions 7, 7, 9 at learner version 10: lags 3, 3, 1.
    assert policy_lag(batch["policy_version"], 10, batch["action_mask"]) == pytest.approx(
        (7 / 3, 3.0)
    )
    with pytest.raises(ValueError, match=r"^policy_version must not be newer"):
        policy_lag(batch["policy_version"], 8, batch["action_mask"])


# --- by position --------------------------------------------------------------------------------


@pytest.mark.equation("eq-diag-position")
@given(data=masked_arrays())
def test_mean_by_position_equals_loops(data):
    values, mask = data
    rows = selected_lists(values, mask)
    longest = max(len(row) for row in rows)
    means, counts = mean_by_position(values, mask)
    for p in range(longest):
        at_p = [row[p] for row in rows if len(row) > p]
        assert means[p] == pytest.approx(mean(at_p), abs=1e-12) and counts[p] == len(at_p)
    assert means.size == longest


@given(data=masked_arrays(max_length=5), pad=st.integers(0, 3))
def test_positions_do_not_move_with_padding_on_either_side(data, pad):
    values, mask = data
    padding = np.zeros((values.shape[0], pad))
    left = mean_by_position(np.hstack([padding, values]), np.hstack([padding, mask]).astype(bool))
    right = mean_by_position(np.hstack([values, padding]), np.hstack([mask, padding]).astype(bool))
    for a, b, c in zip(left, right, mean_by_position(values, mask), strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, c)


# --- the critic ---------------------------------------------------------------------------------


@pytest.mark.equation("eq-diag-explained-variance")
@given(data=masked_arrays(min_rows=2), seed=st.integers(0, 2**16))
def test_explained_variance_equals_loops(data, seed):
    returns, mask = data
    values = returns + np.random.default_rng(seed).normal(size=returns.shape)
    g = [float(x) for x in returns[mask]]
    e = [float(x) for x in (returns - values)[mask]]
    if population_variance(g) < 1e-6:
        return
    expected = 1 - population_variance(e) / population_variance(g)
    assert explained_variance(values, returns, mask) == pytest.approx(expected, abs=1e-9)
    with_eps = 1 - population_variance(e) / (population_variance(g) + 0.5)
    assert explained_variance(values, returns, mask, eps=0.5) == pytest.approx(with_eps, abs=1e-9)


@given(data=masked_arrays(min_rows=2), offset=finite)
def test_explained_variance_is_blind_to_a_constant_offset_of_the_critic(data, offset):
    returns, mask = data
    if returns[mask].var() < 1e-6:
        return
    values = 0.5 * returns + 0.3
    assert explained_variance(values + offset, returns, mask) == pytest.approx(
        explained_variance(values, returns, mask), abs=1e-9
    )


def test_explained_variance_of_a_perfect_a_mean_and_a_bad_critic():
    returns = np.array([0.0, 1.0, 3.0, 4.0])
    assert explained_variance(returns, returns) == 1.0
    assert explained_variance(np.full(4, returns.mean()), returns) == pytest.approx(0.0)
    assert explained_variance(-returns, returns) == pytest.approx(1 - 4.0)  # Var(2G) / Var(G)


@pytest.mark.equation("eq-diag-calibration")
@given(data=masked_arrays(), seed=st.integers(0, 2**16), cap=st.none() | st.integers(0, 3))
def test_calibration_by_horizon_equals_loops(data, seed, cap):
    values, mask = data
    returns = np.random.default_rng(seed).normal(size=values.shape)
    buckets = {}
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            if mask[i, j]:
                h = int(mask[i, j + 1 :].sum())
                h = h if cap is None else min(h, cap)
                buckets.setdefault(h, []).append((values[i, j], returns[i, j]))
    v_bar, g_bar, counts = calibration_by_horizon(values, returns, mask, cap)
    size = (max(buckets) + 1) if cap is None else cap + 1
    assert v_bar.shape == g_bar.shape == counts.shape == (size,)
    for h in range(size):
        pairs = buckets.get(h, [])
        assert counts[h] == len(pairs)
        if pairs:
            assert v_bar[h] == pytest.approx(mean([v for v, _ in pairs]), abs=1e-12)
            assert g_bar[h] == pytest.approx(mean([g for _, g in pairs]), abs=1e-12)
        else:
            assert v_bar[h] == g_bar[h] == 0.0


def test_calibration_shows_the_offset_that_explained_variance_hides():
    returns = np.array([[0.2, 0.5, 1.0], [0.1, 0.3, 0.0]])
    biased = returns + 0.25
    v_bar, g_bar, _ = calibration_by_horizon(biased, returns)
    np.testing.assert_allclose(v_bar - g_bar, 0.25)
    assert explained_variance(biased, returns) == 1.0


# --- gradient norms -----------------------------------------------------------------------------


@pytest.mark.equation("eq-diag-clip-norm")
@given(
    grads=st.lists(
        hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=3), elements=finite),
        min_size=1,
        max_size=4,
    ),
    max_norm=st.floats(0.01, 20.0),
)
def test_gradient_norms_clip_by_the_global_norm_as_pytorch_does(grads, max_norm):
    group_norms, before, after = gradient_norms(grads, max_norm)
    by_hand = [math.sqrt(sum(float(x) ** 2 for x in g.ravel())) for g in grads]
    total = math.sqrt(sum(n * n for n in by_hand))
    np.testing.assert_allclose(group_norms, by_hand, rtol=1e-12, atol=1e-12)
    assert before == pytest.approx(total, rel=1e-12, abs=1e-12)
    # torch.nn.utils.clip_grad_norm_: coefficient max_norm / (total + 1e-6), clamped to 1.
    coefficient = min(1.0, max_norm / (total + 1e-6))
    clipped = [coefficient * g for g in grads]
    assert after == pytest.approx(
        math.sqrt(sum(float(np.sum(g * g)) for g in clipped)), rel=1e-9, abs=1e-12
    )
    assert after <= max_norm + 1e-12


def test_gradient_norms_of_huge_gradients_do_not_overflow():
    group_norms, before, after = gradient_norms([np.full(4, 1e200), np.array([3e200])], 1.0)
    np.testing.assert_allclose(group_norms, [2e200, 3e200])
    assert before == pytest.approx(math.sqrt(13) * 1e200) and after == pytest.approx(1.0)


def test_gradient_norms_accept_a_mapping_in_its_order():
    named = gradient_norms({"b": [0.0, 2.0], "a": [1.0]}, max_norm=5.0)
    listed = gradient_norms([[0.0, 2.0], [1.0]], max_norm=5.0)
    np.testing.assert_array_equal(named[0], listed[0])
    assert named[1:] == listed[1:] == (math.sqrt(5.0), math.sqrt(5.0))


# --- correlation --------------------------------------------------------------------------------


@pytest.mark.equation("eq-diag-correlation")
@given(data=masked_arrays(min_rows=2), seed=st.integers(0, 2**16))
def test_pearson_correlation_equals_loops(data, seed):
    x, mask = data
    y = np.random.default_rng(seed).normal(size=x.shape)
    xs, ys = [float(v) for v in x[mask]], [float(v) for v in y[mask]]
    if len(xs) < 2 or population_variance(xs) < 1e-6:
        return
    mx, my = mean(xs), mean(ys)
    cov = sum((a - mx) * (b - my) for a, b in zip(xs, ys, strict=True))
    expected = cov / math.sqrt(sum((a - mx) ** 2 for a in xs) * sum((b - my) ** 2 for b in ys))
    got = pearson_correlation(x, y, mask)
    assert got == pytest.approx(expected, abs=1e-9)
    assert pearson_correlation(y, x, mask) == pytest.approx(got, abs=1e-12)
    assert pearson_correlation(3 * x - 1, y, mask) == pytest.approx(got, abs=1e-9)
    assert pearson_correlation(-x, y, mask) == pytest.approx(-got, abs=1e-9)


# --- the report ---------------------------------------------------------------------------------


def episode(prompt, turns, rewards, version=3, advantages=None):
    """An episode of a prompt and ``turns`` (tokens, logprobs, ref_logprobs), tool in between."""
    segments = [{"kind": "user", "tokens": prompt}]
    for k, (toks, lps, refs) in enumerate(turns):
        if k:
            segments.append({"kind": "tool", "tokens": [90 + k]})
        segments.append(
            {
                "kind": "policy",
                "tokens": toks,
                "logprobs": lps,
                "ref_logprobs": refs,
                "version": version + k,
            }
        )
    out = {"segments": segments, "rewards": rewards}
    if advantages is not None:
        out["advantages"] = advantages
    return out


EPISODES = [
    episode(
        [1, 2],
        [([10, 11], [-0.5, -1.0], [-0.7, -0.9]), ([12], [-0.2], [-0.1])],
        [-0.1, 1.0],
        advantages=[1.0, 1.0],
    ),
    episode(
        [3], [([13, 14, 15], [-2.0, -0.1, -0.3], [-1.5, -0.4, -0.3])], [0.0], advantages=[-1.0]
    ),
    episode([4, 5, 6], [([16], [-0.9], [-1.2])], [1.0], version=4, advantages=[0.5]),
]
# Per episode: return, generated tokens, token log-probabilities (in order), their turns.
RETURNS = [0.9, 0.0, 1.0]
LENGTHS = [3, 3, 1]
OLD = [[-0.5, -1.0, -0.2], [-2.0, -0.1, -0.3], [-0.9]]
REFS = [[-0.7, -0.9, -0.1], [-1.5, -0.4, -0.3], [-1.2]]
TURNS = [[0, 0, 1], [0, 0, 0], [0]]
ADV = [[1.0, 1.0, 1.0], [-1.0, -1.0, -1.0], [0.5]]
VERSIONS = [[3, 3, 4], [3, 3, 3], [4]]


def current_logprobs(batch, shift):
    """log π = log μ + shift_i,j written at the batch's generated positions, row by row."""
    current = np.zeros(batch["action_mask"].shape)
    for i, row in enumerate(shift):
        current[i, np.flatnonzero(batch["action_mask"][i])] = np.array(OLD[i]) + np.array(row)
    return current


SHIFT = [[0.3, -0.4, 0.0], [0.5, 0.05, -2.0], [0.1]]


@pytest.fixture(scope="module", params=["right", "left"])
def batch(request):
    return contract.build_batch(EPISODES, padding_side=request.param)


def test_report_rewards_lengths_and_groups_by_hand(batch):
    table, skipped = report(
        batch,
        group_ids=[0, 0, 1],
        task_ids=[5, 6, 5],
        success=[True, False, True],
        learner_version=5,
    )
    assert table["return/mean"] == pytest.approx(mean(RETURNS))
    assert table["return/std"] == pytest.approx(math.sqrt(population_variance(RETURNS)))
    assert table["return/min"] == 0.0 and table["return/max"] == 1.0
    assert table["return/tail_mean"] == pytest.approx(0.0)  # 5% of 3 episodes: the worst one
    assert table["return/by_turn/0/mean"] == pytest.approx(mean(RETURNS))
    assert table["return/by_turn/1/mean"] == pytest.approx(1.0)  # only episode 0 has turn 1
    assert table["length/mean"] == pytest.approx(7 / 3) and table["length/max"] == 3.0
    assert table["group/all_equal_fraction"] == pytest.approx(0.5)  # group 1 has one episode
    assert table["group/reward_variance"] == pytest.approx((0.45**2) / 2)
    assert table["return/by_task/5/mean"] == pytest.approx(0.95)
    assert table["return/by_success/failure/mean"] == 0.0
    assert table["success/rate"] == pytest.approx(2 / 3)
    assert table["length/by_success/success/mean"] == pytest.approx(2.0)
    assert table["advantage/mean"] == pytest.approx(mean([a for row in ADV for a in row]))
    assert table["advantage/by_turn/1/mean"] == pytest.approx(1.0)
    assert table["advantage/by_task/6/mean"] == pytest.approx(-1.0)
    assert table["advantage/zero_fraction"] == 0.0
    # Lags: versions 3, 3, 4 | 3, 3, 3 | 4 at learner version 5.
    lags = [5 - v for row in VERSIONS for v in row]
    assert table["lag/steps_mean"] == pytest.approx(mean(lags)) and table["lag/steps_max"] == 2.0
    # KL(μ ‖ π_ref) from the sampled tokens, k1: mean of log μ - log π_ref.
    k1 = mean(
        [
            o - r
            for row_o, row_r in zip(OLD, REFS, strict=True)
            for o, r in zip(row_o, row_r, strict=True)
        ]
    )
    assert table["kl/old_ref/k1"] == pytest.approx(k1)
    assert table["entropy/sampled/mean"] == pytest.approx(-mean([o for row in OLD for o in row]))
    assert table["entropy/sampled/position/0"] == pytest.approx(-mean([row[0] for row in OLD]))
    assert table["entropy/sampled/position/2"] == pytest.approx(-mean([-0.2, -0.3]))
    for family in ("log_ratio/*", "clip/*", "ess/*", "value/*", "grad_norm/*"):
        assert family in skipped


def test_report_ratio_diagnostics_by_hand(batch):
    table, skipped = report(batch, logprobs=current_logprobs(batch, SHIFT), clip_low=0.2)
    shifts = [d for row in SHIFT for d in row]
    assert table["log_ratio/mean"] == pytest.approx(mean(shifts))
    assert table["log_ratio/max_abs"] == pytest.approx(2.0)
    assert table["log_ratio/sequence/max_abs"] == pytest.approx(abs(0.5 + 0.05 - 2.0))
    # KL(μ ‖ π) by k1: mean of log μ - log π = -mean shift.
    assert table["kl/old_current/k1"] == pytest.approx(-mean(shifts))
    # KL(π ‖ π_ref) importance-weighted, k1: mean of e^shift (log π - log π_ref).
    weighted = [
        math.exp(d) * (o + d - r)
        for row_d, row_o, row_r in zip(SHIFT, OLD, REFS, strict=True)
        for d, o, r in zip(row_d, row_o, row_r, strict=True)
    ]
    assert table["kl/current_ref/k1"] == pytest.approx(mean(weighted))
    # Clipping with ε = 0.2: A > 0 tokens with ratios e^0.3, e^-0.4, e^0, e^0.1: one above 1.2;
    # A < 0 tokens with e^0.5, e^0.05, e^-2: one below 0.8.
    assert table["clip/positive"] == pytest.approx(1 / 4)
    assert table["clip/negative"] == pytest.approx(1 / 3)
    assert table["clip/pooled"] == pytest.approx(2 / 7)
    weights = [math.exp(d) for d in shifts]
    assert table["ess/token"] == pytest.approx(sum(weights) ** 2 / sum(w * w for w in weights))
    assert table["ess/token_fraction"] == pytest.approx(table["ess/token"] / 7)
    sequence = [math.exp(sum(row)) for row in SHIFT]
    assert table["ess/sequence"] == pytest.approx(sum(sequence) ** 2 / sum(w * w for w in sequence))
    assert "log_ratio/*" not in skipped


def test_report_critic_gradients_components_and_entropies(batch):
    per_turn_values = np.array([[0.5, 0.8], [0.1, 0.0], [0.9, 0.0]])
    per_turn_returns = np.array([[0.9, 1.0], [0.0, 0.0], [1.0, 0.0]])
    entropies = np.where(batch["action_mask"], 0.7, 0.0)
    components = {
        "task": np.array([[0.0, 1.0], [0.0, 0.0], [1.0, 0.0]]),
        "cost": np.array([[-0.1, 0.0], [0.0, 0.0], [0.0, 0.0]]),
    }
    table, skipped = report(
        batch,
        values=per_turn_values,
        returns=per_turn_returns,
        entropies=entropies,
        reward_components=components,
        gradients={"early": [3.0], "late": [0.0, 4.0]},
        max_grad_norm=1.0,
    )
    v = [0.5, 0.8, 0.1, 0.9]
    g = [0.9, 1.0, 0.0, 1.0]
    assert table["value/loss"] == pytest.approx(
        0.5 * mean([(a - b) ** 2 for a, b in zip(v, g, strict=True)])
    )
    e = [b - a for a, b in zip(v, g, strict=True)]
    assert table["value/explained_variance"] == pytest.approx(
        1 - population_variance(e) / population_variance(g)
    )
    # Horizon 0: the last turn of each episode (0.8 vs 1.0, 0.1 vs 0.0, 0.9 vs 1.0).
    assert table["value/bias/horizon/0"] == pytest.approx(mean([-0.2, 0.1, -0.1]))
    assert table["value/bias/horizon/1"] == pytest.approx(0.5 - 0.9)
    assert table["grad_norm/before"] == pytest.approx(5.0)
    assert table["grad_norm/group/late"] == pytest.approx(4.0)
    assert table["grad_norm/after"] == pytest.approx(5.0 / (5.0 + 1e-6))
    assert table["entropy/mean"] == pytest.approx(0.7)
    assert table["reward/task/mean"] == pytest.approx(0.5)  # four turns: 0, 1, 0, 1
    assert table["reward/cost/min"] == pytest.approx(-0.1)
    assert table["reward/cost/tail_mean"] == pytest.approx(-0.1)
    assert not any(name.startswith(("value", "grad", "entropy/{", "reward/")) for name in skipped)


def test_report_reads_turn_level_advantages_like_token_level_ones(batch):
    tokenwise = report(batch)[0]
    per_turn = dict(batch)
    per_turn["advantages"] = np.array([[1.0, 1.0], [-1.0, 0.0], [0.5, 0.0]])
    assert report(per_turn)[0] == pytest.approx(tokenwise)


def test_report_is_the_same_for_left_and_right_padding():
    left = contract.build_batch(EPISODES, padding_side="left", length=12)
    right = contract.build_batch(EPISODES, padding_side="right")
    kwargs = {"group_ids": [0, 0, 1], "learner_version": 6}
    a, _ = report(left, logprobs=current_logprobs(left, SHIFT), **kwargs)
    b, _ = report(right, logprobs=current_logprobs(right, SHIFT), **kwargs)
    assert a.keys() == b.keys()
    assert a == pytest.approx(b, abs=1e-12)


def test_report_on_policy_has_ratios_of_one_and_no_clipping(batch):
    """Section 19: with θ = θ_old every valid importance ratio is one."""
    table, _ = report(batch, logprobs=batch["old_logprobs"])
    assert table["log_ratio/max_abs"] == 0.0 and table["kl/old_current/k3"] == 0.0
    assert table["clip/pooled"] == 0.0
    assert table["ess/token_fraction"] == pytest.approx(1.0)
    assert table["ess/sequence_fraction"] == pytest.approx(1.0)


def test_report_ignores_what_trainers_store_at_padding(batch):
    # TRL writes 1.0 (an impossible log-probability) at padding; nothing reads it.
    garbage = np.where(batch["action_mask"], current_logprobs(batch, SHIFT), 1.0)
    assert (
        report(batch, logprobs=garbage)[0]
        == report(batch, logprobs=current_logprobs(batch, SHIFT))[0]
    )


def test_report_names_what_it_could_not_compute():
    constant = contract.build_batch([EPISODES[1], EPISODES[1]])
    table, skipped = report(constant, values=np.zeros((2, 1)), returns=np.zeros((2, 1)))
    assert skipped["value/explained_variance"] == "the returns are constant over the batch"
    assert "length/corr_return" in skipped and "value/loss" in table
    no_advantages = {k: v for k, v in constant.items() if k != "advantages"}
    _, skipped = report(no_advantages, logprobs=constant["old_logprobs"])
    assert skipped["advantage/*"].startswith("needs advantages")
    assert skipped["clip/*"] == "needs advantages in the batch"
    _, skipped = report(constant, values=np.zeros((2, 1)))
    assert skipped["value/*"] == "needs values and returns"


def test_report_values_are_python_floats():
    table, skipped = report(contract.build_batch(EPISODES), group_ids=[0, 0, 1])
    assert all(type(v) is float for v in table.values())
    assert all(type(v) is str for v in skipped.values())


# --- plotting -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_importing_the_module_does_not_import_matplotlib():
    code = "import sys, rlfound.diagnostics; print('matplotlib' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_plot_history_names_the_missing_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"plot_history needs matplotlib.*pip install matplotlib"):
        plot_history([{"return/mean": 1.0}])


def test_plot_history_draws_one_panel_per_name_with_gaps():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    history = [
        {"return/mean": 0.1, "clip/positive": 0.0},
        {"return/mean": 0.4},
        {"return/mean": 0.5, "clip/positive": 0.2, "clip/negative": 0.1},
    ]
    fig = plot_history(history, steps=[10, 20, 30])
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["return/mean", "clip/positive / clip/negative"]
    lines = visible[1].get_lines()
    np.testing.assert_array_equal(lines[0].get_xdata(), [10, 20, 30])
    np.testing.assert_array_equal(lines[0].get_ydata(), [0.0, np.nan, 0.2])
    plt.close(fig)


@settings(max_examples=20)
@given(seed=st.integers(0, 2**16))
def test_report_tables_are_deterministic(seed):
    rng = np.random.default_rng(seed)
    shift = [list(-np.abs(rng.normal(scale=0.3, size=len(row)))) for row in OLD]
    built = contract.build_batch(EPISODES)
    first = report(built, logprobs=current_logprobs(built, shift), group_ids=[0, 0, 1])
    assert report(built, logprobs=current_logprobs(built, shift), group_ids=[0, 0, 1]) == first


def test_every_public_function_is_in_the_table_files():
    from tests.library.tables import diagnostics as tables

    assert set(tables.VALID) == {getattr(diagnostics, name) for name in diagnostics.__all__}


def test_plot_history_compares_runs_of_different_lengths():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = {"short": [{"loss": 1.0}, {"loss": 0.5}], "long": [{"loss": 0.2}] * 3}
    fig = plot_history(runs, names=["loss"])
    lines = fig.axes[0].get_lines()
    assert [line.get_label() for line in lines] == ["short", "long"]
    assert [len(line.get_xdata()) for line in lines] == [2, 3]
    plt.close(fig)
    with pytest.raises(ValueError, match=r"^steps must have one entry per table"):
        plot_history(runs, names=["loss"], steps=[0.0, 1.0])
