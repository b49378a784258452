"""Packed streams: several episodes back to back along time, and per-episode loops for
their returns and GAE."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# ---------------------------------------------------------------------------------------------
# Packed streams: several episodes back to back along time
# ---------------------------------------------------------------------------------------------

_finite = st.floats(min_value=-10.0, max_value=10.0, allow_nan=False, allow_infinity=False)


def continue_within_episodes(values, next_values, terminated, truncated):
    """next_values with next_values[t] = values[t + 1] wherever the episode goes on, as a
    collector records it (elsewhere it is left as it was)."""
    next_values = np.array(next_values, dtype=np.float64, copy=True)
    inside = ~(terminated | truncated)[..., :-1]
    next_values[..., :-1] = np.where(inside, values[..., 1:], next_values[..., :-1])
    return next_values


def random_packed(rng, shape=(4, 12), p_end=0.15):
    """(rewards, values, next_values, terminated, truncated) with random boundaries.

    Each step terminates or is truncated with probability ``p_end`` each; ``next_values`` is
    consistent inside episodes.
    """
    kind = rng.choice(3, size=shape, p=[1 - 2 * p_end, p_end, p_end])
    rewards, values, next_values = rng.normal(size=(3, *shape))
    terminated, truncated = kind == 1, kind == 2
    next_values = continue_within_episodes(values, next_values, terminated, truncated)
    return rewards, values, next_values, terminated, truncated


@st.composite
def packed_batches(draw):
    """A hypothesis strategy for :func:`random_packed`-like batches of shape (..., T)."""
    batch_shape = draw(st.sampled_from([(), (1,), (3,), (2, 2)]))
    shape = (*batch_shape, draw(st.integers(1, 8)))
    rewards = draw(hnp.arrays(np.float64, shape, elements=_finite))
    values = draw(hnp.arrays(np.float64, shape, elements=_finite))
    next_values = draw(hnp.arrays(np.float64, shape, elements=_finite))
    kind = draw(hnp.arrays(np.int64, shape, elements=st.integers(0, 2)))
    terminated, truncated = kind == 1, kind == 2
    next_values = continue_within_episodes(values, next_values, terminated, truncated)
    return rewards, values, next_values, terminated, truncated


def episode_segments(done_row):
    """(start, stop) of each episode in one stream; the stream's end closes the last one."""
    start = 0
    for t, done in enumerate(done_row):
        if done:
            yield start, t + 1
            start = t + 1
    if start < len(done_row):
        yield start, len(done_row)


def packed_gae_loop(rewards, values, next_values, terminated, truncated, gamma, lam):
    """Per episode: A_t = Σ_l (γλ)^l δ_{t+l}, with the episode's own bootstrap, double loop."""
    out = np.zeros_like(rewards, dtype=np.float64)
    for index in np.ndindex(*rewards.shape[:-1]):
        r, v, nv = rewards[index], values[index], next_values[index]
        term, trunc = terminated[index], truncated[index]
        for start, stop in episode_segments(term | trunc):
            last = stop - 1
            bootstrap = 0.0 if term[last] else nv[last]
            segment_values = [*v[start:stop], bootstrap]
            length = stop - start
            for t in range(length):
                total = 0.0
                for step in range(length - t):
                    k = t + step
                    delta = r[start + k] + gamma * segment_values[k + 1] - segment_values[k]
                    total += (gamma * lam) ** step * delta
                out[index][start + t] = total
    return out


def packed_returns_loop(rewards, next_values, terminated, truncated, gamma):
    """Per episode: G_t = Σ_l γ^l r_{t+l} + γ^(stop - t) bootstrap (0 after a termination)."""
    out = np.zeros_like(rewards, dtype=np.float64)
    for index in np.ndindex(*rewards.shape[:-1]):
        r, term, trunc = rewards[index], terminated[index], truncated[index]
        for start, stop in episode_segments(term | trunc):
            last = stop - 1
            bootstrap = 0.0 if term[last] else next_values[index][last]
            for t in range(start, stop):
                total = sum(gamma ** (k - t) * r[k] for k in range(t, stop))
                out[index][t] = total + gamma ** (stop - t) * bootstrap
    return out


def fold_truncations(rewards, values, next_values, terminated, truncated, gamma):
    """The packed-stream arguments with every truncation folded into its reward
    (eq-timeout-folding): a truncated step earns r_t + γ V(s_{t+1}) and then terminates."""
    folded = rewards + gamma * np.where(truncated, next_values, 0.0)
    return folded, values, next_values, terminated | truncated, np.zeros_like(truncated)


def steps_to_truncation(terminated, truncated, next_values):
    """For every step of an episode that a truncation cuts: k, the number of steps from it to
    the cut step, and V, the value the cut step bootstraps from (next_values there). Steps of
    the other episodes get k = 0 and V = 0, so a term c^k V is 0 there."""
    k = np.zeros(terminated.shape, dtype=np.int64)
    cut_value = np.zeros(terminated.shape)
    for index in np.ndindex(*terminated.shape[:-1]):
        for start, stop in episode_segments(terminated[index] | truncated[index]):
            end = stop - 1
            if truncated[index][end]:
                k[index][start:stop] = end - np.arange(start, stop)
                cut_value[index][start:stop] = next_values[index][end]
    return k, cut_value
