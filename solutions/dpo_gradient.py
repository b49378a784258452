"""Exercise ``dpo-gradient`` (chapter 6, two stars): DPO on a categorical policy.

A policy over K responses to one prompt is a softmax of logits ``theta``, and the reference
policy is given by the log-probabilities ``ref_logprobs`` of the same K responses. A data set
holds N preference pairs: ``chosen[i]`` was preferred to ``rejected[i]`` (both response
indices). The DPO loss, averaged over the pairs, is

    L(theta) = (1/N) sum_i -log sigmoid(u_i),
    u_i = beta * [(log pi(c_i) - ref(c_i)) - (log pi(r_i) - ref(r_i))],

with ``log pi = log_softmax(theta)``. Because log pi(c) - log pi(r) = theta_c - theta_r, the
softmax normalizer cancels, and the gradient is

    dL/dtheta = -(beta/N) sum_i sigmoid(-u_i) (e_{c_i} - e_{r_i}).

Implement

* :func:`dpo_loss`, the mean loss (a float), and :func:`dpo_logit_gradient`, its gradient
  (shape (K,)), both stable for logits and margins of any size (``-log sigmoid(u)`` is
  ``log(1 + exp(-u))``: use ``np.logaddexp``) and both raising ``ValueError`` for bad input;
* :func:`test_dpo_logit_gradient`, a test that checks the gradient by central finite
  differences of the loss.
"""

from __future__ import annotations

import numpy as np


def dpo_loss(logits, ref_logprobs, chosen, rejected, beta):
    """Mean DPO loss of the preference pairs for a softmax policy over K responses.

    Parameters
    ----------
    logits : array_like
        Shape (K,), K >= 1: the policy's logits ``theta``.
    ref_logprobs : array_like
        Shape (K,): log-probabilities of the K responses under the reference (each <= 0).
    chosen : array_like of int
        Shape (N,), N >= 1: the preferred response of each pair, in [0, K).
    rejected : array_like of int
        Shape (N,): the other response of each pair, in [0, K).
    beta : float
        The KL coefficient, > 0.

    Returns
    -------
    float
        The mean of ``-log sigmoid(u_i)`` over the pairs.

    Raises
    ------
    ValueError
        If ``logits`` is not a finite 1-D array with K >= 1; ``ref_logprobs`` does not have
        its shape, is not finite or is positive somewhere; ``chosen`` or ``rejected`` is not a
        1-D array of integers in [0, K) of the same length N >= 1; or ``beta`` is not a positive
        finite number. The message starts with the argument's name.

    Examples
    --------
    A pair the policy orders as the reference does has margin 0 and loss log 2.

    >>> round(dpo_loss([0.0, 0.0], np.log([0.5, 0.5]), [0], [1], beta=1.0), 6)
    0.693147
    """
    ### BEGIN SOLUTION
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim != 1 or logits.size == 0 or not np.all(np.isfinite(logits)):
        raise ValueError(f"logits must be a finite 1-D array with K >= 1; got {logits!r}")
    ref_logprobs = np.asarray(ref_logprobs, dtype=np.float64)
    if ref_logprobs.shape != logits.shape:
        raise ValueError(
            f"ref_logprobs must have the shape of logits {logits.shape}; got {ref_logprobs.shape}"
        )
    if not np.all(np.isfinite(ref_logprobs)) or np.any(ref_logprobs > 0.0):
        raise ValueError(
            f"ref_logprobs must be finite log-probabilities (<= 0); got {ref_logprobs}"
        )
    pairs = {}
    for name, indices in (("chosen", chosen), ("rejected", rejected)):
        indices = np.asarray(indices)
        if indices.ndim != 1 or indices.size == 0 or indices.dtype.kind not in "iu":
            raise ValueError(f"{name} must be a 1-D array of integer indices; got {indices!r}")
        if np.any((indices < 0) | (indices >= logits.size)):
            raise ValueError(f"{name} must hold indices in [0, {logits.size}); got {indices}")
        pairs[name] = indices
    if pairs["rejected"].shape != pairs["chosen"].shape:
        raise ValueError(
            f"rejected must have the shape of chosen {pairs['chosen'].shape}; "
            f"got {pairs['rejected'].shape}"
        )
    if not (np.isfinite(beta) and beta > 0.0):
        raise ValueError(f"beta must be a positive finite number; got {beta!r}")

    # log pi(c) - log pi(r) = theta_c - theta_r: the softmax normalizer cancels.
    c, r = pairs["chosen"], pairs["rejected"]
    margins = beta * ((logits[c] - logits[r]) - (ref_logprobs[c] - ref_logprobs[r]))
    return float(np.mean(np.logaddexp(0.0, -margins)))  # -log sigmoid(u) = log(1 + e^-u)
    ### END SOLUTION


def dpo_logit_gradient(logits, ref_logprobs, chosen, rejected, beta):
    """Gradient of :func:`dpo_loss` with respect to the logits.

    Parameters
    ----------
    logits, ref_logprobs, chosen, rejected, beta
        As for :func:`dpo_loss`.

    Returns
    -------
    numpy.ndarray
        Shape (K,), float64: ``-(beta/N) sum_i sigmoid(-u_i) (e_{c_i} - e_{r_i})``. Its
        entries sum to 0, and a response that appears in no pair gets exactly 0.

    Raises
    ------
    ValueError
        As :func:`dpo_loss`.

    Examples
    --------
    >>> dpo_logit_gradient([0.0, 0.0], np.log([0.5, 0.5]), [0], [1], beta=1.0).tolist()
    [-0.5, 0.5]
    """
    ### BEGIN SOLUTION
    dpo_loss(logits, ref_logprobs, chosen, rejected, beta)  # the same checks
    logits = np.asarray(logits, dtype=np.float64)
    ref_logprobs = np.asarray(ref_logprobs, dtype=np.float64)
    c, r = np.asarray(chosen), np.asarray(rejected)
    margins = beta * ((logits[c] - logits[r]) - (ref_logprobs[c] - ref_logprobs[r]))
    # sigmoid(-u) = exp(-log(1 + e^u)), finite for any u.
    weights = beta * np.exp(-np.logaddexp(0.0, margins)) / len(c)
    gradient = np.zeros_like(logits)
    np.add.at(gradient, c, -weights)  # add.at: a response may appear in several pairs
    np.add.at(gradient, r, weights)
    return gradient
    ### END SOLUTION


def test_dpo_logit_gradient():
    """:func:`dpo_logit_gradient` agrees with central finite differences of :func:`dpo_loss`.

    Random policies over 2 to 6 responses, pairs that repeat responses and leave some out,
    several values of beta, and logits large enough that a naive ``log(sigmoid(u))`` fails.
    """
    ### BEGIN SOLUTION
    rng = np.random.default_rng(6)
    for size, num_pairs, beta, scale in [(2, 1, 1.0, 1.0), (4, 6, 0.1, 3.0), (6, 3, 2.0, 50.0)]:
        logits = scale * rng.normal(size=size)
        ref_logprobs = np.log(rng.dirichlet(np.ones(size)))
        chosen = rng.integers(0, size, size=num_pairs)
        rejected = (chosen + rng.integers(1, size, size=num_pairs)) % size if size > 1 else chosen
        analytic = dpo_logit_gradient(logits, ref_logprobs, chosen, rejected, beta)
        numerical = np.zeros(size)
        step = 1e-6
        for k in range(size):
            shift = np.zeros(size)
            shift[k] = step
            up = dpo_loss(logits + shift, ref_logprobs, chosen, rejected, beta)
            down = dpo_loss(logits - shift, ref_logprobs, chosen, rejected, beta)
            numerical[k] = (up - down) / (2 * step)
        np.testing.assert_allclose(analytic, numerical, rtol=1e-5, atol=1e-8)
        assert abs(analytic.sum()) < 1e-12
        unused = np.setdiff1d(np.arange(size), np.concatenate([chosen, rejected]))
        assert np.all(analytic[unused] == 0.0)
    ### END SOLUTION
