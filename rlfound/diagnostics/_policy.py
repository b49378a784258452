"""Ratio, KL, effective-sample-size and lag diagnostics of the policy that sampled."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rlfound import importance, kl
from rlfound._validation import (
    check_choice,
    check_indices,
    check_nonnegative_int,
    check_optional_mask,
    finite_output,
    raise_first,
)

from ._common import (
    _LABEL_LIMIT,
    _log_ratios,
    _quantile_levels,
    _selected,
    _token_pair,
)

#: The KL estimators of :mod:`rlfound.kl`, by name.
ESTIMATORS = {"k1": kl.k1, "k2": kl.k2, "k3": kl.k3}
#: How :func:`approximate_kl` reduces per-token estimates to one number.
KL_REDUCTIONS = ("token", "sequence")
#: Token ratios, or the ratio of each whole sequence (row).
RATIO_LEVELS = ("token", "sequence")


# --- ratios and divergences --------------------------------------------------------------------


@finite_output()
def log_ratio_summary(
    logprobs: ArrayLike,
    old_logprobs: ArrayLike,
    mask: ArrayLike | None = None,
    quantiles: ArrayLike = (0.01, 0.5, 0.99),
    level: str = "token",
) -> tuple[float, float, np.ndarray]:
    """Mean, largest magnitude and quantiles of the log-ratios log π - log μ.

        token:     d_j = log π(x_j) - log μ(x_j) for every selected token j,
        sequence:  d_i = Σ_j m_ij (log π(x_ij) - log μ(x_ij))
                   for every row i with a token,

    summarized by their mean, max |d| and quantiles. Under μ a ratio e^{d} has mean 1, so
    E_μ[d] = -KL(μ ‖ π) <= 0: the mean token log-ratio is minus the k1 estimate of the
    divergence of the current policy from the sampler. The tails say more than the mean: a
    few tokens with |d| of several nats are what clipping silently discards, and a sequence
    log-ratio of ten nats is a response weighted twenty thousand times more (or less) than
    the sampler weighted it.

    Book: equation (eq-diag-log-ratio), chapter 12.

    Parameters
    ----------
    logprobs : array_like, shape (..., L)
        log π of each sampled token under the current policy (<= 0).
    old_logprobs : array_like, shape (..., L)
        log μ of the same tokens, recorded by the sampler (<= 0).
    mask : array_like of bool or 0/1, shape (..., L), optional
        Which tokens count. Default: all. At least one.
    quantiles : array_like, shape (Q,), optional
        Levels in [0, 1]. Default (0.01, 0.5, 0.99).
    level : {"token", "sequence"}, optional
        Default "token".

    Returns
    -------
    mean : float
        The mean log-ratio.
    max_abs : float
        The largest |d|.
    values : numpy.ndarray, shape (Q,)
        The quantiles of d at the given levels (NumPy's default linear interpolation).

    Raises
    ------
    ValueError
        If a log-probability is positive or not finite, the shapes differ, ``mask`` does not
        have their shape, is not 0/1 or selects nothing, a level is outside [0, 1], or
        ``level`` is not one of its choices.

    Notes
    -----
    verl logs ``actor/ppo_kl`` as the masked mean of ``old_log_prob - log_prob`` (minus the
    mean here; ``compute_policy_loss`` in ``verl/trainer/ppo/core_algos.py``), TRL's PPO
    trainer the mean ratio ``val/ratio`` and its variance (documentation, "Logging").

    Examples
    --------
    >>> mean, max_abs, q = log_ratio_summary(np.log([0.5, 0.2, 0.9]), np.log([0.5, 0.4, 0.3]),
    ...                                      quantiles=[0.0, 1.0])
    >>> round(mean, 6), round(max_abs, 6), q.round(6)
    (0.135155, 1.098612, array([-0.693147,  1.098612]))
    """
    logprobs, old_logprobs, mask = _token_pair(logprobs, old_logprobs, mask)
    levels = _quantile_levels(quantiles)
    level = check_choice(level, "level", RATIO_LEVELS)

    log_ratio = _log_ratios(logprobs, old_logprobs, mask, level)
    return (
        float(log_ratio.mean()),
        float(np.abs(log_ratio).max()),
        np.quantile(log_ratio, levels).astype(np.float64),
    )


@finite_output()
def approximate_kl(
    logprobs: ArrayLike,
    ref_logprobs: ArrayLike,
    mask: ArrayLike | None = None,
    estimator: str = "k3",
    reduce: str = "token",
) -> float:
    """A sampled estimate of KL(p ‖ q) from the tokens p sampled, with the estimator named.

        token:     Σ_ij m_ij k(x_ij) / Σ_ij m_ij,
        sequence:  (1/B') Σ_i Σ_j m_ij k(x_ij)
                   over the B' rows with at least one token,

    with k one of Schulman's estimators :func:`rlfound.kl.k1`, :func:`~rlfound.kl.k2`,
    :func:`~rlfound.kl.k3` of the log-ratio log p(x) - log q(x). The direction is fixed by
    who sampled the tokens: ``logprobs`` must be the log-probabilities under the policy p
    that generated them. In a batch the sampler is the behavior policy μ, so

    - KL to the old policy (the drift since sampling): p = μ (``old_logprobs``), q = π (the
      current ``logprobs``), which estimates KL(μ ‖ π);
    - KL to the reference: p = μ, q = π_ref, which estimates KL(μ ‖ π_ref) (for KL(π ‖
      π_ref) weight by π/μ with :func:`rlfound.kl.importance_weighted_kl`).

    The token reduction is the per-token divergence trainers log; the sequence reduction is
    the divergence between whole responses, which grows with their length.

    Book: equation (eq-diag-kl), chapter 12.

    Parameters
    ----------
    logprobs : array_like, shape (..., L)
        log p of each token, under the policy that sampled it (<= 0).
    ref_logprobs : array_like, shape (..., L)
        log q of the same tokens (<= 0).
    mask : array_like of bool or 0/1, shape (..., L), optional
        Which tokens count. Default: all. At least one.
    estimator : {"k1", "k2", "k3"}, optional
        Default "k3" (unbiased and never negative).
    reduce : {"token", "sequence"}, optional
        Default "token".

    Returns
    -------
    float
        The estimate.

    Raises
    ------
    ValueError
        As :func:`rlfound.kl.k1` (and :func:`~rlfound.kl.k3`), if ``mask`` selects nothing,
        or if ``estimator`` or ``reduce`` is not one of its choices.

    Notes
    -----
    What trainers log, checked in their code: verl's ``actor/ppo_kl`` is k1 of (old, current)
    with the token reduction (``compute_policy_loss``, ``verl/trainer/ppo/core_algos.py``);
    TRL's PPO trainer logs ``policy/approxkl_avg`` as ``0.5 * (logprobs_diff**2).mean()``, a
    k2 of (current, old) (``PPOTrainer.train``, ``trl/trainer/ppo_trainer.py``); TRL's GRPO
    ``kl`` is the token mean of k3 of (current, reference).

    References
    ----------
    J. Schulman, "Approximating KL divergence", blog post, 2020,
    http://joschu.net/blog/kl-approx.html.

    Examples
    --------
    >>> old, new = np.log([[0.5, 0.25], [0.8, 1.0]]), np.log([[0.25, 0.25], [0.4, 1.0]])
    >>> approximate_kl(old, new, estimator="k1")  # (log 2 + 0 + log 2 + 0) / 4
    0.34657359027997264
    >>> approximate_kl(old, new, estimator="k1", reduce="sequence")  # (log 2 + log 2) / 2
    0.6931471805599453
    """
    estimator = check_choice(estimator, "estimator", tuple(ESTIMATORS))
    reduce = check_choice(reduce, "reduce", KL_REDUCTIONS)
    per_token = ESTIMATORS[estimator](logprobs, ref_logprobs, mask)
    mask = _selected(check_optional_mask(mask, "mask", per_token.shape))

    if reduce == "token":
        return float(per_token.sum() / mask.sum())
    rows = per_token.reshape(-1, per_token.shape[-1]).sum(axis=-1)
    present = mask.reshape(-1, mask.shape[-1]).any(axis=-1)
    return float(rows[present].mean())


@finite_output()
def importance_ess(
    logprobs: ArrayLike,
    old_logprobs: ArrayLike,
    mask: ArrayLike | None = None,
    level: str = "token",
) -> float:
    """Effective sample size of the importance weights of a batch, per token or per sequence.

        ESS = (Σ_i w_i)² / Σ_i w_i²,
        token:     w = ρ_j = exp(log π(x_j) - log μ(x_j))
                   for every selected token,
        sequence:  w_i = exp(Σ_j m_ij (log π(x_ij) - log μ(x_ij)))
                   for every row with a token.

    ESS / N is the fraction of the N weights that effectively informs a weighted average:
    1 when the data is on-policy, small when a few weights dominate. Sequence weights multiply
    the token ratios of a whole response, so their ESS collapses long before the token ESS
    does (chapter 5). The ratio is formed in log space and rescaled by its largest entry, which
    leaves the ESS unchanged, before :func:`rlfound.importance.effective_sample_size` is called.

    Book: equation (eq-diag-ess), chapter 12.

    Parameters
    ----------
    logprobs : array_like, shape (..., L)
        log π under the current policy (<= 0).
    old_logprobs : array_like, shape (..., L)
        log μ under the sampler (<= 0).
    mask : array_like of bool or 0/1, shape (..., L), optional
        Which tokens count. Default: all. At least one.
    level : {"token", "sequence"}, optional
        Default "token".

    Returns
    -------
    float
        The ESS, in [1, N] with N the number of selected tokens (or of rows with a token).

    Raises
    ------
    ValueError
        If a log-probability is positive or not finite, the shapes differ, ``mask`` does not
        have their shape, is not 0/1 or selects nothing, or ``level`` is not one of its
        choices.

    Notes
    -----
    verl's rollout-correction metrics report ``rollout_rs_eff_sample_size`` as
    1 / mean((w / mean w)²), that is ESS / N, of weights first clamped to the rejection
    thresholds (``compute_rs_metrics`` in ``verl/trainer/ppo/rollout_corr_helper.py``).

    References
    ----------
    A. Kong, "A note on importance sampling using standardized weights", Technical Report
    348, Department of Statistics, University of Chicago, 1992.

    Examples
    --------
    >>> logprobs = np.log([[0.5, 0.5], [0.5, 0.5]])
    >>> importance_ess(logprobs, logprobs)  # on-policy: every weight is 1
    4.0
    >>> old = np.log([[0.25, 0.5], [0.5, 0.5]])
    >>> importance_ess(logprobs, old, level="sequence")  # weights 2 and 1: 9 / 5
    1.8
    """
    logprobs, old_logprobs, mask = _token_pair(logprobs, old_logprobs, mask)
    level = check_choice(level, "level", RATIO_LEVELS)

    log_weights = _log_ratios(logprobs, old_logprobs, mask, level)
    return importance.effective_sample_size(
        np.exp(log_weights - log_weights.max())
    )


@finite_output()
def policy_lag(
    policy_version: ArrayLike,
    learner_version: int,
    mask: ArrayLike | None = None,
) -> tuple[float, float]:
    """Mean and largest policy lag, in optimizer steps, of the selected tokens (or rows).

        lag_j = ver_learner - ver_j >= 0,

    with ver_j the version of the policy that sampled token j (the ``policy_version`` field of
    the batch contract) and ver_learner the learner's version when it uses the batch. The lag
    says how many updates separate the data from the policy it trains; the divergence those
    updates caused is measured by :func:`approximate_kl` of (old, current) log-probabilities.
    Wall-clock staleness measures neither.

    Book: equation (eq-diag-policy-lag), chapter 12.

    Parameters
    ----------
    policy_version : array_like of int, shape (...)
        The version of each token (shape (B, L - 1)) or row (shape (B,)), at least 1-D;
        >= 0 where selected.
    learner_version : int
        The learner's version, >= 0.
    mask : array_like of bool or 0/1, same shape as ``policy_version``, optional
        Which entries count (for per-token versions: ``action_mask``). Default: all. At least
        one.

    Returns
    -------
    mean : float
        The mean lag over the selected entries.
    max : float
        The largest lag.

    Raises
    ------
    ValueError
        If ``policy_version`` is not an integer array with at least one dimension, a selected
        version is negative or newer than ``learner_version``, ``learner_version`` is not a
        non-negative integer, or ``mask`` does not have the shape of ``policy_version``, is
        not 0/1 or selects nothing.

    Notes
    -----
    AReaL bounds the lag with ``rollout.max_head_offpolicyness`` (0 gives synchronous RL;
    documentation, "Asynchronous RL"); TorchRL's ``StalenessAwareSampler`` computes the
    staleness ``consumer_version - policy_version`` and can drop entries above a bound.

    Examples
    --------
    >>> policy_lag([[-1, 11, 11], [-1, 12, -1]], learner_version=12,
    ...            mask=[[0, 1, 1], [0, 1, 0]])
    (0.6666666666666666, 1.0)
    """
    versions = check_indices(
        policy_version,
        "policy_version",
        _LABEL_LIMIT,
        min_ndim=1,
        minimum=-1,
        kind="version",
    )
    learner_version = check_nonnegative_int(
        learner_version, "learner_version"
    )
    mask = _selected(check_optional_mask(mask, "mask", versions.shape))

    unset = mask & (versions < 0)
    raise_first(
        unset,
        "policy_version must be >= 0 where mask selects it (a version that "
        "sampled the token)",
        got="-1",
    )
    newer = mask & (versions > learner_version)
    raise_first(
        newer,
        "policy_version must not be newer than learner_version "
        f"({learner_version})",
        values=versions,
    )
    lag = learner_version - versions[mask]
    return float(lag.mean()), float(lag.max())
