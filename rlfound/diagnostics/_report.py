"""The batch report: every diagnostic of one training batch as a flat table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rlfound import contract, kl, ppo, tokens
from rlfound._validation import (
    MAX_ARRAY_ENTRIES,
    as_array,
    as_float_array,
    check_clip_ranges,
    check_logprobs,
    check_mask,
    check_positive_int,
    check_positive_real,
    check_shape,
    check_size,
    check_unit_interval,
    finite_output,
    raise_first,
)

from ._common import _labels, _masked_variance, _quantile_levels
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
    gradient_norms,
    group_variance_statistics,
    grouped_statistics,
    mean_by_position,
    pearson_correlation,
    reward_statistics,
    tail_mean,
)

# --- the report --------------------------------------------------------------------------------


def _read_per_token(
    x: Any, name: str, mask: np.ndarray, *, logprob: bool = False
) -> np.ndarray:
    """An optional input of the shape of ``mask``, read only where ``mask`` is set.

    Positions the mask leaves out may hold anything a trainer writes there (TRL stores 1.0,
    an impossible log-probability, at padding): they are replaced by 0 before any check.
    """
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"{name} must be a rectangular array of numbers; got {x!r}"
        ) from error
    if raw.dtype.kind not in "iuf":
        raise ValueError(
            f"{name} must hold real numbers; got dtype {raw.dtype}"
        )
    check_shape(
        raw, name, mask.shape, "the shape of the positions it describes"
    )
    clean = as_float_array(np.where(mask, raw, 0.0), name)
    if logprob:
        check_logprobs(clean, name)
    return clean


def _check_fraction(x: Any, name: str) -> float:
    fraction = check_unit_interval(x, name)
    if fraction == 0.0:
        raise ValueError(
            f"{name} must be in (0, 1] (a tail must hold some mass); got 0.0"
        )
    return fraction


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


def _batch_view(clean: dict) -> dict:
    """What every section reads: masks, per-row quantities, fields cleaned where unread."""
    action, turn_ids, rewards = (
        clean["action_mask"],
        clean["turn_ids"],
        clean["rewards"],
    )
    num_turns = (
        turn_ids.max(axis=1) + 1
    )  # 0 for a row without a policy token
    lengths = action.sum(axis=1).astype(np.float64)
    view = {
        "action": action,
        "turn_ids": turn_ids,
        "rewards": rewards,
        "turn_exists": np.arange(rewards.shape[1]) < num_turns[:, None],
        "old": np.where(action, clean["old_logprobs"], 0.0),
        "ref": np.where(action, clean["ref_logprobs"], 0.0)
        if "ref_logprobs" in clean
        else None,
        "versions": clean["policy_version"],
        "lengths": lengths,
        "has_tokens": lengths > 0,
        "all_rows": np.ones(action.shape[0], dtype=bool),
        "episode_return": rewards.sum(axis=1),
        "advantages": None,
        "row_advantage": None,
    }
    if "advantages" in clean and action.any():
        advantages = clean["advantages"]
        if (
            advantages.shape != action.shape
        ):  # one per turn: copy it to the turn's tokens
            advantages = tokens.expand_turn_values_to_tokens(
                advantages, turn_ids
            )
        view["advantages"] = np.where(action, advantages, 0.0)
        # The advantage of an episode: the mean over its generated tokens.
        view["row_advantage"] = view["advantages"].sum(axis=1) / np.maximum(
            lengths, 1.0
        )
    return view


def _check_inputs(view: dict, given: dict) -> dict:
    """The optional inputs of :func:`report`, checked (all of them, before any work)."""
    action, rows = view["action"], view["action"].shape[0]
    inputs = dict(given)
    if given["logprobs"] is not None:
        inputs["logprobs"] = _read_per_token(
            given["logprobs"], "logprobs", action, logprob=True
        )
    if given["entropies"] is not None:
        inputs["entropies"] = _read_per_token(
            given["entropies"], "entropies", action
        )
        negative = inputs["entropies"] < 0.0
        raise_first(
            negative,
            "entropies must be >= 0 where action_mask is set",
            values=inputs["entropies"],
        )
    masks = {}
    for name in ("values", "returns"):
        if given[name] is not None:
            shape, per_turn = (
                as_array(given[name], name).shape,
                view["turn_exists"].shape,
            )
            if shape not in (action.shape, per_turn):
                raise ValueError(
                    f"{name} must have shape {action.shape} (one per target token) or "
                    f"{per_turn} (one per turn); got shape {shape}"
                )
            masks[name] = (
                action if shape == action.shape else view["turn_exists"]
            )
            inputs[name] = _read_per_token(given[name], name, masks[name])
    inputs["value_mask"] = None
    if len(masks) == 2:
        if inputs["values"].shape != inputs["returns"].shape:
            raise ValueError(
                f"returns must have the shape of values, {inputs['values'].shape}; got shape "
                f"{inputs['returns'].shape}"
            )
        inputs["value_mask"] = masks["values"]
    components = given["reward_components"]
    if components is not None:
        if not isinstance(components, Mapping):
            raise ValueError(
                "reward_components must be a mapping of names to (B, T) arrays; got "
                f"{type(components).__name__}"
            )
        inputs["reward_components"] = {
            name: _read_per_token(
                value, f"reward_components[{name!r}]", view["turn_exists"]
            )
            for name, value in components.items()
        }
    for name in ("group_ids", "task_ids"):
        if given[name] is not None:
            inputs[name] = _labels(given[name], name, (rows,))
    if given["success"] is not None:
        inputs["success"] = check_mask(given["success"], "success", (rows,))
    if given["gradients"] is not None and not isinstance(
        given["gradients"], Mapping
    ):
        raise ValueError(
            "gradients must be a mapping of group names to arrays; got "
            f"{type(given['gradients']).__name__}"
        )
    if given["max_grad_norm"] is not None:
        inputs["max_grad_norm"] = check_positive_real(
            given["max_grad_norm"], "max_grad_norm"
        )
    if (
        given["gradients"] is not None
    ):  # checked (and cheap) now, reported in its section
        threshold = (
            1.0
            if inputs["max_grad_norm"] is None
            else inputs["max_grad_norm"]
        )
        inputs["gradient_norms"] = gradient_norms(
            given["gradients"], threshold
        )
    check_clip_ranges(
        given["clip_low"], given["clip_high"], given["dual_clip"]
    )
    inputs["quantiles"] = _quantile_levels(given["quantiles"])
    inputs["tail_fraction"] = _check_fraction(
        given["tail_fraction"], "tail_fraction"
    )
    inputs["length_buckets"] = check_size(
        check_positive_int(given["length_buckets"], "length_buckets"),
        "length_buckets",
        MAX_ARRAY_ENTRIES,
        "buckets",
    )
    return inputs


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


@finite_output()
def report(
    batch: Mapping[str, ArrayLike],
    *,
    logprobs: ArrayLike | None = None,
    entropies: ArrayLike | None = None,
    values: ArrayLike | None = None,
    returns: ArrayLike | None = None,
    reward_components: Mapping[str, ArrayLike] | None = None,
    group_ids: ArrayLike | None = None,
    task_ids: ArrayLike | None = None,
    success: ArrayLike | None = None,
    gradients: Mapping[str, ArrayLike] | None = None,
    max_grad_norm: float | None = None,
    learner_version: int | None = None,
    clip_low: float = 0.2,
    clip_high: float | None = None,
    dual_clip: float | None = None,
    quantiles: ArrayLike = (0.01, 0.5, 0.99),
    tail_fraction: float = 0.05,
    length_buckets: int = 4,
) -> tuple[dict[str, float], dict[str, str]]:
    """Every estimator diagnostic of one training batch, as a flat table.

    The batch is the chapter-13 contract (:func:`rlfound.contract.validate` checks it first):
    ``rewards`` (B, T) per turn, ``action_mask``, ``old_logprobs``, ``turn_ids`` and
    ``policy_version`` aligned with the targets, optional ``ref_logprobs`` and
    ``advantages`` (per token or per turn). Everything a trainer knows beyond the batch is
    an optional keyword argument; a diagnostic whose inputs are missing, or that the batch
    leaves undefined, is not computed and is named in the second dictionary with the reason.

    Per episode (row) i: the return R_i = Σ_k r_ik (undiscounted, over its turns), the length
    n_i = Σ_j action_mask_ij (generated tokens), its advantage = the mean advantage of its
    tokens. The table's names (every value a float):

    - ``return/{mean,std,min,max}``, ``return/tail_mean`` (:func:`tail_mean` at
      ``tail_fraction``), ``reward/<component>/{mean,std,min,max,tail_mean}`` per reward
      component; ``return/by_turn/<k>/mean`` (reward-to-go from turn k);
    - ``advantage/{mean,std,zero_fraction}`` over the generated tokens,
      ``advantage/by_turn/<k>/mean``; with ``task_ids``: ``return/by_task/<id>/mean`` and
      ``advantage/by_task/<id>/mean``; with ``success``: ``success/rate`` and
      ``{return,advantage,length}/by_success/{failure,success}/mean``;
      ``{return,advantage}/by_length/le<n>/mean`` over ``length_buckets`` quantile buckets
      of the lengths (labeled by their largest length);
    - ``length/{mean,min,max}``, ``length/corr_return``, ``length/corr_advantage``;
    - ``group/reward_variance``, ``group/all_equal_fraction`` (with ``group_ids``);
    - ``entropy/sampled/mean`` and ``entropy/sampled/position/<p>`` (the estimate -log μ of
      the sampled tokens, p = 0, 1, 2, 4, ...); with ``entropies``: ``entropy/mean`` and
      ``entropy/position/<p>``;
    - ``kl/old_ref/<k>`` for k in k1, k2, k3 (with ``ref_logprobs``): KL(μ ‖ π_ref) from the
      sampled tokens;
    - with ``logprobs``: ``log_ratio/{mean,max_abs}``, ``log_ratio/q<level>``,
      ``log_ratio/sequence/{mean,max_abs}``,
      ``kl/old_current/<k>`` (KL(μ ‖ π), the drift since sampling), ``kl/current_ref/<k>``
      (KL(π ‖ π_ref), importance-weighted, with ``ref_logprobs``),
      ``clip/{positive,negative,pooled}`` (:func:`rlfound.ppo.clip_fractions` with the
      clip arguments; pooled: over all generated tokens), ``ess/{token,sequence}`` and
      ``ess/{token,sequence}_fraction`` (ESS / N);
    - with ``values`` and ``returns`` (both (B, L - 1) per token or (B, T) per turn):
      ``value/loss`` (:func:`rlfound.ppo.value_loss`), ``value/explained_variance``,
      ``value/bias/horizon/<h>`` (mean V - G at h steps to go, h = 0, 1, 2, 4, ...);
    - with ``gradients``: ``grad_norm/before``, ``grad_norm/group/<name>`` and, with
      ``max_grad_norm``, ``grad_norm/after``;
    - with ``learner_version``: ``lag/steps_mean``, ``lag/steps_max``.

    Book: chapter 12 (all its equations; the report is their table).

    Parameters
    ----------
    batch : mapping of str to array_like
        A padded batch of the contract (extra fields are ignored).
    logprobs : array_like, shape (B, L - 1), optional
        log π of every target under the current policy (read where ``action_mask``).
    entropies : array_like, shape (B, L - 1), optional
        Entropy of the current next-token distribution at every target position, >= 0
        (:func:`rlfound.entropy.token_entropies` of the shifted logits).
    values, returns : array_like, shape (B, L - 1) or (B, T), optional
        Critic predictions and their targets, per token or per turn.
    reward_components : mapping of str to array_like of shape (B, T), optional
        The raw components of the reward of each turn (they need not sum to ``rewards``).
    group_ids, task_ids : array_like of int, shape (B,), optional
        The group (prompt) and the task of each row.
    success : array_like of bool or 0/1, shape (B,), optional
        Whether each episode succeeded.
    gradients : mapping of str to array_like, optional
        The gradient of each parameter group at this step.
    max_grad_norm : float, optional
        The clipping threshold (> 0) for ``grad_norm/after``.
    learner_version : int, optional
        The learner's version (checked by :func:`rlfound.contract.validate`).
    clip_low, clip_high, dual_clip : float, optional
        PPO's clip ranges, as in :func:`rlfound.ppo.clip_fractions`. Defaults 0.2, None,
        None.
    quantiles : array_like, optional
        Levels of the log-ratio quantiles. Default (0.01, 0.5, 0.99).
    tail_fraction : float, optional
        α of the tail means, in (0, 1]. Default 0.05.
    length_buckets : int, optional
        Number of quantile buckets of the lengths, >= 1. Default 4.

    Returns
    -------
    table : dict of str to float
        The diagnostics that were computed.
    skipped : dict of str to str
        Each diagnostic (or family, ``name/*``) that was not, with the reason.

    Raises
    ------
    ValueError
        If the batch breaks the contract (as :func:`rlfound.contract.validate`), or an
        optional input does not have its shape or values (the message names the argument).

    Examples
    --------
    >>> episode = {"segments": [{"kind": "user", "tokens": [5, 6]},
    ...                         {"kind": "policy", "tokens": [7, 8], "logprobs": [-0.5, -1.0],
    ...                          "version": 3}], "rewards": [1.0]}
    >>> table, skipped = report(contract.build_batch([episode, episode]), learner_version=4)
    >>> table["return/mean"], table["length/mean"], table["lag/steps_mean"]
    (1.0, 2.0, 1.0)
    >>> skipped["log_ratio/*"]
    'needs logprobs (the current policy, for the ratios)'
    """
    clean = contract.validate(batch, learner_version=learner_version)
    view = _batch_view(clean)
    given = {
        "logprobs": logprobs,
        "entropies": entropies,
        "values": values,
        "returns": returns,
        "reward_components": reward_components,
        "group_ids": group_ids,
        "task_ids": task_ids,
        "success": success,
        "gradients": gradients,
        "max_grad_norm": max_grad_norm,
        "learner_version": learner_version,
        "clip_low": clip_low,
        "clip_high": clip_high,
        "dual_clip": dual_clip,
        "quantiles": quantiles,
        "tail_fraction": tail_fraction,
        "length_buckets": length_buckets,
    }
    inputs = _check_inputs(view, given)
    table: dict[str, float] = {}
    skipped: dict[str, str] = {}
    for section in _SECTIONS:
        section(table, skipped, view, inputs)
    return table, skipped
