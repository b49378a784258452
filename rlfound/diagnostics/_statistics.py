"""Statistics of rewards, returns and groups; profiles by position; gradient norms;
correlation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rlfound import entropy
from rlfound._validation import (
    MAX_ARRAY_ENTRIES,
    as_float_array,
    as_float_array_like,
    check_nonnegative_int,
    check_nonnegative_real,
    check_positive_int,
    check_positive_real,
    check_size,
    check_unit_interval,
    finite_output,
)

from ._common import _labels, _norm, _positions, _values_and_mask

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
    bins = check_size(
        check_positive_int(bins, "bins"), "bins", MAX_ARRAY_ENTRIES, "bins"
    )
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
            "value_range must be a pair (lower, upper) with lower < upper; "
            f"got {pair.tolist()}"
        )
    return float(pair[0]), float(pair[1])


@finite_output()
def tail_mean(
    values: ArrayLike, fraction: float, mask: ArrayLike | None = None
) -> float:
    """Mean of the worst ``fraction`` of the values: the lower-tail CVaR of their distribution.

        CVaR_α = (1 / (α n)) Σ_{i=1}^{n} w_i x_(i),
        w_i = min(1, max(0, α n - (i - 1))),

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
        raise ValueError(
            "fraction must be in (0, 1] (a tail must hold some mass); got "
            "0.0"
        )

    ordered = np.sort(values[mask])
    share = fraction * ordered.size
    # Weight of the i-th smallest value: the part of [i, i + 1) that lies
    # inside [0, α n).
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
    means = (
        np.bincount(group, weights=selected, minlength=keys.size) / counts
    )
    squares = np.bincount(
        group, weights=(selected - means[group]) ** 2, minlength=keys.size
    )
    return keys.astype(np.int64), means, np.sqrt(squares / counts), counts


# --- groups ------------------------------------------------------------------------------------


@finite_output()
def group_variance_statistics(
    rewards: ArrayLike,
    group_ids: ArrayLike,
    ddof: int = 0,
    atol: float = 0.0,
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
        raise ValueError(
            "rewards must hold at least one rollout; got shape (0,)"
        )
    group_ids = _labels(group_ids, "group_ids", rewards.shape)
    ddof = check_nonnegative_int(ddof, "ddof")
    atol = check_nonnegative_real(atol, "atol")

    keys, sizes = np.unique(group_ids, return_counts=True)
    if np.all(
        sizes == sizes[0]
    ):  # equal groups: one (G, N) array, one vectorized call
        members = rewards[np.argsort(group_ids, kind="stable")].reshape(
            keys.size, sizes[0]
        )
        variances = entropy.group_reward_variance(members, ddof=ddof)
        spread = members.max(axis=1) - members.min(axis=1)
    else:
        variances, spread = [], []
        for key in keys:
            members = rewards[group_ids == key]
            variances.append(
                entropy.group_reward_variance(members, ddof=ddof)
            )
            spread.append(members.max() - members.min())
    return float(np.mean(variances)), float(
        np.mean(np.asarray(spread) <= atol)
    )


# --- entropy, values, gradients, lengths -------------------------------------------------------


@finite_output()
def mean_by_position(
    values: ArrayLike, mask: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Mean of a per-token quantity at each position of the response, across rows.

        p_ij = Σ_{k <= j} m_ik - 1
               (the rank of token j among the selected tokens of row i),
        mean_p = Σ_ij m_ij [p_ij = p] x_ij / n_p,
        n_p = Σ_ij m_ij [p_ij = p].

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
def gradient_norms(
    gradients: Sequence[ArrayLike] | Mapping[str, ArrayLike],
    max_norm: float,
    eps: float = 1e-6,
) -> tuple[np.ndarray, float, float]:
    """Gradient norms per parameter group, and the global norm before and after clipping.

        ‖g‖ = sqrt(Σ_k ‖g_k‖²),    c = min(1, max_norm / (‖g‖ + eps)),
        after = c ‖g‖,

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
    if isinstance(gradients, (str, bytes)) or not isinstance(
        gradients, Sequence
    ):
        raise ValueError(
            "gradients must be a sequence (or mapping) of per-group "
            f"gradient arrays; got {type(gradients).__name__}"
        )
    if len(gradients) == 0:
        raise ValueError(
            "gradients must hold at least one parameter group; got 0"
        )
    groups = [
        as_float_array(g, f"gradients[{k}]") for k, g in enumerate(gradients)
    ]
    max_norm = check_positive_real(max_norm, "max_norm")
    eps = check_nonnegative_real(eps, "eps")

    group_norms = np.array([_norm(g) for g in groups])
    before = _norm(group_norms)
    coefficient = min(1.0, max_norm / (before + eps))
    return group_norms, before, coefficient * before


@finite_output()
def pearson_correlation(
    x: ArrayLike, y: ArrayLike, mask: ArrayLike | None = None
) -> float:
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
        raise ValueError(
            f"mask must select at least two entries; got {int(mask.sum())}"
        )

    dx = x[mask] - x[mask].mean()
    dy = y[mask] - y[mask].mean()
    for name, d in (("x", dx), ("y", dy)):
        if not np.any(d != 0.0):
            raise ValueError(
                f"{name} must vary over the selected entries (a correlation "
                "divides by its spread); got the constant "
                f"{float((x if name == 'x' else y)[mask][0])!r}"
            )
    # Each centered vector normalized by its own norm, so large values cannot overflow.
    return float(np.clip(np.dot(dx / _norm(dx), dy / _norm(dy)), -1.0, 1.0))
