"""Entropy of categorical policies and the diversity measures an RL trainer should log.

A language model's next-token distribution π(· | x_<j) is a softmax of logits, and its entropy

    H(π) = -Σ_v π(v) log π(v)          (nats; 0 log 0 = 0)

is what trainers call "the entropy". This module holds that entropy from logits or from
probabilities, its gradient with respect to the logits, the entropy of every position of a
batch of sequences (logits of shape (..., L, V) and a mask of shape (..., L)), the estimate
-log π(x_j) from sampled tokens alone, and the renormalized distribution of constrained
decoding. Token entropy is not behavioral diversity, so the module also holds the measures
that have to be logged next to it: the entropy of the parsed actions of a group of rollouts,
the number of distinct successful strategies, and the variance of the group's rewards.

Conventions: logits are finite; masked positions contribute exactly 0; a group of N rollouts
lies on the last axis, leading axes index independent groups.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from rlfound._validation import (
    MAX_ARRAY_ENTRIES,
    as_float_array,
    check_choice,
    check_distribution,
    check_indices,
    check_last_axis,
    check_logits,
    check_logprobs,
    check_mask,
    check_nonnegative_int,
    check_optional_mask,
    check_positive_int,
    check_shape,
    check_size,
    finite_output,
    float_or_array,
    raise_first,
)

__all__ = [
    "action_entropy",
    "categorical_entropy",
    "constrained_probs",
    "distribution_entropy",
    "entropy_logit_gradient",
    "group_reward_variance",
    "mean_token_entropy",
    "sampled_token_entropy",
    "token_entropies",
    "unique_successful_strategies",
]

#: How :func:`action_entropy` treats rollouts whose text did not parse (action -1).
UNPARSED = ("exclude", "category")


# --- private helpers ------------------------------------------------------------------------


def _log_softmax(logits: np.ndarray, axis: int) -> np.ndarray:
    """log softmax; logits more than ~1.8e308 apart give log π = -inf (probability 0) quietly."""
    with np.errstate(over="ignore"):
        return special.log_softmax(logits, axis=axis)


def _p_log_p(logprobs: np.ndarray) -> np.ndarray:
    """π log π entry by entry from log π, with 0 log 0 = 0 (also where log π is -inf)."""
    probs = np.exp(logprobs)
    # Multiplying only where π > 0 keeps an underflowed 0 * (-inf) from becoming NaN.
    return np.multiply(
        probs, logprobs, out=np.zeros_like(logprobs), where=probs > 0.0
    )


def _check_token_logits(logits: ArrayLike, mask: ArrayLike | None):
    """Logits (..., L, V) with V >= 1 and a bool mask (..., L) (None: every position)."""
    logits = check_logits(logits, min_ndim=2)
    mask = check_optional_mask(mask, "mask", logits.shape[:-1])
    return logits, mask


def _empirical_distribution(
    labels: np.ndarray, num_labels: int
) -> np.ndarray:
    """Counts of each label in [0, num_labels) along the last axis: shape (..., num_labels)."""
    return (
        (labels[..., None] == np.arange(num_labels))
        .sum(axis=-2)
        .astype(np.float64)
    )


# --- entropy of one categorical distribution -------------------------------------------------


@finite_output()
def categorical_entropy(
    logits: ArrayLike, axis: int = -1
) -> np.ndarray | float:
    """Entropy of a softmax distribution, in nats, computed from the logits.

        H(π) = -Σ_a π(a) log π(a),    π = softmax(θ).

    It is computed as -Σ_a π(a) log_softmax(θ)_a, which is finite for any finite logits (a
    category of probability 0 contributes 0 log 0 = 0, also when its log-probability
    underflows to -inf). H is 0 for a one-hot distribution and log K for the uniform one.

    Book: equation (eq-entropy), chapter 10.
    Book: equation (eq-ppo-total-loss), chapter 5.

    Parameters
    ----------
    logits : array_like, shape (..., K, ...)
        Logits θ; at least one dimension.
    axis : int, optional
        Axis holding the K categories. Default: the last.

    Returns
    -------
    float or numpy.ndarray
        One entropy per distribution (the shape of ``logits`` without ``axis``); a float for
        a single (1-D) distribution.

    Raises
    ------
    ValueError
        If ``logits`` is a scalar, non-finite or empty along ``axis``, or ``axis`` is out of
        range.

    References
    ----------
    C. E. Shannon, "A mathematical theory of communication", *Bell System Technical Journal*
    27, 379-423, 1948.

    Examples
    --------
    >>> categorical_entropy([0.0, 0.0, 0.0, 0.0])  # log 4
    1.3862943611198906
    >>> categorical_entropy([[0.0, 0.0], [0.0, 1000.0]])
    array([0.69314718, 0.        ])
    """
    logits = check_logits(logits, axis=axis)

    logprobs = _log_softmax(logits, axis)
    # + 0.0 turns the -0.0 of a one-hot distribution into 0.0.
    return float_or_array(-np.sum(_p_log_p(logprobs), axis=axis) + 0.0)


@finite_output()
def entropy_logit_gradient(logits: ArrayLike, axis: int = -1) -> np.ndarray:
    """Gradient of the entropy of a softmax distribution with respect to its logits.

        ∂H/∂θ_a = -π(a) (log π(a) + H),    π = softmax(θ).

    It follows from ∂ log π(b)/∂θ_a = 1[a = b] - π(a) and Σ_b π(b) = 1. The gradient raises
    the logit of every category that is rarer than typical (log π(a) < -H) and lowers the
    others; its components sum to 0 (adding a constant to all logits changes nothing), and it
    vanishes at the uniform distribution, where H is largest. Gradient *ascent* on H is the
    effect of an entropy bonus on the logits.

    Book: equation (eq-entropy-gradient), chapter 10.

    Parameters
    ----------
    logits : array_like, shape (..., K, ...)
        Logits θ; at least one dimension.
    axis : int, optional
        Axis holding the K categories. Default: the last.

    Returns
    -------
    numpy.ndarray
        ∂H/∂θ, the shape of ``logits``; it sums to 0 along ``axis``.

    Raises
    ------
    ValueError
        As :func:`categorical_entropy`.

    References
    ----------
    R. J. Williams and J. Peng, "Function optimization using connectionist reinforcement
    learning algorithms", *Connection Science* 3(3), 241-268, 1991 (the entropy term).

    Examples
    --------
    >>> entropy_logit_gradient([0.0, 0.0, 0.0])  # uniform: H is at its maximum
    array([0., 0., 0.])
    >>> entropy_logit_gradient([0.0, np.log(3.0)])  # pi = (1/4, 3/4): raise the rare one
    array([ 0.2059898, -0.2059898])
    """
    logits = check_logits(logits, axis=axis)

    logprobs = _log_softmax(logits, axis)
    p_log_p = _p_log_p(logprobs)
    entropy = -np.sum(p_log_p, axis=axis, keepdims=True)
    # -π (log π + H) = -(π log π) - π H, written so that π = 0 gives exactly
    # 0.
    return -p_log_p - np.exp(logprobs) * entropy + 0.0


@finite_output()
def distribution_entropy(probs: ArrayLike) -> np.ndarray | float:
    """Entropy of probability vectors, in nats, along the last axis.

        H(p) = -Σ_k p_k log p_k,    0 log 0 = 0.

    For distributions given as probabilities rather than logits: the distribution of whole
    sequences listed by enumeration, of parsed actions (:func:`rlfound.tokens.parser_marginal`),
    or of constrained decoding (:func:`constrained_probs`), where some entries are exactly 0.

    Book: equation (eq-entropy), chapter 10.

    Parameters
    ----------
    probs : array_like, shape (..., K)
        Non-negative entries summing to 1 along the last axis.

    Returns
    -------
    float or numpy.ndarray, shape (...)
        One entropy per distribution; a float for a single one.

    Raises
    ------
    ValueError
        If ``probs`` is a scalar, non-finite, negative somewhere, or a slice does not sum to
        1 (within 1e-8).

    References
    ----------
    C. E. Shannon, "A mathematical theory of communication", *Bell System Technical Journal*
    27, 379-423, 1948.

    Examples
    --------
    >>> distribution_entropy([0.5, 0.5, 0.0])  # log 2: the zero costs nothing
    0.6931471805599453
    >>> distribution_entropy([[1.0, 0.0], [0.25, 0.75]])
    array([0.        , 0.56233514])
    """
    probs = check_distribution(probs, "probs")

    positive = probs > 0.0
    terms = np.multiply(
        probs, np.log(probs, where=positive, out=np.zeros_like(probs))
    )
    return float_or_array(-np.sum(terms, axis=-1) + 0.0)


# --- entropy along sequences -----------------------------------------------------------------


@finite_output()
def token_entropies(
    logits: ArrayLike, mask: ArrayLike | None = None
) -> np.ndarray:
    """Entropy of the next-token distribution at every position of a batch of sequences.

        H_j = H(π(· | x_<j)) = -Σ_v π(v | x_<j) log π(v | x_<j),
        0 where m_j = 0.

    ``logits[..., j, :]`` are the logits the model produced *given the prefix* x_<j (the shift
    by one is the caller's job, as in :func:`rlfound.tokens.token_logprobs`). The entropy of a
    position is a property of the prefix only, not of the token sampled there; averaged over
    the prefixes the policy visits, Σ_j E[H_j] is the entropy of the whole sequence
    (eq-entropy-chain).

    Book: equation (eq-entropy-chain), chapter 10.

    Parameters
    ----------
    logits : array_like, shape (..., L, V)
        Next-token logits at each position.
    mask : array_like of bool or 0/1, shape (..., L), optional
        Positions that count (generated tokens); the others get exactly 0. Default: all.

    Returns
    -------
    numpy.ndarray, shape (..., L)
        H_j at every position, 0 at masked positions.

    Raises
    ------
    ValueError
        If ``logits`` has fewer than 2 dimensions, no vocabulary or a non-finite entry, or
        ``mask`` does not have shape ``logits.shape[:-1]`` or is not 0/1.

    References
    ----------
    C. E. Shannon, "Prediction and entropy of printed English", *Bell System Technical
    Journal* 30, 50-64, 1951.

    Examples
    --------
    >>> logits = [[[0.0, 0.0], [0.0, 1000.0]], [[0.0, 0.0], [0.0, 0.0]]]
    >>> token_entropies(logits, mask=[[1, 1], [1, 0]])
    array([[0.69314718, 0.        ],
           [0.69314718, 0.        ]])
    """
    logits, mask = _check_token_logits(logits, mask)

    per_position = -np.sum(_p_log_p(_log_softmax(logits, -1)), axis=-1)
    # where(), not a product: a masked position must give 0 whatever its
    # logits are.
    return np.where(mask, per_position, 0.0) + 0.0


@finite_output()
def mean_token_entropy(
    logits: ArrayLike, mask: ArrayLike | None = None
) -> float:
    """Mean entropy over the valid positions of a batch: the "entropy" a trainer logs.

        H̄ = Σ_ij m_ij H_ij / Σ_ij m_ij,

    with H_ij the entropy at position j of sequence i (:func:`token_entropies`). This is the
    token mean over the whole batch. For another aggregation (the mean over sequences of
    per-sequence means, a constant normalizer) pass :func:`token_entropies` to
    :func:`rlfound.reduction.aggregate_loss`.

    Book: equation (eq-entropy-chain), chapter 10.

    Parameters
    ----------
    logits : array_like, shape (..., L, V)
        Next-token logits at each position.
    mask : array_like of bool or 0/1, shape (..., L), optional
        Positions that count. Default: all.

    Returns
    -------
    float
        The mean entropy over the selected positions, in nats.

    Raises
    ------
    ValueError
        As :func:`token_entropies`, and if ``mask`` selects no position.

    Notes
    -----
    verl logs ``actor/entropy`` as the entropy of every response position aggregated with its
    ``loss_agg_mode`` (``fit`` in ``verl/trainer/ppo/ray_trainer.py``); with the default
    ``token-mean`` that is this number. verl computes the entropy from the logits divided by
    the sampling temperature (``_forward_micro_batch`` in ``verl/workers/actor/dp_actor.py``),
    so it is the entropy of the tempered policy: pass ``logits / temperature`` to match it.

    Examples
    --------
    >>> logits = [[[0.0, 0.0], [0.0, 1000.0]], [[0.0, 0.0], [0.0, 0.0]]]
    >>> mean_token_entropy(logits, mask=[[1, 1], [1, 0]])  # (log 2 + 0 + log 2) / 3
    0.46209812037329684
    """
    logits, mask = _check_token_logits(logits, mask)
    if not mask.any():
        raise ValueError(
            "mask must select at least one position; got none of shape "
            f"{mask.shape}"
        )

    return float(token_entropies(logits, mask).sum() / mask.sum())


@finite_output()
def sampled_token_entropy(
    logprobs: ArrayLike, mask: ArrayLike | None = None
) -> float:
    """Estimate of the mean token entropy from the log-probabilities of the sampled tokens.

        Ĥ = Σ_ij m_ij (-log π(x_ij | x_i,<j)) / Σ_ij m_ij.

    Each term is unbiased for the entropy at its position: given the prefix, the token is
    drawn from π(· | x_<j), so E[-log π(x_j) | x_<j] = H_j (eq-entropy-sampled). This is what
    a trainer can compute when it kept only the sampled tokens' log-probabilities and not the
    full logits. Its price is variance, Var[log π(x_j) | x_<j] per term, where the full-logit
    entropy (:func:`mean_token_entropy`) has none given the prefixes. The estimate is only
    valid if the tokens were sampled from π itself: tokens sampled at another temperature give
    the cross-entropy of the sampling distribution with π instead.

    Book: equation (eq-entropy-sampled), chapter 10.

    Parameters
    ----------
    logprobs : array_like, shape (..., L)
        log π(x_j | x_<j) of the sampled tokens (each <= 0).
    mask : array_like of bool or 0/1, shape (..., L), optional
        Positions that count. Default: all.

    Returns
    -------
    float
        The token mean of -log π over the selected positions.

    Raises
    ------
    ValueError
        If ``logprobs`` is a scalar, non-finite or positive somewhere, or ``mask`` does not
        have its shape, is not 0/1 or selects no position.

    Notes
    -----
    The sum Σ_j m_j (-log π(x_j)) of one response is unbiased for the sum of its per-position
    entropies whenever m_j depends only on x_<j (a prompt mask, or a mask that ends at an
    end-of-sequence token); the mean divides by a count that may itself be random. TRL's PPO
    trainer logs ``objective/entropy`` as ``(-logprobs).sum(1).mean()``, the mean over
    responses of the summed estimate, an estimate of the entropy of whole responses
    (documentation of the PPO trainer, "Explanation of the logged metrics").

    Examples
    --------
    >>> sampled_token_entropy(np.log([[0.5, 0.25], [1.0, 0.5]]), mask=[[1, 1], [1, 0]])
    0.6931471805599453
    """
    logprobs = check_logprobs(logprobs, "logprobs")
    mask = check_optional_mask(mask, "mask", logprobs.shape)
    if not mask.any():
        raise ValueError(
            "mask must select at least one position; got none of shape "
            f"{mask.shape}"
        )

    return float(-np.where(mask, logprobs, 0.0).sum() / mask.sum()) + 0.0


# --- constrained decoding ---------------------------------------------------------------------


@finite_output()
def constrained_probs(logits: ArrayLike, allowed: ArrayLike) -> np.ndarray:
    """Next-token distribution under constrained decoding: disallowed tokens removed, renormalized.

        π_c(v) = π(v) 1[v allowed] / Σ_{u allowed} π(u)
               = exp(θ_v - logsumexp_{u allowed} θ_u).

    A grammar, a tool schema or a regular expression marks at every position the tokens that
    keep the output valid; the decoder samples from π restricted to them. Computed with a
    log-sum-exp over the allowed logits, so it stays exact when every allowed token has a tiny
    probability under π (where dividing π by its allowed mass would give 0 / 0).

    Book: equation (eq-constrained-decoding), chapter 10.

    Parameters
    ----------
    logits : array_like, shape (..., V)
        Logits θ of the unconstrained next-token distributions.
    allowed : array_like of bool or 0/1, shape (..., V)
        The tokens the constraint allows; at least one per distribution.

    Returns
    -------
    numpy.ndarray, shape (..., V)
        π_c: zero at disallowed tokens, summing to 1 over the allowed ones.

    Raises
    ------
    ValueError
        If ``logits`` is a scalar, non-finite or has no vocabulary, or ``allowed`` does not
        have the shape of ``logits``, is not 0/1, or allows no token in some distribution.

    References
    ----------
    B. T. Willard and R. Louf, "Efficient guided generation for large language models",
    arXiv:2307.09702, 2023.

    Examples
    --------
    >>> constrained_probs([0.0, np.log(3.0), 5.0], allowed=[True, True, False])
    array([0.25, 0.75, 0.  ])
    """
    logits = check_logits(logits)
    allowed = check_mask(allowed, "allowed", logits.shape)
    empty = ~allowed.any(axis=-1)
    raise_first(
        empty,
        "allowed must allow at least one token per distribution",
        got="none",
    )

    restricted = np.where(
        allowed, logits, -np.inf
    )  # log 0 for the disallowed tokens
    with np.errstate(
        over="ignore"
    ):  # allowed logits ~1.8e308 apart: the small one gets 0
        return np.exp(
            restricted
            - special.logsumexp(restricted, axis=-1, keepdims=True)
        )


# --- diversity of a group of rollouts -----------------------------------------------------------


@finite_output()
def action_entropy(
    actions: ArrayLike, num_actions: int, unparsed: str = "exclude"
) -> np.ndarray | float:
    """Semantic diversity of a group: the entropy of the empirical distribution of its actions.

        Ĥ(A) = -Σ_a p̂(a) log p̂(a),    p̂(a) = #{i : a_i = a} / n,

    where a_i = g(x_i) is the action the parser extracted from rollout i. Two rollouts that
    differ only in whitespace have the same action and add nothing. This is the plug-in
    (maximum-likelihood) estimate: for small groups it is biased low, E[Ĥ] <= H, because
    the entropy is concave.

    Book: equation (eq-action-entropy), chapter 10.

    Parameters
    ----------
    actions : array_like of int, shape (..., N)
        The parsed action of each rollout of a group (last axis), in [0, num_actions), or -1
        where the text did not parse; leading axes index groups.
    num_actions : int
        Number of actions, >= 1.
    unparsed : {"exclude", "category"}, optional
        ``"exclude"`` (default): rollouts that did not parse are left out, n counts the
        parsed ones, and a group with no parsed rollout has entropy 0 (report the parse rate
        separately). ``"category"``: every unparsed rollout counts as one more action.

    Returns
    -------
    float or numpy.ndarray, shape (...)
        Ĥ(A) of each group, in nats; a float for a single group.

    Raises
    ------
    ValueError
        If ``actions`` is a scalar, has an empty last axis or holds anything but integers in
        [-1, num_actions); ``num_actions`` is not a positive integer; or ``unparsed`` is not
        one of the two choices.

    References
    ----------
    L. Paninski, "Estimation of entropy and mutual information", *Neural Computation* 15(6),
    1191-1253, 2003 (the bias of the plug-in estimate).

    Examples
    --------
    >>> action_entropy([0, 0, 1, 1], num_actions=2)  # log 2
    0.6931471805599453
    >>> action_entropy([[0, 0, 0, -1], [2, 1, -1, -1]], num_actions=3)
    array([0.        , 0.69314718])
    >>> action_entropy([2, 1, -1, -1], num_actions=3, unparsed="category")
    1.0397207708399179
    """
    num_actions = check_positive_int(num_actions, "num_actions")
    unparsed = check_choice(unparsed, "unparsed", UNPARSED)
    actions = check_indices(
        actions, "actions", num_actions, min_ndim=1, minimum=-1
    )
    check_last_axis(
        actions, "actions", 1, "rollout per group on the last axis"
    )
    groups = actions.size // actions.shape[-1]
    check_size(
        groups * (num_actions + 1),
        "num_actions",
        MAX_ARRAY_ENTRIES,
        "count entries",
    )

    if unparsed == "category":
        actions = np.where(actions < 0, num_actions, actions)
        num_actions += 1
    counts = _empirical_distribution(
        actions, num_actions
    )  # -1 matches no column: excluded
    totals = counts.sum(axis=-1, keepdims=True)
    probs = np.divide(
        counts, totals, out=np.zeros_like(counts), where=totals > 0
    )
    terms = np.multiply(
        probs, np.log(probs, where=probs > 0, out=np.zeros_like(probs))
    )
    return float_or_array(-terms.sum(axis=-1) + 0.0)


@finite_output()
def unique_successful_strategies(
    strategies: ArrayLike,
    rewards: ArrayLike,
    num_strategies: int,
    threshold: float = 1.0,
) -> np.ndarray | float:
    """Number of distinct strategies among the successful rollouts of each group.

        U = #{s : some rollout i has strategy_i = s and R_i >= threshold}.

    A group whose successes all follow one plan has U = 1 however different their texts are;
    a policy that keeps several working plans alive keeps U above 1. The count is returned
    as a float, like every scalar of the library.

    Book: equation (eq-unique-successes), chapter 10.

    Parameters
    ----------
    strategies : array_like of int, shape (..., N)
        The strategy (a parsed plan, a tool sequence, a cluster label) of each rollout, in
        [0, num_strategies), or -1 for a rollout with no recognizable strategy (never counted).
    rewards : array_like, shape (..., N)
        The reward R_i of each rollout.
    num_strategies : int
        Number of strategies, >= 1.
    threshold : float, optional
        A rollout succeeds when R_i >= threshold. Default 1.0 (a 0/1 reward).

    Returns
    -------
    float or numpy.ndarray, shape (...)
        U for each group, in [0, min(N, num_strategies)].

    Raises
    ------
    ValueError
        If ``strategies`` is a scalar, has an empty last axis or holds anything but integers
        in [-1, num_strategies); ``rewards`` is not finite or does not have its shape;
        ``num_strategies`` is not a positive integer; or ``threshold`` is not a finite real
        number.

    Examples
    --------
    >>> unique_successful_strategies([0, 1, 1, 2], [1.0, 1.0, 1.0, 0.0], num_strategies=3)
    2.0
    >>> unique_successful_strategies([[0, 0], [0, 1]], [[1.0, 1.0], [0.0, 0.5]],
    ...                              num_strategies=2, threshold=0.5)
    array([1., 1.])
    """
    num_strategies = check_size(
        check_positive_int(num_strategies, "num_strategies"),
        "num_strategies",
        MAX_ARRAY_ENTRIES,
        "strategies",
    )
    strategies = check_indices(
        strategies,
        "strategies",
        num_strategies,
        min_ndim=1,
        minimum=-1,
        kind="strategy",
    )
    check_last_axis(
        strategies, "strategies", 1, "rollout per group on the last axis"
    )
    rewards = as_float_array(rewards, "rewards")
    check_shape(
        rewards, "rewards", strategies.shape, "the shape of strategies"
    )
    threshold = _finite_real(threshold, "threshold")

    successful = np.where(rewards >= threshold, strategies, -1)
    counts = _empirical_distribution(successful, num_strategies)
    return float_or_array((counts > 0).sum(axis=-1).astype(np.float64))


@finite_output()
def group_reward_variance(
    rewards: ArrayLike, ddof: int = 0
) -> np.ndarray | float:
    """Variance of the rewards within each group of rollouts.

        Var(R) = Σ_i (R_i - R̄)² / (N - ddof),    R̄ = (1/N) Σ_i R_i.

    A group whose rewards are all equal has variance 0, and every group-baseline advantage
    (RLOO, GRPO) is then exactly 0: the group teaches nothing, however diverse its texts or
    actions were. The fraction of such groups is the first thing to check when learning stalls.

    Book: equation (eq-group-variance), chapter 10.

    Parameters
    ----------
    rewards : array_like, shape (..., N)
        Rewards of each group on the last axis; leading axes index groups.
    ddof : int, optional
        Delta degrees of freedom: the divisor is N - ddof, N - ddof >= 1. Default 0, the
        variance of the group as it is (NumPy's default); ddof = 1 is the unbiased sample
        variance, the square of the std PyTorch computes by default.

    Returns
    -------
    float or numpy.ndarray, shape (...)
        The variance of each group; a float for a single group.

    Raises
    ------
    ValueError
        If ``rewards`` is a scalar or not finite, or ``ddof`` is not a non-negative integer
        smaller than N.

    Notes
    -----
    TRL's GRPO trainer logs ``reward_std``, the mean over groups of the per-group
    ``torch.std`` (ddof 1) of the rewards (``_generate_and_score_completions`` in
    ``trl/trainer/grpo_trainer.py``): the mean of ``sqrt(group_reward_variance(r, ddof=1))``.

    Examples
    --------
    >>> group_reward_variance([1.0, 0.0, 0.0, 1.0])
    0.25
    >>> group_reward_variance([[1.0, 1.0, 1.0], [0.0, 1.0, 2.0]], ddof=1)
    array([0., 1.])
    """
    rewards = as_float_array(rewards, "rewards", min_ndim=1)
    check_last_axis(
        rewards, "rewards", 1, "member per group on the last axis"
    )
    ddof = check_nonnegative_int(ddof, "ddof")
    size = rewards.shape[-1]
    if ddof >= size:
        raise ValueError(
            "ddof must be smaller than the number of rewards per group "
            f"({size}); got {ddof}"
        )

    centered = rewards - rewards.mean(axis=-1, keepdims=True)
    # A group of equal rewards must give exactly 0, not a rounding residue.
    constant = np.all(rewards == rewards[..., :1], axis=-1, keepdims=True)
    centered = np.where(constant, 0.0, centered)
    return float_or_array((centered**2).sum(axis=-1) / (size - ddof))


def _finite_real(x: object, name: str) -> float:
    """A finite real scalar (a threshold may be negative)."""
    return float(as_float_array(x, name, ndim=0))
