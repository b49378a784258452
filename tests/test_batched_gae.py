"""GAE and returns across episode boundaries (chapter 4, eq-gae-timeouts).

A batch holds several episodes back to back along time. The reference splits it at the
boundaries and treats each episode on its own, with an explicit double loop: the segment's
values plus one bootstrap value, 0 after a true termination and next_values after a
truncation or the collector's cut at the end of the array.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound.advantages import batched_gae, gae_recursive
from rlfound.returns import batched_discounted_returns, discounted_returns

finite = st.floats(min_value=-10.0, max_value=10.0, allow_nan=False, allow_infinity=False)
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)

NONE, TERMINATED, TRUNCATED = 0, 1, 2


@st.composite
def episode_batches(draw):
    """Rewards, values, next_values and flags for a batch (..., T) with random boundaries.

    next_values[..., t] equals values[..., t + 1] wherever the episode continues, as a
    collector would record it; elsewhere it is arbitrary.
    """
    batch_shape = draw(st.sampled_from([(), (1,), (3,), (2, 2)]))
    horizon = draw(st.integers(1, 8))
    shape = (*batch_shape, horizon)
    rewards = draw(hnp.arrays(np.float64, shape, elements=finite))
    values = draw(hnp.arrays(np.float64, shape, elements=finite))
    next_values = draw(hnp.arrays(np.float64, shape, elements=finite))
    kind = draw(hnp.arrays(np.int64, shape, elements=st.integers(0, 2)))
    terminated, truncated = kind == TERMINATED, kind == TRUNCATED
    done = terminated | truncated
    next_values[..., :-1] = np.where(done[..., :-1], next_values[..., :-1], values[..., 1:])
    return rewards, values, next_values, terminated, truncated


def segments(done_row):
    """(start, stop) of each episode in one stream; the array end closes the last one."""
    start = 0
    for t, done in enumerate(done_row):
        if done:
            yield start, t + 1
            start = t + 1
    if start < len(done_row):
        yield start, len(done_row)


def reference_gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    """Per episode: A_t = sum_l (gamma lam)^l delta_{t+l} with the segment's bootstrap."""
    out = np.zeros_like(rewards)
    for index in np.ndindex(*rewards.shape[:-1]):
        r, v, nv = rewards[index], values[index], next_values[index]
        term, trunc = terminated[index], truncated[index]
        for start, stop in segments(term | trunc):
            last = stop - 1
            bootstrap = 0.0 if term[last] else nv[last]
            seg_values = [*v[start:stop], bootstrap]
            length = stop - start
            for t in range(length):
                total = 0.0
                for step in range(length - t):
                    k = t + step
                    delta = r[start + k] + gamma * seg_values[k + 1] - seg_values[k]
                    total += (gamma * lam) ** step * delta
                out[index][start + t] = total
    return out


def reference_returns(rewards, terminated, truncated, gamma, next_values=None):
    """Per episode: G_t = sum_l gamma^l r_{t+l} + gamma^(stop - t) * bootstrap."""
    out = np.zeros_like(rewards)
    for index in np.ndindex(*rewards.shape[:-1]):
        r, term, trunc = rewards[index], terminated[index], truncated[index]
        for start, stop in segments(term | trunc):
            last = stop - 1
            bootstrap = 0.0
            if next_values is not None and not term[last]:
                bootstrap = next_values[index][last]
            for t in range(start, stop):
                total = sum(gamma ** (k - t) * r[k] for k in range(t, stop))
                out[index][t] = total + gamma ** (stop - t) * bootstrap
    return out


# --- against the per-episode reference ---------------------------------------------------------


@given(batch=episode_batches(), gamma=unit, lam=unit)
def test_batched_gae_equals_per_episode_reference(batch, gamma, lam):
    rewards, values, next_values, terminated, truncated = batch
    result = batched_gae(rewards, values, next_values, terminated, truncated, gamma, lam)
    assert result.shape == rewards.shape
    expected = reference_gae(rewards, values, next_values, terminated, truncated, gamma, lam)
    np.testing.assert_allclose(result, expected, rtol=1e-9, atol=1e-9)


@given(batch=episode_batches(), gamma=unit, lam=unit)
def test_batched_gae_segment_equals_gae_recursive(batch, gamma, lam):
    rewards, values, next_values, terminated, truncated = batch
    result = batched_gae(rewards, values, next_values, terminated, truncated, gamma, lam)
    for index in np.ndindex(*rewards.shape[:-1]):
        for start, stop in segments(terminated[index] | truncated[index]):
            last = stop - 1
            bootstrap = 0.0 if terminated[index][last] else next_values[index][last]
            segment_values = np.append(values[index][start:stop], bootstrap)
            np.testing.assert_allclose(
                result[index][start:stop],
                gae_recursive(rewards[index][start:stop], segment_values, gamma, lam),
                rtol=1e-9,
                atol=1e-9,
            )


@given(batch=episode_batches(), gamma=unit, bootstrap=st.booleans())
def test_batched_returns_equal_per_episode_reference(batch, gamma, bootstrap):
    rewards, _, next_values, terminated, truncated = batch
    next_values = next_values if bootstrap else None
    result = batched_discounted_returns(rewards, terminated, truncated, gamma, next_values)
    assert result.shape == rewards.shape
    expected = reference_returns(rewards, terminated, truncated, gamma, next_values)
    np.testing.assert_allclose(result, expected, rtol=1e-9, atol=1e-9)


# --- identities -----------------------------------------------------------------------------------


@given(batch=episode_batches(), gamma=unit)
def test_lam_one_plus_values_is_the_bootstrapped_return(batch, gamma):
    rewards, values, next_values, terminated, truncated = batch
    advantages = batched_gae(rewards, values, next_values, terminated, truncated, gamma, 1.0)
    returns = batched_discounted_returns(rewards, terminated, truncated, gamma, next_values)
    np.testing.assert_allclose(advantages + values, returns, rtol=1e-9, atol=1e-9)


@given(batch=episode_batches(), gamma=unit)
def test_lam_zero_gives_the_masked_td_errors(batch, gamma):
    rewards, values, next_values, terminated, truncated = batch
    advantages = batched_gae(rewards, values, next_values, terminated, truncated, gamma, 0.0)
    expected = np.empty_like(rewards)
    for index in np.ndindex(*rewards.shape):
        future = 0.0 if terminated[index] else next_values[index]
        expected[index] = rewards[index] + gamma * future - values[index]
    np.testing.assert_allclose(advantages, expected, rtol=1e-12, atol=1e-12)


@given(batch=episode_batches(), gamma=unit, lam=unit)
def test_folding_the_truncation_bootstrap_into_the_reward(batch, gamma, lam):
    # A truncation is a termination whose reward also carries gamma * V(final observation).
    rewards, values, next_values, terminated, truncated = batch
    direct = batched_gae(rewards, values, next_values, terminated, truncated, gamma, lam)
    folded = batched_gae(
        rewards + gamma * truncated * next_values,
        values,
        next_values,
        terminated | truncated,
        np.zeros_like(truncated),
        gamma,
        lam,
    )
    np.testing.assert_allclose(direct, folded, rtol=1e-9, atol=1e-9)


@given(batch=episode_batches(), gamma=unit, lam=unit, data=st.data())
def test_terminal_never_bootstraps(batch, gamma, lam, data):
    rewards, values, next_values, terminated, truncated = batch
    changed = np.where(
        terminated,
        data.draw(hnp.arrays(np.float64, rewards.shape, elements=finite)) + 1.0,
        next_values,
    )
    args = (terminated, truncated, gamma)
    np.testing.assert_array_equal(
        batched_gae(rewards, values, next_values, *args, lam),
        batched_gae(rewards, values, changed, *args, lam),
    )
    np.testing.assert_array_equal(
        batched_discounted_returns(rewards, *args, next_values),
        batched_discounted_returns(rewards, *args, changed),
    )


def test_truncation_bootstraps_along_its_episode():
    # One stream: episode A = steps 0..2 truncated at 2, episode B = steps 3..4 terminated.
    rewards = np.array([1.0, 0.0, 2.0, 1.0, 1.0])
    values = np.array([0.5, 0.4, 0.3, 0.2, 0.1])
    terminated = np.array([False, False, False, False, True])
    truncated = np.array([False, False, True, False, False])
    next_values = np.append(values[1:], 0.0)
    next_values[2] = 7.0  # V(final observation of A)
    gamma, lam, change = 0.9, 0.8, 3.0
    base = batched_gae(rewards, values, next_values, terminated, truncated, gamma, lam)
    bumped_next = next_values.copy()
    bumped_next[2] += change
    bumped = batched_gae(rewards, values, bumped_next, terminated, truncated, gamma, lam)
    # A_{2-k} moves by gamma (gamma lam)^k change within A; episode B does not move.
    expected = np.array([gamma * (gamma * lam) ** k * change for k in (2, 1, 0)] + [0.0, 0.0])
    np.testing.assert_allclose(bumped - base, expected, rtol=1e-12, atol=1e-12)
    base_returns = batched_discounted_returns(rewards, terminated, truncated, gamma, next_values)
    bumped_returns = batched_discounted_returns(rewards, terminated, truncated, gamma, bumped_next)
    np.testing.assert_allclose(
        bumped_returns - base_returns,
        [gamma**3 * change, gamma**2 * change, gamma * change, 0.0, 0.0],
        rtol=1e-12,
        atol=1e-12,
    )


@given(batch=episode_batches(), gamma=unit, lam=unit, data=st.data())
def test_marking_a_timeout_as_terminal_drops_exactly_the_bootstrap_terms(batch, gamma, lam, data):
    rewards, values, next_values, terminated, truncated = batch
    if not truncated.any():
        return
    correct = batched_gae(rewards, values, next_values, terminated, truncated, gamma, lam)
    wrong = batched_gae(
        rewards, values, next_values, terminated | truncated, np.zeros_like(truncated), gamma, lam
    )
    # Each truncated step t loses gamma * V_next,t at t and gamma (gamma lam)^k of it k steps
    # earlier in the same episode.
    missing = np.zeros_like(rewards)
    for index in np.ndindex(*rewards.shape[:-1]):
        done = terminated[index] | truncated[index]
        for start, stop in segments(done):
            last = stop - 1
            if truncated[index][last]:
                for t in range(start, stop):
                    missing[index][t] = (
                        gamma * (gamma * lam) ** (last - t) * next_values[index][last]
                    )
    np.testing.assert_allclose(correct - wrong, missing, rtol=1e-9, atol=1e-9)


def test_collector_cut_at_the_array_end_bootstraps():
    rewards = np.array([[1.0, 1.0]])
    values = np.array([[0.0, 0.0]])
    next_values = np.array([[0.0, 5.0]])
    none = np.zeros((1, 2), dtype=bool)
    gamma, lam = 0.5, 1.0
    # Not terminated at the end: the last step bootstraps from next_values[..., -1].
    np.testing.assert_allclose(
        batched_gae(rewards, values, next_values, none, none, gamma, lam), [[2.75, 3.5]]
    )
    np.testing.assert_allclose(
        batched_discounted_returns(rewards, none, none, gamma, next_values), [[2.75, 3.5]]
    )
    # Terminated at the end: no bootstrap.
    end = np.array([[False, True]])
    np.testing.assert_allclose(
        batched_gae(rewards, values, next_values, end, none, gamma, lam), [[1.5, 1.0]]
    )
    np.testing.assert_allclose(
        batched_discounted_returns(rewards, end, none, gamma, next_values), [[1.5, 1.0]]
    )


@given(batch=episode_batches(), gamma=unit, lam=unit)
def test_no_boundaries_is_plain_gae(batch, gamma, lam):
    rewards, values, next_values, _, _ = batch
    none = np.zeros(rewards.shape, dtype=bool)
    next_values[..., :-1] = values[..., 1:]
    np.testing.assert_allclose(
        batched_gae(rewards, values, next_values, none, none, gamma, lam),
        gae_recursive(
            rewards, np.concatenate([values, next_values[..., -1:]], axis=-1), gamma, lam
        ),
        rtol=1e-9,
        atol=1e-9,
    )
    np.testing.assert_allclose(
        batched_discounted_returns(rewards, none, none, gamma),
        discounted_returns(rewards, gamma),
        rtol=1e-12,
        atol=1e-12,
    )


def test_episodes_do_not_leak_into_each_other():
    # A huge reward in the second episode must not reach the first.
    rewards = np.array([1.0, 1000.0])
    values = np.zeros(2)
    for flags in (
        (np.array([True, False]), np.array([False, False])),
        (np.array([False, False]), np.array([True, False])),
    ):
        advantages = batched_gae(rewards, values, np.zeros(2), *flags, 1.0, 1.0)
        returns = batched_discounted_returns(rewards, *flags, 1.0, np.zeros(2))
        assert advantages[0] == 1.0 and returns[0] == 1.0


@pytest.mark.parametrize("as_int", [False, True])
def test_flags_may_be_zero_one_numbers(as_int):
    rewards = np.array([1.0, 2.0, 3.0])
    terminated = np.array([0, 1, 0]) if as_int else np.array([0.0, 1.0, 0.0])
    truncated = np.zeros(3, dtype=int)
    np.testing.assert_array_equal(
        batched_discounted_returns(rewards, terminated, truncated, 0.5),
        batched_discounted_returns(rewards, terminated.astype(bool), truncated.astype(bool), 0.5),
    )
