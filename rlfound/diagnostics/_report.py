"""Estimator diagnostics: the numbers that show whether a policy-gradient estimator still works.

A rising reward says little about the estimator that produced it. This module computes, from
arrays a trainer already has, the quantities that do: statistics of the raw reward components
and of their lower tail; returns and advantages grouped by task, turn, length and success;
the spread of rewards inside groups and the fraction of groups whose rewards are all equal;
the distribution of the token log-ratios log π - log μ; approximate KL divergences to the
behavior and the reference policy (with the estimator named); entropy by position; the
critic's explained variance and its calibration by horizon; gradient norms before and after
clipping by the global norm; the effective sample size of the importance weights; the
correlation of length with reward and advantage; and the policy lag, in optimizer steps.

:func:`report` computes all of them from one training batch in the contract of chapter 13
(:mod:`rlfound.contract`) and returns a flat table ``{name: float}`` together with the
diagnostics it could not compute and why (an optional input was not given, or the batch
makes the quantity undefined). :func:`plot_history` draws tables of successive steps as
panels; it imports matplotlib only when called (matplotlib is a dependency of the book, not
of the library).

Conventions: per-token arrays have shape (..., L) with a ``mask`` of the same shape that
selects the positions that count; scalars come back as Python floats and arrays as float64;
the library's KL estimators (:mod:`rlfound.kl`), clip fractions (:mod:`rlfound.ppo`),
effective sample size (:mod:`rlfound.importance`) and group variance
(:mod:`rlfound.entropy`) are reused, not copied.

Book: chapter 12 (estimator diagnostics).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rlfound import contract, entropy, importance, kl, ppo, tokens
from rlfound._validation import (
    MAX_ARRAY_ENTRIES,
    as_float_array,
    as_float_array_like,
    check_choice,
    check_indices,
    check_logprobs,
    check_mask,
    check_nonnegative_int,
    check_nonnegative_real,
    check_optional_mask,
    check_positive_int,
    check_positive_real,
    check_shape,
    check_size,
    check_unit_interval,
    finite_output,
)

__all__ = [
    "approximate_kl",
    "calibration_by_horizon",
    "explained_variance",
    "gradient_norms",
    "group_variance_statistics",
    "grouped_statistics",
    "importance_ess",
    "log_ratio_summary",
    "mean_by_position",
    "pearson_correlation",
    "plot_history",
    "policy_lag",
    "report",
    "reward_statistics",
    "tail_mean",
]

#: The KL estimators of :mod:`rlfound.kl`, by name.
ESTIMATORS = {"k1": kl.k1, "k2": kl.k2, "k3": kl.k3}
#: How :func:`approximate_kl` reduces per-token estimates to one number.
KL_REDUCTIONS = ("token", "sequence")
#: Token ratios, or the ratio of each whole sequence (row).
RATIO_LEVELS = ("token", "sequence")
#: Panels :func:`plot_history` draws by default (those present in the history).
DEFAULT_PANELS = (
    "return/mean",
    "group/all_equal_fraction",
    "log_ratio/max_abs",
    "ess/sequence_fraction",
    ("clip/positive", "clip/negative"),
    "kl/old_current/k3",
    "entropy/sampled/mean",
    "value/explained_variance",
    ("grad_norm/before", "grad_norm/after"),
    "lag/steps_mean",
)
#: Largest integer label the grouping functions accept (any int64 that is not extreme).
_LABEL_LIMIT = 2**62


# --- private helpers ---------------------------------------------------------------------------


def _selected(mask: np.ndarray, name: str = "mask") -> np.ndarray:
    """Refuse a mask that selects nothing (every statistic here is an average)."""
    if not mask.any():
        raise ValueError(f"{name} must select at least one entry; got none of shape {mask.shape}")
    return mask


def _values_and_mask(values: ArrayLike, name: str, mask: ArrayLike | None):
    """Finite float64 values, at least 1-D, and a bool mask of their shape that selects some."""
    values = as_float_array(values, name, min_ndim=1)
    mask = _selected(check_optional_mask(mask, "mask", values.shape))
    return values, mask


def _labels(labels: ArrayLike, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Integer labels (task ids, turn ids, buckets) of exactly ``shape``."""
    labels = check_indices(labels, name, _LABEL_LIMIT, minimum=-_LABEL_LIMIT, kind="label")
    return check_shape(labels, name, shape, "one label per value")


def _token_pair(logprobs: ArrayLike, old_logprobs: ArrayLike, mask: ArrayLike | None):
    """log π and log μ of one shape (..., L), and a bool mask that selects some token."""
    logprobs = check_logprobs(logprobs, "logprobs")
    old_logprobs = check_logprobs(old_logprobs, "old_logprobs")
    check_shape(old_logprobs, "old_logprobs", logprobs.shape, "the shape of logprobs")
    mask = _selected(check_optional_mask(mask, "mask", logprobs.shape))
    return logprobs, old_logprobs, mask


def _norm(array: np.ndarray) -> float:
    """Euclidean norm without overflow: scale by the largest magnitude first."""
    largest = float(np.max(np.abs(array), initial=0.0))
    if largest == 0.0:
        return 0.0
    return largest * float(np.sqrt(np.sum((array / largest) ** 2)))


def _masked_variance(values: np.ndarray, mask: np.ndarray) -> float:
    """Population variance (ddof 0) of the selected values."""
    selected = values[mask]
    return float(np.mean((selected - selected.mean()) ** 2))


def _positions(mask: np.ndarray) -> np.ndarray:
    """For every selected entry of each row (last axis), its rank among the row's selected
    entries: 0 for the first, 1 for the second, ...; -1 where not selected."""
    return np.where(mask, np.cumsum(mask, axis=-1) - 1, -1)


def _log_ratios(logprobs, old_logprobs, mask, level):
    """log π - log μ of every selected token, or summed over each row with a selected token."""
    log_ratio = np.where(mask, logprobs - old_logprobs, 0.0)
    if level == "token":
        return log_ratio[mask]
    rows = mask.reshape(-1, mask.shape[-1]).any(axis=-1)
    return log_ratio.reshape(-1, log_ratio.shape[-1]).sum(axis=-1)[rows]


def _quantile_levels(quantiles: Any) -> np.ndarray:
    levels = as_float_array(quantiles, "quantiles", ndim=1)
    if levels.size == 0 or ((levels < 0.0) | (levels > 1.0)).any():
        raise ValueError(
            f"quantiles must be a non-empty 1-D array of levels in [0, 1]; got {levels.tolist()}"
        )
    return levels


# --- rewards and returns -----------------------------------------------------------------------


@finite_output()
def reward_statistics(
    rewards: ArrayLike,
    mask: ArrayLike | None = None,
    bins: int = 10,
    value_range: tuple[float, float] | None = None,
) -> tuple[float, float, np.ndarray, np.ndarray]:
    """Mean, standard deviation and histogram of one reward component.

        r̄ = Σ_j m_j r_j / Σ_j m_j,    s = sqrt(Σ_j m_j (r_j - r̄)² / Σ_j m_j),
        c_k = #{j : m_j = 1, e_k <= r_j < e_{k+1}}   (the last bin also holds r_j = e_K).

    Log every component of a reward separately (task success, format, length penalty, a
    safety cost): their sum can stay flat while one component improves and another
    degrades, and a rare severe value shows in the histogram long before it moves the mean.

    Book: equation (eq-diag-component-stats), chapter 12.

    Parameters
    ----------
    rewards : array_like, shape (...)
        Values of the component (per turn, per episode, per token), at least 1-D.
    mask : array_like of bool or 0/1, same shape, optional
        Which entries count (for per-turn rewards: the turns that exist). Default: all. At
        least one.
    bins : int, optional
        Number of equal-width bins K, >= 1. Default 10.
    value_range : (float, float) or None, optional
        (lower, upper) edges of the histogram, lower < upper; values outside are not
        counted. Default None: the smallest and largest selected values (NumPy's default,
        which widens an empty range to the value ± 0.5).

    Returns
    -------
    mean : float
        r̄.
    std : float
        s, the population standard deviation (ddof 0).
    counts : numpy.ndarray, shape (K,)
        c_k, as float64.
    edges : numpy.ndarray, shape (K + 1,)
        e_0 < e_1 < ... < e_K.

    Raises
    ------
    ValueError
        If ``rewards`` is a scalar or not finite, ``mask`` does not have its shape, is not
        0/1 or selects nothing, ``bins`` is not a positive integer, or ``value_range`` is not
        a pair of finite numbers with lower < upper.

    Notes
    -----
    TRL's GRPO trainer logs each reward function's mean and std (``rewards/<name>/mean``
    and ``/std``); verl logs the mean, max and min of the sequence score and reward
    (``critic/score/*``, ``critic/rewards/*`` in ``compute_data_metrics``,
    ``verl/trainer/ppo/metric_utils.py``). Neither logs a histogram by default.

    Examples
    --------
    >>> mean, std, counts, edges = reward_statistics([0.0, 1.0, 1.0, -4.0], bins=5)
    >>> mean, std
    (-0.5, 2.0615528128088303)
    >>> counts, edges
    (array([1., 0., 0., 1., 2.]), array([-4., -3., -2., -1.,  0.,  1.]))
    """
    rewards, mask = _values_and_mask(rewards, "rewards", mask)
    bins = check_size(check_positive_int(bins, "bins"), "bins", MAX_ARRAY_ENTRIES, "bins")
    if value_range is not None:
        value_range = _check_range(value_range)

    selected = rewards[mask]
    mean = float(selected.mean())
    std = float(np.sqrt(np.mean((selected - mean) ** 2)))
    counts, edges = np.histogram(selected, bins=bins, range=value_range)
    return mean, std, counts.astype(np.float64), edges.astype(np.float64)


def _check_range(value_range: Any) -> tuple[float, float]:
    pair = as_float_array(value_range, "value_range", ndim=1)
    if pair.size != 2 or not pair[0] < pair[1]:
        raise ValueError(
            f"value_range must be a pair (lower, upper) with lower < upper; got {pair.tolist()}"
        )
    return float(pair[0]), float(pair[1])


@finite_output()
def tail_mean(values: ArrayLike, fraction: float, mask: ArrayLike | None = None) -> float:
    """Mean of the worst ``fraction`` of the values: the lower-tail CVaR of their distribution.

        CVaR_α = (1 / (α n)) Σ_{i=1}^{n} w_i x_(i),    w_i = min(1, max(0, α n - (i - 1))),

    where x_(1) <= ... <= x_(n) are the n selected values sorted and α = ``fraction``. When
    α n is an integer k it is the mean of the k smallest values; otherwise the k-th value
    counts with the fraction of it that lies inside the tail. It is the mean of the lowest
    α-quantiles of the empirical distribution, (1/α) ∫_0^α F⁻¹(u) du, so it is continuous and
    non-decreasing in α, equals the minimum for α <= 1/n and the mean for α = 1. For a
    reward, the tail is the bad side; for a cost, pass its negative.

    Book: equation (eq-diag-tail-mean), chapter 12.

    Parameters
    ----------
    values : array_like, shape (...)
        At least 1-D, finite.
    fraction : float
        α in (0, 1].
    mask : array_like of bool or 0/1, same shape, optional
        Which entries count. Default: all. At least one.

    Returns
    -------
    float
        CVaR_α, between the minimum and the mean of the selected values.

    Raises
    ------
    ValueError
        If ``values`` is a scalar or not finite, ``fraction`` is not in (0, 1], or ``mask``
        does not have the shape of ``values``, is not 0/1 or selects nothing.

    References
    ----------
    R. T. Rockafellar and S. Uryasev, "Optimization of conditional value-at-risk",
    *Journal of Risk* 2(3), 21-41, 2000.

    Examples
    --------
    >>> tail_mean([3.0, -10.0, 1.0, 2.0], fraction=0.25)  # the single worst value
    -10.0
    >>> tail_mean([3.0, -10.0, 1.0, 2.0], fraction=0.375)  # (-10 + 0.5 * 1) / 1.5
    -6.333333333333333
    """
    values, mask = _values_and_mask(values, "values", mask)
    fraction = check_unit_interval(fraction, "fraction")
    if fraction == 0.0:
        raise ValueError("fraction must be in (0, 1] (a tail must hold some mass); got 0.0")

    ordered = np.sort(values[mask])
    share = fraction * ordered.size
    # Weight of the i-th smallest value: the part of [i, i + 1) that lies inside [0, α n).
    weights = np.clip(share - np.arange(ordered.size), 0.0, 1.0)
    return float(np.sum(weights * ordered) / np.sum(weights))


@finite_output()
def grouped_statistics(
    values: ArrayLike, labels: ArrayLike, mask: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mean, standard deviation and count of the values that share each label.

        n_g = Σ_j m_j [ℓ_j = g],    mean_g = Σ_j m_j [ℓ_j = g] x_j / n_g,
        std_g = sqrt(Σ_j m_j [ℓ_j = g] (x_j - mean_g)² / n_g).

    The labels say what the values are grouped by: the task of each episode, the turn of
    each token, a length bucket, success (0/1). A batch whose mean return rises can hide a
    task that collapsed, a last turn that carries all the credit, or failures whose
    advantages are positive; grouping shows them.

    Book: equation (eq-diag-grouped), chapter 12.

    Parameters
    ----------
    values : array_like, shape (...)
        At least 1-D, finite.
    labels : array_like of int, same shape
        The group of each value (any integers).
    mask : array_like of bool or 0/1, same shape, optional
        Which entries count. Default: all. At least one.

    Returns
    -------
    keys : numpy.ndarray of int64, shape (G,)
        The labels that occur among the selected entries, ascending.
    means, stds, counts : numpy.ndarray, shape (G,)
        mean_g, std_g (ddof 0) and n_g (as float64) of each key.

    Raises
    ------
    ValueError
        If ``values`` is a scalar or not finite, ``labels`` does not hold integers of its
        shape, or ``mask`` does not have its shape, is not 0/1 or selects nothing.

    Examples
    --------
    >>> keys, means, stds, counts = grouped_statistics([1.0, 3.0, 2.0, 7.0], [0, 0, 1, 5])
    >>> keys, means, stds, counts
    (array([0, 1, 5]), array([2., 2., 7.]), array([1., 0., 0.]), array([2., 1., 1.]))
    """
    values, mask = _values_and_mask(values, "values", mask)
    labels = _labels(labels, "labels", values.shape)

    keys, group = np.unique(labels[mask], return_inverse=True)
    selected = values[mask]
    counts = np.bincount(group, minlength=keys.size).astype(np.float64)
    means = np.bincount(group, weights=selected, minlength=keys.size) / counts
    squares = np.bincount(group, weights=(selected - means[group]) ** 2, minlength=keys.size)
    return keys.astype(np.int64), means, np.sqrt(squares / counts), counts


# --- groups ------------------------------------------------------------------------------------


@finite_output()
def group_variance_statistics(
    rewards: ArrayLike, group_ids: ArrayLike, ddof: int = 0, atol: float = 0.0
) -> tuple[float, float]:
    """Mean within-group reward variance and the fraction of groups whose rewards are all equal.

        mean Var = (1/|𝒢|) Σ_g Var(R_g),
        φ = (1/|𝒢|) Σ_g [max_{i in g} R_i - min_{i in g} R_i <= atol],

    with Var(R_g) the variance of the rewards of group g
    (:func:`rlfound.entropy.group_reward_variance`, divisor n_g - ddof) and 𝒢 the set of
    groups. A group whose rewards are all equal gives every group-baseline advantage exactly
    zero (chapter 7): φ is the fraction of the batch that teaches nothing. φ rising toward 1
    while the mean reward rises means the tasks have become too easy for the policy (or, with
    φ rising and reward falling, too hard).

    Book: equation (eq-diag-all-equal), chapter 12.

    Parameters
    ----------
    rewards : array_like, shape (B,)
        The reward (episode return) of each rollout.
    group_ids : array_like of int, shape (B,)
        The group (prompt, task instance) of each rollout; groups may differ in size.
    ddof : int, optional
        Delta degrees of freedom of each group's variance; must be smaller than the smallest
        group. Default 0.
    atol : float, optional
        Rewards within ``atol`` of each other count as equal, >= 0. Default 0.0: exactly
        equal.

    Returns
    -------
    mean_variance : float
        mean Var, each group weighted equally.
    all_equal_fraction : float
        φ, in [0, 1]; a group of one rollout counts as all equal.

    Raises
    ------
    ValueError
        If ``rewards`` is not a finite 1-D array with at least one entry, ``group_ids`` is not
        an integer array of its shape, ``ddof`` is not a non-negative integer smaller than
        every group, or ``atol`` is negative or not finite.

    Notes
    -----
    TRL's GRPO trainer logs ``frac_reward_zero_std``: the fraction of completions whose
    group's reward standard deviation (``torch.std``, ddof 1) is ``torch.isclose`` to 0
    (absolute tolerance 1e-8), computed in ``_generate_and_score_completions``
    (``trl/trainer/grpo_trainer.py``); with groups of equal size that is φ with a tolerance.
    Its ``reward_std`` is the mean over completions of their group's std.

    Examples
    --------
    >>> group_variance_statistics([1.0, 1.0, 0.0, 1.0, 0.0, 0.0], group_ids=[0, 0, 1, 1, 2, 2])
    (0.08333333333333333, 0.6666666666666666)
    """
    rewards = as_float_array(rewards, "rewards", ndim=1)
    if rewards.size == 0:
        raise ValueError("rewards must hold at least one rollout; got shape (0,)")
    group_ids = _labels(group_ids, "group_ids", rewards.shape)
    ddof = check_nonnegative_int(ddof, "ddof")
    atol = check_nonnegative_real(atol, "atol")

    keys, sizes = np.unique(group_ids, return_counts=True)
    if np.all(sizes == sizes[0]):  # equal groups: one (G, N) array, one vectorized call
        members = rewards[np.argsort(group_ids, kind="stable")].reshape(keys.size, sizes[0])
        variances = entropy.group_reward_variance(members, ddof=ddof)
        spread = members.max(axis=1) - members.min(axis=1)
    else:
        variances, spread = [], []
        for key in keys:
            members = rewards[group_ids == key]
            variances.append(entropy.group_reward_variance(members, ddof=ddof))
            spread.append(members.max() - members.min())
    return float(np.mean(variances)), float(np.mean(np.asarray(spread) <= atol))


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
        sequence:  d_i = Σ_j m_ij (log π(x_ij) - log μ(x_ij)) for every row i with a token,

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
        sequence:  (1/B') Σ_i Σ_j m_ij k(x_ij)   over the B' rows with at least one token,

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
        token:     w = ρ_j = exp(log π(x_j) - log μ(x_j)) for every selected token,
        sequence:  w_i = exp(Σ_j m_ij (log π(x_ij) - log μ(x_ij))) for every row with a token.

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
    return importance.effective_sample_size(np.exp(log_weights - log_weights.max()))


@finite_output()
def policy_lag(
    policy_version: ArrayLike, learner_version: int, mask: ArrayLike | None = None
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
        policy_version, "policy_version", _LABEL_LIMIT, min_ndim=1, minimum=-1, kind="version"
    )
    learner_version = check_nonnegative_int(learner_version, "learner_version")
    mask = _selected(check_optional_mask(mask, "mask", versions.shape))

    unset = mask & (versions < 0)
    if unset.any():
        index = tuple(int(i) for i in np.argwhere(unset)[0])
        raise ValueError(
            f"policy_version must be >= 0 where mask selects it (a version that sampled the "
            f"token); got -1 at index {index}"
        )
    newer = mask & (versions > learner_version)
    if newer.any():
        index = tuple(int(i) for i in np.argwhere(newer)[0])
        raise ValueError(
            f"policy_version must not be newer than learner_version ({learner_version}); got "
            f"{int(versions[index])} at index {index}"
        )
    lag = learner_version - versions[mask]
    return float(lag.mean()), float(lag.max())


# --- entropy, values, gradients, lengths -------------------------------------------------------


@finite_output()
def mean_by_position(
    values: ArrayLike, mask: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Mean of a per-token quantity at each position of the response, across rows.

        p_ij = Σ_{k <= j} m_ik - 1   (the rank of token j among the selected tokens of row i),
        mean_p = Σ_ij m_ij [p_ij = p] x_ij / n_p,    n_p = Σ_ij m_ij [p_ij = p].

    Positions count the selected tokens of a row, not its columns, so left padding, prompts
    and tool observations do not shift them: position 0 is the first generated token of every
    row. Applied to the entropy of each next-token distribution (or its sampled estimate
    -log π(x_j)), it shows where a policy still explores, and whether a drop of the mean
    entropy comes from a few positions or from all of them.

    Book: equation (eq-diag-position), chapter 12.

    Parameters
    ----------
    values : array_like, shape (..., L)
        A per-token quantity (entropies, log-ratios, advantages), finite; leading axes are
        rows.
    mask : array_like of bool or 0/1, shape (..., L), optional
        Which tokens count. Default: all. At least one.

    Returns
    -------
    means : numpy.ndarray, shape (P,)
        mean_p for p = 0, ..., P - 1, P the largest number of selected tokens in a row.
    counts : numpy.ndarray, shape (P,)
        n_p, the number of rows with a p-th token (float64), non-increasing.

    Raises
    ------
    ValueError
        If ``values`` is a scalar or not finite, or ``mask`` does not have its shape, is not
        0/1 or selects nothing.

    Examples
    --------
    >>> means, counts = mean_by_position([[9.0, 1.0, 2.0], [3.0, 5.0, 9.0]],
    ...                                  mask=[[0, 1, 1], [1, 1, 0]])
    >>> means, counts
    (array([2. , 3.5]), array([2., 2.]))
    """
    values, mask = _values_and_mask(values, "values", mask)

    positions = _positions(mask)[mask]
    counts = np.bincount(positions).astype(np.float64)
    means = np.bincount(positions, weights=values[mask]) / counts
    return means, counts


@finite_output()
def explained_variance(
    values: ArrayLike, returns: ArrayLike, mask: ArrayLike | None = None, eps: float = 0.0
) -> float:
    """Fraction of the variance of the returns that the critic's predictions explain.

        EV = 1 - Var(G - V) / (Var(G) + eps),

    with the variances taken over the selected entries (ddof 0; with eps = 0 the divisor
    cancels). EV = 1 for a perfect critic, 0 for a critic that predicts the mean return
    everywhere, and negative for one worse than that. It is blind to a constant offset:
    V + c has the EV of V, so a critic that is off by the same amount everywhere looks
    perfect; :func:`calibration_by_horizon` shows such a bias.

    Book: equation (eq-diag-explained-variance), chapter 12.

    Parameters
    ----------
    values : array_like, shape (...)
        Critic predictions V, at least 1-D, finite.
    returns : array_like, same shape
        Value targets G (returns or λ-returns).
    mask : array_like of bool or 0/1, same shape, optional
        Which entries count. Default: all. At least one.
    eps : float, optional
        Added to Var(G), >= 0. Default 0.0; verl adds 1e-5.

    Returns
    -------
    float
        EV, at most 1.

    Raises
    ------
    ValueError
        If an array is a scalar or not finite, the shapes differ, ``mask`` does not have their
        shape, is not 0/1 or selects nothing, ``eps`` is negative, or Var(G) + eps = 0 (the
        selected returns are all equal and eps = 0).

    Notes
    -----
    verl logs ``critic/vf_explained_var`` = ``1 - var(returns - values) / (var(returns) +
    1e-5)`` over the response tokens, with ``torch.var`` (ddof 1) (``compute_data_metrics``
    in ``verl/trainer/ppo/metric_utils.py``).

    Examples
    --------
    >>> explained_variance(values=[1.0, 2.0, 3.0], returns=[1.0, 2.0, 4.0])  # 1 - (2/9) / (14/9)
    0.8571428571428571
    >>> explained_variance(values=[11.0, 12.0, 13.0], returns=[1.0, 2.0, 4.0])  # blind to +10
    0.8571428571428571
    """
    values, mask = _values_and_mask(values, "values", mask)
    returns = as_float_array_like(returns, "returns", values.shape, "values")
    eps = check_nonnegative_real(eps, "eps")

    spread = _masked_variance(returns, mask) + eps
    if spread == 0.0:
        raise ValueError(
            "returns must vary over the selected entries when eps = 0 (the explained variance "
            f"divides by their variance); got the constant {float(returns[mask][0])!r}"
        )
    return 1.0 - _masked_variance(returns - values, mask) / spread


@finite_output()
def calibration_by_horizon(
    values: ArrayLike,
    returns: ArrayLike,
    mask: ArrayLike | None = None,
    max_horizon: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean prediction and mean target of the critic at each number of steps to go.

        h_ij = Σ_{k > j} m_ik   (the selected positions after j in row i),
        V̄_h = mean{V_ij : h_ij = h},    Ḡ_h = mean{G_ij : h_ij = h},    n_h = #{h_ij = h},

    with horizons at or beyond ``max_horizon`` pooled into the last bucket. A calibrated
    critic has V̄_h = Ḡ_h at every horizon; the gap V̄_h - Ḡ_h is its bias at that distance
    from the end of the episode, which the explained variance cannot see. Near the end (h = 0) the
    target is close to the observed reward; far from it, it is a bootstrap of bootstraps.

    Book: equation (eq-diag-calibration), chapter 12.

    Parameters
    ----------
    values : array_like, shape (..., L)
        Critic predictions, finite; leading axes are rows (episodes).
    returns : array_like, shape (..., L)
        Value targets of the same positions.
    mask : array_like of bool or 0/1, shape (..., L), optional
        Which positions count (tokens or turns of each row). Default: all. At least one.
    max_horizon : int or None, optional
        H >= 0: horizons >= H are pooled into bucket H. Default None: no pooling.

    Returns
    -------
    mean_values, mean_returns, counts : numpy.ndarray, shape (H + 1,)
        V̄_h, Ḡ_h and n_h (float64) for h = 0, ..., H, with H the largest horizon present
        (or ``max_horizon``); a bucket with no entry holds 0 and count 0.

    Raises
    ------
    ValueError
        If an array is a scalar or not finite, the shapes differ, ``mask`` does not have their
        shape, is not 0/1 or selects nothing, or ``max_horizon`` is not a non-negative
        integer.

    Examples
    --------
    >>> v_bar, g_bar, counts = calibration_by_horizon([[0.5, 0.8, 1.0], [0.4, 0.6, 0.0]],
    ...                                               [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]],
    ...                                               mask=[[1, 1, 1], [1, 1, 0]])
    >>> v_bar, g_bar, counts
    (array([0.8, 0.6, 0.5]), array([0.5, 0.5, 1. ]), array([2., 2., 1.]))
    """
    values, mask = _values_and_mask(values, "values", mask)
    returns = as_float_array_like(returns, "returns", values.shape, "values")
    if max_horizon is not None:
        max_horizon = check_nonnegative_int(max_horizon, "max_horizon")
        check_size(max_horizon + 1, "max_horizon", MAX_ARRAY_ENTRIES, "buckets (max_horizon + 1)")

    # Steps to go: selected positions after this one in the same row.
    after = np.flip(np.cumsum(np.flip(mask, axis=-1), axis=-1), axis=-1) - mask
    horizons = after[mask]
    if max_horizon is not None:
        horizons = np.minimum(horizons, max_horizon)
    size = int(horizons.max()) + 1 if max_horizon is None else max_horizon + 1
    counts = np.bincount(horizons, minlength=size).astype(np.float64)
    filled = np.maximum(counts, 1.0)  # empty buckets: 0 / 1
    mean_values = np.bincount(horizons, weights=values[mask], minlength=size) / filled
    mean_returns = np.bincount(horizons, weights=returns[mask], minlength=size) / filled
    return mean_values, mean_returns, counts


@finite_output()
def gradient_norms(
    gradients: Sequence[ArrayLike] | Mapping[str, ArrayLike], max_norm: float, eps: float = 1e-6
) -> tuple[np.ndarray, float, float]:
    """Gradient norms per parameter group, and the global norm before and after clipping.

        ‖g‖ = sqrt(Σ_k ‖g_k‖²),    c = min(1, max_norm / (‖g‖ + eps)),    after = c ‖g‖,

    for parameter groups g_1, ..., g_K (layers, the policy and the value head, LoRA
    adapters). Clipping by the global norm multiplies every group by the same c, so the
    direction of the update is kept and only its length is capped. The norm *before*
    clipping is the diagnostic: when it sits far above ``max_norm`` at every step, every update
    is clipped, the learning rate is effectively max_norm / ‖g‖ times smaller than configured,
    and spikes in it (from one group) locate the instability.

    Book: equation (eq-diag-clip-norm), chapter 12.

    Parameters
    ----------
    gradients : sequence of array_like, or mapping of str to array_like
        The gradient of each parameter group (any shapes, finite); a mapping is read in its
        order. At least one group.
    max_norm : float
        The clipping threshold, > 0.
    eps : float, optional
        Added to the norm in the clip coefficient, >= 0. Default 1e-6, PyTorch's.

    Returns
    -------
    group_norms : numpy.ndarray, shape (K,)
        ‖g_k‖ before clipping (after clipping they are c ‖g_k‖).
    before : float
        ‖g‖.
    after : float
        c ‖g‖, at most ``max_norm``.

    Raises
    ------
    ValueError
        If ``gradients`` holds no group or a group that is not a finite real array, or
        ``max_norm`` or ``eps`` is not a positive (non-negative) finite number.

    Notes
    -----
    ``torch.nn.utils.clip_grad_norm_`` computes the norm of the norms of the gradients,
    scales them by ``max_norm / (total_norm + 1e-6)`` clamped to 1, and returns the total
    norm *before* clipping (``torch/nn/utils/clip_grad.py``); verl logs that returned value as
    ``actor/grad_norm`` (``_optimizer_step`` and ``update_policy`` in
    ``verl/workers/actor/dp_actor.py``).

    References
    ----------
    R. Pascanu, T. Mikolov and Y. Bengio, "On the difficulty of training recurrent neural
    networks", ICML, 2013.

    Examples
    --------
    >>> gradient_norms({"policy": [3.0, 0.0], "value head": [[0.0], [4.0]]}, max_norm=10.0)
    (array([3., 4.]), 5.0, 5.0)
    >>> group_norms, before, after = gradient_norms([[3.0, 0.0], [[0.0], [4.0]]], max_norm=1.0)
    >>> round(after, 6)  # 5 * 1 / (5 + 1e-6)
    1.0
    """
    if isinstance(gradients, Mapping):
        gradients = list(gradients.values())
    if isinstance(gradients, (str, bytes)) or not isinstance(gradients, Sequence):
        raise ValueError(
            "gradients must be a sequence (or mapping) of per-group gradient arrays; got "
            f"{type(gradients).__name__}"
        )
    if len(gradients) == 0:
        raise ValueError("gradients must hold at least one parameter group; got 0")
    groups = [as_float_array(g, f"gradients[{k}]") for k, g in enumerate(gradients)]
    max_norm = check_positive_real(max_norm, "max_norm")
    eps = check_nonnegative_real(eps, "eps")

    group_norms = np.array([_norm(g) for g in groups])
    before = _norm(group_norms)
    coefficient = min(1.0, max_norm / (before + eps))
    return group_norms, before, coefficient * before


@finite_output()
def pearson_correlation(x: ArrayLike, y: ArrayLike, mask: ArrayLike | None = None) -> float:
    """Pearson correlation of two quantities over the selected entries.

        corr = Σ m (x - x̄)(y - ȳ) / sqrt(Σ m (x - x̄)² Σ m (y - ȳ)²).

    Used on episodes: response length against reward tells whether longer answers are
    rewarded (a length exploit, or a task that needs more steps); length against advantage
    tells what the update will do to length, which the loss normalization can bias (chapter
    8).

    Book: equation (eq-diag-correlation), chapter 12.

    Parameters
    ----------
    x, y : array_like, same shape
        At least 1-D, finite.
    mask : array_like of bool or 0/1, same shape, optional
        Which entries count. Default: all. At least two.

    Returns
    -------
    float
        corr, in [-1, 1].

    Raises
    ------
    ValueError
        If an array is a scalar or not finite, the shapes differ, ``mask`` does not have
        their shape, is not 0/1 or selects fewer than two entries, or ``x`` or ``y`` is
        constant over them (the correlation divides by their spread).

    Examples
    --------
    >>> pearson_correlation([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0])
    0.8
    """
    x, mask = _values_and_mask(x, "x", mask)
    y = as_float_array_like(y, "y", x.shape, "x")
    if mask.sum() < 2:
        raise ValueError(f"mask must select at least two entries; got {int(mask.sum())}")

    dx = x[mask] - x[mask].mean()
    dy = y[mask] - y[mask].mean()
    for name, d in (("x", dx), ("y", dy)):
        if not np.any(d != 0.0):
            raise ValueError(
                f"{name} must vary over the selected entries (a correlation divides by its "
                f"spread); got the constant {float((x if name == 'x' else y)[mask][0])!r}"
            )
    # Each centered vector normalized by its own norm, so large values cannot overflow.
    return float(np.clip(np.dot(dx / _norm(dx), dy / _norm(dy)), -1.0, 1.0))


# --- the report --------------------------------------------------------------------------------


def _read_per_token(x: Any, name: str, mask: np.ndarray, *, logprob: bool = False) -> np.ndarray:
    """An optional input of the shape of ``mask``, read only where ``mask`` is set.

    Positions the mask leaves out may hold anything a trainer writes there (TRL stores 1.0,
    an impossible log-probability, at padding): they are replaced by 0 before any check.
    """
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be a rectangular array of numbers; got {x!r}") from error
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold real numbers; got dtype {raw.dtype}")
    check_shape(raw, name, mask.shape, "the shape of the positions it describes")
    clean = as_float_array(np.where(mask, raw, 0.0), name)
    if logprob:
        check_logprobs(clean, name)
    return clean


def _check_clip_arguments(clip_low: Any, clip_high: Any, dual_clip: Any) -> None:
    """The clip ranges of :func:`rlfound.ppo.clip_fractions`, checked before any work."""
    clip_low = check_nonnegative_real(clip_low, "clip_low")
    if clip_low >= 1.0:
        raise ValueError(f"clip_low must be in [0, 1) so that 1 - clip_low > 0; got {clip_low!r}")
    if clip_high is not None:
        check_nonnegative_real(clip_high, "clip_high")
    if dual_clip is not None and check_positive_real(dual_clip, "dual_clip") <= 1.0:
        raise ValueError(f"dual_clip must be > 1 (a bound on the ratio); got {dual_clip!r}")


def _check_fraction(x: Any, name: str) -> float:
    fraction = check_unit_interval(x, name)
    if fraction == 0.0:
        raise ValueError(f"{name} must be in (0, 1] (a tail must hold some mass); got 0.0")
    return fraction


def _powers_of_two(size: int) -> list[int]:
    """0, 1, 2, 4, 8, ... below ``size``: a log-spaced sample of a profile."""
    points, p = [0], 1
    while p < size:
        points.append(p)
        p *= 2
    return points


def _add_means(table, prefix, values, labels, mask, names=None):
    """``prefix/<label>/mean`` for every label (or its name) among the selected entries."""
    if not mask.any():
        return
    keys, means, _, _ = grouped_statistics(values, labels, mask)
    for key, mean in zip(keys, means, strict=True):
        label = names[int(key)] if names is not None else int(key)
        table[f"{prefix}/{label}/mean"] = float(mean)


def _correlate(table, skipped, name, x, y, mask):
    """A correlation, or the reason it is undefined."""
    if mask.sum() < 2 or np.ptp(x[mask]) == 0.0 or np.ptp(y[mask]) == 0.0:
        skipped[name] = "needs two episodes that differ in both quantities"
    else:
        table[name] = pearson_correlation(x, y, mask)


def _profile(table, prefix, per_token, mask):
    """Mean and a log-spaced sample of the profile by position of a per-token quantity."""
    means, _ = mean_by_position(per_token, mask)
    table[f"{prefix}/mean"] = float(per_token[mask].mean())
    for p in _powers_of_two(means.size):
        table[f"{prefix}/position/{p}"] = float(means[p])


def _batch_view(clean: dict) -> dict:
    """What every section reads: masks, per-row quantities, fields cleaned where unread."""
    action, turn_ids, rewards = clean["action_mask"], clean["turn_ids"], clean["rewards"]
    num_turns = turn_ids.max(axis=1) + 1  # 0 for a row without a policy token
    lengths = action.sum(axis=1).astype(np.float64)
    view = {
        "action": action,
        "turn_ids": turn_ids,
        "rewards": rewards,
        "turn_exists": np.arange(rewards.shape[1]) < num_turns[:, None],
        "old": np.where(action, clean["old_logprobs"], 0.0),
        "ref": np.where(action, clean["ref_logprobs"], 0.0) if "ref_logprobs" in clean else None,
        "versions": clean["policy_version"],
        "lengths": lengths,
        "has_tokens": lengths > 0,
        "all_rows": np.ones(action.shape[0], dtype=bool),
        "episode_return": rewards.sum(axis=1),
        "advantages": None,
        "row_advantage": None,
    }
    if "advantages" in clean and action.any():
        advantages = clean["advantages"]
        if advantages.shape != action.shape:  # one per turn: copy it to the turn's tokens
            advantages = tokens.expand_turn_values_to_tokens(advantages, turn_ids)
        view["advantages"] = np.where(action, advantages, 0.0)
        # The advantage of an episode: the mean over its generated tokens.
        view["row_advantage"] = view["advantages"].sum(axis=1) / np.maximum(lengths, 1.0)
    return view


def _check_inputs(view: dict, given: dict) -> dict:
    """The optional inputs of :func:`report`, checked (all of them, before any work)."""
    action, rows = view["action"], view["action"].shape[0]
    inputs = dict(given)
    if given["logprobs"] is not None:
        inputs["logprobs"] = _read_per_token(given["logprobs"], "logprobs", action, logprob=True)
    if given["entropies"] is not None:
        inputs["entropies"] = _read_per_token(given["entropies"], "entropies", action)
        negative = inputs["entropies"] < 0.0
        if negative.any():
            index = tuple(int(i) for i in np.argwhere(negative)[0])
            raise ValueError(
                "entropies must be >= 0 where action_mask is set; got "
                f"{float(inputs['entropies'][index])!r} at index {index}"
            )
    masks = {}
    for name in ("values", "returns"):
        if given[name] is not None:
            shape, per_turn = np.shape(given[name]), view["turn_exists"].shape
            if shape not in (action.shape, per_turn):
                raise ValueError(
                    f"{name} must have shape {action.shape} (one per target token) or "
                    f"{per_turn} (one per turn); got shape {shape}"
                )
            masks[name] = action if shape == action.shape else view["turn_exists"]
            inputs[name] = _read_per_token(given[name], name, masks[name])
    inputs["value_mask"] = None
    if len(masks) == 2:
        if inputs["values"].shape != inputs["returns"].shape:
            raise ValueError(
                f"returns must have the shape of values, {inputs['values'].shape}; got shape "
                f"{inputs['returns'].shape}"
            )
        inputs["value_mask"] = masks["values"]
    components = given["reward_components"]
    if components is not None:
        if not isinstance(components, Mapping):
            raise ValueError(
                "reward_components must be a mapping of names to (B, T) arrays; got "
                f"{type(components).__name__}"
            )
        inputs["reward_components"] = {
            name: _read_per_token(value, f"reward_components[{name!r}]", view["turn_exists"])
            for name, value in components.items()
        }
    for name in ("group_ids", "task_ids"):
        if given[name] is not None:
            inputs[name] = _labels(given[name], name, (rows,))
    if given["success"] is not None:
        inputs["success"] = check_mask(given["success"], "success", (rows,))
    if given["gradients"] is not None and not isinstance(given["gradients"], Mapping):
        raise ValueError(
            "gradients must be a mapping of group names to arrays; got "
            f"{type(given['gradients']).__name__}"
        )
    if given["max_grad_norm"] is not None:
        inputs["max_grad_norm"] = check_positive_real(given["max_grad_norm"], "max_grad_norm")
    if given["gradients"] is not None:  # checked (and cheap) now, reported in its section
        threshold = 1.0 if inputs["max_grad_norm"] is None else inputs["max_grad_norm"]
        inputs["gradient_norms"] = gradient_norms(given["gradients"], threshold)
    _check_clip_arguments(given["clip_low"], given["clip_high"], given["dual_clip"])
    inputs["quantiles"] = _quantile_levels(given["quantiles"])
    inputs["tail_fraction"] = _check_fraction(given["tail_fraction"], "tail_fraction")
    inputs["length_buckets"] = check_size(
        check_positive_int(given["length_buckets"], "length_buckets"),
        "length_buckets",
        MAX_ARRAY_ENTRIES,
        "buckets",
    )
    return inputs


def _returns_section(table, skipped, view, inputs):
    """Returns, reward components, lengths, and returns by turn."""
    episode_return, fraction = view["episode_return"], inputs["tail_fraction"]
    mean, std, _, _ = reward_statistics(episode_return)
    table["return/mean"], table["return/std"] = mean, std
    table["return/min"] = float(episode_return.min())
    table["return/max"] = float(episode_return.max())
    table["return/tail_mean"] = tail_mean(episode_return, fraction)
    turn_exists = view["turn_exists"]
    if inputs["reward_components"] is None:
        skipped["reward/<component>/*"] = "needs reward_components"
    for name, component in (inputs["reward_components"] or {}).items():
        if not turn_exists.any():
            skipped[f"reward/{name}/*"] = "no row has a turn"
            continue
        mean, std, _, _ = reward_statistics(component, turn_exists)
        table[f"reward/{name}/mean"], table[f"reward/{name}/std"] = mean, std
        table[f"reward/{name}/min"] = float(component[turn_exists].min())
        table[f"reward/{name}/max"] = float(component[turn_exists].max())
        table[f"reward/{name}/tail_mean"] = tail_mean(component, fraction, turn_exists)
    rewards = view["rewards"]
    to_go = np.flip(np.cumsum(np.flip(rewards, axis=1), axis=1), axis=1)
    turn_index = np.broadcast_to(np.arange(rewards.shape[1]), rewards.shape)
    _add_means(table, "return/by_turn", to_go, turn_index, turn_exists)

    lengths = view["lengths"]
    table["length/mean"] = float(lengths.mean())
    table["length/min"], table["length/max"] = float(lengths.min()), float(lengths.max())
    _correlate(table, skipped, "length/corr_return", lengths, episode_return, view["all_rows"])


def _advantages_section(table, skipped, view, inputs):
    """Advantages, and returns and advantages by turn, task, success and length."""
    advantages, action = view["advantages"], view["action"]
    if advantages is None:
        skipped["advantage/*"] = "needs advantages in the batch (and a generated token)"
    else:
        selected = advantages[action]
        table["advantage/mean"] = float(selected.mean())
        table["advantage/std"] = float(selected.std())
        table["advantage/zero_fraction"] = float(np.mean(selected == 0.0))
        _add_means(table, "advantage/by_turn", advantages, view["turn_ids"], action)
        _correlate(
            table,
            skipped,
            "length/corr_advantage",
            view["lengths"],
            view["row_advantage"],
            view["has_tokens"],
        )

    success = inputs["success"]
    episode_labels = {
        "task": (inputs["task_ids"], None, "needs task_ids"),
        "success": (
            None if success is None else success.astype(np.int64),
            ("failure", "success"),
            "needs success",
        ),
    }
    lengths = view["lengths"]
    levels = np.arange(1, inputs["length_buckets"] + 1) / inputs["length_buckets"]
    edges = np.unique(np.quantile(lengths, levels, method="inverted_cdf"))  # observed lengths
    episode_labels["length"] = (
        np.searchsorted(edges, lengths),  # the bucket of the first edge >= the length
        [f"le{edge:g}" for edge in edges],
        None,
    )
    for name, (labels, names, reason) in episode_labels.items():
        if labels is None:
            skipped[f"*/by_{name}/*"] = reason
            continue
        _add_means(
            table, f"return/by_{name}", view["episode_return"], labels, view["all_rows"], names
        )
        if advantages is not None:
            _add_means(
                table,
                f"advantage/by_{name}",
                view["row_advantage"],
                labels,
                view["has_tokens"],
                names,
            )
    if success is not None:
        table["success/rate"] = float(success.mean())
        _add_means(
            table,
            "length/by_success",
            lengths,
            success.astype(np.int64),
            view["all_rows"],
            ("failure", "success"),
        )


def _groups_section(table, skipped, view, inputs):
    """Spread of rewards within groups, and the groups that teach nothing."""
    if inputs["group_ids"] is None:
        skipped["group/*"] = "needs group_ids"
        return
    variance, all_equal = group_variance_statistics(view["episode_return"], inputs["group_ids"])
    table["group/reward_variance"] = variance
    table["group/all_equal_fraction"] = all_equal


def _entropy_section(table, skipped, view, inputs):
    """Entropy by position: the sampled estimate -log μ always, the exact entropy if given."""
    action = view["action"]
    if inputs["entropies"] is None:
        skipped["entropy/{mean,position/*}"] = (
            "needs entropies (of the current next-token distributions)"
        )
    if not action.any():
        skipped["entropy/sampled/*"] = "the batch has no generated token"
        return
    _profile(table, "entropy/sampled", -view["old"], action)
    if inputs["entropies"] is not None:
        _profile(table, "entropy", inputs["entropies"], action)


def _ratios_section(table, skipped, view, inputs):
    """KL to the reference, and with the current policy: log-ratios, KL to the old policy,
    clip fractions and effective sample sizes."""
    action, old, ref, logprobs = view["action"], view["old"], view["ref"], inputs["logprobs"]
    if not action.any():
        skipped["kl/*"] = skipped["log_ratio/*"] = "the batch has no generated token"
        return
    if ref is None:
        skipped["kl/*_ref/*"] = "needs ref_logprobs in the batch"
    else:
        for name in ESTIMATORS:
            table[f"kl/old_ref/{name}"] = approximate_kl(old, ref, action, name)
    if logprobs is None:
        reason = "needs logprobs (the current policy, for the ratios)"
        for family in ("log_ratio/*", "kl/old_current/*", "clip/*", "ess/*"):
            skipped[family] = reason
        return

    levels = inputs["quantiles"]
    mean, max_abs, values = log_ratio_summary(logprobs, old, action, levels)
    table["log_ratio/mean"], table["log_ratio/max_abs"] = mean, max_abs
    for level, value in zip(levels, values, strict=True):
        table[f"log_ratio/q{level:g}"] = float(value)
    mean, max_abs, _ = log_ratio_summary(logprobs, old, action, levels, "sequence")
    table["log_ratio/sequence/mean"], table["log_ratio/sequence/max_abs"] = mean, max_abs
    for name in ESTIMATORS:
        table[f"kl/old_current/{name}"] = approximate_kl(old, logprobs, action, name)
        if ref is not None:  # KL(π ‖ π_ref) from μ's samples needs the weight π / μ
            weighted = kl.importance_weighted_kl(logprobs, ref, old, name, action)
            table[f"kl/current_ref/{name}"] = float(weighted.sum() / action.sum())

    advantages = view["advantages"]
    if advantages is None:
        skipped["clip/*"] = "needs advantages in the batch"
    else:
        ratio = np.exp(np.where(action, logprobs - old, 0.0))
        positive, negative = ppo.clip_fractions(
            ratio, advantages, action, inputs["clip_low"], inputs["clip_high"], inputs["dual_clip"]
        )
        signs = advantages[action]
        table["clip/positive"], table["clip/negative"] = positive, negative
        clipped = positive * np.sum(signs > 0) + negative * np.sum(signs < 0)
        table["clip/pooled"] = float(clipped / signs.size)

    for level in RATIO_LEVELS:
        ess = importance_ess(logprobs, old, action, level)
        count = action.sum() if level == "token" else view["has_tokens"].sum()
        table[f"ess/{level}"] = ess
        table[f"ess/{level}_fraction"] = float(ess / count)


def _critic_section(table, skipped, view, inputs):
    """Value loss, explained variance, and the bias at a few horizons."""
    values, returns, mask = inputs["values"], inputs["returns"], inputs["value_mask"]
    if mask is None:
        skipped["value/*"] = "needs values and returns"
        return
    if not mask.any():
        skipped["value/*"] = "the batch has no position to evaluate"
        return
    table["value/loss"] = ppo.value_loss(values, returns, mask)
    if _masked_variance(returns, mask) == 0.0:
        skipped["value/explained_variance"] = "the returns are constant over the batch"
    else:
        table["value/explained_variance"] = explained_variance(values, returns, mask)
    mean_values, mean_returns, counts = calibration_by_horizon(values, returns, mask)
    for h in _powers_of_two(counts.size):
        table[f"value/bias/horizon/{h}"] = float(mean_values[h] - mean_returns[h])


def _gradients_section(table, skipped, view, inputs):
    """Gradient norms before and after clipping by the global norm, and per group."""
    gradients, max_norm = inputs["gradients"], inputs["max_grad_norm"]
    if gradients is None:
        skipped["grad_norm/*"] = "needs gradients"
        return
    group_norms, before, after = inputs["gradient_norms"]
    table["grad_norm/before"] = before
    for name, norm in zip(gradients, group_norms, strict=True):
        table[f"grad_norm/group/{name}"] = float(norm)
    if max_norm is None:
        skipped["grad_norm/after"] = "needs max_grad_norm"
    else:
        table["grad_norm/after"] = after


def _lag_section(table, skipped, view, inputs):
    """Policy lag in optimizer steps (the divergence is ``kl/old_current/*``)."""
    if inputs["learner_version"] is None:
        skipped["lag/*"] = "needs learner_version"
        return
    versions = view["versions"]
    mask = view["action"] if versions.shape == view["action"].shape else view["has_tokens"]
    if not mask.any():
        skipped["lag/*"] = "the batch has no generated token"
        return
    table["lag/steps_mean"], table["lag/steps_max"] = policy_lag(
        versions, inputs["learner_version"], mask
    )


_SECTIONS = (
    _returns_section,
    _advantages_section,
    _groups_section,
    _entropy_section,
    _ratios_section,
    _critic_section,
    _gradients_section,
    _lag_section,
)


@finite_output()
def report(
    batch: Mapping[str, ArrayLike],
    *,
    logprobs: ArrayLike | None = None,
    entropies: ArrayLike | None = None,
    values: ArrayLike | None = None,
    returns: ArrayLike | None = None,
    reward_components: Mapping[str, ArrayLike] | None = None,
    group_ids: ArrayLike | None = None,
    task_ids: ArrayLike | None = None,
    success: ArrayLike | None = None,
    gradients: Mapping[str, ArrayLike] | None = None,
    max_grad_norm: float | None = None,
    learner_version: int | None = None,
    clip_low: float = 0.2,
    clip_high: float | None = None,
    dual_clip: float | None = None,
    quantiles: ArrayLike = (0.01, 0.5, 0.99),
    tail_fraction: float = 0.05,
    length_buckets: int = 4,
) -> tuple[dict[str, float], dict[str, str]]:
    """Every estimator diagnostic of one training batch, as a flat table.

    The batch is the chapter-13 contract (:func:`rlfound.contract.validate` checks it first):
    ``rewards`` (B, T) per turn, ``action_mask``, ``old_logprobs``, ``turn_ids`` and
    ``policy_version`` aligned with the targets, optional ``ref_logprobs`` and
    ``advantages`` (per token or per turn). Everything a trainer knows beyond the batch is
    an optional keyword argument; a diagnostic whose inputs are missing, or that the batch
    leaves undefined, is not computed and is named in the second dictionary with the reason.

    Per episode (row) i: the return R_i = Σ_k r_ik (undiscounted, over its turns), the length
    n_i = Σ_j action_mask_ij (generated tokens), its advantage = the mean advantage of its
    tokens. The table's names (every value a float):

    - ``return/{mean,std,min,max}``, ``return/tail_mean`` (:func:`tail_mean` at
      ``tail_fraction``), ``reward/<component>/{mean,std,min,max,tail_mean}`` per reward
      component; ``return/by_turn/<k>/mean`` (reward-to-go from turn k);
    - ``advantage/{mean,std,zero_fraction}`` over the generated tokens,
      ``advantage/by_turn/<k>/mean``; with ``task_ids``: ``return/by_task/<id>/mean`` and
      ``advantage/by_task/<id>/mean``; with ``success``: ``success/rate`` and
      ``{return,advantage,length}/by_success/{failure,success}/mean``;
      ``{return,advantage}/by_length/le<n>/mean`` over ``length_buckets`` quantile buckets
      of the lengths (labeled by their largest length);
    - ``length/{mean,min,max}``, ``length/corr_return``, ``length/corr_advantage``;
    - ``group/reward_variance``, ``group/all_equal_fraction`` (with ``group_ids``);
    - ``entropy/sampled/mean`` and ``entropy/sampled/position/<p>`` (the estimate -log μ of
      the sampled tokens, p = 0, 1, 2, 4, ...); with ``entropies``: ``entropy/mean`` and
      ``entropy/position/<p>``;
    - ``kl/old_ref/<k>`` for k in k1, k2, k3 (with ``ref_logprobs``): KL(μ ‖ π_ref) from the
      sampled tokens;
    - with ``logprobs``: ``log_ratio/{mean,max_abs}``, ``log_ratio/q<level>``,
      ``log_ratio/sequence/{mean,max_abs}``,
      ``kl/old_current/<k>`` (KL(μ ‖ π), the drift since sampling), ``kl/current_ref/<k>``
      (KL(π ‖ π_ref), importance-weighted, with ``ref_logprobs``),
      ``clip/{positive,negative,pooled}`` (:func:`rlfound.ppo.clip_fractions` with the
      clip arguments; pooled: over all generated tokens), ``ess/{token,sequence}`` and
      ``ess/{token,sequence}_fraction`` (ESS / N);
    - with ``values`` and ``returns`` (both (B, L - 1) per token or (B, T) per turn):
      ``value/loss`` (:func:`rlfound.ppo.value_loss`), ``value/explained_variance``,
      ``value/bias/horizon/<h>`` (mean V - G at h steps to go, h = 0, 1, 2, 4, ...);
    - with ``gradients``: ``grad_norm/before``, ``grad_norm/group/<name>`` and, with
      ``max_grad_norm``, ``grad_norm/after``;
    - with ``learner_version``: ``lag/steps_mean``, ``lag/steps_max``.

    Book: chapter 12 (all its equations; the report is their table).

    Parameters
    ----------
    batch : mapping of str to array_like
        A padded batch of the contract (extra fields are ignored).
    logprobs : array_like, shape (B, L - 1), optional
        log π of every target under the current policy (read where ``action_mask``).
    entropies : array_like, shape (B, L - 1), optional
        Entropy of the current next-token distribution at every target position, >= 0
        (:func:`rlfound.entropy.token_entropies` of the shifted logits).
    values, returns : array_like, shape (B, L - 1) or (B, T), optional
        Critic predictions and their targets, per token or per turn.
    reward_components : mapping of str to array_like of shape (B, T), optional
        The raw components of the reward of each turn (they need not sum to ``rewards``).
    group_ids, task_ids : array_like of int, shape (B,), optional
        The group (prompt) and the task of each row.
    success : array_like of bool or 0/1, shape (B,), optional
        Whether each episode succeeded.
    gradients : mapping of str to array_like, optional
        The gradient of each parameter group at this step.
    max_grad_norm : float, optional
        The clipping threshold (> 0) for ``grad_norm/after``.
    learner_version : int, optional
        The learner's version (checked by :func:`rlfound.contract.validate`).
    clip_low, clip_high, dual_clip : float, optional
        PPO's clip ranges, as in :func:`rlfound.ppo.clip_fractions`. Defaults 0.2, None,
        None.
    quantiles : array_like, optional
        Levels of the log-ratio quantiles. Default (0.01, 0.5, 0.99).
    tail_fraction : float, optional
        α of the tail means, in (0, 1]. Default 0.05.
    length_buckets : int, optional
        Number of quantile buckets of the lengths, >= 1. Default 4.

    Returns
    -------
    table : dict of str to float
        The diagnostics that were computed.
    skipped : dict of str to str
        Each diagnostic (or family, ``name/*``) that was not, with the reason.

    Raises
    ------
    ValueError
        If the batch breaks the contract (as :func:`rlfound.contract.validate`), or an
        optional input does not have its shape or values (the message names the argument).

    Examples
    --------
    >>> episode = {"segments": [{"kind": "user", "tokens": [5, 6]},
    ...                         {"kind": "policy", "tokens": [7, 8], "logprobs": [-0.5, -1.0],
    ...                          "version": 3}], "rewards": [1.0]}
    >>> table, skipped = report(contract.build_batch([episode, episode]), learner_version=4)
    >>> table["return/mean"], table["length/mean"], table["lag/steps_mean"]
    (1.0, 2.0, 1.0)
    >>> skipped["log_ratio/*"]
    'needs logprobs (the current policy, for the ratios)'
    """
    clean = contract.validate(batch, learner_version=learner_version)
    view = _batch_view(clean)
    given = {
        "logprobs": logprobs,
        "entropies": entropies,
        "values": values,
        "returns": returns,
        "reward_components": reward_components,
        "group_ids": group_ids,
        "task_ids": task_ids,
        "success": success,
        "gradients": gradients,
        "max_grad_norm": max_grad_norm,
        "learner_version": learner_version,
        "clip_low": clip_low,
        "clip_high": clip_high,
        "dual_clip": dual_clip,
        "quantiles": quantiles,
        "tail_fraction": tail_fraction,
        "length_buckets": length_buckets,
    }
    inputs = _check_inputs(view, given)
    table: dict[str, float] = {}
    skipped: dict[str, str] = {}
    for section in _SECTIONS:
        section(table, skipped, view, inputs)
    return table, skipped


# --- plotting ----------------------------------------------------------------------------------


def _check_run(run: Any, label: str) -> list:
    """One run: a non-empty sequence of tables (mappings)."""
    if isinstance(run, Mapping | str) or not isinstance(run, Sequence) or not run:
        raise ValueError(
            f"history{label} must be a non-empty sequence of tables (dicts of name -> float); "
            f"got {run!r:.60}"
        )
    for step, table in enumerate(run):
        if not isinstance(table, Mapping):
            raise ValueError(
                f"history{label} must hold tables (dicts of name -> float); got "
                f"{type(table).__name__} at step {step}"
            )
    return list(run)


@finite_output()
def plot_history(
    history: Sequence[Mapping[str, float]] | Mapping[str, Sequence[Mapping[str, float]]],
    names: Sequence[str | Sequence[str]] | None = None,
    ncols: int = 3,
    steps: ArrayLike | None = None,
):
    """Draw diagnostics over training steps, one panel per name, and return the figure.

    ``history`` is the list of tables :func:`report` returned at successive steps, or a
    dict of such lists, one per run, to compare runs in every panel. A name missing from a
    step's table leaves a gap. Each entry of ``names`` is one panel: a diagnostic's name, or
    a tuple of names drawn in the same panel. matplotlib is imported here, not when the
    module is imported: it is a dependency of the book, not of the library.

    Parameters
    ----------
    history : sequence of mapping of str to float, or mapping of str to such sequences
        One table per step (at least one); or runs by name.
    names : sequence of str or of tuples of str, optional
        The panels. Default: those of ``DEFAULT_PANELS`` that occur in ``history``.
    ncols : int, optional
        Panels per row, >= 1. Default 3.
    steps : array_like, shape (S,), optional
        The x value of each table (optimizer steps), when every run has S tables. Default
        0, 1, 2, ...

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not shown; call ``plt.show()`` or ``fig.savefig``).

    Raises
    ------
    ImportError
        If matplotlib is not installed (the message says how to install it).
    ValueError
        If ``history`` (or a run) is empty or holds something other than tables of numbers,
        a name occurs in no table, no default panel occurs, ``ncols`` is not a positive
        integer, or ``steps`` is not a finite 1-D array with one entry per table of every run.

    Examples
    --------
    >>> fig = plot_history([{"return/mean": 0.1}, {"return/mean": 0.4, "lag/steps_mean": 2.0}])
    >>> [ax.get_title() for ax in fig.axes if ax.get_visible()]
    ['return/mean', 'lag/steps_mean']
    >>> runs = plot_history({"a": [{"loss": 1.0}], "b": [{"loss": 0.5}]}, names=["loss"])
    >>> [line.get_label() for line in runs.axes[0].get_lines()]
    ['a', 'b']
    >>> import matplotlib.pyplot as plt
    >>> plt.close(fig), plt.close(runs)
    (None, None)
    """
    if isinstance(history, Mapping):
        if not history:
            raise ValueError("history must hold at least one run; got an empty mapping")
        runs = {str(label): _check_run(run, f"[{label!r}]") for label, run in history.items()}
    else:
        runs = {"": _check_run(history, "")}
    present = set().union(*(table.keys() for run in runs.values() for table in run))
    if names is None:
        panels = [
            panel
            for panel in DEFAULT_PANELS
            if any(name in present for name in ((panel,) if isinstance(panel, str) else panel))
        ]
        if not panels:
            raise ValueError(
                "names must be given when history holds none of the default panels; got "
                f"names None and the diagnostics {sorted(present)[:5]}"
            )
    else:
        if isinstance(names, str) or not isinstance(names, Sequence) or not names:
            raise ValueError(f"names must be a non-empty list of diagnostic names; got {names!r}")
        panels = list(names)
        for panel in panels:
            for name in (panel,) if isinstance(panel, str) else panel:
                if name not in present:
                    raise ValueError(
                        f"names must name diagnostics that occur in history; got {name!r}"
                    )
    ncols = check_positive_int(ncols, "ncols")
    if steps is not None:
        steps = as_float_array(steps, "steps", ndim=1)
        for run in runs.values():
            check_shape(steps, "steps", (len(run),), "one entry per table of history")
    series = {}  # (run, name) -> (x, y)
    for label, run in runs.items():
        x = np.arange(len(run), dtype=np.float64) if steps is None else steps
        for panel in panels:
            for name in (panel,) if isinstance(panel, str) else panel:
                column = [table.get(name, np.nan) for table in run]
                try:
                    series[label, name] = x, np.array(column, dtype=np.float64)
                except (TypeError, ValueError) as error:
                    raise ValueError(
                        f"history must hold numbers; got {column!r:.60} for {name!r}"
                    ) from error

    try:
        import matplotlib.pyplot as plt
    except ImportError as error:  # matplotlib is a dependency of the book, not of rlfound
        raise ImportError(
            "plot_history needs matplotlib, which rlfound does not install; install it with "
            "`pip install matplotlib` (or `pip install rlfound[book]`)"
        ) from error

    ncols = min(ncols, len(panels))  # more columns than panels would only be empty axes
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(4.0 * ncols, 2.8 * nrows), squeeze=False, sharex=True
    )
    for ax, panel in zip(axes.flat, panels, strict=False):
        group = (panel,) if isinstance(panel, str) else tuple(panel)
        for label in runs:
            for name in group:
                text = " ".join(part for part in (label, "" if len(group) == 1 else name) if part)
                ax.plot(*series[label, name], marker=".", markersize=3, label=text or None)
        ax.set_title(" / ".join(group), fontsize=9)
        if len(group) > 1 or len(runs) > 1:
            ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("step")
    fig.tight_layout()
    return fig
