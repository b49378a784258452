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
