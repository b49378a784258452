"""rlfound.invariants: the kit passes correct functions and catches each broken one.

For every invariant: correct implementations (the library's and independent ones written
here) pass, and deliberately broken versions, one per way the invariant is commonly broken,
raise InvariantViolation naming the invariant and what went wrong. Also: what a check
returns, that it is reproducible from its seed, that its generated cases contain what its
docstring promises, and that the optional ``batch`` of real data is used.
"""

from __future__ import annotations

import numpy as np
import pytest

from rlfound import advantages, contract, groups, invariants, ppo, reduction, returns, tokens
from rlfound.invariants import InvariantViolation

# The case generators are private; these tests look at the cases themselves.
from rlfound.invariants import _cases as cases
from tests.oracles import random_segment_episodes, target_logprobs_by_hand

# --- correct and broken functions under test -----------------------------------------------


def centered_by_hand(rewards):
    """Each group minus its own mean, with a loop."""
    out = np.empty_like(rewards)
    for g, row in enumerate(rewards):
        out[g] = [r - sum(row) / len(row) for r in row]
    return out


def no_baseline(rewards):
    return rewards


def batch_baseline(rewards):
    return rewards - rewards.mean()  # one baseline for every group of the batch


def grpo_without_eps(rewards):
    mean = rewards.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):  # silent, as a tensor library is
        return (rewards - mean) / rewards.std(axis=-1, keepdims=True)  # 0/0 for equal rewards


def fixed_baseline(rewards):
    return rewards - 0.5


def share_of_total(rewards):
    return rewards / np.abs(rewards).sum(axis=-1, keepdims=True)


def token_mean_by_hand(logprobs, old_logprobs, advantages, mask):
    """PPO's clipped loss averaged over the masked tokens, with a loop."""
    total, count = 0.0, 0
    for i, j in zip(*np.nonzero(mask), strict=True):
        ratio = np.exp(logprobs[i, j] - old_logprobs[i, j])
        a = advantages[i, j]
        total -= min(ratio * a, min(max(ratio, 0.8), 1.2) * a)
        count += 1
    return total / count


def whitened_everywhere(logprobs, old_logprobs, advantages, mask):
    """Advantages normalized over every position, the masked ones included."""
    normalized = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    return ppo.clipped_policy_loss(logprobs, old_logprobs, normalized, mask)


def unmasked_kl(logprobs, old_logprobs, advantages, mask):
    """A KL-like penalty added over every position."""
    policy = ppo.clipped_policy_loss(logprobs, old_logprobs, advantages, mask)
    return policy + 0.1 * float(np.mean(old_logprobs - logprobs))


def leaky_gradient(logprobs, old_logprobs, advantages, mask):
    gradient = ppo.clipped_policy_loss_gradient(logprobs, old_logprobs, advantages, mask)
    return gradient + 1e-3 * ~np.asarray(mask, dtype=bool)


def wrong_gradient(logprobs, old_logprobs, advantages, mask):
    return 2.0 * ppo.clipped_policy_loss_gradient(logprobs, old_logprobs, advantages, mask)


def same_position_logprobs(logits, input_ids):
    """The off-by-one: the token at j scored with the logits at j."""
    return tokens.token_logprobs(logits[:, 1:], input_ids[:, 1:])


def hotter_logprobs(logits, input_ids):
    return contract.target_logprobs(logits / 0.7, input_ids)


def per_token_loss(logprobs, old_logprobs, advantages):
    return -ppo.clipped_surrogate(np.exp(logprobs - old_logprobs), advantages)


def sequence_mean(logprobs, old_logprobs, advantages, mask):
    loss = per_token_loss(logprobs, old_logprobs, advantages)
    return reduction.aggregate_loss(loss, mask, "seq-mean-token-mean")


def divided_by_width(logprobs, old_logprobs, advantages, mask):
    loss = per_token_loss(logprobs, old_logprobs, advantages)
    return float(np.where(mask, loss, 0.0).sum() / mask.shape[1])


def constant_normalizer(logprobs, old_logprobs, advantages, mask):
    loss = per_token_loss(logprobs, old_logprobs, advantages)
    return reduction.aggregate_loss(loss, mask, "seq-mean-token-sum-norm", max_length=64)


def gae(rewards, values, next_values, terminated, truncated):
    return advantages.packed_gae(
        rewards, values, next_values, terminated, truncated, gamma=0.9, lam=0.7
    )


def timeout_as_terminal(rewards, values, next_values, terminated, truncated):
    return gae(rewards, values, next_values, terminated | truncated, np.zeros_like(truncated))


def bootstraps_at_terminal(rewards, values, next_values, terminated, truncated):
    return gae(rewards, values, next_values, np.zeros_like(terminated), terminated | truncated)


def other_gamma(rewards, values, next_values, terminated, truncated):
    return advantages.packed_gae(
        rewards, values, next_values, terminated, truncated, gamma=0.8, lam=0.7
    )


def global_count(shards):
    """Every worker divides its sum by the global count; the all-reduce averages, so each
    worker's loss is multiplied by the number of workers."""
    total = sum(int(shard["mask"].sum()) for shard in shards)
    losses = []
    for shard in shards:
        loss = per_token_loss(shard["logprobs"], shard["old_logprobs"], shard["advantages"])
        losses.append(len(shards) * np.where(shard["mask"], loss, 0.0).sum() / total)
    return float(np.mean(losses))


def local_means(shards):
    return float(np.mean([ppo.clipped_policy_loss(**shard) for shard in shards]))


def averaged_without_factor(shards):
    total = sum(int(shard["mask"].sum()) for shard in shards)
    losses = [
        np.where(
            shard["mask"],
            per_token_loss(shard["logprobs"], shard["old_logprobs"], shard["advantages"]),
            0.0,
        ).sum()
        / total
        for shard in shards
    ]
    return float(np.mean(losses))


def reading_step(batch):
    old = batch["old_logprobs"]
    return ppo.clipped_policy_loss(batch["logprobs"], old, np.ones_like(old), batch["action_mask"])


def refreshing_step(batch):
    batch["old_logprobs"] = np.minimum(batch["old_logprobs"] + 0.01, 0.0)
    return reading_step(batch)


def detached_step(batch):
    # The usual refresh bug: the field is untouched, the ratios use the current values.
    current = batch["logprobs"]
    return ppo.clipped_policy_loss(
        current, current.copy(), np.ones_like(current), batch["action_mask"]
    )


def copying_step(batch):
    batch["old_logprobs"] = batch["old_logprobs"].copy()  # the same values in another array
    batch["policy_version"] = np.array(batch["policy_version"], copy=True)
    return reading_step(batch)


def silent_step(batch):
    reading_step(batch)  # computes a loss and returns nothing


def in_place_step(batch):
    batch["old_logprobs"][...] = 0.0


def retagging_step(batch):
    batch["policy_version"] = np.where(batch["policy_version"] >= 0, 99, -1)
    return reading_step(batch)


def other_fields_step(batch):
    batch["rewards"] = np.zeros_like(batch["rewards"])  # replacing another field is allowed
    return reading_step(batch)


def greedy_encode(text):
    vocabulary = invariants.TOY_VOCABULARY
    ids = []
    while text:
        token = max((v for v in vocabulary if text.startswith(v)), key=len)
        ids.append(vocabulary.index(token))
        text = text[len(token) :]
    return ids


def retokenizing_builder(episodes):
    """Decode, re-tokenize and recompute old log-probabilities with a uniform model."""
    rebuilt = []
    for episode in episodes:
        segments = []
        for segment in episode["segments"]:
            segment = dict(segment)
            if segment["kind"] == "policy":
                segment["tokens"] = greedy_encode(segment["text"])
                segment["logprobs"] = [-np.log(len(invariants.TOY_VOCABULARY))] * len(
                    segment["tokens"]
                )
            segments.append(segment)
        rebuilt.append({**episode, "segments": segments})
    return contract.build_batch(rebuilt)


def recomputing_builder(episodes):
    """Keeps the tokens but recomputes the old log-probabilities."""
    batch = contract.build_batch(episodes)
    batch["old_logprobs"] = np.where(batch["action_mask"], -1.0, 0.0)
    return batch


def reversed_rewards_builder(episodes):
    """Attaches the rewards of each episode to its turns in reverse order."""
    batch = contract.build_batch(episodes)
    for row, episode in enumerate(episodes):
        turns = len(episode["rewards"])
        batch["rewards"][row, :turns] = batch["rewards"][row, :turns][::-1]
    return batch


def one_version_builder(episodes):
    batch = contract.build_batch(episodes)
    version = batch["policy_version"]
    batch["policy_version"] = np.where(version >= 0, version.max(axis=1, keepdims=True), -1)
    return batch


def context_first_builder(episodes):
    """Moves every context segment in front of the policy segments."""
    reordered = []
    for episode in episodes:
        segments = episode["segments"]
        context = [s for s in segments if s["kind"] != "policy"]
        policy = [s for s in segments if s["kind"] == "policy"]
        reordered.append({**episode, "segments": context + policy})
    return contract.build_batch(reordered)


def input_aligned_builder(episodes):
    """Every target-aligned field written one position to the right, consistently."""
    batch = contract.build_batch(
        episodes, length=2 + max(sum(len(s["tokens"]) for s in e["segments"]) for e in episodes)
    )
    for name in ("action_mask", "old_logprobs", "turn_ids", "policy_version"):
        batch[name] = np.roll(batch[name], 1, axis=1)
    return batch


def no_version_builder(episodes):
    batch = contract.build_batch(episodes)
    batch["policy_version"] = np.full_like(batch["policy_version"], -1)
    return batch


CORRECT = [
    (invariants.check_constant_reward, (groups.leave_one_out_advantages,), {}),
    (invariants.check_constant_reward, (groups.group_normalized_advantages,), {}),
    (
        invariants.check_constant_reward,
        (lambda r: groups.group_normalized_advantages(r, scale=None),),
        {},
    ),
    (invariants.check_constant_reward, (centered_by_hand,), {}),
    (invariants.check_group_shift, (groups.group_normalized_advantages,), {}),
    (
        invariants.check_group_shift,
        (lambda r: groups.group_normalized_advantages(r, scale="batch"),),
        {"per_group": False},
    ),
    (invariants.check_group_shift, (groups.leave_one_out_advantages,), {}),
    (invariants.check_group_shift, (centered_by_hand,), {}),
    (
        invariants.check_masked_tokens,
        (ppo.clipped_policy_loss, ppo.clipped_policy_loss_gradient),
        {},
    ),
    (invariants.check_masked_tokens, (token_mean_by_hand,), {}),
    (invariants.check_masked_tokens, (divided_by_width,), {}),  # reads no masked value
    (invariants.check_no_retokenization, (contract.build_batch,), {}),
    (
        invariants.check_no_retokenization,
        (lambda e: contract.build_batch(e, padding_side="left"),),
        {},
    ),
    (invariants.check_unit_ratios, (contract.target_logprobs,), {}),
    (invariants.check_unit_ratios, (target_logprobs_by_hand,), {}),
    (invariants.check_padding_invariance, (ppo.clipped_policy_loss,), {}),
    (invariants.check_padding_invariance, (token_mean_by_hand,), {}),
    (invariants.check_padding_invariance, (constant_normalizer,), {}),
    (
        invariants.check_padding_invariance,
        (sequence_mean,),
        {"changes": ("pad", "reorder", "shift")},
    ),
    (invariants.check_terminal_bootstrap, (gae, 0.9), {}),
    (invariants.check_terminal_bootstrap, (timeout_as_terminal, 0.9), {"truncation": "terminate"}),
    (
        invariants.check_terminal_bootstrap,
        (lambda r, v, nv, te, tr: returns.packed_discounted_returns(r, nv, te, tr, 0.95), 0.95),
        {},
    ),
    (invariants.check_distributed_reduction, (ppo.clipped_policy_loss, global_count), {}),
    (invariants.check_old_logprobs_immutable, (reading_step,), {}),
    (invariants.check_old_logprobs_immutable, (other_fields_step,), {}),
    (invariants.check_old_logprobs_immutable, (copying_step,), {}),
    (invariants.check_event_order, (contract.build_batch,), {}),
    (
        invariants.check_event_order,
        (lambda e: contract.build_batch(e, length=40, padding_side="left"),),
        {},
    ),
]

BROKEN = [
    (1, invariants.check_constant_reward, (no_baseline,), {}, "advantage_fn returned"),
    (1, invariants.check_constant_reward, (batch_baseline,), {}, "a baseline-centered advantage"),
    (1, invariants.check_constant_reward, (grpo_without_eps,), {}, "returned nan"),
    (2, invariants.check_group_shift, (fixed_baseline,), {}, "cannot see a shift"),
    (2, invariants.check_group_shift, (batch_baseline,), {}, "changed the advantage of member"),
    (2, invariants.check_group_shift, (share_of_total,), {}, "cannot see a shift"),
    (
        2,
        invariants.check_group_shift,
        (lambda r: groups.group_normalized_advantages(r, scale="batch"),),
        {},
        "changed the advantage of member",
    ),
    (
        3,
        invariants.check_masked_tokens,
        (whitened_everywhere,),
        {},
        "changing only the values at masked",
    ),
    (
        3,
        invariants.check_masked_tokens,
        (unmasked_kl,),
        {},
        "nothing stored there may reach the loss",
    ),
    (
        3,
        invariants.check_masked_tokens,
        (ppo.clipped_policy_loss, leaky_gradient),
        {},
        "at the masked position",
    ),
    (
        3,
        invariants.check_masked_tokens,
        (ppo.clipped_policy_loss, wrong_gradient),
        {},
        "central differences",
    ),
    (4, invariants.check_no_retokenization, (retokenizing_builder,), {}, "not a re-tokenization"),
    (4, invariants.check_no_retokenization, (recomputing_builder,), {}, "never recomputed"),
    (5, invariants.check_unit_ratios, (same_position_logprobs,), {}, "not 1"),
    (5, invariants.check_unit_ratios, (hotter_logprobs,), {}, "with the logits at j"),
    (6, invariants.check_padding_invariance, (sequence_mean,), {}, "changed the loss"),
    (6, invariants.check_padding_invariance, (divided_by_width,), {}, "padding every row"),
    (
        7,
        invariants.check_terminal_bootstrap,
        (timeout_as_terminal, 0.9),
        {},
        "configured bootstrap rule",
    ),
    (
        7,
        invariants.check_terminal_bootstrap,
        (bootstraps_at_terminal, 0.9),
        {},
        "must never bootstrap",
    ),
    (7, invariants.check_terminal_bootstrap, (other_gamma, 0.9), {}, "configured bootstrap rule"),
    (
        7,
        invariants.check_terminal_bootstrap,
        (gae, 0.9),
        {"truncation": "terminate"},
        "truncation='terminate'",
    ),
    (
        8,
        invariants.check_distributed_reduction,
        (ppo.clipped_policy_loss, local_means),
        {},
        "global token count",
    ),
    (
        8,
        invariants.check_distributed_reduction,
        (ppo.clipped_policy_loss, averaged_without_factor),
        {},
        "sharded loss",
    ),
    (
        9,
        invariants.check_old_logprobs_immutable,
        (refreshing_step,),
        {},
        "replaced the sampler's record",
    ),
    (9, invariants.check_old_logprobs_immutable, (in_place_step,), {}, "in place"),
    (
        9,
        invariants.check_old_logprobs_immutable,
        (detached_step,),
        {},
        "does not change when old_logprobs do",
    ),
    (9, invariants.check_old_logprobs_immutable, (silent_step,), {}, "returned None"),
    (
        9,
        invariants.check_old_logprobs_immutable,
        (retagging_step,),
        {},
        "batch['policy_version'] holds other values",
    ),
    (10, invariants.check_event_order, (reversed_rewards_builder,), {}, "rewards["),
    (10, invariants.check_event_order, (one_version_builder,), {}, "policy_version["),
    (
        10,
        invariants.check_event_order,
        (context_first_builder,),
        {},
        "the episode's tokens in order",
    ),
    (10, invariants.check_event_order, (input_aligned_builder,), {}, "invariant 10"),
    (10, invariants.check_event_order, (no_version_builder,), {}, "the batch breaks the contract"),
]


@pytest.mark.parametrize(
    ("check", "args", "kwargs"),
    CORRECT,
    ids=[f"{check.__name__}-{i}" for i, (check, _, _) in enumerate(CORRECT)],
)
def test_correct_functions_pass(check, args, kwargs):
    result = check(*args, rng=2, **kwargs)
    assert isinstance(result, invariants.InvariantCheck)
    assert result.max_error <= 1e-8


@pytest.mark.parametrize(
    ("number", "check", "args", "kwargs", "detail"),
    BROKEN,
    ids=[f"{b[1].__name__}-{b[0]}-{i}" for i, b in enumerate(BROKEN)],
)
def test_each_broken_function_is_caught_with_a_message_naming_the_invariant(
    number, check, args, kwargs, detail
):
    with pytest.raises(InvariantViolation) as error:
        check(*args, rng=2, **kwargs)
    message = str(error.value)
    assert error.value.invariant == number
    assert message.startswith(
        f"invariant {number} ({invariants.INVARIANTS[number - 1]}) fails on case "
    )
    assert detail in message, message


def test_every_invariant_has_a_check_and_a_broken_example():
    assert len(invariants.INVARIANTS) == 10
    assert {number for number, *_ in BROKEN} == set(range(1, 11))
    checks = {check for check, _, _ in CORRECT}
    assert checks == {
        getattr(invariants, name) for name in invariants.__all__ if name.startswith("check_")
    }


def test_a_violation_is_an_assertion_error():
    assert issubclass(InvariantViolation, AssertionError)


# --- what a check returns ---------------------------------------------------------------------


def test_a_check_returns_per_case_errors_and_sizes():
    result = invariants.check_group_shift(groups.leave_one_out_advantages, rng=5, num_cases=7)
    assert type(result.max_error) is float
    assert result.errors.shape == (7,) and result.errors.dtype == np.float64
    assert result.sizes.shape == (7,) and result.sizes.dtype == np.int64
    assert result.max_error == result.errors.max()
    assert (result.sizes >= 2).all()


def test_the_same_seed_gives_the_same_cases_and_another_seed_others():
    first = invariants.check_masked_tokens(ppo.clipped_policy_loss, rng=3)
    again = invariants.check_masked_tokens(ppo.clipped_policy_loss, rng=3)
    other = invariants.check_masked_tokens(ppo.clipped_policy_loss, rng=4)
    np.testing.assert_array_equal(first.sizes, again.sizes)
    assert not np.array_equal(first.sizes, other.sizes)


def test_the_failing_case_is_the_first_one_that_breaks():
    calls = []

    def breaks_on_the_third_call(rewards):
        calls.append(rewards.shape)
        return rewards if len(calls) == 3 else rewards - rewards.mean(axis=-1, keepdims=True)

    with pytest.raises(InvariantViolation, match=r"fails on case 3 of 20"):
        invariants.check_constant_reward(breaks_on_the_third_call, rng=0)


def test_an_exception_of_the_function_under_test_is_a_violation():
    def crashes(rewards):
        raise TypeError("bad signature")

    with pytest.raises(InvariantViolation, match=r"advantage_fn raised TypeError: bad signature"):
        invariants.check_group_shift(crashes, rng=0)


def test_a_wrong_shape_is_a_violation():
    with pytest.raises(InvariantViolation, match=r"logprob_fn returned shape .* expected"):
        invariants.check_unit_ratios(lambda logits, ids: np.zeros(ids.shape), rng=0)


def test_a_non_scalar_loss_is_a_violation():
    with pytest.raises(InvariantViolation, match=r"a finite real number was expected"):
        invariants.check_masked_tokens(lambda lp, old, adv, mask: lp, rng=0)


# --- the generated cases contain what the docstrings promise -----------------------------------


def test_constant_groups_include_decimals_zeros_and_large_values():
    seen = []

    def record(rewards):
        seen.extend(rewards[:, 0])
        return np.zeros_like(rewards)

    invariants.check_constant_reward(record, rng=0, num_cases=50)
    seen = np.array(seen)
    assert (seen == 0.0).any() and (np.abs(seen) > 50).any()
    assert (np.round(seen, 1) == seen).any() and (seen != np.round(seen)).any()


def test_adversarial_episodes_re_tokenize_differently():
    rng = np.random.default_rng(0)
    for _ in range(20):
        for episode in cases._episodes(rng, adversarial=True):
            policy = [s for s in episode["segments"] if s["kind"] == "policy"]
            assert policy
            for segment in policy:
                assert greedy_encode(segment["text"]) != segment["tokens"]


def test_generated_episodes_have_several_versions_and_every_kind():
    rng = np.random.default_rng(1)
    kinds, versions_per_episode = set(), []
    for _ in range(30):
        for episode in cases._episodes(rng):
            kinds |= {s["kind"] for s in episode["segments"]}
            versions_per_episode.append(
                len({s["version"] for s in episode["segments"] if s["kind"] == "policy"})
            )
    assert kinds == set(contract.SEGMENT_KINDS)
    assert max(versions_per_episode) >= 2


def test_padding_layouts_hold_the_same_tokens():
    rng = np.random.default_rng(0)
    sequences = cases._sequences(rng)
    layouts = cases._layouts(rng, sequences, tuple(invariants.PADDING_CHANGES))
    expected = sorted(np.concatenate([s[1][s[3]] for s in sequences]).tolist())
    for name, (_, old, _, mask) in layouts.items():
        assert sorted(old[mask].tolist()) == expected, name


def test_packed_streams_have_both_kinds_of_boundary():
    rng = np.random.default_rng(0)
    for _ in range(20):
        stream = cases._packed_streams(rng)
        assert not (stream["terminated"] & stream["truncated"]).any()
        if stream["rewards"].shape[1] >= 2:
            assert stream["terminated"].any() and stream["truncated"].any()


# --- a batch of real data ---------------------------------------------------------------------


@pytest.fixture
def exported_batch():
    batch = contract.build_batch(random_segment_episodes(np.random.default_rng(4), num_episodes=4))
    assert batch["action_mask"].any(axis=1).sum() >= 2
    return batch


def test_a_given_batch_is_checked_as_one_more_case(exported_batch):
    result = invariants.check_padding_invariance(
        ppo.clipped_policy_loss, batch=exported_batch, rng=0, num_cases=2
    )
    assert result.sizes.shape == (3,)
    assert result.sizes[-1] == exported_batch["action_mask"].sum()
    for check, args in (
        (invariants.check_masked_tokens, (ppo.clipped_policy_loss,)),
        (invariants.check_distributed_reduction, (ppo.clipped_policy_loss, global_count)),
        (invariants.check_old_logprobs_immutable, (reading_step,)),
    ):
        assert check(*args, batch=exported_batch, rng=0, num_cases=1).sizes.shape == (2,)


def test_a_failure_on_the_given_batch_says_so(exported_batch):
    def breaks_on_wide_arrays(logprobs, old_logprobs, advantages, mask):
        loss = ppo.clipped_policy_loss(logprobs, old_logprobs, advantages, mask)
        return loss + (float(advantages.mean()) if mask.shape[1] > 12 else 0.0)

    assert exported_batch["action_mask"].shape[1] > 12  # the generated cases are narrower
    with pytest.raises(InvariantViolation, match=r"fails on the given batch"):
        invariants.check_masked_tokens(breaks_on_wide_arrays, batch=exported_batch, rng=0)


def test_a_given_batch_is_never_modified(exported_batch):
    before = {name: value.copy() for name, value in exported_batch.items()}
    invariants.check_old_logprobs_immutable(reading_step, batch=exported_batch, rng=0, num_cases=1)
    for name, value in before.items():
        np.testing.assert_array_equal(exported_batch[name], value)
        assert exported_batch[name].flags.writeable


def test_a_batch_that_breaks_the_contract_is_refused():
    batch = contract.build_batch(random_segment_episodes(np.random.default_rng(4), num_episodes=2))
    batch["old_logprobs"] = np.where(batch["action_mask"], 0.5, 0.0)
    with pytest.raises(
        ValueError, match=r"^batch must satisfy the contract: batch\['old_logprobs'\]"
    ):
        invariants.check_masked_tokens(ppo.clipped_policy_loss, batch=batch)


def test_a_batch_without_trained_tokens_is_refused():
    batch = contract.build_batch(
        [{"segments": [{"kind": "user", "tokens": [1, 2]}], "rewards": []}]
    )
    with pytest.raises(ValueError, match=r"^batch must have at least one trained token"):
        invariants.check_padding_invariance(ppo.clipped_policy_loss, batch=batch)


def test_9_the_twin_batches_keep_every_ratio_inside_the_clip():
    # The check's argument: a correct step's output changes with old_logprobs because both
    # twins' ratios stay inside a clip range of 0.2 on the trained tokens, where the clipped
    # surrogate is rho A; only old_logprobs differ between the twins.
    seen = []

    def recording_step(batch):
        seen.append({name: np.array(value, copy=True) for name, value in batch.items()})
        return reading_step(batch)

    invariants.check_old_logprobs_immutable(recording_step, rng=3, num_cases=4, num_steps=2)
    assert len(seen) == 4 * 3  # two steps and the twin per case
    for first, twin in zip(seen[0::3], seen[2::3], strict=True):
        trained = first["action_mask"].astype(bool)
        for batch in (first, twin):
            ratio = np.exp(batch["logprobs"] - batch["old_logprobs"])[trained]
            assert np.all((ratio > 0.8) & (ratio < 1.2))
        lowered = (first["old_logprobs"] - twin["old_logprobs"])[trained]
        assert np.all((lowered >= 0.02) & (lowered <= 0.08))
        np.testing.assert_array_equal(twin["logprobs"], first["logprobs"])
        for name in first:
            if name != "old_logprobs":
                np.testing.assert_array_equal(twin[name], first[name])
        np.testing.assert_array_equal(
            twin["old_logprobs"][~trained], first["old_logprobs"][~trained]
        )
