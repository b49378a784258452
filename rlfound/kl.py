"""KL regularization: the KL divergence, its sampled estimators, the regularized optimum, DPO.

A policy π is trained to collect reward while staying close to a reference policy π_ref (the
model before reinforcement learning). Closeness is measured by the Kullback-Leibler divergence

    KL(π ‖ π_ref) = Σ_x π(x) log(π(x) / π_ref(x)),

which trainers cannot sum over all responses x; they estimate it from the log-probabilities of
the tokens they sampled, with one of Schulman's estimators k1, k2, k3. This module holds the
exact divergence (from probabilities or logits), the three estimators and their gradients as
losses, the importance-weighted correction for samples from an older policy, per-sequence
penalties (summed or length-normalized), the optimum of the regularized objective,
π* ∝ π_ref exp(R / β), and the DPO loss derived from it.

Conventions: ``logprobs``, ``ref_logprobs`` and ``old_logprobs`` are log-probabilities of the
sampled tokens under π, π_ref and the behavior policy μ, shape (..., L); masks select the
positions that count, and masked positions contribute exactly 0.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from rlfound._validation import (
    as_float_array,
    as_float_array_like,
    check_bool,
    check_categories,
    check_choice,
    check_distribution,
    check_logits,
    check_logprob_pair,
    check_logprobs,
    check_nonnegative_real,
    check_positive_real,
    check_shape,
    check_support,
    finite_output,
    float_or_array,
    raise_first,
)
from rlfound.distributions import categorical_score

__all__ = [
    "dpo_loss",
    "dpo_loss_gradient",
    "estimator_logit_gradient",
    "importance_weighted_kl",
    "ipo_loss",
    "k1",
    "k2",
    "k3",
    "k_abs",
    "kl_divergence",
    "kl_divergence_logits",
    "kl_logit_gradient",
    "kl_regularized_objective",
    "kl_regularized_optimum",
    "kl_regularized_value",
    "sequence_kl",
]

#: The estimators of Schulman (2020), by the names trainers give them.
ESTIMATORS = ("k1", "k2", "k3")
#: Largest exponent whose exponential is finite in float64 (exp(709.78) ~ 1.8e308).
_MAX_EXP = float(np.log(np.finfo(np.float64).max))


# --- private helpers ------------------------------------------------------------------------


def _exp_minus_one_minus(u: np.ndarray) -> np.ndarray:
    """exp(u) - 1 - u, accurate also for |u| << 1, where expm1(u) - u would cancel.

    For |u| < 1/2 the series Σ_{n>=2} u^n / n! (16 terms, Horner) is exact to rounding; beyond
    it expm1(u) - u has no cancellation. Both branches are >= 0 for every u, as the function is.
    """
    small = np.abs(u) < 0.5
    v = np.where(small, u, 0.0)
    series = np.zeros_like(v)
    for n in range(17, 1, -1):  # u^2 (1/2! + u (1/3! + u (1/4! + ...)))
        series = 1.0 / special.factorial(n) + v * series
    series = v * v * series
    w = np.where(small, 0.0, u)
    return np.where(small, series, np.expm1(w) - w)


def _check_ratio_finite(log_ratio: np.ndarray, name: str, what: str) -> None:
    """Refuse a log-ratio whose exponential overflows float64 (an infinite estimate)."""
    raise_first(
        log_ratio > _MAX_EXP,
        f"{name} must not make {what} exceed {_MAX_EXP:.2f} (its "
        "exponential overflows float64 and the estimate would be infinite)",
        values=log_ratio,
    )


def _estimate_derivative(
    estimator: str, log_ratio: np.ndarray
) -> np.ndarray:
    """dk / d log π(x): 1 for k1, k1(x) for k2, 1 - π_ref / π for k3."""
    if estimator == "k1":
        return np.ones_like(log_ratio)
    if estimator == "k2":
        return log_ratio
    return -np.expm1(-log_ratio)


# --- the exact divergence -------------------------------------------------------------------


@finite_output()
def kl_divergence(
    probs: ArrayLike, ref_probs: ArrayLike
) -> np.ndarray | float:
    """Exact KL divergence between categorical distributions, from their probabilities.

        KL(π ‖ π_ref) = Σ_x π(x) log(π(x) / π_ref(x)),

    with 0 log(0 / q) = 0. It is >= 0, and 0 only when the two distributions are equal. It is
    not symmetric: the other direction, KL(π_ref ‖ π), is ``kl_divergence(ref_probs, probs)``.
    When π puts mass where π_ref has none (the support condition fails) the divergence is
    infinite; this function raises instead of returning ``inf``.

    Book: equation (eq-kl-definition), chapter 6.

    Parameters
    ----------
    probs : array_like, shape (..., K)
        π: probability vectors along the last axis.
    ref_probs : array_like, shape (..., K)
        π_ref, with the shape of ``probs`` (no broadcasting).

    Returns
    -------
    float or numpy.ndarray, shape (...)
        One divergence per distribution, in nats; a float for a single (1-D) distribution.

    Raises
    ------
    ValueError
        If either argument is not a finite array of probability vectors (non-negative,
        summing to 1 along the last axis), the shapes differ, or ``ref_probs`` is 0 where
        ``probs`` is positive (the divergence would be infinite).

    References
    ----------
    S. Kullback and R. A. Leibler, "On information and sufficiency", *Annals of Mathematical
    Statistics* 22(1), 79-86, 1951.
    T. M. Cover and J. A. Thomas, *Elements of Information Theory*, 2nd ed., Wiley, 2006,
    section 2.3.

    Examples
    --------
    >>> kl_divergence([0.5, 0.5], [0.25, 0.75])
    0.14384103622589045
    >>> kl_divergence([0.25, 0.75], [0.5, 0.5])  # the other direction differs
    0.130812035941137
    >>> kl_divergence([[1.0, 0.0], [0.5, 0.5]], [[0.5, 0.5], [0.5, 0.5]])
    array([0.69314718, 0.        ])
    """
    probs = check_distribution(probs, "probs")
    ref_probs = check_distribution(ref_probs, "ref_probs")
    check_shape(ref_probs, "ref_probs", probs.shape, "the shape of probs")
    check_support(
        ref_probs, "ref_probs", "wherever probs is positive", probs > 0.0
    )

    mass = probs > 0.0
    log_ratio = np.log(np.where(mass, probs, 1.0)) - np.log(
        np.where(mass, ref_probs, 1.0)
    )
    total = np.sum(np.where(mass, probs * log_ratio, 0.0), axis=-1)
    # The sum is >= 0 exactly; rounding can leave -1e-17 for nearly equal
    # distributions.
    return float_or_array(np.maximum(total, 0.0))


@finite_output()
def kl_divergence_logits(
    logits: ArrayLike, ref_logits: ArrayLike
) -> np.ndarray | float:
    """Exact KL divergence between two softmax distributions, computed in log space.

        KL(π ‖ π_ref) = Σ_x π(x) (log_softmax(θ)_x - log_softmax(θ_ref)_x),
        π = softmax(θ).

    Working with log-softmax keeps every term finite for logits of any finite size (a softmax
    probability that underflows to 0 contributes exactly 0), and the support condition holds
    automatically, since a softmax is positive everywhere.

    Book: equation (eq-kl-definition), chapter 6.

    Parameters
    ----------
    logits : array_like, shape (..., K)
        Logits θ of π.
    ref_logits : array_like, shape (..., K)
        Logits θ_ref of π_ref, with the shape of ``logits``.

    Returns
    -------
    float or numpy.ndarray, shape (...)
        One divergence per distribution; a float for a single (1-D) distribution.

    Raises
    ------
    ValueError
        If either array is not finite and real with at least one category, or the shapes
        differ.

    References
    ----------
    S. Kullback and R. A. Leibler, "On information and sufficiency", *Annals of Mathematical
    Statistics* 22(1), 79-86, 1951.

    Examples
    --------
    >>> kl_divergence_logits([0.0, 0.0], np.log([0.25, 0.75]))
    0.1438410362258905
    >>> kl_divergence_logits([1000.0, 0.0], [0.0, 0.0])  # log 2, no overflow
    0.6931471805599453
    """
    logits = check_logits(logits)
    ref_logits = as_float_array_like(
        ref_logits, "ref_logits", logits.shape, "logits"
    )

    logprobs = special.log_softmax(logits, axis=-1)
    ref_logprobs = special.log_softmax(ref_logits, axis=-1)
    total = np.sum(np.exp(logprobs) * (logprobs - ref_logprobs), axis=-1)
    return float_or_array(np.maximum(total, 0.0))


@finite_output()
def kl_logit_gradient(
    logits: ArrayLike, ref_logits: ArrayLike
) -> np.ndarray:
    """Exact gradient of KL(π ‖ π_ref) with respect to the logits θ of π.

        ∂KL/∂θ_x = π(x) (ℓ(x) - Σ_y π(y) ℓ(y)),    ℓ(x) = log π(x) - log π_ref(x),

    the score-function form Σ_x π(x) ℓ(x) (e_x - π) of the gradient (the term Σ_x π(x) ∇ℓ(x)
    vanishes, because Σ_x π(x) (e_x - π) = 0). It is the target against which the gradients of
    the sampled estimators are compared.

    Book: equation (eq-kl-logit-gradient), chapter 6.

    Parameters
    ----------
    logits : array_like, shape (..., K)
        Logits θ of π.
    ref_logits : array_like, shape (..., K)
        Logits of π_ref, with the shape of ``logits``.

    Returns
    -------
    numpy.ndarray, shape (..., K)
        The gradient; its entries sum to 0 along the last axis.

    Raises
    ------
    ValueError
        As :func:`kl_divergence_logits`.

    References
    ----------
    J. Schulman, "Approximating KL divergence", blog post, 2020,
    http://joschu.net/blog/kl-approx.html.

    Examples
    --------
    >>> kl_logit_gradient([0.0, 0.0], np.log([0.25, 0.75]))
    array([ 0.27465307, -0.27465307])
    """
    logits = check_logits(logits)
    ref_logits = as_float_array_like(
        ref_logits, "ref_logits", logits.shape, "logits"
    )

    logprobs = special.log_softmax(logits, axis=-1)
    probs = np.exp(logprobs)
    log_ratio = logprobs - special.log_softmax(ref_logits, axis=-1)
    mean = np.sum(probs * log_ratio, axis=-1, keepdims=True)
    return probs * (log_ratio - mean)


# --- estimators from sampled tokens ---------------------------------------------------------


@finite_output()
def k1(
    logprobs: ArrayLike,
    ref_logprobs: ArrayLike,
    mask: ArrayLike | None = None,
) -> np.ndarray:
    """Schulman's k1: the log-ratio of each sampled token, an unbiased KL estimate.

        k1(x) = log π(x) - log π_ref(x).

    For x sampled from π, E[k1] = KL(π ‖ π_ref). A single value is negative whenever π_ref
    likes the token more than π does, so its variance is large compared to the divergence.
    As a per-token reward term (-β k1) it is what PPO-style RLHF trainers add (TRL's
    ``PPOTrainer`` with ``kl_estimator="k1"``, verl with ``algorithm.use_kl_in_reward`` and
    ``kl_penalty="kl"``, OpenRLHF's default ``--kl_estimator k1``).

    Book: equation (eq-kl-estimators), chapter 6.

    Parameters
    ----------
    logprobs : array_like, shape (..., L)
        log π of each sampled token (each <= 0).
    ref_logprobs : array_like, shape (..., L)
        log π_ref of the same tokens.
    mask : array_like of bool or 0/1, shape (..., L), optional
        Positions that count; the others give exactly 0. Default: all.

    Returns
    -------
    numpy.ndarray, shape (..., L)
        The per-token estimates.

    Raises
    ------
    ValueError
        If either array is not finite, has a positive entry or is a scalar, the shapes differ,
        or ``mask`` does not have their shape or is not 0/1.

    Notes
    -----
    Checked in the trainers' code: TRL ``trl/trainer/ppo_trainer.py`` (``PPOTrainer.train``:
    ``kl = -logr if args.kl_estimator == "k1" else (logr.exp() - 1) - logr``, then
    ``-args.kl_coef * kl`` is added to every token's reward); verl
    ``verl/trainer/ppo/core_algos.py`` (``kl_penalty``) and ``ray_trainer.py``
    (``apply_kl_penalty``); OpenRLHF ``openrlhf/models/utils.py`` (``compute_approx_kl``,
    ``compute_reward``) and ``openrlhf/cli/train_ppo_ray.py`` (``--kl_estimator``, default
    ``"k1"``). OpenRLHF's ``compute_approx_kl`` (OpenRLHF/OpenRLHF at commit
    3c3be6234e0cb353e76bb8019947db9dfe99fca7) casts both log-probabilities to float32 and
    clamps every estimator's value, k1 and k2 included, to [-10, 10]; this function keeps
    float64 and does not clamp, so the two agree only up to float32 rounding and while
    |k1| <= 10. verl (commit b178a3cd56f58b2d502255daba591e92833930a7) clamps only its k3.

    References
    ----------
    J. Schulman, "Approximating KL divergence", blog post, 2020,
    http://joschu.net/blog/kl-approx.html.

    Examples
    --------
    >>> k1(np.log([0.5, 0.5]), np.log([0.25, 1.0]))
    array([ 0.69314718, -0.69314718])
    """
    logprobs, ref_logprobs, mask = check_logprob_pair(
        logprobs, ref_logprobs, mask, "ref_logprobs"
    )
    # where(), not a product: a masked position gives exactly 0 whatever its
    # log-probabilities.
    return np.where(mask, logprobs - ref_logprobs, 0.0)


@finite_output()
def k2(
    logprobs: ArrayLike,
    ref_logprobs: ArrayLike,
    mask: ArrayLike | None = None,
) -> np.ndarray:
    """Schulman's k2: half the squared log-ratio, a biased but low-variance KL estimate.

        k2(x) = ½ (log π(x) - log π_ref(x))².

    It is never negative, and E_π[k2] = ½ Σ_x π(x) log²(π(x) / π_ref(x)) differs from
    KL(π ‖ π_ref) only at third order in the difference of the distributions. Used as a loss
    on samples from π, its gradient is an unbiased estimate of the gradient of the KL. verl
    calls it ``"mse"`` (or ``"k2"``), OpenRLHF ``"k2"``; OpenRLHF (``compute_approx_kl`` in
    ``openrlhf/models/utils.py``, OpenRLHF/OpenRLHF at commit
    3c3be6234e0cb353e76bb8019947db9dfe99fca7) computes it in float32 and clamps it to
    [-10, 10], so it agrees with this function only while k2 <= 10.

    Book: equation (eq-kl-estimators), chapter 6.

    Parameters
    ----------
    logprobs : array_like, shape (..., L)
        log π of each sampled token (each <= 0).
    ref_logprobs : array_like, shape (..., L)
        log π_ref of the same tokens.
    mask : array_like of bool or 0/1, shape (..., L), optional
        Positions that count; the others give exactly 0. Default: all.

    Returns
    -------
    numpy.ndarray, shape (..., L)
        The per-token estimates, all >= 0.

    Raises
    ------
    ValueError
        As :func:`k1`.

    References
    ----------
    J. Schulman, "Approximating KL divergence", blog post, 2020,
    http://joschu.net/blog/kl-approx.html.

    Examples
    --------
    >>> k2(np.log([0.5, 0.5]), np.log([0.25, 1.0]))
    array([0.24022651, 0.24022651])
    """
    logprobs, ref_logprobs, mask = check_logprob_pair(
        logprobs, ref_logprobs, mask, "ref_logprobs"
    )
    log_ratio = np.where(
        mask, logprobs - ref_logprobs, 0.0
    )  # k1, and 0 where masked
    return 0.5 * log_ratio**2


@finite_output()
def k3(
    logprobs: ArrayLike,
    ref_logprobs: ArrayLike,
    mask: ArrayLike | None = None,
) -> np.ndarray:
    """Schulman's k3: an unbiased KL estimate that is never negative.

        k3(x) = π_ref(x) / π(x) - 1 - log(π_ref(x) / π(x))
              = exp(-k1(x)) - 1 + k1(x).

    For x sampled from π, E[π_ref / π] = Σ_x π_ref(x) = 1 (when π is positive wherever π_ref
    is), so adding the zero-mean term π_ref / π - 1 to k1 keeps the estimate unbiased, and
    since log y <= y - 1 every value is >= 0. It is the KL term GRPO adds to its loss (DeepSeekMath;
    TRL's ``GRPOTrainer``; verl's ``kl_loss_type="low_var_kl"``; OpenRLHF ``"k3"``). Its value
    is unbiased, its gradient is not: as a loss on samples from π its expected gradient with
    respect to the logits is π - π_ref, the gradient of KL(π_ref ‖ π); as a reward (TRL's
    ``PPOTrainer`` with ``kl_estimator="k3"``) the expected policy gradient is that of
    KL(π ‖ π_ref) minus π - π_ref (see :func:`estimator_logit_gradient`). Far from the
    reference, where π_ref / π is large for tokens the policy has abandoned, its variance can
    be far larger than that of :func:`k1`. Computed as exp(u) - 1 - u with u = -k1, by a series
    where |u| is small, so that nearly equal log-probabilities do not lose their digits to
    cancellation.

    Book: equation (eq-kl-estimators), chapter 6.

    Parameters
    ----------
    logprobs : array_like, shape (..., L)
        log π of each sampled token (each <= 0).
    ref_logprobs : array_like, shape (..., L)
        log π_ref of the same tokens.
    mask : array_like of bool or 0/1, shape (..., L), optional
        Positions that count; the others give exactly 0. Default: all.

    Returns
    -------
    numpy.ndarray, shape (..., L)
        The per-token estimates, all >= 0.

    Raises
    ------
    ValueError
        As :func:`k1`, and if ``ref_logprobs`` exceeds ``logprobs`` by more than about 709.8 at
        a counted position (π_ref / π overflows float64 and the estimate is infinite).

    Notes
    -----
    Checked in the trainers' code: TRL ``trl/trainer/grpo_trainer.py``
    (``GRPOTrainer._compute_loss``: ``per_token_kl = exp(ref - logp) - (ref - logp) - 1``,
    added to the per-token loss as ``beta * per_token_kl``); verl ``core_algos.kl_penalty``
    (``"low_var_kl"``/``"k3"``, which also clamps the log-ratio to [-20, 20] and the estimate
    to [-10, 10]); OpenRLHF ``compute_approx_kl`` (clamps to [-10, 10]). A clamp is a bias;
    this function has none. Checked again in volcengine/verl at commit
    b178a3cd56f58b2d502255daba591e92833930a7 (``kl_penalty_forward``) and OpenRLHF/OpenRLHF
    at commit 3c3be6234e0cb353e76bb8019947db9dfe99fca7 (``openrlhf/models/utils.py``), where
    the clamp applies to k1 and k2 as well, after casting both log-probabilities to float32.
    verl's documentation (``docs/algo/ppo.md``) also offers ``kl_loss_type="k3+"`` and
    ``"k1+"``, the value of k3 or k1 with the gradient of k2 by a straight-through trick;
    at that commit ``kl_penalty`` hands the name with its ``+`` to ``kl_penalty_forward``,
    which matches no branch and raises ``NotImplementedError``.

    References
    ----------
    J. Schulman, "Approximating KL divergence", blog post, 2020,
    http://joschu.net/blog/kl-approx.html.
    Z. Shao et al., "DeepSeekMath: pushing the limits of mathematical reasoning in open
    language models", arXiv:2402.03300, 2024.

    Examples
    --------
    >>> k3(np.log([0.5, 0.5]), np.log([0.25, 1.0]))
    array([0.19314718, 0.30685282])
    """
    logprobs, ref_logprobs, mask = check_logprob_pair(
        logprobs, ref_logprobs, mask, "ref_logprobs"
    )
    log_ratio = np.where(
        mask, logprobs - ref_logprobs, 0.0
    )  # k1, and 0 where masked
    _check_ratio_finite(
        -log_ratio, "ref_logprobs", "ref_logprobs - logprobs"
    )
    # exp(u) - 1 - u at u = -k1, without cancellation when u is small (0
    # where masked).
    return _exp_minus_one_minus(-log_ratio)


@finite_output()
def k_abs(
    logprobs: ArrayLike,
    ref_logprobs: ArrayLike,
    mask: ArrayLike | None = None,
) -> np.ndarray:
    r"""The absolute log-ratio |k1| of each sampled token: a KL penalty that is never negative.

        k_abs(x) = |log π(x) - log π_ref(x)|.

    It is not an unbiased estimate of the KL: E_π[|k1|] >= E_π[k1] = KL(π ‖ π_ref), with
    equality only when π_ref never gives a sampled token more probability than π does. As a
    loss its derivative with respect to log π is the sign of k1: it lowers a sampled token's
    log-probability where π gives it more than π_ref does and raises it where π gives it
    less, toward the reference from either side, while k1's derivative is 1 at every token.
    verl offers it as ``kl_loss_type="abs"`` and ``kl_penalty="abs"``.

    Parameters
    ----------
    logprobs : array_like, shape (..., L)
        log π of each sampled token (each <= 0).
    ref_logprobs : array_like, shape (..., L)
        log π_ref of the same tokens.
    mask : array_like of bool or 0/1, shape (..., L), optional
        Positions that count; the others give exactly 0. Default: all.

    Returns
    -------
    numpy.ndarray, shape (..., L)
        The per-token values, all >= 0.

    Raises
    ------
    ValueError
        As :func:`k1`.

    Notes
    -----
    .. math::

       k_{\mathrm{abs}}(x) = \left| \log \pi(x) - \log \pi_{\mathrm{ref}}(x) \right|

    Checked in the trainers' code: verl ``kl_penalty_forward`` in
    ``verl/trainer/ppo/core_algos.py`` (volcengine/verl at commit
    b178a3cd56f58b2d502255daba591e92833930a7), ``"abs"``: ``(logprob - ref_logprob).abs()``,
    without a clamp.

    References
    ----------
    J. Schulman, "Approximating KL divergence", blog post, 2020,
    http://joschu.net/blog/kl-approx.html.

    Examples
    --------
    >>> k_abs(np.log([0.5, 0.5]), np.log([0.25, 1.0]))
    array([0.69314718, 0.69314718])
    """
    logprobs, ref_logprobs, mask = check_logprob_pair(
        logprobs, ref_logprobs, mask, "ref_logprobs"
    )
    # where(), not a product: a masked position gives exactly 0 whatever its log-probabilities.
    return np.where(mask, np.abs(logprobs - ref_logprobs), 0.0)


#: The estimators behind an ``estimator=`` argument, unwrapped from their own overflow guard
#: (the guard of the function that calls one names that function).
_ESTIMATES = {
    "k1": k1.__wrapped__,
    "k2": k2.__wrapped__,
    "k3": k3.__wrapped__,
}


@finite_output()
def sequence_kl(
    logprobs: ArrayLike,
    ref_logprobs: ArrayLike,
    mask: ArrayLike | None = None,
    estimator: str = "k1",
    length_normalized: bool = False,
) -> np.ndarray | float:
    """Per-sequence KL penalty: the per-token estimates summed, or averaged over the tokens.

        sum:      Σ_j m_j k(x_j),
        average:  Σ_j m_j k(x_j) / Σ_j m_j.

    The sum estimates the KL between the distributions of whole sequences (by the chain rule);
    the average is a different quantity, and penalizing it optimizes a different objective, in
    which a long sequence pays less per token for leaving the reference. Trainers differ: a
    per-token k1 penalty in the reward, accumulated by the return, is the sum (TRL
    ``PPOTrainer``, verl ``use_kl_in_reward``, OpenRLHF ``compute_reward``); a KL term added to
    a loss that is averaged within each sequence is the average (TRL ``GRPOTrainer`` with
    ``loss_type="grpo"``); averaging over all tokens of a batch weights sequences by length.

    Book: equation (eq-kl-sum-vs-mean), chapter 6.

    Parameters
    ----------
    logprobs : array_like, shape (..., L)
        log π of each sampled token (each <= 0).
    ref_logprobs : array_like, shape (..., L)
        log π_ref of the same tokens.
    mask : array_like of bool or 0/1, shape (..., L), optional
        The tokens of each sequence that count (the policy's own tokens). Default: all.
    estimator : {"k1", "k2", "k3"}, optional
        The per-token estimator (:func:`k1`, :func:`k2`, :func:`k3`). Default "k1".
    length_normalized : bool, optional
        Divide each sequence's sum by its number of counted tokens. Default False.

    Returns
    -------
    float or numpy.ndarray, shape (...)
        One penalty per sequence; a float for a single (1-D) sequence.

    Raises
    ------
    ValueError
        As :func:`k1` (and :func:`k3` for ``"k3"``); if ``estimator`` is not one of the three;
        if ``length_normalized`` is not a bool; or, with ``length_normalized``, if ``mask``
        selects no token of some sequence.

    Notes
    -----
    Checked in TRL ``trl/trainer/grpo_trainer.py`` (``GRPOTrainer._compute_loss``): the KL term
    ``beta * per_token_kl`` is added to the per-token loss, which ``loss_type="grpo"`` averages
    within each sequence, ``"bnpo"`` over all tokens of the batch and ``"dr_grpo"`` divides by
    the batch size times ``max_completion_length``. verl (``dp_actor.py``, ``update_policy``)
    aggregates its KL loss with the actor's ``loss_agg_mode``.

    References
    ----------
    J. Schulman, "Approximating KL divergence", blog post, 2020,
    http://joschu.net/blog/kl-approx.html.
    Z. Liu et al., "Understanding R1-Zero-like training: a critical perspective",
    arXiv:2503.20783, 2025.

    Examples
    --------
    >>> lp, ref = np.log([0.5, 0.5, 0.5]), np.log([0.25, 0.5, 1.0])
    >>> sequence_kl(lp, ref)
    0.0
    >>> sequence_kl(lp, ref, estimator="k3", mask=[1, 1, 0], length_normalized=True)
    0.09657359027997264
    """
    estimator = check_choice(estimator, "estimator", ESTIMATORS)
    length_normalized = check_bool(length_normalized, "length_normalized")
    logprobs, ref_logprobs, mask = check_logprob_pair(
        logprobs, ref_logprobs, mask, "ref_logprobs"
    )

    total = _ESTIMATES[estimator](logprobs, ref_logprobs, mask).sum(axis=-1)
    if not length_normalized:
        return float_or_array(total)
    counts = mask.sum(axis=-1)
    raise_first(
        counts == 0,
        "mask must select at least one token of every sequence when "
        "length_normalized is True (the average of no tokens is undefined)",
        got="none",
    )
    return float_or_array(total / counts)


@finite_output()
def importance_weighted_kl(
    logprobs: ArrayLike,
    ref_logprobs: ArrayLike,
    old_logprobs: ArrayLike,
    estimator: str = "k3",
    mask: ArrayLike | None = None,
) -> np.ndarray:
    """KL estimates for tokens sampled from an older policy μ, reweighted to the current π.

        ρ(x) k(x),    ρ(x) = π(x) / μ(x) = exp(log π(x) - log μ(x)).

    When x comes from μ rather than π, E_μ[k(x)] is no longer KL(π ‖ π_ref); the importance
    weight restores it, E_μ[ρ k] = E_π[k], at the price of the variance of ρ. For the tokens of
    a sequence the weight corrects the token given its prefix; the prefixes themselves still
    follow μ. With π = μ every weight is 1 and the estimates are those of :func:`k1`,
    :func:`k2` or :func:`k3`.

    Book: equation (eq-kl-importance), chapter 6.

    Parameters
    ----------
    logprobs : array_like, shape (..., L)
        log π of each sampled token under the current policy (each <= 0).
    ref_logprobs : array_like, shape (..., L)
        log π_ref of the same tokens.
    old_logprobs : array_like, shape (..., L)
        log μ of the same tokens, under the policy that sampled them.
    estimator : {"k1", "k2", "k3"}, optional
        The estimator to reweight. Default "k3".
    mask : array_like of bool or 0/1, shape (..., L), optional
        Positions that count; the others give exactly 0. Default: all.

    Returns
    -------
    numpy.ndarray, shape (..., L)
        The weighted per-token estimates.

    Raises
    ------
    ValueError
        As :func:`k1` (and :func:`k3` for ``"k3"``); if ``old_logprobs`` is not valid or not of
        the shape of ``logprobs``, or makes a weight (or a weighted estimate) overflow float64;
        or if ``estimator`` is not one of the three.

    References
    ----------
    J. Schulman, "Approximating KL divergence", blog post, 2020,
    http://joschu.net/blog/kl-approx.html.
    A. B. Owen, *Monte Carlo theory, methods and examples*, 2013, chapter 9.

    Examples
    --------
    >>> importance_weighted_kl(np.log([0.5]), np.log([0.25]), np.log([0.25]), estimator="k1")
    array([1.38629436])
    """
    estimator = check_choice(estimator, "estimator", ESTIMATORS)
    logprobs, ref_logprobs, mask = check_logprob_pair(
        logprobs, ref_logprobs, mask, "ref_logprobs"
    )
    old_logprobs = check_logprobs(old_logprobs, "old_logprobs")
    check_shape(
        old_logprobs, "old_logprobs", logprobs.shape, "the shape of logprobs"
    )

    log_weight = np.where(mask, logprobs - old_logprobs, 0.0)
    _check_ratio_finite(
        log_weight, "old_logprobs", "logprobs - old_logprobs"
    )
    weighted = np.exp(log_weight) * _ESTIMATES[estimator](
        logprobs, ref_logprobs, mask
    )
    raise_first(
        ~np.isfinite(weighted),
        "old_logprobs must keep the weighted estimates finite",
        got="an overflow",
    )
    return weighted


@finite_output()
def estimator_logit_gradient(
    logits: ArrayLike,
    actions: ArrayLike,
    ref_logprobs: ArrayLike,
    estimator: str = "k3",
) -> np.ndarray:
    """Gradient of a per-sample KL estimate, used as a loss, with respect to the policy logits.

        ∇_θ k(a) = (∂k / ∂log π(a)) (e_a - π),
        ∂k / ∂log π(a) = 1 (k1),  k1(a) (k2),  1 - π_ref(a) / π(a) (k3),

    with k1(a) = log π(a) - log π_ref(a); the sampled action is held fixed,
    as automatic differentiation of a loss does. For a sampled from π the expectations are 0
    (k1), the gradient of KL(π ‖ π_ref) (k2), and π - π_ref, the gradient of the other
    direction KL(π_ref ‖ π) (k3).

    Book: equation (eq-estimator-gradients), chapter 6.

    Parameters
    ----------
    logits : array_like, shape (K,) or (..., K)
        Logits θ of π: one distribution, or one per action (leading shape of ``actions``).
    actions : int or array_like of int, shape (...)
        Sampled actions (tokens) in [0, K).
    ref_logprobs : array_like, shape (...)
        log π_ref of each sampled action, with the shape of ``actions``.
    estimator : {"k1", "k2", "k3"}, optional
        The estimator differentiated. Default "k3".

    Returns
    -------
    numpy.ndarray, shape (..., K)
        One gradient per sampled action; each sums to 0 over the K logits.

    Raises
    ------
    ValueError
        If ``logits`` is not finite with K >= 1, ``actions`` are not integers in [0, K) of
        the right shape, ``ref_logprobs`` is not finite, positive somewhere, or not of the
        shape of ``actions``, π_ref / π overflows (k3), or ``estimator`` is not one of the
        three.

    References
    ----------
    J. Schulman, "Approximating KL divergence", blog post, 2020,
    http://joschu.net/blog/kl-approx.html.

    Examples
    --------
    >>> estimator_logit_gradient([0.0, 0.0], [0, 1], np.log([0.25, 0.75]), estimator="k3")
    array([[ 0.25, -0.25],
           [ 0.25, -0.25]])
    """
    estimator = check_choice(estimator, "estimator", ESTIMATORS)
    logits = check_logits(logits)
    actions = check_categories(actions, "actions", logits)
    ref_logprobs = as_float_array(ref_logprobs, "ref_logprobs")
    check_shape(
        ref_logprobs, "ref_logprobs", actions.shape, "the shape of actions"
    )
    raise_first(
        ref_logprobs > 0.0,
        "ref_logprobs must be log-probabilities (<= 0)",
        values=ref_logprobs,
    )

    all_logprobs = special.log_softmax(logits, axis=-1)
    if logits.ndim == 1:
        logprobs = all_logprobs[actions]
    else:
        logprobs = np.take_along_axis(
            all_logprobs, actions[..., None], axis=-1
        )[..., 0]
    log_ratio = logprobs - ref_logprobs
    if estimator == "k3":
        _check_ratio_finite(
            -log_ratio, "ref_logprobs", "ref_logprobs - log π(actions)"
        )
    slope = _estimate_derivative(estimator, log_ratio)
    return slope[..., None] * categorical_score(logits, actions)


# --- the regularized optimum -----------------------------------------------------------------


def _check_regularized(
    ref_probs: ArrayLike, action_rewards: ArrayLike, beta: float
) -> tuple[np.ndarray, np.ndarray, float]:
    """π_ref (..., K), one reward per category of the same shape, and β > 0."""
    ref_probs = check_distribution(ref_probs, "ref_probs")
    action_rewards = as_float_array_like(
        action_rewards, "action_rewards", ref_probs.shape, "ref_probs"
    )
    beta = check_positive_real(beta, "beta")
    return ref_probs, action_rewards, beta


def _tilted_log_normalizer(
    ref_probs: np.ndarray, action_rewards: np.ndarray, beta: float
):
    """log Z = log Σ_x π_ref(x) exp(R(x) / β), stably (categories with π_ref = 0 drop out)."""
    return special.logsumexp(action_rewards / beta, b=ref_probs, axis=-1)


@finite_output()
def kl_regularized_optimum(
    ref_probs: ArrayLike, action_rewards: ArrayLike, beta: float
) -> np.ndarray:
    """The distribution that maximizes expected reward minus β times the KL to π_ref.

        π*(x) = π_ref(x) exp(R(x) / β) / Z,
        Z = Σ_x π_ref(x) exp(R(x) / β),

    the maximizer of J(π) = Σ_x π(x) R(x) - β KL(π ‖ π_ref) over the simplex. Computed in log
    space (a log-sum-exp for Z), so rewards large compared to β do not overflow. A category
    with π_ref(x) = 0 keeps π*(x) = 0, whatever its reward: the KL term forbids new support.
    As β → 0 the optimum concentrates on the best rewards within the support of π_ref; as
    β → ∞ it returns to π_ref.

    Book: equation (eq-kl-optimum), chapter 6.

    Parameters
    ----------
    ref_probs : array_like, shape (..., K)
        π_ref, probability vectors along the last axis.
    action_rewards : array_like, shape (..., K)
        R(x) of each of the K responses (categories), with the shape of ``ref_probs``.
    beta : float
        The KL coefficient β > 0.

    Returns
    -------
    numpy.ndarray, shape (..., K)
        π*, probability vectors along the last axis.

    Raises
    ------
    ValueError
        If ``ref_probs`` is not an array of probability vectors, ``action_rewards`` is not
        finite or not of its shape, or ``beta`` is not a positive finite number.

    References
    ----------
    R. Rafailov, A. Sharma, E. Mitchell, S. Ermon, C. D. Manning and C. Finn, "Direct
    preference optimization: your language model is secretly a reward model", NeurIPS, 2023.

    Examples
    --------
    >>> kl_regularized_optimum([0.5, 0.5], [0.0, np.log(3.0)], beta=1.0)
    array([0.25, 0.75])
    >>> kl_regularized_optimum([0.5, 0.5, 0.0], [0.0, 0.0, 100.0], beta=0.1)
    array([0.5, 0.5, 0. ])
    """
    ref_probs, action_rewards, beta = _check_regularized(
        ref_probs, action_rewards, beta
    )

    log_z = _tilted_log_normalizer(ref_probs, action_rewards, beta)
    support = ref_probs > 0.0
    log_ref = np.log(np.where(support, ref_probs, 1.0))
    log_optimum = log_ref + action_rewards / beta - log_z[..., None]
    return np.where(
        support, np.exp(np.where(support, log_optimum, 0.0)), 0.0
    )


@finite_output()
def kl_regularized_value(
    ref_probs: ArrayLike, action_rewards: ArrayLike, beta: float
) -> np.ndarray | float:
    """The optimal value of the KL-regularized objective: β log Z.

        max_π Σ_x π(x) R(x) - β KL(π ‖ π_ref) = β log Σ_x π_ref(x) exp(R(x) / β),

    attained at :func:`kl_regularized_optimum`. It lies between the reference's expected
    reward Σ π_ref R (as β → ∞) and the best reward on the support of π_ref (as β → 0).

    Book: equation (eq-kl-gibbs), chapter 6.

    Parameters
    ----------
    ref_probs : array_like, shape (..., K)
        π_ref.
    action_rewards : array_like, shape (..., K)
        R(x) of each category, with the shape of ``ref_probs``.
    beta : float
        The KL coefficient β > 0.

    Returns
    -------
    float or numpy.ndarray, shape (...)
        β log Z; a float for a single (1-D) distribution.

    Raises
    ------
    ValueError
        As :func:`kl_regularized_optimum`.

    References
    ----------
    R. Rafailov et al., "Direct preference optimization: your language model is secretly a
    reward model", NeurIPS, 2023.

    Examples
    --------
    >>> kl_regularized_value([0.5, 0.5], [0.0, np.log(3.0)], beta=1.0)  # log 2
    0.6931471805599454
    """
    ref_probs, action_rewards, beta = _check_regularized(
        ref_probs, action_rewards, beta
    )
    return float_or_array(
        beta * _tilted_log_normalizer(ref_probs, action_rewards, beta)
    )


@finite_output()
def kl_regularized_objective(
    probs: ArrayLike,
    ref_probs: ArrayLike,
    action_rewards: ArrayLike,
    beta: float,
) -> np.ndarray | float:
    """The KL-regularized objective of a distribution π: reward minus β times the KL.

        J(π) = Σ_x π(x) R(x) - β KL(π ‖ π_ref) = β log Z - β KL(π ‖ π*).

    The second form shows that J is largest, equal to β log Z, exactly at π = π*
    (:func:`kl_regularized_optimum`).

    Book: equation (eq-kl-gibbs), chapter 6.

    Parameters
    ----------
    probs : array_like, shape (..., K)
        π.
    ref_probs : array_like, shape (..., K)
        π_ref, with the shape of ``probs``.
    action_rewards : array_like, shape (..., K)
        R(x) of each category, with the same shape.
    beta : float
        The KL coefficient β > 0.

    Returns
    -------
    float or numpy.ndarray, shape (...)
        J(π); a float for a single (1-D) distribution.

    Raises
    ------
    ValueError
        As :func:`kl_divergence` and :func:`kl_regularized_optimum`.

    References
    ----------
    R. Rafailov et al., "Direct preference optimization: your language model is secretly a
    reward model", NeurIPS, 2023.

    Examples
    --------
    >>> kl_regularized_objective([0.25, 0.75], [0.5, 0.5], [0.0, np.log(3.0)], beta=1.0)
    0.6931471805599453
    """
    ref_probs, action_rewards, beta = _check_regularized(
        ref_probs, action_rewards, beta
    )
    probs = check_distribution(probs, "probs")
    check_shape(probs, "probs", ref_probs.shape, "the shape of ref_probs")
    divergence = kl_divergence(probs, ref_probs)
    return float_or_array(
        np.sum(probs * action_rewards, axis=-1)
        - beta * np.asarray(divergence)
    )


# --- direct preference optimization ----------------------------------------------------------


def _check_dpo(
    chosen_logprobs: ArrayLike,
    rejected_logprobs: ArrayLike,
    ref_chosen_logprobs: ArrayLike,
    ref_rejected_logprobs: ArrayLike,
    beta: float,
) -> tuple[np.ndarray, float]:
    """The gap h of the log-ratios log(π / π_ref) of chosen and rejected (u = β h), and β."""
    chosen = check_logprobs(chosen_logprobs, "chosen_logprobs")

    def like_chosen(value: ArrayLike, name: str) -> np.ndarray:
        return check_shape(
            check_logprobs(value, name),
            name,
            chosen.shape,
            "the shape of chosen_logprobs",
        )

    rejected = like_chosen(rejected_logprobs, "rejected_logprobs")
    ref_chosen = like_chosen(ref_chosen_logprobs, "ref_chosen_logprobs")
    ref_rejected = like_chosen(
        ref_rejected_logprobs, "ref_rejected_logprobs"
    )
    beta = check_positive_real(beta, "beta")
    return (chosen - ref_chosen) - (rejected - ref_rejected), beta


def _check_label_smoothing(label_smoothing: float) -> float:
    """The probability ε in [0, 1/2] that a pair's preference label is flipped."""
    label_smoothing = check_nonnegative_real(
        label_smoothing, "label_smoothing"
    )
    if label_smoothing > 0.5:
        raise ValueError(
            "label_smoothing must be in [0, 0.5] (above 1/2 the labels "
            f"would mean the opposite preference); got {label_smoothing!r}"
        )
    return label_smoothing


@finite_output()
def dpo_loss(
    chosen_logprobs: ArrayLike,
    rejected_logprobs: ArrayLike,
    ref_chosen_logprobs: ArrayLike,
    ref_rejected_logprobs: ArrayLike,
    beta: float,
    label_smoothing: float = 0.0,
) -> np.ndarray:
    """The DPO loss of each preference pair: -log σ of the difference of implicit rewards.

        loss = -(1 - ε) log σ(u) - ε log σ(-u),    u = r̂(c) - r̂(r),
        r̂(x) = β log(π(x) / π_ref(x)),

    for a chosen response c preferred to a rejected one r; ε = ``label_smoothing`` = 0 (the
    default) is DPO's -log σ(u). The implicit reward
    β log(π / π_ref) is the reward under which π would be the KL-regularized optimum; the
    normalizer β log Z is the same for both responses of a pair and cancels, which is what
    makes the loss computable. -log σ(u) is evaluated as log(1 + exp(-u)) by ``logaddexp``,
    finite for margins of any size. The log-probabilities are those of whole responses (sums
    over their tokens). With ε > 0 (conservative DPO) each label is taken to be flipped with
    probability ε: the loss is the cross-entropy of the implicit model's σ(u) against the
    target 1 - ε instead of 1, so it is smallest at a finite margin, u = log((1 - ε) / ε),
    and no longer rewards pushing a pair's margin without bound.

    Book: equation (eq-dpo-loss), chapter 6.

    Parameters
    ----------
    chosen_logprobs : array_like, shape (...)
        log π(c) of each chosen response (<= 0), at least 1-D (one entry per pair).
    rejected_logprobs : array_like, shape (...)
        log π(r) of each rejected response.
    ref_chosen_logprobs : array_like, shape (...)
        log π_ref(c).
    ref_rejected_logprobs : array_like, shape (...)
        log π_ref(r).
    beta : float
        β > 0: the KL coefficient of the objective the loss is derived from.
    label_smoothing : float, optional
        ε in [0, 0.5]: the assumed probability that a pair's label is wrong. Default 0.

    Returns
    -------
    numpy.ndarray, shape (...)
        The loss of each pair (> 0); trainers average it over the pairs.

    Raises
    ------
    ValueError
        If an array is not finite, has a positive entry, is a scalar or does not have the
        shape of ``chosen_logprobs``, ``beta`` is not a positive finite number, or
        ``label_smoothing`` is not in [0, 0.5].

    Notes
    -----
    Checked in the trainers' code: OpenRLHF ``DPOLoss`` in ``openrlhf/models/loss.py``
    (OpenRLHF/OpenRLHF at commit 3c3be6234e0cb353e76bb8019947db9dfe99fca7) computes this
    loss with its ``label_smoothing``, citing Mitchell's note on conservative DPO. In TRL's
    ``DPOTrainer._compute_loss`` (``trl/trainer/dpo_trainer.py``, huggingface/trl at commit
    f2cd57710ae345ea6428ae95363267fcf38a3dc8) the default ``loss_type="sigmoid"`` is
    -log σ(u) and does not read ``label_smoothing``; the ``"robust"`` loss does, and divides
    by 1 - 2ε (an unbiased correction, a different loss).

    References
    ----------
    R. Rafailov et al., "Direct preference optimization: your language model is secretly a
    reward model", NeurIPS, 2023.
    E. Mitchell, "A note on DPO with noisy preferences & relationship to IPO", 2023,
    https://ericmitchell.ai/cdpo.pdf.
    R. A. Bradley and M. E. Terry, "Rank analysis of incomplete block designs: I. The method
    of paired comparisons", *Biometrika* 39(3/4), 324-345, 1952.

    Examples
    --------
    >>> dpo_loss([-1.0, -2.0], [-2.0, -1.0], [-1.5, -1.5], [-1.5, -1.5], beta=0.5)
    array([0.47407698, 0.97407698])
    >>> dpo_loss([-1.0], [-2.0], [-1.5], [-1.5], beta=0.5, label_smoothing=0.1)
    array([0.52407698])
    """
    gap, beta = _check_dpo(
        chosen_logprobs,
        rejected_logprobs,
        ref_chosen_logprobs,
        ref_rejected_logprobs,
        beta,
    )
    smoothing = _check_label_smoothing(label_smoothing)
    margin = beta * gap
    # -log σ(u) = log(1 + exp(-u)) by logaddexp, finite for margins of any
    # size.
    return (1.0 - smoothing) * np.logaddexp(
        0.0, -margin
    ) + smoothing * np.logaddexp(0.0, margin)


@finite_output()
def dpo_loss_gradient(
    chosen_logprobs: ArrayLike,
    rejected_logprobs: ArrayLike,
    ref_chosen_logprobs: ArrayLike,
    ref_rejected_logprobs: ArrayLike,
    beta: float,
    label_smoothing: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Derivatives of each pair's DPO loss with respect to the policy's log-probabilities.

        ∂loss/∂log π(c) = -β σ(-u),    ∂loss/∂log π(r) = +β σ(-u),
        u = r̂(c) - r̂(r),

    and with label smoothing ε, -β ((1 - ε) σ(-u) - ε σ(u)) and its negative,

    with r̂ the implicit reward of :func:`dpo_loss`. A pair pushes the chosen response up and the
    rejected one down by the same amount, weighted by σ(-m): the probability the implicit
    reward model gives to the wrong order. Pairs the policy already orders confidently
    contribute little. Through log π = Σ_j log π(x_j | x_<j) the same weight reaches every
    token of a response.

    Book: equation (eq-dpo-gradient), chapter 6.

    Parameters
    ----------
    chosen_logprobs, rejected_logprobs, ref_chosen_logprobs, ref_rejected_logprobs : array_like
        As for :func:`dpo_loss`, all of one shape (...).
    beta : float
        β > 0.
    label_smoothing : float, optional
        ε in [0, 0.5], as for :func:`dpo_loss`. Default 0.

    Returns
    -------
    tuple of numpy.ndarray
        (∂loss/∂log π(c), ∂loss/∂log π(r)), each of shape (...); negatives of each other.

    Raises
    ------
    ValueError
        As :func:`dpo_loss`.

    References
    ----------
    R. Rafailov et al., "Direct preference optimization: your language model is secretly a
    reward model", NeurIPS, 2023.

    Examples
    --------
    >>> chosen, rejected = dpo_loss_gradient([-1.0], [-1.0], [-1.0], [-1.0], beta=0.5)
    >>> chosen, rejected
    (array([-0.25]), array([0.25]))
    """
    gap, beta = _check_dpo(
        chosen_logprobs,
        rejected_logprobs,
        ref_chosen_logprobs,
        ref_rejected_logprobs,
        beta,
    )
    smoothing = _check_label_smoothing(label_smoothing)
    margin = beta * gap
    weight = beta * (
        (1.0 - smoothing) * special.expit(-margin)
        - smoothing * special.expit(margin)
    )
    return -weight, weight


@finite_output()
def ipo_loss(
    chosen_logprobs: ArrayLike,
    rejected_logprobs: ArrayLike,
    ref_chosen_logprobs: ArrayLike,
    ref_rejected_logprobs: ArrayLike,
    beta: float,
) -> np.ndarray:
    r"""The IPO loss of each preference pair: the squared distance of the log-ratio gap to 1/(2β).

        loss = (h - 1 / (2β))²,    h = log(π(c) / π_ref(c)) - log(π(r) / π_ref(r)),

    for a chosen response c preferred to a rejected one r. Where DPO's -log σ(βh) keeps
    decreasing as h grows, so that a pair seen as always preferred drives h (and the
    distance from the reference) without bound, IPO regresses h onto a finite target: the
    regularization β keeps acting however certain the preferences are. The log-probabilities
    are those of whole responses.

    Parameters
    ----------
    chosen_logprobs : array_like, shape (...)
        log π(c) of each chosen response (<= 0), at least 1-D (one entry per pair).
    rejected_logprobs : array_like, shape (...)
        log π(r) of each rejected response.
    ref_chosen_logprobs : array_like, shape (...)
        log π_ref(c).
    ref_rejected_logprobs : array_like, shape (...)
        log π_ref(r).
    beta : float
        β > 0, the regularization parameter (τ in the IPO paper).

    Returns
    -------
    numpy.ndarray, shape (...)
        The loss of each pair (>= 0); trainers average it over the pairs.

    Raises
    ------
    ValueError
        As :func:`dpo_loss`.

    Notes
    -----
    .. math::

       \ell = \left(h - \frac{1}{2\beta}\right)^2, \qquad
       h = \log \frac{\pi(c)}{\pi_{\mathrm{ref}}(c)} - \log \frac{\pi(r)}{\pi_{\mathrm{ref}}(r)}

    Checked in the trainers' code: OpenRLHF ``DPOLoss(ipo=True)`` in
    ``openrlhf/models/loss.py`` (OpenRLHF/OpenRLHF at commit
    3c3be6234e0cb353e76bb8019947db9dfe99fca7) is this loss of the summed log-probabilities.
    TRL's ``loss_type="ipo"`` (``DPOTrainer._compute_loss`` in ``trl/trainer/dpo_trainer.py``,
    huggingface/trl at commit f2cd57710ae345ea6428ae95363267fcf38a3dc8) divides each
    response's log-ratio by its number of tokens first: this function with every
    log-probability divided by the length of its response.

    References
    ----------
    M. G. Azar, M. Rowland, B. Piot, D. Guo, D. Calandriello, M. Valko and R. Munos, "A
    general theoretical paradigm to understand learning from human preferences", AISTATS,
    2024.

    Examples
    --------
    >>> ipo_loss([-1.0, -2.0], [-2.0, -1.0], [-1.5, -1.5], [-1.5, -1.5], beta=0.5)
    array([0., 4.])
    """
    gap, beta = _check_dpo(
        chosen_logprobs,
        rejected_logprobs,
        ref_chosen_logprobs,
        ref_rejected_logprobs,
        beta,
    )
    return (gap - 0.5 / beta) ** 2
