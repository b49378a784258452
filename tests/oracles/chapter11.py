"""Chapter 11: multi-objective and constrained RL."""

from __future__ import annotations

import itertools
import math

import numpy as np

from tests.oracles.bandits import bandit_gradient_by_hand, bandit_objective_by_hand
from tests.oracles.basics import _read_only, softmax_rows
from tests.oracles.mdps import linear_solve_values, policy_average

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
# --- Chapter 11: multi-objective and constrained RL (continued)
# ---------------------------------------------------------------------------------------------


def loss_minimizing_trainer(policy_sign=1.0, multiplier_sign=1.0, num_steps=3000):
    """Chapter 11's loss-minimizing loop on the deployment bandit (budget 0.01, step sizes 1
    and 10), with the hand-written bandit gradient; a sign of -1 flips the penalty in the
    policy's loss or the multiplier's loss. Returns (multipliers, violation rates), per step."""
    theta, nu, nus, costs = np.zeros(4), 0.0, [], []
    for _ in range(num_steps):
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
