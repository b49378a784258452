"""The ten invariants of a training batch, as a test kit to point at your own functions.

Each ``check_*`` function takes the callable(s) under test, runs them on cases it generates
from ``rng`` (and, where it says so, on a batch you give it, such as one exported from your
trainer), and either returns an :class:`InvariantCheck` (the check passed) or raises
:class:`InvariantViolation`, an ``AssertionError`` whose message names the invariant, the
failing case and what went wrong. Use them in a test suite as they are::

    def test_my_loss_ignores_masked_tokens():
        invariants.check_masked_tokens(my_loss, rng=0)

The callables have NumPy signatures (wrap a framework function to convert its tensors):

==========================  ===========================================================  =====
callable                    signature                                                    used by
==========================  ===========================================================  =====
advantage_fn                (rewards) -> advantages, both (G, N): G groups of N samples   1, 2
loss_fn                     (logprobs, old_logprobs, advantages, mask) -> float, arrays  3, 6, 8
                            (B, L) and a bool mask (B, L) with at least one True
gradient_fn                 as loss_fn -> d loss / d logprobs, shape (B, L)              3
build_fn                    (episodes) -> batch: the episodes of                         4, 10
                            :func:`rlfound.contract.build_batch` to a contract batch
logprob_fn                  (logits (B, L, V), input_ids (B, L)) -> (B, L - 1)           5
                            log-probabilities of the targets
returns_fn                  (rewards, values, next_values, terminated, truncated)        7
                            -> (B, T), packed streams as in
                            :func:`rlfound.advantages.packed_gae`
sharded_loss_fn             (shards) -> float: a list of dicts with the four arrays of   8
                            loss_fn, one per worker; the combined loss the optimizer
                            sees
step_fn                     (batch) -> anything: one training step on a contract batch   9
==========================  ===========================================================  =====

The invariants, in the order of :data:`INVARIANTS`:

1. :func:`check_constant_reward` 2. :func:`check_group_shift` 3. :func:`check_masked_tokens`
4. :func:`check_no_retokenization` 5. :func:`check_unit_ratios`
6. :func:`check_padding_invariance` 7. :func:`check_terminal_bootstrap`
8. :func:`check_distributed_reduction` 9. :func:`check_old_logprobs_immutable`
10. :func:`check_event_order`.

A check generates small cases (a few rows, tens of tokens), so each runs in milliseconds to
a fraction of a second. Passing proves the property on those cases, not in general; failing
proves a bug, and the message shows the smallest thing that went wrong.

Book: chapter 13 (the training-batch contract and its invariants).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from rlfound import contract
from rlfound._validation import (
    MAX_ITERATIONS,
    check_bool,
    check_callable,
    check_choice,
    check_nonnegative_real,
    check_positive_int,
    check_rng,
    check_size,
    check_unit_interval,
    finite_output,
)
from rlfound.distributions import log_softmax

__all__ = [
    "INVARIANTS",
    "PADDING_CHANGES",
    "TOY_VOCABULARY",
    "InvariantCheck",
    "InvariantViolation",
    "check_constant_reward",
    "check_distributed_reduction",
    "check_event_order",
    "check_group_shift",
    "check_masked_tokens",
    "check_no_retokenization",
    "check_old_logprobs_immutable",
    "check_padding_invariance",
    "check_terminal_bootstrap",
    "check_unit_ratios",
]

#: The ten invariants (chapter 13; section 19 of the source), invariant k at index k - 1.
INVARIANTS = (
    "a constant reward gives a zero baseline-centered update",
    "adding a constant to a group's rewards leaves its advantages unchanged",
    "masked tokens contribute exactly zero loss and gradient",
    "behavior log-probabilities are never rebuilt from re-tokenized text",
    "at theta = theta_old every valid importance ratio is 1",
    "padding or repacking leaves the globally normalized loss unchanged",
    "a terminal state never bootstraps and a truncation follows the configured rule",
    "the distributed reduction equals the loss of the concatenated batch",
    "old log-probabilities are immutable and tagged with their policy version",
    "the batch reconstructs the episode's events in order",
)

#: The layout changes of :func:`check_padding_invariance`, and what each does.
PADDING_CHANGES = {
    "pad": "padding every row with more masked columns",
    "empty-rows": "adding rows without tokens",
    "reorder": "reordering the rows",
    "shift": "moving every sequence to the right end of its row (left padding)",
    "pack": "packing all sequences back to back into one row",
}

#: The vocabulary of the generated episodes: token id i is ``TOY_VOCABULARY[i]``. Text
#: decoded from sampled tokens such as ("a", "b") re-tokenizes as the single token "ab".
TOY_VOCABULARY = ("a", "b", "ab", "c", ".", " ", "?", "!")
_A, _B = 0, 1


class InvariantViolation(AssertionError):
    """The function under test breaks an invariant.

    Attributes
    ----------
    invariant : int
        Which invariant, 1 to 10 (its statement is ``INVARIANTS[invariant - 1]``).
    """

    def __init__(self, invariant: int, message: str):
        super().__init__(message)
        self.invariant = invariant


class InvariantCheck(NamedTuple):
    """What a passing check measured.

    Attributes
    ----------
    max_error : float
        The largest deviation from the invariant over all cases, in the units of the
        quantity compared (0.0 for the exact checks).
    errors : numpy.ndarray of float64, shape (num_cases,)
        The largest deviation of every case.
    sizes : numpy.ndarray of int64, shape (num_cases,)
        How many entries (rewards, tokens, steps) every case checked.
    """

    max_error: float
    errors: np.ndarray
    sizes: np.ndarray


# --- reporting ----------------------------------------------------------------------------------


class _Case:
    """Formats the message of a failure on one case."""

    def __init__(self, invariant: int, index: int, total: int, label: str):
        self.invariant, self.index, self.total, self.label = invariant, index, total, label

    def fail(self, detail: str) -> InvariantViolation:
        where = (
            f"case {self.index + 1} of {self.total}"
            if self.index < self.total
            else "the given batch"
        )
        return InvariantViolation(
            self.invariant,
            f"invariant {self.invariant} ({INVARIANTS[self.invariant - 1]}) fails on {where} "
            f"({self.label}): {detail}",
        )

    def call(self, function: Callable, name: str, *args: Any) -> Any:
        """``function(*args)``; whatever it raises is a failure of the function under test."""
        try:
            return function(*args)
        except InvariantViolation:
            raise
        except Exception as error:  # the function under test failed on valid input
            raise self.fail(f"{name} raised {type(error).__name__}: {error}") from error

    def scalar(self, value: Any, name: str) -> float:
        array = np.asarray(value)
        if array.ndim != 0 or array.dtype.kind not in "iuf" or not np.isfinite(array):
            raise self.fail(f"{name} returned {value!r}; a finite real number was expected")
        return float(array)

    def array(self, value: Any, name: str, shape: tuple[int, ...], what: str) -> np.ndarray:
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise self.fail(
                f"{name} returned {value!r}; an array of numbers was expected"
            ) from None
        if array.shape != shape:
            raise self.fail(f"{name} returned shape {array.shape}; expected {shape} ({what})")
        return array


def _plain(value: Any) -> str:
    """A NumPy scalar as its Python value, for messages."""
    return repr(np.asarray(value).item())


def _result(errors: list[float], sizes: list[int]) -> InvariantCheck:
    errors_array = np.asarray(errors, dtype=np.float64)
    return InvariantCheck(
        max_error=float(errors_array.max(initial=0.0)),
        errors=errors_array,
        sizes=np.asarray(sizes, dtype=np.int64),
    )


def _check_common(rng: Any, num_cases: Any) -> tuple[np.random.Generator, int]:
    num_cases = check_positive_int(num_cases, "num_cases")
    return check_rng(rng), check_size(num_cases, "num_cases", MAX_ITERATIONS, "cases")


# --- generated cases ----------------------------------------------------------------------------


def _group_constants(rng: np.random.Generator, groups: int) -> np.ndarray:
    """One constant per group: zeros, small integers, decimals and large values."""
    kind = rng.integers(4, size=groups)
    return np.select(
        [kind == 0, kind == 1, kind == 2],
        [0.0, rng.integers(-3, 4, size=groups), np.round(rng.uniform(-1, 1, size=groups), 1)],
        rng.normal(0.0, 100.0, size=groups),
    ).astype(np.float64)


def _group_rewards(rng: np.random.Generator) -> np.ndarray:
    """Groups with some spread: binary outcomes (both present) or real-valued scores."""
    groups, size = int(rng.integers(1, 5)), int(rng.integers(2, 9))
    if rng.random() < 0.5:
        rewards = (rng.random((groups, size)) < 0.5).astype(np.float64)
        rewards[:, 0], rewards[:, 1] = 1.0, 0.0
        return rng.permuted(rewards, axis=1)
    return rng.normal(0.0, rng.uniform(0.5, 3.0), size=(groups, size))


def _token_values(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """log π_θ, log π_old (both <= log 0.95, ratios around 1, some beyond a 0.2 clip), A."""
    logprobs = np.log(rng.uniform(0.05, 0.95, size=shape))
    old_logprobs = np.minimum(logprobs + rng.normal(0.0, 0.3, size=shape), np.log(0.95))
    advantages = rng.normal(size=shape)
    return logprobs, old_logprobs, advantages


def _garbage(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """Finite values a padded position may hold: valid but meaningless log-probabilities and
    huge advantages (an implementation that reads them changes its loss)."""
    return (
        -rng.uniform(0.0, 30.0, size=shape),
        -rng.uniform(0.0, 30.0, size=shape),
        rng.normal(0.0, 1e3, size=shape),
    )


def _token_batch(rng: np.random.Generator, max_rows: int = 4) -> tuple[np.ndarray, ...]:
    """(logprobs, old_logprobs, advantages, mask) of shape (B, L), at least one True."""
    rows, length = int(rng.integers(1, max_rows + 1)), int(rng.integers(2, 13))
    mask = rng.random((rows, length)) < rng.uniform(0.3, 0.9)
    mask.flat[rng.integers(mask.size)] = True
    return (*_token_values(rng, mask.shape), mask)


def _loss_case_from_batch(batch: Mapping, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """The four arrays of loss_fn from a contract batch: its old log-probabilities, a current
    policy close to them, its token advantages (expanded from turns, or the turn rewards when
    it has none) and its action mask."""
    mask = batch["action_mask"]
    old_logprobs = np.where(mask, batch["old_logprobs"], np.log(0.5))
    logprobs = np.minimum(old_logprobs + rng.normal(0.0, 0.1, size=mask.shape), -1e-3)
    per_turn = batch.get("advantages", batch["rewards"])
    if per_turn.shape == mask.shape:
        advantages = np.where(mask, per_turn, 0.0)
    else:
        padded = np.concatenate([per_turn, np.zeros((len(mask), 1))], axis=1)
        columns = np.where(batch["turn_ids"] < 0, per_turn.shape[1], batch["turn_ids"])
        advantages = np.take_along_axis(padded, columns, axis=1)
    return logprobs, old_logprobs, advantages, mask


def _given_batch(batch: Any) -> dict | None:
    """A user's contract batch with at least one trained token, or None."""
    if batch is None:
        return None
    try:
        clean = contract.validate(batch)
    except ValueError as error:
        raise ValueError(f"batch must satisfy the contract: {error}") from error
    if not clean["action_mask"].any():
        raise ValueError("batch must have at least one trained token; got an all-zero action_mask")
    return clean


def _decode(tokens: Sequence[int]) -> str:
    return "".join(TOY_VOCABULARY[t] for t in tokens)


def _episodes(rng: np.random.Generator, adversarial: bool = False) -> list[dict]:
    """1 to 4 episodes in the format of :func:`rlfound.contract.build_batch`.

    Every kind of segment, 0 to 4 turns, several policy versions in one episode, recorded
    log-probabilities that no model computed, rewards per turn and the decoded text of every
    segment. With ``adversarial``, every episode has a turn and every policy segment
    contains the tokens "a", "b" side by side, whose text re-tokenizes as "ab".
    """
    episodes = []
    for _ in range(int(rng.integers(1, 5))):
        segments = [{"kind": "system", "tokens": rng.integers(2, 8, size=int(rng.integers(1, 4)))}]
        rewards = []
        version = int(rng.integers(0, 6))
        for turn in range(int(rng.integers(1 if adversarial else 0, 5))):
            if turn > 0 or rng.random() < 0.5:
                kind = str(rng.choice(["user", "tool", "tool", "other"]))
                segments.append(
                    {"kind": kind, "tokens": rng.integers(3, 8, size=int(rng.integers(1, 5)))}
                )
            size = int(rng.integers(2 if adversarial else 1, 6))
            tokens = rng.integers(0, 8, size=size)
            if adversarial:
                start = int(rng.integers(0, size - 1))
                tokens[start : start + 2] = (_A, _B)
            version += int(rng.random() < 0.4)  # an asynchronous sampler moves on between turns
            segments.append(
                {
                    "kind": "policy",
                    "tokens": tokens,
                    "logprobs": -rng.uniform(0.01, 6.0, size=size),
                    "version": version,
                }
            )
            rewards.append(float(np.round(rng.normal(), 2)))
        if rng.random() < 0.5:
            segments.append(
                {"kind": "tool", "tokens": rng.integers(3, 8, size=int(rng.integers(1, 4)))}
            )
        for segment in segments:
            segment["tokens"] = [int(t) for t in segment["tokens"]]
            segment["text"] = _decode(segment["tokens"])
            if "logprobs" in segment:
                segment["logprobs"] = [float(x) for x in segment["logprobs"]]
        episodes.append({"segments": segments, "rewards": rewards})
    return episodes


def _expected_row(episode: Mapping) -> dict[str, np.ndarray]:
    """The per-token truth of one episode: tokens, and for token q (q >= 1, the target of
    prediction q - 1) whether the trained policy made it, its turn, log-probability, version."""
    tokens, policy, turn, logprob, version = [], [], [], [], []
    k = 0
    for segment in episode["segments"]:
        n = len(segment["tokens"])
        tokens += list(segment["tokens"])
        is_policy = segment["kind"] == "policy"
        policy += [is_policy] * n
        turn += [k if is_policy else -1] * n
        logprob += list(segment["logprobs"]) if is_policy else [0.0] * n
        version += [segment["version"] if is_policy else -1] * n
        k += is_policy
    return {
        "tokens": np.array(tokens),
        "policy": np.array(policy[1:], dtype=bool),
        "turn": np.array(turn[1:]),
        "logprob": np.array(logprob[1:]),
        "version": np.array(version[1:]),
        "rewards": np.array(episode["rewards"], dtype=np.float64),
    }


def _built_batch(case: _Case, build_fn: Callable, episodes: list[dict]) -> dict:
    """build_fn(episodes), checked against the contract and the number of episodes."""
    batch = case.call(build_fn, "build_fn", episodes)
    if not isinstance(batch, Mapping):
        raise case.fail(f"build_fn returned {type(batch).__name__}; a dict of arrays was expected")
    try:
        batch = contract.validate(batch)
    except ValueError as error:
        raise case.fail(f"the batch breaks the contract: {error}") from None
    if len(batch["input_ids"]) != len(episodes):
        raise case.fail(
            f"the batch has {len(batch['input_ids'])} rows for {len(episodes)} episodes; row i "
            "must hold episode i"
        )
    return batch


def _row_block(batch: Mapping, row: int) -> tuple[int, int]:
    columns = np.flatnonzero(batch["attention_mask"][row])
    return (int(columns[0]), int(columns[-1]) + 1) if columns.size else (0, 0)


def _packed_streams(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Rows of packed episodes: rewards, values, next_values and boundary flags (never both),
    with at least one termination and one truncation when there is room."""
    rows, steps = int(rng.integers(1, 4)), int(rng.integers(1, 16))
    kind = rng.choice(3, size=(rows, steps), p=[0.6, 0.2, 0.2])
    if steps >= 2:
        kind[0, :2] = rng.permutation([1, 2])
    terminated, truncated = kind == 1, kind == 2
    values = rng.normal(size=(rows, steps))
    next_values = rng.normal(size=(rows, steps))
    inside = ~(terminated | truncated)[:, :-1]
    next_values[:, :-1][inside] = values[:, 1:][inside]
    return {
        "rewards": rng.normal(size=(rows, steps)),
        "values": values,
        "next_values": next_values,
        "terminated": terminated,
        "truncated": truncated,
    }


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
        case = _Case(1, index, num_cases, f"{groups} group(s) of {size} equal rewards")
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
        shifts = np.where(rng.random(len(rewards)) < 0.2, 50.0, rng.normal(0.0, 5.0, len(rewards)))
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
            case.call(advantage_fn, "advantage_fn", rewards + shifts[:, None]),
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
    for index, (logprobs, old_logprobs, advantages, mask) in enumerate(cases):
        case = _Case(3, index, num_cases, f"B = {mask.shape[0]}, L = {mask.shape[1]}")
        loss = case.scalar(
            case.call(loss_fn, "loss_fn", logprobs, old_logprobs, advantages, mask), "loss_fn"
        )
        junk = _garbage(rng, mask.shape)
        changed = [
            np.where(mask, clean, noise)
            for clean, noise in zip((logprobs, old_logprobs, advantages), junk, strict=True)
        ]
        loss_junk = case.scalar(case.call(loss_fn, "loss_fn", *changed, mask), "loss_fn")
        if loss_junk != loss:
            raise case.fail(
                f"changing only the values at masked positions changed the loss from {loss:.6g} "
                f"to {loss_junk:.6g}; a masked token has weight 0, so nothing stored there may "
                "reach the loss"
            )
        worst = 0.0
        if gradient_fn is not None:
            gradient = case.array(
                case.call(gradient_fn, "gradient_fn", logprobs, old_logprobs, advantages, mask),
                "gradient_fn",
                mask.shape,
                "d loss / d logprobs, the shape of logprobs",
            )
            leak = ~mask & (gradient != 0.0)
            worst = float(np.abs(gradient[~mask]).max(initial=0.0))
            if leak.any():
                where = tuple(int(i) for i in np.argwhere(leak)[0])
                raise case.fail(
                    f"gradient_fn returned {gradient[where]:.6g} at the masked position {where}; "
                    "a masked token must receive exactly zero gradient"
                )
            for where in map(tuple, np.argwhere(mask)):
                step = np.zeros(mask.shape)
                step[where] = 1e-6
                up = case.scalar(
                    case.call(loss_fn, "loss_fn", logprobs + step, old_logprobs, advantages, mask),
                    "loss_fn",
                )
                down = case.scalar(
                    case.call(loss_fn, "loss_fn", logprobs - step, old_logprobs, advantages, mask),
                    "loss_fn",
                )
                numerical = (up - down) / 2e-6
                if abs(gradient[where] - numerical) > atol + rtol * abs(numerical):
                    raise case.fail(
                        f"gradient_fn returned {gradient[where]:.6g} at "
                        f"{tuple(int(i) for i in where)} where central differences of loss_fn "
                        f"give {numerical:.6g}"
                    )
        errors.append(max(abs(loss_junk - loss), worst))
        sizes.append(mask.size)
    return _result(errors, sizes)


# --- 4 and 10: from episodes to a batch ---------------------------------------------------------


@finite_output()
def check_no_retokenization(
    build_fn: Callable[[list], Mapping[str, ArrayLike]],
    rng: np.random.Generator | int | None = None,
    num_cases: int = 20,
) -> InvariantCheck:
    """Invariant 4: behavior log-probabilities are never rebuilt from re-tokenized text.

    An old log-probability means log μ(x_j | x_<j) for the token sequence the sampler
    produced, under the weights, prompt template and vocabulary it used (chapter 5). Text
    has many tokenizations; the tokenizer picks one, not necessarily the sampled one. The
    check generates episodes whose policy segments contain the tokens "a", "b" side by side
    (:data:`TOY_VOCABULARY`; their decoded ``text``, stored with every segment, re-tokenizes
    as the single token "ab") and whose recorded log-probabilities no model would compute.
    The batch must satisfy the contract and hold, at every policy target, exactly the
    sampled token id and exactly the recorded log-probability.

    What it proves: the batch builder carries the sampler's tokens and log-probabilities
    through unchanged. What it catches: decoding and re-encoding the rollout text,
    recomputing old log-probabilities with another model or checkpoint, dropping or
    shifting tokens at segment boundaries.

    Book: chapter 5 (sec-retokenization); chapter 13.

    Parameters
    ----------
    build_fn : callable
        ``build_fn(episodes) -> batch``: episodes in the format of
        :func:`rlfound.contract.build_batch` (policy segments carry ``logprobs``,
        ``version`` and ``text``), returning a contract batch with row i for episode i.
    rng, num_cases
        As for :func:`check_constant_reward`.

    Returns
    -------
    InvariantCheck
        ``errors`` holds 0.0 for every case (the comparison is exact), ``sizes`` its number
        of policy tokens.

    Raises
    ------
    InvariantViolation
        If the batch breaks the contract, or a policy token or its old log-probability
        differs from what the sampler produced.
    ValueError
        If ``build_fn`` is not callable or ``rng`` or ``num_cases`` is invalid.

    Examples
    --------
    >>> check_no_retokenization(contract.build_batch, rng=0, num_cases=3).max_error
    0.0
    """
    build_fn = check_callable(build_fn, "build_fn")
    rng, num_cases = _check_common(rng, num_cases)

    errors, sizes = [], []
    for index in range(num_cases):
        episodes = _episodes(rng, adversarial=True)
        case = _Case(4, index, num_cases, f"{len(episodes)} episode(s)")
        batch = _built_batch(case, build_fn, episodes)
        count = 0
        for row, episode in enumerate(episodes):
            start, stop = _row_block(batch, row)
            for segment in episode["segments"]:
                if segment["kind"] != "policy":
                    continue
                sampled = np.asarray(segment["tokens"])
                count += sampled.size
                # The segment's tokens sit at the columns given by their offset in the episode.
                offset = _segment_offset(episode, segment)
                columns = np.arange(start + offset, start + offset + sampled.size)
                held = batch["input_ids"][row, columns[columns < stop]]
                if held.size != sampled.size or (held != sampled).any():
                    raise case.fail(
                        f"row {row} holds the tokens {held.tolist()} where the sampler produced "
                        f"{sampled.tolist()} (text {segment['text']!r}); the batch must carry the "
                        "sampled token ids, not a re-tokenization of their text"
                    )
                recorded = np.asarray(segment["logprobs"])
                stored = batch["old_logprobs"][row, columns - 1]
                if (stored != recorded).any():
                    q = int(np.flatnonzero(stored != recorded)[0])
                    raise case.fail(
                        f"old_logprobs[{row}, {int(columns[q]) - 1}] is {stored[q]:.6g} where the "
                        f"sampler recorded {recorded[q]:.6g} for token {int(sampled[q])}; behavior "
                        "log-probabilities must be the sampler's, stored with the tokens, never "
                        "recomputed"
                    )
        errors.append(0.0)
        sizes.append(count)
    return _result(errors, sizes)


def _segment_offset(episode: Mapping, target: Mapping) -> int:
    offset = 0
    for segment in episode["segments"]:
        if segment is target:
            return offset
        offset += len(segment["tokens"])
    raise AssertionError("segment not in episode")  # pragma: no cover


@finite_output()
def check_event_order(
    build_fn: Callable[[list], Mapping[str, ArrayLike]],
    rng: np.random.Generator | int | None = None,
    num_cases: int = 20,
) -> InvariantCheck:
    """Invariant 10: the batch reconstructs the episode's events in order.

    A row of the batch is a trajectory written as arrays. Reading it back must give the
    episode: its tokens in order (system prompt, user messages, tool observations, policy
    turns, other models' tokens), each policy turn k at exactly the targets of its tokens,
    with ``turn_ids`` k, the action mask on, the recorded old log-probabilities and the
    policy version that sampled it, and ``rewards[i, k]`` the reward of turn k (0 beyond
    the last turn). The check generates episodes with every kind of segment, 0 to 4 turns
    and several policy versions per episode, and compares every field with the truth.

    What it proves: observations, actions and rewards keep their order and their pairing;
    the batch is a faithful, target-aligned copy of the trajectories. What it catches:
    off-by-one alignment that :func:`rlfound.contract.validate` cannot see (a batch can be
    consistently wrong), segments reordered or dropped, rewards attached to the wrong turn,
    a version of one turn copied to the whole episode.

    Book: equations (eq-target-alignment) and (eq-action-mask), chapter 13.

    Parameters
    ----------
    build_fn : callable
        As for :func:`check_no_retokenization`.
    rng, num_cases
        As for :func:`check_constant_reward`.

    Returns
    -------
    InvariantCheck
        ``errors`` holds 0.0 for every case (the comparison is exact), ``sizes`` its number
        of tokens.

    Raises
    ------
    InvariantViolation
        If the batch breaks the contract or a field differs from the episode.
    ValueError
        If ``build_fn`` is not callable or ``rng`` or ``num_cases`` is invalid.

    Examples
    --------
    >>> check_event_order(contract.build_batch, rng=0, num_cases=3).max_error
    0.0
    """
    build_fn = check_callable(build_fn, "build_fn")
    rng, num_cases = _check_common(rng, num_cases)

    errors, sizes = [], []
    for index in range(num_cases):
        episodes = _episodes(rng)
        case = _Case(10, index, num_cases, f"{len(episodes)} episode(s)")
        batch = _built_batch(case, build_fn, episodes)
        count = 0
        for row, episode in enumerate(episodes):
            truth = _expected_row(episode)
            start, stop = _row_block(batch, row)
            tokens = batch["input_ids"][row, start:stop]
            count += tokens.size
            if tokens.size != truth["tokens"].size or (tokens != truth["tokens"]).any():
                raise case.fail(
                    f"row {row} holds the tokens {tokens.tolist()}; the episode's tokens in order "
                    f"are {truth['tokens'].tolist()}"
                )
            targets = slice(start, stop - 1)  # prediction of token q sits at start + q - 1
            version = batch["policy_version"]
            version = (
                version[row, targets]
                if version.ndim == 2
                else np.full(stop - start - 1, version[row])
            )
            fields = (
                (
                    "action_mask",
                    batch["action_mask"][row, targets],
                    truth["policy"],
                    "policy token",
                ),
                ("turn_ids", batch["turn_ids"][row, targets], truth["turn"], "turn"),
            )
            for name, got, want, what in fields:
                wrong = got != want
                if wrong.any():
                    q = int(np.flatnonzero(wrong)[0])
                    raise case.fail(
                        f"{name}[{row}, {start + q}] is {_plain(got[q])}, but that target is "
                        f"token {q + 1} of the episode, whose {what} is {_plain(want[q])}"
                    )
            for name, got, want in (
                ("old_logprobs", batch["old_logprobs"][row, targets], truth["logprob"]),
                ("policy_version", version, truth["version"]),
            ):
                wrong = truth["policy"] & (got != want)
                if wrong.any():
                    q = int(np.flatnonzero(wrong)[0])
                    raise case.fail(
                        f"{name}[{row}, {start + q}] is {_plain(got[q])}, but the sampler "
                        f"recorded {_plain(want[q])} for token {q + 1} of the episode (turn "
                        f"{int(truth['turn'][q])})"
                    )
            rewards = batch["rewards"][row]
            want = np.zeros(rewards.size)
            k = truth["rewards"].size
            if k > rewards.size:
                raise case.fail(f"rewards has {rewards.size} columns for an episode of {k} turns")
            want[:k] = truth["rewards"]
            if (rewards != want).any():
                turn = int(np.flatnonzero(rewards != want)[0])
                raise case.fail(
                    f"rewards[{row}, {turn}] is {_plain(rewards[turn])}, but turn {turn} of the "
                    f"episode earned {_plain(want[turn])} (the episode has {k} turns)"
                )
        errors.append(0.0)
        sizes.append(count)
    return _result(errors, sizes)


# --- 5: unit ratios -----------------------------------------------------------------------------


@finite_output()
def check_unit_ratios(
    logprob_fn: Callable[[np.ndarray, np.ndarray], ArrayLike],
    rng: np.random.Generator | int | None = None,
    num_cases: int = 20,
    atol: float = 1e-9,
) -> InvariantCheck:
    """Invariant 5: at θ = θ_old every valid importance ratio is 1.

    The sampler recorded log π_old(x_{j+1} | x_{<=j}) for every target, from the logits at
    position j (:func:`rlfound.contract.target_logprobs`). When the trainer's parameters
    equal the sampler's, its own log-probabilities must reproduce those numbers, so

        ρ_ij = exp(log π_θ(x_{i,j+1} | x_{i,<=j}) - old_ij) = 1

    for every target whose input and token are both valid. The check draws random logits
    (the shared parameters), tokens and left or right padding, records the sampler's
    log-probabilities, calls ``logprob_fn`` on the same logits and requires
    |ρ - 1| <= atol on every valid target.

    What it proves: the trainer scores the same (logit, token) pairs as the sampler, with
    the contract's alignment. What it catches: the off-by-one (scoring the token at j with
    the logits at j), a shift by the prompt length, a temperature or mask applied on one
    side only. (TRL's GRPO trainer relies on this identity: with one update per batch it
    uses the detached current log-probabilities as the old ones, as the comment in
    ``GRPOTrainer._generate_and_score_completions`` of huggingface/trl at commit 000bb3d
    says.)

    Book: equation (eq-target-alignment), chapter 13.

    Parameters
    ----------
    logprob_fn : callable
        ``logprob_fn(logits, input_ids) -> logprobs``: logits (B, L, V) and token ids
        (B, L) to the (B, L - 1) log-probabilities of the targets.
    rng, num_cases
        As for :func:`check_constant_reward`.
    atol : float, optional
        Tolerance of |ρ - 1|. Default 1e-9.

    Returns
    -------
    InvariantCheck
        ``errors`` holds the largest |ρ - 1| of every case, ``sizes`` its number of valid
        targets.

    Raises
    ------
    InvariantViolation
        If a valid ratio differs from 1, or ``logprob_fn`` returns another shape.
    ValueError
        If ``logprob_fn`` is not callable, or ``rng``, ``num_cases`` or ``atol`` is invalid.

    Examples
    --------
    >>> check_unit_ratios(contract.target_logprobs, rng=0).max_error
    0.0
    """
    logprob_fn = check_callable(logprob_fn, "logprob_fn")
    rng, num_cases = _check_common(rng, num_cases)
    atol = check_nonnegative_real(atol, "atol")

    errors, sizes = [], []
    for index in range(num_cases):
        rows, length, vocab = (
            int(rng.integers(1, 5)),
            int(rng.integers(2, 13)),
            int(rng.integers(2, 9)),
        )
        logits = rng.normal(0.0, 2.0, size=(rows, length, vocab))
        input_ids = rng.integers(0, vocab, size=(rows, length))
        lengths = rng.integers(2, length + 1, size=rows)
        left = rng.random() < 0.5
        columns = np.arange(length)
        attention = (columns >= length - lengths[:, None]) if left else (columns < lengths[:, None])
        input_ids = np.where(attention, input_ids, 0)
        valid = attention[:, :-1] & attention[:, 1:]
        # The sampler's record: the logits at j score the token at j + 1.
        scores = log_softmax(logits)[:, :-1, :]
        recorded = np.take_along_axis(scores, input_ids[:, 1:, None], axis=-1)[..., 0]
        side = "left" if left else "right"
        case = _Case(5, index, num_cases, f"B = {rows}, L = {length}, V = {vocab}, {side} padding")
        new = case.array(
            case.call(logprob_fn, "logprob_fn", logits.copy(), input_ids.copy()),
            "logprob_fn",
            (rows, length - 1),
            "one log-probability per target: position j scores input_ids[:, j + 1]",
        )
        with np.errstate(over="ignore", invalid="ignore"):
            gap = np.where(valid, np.abs(np.exp(new - recorded) - 1.0), 0.0)
        if not np.all(gap <= atol):
            where = tuple(int(i) for i in np.argwhere(~(gap <= atol))[0])
            i, j = where
            raise case.fail(
                f"with the sampler's own parameters the ratio of target {where} is "
                f"{np.exp(new[where] - recorded[where]):.6g}, not 1: logprob_fn returned "
                f"{new[where]:.6g} where the sampler recorded {recorded[where]:.6g} for "
                f"input_ids[{i}, {j + 1}] = {int(input_ids[i, j + 1])} (position j must score "
                "the token at j + 1 with the logits at j)"
            )
        errors.append(float(gap.max(initial=0.0)))
        sizes.append(int(valid.sum()))
    return _result(errors, sizes)


# --- 6: layouts ---------------------------------------------------------------------------------


def _sequences(rng: np.random.Generator) -> list[tuple[np.ndarray, ...]]:
    """1 to 4 sequences of 1 to 8 positions: (logprobs, old, advantages, mask), at least one
    trained token in all."""
    sequences = []
    for _ in range(int(rng.integers(1, 5))):
        size = int(rng.integers(1, 9))
        mask = rng.random(size) < 0.7
        sequences.append((*_token_values(rng, (size,)), mask))
    if not any(mask.any() for *_, mask in sequences):
        sequences[0][3][0] = True
    return sequences


def _layout(
    rng: np.random.Generator,
    sequences: list,
    rows: list[list[int]],
    length: int,
    left: bool = False,
) -> tuple[np.ndarray, ...]:
    """Lay out sequences in rows (row r holds ``rows[r]`` back to back); garbage elsewhere."""
    shape = (len(rows), length)
    arrays = [*_garbage(rng, shape), np.zeros(shape, dtype=bool)]
    for r, members in enumerate(rows):
        values = [
            np.concatenate([sequences[s][k] for s in members]) if members else [] for k in range(4)
        ]
        size = len(values[3])
        start = length - size if left else 0
        for k in range(4):
            arrays[k][r, start : start + size] = values[k]
    return tuple(arrays)


def _layouts(rng: np.random.Generator, sequences: list, changes: tuple[str, ...]) -> dict:
    count = len(sequences)
    longest = max(len(s[3]) for s in sequences)
    one_each = [[s] for s in range(count)]
    layouts = {"base": _layout(rng, sequences, one_each, longest)}
    if "pad" in changes:
        layouts["pad"] = _layout(rng, sequences, one_each, longest + int(rng.integers(1, 6)))
    if "empty-rows" in changes:
        rows = list(one_each)
        for _ in range(int(rng.integers(1, 3))):
            rows.insert(int(rng.integers(len(rows) + 1)), [])
        layouts["empty-rows"] = _layout(rng, sequences, rows, longest)
    if "reorder" in changes:
        layouts["reorder"] = _layout(
            rng, sequences, [one_each[s] for s in rng.permutation(count)], longest
        )
    if "shift" in changes:
        layouts["shift"] = _layout(
            rng, sequences, one_each, longest + int(rng.integers(0, 4)), left=True
        )
    if "pack" in changes:
        total = sum(len(s[3]) for s in sequences)
        layouts["pack"] = _layout(rng, sequences, [list(range(count))], total)
    return layouts


def _check_changes(changes: Any) -> tuple[str, ...]:
    if isinstance(changes, str) or not isinstance(changes, Sequence) or not changes:
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
        inside = given["attention_mask"][:, :-1] & given["attention_mask"][:, 1:]
        cases.append([tuple(a[row][inside[row]] for a in arrays) for row in range(len(inside))])
    errors, sizes = [], []
    for index, sequences in enumerate(cases):
        lengths = [len(s[3]) for s in sequences]
        case = _Case(6, index, num_cases, f"{len(sequences)} sequence(s) of {lengths} positions")
        layouts = _layouts(rng, sequences, changes)
        losses = {
            name: case.scalar(case.call(loss_fn, "loss_fn", *arrays), "loss_fn")
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
    truncation = check_choice(truncation, "truncation", ("bootstrap", "terminate"))
    rng, num_cases = _check_common(rng, num_cases)
    atol = check_nonnegative_real(atol, "atol")

    errors, sizes = [], []
    for index in range(num_cases):
        stream = _packed_streams(rng)
        shape = stream["rewards"].shape
        case = _Case(7, index, num_cases, f"{shape[0]} stream(s) of {shape[1]} steps")

        def run(changes, case=case, stream=stream, shape=shape):
            arrays = {**{k: v.copy() for k, v in stream.items()}, **changes}
            names = ("rewards", "values", "next_values", "terminated", "truncated")
            out = case.call(returns_fn, "returns_fn", *(arrays[k] for k in names))
            return case.array(out, "returns_fn", shape, "one value per step")

        base = run({})
        terminated, truncated = stream["terminated"], stream["truncated"]
        moved = np.where(terminated, rng.normal(0.0, 100.0, size=shape), stream["next_values"])
        gap = np.abs(run({"next_values": moved}) - base)
        if not np.all(gap <= atol * (1.0 + np.abs(base))):
            where = tuple(int(i) for i in np.argwhere(~(gap <= atol * (1.0 + np.abs(base))))[0])
            step = tuple(int(i) for i in np.argwhere(terminated)[0])
            raise case.fail(
                f"changing next_values only at terminated steps (the first at {step}) changed "
                f"the result at {where} by {gap[where]:.6g}; a true terminal state has no future "
                "value, so it must never bootstrap"
            )
        folded = {"terminated": terminated | truncated, "truncated": np.zeros(shape, dtype=bool)}
        if truncation == "bootstrap":
            folded["rewards"] = stream["rewards"] + gamma * np.where(
                truncated, stream["next_values"], 0.0
            )
        expected = run(folded)
        gap_fold = np.abs(base - expected)
        if not np.all(gap_fold <= atol * (1.0 + np.abs(expected))):
            where = tuple(
                int(i) for i in np.argwhere(~(gap_fold <= atol * (1.0 + np.abs(expected))))[0]
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
        density = rng.uniform(0.05, 1.0, size=(rows, 1))  # very unequal token counts
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
        cuts = np.sort(rng.choice(np.arange(1, rows), size=workers - 1, replace=False))
        parts = np.split(order, cuts)
        shards = [
            {name: a[np.sort(part)].copy() for name, a in zip(names, arrays, strict=True)}
            for part in parts
        ]
        counts = [int(shard["mask"].sum()) for shard in shards]
        case = _Case(
            8, index, num_cases, f"{rows} rows over {workers} workers with {counts} tokens"
        )
        whole = case.scalar(case.call(loss_fn, "loss_fn", *arrays), "loss_fn")
        split = case.scalar(
            case.call(sharded_loss_fn, "sharded_loss_fn", shards), "sharded_loss_fn"
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


# --- 9: old log-probabilities are immutable -----------------------------------------------------


@finite_output()
def check_old_logprobs_immutable(
    step_fn: Callable[[dict], Any],
    batch: Mapping[str, ArrayLike] | None = None,
    rng: np.random.Generator | int | None = None,
    num_cases: int = 20,
    num_steps: int = 3,
) -> InvariantCheck:
    """Invariant 9: old log-probabilities are immutable and tagged with their policy version.

    ``old_logprobs`` are a record of the sampler, the denominator of every ratio of every
    epoch; a training step reads them and never replaces them (a step that refreshes them
    with the current policy makes every ratio 1 and switches the clip off). The check builds
    contract batches (every trained token tagged with its version), makes ``old_logprobs``
    and ``policy_version`` read-only, calls ``step_fn(batch)`` ``num_steps`` times on the
    same dict, as the epochs of PPO do, and requires both fields to remain the same arrays
    with the same values, and the batch to satisfy the contract.

    What it proves: the training step treats the sampler's record as immutable input. What
    it catches: writing new log-probabilities into ``old_logprobs`` (in place or by
    replacing the entry), re-tagging versions, dropping the tags.

    Book: chapter 5 (sec-retokenization); chapter 13.

    Parameters
    ----------
    step_fn : callable
        ``step_fn(batch)``: one training step on a contract batch (a dict of arrays, see
        :mod:`rlfound.contract`); its return value is ignored. It may add or replace other
        entries of the dict.
    batch : mapping or None, optional
        A contract batch used as one more case (a copy is passed).
    rng, num_cases
        As for :func:`check_constant_reward`.
    num_steps : int, optional
        Steps per case. Default 3.

    Returns
    -------
    InvariantCheck
        ``errors`` holds 0.0 for every case (the comparison is exact), ``sizes`` its number
        of trained tokens.

    Raises
    ------
    InvariantViolation
        If ``step_fn`` writes into or replaces ``old_logprobs`` or ``policy_version``, or
        leaves a batch that breaks the contract.
    ValueError
        If ``step_fn`` is not callable, ``batch`` breaks the contract, or ``rng``,
        ``num_cases`` or ``num_steps`` is invalid.

    Examples
    --------
    >>> from rlfound import ppo
    >>> def step(batch):
    ...     return ppo.clipped_policy_loss(batch["old_logprobs"] - 0.01, batch["old_logprobs"],
    ...                                    np.ones_like(batch["old_logprobs"]),
    ...                                    batch["action_mask"])
    >>> check_old_logprobs_immutable(step, rng=0, num_cases=3).max_error
    0.0
    """
    step_fn = check_callable(step_fn, "step_fn")
    given = _given_batch(batch)
    rng, num_cases = _check_common(rng, num_cases)
    num_steps = check_size(
        check_positive_int(num_steps, "num_steps"), "num_steps", MAX_ITERATIONS, "steps"
    )

    cases = []
    for _ in range(num_cases):
        episodes = _episodes(rng)
        while not any(s["kind"] == "policy" for e in episodes for s in e["segments"]):
            episodes = _episodes(rng)
        cases.append(
            contract.build_batch(episodes, padding_side=str(rng.choice(["left", "right"])))
        )
    if given is not None:
        cases.append({key: np.array(value, copy=True) for key, value in given.items()})
    errors, sizes = [], []
    for index, current in enumerate(cases):
        case = _Case(9, index, num_cases, f"B = {len(current['input_ids'])}, {num_steps} steps")
        kept = {}
        for name in ("old_logprobs", "policy_version"):
            current[name].flags.writeable = False
            kept[name] = (current[name], current[name].copy())
        for step in range(num_steps):
            try:
                step_fn(current)
            except ValueError as error:
                if "read-only" in str(error):
                    raise case.fail(
                        f"step_fn wrote into old_logprobs or policy_version in place on step "
                        f"{step + 1} ({error}); the sampler's record is read-only"
                    ) from None
                raise case.fail(f"step_fn raised ValueError: {error}") from error
            except Exception as error:
                raise case.fail(f"step_fn raised {type(error).__name__}: {error}") from error
            for name, (array, values) in kept.items():
                if current.get(name) is not array:
                    raise case.fail(
                        f"after step {step + 1} batch[{name!r}] is a different array: step_fn "
                        f"replaced the sampler's record; {name} must be left as sampled"
                    )
                if not np.array_equal(array, values):
                    raise case.fail(f"after step {step + 1} batch[{name!r}] holds other values")
            try:
                contract.validate(current)
            except ValueError as error:
                raise case.fail(
                    f"after step {step + 1} the batch breaks the contract: {error}"
                ) from None
        errors.append(0.0)
        sizes.append(int(np.asarray(current["action_mask"]).sum()))
    return _result(errors, sizes)
