"""Convention and bad-input rows for rlfound.diagnostics (chapter 12).

:func:`rlfound.diagnostics.report` returns a pair of dicts (name -> float, name -> reason) and
:func:`~rlfound.diagnostics.plot_history` a matplotlib figure: kinds the shared convention
test learns (``kinds.REPORT``, ``kinds.FIGURE``) when the module is registered in
``rlfound.__all__``. Until then the examples of those two functions are left out of
EXAMPLES, so the shared convention tests stay green; their bad-input rows are always here.
"""

from __future__ import annotations

import math

import numpy as np

from rlfound import contract, diagnostics
from tests.library.tables import kinds
from tests.library.tables.kinds import ARRAY, FLOAT, INT_ARRAY, Example, case

REPORT = getattr(kinds, "REPORT", None)
FIGURE = getattr(kinds, "FIGURE", None)
NAN, INF = math.nan, math.inf

# Two episodes: a two-turn one (versions 4 and 5) and a one-turn one (version 5).
EPISODES = [
    {
        "segments": [
            {"kind": "system", "tokens": [1, 2]},
            {
                "kind": "policy",
                "tokens": [10, 11],
                "logprobs": [-0.1, -0.2],
                "ref_logprobs": [-0.2, -0.3],
                "version": 4,
            },
            {"kind": "tool", "tokens": [20]},
            {
                "kind": "policy",
                "tokens": [12],
                "logprobs": [-0.4],
                "ref_logprobs": [-0.5],
                "version": 5,
            },
        ],
        "rewards": [0.0, 1.0],
        "advantages": [0.5, 0.5],
    },
    {
        "segments": [
            {"kind": "user", "tokens": [3]},
            {
                "kind": "policy",
                "tokens": [13, 14],
                "logprobs": [-0.7, -0.3],
                "ref_logprobs": [-0.6, -0.2],
                "version": 5,
            },
        ],
        "rewards": [0.0],
        "advantages": [-0.5],
    },
]
BATCH = contract.build_batch(EPISODES)
ACTION = BATCH["action_mask"]
CURRENT = np.where(ACTION, BATCH["old_logprobs"] - 0.1, 0.0)
PER_TOKEN = np.where(ACTION, 0.3, 0.0)
PER_TURN = np.array([[0.2, 0.9], [0.1, 0.0]])

LOGPROBS = np.log(np.array([[0.5, 0.25, 0.9], [0.1, 1.0, 0.3]]))
OLD = np.log(np.array([[0.4, 0.5, 0.8], [0.2, 1.0, 0.6]]))
MASK = np.array([[True, False, True], [True, True, False]])
VALUES = np.array([[0.1, 0.5, 0.2], [0.9, -0.3, 0.4]])
RETURNS = np.array([[0.0, 1.0, 0.5], [1.0, 0.0, -1.0]])
HISTORY = [{"return/mean": 0.1, "lag/steps_mean": 0.0}, {"return/mean": 0.3}]

EXAMPLES = [
    Example(
        diagnostics.reward_statistics,
        {"rewards": VALUES, "mask": MASK, "bins": 4, "value_range": (-1.0, 1.0)},
        (FLOAT, FLOAT, ARRAY, ARRAY),
    ),
    Example(diagnostics.tail_mean, {"values": VALUES, "fraction": 0.3, "mask": MASK}, FLOAT),
    Example(
        diagnostics.grouped_statistics,
        {"values": VALUES, "labels": np.array([[0, 1, 0], [2, 2, 1]]), "mask": MASK},
        (INT_ARRAY, ARRAY, ARRAY, ARRAY),
    ),
    Example(
        diagnostics.group_variance_statistics,
        {
            "rewards": np.array([1.0, 0.0, 1.0, 1.0, 0.5]),
            "group_ids": np.array([0, 0, 1, 1, 2]),
            "ddof": 0,
            "atol": 0.0,
        },
        (FLOAT, FLOAT),
    ),
    Example(
        diagnostics.log_ratio_summary,
        {
            "logprobs": LOGPROBS,
            "old_logprobs": OLD,
            "mask": MASK,
            "quantiles": np.array([0.1, 0.9]),
            "level": "sequence",
        },
        (FLOAT, FLOAT, ARRAY),
    ),
    Example(
        diagnostics.approximate_kl,
        {
            "logprobs": OLD,
            "ref_logprobs": LOGPROBS,
            "mask": MASK,
            "estimator": "k2",
            "reduce": "sequence",
        },
        FLOAT,
    ),
    Example(
        diagnostics.importance_ess,
        {"logprobs": LOGPROBS, "old_logprobs": OLD, "mask": MASK, "level": "token"},
        FLOAT,
    ),
    Example(
        diagnostics.policy_lag,
        {
            "policy_version": np.array([[3, -1, 4], [5, 5, -1]]),
            "learner_version": 6,
            "mask": MASK,
        },
        (FLOAT, FLOAT),
    ),
    Example(diagnostics.mean_by_position, {"values": VALUES, "mask": MASK}, (ARRAY, ARRAY)),
    Example(
        diagnostics.explained_variance,
        {"values": VALUES, "returns": RETURNS, "mask": MASK, "eps": 1e-5},
        FLOAT,
    ),
    Example(
        diagnostics.calibration_by_horizon,
        {"values": VALUES, "returns": RETURNS, "mask": MASK, "max_horizon": 1},
        (ARRAY, ARRAY, ARRAY),
    ),
    Example(
        diagnostics.gradient_norms,
        {"gradients": [np.array([3.0, 0.0]), np.array([[4.0]])], "max_norm": 1.0, "eps": 1e-6},
        (ARRAY, FLOAT, FLOAT),
    ),
    Example(
        diagnostics.pearson_correlation,
        {"x": VALUES, "y": RETURNS, "mask": MASK},
        FLOAT,
    ),
]
REPORT_KWARGS = {
    "batch": BATCH,
    "logprobs": CURRENT,
    "entropies": PER_TOKEN,
    "values": PER_TURN,
    "returns": PER_TURN + 0.1,
    "reward_components": {"task": np.array([[0.0, 1.0], [0.0, 0.0]])},
    "group_ids": np.array([0, 0]),
    "task_ids": np.array([7, 8]),
    "success": np.array([True, False]),
    "gradients": {"policy": np.array([0.3, -0.4])},
    "max_grad_norm": 0.1,
    "learner_version": 6,
    "clip_low": 0.2,
    "clip_high": 0.28,
    "dual_clip": 3.0,
    "quantiles": (0.1, 0.5),
    "tail_fraction": 0.5,
    "length_buckets": 2,
}
if REPORT is not None:
    EXAMPLES.append(Example(diagnostics.report, REPORT_KWARGS, REPORT))
if FIGURE is not None:
    EXAMPLES.append(
        Example(
            diagnostics.plot_history,
            {"history": HISTORY, "names": ["return/mean"], "ncols": 2, "steps": [1.0, 2.0]},
            FIGURE,
        )
    )

VALID = {
    diagnostics.reward_statistics: {
        "rewards": [1.0, 0.0, 2.0],
        "mask": None,
        "bins": 3,
        "value_range": None,
    },
    diagnostics.tail_mean: {"values": [1.0, 0.0, 2.0], "fraction": 0.5, "mask": None},
    diagnostics.grouped_statistics: {"values": [1.0, 0.0, 2.0], "labels": [0, 1, 0], "mask": None},
    diagnostics.group_variance_statistics: {
        "rewards": [1.0, 0.0, 2.0],
        "group_ids": [0, 0, 1],
        "ddof": 0,
        "atol": 0.0,
    },
    diagnostics.log_ratio_summary: {
        "logprobs": [-0.1, -0.5],
        "old_logprobs": [-0.2, -0.4],
        "mask": None,
        "quantiles": (0.5,),
        "level": "token",
    },
    diagnostics.approximate_kl: {
        "logprobs": [-0.1, -0.5],
        "ref_logprobs": [-0.2, -0.4],
        "mask": None,
        "estimator": "k3",
        "reduce": "token",
    },
    diagnostics.importance_ess: {
        "logprobs": [-0.1, -0.5],
        "old_logprobs": [-0.2, -0.4],
        "mask": None,
        "level": "token",
    },
    diagnostics.policy_lag: {"policy_version": [3, 4], "learner_version": 4, "mask": None},
    diagnostics.mean_by_position: {"values": [[1.0, 2.0]], "mask": None},
    diagnostics.explained_variance: {
        "values": [0.0, 1.0],
        "returns": [0.5, 1.5],
        "mask": None,
        "eps": 0.0,
    },
    diagnostics.calibration_by_horizon: {
        "values": [0.0, 1.0],
        "returns": [0.5, 1.5],
        "mask": None,
        "max_horizon": None,
    },
    diagnostics.gradient_norms: {"gradients": [[1.0, 2.0]], "max_norm": 1.0, "eps": 1e-6},
    diagnostics.pearson_correlation: {"x": [0.0, 1.0, 3.0], "y": [1.0, 0.0, 2.0], "mask": None},
    diagnostics.report: dict(REPORT_KWARGS),
    diagnostics.plot_history: {"history": HISTORY, "names": None, "ncols": 3, "steps": None},
}


def _mask_cases(function, shape):
    return [
        case(
            function,
            "mask",
            f"mask must have shape {shape}; got shape (5,)",
            mask=np.ones(5, dtype=bool),
        ),
        case(function, "mask", "mask must be a boolean (or 0/1) mask; got 2", mask=[2] * shape[0]),
        case(
            function,
            "mask",
            f"mask must select at least one entry; got none of shape {shape}",
            mask=np.zeros(shape, dtype=bool),
        ),
    ]


def _token_pair_cases(function, old_name):
    return [
        case(
            function,
            "logprobs",
            "logprobs must be log-probabilities (<= 0); got 0.5",
            logprobs=[0.5, -0.5],
        ),
        case(function, "logprobs", "logprobs must be finite; got nan", logprobs=[NAN, -0.5]),
        case(
            function,
            "logprobs",
            "logprobs must have at least 1 dimension; got shape ()",
            logprobs=-0.5,
        ),
        case(
            function,
            old_name,
            f"{old_name} must have the shape of logprobs, shape (2,); got shape (3,)",
            **{old_name: [-0.1, -0.2, -0.3]},
        ),
        case(
            function,
            old_name,
            f"{old_name} must be log-probabilities (<= 0); got 1.0",
            **{old_name: [1.0, -0.2]},
        ),
        *_mask_cases(function, (2,)),
    ]


CASES = [
    # reward_statistics
    case(
        diagnostics.reward_statistics,
        "rewards",
        "rewards must be finite; got inf",
        rewards=[INF, 0.0],
    ),
    case(
        diagnostics.reward_statistics,
        "rewards",
        "rewards must have at least 1 dimension; got shape ()",
        rewards=1.0,
    ),
    *_mask_cases(diagnostics.reward_statistics, (3,)),
    case(diagnostics.reward_statistics, "bins", "bins must be a positive integer; got 0", bins=0),
    case(
        diagnostics.reward_statistics, "bins", "bins must be a positive integer; got 2.0", bins=2.0
    ),
    case(
        diagnostics.reward_statistics,
        "value_range",
        "value_range must be a pair (lower, upper) with lower < upper; got [1.0, 0.0]",
        value_range=(1.0, 0.0),
    ),
    case(
        diagnostics.reward_statistics,
        "value_range",
        "value_range must be finite; got inf",
        value_range=(0.0, INF),
    ),
    # tail_mean
    case(diagnostics.tail_mean, "values", "values must be finite; got nan", values=[NAN]),
    case(diagnostics.tail_mean, "fraction", "fraction must be in (0, 1]", fraction=0.0),
    case(diagnostics.tail_mean, "fraction", "fraction must be in [0, 1]; got 1.5", fraction=1.5),
    *_mask_cases(diagnostics.tail_mean, (3,)),
    # grouped_statistics
    case(
        diagnostics.grouped_statistics,
        "values",
        "values must be finite; got nan",
        values=[NAN, 0.0, 1.0],
    ),
    case(
        diagnostics.grouped_statistics,
        "labels",
        "labels must have one label per value, shape (3,); got shape (2,)",
        labels=[0, 1],
    ),
    case(
        diagnostics.grouped_statistics,
        "labels",
        "labels must be integer label indices; got 0.5",
        labels=[0.5, 1.0, 0.0],
    ),
    *_mask_cases(diagnostics.grouped_statistics, (3,)),
    # group_variance_statistics
    case(
        diagnostics.group_variance_statistics,
        "rewards",
        "rewards must be a 1-D array",
        rewards=[[1.0, 0.0, 2.0]],
    ),
    case(
        diagnostics.group_variance_statistics,
        "rewards",
        "rewards must hold at least one",
        rewards=[],
        group_ids=[],
    ),
    case(
        diagnostics.group_variance_statistics,
        "group_ids",
        "group_ids must have one label per value, shape (3,); got shape (2,)",
        group_ids=[0, 1],
    ),
    case(
        diagnostics.group_variance_statistics,
        "ddof",
        "ddof must be smaller than the number of rewards per group (1); got 1",
        ddof=1,
    ),
    case(
        diagnostics.group_variance_statistics,
        "ddof",
        "ddof must be a non-negative integer; got -1",
        ddof=-1,
    ),
    case(
        diagnostics.group_variance_statistics,
        "atol",
        "atol must be a non-negative finite number; got -0.1",
        atol=-0.1,
    ),
    # log_ratio_summary
    *_token_pair_cases(diagnostics.log_ratio_summary, "old_logprobs"),
    case(
        diagnostics.log_ratio_summary,
        "quantiles",
        "quantiles must be a non-empty 1-D array of levels in [0, 1]; got [1.5]",
        quantiles=(1.5,),
    ),
    case(
        diagnostics.log_ratio_summary, "quantiles", "quantiles must be a 1-D array", quantiles=0.5
    ),
    case(
        diagnostics.log_ratio_summary,
        "level",
        "level must be one of ('token', 'sequence'); got 'row'",
        level="row",
    ),
    # approximate_kl
    *_token_pair_cases(diagnostics.approximate_kl, "ref_logprobs"),
    case(
        diagnostics.approximate_kl,
        "estimator",
        "estimator must be one of ('k1', 'k2', 'k3'); got 'k4'",
        estimator="k4",
    ),
    case(
        diagnostics.approximate_kl,
        "reduce",
        "reduce must be one of ('token', 'sequence'); got 'mean'",
        reduce="mean",
    ),
    # importance_ess
    *_token_pair_cases(diagnostics.importance_ess, "old_logprobs"),
    case(
        diagnostics.importance_ess,
        "level",
        "level must be one of ('token', 'sequence'); got 'batch'",
        level="batch",
    ),
    # policy_lag
    case(
        diagnostics.policy_lag,
        "policy_version",
        "policy_version must not be newer than learner_version (4); got 5 at index (1,)",
        policy_version=[3, 5],
    ),
    case(
        diagnostics.policy_lag,
        "policy_version",
        "policy_version must be >= 0 where mask selects it",
        policy_version=[-1, 4],
    ),
    case(
        diagnostics.policy_lag,
        "policy_version",
        "policy_version must be integer version indices; got 3.5",
        policy_version=[3.5, 4.0],
    ),
    case(
        diagnostics.policy_lag,
        "learner_version",
        "learner_version must be a non-negative integer; got -1",
        learner_version=-1,
    ),
    *_mask_cases(diagnostics.policy_lag, (2,)),
    # mean_by_position
    case(
        diagnostics.mean_by_position,
        "values",
        "values must be finite; got nan",
        values=[[NAN, 1.0]],
    ),
    case(
        diagnostics.mean_by_position,
        "mask",
        "mask must have shape (1, 2); got shape (2,)",
        mask=[True, True],
    ),
    case(
        diagnostics.mean_by_position,
        "mask",
        "mask must select at least one entry",
        mask=[[False, False]],
    ),
    # explained_variance
    case(
        diagnostics.explained_variance,
        "values",
        "values must be finite; got inf",
        values=[INF, 0.0],
    ),
    case(
        diagnostics.explained_variance,
        "returns",
        "returns must have the shape of values, (2,); got shape (3,)",
        returns=[0.0, 1.0, 2.0],
    ),
    case(
        diagnostics.explained_variance,
        "returns",
        "returns must vary over the selected entries",
        returns=[1.0, 1.0],
    ),
    *_mask_cases(diagnostics.explained_variance, (2,)),
    case(
        diagnostics.explained_variance,
        "eps",
        "eps must be a non-negative finite number; got -1e-05",
        eps=-1e-5,
    ),
    # calibration_by_horizon
    case(
        diagnostics.calibration_by_horizon,
        "values",
        "values must be finite; got nan",
        values=[NAN, 0.0],
    ),
    case(
        diagnostics.calibration_by_horizon,
        "returns",
        "returns must have the shape of values, (2,); got shape (1,)",
        returns=[0.0],
    ),
    *_mask_cases(diagnostics.calibration_by_horizon, (2,)),
    case(
        diagnostics.calibration_by_horizon,
        "max_horizon",
        "max_horizon must be a non-negative integer; got -1",
        max_horizon=-1,
    ),
    # gradient_norms
    case(diagnostics.gradient_norms, "gradients", "gradients must hold at least one", gradients=[]),
    case(
        diagnostics.gradient_norms,
        "gradients",
        "gradients[1] must be finite; got nan",
        gradients=[[1.0], [NAN]],
    ),
    case(
        diagnostics.gradient_norms,
        "gradients",
        "gradients must be a sequence (or mapping)",
        gradients=1.0,
    ),
    case(
        diagnostics.gradient_norms,
        "max_norm",
        "max_norm must be a positive finite number; got 0.0",
        max_norm=0.0,
    ),
    case(
        diagnostics.gradient_norms,
        "eps",
        "eps must be a non-negative finite number; got -1.0",
        eps=-1.0,
    ),
    # pearson_correlation
    case(
        diagnostics.pearson_correlation,
        "x",
        "x must vary over the selected entries",
        x=[1.0, 1.0, 1.0],
    ),
    case(diagnostics.pearson_correlation, "x", "x must be finite; got nan", x=[NAN, 0.0, 1.0]),
    case(
        diagnostics.pearson_correlation,
        "y",
        "y must vary over the selected entries",
        y=[2.0, 2.0, 2.0],
    ),
    case(
        diagnostics.pearson_correlation,
        "y",
        "y must have the shape of x, (3,); got shape (2,)",
        y=[1.0, 2.0],
    ),
    case(
        diagnostics.pearson_correlation,
        "mask",
        "mask must select at least two entries; got 1",
        mask=[True, False, False],
    ),
    case(
        diagnostics.pearson_correlation,
        "mask",
        "mask must have shape (3,); got shape (2,)",
        mask=[True, True],
    ),
    # report: the batch, then every optional input
    case(
        diagnostics.report,
        "batch",
        "batch must have the fields",
        batch={k: v for k, v in BATCH.items() if k != "turn_ids"},
    ),
    case(diagnostics.report, "batch", "batch must be a mapping", batch=[1, 2]),
    case(
        diagnostics.report,
        "logprobs",
        "logprobs must have the shape of the positions it describes",
        logprobs=CURRENT[:, :-1],
    ),
    case(
        diagnostics.report,
        "logprobs",
        "logprobs must be log-probabilities (<= 0); got 0.5",
        logprobs=np.where(ACTION, 0.5, 0.0),
    ),
    case(
        diagnostics.report,
        "entropies",
        "entropies must be >= 0 where action_mask is set; got -0.3",
        entropies=-PER_TOKEN,
    ),
    case(
        diagnostics.report,
        "entropies",
        "entropies must hold real numbers; got dtype <U1",
        entropies=np.full(ACTION.shape, "a"),
    ),
    case(
        diagnostics.report,
        "values",
        "values must have shape (2, 5) (one per target token) or "
        "(2, 2) (one per turn); got shape (2, 3)",
        values=np.zeros((2, 3)),
    ),
    case(
        diagnostics.report, "values", "values must be finite; got nan", values=np.full((2, 2), NAN)
    ),
    case(
        diagnostics.report,
        "returns",
        "returns must have the shape of values, (2, 2); got shape (2, 5)",
        returns=PER_TOKEN,
    ),
    case(
        diagnostics.report,
        "returns",
        "returns must be finite; got inf",
        returns=np.full((2, 2), INF),
    ),
    case(
        diagnostics.report,
        "reward_components",
        "reward_components must be a mapping",
        reward_components=[np.zeros((2, 2))],
    ),
    case(
        diagnostics.report,
        "reward_components",
        "reward_components['task'] must have the shape of the positions it describes",
        reward_components={"task": np.zeros(2)},
    ),
    case(
        diagnostics.report,
        "group_ids",
        "group_ids must have one label per value, shape (2,); got shape (3,)",
        group_ids=[0, 0, 1],
    ),
    case(
        diagnostics.report,
        "task_ids",
        "task_ids must be integer label indices; got 1.5",
        task_ids=[1.5, 2.0],
    ),
    case(
        diagnostics.report,
        "success",
        "success must be a boolean (or 0/1) mask; got 2",
        success=[2, 0],
    ),
    case(
        diagnostics.report,
        "gradients",
        "gradients must be a mapping of group names",
        gradients=[np.zeros(2)],
    ),
    case(
        diagnostics.report,
        "gradients",
        "gradients[0] must be finite; got nan",
        gradients={"policy": np.array([NAN])},
    ),
    case(
        diagnostics.report,
        "max_grad_norm",
        "max_grad_norm must be a positive finite number; got -1.0",
        max_grad_norm=-1.0,
    ),
    case(
        diagnostics.report,
        "learner_version",
        "learner_version must be a non-negative integer; got -1",
        learner_version=-1,
    ),
    case(diagnostics.report, "learner_version", "learner_version must be", learner_version=1.5),
    case(
        diagnostics.report,
        "clip_low",
        "clip_low must be in [0, 1) so that 1 - clip_low > 0; got 1.0",
        clip_low=1.0,
    ),
    case(
        diagnostics.report,
        "clip_high",
        "clip_high must be a non-negative finite number; got -0.1",
        clip_high=-0.1,
    ),
    # The same check and message as the ppo functions' (rlfound._validation.check_clip_ranges).
    case(
        diagnostics.report,
        "dual_clip",
        "dual_clip must be > 1 (a bound on ρ for negative advantages); got 0.5",
        dual_clip=0.5,
    ),
    case(
        diagnostics.report,
        "quantiles",
        "quantiles must be a non-empty 1-D array of levels",
        quantiles=(),
    ),
    case(diagnostics.report, "tail_fraction", "tail_fraction must be in (0, 1]", tail_fraction=0.0),
    case(
        diagnostics.report,
        "length_buckets",
        "length_buckets must be a positive integer; got 0",
        length_buckets=0,
    ),
    # plot_history (all checked before matplotlib is imported)
    case(
        diagnostics.plot_history,
        "history",
        "history must be a non-empty sequence of tables",
        history=[],
    ),
    case(diagnostics.plot_history, "history", "history must hold tables", history=[1.0, 2.0]),
    case(
        diagnostics.plot_history,
        "history",
        "history must hold at least one run; got an empty",
        history={},
    ),
    case(
        diagnostics.plot_history,
        "history",
        "history['slow'] must be a non-empty sequence of tables",
        history={"slow": []},
    ),
    case(
        diagnostics.plot_history,
        "history",
        "history must hold numbers",
        history=[{"return/mean": "high"}],
    ),
    case(
        diagnostics.plot_history,
        "names",
        "names must name diagnostics that occur in history; got 'return/max'",
        names=["return/max"],
    ),
    case(diagnostics.plot_history, "names", "names must be a non-empty list", names="return/mean"),
    case(diagnostics.plot_history, "ncols", "ncols must be a positive integer; got 0", ncols=0),
    case(
        diagnostics.plot_history,
        "steps",
        "steps must have one entry per table of history, shape (2,); got shape (3,)",
        steps=[0.0, 1.0, 2.0],
    ),
]
