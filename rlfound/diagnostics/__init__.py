"""Estimator diagnostics: the numbers that show whether a policy-gradient estimator still works.

A rising reward says little about the estimator that produced it. This module computes, from
arrays a trainer already has, the quantities that do: statistics of the raw reward components
and of their lower tail; returns and advantages grouped by task, turn, length and success;
the spread of rewards inside groups and the fraction of groups whose rewards are all equal;
the distribution of the token log-ratios log π - log μ; approximate KL divergences to the
behavior and the reference policy (with the estimator named); entropy by position; the
critic's explained variance and its calibration by horizon; gradient norms before and after
clipping by the global norm; the effective sample size of the importance weights; the
correlation of length with reward and advantage; and the policy lag, in optimizer steps.

:func:`report` computes all of them from one training batch in the contract of chapter 13
(:mod:`rlfound.contract`) and returns a flat table ``{name: float}`` together with the
diagnostics it could not compute and why (an optional input was not given, or the batch
makes the quantity undefined). :func:`plot_history` draws tables of successive steps as
panels; it imports matplotlib only when called (matplotlib is a dependency of the book, not
of the library).

Conventions: per-token arrays have shape (..., L) with a ``mask`` of the same shape that
selects the positions that count; scalars come back as Python floats and arrays as float64;
the library's KL estimators (:mod:`rlfound.kl`), clip fractions (:mod:`rlfound.ppo`),
effective sample size (:mod:`rlfound.importance`) and group variance
(:mod:`rlfound.entropy`) are reused, not copied.

The code lives in private files, one topic each: ``_statistics`` (rewards, returns,
groups, profiles by position, gradient norms, correlation), ``_policy`` (log-ratios, KL,
effective sample size, policy lag), ``_critic`` (explained variance, calibration),
``_report`` (the batch report's inputs and :func:`report`), ``_sections`` (the report's
sections), ``_plot`` (:func:`plot_history`), and ``_common`` (what they share). Import the
names from ``rlfound.diagnostics``; the files are not an API.

Book: chapter 12 (estimator diagnostics).
"""

from __future__ import annotations

from ._critic import calibration_by_horizon, explained_variance
from ._plot import (
    DEFAULT_PANELS,  # noqa: F401 (read as rlfound.diagnostics.DEFAULT_PANELS)
    plot_history,
)
from ._policy import (
    ESTIMATORS,  # noqa: F401 (read as rlfound.diagnostics.ESTIMATORS)
    KL_REDUCTIONS,  # noqa: F401
    RATIO_LEVELS,  # noqa: F401
    approximate_kl,
    importance_ess,
    log_ratio_summary,
    policy_lag,
)
from ._report import report
from ._statistics import (
    gradient_norms,
    group_variance_statistics,
    grouped_statistics,
    mean_by_position,
    pearson_correlation,
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
