"""What the diagnostics share: masks that select something, labels, norms, log-ratios."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    as_float_array,
    check_indices,
    check_logprob_pair,
    check_optional_mask,
    check_shape,
)

#: Largest integer label the grouping functions accept (any int64 that is not extreme).
_LABEL_LIMIT = 2**62


# --- private helpers ---------------------------------------------------------------------------


def _selected(mask: np.ndarray, name: str = "mask") -> np.ndarray:
    """Refuse a mask that selects nothing (every statistic here is an average)."""
    if not mask.any():
        raise ValueError(
            f"{name} must select at least one entry; got none of shape {mask.shape}"
        )
    return mask


def _values_and_mask(values: ArrayLike, name: str, mask: ArrayLike | None):
    """Finite float64 values, at least 1-D, and a bool mask of their shape that selects some."""
    values = as_float_array(values, name, min_ndim=1)
    mask = _selected(check_optional_mask(mask, "mask", values.shape))
    return values, mask


def _labels(
    labels: ArrayLike, name: str, shape: tuple[int, ...]
) -> np.ndarray:
    """Integer labels (task ids, turn ids, buckets) of exactly ``shape``."""
    labels = check_indices(
        labels, name, _LABEL_LIMIT, minimum=-_LABEL_LIMIT, kind="label"
    )
    return check_shape(labels, name, shape, "one label per value")


def _token_pair(
    logprobs: ArrayLike, old_logprobs: ArrayLike, mask: ArrayLike | None
):
    """log π and log μ of one shape (..., L), and a bool mask that selects some token."""
    logprobs, old_logprobs, mask = check_logprob_pair(
        logprobs, old_logprobs, mask, "old_logprobs"
    )
    return logprobs, old_logprobs, _selected(mask)


def _norm(array: np.ndarray) -> float:
    """Euclidean norm without overflow: scale by the largest magnitude first."""
    largest = float(np.max(np.abs(array), initial=0.0))
    if largest == 0.0:
        return 0.0
    return largest * float(np.sqrt(np.sum((array / largest) ** 2)))


def _masked_variance(values: np.ndarray, mask: np.ndarray) -> float:
    """Population variance (ddof 0) of the selected values."""
    selected = values[mask]
    return float(np.mean((selected - selected.mean()) ** 2))


def _positions(mask: np.ndarray) -> np.ndarray:
    """For every selected entry of each row (last axis), its rank among the row's selected
    entries: 0 for the first, 1 for the second, ...; -1 where not selected."""
    return np.where(mask, np.cumsum(mask, axis=-1) - 1, -1)


def _log_ratios(logprobs, old_logprobs, mask, level):
    """log π - log μ of every selected token, or summed over each row with a selected token."""
    log_ratio = np.where(mask, logprobs - old_logprobs, 0.0)
    if level == "token":
        return log_ratio[mask]
    rows = mask.reshape(-1, mask.shape[-1]).any(axis=-1)
    return log_ratio.reshape(-1, log_ratio.shape[-1]).sum(axis=-1)[rows]


def _quantile_levels(quantiles: Any) -> np.ndarray:
    levels = as_float_array(quantiles, "quantiles", ndim=1)
    if levels.size == 0 or ((levels < 0.0) | (levels > 1.0)).any():
        raise ValueError(
            f"quantiles must be a non-empty 1-D array of levels in [0, 1]; got {levels.tolist()}"
        )
    return levels
