"""Independent references the tests compare the library with, each written once.

Everything here is computed a different way from :mod:`rlfound`: explicit loops and sums,
power series, backward induction, enumeration by hand. Nothing here imports the library, so a
bug in the library cannot hide in its own reference. Tests import what they need::

    from tests.oracles import central_differences, random_mdp

Contents: central finite differences; a softmax reference; random distributions; bandits
(the objective, its gradient, exact expectations over groups of draws); Markov chains and
tabular MDPs (the power series of a reward process, policy averages, values by a linear
solve); the chapter-2 bigram table; the chapter-3 rated conversation (its arrays, every
conversation enumerated by hand, its values by backward induction); packed streams of several
episodes (random ones, a hypothesis strategy, and per-episode loops for their returns and GAE);
single trajectories (discounted sums, returns, TD errors, k-step advantages and GAE by their
definitions); episodes of tabular MDPs by hand (a forward MDP whose episodes always end, every
episode by recursion, as a list or as padded arrays, log-probabilities, the one-episode
REINFORCE estimate); chapter 4's tasks (submit or work, the job task without an end, the
2 + 2 token task), shared by the chapter's claims and its solutions page.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import NamedTuple

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


def _read_only(array):
    """A read-only copy of ``array``, for constants that several test files share."""
    array = np.array(array, copy=True)
    array.flags.writeable = False
    return array


# ---------------------------------------------------------------------------------------------
# Derivatives and distributions
# ---------------------------------------------------------------------------------------------


def central_differences(f, x, eps=1e-6):
    """Gradient of a scalar function by (f(x + ε e_i) - f(x - ε e_i)) / 2ε, entry by entry."""
    x = np.asarray(x, dtype=np.float64)
    gradient = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        gradient[index] = (float(f(x + step)) - float(f(x - step))) / (2 * eps)
    return gradient


def softmax_rows(logits):
    """exp(θ - max θ) / Σ exp(θ - max θ) along the last axis, written out."""
    logits = np.asarray(logits, dtype=np.float64)
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def random_distributions(rng, shape, sparse=False):
    """Probability vectors along the last axis; with ``sparse``, some entries exactly 0.

    A sparse row never loses all its mass (its first entry is then set to 1).
    """
    weights = rng.random(shape)
    if sparse:
        weights[rng.random(shape) < 0.4] = 0.0
        empty = weights.sum(axis=-1) == 0.0
        weights[empty, 0] = 1.0
    return weights / weights.sum(axis=-1, keepdims=True)


# ---------------------------------------------------------------------------------------------
# Bandits
# ---------------------------------------------------------------------------------------------


def bandit_objective_by_hand(logits, action_rewards):
    """J(θ) = Σ_a π_θ(a) q(a), with the softmax of :func:`softmax_rows`."""
    return float(softmax_rows(logits) @ np.asarray(action_rewards, dtype=np.float64))


def bandit_gradient_by_hand(logits, action_rewards):
    """∇_θ J = π(a) (q(a) - Σ_b π(b) q(b)) for every a: eq-bandit-gradient, written out."""
    probs = softmax_rows(logits)
    action_rewards = np.asarray(action_rewards, dtype=np.float64)
    return probs * (action_rewards - probs @ action_rewards)


def group_expectation_by_hand(logits, action_rewards, group_size, advantage_fn, joint=None):
    """E[(1/G) Σ_i A_i (e_{a_i} - π)] over all K^G groups (a_1, ..., a_G) of actions, each
    group read off the base-K digits of its index.

    The advantages are ``advantage_fn(q(a_1), ..., q(a_G))`` (any function of the whole
    group). The group's probability is Π_i π(a_i) (independent draws), or ``joint[group]``
    when a joint distribution of the G draws is given; groups of probability 0 are skipped.
    """
    probs = softmax_rows(logits)
    q = np.asarray(action_rewards, dtype=np.float64)
    k = len(probs)
    total = np.zeros(k)
    for code in range(k**group_size):
        group = [(code // k**i) % k for i in range(group_size)]
        if joint is None:
            probability = math.prod(probs[a] for a in group)
        else:
            probability = joint[tuple(group)]
        if probability == 0.0:
            continue
        advantages = advantage_fn(np.array([q[a] for a in group]))
        for i, a in enumerate(group):
            total += probability * advantages[i] * (np.eye(k)[a] - probs) / group_size
    return total


# ---------------------------------------------------------------------------------------------
# Markov chains and tabular MDPs
# ---------------------------------------------------------------------------------------------


@st.composite
def markov_chains(draw, min_states=1, max_states=6):
    """A random row-stochastic matrix (no zero rows) and a reward vector."""
    size = draw(st.integers(min_states, max_states))
    weights = draw(
        hnp.arrays(np.float64, (size, size), elements=st.floats(0.0, 1.0, allow_nan=False))
    )
    transition = (weights + 1e-3) / (weights + 1e-3).sum(axis=1, keepdims=True)
    reward = draw(hnp.arrays(np.float64, (size,), elements=st.floats(-5.0, 5.0, allow_nan=False)))
    return transition, reward


def power_series_values(transition, reward, gamma, tol=1e-15, max_terms=100_000):
    """v = Σ_n γ^n P^n r, summed until the terms are negligible (needs γ < 1 or absorption)."""
    total = np.zeros_like(reward, dtype=np.float64)
    term = np.asarray(reward, dtype=np.float64).copy()
    for _ in range(max_terms):
        total += term
        if term.size == 0 or np.max(np.abs(term)) <= tol:
            return total
        term = gamma * (transition @ term)
    raise AssertionError("power series did not converge")


def random_mdp(rng, num_states, num_actions, num_terminal=1):
    """A random tabular MDP: (transition, reward, policy, terminal, initial).

    The last ``num_terminal`` states are terminal; their rows are left random on purpose
    (the library must ignore them). Every state reaches a terminal one when there is one,
    because every entry of ``transition`` is positive.
    """
    transition = rng.dirichlet(np.ones(num_states), size=(num_states, num_actions))
    reward = rng.normal(size=(num_states, num_actions, num_states))
    policy = rng.dirichlet(np.ones(num_actions), size=num_states)
    terminal = np.arange(num_states) >= num_states - num_terminal
    initial = rng.dirichlet(np.ones(num_states))
    return transition, reward, policy, terminal, initial


def policy_average(transition, reward, policy, terminal):
    """(P_π, r_π) by explicit loops over live states; terminal rows absorbing and unrewarded."""
    num_states, num_actions, _ = transition.shape
    p_pi = np.zeros((num_states, num_states))
    r_pi = np.zeros(num_states)
    for s in range(num_states):
        if terminal[s]:
            p_pi[s, s] = 1.0
            continue
        for a in range(num_actions):
            p_pi[s] += policy[s, a] * transition[s, a]
            r_pi[s] += policy[s, a] * transition[s, a] @ reward[s, a]
    return p_pi, r_pi


def linear_solve_values(transition, reward, policy, gamma, terminal):
    """(v_π, P_π): v = r_π + γ P_π v solved on the live states by a linear solve, 0 at terminal
    states, with (P_π, r_π) from :func:`policy_average`."""
    p_pi, r_pi = policy_average(transition, reward, policy, terminal)
    live = np.flatnonzero(~terminal)
    values = np.zeros(len(terminal))
    values[live] = np.linalg.solve(np.eye(live.size) - gamma * p_pi[np.ix_(live, live)], r_pi[live])
    return values, p_pi


# ---------------------------------------------------------------------------------------------
# The chapter-2 bigram model
# ---------------------------------------------------------------------------------------------

#: The chapter's bigram logits: row = previous token (A, B, space, ., then the start row),
#: column = next token (A, B, space, .).
BIGRAM_TABLE = _read_only(
    [
        [-1.5, -1.5, 0.0, 1.5],
        [-1.5, -1.5, 0.5, 0.5],
        [-0.5, 1.0, 0.0, -0.5],
        [-0.5, 0.0, 0.5, 0.5],
        [1.0, 0.6, 0.6, -0.5],
    ]
)


# ---------------------------------------------------------------------------------------------
# The chapter-3 rated conversation
# ---------------------------------------------------------------------------------------------

#: Probability of a good rating, by kind of state (first turn, after good, after bad) and
#: action (0 answer, 1 clarify).
P_GOOD = np.array([[0.6, 0.4], [0.8, 0.5], [0.3, 0.7]])
#: The chapter's policy, by kind of state.
POLICY_BY_KIND = np.array([[0.5, 0.5], [0.8, 0.2], [0.4, 0.6]])


def conversation_state(turn, previous_good):
    """0 for the first turn; 2t - 1 / 2t for turn t after a good / bad rating."""
    return 0 if turn == 0 else 2 * turn - (1 if previous_good else 0)


def conversation_kind(turn, previous_good):
    """0 on the first turn, 1 after a good rating, 2 after a bad one."""
    return 0 if turn == 0 else (1 if previous_good else 2)


def conversation_logits(num_turns, policy_by_kind=POLICY_BY_KIND):
    """Logits of the chapter's policy: log π of each state's kind; terminal rows zero."""
    logits = np.zeros((2 * num_turns + 1, 2))
    logits[0] = np.log(policy_by_kind[0])
    for turn in range(1, num_turns):
        for good in (True, False):
            logits[conversation_state(turn, good)] = np.log(
                policy_by_kind[conversation_kind(turn, good)]
            )
    return logits


def conversation_mdp(num_turns, p_good=P_GOOD):
    """The conversation in the library's tabular format: (transition, reward, terminal, initial).

    States 0 .. 2N; a good rating pays 1; the last two states (after the last turn) are
    terminal and absorbing.
    """
    num_states = 2 * num_turns + 1
    transition = np.zeros((num_states, 2, num_states))
    reward = np.zeros_like(transition)
    for turn in range(num_turns):
        for previous in [None] if turn == 0 else [True, False]:
            state, kind = conversation_state(turn, previous), conversation_kind(turn, previous)
            good, bad = 2 * turn + 1, 2 * turn + 2
            transition[state, :, good] = p_good[kind]
            transition[state, :, bad] = 1.0 - p_good[kind]
            reward[state, :, good] = 1.0
    terminal = np.arange(num_states) >= num_states - 2
    for state in np.flatnonzero(terminal):
        transition[state, :, state] = 1.0
    return transition, reward, terminal, np.eye(num_states)[0]


def enumerate_conversations(num_turns, logits, p_good=P_GOOD):
    """Every conversation, by hand: a list of (probability, states, actions, rewards)."""
    policy = softmax_rows(logits)
    listed = []
    for steps in itertools.product(itertools.product((0, 1), (True, False)), repeat=num_turns):
        probability, states, previous = 1.0, [], None
        for turn, (action, good) in enumerate(steps):
            state = conversation_state(turn, previous)
            p = p_good[conversation_kind(turn, previous), action]
            probability *= policy[state, action] * (p if good else 1.0 - p)
            states.append(state)
            previous = good
        actions = [a for a, _ in steps]
        rewards = [1.0 if g else 0.0 for _, g in steps]
        listed.append((probability, states, actions, rewards))
    return listed


def conversation_arrays(num_turns, logits, p_good=P_GOOD):
    """Every conversation of :func:`enumerate_conversations`, in its order, as arrays:
    (states (n, T + 1), actions (n, T), rewards (n, T), probabilities (n,)).

    Each row of ``states`` ends with the terminal state the last rating leads to: 2T - 1
    (good) or 2T (bad).
    """
    listed = enumerate_conversations(num_turns, logits, p_good)
    states = np.array(
        [[*s, 2 * num_turns - 1 if r[-1] == 1.0 else 2 * num_turns] for _, s, _, r in listed]
    )
    actions = np.array([a for _, _, a, _ in listed])
    rewards = np.array([r for _, _, _, r in listed])
    probabilities = np.array([p for p, *_ in listed])
    return states, actions, rewards, probabilities


def conversation_return(logits, num_turns, gamma=1.0, p_good=P_GOOD):
    """J(θ) by backward induction over (turn, previous rating)."""
    policy = softmax_rows(logits)

    @functools.cache
    def value(turn, previous):
        if turn == num_turns:
            return 0.0
        state, kind = conversation_state(turn, previous), conversation_kind(turn, previous)
        total = 0.0
        for action in (0, 1):
            p = p_good[kind, action]
            good = 1.0 + gamma * value(turn + 1, True)
            total += policy[state, action] * (p * good + (1 - p) * gamma * value(turn + 1, False))
        return total

    return value(0, None)


def conversation_values(num_turns, gamma=1.0, logits=None, p_good=P_GOOD):
    """(v, q) of every state by backward induction (terminal states 0)."""
    logits = conversation_logits(num_turns) if logits is None else logits
    policy = softmax_rows(logits)
    v = np.zeros(2 * num_turns + 1)
    q = np.zeros((2 * num_turns + 1, 2))
    for turn in reversed(range(num_turns)):
        for previous in [None] if turn == 0 else [True, False]:
            state, kind = conversation_state(turn, previous), conversation_kind(turn, previous)
            last = turn + 1 == num_turns
            v_good = 0.0 if last else v[conversation_state(turn + 1, True)]
            v_bad = 0.0 if last else v[conversation_state(turn + 1, False)]
            for action in (0, 1):
                p = p_good[kind, action]
                q[state, action] = p * (1.0 + gamma * v_good) + (1 - p) * gamma * v_bad
            v[state] = policy[state] @ q[state]
    return v, q


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


# ---------------------------------------------------------------------------------------------
# Episodes of tabular MDPs, by hand
# ---------------------------------------------------------------------------------------------


def forward_mdp(rng, num_states=4, num_actions=2):
    """A random MDP whose transitions only move to higher states: (transition, reward, policy,
    terminal, initial).

    The last state is terminal and absorbing, so every episode ends within S - 1 steps and an
    enumeration with horizon S - 1 is exact (nothing is truncated). The start distribution puts
    no mass on the terminal state.
    """
    transition = np.zeros((num_states, num_actions, num_states))
    for s in range(num_states - 1):
        transition[s, :, s + 1 :] = rng.dirichlet(np.ones(num_states - 1 - s), size=num_actions)
    transition[-1, :, -1] = 1.0
    reward = rng.normal(size=(num_states, num_actions, num_states))
    reward[-1] = 0.0
    policy = rng.dirichlet(np.ones(num_actions), size=num_states)
    terminal = np.arange(num_states) == num_states - 1
    initial = np.append(rng.dirichlet(np.ones(num_states - 1)), 0.0)
    return transition, reward, policy, terminal, initial


def episodes_by_hand(transition, reward, policy, initial, horizon, terminal=None):
    """Every episode of positive probability, by recursion: a list of
    (probability, states, actions, rewards) tuples, each episode ending when it enters a
    terminal state or after ``horizon`` steps."""
    num_states, num_actions, _ = np.shape(transition)
    terminal = np.zeros(num_states, bool) if terminal is None else np.asarray(terminal, bool)
    listed = []

    def grow(probability, states, actions, rewards):
        here = states[-1]
        if terminal[here] or len(actions) == horizon:
            listed.append((probability, tuple(states), tuple(actions), tuple(rewards)))
            return
        for a in range(num_actions):
            for there in range(num_states):
                p = policy[here][a] * transition[here][a][there]
                if p > 0.0:
                    grow(
                        probability * p,
                        [*states, there],
                        [*actions, a],
                        [*rewards, float(reward[here][a][there])],
                    )

    for s in range(num_states):
        if initial[s] > 0.0:
            grow(float(initial[s]), [s], [], [])
    return listed


def padded_episodes_by_hand(transition, reward, policy, initial, horizon, terminal=None):
    """The episodes of :func:`episodes_by_hand`, in its order, as padded arrays:
    (states (n, H + 1), actions (n, H), rewards (n, H), running (n,), probabilities (n,)).

    After an episode's end its last state is repeated, its actions are -1 and its rewards 0;
    ``running`` marks the episodes still going after H steps (cut by the horizon, last state
    not terminal).
    """
    num_states = np.shape(transition)[0]
    terminal = np.zeros(num_states, bool) if terminal is None else np.asarray(terminal, bool)
    listed = episodes_by_hand(transition, reward, policy, initial, horizon, terminal)
    count = len(listed)
    states = np.zeros((count, horizon + 1), dtype=int)
    actions = np.full((count, horizon), -1)
    rewards = np.zeros((count, horizon))
    for i, (_, s, a, r) in enumerate(listed):
        states[i] = [*s] + [s[-1]] * (horizon + 1 - len(s))
        actions[i, : len(a)] = a
        rewards[i, : len(r)] = r
    running = np.array([not terminal[s[-1]] for _, s, _, _ in listed])
    probabilities = np.array([p for p, *_ in listed])
    return states, actions, rewards, running, probabilities


def log_probability_by_hand(logits, transition, initial, states, actions):
    """log ρ0(s_0) + Σ_t [log π(a_t | s_t) + log P(s_{t+1} | s_t, a_t)] over the steps before
    the first -1 action, with the softmax written out."""
    policy = softmax_rows(logits)
    total = float(np.log(initial[states[0]]))
    for t, a in enumerate(actions):
        if a < 0:
            break
        total += float(np.log(policy[states[t], a]))
        total += float(np.log(transition[states[t], a, states[t + 1]]))
    return total


def reinforce_by_hand(
    logits,
    states,
    actions,
    rewards,
    gamma,
    reward_to_go=True,
    baseline=None,
    keep_discount=True,
    step_baseline=None,
):
    """One episode's REINFORCE estimate Σ_t w_t (e_{s_t} ⊗ (e_{a_t} - π(· | s_t))), shape (S, A),
    by explicit loops, with π the softmax of ``logits`` (one row per state, :func:`softmax_rows`).

    Steps whose action is -1 (padding after the end) are skipped: no score and no reward.
    ``states`` may end with the final state s_T, which is not used. With the reward to go
    G_t = Σ_{k>=t} γ^(k - t) r_k and d_t = γ^t (d_t = 1 if not ``keep_discount``), the weight
    is w_t = d_t G_t with ``reward_to_go``, else the total return G_0 at every step; a
    ``baseline`` b(s) (one number per state) or a ``step_baseline`` b_t (one per step, for a
    baseline that is not a function of the state alone) is subtracted as d_t b.
    """
    policy = softmax_rows(logits)
    num_actions = policy.shape[1]
    steps = [t for t in range(len(actions)) if actions[t] >= 0]
    total = sum(gamma**k * float(rewards[k]) for k in steps)
    result = np.zeros(policy.shape)
    for t in steps:
        discount = gamma**t if keep_discount else 1.0
        if reward_to_go:
            to_go = sum(gamma ** (k - t) * float(rewards[k]) for k in steps if k >= t)
            weight = discount * to_go
        else:
            weight = total
        if baseline is not None:
            weight -= discount * float(baseline[states[t]])
        if step_baseline is not None:
            weight -= discount * float(step_baseline[t])
        s, a = states[t], actions[t]
        for b in range(num_actions):
            result[s, b] += weight * ((1.0 if b == a else 0.0) - policy[s, b])
    return result


# ---------------------------------------------------------------------------------------------
# Chapter 4's tasks
# ---------------------------------------------------------------------------------------------
# The chapter's claims (test_chapter04_claims.py) and the numbers of its solutions page
# (test_solutions_ch04.py) are recomputed on the same tasks: they are built here once.


class SolvedTask(NamedTuple):
    """A tabular task under a fixed policy, with its exact solution by linear solves.

    ``values`` and ``p_pi`` are v_π (0 at terminal states) and P_π from
    :func:`linear_solve_values`; ``advantages`` is A(s, a) = Σ_s' P(s' | s, a)
    (r(s, a, s') + γ v(s')) - v(s); ``occupancy`` is the discounted visit distribution
    d = Σ_t γ^t Pr(s_t = ·) from ``initial``, solved on the live states (0 at terminal ones).
    """

    transition: np.ndarray
    reward: np.ndarray
    terminal: np.ndarray
    policy: np.ndarray
    initial: np.ndarray
    gamma: float
    values: np.ndarray
    p_pi: np.ndarray
    advantages: np.ndarray
    occupancy: np.ndarray

    @property
    def live(self):
        return ~self.terminal

    def td_bias(self, error):
        """eq-td-critic-bias, (S, A): the mean TD error of the critic v_π + error exceeds the
        advantage by γ E[error(s') | s, a] - error(s)."""
        return self.gamma * np.einsum("sat,t->sa", self.transition, error) - error[:, None]

    def expected_update(self, mean_advantage):
        """d(s) π(a|s) (Ā(s, a) - Σ_a' π(a'|s) Ā(s, a')) on the live states: the expected
        policy-gradient update when the advantage estimate of (s, a) averages Ā(s, a)."""
        centered = mean_advantage - np.sum(self.policy * mean_advantage, axis=1, keepdims=True)
        return (self.occupancy[:, None] * self.policy * centered)[self.live]


def solved_task(transition, reward, terminal, policy, initial, gamma):
    """The :class:`SolvedTask` of a model, a policy, a start distribution and γ; its arrays
    are read-only copies (the task is shared by several test files)."""
    values, p_pi = linear_solve_values(transition, reward, policy, gamma, terminal)
    advantages = np.einsum("sat,sat->sa", transition, reward + gamma * values) - values[:, None]
    live = ~terminal
    occupancy = np.zeros(len(terminal))
    occupancy[live] = np.linalg.solve(
        (np.eye(live.sum()) - gamma * p_pi[np.ix_(live, live)]).T, initial[live]
    )
    arrays = (transition, reward, terminal, policy, initial, values, p_pi, advantages, occupancy)
    transition, reward, terminal, policy, initial, values, p_pi, advantages, occupancy = (
        _read_only(array) for array in arrays
    )
    return SolvedTask(
        transition, reward, terminal, policy, initial, gamma, values, p_pi, advantages, occupancy
    )


# The submit-or-work task: a draft is revised and tested, or submitted and passes or fails.
DRAFT, REVISED, TESTED, PASSED, FAILED = range(5)
SUBMIT, WORK = 0, 1


def submit_or_work():
    """The chapter's task and policy: (transition, reward, terminal, policy).

    Submitting passes with probability 0.2, 0.5, 0.9 from the draft, the revised and the
    tested state, and a pass pays 1. Working costs 0.05: it revises the draft with probability
    0.9 and tests the revised one with 0.8 (else the state stays), and from the tested state it
    stays with probability 0.7 or fails. Passed and failed are terminal and absorbing.
    """
    transition = np.zeros((5, 2, 5))
    reward = np.zeros((5, 2, 5))
    for state, p_pass in [(DRAFT, 0.2), (REVISED, 0.5), (TESTED, 0.9)]:
        transition[state, SUBMIT, [PASSED, FAILED]] = [p_pass, 1.0 - p_pass]
    transition[DRAFT, WORK, [REVISED, DRAFT]] = [0.9, 0.1]
    transition[REVISED, WORK, [TESTED, REVISED]] = [0.8, 0.2]
    transition[TESTED, WORK, [TESTED, FAILED]] = [0.7, 0.3]
    transition[[PASSED, FAILED], :, [PASSED, FAILED]] = 1.0
    reward[:, SUBMIT, PASSED] = 1.0
    reward[[DRAFT, REVISED, TESTED], WORK, :] = -0.05
    terminal = np.array([False, False, False, True, True])
    policy = np.array([[0.3, 0.7], [0.5, 0.5], [0.6, 0.4], [0.5, 0.5], [0.5, 0.5]])
    return transition, reward, terminal, policy


#: The submit-or-work task from the draft, undiscounted, solved.
SUBMIT_OR_WORK = solved_task(*submit_or_work(), np.eye(5)[DRAFT], 1.0)

# The task without an end: a hub with quick replies or jobs that keep the agent busy.
HUB, BUSY = 0, 1
QUICK, START = 0, 1
JOB_GAMMA, JOB_LAM = 0.97, 0.95


def job_task():
    """The job task and its policy: (transition, reward, policy); no state is terminal.

    At the hub a quick reply pays 0.5 and stays; starting a job moves to busy, which returns
    to the hub with probability 1/6 a step and then pays 5.6. The policy starts a job half
    the time at the hub.
    """
    transition = np.zeros((2, 2, 2))
    reward = np.zeros((2, 2, 2))
    transition[HUB, QUICK, HUB] = 1.0
    reward[HUB, QUICK, HUB] = 0.5
    transition[HUB, START, BUSY] = 1.0
    transition[BUSY, :, HUB] = 1 / 6
    transition[BUSY, :, BUSY] = 5 / 6
    reward[BUSY, :, HUB] = 5.6
    policy = np.array([[0.5, 0.5], [1.0, 0.0]])
    return transition, reward, policy


_job_transition, _job_reward, _job_policy = job_task()
#: The job task from the hub, γ = 0.97, solved.
JOB = solved_task(
    _job_transition, _job_reward, np.zeros(2, dtype=bool), _job_policy, np.eye(2)[HUB], JOB_GAMMA
)


def hub_preference(estimates, weights, now, actions):
    """E[Â | hub, start] - E[Â | hub, quick] on the job task: the weighted mean of the
    advantage estimates over the visits of the hub where each action was taken (all arrays
    (n, H): estimates, weights, states and actions of every step)."""
    at_hub = now == HUB
    means = [
        np.sum((weights * estimates)[at_hub & (actions == a)])
        / np.sum(weights[at_hub & (actions == a)])
        for a in (QUICK, START)
    ]
    return means[1] - means[0]


def trained_state_only_critic(horizon, lam, marked_terminal):
    """A state-only critic regressed on its own λ-return targets over every window of
    ``horizon`` steps of the job task from the hub: (the critic at its exact fixed point,
    the preference :func:`hub_preference` it implies).

    The windows are every episode of :func:`padded_episodes_by_hand`, the targets
    :func:`window_gae` plus the critic. The refit V -> c + M V is affine in V, so the fixed
    point solves (I - M) V = c.
    """
    states, actions, rewards, _, probs = padded_episodes_by_hand(
        JOB.transition, JOB.reward, JOB.policy, JOB.initial, horizon, JOB.terminal
    )
    weights = np.repeat(probs[:, None], horizon, axis=1)
    now, after = states[:, :-1], states[:, 1:]

    def refit(critic):
        targets = window_gae(rewards, critic[now], critic[after], JOB_GAMMA, lam, marked_terminal)
        targets = targets + critic[now]
        return np.array(
            [np.sum((weights * targets)[now == s]) / np.sum(weights[now == s]) for s in (HUB, BUSY)]
        )

    offset = refit(np.zeros(2))
    slope = np.column_stack([refit(np.eye(2)[i]) - offset for i in range(2)])
    critic = np.linalg.solve(np.eye(2) - slope, offset)
    assert np.allclose(refit(critic), critic, atol=1e-10)  # a fixed point of the regression
    estimates = window_gae(rewards, critic[now], critic[after], JOB_GAMMA, lam, marked_terminal)
    return critic, hub_preference(estimates, weights, now, actions)


# The 2 + 2 token task: tokens "4", "5" and "."; a response earns 1 if it starts with "4" and
# ends with ".".
FOUR, FIVE, STOP = range(3)
#: The bigram policy's probabilities: row = previous token (4, 5, ., then the start row).
TOKEN_BIGRAM = _read_only([[0.3, 0.3, 0.4], [0.3, 0.3, 0.4], [0.2, 0.2, 0.6], [0.5, 0.4, 0.1]])
BEGIN = 3


def token_task(length, probs_table=TOKEN_BIGRAM):
    """Every response of ``length`` tokens: (responses (n, L), previous (n, L), π(x) as a
    product of bigram probabilities, R(x), prefix_value (n, L + 1)).

    ``previous`` is the bigram row each token used; column k of ``prefix_value`` is v_π of
    the first k tokens (a conditional mean of R over the enumeration), column L R(x) itself.
    """
    responses = np.array(list(itertools.product(range(3), repeat=length)))
    previous = np.column_stack([np.full(len(responses), BEGIN), responses[:, :-1]])
    probs = np.prod(probs_table[previous, responses], axis=1)
    outcome = ((responses[:, 0] == FOUR) & (responses[:, -1] == STOP)).astype(float)
    totals, masses = {}, {}
    for x, p, r in zip(map(tuple, responses), probs, outcome, strict=True):
        for k in range(length + 1):
            totals[x[:k]] = totals.get(x[:k], 0.0) + p * r
            masses[x[:k]] = masses.get(x[:k], 0.0) + p
    prefix_value = np.array(
        [
            [totals[tuple(x[:k])] / masses[tuple(x[:k])] for k in range(length + 1)]
            for x in responses
        ]
    )
    return responses, previous, probs, outcome, prefix_value


def token_response_gradients(responses, previous, credit):
    """g(x) = Σ_j A_j (e_{x_j} - π(· | row)) at the bigram row each token used, by loops,
    with π the softmax of log :data:`TOKEN_BIGRAM`."""
    pi = softmax_rows(np.log(TOKEN_BIGRAM))
    gradients = np.zeros((len(responses), *TOKEN_BIGRAM.shape))
    for i, j in itertools.product(range(len(responses)), range(responses.shape[1])):
        row = previous[i, j]
        gradients[i, row] += credit[i, j] * (np.eye(3)[responses[i, j]] - pi[row])
    return gradients


def token_gradient_variance(responses, previous, probs, credit):
    """(mean, total variance) of :func:`token_response_gradients` over the responses, weighted
    by their probabilities."""
    gradients = token_response_gradients(responses, previous, credit)
    mean = np.einsum("n,nij->ij", probs, gradients)
    return mean, probs @ np.sum((gradients - mean) ** 2, axis=(1, 2))


# ---------------------------------------------------------------------------------------------
# Chapter 8: loss normalization
# ---------------------------------------------------------------------------------------------

REDUCTION_MODES = (
    "token-mean",
    "seq-mean-token-mean",
    "seq-mean-token-sum",
    "seq-mean-token-sum-norm",
    "dr-grpo",
)


def selected_tokens(loss, mask):
    """The losses each row's mask selects, one Python list per row, in position order."""
    return [
        [float(loss[i][j]) for j in range(len(mask[i])) if mask[i][j]] for i in range(len(mask))
    ]


def reduce_by_loops(loss, mask, mode, max_length=None, empty_rows="count"):
    """The five reductions of chapter 8 from their definitions, with Python sums over lists.

    Rows without tokens count as sequences of loss 0 (``empty_rows="count"``) or are left
    out (``"skip"``). Returns None where the definition divides by zero.
    """
    rows = selected_tokens(loss, mask)
    tokens = [x for row in rows for x in row]
    if mode == "token-mean":
        return math.fsum(tokens) / len(tokens) if tokens else None
    if mode == "seq-mean-token-sum-norm":
        return math.fsum(tokens) / max_length
    sequences = rows if empty_rows == "count" else [row for row in rows if row]
    if not sequences:
        return None
    if mode == "seq-mean-token-mean":
        values = [math.fsum(row) / len(row) if row else 0.0 for row in sequences]
    elif mode == "seq-mean-token-sum":
        values = [math.fsum(row) for row in sequences]
    elif mode == "dr-grpo":
        values = [math.fsum(row) / max_length for row in sequences]
    else:
        raise ValueError(mode)
    return math.fsum(values) / len(values)


def hierarchical_by_loops(loss, mask, turn_ids=None, task_ids=None):
    """Mean over turns' token means, then over a task's trajectories, then over tasks, with
    dictionaries keyed by the labels (turns, trajectories or tasks without tokens left out).
    Returns None when the mask selects nothing."""
    by_task = {}
    for i in range(len(mask)):
        turns = {}
        for j in range(len(mask[i])):
            if mask[i][j]:
                turn = 0 if turn_ids is None else int(turn_ids[i][j])
                turns.setdefault(turn, []).append(float(loss[i][j]))
        if turns:
            task = i if task_ids is None else int(task_ids[i])
            turn_means = [math.fsum(v) / len(v) for v in turns.values()]
            by_task.setdefault(task, []).append(math.fsum(turn_means) / len(turn_means))
    if not by_task:
        return None
    return math.fsum(math.fsum(v) / len(v) for v in by_task.values()) / len(by_task)


def pack_sequences(sequences, row_of, num_rows, length, gap=0, offset=0, fill=math.nan):
    """Place token-loss sequences into rows: sequence k goes to row ``row_of[k]``, after the
    sequences placed there before it, ``gap`` masked positions apart, the first one after
    ``offset`` masked positions; every other position is masked and holds ``fill``."""
    loss = np.full((num_rows, length), fill)
    mask = np.zeros((num_rows, length), dtype=bool)
    cursor = [offset] * num_rows
    for sequence, row in zip(sequences, row_of, strict=True):
        start = cursor[row]
        loss[row, start : start + len(sequence)] = sequence
        mask[row, start : start + len(sequence)] = True
        cursor[row] = start + len(sequence) + gap
    return loss, mask


def first_token_weight_by_hand(lengths, mode, max_length):
    """The weight chapter 8's reductions give the first token of each response of a group,
    from the definitions: 1/Σ L, 1/(N L_i), 1/N, 1/L_max, 1/(N L_max)."""
    group = len(lengths)
    return [
        {
            "token-mean": 1.0 / sum(lengths),
            "seq-mean-token-mean": 1.0 / (group * length),
            "seq-mean-token-sum": 1.0 / group,
            "seq-mean-token-sum-norm": 1.0 / max_length,
            "dr-grpo": 1.0 / (group * max_length),
        }[mode]
        for length in lengths
    ]


def style_update_by_enumeration(probs, lengths, correct, group_size, mode, max_length):
    """Exact expected update of the logits of a response style under one reduction.

    A group of ``group_size`` responses; each picks a style s with probability probs[s] with
    its first token (the style fixes its length lengths[s]) and is correct with probability
    correct[s]. The per-token loss is -A_i log π(x_ij) with the leave-one-out advantage A_i
    copied to every token; only the first token depends on the style logits, with score
    e_s - π. Every style tuple and every outcome tuple is enumerated.
    """
    num_styles = len(probs)
    expected = np.zeros(num_styles)
    for styles in itertools.product(range(num_styles), repeat=group_size):
        p_styles = math.prod(probs[s] for s in styles)
        weights = first_token_weight_by_hand([lengths[s] for s in styles], mode, max_length)
        for outcome in itertools.product((0.0, 1.0), repeat=group_size):
            p_outcome = math.prod(
                correct[s] if o else 1.0 - correct[s] for s, o in zip(styles, outcome, strict=True)
            )
            total = sum(outcome)
            for i, s in enumerate(styles):
                advantage = outcome[i] - (total - outcome[i]) / (group_size - 1)
                score = np.eye(num_styles)[s] - np.asarray(probs)
                expected += p_styles * p_outcome * advantage * weights[i] * score
    return expected


# ---------------------------------------------------------------------------------------------
# --- Chapter 6: KL regularization
# ---------------------------------------------------------------------------------------------

#: The running example of chapter 6: five responses A-E, the reference and their rewards.
KL_REF_PROBS = _read_only([0.4, 0.3, 0.15, 0.1, 0.05])
KL_REWARDS = _read_only([0.0, 0.2, 0.5, 0.3, 1.0])


def kl_by_hand(p, q):
    """Σ_x p(x) log(p(x) / q(x)) by a loop with math.log; 0 log(0 / q) = 0, inf if q = 0 < p."""
    total = 0.0
    for px, qx in zip(np.asarray(p, float).ravel(), np.asarray(q, float).ravel(), strict=True):
        if px == 0.0:
            continue
        if qx == 0.0:
            return math.inf
        total += px * math.log(px / qx)
    return total


def tilted_by_hand(ref, rewards, beta):
    """π*(x) = ref(x) exp(R(x)/β) / Z, term by term with math.exp (rewards shifted by max R)."""
    top = max(rewards)
    weights = [r * math.exp((x - top) / beta) for r, x in zip(ref, rewards, strict=True)]
    total = sum(weights)
    return np.array([w / total for w in weights])


def think_then_answer(max_len=8, p_answer=0.5, base=0.7):
    """Chapter 6's length toy: lengths 1..H, P(correct | L) = 1 - base^L, and the reference's
    P(L) when it answers with probability p_answer at every step and must answer at step H."""
    lengths = np.arange(1, max_len + 1)
    correct = np.array([1.0 - base**n for n in lengths])
    ref = np.array([p_answer * (1.0 - p_answer) ** (n - 1) for n in lengths])
    ref[-1] = (1.0 - p_answer) ** (max_len - 1)
    return lengths, correct, ref


def two_turn_search(p_found, beta=0.5):
    """Chapter 6's two-turn task: the regularized optimum by backward induction, by hand.

    Turn 1: SEARCH (0) or GUESS (1); a search finds the document with probability p_found.
    Turn 2: ANSWER (0) or ASK (1); rewards [found, not found, guess] x [answer, ask] below. The
    reference is uniform at both turns. Returns (turn-1 policy, turn-2 policy per history,
    the value at the start, the turn-2 values) with V(h) = β log Σ_a ½ exp(Q(h, a)/β).
    """
    reward = [[1.0, 0.4], [0.0, 0.4], [0.5, 0.4]]

    def soft(qs):
        value = beta * math.log(sum(0.5 * math.exp(q / beta) for q in qs))
        return value, [0.5 * math.exp((q - value) / beta) for q in qs]

    v2, pol2 = zip(*(soft(reward[h]) for h in range(3)), strict=True)
    q1 = [p_found * v2[0] + (1.0 - p_found) * v2[1], v2[2]]
    v1, pol1 = soft(q1)
    return np.array(pol1), np.array(pol2), v1, np.array(v2)


# ---------------------------------------------------------------------------------------------
# Chapter 9: optimal values by brute force, option models by propagation, the chapter's tasks
# ---------------------------------------------------------------------------------------------
# Shared by tests/library/test_mdp.py (value iteration), tests/library/test_credit.py, the
# chapter's claims (test_chapter09_claims.py) and its solutions page (test_solutions_ch09.py).


def optimal_values_by_enumeration(transition, reward, gamma, terminal):
    """(v*, q*) by evaluating every deterministic policy with a linear solve.

    v*(s) is the largest v_π(s) over the A^L deterministic policies (one optimal policy is
    best in every state at once), and q*(s, a) = Σ_s' P(s' | s, a) (R(s, a, s') + γ v*(s')),
    0 in terminal states. With γ = 1 every policy must reach a terminal state with
    probability 1 (for instance, every entry of ``transition`` positive).
    """
    transition = np.asarray(transition, dtype=np.float64)
    reward = np.asarray(reward, dtype=np.float64)
    terminal = np.asarray(terminal, dtype=bool)
    num_states, num_actions, _ = transition.shape
    live = np.flatnonzero(~terminal)
    best = np.full(num_states, -np.inf)
    best[terminal] = 0.0
    for choice in itertools.product(range(num_actions), repeat=live.size):
        policy = np.zeros((num_states, num_actions))
        policy[terminal, 0] = 1.0
        policy[live, list(choice)] = 1.0
        values, _ = linear_solve_values(transition, reward, policy, gamma, terminal)
        best = np.maximum(best, values)
    q = np.einsum("sat,sat->sa", transition, reward + gamma * best)
    q[terminal] = 0.0
    return best, q


def option_model_by_propagation(
    transition, reward, policy, termination, gamma, terminal, tol=1e-14
):
    """(R_o, M_o) of an option by pushing probability mass forward step by step.

    From each start state, the mass that is still running is moved one step with the option's
    policy; the discounted reward of the step is collected, and the mass that arrives in a
    state where the option stops (with probability β there, always at a terminal state) is
    added to M_o with weight γ^k. Stops when the running mass times γ^k is below ``tol``.
    """
    transition = np.asarray(transition, dtype=np.float64)
    num_states = transition.shape[0]
    stops = np.where(terminal, 1.0, np.asarray(termination, dtype=np.float64))
    option_reward = np.zeros(num_states)
    option_transition = np.zeros((num_states, num_states))
    for start in range(num_states):
        if terminal[start]:
            continue
        running = np.zeros(num_states)
        running[start] = 1.0
        discount = 1.0
        while running.sum() * discount > tol:
            arrived = np.zeros(num_states)
            for s in np.flatnonzero(running):
                for a in range(transition.shape[1]):
                    for x in range(num_states):
                        mass = running[s] * policy[s, a] * transition[s, a, x]
                        option_reward[start] += discount * mass * reward[s, a, x]
                        arrived[x] += mass
            discount *= gamma
            option_transition[start] += discount * arrived * stops
            running = arrived * (1.0 - stops)
    return option_reward, option_transition


# The tool-use episode: T turns; at every turn the agent calls the tool (0) or writes text
# (1); the first call puts the tool's result in the context (flag f = 1) for good. After the
# last turn the task succeeds (reward 1) with probability 0.2 without the result, 0.9 with it.
TOOL, TEXT, CLAIM = 0, 1, 2


def tool_task(num_turns=4, p_success=(0.2, 0.9), first=0.5, later=0.25, again=0.1, actions=2):
    """(transition, reward, terminal, policy) of the tool-use episode.

    State 2t + f is turn t with flag f; states 2T and 2T + 1 are success and failure
    (terminal). The policy calls the tool with probability ``first`` at turn 0, ``later`` at a
    later turn without the result, ``again`` once the result is there. With ``actions=3`` a
    third action, CLAIM (text that says the result was verified), behaves like TEXT, and the
    policy is uniform.
    """
    success, failure = 2 * num_turns, 2 * num_turns + 1
    size = 2 * num_turns + 2
    transition = np.zeros((size, actions, size))
    reward = np.zeros((size, actions, size))
    for t in range(num_turns):
        for flag in (0, 1):
            for a in range(actions):
                after = 1 if (flag == 1 or a == TOOL) else 0
                here = 2 * t + flag
                if t + 1 < num_turns:
                    transition[here, a, 2 * (t + 1) + after] = 1.0
                else:
                    transition[here, a, success] = p_success[after]
                    transition[here, a, failure] = 1.0 - p_success[after]
                    reward[here, a, success] = 1.0
    terminal = np.zeros(size, dtype=bool)
    terminal[[success, failure]] = True
    policy = np.full((size, actions), 1.0 / actions)
    if actions == 2:
        for t in range(num_turns):
            p = first if t == 0 else later
            policy[2 * t] = [p, 1.0 - p]
            policy[2 * t + 1] = [again, 1.0 - again]
    return transition, reward, terminal, policy


# The debugging task of the shaping section: locate the bug, patch it, test and submit.
DEBUG_START, DEBUG_LOCATED, DEBUG_PATCHED, DEBUG_PASS, DEBUG_FAIL = range(5)
ADVANCE, BACK, SUBMIT_NOW = range(3)


def debug_task():
    """(transition, reward, terminal): the shaping section's task.

    ADVANCE locates the bug (0.8, else stays), writes the patch (0.7, else stays), or tests
    and submits (pass 0.9); BACK returns to the previous stage (stays at the start); SUBMIT_NOW
    submits at once (pass 0.05, 0.2, 0.6 from the three stages). A pass pays 1.
    """
    transition = np.zeros((5, 3, 5))
    reward = np.zeros((5, 3, 5))
    transition[DEBUG_START, ADVANCE, [DEBUG_LOCATED, DEBUG_START]] = [0.8, 0.2]
    transition[DEBUG_LOCATED, ADVANCE, [DEBUG_PATCHED, DEBUG_LOCATED]] = [0.7, 0.3]
    transition[DEBUG_PATCHED, ADVANCE, [DEBUG_PASS, DEBUG_FAIL]] = [0.9, 0.1]
    transition[DEBUG_START, BACK, DEBUG_START] = 1.0
    transition[DEBUG_LOCATED, BACK, DEBUG_START] = 1.0
    transition[DEBUG_PATCHED, BACK, DEBUG_LOCATED] = 1.0
    for state, p_pass in [(DEBUG_START, 0.05), (DEBUG_LOCATED, 0.2), (DEBUG_PATCHED, 0.6)]:
        transition[state, SUBMIT_NOW, [DEBUG_PASS, DEBUG_FAIL]] = [p_pass, 1.0 - p_pass]
    reward[:3, :, DEBUG_PASS] = 1.0
    terminal = np.array([False, False, False, True, True])
    return transition, reward, terminal


def stage_task(num_stages=3, num_actions=6, p_advance=0.5):
    """(transition, reward, terminal) of the hierarchy section's task.

    Stage i (states 0..n-1) is finished by action i with probability ``p_advance`` per try;
    every other action leaves the stage unchanged. Finishing the last stage enters the
    terminal state n and pays 1.
    """
    size = num_stages + 1
    transition = np.zeros((size, num_actions, size))
    reward = np.zeros((size, num_actions, size))
    for stage in range(num_stages):
        for a in range(num_actions):
            if a == stage:
                transition[stage, a, stage + 1] = p_advance
                transition[stage, a, stage] = 1.0 - p_advance
            else:
                transition[stage, a, stage] = 1.0
    reward[num_stages - 1, num_stages - 1, num_stages] = 1.0
    terminal = np.zeros(size, dtype=bool)
    terminal[num_stages] = True
    return transition, reward, terminal


# ---------------------------------------------------------------------------------------------
# --- Chapter 10: Entropy and exploration
# ---------------------------------------------------------------------------------------------

#: Chapter 10's policies over the chapter-2 vocabulary (A, B, space, .; rows as BIGRAM_TABLE):
#: the chatty policy (always "A", then random formatting), the decisive policy (a fair coin
#: between "A" and "B", then full stops) and the habit policy of the constrained-decoding section.
_NEVER = -20.0
CHATTY_TABLE = _read_only([[_NEVER, _NEVER, 0.0, 0.0]] * 4 + [[-_NEVER, _NEVER, _NEVER, _NEVER]])
DECISIVE_TABLE = _read_only([[_NEVER, _NEVER, _NEVER, 0.0]] * 4 + [[0.0, 0.0, _NEVER, _NEVER]])
HABIT_TABLE = _read_only(
    [
        [-2.0, -2.0, 0.5, 1.5],
        [-2.0, -2.0, 0.5, 1.5],
        [1.5, -0.5, 0.0, -1.0],
        [0.5, 0.5, 0.0, -1.0],
        [0.0, 0.0, 1.0, -1.0],
    ]
)
#: Chapter 10's REINFORCE run: letters A, B, C, then space and full stop; rows after A, B, C,
#: space, full stop, then the start row.
COLLAPSE_TABLE = _read_only(
    [
        [-0.5, -0.5, -0.5, 1.0, 1.0],
        [-0.5, -0.5, -0.5, 1.0, 1.0],
        [-0.5, -0.5, -0.5, 1.0, 1.0],
        [0.5, 0.3, 0.8, 0.0, 0.0],
        [0.5, 0.3, 0.8, 0.0, 0.0],
        [0.4, 0.2, 0.6, 0.5, 0.3],
    ]
)


def entropy_by_hand(probs):
    """-Σ p log p of one probability vector by a loop with math.log, skipping zeros."""
    return -sum(p * math.log(p) for p in np.asarray(probs, dtype=float).ravel() if p > 0.0)


def softmax_row_by_hand(row):
    """One softmax, with math.exp after subtracting the largest logit."""
    top = max(row)
    weights = [math.exp(z - top) for z in row]
    total = sum(weights)
    return [w / total for w in weights]


def bigram_by_hand(table, length, allowed=None):
    """Every response of a bigram policy, by loops: (responses, π(x), H(π(· | x_<j)) per position).

    Row v of ``table`` (V + 1 rows) holds the logits after token v, the last row those at the
    start. ``allowed(prefix)``, if given, returns the tokens a constraint allows after ``prefix``
    (a sequence of booleans); the next-token distribution is then renormalized over them.
    """
    table = np.asarray(table, dtype=float)
    vocab = table.shape[1]
    responses, probs, entropies = [], [], []
    for response in itertools.product(range(vocab), repeat=length):
        prob, position_entropies = 1.0, []
        for j, token in enumerate(response):
            row = table[response[j - 1]] if j > 0 else table[vocab]
            dist = softmax_row_by_hand(row)
            if allowed is not None:
                keep = allowed(response[:j])
                dist = [p if k else 0.0 for p, k in zip(dist, keep, strict=True)]
                total = sum(dist)
                dist = [p / total for p in dist]
            prob *= dist[token]
            position_entropies.append(entropy_by_hand(dist))
        responses.append(response)
        probs.append(prob)
        entropies.append(position_entropies)
    return responses, np.array(probs), np.array(entropies)


def first_letter(response, letters):
    """The chapter's parser: the first token below ``letters`` (a letter), or -1."""
    return next((token for token in response if token < letters), -1)


# ---------------------------------------------------------------------------------------------
# --- Chapter 13: the training-batch contract
# ---------------------------------------------------------------------------------------------

CONTRACT_KINDS = ("system", "user", "tool", "policy", "other")


def random_segment_episodes(rng, num_episodes=None, max_turns=4, max_segment=5, refs=False):
    """Random episodes in the contract's format: a context segment first, then 0..max_turns
    turns, each an optional context segment (user, tool or another model) and a policy
    segment with random recorded log-probabilities and a version that may grow between turns;
    rewards per turn; ``ref_logprobs`` on every policy segment when ``refs``."""
    episodes = []
    count = int(rng.integers(1, 5)) if num_episodes is None else num_episodes
    for _ in range(count):
        prompt = rng.integers(1, 30, size=rng.integers(1, 4)).tolist()
        segments = [{"kind": "system", "tokens": prompt}]
        rewards, version = [], int(rng.integers(0, 9))
        for _turn in range(int(rng.integers(0, max_turns + 1))):
            if rng.random() < 0.7:
                kind = str(rng.choice(["user", "tool", "other"]))
                size = int(rng.integers(1, max_segment + 1))
                segments.append({"kind": kind, "tokens": rng.integers(1, 30, size=size).tolist()})
            size = int(rng.integers(1, max_segment + 1))
            version += int(rng.random() < 0.3)
            segment = {
                "kind": "policy",
                "tokens": rng.integers(1, 30, size=size).tolist(),
                "logprobs": (-rng.uniform(0.01, 4.0, size=size)).tolist(),
                "version": version,
            }
            if refs:
                segment["ref_logprobs"] = (-rng.uniform(0.01, 4.0, size=size)).tolist()
            segments.append(segment)
            rewards.append(float(rng.normal()))
        if rng.random() < 0.4:
            segments.append({"kind": "tool", "tokens": rng.integers(1, 30, size=2).tolist()})
        episodes.append({"segments": segments, "rewards": rewards})
    return episodes


def batch_by_loops(episodes, length=None, left=False, pad_id=0):
    """The padded, target-aligned batch of ``episodes`` written token by token with loops.

    Token q of a row sits at column c + q; the prediction of token q (q >= 1) is made at
    column c + q - 1, where the action mask, turn id, old and reference log-probabilities and
    version of token q are written."""
    flat = []
    for episode in episodes:
        tokens, rows = [], []
        turn = 0
        for segment in episode["segments"]:
            policy = segment["kind"] == "policy"
            for q, token in enumerate(segment["tokens"]):
                tokens.append(token)
                rows.append(
                    (
                        policy,
                        turn if policy else -1,
                        segment["logprobs"][q] if policy else 0.0,
                        segment.get("ref_logprobs", [0.0] * (q + 1))[q] if policy else 0.0,
                        segment["version"] if policy else -1,
                    )
                )
            turn += policy
        flat.append((tokens, rows, turn))
    if length is None:
        length = max(2, *(len(tokens) for tokens, _, _ in flat))
    turns = max(1, *(k for _, _, k in flat))
    batch = {
        "input_ids": [[pad_id] * length for _ in flat],
        "attention_mask": [[False] * length for _ in flat],
        "action_mask": [[False] * (length - 1) for _ in flat],
        "old_logprobs": [[0.0] * (length - 1) for _ in flat],
        "ref_logprobs": [[0.0] * (length - 1) for _ in flat],
        "turn_ids": [[-1] * (length - 1) for _ in flat],
        "rewards": [[0.0] * turns for _ in flat],
        "policy_version": [[-1] * (length - 1) for _ in flat],
    }
    for i, (tokens, rows, _) in enumerate(flat):
        start = length - len(tokens) if left else 0
        for q, token in enumerate(tokens):
            batch["input_ids"][i][start + q] = token
            batch["attention_mask"][i][start + q] = True
            if q == 0:
                continue
            policy, turn, logprob, ref, version = rows[q]
            j = start + q - 1
            batch["action_mask"][i][j] = policy
            batch["turn_ids"][i][j] = turn
            batch["old_logprobs"][i][j] = logprob
            batch["ref_logprobs"][i][j] = ref
            batch["policy_version"][i][j] = version
        for k, reward in enumerate(episodes[i]["rewards"]):
            batch["rewards"][i][k] = reward
    return {key: np.array(value) for key, value in batch.items()}


def target_logprobs_by_hand(logits, input_ids):
    """log softmax(logits[i, j])[input_ids[i, j + 1]] for a (B, L, V) array, with math.log."""
    logits = np.asarray(logits, dtype=float)
    out = np.zeros((logits.shape[0], logits.shape[1] - 1))
    for i in range(logits.shape[0]):
        for j in range(logits.shape[1] - 1):
            probs = softmax_row_by_hand(list(logits[i, j]))
            out[i, j] = math.log(probs[int(input_ids[i][j + 1])])
    return out


# ---------------------------------------------------------------------------------------------
# --- Chapter 11: multi-objective and constrained RL
# ---------------------------------------------------------------------------------------------

# The deployment bandit: escalate, test, direct, override.
DEPLOY_SUCCESS = _read_only([0.35, 0.70, 0.85, 0.95])
DEPLOY_TIME = _read_only([0.10, 0.30, 0.10, 0.05])
DEPLOY_VIOLATION = _read_only([0.00, 0.00, 0.04, 0.20])
DEPLOY_UTILITY = _read_only(np.array(DEPLOY_SUCCESS) - 0.5 * np.array(DEPLOY_TIME))

# The two-step agent task: states and actions.
TRIAGE, FIX, DONE, FIX_FAILED, INCIDENT = range(5)
BY_THE_BOOK, SHORTCUT, RISKY = range(3)


def two_step_task(severity=10.0):
    """(transition, reward, cost, terminal, initial) of chapter 11's triage-then-fix task, built
    from a table of outcomes; an incident costs 1 + ``severity``."""
    outcomes = {  # (state, action): ({next state: probability}, time reward, rule broken)
        (TRIAGE, BY_THE_BOOK): ({FIX: 1.0}, -0.10, 0),
        (TRIAGE, SHORTCUT): ({FIX: 1.0}, -0.02, 1),
        (TRIAGE, RISKY): ({DONE: 0.60, FIX: 0.35, INCIDENT: 0.05}, -0.02, 1),
        (FIX, BY_THE_BOOK): ({DONE: 0.75, FIX_FAILED: 0.25}, -0.10, 0),
        (FIX, SHORTCUT): ({DONE: 0.82, FIX_FAILED: 0.18}, -0.02, 1),
        (FIX, RISKY): ({DONE: 0.95, INCIDENT: 0.05}, -0.02, 1),
    }
    transition = np.zeros((5, 3, 5))
    reward = np.zeros((5, 3, 5))
    cost = np.zeros((5, 3, 5))
    for (s, a), (nexts, time_reward, rule) in outcomes.items():
        for t, p in nexts.items():
            transition[s, a, t] = p
            reward[s, a, t] = time_reward + (1.0 if t == DONE else 0.0)
            cost[s, a, t] = rule + (severity if t == INCIDENT else 0.0)
    terminal = np.array([False, False, True, True, True])
    initial = np.array([1.0, 0.0, 0.0, 0.0, 0.0])
    return transition, reward, cost, terminal, initial


def deterministic_policies(num_states, num_actions, terminal):
    """Every deterministic policy as an (S, A) array (terminal rows uniform)."""
    live = np.flatnonzero(~np.asarray(terminal))
    for choice in itertools.product(range(num_actions), repeat=live.size):
        policy = np.full((num_states, num_actions), 1.0 / num_actions)
        for s, a in zip(live, choice, strict=True):
            policy[s] = np.eye(num_actions)[a]
        yield policy


def expected_total(transition, reward, policy, initial, gamma, terminal):
    """p_0 . v_π from :func:`linear_solve_values`."""
    values, _ = linear_solve_values(transition, reward, policy, gamma, np.asarray(terminal))
    return float(np.asarray(initial) @ values)


def occupancy_by_hand(transition, policy, initial, gamma, terminal):
    """d_π(s, a) = d_π(s) π(a | s), d_L^T = p_0,L^T (I - γ P_LL)^{-1} from the loops' P_π."""
    terminal = np.asarray(terminal)
    p_pi, _ = policy_average(transition, np.zeros(transition.shape), policy, terminal)
    live = np.flatnonzero(~terminal)
    state = np.zeros(len(terminal))
    system = np.eye(live.size) - gamma * p_pi[np.ix_(live, live)]
    state[live] = np.linalg.solve(system.T, np.asarray(initial)[live])
    return state[:, None] * policy


def best_mixture_of_two(points, budget):
    """max over pairs of (J_R, J_C) points and mixing weights of the mixture's J_R subject to its
    J_C <= budget, exactly: with one linear constraint the optimum over the convex hull of the
    points is a mixture of at most two of them. Returns -inf when nothing is feasible."""
    best = -math.inf
    for (r1, c1), (r2, c2) in itertools.product(points, repeat=2):
        if c1 <= budget + 1e-12:
            best = max(best, r1)
        if c1 <= budget < c2:  # the largest feasible weight on the second point
            weight = (budget - c1) / (c2 - c1)
            best = max(best, (1 - weight) * r1 + weight * r2)
    return best


def occupancy_lp_by_hand(
    transition, reward, costs, budgets, initial, gamma, terminal, allowed=None
):
    """The occupancy-measure linear program written out with loops and solved by
    scipy.optimize.linprog: returns (J_R*, d* of shape (S, A), the constraint duals ν* >= 0).

    ``costs`` is a list of (S, A, S) arrays and ``budgets`` a list of floats.
    """
    from scipy.optimize import linprog

    num_states, num_actions, _ = transition.shape
    live = [s for s in range(num_states) if not terminal[s]]
    index = {(s, a): i for i, (s, a) in enumerate(itertools.product(live, range(num_actions)))}
    objective = np.zeros(len(index))
    cost_rows = np.zeros((len(costs), len(index)))
    flow = np.zeros((len(live), len(index)))
    for (s, a), i in index.items():
        for t in range(num_states):
            objective[i] -= transition[s, a, t] * reward[s, a, t]
            for k, cost in enumerate(costs):
                cost_rows[k, i] += transition[s, a, t] * cost[s, a, t]
        for row, target in enumerate(live):
            flow[row, i] = (1.0 if s == target else 0.0) - gamma * transition[s, a, target]
    bounds = [
        (0.0, 0.0) if allowed is not None and not allowed[s][a] else (0.0, None) for (s, a) in index
    ]
    result = linprog(
        objective, A_ub=cost_rows, b_ub=budgets, A_eq=flow,
        b_eq=[initial[s] for s in live], bounds=bounds, method="highs",
    )  # fmt: skip
    assert result.status == 0, result.message
    occupancy = np.zeros((num_states, num_actions))
    for (s, a), i in index.items():
        occupancy[s, a] = result.x[i]
    return -result.fun, occupancy, -np.asarray(result.ineqlin.marginals)


def episode_distribution_by_hand(transition, cost, policy, initial, terminal, max_steps=10):
    """{episode cost: probability} by recursion over every path until a terminal state."""
    totals = {}

    def walk(state, probability, total, steps):
        if terminal[state] or steps == max_steps:
            totals[total] = totals.get(total, 0.0) + probability
            return
        for a in range(transition.shape[1]):
            for t in range(transition.shape[2]):
                p = probability * policy[state][a] * transition[state, a, t]
                if p > 0.0:
                    walk(t, p, round(total + cost[state, a, t], 9), steps + 1)

    for s, p in enumerate(initial):
        if p > 0.0:
            walk(s, p, 0.0, 0)
    return totals


# ---------------------------------------------------------------------------------------------
# --- Chapter 14: common category errors
# ---------------------------------------------------------------------------------------------

#: Section 1 and exercise ex-batch-mean-explained: P(pass | prompt, style), rows easy and hard,
#: columns careful and quick; both prompts are drawn with probability 1/2.
CE_PASS_RATES = _read_only([[0.95, 0.85], [0.30, 0.10]])
#: Section 3 and exercise ex-behavior-kl: reference, behavior and current next-token distributions.
CE_REF = _read_only([0.40, 0.30, 0.20, 0.10])
CE_BEHAVIOR = _read_only([0.30, 0.30, 0.25, 0.15])
CE_CURRENT = _read_only([0.10, 0.25, 0.30, 0.35])


def two_prompt_task():
    """(transition, reward, terminal, initial) of the two-prompt batch, built entry by entry:
    states easy, hard, passed, failed; actions careful, quick; a pass pays 1."""
    transition = np.zeros((4, 2, 4))
    reward = np.zeros((4, 2, 4))
    for prompt in range(2):
        for style in range(2):
            rate = float(CE_PASS_RATES[prompt, style])
            transition[prompt, style, 2] = rate
            transition[prompt, style, 3] = 1.0 - rate
            reward[prompt, style, 2] = 1.0
    for end in (2, 3):
        transition[end, :, end] = 1.0
    return transition, reward, np.array([False, False, True, True]), np.array([0.5, 0.5, 0, 0])


def quiz_task(check_cost=0.1, know=0.95, blind_zero=0.8, p_check=0.3):
    """The answer-key quiz of section 6, entry by entry: (transition, reward, terminal, initial,
    policy). States: question with key 0 and 1 (0, 1), answering after a check (2, 3), answering
    blind (4, 5), right (6), wrong (7). At a question action 0 checks (costs ``check_cost``) and
    1 skips; at an answer state action k answers k. After a check the agent answers the key with
    probability ``know``; blind it answers 0 with probability ``blind_zero``."""
    transition = np.zeros((8, 2, 8))
    reward = np.zeros((8, 2, 8))
    policy = np.full((8, 2), 0.5)
    for key in (0, 1):
        question, known, blind = key, 2 + key, 4 + key
        transition[question, 0, known] = 1.0
        reward[question, 0, known] = -check_cost
        transition[question, 1, blind] = 1.0
        policy[question] = [p_check, 1.0 - p_check]
        for answering in (known, blind):
            for answer in (0, 1):
                end = 6 if answer == key else 7
                transition[answering, answer, end] = 1.0
                reward[answering, answer, end] = 1.0 if end == 6 else 0.0
        policy[known] = [know, 1.0 - know] if key == 0 else [1.0 - know, know]
        policy[blind] = [blind_zero, 1.0 - blind_zero]
    for end in (6, 7):
        transition[end, :, end] = 1.0
    terminal = np.array([False] * 6 + [True, True])
    initial = np.array([0.5, 0.5, 0, 0, 0, 0, 0, 0])
    return transition, reward, terminal, initial, policy


# ---------------------------------------------------------------------------------------------
# --- Chapter 11: multi-objective and constrained RL (continued)
# ---------------------------------------------------------------------------------------------


def loss_minimizing_trainer(policy_sign=1.0, multiplier_sign=1.0, steps=3000):
    """Chapter 11's loss-minimizing loop on the deployment bandit (budget 0.01, step sizes 1
    and 10), with the hand-written bandit gradient; a sign of -1 flips the penalty in the
    policy's loss or the multiplier's loss. Returns (multipliers, violation rates), per step."""
    theta, nu, nus, costs = np.zeros(4), 0.0, [], []
    for _ in range(steps):
        j_c = bandit_objective_by_hand(theta, DEPLOY_VIOLATION)
        nu = max(0.0, nu + 10.0 * multiplier_sign * (j_c - 0.01))
        theta = theta + 1.0 * (
            bandit_gradient_by_hand(theta, DEPLOY_UTILITY)
            - policy_sign * nu * bandit_gradient_by_hand(theta, DEPLOY_VIOLATION)
        )
        nus.append(nu)
        costs.append(j_c)
    return np.array(nus), np.array(costs)


def softmax_objective_and_gradient(logits, transition, rewards, initial, gamma, terminal):
    """(J, grad J) of a tabular softmax policy, written out: v from the live states' Bellman
    system, q one step ahead, d from the transposed system, grad J = d(s) pi(a|s) (q - v)."""
    pi = softmax_rows(logits)
    terminal = np.asarray(terminal)
    live = ~terminal
    p_pi = np.einsum("sa,sat->st", pi, transition)[np.ix_(live, live)]
    r_pi = np.einsum("sa,sat,sat->s", pi, transition, rewards)[live]
    system = np.eye(live.sum()) - gamma * p_pi
    values = np.zeros(len(terminal))
    values[live] = np.linalg.solve(system, r_pi)
    q = np.einsum("sat,sat->sa", transition, rewards + gamma * values)
    occupancy = np.zeros(len(terminal))
    occupancy[live] = np.linalg.solve(system.T, np.asarray(initial)[live])
    return float(np.asarray(initial) @ values), occupancy[:, None] * pi * (q - values[:, None])


#: Chapter 13's running example: a vocabulary of words, a coding episode with two turns
#: sampled by policy versions 7 and 8, and an episode whose user is a simulator (another
#: model); shared by the chapter's claims and its solutions page.
CONTRACT_WORDS = (
    "<pad>",
    "<sys>",
    "you",
    "code",
    "<user>",
    "fix",
    "test",
    "<call>",
    "pytest",
    "<out>",
    "1",
    "failed",
    "<patch>",
    "edit",
    "line",
    "<done>",
    "ok",
    "<sim>",
    "thanks",
)


def contract_ids(text):
    """The ids of the words of ``text`` in CONTRACT_WORDS."""
    return [CONTRACT_WORDS.index(word) for word in text.split()]


CONTRACT_CODING = {
    "segments": [
        {"kind": "system", "tokens": contract_ids("<sys> you code")},
        {"kind": "user", "tokens": contract_ids("<user> fix test")},
        {
            "kind": "policy",
            "tokens": contract_ids("<call> pytest"),
            "logprobs": [-0.3, -0.5],
            "version": 7,
        },
        {"kind": "tool", "tokens": contract_ids("<out> 1 failed")},
        {
            "kind": "policy",
            "tokens": contract_ids("<patch> edit line <done>"),
            "logprobs": [-0.9, -1.2, -0.4, -0.1],
            "version": 8,
        },
    ],
    "rewards": [0.0, 1.0],
}
CONTRACT_SIMULATED = {
    "segments": [
        {"kind": "system", "tokens": contract_ids("<sys> you code")},
        {"kind": "other", "tokens": contract_ids("<sim> fix test")},
        {
            "kind": "policy",
            "tokens": contract_ids("<done> ok"),
            "logprobs": [-0.7, -0.05],
            "version": 8,
        },
        {"kind": "other", "tokens": contract_ids("<sim> thanks")},
    ],
    "rewards": [0.0],
}


def episode_tokens(episode):
    """Every token of an episode in the contract's format, in order."""
    return [token for segment in episode["segments"] for token in segment["tokens"]]
