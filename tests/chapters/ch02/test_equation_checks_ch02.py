"""Labeled equations of chapter 2 that no other test computes, checked on concrete numbers
(the rule: tests/chapters/test_equations.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rlfound.pomdp import belief_filter
from rlfound.tokens import parser_marginal


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
