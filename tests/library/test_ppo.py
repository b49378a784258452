"""rlfound.ppo: the clipped surrogate, its gradient, the losses and the clip fractions.

References: the surrogate written token by token with Python's min and max, the four cases
by the sign of A written out separately, central differences (tests.oracles) for every
gradient, and explicit loops for the means. Invariants (hypothesis): at θ = θ_old every valid
ratio is exactly 1 and the surrogate's gradient is the policy-gradient estimate; old
log-probabilities are never modified and never recomputed from anything but themselves.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound import importance, ppo
from rlfound.entropy import categorical_entropy
from tests.oracles import central_differences, softmax_rows


def surrogate_by_hand(rho, a, clip_low, clip_high, dual_clip=None):
    """One token: min(ρA, clip(ρ)A), then max(., cA) for A < 0 with a dual clip."""
    clipped = min(max(rho, 1.0 - clip_low), 1.0 + clip_high)
    value = min(rho * a, clipped * a)
    if dual_clip is not None and a < 0:
        value = max(value, dual_clip * a)
    return value


@st.composite
def token_batches(draw, max_len=12):
    """Log-ratios, advantages and clip ranges (clip_high sometimes None, dual clip sometimes)."""
    shape = draw(st.tuples(st.integers(1, 3), st.integers(1, max_len)))
    log_ratio = draw(hnp.arrays(np.float64, shape, elements=st.floats(-2.0, 2.0)))
    advantages = draw(
        hnp.arrays(np.float64, shape, elements=st.floats(-3.0, 3.0, allow_subnormal=False))
    )
    clip_low = draw(st.floats(0.0, 0.9))
    clip_high = draw(st.one_of(st.none(), st.floats(0.0, 1.0)))
    dual_clip = draw(st.one_of(st.none(), st.floats(1.01, 5.0)))
    return log_ratio, advantages, clip_low, clip_high, dual_clip


def kinks(clip_low, clip_high, dual_clip):
    """The ratios where the objective of some sign of A is not differentiable."""
    high = clip_low if clip_high is None else clip_high
    points = [1.0 - clip_low, 1.0 + high]
    return points + ([dual_clip] if dual_clip is not None else [])


# --- clipped_surrogate ----------------------------------------------------------------------------


def test_clipped_surrogate_by_hand():
    # A > 0: 0.5, 1.1, min(1.5, 1.2) = 1.2; A < 0: max(1.5, 0.8) * -1 = -1.5, max(0.5, 0.8) * -2.
    got = ppo.clipped_surrogate([0.5, 1.1, 1.5, 1.5, 0.5], [1.0, 1.0, 1.0, -1.0, -2.0])
    np.testing.assert_allclose(got, [0.5, 1.1, 1.2, -1.5, -1.6], rtol=1e-15)


def test_dual_clip_bounds_the_loss_of_a_large_ratio_with_negative_advantage():
    got = ppo.clipped_surrogate([5.0, 2.0, 5.0], [-1.0, -1.0, 1.0], dual_clip=3.0)
    np.testing.assert_allclose(got, [-3.0, -2.0, 1.2], rtol=1e-15)  # A > 0 is untouched


def test_clip_high_none_means_the_same_range_on_both_sides():
    ratio, advantages = np.array([0.5, 0.75, 1.25, 1.5]), np.array([1.0, -1.0, 1.0, -1.0])
    np.testing.assert_array_equal(
        ppo.clipped_surrogate(ratio, advantages, clip_low=0.3),
        ppo.clipped_surrogate(ratio, advantages, clip_low=0.3, clip_high=0.3),
    )


def test_clip_higher_lets_positive_advantages_earn_more_and_leaves_negative_ones_alone():
    ratio = np.array([1.25, 1.25, 0.7])
    advantages = np.array([1.0, -1.0, -1.0])
    symmetric = ppo.clipped_surrogate(ratio, advantages, clip_low=0.2)
    higher = ppo.clipped_surrogate(ratio, advantages, clip_low=0.2, clip_high=0.28)
    np.testing.assert_allclose(symmetric, [1.2, -1.25, -0.8], rtol=1e-15)
    np.testing.assert_allclose(higher, [1.25, -1.25, -0.8], rtol=1e-15)


@pytest.mark.equation("eq-ppo-clip", "eq-dual-clip")
@given(batch=token_batches())
def test_clipped_surrogate_is_the_token_by_token_formula(batch):
    log_ratio, advantages, clip_low, clip_high, dual_clip = batch
    high = clip_low if clip_high is None else clip_high
    ratio = np.exp(log_ratio)
    expected = [
        surrogate_by_hand(r, a, clip_low, high, dual_clip)
        for r, a in zip(ratio.ravel(), advantages.ravel(), strict=True)
    ]
    got = ppo.clipped_surrogate(ratio, advantages, clip_low, clip_high, dual_clip)
    np.testing.assert_allclose(got.ravel(), expected, rtol=1e-14, atol=1e-15)


@given(batch=token_batches())
def test_the_four_cases_by_sign_of_the_advantage(batch):
    # A > 0: min(ρ, 1 + ε_high) A.  A < 0: max(ρ, 1 - ε_low) A (and >= cA).  A = 0: 0.
    log_ratio, advantages, clip_low, clip_high, dual_clip = batch
    high = clip_low if clip_high is None else clip_high
    ratio = np.exp(log_ratio)
    got = ppo.clipped_surrogate(ratio, advantages, clip_low, clip_high, dual_clip)
    positive, negative = advantages > 0, advantages < 0
    np.testing.assert_allclose(
        got[positive], np.minimum(ratio, 1 + high)[positive] * advantages[positive], rtol=1e-14
    )
    lower = np.maximum(ratio, 1 - clip_low)
    if dual_clip is not None:
        lower = np.minimum(lower, dual_clip)
    np.testing.assert_allclose(got[negative], lower[negative] * advantages[negative], rtol=1e-14)
    assert np.all(got[advantages == 0] == 0.0)


@given(batch=token_batches())
def test_the_surrogate_never_exceeds_the_unclipped_objective(batch):
    # The pessimistic bound: min(ρA, ...) <= ρA, with equality at ρ = 1 (no dual clip there).
    log_ratio, advantages, clip_low, clip_high, _ = batch
    ratio = np.exp(log_ratio)
    got = ppo.clipped_surrogate(ratio, advantages, clip_low, clip_high)
    assert np.all(got <= ratio * advantages + 1e-12)


# --- clipped_surrogate_gradient -------------------------------------------------------------------


@pytest.mark.equation("eq-clip-gradient")
@given(batch=token_batches(max_len=6))
def test_gradient_matches_central_differences_away_from_the_kinks(batch):
    log_ratio, advantages, clip_low, clip_high, dual_clip = batch
    ratio = np.exp(log_ratio)
    far = np.all([np.abs(ratio - k) > 1e-4 for k in kinks(clip_low, clip_high, dual_clip)], axis=0)
    log_ratio = np.where(far, log_ratio, log_ratio + 1e-2)  # step off a kink

    def total(x):
        return ppo.clipped_surrogate(np.exp(x), advantages, clip_low, clip_high, dual_clip).sum()

    numerical = central_differences(total, log_ratio, eps=1e-7)
    got = ppo.clipped_surrogate_gradient(
        np.exp(log_ratio), advantages, clip_low, clip_high, dual_clip
    )
    np.testing.assert_allclose(got, numerical, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("rho", "a", "dual_clip"),
    [(1.2, 1.0, None), (0.8, -1.0, None), (3.0, -1.0, 3.0), (1.2, -1.0, None), (0.8, 1.0, None)],
)
def test_at_a_kink_the_gradient_is_the_one_sided_derivative_from_inside_the_clip(rho, a, dual_clip):
    # Convention: a ratio exactly on a boundary counts as inside, so the gradient is ρA. That
    # is the one-sided difference quotient taken from the inside of [1 - ε, 1 + ε] (or from
    # below c); the other side's quotient is 0 where the boundary is a real kink.
    ratio, advantages = np.array([rho]), np.array([a])
    got = ppo.clipped_surrogate_gradient(ratio, advantages, dual_clip=dual_clip)
    assert got[0] == pytest.approx(rho * a, rel=1e-15)
    h = 1e-7
    toward_one = -h if rho > 1 else h
    inside = (
        ppo.clipped_surrogate(ratio * np.exp(toward_one), advantages, dual_clip=dual_clip)
        - ppo.clipped_surrogate(ratio, advantages, dual_clip=dual_clip)
    )[0] / toward_one
    assert got[0] == pytest.approx(inside, rel=1e-5)


@pytest.mark.equation("eq-clip-gradient")
def test_gradient_is_zero_exactly_where_the_clip_is_active():
    ratio = np.array([1.3, 1.3, 0.7, 0.7, 4.0, 4.0])
    advantages = np.array([1.0, -1.0, 1.0, -1.0, -1.0, 1.0])
    got = ppo.clipped_surrogate_gradient(ratio, advantages, dual_clip=3.0)
    np.testing.assert_allclose(got, [0.0, -1.3, 0.7, 0.0, 0.0, 0.0], rtol=1e-15)


# --- the policy loss ------------------------------------------------------------------------------


@st.composite
def masked_token_batches(draw):
    shape = draw(st.tuples(st.integers(1, 3), st.integers(1, 8)))
    probs = hnp.arrays(np.float64, shape, elements=st.floats(1e-3, 1.0))
    logprobs, old_logprobs = np.log(draw(probs)), np.log(draw(probs))
    advantages = draw(
        hnp.arrays(np.float64, shape, elements=st.floats(-3.0, 3.0, allow_subnormal=False))
    )
    mask = draw(hnp.arrays(np.bool_, shape)).copy()
    mask.flat[draw(st.integers(0, mask.size - 1))] = True  # at least one valid token
    return logprobs, old_logprobs, advantages, mask


@given(batch=masked_token_batches(), clip_high=st.one_of(st.none(), st.floats(0.0, 0.5)))
def test_policy_loss_is_minus_the_token_mean_of_the_surrogate(batch, clip_high):
    logprobs, old_logprobs, advantages, mask = batch
    terms = [
        surrogate_by_hand(np.exp(lp - olp), a, 0.2, 0.2 if clip_high is None else clip_high)
        for lp, olp, a, m in zip(
            logprobs.ravel(), old_logprobs.ravel(), advantages.ravel(), mask.ravel(), strict=True
        )
        if m
    ]
    got = ppo.clipped_policy_loss(logprobs, old_logprobs, advantages, mask, clip_high=clip_high)
    assert got == pytest.approx(-sum(terms) / len(terms), rel=1e-12, abs=1e-12)


@given(batch=masked_token_batches())
def test_masked_positions_change_neither_the_loss_nor_get_a_gradient(batch):
    logprobs, old_logprobs, advantages, mask = batch
    scrambled = np.where(mask, advantages, 99.0)
    scrambled_logprobs = np.where(mask, logprobs, -7.0)
    assert ppo.clipped_policy_loss(
        scrambled_logprobs, old_logprobs, scrambled, mask
    ) == ppo.clipped_policy_loss(logprobs, old_logprobs, advantages, mask)
    gradient = ppo.clipped_policy_loss_gradient(logprobs, old_logprobs, advantages, mask)
    assert np.all(gradient[~mask] == 0.0)


@given(batch=masked_token_batches())
def test_policy_loss_gradient_matches_central_differences(batch):
    logprobs, old_logprobs, advantages, mask = batch
    # Step off the kinks of ε = 0.2 and of the dual clip c = 3.
    ratio = np.exp(logprobs - old_logprobs)
    near = np.any([np.abs(ratio - k) < 1e-4 for k in (0.8, 1.2, 3.0)], axis=0)
    old_logprobs = np.where(near, old_logprobs - 1e-2, old_logprobs)
    logprobs = np.minimum(logprobs, 0.0)

    def loss(x):
        return ppo.clipped_policy_loss(
            np.minimum(x, 0.0), old_logprobs, advantages, mask, dual_clip=3.0
        )

    inner = logprobs < -1e-6  # the finite differences must stay <= 0
    numerical = central_differences(loss, logprobs, eps=1e-8)
    got = ppo.clipped_policy_loss_gradient(logprobs, old_logprobs, advantages, mask, dual_clip=3.0)
    np.testing.assert_allclose(got[inner], numerical[inner], rtol=1e-4, atol=1e-6)


# --- invariants at θ = θ_old ----------------------------------------------------------------------


@given(batch=masked_token_batches())
def test_at_theta_old_every_valid_ratio_is_exactly_one(batch):
    logprobs, _, advantages, mask = batch
    ratios = importance.token_ratios(logprobs, logprobs.copy(), mask)
    assert np.all(ratios == 1.0)
    assert ppo.clip_fractions(ratios, advantages, mask) == (0.0, 0.0)


@given(batch=masked_token_batches())
def test_at_theta_old_the_loss_gradient_is_the_policy_gradient_weight(batch):
    # d loss / d log π_j = -m_j A_j / Σ m: the REINFORCE weight of each token, whatever ε.
    logprobs, _, advantages, mask = batch
    for clip_low in (0.0, 0.2):
        got = ppo.clipped_policy_loss_gradient(
            logprobs, logprobs, advantages, mask, clip_low=clip_low, dual_clip=2.0
        )
        np.testing.assert_allclose(got, np.where(mask, -advantages / mask.sum(), 0.0), rtol=1e-14)


def test_at_theta_old_the_surrogate_gradient_in_logits_is_the_policy_gradient_estimate():
    # A softmax over K tokens in each of S contexts; one sampled token per row of the batch.
    rng = np.random.default_rng(3)
    contexts, vocab, batch = 4, 5, 30
    logits = rng.normal(size=(contexts, vocab))
    rows = rng.integers(contexts, size=batch)
    tokens = np.array([rng.choice(vocab, p=softmax_rows(logits[c])) for c in rows])
    advantages = rng.normal(size=batch)
    mask = rng.random(batch) < 0.8
    mask[0] = True

    def logprobs_of(theta):
        return np.log(softmax_rows(theta)[rows, tokens])

    old = logprobs_of(logits)  # stored once, at sampling time

    def loss(theta):
        return ppo.clipped_policy_loss(
            logprobs_of(theta.reshape(logits.shape)), old, advantages, mask
        )

    # The policy-gradient estimate: -(1/Σm) Σ_j m_j A_j ∇ log π(x_j | c_j), with e_x - π.
    estimate = np.zeros_like(logits)
    for c, x, a, m in zip(rows, tokens, advantages, mask, strict=True):
        if m:
            estimate[c] -= a * (np.eye(vocab)[x] - softmax_rows(logits[c])) / mask.sum()
    numerical = central_differences(loss, logits.ravel()).reshape(logits.shape)
    np.testing.assert_allclose(numerical, estimate, rtol=1e-6, atol=1e-9)


# --- old log-probabilities are inputs only --------------------------------------------------------


def _read_only(array):
    array = np.array(array, dtype=np.float64)
    array.setflags(write=False)
    return array


FUNCTIONS_WITH_OLD_LOGPROBS = [
    (ppo.clipped_policy_loss, "old_logprobs"),
    (ppo.clipped_policy_loss_gradient, "old_logprobs"),
    (importance.token_ratios, "old_logprobs"),
    (importance.sequence_log_ratio, "old_logprobs"),
    (importance.sequence_ratio, "old_logprobs"),
    (importance.truncated_importance_weights, "rollout_logprobs"),
]


def _call(function, name, logprobs, old, advantages, mask):
    kwargs = {"logprobs": logprobs, name: old, "mask": mask}
    if "advantages" in inspect.signature(function).parameters:
        kwargs["advantages"] = advantages
    if "cap" in inspect.signature(function).parameters:
        kwargs["cap"] = 2.0
    return function(**kwargs)


@pytest.mark.parametrize(
    ("function", "name"), FUNCTIONS_WITH_OLD_LOGPROBS, ids=lambda x: getattr(x, "__name__", x)
)
@given(batch=masked_token_batches())
def test_old_logprobs_are_never_modified(function, name, batch):
    logprobs, old_logprobs, advantages, mask = batch
    old = _read_only(old_logprobs)  # any write would raise
    before = old.copy()
    _call(function, name, logprobs, old, advantages, mask)
    np.testing.assert_array_equal(old, before)


@pytest.mark.parametrize(
    ("function", "name"), FUNCTIONS_WITH_OLD_LOGPROBS, ids=lambda x: getattr(x, "__name__", x)
)
def test_old_logprobs_are_used_as_given_and_never_recomputed_from_text(function, name):
    # No function takes text, tokens or a tokenizer from which it could recompute them ...
    parameters = set(inspect.signature(function).parameters)
    assert not parameters & {"text", "texts", "tokens", "tokenizer", "logits"}
    # ... and the result follows the stored numbers: changing them changes it.
    logprobs = np.log([0.5, 0.4, 0.3])
    advantages, mask = np.array([1.0, -1.0, 0.5]), np.ones(3, dtype=bool)
    first = _call(function, name, logprobs, np.log([0.5, 0.4, 0.3]), advantages, mask)
    second = _call(function, name, logprobs, np.log([0.45, 0.4, 0.3]), advantages, mask)
    assert not np.array_equal(np.asarray(first), np.asarray(second))


# --- clip_fractions -------------------------------------------------------------------------------


def test_clip_fractions_by_hand():
    ratio = np.array([1.3, 1.1, 1.25, 0.7, 0.9, 0.5, 5.0])
    advantages = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0])
    assert ppo.clip_fractions(ratio, advantages) == pytest.approx((2 / 3, 2 / 4))
    assert ppo.clip_fractions(ratio, advantages, dual_clip=3.0) == pytest.approx((2 / 3, 3 / 4))
    assert ppo.clip_fractions(ratio, advantages, clip_high=0.28) == pytest.approx((1 / 3, 2 / 4))


def test_clip_fractions_count_a_ratio_on_the_boundary_as_not_clipped():
    assert ppo.clip_fractions([1.2, 0.8], [1.0, -1.0]) == (0.0, 0.0)


def test_a_side_without_tokens_reports_zero():
    assert ppo.clip_fractions([2.0, 3.0], [1.0, 1.0]) == (1.0, 0.0)
    assert ppo.clip_fractions([2.0, 3.0], [1.0, -1.0], mask=[False, True]) == (0.0, 0.0)


@given(batch=masked_token_batches())
def test_clipped_tokens_are_exactly_the_valid_tokens_without_gradient(batch):
    logprobs, old_logprobs, advantages, mask = batch
    ratio = np.exp(logprobs - old_logprobs)
    gradient = ppo.clipped_surrogate_gradient(ratio, advantages, dual_clip=2.5)
    stopped = (gradient == 0.0) & (advantages != 0.0) & mask
    positive, negative = ppo.clip_fractions(ratio, advantages, mask, dual_clip=2.5)
    for side, fraction in ((advantages > 0, positive), (advantages < 0, negative)):
        count = np.sum(side & mask)
        assert fraction == (np.sum(stopped & side) / count if count else 0.0)


# --- value_loss -----------------------------------------------------------------------------------


@pytest.mark.equation("eq-value-loss-clipped")
@given(
    values=hnp.arrays(np.float64, 6, elements=st.floats(-5, 5)),
    returns=hnp.arrays(np.float64, 6, elements=st.floats(-5, 5)),
    old_values=hnp.arrays(np.float64, 6, elements=st.floats(-5, 5)),
    value_clip=st.floats(0.01, 2.0),
)
def test_clipped_value_loss_is_half_the_mean_of_the_larger_error(
    values, returns, old_values, value_clip
):
    expected = 0.0
    for v, g, old in zip(values, returns, old_values, strict=True):
        moved = old + min(max(v - old, -value_clip), value_clip)
        expected += 0.5 * max((v - g) ** 2, (moved - g) ** 2) / len(values)
    got = ppo.value_loss(values, returns, old_values=old_values, value_clip=value_clip)
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert got >= ppo.value_loss(values, returns) - 1e-12  # the clip never lowers the loss


def test_unclipped_value_loss_by_hand_and_with_a_mask():
    assert ppo.value_loss([1.0, 3.0, 10.0], [0.0, 0.0, 0.0], mask=[1, 1, 0]) == 2.5


def test_a_huge_value_clip_is_the_unclipped_loss():
    values, returns, old = np.array([1.0, -2.0]), np.array([0.5, 0.0]), np.array([0.0, 0.0])
    assert ppo.value_loss(values, returns, old_values=old, value_clip=1e6) == ppo.value_loss(
        values, returns
    )


def test_a_prediction_that_moved_past_the_clip_gets_no_gradient_from_the_loss():
    # V_old = 0, target 1, clip 0.2: predictions beyond 0.2 toward the target are not rewarded.
    old, target = np.array([0.0]), np.array([1.0])

    def loss(v):
        return ppo.value_loss(v, target, old_values=old, value_clip=0.2)

    # At v = 0.5 the clipped error (0.2 - 1)² = 0.64 is the larger one, and it is constant in v.
    assert central_differences(loss, np.array([0.5]))[0] == pytest.approx(0.0, abs=1e-9)
    # Inside the clip both errors agree and the derivative is v - G.
    assert central_differences(loss, np.array([0.1]))[0] == pytest.approx(-0.9, rel=1e-6)


# --- ppo_total_loss and the entropy bonus ---------------------------------------------------------


def test_total_loss_by_hand():
    assert ppo.ppo_total_loss(-0.2, 0.5, 1.0, value_coef=0.5, entropy_coef=0.01) == pytest.approx(
        -0.2 + 0.25 - 0.01
    )


def _entropy_after_descent(sign, num_steps=40, lr=10.0):
    """Minimize L = L_policy + c_v L_value + sign * c_H H by gradient descent on the logits.

    The advantages are 0 and the value loss does not depend on the logits, so only the entropy
    term moves the policy: sign = -1 is the bonus (the correct sign), sign = +1 the trap.
    """
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 6))
    tokens = np.array([[0, 2, 5], [1, 1, 3], [4, 0, 2]])
    old = np.log(softmax_rows(logits)[np.arange(3)[:, None], tokens])
    advantages = np.zeros((3, 3))

    def total(theta):
        theta = theta.reshape(logits.shape)
        logprobs = np.log(softmax_rows(theta)[np.arange(3)[:, None], tokens])
        policy = ppo.clipped_policy_loss(logprobs, old, advantages)
        entropy = float(np.mean(categorical_entropy(theta)))
        if sign < 0:
            return ppo.ppo_total_loss(policy, 0.3, entropy, value_coef=0.5, entropy_coef=0.05)
        return policy + 0.5 * 0.3 + 0.05 * entropy  # the sign error, written out

    start = float(np.mean(categorical_entropy(logits)))
    theta = logits.ravel()
    for _ in range(num_steps):
        theta = theta - lr * central_differences(total, theta)
    return start, float(np.mean(categorical_entropy(theta.reshape(logits.shape))))


def test_minimizing_the_total_loss_raises_the_entropy():
    start, end = _entropy_after_descent(sign=-1)
    assert end > start + 0.05


def test_the_wrong_sign_of_the_entropy_term_lowers_the_entropy():
    start, end = _entropy_after_descent(sign=+1)
    assert end < start - 0.05


def test_a_negative_entropy_coefficient_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="entropy bonus into an entropy penalty"):
        ppo.ppo_total_loss(0.0, 0.0, 1.0, value_coef=0.5, entropy_coef=-0.01)


# --- the documented conventions -------------------------------------------------------------------


def test_defaults_are_the_documented_conventions():
    """ε = 0.2 on both sides, no dual clip, token-mean; half the mean squared value error.

    Checked against the trainers' source (the docstrings name them):
    - verl, verl/trainer/ppo/core_algos.py: ``compute_policy_loss_vanilla`` clamps the log-ratio
      to ±20, clips with ``clip_ratio_low`` / ``clip_ratio_high`` (each defaulting to
      ``clip_ratio``), always applies the dual clip ``clip_ratio_c`` (default 3.0, asserted > 1)
      to negative advantages, counts ``pg_clipfrac`` where the clipped loss is strictly larger
      and aggregates with ``loss_agg_mode="token-mean"`` by default; ``compute_value_loss`` takes
      0.5 × the token-mean of max(unclipped, clipped) squared errors. verl's actor subtracts
      ``entropy_coeff`` × the entropy from the policy loss when the coefficient is non-zero.
    - TRL, trl/trainer/ppo_trainer.py (``loss``): one ``cliprange`` on both sides, value loss
      0.5 × masked_mean(max(vf_losses1, vf_losses2)), loss = pg_loss + vf_coef × vf_loss (the
      entropy is only logged). trl/trainer/grpo_config.py: ``epsilon`` (default 0.2),
      ``epsilon_high`` (citing DAPO's 0.28), ``importance_sampling_level`` ("token" or
      "sequence", GSPO), ``vllm_importance_sampling_correction`` and
      ``vllm_importance_sampling_cap`` (default 3.0 at the commit read).
    - OpenRLHF, openrlhf/models/loss.py: ``PolicyLoss`` with ``clip_eps_low`` / ``clip_eps_high``
      (later versions add ``dual_clip``), ``ValueLoss`` clipping only when given ``clip_eps``,
      0.5 × the masked mean.
    - OpenAI baselines, ppo2/model.py: vf_loss = 0.5 × mean(max(vf_losses1, vf_losses2)) and
      loss = pg_loss - entropy × ent_coef + vf_loss × vf_coef.
    """
    defaults = inspect.signature(ppo.clipped_surrogate).parameters
    assert defaults["clip_low"].default == 0.2
    assert defaults["clip_high"].default is None and defaults["dual_clip"].default is None
    assert ppo.clipped_surrogate([1.5, 0.5], [1.0, -1.0]).tolist() == pytest.approx([1.2, -0.8])
    # token-mean: two sequences of different lengths, every valid token weighs the same
    lp = np.log([[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]])
    advantages = np.array([[1.0, 1.0, 1.0], [4.0, 0.0, 0.0]])
    mask = np.array([[1, 1, 1], [1, 0, 0]], dtype=bool)
    assert ppo.clipped_policy_loss(lp, lp, advantages, mask) == pytest.approx(-(3 + 4) / 4)
    assert ppo.value_loss([2.0], [0.0]) == 2.0  # half the squared error


# --- value_loss with a loss aggregation mode --------------------------------------------------

AGG_VALUES = np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 3.0], [9.0, 9.0, 9.0]])
AGG_RETURNS = np.array([[0.0, 1.0, 5.0], [1.5, 1.0, 0.0], [0.0, 0.0, 0.0]])
AGG_MASK = np.array([[1, 1, 0], [1, 1, 1], [0, 0, 0]], dtype=bool)  # the last row is empty


def _verl_agg(errors, mask, mode):
    """verl's agg_loss (core_algos.py at b178a3c) with dp_size 1, by loops over the rows."""
    rows = [
        [e for e, m in zip(er, mr, strict=True) if m] for er, mr in zip(errors, mask, strict=True)
    ]
    non_empty = [row for row in rows if row]
    if mode == "token-mean":
        return sum(sum(row) for row in rows) / sum(len(row) for row in rows)
    if mode == "seq-mean-token-mean":
        return sum(sum(row) / len(row) for row in non_empty) / len(non_empty)
    if mode == "seq-mean-token-sum":
        return sum(sum(row) for row in non_empty) / len(non_empty)
    return sum(sum(row) for row in rows) / errors.shape[-1]  # "seq-mean-token-sum-norm"


@pytest.mark.parametrize(
    ("mode", "extra"),
    [
        ("token-mean", {}),
        ("seq-mean-token-mean", {"empty_rows": "skip"}),
        ("seq-mean-token-sum", {"empty_rows": "skip"}),
        ("seq-mean-token-sum-norm", {"max_length": 3}),
    ],
)
def test_value_loss_modes_equal_verls_agg_loss(mode, extra):
    errors = (AGG_VALUES - AGG_RETURNS) ** 2
    expected = 0.5 * _verl_agg(errors, AGG_MASK, mode)
    got = ppo.value_loss(AGG_VALUES, AGG_RETURNS, AGG_MASK, mode=mode, **extra)
    assert got == pytest.approx(expected, rel=1e-14)


def test_value_loss_sequence_mode_counts_or_skips_the_empty_row():
    errors = (AGG_VALUES - AGG_RETURNS) ** 2
    first, second = errors[0, :2].mean(), errors[1].mean()
    counted = ppo.value_loss(AGG_VALUES, AGG_RETURNS, AGG_MASK, mode="seq-mean-token-mean")
    skipped = ppo.value_loss(
        AGG_VALUES, AGG_RETURNS, AGG_MASK, mode="seq-mean-token-mean", empty_rows="skip"
    )
    assert counted == pytest.approx(0.5 * (first + second) / 3, rel=1e-14)
    assert skipped == pytest.approx(0.5 * (first + second) / 2, rel=1e-14)


def test_value_loss_clip_then_aggregate():
    old = AGG_VALUES - 0.5
    clipped = np.maximum(
        (AGG_VALUES - AGG_RETURNS) ** 2,
        (old + np.clip(AGG_VALUES - old, -0.1, 0.1) - AGG_RETURNS) ** 2,
    )
    expected = 0.5 * _verl_agg(clipped, AGG_MASK, "seq-mean-token-mean")
    got = ppo.value_loss(
        AGG_VALUES,
        AGG_RETURNS,
        AGG_MASK,
        old_values=old,
        value_clip=0.1,
        mode="seq-mean-token-mean",
        empty_rows="skip",
    )
    assert got == pytest.approx(expected, rel=1e-14)
