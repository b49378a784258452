"""Claims made in chapter 9 (multi-turn credit assignment), recomputed independently.

Each test rebuilds one number, table or figure property that the chapter's text relies on, with
the chapter's own parameters, by a route that shares no code with the library functions the
chapter calls: the tasks are built by tests.oracles (tool_task, debug_task, stage_task), values
by linear solves of the policy-averaged model, optimal values by evaluating every deterministic
policy, episodes enumerated by recursion, the tool-use episode's values for the training curves
by backward induction over its turns, option models by pushing probability mass forward, and
the sampled quantities (the critic fits, the gradient signal-to-noise ratios) by independent
simulations with other seeds and stated tolerances.

Sections: outcome credit (the value table, eq-credit-decomposition, the two episodes,
fig-terminal-credit); turn rewards and shaping (the token example, the milestone loop, the
potentials, the kept terminal potential, eq-shaping-baseline); learned values (the flag-only
critic, the shifted critic); process rewards (fig-process-gap); branching (eq-branch-variance,
the cost table and fig-branch-cost, the lossy snapshot); hierarchical credit (the option model,
eq-smdp-bellman, eq-option-return, the signal-to-noise table, the boundaries).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tests.oracles import (
    ADVANCE,
    BACK,
    CLAIM,
    DEBUG_LOCATED,
    DEBUG_PATCHED,
    DEBUG_START,
    SUBMIT_NOW,
    TEXT,
    TOOL,
    debug_task,
    episodes_by_hand,
    linear_solve_values,
    optimal_values_by_enumeration,
    option_model_by_propagation,
    softmax_rows,
    stage_task,
    tool_task,
)

CHAPTER = Path(__file__).resolve().parents[3] / "chapters" / "09_credit_assignment.md"
TEXT_OF_CHAPTER = " ".join(CHAPTER.read_text(encoding="utf-8").split())

# ---------------------------------------------------------------------------------------------
# The tool-use episode
# ---------------------------------------------------------------------------------------------

TRANSITION, REWARD, TERMINAL, POLICY = tool_task()
LIVE = ~TERMINAL
NUM_STATES = TRANSITION.shape[0]
INITIAL = np.eye(NUM_STATES)[0]
V, P_PI = linear_solve_values(TRANSITION, REWARD, POLICY, 1.0, TERMINAL)
Q = np.einsum("sat,sat->sa", TRANSITION, REWARD + V)
Q[TERMINAL] = 0.0
ADV = Q - V[:, None]
EPISODES = episodes_by_hand(TRANSITION, REWARD, POLICY, INITIAL, 4, TERMINAL)


def state(t, flag):
    return 2 * t + flag


def occupancy_of(policy, transition=TRANSITION, terminal=TERMINAL, initial=INITIAL, gamma=1.0):
    """Discounted visits: d = p0 + γ P_πᵀ d on the live states, by a linear solve."""
    _, p_pi = linear_solve_values(transition, np.zeros(transition.shape), policy, gamma, terminal)
    live = np.flatnonzero(~terminal)
    d = np.zeros(len(terminal))
    d[live] = np.linalg.solve(np.eye(live.size) - gamma * p_pi[np.ix_(live, live)].T, initial[live])
    return d


def expected_update(mean_credit, policy=POLICY, occupancy=None):
    occupancy = occupancy_of(policy) if occupancy is None else occupancy
    centered = mean_credit - np.sum(policy * mean_credit, axis=1, keepdims=True)
    return (occupancy[:, None] * policy * centered)[LIVE]


def test_value_table():
    rows = [
        state(0, 0),
        state(1, 0),
        state(1, 1),
        state(2, 0),
        state(2, 1),
        state(3, 0),
        state(3, 1),
    ]
    np.testing.assert_allclose(V[rows], [0.7523, 0.6047, 0.9, 0.5062, 0.9, 0.375, 0.9], atol=5e-5)
    np.testing.assert_allclose(
        ADV[rows, TOOL], [0.1477, 0.2953, 0.0, 0.3938, 0.0, 0.525, 0.0], atol=5e-5
    )
    np.testing.assert_allclose(
        ADV[rows, TEXT], [-0.1477, -0.0984, 0.0, -0.1312, 0.0, -0.175, 0.0], atol=5e-5
    )
    # "the later the turn, the larger": the tool's advantage without the result grows.
    assert np.all(np.diff(ADV[[state(t, 0) for t in range(4)], TOOL]) > 0)


def credit_moments():
    """Per turn: Var of R - v(s_t), its signal E[A^2] and noise E[(R - q)^2], by enumeration."""
    total, signal, noise = np.zeros(4), np.zeros(4), np.zeros(4)
    for probability, states, actions, rewards in EPISODES:
        outcome = sum(rewards)
        for t in range(4):
            s, a = states[t], actions[t]
            total[t] += probability * (outcome - V[s]) ** 2
            signal[t] += probability * ADV[s, a] ** 2
            noise[t] += probability * (outcome - Q[s, a]) ** 2
    return total, signal, noise


def test_there_are_32_episodes_and_the_credit_is_unbiased_pair_by_pair():
    assert len(EPISODES) == 32
    assert sum(p for p, *_ in EPISODES) == pytest.approx(1.0, abs=1e-12)
    sums, masses = {}, {}
    for probability, states, actions, rewards in EPISODES:
        for t in range(4):
            key = (states[t], actions[t])
            sums[key] = sums.get(key, 0.0) + probability * (sum(rewards) - V[states[t]])
            masses[key] = masses.get(key, 0.0) + probability
    for key, total in sums.items():
        assert total / masses[key] == pytest.approx(ADV[key], abs=1e-12)


@pytest.mark.equation("eq-credit-decomposition")
def test_signal_and_noise_per_turn():
    total, signal, noise = credit_moments()
    np.testing.assert_allclose(total, [0.1863, 0.1645, 0.1500, 0.1306], atol=5e-5)
    np.testing.assert_allclose(signal, [0.0218, 0.0145, 0.0194, 0.0258], atol=5e-5)
    np.testing.assert_allclose(total, signal + noise, atol=1e-12)  # eq-credit-decomposition
    share = signal / total
    np.testing.assert_allclose(share, [0.117, 0.088, 0.129, 0.198], atol=5e-4)
    assert np.all((share > 0.085) & (share < 0.2))  # "only 9% to 20%"
    # Erratum: the text said the share is small at turn 0; it is smallest at turn 1.
    assert share.argmax() == 3 and share.argmin() == 1
    assert "smallest at turn 1 (8.8%, against 11.7% at turn 0)" in TEXT_OF_CHAPTER
    # Why: by turn 1 half of the episodes have the result in context, where every advantage is 0.
    with_result = sum(p for p, states, *_ in EPISODES if states[1] == state(1, 1))
    assert with_result == pytest.approx(0.5) and ADV[state(1, 1)] == pytest.approx([0.0, 0.0])


def test_the_two_episodes():
    path = [state(0, 0), state(1, 1), state(2, 1), state(3, 1)]
    taken = [TOOL, TEXT, TEXT, TEXT]
    np.testing.assert_allclose(
        [ADV[s, a] for s, a in zip(path, taken, strict=True)], [0.1477, 0, 0, 0], atol=5e-5
    )
    np.testing.assert_allclose(1.0 - V[path], [0.2477, 0.1, 0.1, 0.1], atol=5e-5)
    np.testing.assert_allclose(0.0 - V[path], [-0.7523, -0.9, -0.9, -0.9], atol=5e-5)
    assert -V[path[0]] == pytest.approx(-0.75, abs=0.005)  # "a credit of about -0.75"


# ---------------------------------------------------------------------------------------------
# Rewards after every turn; shaping
# ---------------------------------------------------------------------------------------------


def test_the_token_example():
    turn_rewards = [0.3, 0.0, 1.0]
    ids = [0, 0, 0, -1, -1, 1, 1, -1, 2, 2]
    to_go = [sum(turn_rewards[j:]) for j in range(3)]
    per_token = [to_go[k] if k >= 0 else 0.0 for k in ids]
    np.testing.assert_allclose(per_token, [1.3, 1.3, 1.3, 0, 0, 1, 1, 0, 1, 1])
    summed = [1.3 if k >= 0 else 0.0 for k in ids]
    assert summed[5] == pytest.approx(1.3)  # later turns carry turn 0's 0.3 when summed


def test_dropping_earlier_rewards_can_add_variance():
    # Erratum: the text said dropping turn 0's reward from the later turns' credit removes "only
    # noise". One softmax decision (pass with probability p if it takes action 0) after a fixed
    # cost c: the total return scores G - c, the reward-to-go G; exact moments over 2 outcomes.
    p = 0.3
    score = {0: np.array([1 - p, -(1 - p)]), 1: np.array([-p, p])}
    outcomes = [(p, 0, 1.0), (1 - p, 1, 0.0)]  # (probability, action, reward of the decision)

    def total_variance(cost):
        terms = [(w, (g - cost) * score[a]) for w, a, g in outcomes]
        mean = sum(w * x for w, x in terms)
        return sum(w * np.sum((x - mean) ** 2) for w, x in terms)

    norms = {a: float(np.sum(s**2)) for a, s in score.items()}
    b_star = sum(w * g * norms[a] for w, a, g in outcomes) / sum(
        w * norms[a] for w, a, _ in outcomes
    )
    kept = total_variance(0.0)
    for cost in (0.1, b_star, 1.9 * b_star):
        assert total_variance(cost) < kept  # the cost was a useful baseline: dropping it hurts
    for cost in (-0.2, 2.1 * b_star):
        assert total_variance(cost) > kept
    # The general condition: dropping D from X + D helps iff Var(D) + 2 Cov(X, D) > 0.
    for cost in (-0.2, 0.1, 2.1 * b_star):
        x = [(w, g * score[a]) for w, a, g in outcomes]
        d = [(w, -cost * score[a]) for w, a, _ in outcomes]
        var_d = sum(w * np.sum(v**2) for w, v in d)
        mean_x = sum(w * v for w, v in x)
        cov = sum(wx * np.dot(vx - mean_x, vd) for (wx, vx), (_, vd) in zip(x, d, strict=True))
        assert (var_d + 2 * cov > 0) == (kept < total_variance(cost))
    # Earlier rewards independent of what follows: noise around zero, or a mean with the sign of
    # b* (> 0 here), and dropping them helps.
    for values in ([-0.4, 0.4], [0.1, 0.5], [0.0, 2.0]):
        noisy = [
            (w * 0.5, g + extra, a) for w, a, g in outcomes for extra in values
        ]  # (probability, total return, action)
        terms = [(w, g * score[a]) for w, g, a in noisy]
        mean = sum(w * x for w, x in terms)
        assert sum(w * np.sum((x - mean) ** 2) for w, x in terms) > kept
    assert "and only noise goes away ({ref}`ch-reinforce`" not in TEXT_OF_CHAPTER
    assert "Var}(D) + 2 \\operatorname{Cov}(X, D) > 0$" in TEXT_OF_CHAPTER
    assert "(0.2581 against 0.2398 per sample)" in TEXT_OF_CHAPTER
    chapter7 = (CHAPTER.parent / "07_group_baselines.md").read_text(encoding="utf-8")
    assert "reward-to-go is even a little noisier than $G_0$" in chapter7


DEBUG_T, DEBUG_R, DEBUG_TERMINAL = debug_task()
DEBUG_GAMMA = 0.9
V_STAR, Q_STAR = optimal_values_by_enumeration(DEBUG_T, DEBUG_R, DEBUG_GAMMA, DEBUG_TERMINAL)


def test_the_debugging_task_is_solved_by_advancing():
    np.testing.assert_allclose(V_STAR[:3], [0.682, 0.7767, 0.9], atol=5e-5)
    assert np.all(Q_STAR[:3].argmax(axis=1) == ADVANCE)


def test_the_milestone_bonus_loops_and_never_ends():
    bonus = DEBUG_R.copy()
    bonus[:3, :, [DEBUG_LOCATED, DEBUG_PATCHED]] += 0.1
    v_bonus, q_bonus = optimal_values_by_enumeration(DEBUG_T, bonus, DEBUG_GAMMA, DEBUG_TERMINAL)
    np.testing.assert_allclose(v_bonus[:3], [0.9756, 1.0, 1.0], atol=5e-5)
    assert list(q_bonus[:3].argmax(axis=1)) == [ADVANCE, ADVANCE, BACK]
    greedy = np.zeros((5, 3))
    greedy[np.arange(3), q_bonus[:3].argmax(axis=1)] = 1.0
    greedy[3:, 0] = 1.0
    # The loop never reaches a terminal state: its true value is 0 and nothing ends.
    values, p_pi = linear_solve_values(DEBUG_T, DEBUG_R, greedy, DEBUG_GAMMA, DEBUG_TERMINAL)
    assert values[DEBUG_START] == pytest.approx(0.0, abs=1e-15)
    distribution = np.eye(5)[DEBUG_START]
    for _ in range(200):
        distribution = distribution @ p_pi
    assert distribution[3:].sum() == 0.0


def shaped_by_hand(reward, phi, gamma, terminal, zero_terminal=True):
    out = reward.copy()
    for s in range(len(phi)):
        if terminal[s]:
            continue
        for x in range(len(phi)):
            end = 0.0 if (zero_terminal and terminal[x]) else phi[x]
            out[s, :, x] += gamma * end - phi[s]
    return out


def test_the_four_potentials_change_nothing():
    rng = np.random.default_rng(0)
    potentials = [
        np.array([0.0, 0.1, 0.2, 0.0, 0.0]),
        np.array([0.0, 1.0, 2.0, 0.0, 0.0]),
        V_STAR,
        np.append(rng.normal(size=3), [0.0, 0.0]),
    ]
    for phi in potentials:
        _, q = optimal_values_by_enumeration(
            DEBUG_T,
            shaped_by_hand(DEBUG_R, phi, DEBUG_GAMMA, DEBUG_TERMINAL),
            DEBUG_GAMMA,
            DEBUG_TERMINAL,
        )
        np.testing.assert_allclose(q[:3], (Q_STAR - phi[:, None])[:3], atol=1e-10)
        assert np.array_equal(q[:3].argmax(axis=1), Q_STAR[:3].argmax(axis=1))


def test_a_kept_terminal_potential_submits_at_once():
    phi = np.array([0.0, 1.0, 2.0, 3.0, 3.0])
    kept = shaped_by_hand(DEBUG_R, phi, DEBUG_GAMMA, DEBUG_TERMINAL, zero_terminal=False)
    v_kept, q_kept = optimal_values_by_enumeration(DEBUG_T, kept, DEBUG_GAMMA, DEBUG_TERMINAL)
    assert list(q_kept[:3].argmax(axis=1)) == [SUBMIT_NOW, ADVANCE, ADVANCE]
    np.testing.assert_allclose(v_kept[:3], [2.75, 2.1068, 1.6], atol=5e-5)
    policy = np.zeros((5, 3))
    policy[np.arange(3), q_kept[:3].argmax(axis=1)] = 1.0
    policy[3:, 0] = 1.0
    true_values, _ = linear_solve_values(DEBUG_T, DEBUG_R, policy, DEBUG_GAMMA, DEBUG_TERMINAL)
    np.testing.assert_allclose(true_values[:3], [0.05, 0.7767, 0.9], atol=5e-5)  # "passes 5%"


def test_shaping_with_the_values_gives_the_monte_carlo_advantage():
    path = [state(0, 0), state(1, 1), state(2, 1), state(3, 1), 2 * 4]  # ends in success
    rewards = [0.0, 0.0, 0.0, 1.0]
    shaped = [rewards[t] + V[path[t + 1]] - V[path[t]] for t in range(4)]
    np.testing.assert_allclose(shaped, [0.1477, 0.0, 0.0, 0.1], atol=5e-5)
    to_go = [sum(shaped[t:]) for t in range(4)]
    np.testing.assert_allclose(to_go, [1.0 - V[s] for s in path[:4]], atol=1e-12)


# ---------------------------------------------------------------------------------------------
# Learned values
# ---------------------------------------------------------------------------------------------

OCCUPANCY = occupancy_of(POLICY)


def td_credit(critic):
    mean = np.einsum("sat,sat->sa", TRANSITION, REWARD + critic) - critic[:, None]
    mean[TERMINAL] = 0.0
    return mean


def test_the_flag_only_critic():
    live = np.flatnonzero(LIVE)
    features = np.array([[1.0, s % 2] for s in live])
    weights = OCCUPANCY[live]
    # Weighted least squares by the normal equations written out.
    gram = sum(weights[i] * np.outer(features[i], features[i]) for i in range(live.size))
    target = sum(weights[i] * V[s] * features[i] for i, s in enumerate(live))
    w = np.linalg.solve(gram, target)
    np.testing.assert_allclose(w, [0.6261, 0.2739], atol=5e-5)
    critic = np.zeros(NUM_STATES)
    critic[live] = features @ w
    credit = td_credit(critic)
    np.testing.assert_allclose(
        [credit[state(t, 0), TEXT] for t in range(4)], [0.0, 0.0, 0.0, -0.4261], atol=5e-5
    )
    true = expected_update(ADV)
    error = np.linalg.norm(expected_update(credit) - true) / np.linalg.norm(true)
    assert error == pytest.approx(0.22, abs=0.005)  # "about a fifth of its length"


OLD_POLICY = np.full((NUM_STATES, 2), 0.5)
OLD_POLICY[LIVE] = [0.1, 0.9]


def test_the_exact_old_critic_and_the_visit_probabilities():
    v_old, _ = linear_solve_values(TRANSITION, REWARD, OLD_POLICY, 1.0, TERMINAL)
    credit = td_credit(v_old)
    squared = np.sum(OCCUPANCY[:, None] * POLICY * (credit - ADV) ** 2)
    true = expected_update(ADV)
    error = np.linalg.norm(expected_update(credit) - true) / np.linalg.norm(true)
    assert squared == pytest.approx(0.0669, abs=5e-5)
    assert error == pytest.approx(0.58, abs=0.005) and error > 0.5  # "more than half"
    assert credit[state(0, 0), TOOL] > 0  # the exact old critic gets the sign right
    old_visits = occupancy_of(OLD_POLICY)
    np.testing.assert_allclose(old_visits[[3, 5, 7]], [0.1, 0.19, 0.271], atol=5e-4)
    np.testing.assert_allclose(OCCUPANCY[[3, 5, 7]], [0.5, 0.625, 0.7188], atol=5e-5)


def sample_tool_episode(rng, policy):
    """One episode of the tool task: visited states and the outcome."""
    states, s = [], 0
    for t in range(4):
        states.append(s)
        flag = s % 2
        a = TOOL if rng.random() < policy[s, TOOL] else TEXT
        flag = 1 if (flag or a == TOOL) else 0
        s = 2 * (t + 1) + flag
    return states, float(rng.random() < (0.9 if flag else 0.2))


def fitted_critic(rng, policy, count):
    totals, visits = np.zeros(NUM_STATES), np.zeros(NUM_STATES)
    for _ in range(count):
        states, outcome = sample_tool_episode(rng, policy)
        for s in states:
            totals[s] += outcome
            visits[s] += 1
    return np.where(visits > 0, totals / np.maximum(visits, 1), 0.0)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("policy", "count", "wrong_sign", "tolerance"),
    [(POLICY, 16, 0.108, 0.025), (OLD_POLICY, 16, 0.237, 0.03), (OLD_POLICY, 256, 0.0, 0.002)],
)
def test_the_fitted_critics_get_the_decisive_sign_wrong_this_often(
    policy, count, wrong_sign, tolerance
):
    """An independent simulation (other seed, 2000 fits); the chapter's 1000 fits printed
    10.8 %, 23.7 % and 0 % ("about a tenth", "about a quarter")."""
    rng = np.random.default_rng(99)
    wrong = 0
    for _ in range(2000):
        credit = td_credit(fitted_critic(rng, policy, count))
        wrong += np.sign(credit[0, TOOL]) != np.sign(ADV[0, TOOL])
    assert wrong / 2000 == pytest.approx(wrong_sign, abs=tolerance)


def test_more_old_rollouts_converge_to_the_old_critics_error():
    rng = np.random.default_rng(5)
    true = expected_update(ADV)
    errors = []
    for _ in range(200):
        credit = td_credit(fitted_critic(rng, OLD_POLICY, 256))
        errors.append(np.linalg.norm(expected_update(credit) - true) / np.linalg.norm(true))
    assert np.mean(errors) == pytest.approx(0.58, abs=0.03)


# ---------------------------------------------------------------------------------------------
# Process rewards
# ---------------------------------------------------------------------------------------------

SCORES = np.array([0.2, 0.2, 1.0])


def backward_values(logits, turn_reward, outcome_weight):
    """Values of the tool task with the claim action, by backward induction over the turns.

    Returns v[t, flag] and q[t, flag, a] for the reward outcome_weight * R + Σ_t turn_reward(a_t).
    """
    policy = softmax_rows(logits)
    v = np.zeros((5, 2))
    q = np.zeros((4, 2, 3))
    for flag in (0, 1):
        v[4, flag] = outcome_weight * (0.9 if flag else 0.2)
    for t in reversed(range(4)):
        for flag in (0, 1):
            for a in range(3):
                after = 1 if (flag or a == TOOL) else 0
                q[t, flag, a] = turn_reward[a] + v[t + 1, after]
            v[t, flag] = policy[2 * t + flag] @ q[t, flag]
    return v, q, policy


def train_by_hand(turn_reward, outcome_weight, num_steps=300, lr=2.0):
    logits = np.zeros((10, 3))
    success, process = [], []
    final = None
    for _ in range(num_steps + 1):
        v_out, _, policy = backward_values(logits, np.zeros(3), 1.0)
        final = policy  # the policy after `num_steps` updates is the last one recorded
        v_proc, _, _ = backward_values(logits, SCORES, 0.0)
        success.append(v_out[0, 0])
        process.append(v_proc[0, 0] / 4)
        _, q, _ = backward_values(logits, turn_reward, outcome_weight)
        # Visit probabilities forward over the turns, then d(s) π(a|s) A(s, a).
        visit = np.zeros((4, 2))
        visit[0, 0] = 1.0
        for t in range(3):
            for flag in (0, 1):
                for a in range(3):
                    after = 1 if (flag or a == TOOL) else 0
                    visit[t + 1, after] += visit[t, flag] * policy[2 * t + flag, a]
        for t in range(4):
            for flag in (0, 1):
                s = 2 * t + flag
                value = policy[s] @ q[t, flag]
                logits[s] += lr * visit[t, flag] * policy[s] * (q[t, flag] - value)
    return np.array(success), np.array(process), final


@pytest.fixture(scope="module")
def training_runs():
    return train_by_hand(SCORES, 1.0), train_by_hand(np.zeros(3), 1.0)


def test_the_process_reward_training_table(training_runs):
    (success_p, process_p, final_p), (success_o, process_o, final_o) = training_runs
    steps = [0, 10, 50, 300]
    np.testing.assert_allclose(success_p[steps], [0.762, 0.616, 0.283, 0.211], atol=5e-4)
    np.testing.assert_allclose(process_p[steps], [0.467, 0.823, 0.970, 0.996], atol=5e-4)
    np.testing.assert_allclose(success_o[steps], [0.762, 0.871, 0.896, 0.900], atol=5e-4)
    np.testing.assert_allclose(process_o[steps], [0.467, 0.429, 0.413, 0.406], atol=5e-4)
    np.testing.assert_allclose(final_p[0], [0.0012, 0.0007, 0.9981], atol=5e-5)
    np.testing.assert_allclose(final_o[0], [0.8405, 0.0798, 0.0798], atol=5e-5)


def test_the_process_gap_figure(training_runs):
    (success_p, process_p, _), (success_o, process_o, _) = training_runs
    # Left panel: the turn score rises toward 1 while success falls toward 0.2 from above.
    assert np.all(np.diff(process_p) > 0) and np.all(np.diff(success_p) < 0)
    assert process_p[-1] < 1.0 and success_p[-1] > 0.2
    assert process_p[50] > 0.95  # "within a few dozen steps"
    # Right panel: the outcome-only learner learns to call the tool and ignores the claim.
    assert success_o[-1] > 0.899 and process_o[-1] < process_o[0]
    # The trade: claiming gains 1 - 0.2 in score and loses 0.9 - 0.2 in success.
    assert SCORES[CLAIM] - SCORES[TOOL] == pytest.approx(0.8)


# ---------------------------------------------------------------------------------------------
# Branching
# ---------------------------------------------------------------------------------------------


def return_variance(start):
    """Var of the return from a state, over the episodes that start there."""
    listed = episodes_by_hand(TRANSITION, REWARD, POLICY, np.eye(NUM_STATES)[start], 4, TERMINAL)
    mean = sum(p * sum(r) for p, _, _, r in listed)
    return sum(p * (sum(r) - mean) ** 2 for p, _, _, r in listed)


VAR_V = np.array([return_variance(s) if LIVE[s] else 0.0 for s in range(NUM_STATES)])
VAR_Q = np.zeros((NUM_STATES, 2))
for _s in np.flatnonzero(LIVE):
    for _a in range(2):
        _second = sum(
            TRANSITION[_s, _a, x] * ((REWARD[_s, _a, x] + V[x]) ** 2 + VAR_V[x])
            for x in range(NUM_STATES)
        )
        VAR_Q[_s, _a] = _second - Q[_s, _a] ** 2


def test_the_exact_branch_variances():
    for (s, a), expected in [((0, TOOL), 0.0345), ((4, TOOL), 0.0425), ((5, TEXT), 0.0225)]:
        assert (VAR_Q[s, a] + VAR_V[s]) / 8 == pytest.approx(expected, abs=5e-5)
    reachable = [0, 2, 3, 4, 5, 6, 7]
    spreads = np.concatenate([VAR_V[reachable], VAR_Q[reachable].ravel()])
    assert spreads.min() >= 0.09 - 1e-12 and spreads.max() <= 0.25 + 1e-12  # "0.1 to 0.25"


def gradient_variances():
    """Per-episode variance of sum_t credit_t (e_a - pi) for Monte Carlo credit and for the
    exact advantages, and the branch noise sum_t E[(Var_q + Var_v) |e_a - pi|^2]."""
    grads_mc, grads_exact, weights, noise = [], [], [], 0.0
    for probability, states, actions, rewards in EPISODES:
        g_mc = np.zeros((NUM_STATES, 2))
        g_exact = np.zeros((NUM_STATES, 2))
        for t in range(4):
            s, a = states[t], actions[t]
            score = np.eye(2)[a] - POLICY[s]
            g_mc[s] += (sum(rewards) - V[s]) * score
            g_exact[s] += ADV[s, a] * score
            noise += probability * (VAR_Q[s, a] + VAR_V[s]) * np.sum(score**2)
        grads_mc.append(g_mc)
        grads_exact.append(g_exact)
        weights.append(probability)
    weights = np.array(weights)

    def variance(grads):
        grads = np.array(grads)
        mean = np.einsum("n,nij->ij", weights, grads)
        return weights @ np.sum((grads - mean) ** 2, axis=(1, 2))

    return variance(grads_mc), variance(grads_exact), noise


def test_the_cost_table():
    var_mc, var_exact, noise = gradient_variances()
    assert var_mc == pytest.approx(0.2097, abs=5e-5)
    assert var_exact == pytest.approx(0.0441, abs=5e-5)
    sizes = np.array([1, 2, 4, 8, 16, 32])
    var_branch = var_exact + noise / sizes
    np.testing.assert_allclose(
        var_branch, [0.4374, 0.2408, 0.1424, 0.0933, 0.0687, 0.0564], atol=5e-5
    )
    cost = 4 + 2 * sizes * (4 + 3 + 2 + 1)
    np.testing.assert_array_equal(cost, [24, 44, 84, 164, 324, 644])
    ratio = np.min(var_branch * cost) / (var_mc * 4)
    assert ratio == pytest.approx(12.5, abs=0.05)
    # One branch is worse than none; four or more beat Monte Carlo credit per episode.
    assert var_branch[0] > var_mc > var_branch[2] and var_branch[1] > var_mc
    # Right panel of the figure: every branching point lies above the Monte Carlo line.
    assert np.all(var_branch * cost > var_mc * 4)


def test_the_lossy_snapshot():
    assert ADV[state(1, 1), TOOL] == 0.0 and ADV[state(1, 1), TEXT] == 0.0
    assert ADV[state(1, 0), TOOL] == pytest.approx(0.2953, abs=5e-5)  # "about +0.30"
    assert ADV[state(1, 0), TEXT] == pytest.approx(-0.0984, abs=5e-5)


# ---------------------------------------------------------------------------------------------
# Hierarchical credit
# ---------------------------------------------------------------------------------------------

STAGE_T, STAGE_R, STAGE_TERMINAL = stage_task(3, 6, 0.5)
TASK_GAMMA = 0.99


def options(stops):
    """Option models (R_o (S,), M_o (S, S)) of 'repeat action i' with the given stops(i)."""
    models = []
    for i in range(3):
        worker = np.zeros((4, 6))
        worker[:, i] = 1.0
        models.append(
            option_model_by_propagation(
                STAGE_T, STAGE_R, worker, stops(i), TASK_GAMMA, STAGE_TERMINAL, tolerance=1e-15
            )
        )
    return models


def subgoal_stops(i):
    stops = np.ones(4)
    stops[i] = 0.0
    return stops


def smdp_values(models, sweeps=100_000):
    values = np.zeros(4)
    for _ in range(sweeps):
        new = np.zeros(4)
        for s in range(3):
            new[s] = max(r[s] + m[s] @ values for r, m in models)
        if np.max(np.abs(new - values)) < 1e-14:
            return new
        values = new
    raise AssertionError("no convergence")


FLAT_V, _ = optimal_values_by_enumeration(STAGE_T, STAGE_R, TASK_GAMMA, STAGE_TERMINAL)


def test_the_subgoal_options_and_the_flat_optimum():
    expected_discount = 0.5 * 0.99 / (1 - 0.5 * 0.99)
    assert expected_discount == pytest.approx(0.980198, abs=5e-7)
    models = options(subgoal_stops)
    for i, (_, m) in enumerate(models):
        assert m[i].sum() == pytest.approx(expected_discount, abs=1e-10)
    np.testing.assert_allclose(FLAT_V[:3], [0.9513, 0.9705, 0.9901], atol=5e-5)
    np.testing.assert_allclose(smdp_values(models), FLAT_V, atol=1e-9)


def test_the_manager_returns_example():
    rewards = [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    flat = [sum(0.99**j * rewards[t + j] for j in range(6 - t)) for t in range(6)]
    np.testing.assert_allclose([flat[0], flat[2], flat[3]], [0.951, 0.9703, 0.9801], atol=5e-5)
    # r^o = (0, 0, 0.99^2) and durations (2, 1, 3): G = r^o + γ^k G_next.
    g3 = 0.99**2
    g2 = 0.0 + 0.99 * g3
    g1 = 0.0 + 0.99**2 * g2
    np.testing.assert_allclose([g1, g2, g3], [flat[0], flat[2], flat[3]], atol=1e-12)


@pytest.mark.slow
def test_the_boundaries_table():
    one_step = options(lambda i: np.ones(4))
    overlong = options(lambda i: STAGE_TERMINAL.astype(float))
    np.testing.assert_allclose(smdp_values(one_step), FLAT_V, atol=1e-9)
    np.testing.assert_allclose(smdp_values(overlong)[:3], [0.0, 0.0, 0.9901], atol=5e-5)


def exact_decisions(p_right):
    """Expected decisions per stage when each decision finishes the stage w.p. p_right."""
    return 3 / p_right


def test_the_decision_counts():
    assert exact_decisions(0.5 / 6) == pytest.approx(36.0)  # flat: right action 1/6, then 1/2
    assert exact_decisions(1 / 3) == pytest.approx(9.0)  # subgoal options: right option 1/3
    assert exact_decisions(0.5 / 3) == pytest.approx(18.0)  # one-step options


def manager_exact_gradient(models, manager):
    """d_M(s) π_M(o|s) A_M(s, o) for the manager over option models (uniform policy)."""
    rewards = np.array([r for r, _ in models]).T
    transitions = np.stack([m for _, m in models], axis=1)
    reward_m = np.sum(manager * rewards, axis=1)
    transition_m = np.einsum("so,sox->sx", manager, transitions)
    block = np.eye(3) - transition_m[:3, :3]
    values = np.zeros(4)
    values[:3] = np.linalg.solve(block, reward_m[:3])
    advantages = rewards + transitions @ values - values[:, None]
    occupancy = np.linalg.solve(block.T, np.eye(3)[0])
    return occupancy[:, None] * manager[:3] * advantages[:3], values


def simulated_snr(kind, count, rng):
    """Signal-to-noise ratio of one episode's REINFORCE gradient, by simulation step by step.

    ``kind`` is "flat" (uniform over the 6 actions, credit per step) or "subgoal" / "one-step"
    (a uniform manager over the three options, credit per decision)."""
    gamma = TASK_GAMMA
    if kind == "flat":
        uniform = np.full((4, 6), 1 / 6)
        values, p_pi = linear_solve_values(STAGE_T, STAGE_R, uniform, gamma, STAGE_TERMINAL)
        q = np.einsum("sat,sat->sa", STAGE_T, STAGE_R + gamma * values)
        occupancy = np.linalg.solve(np.eye(3) - gamma * p_pi[:3, :3].T, np.eye(3)[0])
        exact = occupancy[:, None] * uniform[:3] * (q[:3] - values[:3, None])
        num_choices = 6
    else:
        stops = subgoal_stops if kind == "subgoal" else (lambda i: np.ones(4))
        exact, values = manager_exact_gradient(options(stops), np.full((4, 3), 1 / 3))
        num_choices = 3
    noise = 0.0
    for _ in range(count):
        stage, step = 0, 0
        decisions = []  # (stage, choice, start step)
        reward_time = None
        while stage < 3:
            choice = int(rng.integers(num_choices))
            decisions.append((stage, choice, step))
            if kind == "flat" or kind == "one-step":
                step += 1
                if choice == stage and rng.random() < 0.5:
                    stage += 1
            else:  # a subgoal option: the right one runs until the stage is done
                if choice == stage:
                    step += int(rng.geometric(0.5))
                    stage += 1
                else:
                    step += 1
        reward_time = step - 1  # the reward 1 arrives on the last step
        gradient = np.zeros((3, num_choices))
        for s, choice, start in decisions:
            to_go = gamma ** (reward_time - start)
            score = -np.full(num_choices, 1 / num_choices)
            score[choice] += 1.0
            gradient[s] += gamma**start * (to_go - values[s]) * score
        noise += np.sum((gradient - exact) ** 2) / count
    return np.sum(exact**2) / noise


@pytest.fixture(scope="module")
def snr_values():
    rng = np.random.default_rng(2024)
    return {kind: simulated_snr(kind, 6000, rng) for kind in ("flat", "subgoal", "one-step")}


@pytest.mark.slow
def test_the_signal_to_noise_table(snr_values):
    """The chapter printed 0.053, 0.160, 0.102 from 4000 episodes each; an independent
    simulation of 6000 agrees within the sampling error (a few percent of each)."""
    assert snr_values["flat"] == pytest.approx(0.053, rel=0.1)
    assert snr_values["subgoal"] == pytest.approx(0.160, rel=0.1)
    assert snr_values["one-step"] == pytest.approx(0.102, rel=0.1)
    ratio = snr_values["subgoal"] / snr_values["flat"]
    assert 2.5 < ratio < 3.6  # "by a factor of about three"
    assert snr_values["flat"] < snr_values["one-step"] < snr_values["subgoal"]


def test_the_figure_and_table_gradients_are_the_exact_ones():
    """The sampled means the chapter compares with: the manager's exact gradient is smaller
    than the flat one (largest entries 0.0176 and 0.0646)."""
    exact, _ = manager_exact_gradient(options(subgoal_stops), np.full((4, 3), 1 / 3))
    assert np.abs(exact).max() == pytest.approx(0.0176, abs=5e-5)
    uniform = np.full((4, 6), 1 / 6)
    values, p_pi = linear_solve_values(STAGE_T, STAGE_R, uniform, TASK_GAMMA, STAGE_TERMINAL)
    q = np.einsum("sat,sat->sa", STAGE_T, STAGE_R + TASK_GAMMA * values)
    occupancy = np.linalg.solve(np.eye(3) - TASK_GAMMA * p_pi[:3, :3].T, np.eye(3)[0])
    flat = occupancy[:, None] * uniform[:3] * (q[:3] - values[:3, None])
    assert np.abs(flat).max() == pytest.approx(0.0646, abs=5e-5)
    assert math.isclose(flat.sum(), 0.0, abs_tol=1e-12)


# ---------------------------------------------------------------------------------------------
# The "In practice" section
# ---------------------------------------------------------------------------------------------
# The trainer behavior it states was read in the trainers' source and documentation (no test
# can run them here):
# - verl, verl/workers/reward_manager/naive.py, NaiveRewardManager.__call__:
#   reward_tensor[i, valid_response_length - 1] = reward (the score on the last valid token);
#   verl's configuration documentation lists reward_model.reward_manager: naive as the default.
# - verl, verl/trainer/ppo/core_algos.py: compute_grpo_outcome_advantage and
#   compute_rloo_outcome_advantage start with scores = token_level_rewards.sum(dim=-1) and
#   return scores.unsqueeze(-1) * response_mask (one number copied to every token);
#   compute_gae_advantage_return carries nextvalues and lastgaelam across positions whose
#   response_mask is 0 ("skip values and TD-error on observation tokens");
#   compute_reinforce_plus_plus_outcome_advantage computes running_return =
#   token_level_rewards[:, t] + gamma * running_return and then multiplies it by
#   response_mask[:, t] ("Reset after EOS"), so a masked tool output stops later rewards.
# - TRL, trl/trainer/grpo_config.py (GRPOConfig): reward_weights, "If None, all rewards are
#   weighted equally with weight 1.0".
# - TRL, trl/trainer/prm_config.py (PRMConfig): step_separator defaults to "\n";
#   docs/source/prm_trainer.md: PRMTrainer takes an AutoModelForTokenClassification model and
#   is marked as an experimental API.


def test_the_turn_reward_to_go_differs_from_a_masked_token_scan():
    """The contrast of the second bullet: a per-token scan whose running return is multiplied
    by the mask after each position (as read in verl) drops the later turn's reward from the
    earlier turn's tokens, while eq-turn-reward-to-go keeps it."""
    token_rewards = np.array([0.0, 0.0, 0.0, 0.0, 1.0])  # the outcome on the last token
    mask = np.array([1, 1, 0, 1, 1])  # position 2 is a tool output
    running, scanned = 0.0, np.zeros(5)
    for t in reversed(range(5)):
        running = token_rewards[t] + 1.0 * running
        scanned[t] = running
        running *= mask[t]
    assert scanned[0] == 0.0 and scanned[3] == 1.0
    from rlfound.credit import turn_reward_to_go  # the library function the chapter shows

    per_turn = turn_reward_to_go([0.0, 1.0], [0, 0, -1, 1, 1], 1.0)
    np.testing.assert_array_equal(per_turn, [1.0, 1.0, 0.0, 1.0, 1.0])
