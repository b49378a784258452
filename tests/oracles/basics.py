"""Central finite differences, a softmax reference and random distributions."""

from __future__ import annotations

import numpy as np


def _read_only(array):
    """A read-only copy of ``array``, for constants that several test files share."""
    array = np.array(array, copy=True)
    array.flags.writeable = False
    return array


# ---------------------------------------------------------------------------------------------
# Derivatives and distributions
# ---------------------------------------------------------------------------------------------


def central_differences(f, x, eps=1e-6):
    """Gradient of a scalar function by (f(x + ε e_i) - f(x - ε e_i)) / 2ε, entry by entry."""
    x = np.asarray(x, dtype=np.float64)
    gradient = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        gradient[index] = (float(f(x + step)) - float(f(x - step))) / (2 * eps)
    return gradient


def softmax_rows(logits):
    """exp(θ - max θ) / Σ exp(θ - max θ) along the last axis, written out."""
    logits = np.asarray(logits, dtype=np.float64)
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def random_distributions(rng, shape, sparse=False):
    """Probability vectors along the last axis; with ``sparse``, some entries exactly 0.

    A sparse row never loses all its mass (its first entry is then set to 1).
    """
    weights = rng.random(shape)
    if sparse:
        weights[rng.random(shape) < 0.4] = 0.0
        empty = weights.sum(axis=-1) == 0.0
        weights[empty, 0] = 1.0
    return weights / weights.sum(axis=-1, keepdims=True)
