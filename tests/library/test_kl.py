"""rlfound.kl: the KL divergence, its estimators and their gradients, the regularized optimum, DPO.

References: the definitions as explicit loops with ``math.log`` (tests.oracles.kl_by_hand),
exact enumeration over every category or sequence for every claim of unbiasedness, central
differences (tests.oracles.central_differences) for every gradient, SciPy's constrained
optimizer for every optimum, and 50-digit ``decimal`` arithmetic for the accuracy of k3.
"""

from __future__ import annotations

import decimal
import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import optimize

from rlfound import kl
from tests.oracles import (
    KL_REF_PROBS,
    KL_REWARDS,
    central_differences,
    kl_by_hand,
    random_distributions,
    softmax_rows,
    tilted_by_hand,
)

ESTIMATORS = {"k1": kl.k1, "k2": kl.k2, "k3": kl.k3}


def log_softmax_by_hand(logits):
    return np.log(softmax_rows(logits))


def estimator_by_hand(name, logprobs, ref):
    """k1, k2, k3 of one token, from Schulman's definitions with the ratio π_ref / π."""
    ratio = math.exp(ref - logprobs)
    if name == "k1":
        return logprobs - ref
    if name == "k2":
        return 0.5 * (logprobs - ref) ** 2
    return ratio - 1.0 - math.log(ratio)


@st.composite
def distribution_pairs(draw, min_size=1, max_size=6):
    """Two positive probability vectors of one random size."""
    size = draw(st.integers(min_size, max_size))
    elements = st.floats(0.0, 1.0, allow_nan=False)
    p = draw(hnp.arrays(np.float64, (size,), elements=elements)) + 1e-3
    q = draw(hnp.arrays(np.float64, (size,), elements=elements)) + 1e-3
    return p / p.sum(), q / q.sum()


@st.composite
def token_logprob_pairs(draw):
    """logprobs and ref_logprobs of one batch shape (..., L), and a 0/1 mask."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    elements = st.floats(-30.0, 0.0, allow_nan=False)
    logprobs = draw(hnp.arrays(np.float64, shape, elements=elements))
    ref = draw(hnp.arrays(np.float64, shape, elements=elements))
    mask = draw(hnp.arrays(np.bool_, shape))
    return logprobs, ref, mask


# --- kl_divergence and kl_divergence_logits ----------------------------------------------------


def test_kl_divergence_by_hand_in_both_directions():
    # 0.5 log 2 + 0.5 log(2/3) and 0.25 log 0.5 + 0.75 log 1.5.
    assert kl.kl_divergence([0.5, 0.5], [0.25, 0.75]) == pytest.approx(
        0.5 * math.log(2.0) + 0.5 * math.log(2.0 / 3.0), rel=1e-14
    )
    assert kl.kl_divergence([0.25, 0.75], [0.5, 0.5]) == pytest.approx(
        0.25 * math.log(0.5) + 0.75 * math.log(1.5), rel=1e-14
    )


@pytest.mark.equation("eq-kl-definition")
@pytest.mark.parametrize("seed", range(5))
def test_kl_divergence_equals_the_definition_with_zeros_in_probs(seed):
    rng = np.random.default_rng(seed)
    p = random_distributions(rng, (4, 6), sparse=True)
    q = random_distributions(rng, (4, 6))
    got = kl.kl_divergence(p, q)
    assert got.shape == (4,)
    np.testing.assert_allclose(got, [kl_by_hand(p[i], q[i]) for i in range(4)], rtol=1e-12)


def test_kl_divergence_ignores_categories_that_neither_distribution_uses():
    assert kl.kl_divergence([0.5, 0.5, 0.0], [0.25, 0.75, 0.0]) == pytest.approx(
        kl.kl_divergence([0.5, 0.5], [0.25, 0.75]), rel=1e-15
    )


def test_kl_divergence_is_a_float_for_one_distribution_and_an_array_for_a_batch():
    assert type(kl.kl_divergence([0.5, 0.5], [0.5, 0.5])) is float
    assert kl.kl_divergence(np.full((2, 3, 4), 0.25), np.full((2, 3, 4), 0.25)).shape == (2, 3)


def test_kl_divergence_refuses_a_failed_support_condition_instead_of_returning_inf():
    with pytest.raises(ValueError, match=r"^ref_probs must be positive wherever probs is"):
        kl.kl_divergence([0.5, 0.5], [1.0, 0.0])


def test_kl_divergence_refuses_probabilities_that_do_not_sum_to_one():
    with pytest.raises(ValueError, match=r"^probs must sum to 1"):
        kl.kl_divergence([0.5, 0.6], [0.5, 0.5])
    with pytest.raises(ValueError, match=r"^ref_probs must have the shape of probs"):
        kl.kl_divergence([0.5, 0.5], [0.2, 0.3, 0.5])


@given(pair=distribution_pairs())
def test_kl_is_nonnegative_and_zero_only_for_equal_distributions(pair):
    p, q = pair
    divergence = kl.kl_divergence(p, q)
    assert divergence >= 0.0
    assert kl.kl_divergence(p, p) == 0.0
    # Pinsker's inequality, KL >= ½ ||p - q||_1², makes "only if equal" quantitative.
    assert divergence >= 0.5 * np.abs(p - q).sum() ** 2 - 1e-12


@given(pair=distribution_pairs(min_size=2))
def test_kl_from_logits_equals_kl_from_probabilities(pair):
    p, q = pair
    shift = 3.7  # logits are defined up to a constant
    assert kl.kl_divergence_logits(np.log(p) + shift, np.log(q)) == pytest.approx(
        kl.kl_divergence(p, q), rel=1e-9, abs=1e-12
    )
    assert kl.kl_divergence_logits(np.log(p), np.log(p)) == 0.0


def test_kl_from_logits_stays_finite_for_huge_logits():
    assert kl.kl_divergence_logits([1000.0, 0.0], [0.0, 0.0]) == pytest.approx(math.log(2.0))
    both = kl.kl_divergence_logits([[800.0, -800.0], [0.0, 0.0]], [[0.0, 0.0], [-900.0, 900.0]])
    assert np.all(np.isfinite(both))
    assert both[0] == pytest.approx(math.log(2.0))
    assert both[1] == pytest.approx(0.5 * (1800.0 + math.log(0.5)) + 0.5 * math.log(0.5), rel=1e-12)


# --- kl_logit_gradient -------------------------------------------------------------------------


@pytest.mark.equation("eq-kl-logit-gradient")
@pytest.mark.parametrize("seed", range(5))
def test_kl_logit_gradient_matches_central_differences(seed):
    rng = np.random.default_rng(seed)
    logits, ref_logits = rng.normal(size=5), rng.normal(size=5)
    numerical = central_differences(
        lambda z: kl_by_hand(softmax_rows(z), softmax_rows(ref_logits)), logits
    )
    analytic = kl.kl_logit_gradient(logits, ref_logits)
    np.testing.assert_allclose(analytic, numerical, atol=1e-8)
    assert analytic.sum() == pytest.approx(0.0, abs=1e-15)


def test_kl_logit_gradient_by_hand():
    # π = (½, ½), ℓ = (log 2, log 2/3), mean ℓ = 0.1438: ½ (ℓ - mean ℓ).
    ell = np.array([math.log(2.0), math.log(2.0 / 3.0)])
    np.testing.assert_allclose(
        kl.kl_logit_gradient([0.0, 0.0], np.log([0.25, 0.75])), 0.5 * (ell - ell.mean())
    )


# --- k1, k2, k3 ----------------------------------------------------------------------------------


@pytest.mark.equation("eq-kl-estimators")
@pytest.mark.parametrize("name", ESTIMATORS)
def test_estimators_equal_their_definitions(name):
    rng = np.random.default_rng(1)
    logprobs, ref = -rng.exponential(2.0, size=(3, 7)), -rng.exponential(2.0, size=(3, 7))
    got = ESTIMATORS[name](logprobs, ref)
    expected = [
        [estimator_by_hand(name, a, b) for a, b in zip(r1, r2, strict=True)]
        for r1, r2 in zip(logprobs, ref, strict=True)
    ]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


def test_estimators_by_hand():
    logprobs, ref = np.log([0.5, 0.5]), np.log([0.25, 1.0])
    np.testing.assert_allclose(kl.k1(logprobs, ref), [math.log(2), -math.log(2)])
    np.testing.assert_allclose(kl.k2(logprobs, ref), [0.5 * math.log(2) ** 2] * 2)
    np.testing.assert_allclose(kl.k3(logprobs, ref), [0.5 - 1 + math.log(2), 2 - 1 - math.log(2)])


@pytest.mark.parametrize("seed", range(6))
def test_k1_and_k3_are_unbiased_by_exact_enumeration(seed):
    rng = np.random.default_rng(seed)
    pi, ref = random_distributions(rng, (6,)), random_distributions(rng, (6,))
    # Every token of the vocabulary, weighted by its probability of being sampled.
    for name in ("k1", "k3"):
        mean = sum(
            pi[x] * estimator_by_hand(name, math.log(pi[x]), math.log(ref[x])) for x in range(6)
        )
        assert mean == pytest.approx(kl_by_hand(pi, ref), rel=1e-12)
        library = ESTIMATORS[name](np.log(pi), np.log(ref))
        assert pi @ library == pytest.approx(kl_by_hand(pi, ref), rel=1e-12)


@pytest.mark.equation("eq-k2-bias")
@pytest.mark.parametrize("seed", range(6))
def test_k2_mean_has_the_closed_form_and_a_bias(seed):
    rng = np.random.default_rng(seed)
    pi, ref = random_distributions(rng, (6,)), random_distributions(rng, (6,))
    mean = pi @ kl.k2(np.log(pi), np.log(ref))
    closed = 0.5 * sum(p * math.log(p / q) ** 2 for p, q in zip(pi, ref, strict=True))
    assert mean == pytest.approx(closed, rel=1e-12)
    assert abs(mean - kl_by_hand(pi, ref)) > 1e-6  # not unbiased


@pytest.mark.equation("eq-k2-bias")
def test_k2_bias_is_third_order():
    # eq-k2-bias: E[k2] - KL = -E[ξ³] / 6 + O(ξ⁴) with ξ = π_ref / π - 1.
    ref = np.array([0.5, 0.3, 0.2])
    direction = np.array([1.0, -2.0, 1.0])
    for eps in (1e-2, 5e-3, 2.5e-3):
        pi = ref + eps * direction
        delta = ref / pi - 1.0
        bias = pi @ kl.k2(np.log(pi), np.log(ref)) - kl_by_hand(pi, ref)
        leading = -(pi @ delta**3) / 6.0
        assert bias == pytest.approx(leading, rel=20 * eps)


def test_k3_underestimates_when_the_policy_drops_part_of_the_reference_support():
    # Sampling from π never produces x3, where π_ref has mass 0.2 (exercise ex-k3-support).
    pi, ref = np.array([0.5, 0.5]), np.array([0.4, 0.4])  # restricted to the support of π
    mean = pi @ kl.k3(np.log(pi), np.log(ref))
    assert mean == pytest.approx(kl_by_hand([0.5, 0.5, 0.0], [0.4, 0.4, 0.2]) - 0.2, rel=1e-12)


def test_k3_is_accurate_when_the_log_probabilities_nearly_agree():
    decimal.getcontext().prec = 50
    for gap in (1e-3, 1e-6, 1e-9, 3e-12, -2e-7, 0.3, -0.4, 0.49, 0.51, 5.0, -20.0):
        ref, logprobs = -30.0, -30.0 - gap  # ref - logprobs = gap (up to the rounding of logprobs)
        u = decimal.Decimal(ref) - decimal.Decimal(logprobs)
        exact = float(u.exp() - 1 - u)
        assert kl.k3([logprobs], [ref])[0] == pytest.approx(exact, rel=1e-13)


def test_k3_refuses_a_ratio_that_overflows_but_not_at_a_masked_position():
    logprobs, ref = np.array([-800.0, -1.0]), np.array([0.0, -1.0])
    with pytest.raises(ValueError, match=r"^ref_logprobs must not make"):
        kl.k3(logprobs, ref)
    np.testing.assert_array_equal(kl.k3(logprobs, ref, mask=[False, True]), [0.0, 0.0])
    assert kl.k1(logprobs, ref)[0] == -800.0  # k1 and k2 stay finite
    assert np.isfinite(kl.k2(logprobs, ref)).all()


@given(batch=token_logprob_pairs())
def test_k3_and_k2_are_never_negative(batch):
    logprobs, ref, _ = batch
    assert np.all(kl.k3(logprobs, ref) >= 0.0)
    assert np.all(kl.k2(logprobs, ref) >= 0.0)


@pytest.mark.parametrize("name", ESTIMATORS)
@given(batch=token_logprob_pairs())
def test_estimators_are_exactly_zero_when_the_policies_agree(name, batch):
    logprobs, _, mask = batch
    np.testing.assert_array_equal(ESTIMATORS[name](logprobs, logprobs.copy()), 0.0)
    np.testing.assert_array_equal(ESTIMATORS[name](logprobs, logprobs.copy(), mask), 0.0)


@pytest.mark.parametrize("name", ESTIMATORS)
@given(batch=token_logprob_pairs(), data=st.data())
def test_masked_positions_contribute_exactly_zero(name, batch, data):
    logprobs, ref, mask = batch
    estimates = ESTIMATORS[name](logprobs, ref, mask)
    np.testing.assert_array_equal(estimates[~mask], 0.0)
    np.testing.assert_array_equal(estimates[mask], ESTIMATORS[name](logprobs, ref)[mask])
    # Whatever the masked positions hold, the counted ones and the sequence totals agree.
    other = np.where(
        mask, ref, data.draw(hnp.arrays(np.float64, ref.shape, elements=st.floats(-30.0, 0.0)))
    )
    np.testing.assert_array_equal(ESTIMATORS[name](logprobs, other, mask), estimates)
    np.testing.assert_array_equal(
        kl.sequence_kl(logprobs, other, mask, name), kl.sequence_kl(logprobs, ref, mask, name)
    )


def test_masks_may_be_bool_or_zero_one():
    logprobs, ref = np.log([0.5, 0.5, 0.2]), np.log([0.25, 0.5, 0.5])
    as_bool = kl.k3(logprobs, ref, np.array([True, False, True]))
    np.testing.assert_array_equal(as_bool, kl.k3(logprobs, ref, [1, 0, 1]))
    np.testing.assert_array_equal(as_bool, kl.k3(logprobs, ref, [1.0, 0.0, 1.0]))


def test_estimators_refuse_positive_log_probabilities_and_mismatched_shapes():
    with pytest.raises(ValueError, match=r"^logprobs must be log-probabilities \(<= 0\)"):
        kl.k1([0.1, -1.0], [-1.0, -1.0])
    with pytest.raises(ValueError, match=r"^ref_logprobs must have the shape of logprobs"):
        kl.k3([-1.0, -1.0], [-1.0])


# --- sequence_kl ------------------------------------------------------------------------------


def test_sequence_kl_sums_or_averages_the_counted_tokens():
    logprobs = np.log([[0.5, 0.5, 0.5], [0.9, 0.8, 0.7]])
    ref = np.log([[0.25, 0.5, 1.0], [0.3, 0.6, 0.2]])
    mask = np.array([[1, 1, 0], [1, 1, 1]], dtype=bool)
    for name in ESTIMATORS:
        per_token = ESTIMATORS[name](logprobs, ref, mask)
        np.testing.assert_allclose(kl.sequence_kl(logprobs, ref, mask, name), per_token.sum(axis=1))
        np.testing.assert_allclose(
            kl.sequence_kl(logprobs, ref, mask, name, length_normalized=True),
            per_token.sum(axis=1) / np.array([2, 3]),
        )
    assert type(kl.sequence_kl(logprobs[0], ref[0])) is float


@pytest.mark.equation("eq-kl-chain-rule")
@pytest.mark.parametrize("name", ["k1", "k3"])
def test_summed_penalty_is_unbiased_for_the_sequence_kl(name):
    """eq-kl-chain-rule: every sequence of a bigram pair, enumerated; loops, not the library."""
    rng = np.random.default_rng(11)
    policy = random_distributions(rng, (4, 3))  # rows: after token 0, 1, 2, and the start
    reference = random_distributions(rng, (4, 3))
    seq_pi, seq_ref, lp_rows, ref_rows = [], [], [], []
    for seq in itertools.product(range(3), repeat=4):
        previous = (3, *seq[:-1])
        lp = [math.log(policy[p, x]) for p, x in zip(previous, seq, strict=True)]
        lr = [math.log(reference[p, x]) for p, x in zip(previous, seq, strict=True)]
        seq_pi.append(math.exp(sum(lp)))
        seq_ref.append(math.exp(sum(lr)))
        lp_rows.append(lp)
        ref_rows.append(lr)
    penalties = kl.sequence_kl(np.array(lp_rows), np.array(ref_rows), estimator=name)
    assert np.array(seq_pi) @ penalties == pytest.approx(kl_by_hand(seq_pi, seq_ref), rel=1e-10)


def test_sequence_kl_refuses_to_average_an_empty_sequence():
    with pytest.raises(ValueError, match=r"^mask must select at least one token"):
        kl.sequence_kl(np.zeros((2, 2)), np.zeros((2, 2)), [[1, 0], [0, 0]], "k1", True)
    assert kl.sequence_kl(np.zeros((2, 2)), np.zeros((2, 2)), [[1, 0], [0, 0]]).tolist() == [0, 0]


# --- importance_weighted_kl ------------------------------------------------------------------


@pytest.mark.equation("eq-kl-importance")
@pytest.mark.parametrize("name", ESTIMATORS)
def test_importance_weights_make_behavior_samples_unbiased(name):
    rng = np.random.default_rng(4)
    pi, ref, mu = (random_distributions(rng, (5,)) for _ in range(3))
    weighted = kl.importance_weighted_kl(np.log(pi), np.log(ref), np.log(mu), name)
    # E_μ[ρ k] = E_π[k], summed over the vocabulary.
    assert mu @ weighted == pytest.approx(pi @ ESTIMATORS[name](np.log(pi), np.log(ref)), rel=1e-12)
    if name != "k2":
        assert mu @ weighted == pytest.approx(kl_by_hand(pi, ref), rel=1e-12)


def test_naive_k1_on_behavior_samples_estimates_a_difference_of_two_kls():
    rng = np.random.default_rng(5)
    pi, ref, mu = (random_distributions(rng, (5,)) for _ in range(3))
    naive = mu @ kl.k1(np.log(pi), np.log(ref))
    assert naive == pytest.approx(kl_by_hand(mu, ref) - kl_by_hand(mu, pi), rel=1e-12)


def test_importance_weighted_kl_equals_ratio_times_estimate_and_reduces_on_policy():
    logprobs, ref, old = np.log([0.5, 0.2]), np.log([0.25, 0.4]), np.log([0.25, 0.1])
    got = kl.importance_weighted_kl(logprobs, ref, old, "k3", mask=[1, 0])
    assert got[0] == pytest.approx(2.0 * estimator_by_hand("k3", logprobs[0], ref[0]), rel=1e-14)
    assert got[1] == 0.0
    np.testing.assert_array_equal(
        kl.importance_weighted_kl(logprobs, ref, logprobs.copy(), "k1"), kl.k1(logprobs, ref)
    )


def test_importance_weighted_kl_refuses_an_overflowing_weight():
    with pytest.raises(ValueError, match=r"^old_logprobs must not make"):
        kl.importance_weighted_kl([0.0], [0.0], [-800.0], "k1")


# --- estimator_logit_gradient -----------------------------------------------------------------


@pytest.mark.parametrize("name", ESTIMATORS)
def test_each_sample_gradient_matches_central_differences(name):
    rng = np.random.default_rng(8)
    logits, ref = rng.normal(size=4), random_distributions(rng, (4,))
    for action in range(4):
        numerical = central_differences(
            lambda z, a=action: estimator_by_hand(
                name, log_softmax_by_hand(z)[a], math.log(ref[a])
            ),
            logits,
        )
        analytic = kl.estimator_logit_gradient(logits, action, math.log(ref[action]), name)
        np.testing.assert_allclose(analytic, numerical, atol=1e-8)


@pytest.mark.equation("eq-estimator-gradients")
@pytest.mark.parametrize("seed", range(4))
def test_expected_estimator_gradients_by_exact_enumeration(seed):
    """eq-estimator-gradients: 0, ∇KL(π‖π_ref) and ∇KL(π_ref‖π) = π - π_ref."""
    rng = np.random.default_rng(seed)
    logits, ref = rng.normal(size=5), random_distributions(rng, (5,))
    pi = softmax_rows(logits)
    everything = np.arange(5)

    def expected(name):
        return pi @ kl.estimator_logit_gradient(logits, everything, np.log(ref), name)

    forward = central_differences(lambda z: kl_by_hand(softmax_rows(z), ref), logits)
    other = central_differences(lambda z: kl_by_hand(ref, softmax_rows(z)), logits)
    np.testing.assert_allclose(expected("k1"), 0.0, atol=1e-15)
    np.testing.assert_allclose(expected("k2"), forward, atol=1e-8)
    np.testing.assert_allclose(expected("k3"), other, atol=1e-8)
    np.testing.assert_allclose(expected("k3"), pi - ref, atol=1e-15)
    assert np.abs(expected("k3") - forward).max() > 1e-3  # k3's is not the KL's gradient


def test_estimator_logit_gradient_accepts_one_distribution_per_action():
    rng = np.random.default_rng(9)
    logits, actions = rng.normal(size=(3, 4)), np.array([0, 3, 1])
    ref = np.log([0.2, 0.3, 0.5])
    batched = kl.estimator_logit_gradient(logits, actions, ref, "k2")
    for i in range(3):
        np.testing.assert_allclose(
            batched[i], kl.estimator_logit_gradient(logits[i], actions[i], ref[i], "k2")
        )
    np.testing.assert_allclose(batched.sum(axis=-1), 0.0, atol=1e-15)


# --- the regularized optimum ----------------------------------------------------------------


def test_optimum_by_hand():
    np.testing.assert_allclose(
        kl.kl_regularized_optimum([0.5, 0.5], [0.0, math.log(3.0)], 1.0), [0.25, 0.75]
    )
    assert kl.kl_regularized_value([0.5, 0.5], [0.0, math.log(3.0)], 1.0) == pytest.approx(
        math.log(2.0)
    )


@pytest.mark.equation("eq-kl-optimum")
@pytest.mark.parametrize("beta", [0.05, 0.5, 3.0])
def test_optimum_equals_the_tilted_reference(beta):
    np.testing.assert_allclose(
        kl.kl_regularized_optimum(KL_REF_PROBS, KL_REWARDS, beta),
        tilted_by_hand(KL_REF_PROBS, KL_REWARDS, beta),
        rtol=1e-12,
    )


@pytest.mark.equation("eq-kl-optimum")
@pytest.mark.parametrize("beta", [0.2, 1.0])
def test_optimum_maximizes_the_objective_on_the_simplex(beta):
    """Against SciPy's SLSQP on the simplex, which knows nothing of the closed form."""

    def negative_objective(p):
        p = p / p.sum()
        return -(p @ KL_REWARDS - beta * kl_by_hand(p, KL_REF_PROBS))

    result = optimize.minimize(
        negative_objective,
        np.full(5, 0.2),
        method="SLSQP",
        bounds=[(1e-12, 1.0)] * 5,
        constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1.0}],
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    numerical = result.x / result.x.sum()
    np.testing.assert_allclose(
        kl.kl_regularized_optimum(KL_REF_PROBS, KL_REWARDS, beta), numerical, atol=1e-6
    )
    assert -result.fun == pytest.approx(
        kl.kl_regularized_value(KL_REF_PROBS, KL_REWARDS, beta), abs=1e-10
    )


@pytest.mark.equation("eq-kl-gibbs")
@given(pair=distribution_pairs(min_size=2), beta=st.floats(0.05, 5.0))
def test_gibbs_identity_objective_is_value_minus_kl_to_the_optimum(pair, beta):
    """eq-kl-gibbs: J(π) = β log Z - β KL(π ‖ π*) for every π."""
    pi, ref = pair
    rewards = np.linspace(-1.0, 2.0, len(pi))
    optimum = kl.kl_regularized_optimum(ref, rewards, beta)
    value = kl.kl_regularized_value(ref, rewards, beta)
    objective = kl.kl_regularized_objective(pi, ref, rewards, beta)
    assert objective == pytest.approx(value - beta * kl_by_hand(pi, optimum), abs=1e-9)
    assert objective <= value + 1e-12


def test_optimum_limits_of_beta():
    ref, rewards = np.array([0.5, 0.3, 0.2, 0.0]), np.array([0.0, 1.0, 0.5, 9.0])
    np.testing.assert_allclose(kl.kl_regularized_optimum(ref, rewards, 1e6), ref, atol=1e-5)
    # As β → 0: all mass on the best reward *within the support* of the reference.
    np.testing.assert_allclose(
        kl.kl_regularized_optimum(ref, rewards, 1e-3), [0, 1, 0, 0], atol=1e-12
    )
    assert kl.kl_regularized_value(ref, rewards, 1e6) == pytest.approx(ref @ rewards, rel=1e-5)
    assert kl.kl_regularized_value(ref, rewards, 1e-3) == pytest.approx(1.0, abs=2e-3)


def test_optimum_is_finite_for_rewards_far_larger_than_beta():
    optimum = kl.kl_regularized_optimum([0.5, 0.5], [1000.0, 999.0], 0.01)
    assert np.all(np.isfinite(optimum)) and optimum.sum() == pytest.approx(1.0)
    assert kl.kl_regularized_value([0.5, 0.5], [1000.0, 999.0], 0.01) == pytest.approx(
        1000.0 + 0.01 * math.log(0.5), rel=1e-12
    )


def test_optimum_and_value_accept_a_batch():
    ref = np.array([[0.5, 0.5], [0.2, 0.8]])
    rewards = np.array([[0.0, 1.0], [1.0, 0.0]])
    batched = kl.kl_regularized_optimum(ref, rewards, 0.7)
    values = kl.kl_regularized_value(ref, rewards, 0.7)
    for i in range(2):
        np.testing.assert_allclose(batched[i], tilted_by_hand(ref[i], rewards[i], 0.7))
        assert values[i] == pytest.approx(kl.kl_regularized_value(ref[i], rewards[i], 0.7))


def test_regularized_functions_refuse_a_nonpositive_beta():
    for beta in (0.0, -1.0):
        with pytest.raises(ValueError, match=r"^beta must be a positive finite number"):
            kl.kl_regularized_optimum([0.5, 0.5], [0.0, 1.0], beta)


# --- DPO --------------------------------------------------------------------------------------


def dpo_by_hand(c, r, rc, rr, beta):
    margin = beta * ((c - rc) - (r - rr))
    return -math.log(1.0 / (1.0 + math.exp(-margin)))


def test_dpo_loss_by_hand():
    np.testing.assert_allclose(
        kl.dpo_loss([-1.0, -2.0], [-2.0, -1.0], [-1.5, -1.5], [-1.5, -1.5], 0.5),
        [math.log1p(math.exp(-0.5)), math.log1p(math.exp(0.5))],
    )


@pytest.mark.equation("eq-dpo-loss")
def test_dpo_loss_equals_the_definition():
    rng = np.random.default_rng(12)
    arrays = [-rng.uniform(0.1, 20.0, size=8) for _ in range(4)]
    expected = [dpo_by_hand(*values, 0.3) for values in zip(*arrays, strict=True)]
    np.testing.assert_allclose(kl.dpo_loss(*arrays, 0.3), expected, rtol=1e-12)


def test_dpo_loss_is_finite_for_huge_margins():
    losses = kl.dpo_loss([-1.0, -2000.0], [-2000.0, -1.0], [-1.0, -1.0], [-1.0, -1.0], 1.0)
    assert losses[0] == 0.0 or losses[0] < 1e-300
    assert losses[1] == pytest.approx(1999.0, rel=1e-15)


@pytest.mark.equation("eq-dpo-gradient")
@pytest.mark.parametrize("beta", [0.05, 1.0, 4.0])
def test_dpo_gradient_matches_central_differences(beta):
    rng = np.random.default_rng(int(beta * 100))
    chosen, rejected, ref_c, ref_r = (-rng.uniform(0.5, 10.0, size=5) for _ in range(4))
    grad_c, grad_r = kl.dpo_loss_gradient(chosen, rejected, ref_c, ref_r, beta)
    np.testing.assert_allclose(
        grad_c,
        central_differences(
            lambda c: sum(map(dpo_by_hand, c, rejected, ref_c, ref_r, [beta] * 5)), chosen
        ),
        atol=1e-8,
    )
    np.testing.assert_allclose(
        grad_r,
        central_differences(
            lambda r: sum(map(dpo_by_hand, chosen, r, ref_c, ref_r, [beta] * 5)), rejected
        ),
        atol=1e-8,
    )
    np.testing.assert_array_equal(grad_c, -grad_r)
    assert np.all((grad_r > 0.0) & (grad_r <= beta))


def test_dpo_depends_only_on_the_two_log_ratios():
    base = kl.dpo_loss([-3.0], [-4.0], [-2.0], [-5.0], 0.7)
    shifted = kl.dpo_loss([-4.0], [-5.5], [-3.0], [-6.5], 0.7)  # log π - log π_ref unchanged
    np.testing.assert_allclose(base, shifted, rtol=1e-14)


def test_dpo_refuses_bad_input():
    with pytest.raises(ValueError, match=r"^beta must be a positive finite number"):
        kl.dpo_loss([-1.0], [-1.0], [-1.0], [-1.0], 0.0)
    with pytest.raises(ValueError, match=r"^ref_rejected_logprobs must have the shape"):
        kl.dpo_loss([-1.0], [-1.0], [-1.0], [-1.0, -2.0], 0.1)
    with pytest.raises(ValueError, match=r"^rejected_logprobs must be log-probabilities"):
        kl.dpo_loss_gradient([-1.0], [0.5], [-1.0], [-1.0], 0.1)


# --- label smoothing (conservative DPO), IPO and the absolute log-ratio ---------------------


def smoothed_dpo_by_hand(c, r, rc, rr, beta, smoothing):
    """Mitchell's conservative DPO: the cross-entropy of σ(u) against the target 1 - ε."""
    u = beta * ((c - rc) - (r - rr))
    sigma = 1.0 / (1.0 + math.exp(-u))
    return -(1.0 - smoothing) * math.log(sigma) - smoothing * math.log(1.0 - sigma)


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.25, 0.5])
def test_smoothed_dpo_loss_equals_the_definition(smoothing):
    rng = np.random.default_rng(21)
    arrays = [-rng.uniform(0.1, 6.0, size=8) for _ in range(4)]
    expected = [smoothed_dpo_by_hand(*v, 0.4, smoothing) for v in zip(*arrays, strict=True)]
    got = kl.dpo_loss(*arrays, 0.4, label_smoothing=smoothing)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("smoothing", [0.1, 0.3])
def test_smoothed_dpo_gradient_matches_central_differences(smoothing):
    rng = np.random.default_rng(5)
    chosen, rejected, ref_c, ref_r = (-rng.uniform(0.5, 6.0, size=5) for _ in range(4))
    beta = 0.7

    def total(c, r):
        return sum(
            smoothed_dpo_by_hand(*v, beta, smoothing) for v in zip(c, r, ref_c, ref_r, strict=True)
        )

    grad_c, grad_r = kl.dpo_loss_gradient(chosen, rejected, ref_c, ref_r, beta, smoothing)
    np.testing.assert_allclose(
        grad_c, central_differences(lambda c: total(c, rejected), chosen), atol=1e-8
    )
    np.testing.assert_allclose(
        grad_r, central_differences(lambda r: total(chosen, r), rejected), atol=1e-8
    )


def test_smoothed_dpo_is_smallest_at_a_finite_margin():
    """With ε > 0 the loss has its minimum at u = log((1 - ε) / ε), not at u → ∞."""
    smoothing, beta = 0.1, 1.0
    best = math.log((1.0 - smoothing) / smoothing)
    margins = np.array([best - 0.5, best, best + 0.5, 50.0])
    # u = (c - ref_c) - (r - ref_r) = margins with c = margins - 60, ref_c = -60, r = ref_r.
    ones = -np.ones(4)
    losses = kl.dpo_loss(margins - 60.0, ones, ones * 60.0, ones, beta, smoothing)
    assert np.argmin(losses) == 1
    _, at_best = kl.dpo_loss_gradient([best - 60.0], [-1.0], [-60.0], [-1.0], beta, smoothing)
    assert abs(at_best[0]) < 1e-15


def test_ipo_loss_by_hand_and_its_target():
    # h = (-1 + 1.5) - (-2 + 1.5) = 1 = 1 / (2 β) at β = 0.5: the pair is at its target.
    np.testing.assert_array_equal(
        kl.ipo_loss([-1.0, -2.0], [-2.0, -1.0], [-1.5, -1.5], [-1.5, -1.5], 0.5), [0.0, 4.0]
    )
    rng = np.random.default_rng(8)
    c, r, rc, rr = (-rng.uniform(0.1, 9.0, size=6) for _ in range(4))
    expected = [
        ((a - b) - (x - y) - 1.0 / (2 * 0.2)) ** 2 for a, x, b, y in zip(c, r, rc, rr, strict=True)
    ]
    np.testing.assert_allclose(kl.ipo_loss(c, r, rc, rr, 0.2), expected, rtol=1e-12)


def test_k_abs_is_the_absolute_log_ratio_and_overestimates_the_kl():
    probs = np.array([0.5, 0.3, 0.2])
    ref = np.array([0.2, 0.3, 0.5])
    tokens = np.log(probs)[None, :].repeat(2, axis=0)
    ref_tokens = np.log(ref)[None, :].repeat(2, axis=0)
    mask = np.array([[1, 1, 0], [1, 0, 1]], dtype=bool)
    got = kl.k_abs(tokens, ref_tokens, mask)
    np.testing.assert_array_equal(got, np.where(mask, np.abs(tokens - ref_tokens), 0.0))
    expected_abs = float(np.sum(probs * np.abs(np.log(probs / ref))))  # E_π |k1|
    assert expected_abs > float(np.sum(probs * np.log(probs / ref)))  # > KL(π ‖ π_ref)
