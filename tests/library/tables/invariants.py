"""Convention and bad-input rows for rlfound.invariants (chapter 13).

Every check returns an InvariantCheck, a named tuple (max_error, errors, sizes) of a float, a
float64 array and an int64 array; every check draws its cases from ``rng``.
"""

from __future__ import annotations

import numpy as np

from rlfound import advantages, contract, groups, invariants, ppo
from tests.library.tables.kinds import ARRAY, FLOAT, INT_ARRAY, Example, case

RESULT = (FLOAT, ARRAY, INT_ARRAY)
BATCH = contract.build_batch(
    [
        {
            "segments": [
                {"kind": "system", "tokens": [1, 2]},
                {"kind": "policy", "tokens": [10, 11], "logprobs": [-0.1, -0.2], "version": 4},
                {"kind": "tool", "tokens": [20]},
                {"kind": "policy", "tokens": [12], "logprobs": [-0.4], "version": 5},
            ],
            "rewards": [0.0, 1.0],
        },
        {
            "segments": [
                {"kind": "user", "tokens": [3]},
                {"kind": "policy", "tokens": [13, 14], "logprobs": [-0.7, -0.3], "version": 5},
            ],
            "rewards": [0.5],
        },
    ]
)


def gae(rewards, values, next_values, terminated, truncated):
    return advantages.packed_gae(
        rewards, values, next_values, terminated, truncated, gamma=0.9, lam=0.8
    )


def sharded(shards):
    total = sum(shard["mask"].sum() for shard in shards)
    return sum(ppo.clipped_policy_loss(**shard) * shard["mask"].sum() / total for shard in shards)


def step(batch):
    old = batch["old_logprobs"]
    return ppo.clipped_policy_loss(batch["logprobs"], old, np.ones_like(old), batch["action_mask"])


EXAMPLES = [
    Example(
        invariants.check_constant_reward,
        {"advantage_fn": groups.leave_one_out_advantages, "rng": 0, "num_cases": 3, "atol": 1e-9},
        RESULT,
    ),
    Example(
        invariants.check_group_shift,
        {
            "advantage_fn": groups.group_normalized_advantages,
            "per_group": True,
            "rng": 0,
            "num_cases": 3,
            "rtol": 1e-9,
            "atol": 1e-9,
        },
        RESULT,
    ),
    Example(
        invariants.check_masked_tokens,
        {
            "loss_fn": ppo.clipped_policy_loss,
            "gradient_fn": ppo.clipped_policy_loss_gradient,
            "batch": BATCH,
            "rng": 0,
            "num_cases": 2,
            "rtol": 1e-5,
            "atol": 1e-7,
        },
        RESULT,
    ),
    Example(
        invariants.check_no_retokenization,
        {"build_fn": contract.build_batch, "rng": 0, "num_cases": 3},
        RESULT,
    ),
    Example(
        invariants.check_unit_ratios,
        {"logprob_fn": contract.target_logprobs, "rng": 0, "num_cases": 3, "atol": 1e-9},
        RESULT,
    ),
    Example(
        invariants.check_padding_invariance,
        {
            "loss_fn": ppo.clipped_policy_loss,
            "batch": BATCH,
            "rng": 0,
            "num_cases": 3,
            "changes": ("pad", "pack"),
            "rtol": 1e-10,
        },
        RESULT,
    ),
    Example(
        invariants.check_terminal_bootstrap,
        {
            "returns_fn": gae,
            "gamma": 0.9,
            "truncation": "bootstrap",
            "rng": 0,
            "num_cases": 3,
            "atol": 1e-9,
        },
        RESULT,
    ),
    Example(
        invariants.check_distributed_reduction,
        {
            "loss_fn": ppo.clipped_policy_loss,
            "sharded_loss_fn": sharded,
            "batch": BATCH,
            "rng": 0,
            "num_cases": 3,
            "rtol": 1e-10,
        },
        RESULT,
    ),
    Example(
        invariants.check_old_logprobs_immutable,
        {"step_fn": step, "batch": BATCH, "rng": 0, "num_cases": 3, "num_steps": 2},
        RESULT,
    ),
    Example(
        invariants.check_event_order,
        {"build_fn": contract.build_batch, "rng": 0, "num_cases": 3},
        RESULT,
    ),
]

_COMMON = {"rng": 0, "num_cases": 1}
VALID = {
    invariants.check_constant_reward: {
        "advantage_fn": groups.leave_one_out_advantages,
        "atol": 1e-9,
        **_COMMON,
    },
    invariants.check_group_shift: {
        "advantage_fn": groups.leave_one_out_advantages,
        "per_group": True,
        "rtol": 1e-9,
        "atol": 1e-9,
        **_COMMON,
    },
    invariants.check_masked_tokens: {
        "loss_fn": ppo.clipped_policy_loss,
        "gradient_fn": None,
        "batch": None,
        "rtol": 1e-5,
        "atol": 1e-7,
        **_COMMON,
    },
    invariants.check_no_retokenization: {"build_fn": contract.build_batch, **_COMMON},
    invariants.check_unit_ratios: {
        "logprob_fn": contract.target_logprobs,
        "atol": 1e-9,
        **_COMMON,
    },
    invariants.check_padding_invariance: {
        "loss_fn": ppo.clipped_policy_loss,
        "batch": None,
        "changes": ("pad",),
        "rtol": 1e-10,
        **_COMMON,
    },
    invariants.check_terminal_bootstrap: {
        "returns_fn": gae,
        "gamma": 0.9,
        "truncation": "bootstrap",
        "atol": 1e-9,
        **_COMMON,
    },
    invariants.check_distributed_reduction: {
        "loss_fn": ppo.clipped_policy_loss,
        "sharded_loss_fn": sharded,
        "batch": None,
        "rtol": 1e-10,
        **_COMMON,
    },
    invariants.check_old_logprobs_immutable: {
        "step_fn": step,
        "batch": None,
        "num_steps": 1,
        **_COMMON,
    },
    invariants.check_event_order: {"build_fn": contract.build_batch, **_COMMON},
}

NOT_A_BATCH = (
    "batch must satisfy the contract: batch must be a mapping of field names to arrays; got"
)
ONE_ROW = contract.build_batch(
    [
        {
            "segments": [
                {"kind": "user", "tokens": [3]},
                {"kind": "policy", "tokens": [4], "logprobs": [-1.0], "version": 0},
            ],
            "rewards": [1.0],
        }
    ]
)


def _rng_case(function):
    return case(
        function,
        "rng",
        "rng must be a numpy.random.Generator, a non-negative integer seed or None; got -1",
        rng=-1,
    )


def _num_cases_case(function):
    return case(function, "num_cases", "num_cases must be a positive integer; got 0", num_cases=0)


CASES = [
    *(_rng_case(function) for function in VALID),
    *(_num_cases_case(function) for function in VALID),
    # the callables
    case(
        invariants.check_constant_reward,
        "advantage_fn",
        "advantage_fn must be callable; got 'loo'",
        advantage_fn="loo",
    ),
    case(
        invariants.check_group_shift,
        "advantage_fn",
        "advantage_fn must be callable; got None",
        advantage_fn=None,
    ),
    case(
        invariants.check_masked_tokens, "loss_fn", "loss_fn must be callable; got 1.0", loss_fn=1.0
    ),
    case(
        invariants.check_masked_tokens,
        "gradient_fn",
        "gradient_fn must be callable; got 'grad'",
        gradient_fn="grad",
    ),
    case(
        invariants.check_no_retokenization,
        "build_fn",
        "build_fn must be callable; got {}",
        build_fn={},
    ),
    case(
        invariants.check_unit_ratios,
        "logprob_fn",
        "logprob_fn must be callable; got 3",
        logprob_fn=3,
    ),
    case(
        invariants.check_padding_invariance,
        "loss_fn",
        "loss_fn must be callable; got 'token-mean'",
        loss_fn="token-mean",
    ),
    case(
        invariants.check_terminal_bootstrap,
        "returns_fn",
        "returns_fn must be callable; got 0.9",
        returns_fn=0.9,
    ),
    case(
        invariants.check_distributed_reduction,
        "loss_fn",
        "loss_fn must be callable; got None",
        loss_fn=None,
    ),
    case(
        invariants.check_distributed_reduction,
        "sharded_loss_fn",
        "sharded_loss_fn must be callable; got []",
        sharded_loss_fn=[],
    ),
    case(
        invariants.check_old_logprobs_immutable,
        "step_fn",
        "step_fn must be callable; got 'step'",
        step_fn="step",
    ),
    case(invariants.check_event_order, "build_fn", "build_fn must be callable; got 7", build_fn=7),
    # batches of real data
    case(invariants.check_masked_tokens, "batch", NOT_A_BATCH, batch=[1.0]),
    case(
        invariants.check_masked_tokens,
        "batch",
        "batch must have at least one trained token; got an all-zero action_mask",
        batch={**ONE_ROW, "action_mask": np.zeros((1, 1), dtype=bool)},
    ),
    case(invariants.check_padding_invariance, "batch", NOT_A_BATCH, batch="batch.npz"),
    case(
        invariants.check_distributed_reduction,
        "batch",
        "batch must have at least two rows with trained tokens to be split over workers; got 1",
        batch=ONE_ROW,
    ),
    case(
        invariants.check_old_logprobs_immutable,
        "batch",
        "batch must satisfy the contract: batch must have the fields",
        batch={"input_ids": np.zeros((1, 2), dtype=int)},
    ),
    # tolerances and settings
    case(
        invariants.check_constant_reward,
        "atol",
        "atol must be a non-negative finite number; got -1.0",
        atol=-1.0,
    ),
    case(
        invariants.check_group_shift,
        "per_group",
        "per_group must be True or False; got 1",
        per_group=1,
    ),
    case(
        invariants.check_group_shift,
        "rtol",
        "rtol must be a non-negative finite number; got inf",
        rtol=float("inf"),
    ),
    case(
        invariants.check_group_shift,
        "atol",
        "atol must be a non-negative finite number; got -0.1",
        atol=-0.1,
    ),
    case(
        invariants.check_masked_tokens,
        "rtol",
        "rtol must be a non-negative finite number; got -1e-05",
        rtol=-1e-5,
    ),
    case(
        invariants.check_masked_tokens,
        "atol",
        "atol must be a non-negative finite number; got nan",
        atol=float("nan"),
    ),
    case(
        invariants.check_unit_ratios,
        "atol",
        "atol must be a non-negative finite number; got -1.0",
        atol=-1.0,
    ),
    case(
        invariants.check_padding_invariance,
        "changes",
        "changes must be one of ('pad', 'empty-rows', 'reorder', 'shift', 'pack'); got 'crop'",
        changes=("pad", "crop"),
    ),
    case(
        invariants.check_padding_invariance,
        "changes",
        "changes must be a non-empty sequence of ('pad', 'empty-rows', 'reorder', 'shift', "
        "'pack'); got ()",
        changes=(),
    ),
    case(
        invariants.check_padding_invariance,
        "rtol",
        "rtol must be a non-negative finite number; got -1.0",
        rtol=-1.0,
    ),
    case(
        invariants.check_terminal_bootstrap, "gamma", "gamma must be in [0, 1]; got 1.5", gamma=1.5
    ),
    case(
        invariants.check_terminal_bootstrap,
        "truncation",
        "truncation must be one of ('bootstrap', 'terminate'); got 'cut'",
        truncation="cut",
    ),
    case(
        invariants.check_terminal_bootstrap,
        "atol",
        "atol must be a non-negative finite number; got -1.0",
        atol=-1.0,
    ),
    case(
        invariants.check_distributed_reduction,
        "rtol",
        "rtol must be a non-negative finite number; got -1.0",
        rtol=-1.0,
    ),
    case(
        invariants.check_old_logprobs_immutable,
        "num_steps",
        "num_steps must be a positive integer; got 0",
        num_steps=0,
    ),
]
