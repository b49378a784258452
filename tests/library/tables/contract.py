"""Convention and bad-input rows for rlfound.contract (chapter 13).

The batch functions return a dict of arrays, the kind ``BATCH``: every value a float64, int64
or bool ndarray. tests/library/test_conventions.py learns that kind (``kinds.BATCH``) when the
module is registered in ``rlfound.__all__``; until then the examples of those four functions are
left out of EXAMPLES, so the shared convention tests stay green.
"""

from __future__ import annotations

import math

import numpy as np

from rlfound import contract
from tests.library.tables import kinds
from tests.library.tables.kinds import ARRAY, BOOL_ARRAY, Example, case

#: A dict of float64, int64 and bool arrays (the contract's batches).
BATCH = getattr(kinds, "BATCH", None)
NAN = math.nan

EPISODE = {
    "segments": [
        {"kind": "system", "tokens": [1, 2]},
        {"kind": "policy", "tokens": [10, 11], "logprobs": [-0.1, -0.2], "version": 4},
        {"kind": "tool", "tokens": [20]},
        {
            "kind": "policy",
            "tokens": [12],
            "logprobs": [-0.4],
            "version": 5,
            "ref_logprobs": [-0.5],
        },
    ],
    "rewards": [0.0, 1.0],
}
EPISODE["segments"][1]["ref_logprobs"] = [-0.2, -0.3]
SHORT = {
    "segments": [
        {"kind": "user", "tokens": [3]},
        {
            "kind": "policy",
            "tokens": [13],
            "logprobs": [-0.7],
            "version": 5,
            "ref_logprobs": [-0.6],
        },
    ],
    "rewards": [0.5],
}
BATCH_2 = contract.build_batch([EPISODE, SHORT], length=7)
PACKED = contract.pack(BATCH_2)
LOGITS = np.array([[0.1, -0.2, 0.3], [0.0, 0.5, -0.5], [1.0, 0.0, 0.0]])


def simple_batch():
    return contract.build_batch([SHORT], length=3)


def broken(name, index, value):
    """A copy of a valid batch with one entry replaced."""
    batch = {key: np.array(array, copy=True) for key, array in simple_batch().items()}
    batch[name] = batch[name].astype(np.float64) if isinstance(value, float) else batch[name]
    batch[name][index] = value
    return batch


BATCH_EXAMPLES = [
    Example(
        contract.build_batch,
        {"episodes": [EPISODE, SHORT], "length": 8, "padding_side": "left", "pad_id": 9},
        BATCH,
    ),
    Example(contract.validate, {"batch": BATCH_2, "learner_version": 5}, BATCH),
    Example(contract.pack, {"batch": BATCH_2}, BATCH),
    Example(
        contract.unpack,
        {"packed": PACKED, "length": 9, "padding_side": "right", "pad_id": 0},
        BATCH,
    ),
]
EXAMPLES = [
    Example(contract.target_logprobs, {"logits": LOGITS, "input_ids": np.array([0, 2, 1])}, ARRAY),
    Example(contract.block_diagonal_attention, {"cu_seqlens": np.array([0, 3, 5])}, BOOL_ARRAY),
    *(BATCH_EXAMPLES if BATCH is not None else []),
]

VALID = {
    contract.build_batch: {
        "episodes": [SHORT],
        "length": None,
        "padding_side": "right",
        "pad_id": 0,
    },
    contract.validate: {"batch": simple_batch(), "learner_version": None},
    contract.target_logprobs: {"logits": LOGITS, "input_ids": [0, 2, 1]},
    contract.pack: {"batch": simple_batch()},
    contract.unpack: {
        "packed": contract.pack(simple_batch()),
        "length": None,
        "padding_side": "right",
        "pad_id": 0,
    },
    contract.block_diagonal_attention: {"cu_seqlens": [0, 2, 3]},
}

CASES = [
    # build_batch
    case(
        contract.build_batch,
        "episodes",
        "episodes must be a non-empty list of episodes; got []",
        episodes=[],
    ),
    case(
        contract.build_batch,
        "episodes",
        "episodes[0]['segments'][1]['logprobs'] must have one entry per token, shape (1,); got "
        "shape (2,)",
        episodes=[
            {
                **SHORT,
                "segments": [
                    SHORT["segments"][0],
                    {**SHORT["segments"][1], "logprobs": [-0.7, -0.1]},
                ],
            }
        ],
    ),
    case(
        contract.build_batch,
        "episodes",
        "episodes[0]['segments'][0] must not be a policy segment",
        episodes=[{"segments": [SHORT["segments"][1]], "rewards": [0.5]}],
    ),
    case(
        contract.build_batch,
        "episodes",
        "episodes[0]['rewards'] must have one entry per policy segment (turn), shape (1,); got "
        "shape (2,)",
        episodes=[{**SHORT, "rewards": [0.5, 1.0]}],
    ),
    case(
        contract.build_batch,
        "length",
        "length must be at least 2 and at least the longest episode (episode 0 has 2 tokens); "
        "got 1",
        length=1,
    ),
    case(
        contract.build_batch,
        "length",
        "length must be a non-negative integer; got 2.5",
        length=2.5,
    ),
    case(
        contract.build_batch,
        "padding_side",
        "padding_side must be one of ('right', 'left'); got 'both'",
        padding_side="both",
    ),
    case(
        contract.build_batch, "pad_id", "pad_id must be a non-negative integer; got -1", pad_id=-1
    ),
    # validate
    case(
        contract.validate,
        "batch",
        "batch must be a mapping of field names to arrays; got list",
        batch=[1, 2],
    ),
    case(
        contract.validate,
        "batch",
        "batch['old_logprobs'] must be log-probabilities (finite, <= 0) where action_mask is 1; "
        "got 0.5 at (0, 0)",
        batch=broken("old_logprobs", (0, 0), 0.5),
    ),
    case(
        contract.validate,
        "batch",
        "batch['attention_mask'] must be a boolean (or 0/1) mask; got 0.5 at (0, 0)",
        batch=broken("attention_mask", (0, 0), 0.5),
    ),
    case(
        contract.validate,
        "batch",
        "batch['policy_version'] must tag every trained token with the version (>= 0) of the "
        "policy that sampled it and produced its old_logprobs; got -1 at (0, 0)",
        batch=broken("policy_version", (0, 0), -1),
    ),
    case(
        contract.validate,
        "learner_version",
        "learner_version must be a non-negative integer; got -1",
        learner_version=-1,
    ),
    case(
        contract.validate,
        "learner_version",
        "learner_version must be a non-negative integer; got 4.0",
        learner_version=4.0,
    ),
    # target_logprobs
    case(
        contract.target_logprobs,
        "logits",
        "logits must be finite; got nan at index (1, 2)",
        logits=[[0.1, -0.2, 0.3], [0.0, 0.5, NAN], [1.0, 0.0, 0.0]],
    ),
    case(
        contract.target_logprobs,
        "logits",
        "logits must have at least 2 positions on axis -2 (one prediction needs a next token); "
        "got shape (1, 3)",
        logits=[[0.1, -0.2, 0.3]],
        input_ids=[0],
    ),
    case(
        contract.target_logprobs,
        "input_ids",
        "input_ids must be in [0, 3); got 3 at index (1,)",
        input_ids=[0, 3, 1],
    ),
    case(
        contract.target_logprobs,
        "input_ids",
        "input_ids must have the leading shape of logits, (3,); got shape (2,)",
        input_ids=[0, 1],
    ),
    # pack
    case(
        contract.pack,
        "batch",
        "batch must have the fields ['input_ids', 'attention_mask', 'action_mask', "
        "'old_logprobs', 'turn_ids', 'rewards', 'policy_version']; got no 'rewards'",
        batch={k: v for k, v in simple_batch().items() if k != "rewards"},
    ),
    case(
        contract.pack,
        "batch",
        "batch['attention_mask'] must be one contiguous block of 1s per row (padding only "
        "before or after the sequence); got a 0 inside row 0 at position 1",
        batch={
            **contract.build_batch([SHORT], length=4),
            "attention_mask": np.array([[True, False, True, False]]),
        },
    ),
    # unpack
    case(
        contract.unpack,
        "packed",
        "packed must be a mapping of field names to arrays; got tuple",
        packed=(1, 2),
    ),
    case(
        contract.unpack,
        "packed",
        "packed['cu_seqlens'] must end at the number of tokens of the stream, 2; got 3",
        packed={**contract.pack(simple_batch()), "cu_seqlens": np.array([0, 3])},
    ),
    case(
        contract.unpack,
        "packed",
        "packed['action_mask'] must be 0 at the last token of every segment (its next token "
        "belongs to another segment); got 1 at (1,)",
        packed={**contract.pack(simple_batch()), "action_mask": np.array([True, True])},
    ),
    case(
        contract.unpack,
        "length",
        "length must be at least 2 and at least the longest segment (2 tokens); got 1",
        length=1,
    ),
    case(
        contract.unpack,
        "padding_side",
        "padding_side must be one of ('right', 'left'); got 'middle'",
        padding_side="middle",
    ),
    case(contract.unpack, "pad_id", "pad_id must be a non-negative integer; got True", pad_id=True),
    # block_diagonal_attention
    case(
        contract.block_diagonal_attention,
        "cu_seqlens",
        "cu_seqlens must be a rectangular array of numbers; got [[0, 2], [3]]",
        cu_seqlens=[[0, 2], [3]],
    ),
    case(
        contract.block_diagonal_attention,
        "cu_seqlens",
        "cu_seqlens must be a 1-D integer array of B + 1 >= 2 cumulative lengths; got dtype "
        "float64 and shape (3,)",
        cu_seqlens=[0.0, 2.0, 3.0],
    ),
    case(
        contract.block_diagonal_attention,
        "cu_seqlens",
        "cu_seqlens must be non-decreasing; got 1 at (2,)",
        cu_seqlens=[0, 2, 1],
    ),
    case(
        contract.block_diagonal_attention,
        "cu_seqlens",
        "cu_seqlens must start at 0; got 2 at (0,)",
        cu_seqlens=[2, 3],
    ),
]
