"""Chapter 10: entropy and exploration."""

from __future__ import annotations

import itertools
import math

import numpy as np

from tests.oracles.basics import _read_only

# ---------------------------------------------------------------------------------------------
# --- Chapter 10: Entropy and exploration
# ---------------------------------------------------------------------------------------------

#: Chapter 10's policies over the chapter-2 vocabulary (A, B, space, .; rows as BIGRAM_TABLE):
#: the chatty policy (always "A", then random formatting), the decisive policy (a fair coin
#: between "A" and "B", then full stops) and the habit policy of the constrained-decoding section.
_NEVER = -20.0
CHATTY_TABLE = _read_only([[_NEVER, _NEVER, 0.0, 0.0]] * 4 + [[-_NEVER, _NEVER, _NEVER, _NEVER]])
DECISIVE_TABLE = _read_only([[_NEVER, _NEVER, _NEVER, 0.0]] * 4 + [[0.0, 0.0, _NEVER, _NEVER]])
HABIT_TABLE = _read_only(
    [
        [-2.0, -2.0, 0.5, 1.5],
        [-2.0, -2.0, 0.5, 1.5],
        [1.5, -0.5, 0.0, -1.0],
        [0.5, 0.5, 0.0, -1.0],
        [0.0, 0.0, 1.0, -1.0],
    ]
)
#: Chapter 10's REINFORCE run: letters A, B, C, then space and full stop; rows after A, B, C,
#: space, full stop, then the start row.
COLLAPSE_TABLE = _read_only(
    [
        [-0.5, -0.5, -0.5, 1.0, 1.0],
        [-0.5, -0.5, -0.5, 1.0, 1.0],
        [-0.5, -0.5, -0.5, 1.0, 1.0],
        [0.5, 0.3, 0.8, 0.0, 0.0],
        [0.5, 0.3, 0.8, 0.0, 0.0],
        [0.4, 0.2, 0.6, 0.5, 0.3],
    ]
)


def entropy_by_hand(probs):
    """-Σ p log p of one probability vector by a loop with math.log, skipping zeros."""
    return -sum(p * math.log(p) for p in np.asarray(probs, dtype=float).ravel() if p > 0.0)


def softmax_row_by_hand(row):
    """One softmax, with math.exp after subtracting the largest logit."""
    top = max(row)
    weights = [math.exp(z - top) for z in row]
    total = sum(weights)
    return [w / total for w in weights]


def bigram_by_hand(table, length, allowed=None):
    """Every response of a bigram policy, by loops: (responses, π(x), H(π(· | x_<j)) per position).

    Row v of ``table`` (V + 1 rows) holds the logits after token v, the last row those at the
    start. ``allowed(prefix)``, if given, returns the tokens a constraint allows after ``prefix``
    (a sequence of booleans); the next-token distribution is then renormalized over them.
    """
    table = np.asarray(table, dtype=float)
    vocab = table.shape[1]
    responses, probs, entropies = [], [], []
    for response in itertools.product(range(vocab), repeat=length):
        prob, position_entropies = 1.0, []
        for j, token in enumerate(response):
            row = table[response[j - 1]] if j > 0 else table[vocab]
            dist = softmax_row_by_hand(row)
            if allowed is not None:
                keep = allowed(response[:j])
                dist = [p if k else 0.0 for p, k in zip(dist, keep, strict=True)]
                total = sum(dist)
                dist = [p / total for p in dist]
            prob *= dist[token]
            position_entropies.append(entropy_by_hand(dist))
        responses.append(response)
        probs.append(prob)
        entropies.append(position_entropies)
    return responses, np.array(probs), np.array(entropies)


def first_letter(response, letters):
    """The chapter's parser: the first token below ``letters`` (a letter), or -1."""
    return next((token for token in response if token < letters), -1)
