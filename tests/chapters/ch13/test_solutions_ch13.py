"""The reference solution of chapter 13's code exercise is right, and so are the numbers of
the solutions page.

The solution is compared with a batch written token by token (tests.oracles.batch_by_loops) on
random episode structures, with hand-written layouts. Its specification (the reference passes
every check, the starter none) is checked with every exercise's in ``test_exercises.py``, and
its typical mistakes in ``test_mutants.py``. The solutions page's claims (the second row of the
chapter's batch, the boundaries of the packed stream, the batch-wide standard deviation, which
check catches which bug) are recomputed here."""

from __future__ import annotations

import numpy as np
import pytest

from rlfound import advantages, contract, groups, invariants, ppo
from tests._solutions import (
    load_solution,
)
from tests.oracles import (
    CONTRACT_CODING,
    CONTRACT_SIMULATED,
    CONTRACT_WORDS,
    batch_by_loops,
    episode_tokens,
    random_segment_episodes,
)

solution = load_solution("target_action_mask")
CODES = {kind: code for code, kind in enumerate(contract.SEGMENT_KINDS)}
WORDS = list(CONTRACT_WORDS)
CODING = CONTRACT_CODING
EPISODES = [CONTRACT_CODING, CONTRACT_SIMULATED]
tokens_of = episode_tokens


def layout(episode):
    kinds = [CODES[s["kind"]] for s in episode["segments"]]
    lengths = [len(s["tokens"]) for s in episode["segments"]]
    return kinds, lengths


# --- the functions themselves ---------------------------------------------------------------


@pytest.mark.parametrize("seed", range(25))
def test_matches_a_token_by_token_batch_on_random_episodes(seed):
    rng = np.random.default_rng(seed)
    episodes = random_segment_episodes(rng, max_turns=5)
    left = bool(seed % 2)
    extra = int(rng.integers(0, 4))
    longest = max(len(tokens_of(e)) for e in episodes)
    length = max(2, longest + extra)
    expected = batch_by_loops(episodes, length=length, left=left)
    for row, episode in enumerate(episodes):
        kinds, lengths = layout(episode)
        offset = length - sum(lengths) if left else 0
        mask = solution.target_action_mask(kinds, lengths, length, offset)
        turns = solution.target_turn_ids(kinds, lengths, length, offset)
        assert mask.shape == (length - 1,) and turns.shape == (length - 1,)
        np.testing.assert_array_equal(mask, expected["action_mask"][row])
        np.testing.assert_array_equal(turns, expected["turn_ids"][row])


def test_hand_layouts():
    # user 2, policy 2, tool 1, right-padded to 6
    assert solution.target_action_mask([1, 3, 2], [2, 2, 1], 6, 0).tolist() == [0, 1, 1, 0, 0]
    assert solution.target_turn_ids([1, 3, 2], [2, 2, 1], 6, 0).tolist() == [-1, 0, 0, -1, -1]
    # two adjacent policy segments are two turns
    assert solution.target_turn_ids([1, 3, 3], [1, 2, 1], 5, 0).tolist() == [0, 0, 1, -1]
    # an episode in the middle of the row
    assert solution.target_turn_ids([0, 3], [1, 2], 6, 2).tolist() == [-1, -1, 0, 0, -1]
    # a full row ending with a policy token
    assert solution.target_action_mask([0, 3], [1, 1], 2, 0).tolist() == [1.0]


@pytest.mark.parametrize(
    "arguments",
    [
        ([3, 1], [2, 1], 4, 0),  # policy first
        ([1, 3], [2, 2], 4, 1),  # does not fit
        ([1, 5], [2, 2], 4, 0),  # unknown kind
        ([1, 3], [2, 0], 4, 0),  # empty segment
        ([1, 3], [2], 4, 0),  # shapes differ
        ([1], [1], 1, 0),  # length < 2
        ([1, 3], [1, 1], 4, -1),  # negative offset
    ],
)
@pytest.mark.parametrize("name", ["target_action_mask", "target_turn_ids"])
def test_bad_layouts_raise_a_value_error(arguments, name):
    with pytest.raises(ValueError):
        getattr(solution, name)(*arguments)


# --- the grading specification, evaluated in-process ----------------------------------------


# --- the numbers of the solutions page ------------------------------------------------------


@pytest.fixture(scope="module")
def batch():
    return contract.build_batch(EPISODES)


def test_reading_the_second_row(batch):
    targets = [WORDS[t] for t in tokens_of(EPISODES[1])[1:]]
    assert targets == ["you", "code", "<sim>", "fix", "test", "<done>", "ok", "<sim>", "thanks"]
    assert np.flatnonzero(batch["action_mask"][1]).tolist() == [5, 6]
    assert batch["turn_ids"][1].tolist() == [-1] * 5 + [0, 0] + [-1] * 7
    # At theta = theta_old with advantage +1: loss -(1 + 1) / 2 and a push of 1/2 each.
    old = batch["old_logprobs"][1:]
    mask = batch["action_mask"][1:]
    assert ppo.clipped_policy_loss(old, old, np.ones_like(old), mask) == -1.0
    push = -ppo.clipped_policy_loss_gradient(old, old, np.ones_like(old), mask)
    np.testing.assert_array_equal(push[0], np.where(mask[0], 0.5, 0.0))
    trained = {name: value.copy() for name, value in batch.items()}
    trained["action_mask"][1, 2:5] = True
    with pytest.raises(ValueError, match=r"turn_ids = -1.*got 1 at \(1, 2\)"):
        contract.validate(trained)


def test_the_boundaries_of_the_packed_stream():
    left = contract.build_batch(EPISODES, padding_side="left")
    right = contract.build_batch(EPISODES, padding_side="right")
    stream = contract.pack(left)
    n = [len(tokens_of(e)) for e in EPISODES]
    assert sum(n) == 25 and len(n) == 2
    # N - S predictions in the stream, and the same number of internal padded slots out of 28.
    valid = left["attention_mask"]
    assert int((valid[:, :-1] & valid[:, 1:]).sum()) == 23 == sum(n) - len(n)
    assert valid.shape[0] * (valid.shape[1] - 1) == 28
    # A roll by one crosses the boundary at 14 and wraps around at 24.
    crossing = np.flatnonzero(np.roll(stream["segment_ids"], -1) != stream["segment_ids"])
    assert crossing.tolist() == [14, 24]
    assert [WORDS[t] for t in stream["input_ids"][crossing]] == ["<done>", "thanks"]
    assert [WORDS[t] for t in np.roll(stream["input_ids"], -1)[crossing]] == ["<sys>", "<sys>"]
    assert all(np.array_equal(v, contract.pack(right)[k]) for k, v in stream.items())
    np.testing.assert_array_equal((np.cumsum(valid, axis=1) - 1)[valid], stream["position_ids"])


def test_the_batch_wide_standard_deviation_example():
    rewards = np.array([[0.0, 1.0], [0.0, 1.0]])
    shifted = rewards + np.array([[0.0], [10.0]])
    assert rewards.std() == 0.5
    assert shifted.std() == pytest.approx(np.sqrt(25.25)) == pytest.approx(5.0249, abs=1e-4)
    before = groups.group_normalized_advantages(rewards, scale="batch")
    after = groups.group_normalized_advantages(shifted, scale="batch")
    np.testing.assert_allclose(before[0], [-1, 1], atol=1e-5)
    np.testing.assert_allclose(after[0], [-0.0995, 0.0995], atol=1e-4)
    np.testing.assert_allclose(after[0], [-0.5 / np.sqrt(25.25), 0.5 / np.sqrt(25.25)], rtol=1e-5)
    same = groups.group_normalized_advantages(shifted, scale="group")
    np.testing.assert_allclose(same, groups.group_normalized_advantages(rewards, scale="group"))
    common = groups.group_normalized_advantages(rewards + 10.0, scale="batch")
    np.testing.assert_allclose(common, before, atol=1e-12)


def test_which_check_catches_which_bug():
    def refreshing_step(b):
        current = b["logprobs"]  # ratios against a detached copy of the current values
        return ppo.clipped_policy_loss(current, current.copy(), b["advantages"], b["action_mask"])

    def local_means(shards):
        return float(np.mean([ppo.clipped_policy_loss(**shard) for shard in shards]))

    def by_width(logprobs, old_logprobs, advantages_, mask):
        loss = -ppo.clipped_surrogate(np.exp(logprobs - old_logprobs), advantages_)
        return float(np.where(mask, loss, 0.0).sum() / mask.shape[1])

    def divide_then_center(rewards):
        scaled = rewards / (rewards.std() + 1e-6)
        return scaled - scaled.mean(axis=-1, keepdims=True)

    def sorted_by_kind(episodes):
        order = {kind: k for k, kind in enumerate(contract.SEGMENT_KINDS)}
        return contract.build_batch(
            [
                {**e, "segments": sorted(e["segments"], key=lambda s: order[s["kind"]])}
                for e in episodes
            ]
        )

    def timeout_terminal(rewards, values, next_values, terminated, truncated):
        return advantages.packed_gae(
            rewards,
            values,
            next_values,
            terminated | truncated,
            np.zeros_like(truncated),
            gamma=0.9,
            lam=0.9,
        )

    caught = [
        (invariants.check_old_logprobs_immutable, (refreshing_step,), {}),
        (invariants.check_distributed_reduction, (ppo.clipped_policy_loss, local_means), {}),
        (invariants.check_padding_invariance, (by_width,), {}),
        (invariants.check_group_shift, (divide_then_center,), {}),
        (invariants.check_event_order, (sorted_by_kind,), {}),
        (invariants.check_no_retokenization, (sorted_by_kind,), {}),
        (invariants.check_terminal_bootstrap, (timeout_terminal, 0.9), {}),
    ]
    for check, args, kwargs in caught:
        with pytest.raises(invariants.InvariantViolation):
            check(*args, rng=0, **kwargs)
    not_caught = [
        (invariants.check_padding_invariance, (ppo.clipped_policy_loss,), {}),
        (invariants.check_masked_tokens, (by_width,), {}),
        (invariants.check_constant_reward, (divide_then_center,), {}),
        (invariants.check_group_shift, (divide_then_center,), {"per_group": False}),
        (invariants.check_terminal_bootstrap, (timeout_terminal, 0.9), {"truncation": "terminate"}),
    ]
    for check, args, kwargs in not_caught:
        check(*args, rng=0, **kwargs)
    contract.validate(sorted_by_kind(EPISODES))
    # (a): refreshing makes every ratio 1, so the clip never engages.
    batch = contract.build_batch(EPISODES)
    current = np.minimum(batch["old_logprobs"] + 0.5, 0.0)
    ones = np.ones_like(current)
    engaged = ppo.clip_fractions(
        np.exp(current - batch["old_logprobs"]), ones, batch["action_mask"]
    )
    refreshed = ppo.clip_fractions(np.exp(current - current), ones, batch["action_mask"])
    assert engaged[0] > 0.5 and refreshed == (0.0, 0.0)


def test_the_input_aligned_mask_of_the_explanation():
    mask = solution.target_action_mask([1, 3, 2], [2, 2, 1], 6, 0)
    flags = [0, 0, 1, 1, 0, 0]  # u u p p t pad
    assert [flags[j] for j in range(5)] == [0, 0, 1, 1, 0]
    assert mask.tolist() == [flags[j + 1] for j in range(5)]
    assert tokens_of(CODING)[0] == WORDS.index("<sys>")
