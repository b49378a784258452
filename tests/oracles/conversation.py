"""The chapter-3 rated conversation: its arrays, every conversation enumerated by hand,
its values by backward induction."""

from __future__ import annotations

import functools
import itertools

import numpy as np

from tests.oracles.basics import softmax_rows

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
