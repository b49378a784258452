"""Chapter 6: KL regularization."""

from __future__ import annotations

import math

import numpy as np

from tests.oracles.basics import _read_only

# ---------------------------------------------------------------------------------------------
# --- Chapter 6: KL regularization
# ---------------------------------------------------------------------------------------------

#: The running example of chapter 6: five responses A-E, the reference and their rewards.
KL_REF_PROBS = _read_only([0.4, 0.3, 0.15, 0.1, 0.05])
KL_REWARDS = _read_only([0.0, 0.2, 0.5, 0.3, 1.0])


def kl_by_hand(p, q):
    """Σ_x p(x) log(p(x) / q(x)) by a loop with math.log; 0 log(0 / q) = 0, inf if q = 0 < p."""
    total = 0.0
    for px, qx in zip(np.asarray(p, float).ravel(), np.asarray(q, float).ravel(), strict=True):
        if px == 0.0:
            continue
        if qx == 0.0:
            return math.inf
        total += px * math.log(px / qx)
    return total


def tilted_by_hand(ref, rewards, beta):
    """π*(x) = ref(x) exp(R(x)/β) / Z, term by term with math.exp (rewards shifted by max R)."""
    top = max(rewards)
    weights = [r * math.exp((x - top) / beta) for r, x in zip(ref, rewards, strict=True)]
    total = sum(weights)
    return np.array([w / total for w in weights])


def think_then_answer(max_len=8, p_answer=0.5, base=0.7):
    """Chapter 6's length toy: lengths 1..H, P(correct | L) = 1 - base^L, and the reference's
    P(L) when it answers with probability p_answer at every step and must answer at step H."""
    lengths = np.arange(1, max_len + 1)
    correct = np.array([1.0 - base**n for n in lengths])
    ref = np.array([p_answer * (1.0 - p_answer) ** (n - 1) for n in lengths])
    ref[-1] = (1.0 - p_answer) ** (max_len - 1)
    return lengths, correct, ref


def two_turn_search(p_found, beta=0.5):
    """Chapter 6's two-turn task: the regularized optimum by backward induction, by hand.

    Turn 1: SEARCH (0) or GUESS (1); a search finds the document with probability p_found.
    Turn 2: ANSWER (0) or ASK (1); rewards [found, not found, guess] x [answer, ask] below. The
    reference is uniform at both turns. Returns (turn-1 policy, turn-2 policy per history,
    the value at the start, the turn-2 values) with V(h) = β log Σ_a ½ exp(Q(h, a)/β).
    """
    reward = [[1.0, 0.4], [0.0, 0.4], [0.5, 0.4]]

    def soft(qs):
        value = beta * math.log(sum(0.5 * math.exp(q / beta) for q in qs))
        return value, [0.5 * math.exp((q - value) / beta) for q in qs]

    v2, pol2 = zip(*(soft(reward[h]) for h in range(3)), strict=True)
    q1 = [p_found * v2[0] + (1.0 - p_found) * v2[1], v2[2]]
    v1, pol1 = soft(q1)
    return np.array(pol1), np.array(pol2), v1, np.array(v2)
