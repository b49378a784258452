"""Labeled equations of chapter 3 that no other test computes, checked on concrete numbers
(the rule: tests/chapters/test_equations.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.oracles import (
    central_differences,
    conversation_logits,
    enumerate_conversations,
    softmax_rows,
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
