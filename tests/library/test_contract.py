"""rlfound.contract: building, validating, packing and unpacking the training-batch contract.

References: a batch written token by token with loops (tests.oracles.batch_by_loops), the
log-probabilities of the targets by math.log over a hand softmax
(tests.oracles.target_logprobs_by_hand), small hand-written fixtures, and, for packing,
the losses of rlfound.reduction and rlfound.ppo on both layouts. The rules of
``validate`` are each tested with a batch that breaks exactly that rule (every other rule
still holds: the batch without the change validates).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlfound import contract, ppo, reduction, tokens
from tests.oracles import batch_by_loops, random_segment_episodes, target_logprobs_by_hand

# A hand-checkable episode: system prompt (2 tokens), user message (1), a policy turn of 3
# tokens sampled by version 4, a tool observation (2), a policy turn of 2 tokens by version 5.
EPISODE = {
    "segments": [
        {"kind": "system", "tokens": [1, 2]},
        {"kind": "user", "tokens": [3]},
        {"kind": "policy", "tokens": [10, 11, 12], "logprobs": [-0.1, -0.2, -0.3], "version": 4},
        {"kind": "tool", "tokens": [20, 21]},
        {"kind": "policy", "tokens": [13, 14], "logprobs": [-0.4, -0.5], "version": 5},
    ],
    "rewards": [0.0, 1.0],
}
SHORT = {
    "segments": [
        {"kind": "user", "tokens": [3, 4]},
        {"kind": "policy", "tokens": [15], "logprobs": [-0.7], "version": 5},
    ],
    "rewards": [0.5],
}


def hand_batch():
    return contract.build_batch([EPISODE, SHORT], length=12)


@st.composite
def episode_lists(draw):
    """Random episode structures: numbers of turns, segment lengths and kinds, versions."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    return random_segment_episodes(rng, refs=draw(st.booleans()))


# --- build_batch ------------------------------------------------------------------------------


def test_build_batch_writes_every_field_of_the_hand_example():
    batch = hand_batch()
    np.testing.assert_array_equal(
        batch["input_ids"],
        [[1, 2, 3, 10, 11, 12, 20, 21, 13, 14, 0, 0], [3, 4, 15, 0, 0, 0, 0, 0, 0, 0, 0, 0]],
    )
    np.testing.assert_array_equal(batch["attention_mask"].sum(axis=1), [10, 3])
    # Target j is input_ids[:, j + 1]: the policy tokens 10, 11, 12 sit at columns 3, 4, 5 and
    # are predicted at positions 2, 3, 4; tokens 13, 14 at columns 8, 9, predicted at 7, 8.
    np.testing.assert_array_equal(
        batch["action_mask"].astype(int),
        [[0, 0, 1, 1, 1, 0, 0, 1, 1, 0, 0], [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]],
    )
    np.testing.assert_array_equal(
        batch["turn_ids"],
        [[-1, -1, 0, 0, 0, -1, -1, 1, 1, -1, -1], [-1, 0, -1, -1, -1, -1, -1, -1, -1, -1, -1]],
    )
    np.testing.assert_array_equal(
        batch["old_logprobs"][0], [0, 0, -0.1, -0.2, -0.3, 0, 0, -0.4, -0.5, 0, 0]
    )
    np.testing.assert_array_equal(
        batch["policy_version"][0], [-1, -1, 4, 4, 4, -1, -1, 5, 5, -1, -1]
    )
    np.testing.assert_array_equal(batch["rewards"], [[0.0, 1.0], [0.5, 0.0]])
    assert "ref_logprobs" not in batch and "advantages" not in batch


def test_build_batch_dtypes_and_shapes_follow_the_contract():
    batch = hand_batch()
    dtypes = {
        "input_ids": np.int64,
        "attention_mask": np.bool_,
        "action_mask": np.bool_,
        "old_logprobs": np.float64,
        "turn_ids": np.int64,
        "rewards": np.float64,
        "policy_version": np.int64,
    }
    assert {name: batch[name].dtype for name in dtypes} == dtypes
    assert batch["input_ids"].shape == (2, 12)
    assert all(batch[name].shape == (2, 11) for name in ("action_mask", "turn_ids", "old_logprobs"))
    assert batch["rewards"].shape == (2, 2)


def test_left_padding_moves_every_row_to_the_right_end():
    right = hand_batch()
    left = contract.build_batch([EPISODE, SHORT], length=12, padding_side="left")
    np.testing.assert_array_equal(left["input_ids"][1], [0] * 9 + [3, 4, 15])
    np.testing.assert_array_equal(left["action_mask"][1], np.arange(11) == 10)
    # Row 0 has 10 tokens: shifted right by 2 columns.
    np.testing.assert_array_equal(left["old_logprobs"][0, 2:], right["old_logprobs"][0, :-2])


def test_pad_id_only_fills_padding():
    batch = contract.build_batch([EPISODE, SHORT], length=12, pad_id=99)
    np.testing.assert_array_equal(batch["input_ids"][1, 3:], 99)
    np.testing.assert_array_equal(batch["input_ids"][1, :3], [3, 4, 15])


def test_the_default_length_is_the_longest_episode():
    assert contract.build_batch([EPISODE, SHORT])["input_ids"].shape == (2, 10)


def test_reference_logprobs_and_turn_advantages_are_carried():
    episode = {
        "segments": [
            {"kind": "user", "tokens": [1]},
            {
                "kind": "policy",
                "tokens": [2, 3],
                "logprobs": [-1.0, -2.0],
                "version": 0,
                "ref_logprobs": [-1.5, -2.5],
            },
        ],
        "rewards": [1.0],
        "advantages": [0.25],
    }
    batch = contract.build_batch([episode], length=4)
    np.testing.assert_array_equal(batch["ref_logprobs"], [[-1.5, -2.5, 0.0]])
    np.testing.assert_array_equal(batch["advantages"], [[0.25]])
    contract.validate(batch)


@pytest.mark.equation("eq-action-mask")
@given(episode_lists(), st.booleans())
def test_build_batch_matches_a_token_by_token_loop(episodes, left):
    side = "left" if left else "right"
    batch = contract.build_batch(episodes, padding_side=side)
    expected = batch_by_loops(episodes, left=left)
    if "ref_logprobs" not in batch:
        expected.pop("ref_logprobs")
    assert set(batch) == set(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(batch[name], value, err_msg=name)


@given(episode_lists())
def test_every_built_batch_validates(episodes):
    contract.validate(contract.build_batch(episodes), learner_version=10**6)


@pytest.mark.parametrize(
    ("episodes", "message"),
    [
        ([], "episodes must be a non-empty list"),
        ([{"segments": [], "rewards": []}], "episodes[0]['segments'] must be a non-empty list"),
        (
            [
                {
                    "segments": [
                        {"kind": "policy", "tokens": [1], "logprobs": [-1.0], "version": 0}
                    ],
                    "rewards": [0.0],
                }
            ],
            "episodes[0]['segments'][0] must not be a policy segment",
        ),
        (
            [
                {
                    "segments": [
                        {"kind": "user", "tokens": [1]},
                        {"kind": "policy", "tokens": [2, 3], "logprobs": [-1.0], "version": 0},
                    ],
                    "rewards": [0.0],
                }
            ],
            "episodes[0]['segments'][1]['logprobs'] must have one entry per token",
        ),
        (
            [
                {
                    "segments": [
                        {"kind": "user", "tokens": [1]},
                        {"kind": "policy", "tokens": [2], "logprobs": [0.5], "version": 0},
                    ],
                    "rewards": [0.0],
                }
            ],
            "episodes[0]['segments'][1]['logprobs'] must be log-probabilities (<= 0)",
        ),
        (
            [
                {
                    "segments": [
                        {"kind": "user", "tokens": [1]},
                        {"kind": "policy", "tokens": [2], "logprobs": [-0.5]},
                    ],
                    "rewards": [0.0],
                }
            ],
            "episodes[0]['segments'][1]['version'] must be the non-negative integer version",
        ),
        (
            [{"segments": [{"kind": "user", "tokens": [1], "logprobs": [-1.0]}], "rewards": []}],
            "episodes[0]['segments'][0] must not have ['logprobs']",
        ),
        (
            [{"segments": [{"kind": "observation", "tokens": [1]}], "rewards": []}],
            "episodes[0]['segments'][0]['kind'] must be one of",
        ),
        (
            [{"segments": [{"kind": "user", "tokens": []}], "rewards": []}],
            "episodes[0]['segments'][0]['tokens'] must hold at least one token",
        ),
        (
            [{"segments": [{"kind": "user", "tokens": [1, -2]}], "rewards": []}],
            "episodes[0]['segments'][0]['tokens'] must be in",
        ),
        (
            [{"segments": [{"kind": "user", "tokens": [1]}], "rewards": [1.0]}],
            "episodes[0]['rewards'] must have one entry per policy segment",
        ),
        ([{"segments": [{"kind": "user", "tokens": [1]}]}], "episodes[0]['rewards'] must be given"),
        (
            [{"segments": [{"kind": "user", "tokens": [1]}], "rewards": [], "reward": 1}],
            "episodes[0] must have only the keys",
        ),
    ],
)
def test_malformed_episodes_raise_naming_the_episode_and_segment(episodes, message):
    with pytest.raises(ValueError) as error:
        contract.build_batch(episodes)
    assert str(error.value).startswith(message)


def test_build_batch_rejects_a_length_shorter_than_an_episode():
    with pytest.raises(ValueError, match=r"^length must be at least 2 and at least the longest"):
        contract.build_batch([EPISODE], length=9)


def test_reference_logprobs_must_be_given_for_all_policy_segments_or_none():
    with_ref = {
        "segments": [
            {"kind": "user", "tokens": [1]},
            {
                "kind": "policy",
                "tokens": [2],
                "logprobs": [-1.0],
                "version": 0,
                "ref_logprobs": [-1.0],
            },
        ],
        "rewards": [0.0],
    }
    with pytest.raises(ValueError, match=r"^episodes must give ref_logprobs for every"):
        contract.build_batch([with_ref, SHORT])


# --- validate: one test per rule, each with a batch that breaks exactly that rule -------------


def shifted_to_inputs(batch):
    """The action mask written at the input positions of the policy tokens (the off-by-one)."""
    on_inputs = np.zeros(batch["attention_mask"].shape, dtype=bool)
    on_inputs[:, 1:] = batch["action_mask"]  # token j + 1 is a policy token
    batch["action_mask"] = on_inputs[:, :-1]


def set_entry(name, index, value):
    def change(batch):
        batch[name] = batch[name].copy()
        batch[name][index] = value

    return change


def replace(name, value):
    def change(batch):
        batch[name] = value(batch) if callable(value) else value

    return change


BROKEN_RULES = [
    (
        "missing-field",
        lambda batch: batch.pop("turn_ids"),
        {},
        "batch must have the fields ['input_ids', 'attention_mask', 'action_mask', "
        "'old_logprobs', 'turn_ids', 'rewards', 'policy_version']; got no 'turn_ids'",
    ),
    (
        "input-ids-shape",
        replace("input_ids", lambda batch: batch["input_ids"][:, :1]),
        {},
        "batch['input_ids'] must have shape (B, L) with L >= 2",
    ),
    (
        "target-shape",
        replace("old_logprobs", np.zeros((2, 12))),
        {},
        "batch['old_logprobs'] must have shape (2, 11) ((B, L - 1): position j predicts "
        "input_ids[:, j + 1], with (B, L) = (2, 12)); got shape (2, 12)",
    ),
    (
        "attention-shape",
        replace("attention_mask", lambda batch: batch["attention_mask"][:, :-1]),
        {},
        "batch['attention_mask'] must have shape (2, 12) (the shape of input_ids, (2, 12)); got "
        "shape (2, 11)",
    ),
    (
        "rewards-shape",
        replace("rewards", np.zeros(2)),
        {},
        "batch['rewards'] must have shape (B, T) with B = 2 and T >= 1",
    ),
    (
        "version-shape",
        replace("policy_version", np.zeros(3, dtype=int)),
        {},
        "batch['policy_version'] must have shape (2, 11) or (2,)",
    ),
    (
        "advantages-shape",
        replace("advantages", np.zeros((2, 5))),
        {},
        "batch['advantages'] must have shape (2, 11) or (2, 2)",
    ),
    (
        "mask-not-binary",
        replace("attention_mask", lambda batch: batch["attention_mask"] * 2),
        {},
        "batch['attention_mask'] must be a boolean (or 0/1) mask; got 2 at (0, 0)",
    ),
    (
        "action-mask-not-binary",
        replace("action_mask", lambda batch: batch["action_mask"] * 0.5),
        {},
        "batch['action_mask'] must be a boolean (or 0/1) mask; got 0.5 at (0, 2)",
    ),
    (
        "ids-not-integers",
        replace("turn_ids", lambda batch: np.where(np.arange(11) == 0, -0.5, batch["turn_ids"])),
        {},
        "batch['turn_ids'] must hold integers; got -0.5 at (0, 0)",
    ),
    (
        "negative-token-id",
        set_entry("input_ids", (1, 5), -3),
        {},
        "batch['input_ids'] must be token ids (>= 0); got -3 at (1, 5)",
    ),
    (
        "padding-inside",
        set_entry("attention_mask", (0, 6), False),
        {},
        "batch['attention_mask'] must be one contiguous block of 1s per row (padding only before "
        "or after the sequence); got a 0 inside row 0 at position 6",
    ),
    (
        "mask-on-input-positions",
        shifted_to_inputs,
        {},
        "batch['action_mask'] must be aligned with the targets (position j is the prediction of "
        "input_ids[:, j + 1]); got a 1 at (0, 5) and a row 0 that is aligned with the input "
        "positions",
    ),
    (
        "observation-tokens-trained",
        set_entry("action_mask", (0, slice(5, 7)), True),
        {},
        "batch['action_mask'] must be 0 on targets that no decision of the trained policy "
        "produced (turn_ids = -1: system prompt, user message, tool observation or another "
        "model's tokens); got 1 at (0, 5)",
    ),
    (
        "mask-across-padding",
        set_entry("action_mask", (1, 2), True),
        {},
        "batch['action_mask'] must be 0 where the prediction touches padding",
    ),
    (
        "turn-ids-out-of-range",
        set_entry("turn_ids", (0, 2), 2),
        {},
        "batch['turn_ids'] must be in [-1, T) with T = 2 turns (the columns of rewards); got 2 "
        "at (0, 2)",
    ),
    (
        "turns-out-of-order",
        set_entry("turn_ids", (0, slice(2, 5)), 1),
        {},
        "batch['turn_ids'] must number the decisions of each row 0, 1, 2, ... in the order they "
        "happen; got turn 1 after the start of the row at (0, 2)",
    ),
    (
        "turn-id-on-padding",
        set_entry("turn_ids", (1, 2), 0),
        {},
        "batch['turn_ids'] must be -1 where the prediction touches padding; got 0 at (1, 2)",
    ),
    (
        "reward-beyond-last-turn",
        set_entry("rewards", (1, 1), 3.0),
        {},
        "batch['rewards'] must be finite, and 0 beyond the last turn of a row (row 1 has 1 "
        "turn(s)); got 3.0 at (1, 1)",
    ),
    (
        "reward-not-finite",
        set_entry("rewards", (0, 0), np.nan),
        {},
        "batch['rewards'] must be finite",
    ),
    (
        "old-logprobs-not-tagged",
        set_entry("policy_version", (0, 3), -1),
        {},
        "batch['policy_version'] must tag every trained token with the version (>= 0) of the "
        "policy that sampled it and produced its old_logprobs; got -1 at (0, 3)",
    ),
    (
        "version-newer-than-learner",
        lambda batch: None,
        {"learner_version": 4},
        "batch['policy_version'] must not be newer than the learner's version 4 (the sampler "
        "cannot be ahead of the learner); got 5 at (0, 7)",
    ),
    (
        "positive-logprob",
        set_entry("old_logprobs", (0, 7), 0.25),
        {},
        "batch['old_logprobs'] must be log-probabilities (finite, <= 0) where action_mask is 1; "
        "got 0.25 at (0, 7)",
    ),
    (
        "infinite-logprob",
        set_entry("old_logprobs", (1, 1), -np.inf),
        {},
        "batch['old_logprobs'] must be log-probabilities (finite, <= 0) where action_mask is 1; "
        "got -inf at (1, 1)",
    ),
    (
        "positive-ref-logprob",
        set_entry("ref_logprobs", (0, 2), 1.0),
        {},
        "batch['ref_logprobs'] must be log-probabilities (finite, <= 0) where action_mask is 1; "
        "got 1.0 at (0, 2)",
    ),
    (
        "advantage-not-finite",
        set_entry("advantages", (0, 3), np.inf),
        {},
        "batch['advantages'] must be finite where action_mask is 1; got inf at (0, 3)",
    ),
]


def complete_batch():
    """The hand batch with every optional field: ref log-probabilities, token advantages."""
    batch = hand_batch()
    batch["ref_logprobs"] = np.where(batch["action_mask"], batch["old_logprobs"] - 0.1, 0.0)
    batch["advantages"] = np.where(batch["action_mask"], 1.0, 0.0)
    return batch


def test_the_complete_batch_is_valid():
    contract.validate(complete_batch(), learner_version=5)


@pytest.mark.parametrize(
    ("change", "kwargs", "message"),
    [rule[1:] for rule in BROKEN_RULES],
    ids=[rule[0] for rule in BROKEN_RULES],
)
def test_a_batch_that_breaks_one_rule_raises_naming_field_and_position(change, kwargs, message):
    batch = complete_batch()
    change(batch)
    with pytest.raises(ValueError) as error:
        contract.validate(batch, **kwargs)
    assert str(error.value).startswith(message), str(error.value)


def test_turn_level_advantages_beyond_the_last_turn_must_be_zero():
    batch = hand_batch()
    batch["advantages"] = np.array([[1.0, -1.0], [0.5, 2.0]])
    with pytest.raises(ValueError, match=r"^batch\['advantages'\] must be finite, and 0 beyond"):
        contract.validate(batch)


def test_a_per_row_version_tags_every_trained_token_of_its_row():
    batch = hand_batch()
    batch["policy_version"] = np.array([5, 5])
    contract.validate(batch, learner_version=5)
    batch["policy_version"] = np.array([5, -1])
    with pytest.raises(
        ValueError, match=r"^batch\['policy_version'\] must tag .* got -1 at \(1, 1\)"
    ):
        contract.validate(batch)


def test_validate_accepts_integer_masks_and_float32_values_and_returns_canonical_dtypes():
    batch = hand_batch()
    exported = {
        name: value.astype(np.int64)
        if value.dtype == bool
        else (value.astype(np.float32) if value.dtype == np.float64 else value.astype(np.int32))
        for name, value in batch.items()
    }
    clean = contract.validate(exported)
    for name, value in batch.items():
        assert clean[name].dtype == value.dtype, name
        np.testing.assert_allclose(clean[name], value, rtol=1e-6, err_msg=name)


def test_masked_positions_are_never_read():
    batch = hand_batch()
    batch["old_logprobs"] = np.where(batch["action_mask"], batch["old_logprobs"], np.nan)
    batch["policy_version"] = np.where(batch["action_mask"], batch["policy_version"], -7)
    contract.validate(batch)


def test_extra_fields_are_returned_unchanged():
    batch = hand_batch()
    batch["position_ids"] = np.arange(12)[None].repeat(2, axis=0)
    assert contract.validate(batch)["position_ids"] is batch["position_ids"]


def test_a_batch_survives_savez_and_load(tmp_path):
    batch = complete_batch()
    path = tmp_path / "batch.npz"
    np.savez(path, **batch)
    with np.load(path) as stored:  # an NpzFile is a mapping
        loaded = contract.validate(stored)
    for name, value in batch.items():
        np.testing.assert_array_equal(loaded[name], value, err_msg=name)


def test_a_list_is_not_a_batch():
    with pytest.raises(ValueError, match=r"^batch must be a mapping"):
        contract.validate([1, 2])


# --- target_logprobs ----------------------------------------------------------------------------


@pytest.mark.equation("eq-target-alignment")
def test_target_logprobs_match_a_loop_with_math_log():
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(2, 5, 4))
    input_ids = rng.integers(0, 4, size=(2, 5))
    np.testing.assert_allclose(
        contract.target_logprobs(logits, input_ids),
        target_logprobs_by_hand(logits, input_ids),
        rtol=1e-12,
    )


@pytest.mark.equation("eq-target-alignment")
def test_target_logprobs_score_the_next_token_not_the_current_one():
    # Position 0 puts all its mass on token 1, position 1 on token 2: the sequence 0, 1, 2 is
    # certain under the contract's alignment and nearly impossible under the input alignment.
    logits = np.full((3, 3), -50.0)
    logits[0, 1] = logits[1, 2] = 50.0
    aligned = contract.target_logprobs(logits, [0, 1, 2])
    np.testing.assert_allclose(aligned, [0.0, 0.0], atol=1e-12)
    same_position = tokens.token_logprobs(logits[:-1], np.array([0, 1]))
    assert same_position.max() < -99.0


@pytest.mark.parametrize(
    ("logits", "input_ids", "message"),
    [
        (np.zeros((1, 4)), [0], "logits must have at least 2 positions"),
        (np.zeros((3, 4)), [0, 1], "input_ids must have the leading shape of logits"),
        (np.zeros((3, 4)), [0, 1, 4], "input_ids must be in [0, 4)"),
    ],
)
def test_target_logprobs_reject_bad_input(logits, input_ids, message):
    with pytest.raises(ValueError) as error:
        contract.target_logprobs(logits, input_ids)
    assert str(error.value).startswith(message)


# --- pack and unpack ----------------------------------------------------------------------------


def test_pack_of_the_hand_example():
    packed = contract.pack(hand_batch())
    np.testing.assert_array_equal(packed["cu_seqlens"], [0, 10, 13])
    np.testing.assert_array_equal(packed["segment_ids"], [0] * 10 + [1] * 3)
    np.testing.assert_array_equal(packed["position_ids"], [*range(10), 0, 1, 2])
    np.testing.assert_array_equal(
        packed["input_ids"], [1, 2, 3, 10, 11, 12, 20, 21, 13, 14, 3, 4, 15]
    )
    # Stream position p predicts p + 1 inside a segment; 9 and 12 end their segments.
    np.testing.assert_array_equal(
        packed["action_mask"].astype(int), [0, 0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 1, 0]
    )
    np.testing.assert_array_equal(
        packed["turn_ids"], [-1, -1, 0, 0, 0, -1, -1, 1, 1, -1, -1, 0, -1]
    )
    np.testing.assert_array_equal(packed["rewards"], hand_batch()["rewards"])


def packed_by_loops(batch):
    """The packed stream of a padded batch, by loops over rows and columns."""
    stream = {"input_ids": [], "action_mask": [], "old_logprobs": [], "turn_ids": [], "cu": [0]}
    for i in range(len(batch["input_ids"])):
        columns = [c for c in range(batch["input_ids"].shape[1]) if batch["attention_mask"][i, c]]
        for q, c in enumerate(columns):
            stream["input_ids"].append(batch["input_ids"][i, c])
            last = q == len(columns) - 1
            stream["action_mask"].append(False if last else batch["action_mask"][i, c])
            stream["old_logprobs"].append(0.0 if last else batch["old_logprobs"][i, c])
            stream["turn_ids"].append(-1 if last else batch["turn_ids"][i, c])
        stream["cu"].append(stream["cu"][-1] + len(columns))
    return stream


@pytest.mark.equation("eq-cu-seqlens")
@given(episode_lists(), st.booleans())
def test_pack_matches_a_loop_over_rows_and_columns(episodes, left):
    batch = contract.build_batch(episodes, padding_side="left" if left else "right")
    packed = contract.pack(batch)
    expected = packed_by_loops(batch)
    np.testing.assert_array_equal(packed["cu_seqlens"], expected["cu"])
    for name in ("input_ids", "action_mask", "old_logprobs", "turn_ids"):
        np.testing.assert_array_equal(packed[name], expected[name], err_msg=name)


@given(episode_lists(), st.booleans(), st.integers(0, 4))
def test_padded_to_packed_to_padded_round_trips(episodes, left, extra):
    side = "left" if left else "right"
    longest = max(sum(len(s["tokens"]) for s in e["segments"]) for e in episodes)
    length = max(2, longest) + extra
    batch = contract.build_batch(episodes, length=length, padding_side=side)
    back = contract.unpack(contract.pack(batch), length=length, padding_side=side)
    assert set(back) == set(batch)
    for name, value in batch.items():
        assert back[name].dtype == value.dtype, name
        np.testing.assert_array_equal(back[name], value, err_msg=name)


@given(episode_lists())
def test_left_and_right_padding_pack_to_the_same_stream(episodes):
    left = contract.pack(contract.build_batch(episodes, padding_side="left"))
    right = contract.pack(contract.build_batch(episodes, padding_side="right"))
    for name, value in right.items():
        np.testing.assert_array_equal(left[name], value, err_msg=name)


@pytest.mark.equation("eq-packing-invariance")
@given(episode_lists(), st.integers(0, 2**32 - 1))
def test_packing_changes_no_loss(episodes, seed):
    """The token-mean PPO loss and every reduction: the padded batch and the packed stream
    (one row) give the same numbers; per-sequence reductions need the segment ids."""
    batch = contract.build_batch(episodes)
    if not batch["action_mask"].any():
        return
    packed = contract.pack(batch)
    # Values drawn once, in the packed order, and written into the padded layout by unpack.
    rng = np.random.default_rng(seed)
    old_p = packed["old_logprobs"]
    logprobs_p = np.minimum(old_p + rng.normal(0.0, 0.3, size=old_p.shape), -1e-3)
    advantages_p = rng.normal(size=old_p.shape)
    mask_p = packed["action_mask"]
    length = batch["input_ids"].shape[1]
    logprobs_b, advantages_b = (
        contract.unpack({**packed, "advantages": values}, length=length)["advantages"]
        for values in (logprobs_p, advantages_p)
    )
    old_b = batch["old_logprobs"]
    mask_b = batch["action_mask"]

    padded = ppo.clipped_policy_loss(logprobs_b, old_b, advantages_b, mask_b)
    one_row = ppo.clipped_policy_loss(
        logprobs_p[None], old_p[None], advantages_p[None], mask_p[None]
    )
    assert one_row == pytest.approx(padded, rel=1e-13, abs=1e-15)

    loss_b = -ppo.clipped_surrogate(np.exp(logprobs_b - old_b), advantages_b)
    loss_p = -ppo.clipped_surrogate(np.exp(logprobs_p - old_p), advantages_p)
    assert reduction.aggregate_loss(loss_p[None], mask_p[None]) == pytest.approx(
        reduction.aggregate_loss(loss_b, mask_b), rel=1e-13, abs=1e-15
    )
    # Per sequence: the padded rows are the sequences; in the stream the segment ids are.
    per_sequence = reduction.aggregate_loss(
        loss_b, mask_b, "seq-mean-token-mean", empty_rows="skip"
    )
    by_segment = reduction.aggregate_hierarchical(
        loss_p[None], mask_p[None], turn_ids=packed["segment_ids"][None]
    )
    assert by_segment == pytest.approx(per_sequence, rel=1e-13, abs=1e-15)


#: Two sequences packed by hand: tokens 5 6 7 (one action, version 3) and 4 8 (version 2).
HAND_PACKED = {
    "cu_seqlens": [0, 3, 5],
    "input_ids": [5, 6, 7, 4, 8],
    "action_mask": [0, 1, 0, 1, 0],
    "old_logprobs": [0, -0.5, 0, -1.0, 0],
    "turn_ids": [-1, 0, -1, 0, -1],
    "policy_version": [-1, 3, -1, 2, -1],
    "rewards": [[1.0], [0.0]],
}


def test_unpack_of_a_hand_packed_stream():
    padded = contract.unpack(HAND_PACKED, length=4, padding_side="left")
    np.testing.assert_array_equal(padded["input_ids"], [[0, 5, 6, 7], [0, 0, 4, 8]])
    np.testing.assert_array_equal(padded["old_logprobs"], [[0, 0, -0.5], [0, 0, -1.0]])
    np.testing.assert_array_equal(padded["policy_version"], [[-1, -1, 3], [-1, -1, 2]])
    contract.validate(padded)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"cu_seqlens": [1, 3, 5]}, "packed['cu_seqlens'] must start at 0"),
        ({"cu_seqlens": [0, 4, 3]}, "packed['cu_seqlens'] must be non-decreasing"),
        ({"cu_seqlens": [0, 3, 4]}, "packed['cu_seqlens'] must end at the number of tokens"),
        ({"action_mask": [0, 1, 1, 1, 0]}, "packed['action_mask'] must be 0 at the last token"),
        ({"turn_ids": [-1, 0, -1, 0]}, "packed['turn_ids'] must have one entry per token"),
        ({"segment_ids": [0, 0, 1, 1, 1]}, "packed['segment_ids'] must agree with cu_seqlens"),
        ({"position_ids": [0, 1, 2, 3, 4]}, "packed['position_ids'] must agree with cu_seqlens"),
    ],
)
def test_unpack_rejects_an_inconsistent_stream(change, message):
    packed = {**HAND_PACKED, **change}
    with pytest.raises(ValueError) as error:
        contract.unpack(packed)
    assert str(error.value).startswith(message)


# --- block_diagonal_attention -------------------------------------------------------------------


@pytest.mark.equation("eq-block-attention")
@given(episode_lists())
def test_each_block_is_the_causal_mask_of_its_padded_row(episodes):
    batch = contract.build_batch(episodes, padding_side="left")
    packed = contract.pack(batch)
    view = contract.block_diagonal_attention(packed["cu_seqlens"])
    cu = packed["cu_seqlens"]
    total = int(cu[-1])
    assert view.shape == (total, total) and view.dtype == np.bool_
    for i in range(len(cu) - 1):
        valid = batch["attention_mask"][i]
        columns = np.flatnonzero(valid)
        # In the padded row: causal attention among the valid tokens.
        padded = columns[None, :] <= columns[:, None]
        np.testing.assert_array_equal(view[cu[i] : cu[i + 1], cu[i] : cu[i + 1]], padded)
        # Nothing crosses into another segment.
        outside = np.ones(total, dtype=bool)
        outside[cu[i] : cu[i + 1]] = False
        assert not view[cu[i] : cu[i + 1]][:, outside].any()


def test_block_diagonal_attention_of_a_hand_stream():
    expected = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 1]], dtype=bool)
    np.testing.assert_array_equal(contract.block_diagonal_attention([0, 2, 2, 4]), expected)


def test_an_empty_segment_has_no_block():
    assert contract.block_diagonal_attention([0, 0, 1]).tolist() == [[True]]


def test_the_dense_view_is_refused_for_long_streams():
    with pytest.raises(ValueError, match=r"^cu_seqlens must describe at most 4096 tokens"):
        contract.block_diagonal_attention([0, 5000])
