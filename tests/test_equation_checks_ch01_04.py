"""Checks of labeled equations of chapters 1-4 that no unit or claims test computed.

Each test computes both sides of its equations on concrete numbers, by separate routes
(explicit sums, enumeration of every episode or text, power series, central differences),
and names them with ``pytest.mark.equation`` (the rule: tests/test_equations.py).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rlfound.mdp import action_values, state_values
from rlfound.pomdp import belief_filter
from rlfound.returns import discounted_returns
from rlfound.tokens import parser_marginal
from tests.oracles import (
    central_differences,
    conversation_logits,
    enumerate_conversations,
    policy_average,
    power_series_values,
    random_mdp,
    softmax_rows,
)


@pytest.mark.equation("eq-return-recursion", "eq-reward-to-go")
def test_explicit_returns_satisfy_the_one_step_recursion():
    rng = np.random.default_rng(11)
    rewards, gamma = rng.normal(size=9), 0.85
    horizon = len(rewards)
    explicit = np.array(
        [sum(gamma ** (k - t) * rewards[k] for k in range(t, horizon)) for t in range(horizon)]
    )
    following = np.append(explicit[1:], 0.0)  # G_T = 0
    np.testing.assert_allclose(explicit, rewards + gamma * following, atol=1e-12)
    np.testing.assert_allclose(discounted_returns(rewards, gamma), explicit, atol=1e-12)


def mdp_with_power_series_values(seed, gamma):
    """A random MDP with v_π = Σ_n γ^n P_π^n r_π, the expected discounted reward, summed."""
    rng = np.random.default_rng(seed)
    transition, reward, policy, terminal, _ = random_mdp(rng, 5, 3, num_terminal=1)
    p_pi, r_pi = policy_average(transition, reward, policy, terminal)
    return transition, reward, policy, terminal, power_series_values(p_pi, r_pi, gamma)


def state_action_power_series(transition, reward, policy, terminal, gamma):
    """q_π(s, a) = E[G_0 | s_0 = s, a_0 = a], as the power series of the chain on (s, a)."""
    num_states, num_actions, _ = transition.shape
    pairs = list(itertools.product(range(num_states), range(num_actions)))
    chain = np.zeros((len(pairs), len(pairs)))
    first = np.zeros(len(pairs))
    for i, (s, a) in enumerate(pairs):
        if terminal[s]:
            chain[i, i] = 1.0  # absorbing and unrewarded
            continue
        first[i] = transition[s, a] @ reward[s, a]
        for j, (s_next, a_next) in enumerate(pairs):
            if not terminal[s_next]:
                chain[i, j] = transition[s, a, s_next] * policy[s_next, a_next]
    return power_series_values(chain, first, gamma).reshape(num_states, num_actions)


@pytest.mark.equation("eq-bellman-v", "eq-bellman-v-mdp")
@pytest.mark.parametrize("gamma", [0.5, 0.95])
def test_the_expected_discounted_reward_satisfies_the_bellman_equation(gamma):
    transition, reward, policy, terminal, values = mdp_with_power_series_values(3, gamma)
    num_states, num_actions, _ = transition.shape
    for s in np.flatnonzero(~terminal):
        one_step = sum(
            policy[s, a]
            * transition[s, a, s_next]
            * (reward[s, a, s_next] + gamma * (0.0 if terminal[s_next] else values[s_next]))
            for a in range(num_actions)
            for s_next in range(num_states)
        )
        assert one_step == pytest.approx(values[s], abs=1e-10)
    np.testing.assert_allclose(
        state_values(transition, reward, policy, gamma, terminal), values, atol=1e-10
    )


@pytest.mark.equation("eq-q-value", "eq-bellman-q-mdp")
@pytest.mark.parametrize("gamma", [0.5, 0.95])
def test_action_values_are_one_step_lookaheads_of_the_values(gamma):
    transition, reward, policy, terminal, values = mdp_with_power_series_values(4, gamma)
    q = state_action_power_series(transition, reward, policy, terminal, gamma)
    num_states, num_actions, _ = transition.shape
    live_values = np.where(terminal, 0.0, values)
    live_q = np.where(terminal[:, None], 0.0, q)
    for s in np.flatnonzero(~terminal):
        for a in range(num_actions):
            expected_next = sum(
                transition[s, a, s_next] * (reward[s, a, s_next] + gamma * live_values[s_next])
                for s_next in range(num_states)
            )
            assert q[s, a] == pytest.approx(expected_next, abs=1e-10)
            bellman_q = sum(
                transition[s, a, s_next]
                * (reward[s, a, s_next] + gamma * policy[s_next] @ live_q[s_next])
                for s_next in range(num_states)
            )
            assert q[s, a] == pytest.approx(bellman_q, abs=1e-10)
    np.testing.assert_allclose(
        action_values(transition, reward, policy, gamma, terminal)[~terminal],
        q[~terminal],
        atol=1e-10,
    )


@pytest.mark.equation("eq-parser-objective", "eq-parser-marginal")
def test_the_objective_over_texts_is_the_objective_over_actions():
    rng = np.random.default_rng(5)
    vocab, length, num_actions = 3, 3, 3
    start, after = rng.dirichlet(np.ones(vocab)), rng.dirichlet(np.ones(vocab), size=vocab)
    texts = list(itertools.product(range(vocab), repeat=length))
    probs = np.array(
        [start[x[0]] * np.prod([after[x[j - 1], x[j]] for j in range(1, length)]) for x in texts]
    )
    parse = np.array([(x[0] + 2 * x[-1]) % num_actions for x in texts])  # g(x)
    reward = rng.normal(size=num_actions)  # R(a)
    by_texts = sum(p * reward[a] for p, a in zip(probs, parse, strict=True))
    by_hand = np.array([probs[parse == a].sum() for a in range(num_actions)])
    marginal = parser_marginal(np.log(probs), parse, num_actions)
    np.testing.assert_allclose(marginal, by_hand, atol=1e-12)
    assert marginal @ reward == pytest.approx(by_texts, abs=1e-12)


@pytest.mark.equation("eq-belief-state", "eq-belief-update")
def test_the_filtered_belief_is_the_posterior_over_hidden_paths():
    rng = np.random.default_rng(9)
    num_states, num_actions, num_observations, horizon = 3, 2, 2, 4
    transition = rng.dirichlet(np.ones(num_states), size=(num_states, num_actions))
    sensor = rng.dirichlet(np.ones(num_observations), size=num_states)
    prior = rng.dirichlet(np.ones(num_states))
    actions = rng.integers(num_actions, size=horizon)
    observations = rng.integers(num_observations, size=horizon)
    beliefs = belief_filter(prior, actions, observations, transition, sensor)
    for t in range(horizon + 1):
        # Pr(s_t = s | o_1..t, a_0..t-1): sum the joint over every hidden path s_0..s_t.
        joint = np.zeros(num_states)
        for path in itertools.product(range(num_states), repeat=t + 1):
            weight = prior[path[0]]
            for k in range(t):
                weight *= transition[path[k], actions[k], path[k + 1]]
                weight *= sensor[path[k + 1], observations[k]]
            joint[path[-1]] += weight
        np.testing.assert_allclose(beliefs[t], joint / joint.sum(), atol=1e-12)
        if t > 0:
            # One step of eq-belief-update written out from the previous belief.
            previous, a, o = beliefs[t - 1], actions[t - 1], observations[t - 1]
            numerator = np.array(
                [
                    sensor[s_next, o]
                    * sum(transition[s, a, s_next] * previous[s] for s in range(3))
                    for s_next in range(num_states)
                ]
            )
            np.testing.assert_allclose(beliefs[t], numerator / numerator.sum(), atol=1e-12)


# The chapter's tiger: state 0 = tiger behind the left door; listening costs 1 and is right
# with probability 0.85; opening the tiger's door costs 100, the other one earns 10.
TIGER_HEAR = np.array([[0.85, 0.15], [0.15, 0.85]])
TIGER_OPEN = np.array([[-100.0, 10.0], [10.0, -100.0]])  # [door, tiger's state]


def tiger_moves(switch):
    return np.array([[1 - switch, switch], [switch, 1 - switch]])


def tiger_bellman(belief, listens_left, switch):
    """eq-tiger-bellman over beliefs: open now, or pay 1, hear o with Pr(o | bel), go on."""
    open_now = float(np.max(TIGER_OPEN @ belief))
    if listens_left == 0:
        return open_now
    predicted = tiger_moves(switch).T @ belief
    listen = -1.0
    for o in (0, 1):
        joint = TIGER_HEAR[:, o] * predicted
        listen += joint.sum() * tiger_bellman(joint / joint.sum(), listens_left - 1, switch)
    return max(open_now, listen)


def tiger_best_over_histories(heard, listens_left, switch):
    """The best policy over observation histories, by the unnormalized joint Pr(heard, s) of
    every hidden path: each history picks its own best action, so maxima of sums compose."""
    joint = np.zeros(2)
    for path in itertools.product((0, 1), repeat=len(heard) + 1):
        weight = 0.5
        for t, o in enumerate(heard):
            weight *= tiger_moves(switch)[path[t], path[t + 1]] * TIGER_HEAR[path[t + 1], o]
        joint[path[-1]] += weight
    open_now = float(np.max(TIGER_OPEN @ joint))
    if listens_left == 0:
        return open_now
    listen = -joint.sum() + sum(
        tiger_best_over_histories((*heard, o), listens_left - 1, switch) for o in (0, 1)
    )
    return max(open_now, listen)


@pytest.mark.equation("eq-tiger-bellman")
@pytest.mark.parametrize("switch", [0.0, 0.1])
@pytest.mark.parametrize("listens", [0, 1, 2, 3, 4])
def test_the_belief_bellman_equation_is_the_best_policy_over_histories(switch, listens):
    assert tiger_bellman(np.array([0.5, 0.5]), listens, switch) == pytest.approx(
        tiger_best_over_histories((), listens, switch), abs=1e-10
    )


# Two turns of two tokens from a bigram policy over two tokens: row 2 of the table is the start.
TOKEN_TURNS, TOKENS_PER_TURN, TOKEN_VOCAB, TOKEN_GAMMA = 2, 2, 2, 0.8


def token_episodes(table):
    """Every episode: (probability, tokens, per-token scores (T, L, V + 1, V), rewards (T,))."""
    probs = softmax_rows(table)
    rewards_of = np.array([[0.3, -0.2, 1.0, 0.5], [1.0, 0.0, -0.5, 2.0]])  # by turn, by 2 tokens
    listed = []
    for tokens in itertools.product(range(TOKEN_VOCAB), repeat=TOKEN_TURNS * TOKENS_PER_TURN):
        probability, scores = 1.0, np.zeros((len(tokens), *table.shape))
        for j, token in enumerate(tokens):
            row = tokens[j - 1] if j > 0 else TOKEN_VOCAB
            probability *= probs[row, token]
            scores[j, row] = np.eye(TOKEN_VOCAB)[token] - probs[row]  # eq-score-softmax
        turns = np.reshape(tokens, (TOKEN_TURNS, TOKENS_PER_TURN))
        rewards = np.array([rewards_of[t, 2 * turn[0] + turn[1]] for t, turn in enumerate(turns)])
        listed.append(
            (probability, tokens, scores.reshape(TOKEN_TURNS, TOKENS_PER_TURN, -1), rewards)
        )
    return listed


def token_objective(table):
    return sum(
        p * sum(TOKEN_GAMMA**t * r for t, r in enumerate(rs))
        for p, _, _, rs in token_episodes(table)
    )


def token_estimates(table):
    """The token-level REINFORCE estimate of every episode and its probability."""
    listed = token_episodes(table)
    estimates = []
    for _, _, scores, rewards in listed:
        to_go = [
            sum(TOKEN_GAMMA ** (k - t) * rewards[k] for k in range(t, TOKEN_TURNS))
            for t in range(TOKEN_TURNS)
        ]
        estimates.append(
            sum(
                TOKEN_GAMMA**t * to_go[t] * scores[t, j]
                for t in range(TOKEN_TURNS)
                for j in range(TOKENS_PER_TURN)
            )
        )
    return np.array([p for p, *_ in listed]), np.array(estimates)


TOKEN_TABLE = np.array([[0.4, -0.3], [-0.8, 0.2], [0.1, 0.6]])


@pytest.mark.equation("eq-reinforce-tokens")
def test_token_level_reinforce_has_the_gradient_as_its_mean():
    probabilities, estimates = token_estimates(TOKEN_TABLE)
    assert probabilities.sum() == pytest.approx(1.0, abs=1e-12)
    gradient = central_differences(token_objective, TOKEN_TABLE).ravel()
    np.testing.assert_allclose(probabilities @ estimates, gradient, atol=1e-8)


@pytest.mark.equation("eq-trace-covariance")
def test_the_total_variance_is_the_second_moment_minus_the_squared_gradient():
    probabilities, estimates = token_estimates(TOKEN_TABLE)
    mean = probabilities @ estimates
    entrywise_variances = probabilities @ (estimates - mean) ** 2
    gradient = central_differences(token_objective, TOKEN_TABLE).ravel()
    second_moment = probabilities @ np.sum(estimates**2, axis=1)
    assert entrywise_variances.sum() == pytest.approx(second_moment - gradient @ gradient, abs=1e-8)


@pytest.mark.equation("eq-baseline-parabolas")
@pytest.mark.parametrize("gamma", [1.0, 0.7])
def test_the_second_moment_is_one_parabola_per_state(gamma):
    # The chapter's conversation: every state occurs at one turn only.
    logits = conversation_logits(2)
    policy = softmax_rows(logits)
    baseline = np.array([0.9, -0.4, 1.3, 0.0, 0.0])
    listed = enumerate_conversations(2, logits)
    second_moment = 0.0
    visits, weighted = np.zeros(len(logits)), np.zeros(len(logits))
    for probability, states, actions, rewards in listed:
        estimate = np.zeros_like(logits)
        for t, (s, a) in enumerate(zip(states, actions, strict=True)):
            to_go = sum(gamma ** (k - t) * rewards[k] for k in range(t, len(rewards)))
            score = np.eye(2)[a] - policy[s]
            estimate[s] += gamma**t * (to_go - baseline[s]) * score
            # Pr(s_t = s) E[γ^{2t} |ψ|² (G_t - b(s))² | s_t = s], accumulated state by state.
            visits[s] += probability
            weighted[s] += (
                probability * gamma ** (2 * t) * (score @ score) * (to_go - baseline[s]) ** 2
            )
        second_moment += probability * np.sum(estimate**2)
    per_state = [visits[s] * (weighted[s] / visits[s]) for s in np.flatnonzero(visits)]
    assert second_moment == pytest.approx(sum(per_state), abs=1e-12)


@pytest.mark.equation("eq-optimal-baseline-two-actions")
def test_the_two_action_optimal_baseline_weights_each_value_by_the_other_probability():
    rng = np.random.default_rng(2)
    for policy, q in zip(rng.dirichlet(np.ones(2), size=20), rng.normal(size=(20, 2)), strict=True):
        squared_scores = np.array([np.sum((np.eye(2)[a] - policy) ** 2) for a in (0, 1)])
        general = (policy * squared_scores) @ q / (policy @ squared_scores)  # eq-optimal-baseline
        assert general == pytest.approx(policy[1] * q[0] + policy[0] * q[1], abs=1e-12)


@pytest.mark.equation("eq-token-advantage")
def test_a_token_action_value_is_the_value_of_the_longer_prefix():
    rng = np.random.default_rng(6)
    vocab, length = 2, 3
    start, after = rng.dirichlet(np.ones(vocab)), rng.dirichlet(np.ones(vocab), size=vocab)
    responses = list(itertools.product(range(vocab), repeat=length))
    outcome = dict(zip(responses, rng.normal(size=len(responses)), strict=True))

    def prob(response):
        return start[response[0]] * np.prod(
            [after[response[j - 1], response[j]] for j in range(1, len(response))]
        )

    def value(prefix):
        """v_π(prefix) by backward recursion over the next token."""
        if len(prefix) == length:
            return outcome[prefix]
        dist = start if not prefix else after[prefix[-1]]
        return sum(dist[v] * value((*prefix, v)) for v in range(vocab))

    for response in responses:
        for j in range(1, length + 1):
            # q_π(x_<j, x_j) = E[R | x_<=j], by conditioning the joint on the prefix.
            matching = [x for x in responses if x[:j] == response[:j]]
            q = sum(prob(x) * outcome[x] for x in matching) / sum(prob(x) for x in matching)
            expected = value(response[:j]) if j < length else outcome[response]
            assert q == pytest.approx(expected, abs=1e-12)
