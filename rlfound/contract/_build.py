"""From episodes to a padded batch (:func:`build_batch`), and the log-probabilities of the
targets from logits (:func:`target_logprobs`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    MAX_ARRAY_ENTRIES,
    as_float_array,
    check_choice,
    check_indices,
    check_logits,
    check_nonnegative_int,
    check_size,
    finite_output,
    first_index,
    show_value,
)
from rlfound.tokens import token_logprobs

from ._fields import (
    _EPISODE_KEYS,
    _PADDING_SIDES,
    _SEGMENT_KEYS,
    SEGMENT_KINDS,
    _where,
)

# --- episodes ---------------------------------------------------------------------------------


def _episode_arrays(episode: Any, where: str) -> dict[str, np.ndarray]:
    """One episode as per-token arrays: tokens, policy flag, turn, logprobs, ref, version."""
    if not isinstance(episode, Mapping):
        raise ValueError(
            f"{where} must be a dict with 'segments' and 'rewards'; got "
            f"{episode!r}"
        )
    unknown = sorted(set(episode) - set(_EPISODE_KEYS))
    if unknown:
        raise ValueError(
            f"{where} must have only the keys {_EPISODE_KEYS}; got {unknown}"
        )
    segments = episode.get("segments")
    if (
        not isinstance(segments, Sequence)
        or isinstance(segments, str)
        or not segments
    ):
        raise ValueError(
            f"{where}['segments'] must be a non-empty list of segments; got "
            f"{segments!r}"
        )

    parts: dict[str, list] = {
        key: [] for key in ("tokens", "policy", "turn", "lp", "ref", "ver")
    }
    has_ref = []
    turn = 0
    for index, segment in enumerate(segments):
        at = f"{where}['segments'][{index}]"
        if not isinstance(segment, Mapping):
            raise ValueError(
                f"{at} must be a dict with 'kind' and 'tokens'; got "
                f"{segment!r}"
            )
        unknown = sorted(set(segment) - set(_SEGMENT_KEYS))
        if unknown:
            raise ValueError(
                f"{at} must have only the keys {_SEGMENT_KEYS}; got "
                f"{unknown}"
            )
        kind = segment.get("kind")
        if kind not in SEGMENT_KINDS:
            raise ValueError(
                f"{at}['kind'] must be one of {SEGMENT_KINDS}; got {kind!r}"
            )
        tokens = check_indices(
            segment.get("tokens"),
            f"{at}['tokens']",
            2**62,
            ndim=1,
            kind="token",
        )
        if tokens.size == 0:
            raise ValueError(
                f"{at}['tokens'] must hold at least one token; got shape "
                "(0,)"
            )
        n = tokens.size
        if kind != "policy":
            extra = [
                key
                for key in ("logprobs", "ref_logprobs", "version")
                if key in segment
            ]
            if extra:
                raise ValueError(
                    f"{at} must not have {extra}: only policy segments "
                    f"carry log-probabilities and a version; got a {kind!r} "
                    "segment with them"
                )
            parts["policy"].append(np.zeros(n, dtype=bool))
            parts["turn"].append(np.full(n, -1, dtype=np.int64))
            parts["lp"].append(np.zeros(n))
            parts["ref"].append(np.zeros(n))
            parts["ver"].append(np.full(n, -1, dtype=np.int64))
        else:
            if index == 0:
                raise ValueError(
                    f"{at} must not be a policy segment: the first token of "
                    "a sequence has no prediction, so a prompt must come "
                    "first; got kind 'policy' at the start"
                )
            logprobs = _segment_logprobs(
                segment.get("logprobs"), f"{at}['logprobs']", n
            )
            version = segment.get("version")
            if version is None:
                raise ValueError(
                    f"{at}['version'] must be the non-negative integer "
                    "version of the policy that sampled the segment; got "
                    "None"
                )
            version = check_nonnegative_int(version, f"{at}['version']")
            if "ref_logprobs" in segment:
                ref = _segment_logprobs(
                    segment["ref_logprobs"], f"{at}['ref_logprobs']", n
                )
                has_ref.append(True)
            else:
                ref = np.zeros(n)
                has_ref.append(False)
            parts["policy"].append(np.ones(n, dtype=bool))
            parts["turn"].append(np.full(n, turn, dtype=np.int64))
            parts["lp"].append(logprobs)
            parts["ref"].append(ref)
            parts["ver"].append(np.full(n, version, dtype=np.int64))
            turn += 1
        parts["tokens"].append(tokens)

    arrays = {key: np.concatenate(value) for key, value in parts.items()}
    arrays["num_turns"] = turn
    arrays["has_ref"] = has_ref
    for key in ("rewards", "advantages"):
        if key not in episode:
            if key == "rewards":
                raise ValueError(
                    f"{where}['rewards'] must be given, one per policy "
                    "segment; got none"
                )
            arrays[key] = None
            continue
        values = as_float_array(episode[key], f"{where}[{key!r}]", ndim=1)
        if values.size != turn:
            raise ValueError(
                f"{where}[{key!r}] must have one entry per policy segment "
                f"(turn), shape ({turn},); got shape {values.shape}"
            )
        arrays[key] = values
    return arrays


def _segment_logprobs(values: Any, name: str, size: int) -> np.ndarray:
    """Finite log-probabilities (<= 0), one per token of the segment."""
    if values is None:
        raise ValueError(
            f"{name} must hold the log-probability of every token; got None"
        )
    values = as_float_array(values, name, ndim=1)
    if values.size != size:
        raise ValueError(
            f"{name} must have one entry per token, shape ({size},); got "
            f"shape {values.shape}"
        )
    positive = values > 0.0
    if positive.any():
        index = first_index(positive)
        raise ValueError(
            f"{name} must be log-probabilities (<= 0); got "
            f"{show_value(values[index])} at index {_where(index)}"
        )
    return values


@finite_output()
def build_batch(
    episodes: Sequence[Mapping[str, Any]],
    length: int | None = None,
    padding_side: str = "right",
    pad_id: int = 0,
) -> dict[str, np.ndarray]:
    """Lay out episodes made of segments as a padded, target-aligned training batch.

    An episode is ``{"segments": [...], "rewards": [...]}`` with an optional
    ``"advantages"`` (one per turn). A segment is a dict with ``"kind"`` (one of
    :data:`SEGMENT_KINDS`) and ``"tokens"`` (token ids); a ``"policy"`` segment, one turn
    (environment decision) of the policy being trained, also has ``"logprobs"`` (what the
    sampler recorded for each of its tokens), ``"version"`` (the policy version that sampled
    it) and optionally ``"ref_logprobs"``; any segment may carry its decoded ``"text"``,
    which is ignored. Row i of the batch is episode i, and with n_i its number of tokens,
    x its tokens and c the column of its first token,

        input_ids[i, c + q] = x_q,   attention_mask[i, c + q] = 1      (q = 0, ..., n_i - 1)
        action_mask[i, c + q - 1] = 1  iff token q is a policy token   (q = 1, ..., n_i - 1)

    and ``old_logprobs``, ``ref_logprobs``, ``turn_ids`` and ``policy_version`` are written
    at the same target position c + q - 1 as the action mask: the logits at position j
    predict the token at j + 1. ``rewards[i, k]`` is the reward of turn k.

    Book: equations (eq-target-alignment) and (eq-action-mask), chapter 13.

    Parameters
    ----------
    episodes : sequence of dict
        The episodes, one per row. The first segment of an episode must not be a policy
        segment (its first token could not be predicted); ``rewards`` (and
        ``advantages``) have one entry per policy segment. If any policy segment has
        ``ref_logprobs``, all must.
    length : int or None, optional
        L >= 2, the number of positions of a row; at least the longest episode. Default:
        the longest episode (at least 2).
    padding_side : {"right", "left"}, optional
        Where the padding goes. Default "right".
    pad_id : int, optional
        The token id written at padding positions (>= 0). Default 0. Padding is recognized
        by ``attention_mask``, never by this id.

    Returns
    -------
    dict of str to numpy.ndarray
        The batch, with the fields and padding values documented in :mod:`rlfound.contract`:
        ``policy_version`` per token, ``ref_logprobs`` if given, turn-level ``advantages``
        if any episode has them (then all must).

    Raises
    ------
    ValueError
        If ``episodes`` is empty or an episode or segment is malformed (the message names
        it, e.g. ``episodes[1]['segments'][2]['logprobs']``), ``length`` is shorter than
        an episode or than 2, ``padding_side`` is unknown or ``pad_id`` is negative.

    Notes
    -----
    Trainers store the same information in other alignments. AReaL's multi-turn rollout
    (inclusionAI/AReaL at commit 072480e, ``MultiTurnWorkflow._run_one_episode`` in
    ``areal/workflow/multi_turn.py``) keeps, per token and aligned with the tokens (the
    input positions), a ``loss_mask`` (0 on prompt and observation tokens), the sampler's
    ``logprobs`` (0.0 there) and the ``versions`` of the policy that generated each token
    (-1 there): the per-token version of this contract. Moving such arrays to this contract
    drops their first entry (``array[:, 1:]``), since position j here is token j + 1 there.

    Examples
    --------
    A prompt of two tokens, a policy turn of two tokens and a tool observation:

    >>> episode = {
    ...     "segments": [
    ...         {"kind": "user", "tokens": [5, 6]},
    ...         {"kind": "policy", "tokens": [7, 8], "logprobs": [-0.5, -0.25], "version": 3},
    ...         {"kind": "tool", "tokens": [9]},
    ...     ],
    ...     "rewards": [1.0],
    ... }
    >>> batch = build_batch([episode], length=6)
    >>> batch["input_ids"]
    array([[5, 6, 7, 8, 9, 0]])
    >>> batch["action_mask"].astype(int)  # targets 7 and 8 sit at positions 1 and 2
    array([[0, 1, 1, 0, 0]])
    >>> batch["old_logprobs"]
    array([[ 0.  , -0.5 , -0.25,  0.  ,  0.  ]])
    """
    if (
        isinstance(episodes, (str, Mapping))
        or not isinstance(episodes, Sequence)
        or not episodes
    ):
        raise ValueError(
            "episodes must be a non-empty list of episodes; got "
            f"{episodes!r}"
        )
    padding_side = check_choice(padding_side, "padding_side", _PADDING_SIDES)
    pad_id = check_nonnegative_int(pad_id, "pad_id")
    parsed = [
        _episode_arrays(episode, f"episodes[{i}]")
        for i, episode in enumerate(episodes)
    ]
    sizes = [arrays["tokens"].size for arrays in parsed]
    if length is None:
        length = max(2, *sizes)
    else:
        length = check_nonnegative_int(length, "length")
        if length < max(2, *sizes):
            row = int(np.argmax(sizes))
            raise ValueError(
                "length must be at least 2 and at least the longest "
                f"episode (episode {row} has {sizes[row]} tokens); got "
                f"{length}"
            )
    with_ref = [flag for arrays in parsed for flag in arrays["has_ref"]]
    if any(with_ref) and not all(with_ref):
        raise ValueError(
            "episodes must give ref_logprobs for every policy segment or "
            f"for none; got them for {sum(with_ref)} of {len(with_ref)}"
        )
    with_advantages = [arrays["advantages"] is not None for arrays in parsed]
    if any(with_advantages) and not all(with_advantages):
        missing = with_advantages.index(False)
        raise ValueError(
            f"episodes[{missing}]['advantages'] must be given when another "
            "episode has them; got none"
        )

    rows, turns = (
        len(parsed),
        max(1, *(arrays["num_turns"] for arrays in parsed)),
    )
    check_size(
        rows * length,
        "length",
        MAX_ARRAY_ENTRIES,
        "array entries (rows * length)",
    )
    batch = {
        "input_ids": np.full((rows, length), pad_id, dtype=np.int64),
        "attention_mask": np.zeros((rows, length), dtype=bool),
        "action_mask": np.zeros((rows, length - 1), dtype=bool),
        "old_logprobs": np.zeros((rows, length - 1)),
        "turn_ids": np.full((rows, length - 1), -1, dtype=np.int64),
        "rewards": np.zeros((rows, turns)),
        "policy_version": np.full((rows, length - 1), -1, dtype=np.int64),
    }
    if any(with_ref):
        batch["ref_logprobs"] = np.zeros((rows, length - 1))
    if any(with_advantages):
        batch["advantages"] = np.zeros((rows, turns))
    for i, arrays in enumerate(parsed):
        n = arrays["tokens"].size
        start = 0 if padding_side == "right" else length - n
        batch["input_ids"][i, start : start + n] = arrays["tokens"]
        batch["attention_mask"][i, start : start + n] = True
        # Token q (q >= 1) is the target of the prediction made at position start + q - 1.
        targets = slice(start, start + n - 1)
        batch["action_mask"][i, targets] = arrays["policy"][1:]
        batch["old_logprobs"][i, targets] = arrays["lp"][1:]
        batch["turn_ids"][i, targets] = arrays["turn"][1:]
        batch["policy_version"][i, targets] = arrays["ver"][1:]
        if "ref_logprobs" in batch:
            batch["ref_logprobs"][i, targets] = arrays["ref"][1:]
        k = arrays["num_turns"]
        batch["rewards"][i, :k] = arrays["rewards"]
        if "advantages" in batch:
            batch["advantages"][i, :k] = arrays["advantages"]
    return batch


# --- log-probabilities of the targets -----------------------------------------------------------


@finite_output()
def target_logprobs(logits: ArrayLike, input_ids: ArrayLike) -> np.ndarray:
    """Log-probability of every target token under causal logits: the contract's alignment.

        out[..., j] = log softmax(logits[..., j, :])[input_ids[..., j + 1]],
        j = 0, ..., L - 2,

    so ``logits[..., :-1, :]`` scores ``input_ids[..., 1:]``: the logits computed at position
    j are the model's distribution of the next token. Sampler, trainer and reference model
    must all use this alignment; then at θ = θ_old every ratio exp(log π_θ - log π_old) of a
    valid target is exactly 1.

    Book: equation (eq-target-alignment), chapter 13.

    Parameters
    ----------
    logits : array_like, shape (..., L, V)
        The model's logits at every position, L >= 2.
    input_ids : array_like of int, shape (..., L)
        The tokens, ids in [0, V).

    Returns
    -------
    numpy.ndarray, shape (..., L - 1)
        log π(x_{j+1} | x_{<=j}), float64.

    Raises
    ------
    ValueError
        If ``logits`` are not finite or have fewer than 2 positions, or ``input_ids`` does not
        have the leading shape of ``logits`` or holds an id outside [0, V).

    Notes
    -----
    The trainers read in their source use this alignment and keep the response columns
    only: verl (volcengine/verl at commit 0081137,
    ``DataParallelPPOActor._forward_micro_batch`` in ``verl/workers/actor/dp_actor.py``)
    scores ``responses`` with ``logits[:, -response_length - 1 : -1]``; TRL (huggingface/trl
    at commit 000bb3d, ``GRPOTrainer._get_per_token_logps``) drops the last logit,
    ``logits[:, :-1]``, and scores ``input_ids[:, -logits_to_keep:]``; OpenRLHF
    (OpenRLHF/OpenRLHF at commit 200ee35, ``Actor.forward`` in ``openrlhf/models/actor.py``)
    scores ``torch.roll(sequences, shifts=-1, dims=1)`` and drops the last column. Their
    masks (``response_mask``, ``completion_mask``, ``action_mask``) are therefore aligned with
    the targets, as ``action_mask`` is here.

    Examples
    --------
    Uniform logits over 4 tokens: every target has probability 1/4.

    >>> target_logprobs(np.zeros((3, 4)), [2, 0, 3])
    array([-1.38629436, -1.38629436])
    """
    logits = check_logits(logits, min_ndim=2)
    if logits.shape[-2] < 2:
        raise ValueError(
            "logits must have at least 2 positions on axis -2 (one "
            f"prediction needs a next token); got shape {logits.shape}"
        )
    input_ids = check_indices(
        input_ids, "input_ids", logits.shape[-1], kind="token"
    )
    if input_ids.shape != logits.shape[:-1]:
        raise ValueError(
            "input_ids must have the leading shape of logits, "
            f"{logits.shape[:-1]}; got shape {input_ids.shape}"
        )
    # Position j predicts token j + 1: drop the last prediction and the first
    # token.
    return token_logprobs(logits[..., :-1, :], input_ids[..., 1:])
