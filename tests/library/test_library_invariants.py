"""The library's own functions, checked with the invariants kit of chapter 13.

Every invariant of rlfound.invariants is applied to the functions of the library it is
about: the group advantages (rlfound.groups), the PPO loss and its gradient (rlfound.ppo),
the reductions (rlfound.reduction), GAE and returns over packed streams
(rlfound.advantages, rlfound.returns), and the batch contract itself (rlfound.contract).
Each check runs on 30 generated cases from a fixed seed.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from rlfound import advantages, contract, groups, invariants, ppo, reduction, returns

CASES = {"rng": 13, "num_cases": 30}


def per_token_loss(logprobs, old_logprobs, advantages_):
    return -ppo.clipped_surrogate(
        np.exp(logprobs - old_logprobs), advantages_, clip_low=0.2, clip_high=0.28, dual_clip=3.0
    )


def reduced(mode, max_length=None):
    """A PPO loss reduced by rlfound.reduction.aggregate_loss with ``mode``."""

    def loss_fn(logprobs, old_logprobs, advantages_, mask):
        loss = per_token_loss(logprobs, old_logprobs, advantages_)
        return reduction.aggregate_loss(loss, mask, mode, max_length=max_length)

    return loss_fn


def sharded_token_mean(shards):
    """rlfound.reduction's fix for data-parallel workers: every shard divides by the global
    count, times the number of workers because the all-reduce averages."""
    sums, counts = [], []
    for shard in shards:
        loss = per_token_loss(shard["logprobs"], shard["old_logprobs"], shard["advantages"])
        rows = np.zeros(len(loss), dtype=int)
        shard_sum, shard_count = reduction.shard_sums(loss, shard["mask"], rows, 1)
        sums.append(shard_sum[0])
        counts.append(shard_count[0])
    return float(np.mean(reduction.shard_losses(sums, counts, combine="mean")))


ADVANTAGE_FUNCTIONS = {
    "leave-one-out": groups.leave_one_out_advantages,
    "grpo": groups.group_normalized_advantages,
    "grpo-ddof-1": functools.partial(groups.group_normalized_advantages, ddof=1),
    "grpo-eps-0": functools.partial(groups.group_normalized_advantages, eps=0.0),
    "dr-grpo": functools.partial(groups.group_normalized_advantages, scale=None),
    "grpo-batch-std": functools.partial(groups.group_normalized_advantages, scale="batch"),
    "loo-normalized": functools.partial(groups.group_normalized_advantages, include_self=False),
}


@pytest.mark.parametrize("name", ADVANTAGE_FUNCTIONS)
def test_1_group_advantages_are_zero_for_a_constant_reward(name):
    invariants.check_constant_reward(ADVANTAGE_FUNCTIONS[name], **CASES)


@pytest.mark.parametrize("name", ADVANTAGE_FUNCTIONS)
def test_2_group_advantages_ignore_a_shift(name):
    # A batch-wide standard deviation is shift-invariant only when every group shifts alike.
    per_group = name != "grpo-batch-std"
    invariants.check_group_shift(ADVANTAGE_FUNCTIONS[name], per_group=per_group, **CASES)


def test_2_a_batch_wide_standard_deviation_sees_the_other_groups():
    with pytest.raises(invariants.InvariantViolation, match=r"^invariant 2 "):
        invariants.check_group_shift(ADVANTAGE_FUNCTIONS["grpo-batch-std"], **CASES)


@pytest.mark.parametrize("dual_clip", [None, 3.0])
def test_3_the_ppo_loss_and_gradient_ignore_masked_tokens(dual_clip):
    loss = functools.partial(ppo.clipped_policy_loss, clip_high=0.28, dual_clip=dual_clip)
    gradient = functools.partial(
        ppo.clipped_policy_loss_gradient, clip_high=0.28, dual_clip=dual_clip
    )
    invariants.check_masked_tokens(loss, gradient, **CASES)


@pytest.mark.parametrize("mode", reduction.MODES)
def test_3_every_reduction_ignores_masked_tokens(mode):
    invariants.check_masked_tokens(reduced(mode, max_length=64), **CASES)


def test_3_the_hierarchical_reduction_ignores_masked_tokens():
    def hierarchical(logprobs, old_logprobs, advantages_, mask):
        loss = per_token_loss(logprobs, old_logprobs, advantages_)
        return reduction.aggregate_hierarchical(loss, mask)

    invariants.check_masked_tokens(hierarchical, **CASES)


@pytest.mark.parametrize("side", ["right", "left"])
def test_4_build_batch_carries_the_sampled_tokens_and_logprobs(side):
    invariants.check_no_retokenization(
        functools.partial(contract.build_batch, padding_side=side), **CASES
    )


def test_5_target_logprobs_give_unit_ratios():
    invariants.check_unit_ratios(contract.target_logprobs, **CASES)


@pytest.mark.parametrize(
    ("name", "loss_fn"),
    [
        ("ppo-token-mean", ppo.clipped_policy_loss),
        ("token-mean", reduced("token-mean")),
        ("constant-normalizer", reduced("seq-mean-token-sum-norm", max_length=64)),
    ],
)
def test_6_the_global_reductions_do_not_see_the_layout(name, loss_fn):
    invariants.check_padding_invariance(loss_fn, **CASES)


@pytest.mark.parametrize("mode", ["seq-mean-token-mean", "seq-mean-token-sum", "dr-grpo"])
def test_6_the_per_sequence_reductions_survive_padding_but_not_packing(mode):
    loss_fn = reduced(mode, max_length=64)
    invariants.check_padding_invariance(loss_fn, changes=("pad", "reorder", "shift"), **CASES)
    with pytest.raises(invariants.InvariantViolation, match=r"^invariant 6 "):
        invariants.check_padding_invariance(loss_fn, changes=("pack",), **CASES)


@pytest.mark.parametrize(("gamma", "lam"), [(0.9, 0.8), (1.0, 1.0), (0.99, 0.0), (0.0, 0.5)])
def test_7_packed_gae_follows_the_bootstrap_rule(gamma, lam):
    gae = functools.partial(advantages.packed_gae, gamma=gamma, lam=lam)

    def returns_fn(rewards, values, next_values, terminated, truncated):
        return gae(rewards, values, next_values, terminated, truncated)

    invariants.check_terminal_bootstrap(returns_fn, gamma, **CASES)


@pytest.mark.parametrize("gamma", [0.5, 0.97, 1.0])
def test_7_packed_returns_follow_the_bootstrap_rule(gamma):
    def returns_fn(rewards, values, next_values, terminated, truncated):
        return returns.packed_discounted_returns(rewards, next_values, terminated, truncated, gamma)

    invariants.check_terminal_bootstrap(returns_fn, gamma, **CASES)


def test_8_sharded_reduction_equals_the_concatenated_batch():
    invariants.check_distributed_reduction(reduced("token-mean"), sharded_token_mean, **CASES)


def test_9_a_ppo_step_leaves_old_logprobs_alone():
    def step(batch):
        old, logprobs = batch["old_logprobs"], batch["logprobs"]
        token_advantages = np.where(batch["action_mask"], 1.0, 0.0)
        loss = ppo.clipped_policy_loss(logprobs, old, token_advantages, batch["action_mask"])
        ppo.clipped_policy_loss_gradient(logprobs, old, token_advantages, batch["action_mask"])
        contract.pack(batch)
        return loss

    invariants.check_old_logprobs_immutable(step, **CASES)


@pytest.mark.parametrize("side", ["right", "left"])
def test_10_build_batch_reconstructs_the_events_in_order(side):
    invariants.check_event_order(
        functools.partial(contract.build_batch, padding_side=side), **CASES
    )


def test_10_packing_and_unpacking_keep_the_events_in_order():
    def round_trip(episodes):
        batch = contract.build_batch(episodes, padding_side="left")
        return contract.unpack(contract.pack(batch))

    invariants.check_event_order(round_trip, **CASES)
