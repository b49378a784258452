"""Token sequences as actions: sequence log-probabilities, parsers, likelihood and turns.

An autoregressive language model is a policy over tokens. A generated sequence
x = (x_1, ..., x_L) has probability Π_j π(x_j | x_<j), so its log-probability is a sum of
per-token terms, and everything a trainer does with a sequence (likelihood, ratios, policy
gradients) is built from the per-token log-probabilities ``logprobs[..., j]`` =
log π(x_j | x_<j). Shapes: ``logits`` (..., L, V) with V the vocabulary size, ``tokens``
(..., L) integer ids in [0, V), ``logprobs`` and ``mask`` (..., L); leading axes are a batch.
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from rlfound._validation import (
    MAX_ARRAY_ENTRIES,
    MAX_ENUMERATION,
    as_float_array,
    capped_power,
    check_bigram_table,
    check_categories,
    check_enumeration_size,
    check_indices,
    check_leading_shape,
    check_logits,
    check_logprobs,
    check_nonnegative_int,
    check_optional_mask,
    check_positive_int,
    check_sequence_logprobs,
    check_shape,
    check_size,
    finite_output,
)
from rlfound.distributions import categorical_score, log_softmax

__all__ = [
    "bigram_logits",
    "cross_entropy_logit_gradient",
    "enumerate_sequences",
    "expand_turn_values_to_tokens",
    "negative_log_likelihood",
    "parser_marginal",
    "sequence_logprob",
    "token_logprobs",
]


@finite_output()
def enumerate_sequences(vocab_size: int, length: int) -> np.ndarray:
    """Every token sequence of a given length, in lexicographic order.

    Row i is the base-``vocab_size`` expansion of i, most significant token first, so the
    rows run (0, ..., 0, 0), (0, ..., 0, 1), ..., (V-1, ..., V-1). With a model small
    enough to enumerate, sums over all sequences (normalization, parser marginals, exact
    expectations) become exact finite sums.

    Parameters
    ----------
    vocab_size : int
        Vocabulary size V >= 1.
    length : int
        Sequence length L >= 0 (L = 0 gives the single empty sequence).

    Returns
    -------
    numpy.ndarray of int64, shape (V**L, L)
        All sequences, one per row.

    Raises
    ------
    ValueError
        If ``vocab_size`` is not a positive integer, ``length`` is not a non-negative
        integer, or V**L exceeds ``MAX_ENUMERATION`` (one million) rows (naming
        ``length``; the power is counted exactly, and never formed when it is large).

    References
    ----------
    D. E. Knuth, *The Art of Computer Programming, Volume 4A: Combinatorial Algorithms*,
    Addison-Wesley, 2011, section 7.2.1.1 (generating all n-tuples).

    Examples
    --------
    >>> enumerate_sequences(2, 2)
    array([[0, 0],
           [0, 1],
           [1, 0],
           [1, 1]])
    >>> enumerate_sequences(3, 0).shape
    (1, 0)
    """
    vocab_size = check_positive_int(vocab_size, "vocab_size")
    length = check_nonnegative_int(length, "length")
    count = capped_power(vocab_size, length)
    check_enumeration_size(
        count,
        "length",
        f"V**L = {vocab_size}**{length} > {MAX_ENUMERATION} sequences",
    )

    rows = itertools.product(range(vocab_size), repeat=length)
    return np.array(list(rows), dtype=np.int64).reshape(count, length)


@finite_output()
def token_logprobs(logits: ArrayLike, tokens: ArrayLike) -> np.ndarray:
    """Log-probability of each chosen token under the logits at its position.

        token_logprobs[..., j]
            = log softmax(logits[..., j, :])[tokens[..., j]]
            = z_{j, x_j} - logsumexp(z_j).

    ``logits[..., j, :]`` must be the model's output *given the prefix* x_<j (the usual
    shift by one is the caller's job); this function only gathers and normalizes.

    Book: equation (eq-sequence-logprob), chapter 2.

    Parameters
    ----------
    logits : array_like, shape (..., L, V)
        Next-token logits at each position.
    tokens : array_like of int, shape (..., L)
        Chosen token ids in [0, V).

    Returns
    -------
    numpy.ndarray, shape (..., L)
        log π(x_j | x_<j), float64.

    Raises
    ------
    ValueError
        If ``logits`` has fewer than 2 dimensions, no vocabulary, or non-finite entries, or
        ``tokens`` does not have shape ``logits.shape[:-1]`` or holds ids outside [0, V).

    References
    ----------
    Y. Bengio, R. Ducharme, P. Vincent and C. Jauvin, "A neural probabilistic language
    model", *JMLR* 3, 1137-1155, 2003.

    Examples
    --------
    >>> token_logprobs([[0.0, 0.0], [0.0, np.log(3.0)]], tokens=[0, 1])
    array([-0.69314718, -0.28768207])
    """
    logits = check_logits(logits, min_ndim=2)
    tokens = check_categories(tokens, "tokens", logits, kind="token")

    all_logprobs = log_softmax(
        logits
    )  # log π(v | x_<j) for every v in the vocabulary
    return np.take_along_axis(all_logprobs, tokens[..., None], axis=-1)[
        ..., 0
    ]


@finite_output()
def sequence_logprob(
    logprobs: ArrayLike, mask: ArrayLike | None = None
) -> np.ndarray | float:
    """Log-probability of a sequence: the sum of its (masked) token log-probabilities.

        log π(x) = Σ_j m_j log π(x_j | x_<j),

    by the chain rule of probability, π(x) = Π_j π(x_j | x_<j). The mask m selects the
    tokens the policy generated (an action); prompt, observation and padding positions
    have m_j = 0 and contribute nothing.

    Book: equation (eq-sequence-logprob), chapter 2.

    Parameters
    ----------
    logprobs : array_like, shape (..., L)
        Per-token log-probabilities log π(x_j | x_<j) (each <= 0).
    mask : array_like of bool or 0/1, shape (..., L), optional
        Positions to include. Default: all.

    Returns
    -------
    numpy.ndarray, shape (...), or float
        One log-probability per sequence; a float for a single sequence.

    Raises
    ------
    ValueError
        If ``logprobs`` is a scalar, non-finite or positive somewhere, or ``mask`` does not
        have its shape or is not 0/1.

    References
    ----------
    Y. Bengio, R. Ducharme, P. Vincent and C. Jauvin, "A neural probabilistic language
    model", *JMLR* 3, 1137-1155, 2003.

    Examples
    --------
    >>> sequence_logprob(np.log([0.5, 0.25]))
    -2.0794415416798357
    >>> sequence_logprob(np.log([[0.5, 0.25], [0.5, 1.0]]), mask=[[1, 0], [1, 1]])
    array([-0.69314718, -0.69314718])
    """
    logprobs = check_logprobs(logprobs, "logprobs")
    mask = check_optional_mask(mask, "mask", logprobs.shape)

    # where(), not a product: a masked-out position must not contribute even
    # as -0.0.
    total = np.where(mask, logprobs, 0.0).sum(axis=-1)
    return float(total) if total.ndim == 0 else total


@finite_output()
def bigram_logits(bigram_table: ArrayLike, tokens: ArrayLike) -> np.ndarray:
    """Next-token logits of a bigram model: a tiny autoregressive policy one can enumerate.

        logits[..., j, :] = table[x_{j-1}]  for j >= 1,
        logits[..., 0, :] = table[V],

    where row V of the (V + 1, V) table is the begin-of-sequence row. The distribution of
    token j depends on the prefix only through x_{j-1}, which is enough to make the
    probability of a sequence depend on its order, as in a real language model, while
    every sum over sequences stays small.

    Book: equation (eq-sequence-logprob), chapter 2.

    Parameters
    ----------
    bigram_table : array_like, shape (V + 1, V)
        Row v holds the logits of the next token after token v; row V is used at j = 0.
    tokens : array_like of int, shape (..., L)
        Token sequences, ids in [0, V).

    Returns
    -------
    numpy.ndarray, shape (..., L, V)
        The logits used at each position (the last token's own row is never needed).

    Raises
    ------
    ValueError
        If ``bigram_table`` is not a finite 2-D array of shape (V + 1, V) with V >= 1, or
        ``tokens`` is a scalar or holds ids outside [0, V).

    References
    ----------
    C. E. Shannon, "A mathematical theory of communication", *Bell System Technical
    Journal* 27, 379-423, 1948 (n-gram models of text).

    Examples
    --------
    >>> table = [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]  # rows: after 0, after 1, at start
    >>> bigram_logits(table, [1, 0])
    array([[4., 5.],
           [2., 3.]])
    """
    table = check_bigram_table(bigram_table)
    vocab_size = table.shape[1]
    tokens = check_indices(
        tokens, "tokens", vocab_size, min_ndim=1, kind="token"
    )

    begin = np.full((*tokens.shape[:-1], 1), vocab_size)
    # Shift right by one: position j is conditioned on token j - 1
    # (begin-of-sequence at 0).
    previous = np.concatenate([begin, tokens], axis=-1)[
        ..., : tokens.shape[-1]
    ]
    return table[previous]


@finite_output()
def parser_marginal(
    sequence_logprobs: ArrayLike, actions: ArrayLike, num_actions: int
) -> np.ndarray:
    """Probability of each parsed action: the total probability of the texts that parse to it.

        Pr(a) = Σ_{x : g(x) = a} π(x),

    where g is a deterministic parser from text to actions. Several sequences can mean the
    same action ("click 3", "Click(3)"), so the action's probability is a sum; it is
    computed as exp(logsumexp) of the matching log-probabilities, which stays accurate when
    every π(x) is tiny. Unparseable sequences (action -1) are excluded, so the result sums
    to Pr(the parse succeeds), which is 1 only if the listed sequences carry all the mass
    and all parse.

    Book: equation (eq-parser-marginal), chapter 2.

    Parameters
    ----------
    sequence_logprobs : array_like, shape (N,)
        log π(x_i) of N distinct sequences (so Σ_i π(x_i) <= 1).
    actions : array_like of int, shape (N,)
        g(x_i) in [0, num_actions), or -1 when x_i does not parse.
    num_actions : int
        Number of actions, >= 1.

    Returns
    -------
    numpy.ndarray, shape (num_actions,)
        Pr(a) for each action; 0 for an action no listed sequence parses to.

    Raises
    ------
    ValueError
        If ``sequence_logprobs`` is not a finite 1-D array of log-probabilities whose
        probabilities sum to at most 1, ``actions`` does not match it in shape or holds an
        id outside [-1, num_actions), or ``num_actions`` is not a positive integer or asks
        for more than ``MAX_ARRAY_ENTRIES`` (10^8) entries, N * num_actions (checked with
        exact integers before anything is allocated).

    References
    ----------
    S. Yao, J. Zhao, D. Yu, N. Du, I. Shafran, K. Narasimhan and Y. Cao, "ReAct:
    synergizing reasoning and acting in language models", ICLR, 2023 (text actions
    parsed into tool calls).

    Examples
    --------
    >>> parser_marginal(np.log([0.5, 0.2, 0.2, 0.1]), actions=[0, 1, 0, -1], num_actions=2)
    array([0.7, 0.2])
    """
    logprobs = check_sequence_logprobs(
        sequence_logprobs, "sequence_logprobs"
    )
    num_actions = check_positive_int(num_actions, "num_actions")
    actions = check_indices(actions, "actions", num_actions, minimum=-1)
    check_size(
        max(actions.size, 1) * num_actions,
        "num_actions",
        MAX_ARRAY_ENTRIES,
        "entries",
    )
    check_shape(actions, "actions", logprobs.shape, "one entry per sequence")

    parses_to = (
        actions == np.arange(num_actions)[:, None]
    )  # [a, i]: g(x_i) = a
    # exp(logsumexp) of the matching log π(x_i): exact even when every π(x_i)
    # underflows.
    return np.exp(
        special.logsumexp(np.where(parses_to, logprobs, -np.inf), axis=1)
    )


@finite_output()
def negative_log_likelihood(
    logprobs: ArrayLike, mask: ArrayLike | None = None
) -> float:
    """Negative log-likelihood of token data: the teacher-forcing (pre-training) loss.

        L_NLL = - Σ_{sequences} Σ_j m_j log π_θ(x_j | x_<j).

    It is a sum, not a mean, over every position and every sequence of the batch; dividing
    by a token or sequence count is a separate (and consequential) choice.

    Book: equation (eq-nll), chapter 2.

    Parameters
    ----------
    logprobs : array_like, shape (..., L)
        Per-token log-probabilities (each <= 0) of the data tokens.
    mask : array_like of bool or 0/1, shape (..., L), optional
        Positions that count. Default: all.

    Returns
    -------
    float
        The summed negative log-likelihood (>= 0).

    Raises
    ------
    ValueError
        As :func:`sequence_logprob`.

    References
    ----------
    Y. Bengio, R. Ducharme, P. Vincent and C. Jauvin, "A neural probabilistic language
    model", *JMLR* 3, 1137-1155, 2003.

    Examples
    --------
    >>> negative_log_likelihood(np.log([[0.5, 0.25]]))
    2.0794415416798357
    >>> negative_log_likelihood(np.log([[0.5, 0.25]]), mask=[[True, False]])
    0.6931471805599453
    """
    logprobs = check_logprobs(logprobs, "logprobs")
    mask = check_optional_mask(mask, "mask", logprobs.shape)

    # + 0.0 turns the -0.0 of an empty or certain sum into 0.0.
    return float(-np.where(mask, logprobs, 0.0).sum()) + 0.0


@finite_output()
def cross_entropy_logit_gradient(
    logits: ArrayLike, targets: ArrayLike
) -> np.ndarray:
    """Gradient of the cross-entropy -log softmax(z)[y] with respect to the logits z.

        ∂/∂z (-log softmax(z)_y) = softmax(z) - e_y = -(e_y - softmax(z)).

    Gradient descent on it raises the target's logit and lowers the others in proportion
    to their probability. It is minus the score function of the softmax policy at the
    action y (:func:`rlfound.distributions.categorical_score`), so teacher forcing and
    REINFORCE move the same logits; they differ in which tokens are used and with what
    weight.

    Book: equation (eq-nll), chapter 2.

    Parameters
    ----------
    logits : array_like, shape (..., V)
        Logits z at each position.
    targets : int or array_like of int, shape (...)
        Target token ids y in [0, V); one per position (or any shape for 1-D logits).

    Returns
    -------
    numpy.ndarray, shape (..., V)
        softmax(z) - onehot(y); each row sums to 0.

    Raises
    ------
    ValueError
        If ``logits`` is a scalar, has no vocabulary or is non-finite, or ``targets`` does
        not have shape ``logits.shape[:-1]`` or holds ids outside [0, V).

    References
    ----------
    J. S. Bridle, "Probabilistic interpretation of feedforward classification network
    outputs, with relationships to statistical pattern recognition", *Neurocomputing*, 1990.

    Examples
    --------
    >>> cross_entropy_logit_gradient([0.0, 0.0, np.log(2.0)], targets=2)
    array([ 0.25,  0.25, -0.5 ])
    """
    logits = check_logits(logits)
    targets = check_categories(targets, "targets", logits, kind="token")

    return -categorical_score(logits, targets)


@finite_output()
def expand_turn_values_to_tokens(
    turn_values: ArrayLike, token_turn_ids: ArrayLike
) -> np.ndarray:
    """Copy one value per turn onto every policy token of that turn.

        out[..., j] = turn_values[..., k]
                      if token j was generated in turn k,
        out[..., j] = 0
                      if token j is not a policy token (id -1).

    This is how a turn-level return G_t reaches the token-level REINFORCE sum: every token
    of the turn's action receives the same weight, and prompt, observation and padding
    tokens receive exactly 0, so they add nothing to the gradient.

    Book: equation (eq-reinforce-tokens), chapter 3.

    Parameters
    ----------
    turn_values : array_like, shape (..., K)
        One value (a return or an advantage) per turn.
    token_turn_ids : array_like of int, shape (..., L)
        For each token, the turn in [0, K) that generated it, or -1 for a token the policy
        did not generate. Leading (batch) shape equal to that of ``turn_values``.

    Returns
    -------
    numpy.ndarray, shape (..., L)
        Per-token values, float64.

    Raises
    ------
    ValueError
        If ``turn_values`` is a scalar or non-finite, or ``token_turn_ids`` has a different
        leading shape or holds an id outside [-1, K).

    References
    ----------
    R. J. Williams, "Simple statistical gradient-following algorithms for connectionist
    reinforcement learning", *Machine Learning* 8, 229-256, 1992.

    Examples
    --------
    >>> expand_turn_values_to_tokens([1.0, 0.5], token_turn_ids=[-1, 0, 0, -1, 1, -1])
    array([0. , 1. , 1. , 0. , 0.5, 0. ])
    """
    turn_values = as_float_array(turn_values, "turn_values", min_ndim=1)
    num_turns = turn_values.shape[-1]
    ids = check_indices(
        token_turn_ids, "token_turn_ids", num_turns, minimum=-1, kind="turn"
    )
    check_leading_shape(
        ids, "token_turn_ids", turn_values.shape[:-1], "turn_values"
    )

    # Append a zero column and send id -1 there, so non-policy tokens get an
    # exact 0.
    padded = np.concatenate(
        [turn_values, np.zeros((*turn_values.shape[:-1], 1))], axis=-1
    )
    columns = np.where(ids < 0, num_turns, ids)
    return np.take_along_axis(padded, columns, axis=-1)
