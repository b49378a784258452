"""Checking a padded batch against the contract: :func:`validate`."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    check_nonnegative_int,
    finite_output,
    first_index,
    show_value,
)

from ._fields import FIELDS, REQUIRED_FIELDS, _where

# --- validation ---------------------------------------------------------------------------------


def _field(batch: Mapping, name: str) -> np.ndarray:
    try:
        return np.asarray(batch[name])
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"batch[{name!r}] must be a rectangular array; got {batch[name]!r}"
        ) from error


def _integers(
    batch: Mapping, name: str, shapes: tuple[tuple[int, ...], ...], what: str
) -> np.ndarray:
    """An integer field of one of ``shapes`` (floats holding whole numbers are accepted)."""
    array = _field(batch, name)
    _check_shape(array, name, shapes, what)
    if array.dtype.kind == "f":
        bad = ~np.isfinite(array) | (array != np.round(array))
        if bad.any():
            index = first_index(bad)
            raise ValueError(
                f"batch[{name!r}] must hold integers; got {show_value(array[index])} "
                f"at {_where(index)}"
            )
    elif array.dtype.kind not in "iu":
        raise ValueError(
            f"batch[{name!r}] must hold integers; got dtype {array.dtype}"
        )
    return array.astype(np.int64)


def _reals(
    batch: Mapping, name: str, shapes: tuple[tuple[int, ...], ...], what: str
) -> np.ndarray:
    """A real (integer or floating) field of one of ``shapes``, as float64; may hold NaN."""
    array = _field(batch, name)
    _check_shape(array, name, shapes, what)
    if array.dtype.kind not in "iuf":
        raise ValueError(
            f"batch[{name!r}] must hold real numbers; got dtype {array.dtype}"
        )
    return array.astype(np.float64)


def _binary(
    batch: Mapping, name: str, shapes: tuple[tuple[int, ...], ...], what: str
) -> np.ndarray:
    """A mask field of one of ``shapes``: bool, or numbers that are all 0 or 1."""
    array = _field(batch, name)
    _check_shape(array, name, shapes, what)
    if array.dtype == np.bool_:
        return array
    if array.dtype.kind not in "iuf":
        raise ValueError(
            f"batch[{name!r}] must be a boolean (or 0/1) mask; got dtype {array.dtype}"
        )
    bad = (array != 0) & (array != 1)
    if bad.any():
        index = first_index(bad)
        raise ValueError(
            f"batch[{name!r}] must be a boolean (or 0/1) mask; got {show_value(array[index])} at "
            f"{_where(index)}"
        )
    return array.astype(bool)


def _check_shape(
    array: np.ndarray,
    name: str,
    shapes: tuple[tuple[int, ...], ...],
    what: str,
) -> None:
    if array.shape not in shapes:
        allowed = " or ".join(str(shape) for shape in shapes)
        raise ValueError(
            f"batch[{name!r}] must have shape {allowed} ({what}); got shape {array.shape}"
        )


#: How validate reads a field of each declared dtype.
_READERS = {"int64": _integers, "float64": _reals, "bool": _binary}


def _check_attention(attention: np.ndarray) -> None:
    """Each row's 1s form one block: padding only before or after the sequence."""
    ones = attention.astype(np.int64)
    # A row is one block iff its 0 -> 1 steps plus a leading 1 number at most one.
    starts = np.diff(ones, axis=1, prepend=0) == 1
    split = starts.sum(axis=1) > 1
    if split.any():
        row = int(np.flatnonzero(split)[0])
        first, second = np.flatnonzero(starts[row])[:2]
        hole = first + int(np.argmin(attention[row, first:second]))
        raise ValueError(
            "batch['attention_mask'] must be one contiguous block of 1s per row (padding only "
            f"before or after the sequence); got a 0 inside row {row} at position {hole}"
        )


def _check_action_mask(
    action: np.ndarray, attention: np.ndarray, turn_ids: np.ndarray
) -> None:
    """The action mask may be 1 only on a prediction between two valid tokens whose target a
    decision of the trained policy produced (turn_ids >= 0)."""
    across_padding = ~(attention[:, :-1] & attention[:, 1:])
    no_decision = turn_ids < 0
    allowed = ~across_padding & ~no_decision
    bad = action & ~allowed
    if not bad.any():
        return
    row, position = first_index(bad)
    # Diagnose the classic off-by-one: a mask written at the input positions of the policy
    # tokens instead of at their targets sits one position to the right of the target mask,
    # so shifting the row left by one puts every 1 on an allowed target.
    shifted = action[row, 1:]
    if shifted.any() and not (shifted & ~allowed[row, :-1]).any():
        raise ValueError(
            "batch['action_mask'] must be aligned with the targets (position j is the "
            f"prediction of input_ids[:, j + 1]); got a 1 at {_where((row, position))} and a "
            f"row {row} that is aligned with the input positions: shifting it one position to "
            "the left would put every 1 on a policy target"
        )
    if across_padding[row, position]:
        raise ValueError(
            "batch['action_mask'] must be 0 where the prediction touches padding (attention_mask "
            f"of input j or target j + 1 is 0); got 1 at {_where((row, position))}"
        )
    raise ValueError(
        "batch['action_mask'] must be 0 on targets that no decision of the trained policy "
        "produced (turn_ids = -1: system prompt, user message, tool observation or another "
        f"model's tokens); got 1 at {_where((row, position))}"
    )


def _check_turn_order(
    turn_ids: np.ndarray, attention: np.ndarray
) -> np.ndarray:
    """Turn ids are -1 across padding and number each row's decisions 0, 1, 2, ... in order.

    Returns the number of turns K_i of every row.
    """
    across_padding = ~(attention[:, :-1] & attention[:, 1:])
    bad = across_padding & (turn_ids >= 0)
    if bad.any():
        raise ValueError(
            "batch['turn_ids'] must be -1 where the prediction touches padding; got "
            f"{int(turn_ids[first_index(bad)])} at {_where(first_index(bad))}"
        )
    # The largest turn seen before each position (-1 at the start of a row): a labeled
    # position must repeat it or add one to it, so the labels run 0, 1, 2, ... in order.
    labeled = turn_ids >= 0
    seen = np.maximum.accumulate(np.where(labeled, turn_ids, -1), axis=1)
    before = np.concatenate(
        [np.full((len(turn_ids), 1), -1), seen[:, :-1]], axis=1
    )
    out_of_order = labeled & ((turn_ids < before) | (turn_ids > before + 1))
    if out_of_order.any():
        row, position = first_index(out_of_order)
        label, previous = (
            int(turn_ids[row, position]),
            int(before[row, position]),
        )
        after = (
            "the start of the row" if previous < 0 else f"turn {previous}"
        )
        raise ValueError(
            "batch['turn_ids'] must number the decisions of each row 0, 1, 2, ... in the order "
            f"they happen; got turn {label} after {after} at {_where((row, position))}"
        )
    return (
        seen[:, -1] + 1
        if seen.size
        else np.zeros(len(turn_ids), dtype=np.int64)
    )


def _check_logprobs(
    values: np.ndarray, name: str, action: np.ndarray
) -> None:
    bad = action & ~(np.isfinite(values) & (values <= 0.0))
    if bad.any():
        index = first_index(bad)
        raise ValueError(
            f"batch[{name!r}] must be log-probabilities (finite, <= 0) where action_mask is 1; "
            f"got {show_value(values[index])} at {_where(index)}"
        )


@finite_output(check_result=False)  # masked positions pass through as given
def validate(
    batch: Mapping[str, ArrayLike], learner_version: int | None = None
) -> dict:
    """Check every rule of the batch contract; return the batch in its canonical dtypes.

    The rules (each failure raises ``ValueError`` naming the field and the first offending
    position, as ``(row, position)``):

    1. the required fields are there, with the shapes of the contract: (B, L) for
       ``input_ids`` and ``attention_mask`` (L >= 2), (B, L - 1) for the target-aligned
       fields, (B, T) for ``rewards``, (B, L - 1) or (B, T) for ``advantages``, (B, L - 1)
       or (B,) for ``policy_version``;
    2. ``input_ids``, ``turn_ids`` and ``policy_version`` hold integers, the masks 0/1;
    3. ``attention_mask`` is one contiguous block per row: no padding inside a sequence;
    4. ``action_mask`` is aligned with the targets: it is 0 where a prediction touches
       padding and where ``turn_ids`` is -1 (prompts, observations, other models' tokens);
       a mask written at the input positions of the policy tokens is diagnosed as such;
    5. ``turn_ids`` is -1 across padding and numbers each row's decisions 0, 1, 2, ... in
       order; ``rewards`` (and turn-level ``advantages``) are 0 beyond a row's last turn;
    6. every trained token is tagged with the version (>= 0) of the policy that sampled it,
       and no tag is newer than ``learner_version``;
    7. ``old_logprobs`` (and ``ref_logprobs``) are finite and <= 0 where ``action_mask`` is
       1; rewards are finite, and so are advantages where they are read.

    Values at positions no rule reads (padding, masked targets) are not checked. A packed
    batch is checked as ``validate(unpack(packed))``. Fields outside the contract are
    returned unchanged.

    Book: equations (eq-target-alignment) and (eq-action-mask), chapter 13.

    Parameters
    ----------
    batch : mapping of str to array_like
        The batch: a dict, or the ``NpzFile`` of ``numpy.load``.
    learner_version : int or None, optional
        The learner's current version; no token may have been sampled by a newer one (the
        sampler cannot be ahead of the learner). Default None: not checked.

    Returns
    -------
    dict of str to numpy.ndarray
        The batch with masks as bool, ids and versions as int64 and real fields as float64.

    Raises
    ------
    ValueError
        If a rule is broken; the message starts with ``batch['<field>']`` (or ``batch`` for
        a missing field) and names the first offending position. If ``learner_version`` is
        not a non-negative integer (naming ``learner_version``).

    Examples
    --------
    >>> from rlfound.contract import build_batch
    >>> episode = {"segments": [{"kind": "user", "tokens": [5, 6]},
    ...                         {"kind": "policy", "tokens": [7], "logprobs": [-0.5],
    ...                          "version": 3}], "rewards": [1.0]}
    >>> batch = build_batch([episode])
    >>> sorted(validate(batch, learner_version=3))[:3]
    ['action_mask', 'attention_mask', 'input_ids']
    >>> batch["old_logprobs"][0, 1] = 0.5
    >>> validate(batch)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: batch['old_logprobs'] must be log-probabilities ... got 0.5 at (0, 1)
    """
    if not isinstance(batch, Mapping):
        raise ValueError(
            f"batch must be a mapping of field names to arrays; got {type(batch).__name__}"
        )
    if learner_version is not None:
        learner_version = check_nonnegative_int(
            learner_version, "learner_version"
        )
    missing = [name for name in REQUIRED_FIELDS if name not in batch]
    if missing:
        raise ValueError(
            f"batch must have the fields {list(REQUIRED_FIELDS)}; got no {missing[0]!r} among "
            f"{sorted(batch)}"
        )

    # B and L come from input_ids, T from rewards; then every field is read as declared.
    input_ids = _field(batch, "input_ids")
    if input_ids.ndim != 2 or input_ids.shape[1] < 2:
        raise ValueError(
            "batch['input_ids'] must have shape (B, L) with L >= 2 (B sequences, L positions); "
            f"got shape {input_ids.shape}"
        )
    rows, length = input_ids.shape
    rewards = _field(batch, "rewards")
    if rewards.ndim != 2 or rewards.shape[0] != rows or rewards.shape[1] < 1:
        raise ValueError(
            f"batch['rewards'] must have shape (B, T) with B = {rows} and T >= 1 (one column "
            f"per turn); got shape {rewards.shape}"
        )
    turns = rewards.shape[1]
    full, targets = (rows, length), (rows, length - 1)
    sizes = {
        "(B, L)": full,
        "(B, L - 1)": targets,
        "(B, T)": (rows, turns),
        "(B,)": (rows,),
    }
    clean = dict(batch.items())
    for field in FIELDS:
        if field.name in batch:
            shapes = tuple(sizes[shape] for shape in field.shapes)
            what = field.what.format(full=full, targets=targets, rows=rows)
            clean[field.name] = _READERS[field.dtype](
                batch, field.name, shapes, what
            )
    input_ids, attention, action = (
        clean["input_ids"],
        clean["attention_mask"],
        clean["action_mask"],
    )
    turn_ids, rewards, version = (
        clean["turn_ids"],
        clean["rewards"],
        clean["policy_version"],
    )
    old_logprobs = clean["old_logprobs"]
    per_token_advantages = (
        clean["advantages"].shape == targets
        if "advantages" in clean
        else None
    )

    # The rules between fields.
    negative = input_ids < 0
    if negative.any():
        index = first_index(negative)
        raise ValueError(
            f"batch['input_ids'] must be token ids (>= 0); got {int(input_ids[index])} "
            f"at {_where(index)}"
        )

    outside = (turn_ids < -1) | (turn_ids >= turns)
    if outside.any():
        index = first_index(outside)
        raise ValueError(
            f"batch['turn_ids'] must be in [-1, T) with T = {turns} turns (the columns of "
            f"rewards); got {int(turn_ids[index])} at {_where(index)}"
        )
    _check_attention(attention)
    _check_action_mask(action, attention, turn_ids)
    num_turns = _check_turn_order(turn_ids, attention)

    beyond = np.arange(turns) >= num_turns[:, None]
    per_turn = [("rewards", rewards)]
    if per_token_advantages is False:
        per_turn.append(("advantages", clean["advantages"]))
    for name, values in per_turn:
        bad = ~np.isfinite(values) | (beyond & (values != 0.0))
        if bad.any():
            row, column = first_index(bad)
            raise ValueError(
                f"batch[{name!r}] must be finite, and 0 beyond the last turn of a row (row {row} "
                f"has {int(num_turns[row])} turn(s)); got {show_value(values[row, column])} at "
                f"{_where((row, column))}"
            )

    tags = (
        version
        if version.ndim == 2
        else np.broadcast_to(version[:, None], targets)
    )
    untagged = action & (tags < 0)
    if untagged.any():
        index = first_index(untagged)
        raise ValueError(
            "batch['policy_version'] must tag every trained token with the version (>= 0) of "
            f"the policy that sampled it and produced its old_logprobs; got {int(tags[index])} "
            f"at {_where(index)}"
        )
    if learner_version is not None:
        ahead = action & (tags > learner_version)
        if ahead.any():
            index = first_index(ahead)
            raise ValueError(
                f"batch['policy_version'] must not be newer than the learner's version "
                f"{learner_version} (the sampler cannot be ahead of the learner); got "
                f"{int(tags[index])} at {_where(index)}"
            )

    _check_logprobs(old_logprobs, "old_logprobs", action)
    if "ref_logprobs" in batch:
        _check_logprobs(clean["ref_logprobs"], "ref_logprobs", action)
    if per_token_advantages:
        bad = action & ~np.isfinite(clean["advantages"])
        if bad.any():
            index = first_index(bad)
            raise ValueError(
                "batch['advantages'] must be finite where action_mask is 1; got "
                f"{show_value(clean['advantages'][index])} at {_where(index)}"
            )

    return clean
