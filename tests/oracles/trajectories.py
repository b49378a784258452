"""Single trajectories: discounted sums, returns, TD errors, k-step advantages and GAE
by their definitions."""

from __future__ import annotations

import numpy as np

# ---------------------------------------------------------------------------------------------
# Single trajectories: discounted sums, TD errors, k-step advantages and GAE by their definitions
# ---------------------------------------------------------------------------------------------


def discounted_sum_loop(terms, discounts):
    """y_t = Σ_{k>=t} (Π_{t<=j<k} c_j) x_k for one sequence, by a double loop of Python floats.

    ``discounts`` is one number (the same c at every step) or one per step.
    """
    terms = [float(x) for x in terms]
    if np.ndim(discounts) == 0:
        discounts = [float(discounts)] * len(terms)
    discounts = [float(c) for c in discounts]
    sums = []
    for t in range(len(terms)):
        total, factor = 0.0, 1.0
        for k in range(t, len(terms)):
            total += factor * terms[k]
            factor *= discounts[k]
        sums.append(total)
    return np.array(sums)


def returns_loop(rewards, gamma):
    """G_t = Σ_{l=0}^{T-1-t} γ^l r_{t+l}, one explicit sum per t (Python ``**``: 0.0 ** 0 = 1)."""
    rewards = [float(r) for r in rewards]
    horizon = len(rewards)
    return np.array(
        [
            sum(gamma**step * rewards[t + step] for step in range(horizon - t))
            for t in range(horizon)
        ]
    )


def td_loop(rewards, values, gamma):
    """δ_t = r_t + γ V(s_{t+1}) - V(s_t) for one trajectory (``values`` has T + 1 entries)."""
    return np.array(
        [float(rewards[t]) + gamma * values[t + 1] - values[t] for t in range(len(rewards))]
    )


def gae_loop(rewards, values, gamma, lam):
    """A_t = Σ_{l=0}^{T-1-t} (γλ)^l δ_{t+l} for one trajectory: the definition, a double loop."""
    deltas = td_loop(rewards, values, gamma)
    horizon = len(deltas)
    return np.array(
        [
            sum((gamma * lam) ** step * deltas[t + step] for step in range(horizon - t))
            for t in range(horizon)
        ]
    )


def gae_from_deltas(deltas, gamma, lam):
    """A_t = Σ_{s>=t} (γλ)^(s - t) δ_s along the last axis, any leading shape, with no episode
    boundaries (the array's end closes every sum).

    The explicit sum as one product with the matrix of weights (γλ)^(s - t) for s >= t (0
    below the diagonal), for enumerations too large for :func:`discounted_sum_loop`.
    """
    horizon = deltas.shape[-1]
    lag = np.arange(horizon)[None, :] - np.arange(horizon)[:, None]  # lag[t, s] = s - t
    weights = np.where(lag >= 0, (gamma * lam) ** np.maximum(lag, 0), 0.0)
    return deltas @ weights.T


def window_gae(rewards, critic_now, critic_after, gamma, lam, marked_terminal):
    """GAE of full windows of steps (rows; no terminal state inside) by
    :func:`gae_from_deltas`: δ_t = r_t + γ V(s_{t+1}) - V(s_t), where the window's last step
    bootstraps from V(s_{t+1}) unless ``marked_terminal`` (then that V is taken as 0)."""
    last = np.zeros(rewards.shape)
    last[:, -1] = 1.0
    bootstrap = critic_after * (1.0 - last) if marked_terminal else critic_after
    return gae_from_deltas(rewards + gamma * bootstrap - critic_now, gamma, lam)


def k_step_loop(rewards, values, gamma, k):
    """A_t = Σ_{l<n} γ^l r_{t+l} + γ^n V(s_{t+n}) - V(s_t), n = min(k, T - t), one trajectory."""
    horizon = len(rewards)
    out = []
    for t in range(horizon):
        n = min(k, horizon - t)
        out.append(
            sum(gamma**step * float(rewards[t + step]) for step in range(n))
            + gamma**n * float(values[t + n])
            - float(values[t])
        )
    return np.array(out)


def per_trajectory(reference, rewards, values, *args):
    """Apply a one-trajectory reference ``reference(r, v, *args)`` to every leading index."""
    rewards, values = np.asarray(rewards), np.asarray(values)
    out = np.zeros(rewards.shape)
    for index in np.ndindex(rewards.shape[:-1]):
        out[index] = reference(rewards[index], values[index], *args)
    return out
