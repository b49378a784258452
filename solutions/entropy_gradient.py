"""Exercise ``entropy-gradient`` (chapter 10, two stars): the entropy of a softmax and its gradient.

A next-token distribution is the softmax of a row of logits ``z`` (the last axis of an array
of shape (..., K)); its entropy and the gradient of the entropy with respect to the logits are

    H(z)        = -sum_a pi(a) log pi(a),            pi = softmax(z),
    dH / dz_a   = -pi(a) (log pi(a) + H(z)).

Both must be exact for logits of any finite size. Computing ``log(softmax(z))`` fails when a
probability underflows to 0 (it gives ``-inf`` and then ``0 * -inf = nan``), so work with the
log-softmax ``z - max(z) - log(sum(exp(z - max(z))))`` and give every term with probability 0
the value 0 (the convention 0 log 0 = 0).

Implement

* :func:`softmax_entropy`, the entropy of every row (shape (...));
* :func:`softmax_entropy_gradient`, its gradient with respect to the logits (shape (..., K));
* :func:`test_softmax_entropy_gradient`, a test that compares the gradient with central finite
  differences of the entropy and checks rows with extreme logits.
"""

from __future__ import annotations

import numpy as np


def softmax_entropy(logits):
    """Entropy, in nats, of the softmax of each row of ``logits``.

    Parameters
    ----------
    logits : array_like
        Shape (..., K), K >= 1: finite logits, one distribution per row (the last axis).

    Returns
    -------
    numpy.ndarray or float
        Shape (...): -sum_a pi(a) log pi(a) for every row; a scalar for a 1-D input.

    Raises
    ------
    ValueError
        If ``logits`` is a scalar, has an empty last axis, or holds a NaN or an infinity.

    Examples
    --------
    >>> float(softmax_entropy([0.0, 0.0, 0.0, 0.0]))  # log 4
    1.3862943611198906
    >>> softmax_entropy([[0.0, 0.0], [1000.0, -1000.0]]).tolist()
    [0.6931471805599453, 0.0]
    """
    ### BEGIN SOLUTION
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim == 0 or logits.shape[-1] == 0:
        raise ValueError(f"logits must have shape (..., K) with K >= 1; got shape {logits.shape}")
    if not np.all(np.isfinite(logits)):
        raise ValueError("logits must be finite")
    # Subtract the largest logit first; a logit more than ~1.8e308 below it gives -inf, that is
    # probability 0, which is the right answer, so the overflow is expected.
    with np.errstate(over="ignore"):
        shifted = logits - logits.max(axis=-1, keepdims=True)
    logprobs = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
    probs = np.exp(logprobs)
    # 0 log 0 = 0: never multiply a zero probability by its (possibly infinite) logarithm.
    p_log_p = np.where(probs > 0.0, probs * np.where(probs > 0.0, logprobs, 0.0), 0.0)
    return -p_log_p.sum(axis=-1) + 0.0
    ### END SOLUTION


def softmax_entropy_gradient(logits):
    """Gradient of :func:`softmax_entropy` with respect to the logits, row by row.

    Parameters
    ----------
    logits : array_like
        Shape (..., K), K >= 1: finite logits.

    Returns
    -------
    numpy.ndarray
        Shape (..., K): -pi(a) (log pi(a) + H) for every entry; each row sums to 0.

    Raises
    ------
    ValueError
        As :func:`softmax_entropy`.

    Examples
    --------
    >>> softmax_entropy_gradient([0.0, np.log(3.0)]).round(6).tolist()  # pi = (1/4, 3/4)
    [0.20599, -0.20599]
    >>> bool(np.allclose(softmax_entropy_gradient([0.0, 0.0, 0.0]), 0.0))  # the maximum of H
    True
    """
    ### BEGIN SOLUTION
    entropy = np.expand_dims(softmax_entropy(logits), -1)  # also checks the input
    logits = np.asarray(logits, dtype=np.float64)
    with np.errstate(over="ignore"):
        shifted = logits - logits.max(axis=-1, keepdims=True)
    logprobs = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
    probs = np.exp(logprobs)
    p_log_p = np.where(probs > 0.0, probs * np.where(probs > 0.0, logprobs, 0.0), 0.0)
    # -pi (log pi + H) = -(pi log pi) - pi H; both terms are exactly 0 where pi = 0.
    return -p_log_p - probs * entropy + 0.0
    ### END SOLUTION


def test_softmax_entropy_gradient():
    """The gradient matches central differences, and extreme rows give exact, finite answers.

    Random logits of several shapes (the entropy of an array is the sum of its rows'
    entropies, so its gradient is the row-by-row gradient); rows with huge logits, where the
    answer is known exactly; and the checks every entropy gradient passes: rows sum to 0 and
    the uniform distribution has gradient 0.
    """
    ### BEGIN SOLUTION
    rng = np.random.default_rng(10)
    for shape in ((1,), (2,), (5,), (3, 4), (2, 2, 6)):
        logits = 2.0 * rng.normal(size=shape)
        gradient = softmax_entropy_gradient(logits)
        assert gradient.shape == logits.shape
        numerical = np.zeros_like(logits)
        for index in np.ndindex(logits.shape):
            step = np.zeros_like(logits)
            step[index] = 1e-6
            upper = np.sum(softmax_entropy(logits + step))
            lower = np.sum(softmax_entropy(logits - step))
            numerical[index] = (upper - lower) / 2e-6
        np.testing.assert_allclose(gradient, numerical, rtol=1e-5, atol=1e-8)
        np.testing.assert_allclose(gradient.sum(axis=-1), 0.0, atol=1e-12)

    np.testing.assert_allclose(softmax_entropy_gradient(np.full(7, 3.5)), 0.0, atol=1e-15)
    assert abs(float(softmax_entropy(np.full(7, 3.5))) - np.log(7.0)) < 1e-12
    extreme = np.array([[1000.0, 0.0, -1000.0], [1e300, -1e300, 0.0], [1.7e308, -1.7e308, 0.0]])
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # no inf or nan escapes
        np.testing.assert_array_equal(softmax_entropy(extreme), 0.0)
        np.testing.assert_array_equal(softmax_entropy_gradient(extreme), 0.0)
    tied = np.array([1e300, 1e300, -1e300])  # two equal favorites: log 2
    assert abs(float(softmax_entropy(tied)) - np.log(2.0)) < 1e-12
    for bad in (np.array([0.0, np.nan]), np.array(1.0), np.zeros((2, 0))):
        for function in (softmax_entropy, softmax_entropy_gradient):
            try:
                function(bad)
            except ValueError:
                continue
            raise AssertionError(f"{function.__name__} accepted {bad!r}")
    ### END SOLUTION
