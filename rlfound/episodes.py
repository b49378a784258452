"""Episodes of a policy in a tabular MDP: sampled for Monte Carlo, or all of them, exactly.

Both functions return the same representation, :class:`Episodes`: N episodes of at most H
steps in padded arrays, plus one weight per episode such that Σ_i weights[i] f(τ_i) is the
expectation of f under the policy (exactly, for :func:`enumerate_episodes`, whose weights are
the episodes' probabilities; as a Monte Carlo average, for :func:`sample_episodes`, whose
weights are 1/N). So a sampled estimate and its exact value are computed by the same code.

The MDP is in the tabular format of :mod:`rlfound.mdp`, and ``initial`` of shape (S,) is the
start distribution p_0.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    MAX_ARRAY_ENTRIES,
    MAX_ENUMERATION,
    check_enumeration_size,
    check_initial,
    check_positive_int,
    check_rng,
    check_size,
    check_tabular_mdp,
    finite_output,
)

__all__ = ["Episodes", "enumerate_episodes", "sample_episodes"]


@dataclasses.dataclass(frozen=True)
class Episodes:
    """N episodes of at most H steps, padded to a common length, with their weights.

    Step t of episode i went from ``states[i, t]`` with ``actions[i, t]`` to
    ``states[i, t + 1]`` and earned ``rewards[i, t]``. After an episode has ended (it entered
    a terminal state, or the horizon cut it) its remaining steps are padding: action -1,
    reward 0, the last state repeated. The functions of :mod:`rlfound.policy_gradient` take one
    row (``states[i]``, ``actions[i]``, ``rewards[i]``) as one episode and skip the padding.

    Attributes
    ----------
    states : numpy.ndarray of int64, shape (N, H + 1)
        s_0, ..., s_H.
    actions : numpy.ndarray of int64, shape (N, H)
        a_t, or -1 after the episode ended.
    rewards : numpy.ndarray of float64, shape (N, H)
        r_t = R(s_t, a_t, s_{t+1}), or 0 after the episode ended.
    terminated : numpy.ndarray of bool, shape (N, H)
        True at the step that entered a terminal state.
    truncated : numpy.ndarray of bool, shape (N, H)
        True at step H - 1 of an episode still running there (cut by the horizon).
    weights : numpy.ndarray of float64, shape (N,)
        What each episode counts for in an expectation, E[f(τ)] ≈ Σ_i weights[i] f(τ_i):
        its probability p(τ_i) for enumerated episodes (summing to 1, and the sum is exact),
        1/N for sampled ones.
    """

    states: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    weights: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        """Number of steps T_i <= H each episode took, shape (N,)."""
        return (self.actions >= 0).sum(axis=1)

    def __len__(self) -> int:
        return len(self.weights)


def _sample_rows(
    rng: np.random.Generator, probabilities: np.ndarray
) -> np.ndarray:
    """One index per row of ``probabilities`` (n, K), by inverting each row's CDF.

    Index k is drawn when cdf[k-1] <= u < cdf[k], which needs p[k] > 0, so an action or
    state of probability 0 is never returned; the clamp covers u falling above a CDF that
    rounding left slightly below 1.
    """
    uniforms = rng.random(probabilities.shape[0])
    cdf = np.cumsum(probabilities, axis=1)
    index = (cdf <= uniforms[:, None]).sum(axis=1)
    last_positive = (
        probabilities.shape[1]
        - 1
        - np.argmax(probabilities[:, ::-1] > 0.0, axis=1)
    )
    return np.minimum(index, last_positive)


@finite_output()
def sample_episodes(
    transition: ArrayLike,
    reward: ArrayLike,
    policy: ArrayLike,
    initial: ArrayLike,
    horizon: int,
    num_episodes: int = 1,
    terminal: ArrayLike | None = None,
    rng: np.random.Generator | int | None = None,
) -> Episodes:
    """Sample episodes of a policy in a tabular MDP, for Monte Carlo estimates.

    Each episode draws s_0 ~ p_0, then a_t ~ π(· | s_t), s_{t+1} ~ P(· | s_t, a_t) and
    r_t = R(s_t, a_t, s_{t+1}) for t = 0, 1, ..., until it enters a terminal state or
    ``horizon`` steps have been taken. Every episode gets the weight 1/N, so
    Σ_i weights[i] f(τ_i) is the Monte Carlo average of f.

    Book: equation (eq-trajectory-probability), chapter 3.

    Parameters
    ----------
    transition, reward, policy
        The tabular MDP and policy, as in :func:`rlfound.mdp.state_values`.
    initial : array_like, shape (S,)
        Start distribution p_0.
    horizon : int
        Largest number of steps H >= 1.
    num_episodes : int, optional
        Number of episodes N >= 1.
    terminal : array_like of bool or 0/1, shape (S,), optional
        Terminal states. An episode that starts in one has no steps at all.
    rng : numpy.random.Generator, int or None, optional
        Source of randomness: a Generator, or a seed for a new one (None: fresh entropy).

    Returns
    -------
    Episodes
        N episodes of at most H steps, each with weight 1/N.

    Raises
    ------
    ValueError
        As :func:`rlfound.mdp.state_values` for the MDP, and if ``initial`` is not a
        distribution over the states, ``horizon`` or ``num_episodes`` is not a positive
        integer, ``num_episodes * (horizon + 1)`` exceeds ``MAX_ARRAY_ENTRIES`` (10^8
        array entries, checked with exact integers before anything is allocated), or
        ``rng`` is not a Generator, a non-negative integer or None.

    References
    ----------
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 5.1.

    Examples
    --------
    >>> transition = np.zeros((2, 2, 2)); transition[:, :, 1] = 1.0
    >>> reward = np.zeros((2, 2, 2)); reward[0, 1, 1] = 1.0
    >>> batch = sample_episodes(transition, reward, [[0.0, 1.0], [1.0, 0.0]], [1.0, 0.0],
    ...                         horizon=2, terminal=[False, True], rng=0)
    >>> batch.states, batch.actions, batch.rewards
    (array([[0, 1, 1]]), array([[ 1, -1]]), array([[1., 0.]]))
    >>> batch.terminated, batch.truncated, batch.weights
    (array([[ True, False]]), array([[False, False]]), array([1.]))
    """
    transition, reward, policy, terminal = check_tabular_mdp(
        transition, reward, policy, terminal
    )
    initial = check_initial(initial, transition.shape[0])
    horizon = check_positive_int(horizon, "horizon")
    num_episodes = check_positive_int(num_episodes, "num_episodes")
    check_size(
        num_episodes * (horizon + 1),
        "num_episodes * (horizon + 1)",
        MAX_ARRAY_ENTRIES,
        "array entries",
    )
    rng = check_rng(rng)

    states = np.zeros((num_episodes, horizon + 1), dtype=np.int64)
    actions = np.full((num_episodes, horizon), -1, dtype=np.int64)
    rewards = np.zeros((num_episodes, horizon))
    terminated = np.zeros((num_episodes, horizon), dtype=bool)
    truncated = np.zeros((num_episodes, horizon), dtype=bool)

    states[:, 0] = _sample_rows(
        rng, np.broadcast_to(initial, (num_episodes, initial.size))
    )
    running = ~terminal[states[:, 0]]
    for t in range(horizon):
        states[:, t + 1] = states[:, t]
        live = np.flatnonzero(running)
        # Only running episodes draw: terminal rows of the policy may not be distributions.
        here = states[live, t]
        chosen = _sample_rows(rng, policy[here])
        there = _sample_rows(rng, transition[here, chosen])
        actions[live, t] = chosen
        rewards[live, t] = reward[here, chosen, there]
        states[live, t + 1] = there
        terminated[live, t] = terminal[there]
        running[live] = ~terminal[there]
    truncated[:, horizon - 1] = running
    weights = np.full(num_episodes, 1.0 / num_episodes)
    return Episodes(states, actions, rewards, terminated, truncated, weights)


@finite_output()
def enumerate_episodes(
    transition: ArrayLike,
    reward: ArrayLike,
    policy: ArrayLike,
    initial: ArrayLike,
    horizon: int,
    terminal: ArrayLike | None = None,
) -> Episodes:
    """Every episode of non-zero probability, weighted by its probability: exact expectations.

    An episode runs until it enters a terminal state or has taken ``horizon`` steps, and
    has probability

        p(τ) = p_0(s_0) Π_t π(a_t | s_t) P(s_{t+1} | s_t, a_t).

    These probabilities are the weights and sum to 1, so E[f(τ)] = Σ_τ p(τ) f(τ) exactly for
    any f: the reference against which sampled estimates are checked.

    Book: equation (eq-trajectory-probability), chapter 3.

    Parameters
    ----------
    transition, reward, policy, initial, horizon, terminal
        As in :func:`sample_episodes`.

    Returns
    -------
    Episodes
        Every possible episode, in lexicographic order of (s_0, a_0, s_1, a_1, ...), with
        ``weights`` its probability.

    Raises
    ------
    ValueError
        As :func:`sample_episodes`, and, naming ``horizon``: if ``horizon + 1`` or the
        episodes times ``horizon + 1`` exceed ``MAX_ARRAY_ENTRIES`` (10^8), or there would
        be more than ``MAX_ENUMERATION`` (one million) episodes. The episodes are counted
        with exact integers (capped just above the limit) before any is built, and the
        count stops once every episode has ended, so a horizon of 10^18 fails at once.

    References
    ----------
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 3.1.

    Examples
    --------
    One decision, then the end: two equally likely episodes.

    >>> transition = np.zeros((2, 2, 2)); transition[:, :, 1] = 1.0
    >>> reward = np.zeros((2, 2, 2)); reward[0, 1, 1] = 1.0
    >>> episodes = enumerate_episodes(transition, reward, np.full((2, 2), 0.5), [1.0, 0.0],
    ...                               horizon=3, terminal=[False, True])
    >>> episodes.actions, episodes.rewards[:, 0], episodes.weights
    (array([[ 0, -1, -1],
           [ 1, -1, -1]]), array([0., 1.]), array([0.5, 0.5]))
    """
    transition, reward, policy, terminal = check_tabular_mdp(
        transition, reward, policy, terminal
    )
    initial = check_initial(initial, transition.shape[0])
    horizon = check_positive_int(horizon, "horizon")

    # Count the episodes before building them, with exact integers: count[s] = number of
    # episodes from s with the remaining steps, capped just above the limit (so the counts
    # stay small), so a hopeless request fails at once instead of filling memory. Every
    # episode is a row of horizon + 1 states, so the horizon alone bounds the array first.
    check_size(
        horizon + 1,
        "horizon",
        MAX_ARRAY_ENTRIES,
        "entries per episode (horizon + 1)",
    )
    branches = (
        ((policy[:, :, None] > 0.0) & (transition > 0.0))
        .sum(axis=1)
        .astype(np.int64)
    )
    cap = MAX_ENUMERATION + 1
    count = np.ones(transition.shape[0], dtype=np.int64)
    for _ in range(horizon):
        grown = np.where(terminal, 1, np.minimum(branches @ count, cap))
        if np.array_equal(grown, count):
            break  # every episode has ended: longer horizons add no episodes
        count = grown
    total = min(int(count[initial > 0.0].sum()), cap)
    shown = f"more than {MAX_ENUMERATION}" if total == cap else str(total)
    check_enumeration_size(
        total, "horizon", f"horizon {horizon} with {shown} episodes"
    )
    check_size(
        total * (horizon + 1),
        "horizon",
        MAX_ARRAY_ENTRIES,
        "array entries (horizon + 1 per episode)",
    )

    # Grow all partial episodes one step at a time (no recursion, so long horizons are fine).
    partial = [
        ((int(s),), (), (), float(initial[s]))
        for s in np.flatnonzero(initial > 0.0)
    ]
    for _ in range(horizon):
        if all(terminal[states[-1]] for states, *_ in partial):
            break  # every episode has ended; the padding fills the remaining steps
        grown = []
        for states, actions, rewards, probability in partial:
            state = states[-1]
            if terminal[state]:  # finished: carried over unchanged
                grown.append((states, actions, rewards, probability))
                continue
            for action in np.flatnonzero(policy[state] > 0.0):
                for following in np.flatnonzero(
                    transition[state, action] > 0.0
                ):
                    grown.append(
                        (
                            (*states, int(following)),
                            (*actions, int(action)),
                            (
                                *rewards,
                                float(reward[state, action, following]),
                            ),
                            probability
                            * float(policy[state, action])
                            * float(transition[state, action, following]),
                        )
                    )
        partial = grown
    return _padded(partial, horizon, terminal)


def _padded(
    partial: list[tuple], horizon: int, terminal: np.ndarray
) -> Episodes:
    """Episodes of different lengths, as tuples, padded into the arrays of :class:`Episodes`."""
    count = len(partial)
    states = np.zeros((count, horizon + 1), dtype=np.int64)
    actions = np.full((count, horizon), -1, dtype=np.int64)
    rewards = np.zeros((count, horizon))
    weights = np.zeros(count)
    for i, (visited, chosen, earned, probability) in enumerate(partial):
        length = len(chosen)
        states[i, : length + 1] = visited
        states[i, length + 1 :] = visited[
            -1
        ]  # a finished episode stays where it ended
        actions[i, :length] = chosen
        rewards[i, :length] = earned
        weights[i] = probability
    terminated = (actions >= 0) & terminal[states[:, 1:]]
    truncated = np.zeros_like(terminated)
    truncated[:, -1] = ~terminal[
        states[:, -1]
    ]  # still running after H steps: cut
    return Episodes(states, actions, rewards, terminated, truncated, weights)
