"""Chapter 13: the training-batch contract."""

from __future__ import annotations

import math

import numpy as np

from tests.oracles.chapter10 import softmax_row_by_hand

# ---------------------------------------------------------------------------------------------
# --- Chapter 13: the training-batch contract
# ---------------------------------------------------------------------------------------------

CONTRACT_KINDS = ("system", "user", "tool", "policy", "other")


def random_segment_episodes(rng, num_episodes=None, max_turns=4, max_segment=5, refs=False):
    """Random episodes in the contract's format: a context segment first, then 0..max_turns
    turns, each an optional context segment (user, tool or another model) and a policy
    segment with random recorded log-probabilities and a version that may grow between turns;
    rewards per turn; ``ref_logprobs`` on every policy segment when ``refs``."""
    episodes = []
    count = int(rng.integers(1, 5)) if num_episodes is None else num_episodes
    for _ in range(count):
        prompt = rng.integers(1, 30, size=rng.integers(1, 4)).tolist()
        segments = [{"kind": "system", "tokens": prompt}]
        rewards, version = [], int(rng.integers(0, 9))
        for _turn in range(int(rng.integers(0, max_turns + 1))):
            if rng.random() < 0.7:
                kind = str(rng.choice(["user", "tool", "other"]))
                size = int(rng.integers(1, max_segment + 1))
                segments.append({"kind": kind, "tokens": rng.integers(1, 30, size=size).tolist()})
            size = int(rng.integers(1, max_segment + 1))
            version += int(rng.random() < 0.3)
            segment = {
                "kind": "policy",
                "tokens": rng.integers(1, 30, size=size).tolist(),
                "logprobs": (-rng.uniform(0.01, 4.0, size=size)).tolist(),
                "version": version,
            }
            if refs:
                segment["ref_logprobs"] = (-rng.uniform(0.01, 4.0, size=size)).tolist()
            segments.append(segment)
            rewards.append(float(rng.normal()))
        if rng.random() < 0.4:
            segments.append({"kind": "tool", "tokens": rng.integers(1, 30, size=2).tolist()})
        episodes.append({"segments": segments, "rewards": rewards})
    return episodes


def batch_by_loops(episodes, length=None, left=False, pad_id=0):
    """The padded, target-aligned batch of ``episodes`` written token by token with loops.

    Token q of a row sits at column c + q; the prediction of token q (q >= 1) is made at
    column c + q - 1, where the action mask, turn id, old and reference log-probabilities and
    version of token q are written."""
    flat = []
    for episode in episodes:
        tokens, rows = [], []
        turn = 0
        for segment in episode["segments"]:
            policy = segment["kind"] == "policy"
            for q, token in enumerate(segment["tokens"]):
                tokens.append(token)
                rows.append(
                    (
                        policy,
                        turn if policy else -1,
                        segment["logprobs"][q] if policy else 0.0,
                        segment.get("ref_logprobs", [0.0] * (q + 1))[q] if policy else 0.0,
                        segment["version"] if policy else -1,
                    )
                )
            turn += policy
        flat.append((tokens, rows, turn))
    if length is None:
        length = max(2, *(len(tokens) for tokens, _, _ in flat))
    turns = max(1, *(k for _, _, k in flat))
    batch = {
        "input_ids": [[pad_id] * length for _ in flat],
        "attention_mask": [[False] * length for _ in flat],
        "action_mask": [[False] * (length - 1) for _ in flat],
        "old_logprobs": [[0.0] * (length - 1) for _ in flat],
        "ref_logprobs": [[0.0] * (length - 1) for _ in flat],
        "turn_ids": [[-1] * (length - 1) for _ in flat],
        "rewards": [[0.0] * turns for _ in flat],
        "policy_version": [[-1] * (length - 1) for _ in flat],
    }
    for i, (tokens, rows, _) in enumerate(flat):
        start = length - len(tokens) if left else 0
        for q, token in enumerate(tokens):
            batch["input_ids"][i][start + q] = token
            batch["attention_mask"][i][start + q] = True
            if q == 0:
                continue
            policy, turn, logprob, ref, version = rows[q]
            j = start + q - 1
            batch["action_mask"][i][j] = policy
            batch["turn_ids"][i][j] = turn
            batch["old_logprobs"][i][j] = logprob
            batch["ref_logprobs"][i][j] = ref
            batch["policy_version"][i][j] = version
        for k, reward in enumerate(episodes[i]["rewards"]):
            batch["rewards"][i][k] = reward
    return {key: np.array(value) for key, value in batch.items()}


def target_logprobs_by_hand(logits, input_ids):
    """log softmax(logits[i, j])[input_ids[i, j + 1]] for a (B, L, V) array, with math.log."""
    logits = np.asarray(logits, dtype=float)
    out = np.zeros((logits.shape[0], logits.shape[1] - 1))
    for i in range(logits.shape[0]):
        for j in range(logits.shape[1] - 1):
            probs = softmax_row_by_hand(list(logits[i, j]))
            out[i, j] = math.log(probs[int(input_ids[i][j + 1])])
    return out
