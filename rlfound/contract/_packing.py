"""Packing a padded batch into one stream and back, and the block-diagonal attention of a
packed stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    MAX_ARRAY_ENTRIES,
    as_array,
    check_choice,
    check_nonnegative_int,
    check_size,
    finite_output,
)

from ._fields import (
    _MAX_DENSE_TOKENS,
    _PADDING_SIDES,
    _STREAM_KINDS,
    _TARGET_FIELDS,
    FILL,
    REQUIRED_FIELDS,
)
from ._validate import validate

# --- packing ------------------------------------------------------------------------------------


@finite_output(check_result=False)  # masked positions pass through as given
def pack(batch: Mapping[str, ArrayLike]) -> dict[str, np.ndarray]:
    """The packed form of a padded batch: one stream of tokens with segment boundaries.

    Row i's n_i valid tokens become segment i of the stream,

        cu_seqlens[i] = Σ_{r < i} n_r,
        segment_ids[p] = i,   position_ids[p] = p - cu_seqlens[i]
                              for cu_seqlens[i] <= p < cu_seqlens[i + 1],

    and a target-aligned value of row i at position c_i + q - 1 (the prediction of the
    sequence's token q from token q - 1, c_i the column of its first token) moves to stream
    position cu_seqlens[i] + q - 1. The last position of each segment predicts nothing (its
    next token is another segment's) and holds the filler of :data:`FILL`. Per-row fields
    (``rewards``, turn-level ``advantages``, a per-row ``policy_version``) are kept as they
    are. Fields outside the contract are dropped.

    Book: equations (eq-cu-seqlens) and (eq-packing-invariance), chapter 13.

    Parameters
    ----------
    batch : mapping of str to array_like
        A padded batch (checked with :func:`validate`).

    Returns
    -------
    dict of str to numpy.ndarray
        The packed batch (see :mod:`rlfound.contract` for its fields).

    Raises
    ------
    ValueError
        As :func:`validate`.

    Notes
    -----
    flash-attention's variable-length kernels take the boundaries as ``cu_seqlens`` of shape
    (batch_size + 1,) and dtype int32 (``flash_attn_varlen_func`` in
    ``flash_attn/flash_attn_interface.py`` of Dao-AILab/flash-attention); cast with
    ``astype(np.int32)``. Hugging Face transformers documents padding-free training (its
    "Padding-free training" guide): ``DataCollatorWithFlattening`` concatenates the
    examples, restarts ``position_ids`` at 0 in each, and with
    ``return_flash_attn_kwargs=True`` also returns the cumulative lengths. verl's
    remove-padding path (``use_remove_padding`` in the function named under
    :func:`target_logprobs`) unpads the batch with flash-attention's ``unpad_input`` and
    rolls the flat stream by one position, so the last token of every sequence is paired
    with the first token of the next; those predictions are dropped when the result is
    padded back and sliced to the responses, as the filler positions are here.

    Examples
    --------
    >>> from rlfound.contract import build_batch
    >>> episode = {"segments": [{"kind": "user", "tokens": [5, 6]},
    ...                         {"kind": "policy", "tokens": [7], "logprobs": [-0.5],
    ...                          "version": 3}], "rewards": [1.0]}
    >>> short = {"segments": [{"kind": "user", "tokens": [4]},
    ...                       {"kind": "policy", "tokens": [8], "logprobs": [-1.0],
    ...                        "version": 2}], "rewards": [0.0]}
    >>> packed = pack(build_batch([episode, short], padding_side="left"))
    >>> packed["input_ids"], packed["cu_seqlens"], packed["position_ids"]
    (array([5, 6, 7, 4, 8]), array([0, 3, 5]), array([0, 1, 2, 0, 1]))
    >>> packed["old_logprobs"]  # predictions 6 -> 7 and 4 -> 8; ends of segments: filler
    array([ 0. , -0.5,  0. , -1. ,  0. ])
    """
    clean = validate(batch)
    attention = clean["attention_mask"]
    rows, length = attention.shape
    lengths = attention.sum(axis=1)
    cu_seqlens = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    total = int(cu_seqlens[-1])
    segment_ids = np.repeat(np.arange(rows, dtype=np.int64), lengths)
    packed = {
        "cu_seqlens": cu_seqlens,
        "segment_ids": segment_ids,
        "position_ids": np.arange(total, dtype=np.int64)
        - cu_seqlens[segment_ids],
        "input_ids": clean["input_ids"][attention],
        "rewards": clean["rewards"],
    }
    # The stream position of every valid token (row-major order is the stream
    # order).
    stream = np.cumsum(attention.ravel()).reshape(rows, length) - 1
    inside = (
        attention[:, :-1] & attention[:, 1:]
    )  # predictions within a sequence
    source = stream[:, :-1][inside]
    per_token = [
        name
        for name in (*_TARGET_FIELDS, "advantages", "policy_version")
        if name in clean
    ]
    for name in per_token:
        values = clean[name]
        if (
            name in ("advantages", "policy_version")
            and values.shape != inside.shape
        ):
            packed[name] = values  # one per turn or per row: nothing to move
            continue
        out = np.full(total, FILL[name], dtype=values.dtype)
        out[source] = values[inside]
        packed[name] = out
    return packed


def _packed_array(
    packed: Mapping, name: str, size: int, kind: str
) -> np.ndarray:
    array = as_array(packed[name], f"packed[{name!r}]")
    if array.shape != (size,):
        raise ValueError(
            f"packed[{name!r}] must have one entry per token of the stream, shape ({size},); "
            f"got shape {array.shape}"
        )
    if kind == "int" and array.dtype.kind not in "iu":
        raise ValueError(
            f"packed[{name!r}] must hold integers; got dtype {array.dtype}"
        )
    if kind == "real" and array.dtype.kind not in "iuf":
        raise ValueError(
            f"packed[{name!r}] must hold real numbers; got dtype {array.dtype}"
        )
    if kind == "mask":
        if (
            array.dtype.kind not in "biuf"
            or ((array != 0) & (array != 1)).any()
        ):
            raise ValueError(
                f"packed[{name!r}] must be a boolean (or 0/1) mask; got dtype {array.dtype}"
            )
        return array.astype(bool)
    return array


def _check_cu_seqlens(
    cu_seqlens: Any, name: str, total: int | None = None
) -> np.ndarray:
    cu = as_array(cu_seqlens, name)
    if cu.ndim != 1 or cu.size < 2 or cu.dtype.kind not in "iu":
        raise ValueError(
            f"{name} must be a 1-D integer array of B + 1 >= 2 cumulative lengths; got "
            f"dtype {cu.dtype} and shape {cu.shape}"
        )
    cu = cu.astype(np.int64)
    if cu[0] != 0:
        raise ValueError(f"{name} must start at 0; got {int(cu[0])} at (0,)")
    steps = np.diff(cu)
    if (steps < 0).any():
        index = int(np.flatnonzero(steps < 0)[0]) + 1
        raise ValueError(
            f"{name} must be non-decreasing; got {int(cu[index])} at ({index},)"
        )
    if total is not None and cu[-1] != total:
        raise ValueError(
            f"{name} must end at the number of tokens of the stream, {total}; got {int(cu[-1])}"
        )
    return cu


@finite_output(check_result=False)  # masked positions pass through as given
def unpack(
    packed: Mapping[str, ArrayLike],
    length: int | None = None,
    padding_side: str = "right",
    pad_id: int = 0,
) -> dict[str, np.ndarray]:
    """The padded form of a packed batch: the inverse of :func:`pack`.

    Segment i, the stream slice ``cu_seqlens[i]:cu_seqlens[i + 1]`` of n_i tokens, becomes
    row i, starting at column c_i = 0 (right padding) or L - n_i (left padding); its
    target-aligned value at stream position cu_seqlens[i] + q - 1 goes back to column
    c_i + q - 1. ``unpack(pack(batch), L, side)`` returns ``batch`` exactly when ``batch``
    was padded on ``side`` with the padding values of :data:`FILL` (as :func:`build_batch`
    pads). Per-row fields are kept as they are; a ``policy_version`` of shape (B,) is read
    per row, except when B = N_tok (every segment a single token, so nothing is predicted),
    where it is read per token.

    Book: equation (eq-cu-seqlens), chapter 13.

    Parameters
    ----------
    packed : mapping of str to array_like
        A packed batch: ``cu_seqlens``, ``input_ids``, the target-aligned fields as stream
        arrays, the per-row fields; ``segment_ids`` and ``position_ids`` are checked against
        ``cu_seqlens`` when present.
    length : int or None, optional
        L, at least 2 and at least the longest segment. Default: the longest segment (at
        least 2).
    padding_side : {"right", "left"}, optional
        Where the padding goes. Default "right".
    pad_id : int, optional
        Token id written at padding positions (>= 0). Default 0.

    Returns
    -------
    dict of str to numpy.ndarray
        The padded batch.

    Raises
    ------
    ValueError
        If ``packed`` misses a required field, ``cu_seqlens`` is not 0, ..., N_tok
        non-decreasing, a stream array does not have N_tok entries, ``segment_ids`` or
        ``position_ids`` disagree with ``cu_seqlens``, ``action_mask`` is 1 at the last
        token of a segment (a prediction across a boundary), or ``length``,
        ``padding_side`` or ``pad_id`` is invalid.

    Examples
    --------
    >>> packed = {"cu_seqlens": [0, 3, 5], "input_ids": [5, 6, 7, 4, 8],
    ...           "action_mask": [0, 1, 0, 1, 0], "old_logprobs": [0, -0.5, 0, -1.0, 0],
    ...           "turn_ids": [-1, 0, -1, 0, -1], "policy_version": [-1, 3, -1, 2, -1],
    ...           "rewards": [[1.0], [0.0]]}
    >>> padded = unpack(packed)
    >>> padded["input_ids"]
    array([[5, 6, 7],
           [4, 8, 0]])
    >>> padded["old_logprobs"]
    array([[ 0. , -0.5],
           [-1. ,  0. ]])
    """
    if not isinstance(packed, Mapping):
        raise ValueError(
            f"packed must be a mapping of field names to arrays; got {type(packed).__name__}"
        )
    needed = [
        "cu_seqlens",
        *(name for name in REQUIRED_FIELDS if name != "attention_mask"),
    ]
    missing = [name for name in needed if name not in packed]
    if missing:
        raise ValueError(
            f"packed must have the fields {needed}; got no {missing[0]!r} among {sorted(packed)}"
        )
    padding_side = check_choice(padding_side, "padding_side", _PADDING_SIDES)
    pad_id = check_nonnegative_int(pad_id, "pad_id")
    input_ids = as_array(packed["input_ids"], "packed['input_ids']")
    if input_ids.ndim != 1:
        raise ValueError(
            f"packed['input_ids'] must be a 1-D stream of tokens; got shape {input_ids.shape}"
        )
    total = input_ids.size
    cu = _check_cu_seqlens(
        packed["cu_seqlens"], "packed['cu_seqlens']", total
    )
    input_ids = _packed_array(packed, "input_ids", total, "int")
    rows, lengths = cu.size - 1, np.diff(cu)
    segment_ids = np.repeat(np.arange(rows), lengths)
    positions = np.arange(total) - cu[segment_ids]
    for name, expected in (
        ("segment_ids", segment_ids),
        ("position_ids", positions),
    ):
        if name in packed:
            given = _packed_array(packed, name, total, "int")
            if (given != expected).any():
                index = int(np.flatnonzero(given != expected)[0])
                raise ValueError(
                    f"packed[{name!r}] must agree with cu_seqlens ({int(expected[index])} at "
                    f"({index},)); got {int(given[index])}"
                )
    longest = int(lengths.max(initial=0))
    if length is None:
        length = max(2, longest)
    else:
        length = check_nonnegative_int(length, "length")
        if length < max(2, longest):
            raise ValueError(
                f"length must be at least 2 and at least the longest segment ({longest} tokens); "
                f"got {length}"
            )

    check_size(
        rows * length,
        "length",
        MAX_ARRAY_ENTRIES,
        "array entries (rows * length)",
    )
    # Column of every stream token in the padded layout, and the predictions inside segments.
    start = (
        np.zeros(rows, dtype=np.int64)
        if padding_side == "right"
        else length - lengths
    )
    columns = start[segment_ids] + positions
    last = np.zeros(total, dtype=bool)
    last[cu[1:][lengths > 0] - 1] = (
        True  # the last token of each segment predicts nothing
    )

    padded: dict[str, np.ndarray] = {
        "input_ids": np.full((rows, length), pad_id, dtype=np.int64),
        "attention_mask": np.zeros((rows, length), dtype=bool),
    }
    padded["input_ids"][segment_ids, columns] = input_ids
    padded["attention_mask"][segment_ids, columns] = True
    action = _packed_array(packed, "action_mask", total, "mask")
    crossing = action & last
    if crossing.any():
        index = int(np.flatnonzero(crossing)[0])
        raise ValueError(
            "packed['action_mask'] must be 0 at the last token of every segment (its next token "
            f"belongs to another segment); got 1 at ({index},)"
        )
    inside = ~last
    for name in (*_TARGET_FIELDS, "advantages", "policy_version"):
        if name not in packed:
            continue
        given = as_array(packed[name], f"packed[{name!r}]")
        per_turn = name == "advantages" and given.ndim == 2
        per_row = (
            name == "policy_version"
            and given.shape == (rows,)
            and rows != total
        )
        if per_turn or per_row:
            padded[name] = given  # nothing to move
            continue
        kind = _STREAM_KINDS[name]
        values = _packed_array(packed, name, total, kind)
        dtype = {"mask": bool, "int": np.int64, "real": np.float64}[kind]
        out = np.full((rows, length - 1), FILL[name], dtype=dtype)
        out[segment_ids[inside], columns[inside]] = values[inside]
        padded[name] = out
    padded["rewards"] = as_array(
        packed["rewards"], "packed['rewards']"
    ).astype(np.float64)
    return padded


@finite_output()
def block_diagonal_attention(cu_seqlens: ArrayLike) -> np.ndarray:
    """The causal, block-diagonal attention pattern of a packed stream (a view for tests).

        att[p, q] = [seg(p) = seg(q)] [q <= p],

    with seg(p) the segment of stream position p: a token attends to itself and to the
    earlier tokens of its own segment, never to another segment. Restricted to one segment
    it is the causal mask of the corresponding padded row restricted to its valid tokens,
    which is why packing changes no logit (given position ids that restart at 0 in every
    segment).

    Book: equation (eq-block-attention), chapter 13.

    Parameters
    ----------
    cu_seqlens : array_like of int, shape (B + 1,)
        Cumulative segment lengths, 0 = cu_seqlens[0] <= ... <= cu_seqlens[B] = N_tok, with
        N_tok <= 4096 (the view is dense).

    Returns
    -------
    numpy.ndarray of bool, shape (N_tok, N_tok)
        att[p, q]: whether position p may attend to position q.

    Raises
    ------
    ValueError
        If ``cu_seqlens`` is ragged (nested lists of unequal lengths) or not a
        non-decreasing 1-D integer array starting at 0 with at least two entries, or N_tok
        exceeds 4096.

    Examples
    --------
    >>> block_diagonal_attention([0, 2, 3]).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [0, 0, 1]])
    """
    cu = _check_cu_seqlens(cu_seqlens, "cu_seqlens")
    total = int(cu[-1])
    if total > _MAX_DENSE_TOKENS:
        raise ValueError(
            f"cu_seqlens must describe at most {_MAX_DENSE_TOKENS} tokens for the dense "
            f"(N_tok, N_tok) view; got N_tok = {total}"
        )
    segment = np.repeat(np.arange(cu.size - 1), np.diff(cu))
    position = np.arange(total)
    return (segment[:, None] == segment[None, :]) & (
        position[None, :] <= position[:, None]
    )
