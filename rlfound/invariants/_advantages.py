"""Checks of advantage and return functions: invariants 1, 2 and 7."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    check_bool,
    check_callable,
    check_choice,
    check_nonnegative_real,
    check_unit_interval,
    finite_output,
    first_index,
)

from ._cases import _group_constants, _group_rewards, _packed_streams
from ._kit import InvariantCheck, _Case, _check_common, _result

# --- 1 and 2: advantages of groups --------------------------------------------------------------


@finite_output()
def check_constant_reward(
    advantage_fn: Callable[[np.ndarray], ArrayLike],
    rng: np.random.Generator | int | None = None,
    num_cases: int = 20,
    atol: float = 1e-9,
) -> InvariantCheck:
    """Invariant 1: a constant reward gives a zero baseline-centered update.

    If every sample of a group earns the same reward c, there is nothing to learn. For any
    estimator the expected update is zero, since E[c ∇ log π] = c E[∇ log π] = 0; a
    baseline-centered estimator does better, with every advantage exactly 0,

        A_i(c, c, ..., c) = 0   for every member i,

    so every single update Σ_i A_i ∇ log π(a_i) is zero, not only their mean. The check
    draws groups whose rewards are a constant per group (0, small integers, decimals such
    as 0.1 whose mean is inexact in floating point, and large values), and requires
    |A_i| <= atol (1 + |c|).

    What it proves: ``advantage_fn`` centers each group on a baseline computed from that
    group alone. What it catches: no baseline (plain REINFORCE passes only in expectation,
    and fails here by design), a batch-level baseline shared by groups of different
    constants, a 0/0 NaN of a standard deviation without ``eps``.

    Book: equation (eq-constant-reward), chapter 13.

    Parameters
    ----------
    advantage_fn : callable
        ``advantage_fn(rewards) -> advantages``: rewards of shape (G, N), G groups of N
        samples on the last axis; returns advantages of the same shape.
    rng : numpy.random.Generator, int or None, optional
        Randomness of the generated cases.
    num_cases : int, optional
        Number of generated batches of groups. Default 20.
    atol : float, optional
        Tolerance, scaled by 1 + |c|. Default 1e-9.

    Returns
    -------
    InvariantCheck
        ``errors`` holds the largest |A_i| of every case, ``sizes`` its number of rewards.

    Raises
    ------
    InvariantViolation
        If an advantage of a constant group is not 0 (or ``advantage_fn`` raises, or returns
        another shape or a non-finite value).
    ValueError
        If ``advantage_fn`` is not callable, ``num_cases`` is not a positive integer, ``atol``
        is negative or ``rng`` is not a generator, a seed or None.

    Examples
    --------
    >>> from rlfound import groups
    >>> check_constant_reward(groups.leave_one_out_advantages, rng=0).max_error
    0.0
    """
    advantage_fn = check_callable(advantage_fn, "advantage_fn")
    rng, num_cases = _check_common(rng, num_cases)
    atol = check_nonnegative_real(atol, "atol")

    errors, sizes = [], []
    for index in range(num_cases):
        groups, size = int(rng.integers(1, 5)), int(rng.integers(2, 9))
        constants = _group_constants(rng, groups)
        rewards = np.repeat(constants[:, None], size, axis=1)
        case = _Case(
            1, index, num_cases, f"{groups} group(s) of {size} equal rewards"
        )
        advantages = case.array(
            case.call(advantage_fn, "advantage_fn", rewards.copy()),
            "advantage_fn",
            rewards.shape,
            "one advantage per reward",
        )
        excess = np.abs(advantages) - atol * (1.0 + np.abs(rewards))
        if not np.all(excess <= 0.0):  # also catches NaN
            group, member = np.unravel_index(
                np.argmax(np.nan_to_num(excess, nan=np.inf)), rewards.shape
            )
            raise case.fail(
                f"with every reward of group {group} equal to {constants[group]:g}, advantage_fn "
                f"returned {advantages[group, member]:.6g} for member {member}; a "
                "baseline-centered advantage is exactly 0 when a group's rewards are all equal, "
                "so every update (not only their mean) is 0"
            )
        errors.append(float(np.abs(advantages).max()))
        sizes.append(rewards.size)
    return _result(errors, sizes)


@finite_output()
def check_group_shift(
    advantage_fn: Callable[[np.ndarray], ArrayLike],
    per_group: bool = True,
    rng: np.random.Generator | int | None = None,
    num_cases: int = 20,
    rtol: float = 1e-6,
    atol: float = 1e-9,
) -> InvariantCheck:
    """Invariant 2: adding a constant to a group's rewards leaves its advantages unchanged.

    A group centered exactly on its own mean cannot see a shift, and a spread (standard
    deviation) of the same group is unchanged by it:

        A_i(R_1 + c, ..., R_N + c) = A_i(R_1, ..., R_N).

    The check draws groups of binary outcomes and of real-valued scores, shifts each group
    by its own constant (or, with ``per_group=False``, the whole batch by one), and compares
    with |ΔA| <= atol + rtol |A|.

    What it proves: the advantages depend on rewards only through their differences within
    a group (GRPO, Dr. GRPO, RLOO all do). What it catches: a baseline that is not the
    group's own (a fixed or running baseline, the batch mean), scaling by a raw reward, a
    normalizer computed before centering. A standard deviation taken over the whole batch
    (TRL's ``scale_rewards="batch"``) makes a group's advantages depend on the reward levels
    of the other groups: it passes with ``per_group=False`` only.

    Book: equation (eq-shift-invariance), chapter 13.

    Parameters
    ----------
    advantage_fn : callable
        As for :func:`check_constant_reward`.
    per_group : bool, optional
        Shift every group by its own constant (default), or the whole batch by one.
    rng, num_cases
        As for :func:`check_constant_reward`.
    rtol, atol : float, optional
        Tolerances of the comparison. Default 1e-6 and 1e-9: a group whose other members
        all tie has a spread of 0, and its ``eps``-sized divisor magnifies the rounding of a
        shift.

    Returns
    -------
    InvariantCheck
        ``errors`` holds the largest |ΔA| of every case, ``sizes`` its number of rewards.

    Raises
    ------
    InvariantViolation
        If a shift changes an advantage beyond the tolerance.
    ValueError
        As for :func:`check_constant_reward` (naming ``rtol`` or ``atol``), and if
        ``per_group`` is not a bool.

    Examples
    --------
    >>> from rlfound import groups
    >>> check_group_shift(groups.group_normalized_advantages, rng=0).max_error < 1e-12
    True
    """
    advantage_fn = check_callable(advantage_fn, "advantage_fn")
    per_group = check_bool(per_group, "per_group")
    rng, num_cases = _check_common(rng, num_cases)
    rtol = check_nonnegative_real(rtol, "rtol")
    atol = check_nonnegative_real(atol, "atol")

    errors, sizes = [], []
    for index in range(num_cases):
        rewards = _group_rewards(rng)
        shifts = np.where(
            rng.random(len(rewards)) < 0.2,
            50.0,
            rng.normal(0.0, 5.0, len(rewards)),
        )
        if not per_group:
            shifts[:] = shifts[0]
        label = f"{rewards.shape[0]} group(s) of {rewards.shape[1]}"
        case = _Case(2, index, num_cases, label)
        before = case.array(
            case.call(advantage_fn, "advantage_fn", rewards.copy()),
            "advantage_fn",
            rewards.shape,
            "one advantage per reward",
        )
        after = case.array(
            case.call(
                advantage_fn, "advantage_fn", rewards + shifts[:, None]
            ),
            "advantage_fn",
            rewards.shape,
            "one advantage per reward",
        )
        gap = np.abs(after - before)
        excess = gap - (atol + rtol * np.abs(before))
        if not np.all(excess <= 0.0):
            group, member = np.unravel_index(
                np.argmax(np.nan_to_num(excess, nan=np.inf)), gap.shape
            )
            raise case.fail(
                f"adding {shifts[group]:.6g} to every reward of group {group} changed the "
                f"advantage of member {member} from {before[group, member]:.12g} to "
                f"{after[group, member]:.12g}; advantages centered on the group's own mean (and "
                "scaled by its own spread) cannot see a shift"
            )
        errors.append(float(gap.max()))
        sizes.append(rewards.size)
    return _result(errors, sizes)


# --- 7: terminal and truncated steps ------------------------------------------------------------


@finite_output()
def check_terminal_bootstrap(
    returns_fn: Callable[..., ArrayLike],
    gamma: float,
    truncation: str = "bootstrap",
    rng: np.random.Generator | int | None = None,
    num_cases: int = 20,
    atol: float = 1e-9,
) -> InvariantCheck:
    """Invariant 7: a terminal state never bootstraps; a truncation follows the configured rule.

    In a packed stream of episodes (chapter 4), a terminated step's next value must never
    be read, and a step cut by a time limit or the collector either bootstraps from the
    value of the state it reached (``truncation="bootstrap"``, the rule of
    (eq-gae-timeouts)) or is treated as a termination (``"terminate"``, when the budget
    is part of the task). The check draws packed streams with both kinds of boundary and
    requires, within atol (1 + |A|):

    1. changing ``next_values`` at terminated steps changes nothing;
    2. "bootstrap": the result equals that of the folded stream, whose truncations are
       terminations with reward r_t + γ V_next,t (eq-timeout-folding); "terminate": it
       equals that of the stream with every truncation marked terminated.

    What it proves: the function implements the boundary rule it is configured with, with
    discount γ. What it catches: bootstrapping past a terminal state, a timeout treated as
    a termination (or the reverse), a value read from the next episode of the stream, a γ
    other than the configured one.

    Book: equations (eq-gae-timeouts) and (eq-timeout-folding), chapter 4.

    Parameters
    ----------
    returns_fn : callable
        ``returns_fn(rewards, values, next_values, terminated, truncated) -> (B, T)``, all
        arrays (B, T) as for :func:`rlfound.advantages.packed_gae` (flags bool, never both
        True); advantages or returns. Bind γ (and λ) yourself.
    gamma : float
        The discount γ in [0, 1] the function was configured with.
    truncation : {"bootstrap", "terminate"}, optional
        The configured rule at a truncation. Default "bootstrap".
    rng, num_cases
        As for :func:`check_constant_reward`.
    atol : float, optional
        Tolerance, scaled by 1 + |A|. Default 1e-9.

    Returns
    -------
    InvariantCheck
        ``errors`` holds the largest deviation of every case, ``sizes`` its number of steps.

    Raises
    ------
    InvariantViolation
        If a terminal next value changes the result, or a truncation does not follow the
        rule.
    ValueError
        If ``returns_fn`` is not callable, ``gamma`` is outside [0, 1], ``truncation`` is
        unknown, or ``rng``, ``num_cases`` or ``atol`` is invalid.

    Examples
    --------
    >>> from rlfound import advantages
    >>> def gae(rewards, values, next_values, terminated, truncated):
    ...     return advantages.packed_gae(rewards, values, next_values, terminated, truncated,
    ...                                  gamma=0.9, lam=0.8)
    >>> check_terminal_bootstrap(gae, gamma=0.9, rng=0).max_error < 1e-12
    True
    """
    returns_fn = check_callable(returns_fn, "returns_fn")
    gamma = check_unit_interval(gamma, "gamma")
    truncation = check_choice(
        truncation, "truncation", ("bootstrap", "terminate")
    )
    rng, num_cases = _check_common(rng, num_cases)
    atol = check_nonnegative_real(atol, "atol")

    errors, sizes = [], []
    for index in range(num_cases):
        stream = _packed_streams(rng)
        shape = stream["rewards"].shape
        case = _Case(
            7, index, num_cases, f"{shape[0]} stream(s) of {shape[1]} steps"
        )

        def run(changes, case=case, stream=stream, shape=shape):
            arrays = {**{k: v.copy() for k, v in stream.items()}, **changes}
            names = (
                "rewards",
                "values",
                "next_values",
                "terminated",
                "truncated",
            )
            out = case.call(
                returns_fn, "returns_fn", *(arrays[k] for k in names)
            )
            return case.array(out, "returns_fn", shape, "one value per step")

        base = run({})
        terminated, truncated = stream["terminated"], stream["truncated"]
        moved = np.where(
            terminated,
            rng.normal(0.0, 100.0, size=shape),
            stream["next_values"],
        )
        gap = np.abs(run({"next_values": moved}) - base)
        if not np.all(gap <= atol * (1.0 + np.abs(base))):
            where = first_index(~(gap <= atol * (1.0 + np.abs(base))))
            step = first_index(terminated)
            raise case.fail(
                f"changing next_values only at terminated steps (the first at {step}) changed "
                f"the result at {where} by {gap[where]:.6g}; a true terminal state has no future "
                "value, so it must never bootstrap"
            )
        folded = {
            "terminated": terminated | truncated,
            "truncated": np.zeros(shape, dtype=bool),
        }
        if truncation == "bootstrap":
            folded["rewards"] = stream["rewards"] + gamma * np.where(
                truncated, stream["next_values"], 0.0
            )
        expected = run(folded)
        gap_fold = np.abs(base - expected)
        if not np.all(gap_fold <= atol * (1.0 + np.abs(expected))):
            where = first_index(
                ~(gap_fold <= atol * (1.0 + np.abs(expected)))
            )
            rule = (
                f"a termination whose reward includes gamma * next_values (gamma = {gamma:g})"
                if truncation == "bootstrap"
                else "a termination (truncation='terminate')"
            )
            raise case.fail(
                f"the result at {where} is {base[where]:.6g} where treating every truncation as "
                f"{rule} gives {expected[where]:.6g}: the truncated steps do not follow the "
                "configured bootstrap rule"
            )
        errors.append(float(max(gap.max(), gap_fold.max())))
        sizes.append(int(np.prod(shape)))
    return _result(errors, sizes)
