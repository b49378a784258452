"""Checks of labeled equations of chapters 5-14 that no unit or claims test computed.

Each test computes both sides of its equations on concrete numbers, by separate routes
(enumeration, power series, linear programs, central differences, numerical maximization),
and names them with ``pytest.mark.equation`` (the rule: tests/test_equations.py).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import linprog, minimize

from rlfound.distributions import softmax
from rlfound.entropy import distribution_entropy
from rlfound.groups import group_normalized_advantages, leave_one_out_advantages
from rlfound.kl import kl_regularized_optimum
from rlfound.reduction import aggregate_loss, token_weights
from tests.oracles import (
    bandit_gradient_by_hand,
    central_differences,
    entropy_by_hand,
    group_expectation_by_hand,
    linear_solve_values,
    policy_average,
    power_series_values,
    random_mdp,
    softmax_rows,
)
from tests.test_equation_checks_ch01_04 import state_action_power_series

# ---------------------------------------------------------------------------------------------
# Chapter 5 and 14: surrogates of the policy-gradient objective on a random MDP
# ---------------------------------------------------------------------------------------------

GAMMA = 0.9


def random_problem(seed):
    rng = np.random.default_rng(seed)
    transition, reward, _, terminal, initial = random_mdp(rng, 4, 3, num_terminal=1)
    return transition, reward, terminal, initial, rng.normal(size=(4, 3))


def objective(logits, transition, reward, terminal, initial):
    """J(θ) = p_0 · v_π for the tabular softmax policy, v_π by a linear solve."""
    values, _ = linear_solve_values(transition, reward, softmax_rows(logits), GAMMA, terminal)
    return float(initial @ values)


def occupancy_by_propagation(transition, policy, terminal, initial):
    """d_π(s) = Σ_t γ^t Pr(s_t = s), by pushing the state distribution forward step by step."""
    p_pi, _ = policy_average(transition, np.zeros(transition.shape), policy, terminal)
    live = np.where(terminal, 0.0, 1.0)
    state, total = np.asarray(initial, dtype=float) * live, np.zeros(len(terminal))
    for t in range(2000):
        total += GAMMA**t * state
        state = (state @ p_pi) * live  # terminal states absorb: no later visits count
    return total


def advantages(transition, reward, policy, terminal):
    values = power_series_values(*policy_average(transition, reward, policy, terminal), GAMMA)
    q = state_action_power_series(transition, reward, policy, terminal, GAMMA)
    return np.where(terminal[:, None], 0.0, q - values[:, None])


@pytest.mark.equation("eq-local-surrogate")
def test_the_local_surrogate_has_the_objective_s_gradient_at_the_current_policy():
    transition, reward, terminal, initial, logits = random_problem(1)
    policy = softmax_rows(logits)
    d = occupancy_by_propagation(transition, policy, terminal, initial)
    advantage = advantages(transition, reward, policy, terminal)
    j_now = objective(logits, transition, reward, terminal, initial)

    def surrogate(new_logits, weighted):
        new = softmax_rows(new_logits)
        if weighted:  # J + Σ_s d(s) E_{a ~ π}[ρ A]
            inner = (policy * (new / policy) * advantage).sum(axis=1)
        else:  # J + Σ_s d(s) Σ_a π'(a | s) A
            inner = (new * advantage).sum(axis=1)
        return j_now + d @ inner

    moved = logits + np.random.default_rng(2).normal(size=logits.shape)
    assert surrogate(moved, True) == pytest.approx(surrogate(moved, False), abs=1e-12)
    assert surrogate(logits, False) == pytest.approx(j_now, abs=1e-12)
    gradient = central_differences(
        lambda x: objective(x, transition, reward, terminal, initial), logits
    )
    np.testing.assert_allclose(
        central_differences(lambda x: surrogate(x, False), logits), gradient, atol=1e-7
    )


@pytest.mark.equation("eq-epoch-mismatch")
def test_ppo_s_update_is_the_gradient_of_the_clipped_surrogate_of_the_old_batch():
    transition, reward, terminal, initial, old_logits = random_problem(3)
    old = softmax_rows(old_logits)
    d_old = occupancy_by_propagation(transition, old, terminal, initial)
    a_old = advantages(transition, reward, old, terminal)
    low, high = 0.2, 0.2

    def clipped_objective(logits):
        ratio = softmax_rows(logits) / old
        clipped = np.clip(ratio, 1 - low, 1 + high)
        per_action = np.minimum(ratio * a_old, clipped * a_old)
        return float(d_old @ (old * per_action).sum(axis=1))

    def ppo_update(logits):
        """eq-epoch-mismatch term by term: ∂ℓ/∂log π is ρA inside the clip, 0 outside."""
        new = softmax_rows(logits)
        ratio = new / old
        update = np.zeros_like(logits)
        for s, a in itertools.product(range(len(old)), range(old.shape[1])):
            inside = ratio[s, a] < 1 + high if a_old[s, a] > 0 else ratio[s, a] > 1 - low
            weight = ratio[s, a] * a_old[s, a] if inside else 0.0
            update[s] += d_old[s] * old[s, a] * weight * (np.eye(old.shape[1])[a] - new[s])
        return update

    for step in (0.0, 0.15, 0.6):  # on-policy, a little off, far off (some terms clipped)
        logits = old_logits + step * np.random.default_rng(4).normal(size=old_logits.shape)
        np.testing.assert_allclose(
            ppo_update(logits), central_differences(clipped_objective, logits), atol=1e-7
        )
    gradient = central_differences(
        lambda x: objective(x, transition, reward, terminal, initial), old_logits
    )
    np.testing.assert_allclose(ppo_update(old_logits), gradient, atol=1e-7)  # only at θ_old


# ---------------------------------------------------------------------------------------------
# Chapter 6: the regularized optimum, found numerically
# ---------------------------------------------------------------------------------------------


@pytest.mark.equation("eq-dpo-reward")
def test_the_reward_is_beta_times_the_log_ratio_of_the_optimum_plus_beta_log_z():
    rng = np.random.default_rng(6)
    ref, rewards, beta = rng.dirichlet(np.ones(5)), rng.normal(size=5), 0.7

    def negative_objective(logits):
        pi = softmax_rows(logits)
        return -(pi @ rewards - beta * np.sum(pi * np.log(pi / ref)))

    found = softmax_rows(minimize(negative_objective, np.zeros(5), method="BFGS", tol=1e-12).x)
    log_z = math.log(sum(r * math.exp(x / beta) for r, x in zip(ref, rewards, strict=True)))
    np.testing.assert_allclose(beta * np.log(found / ref) + beta * log_z, rewards, atol=1e-5)
    optimum = kl_regularized_optimum(ref, rewards, beta)
    np.testing.assert_allclose(beta * np.log(optimum / ref) + beta * log_z, rewards, atol=1e-12)


def soft_task(seed):
    """Two turns: action a0 (2), observation o (2, drawn given a0), action a1 (3), reward."""
    rng = np.random.default_rng(seed)
    return {
        "ref0": rng.dirichlet(np.ones(2)),
        "ref1": rng.dirichlet(np.ones(3), size=(2, 2)),  # [a0, o]
        "obs": rng.dirichlet(np.ones(2), size=2),  # [a0, o]
        "reward": rng.normal(size=(2, 2, 3)),  # [a0, o, a1]
    }


def regularized_return(task, first, second, beta):
    """E[R] - β Σ_t E[KL(π(· | h_t) || π_ref(· | h_t))], by enumerating every trajectory."""
    total = 0.0
    for a0, o, a1 in itertools.product(range(2), range(2), range(3)):
        p = first[a0] * task["obs"][a0, o] * second[a0, o, a1]
        log_ratio = math.log(first[a0] / task["ref0"][a0])
        log_ratio += math.log(second[a0, o, a1] / task["ref1"][a0, o, a1])
        total += p * (task["reward"][a0, o, a1] - beta * log_ratio)
    return total


@pytest.mark.equation("eq-soft-bellman")
def test_soft_bellman_backward_induction_gives_the_regularized_optimum():
    task, beta = soft_task(8), 0.5
    q1 = task["reward"]  # the last turn's action values
    v1 = beta * np.log(np.sum(task["ref1"] * np.exp(q1 / beta), axis=-1))  # [a0, o]
    q0 = np.sum(task["obs"] * v1, axis=-1)  # E_o[V(h, a0, o)]
    v0 = beta * math.log(task["ref0"] @ np.exp(q0 / beta))
    first = task["ref0"] * np.exp((q0 - v0) / beta)
    second = task["ref1"] * np.exp((q1 - v1[..., None]) / beta)
    assert regularized_return(task, first, second, beta) == pytest.approx(v0, abs=1e-12)

    def objective_of_logits(flat):
        return regularized_return(
            task, softmax_rows(flat[:2]), softmax_rows(flat[2:].reshape(2, 2, 3)), beta
        )

    at_optimum = np.concatenate([np.log(first), np.log(second).ravel()])
    np.testing.assert_allclose(central_differences(objective_of_logits, at_optimum), 0, atol=1e-8)
    rng = np.random.default_rng(9)
    for _ in range(20):
        assert objective_of_logits(at_optimum + rng.normal(size=at_optimum.shape)) < v0


# ---------------------------------------------------------------------------------------------
# Chapter 7: groups
# ---------------------------------------------------------------------------------------------


@pytest.mark.equation("eq-dead-groups")
@pytest.mark.parametrize(("p", "size"), [(0.05, 4), (0.3, 6), (0.5, 8)])
def test_no_signal_exactly_when_every_outcome_of_the_group_is_equal(p, size):
    no_signal = 0.0
    for outcome in itertools.product((0.0, 1.0), repeat=size):
        advantage = group_normalized_advantages(np.array(outcome))
        if np.all(advantage == 0.0):
            no_signal += math.prod(p if r else 1 - p for r in outcome)
    assert no_signal == pytest.approx((1 - p) ** size + p**size, abs=1e-14)


@pytest.mark.equation("eq-difficulty-scale")
@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_the_length_of_the_expected_update_by_difficulty(p):
    logits, rewards, size = np.log([p, 1 - p]), np.array([1.0, 0.0]), 5

    def rloo(group):
        return np.array([group[i] - np.delete(group, i).mean() for i in range(len(group))])

    def dr_grpo(group):
        return group - group.mean()

    norm_rloo = np.linalg.norm(group_expectation_by_hand(logits, rewards, size, rloo))
    norm_dr = np.linalg.norm(group_expectation_by_hand(logits, rewards, size, dr_grpo))
    assert norm_rloo == pytest.approx(math.sqrt(2) * p * (1 - p), abs=1e-12)
    assert norm_dr == pytest.approx((size - 1) / size * math.sqrt(2) * p * (1 - p), abs=1e-12)
    # GRPO (ddof 0, eps 0) for a large group, by the binomial sum over the number of successes.
    large = 4000
    first = 0.0  # first entry of E[(1/N) Σ_i A_i (e_{a_i} - π)]
    for k in range(1, large):
        weight = math.exp(
            math.lgamma(large + 1) - math.lgamma(k + 1) - math.lgamma(large - k + 1)
            + k * math.log(p) + (large - k) * math.log(1 - p)
        )  # fmt: skip
        mean, std = k / large, math.sqrt(k / large * (1 - k / large))
        success, failure = (1 - mean) / std, (0 - mean) / std
        first += weight * (k * success * (1 - p) + (large - k) * failure * (0 - p)) / large
    assert math.sqrt(2) * abs(first) == pytest.approx(math.sqrt(2 * p * (1 - p)), rel=2e-3)


@pytest.mark.equation("eq-grpo-decomposition")
def test_grpo_is_the_scaled_leave_one_out_advantage_over_the_group_std():
    rng = np.random.default_rng(12)
    for size in (2, 5, 9):
        rewards, eps = rng.normal(size=size), 0.01
        std = math.sqrt(sum((r - rewards.mean()) ** 2 for r in rewards) / size)
        loo = [rewards[i] - (rewards.sum() - rewards[i]) / (size - 1) for i in range(size)]
        expected = [(size - 1) / size * a / (std + eps) for a in loo]
        np.testing.assert_allclose(
            group_normalized_advantages(rewards, eps=eps), expected, atol=1e-12
        )
        np.testing.assert_allclose(leave_one_out_advantages(rewards), loo, atol=1e-12)


@pytest.mark.equation("eq-loo-normalized")
@pytest.mark.parametrize("eps", [1e-6, 0.1])
def test_leave_one_out_normalization_scales_the_gradient_by_the_mean_inverse_std(eps):
    logits, rewards, size = np.array([0.4, -0.2, 0.1]), np.array([0.2, 1.0, 0.5]), 4
    probs = softmax_rows(logits)

    def normalized(group):
        out = []
        for i in range(len(group)):
            others = np.delete(group, i)
            out.append((group[i] - others.mean()) / (others.std(ddof=1) + eps))
        return np.array(out)

    update = group_expectation_by_hand(logits, rewards, size, normalized)
    mean_inverse = sum(
        math.prod(probs[a] for a in others) / (np.std(rewards[list(others)], ddof=1) + eps)
        for others in itertools.product(range(3), repeat=size - 1)
    )
    np.testing.assert_allclose(
        update, mean_inverse * bandit_gradient_by_hand(logits, rewards), atol=1e-12
    )


@pytest.mark.equation("eq-group-moments")
@pytest.mark.parametrize("estimator", ["independent", "leave-one-out", "group-normalized"])
def test_the_variance_of_the_group_mean_splits_into_own_and_cross_terms(estimator):
    logits, rewards, size = np.array([0.3, -0.5, 0.1]), np.array([1.0, 0.0, 0.4]), 3
    probs = softmax_rows(logits)
    baseline = probs @ rewards
    advantage_of = {
        "independent": lambda group: group - baseline,  # a fixed baseline: independent terms
        "leave-one-out": leave_one_out_advantages,
        "group-normalized": lambda group: group_normalized_advantages(group, eps=0.1),
    }[estimator]
    weights, terms = [], []  # every group of actions, and its members' terms A_i ψ^(i)
    for group in itertools.product(range(3), repeat=size):
        advantage = advantage_of(rewards[list(group)])
        weights.append(math.prod(probs[a] for a in group))
        terms.append([advantage[i] * (np.eye(3)[a] - probs) for i, a in enumerate(group)])
    weights, terms = np.array(weights), np.array(terms)  # (groups,), (groups, N, K)
    mean_terms = np.einsum("g,gik->ik", weights, terms)
    centered = terms - mean_terms
    own = np.einsum("g,gk,gk->", weights, centered[:, 0], centered[:, 0])
    cross = np.einsum("g,gk,gk->", weights, centered[:, 0], centered[:, 1])
    batch = centered.mean(axis=1)
    batch_variance = np.einsum("g,gk,gk->", weights, batch, batch)
    assert batch_variance == pytest.approx(own / size + (size - 1) / size * cross, abs=1e-12)
    if estimator == "independent":
        assert cross == pytest.approx(0.0, abs=1e-12)
    else:
        assert abs(cross) > 1e-4


# ---------------------------------------------------------------------------------------------
# Chapter 8: the gradient of a weighted token loss
# ---------------------------------------------------------------------------------------------


@pytest.mark.equation("eq-weighted-gradient")
@pytest.mark.parametrize("mode", ["token-mean", "seq-mean-token-mean", "seq-mean-token-sum"])
def test_minus_the_loss_gradient_is_the_advantage_weighted_sum_of_scores(mode):
    rng = np.random.default_rng(14)
    logits = rng.normal(size=(3, 4, 5))  # (B, L, V)
    tokens = rng.integers(5, size=(3, 4))
    mask = np.array([[1, 1, 1, 0], [1, 1, 0, 0], [1, 1, 1, 1]], dtype=bool)
    advantage = rng.normal(size=3)

    def loss(flat):
        logprobs = np.log(softmax_rows(flat.reshape(logits.shape)))
        chosen = np.take_along_axis(logprobs, tokens[..., None], axis=-1)[..., 0]
        return aggregate_loss(-advantage[:, None] * chosen, mask, mode)

    weights = token_weights(mask, mode)
    scores = np.eye(5)[tokens] - softmax_rows(logits)  # ψ_ij for the logits of position (i, j)
    expected = advantage[:, None, None] * weights[..., None] * scores
    np.testing.assert_allclose(
        -central_differences(loss, logits.ravel()).reshape(logits.shape), expected, atol=1e-8
    )


# ---------------------------------------------------------------------------------------------
# Chapter 10: entropy and temperature
# ---------------------------------------------------------------------------------------------


@pytest.mark.equation("eq-entropy-decomposition")
def test_text_entropy_is_action_entropy_plus_the_conditional_entropy():
    rng = np.random.default_rng(15)
    texts = list(itertools.product(range(3), repeat=3))
    probs = rng.dirichlet(np.ones(len(texts)))
    parse = [(x[0] + x[2]) % 2 for x in texts]
    action_probs = [sum(p for p, a in zip(probs, parse, strict=True) if a == b) for b in (0, 1)]
    conditional = sum(
        action_probs[b]
        * entropy_by_hand(
            [p / action_probs[b] for p, a in zip(probs, parse, strict=True) if a == b]
        )
        for b in (0, 1)
    )
    assert conditional >= 0
    assert distribution_entropy(probs) == pytest.approx(
        entropy_by_hand(action_probs) + conditional, abs=1e-12
    )


TEMPERATURE_LOGITS = np.array([1.2, -0.4, 0.3, 0.0])
TEMPERATURE_REWARDS = np.array([1.0, 0.2, 0.6, -0.3])


@pytest.mark.equation("eq-temperature")
@pytest.mark.parametrize("zeta", [0.3, 1.0, 2.5])
def test_a_tempered_softmax_is_the_normalized_power_of_the_policy(zeta):
    power = softmax_rows(TEMPERATURE_LOGITS) ** (1 / zeta)
    np.testing.assert_allclose(softmax(TEMPERATURE_LOGITS / zeta), power / power.sum(), rtol=1e-12)


def tempered(theta, zeta):
    return softmax_rows(np.asarray(theta) / zeta)


def log_prob_gradients(zeta):
    """∇_θ log π^ζ(a) of every action a, by central differences: rows a."""
    return np.array(
        [
            central_differences(lambda t, a=a: math.log(tempered(t, zeta)[a]), TEMPERATURE_LOGITS)
            for a in range(len(TEMPERATURE_LOGITS))
        ]
    )


@pytest.mark.equation("eq-naive-temperature", "eq-tempered-gradient", "eq-score-temperature")
@pytest.mark.parametrize("zeta", [0.5, 2.0])
def test_sampling_at_a_temperature_and_the_gradients_it_estimates(zeta):
    pi, pi_zeta = tempered(TEMPERATURE_LOGITS, 1.0), tempered(TEMPERATURE_LOGITS, zeta)
    scores, tempered_scores = log_prob_gradients(1.0), log_prob_gradients(zeta)
    naive = (pi_zeta * TEMPERATURE_REWARDS) @ scores
    reweighted = (pi * (pi_zeta / pi) * TEMPERATURE_REWARDS) @ scores
    np.testing.assert_allclose(naive, reweighted, atol=1e-12)
    tempered_objective = central_differences(
        lambda t: float(tempered(t, zeta) @ TEMPERATURE_REWARDS), TEMPERATURE_LOGITS
    )
    np.testing.assert_allclose(
        (pi_zeta * TEMPERATURE_REWARDS) @ tempered_scores, tempered_objective, atol=1e-8
    )
    np.testing.assert_allclose(scores, zeta * tempered_scores + (pi_zeta - pi), atol=1e-8)


# ---------------------------------------------------------------------------------------------
# Chapter 11: the averaged iterate and the dual function of the constrained bandit
# ---------------------------------------------------------------------------------------------

BANDIT_REWARD = np.array([0.35, 0.70, 0.85, 0.95])
BANDIT_COST = np.array([0.0, 0.0, 0.04, 0.20])
BANDIT_BUDGET = 0.05


@pytest.mark.equation("eq-averaged-iterate")
def test_the_values_of_the_averaged_policy_are_the_averaged_values():
    rng = np.random.default_rng(17)
    iterates = softmax_rows(rng.normal(size=(25, 4)) * 2)
    average = iterates.mean(axis=0)
    rewards_of_iterates = [
        sum(p * r for p, r in zip(pi, BANDIT_REWARD, strict=True)) for pi in iterates
    ]
    costs_of_iterates = [
        sum(p * c for p, c in zip(pi, BANDIT_COST, strict=True)) for pi in iterates
    ]
    assert average @ BANDIT_REWARD == pytest.approx(np.mean(rewards_of_iterates), abs=1e-14)
    assert average @ BANDIT_COST == pytest.approx(np.mean(costs_of_iterates), abs=1e-14)


@pytest.mark.equation("eq-dual-function")
def test_the_dual_function_is_the_maximized_lagrangian_and_its_minimum_the_optimum():
    def dual(nu):
        return nu * BANDIT_BUDGET + max(BANDIT_REWARD - nu * BANDIT_COST)

    for nu in np.linspace(0.0, 12.0, 25):
        # max over every mixed policy of the Lagrangian, a linear program over the simplex
        lagrangian = linprog(
            -(BANDIT_REWARD - nu * BANDIT_COST), A_eq=np.ones((1, 4)), b_eq=[1.0], bounds=(0, 1)
        )
        assert -lagrangian.fun + nu * BANDIT_BUDGET == pytest.approx(dual(nu), abs=1e-9)
    constrained = linprog(
        -BANDIT_REWARD, A_ub=BANDIT_COST[None], b_ub=[BANDIT_BUDGET], A_eq=np.ones((1, 4)),
        b_eq=[1.0], bounds=(0, 1),
    )  # fmt: skip
    # D is convex and piecewise linear: its minimum over nu >= 0 is at 0 or at a kink.
    kinks = [0.0] + [
        (BANDIT_REWARD[i] - BANDIT_REWARD[j]) / (BANDIT_COST[i] - BANDIT_COST[j])
        for i, j in itertools.combinations(range(4), 2)
        if BANDIT_COST[i] != BANDIT_COST[j]
    ]
    smallest = min(dual(nu) for nu in kinks if nu >= 0)
    assert smallest == pytest.approx(-constrained.fun, abs=1e-9)  # strong duality
    assert all(dual(nu) >= -constrained.fun - 1e-12 for nu in np.linspace(0, 50, 501))


# ---------------------------------------------------------------------------------------------
# Chapter 14: category errors
# ---------------------------------------------------------------------------------------------


@pytest.mark.equation("eq-sample-baseline-value")
def test_a_sample_baseline_adds_the_value_minus_the_baseline_to_the_advantage():
    rng = np.random.default_rng(19)
    transition, reward, policy, terminal, _ = random_mdp(rng, 4, 2, num_terminal=1)
    gamma, baseline = 0.8, 0.37
    # E[G_t - b | s, a]: the expected discounted reward from (s, a), summed as a power series
    conditional = state_action_power_series(transition, reward, policy, terminal, gamma) - baseline
    # A_π and v_π from a linear solve and a one-step lookahead
    values, _ = linear_solve_values(transition, reward, policy, gamma, terminal)
    q = np.einsum("sap,sap->sa", transition, reward + gamma * values[None, None, :])
    expected = (q - values[:, None]) + (values[:, None] - baseline)
    np.testing.assert_allclose(conditional[~terminal], expected[~terminal], atol=1e-10)


@pytest.mark.equation("eq-privileged-critic-td")
def test_a_privileged_critic_s_td_error_adds_its_errors_given_the_history():
    rng = np.random.default_rng(21)
    # A hidden key (2 values) decides the observation after a0 and the final reward; gamma = 1.
    key_prior, policy0 = rng.dirichlet(np.ones(2)), rng.dirichlet(np.ones(2))
    obs = rng.dirichlet(np.ones(2), size=(2, 2))  # [key, a0] -> o
    policy1 = rng.dirichlet(np.ones(2), size=(2, 2))  # [a0, o] -> a1
    final = rng.normal(size=(2, 2, 2, 2))  # [key, a0, o, a1]
    critic0, critic1 = rng.normal(size=2), rng.normal(size=(2, 2, 2))  # V(h0, key), V(h1, key)

    def key_posterior(a0, o):
        joint = key_prior * obs[:, a0, o]
        return joint / joint.sum()

    def v1(a0, o):
        return sum(key_posterior(a0, o)[k] * policy1[a0, o] @ final[k, a0, o] for k in range(2))

    q0 = np.array(
        [
            sum(key_prior[k] * obs[k, a0, o] * v1(a0, o) for k in range(2) for o in range(2))
            for a0 in range(2)
        ]
    )
    v0 = policy0 @ q0
    for a0 in range(2):
        # E[δ_0 | h_0, a_0] with δ_0 = 0 + V(h̃_1) - V(h̃_0), by enumerating key and o
        mean_td = sum(
            key_prior[k] * obs[k, a0, o] * (critic1[a0, o, k] - critic0[k])
            for k in range(2)
            for o in range(2)
        )
        next_error = sum(
            key_prior[k] * obs[k, a0, o] * (critic1[a0, o, k] - v1(a0, o))
            for k in range(2)
            for o in range(2)
        )
        now_error = key_prior @ (critic0 - v0)
        assert mean_td == pytest.approx((q0[a0] - v0) + next_error - now_error, abs=1e-12)
    for a0, o, a1 in itertools.product(range(2), repeat=3):
        posterior = key_posterior(a0, o)
        mean_td = sum(posterior[k] * (final[k, a0, o, a1] - critic1[a0, o, k]) for k in range(2))
        q1 = posterior @ final[:, a0, o, a1]
        now_error = posterior @ (critic1[a0, o] - v1(a0, o))
        assert mean_td == pytest.approx((q1 - v1(a0, o)) + 0.0 - now_error, abs=1e-12)


@pytest.mark.equation("eq-variance-bias")
def test_the_mean_squared_error_is_squared_bias_plus_total_variance():
    rng = np.random.default_rng(23)
    estimates, probabilities = rng.normal(size=(12, 5)), rng.dirichlet(np.ones(12))
    target = rng.normal(size=5)
    mse = sum(p * np.sum((g - target) ** 2) for p, g in zip(probabilities, estimates, strict=True))
    mean = probabilities @ estimates
    total_variance = sum(
        p * np.sum((g - mean) ** 2) for p, g in zip(probabilities, estimates, strict=True)
    )
    assert mse == pytest.approx(np.sum((mean - target) ** 2) + total_variance, abs=1e-12)
