"""Importance sampling: estimating a target policy's value from actions logged by another.

Actions a_1, ..., a_N were drawn from a behavior policy μ over K actions; we want the
expected reward under a target policy π. Reweighting each sample by ρ_i = π(a_i) / μ(a_i)
turns an average under μ into an average under π,

    E_{a ~ π}[f(a)] = E_{a ~ μ}[(π(a) / μ(a)) f(a)],

provided μ(a) > 0 wherever π(a) f(a) ≠ 0 (the support condition).

For token sequences (chapter 5) the ratio of a whole response is a product of per-token
ratios; it is formed here in log space from the per-token log-probabilities ``logprobs``
(the current policy) and ``old_logprobs`` (the policy version that sampled the tokens), with a
``mask`` that selects the tokens the policy generated. ``old_logprobs`` are inputs only: no
function modifies them or recomputes them from text.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    SUPPORT_TOLERANCE,
    as_float_array,
    check_bool,
    check_distribution,
    check_indices,
    check_last_axis,
    check_logprob_pair,
    check_nonnegative_int,
    check_positive_entries,
    check_positive_real,
    check_shape,
    check_support,
    check_weights,
    finite_output,
    first_index,
)

__all__ = [
    "effective_sample_size",
    "importance_ratios",
    "importance_sampling_variance",
    "off_policy_value",
    "sequence_log_ratio",
    "sequence_ratio",
    "sequence_ratio_variance",
    "token_ratios",
    "truncated_importance_weights",
    "truncated_ratios",
    "weighted_off_policy_value",
]


def _check_policies(
    target_probs: ArrayLike, behavior_probs: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Two 1-D probability vectors over the same K actions."""
    target_probs = check_distribution(
        as_float_array(target_probs, "target_probs", ndim=1), "target_probs"
    )
    behavior_probs = check_distribution(
        as_float_array(behavior_probs, "behavior_probs", ndim=1),
        "behavior_probs",
    )
    check_shape(
        behavior_probs,
        "behavior_probs",
        target_probs.shape,
        "the actions of target_probs",
    )
    return target_probs, behavior_probs


def _check_logged_rewards(
    rewards: ArrayLike, ratios: np.ndarray
) -> np.ndarray:
    """At least one logged action, and one finite reward for each."""
    check_last_axis(ratios, "actions", 1, "logged action")
    rewards = as_float_array(rewards, "rewards", ndim=1)
    return check_shape(
        rewards, "rewards", ratios.shape, "one entry per logged action"
    )


@finite_output()
def importance_ratios(
    actions: ArrayLike, target_probs: ArrayLike, behavior_probs: ArrayLike
) -> np.ndarray:
    """Importance ratio of every logged action.

        ρ_i = π(a_i) / μ(a_i).

    A logged action must have μ(a_i) > 0; otherwise the data could not contain it and the
    ratio is undefined, so that case is an error rather than an infinity.

    Book: equation (eq-importance), chapter 1.

    Parameters
    ----------
    actions : array_like of int, shape (N,)
        Logged actions a_i in [0, K), drawn from the behavior policy.
    target_probs : array_like, shape (K,)
        Target policy π, a probability vector.
    behavior_probs : array_like, shape (K,)
        Behavior policy μ that logged the actions, a probability vector.

    Returns
    -------
    numpy.ndarray, shape (N,)
        The ratios ρ_i.

    Raises
    ------
    ValueError
        If either policy is not a 1-D probability vector or they differ in length, an action
        is not an integer in [0, K), or a logged action has behavior probability 0.
        A probability counts as positive only above ``SUPPORT_TOLERANCE``, the smallest
        normal float64 (about 2.2e-308): a subnormal one such as 5e-324 fails the
        support condition.

    References
    ----------
    H. Kahn and A. W. Marshall, "Methods of reducing sample size in Monte Carlo
    computations", *Journal of the Operations Research Society of America* 1(5), 1953.
    A. B. Owen, *Monte Carlo theory, methods and examples*, 2013, chapter 9.

    Examples
    --------
    >>> importance_ratios([0, 1, 1], target_probs=[0.25, 0.75], behavior_probs=[0.8, 0.2])
    array([0.3125, 3.75  , 3.75  ])
    """
    target_probs, behavior_probs = _check_policies(
        target_probs, behavior_probs
    )
    actions = check_indices(actions, "actions", len(target_probs), ndim=1)
    logged = np.isin(np.arange(len(behavior_probs)), actions)
    check_support(
        behavior_probs, "behavior_probs", "for every logged action", logged
    )

    return target_probs[actions] / behavior_probs[actions]


@finite_output()
def off_policy_value(
    actions: ArrayLike,
    rewards: ArrayLike,
    target_probs: ArrayLike,
    behavior_probs: ArrayLike,
) -> float:
    """Ordinary importance-sampling estimate of the target policy's expected reward.

        V̂_IS = (1/N) Σ_i ρ_i r_i,    ρ_i = π(a_i) / μ(a_i).

    Unbiased when μ(a) > 0 for every action with π(a) > 0, but its variance grows with how
    far π is from μ (see :func:`importance_sampling_variance`).

    Book: equation (eq-importance), chapter 1.

    Parameters
    ----------
    actions : array_like of int, shape (N,)
        Logged actions a_i in [0, K), N >= 1.
    rewards : array_like, shape (N,)
        Reward r_i observed for each logged action.
    target_probs : array_like, shape (K,)
        Target policy π.
    behavior_probs : array_like, shape (K,)
        Behavior policy μ.

    Returns
    -------
    float
        The estimate V̂_IS.

    Raises
    ------
    ValueError
        As :func:`importance_ratios`, and if ``actions`` is empty or ``rewards`` does not
        have one finite entry per action; starting ``"overflow in"``, if a weighted reward
        exceeds the float64 range.

    References
    ----------
    H. Kahn and A. W. Marshall, "Methods of reducing sample size in Monte Carlo
    computations", *Journal of the Operations Research Society of America* 1(5), 1953.
    A. B. Owen, *Monte Carlo theory, methods and examples*, 2013, chapter 9.
    D. Precup, R. S. Sutton and S. Singh, "Eligibility traces for off-policy policy
    evaluation", ICML, 2000.

    Examples
    --------
    >>> off_policy_value([0, 1], [1.0, 3.0], target_probs=[0.25, 0.75], behavior_probs=[0.5, 0.5])
    2.5
    """
    ratios = importance_ratios(actions, target_probs, behavior_probs)
    rewards = _check_logged_rewards(rewards, ratios)

    return float(np.mean(ratios * rewards))


@finite_output()
def weighted_off_policy_value(
    actions: ArrayLike,
    rewards: ArrayLike,
    target_probs: ArrayLike,
    behavior_probs: ArrayLike,
) -> float:
    """Self-normalized (weighted) importance-sampling estimate of the target's value.

        V̂_WIS = Σ_i ρ_i r_i / Σ_i ρ_i.

    Dividing by the realized sum of the ratios instead of N makes the estimate a convex
    combination of the observed rewards: slightly biased for finite N, consistent, and
    usually far less variable than :func:`off_policy_value`.

    Book: equation (eq-importance), chapter 1.

    Parameters
    ----------
    actions : array_like of int, shape (N,)
        Logged actions a_i in [0, K), N >= 1.
    rewards : array_like, shape (N,)
        Reward r_i observed for each logged action.
    target_probs : array_like, shape (K,)
        Target policy π.
    behavior_probs : array_like, shape (K,)
        Behavior policy μ.

    Returns
    -------
    float
        The estimate V̂_WIS.

    Raises
    ------
    ValueError
        As :func:`off_policy_value`, and if π gives probability 0 to every logged action
        (all ratios are 0 and the estimate is undefined).

    References
    ----------
    A. B. Owen, *Monte Carlo theory, methods and examples*, 2013, section 9.2.
    D. Precup, R. S. Sutton and S. Singh, "Eligibility traces for off-policy policy
    evaluation", ICML, 2000.

    Examples
    --------
    >>> weighted_off_policy_value([0, 1, 1], [1.0, 3.0, 3.0], [0.25, 0.75], [0.5, 0.5])
    2.714285714285714
    """
    ratios = importance_ratios(actions, target_probs, behavior_probs)
    rewards = _check_logged_rewards(rewards, ratios)
    if ratios.sum() == 0.0:
        raise ValueError(
            "target_probs must give positive probability to at least one "
            "logged action for the self-normalized estimate; got 0 for all "
            "of them"
        )

    return float(np.sum(ratios * rewards) / np.sum(ratios))


@finite_output()
def importance_sampling_variance(
    target_probs: ArrayLike,
    behavior_probs: ArrayLike,
    action_rewards: ArrayLike,
) -> float:
    """Exact variance of the one-sample importance-sampling estimate ρ(a) q(a), a ~ μ.

        Var_μ[ρ q] = Σ_a π(a)² q(a)² / μ(a) - (Σ_a π(a) q(a))²,

    where the first sum runs over actions with μ(a) > 0. The variance of the N-sample
    average :func:`off_policy_value` is this divided by N. The 1/μ(a) factor shows why a
    behavior policy that rarely takes an action the target likes makes the estimate noisy.

    Book: equation (eq-importance), chapter 1.

    Parameters
    ----------
    target_probs : array_like, shape (K,)
        Target policy π.
    behavior_probs : array_like, shape (K,)
        Behavior policy μ.
    action_rewards : array_like, shape (K,)
        Deterministic reward q(a) of each action.

    Returns
    -------
    float
        The variance, >= 0.

    Raises
    ------
    ValueError
        If the policies are not 1-D probability vectors of equal length,
        ``action_rewards`` does not have one finite entry per action, or some action has
        μ(a) = 0 but π(a) q(a) ≠ 0 (the estimate is then biased, so its variance is beside
        the point). μ(a) counts as 0 up to ``SUPPORT_TOLERANCE`` (about 2.2e-308); and,
        starting ``"overflow in"``, if the second moment exceeds the float64 range.

    References
    ----------
    A. B. Owen, *Monte Carlo theory, methods and examples*, 2013, section 9.1.
    H. Kahn and A. W. Marshall, "Methods of reducing sample size in Monte Carlo
    computations", *Journal of the Operations Research Society of America* 1(5), 1953.

    Examples
    --------
    >>> importance_sampling_variance([0.25, 0.75], [0.8, 0.2], action_rewards=[1.0, 3.0])
    19.140625
    >>> importance_sampling_variance([0.25, 0.75], [0.25, 0.75], action_rewards=[1.0, 3.0])
    0.75
    """
    target_probs, behavior_probs = _check_policies(
        target_probs, behavior_probs
    )
    action_rewards = as_float_array(action_rewards, "action_rewards", ndim=1)
    check_shape(
        action_rewards,
        "action_rewards",
        target_probs.shape,
        "one entry per action",
    )
    weighted = (
        target_probs * action_rewards
    )  # π(a) q(a), the integrand of the target value
    check_support(
        behavior_probs,
        "behavior_probs",
        "wherever π(a) q(a) is non-zero",
        weighted != 0,
    )
    supported = (
        behavior_probs > SUPPORT_TOLERANCE
    )  # what check_support calls positive

    second_moment = np.sum(
        weighted[supported] ** 2 / behavior_probs[supported]
    )
    # Rounding can leave a tiny negative number when μ = π and q is constant.
    return float(max(second_moment - weighted.sum() ** 2, 0.0))


@finite_output()
def effective_sample_size(weights: ArrayLike) -> float:
    """Kish/Kong effective sample size of a set of importance weights.

        ESS = (Σ_i w_i)² / Σ_i w_i².

    It equals N when all weights are equal and 1 when a single weight carries all the mass,
    so ESS / N says what fraction of the samples is really informing the estimate.

    Book: equation (eq-importance), chapter 1.

    Parameters
    ----------
    weights : array_like, shape (N,)
        Non-negative importance weights (for example the ratios ρ_i), not all zero.

    Returns
    -------
    float
        The effective sample size, in [1, N].

    Raises
    ------
    ValueError
        If ``weights`` is not a finite 1-D array, has a negative entry, or is all zero.

    References
    ----------
    A. Kong, "A note on importance sampling using standardized weights", Technical Report
    348, Department of Statistics, University of Chicago, 1992.
    A. B. Owen, *Monte Carlo theory, methods and examples*, 2013, section 9.3.

    Examples
    --------
    >>> effective_sample_size([1.0, 1.0, 1.0, 1.0])
    4.0
    >>> effective_sample_size([0.3125, 3.75, 3.75])
    2.1626
    """
    weights = check_weights(weights, "weights")

    # Scaling by the largest weight leaves the ratio unchanged and keeps w² from overflowing.
    scaled = weights / weights.max()
    return float(scaled.sum() ** 2 / np.sum(scaled**2))


# --- Token sequences (chapter 5) ---------------------------------------------------------------


@finite_output()
def token_ratios(
    logprobs: ArrayLike,
    old_logprobs: ArrayLike,
    mask: ArrayLike | None = None,
) -> np.ndarray:
    """Per-token importance ratios of sampled tokens, from log-probabilities.

        ρ_j = π_θ(x_j | x_<j) / π_old(x_j | x_<j)
            = exp(log π_θ(x_j | x_<j) - log π_old(x_j | x_<j)),

    computed from the difference of the logs, which stays accurate when both probabilities
    are tiny. Positions outside ``mask`` (prompt, tool output, padding) get ρ = 1, the neutral
    element of a product, so that the product of a row equals :func:`sequence_ratio`; a loss
    must still leave them out through the mask.

    Book: equation (eq-sequence-ratio), chapter 5.

    Parameters
    ----------
    logprobs : array_like, shape (..., L)
        log π_θ of each sampled token under the current policy; every entry <= 0.
    old_logprobs : array_like, shape (..., L)
        log π_old of the same tokens, stored by the policy version that sampled them (never
        recomputed from decoded text); every entry <= 0.
    mask : array_like of bool or 0/1, shape (..., L), optional
        Which positions are tokens the policy generated. Default: all of them.

    Returns
    -------
    numpy.ndarray, shape (..., L)
        The ratios ρ_j > 0, and exactly 1 where ``mask`` is False.

    Raises
    ------
    ValueError
        If ``logprobs`` or ``old_logprobs`` is not a finite array with at least one dimension
        and entries <= 0, their shapes differ, or ``mask`` is not a bool or 0/1 array of
        their shape.

    References
    ----------
    J. Schulman, F. Wolski, P. Dhariwal, A. Radford and O. Klimov, "Proximal policy
    optimization algorithms", arXiv:1707.06347, 2017.

    Examples
    --------
    >>> token_ratios(np.log([0.5, 0.2, 0.9]), np.log([0.25, 0.4, 0.1]), mask=[1, 1, 0])
    array([2. , 0.5, 1. ])
    """
    logprobs, old_logprobs, mask = check_logprob_pair(
        logprobs, old_logprobs, mask, "old_logprobs"
    )

    return np.exp(np.where(mask, logprobs - old_logprobs, 0.0))


@finite_output()
def sequence_log_ratio(
    logprobs: ArrayLike,
    old_logprobs: ArrayLike,
    mask: ArrayLike | None = None,
    length_normalized: bool = False,
) -> np.ndarray | float:
    """Log of the importance ratio of whole sequences: a masked sum of token log-ratios.

        log ρ(x) = Σ_j m_j [log π_θ(x_j | x_<j) - log π_old(x_j | x_<j)],

    and, with ``length_normalized=True``, that sum divided by the number of valid tokens
    Σ_j m_j: the log of the geometric mean of the token ratios, the sequence ratio of GSPO
    (Zheng et al., 2025). The sum is the exact log-ratio of the response's probabilities; the
    normalized form is not a ratio of probabilities, but its spread does not grow with L.

    Book: equations (eq-sequence-ratio) and (eq-geometric-ratio), chapter 5.

    Parameters
    ----------
    logprobs : array_like, shape (..., L)
        log π_θ of each sampled token; entries <= 0.
    old_logprobs : array_like, shape (..., L)
        log π_old of the same tokens, as stored at sampling time; entries <= 0.
    mask : array_like of bool or 0/1, shape (..., L), optional
        Which positions count. Default: all of them.
    length_normalized : bool, optional
        Divide by the number of valid tokens of each sequence (GSPO). Default: False.

    Returns
    -------
    float or numpy.ndarray, shape (...)
        One log-ratio per sequence; a float for a single (1-D) sequence.

    Raises
    ------
    ValueError
        As :func:`token_ratios`; if ``length_normalized`` is not a bool; and, for the
        normalized form, if a sequence has no valid token.

    References
    ----------
    C. Zheng, S. Liu, M. Li, X.-H. Chen, B. Yu, C. Gao, K. Dang, Y. Liu, R. Men, A. Yang,
    J. Zhou and J. Lin, "Group sequence policy optimization", arXiv:2507.18071, 2025.
    D. Precup, R. S. Sutton and S. Singh, "Eligibility traces for off-policy policy
    evaluation", ICML, 2000.

    Examples
    --------
    >>> lp, old = np.log([0.5, 0.2, 0.9]), np.log([0.25, 0.4, 0.1])
    >>> float(np.exp(sequence_log_ratio(lp, old)))  # 2 * 0.5 * 9
    9.0
    >>> float(np.exp(sequence_log_ratio(lp, old, length_normalized=True)))  # 9 ** (1/3)
    2.080083823051904
    """
    length_normalized = check_bool(length_normalized, "length_normalized")
    logprobs, old_logprobs, mask = check_logprob_pair(
        logprobs, old_logprobs, mask, "old_logprobs"
    )

    total = np.sum(np.where(mask, logprobs - old_logprobs, 0.0), axis=-1)
    if length_normalized:
        counts = mask.sum(axis=-1)
        empty = counts == 0
        if np.any(empty):
            raise ValueError(
                "mask must select at least one token of every sequence for "
                "a length-normalized ratio; got none in sequence "
                f"{first_index(empty)}"
            )
        total = total / counts
    return float(total) if total.ndim == 0 else total


@finite_output()
def sequence_ratio(
    logprobs: ArrayLike,
    old_logprobs: ArrayLike,
    mask: ArrayLike | None = None,
    length_normalized: bool = False,
) -> np.ndarray | float:
    """Importance ratio of whole sequences, the exponential of :func:`sequence_log_ratio`.

        ρ(x) = Π_j ρ_j^{m_j} = exp(Σ_j m_j log ρ_j),
        s(x) = exp((1 / Σ_j m_j) Σ_j m_j log ρ_j)     (length_normalized=True, GSPO).

    The product is never formed factor by factor: the logs are summed and exponentiated once,
    so no intermediate product underflows or overflows. A log-ratio above about 709 still
    overflows float64 to ``inf`` at the last step; keep such ratios in log space.

    Book: equations (eq-sequence-ratio) and (eq-geometric-ratio), chapter 5.

    Parameters
    ----------
    logprobs, old_logprobs, mask, length_normalized
        As in :func:`sequence_log_ratio`.

    Returns
    -------
    float or numpy.ndarray, shape (...)
        One ratio per sequence; a float for a single (1-D) sequence.

    Raises
    ------
    ValueError
        As :func:`sequence_log_ratio`.

    References
    ----------
    C. Zheng et al., "Group sequence policy optimization", arXiv:2507.18071, 2025.

    Examples
    --------
    >>> sequence_ratio(np.log([[0.5, 0.2], [0.3, 0.3]]), np.log([[0.25, 0.4], [0.3, 0.6]]))
    array([1. , 0.5])
    """
    return np.exp(
        sequence_log_ratio(logprobs, old_logprobs, mask, length_normalized)
    )


@finite_output()
def sequence_ratio_variance(
    target_probs: ArrayLike, behavior_probs: ArrayLike, length: int
) -> float:
    """Exact variance of the sequence ratio of L tokens drawn independently from μ.

        Var_μ[Π_{j=1}^{L} ρ(x_j)] = (Σ_a π(a)² / μ(a))^L - 1
                                  = (1 + χ²(π ‖ μ))^L - 1,

    for tokens x_1, ..., x_L drawn independently from one behavior distribution μ over K
    tokens, with target π. Each factor has mean 1 and second moment 1 + χ²(π ‖ μ) >= 1, so
    the variance grows geometrically with the length unless π = μ. Real token distributions
    change with the prefix, but the geometric growth is the same: it is why a product of many
    per-token ratios is unusable as a weight.

    Book: equation (eq-sequence-ratio-variance), chapter 5.

    Parameters
    ----------
    target_probs : array_like, shape (K,)
        Target distribution π of one token.
    behavior_probs : array_like, shape (K,)
        Behavior distribution μ that drew the tokens; μ(a) > 0 wherever π(a) > 0.
    length : int
        Number of tokens L >= 0 (L = 0 gives the empty product, variance 0).

    Returns
    -------
    float
        The variance (``inf`` if it exceeds the float64 range).

    Raises
    ------
    ValueError
        If either distribution is not a 1-D probability vector, they differ in length, μ is
        0 (up to ``SUPPORT_TOLERANCE``, about 2.2e-308) where π is positive, or ``length``
        is not a non-negative integer; and, starting ``"overflow in"``, if the variance
        (1 + χ²)^L - 1 exceeds the float64 range.

    References
    ----------
    D. Precup, R. S. Sutton and S. Singh, "Eligibility traces for off-policy policy
    evaluation", ICML, 2000.
    A. B. Owen, *Monte Carlo theory, methods and examples*, 2013, section 9.1.

    Examples
    --------
    >>> v = sequence_ratio_variance([0.5, 0.5], [0.25, 0.75], length=2)  # (1 + 1/3)**2 - 1
    >>> round(v, 12)
    0.777777777778
    >>> sequence_ratio_variance([0.5, 0.5], [0.5, 0.5], length=100)
    0.0
    """
    target_probs, behavior_probs = _check_policies(
        target_probs, behavior_probs
    )
    length = check_nonnegative_int(length, "length")
    check_support(
        behavior_probs,
        "behavior_probs",
        "wherever target_probs is positive",
        target_probs > 0.0,
    )
    supported = (
        behavior_probs > SUPPORT_TOLERANCE
    )  # what check_support calls positive

    second_moment = np.sum(
        target_probs[supported] ** 2 / behavior_probs[supported]
    )
    # log1p/expm1: for π close to μ the per-token excess χ² is tiny and L may
    # be large.
    with np.errstate(over="ignore"):
        variance = np.expm1(length * np.log1p(max(second_moment - 1.0, 0.0)))
    return float(variance)


@finite_output()
def truncated_ratios(ratio: ArrayLike, cap: float) -> np.ndarray:
    """Importance ratios truncated from above: min(ρ, c).

        ρ̄ = min(ρ, c),    c > 0.

    Truncation bounds the weight, so the variance of a weighted average is bounded too, at
    the price of a bias: the weights no longer have mean 1, and samples that π likes much more
    than μ are under-counted. Unlike PPO's clip, truncation keeps the gradient of the weighted
    log-probability for every token; it only caps the weight.

    Book: equation (eq-truncated-ratio), chapter 5.

    Parameters
    ----------
    ratio : array_like, shape (...)
        Importance ratios ρ > 0 (at least one dimension).
    cap : float
        The truncation level c > 0. Practitioners differ (see
        :func:`truncated_importance_weights`), so there is no default.

    Returns
    -------
    numpy.ndarray
        min(ρ, c), with the shape of ``ratio``.

    Raises
    ------
    ValueError
        If ``ratio`` is not a finite array with positive entries, or ``cap`` is not a positive
        finite number.

    References
    ----------
    E. L. Ionides, "Truncated importance sampling", *Journal of Computational and Graphical
    Statistics* 17(2), 295-311, 2008.

    Examples
    --------
    >>> truncated_ratios([0.5, 1.0, 4.0], cap=2.0)
    array([0.5, 1. , 2. ])
    """
    ratio = as_float_array(ratio, "ratio", min_ndim=1)
    check_positive_entries(ratio, "ratio", " (a ratio of two probabilities)")
    cap = check_positive_real(cap, "cap")

    return np.minimum(ratio, cap)


@finite_output()
def truncated_importance_weights(
    logprobs: ArrayLike,
    rollout_logprobs: ArrayLike,
    cap: float,
    mask: ArrayLike | None = None,
) -> np.ndarray:
    """Truncated weights that correct the mismatch between an inference engine and the trainer.

        w_j = min(π_train(x_j | x_<j) / π_rollout(x_j | x_<j), c)
            = min(exp(log π_train - log π_rollout), c).

    A fast inference engine samples the tokens and reports its own log-probabilities
    ``rollout_logprobs``; the trainer recomputes ``logprobs`` for the same tokens with the same
    weights, and the two disagree a little (other kernels, precision, parallel layout). The
    samples therefore come from π_rollout while the gradient is taken for π_train, which is
    off-policy data; weighting each token's loss by this truncated ratio corrects most of the
    mismatch with bounded variance. This is the truncated importance sampling (TIS) of Yao,
    Liu, Zhang, Dong, Shang and Gao (2025).

    Trainers expose it as an option with its own cap: TRL's ``GRPOConfig`` has
    ``vllm_importance_sampling_correction`` and ``vllm_importance_sampling_cap`` (default 3.0
    in the version read, with token- and sequence-level, truncating and masking modes);
    verl and OpenRLHF expose it as well. The cap is therefore a required argument here.

    Book: equation (eq-tis), chapter 5.

    Parameters
    ----------
    logprobs : array_like, shape (..., L)
        The trainer's log-probabilities of the sampled tokens, under the same weights that
        sampled them; entries <= 0.
    rollout_logprobs : array_like, shape (..., L)
        The inference engine's log-probabilities of the same tokens, stored at sampling
        time; entries <= 0.
    cap : float
        The truncation level c > 0.
    mask : array_like of bool or 0/1, shape (..., L), optional
        Which positions are generated tokens. Default: all. Masked positions get weight 1.

    Returns
    -------
    numpy.ndarray, shape (..., L)
        The weights w_j in (0, c].

    Raises
    ------
    ValueError
        As :func:`token_ratios` (naming ``rollout_logprobs`` for the second array), and if
        ``cap`` is not a positive finite number.

    References
    ----------
    F. Yao, L. Liu, D. Zhang, C. Dong, J. Shang and J. Gao, "Your efficient RL framework
    secretly brings you off-policy RL training", blog post, 2025,
    https://fengyao.notion.site/off-policy-rl.
    E. L. Ionides, "Truncated importance sampling", *Journal of Computational and Graphical
    Statistics* 17(2), 295-311, 2008.

    Examples
    --------
    >>> truncated_importance_weights(np.log([0.5, 0.9]), np.log([0.1, 0.9]), cap=2.0)
    array([2., 1.])
    """
    logprobs, rollout_logprobs, mask = check_logprob_pair(
        logprobs, rollout_logprobs, mask, "rollout_logprobs"
    )
    cap = check_positive_real(cap, "cap")

    # min(exp(d), c) = exp(min(d, log c)): the same number without
    # overflowing for large d.
    weights = np.exp(np.minimum(logprobs - rollout_logprobs, np.log(cap)))
    return np.where(mask, weights, 1.0)
