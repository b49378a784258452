"""The loops other libraries run for GAE, written here from their algorithms, for scan_speed.py.

Each takes the packed stream of ``scan_speed.packed_stream`` in the layout it is written for
and returns the advantages; ``scan_speed`` checks each against the clear form before timing.

- Stable-Baselines3 (``RolloutBuffer.compute_returns_and_advantage`` in
  DLR-RM/stable-baselines3 ``stable_baselines3/common/buffers.py``, read at commit
  e05d2dbe6eda0acd0ef2e316e3e4065677add3eb): a time-major (T, B) buffer, one row per step
  from the last, the continuation flag of the step after each (``episode_starts``) and the
  bootstrap of the last step from the values after the buffer. A timeout's bootstrap is
  added to its reward while collecting (``collect_rollouts`` in ``on_policy_algorithm.py``),
  so the loop sees a timeout as an end; here that addition is done before timing.
- CleanRL (``cleanrl/ppo.py`` in vwxyzjn/cleanrl, commit
  fe8d8a03c41a7ef5b523e2e354bd01c363e786bb): the same time-major loop, with ``dones`` shifted
  by one step and no bootstrap at a timeout (a timeout counts as a termination).
- tianshou (``_gae`` in thu-ml/tianshou ``tianshou/algorithm/algorithm_base.py``, commit
  f2402056b03acafeedf2518a5088db55add004ab): TD errors and discounts for the whole flat buffer,
  then one compiled (numba) loop over it. Optional: only when numba is installed.
- JAX: ``jax.lax.scan`` over the rows of a (T, B) buffer, compiled by ``jax.jit``.
  Optional: only when jax is installed.
"""

from __future__ import annotations

import numpy as np


def sb3_inputs(rewards, values, next_values, terminated, truncated, gamma):
    """SB3's buffer contents for a (T, B) stream: folded rewards, episode starts, last values."""
    ends = terminated | truncated
    folded = rewards + gamma * np.where(truncated, next_values, 0.0)  # done while collecting
    episode_starts = np.zeros_like(rewards)
    episode_starts[1:] = ends[:-1]
    return folded, values, episode_starts, next_values[-1], ends[-1].astype(float)


def sb3_gae(rewards, values, episode_starts, last_values, last_dones, gamma, lam):
    """GAE by SB3's loop over the rows of a (T, B) buffer."""
    horizon = rewards.shape[0]
    advantages = np.zeros_like(rewards)
    running = 0.0
    for step in range(horizon - 1, -1, -1):
        if step == horizon - 1:
            goes_on = 1.0 - last_dones
            following_values = last_values
        else:
            goes_on = 1.0 - episode_starts[step + 1]
            following_values = values[step + 1]
        delta = rewards[step] + gamma * following_values * goes_on - values[step]
        running = delta + gamma * lam * goes_on * running
        advantages[step] = running
    return advantages


def cleanrl_inputs(rewards, values, next_values, terminated, truncated):
    """CleanRL's buffers for a (T, B) stream: ``dones[t]`` says an episode ended before step t."""
    ends = (terminated | truncated).astype(float)
    dones = np.zeros_like(rewards)
    dones[1:] = ends[:-1]
    return rewards, values, dones, next_values[-1], ends[-1]


def cleanrl_gae(rewards, values, dones, next_value, next_done, gamma, lam):
    """GAE by CleanRL's loop over the rows of a (T, B) buffer."""
    horizon = rewards.shape[0]
    advantages = np.zeros_like(rewards)
    running = 0.0
    for t in reversed(range(horizon)):
        if t == horizon - 1:
            not_done, following_values = 1.0 - next_done, next_value
        else:
            not_done, following_values = 1.0 - dones[t + 1], values[t + 1]
        delta = rewards[t] + gamma * following_values * not_done - values[t]
        running = delta + gamma * lam * not_done * running
        advantages[t] = running
    return advantages


def lfilter_discounted_sums(terms, factor):
    """y_t = x_t + c y_{t+1} along the last axis with no stops, by ``scipy.signal.lfilter``.

    The recursion read backward in time is the first-order filter y = x + c y[previous].
    """
    from scipy.signal import lfilter

    reversed_sums = lfilter([1.0], [1.0, -factor], terms[..., ::-1], axis=-1)
    return reversed_sums[..., ::-1]


def numba_forms():
    """(tianshou's GAE over a flat (B, T) buffer, one fused pass over a (T, B) buffer), compiled.

    (None, None) where numba is not installed.
    """
    try:
        from numba import njit
    except ImportError:
        return None, None

    @njit(cache=False)
    def flat_gae(rewards, values, next_values, not_terminal, ends, gamma, lam):
        deltas = rewards + gamma * next_values * not_terminal - values
        discounts = (1.0 - ends) * (gamma * lam)
        advantages = np.zeros(rewards.shape)
        running = 0.0
        for i in range(rewards.size - 1, -1, -1):
            running = deltas[i] + discounts[i] * running
            advantages[i] = running
        return advantages

    def tianshou(rewards, values, next_values, terminated, truncated, gamma, lam):
        ends = terminated | truncated
        ends[..., -1] = True  # a row's last step: the next entry is another stream's
        flat = [a.reshape(-1) for a in (rewards, values, next_values)]
        not_terminal = 1.0 - terminated.reshape(-1)
        advantages = flat_gae(*flat, not_terminal, ends.reshape(-1).astype(float), gamma, lam)
        return advantages.reshape(rewards.shape)

    # Every input read once, every sum written once: what a compiled loop can do.
    @njit(cache=False)
    def fused(rewards, values, next_values, terminated, truncated, gamma, lam):
        horizon, streams = rewards.shape
        advantages = np.empty(rewards.shape)
        running = np.zeros(streams)
        for t in range(horizon - 1, -1, -1):
            for b in range(streams):
                bootstrap = 0.0 if terminated[t, b] else gamma * next_values[t, b]
                delta = rewards[t, b] + bootstrap - values[t, b]
                goes_on = not (terminated[t, b] or truncated[t, b])
                running[b] = delta + (gamma * lam * running[b] if goes_on else 0.0)
                advantages[t, b] = running[b]
        return advantages

    return tianshou, fused


def jax_gae():
    """GAE by ``jax.lax.scan`` over the rows of a (T, B) buffer, or None without jax."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    @jax.jit
    def scan(rewards, values, next_values, terminated, truncated, gamma, lam):
        deltas = rewards + gamma * jnp.where(terminated, 0.0, next_values) - values
        discounts = jnp.where(terminated | truncated, 0.0, gamma * lam)

        def step(following, row):
            delta, discount = row
            sums = delta + discount * following
            return sums, sums

        _, advantages = jax.lax.scan(
            step, jnp.zeros(rewards.shape[1]), (deltas, discounts), reverse=True
        )
        return advantages

    def gae(*arguments):
        return np.asarray(scan(*arguments).block_until_ready())

    return gae
