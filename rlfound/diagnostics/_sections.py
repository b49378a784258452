"""The sections of the batch report (:func:`rlfound.diagnostics.report`): each adds its
diagnostics to the table, or says in ``skipped`` why it could not."""

from __future__ import annotations

import numpy as np

from rlfound import kl, ppo

from ._common import _masked_variance
from ._critic import calibration_by_horizon, explained_variance
from ._policy import (
    ESTIMATORS,
    RATIO_LEVELS,
    approximate_kl,
    importance_ess,
    log_ratio_summary,
    policy_lag,
)
from ._statistics import (
    group_variance_statistics,
    grouped_statistics,
    mean_by_position,
    pearson_correlation,
    reward_statistics,
    tail_mean,
)


def _powers_of_two(size: int) -> list[int]:
    """0, 1, 2, 4, 8, ... below ``size``: a log-spaced sample of a profile."""
    points, p = [0], 1
    while p < size:
        points.append(p)
        p *= 2
    return points


def _add_means(table, prefix, values, labels, mask, names=None):
    """``prefix/<label>/mean`` for every label (or its name) among the selected entries."""
    if not mask.any():
        return
    keys, means, _, _ = grouped_statistics(values, labels, mask)
    for key, mean in zip(keys, means, strict=True):
        label = names[int(key)] if names is not None else int(key)
        table[f"{prefix}/{label}/mean"] = float(mean)


def _correlate(table, skipped, name, x, y, mask):
    """A correlation, or the reason it is undefined."""
    if mask.sum() < 2 or np.ptp(x[mask]) == 0.0 or np.ptp(y[mask]) == 0.0:
        skipped[name] = "needs two episodes that differ in both quantities"
    else:
        table[name] = pearson_correlation(x, y, mask)


def _profile(table, prefix, per_token, mask):
    """Mean and a log-spaced sample of the profile by position of a per-token quantity."""
    means, _ = mean_by_position(per_token, mask)
    table[f"{prefix}/mean"] = float(per_token[mask].mean())
    for p in _powers_of_two(means.size):
        table[f"{prefix}/position/{p}"] = float(means[p])


def _returns_section(table, skipped, view, inputs):
    """Returns, reward components, lengths, and returns by turn."""
    episode_return, fraction = (
        view["episode_return"],
        inputs["tail_fraction"],
    )
    mean, std, _, _ = reward_statistics(episode_return)
    table["return/mean"], table["return/std"] = mean, std
    table["return/min"] = float(episode_return.min())
    table["return/max"] = float(episode_return.max())
    table["return/tail_mean"] = tail_mean(episode_return, fraction)
    turn_exists = view["turn_exists"]
    if inputs["reward_components"] is None:
        skipped["reward/<component>/*"] = "needs reward_components"
    for name, component in (inputs["reward_components"] or {}).items():
        if not turn_exists.any():
            skipped[f"reward/{name}/*"] = "no row has a turn"
            continue
        mean, std, _, _ = reward_statistics(component, turn_exists)
        table[f"reward/{name}/mean"], table[f"reward/{name}/std"] = mean, std
        table[f"reward/{name}/min"] = float(component[turn_exists].min())
        table[f"reward/{name}/max"] = float(component[turn_exists].max())
        table[f"reward/{name}/tail_mean"] = tail_mean(
            component, fraction, turn_exists
        )
    rewards = view["rewards"]
    to_go = np.flip(np.cumsum(np.flip(rewards, axis=1), axis=1), axis=1)
    turn_index = np.broadcast_to(np.arange(rewards.shape[1]), rewards.shape)
    _add_means(table, "return/by_turn", to_go, turn_index, turn_exists)

    lengths = view["lengths"]
    table["length/mean"] = float(lengths.mean())
    table["length/min"], table["length/max"] = (
        float(lengths.min()),
        float(lengths.max()),
    )
    _correlate(
        table,
        skipped,
        "length/corr_return",
        lengths,
        episode_return,
        view["all_rows"],
    )


def _advantages_section(table, skipped, view, inputs):
    """Advantages, and returns and advantages by turn, task, success and length."""
    advantages, action = view["advantages"], view["action"]
    if advantages is None:
        skipped["advantage/*"] = (
            "needs advantages in the batch (and a generated token)"
        )
    else:
        selected = advantages[action]
        table["advantage/mean"] = float(selected.mean())
        table["advantage/std"] = float(selected.std())
        table["advantage/zero_fraction"] = float(np.mean(selected == 0.0))
        _add_means(
            table, "advantage/by_turn", advantages, view["turn_ids"], action
        )
        _correlate(
            table,
            skipped,
            "length/corr_advantage",
            view["lengths"],
            view["row_advantage"],
            view["has_tokens"],
        )

    success = inputs["success"]
    episode_labels = {
        "task": (inputs["task_ids"], None, "needs task_ids"),
        "success": (
            None if success is None else success.astype(np.int64),
            ("failure", "success"),
            "needs success",
        ),
    }
    lengths = view["lengths"]
    levels = (
        np.arange(1, inputs["length_buckets"] + 1) / inputs["length_buckets"]
    )
    edges = np.unique(
        np.quantile(lengths, levels, method="inverted_cdf")
    )  # observed lengths
    episode_labels["length"] = (
        np.searchsorted(
            edges, lengths
        ),  # the bucket of the first edge >= the length
        [f"le{edge:g}" for edge in edges],
        None,
    )
    for name, (labels, names, reason) in episode_labels.items():
        if labels is None:
            skipped[f"*/by_{name}/*"] = reason
            continue
        _add_means(
            table,
            f"return/by_{name}",
            view["episode_return"],
            labels,
            view["all_rows"],
            names,
        )
        if advantages is not None:
            _add_means(
                table,
                f"advantage/by_{name}",
                view["row_advantage"],
                labels,
                view["has_tokens"],
                names,
            )
    if success is not None:
        table["success/rate"] = float(success.mean())
        _add_means(
            table,
            "length/by_success",
            lengths,
            success.astype(np.int64),
            view["all_rows"],
            ("failure", "success"),
        )


def _groups_section(table, skipped, view, inputs):
    """Spread of rewards within groups, and the groups that teach nothing."""
    if inputs["group_ids"] is None:
        skipped["group/*"] = "needs group_ids"
        return
    variance, all_equal = group_variance_statistics(
        view["episode_return"], inputs["group_ids"]
    )
    table["group/reward_variance"] = variance
    table["group/all_equal_fraction"] = all_equal


def _entropy_section(table, skipped, view, inputs):
    """Entropy by position: the sampled estimate -log μ always, the exact entropy if given."""
    action = view["action"]
    if inputs["entropies"] is None:
        skipped["entropy/{mean,position/*}"] = (
            "needs entropies (of the current next-token distributions)"
        )
    if not action.any():
        skipped["entropy/sampled/*"] = "the batch has no generated token"
        return
    _profile(table, "entropy/sampled", -view["old"], action)
    if inputs["entropies"] is not None:
        _profile(table, "entropy", inputs["entropies"], action)


def _ratios_section(table, skipped, view, inputs):
    """KL to the reference, and with the current policy: log-ratios, KL to the old policy,
    clip fractions and effective sample sizes."""
    action, old, ref, logprobs = (
        view["action"],
        view["old"],
        view["ref"],
        inputs["logprobs"],
    )
    if not action.any():
        skipped["kl/*"] = skipped["log_ratio/*"] = (
            "the batch has no generated token"
        )
        return
    if ref is None:
        skipped["kl/*_ref/*"] = "needs ref_logprobs in the batch"
    else:
        for name in ESTIMATORS:
            table[f"kl/old_ref/{name}"] = approximate_kl(
                old, ref, action, name
            )
    if logprobs is None:
        reason = "needs logprobs (the current policy, for the ratios)"
        for family in ("log_ratio/*", "kl/old_current/*", "clip/*", "ess/*"):
            skipped[family] = reason
        return

    levels = inputs["quantiles"]
    mean, max_abs, values = log_ratio_summary(logprobs, old, action, levels)
    table["log_ratio/mean"], table["log_ratio/max_abs"] = mean, max_abs
    for level, value in zip(levels, values, strict=True):
        table[f"log_ratio/q{level:g}"] = float(value)
    mean, max_abs, _ = log_ratio_summary(
        logprobs, old, action, levels, "sequence"
    )
    table["log_ratio/sequence/mean"], table["log_ratio/sequence/max_abs"] = (
        mean,
        max_abs,
    )
    for name in ESTIMATORS:
        table[f"kl/old_current/{name}"] = approximate_kl(
            old, logprobs, action, name
        )
        if (
            ref is not None
        ):  # KL(π ‖ π_ref) from μ's samples needs the weight π / μ
            weighted = kl.importance_weighted_kl(
                logprobs, ref, old, name, action
            )
            table[f"kl/current_ref/{name}"] = float(
                weighted.sum() / action.sum()
            )

    advantages = view["advantages"]
    if advantages is None:
        skipped["clip/*"] = "needs advantages in the batch"
    else:
        ratio = np.exp(np.where(action, logprobs - old, 0.0))
        positive, negative = ppo.clip_fractions(
            ratio,
            advantages,
            action,
            inputs["clip_low"],
            inputs["clip_high"],
            inputs["dual_clip"],
        )
        signs = advantages[action]
        table["clip/positive"], table["clip/negative"] = positive, negative
        clipped = positive * np.sum(signs > 0) + negative * np.sum(signs < 0)
        table["clip/pooled"] = float(clipped / signs.size)

    for level in RATIO_LEVELS:
        ess = importance_ess(logprobs, old, action, level)
        count = (
            action.sum() if level == "token" else view["has_tokens"].sum()
        )
        table[f"ess/{level}"] = ess
        table[f"ess/{level}_fraction"] = float(ess / count)


def _critic_section(table, skipped, view, inputs):
    """Value loss, explained variance, and the bias at a few horizons."""
    values, returns, mask = (
        inputs["values"],
        inputs["returns"],
        inputs["value_mask"],
    )
    if mask is None:
        skipped["value/*"] = "needs values and returns"
        return
    if not mask.any():
        skipped["value/*"] = "the batch has no position to evaluate"
        return
    table["value/loss"] = ppo.value_loss(values, returns, mask)
    if _masked_variance(returns, mask) == 0.0:
        skipped["value/explained_variance"] = (
            "the returns are constant over the batch"
        )
    else:
        table["value/explained_variance"] = explained_variance(
            values, returns, mask
        )
    mean_values, mean_returns, counts = calibration_by_horizon(
        values, returns, mask
    )
    for h in _powers_of_two(counts.size):
        table[f"value/bias/horizon/{h}"] = float(
            mean_values[h] - mean_returns[h]
        )


def _gradients_section(table, skipped, view, inputs):
    """Gradient norms before and after clipping by the global norm, and per group."""
    gradients, max_norm = inputs["gradients"], inputs["max_grad_norm"]
    if gradients is None:
        skipped["grad_norm/*"] = "needs gradients"
        return
    group_norms, before, after = inputs["gradient_norms"]
    table["grad_norm/before"] = before
    for name, norm in zip(gradients, group_norms, strict=True):
        table[f"grad_norm/group/{name}"] = float(norm)
    if max_norm is None:
        skipped["grad_norm/after"] = "needs max_grad_norm"
    else:
        table["grad_norm/after"] = after


def _lag_section(table, skipped, view, inputs):
    """Policy lag in optimizer steps (the divergence is ``kl/old_current/*``)."""
    if inputs["learner_version"] is None:
        skipped["lag/*"] = "needs learner_version"
        return
    versions = view["versions"]
    mask = (
        view["action"]
        if versions.shape == view["action"].shape
        else view["has_tokens"]
    )
    if not mask.any():
        skipped["lag/*"] = "the batch has no generated token"
        return
    table["lag/steps_mean"], table["lag/steps_max"] = policy_lag(
        versions, inputs["learner_version"], mask
    )


_SECTIONS = (
    _returns_section,
    _advantages_section,
    _groups_section,
    _entropy_section,
    _ratios_section,
    _critic_section,
    _gradients_section,
    _lag_section,
)
