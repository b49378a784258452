"""The batch report: every diagnostic of one training batch as a flat table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rlfound import contract, tokens
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

from ._common import _labels, _quantile_levels
from ._sections import _SECTIONS
from ._statistics import (
    gradient_norms,
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
