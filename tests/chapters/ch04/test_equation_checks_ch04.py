"""Labeled equations of chapter 4 that no other test computes, checked on concrete numbers
(the rule: tests/chapters/test_equations.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest


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
