"""Exercise ``behavior-kl`` (chapter 14, two stars): the current policy's KL from behavior samples.

After the first gradient step on a batch, its tokens were sampled by the behavior policy ``mu``
that generated the batch, not by the current policy ``pi``. An average of a KL estimator over
those tokens then estimates a different quantity; weighting each token's estimate by the
importance ratio ``rho = pi / mu`` restores the current policy's KL to the reference,

    E_{x ~ mu}[rho(x) k(x)] = E_{x ~ pi}[k(x)] = KL(pi || ref)   for k = k1 or k3,

where, with ``d = log pi(x) - log ref(x)``,

    k1(x) = d,        k3(x) = exp(-d) - 1 + d.

Implement

* :func:`weighted_kl_tokens`, the per-token weighted estimate ``rho_j k3_j`` of a batch of
  sampled tokens, exactly 0 at the positions the mask leaves out;
* :func:`behavior_kl_expectations`, the exact expectations, under ``mu``, of the naive and the
  weighted estimators for one categorical distribution: ``[E_mu[k1], E_mu[k3], E_mu[rho k1],
  E_mu[rho k3]]``;
* :func:`test_behavior_kl`, a test of both.
"""

from __future__ import annotations

import numpy as np


def weighted_kl_tokens(logprobs, old_logprobs, ref_logprobs, mask):
    """Importance-weighted k3 estimate of KL(pi || ref) for every sampled token.

        out_j = rho_j * k3_j,   rho_j = exp(logprobs_j - old_logprobs_j),
        k3_j = exp(ref_logprobs_j - logprobs_j) - 1 - (ref_logprobs_j - logprobs_j),

    and out_j = 0 exactly where ``mask`` is False.

    Parameters
    ----------
    logprobs : array_like
        Shape (..., L): log pi of each sampled token under the current policy (each <= 0).
    old_logprobs : array_like
        Shape (..., L): log mu of the same tokens under the behavior policy that sampled them.
    ref_logprobs : array_like
        Shape (..., L): log ref of the same tokens under the reference policy.
    mask : array_like of bool or 0/1
        Shape (..., L): the positions that count.

    Returns
    -------
    numpy.ndarray
        Shape (..., L), float64.

    Raises
    ------
    ValueError
        If an argument does not have the shape of ``logprobs`` (the message names it), a
        log-probability is positive or not finite, or the mask holds values other than
        booleans or 0/1.

    Examples
    --------
    On-policy (mu = pi) the weight is 1 and the estimate is k3.

    >>> weighted_kl_tokens(np.log([0.5]), np.log([0.5]), np.log([0.25]), [True]).round(6)
    array([0.193147])
    """
    ### BEGIN SOLUTION
    logprobs = np.asarray(logprobs, dtype=np.float64)
    arrays = {"logprobs": logprobs}
    for name, value in (("old_logprobs", old_logprobs), ("ref_logprobs", ref_logprobs)):
        arrays[name] = np.asarray(value, dtype=np.float64)
    mask = np.asarray(mask)
    for name, value in (*arrays.items(), ("mask", mask)):
        if value.shape != logprobs.shape:
            raise ValueError(
                f"{name} must have the shape of logprobs {logprobs.shape}; got {value.shape}"
            )
    for name, value in arrays.items():
        if not np.all(np.isfinite(value)) or np.any(value > 0.0):
            raise ValueError(f"{name} must hold finite log-probabilities (<= 0)")
    if not np.all((mask == 0) | (mask == 1)):
        raise ValueError("mask must hold booleans (or 0/1)")
    mask = mask.astype(bool)

    # Masked positions are never evaluated, so nothing they hold can leak into the result.
    log_weight = np.where(mask, arrays["logprobs"] - arrays["old_logprobs"], 0.0)
    u = np.where(mask, arrays["ref_logprobs"] - arrays["logprobs"], 0.0)  # log(ref / pi)
    k3 = np.expm1(u) - u  # ref/pi - 1 - log(ref/pi) >= 0
    return np.where(mask, np.exp(log_weight) * k3, 0.0)
    ### END SOLUTION


def behavior_kl_expectations(probs, behavior_probs, ref_probs):
    """Exact expectations under mu of the naive and the importance-weighted KL estimators.

    With d(x) = log pi(x) - log ref(x) and rho(x) = pi(x) / mu(x), the sums over the tokens x
    with mu(x) > 0 of

        mu(x) k1(x),  mu(x) k3(x),  mu(x) rho(x) k1(x),  mu(x) rho(x) k3(x),

    where k1 = d and k3 = exp(-d) - 1 + d. The last two equal KL(pi || ref); the first equals
    KL(mu || ref) - KL(mu || pi).

    Parameters
    ----------
    probs : array_like
        Shape (K,): the current policy pi.
    behavior_probs : array_like
        Shape (K,): the behavior policy mu that sampled the tokens.
    ref_probs : array_like
        Shape (K,): the reference policy.

    Returns
    -------
    numpy.ndarray
        Shape (4,): ``[E_mu[k1], E_mu[k3], E_mu[rho k1], E_mu[rho k3]]``.

    Raises
    ------
    ValueError
        If an argument is not a 1-D probability vector of the common length K (the message
        names it); if ``behavior_probs`` is 0 where ``probs`` is positive (the weighted
        estimates need support); if ``probs`` is 0 where ``behavior_probs`` is positive (the
        naive estimates need log pi of every token mu can sample); or if ``ref_probs`` is 0
        where either is positive (the estimators would be infinite).

    Examples
    --------
    >>> behavior_kl_expectations([0.5, 0.5], [0.5, 0.5], [0.5, 0.5]).tolist()
    [0.0, 0.0, 0.0, 0.0]
    """
    ### BEGIN SOLUTION
    given = {"probs": probs, "behavior_probs": behavior_probs, "ref_probs": ref_probs}
    arrays = {}
    for name, value in given.items():
        value = np.asarray(value, dtype=np.float64)
        if value.ndim != 1 or value.size == 0 or not np.all(np.isfinite(value)):
            raise ValueError(
                f"{name} must be a finite 1-D probability vector; got shape {value.shape}"
            )
        if np.any(value < 0.0) or not np.isclose(value.sum(), 1.0, rtol=0.0, atol=1e-9):
            raise ValueError(f"{name} must be non-negative and sum to 1; got sum {value.sum()!r}")
        if value.shape != np.shape(given["probs"]):
            raise ValueError(f"{name} must have the shape of probs {np.shape(given['probs'])}")
        arrays[name] = value
    pi, mu, ref = arrays["probs"], arrays["behavior_probs"], arrays["ref_probs"]
    if np.any((mu == 0.0) & (pi > 0.0)):
        raise ValueError("behavior_probs must be > 0 wherever probs > 0 (support of the weights)")
    if np.any((pi == 0.0) & (mu > 0.0)):
        raise ValueError("probs must be > 0 wherever behavior_probs > 0 (log pi of every sample)")
    if np.any((ref == 0.0) & ((pi > 0.0) | (mu > 0.0))):
        raise ValueError("ref_probs must be > 0 wherever probs or behavior_probs is > 0")

    seen = mu > 0.0  # the tokens the behavior policy can sample; the others add nothing
    d = np.log(pi[seen]) - np.log(ref[seen])
    k1, k3 = d, np.expm1(-d) + d
    rho = pi[seen] / mu[seen]
    weight = mu[seen]
    return np.array([weight @ k1, weight @ k3, weight @ (rho * k1), weight @ (rho * k3)])
    ### END SOLUTION


def test_behavior_kl():
    """Both functions against the definitions: the identities, on-policy weights and masks.

    On random distributions the weighted expectations equal KL(pi || ref) computed directly and
    the naive k1 expectation equals KL(mu || ref) - KL(mu || pi); with mu = pi both pairs
    coincide. On random token batches the per-token estimates equal rho * k3 written out,
    are exactly 0 at masked positions, and equal k3 when mu = pi; a Monte Carlo average of
    the weighted estimates over tokens drawn from mu approaches KL(pi || ref).
    """
    ### BEGIN SOLUTION
    rng = np.random.default_rng(14)

    def kl_div(p, q):
        keep = p > 0
        return float(np.sum(p[keep] * np.log(p[keep] / q[keep])))

    for size in (2, 3, 7):
        for _ in range(20):
            pi, mu, ref = (rng.dirichlet(np.ones(size)) for _ in range(3))
            naive_k1, naive_k3, weighted_k1, weighted_k3 = behavior_kl_expectations(pi, mu, ref)
            assert np.isclose(weighted_k1, kl_div(pi, ref), rtol=1e-12, atol=1e-14)
            assert np.isclose(weighted_k3, kl_div(pi, ref), rtol=1e-12, atol=1e-14)
            assert naive_k3 >= 0.0  # every k3 value is >= 0, whichever policy sampled
            assert np.isclose(naive_k1, kl_div(mu, ref) - kl_div(mu, pi), rtol=1e-10, atol=1e-14)
            on_policy = behavior_kl_expectations(pi, pi, ref)
            assert np.allclose(on_policy[:2], on_policy[2:], rtol=1e-12, atol=1e-14)

    pi, mu, ref = (rng.dirichlet(np.ones(4)) for _ in range(3))
    tokens = rng.choice(4, size=(50, 9), p=mu)
    mask = rng.random((50, 9)) < 0.8
    got = weighted_kl_tokens(np.log(pi[tokens]), np.log(mu[tokens]), np.log(ref[tokens]), mask)
    ratio, u = pi[tokens] / mu[tokens], np.log(ref[tokens] / pi[tokens])
    assert got.shape == tokens.shape
    assert np.allclose(got[mask], (ratio * (np.exp(u) - 1 - u))[mask], rtol=1e-12)
    assert np.all(got[~mask] == 0.0)
    same = weighted_kl_tokens(np.log(pi[tokens]), np.log(pi[tokens]), np.log(ref[tokens]), mask)
    assert np.allclose(same[mask], (np.exp(u) - 1 - u)[mask], rtol=1e-12)

    drawn = rng.choice(4, size=200_000, p=mu)
    everywhere = np.ones(drawn.shape, dtype=bool)
    estimate = weighted_kl_tokens(
        np.log(pi[drawn]), np.log(mu[drawn]), np.log(ref[drawn]), everywhere
    ).mean()
    assert abs(estimate - kl_div(pi, ref)) < 0.05
    ### END SOLUTION
