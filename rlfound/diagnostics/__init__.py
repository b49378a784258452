"""Estimator diagnostics (a package; the code is in its private files)."""

# The upper-case constants are not in __all__ but are read as rlfound.diagnostics.NAME.
from ._report import (
    DEFAULT_PANELS,  # noqa: F401
    ESTIMATORS,  # noqa: F401
    KL_REDUCTIONS,  # noqa: F401
    RATIO_LEVELS,  # noqa: F401
    approximate_kl,
    calibration_by_horizon,
    explained_variance,
    gradient_norms,
    group_variance_statistics,
    grouped_statistics,
    importance_ess,
    log_ratio_summary,
    mean_by_position,
    pearson_correlation,
    plot_history,
    policy_lag,
    report,
    reward_statistics,
    tail_mean,
)

__all__ = [
    "approximate_kl",
    "calibration_by_horizon",
    "explained_variance",
    "gradient_norms",
    "group_variance_statistics",
    "grouped_statistics",
    "importance_ess",
    "log_ratio_summary",
    "mean_by_position",
    "pearson_correlation",
    "plot_history",
    "policy_lag",
    "report",
    "reward_statistics",
    "tail_mean",
]
