"""Group baselines: advantages computed from several samples of the same prompt or task.

A group is N responses sampled independently for one prompt; their rewards R_1, ..., R_N lie
on the last axis of ``rewards`` (shape (..., N)), and any leading axes index independent
groups (a batch of prompts). The other members of a group give a baseline without a learned
critic. Whether that baseline leaves the policy gradient unbiased depends on the details: a
baseline built from the *other* members is independent of sample i, one that includes R_i is
not, and a divisor computed from the group reweights prompts and changes directions.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    MAX_ENUMERATION,
    as_float_array,
    capped_power,
    check_bool,
    check_callable,
    check_distribution,
    check_enumeration_size,
    check_last_axis,
    check_logits,
    check_nonnegative_int,
    check_nonnegative_real,
    check_positive_int,
    check_shape,
    finite_output,
    raise_first,
)
from rlfound.distributions import categorical_score, softmax

__all__ = [
    "enumerate_group_gradient",
    "group_gradient_moments",
    "group_normalized_advantages",
    "leave_one_out_advantages",
]

#: The divisors of :func:`group_normalized_advantages`.
SCALES = ("group", "batch", None)


@finite_output()
def leave_one_out_advantages(rewards: ArrayLike) -> np.ndarray:
    """Leave-one-out (RLOO) advantages: each reward minus the mean of the others in its group.

        A_i = R_i - (1 / (N - 1)) Σ_{k≠i} R_k
            = (N / (N - 1)) (R_i - mean(R)).

    The baseline of sample i uses only the other samples, which are independent of a_i, so
    E[A_i ∇ log π(a_i)] is exactly the policy gradient: the baseline costs no bias. The
    second form, the centered reward scaled by N / (N - 1), is how trainers compute it.

    Book: equation (eq-loo-baseline), chapter 3.
    Book: equation (eq-rloo-identity), chapter 7.

    Parameters
    ----------
    rewards : array_like, shape (..., N)
        Rewards of each group on the last axis; N >= 2.

    Returns
    -------
    numpy.ndarray, shape (..., N)
        The advantages A_i; they sum to 0 within each group.

    Raises
    ------
    ValueError
        If ``rewards`` is a scalar, non-finite, or has fewer than 2 entries per group (a
        group of one has no other member to compare with).

    Notes
    -----
    verl's ``compute_rloo_outcome_advantage`` (``verl/trainer/ppo/core_algos.py``) and
    OpenRLHF's ``advantage_estimator="rloo"`` (``compute_advantages_and_returns`` in
    ``openrlhf/trainer/ppo_utils/experience_maker.py``) compute the same numbers, the first
    in the N / (N - 1) form. A group of one has no leave-one-out baseline, and the trainers
    disagree on what it gets (volcengine/verl at commit
    b178a3cd56f58b2d502255daba591e92833930a7; OpenRLHF/OpenRLHF at commit
    3c3be6234e0cb353e76bb8019947db9dfe99fca7): verl's ``compute_rloo_outcome_advantage``
    leaves the raw reward r as the advantage, its ``compute_rloo_vectorized_outcome_advantage``
    multiplies by ``(c > 1)`` and gives 0, and OpenRLHF divides by
    ``n_samples_per_prompt - 1 = 0``. This function raises a ``ValueError`` instead: with
    one sample there is nothing to compare with, and any number returned would be a
    convention, not an estimate.

    References
    ----------
    W. Kool, H. van Hoof and M. Welling, "Buy 4 REINFORCE samples, get a baseline for free!",
    ICLR Workshop, 2019.
    A. Ahmadian, C. Cremer, M. Gallé, M. Fadaee, J. Kreutzer, O. Pietquin, A. Üstün and
    S. Hooker, "Back to basics: revisiting REINFORCE-style optimization for learning from
    human feedback in LLMs", ACL, 2024.

    Examples
    --------
    >>> leave_one_out_advantages([1.0, 0.0, 0.0, 1.0])
    array([ 0.66666667, -0.66666667, -0.66666667,  0.66666667])
    """
    rewards = as_float_array(rewards, "rewards", min_ndim=1)
    check_last_axis(
        rewards, "rewards", 2, "members per group on the last axis"
    )

    size = rewards.shape[-1]
    others_mean = (rewards.sum(axis=-1, keepdims=True) - rewards) / (
        size - 1
    )
    return rewards - others_mean


@finite_output()
def group_normalized_advantages(
    rewards: ArrayLike,
    eps: float = 1e-6,
    ddof: int = 0,
    include_self: bool = True,
    scale: str | None = "group",
) -> np.ndarray:
    """Group-normalized advantages (GRPO, Dr. GRPO and their variants).

        A_i = (R_i - mean) / (std + eps)    scale = "group" (GRPO) or "batch"
        A_i =  R_i - mean                   scale = None (Dr. GRPO)

    The mean is that of sample i's group: of all N members when ``include_self`` is True,
    of the other N - 1 when it is False. The std is that of the same members
    (``scale="group"``), or of every reward in ``rewards``, all groups of the batch together
    (``scale="batch"``), with ``ddof`` degrees of freedom removed. Every form is unchanged
    when a constant is added to a group's rewards, ``"group"`` also when they are multiplied
    by a positive factor (up to ``eps``), and a group whose rewards are all equal gets exactly
    0: it carries no learning signal.

    With ``include_self=False`` and ``scale=None`` this is :func:`leave_one_out_advantages`;
    with ``include_self=True`` and ``scale=None`` it is (N - 1) / N times that, group by
    group. A divisor computed from the group depends on the samples, so GRPO's estimate is
    biased at finite N and reweights prompts by the spread of their rewards.

    Book: equations (eq-group-advantages) and (eq-rloo-identity), chapter 7.

    Parameters
    ----------
    rewards : array_like, shape (..., N)
        Rewards of each group on the last axis, N >= 2; leading axes index groups.
    eps : float, optional
        Non-negative constant added to the std; it keeps the division finite. With
        ``eps = 0`` a group of equal rewards still gets 0 (but with ``include_self=False``
        a sample whose other members are all equal to each other and not to it has no
        finite advantage, which raises). Ignored when ``scale`` is None.
    ddof : int, optional
        Delta degrees of freedom of the std: divisor n - ddof, where n = N (N - 1 without
        self) for ``"group"`` and the number of rewards in the array for ``"batch"``; must be
        < n. Ignored when ``scale`` is None.
    include_self : bool, optional
        Whether R_i enters the mean (and the group std) used for sample i.
    scale : {"group", "batch", None}, optional
        What the centered reward is divided by: the group's std (GRPO), the std of the whole
        batch, or nothing (Dr. GRPO).

    Returns
    -------
    numpy.ndarray, shape (..., N)
        The advantages.

    Raises
    ------
    ValueError
        If ``rewards`` is a scalar or non-finite, or has fewer than 2 members per group;
        ``eps`` is negative or not finite, or 0 where a std is 0 and the advantage would be
        infinite; ``ddof`` is not a non-negative integer below the number of rewards its std
        uses; ``include_self`` is not a bool; or ``scale`` is not one of
        ``"group"``, ``"batch"``, None. Starting ``"overflow in"``, only if an advantage
        itself exceeds the float64 range (with ``scale=None``, a centered reward of 2e308).

    Notes
    -----
    The rewards are scaled before the mean and the variance: divided by the power of two at
    the top of their magnitude (exact), with ``eps`` divided by the same power, which leaves
    every advantage unchanged. Neither the sums nor the squares can then overflow:
    ``[1e308, -1e308, 1e308, -1e308]`` gives exactly ±1.

    What trainers do (read in their source; ddof 1 is ``torch.std``'s default, Bessel's
    correction, and NumPy's default is ddof 0):

    - TRL ``GRPOTrainer``: group mean; ``scale_rewards`` in ``GRPOConfig`` is ``"group"``
      (default), ``"batch"`` or ``"none"`` (``trl/trainer/grpo_config.py``); the std is
      ``torch.std`` (ddof 1) and the divisor ``std + 1e-4``
      (``_generate_and_score_completions`` in ``trl/trainer/grpo_trainer.py``). Its
      ``"batch"`` keeps the group mean and takes the std over all rewards of the batch
      (``docs/source/grpo_trainer.md``), as ``scale="batch"`` does here.
    - verl ``compute_grpo_outcome_advantage`` (``verl/trainer/ppo/core_algos.py``):
      ``torch.std`` (ddof 1), ``epsilon=1e-6``; ``norm_adv_by_std_in_grpo=False`` gives
      Dr. GRPO. A group of one gets mean 0 and std 1, that is, r / (1 + 1e-6). Its
      ``grpo_vectorized`` estimator (``compute_grpo_vectorized_outcome_advantage``, with
      ``group_mean_std`` in ``verl/utils/groupwise.py``, volcengine/verl at commit
      b178a3cd56f58b2d502255daba591e92833930a7) computes in float32 and floors the group
      variance at ``eps = 1e-6`` before the square root, then divides by ``std + 1e-6``:
      a group whose std is below 1e-3 is divided by about 1e-3, where this function
      divides by std + eps. No argument here floors the variance; the two agree whenever
      every group's std is at least 1e-3.
    - Groups of one: this function raises (N >= 2). verl's GRPO returns r / (1 + ε) as
      said; TRL's ``GRPOTrainer`` sets the std to 0 when ``num_generations`` is 1 (an
      evaluation-only case, ``trl/trainer/grpo_trainer.py``, huggingface/trl at commit
      f2cd57710ae345ea6428ae95363267fcf38a3dc8), so the advantage is 0; OpenRLHF's
      ``group_norm`` takes ``torch.std`` of one sample, NaN.
    - OpenRLHF ``advantage_estimator="group_norm"`` (``compute_advantages_and_returns`` in
      ``openrlhf/trainer/ppo_utils/experience_maker.py``): ``std(-1)`` (ddof 1) ``+ 1e-9``;
      ``"dr_grpo"`` subtracts the group mean only.
    - Dr. GRPO's own code (``compute_monte_carlo_advantages`` in
      ``train_zero_math.py`` of sail-sg/understand-r1-zero): the group mean only; its GRPO
      option divides by ``std`` (ddof 1) ``+ 1e-8``.

    References
    ----------
    Z. Shao, P. Wang, Q. Zhu, R. Xu, J. Song, X. Bi, H. Zhang, M. Zhang, Y. K. Li, Y. Wu
    and D. Guo, "DeepSeekMath: pushing the limits of mathematical reasoning in open language
    models", arXiv:2402.03300, 2024.
    Z. Liu, C. Chen, W. Li, P. Qi, T. Pang, C. Du, W. S. Lee and M. Lin, "Understanding
    R1-Zero-like training: a critical perspective", arXiv:2503.20783, 2025.

    Examples
    --------
    >>> group_normalized_advantages([1.0, 0.0, 0.0, 1.0])
    array([ 0.999998, -0.999998, -0.999998,  0.999998])
    >>> group_normalized_advantages([[0.5, 0.5], [1.0, 3.0]], eps=0.0)
    array([[ 0.,  0.],
           [-1.,  1.]])
    >>> group_normalized_advantages([[0.5, 0.5], [1.0, 3.0]], scale=None)
    array([[ 0.,  0.],
           [-1.,  1.]])
    >>> group_normalized_advantages([[0.5, 0.5], [1.0, 3.0]], eps=0.0, scale="batch")
    array([[ 0.       ,  0.       ],
           [-0.9701425,  0.9701425]])

    The batch's std, sqrt(4.25 / 4), is that of all four rewards.
    """
    rewards, eps, ddof, include_self, scale = _check_normalization(
        rewards, eps, ddof, include_self, scale
    )
    members = rewards.shape[-1] if include_self else rewards.shape[-1] - 1

    # Over an exact power of two c, rewards near ±1e308 sum and square
    # without overflow.
    scaled, power = _scaled_by_power_of_two(
        rewards, per_group=scale != "batch"
    )
    centered = _deviations_from_mean(scaled, include_self)  # R_i - mean
    if scale is None:
        return centered * power
    if scale == "group":
        std = np.sqrt(
            _group_squares(scaled, include_self) / (members - ddof)
        )
    else:  # "batch": one std for every reward of the array
        std = np.sqrt(
            ((scaled - scaled.mean()) ** 2).sum() / (scaled.size - ddof)
        )
    return _divided_by_std_plus_eps(centered, std, eps, power)


def _check_normalization(
    rewards: ArrayLike, eps: Any, ddof: Any, include_self: Any, scale: Any
) -> tuple[np.ndarray, float, int, bool, str | None]:
    """The arguments of :func:`group_normalized_advantages`, checked and converted."""
    include_self = check_bool(include_self, "include_self")
    scale = _check_scale(scale)
    rewards = as_float_array(rewards, "rewards", min_ndim=1)
    if include_self:
        check_last_axis(
            rewards, "rewards", 2, "members per group on the last axis"
        )
    else:
        check_last_axis(
            rewards, "rewards", 2, "members per group to leave one out"
        )
    eps = check_nonnegative_real(eps, "eps")
    ddof = check_nonnegative_int(ddof, "ddof")
    members = rewards.shape[-1] if include_self else rewards.shape[-1] - 1
    if scale == "group" and ddof >= members:
        raise ValueError(
            "ddof must be smaller than the number of members in each "
            f"statistic ({members}); got {ddof}"
        )
    if scale == "batch" and ddof >= rewards.size:
        raise ValueError(
            "ddof must be smaller than the number of rewards in the batch "
            f"({rewards.size}); got {ddof}"
        )
    return rewards, eps, ddof, include_self, scale


def _scaled_by_power_of_two(
    rewards: np.ndarray, per_group: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The rewards divided by c, the power of two at the top of their magnitude, and c.

    (R - mean) / (std + eps) is unchanged when R, the mean and the std are divided by the
    same c > 0 and eps by c too. Dividing by a power of two is exact, and it puts the rewards
    in [-2, 2], so neither their sum nor the squares of 1e308 can overflow, and the
    advantages of [1e308, -1e308] are ±1. ``per_group``: one c for each group (last axis),
    else one for the whole array.
    """
    magnitude = np.abs(rewards).max(
        axis=-1 if per_group else None, keepdims=True
    )
    exponent = np.frexp(np.where(magnitude > 0.0, magnitude, 1.0))[1]
    power = np.ldexp(1.0, exponent - 1)
    return rewards / power, power


def _deviations_from_mean(
    rewards: np.ndarray, include_self: bool
) -> np.ndarray:
    """R_i minus its group's mean (the others' mean without self), exactly 0 in equal groups.

    A group of equal rewards must give exact zeros; rounding in the mean would otherwise
    leave residues of order 1e-17 that a small divisor would blow up.
    """
    constant = np.all(rewards == rewards[..., :1], axis=-1, keepdims=True)
    return np.where(
        constant, 0.0, rewards - _group_means(rewards, include_self)
    )


def _divided_by_std_plus_eps(
    centered: np.ndarray, std: np.ndarray, eps: float, power: np.ndarray
) -> np.ndarray:
    """centered / (std + eps / c) for rewards scaled by c = ``power``, 0 where centered is 0.

    Raises
    ------
    ValueError
        If eps is 0 where a std is 0 (or underflows to 0) but a reward differs from the
        mean: its advantage would be infinite.
    """
    with np.errstate(over="ignore"):
        # eps over a tiny power may overflow to inf: the advantage is then 0, as it should be
        # when eps dwarfs the spread of the rewards.
        eps = eps / power
    divisor = np.broadcast_to(std + eps, centered.shape)
    undefined = (divisor == 0.0) & (centered != 0.0)
    raise_first(
        undefined,
        "eps must be > 0 when a std is 0 (or underflows to 0) although the "
        "sample differs from the mean: its advantage would be infinite",
        got="eps = 0.0",
    )
    return np.divide(
        centered, divisor, out=np.zeros_like(centered), where=centered != 0.0
    )


def _check_scale(scale: object) -> str | None:
    """``scale`` after checking that it is "group", "batch" or None."""
    if scale is None or (isinstance(scale, str) and scale in SCALES):
        return scale
    raise ValueError(
        f"scale must be 'group', 'batch' or None; got {scale!r}"
    )


def _group_means(rewards: np.ndarray, include_self: bool) -> np.ndarray:
    """Mean of each group (include_self) or, for each member, the mean of the others."""
    if include_self:
        return rewards.mean(axis=-1, keepdims=True)
    others = rewards.shape[-1] - 1
    return (rewards.sum(axis=-1, keepdims=True) - rewards) / others


def _group_squares(rewards: np.ndarray, include_self: bool) -> np.ndarray:
    """Sum of squared deviations of the members about their mean (the others' without self)."""
    if include_self:
        mean = rewards.mean(axis=-1, keepdims=True)
        return ((rewards - mean) ** 2).sum(axis=-1, keepdims=True)
    means = _group_means(rewards, include_self=False)
    # For each left-out i, the others' squares about their own mean.
    return np.stack(
        [
            (
                (np.delete(rewards, i, axis=-1) - means[..., i : i + 1]) ** 2
            ).sum(axis=-1)
            for i in range(rewards.shape[-1])
        ],
        axis=-1,
    )


@finite_output()
def enumerate_group_gradient(
    logits: ArrayLike,
    action_rewards: ArrayLike,
    group_size: int,
    advantage_fn: Callable[[np.ndarray], ArrayLike],
) -> np.ndarray:
    """Exact expectation of a group policy-gradient estimator on a bandit, by enumeration.

    A group of N actions a_1, ..., a_N is drawn independently from π_θ, each earns the
    deterministic reward q(a_i), the rewards are turned into advantages
    A = advantage_fn(q(a_1), ..., q(a_N)), and the estimator is

        ĝ = (1/N) Σ_i A_i (e_{a_i} - π_θ).

    Its expectation Σ_{(a_1..a_N)} Π_i π(a_i) ĝ is summed over all K^N tuples, with no
    sampling error, so a finite-sample baseline's bias is measured exactly: compare with
    :func:`rlfound.bandits.exact_bandit_gradient`. A leave-one-out baseline is unbiased; a
    group mean that includes the sample itself scales the gradient by (N - 1)/N.

    Book: equation (eq-loo-baseline), chapter 3.

    Parameters
    ----------
    logits : array_like, shape (K,)
        Logits θ of the bandit policy.
    action_rewards : array_like, shape (K,)
        Deterministic reward q(a) of each action.
    group_size : int
        Group size N >= 1.
    advantage_fn : callable
        Maps the rewards of one group, a float64 array of shape (N,), to advantages of
        shape (N,), e.g. :func:`rlfound.groups.leave_one_out_advantages`.

    Returns
    -------
    numpy.ndarray, shape (K,)
        E[ĝ].

    Raises
    ------
    ValueError
        If ``logits`` and ``action_rewards`` are not finite 1-D arrays of equal length,
        ``group_size`` is not a positive integer or K^N exceeds one million (naming
        ``group_size``), or ``advantage_fn`` is not callable or returns something other
        than N finite numbers.

    References
    ----------
    W. Kool, H. van Hoof and M. Welling, "Buy 4 REINFORCE samples, get a baseline for free!",
    ICLR Workshop, 2019.
    A. Ahmadian, C. Cremer, M. Gallé, M. Fadaee, J. Kreutzer, O. Pietquin, A. Üstün and
    S. Hooker, "Back to basics: revisiting REINFORCE-style optimization for learning from
    human feedback in LLMs", ACL, 2024.

    Examples
    --------
    >>> def centered(rewards):
    ...     return rewards - rewards.mean()
    >>> enumerate_group_gradient([0.0, 0.0], [1.0, 3.0], group_size=2, advantage_fn=centered)
    array([-0.25,  0.25])
    >>> from rlfound.bandits import exact_bandit_gradient
    >>> exact_bandit_gradient([0.0, 0.0], [1.0, 3.0])  # twice as large: (N - 1)/N = 1/2
    array([-0.5,  0.5])
    """
    logits = check_logits(logits, ndim=1)
    action_rewards = as_float_array(action_rewards, "action_rewards", ndim=1)
    check_shape(
        action_rewards,
        "action_rewards",
        logits.shape,
        "one entry per action",
    )
    group_size = check_positive_int(group_size, "group_size")
    count = capped_power(len(logits), group_size)  # exact up to the limit
    check_enumeration_size(
        count,
        "group_size",
        f"K**N = {len(logits)}**{group_size} > {MAX_ENUMERATION}",
    )
    advantage_fn = check_callable(advantage_fn, "advantage_fn")

    probs = softmax(logits)
    expectation = np.zeros(len(logits))
    for group in itertools.product(range(len(logits)), repeat=group_size):
        group = np.array(group)
        advantages = _call_advantage_fn(
            advantage_fn, action_rewards[group].copy(), group_size
        )
        estimate = advantages @ categorical_score(logits, group) / group_size
        expectation += (
            np.prod(probs[group]) * estimate
        )  # Pr(a_1, ..., a_N) = Π_i π(a_i)
    return expectation


def _check_moment_arguments(
    probs: Any,
    outcome_rewards: Any,
    scores: Any,
    group_size: Any,
    advantage_fn: Any,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, Callable]:
    """The arguments of :func:`group_gradient_moments`, checked; the K**N groups of the
    exact enumeration (K outcomes of positive probability) within the enumeration limit."""
    probs = check_distribution(probs, "probs")
    if probs.ndim != 1:
        raise ValueError(
            f"probs must be a 1-D array; got shape {probs.shape}"
        )
    outcome_rewards = as_float_array(
        outcome_rewards, "outcome_rewards", ndim=1
    )
    check_shape(
        outcome_rewards,
        "outcome_rewards",
        probs.shape,
        "one entry per outcome",
    )
    scores = as_float_array(scores, "scores", min_ndim=1)
    if scores.shape[:1] != probs.shape:
        raise ValueError(
            f"scores must have one row per outcome, shape ({len(probs)}, "
            f"...); got shape {scores.shape}"
        )
    group_size = check_positive_int(group_size, "group_size")
    support = int(np.count_nonzero(probs > 0.0))
    count = capped_power(support, group_size)  # exact up to the limit
    what = f"K**N = {support}**{group_size} > {MAX_ENUMERATION} groups"
    check_enumeration_size(count, "group_size", what)
    advantage_fn = check_callable(advantage_fn, "advantage_fn")
    return probs, outcome_rewards, scores, group_size, advantage_fn


@finite_output()
def group_gradient_moments(
    probs: ArrayLike,
    outcome_rewards: ArrayLike,
    scores: ArrayLike,
    group_size: int,
    advantage_fn: Callable[[np.ndarray], ArrayLike],
) -> tuple[np.ndarray, float, float]:
    """Exact mean and total variance of a group policy-gradient estimator, by enumeration.

    A group is N independent draws j_1, ..., j_N from K outcomes (the actions of a bandit,
    or every episode of a small MDP), outcome j having probability p(j), reward R(j) and
    score ψ(j) = ∇_θ log p_θ(j). The advantages A = advantage_fn(R(j_1), ..., R(j_N)) weight
    the scores: member i contributes x_i = A_i ψ(j_i), and the group's estimate is

        ĝ = (1/N) Σ_i x_i .

    Summing over all K^N groups, each with probability Π_i p(j_i), gives without sampling
    error

        mean             E[ĝ],
        sample_variance  (1/N) Σ_i tr Cov[x_i]   (the cost of one member's term),
        group_variance   tr Cov[ĝ]               (the cost of the group's update),

    where tr Cov[x] = E||x||² - ||E x||² is the total variance, the sum of the variances of
    all entries. For independent terms group_variance would be sample_variance / N; a group
    baseline correlates the members, and the difference measures by how much.

    Book: equation (eq-trace-covariance), chapter 3.
    Book: equation (eq-group-moments), chapter 7.

    Parameters
    ----------
    probs : array_like, shape (K,)
        Probability p(j) of each outcome (non-negative, summing to 1). Outcomes of
        probability 0 are skipped.
    outcome_rewards : array_like, shape (K,)
        Reward R(j) of each outcome (for an episode, its return).
    scores : array_like, shape (K, ...)
        Score ψ(j) of each outcome; the trailing shape is that of the parameters.
    group_size : int
        Group size N >= 1.
    advantage_fn : callable
        Maps the rewards of one group, a float64 array of shape (N,), to N advantages, e.g.
        :func:`leave_one_out_advantages`, or ``lambda r: r`` for plain REINFORCE.

    Returns
    -------
    mean : numpy.ndarray, shape ``scores.shape[1:]``
        E[ĝ].
    sample_variance : float
        (1/N) Σ_i tr Cov[A_i ψ(j_i)].
    group_variance : float
        tr Cov[ĝ].

    Raises
    ------
    ValueError
        If ``probs`` is not a probability vector, ``outcome_rewards`` is not a finite
        (K,) array or ``scores`` a finite (K, ...) array, ``group_size`` is not a positive
        integer or the K^N groups exceed one million (naming ``group_size``), or
        ``advantage_fn`` is not callable or returns something other than N finite numbers.

    References
    ----------
    W. Kool, H. van Hoof and M. Welling, "Buy 4 REINFORCE samples, get a baseline for free!",
    ICLR Workshop, 2019.

    Examples
    --------
    Two equally likely outcomes with rewards 1 and 0 and scores ±1/2. Plain REINFORCE
    (A_i = R_i) on groups of two: the mean is the gradient 1/4, and averaging two
    independent terms halves the variance; leave-one-out has the same mean.

    >>> mean, per_sample, per_group = group_gradient_moments(
    ...     [0.5, 0.5], [1.0, 0.0], [0.5, -0.5], group_size=2, advantage_fn=lambda r: r)
    >>> float(mean), per_sample, per_group
    (0.25, 0.0625, 0.03125)
    >>> group_gradient_moments([0.5, 0.5], [1.0, 0.0], [0.5, -0.5], 2,
    ...                        leave_one_out_advantages)[0]
    array(0.25)
    """
    probs, outcome_rewards, scores, group_size, advantage_fn = (
        _check_moment_arguments(
            probs, outcome_rewards, scores, group_size, advantage_fn
        )
    )
    support = np.flatnonzero(probs > 0.0)

    flat = scores.reshape(len(probs), -1)
    group_first = np.zeros(flat.shape[1])  # E[ĝ]
    group_second = 0.0  # E||ĝ||²
    member_first = np.zeros((group_size, flat.shape[1]))  # E[x_i]
    member_second = 0.0  # Σ_i E||x_i||²
    for group in itertools.product(support, repeat=group_size):
        group = np.array(group)
        probability = np.prod(probs[group])  # independent draws
        advantages = _call_advantage_fn(
            advantage_fn, outcome_rewards[group].copy(), group_size
        )
        terms = (
            advantages[:, None] * flat[group]
        )  # x_i = A_i ψ(j_i), one row per member
        estimate = terms.mean(axis=0)
        group_first += probability * estimate
        group_second += probability * float(estimate @ estimate)
        member_first += probability * terms
        member_second += probability * float(np.sum(terms**2))
    sample_variance = (
        member_second - float(np.sum(member_first**2))
    ) / group_size
    group_variance = group_second - float(group_first @ group_first)
    # Rounding can leave -1e-17 where the variance is exactly 0.
    return (
        group_first.reshape(scores.shape[1:]),
        float(max(sample_variance, 0.0)),
        float(max(group_variance, 0.0)),
    )


def _call_advantage_fn(
    advantage_fn: Callable[[np.ndarray], ArrayLike],
    rewards: np.ndarray,
    group_size: int,
) -> np.ndarray:
    """advantage_fn(rewards), checked to be N finite numbers."""
    try:
        advantages = np.asarray(advantage_fn(rewards), dtype=np.float64)
    except (
        Exception
    ) as error:  # a broken callable, whatever it raised, is a bad argument
        raise ValueError(
            f"advantage_fn must map rewards of shape ({group_size},) to "
            f"{group_size} numbers; it raised {error!r}"
        ) from error
    if advantages.shape != (group_size,) or not np.all(
        np.isfinite(advantages)
    ):
        raise ValueError(
            f"advantage_fn must return {group_size} finite numbers, shape "
            f"({group_size},); got {advantages!r} for rewards {rewards!r}"
        )
    return advantages
