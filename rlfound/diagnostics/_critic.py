"""Critic diagnostics: explained variance and calibration by horizon."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    MAX_ARRAY_ENTRIES,
    as_float_array_like,
    check_nonnegative_int,
    check_nonnegative_real,
    check_size,
    finite_output,
)

from ._common import _masked_variance, _values_and_mask


@finite_output()
def explained_variance(
    values: ArrayLike,
    returns: ArrayLike,
    mask: ArrayLike | None = None,
    eps: float = 0.0,
) -> float:
    """Fraction of the variance of the returns that the critic's predictions explain.

        EV = 1 - Var(G - V) / (Var(G) + eps),

    with the variances taken over the selected entries (ddof 0; with eps = 0 the divisor
    cancels). EV = 1 for a perfect critic, 0 for a critic that predicts the mean return
    everywhere, and negative for one worse than that. It is blind to a constant offset:
    V + c has the EV of V, so a critic that is off by the same amount everywhere looks
    perfect; :func:`calibration_by_horizon` shows such a bias.

    Book: equation (eq-diag-explained-variance), chapter 12.

    Parameters
    ----------
    values : array_like, shape (...)
        Critic predictions V, at least 1-D, finite.
    returns : array_like, same shape
        Value targets G (returns or λ-returns).
    mask : array_like of bool or 0/1, same shape, optional
        Which entries count. Default: all. At least one.
    eps : float, optional
        Added to Var(G), >= 0. Default 0.0; verl adds 1e-5.

    Returns
    -------
    float
        EV, at most 1.

    Raises
    ------
    ValueError
        If an array is a scalar or not finite, the shapes differ, ``mask`` does not have their
        shape, is not 0/1 or selects nothing, ``eps`` is negative, or Var(G) + eps = 0 (the
        selected returns are all equal and eps = 0).

    Notes
    -----
    verl logs ``critic/vf_explained_var`` = ``1 - var(returns - values) / (var(returns) +
    1e-5)`` over the response tokens, with ``torch.var`` (ddof 1) (``compute_data_metrics``
    in ``verl/trainer/ppo/metric_utils.py``).

    Examples
    --------
    >>> explained_variance(values=[1.0, 2.0, 3.0], returns=[1.0, 2.0, 4.0])  # 1 - (2/9) / (14/9)
    0.8571428571428571
    >>> explained_variance(values=[11.0, 12.0, 13.0], returns=[1.0, 2.0, 4.0])  # blind to +10
    0.8571428571428571
    """
    values, mask = _values_and_mask(values, "values", mask)
    returns = as_float_array_like(returns, "returns", values.shape, "values")
    eps = check_nonnegative_real(eps, "eps")

    spread = _masked_variance(returns, mask) + eps
    if spread == 0.0:
        raise ValueError(
            "returns must vary over the selected entries when eps = 0 (the "
            "explained variance divides by their variance); got the "
            f"constant {float(returns[mask][0])!r}"
        )
    return 1.0 - _masked_variance(returns - values, mask) / spread


@finite_output()
def calibration_by_horizon(
    values: ArrayLike,
    returns: ArrayLike,
    mask: ArrayLike | None = None,
    max_horizon: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean prediction and mean target of the critic at each number of steps to go.

        h_ij = Σ_{k > j} m_ik   (the selected positions after j in row i),
        V̄_h = mean{V_ij : h_ij = h},    Ḡ_h = mean{G_ij : h_ij = h},
        n_h = #{h_ij = h},

    with horizons at or beyond ``max_horizon`` pooled into the last bucket. A calibrated
    critic has V̄_h = Ḡ_h at every horizon; the gap V̄_h - Ḡ_h is its bias at that distance
    from the end of the episode, which the explained variance cannot see. Near the end (h = 0) the
    target is close to the observed reward; far from it, it is a bootstrap of bootstraps.

    Book: equation (eq-diag-calibration), chapter 12.

    Parameters
    ----------
    values : array_like, shape (..., L)
        Critic predictions, finite; leading axes are rows (episodes).
    returns : array_like, shape (..., L)
        Value targets of the same positions.
    mask : array_like of bool or 0/1, shape (..., L), optional
        Which positions count (tokens or turns of each row). Default: all. At least one.
    max_horizon : int or None, optional
        H >= 0: horizons >= H are pooled into bucket H. Default None: no pooling.

    Returns
    -------
    mean_values, mean_returns, counts : numpy.ndarray, shape (H + 1,)
        V̄_h, Ḡ_h and n_h (float64) for h = 0, ..., H, with H the largest horizon present
        (or ``max_horizon``); a bucket with no entry holds 0 and count 0.

    Raises
    ------
    ValueError
        If an array is a scalar or not finite, the shapes differ, ``mask`` does not have their
        shape, is not 0/1 or selects nothing, or ``max_horizon`` is not a non-negative
        integer.

    Examples
    --------
    >>> v_bar, g_bar, counts = calibration_by_horizon([[0.5, 0.8, 1.0], [0.4, 0.6, 0.0]],
    ...                                               [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]],
    ...                                               mask=[[1, 1, 1], [1, 1, 0]])
    >>> v_bar, g_bar, counts
    (array([0.8, 0.6, 0.5]), array([0.5, 0.5, 1. ]), array([2., 2., 1.]))
    """
    values, mask = _values_and_mask(values, "values", mask)
    returns = as_float_array_like(returns, "returns", values.shape, "values")
    if max_horizon is not None:
        max_horizon = check_nonnegative_int(max_horizon, "max_horizon")
        check_size(
            max_horizon + 1,
            "max_horizon",
            MAX_ARRAY_ENTRIES,
            "buckets (max_horizon + 1)",
        )

    # Steps to go: selected positions after this one in the same row.
    after = (
        np.flip(np.cumsum(np.flip(mask, axis=-1), axis=-1), axis=-1) - mask
    )
    horizons = after[mask]
    if max_horizon is not None:
        horizons = np.minimum(horizons, max_horizon)
    size = (
        int(horizons.max()) + 1 if max_horizon is None else max_horizon + 1
    )
    counts = np.bincount(horizons, minlength=size).astype(np.float64)
    filled = np.maximum(counts, 1.0)  # empty buckets: 0 / 1
    mean_values = (
        np.bincount(horizons, weights=values[mask], minlength=size) / filled
    )
    mean_returns = (
        np.bincount(horizons, weights=returns[mask], minlength=size) / filled
    )
    return mean_values, mean_returns, counts
