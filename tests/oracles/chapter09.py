"""Chapter 9: optimal values by brute force, option models by propagation, the chapter's
tasks."""

from __future__ import annotations

import itertools

import numpy as np

from tests.oracles.mdps import linear_solve_values

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
    transition, reward, policy, termination, gamma, terminal, tolerance=1e-14
):
    """(R_o, M_o) of an option by pushing probability mass forward step by step.

    From each start state, the mass that is still running is moved one step with the option's
    policy; the discounted reward of the step is collected, and the mass that arrives in a
    state where the option stops (with probability β there, always at a terminal state) is
    added to M_o with weight γ^k. Stops when the running mass times γ^k is below ``tolerance``.
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
        while running.sum() * discount > tolerance:
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
