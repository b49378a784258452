"""PPO's clipped surrogate, its gradient, the value loss, the entropy bonus and clip fractions.

PPO reuses one batch of sampled tokens for several gradient steps. Each token carries the
ratio ρ = π_θ / π_old of its probability under the current policy to its probability under
the policy version that sampled it (computed from ``logprobs`` and ``old_logprobs``), and an
advantage estimate A. The clipped surrogate min(ρA, clip(ρ, 1 - ε_low, 1 + ε_high) A) is the
per-token objective PPO maximizes; a trainer minimizes its negative, averaged over the valid
tokens, together with a value loss and minus an entropy bonus.

Every function takes the ratio (or the two log-probabilities) as input and never changes
``old_logprobs``: they belong to the policy that sampled the tokens.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    as_float_array,
    as_float_array_like,
    check_clip_ranges,
    check_logprobs,
    check_nonnegative_real,
    check_optional_mask,
    check_positive_entries,
    check_positive_real,
    check_shape,
    finite_output,
)
from rlfound.reduction import aggregate_loss

__all__ = [
    "clip_fractions",
    "clipped_policy_loss",
    "clipped_policy_loss_gradient",
    "clipped_surrogate",
    "clipped_surrogate_gradient",
    "ppo_total_loss",
    "value_loss",
]


# --- checks shared by the functions of this module ---------------------------------------------


def _check_ratio_and_advantages(ratio: ArrayLike, advantages: ArrayLike):
    """Positive finite ratios (at least 1-D) and finite advantages of exactly their shape."""
    ratio = as_float_array(ratio, "ratio", min_ndim=1)
    check_positive_entries(ratio, "ratio", " (a ratio of two probabilities)")
    advantages = as_float_array_like(
        advantages, "advantages", ratio.shape, "ratio"
    )
    return ratio, advantages


def _check_token_batch(logprobs, old_logprobs, advantages, mask):
    """log π_θ and log π_old (entries <= 0), advantages and a mask, all of one shape (..., L)."""
    logprobs = check_logprobs(logprobs, "logprobs")
    old_logprobs = check_logprobs(old_logprobs, "old_logprobs")
    check_shape(
        old_logprobs, "old_logprobs", logprobs.shape, "the shape of logprobs"
    )
    advantages = as_float_array_like(
        advantages, "advantages", logprobs.shape, "logprobs"
    )
    mask = check_optional_mask(mask, "mask", logprobs.shape)
    if not mask.any():
        raise ValueError(
            f"mask must select at least one token; got none of {mask.size}"
        )
    return logprobs, old_logprobs, advantages, mask


def _unclipped(ratio, advantages, clip_low, clip_high, dual_clip):
    """Where the objective is ρA itself (the gradient flows), as a bool array.

    A > 0: ρ <= 1 + ε_high. A < 0: ρ >= 1 - ε_low, and ρ <= c_dual with a dual clip. A = 0: the
    objective is 0 whatever ρ, so there is nothing to clip. A ratio exactly on a boundary
    counts as inside (the convention of the gradient below).
    """
    positive, negative = advantages > 0.0, advantages < 0.0
    inside = np.ones(ratio.shape, dtype=bool)
    inside[positive] = ratio[positive] <= 1.0 + clip_high
    below = ratio[negative] >= 1.0 - clip_low
    if dual_clip is not None:
        below &= ratio[negative] <= dual_clip
    inside[negative] = below
    return inside


# --- the surrogate and its gradient -------------------------------------------------------------


@finite_output()
def clipped_surrogate(
    ratio: ArrayLike,
    advantages: ArrayLike,
    clip_low: float = 0.2,
    clip_high: float | None = None,
    dual_clip: float | None = None,
) -> np.ndarray:
    """PPO's clipped surrogate objective of every token (to be maximized).

        L(ρ, A) = min(ρ A, clip(ρ, 1 - ε_low, 1 + ε_high) A),

    and, with a dual clip c_dual > 1, max(L(ρ, A), c_dual A) where A < 0. For A > 0 it equals
    min(ρ, 1 + ε_high) A: pushing the ratio above 1 + ε_high earns nothing more. For A < 0 it
    equals max(ρ, 1 - ε_low) A: pushing the ratio below 1 - ε_low earns nothing more, but a
    ratio that has grown large makes the loss grow without bound, which the dual clip caps at
    c_dual A (Ye et al., 2020).

    Conventions (trainers differ): ``clip_high=None`` uses ε_low on both sides, as PPO
    (Schulman et al., 2017) and TRL's PPO trainer do; a larger ``clip_high`` is DAPO's
    "clip-higher" (Yu et al., 2025, who use 0.2 and 0.28), available as ``clip_ratio_low`` /
    ``clip_ratio_high`` in verl, ``epsilon`` / ``epsilon_high`` in TRL's GRPO trainer and
    ``eps_clip_low_high`` in OpenRLHF. Here the dual clip is off unless given, and that
    default differs from verl's: checked in volcengine/verl at commit
    b178a3cd56f58b2d502255daba591e92833930a7, its ``vanilla`` policy loss
    (``compute_policy_loss_vanilla`` in ``verl/trainer/ppo/core_algos.py``) always applies
    the dual clip for A < 0 with ``clip_ratio_c`` (default 3.0, asserted > 1; there is no
    setting that turns it off), so verl's default equals ``dual_clip=3.0`` here. It also
    clamps log ρ to [-20, 20] before the exponential, which changes nothing for ratios
    in [2e-9, 4.8e8]. OpenRLHF's ``PolicyLoss`` (``openrlhf/models/loss.py``,
    OpenRLHF/OpenRLHF at commit 3c3be6234e0cb353e76bb8019947db9dfe99fca7) applies one
    only when given ``dual_clip``. TRL's GRPO trainer's ``delta`` (``GRPOConfig``,
    huggingface/trl at commit f2cd57710ae345ea6428ae95363267fcf38a3dc8) caps the unclipped
    ratio at δ, min(ρ, δ) A; for A < 0 and δ > 1 + ε_high that is the dual clip with
    c_dual = δ, and for A > 0 the upper clip already binds, so it equals ``dual_clip=delta``.

    Book: equations (eq-ppo-clip) and (eq-dual-clip), chapter 5.

    Parameters
    ----------
    ratio : array_like, shape (...)
        Importance ratios ρ = π_θ / π_old of the sampled tokens, > 0, at least 1-D.
    advantages : array_like, shape (...)
        Advantage estimates A, of the shape of ``ratio``.
    clip_low : float, optional
        ε_low in [0, 1): the ratio's lower clip is 1 - ε_low. Default: 0.2.
    clip_high : float or None, optional
        ε_high >= 0: the upper clip is 1 + ε_high. Default: None (= ``clip_low``).
    dual_clip : float or None, optional
        c_dual > 1: for A < 0 the objective is at least c_dual A. Default: None (no dual clip).

    Returns
    -------
    numpy.ndarray
        The objective of every token, with the shape of ``ratio``.

    Raises
    ------
    ValueError
        If ``ratio`` has an entry <= 0 or is not finite, ``advantages`` does not have its
        shape, ``clip_low`` is not in [0, 1), ``clip_high`` is negative, or ``dual_clip`` is
        not > 1.

    References
    ----------
    J. Schulman, F. Wolski, P. Dhariwal, A. Radford and O. Klimov, "Proximal policy
    optimization algorithms", arXiv:1707.06347, 2017.
    D. Ye et al., "Mastering complex control in MOBA games with deep reinforcement
    learning", AAAI, 2020.
    Q. Yu et al., "DAPO: an open-source LLM reinforcement learning system at scale",
    arXiv:2503.14476, 2025.

    Examples
    --------
    >>> clipped_surrogate([0.5, 1.1, 1.5, 1.5], [1.0, 1.0, 1.0, -1.0])
    array([ 0.5,  1.1,  1.2, -1.5])
    >>> clipped_surrogate([5.0], [-1.0], dual_clip=3.0)
    array([-3.])
    """
    ratio, advantages = _check_ratio_and_advantages(ratio, advantages)
    clip_low, clip_high, dual_clip = check_clip_ranges(
        clip_low, clip_high, dual_clip
    )

    clipped_ratio = np.clip(ratio, 1.0 - clip_low, 1.0 + clip_high)
    objective = np.minimum(ratio * advantages, clipped_ratio * advantages)
    if dual_clip is not None:
        # Only negative advantages are bounded from below; max(., cA) would
        # cap A > 0 too.
        objective = np.where(
            advantages < 0.0,
            np.maximum(objective, dual_clip * advantages),
            objective,
        )
    return objective


@finite_output()
def clipped_surrogate_gradient(
    ratio: ArrayLike,
    advantages: ArrayLike,
    clip_low: float = 0.2,
    clip_high: float | None = None,
    dual_clip: float | None = None,
) -> np.ndarray:
    """Derivative of the clipped surrogate of each token with respect to its log-ratio.

        ∂L/∂ log ρ = ρ A   where the objective is ρ A
                           (the ratio is inside its clip),
                   = 0     where a clip is active:
                           A > 0 and ρ > 1 + ε_high;
                           A < 0 and ρ < 1 - ε_low;
                           A < 0 and ρ > c_dual (with a dual clip).

    Since log ρ = log π_θ - log π_old and π_old is fixed, this is also the derivative with
    respect to the token's log π_θ; the chain rule through ∇_θ log π_θ then gives the policy
    update. At ρ = 1 it is A: the surrogate's gradient is the policy-gradient estimate.

    Convention at the kinks: the objective is continuous but not differentiable where ρ
    equals a clip boundary (1 - ε_low, 1 + ε_high or c_dual) and the advantage has the matching
    sign. There this function returns the derivative from the inside of the clip range,
    ρ A, so a ratio exactly on a boundary still contributes its gradient; this matches the
    clip fractions of :func:`clip_fractions`, which count a token as clipped only when its
    ratio lies strictly beyond the boundary.

    Book: equation (eq-clip-gradient), chapter 5.

    Parameters
    ----------
    ratio, advantages, clip_low, clip_high, dual_clip
        As in :func:`clipped_surrogate`.

    Returns
    -------
    numpy.ndarray
        ∂L/∂ log ρ of every token, with the shape of ``ratio``.

    Raises
    ------
    ValueError
        As :func:`clipped_surrogate`.

    References
    ----------
    J. Schulman et al., "Proximal policy optimization algorithms", arXiv:1707.06347, 2017.

    Examples
    --------
    >>> clipped_surrogate_gradient([0.5, 1.1, 1.5, 1.5], [1.0, 1.0, 1.0, -1.0])
    array([ 0.5,  1.1,  0. , -1.5])
    """
    ratio, advantages = _check_ratio_and_advantages(ratio, advantages)
    clip_low, clip_high, dual_clip = check_clip_ranges(
        clip_low, clip_high, dual_clip
    )

    inside = _unclipped(ratio, advantages, clip_low, clip_high, dual_clip)
    return np.where(inside, ratio * advantages, 0.0)


# --- the loss a trainer minimizes ----------------------------------------------------------------


@finite_output()
def clipped_policy_loss(
    logprobs: ArrayLike,
    old_logprobs: ArrayLike,
    advantages: ArrayLike,
    mask: ArrayLike | None = None,
    clip_low: float = 0.2,
    clip_high: float | None = None,
    dual_clip: float | None = None,
) -> float:
    """PPO's policy loss: minus the clipped surrogate, averaged over the valid tokens.

        loss(θ) = -(1 / Σ m_j) Σ_j m_j L(ρ_j, A_j),
        ρ_j = exp(log π_θ(x_j) - log π_old(x_j)),

    with L of :func:`clipped_surrogate`. The average over all valid tokens of the batch
    ("token-mean") is verl's default ``loss_agg_mode`` and the masked mean of TRL's PPO
    trainer; other trainers average per sequence first or divide by a constant, which weights
    tokens of long and short responses differently. Chapter 8 compares the reductions; this
    function keeps the simplest one.

    ``old_logprobs`` are read, never written, and must be the values stored when the tokens
    were sampled: recomputing them from decoded text can change the tokenization and every
    ratio (chapter 5).

    Book: equation (eq-ppo-clip), chapter 5.

    Parameters
    ----------
    logprobs : array_like, shape (..., L)
        log π_θ of the sampled tokens under the current policy; entries <= 0.
    old_logprobs : array_like, shape (..., L)
        log π_old of the same tokens, from the policy version that sampled them.
    advantages : array_like, shape (..., L)
        Advantage estimate of every token.
    mask : array_like of bool or 0/1, shape (..., L), optional
        Which positions count (tokens the policy generated). Default: all. At least one.
    clip_low, clip_high, dual_clip
        As in :func:`clipped_surrogate`.

    Returns
    -------
    float
        The loss.

    Raises
    ------
    ValueError
        If a log-probability is > 0 or not finite, the arrays differ in shape, ``mask`` is
        not a bool or 0/1 array of their shape or selects no token, or a clip range is
        invalid (as in :func:`clipped_surrogate`).

    References
    ----------
    J. Schulman et al., "Proximal policy optimization algorithms", arXiv:1707.06347, 2017.

    Examples
    --------
    >>> lp, old = np.log([0.6, 0.3, 0.5]), np.log([0.4, 0.5, 0.5])
    >>> loss = clipped_policy_loss(lp, old, advantages=[1.0, -1.0, 7.0], mask=[1, 1, 0])
    >>> round(loss, 12)  # ratios 1.5 and 0.6 are clipped to 1.2 and 0.8: -(1.2 - 0.8) / 2
    -0.2
    """
    logprobs, old_logprobs, advantages, mask = _check_token_batch(
        logprobs, old_logprobs, advantages, mask
    )
    clip_low, clip_high, dual_clip = check_clip_ranges(
        clip_low, clip_high, dual_clip
    )

    ratio = np.exp(logprobs - old_logprobs)
    objective = clipped_surrogate(
        ratio, advantages, clip_low, clip_high, dual_clip
    )
    return float(-np.sum(objective[mask]) / np.sum(mask))


@finite_output()
def clipped_policy_loss_gradient(
    logprobs: ArrayLike,
    old_logprobs: ArrayLike,
    advantages: ArrayLike,
    mask: ArrayLike | None = None,
    clip_low: float = 0.2,
    clip_high: float | None = None,
    dual_clip: float | None = None,
) -> np.ndarray:
    """Gradient of :func:`clipped_policy_loss` with respect to ``logprobs``.

        ∂loss/∂ log π_θ(x_j) = -m_j (∂L/∂ log ρ_j) / Σ_k m_k,

    with ∂L/∂ log ρ from :func:`clipped_surrogate_gradient` (and its convention at the kinks).
    Multiplying by the score ∇_θ log π_θ(x_j) of each token and summing gives the gradient with
    respect to the policy's parameters. Masked positions get exactly 0.

    Book: equation (eq-clip-gradient), chapter 5.

    Parameters
    ----------
    logprobs, old_logprobs, advantages, mask, clip_low, clip_high, dual_clip
        As in :func:`clipped_policy_loss`.

    Returns
    -------
    numpy.ndarray, shape (..., L)
        The gradient.

    Raises
    ------
    ValueError
        As :func:`clipped_policy_loss`.

    References
    ----------
    J. Schulman et al., "Proximal policy optimization algorithms", arXiv:1707.06347, 2017.

    Examples
    --------
    At θ = θ_old every ratio is 1 and the gradient is minus the advantages over the count:

    >>> lp = np.log([0.6, 0.3, 0.5])
    >>> clipped_policy_loss_gradient(lp, lp, advantages=[1.0, -1.0, 7.0], mask=[1, 1, 0])
    array([-0.5,  0.5,  0. ])
    """
    logprobs, old_logprobs, advantages, mask = _check_token_batch(
        logprobs, old_logprobs, advantages, mask
    )
    clip_low, clip_high, dual_clip = check_clip_ranges(
        clip_low, clip_high, dual_clip
    )

    ratio = np.exp(logprobs - old_logprobs)
    slope = clipped_surrogate_gradient(
        ratio, advantages, clip_low, clip_high, dual_clip
    )
    return np.where(mask, -slope / np.sum(mask), 0.0)


@finite_output()
def clip_fractions(
    ratio: ArrayLike,
    advantages: ArrayLike,
    mask: ArrayLike | None = None,
    clip_low: float = 0.2,
    clip_high: float | None = None,
    dual_clip: float | None = None,
) -> tuple[float, float]:
    """Fractions of clipped tokens, separately for positive and negative advantages.

        f_+ = #{j valid: A_j > 0, ρ_j > 1 + ε_high} / #{j valid: A_j > 0},
        f_- = #{j valid: A_j < 0, ρ_j < 1 - ε_low or ρ_j > c_dual}
              / #{j valid: A_j < 0}.

    A clipped token contributes no gradient (:func:`clipped_surrogate_gradient`). The two
    sides mean different things: f_+ counts tokens the update already made more likely than
    the clip allows, f_- tokens it made less likely (or, with a dual clip, much more likely
    although their advantage is negative). A single pooled fraction hides which side is
    saturating. A side with no valid token reports 0.0. (verl reports ``pg_clipfrac`` over
    all valid tokens and ``pg_clipfrac_lower`` for the dual clip; these are normalized by
    the number of tokens of each sign instead.)

    Book: equation (eq-clip-gradient), chapter 5.

    Parameters
    ----------
    ratio : array_like, shape (..., L)
        Importance ratios ρ > 0.
    advantages : array_like, shape (..., L)
        Advantage estimates, of the shape of ``ratio``.
    mask : array_like of bool or 0/1, shape (..., L), optional
        Which positions count. Default: all.
    clip_low, clip_high, dual_clip
        As in :func:`clipped_surrogate`.

    Returns
    -------
    positive : float
        f_+, in [0, 1].
    negative : float
        f_-, in [0, 1].

    Raises
    ------
    ValueError
        As :func:`clipped_surrogate`, and if ``mask`` is not a bool or 0/1 array of the
        shape of ``ratio``.

    References
    ----------
    J. Schulman et al., "Proximal policy optimization algorithms", arXiv:1707.06347, 2017.

    Examples
    --------
    >>> clip_fractions([1.3, 1.1, 0.7, 0.9], [1.0, 1.0, -1.0, -1.0])
    (0.5, 0.5)
    """
    ratio, advantages = _check_ratio_and_advantages(ratio, advantages)
    mask = check_optional_mask(mask, "mask", ratio.shape)
    clip_low, clip_high, dual_clip = check_clip_ranges(
        clip_low, clip_high, dual_clip
    )

    clipped = ~_unclipped(ratio, advantages, clip_low, clip_high, dual_clip)
    fractions = []
    for side in (advantages > 0.0, advantages < 0.0):
        count = np.sum(side & mask)
        fractions.append(
            float(np.sum(clipped & side & mask) / count) if count else 0.0
        )
    return fractions[0], fractions[1]


@finite_output()
def value_loss(
    values: ArrayLike,
    returns: ArrayLike,
    mask: ArrayLike | None = None,
    old_values: ArrayLike | None = None,
    value_clip: float | None = None,
    mode: str = "token-mean",
    max_length: int | None = None,
    empty_rows: str = "count",
) -> float:
    """The critic's loss: half the mean squared error, optionally clipped as in PPO2.

        unclipped:  (1/2) mean_j m_j (V_j - G_j)²,
        clipped:    (1/2) mean_j m_j max((V_j - G_j)², (Ṽ_j - G_j)²),
                    Ṽ_j = V_old,j + clip(V_j - V_old,j, -ε_v, ε_v),

    where "mean" is the token mean by default and, with ``mode``, any loss aggregation of
    :func:`rlfound.reduction.aggregate_loss` applied to the per-token squared errors (then
    the arrays are (B, L), a batch of sequences),

    where V are the critic's current predictions, G the value targets (returns, such as
    Â + V_old from GAE), V_old the predictions stored with the batch and ε_v the value clip.
    Taking the larger of the two errors keeps the new prediction from profiting by moving
    more than ε_v away from V_old, a pessimistic bound like the policy's clip. The clipped
    form is the one of OpenAI's PPO2 baselines; TRL's PPO trainer and verl's
    ``compute_value_loss`` use it (``cliprange_value``), OpenRLHF's ``ValueLoss`` clips only
    when given a clip range. All three take half the aggregated squared error, as here.

    Checked in the trainers' code: verl's ``compute_value_loss``
    (``verl/trainer/ppo/core_algos.py``, volcengine/verl at commit
    b178a3cd56f58b2d502255daba591e92833930a7) aggregates with ``agg_loss`` and the critic's
    ``loss_agg_mode`` (``mode`` here, same names); OpenRLHF's ``ValueLoss``
    (``openrlhf/models/loss.py``, OpenRLHF/OpenRLHF at commit
    3c3be6234e0cb353e76bb8019947db9dfe99fca7) takes ``token_level_loss``: True is
    "token-mean", False is "seq-mean-token-mean" with ``empty_rows="skip"`` (fully masked
    sequences are excluded). Stable-Baselines3's ``PPO.train``
    (``stable_baselines3/ppo/ppo.py``, commit e05d2dbe6eda0acd0ef2e316e3e4065677add3eb)
    uses ``F.mse_loss``, twice the unclipped loss here, and with ``clip_range_vf`` it
    takes the error of the clipped prediction alone, without the max: that form is not
    this function's.

    Book: equation (eq-value-loss-clipped), chapter 5.

    Parameters
    ----------
    values : array_like, shape (..., L)
        Current value predictions V.
    returns : array_like, shape (..., L)
        Value targets G.
    mask : array_like of bool or 0/1, shape (..., L), optional
        Which positions count. Default: all. At least one.
    old_values : array_like, shape (..., L), optional
        Predictions stored with the batch, V_old; required when ``value_clip`` is given.
    value_clip : float or None, optional
        ε_v > 0; None (the default) gives the unclipped loss.
    mode : str, optional
        How the per-token squared errors are reduced: one of
        :data:`rlfound.reduction.MODES`; default "token-mean", which accepts any shape
        (..., L). The other modes need 2-D arrays.
    max_length, empty_rows
        As for :func:`rlfound.reduction.aggregate_loss`; used by the modes that need them.

    Returns
    -------
    float
        The loss.

    Raises
    ------
    ValueError
        If an array is not finite or differs in shape from ``values``, ``mask`` is not a bool
        or 0/1 array of that shape or selects nothing, ``value_clip`` is not a positive finite
        number, or ``value_clip`` is given without ``old_values``; or, as for
        :func:`rlfound.reduction.aggregate_loss`, ``mode``, ``max_length`` or
        ``empty_rows`` is not valid (a mode other than "token-mean" also needs 2-D arrays).

    References
    ----------
    J. Schulman et al., "Proximal policy optimization algorithms", arXiv:1707.06347, 2017.
    L. Engstrom, A. Ilyas, S. Santurkar, D. Tsipras, F. Janoos, L. Rudolph and A. Madry,
    "Implementation matters in deep policy gradients: a case study on PPO and TRPO",
    ICLR, 2020.

    Examples
    --------
    >>> value_loss([1.0, 3.0], returns=[0.0, 0.0])  # (1 + 9) / 2 / 2
    2.5
    >>> value_loss([1.0, 3.0], returns=[0.0, 0.0], old_values=[0.0, 2.0], value_clip=0.5)
    2.5
    >>> value_loss([0.0], returns=[1.0], old_values=[2.0], value_clip=0.5)  # max(1, 0.5²) / 2
    0.5

    Two sequences of 1 and 2 tokens: the token mean weighs tokens, the sequence mean rows.

    >>> values, returns, mask = [[2.0, 0.0], [1.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]], [[1, 0], [1, 1]]
    >>> value_loss(values, returns, mask)  # (4 + 1 + 1) / 3 / 2
    1.0
    >>> value_loss(values, returns, mask, mode="seq-mean-token-mean")  # (4 + 1) / 2 / 2
    1.25
    """
    values = as_float_array(values, "values", min_ndim=1)
    returns = as_float_array_like(returns, "returns", values.shape, "values")
    mask = check_optional_mask(mask, "mask", values.shape)
    if not mask.any():
        raise ValueError(
            f"mask must select at least one value; got none of {mask.size}"
        )
    if old_values is not None:
        old_values = as_float_array_like(
            old_values, "old_values", values.shape, "values"
        )
    if value_clip is not None:
        value_clip = check_positive_real(value_clip, "value_clip")
        if old_values is None:
            raise ValueError(
                "old_values must be given when value_clip is set (the clip "
                "is around the stored predictions); got None"
            )

    squared_error = (values - returns) ** 2
    if value_clip is not None:
        moved = old_values + np.clip(
            values - old_values, -value_clip, value_clip
        )
        squared_error = np.maximum(squared_error, (moved - returns) ** 2)
    if squared_error.ndim != 2:
        if mode != "token-mean":
            raise ValueError(
                "mode must be 'token-mean' for values of shape "
                f"{values.shape}; the other aggregations need a 2-D (B, L) "
                f"batch of sequences; got {mode!r}"
            )
        # One row holding every position: its token mean is the token mean of
        # the array.
        squared_error, mask = (
            squared_error.reshape(1, -1),
            mask.reshape(1, -1),
        )
    squared_error = np.where(mask, squared_error, 0.0)
    return 0.5 * aggregate_loss(
        squared_error, mask, mode, max_length, empty_rows
    )


@finite_output()
def ppo_total_loss(
    policy_loss: float,
    value_loss: float,
    entropy: float,
    value_coef: float,
    entropy_coef: float,
) -> float:
    """The combined loss a PPO trainer minimizes: policy loss, value loss, minus entropy.

        L = L_policy + c_v L_value - c_H H.

    The signs are the trap. A trainer *minimizes* L, so the entropy bonus enters with a minus
    sign: lowering L raises H. Writing + c_H H (or passing a negative c_H) turns the bonus into
    an entropy penalty that drives the policy toward determinism. Both coefficients must
    therefore be >= 0 here. Trainers differ in what they include: TRL's PPO trainer adds the
    value loss and only logs the entropy; verl adds an entropy term when its ``entropy_coeff``
    is non-zero; the defaults differ between versions, so none is set here.

    Book: equation (eq-ppo-total-loss), chapter 5.

    Parameters
    ----------
    policy_loss : float
        L_policy, e.g. from :func:`clipped_policy_loss`.
    value_loss : float
        L_value, e.g. from :func:`value_loss` (a name shadowed here by the number).
    entropy : float
        H, the mean entropy of the policy's next-token distributions over the valid
        positions (:func:`rlfound.entropy.categorical_entropy`); >= 0.
    value_coef : float
        c_v >= 0.
    entropy_coef : float
        c_H >= 0.

    Returns
    -------
    float
        L.

    Raises
    ------
    ValueError
        If a loss is not a finite real number, ``entropy`` is negative, or a coefficient is
        negative or not finite.

    References
    ----------
    J. Schulman et al., "Proximal policy optimization algorithms", arXiv:1707.06347, 2017,
    equation (9).

    Examples
    --------
    >>> ppo_total_loss(policy_loss=-0.2, value_loss=0.5, entropy=1.0, value_coef=0.5,
    ...                entropy_coef=0.01)
    0.04
    """
    policy_loss = _finite_real(policy_loss, "policy_loss")
    value_loss = _finite_real(value_loss, "value_loss")
    entropy = check_nonnegative_real(entropy, "entropy")
    value_coef = check_nonnegative_real(value_coef, "value_coef")
    entropy_coef = _finite_real(entropy_coef, "entropy_coef")
    if entropy_coef < 0.0:
        raise ValueError(
            "entropy_coef must be a non-negative finite number; got "
            f"{entropy_coef!r} (a negative coefficient turns the entropy "
            "bonus into an entropy penalty)"
        )

    return policy_loss + value_coef * value_loss - entropy_coef * entropy


def _finite_real(x: float, name: str) -> float:
    """A finite real scalar (a loss may be negative)."""
    array = as_float_array(x, name, ndim=0)
    return float(array)
