"""Chapter 8: loss normalization."""

from __future__ import annotations

import itertools
import math

import numpy as np

# ---------------------------------------------------------------------------------------------
# Chapter 8: loss normalization
# ---------------------------------------------------------------------------------------------

REDUCTION_MODES = (
    "token-mean",
    "seq-mean-token-mean",
    "seq-mean-token-sum",
    "seq-mean-token-sum-norm",
    "dr-grpo",
)


def selected_tokens(loss, mask):
    """The losses each row's mask selects, one Python list per row, in position order."""
    return [
        [float(loss[i][j]) for j in range(len(mask[i])) if mask[i][j]] for i in range(len(mask))
    ]


def reduce_by_loops(loss, mask, mode, max_length=None, empty_rows="count"):
    """The five reductions of chapter 8 from their definitions, with Python sums over lists.

    Rows without tokens count as sequences of loss 0 (``empty_rows="count"``) or are left
    out (``"skip"``). Returns None where the definition divides by zero.
    """
    rows = selected_tokens(loss, mask)
    tokens = [x for row in rows for x in row]
    if mode == "token-mean":
        return math.fsum(tokens) / len(tokens) if tokens else None
    if mode == "seq-mean-token-sum-norm":
        return math.fsum(tokens) / max_length
    sequences = rows if empty_rows == "count" else [row for row in rows if row]
    if not sequences:
        return None
    if mode == "seq-mean-token-mean":
        values = [math.fsum(row) / len(row) if row else 0.0 for row in sequences]
    elif mode == "seq-mean-token-sum":
        values = [math.fsum(row) for row in sequences]
    elif mode == "dr-grpo":
        values = [math.fsum(row) / max_length for row in sequences]
    else:
        raise ValueError(mode)
    return math.fsum(values) / len(values)


def hierarchical_by_loops(loss, mask, turn_ids=None, task_ids=None):
    """Mean over turns' token means, then over a task's trajectories, then over tasks, with
    dictionaries keyed by the labels (turns, trajectories or tasks without tokens left out).
    Returns None when the mask selects nothing."""
    by_task = {}
    for i in range(len(mask)):
        turns = {}
        for j in range(len(mask[i])):
            if mask[i][j]:
                turn = 0 if turn_ids is None else int(turn_ids[i][j])
                turns.setdefault(turn, []).append(float(loss[i][j]))
        if turns:
            task = i if task_ids is None else int(task_ids[i])
            turn_means = [math.fsum(v) / len(v) for v in turns.values()]
            by_task.setdefault(task, []).append(math.fsum(turn_means) / len(turn_means))
    if not by_task:
        return None
    return math.fsum(math.fsum(v) / len(v) for v in by_task.values()) / len(by_task)


def pack_sequences(sequences, row_of, num_rows, length, gap=0, offset=0, fill=math.nan):
    """Place token-loss sequences into rows: sequence k goes to row ``row_of[k]``, after the
    sequences placed there before it, ``gap`` masked positions apart, the first one after
    ``offset`` masked positions; every other position is masked and holds ``fill``."""
    loss = np.full((num_rows, length), fill)
    mask = np.zeros((num_rows, length), dtype=bool)
    cursor = [offset] * num_rows
    for sequence, row in zip(sequences, row_of, strict=True):
        start = cursor[row]
        loss[row, start : start + len(sequence)] = sequence
        mask[row, start : start + len(sequence)] = True
        cursor[row] = start + len(sequence) + gap
    return loss, mask


def first_token_weight_by_hand(lengths, mode, max_length):
    """The weight chapter 8's reductions give the first token of each response of a group,
    from the definitions: 1/Σ L, 1/(N L_i), 1/N, 1/L_max, 1/(N L_max)."""
    group = len(lengths)
    return [
        {
            "token-mean": 1.0 / sum(lengths),
            "seq-mean-token-mean": 1.0 / (group * length),
            "seq-mean-token-sum": 1.0 / group,
            "seq-mean-token-sum-norm": 1.0 / max_length,
            "dr-grpo": 1.0 / (group * max_length),
        }[mode]
        for length in lengths
    ]


def style_update_by_enumeration(probs, lengths, correct, group_size, mode, max_length):
    """Exact expected update of the logits of a response style under one reduction.

    A group of ``group_size`` responses; each picks a style s with probability probs[s] with
    its first token (the style fixes its length lengths[s]) and is correct with probability
    correct[s]. The per-token loss is -A_i log π(x_ij) with the leave-one-out advantage A_i
    copied to every token; only the first token depends on the style logits, with score
    e_s - π. Every style tuple and every outcome tuple is enumerated.
    """
    num_styles = len(probs)
    expected = np.zeros(num_styles)
    for styles in itertools.product(range(num_styles), repeat=group_size):
        p_styles = math.prod(probs[s] for s in styles)
        weights = first_token_weight_by_hand([lengths[s] for s in styles], mode, max_length)
        for outcome in itertools.product((0.0, 1.0), repeat=group_size):
            p_outcome = math.prod(
                correct[s] if o else 1.0 - correct[s] for s, o in zip(styles, outcome, strict=True)
            )
            total = sum(outcome)
            for i, s in enumerate(styles):
                advantage = outcome[i] - (total - outcome[i]) / (group_size - 1)
                score = np.eye(num_styles)[s] - np.asarray(probs)
                expected += p_styles * p_outcome * advantage * weights[i] * score
    return expected


#: Chapter 8's multi-turn batch: one row per trajectory, the turn of each policy token and
#: "O" for an observation token (the rest of a row is padding).
MULTI_TURN_LAYOUT = (
    (0, 0, "O", "O", "O", 1, 1, 1, 1, 1, 1, 1, 1),  # task 0: 2-token turn, verbose turn
    (0, 0, "O", "O", 1, 1, "O", "O", 2, 2),  # task 0: three 2-token turns
    (0, 0, 0, 0),  # task 0: one 4-token turn
    (0, 0, 0),  # task 1: one 3-token turn
)


def layout_masks(layout, length=14):
    """The (mask, turn_ids) arrays of rows laid out as in :data:`MULTI_TURN_LAYOUT`: mask 1 and
    the turn at each policy token, mask 0 and turn -1 at observations and padding."""
    mask = np.zeros((len(layout), length), dtype=int)
    turns = np.full((len(layout), length), -1)
    for i, row in enumerate(layout):
        for j, cell in enumerate(row):
            if cell != "O":
                mask[i, j], turns[i, j] = 1, cell
    return mask, turns
