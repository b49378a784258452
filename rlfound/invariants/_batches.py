"""Checks of what builds and consumes a batch: batch builders (invariants 4 and 10), a
log-probability function (5), a training step (9).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rlfound import contract
from rlfound._validation import (
    MAX_ITERATIONS,
    check_callable,
    check_nonnegative_real,
    check_positive_int,
    check_size,
    finite_output,
    first_index,
)
from rlfound.distributions import log_softmax

from ._cases import (
    _built_batch,
    _episodes,
    _expected_row,
    _given_batch,
    _row_block,
)
from ._kit import InvariantCheck, _Case, _check_common, _plain, _result

# --- 4 and 10: from episodes to a batch ---------------------------------------------------------


def _built_cases(
    build_fn: Any,
    rng: Any,
    num_cases: Any,
    invariant: int,
    **episodes_options: Any,
) -> Iterator[
    tuple[_Case, Mapping, Iterator[tuple[int, Mapping, int, int]]]
]:
    """The cases of a batch-builder check, its arguments checked first (``build_fn``, then
    ``rng`` and ``num_cases``): for each, the case, the batch ``build_fn`` built from fresh
    episodes (``episodes_options`` go to the generator), and per row ``(row, episode, start,
    stop)``, the episode of the row and its block of columns."""
    build_fn = check_callable(build_fn, "build_fn")
    rng, num_cases = _check_common(rng, num_cases)

    def cases():
        for index in range(num_cases):
            episodes = _episodes(rng, **episodes_options)
            case = _Case(
                invariant, index, num_cases, f"{len(episodes)} episode(s)"
            )
            batch = _built_batch(case, build_fn, episodes)
            # Lazily: a row's block is read when the check reaches the row.
            rows = (
                (row, episode, *_row_block(batch, row))
                for row, episode in enumerate(episodes)
            )
            yield case, batch, rows

    return cases()


def _exact_result(sizes: list[int]) -> InvariantCheck:
    """The result of a check whose comparisons are exact: every case's error is 0."""
    return _result([0.0] * len(sizes), sizes)


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
    sizes = []
    for case, batch, rows in _built_cases(
        build_fn, rng, num_cases, 4, adversarial=True
    ):
        count = 0
        for row, episode, start, stop in rows:
            for segment in episode["segments"]:
                if segment["kind"] != "policy":
                    continue
                sampled = np.asarray(segment["tokens"])
                count += sampled.size
                # The segment's tokens sit at the columns given by their offset in the episode.
                offset = _segment_offset(episode, segment)
                columns = np.arange(
                    start + offset, start + offset + sampled.size
                )
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
        sizes.append(count)
    return _exact_result(sizes)


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
    sizes = []
    for case, batch, rows in _built_cases(build_fn, rng, num_cases, 10):
        count = 0
        for row, episode, start, stop in rows:
            truth = _expected_row(episode)
            tokens = batch["input_ids"][row, start:stop]
            count += tokens.size
            if (
                tokens.size != truth["tokens"].size
                or (tokens != truth["tokens"]).any()
            ):
                raise case.fail(
                    f"row {row} holds the tokens {tokens.tolist()}; the episode's tokens in order "
                    f"are {truth['tokens'].tolist()}"
                )
            targets = slice(
                start, stop - 1
            )  # prediction of token q sits at start + q - 1
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
                (
                    "turn_ids",
                    batch["turn_ids"][row, targets],
                    truth["turn"],
                    "turn",
                ),
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
                (
                    "old_logprobs",
                    batch["old_logprobs"][row, targets],
                    truth["logprobs"],
                ),
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
                raise case.fail(
                    f"rewards has {rewards.size} columns for an episode of {k} turns"
                )
            want[:k] = truth["rewards"]
            if (rewards != want).any():
                turn = int(np.flatnonzero(rewards != want)[0])
                raise case.fail(
                    f"rewards[{row}, {turn}] is {_plain(rewards[turn])}, but turn {turn} of the "
                    f"episode earned {_plain(want[turn])} (the episode has {k} turns)"
                )
        sizes.append(count)
    return _exact_result(sizes)


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
        attention = (
            (columns >= length - lengths[:, None])
            if left
            else (columns < lengths[:, None])
        )
        input_ids = np.where(attention, input_ids, 0)
        valid = attention[:, :-1] & attention[:, 1:]
        # The sampler's record: the logits at j score the token at j + 1.
        scores = log_softmax(logits)[:, :-1, :]
        recorded = np.take_along_axis(
            scores, input_ids[:, 1:, None], axis=-1
        )[..., 0]
        side = "left" if left else "right"
        case = _Case(
            5,
            index,
            num_cases,
            f"B = {rows}, L = {length}, V = {vocab}, {side} padding",
        )
        new = case.array(
            case.call(
                logprob_fn, "logprob_fn", logits.copy(), input_ids.copy()
            ),
            "logprob_fn",
            (rows, length - 1),
            "one log-probability per target: position j scores input_ids[:, j + 1]",
        )
        with np.errstate(over="ignore", invalid="ignore"):
            gap = np.where(valid, np.abs(np.exp(new - recorded) - 1.0), 0.0)
        if not np.all(gap <= atol):
            where = first_index(~(gap <= atol))
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


# --- 9: old log-probabilities are immutable -----------------------------------------------------


def _run_step(
    case: _Case, step_fn: Callable[[dict], Any], batch: dict, label: str
) -> Any:
    """One call of a training step, with its errors reported as failures of invariant 9."""
    try:
        return step_fn(batch)
    except ValueError as error:
        if "read-only" in str(error):
            raise case.fail(
                f"step_fn wrote into old_logprobs or policy_version in place on {label} "
                f"({error}); the sampler's record is read-only"
            ) from None
        raise case.fail(
            f"step_fn raised ValueError on {label}: {error}"
        ) from error
    except Exception as error:
        raise case.fail(
            f"step_fn raised {type(error).__name__} on {label}: {error}"
        ) from error


def _step_output(case: _Case, output: Any, label: str) -> np.ndarray:
    """The value a step returned (its loss, ratios or gradient) as a float array."""
    if output is None:
        raise case.fail(
            f"step_fn returned None on {label}; it must return what it computed from the "
            "ratios (its loss, the ratios or a gradient) so the check can see that they use "
            "old_logprobs"
        )
    try:
        return np.asarray(output, dtype=float)
    except (TypeError, ValueError):
        raise case.fail(
            f"step_fn returned {type(output).__name__} on {label}; expected a number or an "
            "array (its loss, the ratios or a gradient)"
        ) from None


@finite_output()
def check_old_logprobs_immutable(
    step_fn: Callable[[dict], Any],
    batch: Mapping[str, ArrayLike] | None = None,
    rng: np.random.Generator | int | None = None,
    num_cases: int = 20,
    num_steps: int = 3,
) -> InvariantCheck:
    """Invariant 9: the ratios of a step use the sampler's stored, unchanged log-probabilities.

    ``old_logprobs`` are a record of the sampler, the denominator of every ratio of every
    epoch. The usual form of the refresh bug never touches the field: the step computes its
    ratios against a detached copy of the *current* log-probabilities, so every ratio is 1
    and the clip is off. The check therefore looks at what the step computes, not only at
    the field. It builds contract batches (every trained token tagged with its version) and
    adds ``batch["logprobs"]``, the learner's current log-probabilities of the targets (the
    sampler's values moved by up to 0.05, as after an update; ``0`` where no token is
    trained), and advantages of ±1 on the trained tokens. It makes ``old_logprobs`` and
    ``policy_version`` read-only and calls ``step_fn(batch)`` ``num_steps`` times on the same
    dict, as the epochs of PPO do; after every call both fields must hold the sampled values
    (replacing an entry by an identical copy is allowed) and the batch must satisfy the
    contract. Then it calls ``step_fn`` once on a twin batch whose ``old_logprobs`` are
    lower by 0.02 to 0.08 on the trained tokens, everything else equal: the step's return
    value must change. Both twins' ratios stay inside a clip range of 0.2.

    What it proves: the training step reads the sampler's record, unchanged, and what it
    returns depends on it. What it catches: ratios against the current log-probabilities
    (a detached copy, every ratio 1), writing new values into ``old_logprobs`` (in place or
    by replacing the entry), re-tagging versions, dropping the tags.

    Book: chapter 5 (sec-retokenization); chapter 13.

    Parameters
    ----------
    step_fn : callable
        ``step_fn(batch)``: one training step on a contract batch (a dict of arrays, see
        :mod:`rlfound.contract`) that may read ``batch["logprobs"]`` as the current
        log-probabilities. It returns what it computed from the ratios: its loss, the ratios
        or a gradient (a number or an array). It may add or replace other entries of the dict.
    batch : mapping or None, optional
        A contract batch used as one more case (a copy is passed, with ``logprobs`` added and
        its own advantages kept).
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
        If what ``step_fn`` returns does not depend on ``old_logprobs``, if it returns
        nothing, if it writes into ``old_logprobs`` or ``policy_version`` or replaces them
        with other values, or if it leaves a batch that breaks the contract.
    ValueError
        If ``step_fn`` is not callable, ``batch`` breaks the contract, or ``rng``,
        ``num_cases`` or ``num_steps`` is invalid.

    Examples
    --------
    >>> from rlfound import ppo
    >>> from rlfound.invariants import InvariantViolation
    >>> def step(batch):
    ...     return ppo.clipped_policy_loss(batch["logprobs"], batch["old_logprobs"],
    ...                                    batch["advantages"], batch["action_mask"])
    >>> check_old_logprobs_immutable(step, rng=0, num_cases=3).max_error
    0.0
    >>> def refreshing(batch):  # ratios against a detached copy of the current values
    ...     return ppo.clipped_policy_loss(batch["logprobs"], batch["logprobs"].copy(),
    ...                                    batch["advantages"], batch["action_mask"])
    >>> try:
    ...     check_old_logprobs_immutable(refreshing, rng=0, num_cases=3)
    ... except InvariantViolation as error:
    ...     print(str(error).split("): ", 1)[1][:57])
    what step_fn returns does not change when old_logprobs do
    """
    step_fn = check_callable(step_fn, "step_fn")
    given = _given_batch(batch)
    rng, num_cases = _check_common(rng, num_cases)
    num_steps = check_size(
        check_positive_int(num_steps, "num_steps"),
        "num_steps",
        MAX_ITERATIONS,
        "steps",
    )

    cases = []
    for _ in range(num_cases):
        episodes = _episodes(rng)
        while not any(
            s["kind"] == "policy" for e in episodes for s in e["segments"]
        ):
            episodes = _episodes(rng)
        built = contract.build_batch(
            episodes, padding_side=str(rng.choice(["left", "right"]))
        )
        signs = rng.choice([-1.0, 1.0], size=built["action_mask"].shape)
        built["advantages"] = np.where(built["action_mask"], signs, 0.0)
        cases.append(built)
    if given is not None:
        cases.append(
            {key: np.array(value, copy=True) for key, value in given.items()}
        )
    sizes = []
    for index, current in enumerate(cases):
        case = _Case(
            9,
            index,
            num_cases,
            f"B = {len(current['input_ids'])}, {num_steps} steps",
        )
        trained = np.asarray(current["action_mask"], dtype=bool)
        old = np.asarray(current["old_logprobs"], dtype=float)
        moved = rng.uniform(-0.05, 0.05, size=old.shape)
        current["logprobs"] = np.where(
            trained, np.minimum(old + moved, 0.0), 0.0
        )
        twin = {
            key: np.array(value, copy=True) for key, value in current.items()
        }
        twin["old_logprobs"] = np.where(
            trained, old - rng.uniform(0.02, 0.08, old.shape), old
        )
        kept = {}
        for name in ("old_logprobs", "policy_version"):
            for version in (current, twin):
                version[name].flags.writeable = False
            kept[name] = current[name].copy()
        for step in range(num_steps):
            output = _run_step(case, step_fn, current, f"step {step + 1}")
            if step == 0:
                first = _step_output(case, output, "step 1")
            for name, values in kept.items():
                now = current.get(name)
                same = (
                    isinstance(now, np.ndarray) and now.dtype == values.dtype
                )
                if not (same and np.array_equal(now, values)):
                    raise case.fail(
                        f"after step {step + 1} batch[{name!r}] holds other values: step_fn "
                        f"replaced the sampler's record; {name} must be left as sampled"
                    )
            try:
                contract.validate(current)
            except ValueError as error:
                raise case.fail(
                    f"after step {step + 1} the batch breaks the contract: {error}"
                ) from None
        other = _step_output(
            case, _run_step(case, step_fn, twin, "the twin"), "the twin"
        )
        if other.shape == first.shape and np.allclose(
            other, first, rtol=1e-12, atol=0.0
        ):
            raise case.fail(
                "what step_fn returns does not change when old_logprobs do (the twin batch "
                "lowers them by 0.02 to 0.08 on every trained token): its ratios do not use "
                "the sampler's record, for example they are computed against a detached copy "
                "of the current log-probabilities, so every ratio is 1 and the clip is off"
            )
        sizes.append(int(trained.sum()))
    return _exact_result(sizes)
