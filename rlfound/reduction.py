"""Loss reduction: how a batch of per-token losses becomes one number to differentiate.

A batch holds B sequences (rows) of per-token losses ``loss`` (shape (B, L)) and a ``mask``
(bool or 0/1, same shape) that is 1 on the tokens that count: the tokens the policy
generated, not the prompt, tool observations or padding. Every reduction of the library is a
weighted sum

    aggregate = Σ_ij w_ij ℓ_ij,   with w_ij = 0 wherever m_ij = 0,

and the reductions differ only in the weights w. The weights are the gradient of the
aggregate with respect to each token's loss, so they decide how hard each token, each
sequence, each turn and each task pushes on the policy. Masked positions are never read:
they may hold anything, even an infinity or a NaN (a padded log-probability), and still
contribute exactly zero loss and zero gradient.

Rows are sequences: a row holds one response (or one trajectory), left- or right-padded. The
token count of row i is L_i = Σ_j m_ij. For batches split across data-parallel workers or
micro-batches, :func:`shard_sums`, :func:`global_token_mean` and :func:`shard_losses` compute
the token mean of the whole batch from per-shard sums and counts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    MAX_ARRAY_ENTRIES,
    as_float_array,
    check_choice,
    check_indices,
    check_mask,
    check_positive_int,
    check_shape,
    check_size,
    check_weights,
    finite_output,
    raise_first,
)

__all__ = [
    "MODES",
    "aggregate_hierarchical",
    "aggregate_loss",
    "global_token_mean",
    "hierarchical_weights",
    "mean_of_local_means",
    "shard_losses",
    "shard_sums",
    "token_weights",
]

#: The reductions of :func:`aggregate_loss`, named as verl names the first four.
MODES = (
    "token-mean",
    "seq-mean-token-mean",
    "seq-mean-token-sum",
    "seq-mean-token-sum-norm",
    "dr-grpo",
)
#: The modes whose normalizer is the constant ``max_length`` (times B for "dr-grpo").
_NEEDS_MAX_LENGTH = ("seq-mean-token-sum-norm", "dr-grpo")
#: The modes that divide by the number of sequences B, where empty rows matter.
_PER_SEQUENCE = ("seq-mean-token-mean", "seq-mean-token-sum", "dr-grpo")
_EMPTY_ROWS = ("count", "skip")
#: Upper bound for labels that are only compared for equality (task ids).
_ANY_LABEL = 2**62


# --- input checks of this module ------------------------------------------------------------


def _shape_2d(x: Any, name: str) -> tuple[int, int]:
    """The shape of a rectangular 2-D array (B, L), read without converting its dtype."""
    try:
        array = np.asarray(x)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"{name} must be a rectangular array of numbers; got {x!r}"
        ) from error
    if array.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array (B sequences, L positions); got "
            f"shape {array.shape}"
        )
    return array.shape


def _check_loss_and_mask(
    loss: Any, mask: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Per-token losses (B, L) and a mask of the same shape; masked entries are set to 0.

    Only the entries the mask selects are read, so they alone must be finite: a padded
    position may hold -inf or NaN, as a log-probability of padding often does.
    """
    shape = _shape_2d(loss, "loss")
    raw = np.asarray(loss)
    if raw.dtype.kind not in "iuf":
        raise ValueError(
            f"loss must hold real numbers; got dtype {raw.dtype}"
        )
    mask = check_mask(mask, "mask", shape)
    bad = mask & ~np.isfinite(raw)
    raise_first(bad, "loss must be finite where mask is True", values=raw)
    # np.where, not loss * mask: 0 * inf is NaN, and a masked token must contribute exactly 0.
    return np.where(mask, raw, 0).astype(np.float64), mask


def _check_mode(
    mask: np.ndarray, mode: Any, max_length: Any, empty_rows: Any
) -> tuple[str, int | None, str]:
    """The mode, the constant normalizer (checked against the longest row) and the row rule."""
    mode = check_choice(mode, "mode", MODES)
    empty_rows = check_choice(empty_rows, "empty_rows", _EMPTY_ROWS)
    if max_length is None:
        if mode in _NEEDS_MAX_LENGTH:
            raise ValueError(
                f"max_length must be given for mode {mode!r}, whose "
                "normalizer is the constant max_length (the generation "
                "budget in tokens); got None"
            )
        return mode, None, empty_rows
    max_length = check_positive_int(max_length, "max_length")
    longest = int(mask.sum(axis=1).max(initial=0))
    if max_length < longest:
        row = int(np.argmax(mask.sum(axis=1)))
        raise ValueError(
            "max_length must be at least the number of tokens of every "
            f"sequence (row {row} has {longest}); got {max_length}"
        )
    return mode, max_length, empty_rows


def _sequences_averaged(
    mask: np.ndarray, mode: str, empty_rows: str
) -> np.ndarray:
    """Which rows count in the number of sequences B of a per-sequence mode (never zero)."""
    rows = (
        mask.any(axis=1)
        if empty_rows == "skip"
        else np.ones(mask.shape[0], dtype=bool)
    )
    if not rows.any():
        if mask.shape[0] == 0:
            raise ValueError(
                "mask must have at least one row (sequence) for mode "
                f"{mode!r}, which divides by the number of sequences; got "
                f"shape {mask.shape}"
            )
        raise ValueError(
            f"mask must select at least one token for mode {mode!r} with "
            "empty_rows='skip' (no sequence is left to average over); got "
            f"an all-zero mask of shape {mask.shape}"
        )
    return rows


def _no_tokens(mask: np.ndarray, mode: str | None = None) -> ValueError:
    """The error of a mean over no tokens at all (naming ``mask``)."""
    which = f" for mode {mode!r}" if mode else ""
    return ValueError(
        f"mask must select at least one token{which} (the mean of no tokens "
        f"is undefined); got an all-zero mask of shape {mask.shape}"
    )


def _check_ids(
    turn_ids: Any, task_ids: Any, mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Turn labels per token (default one turn per row) and task labels per row (default:
    every row its own task); a token the mask selects must belong to a turn (id >= 0)."""
    num_rows, length = mask.shape
    if turn_ids is None:
        turn_ids = np.zeros(mask.shape, dtype=np.int64)
    else:
        turn_ids = check_indices(
            turn_ids, "turn_ids", length, minimum=-1, kind="turn"
        )
        check_shape(
            turn_ids, "turn_ids", mask.shape, "the shape of loss and mask"
        )
        orphan = mask & (turn_ids < 0)
        raise_first(
            orphan,
            "turn_ids must be >= 0 where mask is True (every policy token "
            "belongs to a turn)",
            got="-1",
        )
    if task_ids is None:
        task_ids = np.arange(num_rows, dtype=np.int64)
    else:
        task_ids = check_indices(
            task_ids, "task_ids", _ANY_LABEL, kind="task"
        )
        check_shape(
            task_ids, "task_ids", (num_rows,), "one entry per row (sequence)"
        )
    return turn_ids, task_ids


def _check_shards(sums: Any, counts: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per-shard loss sums and non-negative token counts, not all zero, 0 sum where 0 count."""
    sums = as_float_array(sums, "sums", ndim=1)
    counts = as_float_array(counts, "counts", ndim=1)
    check_shape(
        counts,
        "counts",
        sums.shape,
        "one entry per shard, the shape of sums",
    )
    counts = check_weights(counts, "counts")
    orphan = (counts == 0.0) & (sums != 0.0)
    if orphan.any():
        shard = int(np.flatnonzero(orphan)[0])
        raise ValueError(
            "sums must be 0 where counts is 0 (a shard without tokens has "
            f"no loss); got {float(sums[shard])!r} at index ({shard},)"
        )
    return sums, counts


# --- one batch ----------------------------------------------------------------------------------


@finite_output()
def aggregate_loss(
    loss: ArrayLike,
    mask: ArrayLike,
    mode: str = "token-mean",
    max_length: int | None = None,
    empty_rows: str = "count",
) -> float:
    """Reduce per-token losses of a batch of sequences to one number.

    With m the mask, L_i = Σ_j m_ij the length of sequence i, B the number of sequences and
    L_max the constant ``max_length``:

        "token-mean"               Σ_ij m_ij ℓ_ij / Σ_ij m_ij
        "seq-mean-token-mean"      (1/B) Σ_i (Σ_j m_ij ℓ_ij / L_i)
        "seq-mean-token-sum"       (1/B) Σ_i Σ_j m_ij ℓ_ij
        "seq-mean-token-sum-norm"  Σ_ij m_ij ℓ_ij / L_max
        "dr-grpo"                  Σ_ij m_ij ℓ_ij / (B L_max)

    The first gives every token the same weight, the second every sequence; the last two
    divide by a constant, so a token's weight depends neither on its sequence's length nor
    on the lengths of the other sequences of the batch. :func:`token_weights` returns the
    weights w with aggregate = Σ w ℓ.

    Book: equations (eq-token-mean) to (eq-dr-grpo), chapter 8.

    Parameters
    ----------
    loss : array_like, shape (B, L)
        Per-token losses ℓ_ij. Only the entries where ``mask`` is True are read (they must
        be finite); masked entries may hold anything, even inf or NaN.
    mask : array_like of bool or 0/1, shape (B, L)
        m_ij: True on the tokens that count (generated by the policy).
    mode : str, optional
        One of :data:`MODES`; default "token-mean".
    max_length : int or None, optional
        The constant L_max of "seq-mean-token-sum-norm" and "dr-grpo" (required there),
        usually the generation budget in tokens. When given it must be at least every
        row's number of tokens; the array may be longer (padding beyond it is harmless).
        The other modes do not use it.
    empty_rows : {"count", "skip"}, optional
        How rows without tokens enter B in the modes that divide by it ("seq-mean-token-mean",
        "seq-mean-token-sum", "dr-grpo"): "count" (default) counts them as sequences with
        loss 0, so B is the number of rows; "skip" leaves them out, so B is the number of
        non-empty rows.

    Returns
    -------
    float
        The aggregate loss.

    Raises
    ------
    ValueError
        If ``loss`` is not a 2-D real array or is not finite where ``mask`` is True;
        ``mask`` does not have its shape or holds a value other than 0/1; ``mode`` or
        ``empty_rows`` is unknown; ``max_length`` is missing where the mode needs it, is
        not a positive integer, or is shorter than a row's number of tokens; or the mode
        would divide by zero: "token-mean" with no token selected, a per-sequence mode with
        no row (or, with ``empty_rows="skip"``, no non-empty row). Nothing returns NaN.

    Notes
    -----
    Which trainer does what (checked in their source; the book's conventions atlas runs
    each mode against the pinned commit of ``appendix/atlas.yml``, verl b178a3c):

    * verl, ``agg_loss`` in ``verl/trainer/ppo/core_algos.py``, option
      ``actor.loss_agg_mode`` (default "token-mean" in ``verl/trainer/config/actor/actor.yaml``,
      verl-project/verl at commit 018f23b). Its "seq-mean-token-sum-norm" divides the masked
      sum by ``loss_mask.shape[-1]`` only, as here, in volcengine/verl at commit 012be9d;
      at commit 018f23b it divides also by the number of non-empty sequences in the global
      batch and takes the constant from ``loss_scale_factor`` (default: the response
      length), which is "dr-grpo" with ``empty_rows="skip"`` here. The per-sequence modes of
      that version skip empty rows too; the older "seq-mean-token-mean" divides 0 by 0 on an
      empty row.
    * TRL, ``GRPOTrainer._compute_loss`` in ``trl/trainer/grpo_trainer.py`` (commit 000bb3d):
      ``loss_type="grpo"`` is "seq-mean-token-mean" with empty rows counted (their length is
      clamped to 1), "bnpo" is "token-mean" over the local batch, "dr_grpo" is "dr-grpo"
      with L_max = ``max_completion_length`` and B the number of rows. The ``GRPOConfig``
      docstring at commit 006d32c makes "dapo" the default: a token mean over the tokens of
      the whole accumulated batch (see :func:`shard_losses`).
    * OpenRLHF, ``PolicyLoss`` in ``openrlhf/models/loss.py`` (commit 09f5ace): with
      ``token_level_loss=True`` (the class default) a token mean over the micro-batch, else
      a mean over sequences of their token means.
    * Dr. GRPO's own code (sail-sg/understand-r1-zero, ``train_zero_math.py``, on the oat
      library's ``PPOLearner``): the masked sum of each sequence divided by the constant
      ``generate_max_length``, then the mean over the rows of the micro-batch: "dr-grpo".

    References
    ----------
    Z. Liu, C. Chen, W. Li, P. Qi, T. Pang, C. Du, W. S. Lee and M. Lin, "Understanding
    R1-Zero-like training: a critical perspective", arXiv:2503.20783, 2025.
    Q. Yu et al., "DAPO: an open-source LLM reinforcement learning system at scale",
    arXiv:2503.14476, 2025.

    Examples
    --------
    Two sequences of 1 and 3 tokens (the first row is padded):

    >>> loss = [[4.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
    >>> mask = [[1, 0, 0], [1, 1, 1]]
    >>> aggregate_loss(loss, mask, "token-mean")
    1.75
    >>> aggregate_loss(loss, mask, "seq-mean-token-mean")
    2.5
    >>> aggregate_loss(loss, mask, "dr-grpo", max_length=4)
    0.875
    """
    loss, mask = _check_loss_and_mask(loss, mask)
    mode, max_length, empty_rows = _check_mode(
        mask, mode, max_length, empty_rows
    )

    lengths = mask.sum(axis=1)  # L_i
    sums = loss.sum(axis=1)  # Σ_j m_ij ℓ_ij (masked entries are already 0)
    if mode == "token-mean":
        if lengths.sum() == 0:
            raise _no_tokens(mask, mode)
        return float(sums.sum() / lengths.sum())
    if mode == "seq-mean-token-sum-norm":
        return float(sums.sum() / max_length)

    counted = _sequences_averaged(
        mask, mode, empty_rows
    )  # the B sequences averaged over
    if mode == "seq-mean-token-mean":
        # A counted empty row is a sequence with loss 0 (TRL clamps its
        # length to 1).
        per_sequence = np.divide(
            sums, lengths, out=np.zeros_like(sums), where=lengths > 0
        )
    elif mode == "seq-mean-token-sum":
        per_sequence = sums
    else:  # "dr-grpo"
        per_sequence = sums / max_length
    return float(per_sequence[counted].sum() / counted.sum())


@finite_output()
def token_weights(
    mask: ArrayLike,
    mode: str = "token-mean",
    max_length: int | None = None,
    empty_rows: str = "count",
) -> np.ndarray:
    """The weight of every token in :func:`aggregate_loss`: w with aggregate = Σ_ij w_ij ℓ_ij.

    The aggregate is linear in the losses, so w_ij is also its derivative with respect to
    ℓ_ij: the factor by which token j of sequence i enters the gradient. With N = Σ_ij m_ij
    the number of tokens of the batch,

        "token-mean"               w_ij = m_ij / N
        "seq-mean-token-mean"      w_ij = m_ij / (B L_i)
        "seq-mean-token-sum"       w_ij = m_ij / B
        "seq-mean-token-sum-norm"  w_ij = m_ij / L_max
        "dr-grpo"                  w_ij = m_ij / (B L_max)

    so w = 0 exactly on every masked token. The total weight of sequence i, Σ_j w_ij, is
    L_i / N, 1/B, L_i / B, L_i / L_max and L_i / (B L_max): only "seq-mean-token-mean" gives
    every sequence the same total, and it does so by shrinking the weight of each token of
    a long sequence.

    Book: equation (eq-token-weights), chapter 8.

    Parameters
    ----------
    mask : array_like of bool or 0/1, shape (B, L)
        m_ij: True on the tokens that count.
    mode, max_length, empty_rows
        As for :func:`aggregate_loss`.

    Returns
    -------
    numpy.ndarray, shape (B, L)
        The weights w_ij, float64, non-negative, zero where ``mask`` is False.

    Raises
    ------
    ValueError
        As for :func:`aggregate_loss` (naming ``mask``, ``mode``, ``max_length`` or
        ``empty_rows``).

    Examples
    --------
    >>> token_weights([[1, 0, 0], [1, 1, 1]], "token-mean")
    array([[0.25, 0.  , 0.  ],
           [0.25, 0.25, 0.25]])
    >>> token_weights([[1, 0, 0], [1, 1, 1]], "seq-mean-token-mean")
    array([[0.5       , 0.        , 0.        ],
           [0.16666667, 0.16666667, 0.16666667]])
    """
    mask = check_mask(mask, "mask", _shape_2d(mask, "mask"))
    mode, max_length, empty_rows = _check_mode(
        mask, mode, max_length, empty_rows
    )

    m = mask.astype(np.float64)
    lengths = m.sum(axis=1, keepdims=True)
    if mode == "token-mean":
        if lengths.sum() == 0:
            raise _no_tokens(mask, mode)
        return m / lengths.sum()
    if mode == "seq-mean-token-sum-norm":
        return m / max_length

    num_sequences = _sequences_averaged(mask, mode, empty_rows).sum()
    if mode == "seq-mean-token-mean":
        return np.divide(
            m, num_sequences * lengths, out=np.zeros_like(m), where=m > 0
        )
    if mode == "seq-mean-token-sum":
        return m / num_sequences
    return m / (num_sequences * max_length)  # "dr-grpo"


# --- multi-turn batches: turns, trajectories, tasks ----------------------------------------------


@finite_output()
def aggregate_hierarchical(
    loss: ArrayLike,
    mask: ArrayLike,
    turn_ids: ArrayLike | None = None,
    task_ids: ArrayLike | None = None,
) -> float:
    """Average within turns, then within trajectories, then within tasks, then over tasks.

    Each row is one trajectory; ``turn_ids`` says which turn (environment decision) of its
    trajectory each token belongs to, and ``task_ids`` which task (prompt) each trajectory
    was sampled for. With Q the tasks, T_q the trajectories of task q, K_τ the turns of
    trajectory τ and n_k the tokens of turn k (all counted over the tokens the mask selects;
    a turn, trajectory or task without tokens is left out):

        aggregate = (1/|Q|) Σ_q (1/|T_q|) Σ_{τ ∈ T_q}
                    (1/|K_τ|) Σ_{k ∈ K_τ} (1/n_k) Σ_{j ∈ k} ℓ_j.

    Every task gets the same total weight 1/|Q|, however many trajectories were sampled for
    it; every trajectory of a task the same share, however many turns it took; every turn
    the same share, however verbose. :func:`hierarchical_weights` returns the weights. This
    form is written as nested loops for clarity; the weights are computed in one pass.

    Book: equation (eq-hierarchical), chapter 8.

    Parameters
    ----------
    loss : array_like, shape (B, L)
        Per-token losses; only the entries where ``mask`` is True are read.
    mask : array_like of bool or 0/1, shape (B, L)
        True on the tokens the policy generated.
    turn_ids : array_like of int, shape (B, L), optional
        The turn of each token within its row, in [0, L), or -1 for a token that belongs to
        no turn (allowed only where ``mask`` is False). Labels only need to be equal within
        a turn. None (default): every row is one turn, so the turn level is the token mean
        of the row.
    task_ids : array_like of int, shape (B,), optional
        The task of each row, any non-negative integer label. None (default): every row is
        its own task.

    Returns
    -------
    float
        The aggregate loss.

    Raises
    ------
    ValueError
        If ``loss`` or ``mask`` is invalid (as for :func:`aggregate_loss`), ``turn_ids`` or
        ``task_ids`` has the wrong shape or a label out of range, a selected token has no
        turn (id -1), or the mask selects no token at all (naming ``mask``).

    Examples
    --------
    Task 0 has two trajectories, one of them with two turns; task 1 has one trajectory:

    >>> loss = [[1.0, 3.0, 8.0], [2.0, 2.0, 0.0], [6.0, 0.0, 0.0]]
    >>> mask = [[1, 1, 1], [1, 1, 0], [1, 0, 0]]
    >>> turns = [[0, 0, 1], [0, 0, -1], [0, -1, -1]]
    >>> aggregate_hierarchical(loss, mask, turns, task_ids=[0, 0, 1])
    4.75
    """
    loss, mask = _check_loss_and_mask(loss, mask)
    turn_ids, task_ids = _check_ids(turn_ids, task_ids, mask)
    if not mask.any():
        raise _no_tokens(mask)

    task_means = []
    for task in np.unique(task_ids[mask.any(axis=1)]):
        trajectory_means = []
        for row in np.flatnonzero((task_ids == task) & mask.any(axis=1)):
            turns = turn_ids[row][mask[row]]
            tokens = loss[row][mask[row]]
            turn_means = [
                tokens[turns == turn].mean() for turn in np.unique(turns)
            ]
            trajectory_means.append(np.mean(turn_means))
        task_means.append(np.mean(trajectory_means))
    return float(np.mean(task_means))


@finite_output()
def hierarchical_weights(
    mask: ArrayLike,
    turn_ids: ArrayLike | None = None,
    task_ids: ArrayLike | None = None,
) -> np.ndarray:
    """The weight of every token in :func:`aggregate_hierarchical`.

    A selected token j of turn k of trajectory τ of task q has weight

        w_j = 1 / (|Q| · |T_q| · |K_τ| · n_k),

    the product of the four averaging factors of (eq-hierarchical); masked tokens have
    weight 0, and the weights of every task sum to 1/|Q|.

    Book: equation (eq-hierarchical), chapter 8.

    Parameters
    ----------
    mask, turn_ids, task_ids
        As for :func:`aggregate_hierarchical`.

    Returns
    -------
    numpy.ndarray, shape (B, L)
        The weights, float64; they sum to 1.

    Raises
    ------
    ValueError
        As for :func:`aggregate_hierarchical`.

    Examples
    --------
    >>> hierarchical_weights([[1, 1, 1], [1, 1, 0], [1, 0, 0]],
    ...                      [[0, 0, 1], [0, 0, -1], [0, -1, -1]], task_ids=[0, 0, 1])
    array([[0.0625, 0.0625, 0.125 ],
           [0.125 , 0.125 , 0.    ],
           [0.5   , 0.    , 0.    ]])
    """
    mask = check_mask(mask, "mask", _shape_2d(mask, "mask"))
    turn_ids, task_ids = _check_ids(turn_ids, task_ids, mask)
    if not mask.any():
        raise _no_tokens(mask)

    num_rows, length = mask.shape
    rows, cols = np.nonzero(mask)
    # n_k: tokens of each (row, turn); turn ids lie in [0, L) on selected tokens.
    turn_key = rows * length + turn_ids[rows, cols]
    turn_labels, turn_of_token, turn_sizes = np.unique(
        turn_key, return_inverse=True, return_counts=True
    )
    # |K_τ|: turns of each row.
    turns_per_row = np.bincount(turn_labels // length, minlength=num_rows)
    # |T_q| and |Q|: non-empty rows of each task, and the tasks that have one.
    active = np.flatnonzero(mask.any(axis=1))
    tasks, task_of_row, rows_per_task = np.unique(
        task_ids[active], return_inverse=True, return_counts=True
    )
    trajectories_in_task = np.zeros(num_rows)
    trajectories_in_task[active] = rows_per_task[task_of_row]

    weights = np.zeros(mask.shape)
    weights[rows, cols] = 1.0 / (
        len(tasks)
        * trajectories_in_task[rows]
        * turns_per_row[rows]
        * turn_sizes[turn_of_token.ravel()]
    )
    return weights


# --- shards: data-parallel workers and micro-batches -----------------------------------------


@finite_output()
def shard_sums(
    loss: ArrayLike, mask: ArrayLike, shards: ArrayLike, num_shards: int
) -> tuple[np.ndarray, np.ndarray]:
    """Split a batch by rows into shards and return each shard's loss sum and token count.

        sums[s] = Σ_{i in shard s} Σ_j m_ij ℓ_ij,   counts[s] = Σ_{i in shard s} Σ_j m_ij.

    A shard is what one data-parallel worker, or one micro-batch of gradient accumulation,
    sees. The pairs (sums, counts) are all :func:`global_token_mean` needs; a shard may be
    empty (sum 0, count 0).

    Book: equation (eq-shard-mismatch), chapter 8.

    Parameters
    ----------
    loss, mask : array_like, shape (B, L)
        As for :func:`aggregate_loss`.
    shards : array_like of int, shape (B,)
        The shard of each row, in [0, num_shards).
    num_shards : int
        The number of shards S >= 1.

    Returns
    -------
    sums : numpy.ndarray, shape (S,)
        The loss sum of every shard, float64.
    counts : numpy.ndarray, shape (S,)
        The token count of every shard, float64.

    Raises
    ------
    ValueError
        If ``loss`` or ``mask`` is invalid (as for :func:`aggregate_loss`), ``num_shards``
        is not a positive integer, or ``shards`` is not one integer in [0, num_shards) per
        row.

    Examples
    --------
    >>> sums, counts = shard_sums([[4.0, 0.0], [1.0, 1.0], [2.0, 0.0]],
    ...                           [[1, 0], [1, 1], [1, 0]], shards=[0, 1, 1], num_shards=2)
    >>> sums, counts
    (array([4., 4.]), array([1., 3.]))
    """
    loss, mask = _check_loss_and_mask(loss, mask)
    num_shards = check_size(
        check_positive_int(num_shards, "num_shards"),
        "num_shards",
        MAX_ARRAY_ENTRIES,
        "shards",
    )
    shards = check_indices(shards, "shards", num_shards, kind="shard")
    check_shape(
        shards, "shards", (loss.shape[0],), "one entry per row (sequence)"
    )

    sums = np.bincount(
        shards, weights=loss.sum(axis=1), minlength=num_shards
    )
    counts = np.bincount(
        shards, weights=mask.sum(axis=1), minlength=num_shards
    )
    return sums.astype(np.float64), counts.astype(np.float64)


@finite_output()
def global_token_mean(sums: ArrayLike, counts: ArrayLike) -> float:
    """The token mean of the whole batch from per-shard sums and counts: Σ_s a_s / Σ_s n_s.

    Adding numerators and denominators separately gives exactly the token mean of the
    concatenated batch, however the rows were split into shards, including empty shards.
    Averaging the shards' own means instead (:func:`mean_of_local_means`) does not.

    The same reduction serves the per-sequence modes: with per-sequence losses as the
    "tokens" (sums of per-sequence values and numbers of sequences per shard) it gives the
    mean over all sequences of the batch.

    Book: equation (eq-shard-mismatch), chapter 8.

    Parameters
    ----------
    sums : array_like, shape (S,)
        a_s, the loss sum of every shard.
    counts : array_like, shape (S,)
        n_s >= 0, the token count of every shard; not all zero.

    Returns
    -------
    float
        Σ a_s / Σ n_s.

    Raises
    ------
    ValueError
        If ``sums`` is not a finite 1-D array; ``counts`` does not have its shape, has a
        negative entry or is all zero; or a shard with count 0 has a nonzero sum (naming
        ``sums``).

    Examples
    --------
    >>> global_token_mean([4.0, 4.0], [1.0, 3.0])
    2.0
    """
    sums, counts = _check_shards(sums, counts)
    return float(sums.sum() / counts.sum())


@finite_output()
def mean_of_local_means(sums: ArrayLike, counts: ArrayLike) -> float:
    """What averaging locally normalized losses gives: (1/S) Σ_s a_s / n_s.

    This is the loss a data-parallel run optimizes when every worker divides its loss sum
    by its own token count and the all-reduce averages the workers' gradients. With
    μ_s = a_s / n_s the shard means and n̄ the mean count, it differs from the global token
    mean by

        (1/S) Σ_s μ_s - Σ_s a_s / Σ_s n_s = -Cov_s(n_s, μ_s) / n̄,

    where Cov_s is the covariance over shards (divisor S): zero for equal counts, and of
    either sign otherwise. Tokens of small shards weigh more than those of large ones.

    Book: equation (eq-shard-mismatch), chapter 8.

    Parameters
    ----------
    sums : array_like, shape (S,)
        a_s, the loss sum of every shard.
    counts : array_like, shape (S,)
        n_s > 0, the token count of every shard: a shard's own mean needs at least one
        token.

    Returns
    -------
    float
        (1/S) Σ a_s / n_s.

    Raises
    ------
    ValueError
        As for :func:`global_token_mean`, and if a shard has count 0 (naming ``counts``).

    Examples
    --------
    >>> mean_of_local_means([4.0, 4.0], [1.0, 3.0])  # the global token mean is 2.0
    2.6666666666666665
    """
    sums, counts = _check_shards(sums, counts)
    empty = counts == 0.0
    if empty.any():
        raise ValueError(
            "counts must be positive for every shard when each shard "
            "divides by its own count; got 0.0 at index "
            f"({int(np.flatnonzero(empty)[0])},)"
        )
    return float(np.mean(sums / counts))


@finite_output()
def shard_losses(
    sums: ArrayLike, counts: ArrayLike, combine: str = "sum"
) -> np.ndarray:
    """The loss each shard should differentiate so that the combined gradient is the global one.

    Every shard divides its own loss sum by the token count N = Σ_s n_s of the whole batch,
    known before the backward passes:

        combine="sum":   loss_s = a_s / N
                         (gradient accumulation: gradients add up)
        combine="mean":  loss_s = S a_s / N
                         (data-parallel workers: an all-reduce averages
                         the S gradients)

    Summing (or averaging) the returned losses, and so their gradients, gives the global
    token mean Σ a_s / N exactly; a shard's tokens then weigh 1/N each, as in the
    concatenated batch.

    Book: equation (eq-shard-fix), chapter 8.

    Parameters
    ----------
    sums : array_like, shape (S,)
        a_s, the loss sum of every shard.
    counts : array_like, shape (S,)
        n_s >= 0, the token count of every shard; not all zero.
    combine : {"sum", "mean"}, optional
        How the shards' gradients are combined: "sum" (default) for micro-batches of one
        worker, "mean" for workers whose gradients an all-reduce averages.

    Returns
    -------
    numpy.ndarray, shape (S,)
        The per-shard losses, float64.

    Raises
    ------
    ValueError
        As for :func:`global_token_mean`, and if ``combine`` is not "sum" or "mean".

    Notes
    -----
    verl's ``agg_loss`` (verl-project/verl commit 018f23b, ``verl/trainer/ppo/core_algos.py``)
    computes "token-mean" as the masked sum over the global number of tokens
    ``batch_num_tokens`` times ``dp_size``: the "mean" rule. TRL documents its default
    ``loss_type="dapo"`` as normalizing by the active tokens of the global accumulated batch
    (``GRPOConfig`` docstring, commit 006d32c). PyTorch's DistributedDataParallel averages
    the workers' gradients.

    Examples
    --------
    >>> shard_losses([4.0, 4.0], [1.0, 3.0])
    array([1., 1.])
    >>> shard_losses([4.0, 4.0], [1.0, 3.0], combine="mean")
    array([2., 2.])
    """
    sums, counts = _check_shards(sums, counts)
    combine = check_choice(combine, "combine", ("sum", "mean"))
    scale = len(sums) if combine == "mean" else 1
    return scale * sums / counts.sum()
