"""Episodes of tabular MDPs by hand: every episode by recursion, as a list or as padded
arrays, log-probabilities, the one-episode REINFORCE estimate."""

from __future__ import annotations

import numpy as np

from tests.oracles.basics import softmax_rows

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
