"""Checks of loss functions: invariants 3, 6 and 8."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    check_callable,
    check_choice,
    check_nonnegative_real,
    finite_output,
    first_index,
)

from ._cases import (
    _garbage,
    _given_batch,
    _layouts,
    _loss_case_from_batch,
    _sequences,
    _token_batch,
    _token_values,
)
from ._kit import (
    PADDING_CHANGES,
    InvariantCheck,
    _Case,
    _check_common,
    _result,
)

# --- 3: masked tokens ---------------------------------------------------------------------------


@finite_output()
def check_masked_tokens(
    loss_fn: Callable[..., float],
    gradient_fn: Callable[..., ArrayLike] | None = None,
    batch: Mapping[str, ArrayLike] | None = None,
    rng: np.random.Generator | int | None = None,
    num_cases: int = 20,
    rtol: float = 1e-5,
    atol: float = 1e-7,
) -> InvariantCheck:
    """Invariant 3: masked tokens contribute exactly zero loss and gradient.

    A reduction is Σ_ij w_ij ℓ_ij with w_ij = 0 where m_ij = 0 (chapter 8), so a masked
    token's values must not matter at all. The check writes meaningless but valid values
    (log-probabilities in [-30, 0], advantages of size 1e3) at every masked position and
    requires the loss to be bitwise unchanged; a loss that does not read a value has a
    zero derivative with respect to it. With ``gradient_fn`` it also requires the gradient
    with respect to ``logprobs`` to be exactly 0 at masked positions and to agree with
    central differences of ``loss_fn`` (step 1e-6) elsewhere, |g - ĝ| <= atol + rtol |ĝ|.

    What it proves: no value stored outside the mask reaches the loss or the update. What
    it catches: advantages whitened over every position instead of the masked ones, a term
    (a KL penalty, an entropy bonus) left unmasked, a mask applied to the wrong array or
    axis, a gradient that leaks into observations. A normalizer that counts masked
    positions (a mean over the whole array) reads no masked value and passes here; it is
    caught by :func:`check_padding_invariance`.

    Book: equation (eq-token-weights), chapter 8.
    Book: equation (eq-contract-loss), chapter 13.

    Parameters
    ----------
    loss_fn : callable
        ``loss_fn(logprobs, old_logprobs, advantages, mask) -> float``, arrays (B, L):
        log-probabilities (<= 0) of the current and behavior policies, advantages, and a
        bool mask with at least one True.
    gradient_fn : callable or None, optional
        ``gradient_fn(logprobs, old_logprobs, advantages, mask) -> array (B, L)``, the
        gradient of ``loss_fn`` with respect to ``logprobs``. Default None: not checked.
    batch : mapping or None, optional
        A contract batch (e.g. exported from a trainer) checked as one more case: its
        ``old_logprobs``, a current policy within noise 0.1 of them, its token advantages
        (expanded from turns, or its turn rewards when it has none) and its
        ``action_mask``.
    rng, num_cases
        As for :func:`check_constant_reward`.
    rtol, atol : float, optional
        Tolerances of the gradient comparison. Default 1e-5 and 1e-7.

    Returns
    -------
    InvariantCheck
        ``errors`` holds every case's largest change of the loss and of a masked gradient
        entry (0.0 when it passes), ``sizes`` its number of positions.

    Raises
    ------
    InvariantViolation
        If a masked value changes the loss, or a masked gradient entry is not 0, or the
        gradient disagrees with central differences.
    ValueError
        If ``loss_fn`` or ``gradient_fn`` is not callable, ``batch`` breaks the contract or
        has no trained token, or ``rng``, ``num_cases``, ``rtol`` or ``atol`` is invalid.

    Notes
    -----
    Whitening advantages over the whole array is the classic way to break this invariant,
    and trainers avoid it on purpose: verl's ``compute_gae_advantage_return``
    (``verl/trainer/ppo/core_algos.py``, volcengine/verl at commit 012be9d) whitens with
    ``masked_whiten(advantages, response_mask)``, whose mean and spread are taken over the
    masked tokens only.

    Examples
    --------
    >>> from rlfound import ppo
    >>> result = check_masked_tokens(ppo.clipped_policy_loss, ppo.clipped_policy_loss_gradient,
    ...                              rng=0, num_cases=3)
    >>> result.max_error
    0.0
    """
    loss_fn = check_callable(loss_fn, "loss_fn")
    if gradient_fn is not None:
        gradient_fn = check_callable(gradient_fn, "gradient_fn")
    given = _given_batch(batch)
    rng, num_cases = _check_common(rng, num_cases)
    rtol = check_nonnegative_real(rtol, "rtol")
    atol = check_nonnegative_real(atol, "atol")

    cases = [_token_batch(rng) for _ in range(num_cases)]
    if given is not None:
        cases.append(_loss_case_from_batch(given, rng))
    errors, sizes = [], []
    for index, (logprobs, old_logprobs, advantages, mask) in enumerate(
        cases
    ):
        case = _Case(
            3, index, num_cases, f"B = {mask.shape[0]}, L = {mask.shape[1]}"
        )
        loss = case.scalar(
            case.call(
                loss_fn, "loss_fn", logprobs, old_logprobs, advantages, mask
            ),
            "loss_fn",
        )
        junk = _garbage(rng, mask.shape)
        changed = [
            np.where(mask, clean, noise)
            for clean, noise in zip(
                (logprobs, old_logprobs, advantages), junk, strict=True
            )
        ]
        loss_junk = case.scalar(
            case.call(loss_fn, "loss_fn", *changed, mask), "loss_fn"
        )
        if loss_junk != loss:
            raise case.fail(
                f"changing only the values at masked positions changed the loss from {loss:.6g} "
                f"to {loss_junk:.6g}; a masked token has weight 0, so nothing stored there may "
                "reach the loss"
            )
        worst = 0.0
        if gradient_fn is not None:
            gradient = case.array(
                case.call(
                    gradient_fn,
                    "gradient_fn",
                    logprobs,
                    old_logprobs,
                    advantages,
                    mask,
                ),
                "gradient_fn",
                mask.shape,
                "d loss / d logprobs, the shape of logprobs",
            )
            leak = ~mask & (gradient != 0.0)
            worst = float(np.abs(gradient[~mask]).max(initial=0.0))
            if leak.any():
                where = first_index(leak)
                raise case.fail(
                    f"gradient_fn returned {gradient[where]:.6g} at the masked position {where}; "
                    "a masked token must receive exactly zero gradient"
                )
            for where in map(tuple, np.argwhere(mask)):
                step = np.zeros(mask.shape)
                step[where] = 1e-6
                up = case.scalar(
                    case.call(
                        loss_fn,
                        "loss_fn",
                        logprobs + step,
                        old_logprobs,
                        advantages,
                        mask,
                    ),
                    "loss_fn",
                )
                down = case.scalar(
                    case.call(
                        loss_fn,
                        "loss_fn",
                        logprobs - step,
                        old_logprobs,
                        advantages,
                        mask,
                    ),
                    "loss_fn",
                )
                numerical = (up - down) / 2e-6
                if abs(gradient[where] - numerical) > atol + rtol * abs(
                    numerical
                ):
                    raise case.fail(
                        f"gradient_fn returned {gradient[where]:.6g} at "
                        f"{tuple(int(i) for i in where)} where central differences of loss_fn "
                        f"give {numerical:.6g}"
                    )
        errors.append(max(abs(loss_junk - loss), worst))
        sizes.append(mask.size)
    return _result(errors, sizes)


def _check_changes(changes: Any) -> tuple[str, ...]:
    if (
        isinstance(changes, str)
        or not isinstance(changes, Sequence)
        or not changes
    ):
        raise ValueError(
            f"changes must be a non-empty sequence of {tuple(PADDING_CHANGES)}; got {changes!r}"
        )
    for change in changes:
        check_choice(change, "changes", tuple(PADDING_CHANGES))
    return tuple(changes)


@finite_output()
def check_padding_invariance(
    loss_fn: Callable[..., float],
    batch: Mapping[str, ArrayLike] | None = None,
    rng: np.random.Generator | int | None = None,
    num_cases: int = 20,
    changes: Sequence[str] = tuple(PADDING_CHANGES),
    rtol: float = 1e-10,
) -> InvariantCheck:
    """Invariant 6: padding or repacking leaves the globally normalized loss unchanged.

    The globally normalized loss (the token mean, chapter 8) is a sum over the trained
    tokens divided by their number, and neither depends on where the tokens sit. The check
    lays out the same sequences in several ways, with meaningless values in every padding
    position, and requires |Δ loss| <= rtol (|loss| + 1e-12) under each change of
    ``changes`` (:data:`PADDING_CHANGES`): more padding columns, rows without tokens,
    reordered rows, left instead of right padding, and all sequences packed back to back
    into one row.

    What it proves: the loss depends on the set of trained tokens only, not on the layout.
    What it catches: a normalizer taken from the array's shape (L or B), per-row means
    (which packing and empty rows change: they are per-sequence, not global, reductions;
    pass the changes they should survive), padding that leaks into the loss.

    Book: equation (eq-packing-invariance), chapter 13.
    Book: equation (eq-token-mean), chapter 8.

    Parameters
    ----------
    loss_fn : callable
        As for :func:`check_masked_tokens`.
    batch : mapping or None, optional
        A contract batch checked as one more case (its rows are the sequences), as in
        :func:`check_masked_tokens`.
    rng, num_cases
        As for :func:`check_constant_reward`.
    changes : sequence of str, optional
        The layout changes to apply, a subset of :data:`PADDING_CHANGES`. Default: all.
    rtol : float, optional
        Relative tolerance. Default 1e-10.

    Returns
    -------
    InvariantCheck
        ``errors`` holds the largest |Δ loss| of every case, ``sizes`` its number of
        trained tokens.

    Raises
    ------
    InvariantViolation
        If a layout change changes the loss.
    ValueError
        If ``loss_fn`` is not callable, ``batch`` breaks the contract, ``changes`` is empty
        or names an unknown change, or ``rng``, ``num_cases`` or ``rtol`` is invalid.

    Examples
    --------
    >>> from rlfound import ppo
    >>> check_padding_invariance(ppo.clipped_policy_loss, rng=0).max_error < 1e-14
    True
    """
    loss_fn = check_callable(loss_fn, "loss_fn")
    given = _given_batch(batch)
    rng, num_cases = _check_common(rng, num_cases)
    changes = _check_changes(changes)
    rtol = check_nonnegative_real(rtol, "rtol")

    cases = [_sequences(rng) for _ in range(num_cases)]
    if given is not None:
        arrays = _loss_case_from_batch(given, rng)
        inside = (
            given["attention_mask"][:, :-1] & given["attention_mask"][:, 1:]
        )
        cases.append(
            [
                tuple(a[row][inside[row]] for a in arrays)
                for row in range(len(inside))
            ]
        )
    errors, sizes = [], []
    for index, sequences in enumerate(cases):
        lengths = [len(s[3]) for s in sequences]
        case = _Case(
            6,
            index,
            num_cases,
            f"{len(sequences)} sequence(s) of {lengths} positions",
        )
        layouts = _layouts(rng, sequences, changes)
        losses = {
            name: case.scalar(
                case.call(loss_fn, "loss_fn", *arrays), "loss_fn"
            )
            for name, arrays in layouts.items()
        }
        base = losses.pop("base")
        worst = 0.0
        for name, loss in losses.items():
            gap = abs(loss - base)
            if gap > rtol * (abs(base) + 1e-12):
                raise case.fail(
                    f"{PADDING_CHANGES[name]} ({name!r}) changed the loss from {base:.10g} to "
                    f"{loss:.10g}; the globally normalized loss depends on the trained tokens, "
                    "not on where they sit"
                )
            worst = max(worst, gap)
        errors.append(worst)
        sizes.append(int(sum(s[3].sum() for s in sequences)))
    return _result(errors, sizes)


# --- 8: distributed reduction -------------------------------------------------------------------


@finite_output()
def check_distributed_reduction(
    loss_fn: Callable[..., float],
    sharded_loss_fn: Callable[[list], float],
    batch: Mapping[str, ArrayLike] | None = None,
    rng: np.random.Generator | int | None = None,
    num_cases: int = 20,
    rtol: float = 1e-10,
) -> InvariantCheck:
    """Invariant 8: the distributed reduction equals the loss of the concatenated batch.

    When D workers (or micro-batches) each hold some rows, the loss the optimizer
    effectively sees, the workers' losses combined as their gradients are combined, must
    equal the single-process loss of all rows together. For a token mean this needs every
    worker to divide its own sum by the global token count (eq-shard-fix); averaging the
    workers' own means gives a different number whenever their token counts differ
    (eq-shard-mismatch). The check splits random batches, with very unequal token counts
    per row, over 2 to 4 workers (each with at least one trained token) and requires
    |Δ| <= rtol (|loss| + 1e-12).

    What it proves: ``sharded_loss_fn`` computes the same objective as ``loss_fn``. What it
    catches: local normalizers (mean of local means), a missing factor D when the
    all-reduce averages, per-micro-batch normalization in gradient accumulation.

    Book: equations (eq-shard-mismatch) and (eq-shard-fix), chapter 8.

    Parameters
    ----------
    loss_fn : callable
        The single-process loss, as for :func:`check_masked_tokens`.
    sharded_loss_fn : callable
        ``sharded_loss_fn(shards) -> float``: ``shards`` is a list, one entry per worker,
        of dicts with the keys "logprobs", "old_logprobs", "advantages" and "mask" (each
        an array of the worker's rows); returns the combined loss.
    batch : mapping or None, optional
        A contract batch split as one more case, as in :func:`check_masked_tokens` (it
        needs at least two rows with trained tokens).
    rng, num_cases
        As for :func:`check_constant_reward`.
    rtol : float, optional
        Relative tolerance. Default 1e-10.

    Returns
    -------
    InvariantCheck
        ``errors`` holds |Δ| of every case, ``sizes`` its number of trained tokens.

    Raises
    ------
    InvariantViolation
        If the sharded loss differs from the concatenated one.
    ValueError
        If a callable is not callable, ``batch`` breaks the contract or has fewer than two
        rows with trained tokens, or ``rng``, ``num_cases`` or ``rtol`` is invalid.

    Examples
    --------
    >>> from rlfound import ppo
    >>> def sharded(shards):  # every worker divides by the global count; gradients add up
    ...     total = sum(shard["mask"].sum() for shard in shards)
    ...     return sum(ppo.clipped_policy_loss(**shard) * shard["mask"].sum() / total
    ...                for shard in shards)
    >>> check_distributed_reduction(ppo.clipped_policy_loss, sharded, rng=0).max_error < 1e-14
    True
    """
    loss_fn = check_callable(loss_fn, "loss_fn")
    sharded_loss_fn = check_callable(sharded_loss_fn, "sharded_loss_fn")
    given = _given_batch(batch)
    if given is not None and given["action_mask"].any(axis=1).sum() < 2:
        raise ValueError(
            "batch must have at least two rows with trained tokens to be split over workers; "
            f"got {int(given['action_mask'].any(axis=1).sum())}"
        )
    rng, num_cases = _check_common(rng, num_cases)
    rtol = check_nonnegative_real(rtol, "rtol")

    cases = []
    for _ in range(num_cases):
        rows, length = int(rng.integers(2, 9)), int(rng.integers(2, 13))
        density = rng.uniform(
            0.05, 1.0, size=(rows, 1)
        )  # very unequal token counts
        mask = rng.random((rows, length)) < density
        mask[np.arange(rows), rng.integers(length, size=rows)] = True
        cases.append((*_token_values(rng, mask.shape), mask))
    if given is not None:
        arrays = _loss_case_from_batch(given, rng)
        keep = given["action_mask"].any(axis=1)
        cases.append(tuple(a[keep] for a in arrays))
    errors, sizes = [], []
    names = ("logprobs", "old_logprobs", "advantages", "mask")
    for index, arrays in enumerate(cases):
        rows = len(arrays[3])
        workers = int(rng.integers(2, min(4, rows) + 1))
        order = rng.permutation(rows)
        cuts = np.sort(
            rng.choice(np.arange(1, rows), size=workers - 1, replace=False)
        )
        parts = np.split(order, cuts)
        shards = [
            {
                name: a[np.sort(part)].copy()
                for name, a in zip(names, arrays, strict=True)
            }
            for part in parts
        ]
        counts = [int(shard["mask"].sum()) for shard in shards]
        case = _Case(
            8,
            index,
            num_cases,
            f"{rows} rows over {workers} workers with {counts} tokens",
        )
        whole = case.scalar(
            case.call(loss_fn, "loss_fn", *arrays), "loss_fn"
        )
        split = case.scalar(
            case.call(sharded_loss_fn, "sharded_loss_fn", shards),
            "sharded_loss_fn",
        )
        gap = abs(split - whole)
        if gap > rtol * (abs(whole) + 1e-12):
            raise case.fail(
                f"the sharded loss is {split:.10g} and the loss of the concatenated batch "
                f"{whole:.10g}; each worker must divide its sum by the global token count (not "
                "its own), and the workers' losses must be combined as the all-reduce combines "
                "their gradients"
            )
        errors.append(gap)
        sizes.append(int(arrays[3].sum()))
    return _result(errors, sizes)
