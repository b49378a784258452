"""Exercise ``loss-aggregation`` (chapter 8, two stars): five ways to reduce a batch loss.

A batch holds B sequences in rows: ``loss`` (shape (B, L)) holds a loss per token and
``mask`` (bool or 0/1, same shape) is 1 on the tokens that count. With L_i = Σ_j m_ij the
number of tokens of row i and L_max a constant ``max_length``, implement

* :func:`token_mean`: Σ_ij m_ij ℓ_ij / Σ_ij m_ij;
* :func:`seq_mean_token_mean`: (1/B) Σ_i (Σ_j m_ij ℓ_ij / L_i);
* :func:`seq_mean_token_sum`: (1/B) Σ_i Σ_j m_ij ℓ_ij;
* :func:`seq_mean_token_sum_norm`: Σ_ij m_ij ℓ_ij / L_max;
* :func:`dr_grpo`: Σ_ij m_ij ℓ_ij / (B L_max).

Every function starts with the provided helper :func:`as_batch`, which checks the batch and
sets the masked entries to 0. Rules shared by all five:

* B is the number of rows; a row without tokens counts as a sequence whose loss is 0.
* Masked positions are never read: they may hold anything, even NaN or an infinity (a padded
  log-probability), and the result must be the same as with zeros there.
* Bad input raises ``ValueError``: what :func:`as_batch` rejects (a ``mask`` of another
  shape than ``loss`` or with an entry other than 0/1, a non-finite loss on a selected
  token), ``token_mean`` of a batch without any token (its mean is undefined: never return
  NaN), a batch without rows where B is a divisor, and a ``max_length`` that is not a
  positive integer or is smaller than some row's number of tokens. The array may be longer
  than ``max_length``: padding columns beyond it are allowed.
"""

from __future__ import annotations

import numpy as np


def as_batch(loss, mask):
    """Check a batch and return its losses with every masked entry set to 0, and the mask.

    Provided (not part of the exercise): every function below starts with it. ``loss`` must
    be a 2-D real array, ``mask`` a bool or 0/1 array of the same shape, and the selected
    losses finite; masked entries are never read.

    Raises
    ------
    ValueError
        If any of these conditions fails.

    Examples
    --------
    >>> as_batch([[1.0, np.nan]], [[1, 0]])
    (array([[1., 0.]]), array([[ True, False]]))
    """
    raw = np.asarray(loss)
    if raw.ndim != 2 or raw.dtype.kind not in "iuf":
        raise ValueError(f"loss must be a 2-D array of real numbers; got shape {raw.shape}")
    mask = np.asarray(mask)
    if mask.shape != raw.shape:
        raise ValueError(f"mask must have the shape of loss {raw.shape}; got {mask.shape}")
    if not np.all((mask == 0) | (mask == 1)):
        raise ValueError("mask must hold booleans or 0/1")
    mask = mask.astype(bool)
    if not np.all(np.isfinite(raw[mask])):
        raise ValueError("loss must be finite where mask is True")
    # np.where, not loss * mask: 0 * inf is NaN.
    return np.where(mask, raw, 0).astype(np.float64), mask


def token_mean(loss, mask):
    """Every token of the batch weighs the same: Σ m ℓ / Σ m.

    Parameters
    ----------
    loss : array_like
        Shape (B, L): per-token losses (read only where ``mask`` is True).
    mask : array_like of bool or 0/1
        Shape (B, L): the tokens that count.

    Returns
    -------
    float
        The token mean.

    Raises
    ------
    ValueError
        If the input is invalid or the mask selects no token.

    Examples
    --------
    >>> token_mean([[4.0, np.nan, 0.0], [1.0, 1.0, 1.0]], [[1, 0, 0], [1, 1, 1]])
    1.75
    """
    ### BEGIN SOLUTION
    loss, mask = as_batch(loss, mask)
    if not mask.any():
        raise ValueError("mask must select at least one token: the mean of no tokens")
    return float(loss.sum() / mask.sum())
    ### END SOLUTION


def seq_mean_token_mean(loss, mask):
    """Every sequence weighs the same: the mean over rows of each row's token mean.

    Parameters
    ----------
    loss, mask : array_like
        As for :func:`token_mean`.

    Returns
    -------
    float
        (1/B) Σ_i (Σ_j m_ij ℓ_ij / L_i), a row without tokens contributing 0.

    Raises
    ------
    ValueError
        If the input is invalid.

    Examples
    --------
    >>> seq_mean_token_mean([[4.0, 0.0, 0.0], [1.0, 1.0, 1.0]], [[1, 0, 0], [1, 1, 1]])
    2.5
    """
    ### BEGIN SOLUTION
    loss, mask = as_batch(loss, mask)
    lengths = mask.sum(axis=1)
    sums = loss.sum(axis=1)
    if len(sums) == 0:
        raise ValueError("loss must have at least one row: B = 0 sequences")
    means = np.divide(sums, lengths, out=np.zeros_like(sums), where=lengths > 0)
    return float(means.mean())
    ### END SOLUTION


def seq_mean_token_sum(loss, mask):
    """The mean over rows of each row's token sum.

    Parameters
    ----------
    loss, mask : array_like
        As for :func:`token_mean`.

    Returns
    -------
    float
        (1/B) Σ_i Σ_j m_ij ℓ_ij.

    Raises
    ------
    ValueError
        If the input is invalid.

    Examples
    --------
    >>> seq_mean_token_sum([[4.0, 0.0, 0.0], [1.0, 1.0, 1.0]], [[1, 0, 0], [1, 1, 1]])
    3.5
    """
    ### BEGIN SOLUTION
    loss, mask = as_batch(loss, mask)
    if len(loss) == 0:
        raise ValueError("loss must have at least one row: B = 0 sequences")
    return float(loss.sum(axis=1).mean())
    ### END SOLUTION


def seq_mean_token_sum_norm(loss, mask, max_length):
    """The token sum of the batch over the constant ``max_length``.

    Parameters
    ----------
    loss, mask : array_like
        As for :func:`token_mean`.
    max_length : int
        L_max, at least every row's number of tokens.

    Returns
    -------
    float
        Σ_ij m_ij ℓ_ij / L_max.

    Raises
    ------
    ValueError
        If the input is invalid or ``max_length`` is not a positive integer at least every
        row's number of tokens.

    Examples
    --------
    >>> seq_mean_token_sum_norm([[4.0, 0.0, 0.0], [1.0, 1.0, 1.0]], [[1, 0, 0], [1, 1, 1]], 4)
    1.75
    """
    ### BEGIN SOLUTION
    loss, mask = as_batch(loss, mask)
    longest = int(mask.sum(axis=1).max(initial=0))
    if isinstance(max_length, bool) or not isinstance(max_length, (int, np.integer)):
        raise ValueError(f"max_length must be a positive integer; got {max_length!r}")
    if max_length < max(longest, 1):
        raise ValueError(f"max_length must be at least {max(longest, 1)}; got {max_length}")
    return float(loss.sum() / max_length)
    ### END SOLUTION


def dr_grpo(loss, mask, max_length):
    """Dr. GRPO's constant normalizer: the token sum of the batch over B · ``max_length``.

    Parameters
    ----------
    loss, mask : array_like
        As for :func:`token_mean`.
    max_length : int
        L_max, at least every row's number of tokens.

    Returns
    -------
    float
        Σ_ij m_ij ℓ_ij / (B L_max).

    Raises
    ------
    ValueError
        As for :func:`seq_mean_token_sum_norm`.

    Examples
    --------
    >>> dr_grpo([[4.0, 0.0, 0.0], [1.0, 1.0, 1.0]], [[1, 0, 0], [1, 1, 1]], 4)
    0.875
    """
    ### BEGIN SOLUTION
    loss, mask = as_batch(loss, mask)
    longest = int(mask.sum(axis=1).max(initial=0))
    if isinstance(max_length, bool) or not isinstance(max_length, (int, np.integer)):
        raise ValueError(f"max_length must be a positive integer; got {max_length!r}")
    if max_length < max(longest, 1):
        raise ValueError(f"max_length must be at least {max(longest, 1)}; got {max_length}")
    if len(loss) == 0:
        raise ValueError("loss must have at least one row: B = 0 sequences")
    return float(loss.sum() / (len(loss) * max_length))
    ### END SOLUTION


def test_aggregations():
    """The five reductions on a batch small enough to check by hand, with junk (NaN, inf) at
    masked positions, an empty row and padding columns; and the errors."""
    ### BEGIN SOLUTION
    nan, inf = np.nan, np.inf
    loss = np.array([[4.0, nan, -inf], [1.0, 1.0, 1.0], [inf, nan, 0.0]])
    mask = np.array([[1, 0, 0], [1, 1, 1], [0, 0, 0]])
    # Rows: (4), (1, 1, 1) and an empty row; B = 3, 4 tokens, sum 7.
    assert token_mean(loss, mask) == 7 / 4
    assert seq_mean_token_mean(loss, mask) == (4 + 1 + 0) / 3
    assert seq_mean_token_sum(loss, mask) == (4 + 3 + 0) / 3
    assert seq_mean_token_sum_norm(loss, mask, 5) == 7 / 5
    assert dr_grpo(loss, mask, 5) == 7 / 15
    # Padding columns beyond max_length, holding NaN, change nothing.
    padded_loss = np.concatenate([loss, np.full((3, 4), nan)], axis=1)
    padded_mask = np.concatenate([mask, np.zeros((3, 4), dtype=int)], axis=1)
    for plain, padded in (
        (token_mean(loss, mask), token_mean(padded_loss, padded_mask)),
        (seq_mean_token_mean(loss, mask), seq_mean_token_mean(padded_loss, padded_mask)),
        (dr_grpo(loss, mask, 5), dr_grpo(padded_loss, padded_mask, 5)),
    ):
        assert plain == padded
    # The empty batch: 0 where nothing divides by zero, an error for the token mean.
    empty = np.zeros((2, 3), dtype=bool)
    assert seq_mean_token_mean(loss[:2], empty) == 0.0
    assert dr_grpo(loss[:2], empty, 3) == 0.0
    for bad_call in (
        lambda: token_mean(loss[:2], empty),
        lambda: token_mean(loss, mask[:2]),
        lambda: token_mean(loss, 0.5 * mask),
        lambda: dr_grpo(loss, mask, 2),
        lambda: dr_grpo(loss, mask, 0),
        lambda: seq_mean_token_sum_norm(np.where(mask == 1, nan, 0.0), mask, 5),
    ):
        try:
            bad_call()
        except ValueError:
            continue
        raise AssertionError("bad input did not raise ValueError")
    ### END SOLUTION
