"""Exercise ``gae-timeouts`` (chapter 4, three stars): GAE across episode boundaries.

A batch of rollouts holds several episodes back to back along the last (time) axis; leading
axes are a batch of independent streams. For every step t:

* ``values[..., t]`` is V(s_t), the critic's value of the state the step started from;
* ``next_values[..., t]`` is V of the state the step actually reached: inside an episode that
  is V(s_{t+1}); at a truncated step it is the value of the cut episode's *final observation*
  (the next entry of the array belongs to another episode); at a terminated step it is
  ignored;
* ``terminated[..., t]`` is True when step t entered a true terminal state (worth 0);
* ``truncated[..., t]`` is True when a time limit cut the episode after step t.

The advantages follow

    delta_t = r_t + gamma (1 - terminated_t) next_values_t - values_t,
    A_t     = delta_t + gamma lam (1 - done_t) A_{t+1},   done_t = terminated_t or truncated_t,

with A_T = 0: the chain also stops at the end of the array, where a still-running episode is a
collector cut that bootstraps from ``next_values[..., T - 1]``.

Implement

* :func:`gae_with_timeouts`, the backward recursion above, with input checks;
* :func:`test_gae_with_timeouts`, a test that compares it with a per-episode computation on
  random episode boundaries and checks the folding identity: truncation is the same as a
  termination whose reward includes ``gamma * next_values`` at the truncated step.
"""

from __future__ import annotations

import numpy as np


def gae_with_timeouts(rewards, values, next_values, terminated, truncated, gamma, lam):
    """GAE over packed episodes with terminated and truncated steps.

    Parameters
    ----------
    rewards : array_like
        Shape (..., T), T >= 1: rewards r_t.
    values : array_like
        Shape (..., T): V(s_t).
    next_values : array_like
        Shape (..., T): V of the state step t reached (the final observation at a truncated
        step); ignored at terminated steps.
    terminated : array_like of bool
        Shape (..., T): True where step t entered a terminal state.
    truncated : array_like of bool
        Shape (..., T): True where a time limit cut the episode after step t.
    gamma : float
        Discount factor, in [0, 1].
    lam : float
        GAE parameter lambda, in [0, 1].

    Returns
    -------
    numpy.ndarray
        Shape (..., T), float64: the advantages A_t.

    Raises
    ------
    ValueError
        If an array does not have the shape of ``rewards`` (the message names it), a step is
        both terminated and truncated (naming ``truncated``), an input is not finite, or
        ``gamma`` or ``lam`` is outside [0, 1].

    Examples
    --------
    A terminated step earns only its reward; a truncated one also earns gamma times the value
    of the state it reached.

    >>> gae_with_timeouts([1.0], [0.5], [2.0], [True], [False], gamma=0.9, lam=0.95).tolist()
    [0.5]
    >>> gae_with_timeouts([1.0], [0.5], [2.0], [False], [True], gamma=0.9, lam=0.95).tolist()
    [2.3]
    """
    ### BEGIN SOLUTION
    rewards = np.asarray(rewards, dtype=np.float64)
    if rewards.ndim == 0 or rewards.shape[-1] == 0:
        raise ValueError(f"rewards must have shape (..., T) with T >= 1; got {rewards.shape}")
    given = {
        "values": values,
        "next_values": next_values,
        "terminated": terminated,
        "truncated": truncated,
    }
    arrays = {"rewards": rewards}
    for name, x in given.items():
        x = np.asarray(x)
        if x.shape != rewards.shape:
            expected = f"the shape of rewards {rewards.shape}"
            raise ValueError(f"{name} must have {expected}; got {x.shape}")
        arrays[name] = x
    for name in ("rewards", "values", "next_values"):
        arrays[name] = np.asarray(arrays[name], dtype=np.float64)
        if not np.all(np.isfinite(arrays[name])):
            raise ValueError(f"{name} must be finite")
    for name in ("terminated", "truncated"):
        if not np.all((arrays[name] == 0) | (arrays[name] == 1)):
            raise ValueError(f"{name} must hold booleans (or 0/1)")
        arrays[name] = arrays[name].astype(bool)
    for name, x in (("gamma", gamma), ("lam", lam)):
        if not 0.0 <= x <= 1.0:
            raise ValueError(f"{name} must be in [0, 1]; got {x}")
    terminated, truncated = arrays["terminated"], arrays["truncated"]
    if np.any(terminated & truncated):
        raise ValueError("truncated must be False wherever terminated is True")

    # A terminal state is worth nothing; every other step bootstraps from where it went.
    deltas = rewards + gamma * np.where(terminated, 0.0, arrays["next_values"]) - arrays["values"]
    done = terminated | truncated
    advantages = np.zeros_like(deltas)
    running = np.zeros(deltas.shape[:-1])  # A_T = 0: the array end cuts the chain
    for t in reversed(range(deltas.shape[-1])):
        # After an episode boundary the next entry belongs to another episode.
        running = deltas[..., t] + gamma * lam * np.where(done[..., t], 0.0, running)
        advantages[..., t] = running
    return advantages
    ### END SOLUTION


def test_gae_with_timeouts():
    """:func:`gae_with_timeouts` agrees with a per-episode loop and with the folding identity.

    Random rows with random terminated and truncated steps (never both), several values of
    gamma and lambda including 0 and 1, and T = 1. The reference splits each row at its
    boundaries and runs the plain single-episode recursion with the bootstrap value 0 after a
    termination and ``next_values`` after a truncation or at the array end.
    """
    ### BEGIN SOLUTION
    rng = np.random.default_rng(2024)
    for horizon in (1, 2, 7, 30):
        for gamma, lam in ((0.0, 0.5), (0.9, 0.0), (0.99, 0.95), (1.0, 1.0)):
            rewards = rng.normal(size=(3, horizon))
            values = rng.normal(size=(3, horizon))
            kind = rng.choice(3, size=(3, horizon), p=[0.6, 0.2, 0.2])
            terminated, truncated = kind == 1, kind == 2
            # Inside an episode the next value is the next step's value; at a boundary or at
            # the array end it is a free number (the final observation's value).
            next_values = rng.normal(size=(3, horizon))
            inside = ~(terminated | truncated)[:, :-1]
            next_values[:, :-1][inside] = values[:, 1:][inside]

            got = gae_with_timeouts(rewards, values, next_values, terminated, truncated, gamma, lam)
            assert got.shape == rewards.shape

            # Reference: split each row into episodes, one scalar recursion per episode.
            expected = np.zeros_like(rewards)
            for row in range(3):
                start = 0
                for end in range(horizon):
                    if not (terminated[row, end] or truncated[row, end] or end == horizon - 1):
                        continue
                    bootstrap = 0.0 if terminated[row, end] else next_values[row, end]
                    episode_values = [*values[row, start : end + 1], bootstrap]
                    running = 0.0
                    for t in range(end, start - 1, -1):
                        i = t - start
                        delta = rewards[row, t] + gamma * episode_values[i + 1] - values[row, t]
                        running = delta + gamma * lam * running
                        expected[row, t] = running
                    start = end + 1
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)

            # Folding: a truncation is a termination whose reward includes gamma V_next.
            folded = gae_with_timeouts(
                rewards + gamma * truncated * next_values,
                values,
                next_values,
                terminated | truncated,
                np.zeros_like(truncated),
                gamma,
                lam,
            )
            np.testing.assert_allclose(got, folded, rtol=1e-10, atol=1e-12)
    ### END SOLUTION
