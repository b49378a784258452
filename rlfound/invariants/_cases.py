"""The cases the checks generate from ``rng``: rewards of groups, token batches, episodes,
layouts of sequences, packed streams.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from rlfound import contract

from ._kit import TOY_VOCABULARY, _Case

#: The token ids of "a" and "b" in TOY_VOCABULARY (decoded together they re-tokenize as "ab").
_A, _B = 0, 1

# --- generated cases ----------------------------------------------------------------------------


def _group_constants(rng: np.random.Generator, groups: int) -> np.ndarray:
    """One constant per group: zeros, small integers, decimals and large values."""
    kind = rng.integers(4, size=groups)
    return np.select(
        [kind == 0, kind == 1, kind == 2],
        [
            0.0,
            rng.integers(-3, 4, size=groups),
            np.round(rng.uniform(-1, 1, size=groups), 1),
        ],
        rng.normal(0.0, 100.0, size=groups),
    ).astype(np.float64)


def _group_rewards(rng: np.random.Generator) -> np.ndarray:
    """Groups with some spread: binary outcomes (both present) or real-valued scores."""
    groups, size = int(rng.integers(1, 5)), int(rng.integers(2, 9))
    if rng.random() < 0.5:
        rewards = (rng.random((groups, size)) < 0.5).astype(np.float64)
        rewards[:, 0], rewards[:, 1] = 1.0, 0.0
        return rng.permuted(rewards, axis=1)
    return rng.normal(0.0, rng.uniform(0.5, 3.0), size=(groups, size))


def _token_values(
    rng: np.random.Generator, shape: tuple[int, ...]
) -> tuple[np.ndarray, ...]:
    """log π_θ, log π_old (both <= log 0.95, ratios around 1, some beyond a 0.2 clip), A."""
    logprobs = np.log(rng.uniform(0.05, 0.95, size=shape))
    old_logprobs = np.minimum(
        logprobs + rng.normal(0.0, 0.3, size=shape), np.log(0.95)
    )
    advantages = rng.normal(size=shape)
    return logprobs, old_logprobs, advantages


def _garbage(
    rng: np.random.Generator, shape: tuple[int, ...]
) -> tuple[np.ndarray, ...]:
    """Finite values a padded position may hold: valid but meaningless log-probabilities and
    huge advantages (an implementation that reads them changes its loss)."""
    return (
        -rng.uniform(0.0, 30.0, size=shape),
        -rng.uniform(0.0, 30.0, size=shape),
        rng.normal(0.0, 1e3, size=shape),
    )


def _token_batch(
    rng: np.random.Generator, max_rows: int = 4
) -> tuple[np.ndarray, ...]:
    """(logprobs, old_logprobs, advantages, mask) of shape (B, L), at least one True."""
    rows, length = (
        int(rng.integers(1, max_rows + 1)),
        int(rng.integers(2, 13)),
    )
    mask = rng.random((rows, length)) < rng.uniform(0.3, 0.9)
    mask.flat[rng.integers(mask.size)] = True
    return (*_token_values(rng, mask.shape), mask)


def _loss_case_from_batch(
    batch: Mapping, rng: np.random.Generator
) -> tuple[np.ndarray, ...]:
    """The four arrays of loss_fn from a contract batch: its old log-probabilities, a current
    policy close to them, its token advantages (expanded from turns, or the turn rewards when
    it has none) and its action mask."""
    mask = batch["action_mask"]
    old_logprobs = np.where(mask, batch["old_logprobs"], np.log(0.5))
    logprobs = np.minimum(
        old_logprobs + rng.normal(0.0, 0.1, size=mask.shape), -1e-3
    )
    per_turn = batch.get("advantages", batch["rewards"])
    if per_turn.shape == mask.shape:
        advantages = np.where(mask, per_turn, 0.0)
    else:
        padded = np.concatenate([per_turn, np.zeros((len(mask), 1))], axis=1)
        columns = np.where(
            batch["turn_ids"] < 0, per_turn.shape[1], batch["turn_ids"]
        )
        advantages = np.take_along_axis(padded, columns, axis=1)
    return logprobs, old_logprobs, advantages, mask


def _given_batch(batch: Any) -> dict | None:
    """A user's contract batch with at least one trained token, or None."""
    if batch is None:
        return None
    try:
        clean = contract.validate(batch)
    except ValueError as error:
        raise ValueError(
            f"batch must satisfy the contract: {error}"
        ) from error
    if not clean["action_mask"].any():
        raise ValueError(
            "batch must have at least one trained token; got an all-zero action_mask"
        )
    return clean


def _decode(tokens: Sequence[int]) -> str:
    return "".join(TOY_VOCABULARY[t] for t in tokens)


def _episodes(
    rng: np.random.Generator, adversarial: bool = False
) -> list[dict]:
    """1 to 4 episodes in the format of :func:`rlfound.contract.build_batch`.

    Every kind of segment, 0 to 4 turns, several policy versions in one episode, recorded
    log-probabilities that no model computed, rewards per turn and the decoded text of every
    segment. With ``adversarial``, every episode has a turn and every policy segment
    contains the tokens "a", "b" side by side, whose text re-tokenizes as "ab".
    """
    episodes = []
    for _ in range(int(rng.integers(1, 5))):
        segments = [
            {
                "kind": "system",
                "tokens": rng.integers(2, 8, size=int(rng.integers(1, 4))),
            }
        ]
        rewards = []
        version = int(rng.integers(0, 6))
        for turn in range(int(rng.integers(1 if adversarial else 0, 5))):
            if turn > 0 or rng.random() < 0.5:
                kind = str(rng.choice(["user", "tool", "tool", "other"]))
                segments.append(
                    {
                        "kind": kind,
                        "tokens": rng.integers(
                            3, 8, size=int(rng.integers(1, 5))
                        ),
                    }
                )
            size = int(rng.integers(2 if adversarial else 1, 6))
            tokens = rng.integers(0, 8, size=size)
            if adversarial:
                start = int(rng.integers(0, size - 1))
                tokens[start : start + 2] = (_A, _B)
            version += int(
                rng.random() < 0.4
            )  # an asynchronous sampler moves on between turns
            segments.append(
                {
                    "kind": "policy",
                    "tokens": tokens,
                    "logprobs": -rng.uniform(0.01, 6.0, size=size),
                    "version": version,
                }
            )
            rewards.append(float(np.round(rng.normal(), 2)))
        if rng.random() < 0.5:
            segments.append(
                {
                    "kind": "tool",
                    "tokens": rng.integers(
                        3, 8, size=int(rng.integers(1, 4))
                    ),
                }
            )
        for segment in segments:
            segment["tokens"] = [int(t) for t in segment["tokens"]]
            segment["text"] = _decode(segment["tokens"])
            if "logprobs" in segment:
                segment["logprobs"] = [float(x) for x in segment["logprobs"]]
        episodes.append({"segments": segments, "rewards": rewards})
    return episodes


def _expected_row(episode: Mapping) -> dict[str, np.ndarray]:
    """The per-token truth of one episode: tokens, and for token q (q >= 1, the target of
    prediction q - 1) whether the trained policy made it, its turn, log-probability, version."""
    tokens, policy, turn, logprobs, version = [], [], [], [], []
    k = 0
    for segment in episode["segments"]:
        n = len(segment["tokens"])
        tokens += list(segment["tokens"])
        is_policy = segment["kind"] == "policy"
        policy += [is_policy] * n
        turn += [k if is_policy else -1] * n
        logprobs += list(segment["logprobs"]) if is_policy else [0.0] * n
        version += [segment["version"] if is_policy else -1] * n
        k += is_policy
    return {
        "tokens": np.array(tokens),
        "policy": np.array(policy[1:], dtype=bool),
        "turn": np.array(turn[1:]),
        "logprobs": np.array(logprobs[1:]),
        "version": np.array(version[1:]),
        "rewards": np.array(episode["rewards"], dtype=np.float64),
    }


def _built_batch(
    case: _Case, build_fn: Callable, episodes: list[dict]
) -> dict:
    """build_fn(episodes), checked against the contract and the number of episodes."""
    batch = case.call(build_fn, "build_fn", episodes)
    if not isinstance(batch, Mapping):
        raise case.fail(
            f"build_fn returned {type(batch).__name__}; a dict of arrays was expected"
        )
    try:
        batch = contract.validate(batch)
    except ValueError as error:
        raise case.fail(f"the batch breaks the contract: {error}") from None
    if len(batch["input_ids"]) != len(episodes):
        raise case.fail(
            f"the batch has {len(batch['input_ids'])} rows for {len(episodes)} episodes; row i "
            "must hold episode i"
        )
    return batch


def _row_block(batch: Mapping, row: int) -> tuple[int, int]:
    columns = np.flatnonzero(batch["attention_mask"][row])
    return (
        (int(columns[0]), int(columns[-1]) + 1) if columns.size else (0, 0)
    )


def _packed_streams(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Rows of packed episodes: rewards, values, next_values and boundary flags (never both),
    with at least one termination and one truncation when there is room."""
    rows, steps = int(rng.integers(1, 4)), int(rng.integers(1, 16))
    kind = rng.choice(3, size=(rows, steps), p=[0.6, 0.2, 0.2])
    if steps >= 2:
        kind[0, :2] = rng.permutation([1, 2])
    terminated, truncated = kind == 1, kind == 2
    values = rng.normal(size=(rows, steps))
    next_values = rng.normal(size=(rows, steps))
    inside = ~(terminated | truncated)[:, :-1]
    next_values[:, :-1][inside] = values[:, 1:][inside]
    return {
        "rewards": rng.normal(size=(rows, steps)),
        "values": values,
        "next_values": next_values,
        "terminated": terminated,
        "truncated": truncated,
    }


def _sequences(rng: np.random.Generator) -> list[tuple[np.ndarray, ...]]:
    """1 to 4 sequences of 1 to 8 positions: (logprobs, old, advantages, mask), at least one
    trained token in all."""
    sequences = []
    for _ in range(int(rng.integers(1, 5))):
        size = int(rng.integers(1, 9))
        mask = rng.random(size) < 0.7
        sequences.append((*_token_values(rng, (size,)), mask))
    if not any(mask.any() for *_, mask in sequences):
        sequences[0][3][0] = True
    return sequences


def _layout(
    rng: np.random.Generator,
    sequences: list,
    rows: list[list[int]],
    length: int,
    left: bool = False,
) -> tuple[np.ndarray, ...]:
    """Lay out sequences in rows (row r holds ``rows[r]`` back to back); garbage elsewhere."""
    shape = (len(rows), length)
    arrays = [*_garbage(rng, shape), np.zeros(shape, dtype=bool)]
    for r, members in enumerate(rows):
        values = [
            np.concatenate([sequences[s][k] for s in members])
            if members
            else []
            for k in range(4)
        ]
        size = len(values[3])
        start = length - size if left else 0
        for k in range(4):
            arrays[k][r, start : start + size] = values[k]
    return tuple(arrays)


def _layouts(
    rng: np.random.Generator, sequences: list, changes: tuple[str, ...]
) -> dict:
    count = len(sequences)
    longest = max(len(s[3]) for s in sequences)
    one_each = [[s] for s in range(count)]
    layouts = {"base": _layout(rng, sequences, one_each, longest)}
    if "pad" in changes:
        layouts["pad"] = _layout(
            rng, sequences, one_each, longest + int(rng.integers(1, 6))
        )
    if "empty-rows" in changes:
        rows = list(one_each)
        for _ in range(int(rng.integers(1, 3))):
            rows.insert(int(rng.integers(len(rows) + 1)), [])
        layouts["empty-rows"] = _layout(rng, sequences, rows, longest)
    if "reorder" in changes:
        layouts["reorder"] = _layout(
            rng,
            sequences,
            [one_each[s] for s in rng.permutation(count)],
            longest,
        )
    if "shift" in changes:
        layouts["shift"] = _layout(
            rng,
            sequences,
            one_each,
            longest + int(rng.integers(0, 4)),
            left=True,
        )
    if "pack" in changes:
        total = sum(len(s[3]) for s in sequences)
        layouts["pack"] = _layout(
            rng, sequences, [list(range(count))], total
        )
    return layouts
