"""rlfound.reduction: the five reductions, their weights, turns/trajectories/tasks, shards.

References: the definitions written as Python sums over lists (tests.oracles.reduce_by_loops,
hierarchical_by_loops), central finite differences for every gradient claim, and explicit
batches built by tests.oracles.pack_sequences for the padding and repacking invariances.

Which change leaves which reduction unchanged (what the invariance tests check, exactly):

- masked columns (padding to a longer L, anything stored in them): every mode;
- permuting rows, or permuting positions within a row (loss and mask together): every mode;
- all-masked rows: "token-mean" and "seq-mean-token-sum-norm" always, every mode with
  ``empty_rows="skip"``; with ``"count"`` the three per-sequence modes scale by B / (B + k);
- repacking sequences into other rows (several per row, other offsets and gaps):
  "token-mean" and "seq-mean-token-sum-norm" (a token's weight does not depend on its row);
  the per-sequence modes treat a row as a sequence, so packing changes them;
- splitting the rows into shards: the global token mean of the shards' (sum, count) pairs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound.reduction import (
    MODES,
    aggregate_hierarchical,
    aggregate_loss,
    global_token_mean,
    hierarchical_weights,
    mean_of_local_means,
    shard_losses,
    shard_sums,
    token_weights,
)
from tests.oracles import (
    REDUCTION_MODES,
    central_differences,
    hierarchical_by_loops,
    pack_sequences,
    reduce_by_loops,
)

finite = st.floats(min_value=-10.0, max_value=10.0, allow_nan=False, allow_infinity=False)
junk = st.sampled_from([math.nan, math.inf, -math.inf, 1e300, 0.0])
PER_SEQUENCE = ("seq-mean-token-mean", "seq-mean-token-sum", "dr-grpo")
ROW_FREE = ("token-mean", "seq-mean-token-sum-norm")


@st.composite
def batches(draw, min_rows=1, max_rows=5, max_length=7):
    """(loss, mask) with junk (NaN, inf) at masked positions and possibly empty rows."""
    rows = draw(st.integers(min_rows, max_rows))
    length = draw(st.integers(1, max_length))
    values = draw(hnp.arrays(np.float64, (rows, length), elements=finite))
    mask = draw(hnp.arrays(np.bool_, (rows, length)))
    filler = draw(hnp.arrays(np.float64, (rows, length), elements=junk))
    return np.where(mask, values, filler), mask


@st.composite
def sequence_lists(draw, max_sequences=5, max_length=5):
    """A list of 1..max_sequences token-loss sequences of 1..max_length tokens."""
    count = draw(st.integers(1, max_sequences))
    return [draw(st.lists(finite, min_size=1, max_size=max_length)) for _ in range(count)]


def reduce_all(loss, mask, max_length, empty_rows="count"):
    return {
        mode: aggregate_loss(loss, mask, mode, max_length=max_length, empty_rows=empty_rows)
        for mode in MODES
    }


def test_the_modes_are_the_oracles_modes():
    assert MODES == REDUCTION_MODES


# --- aggregate_loss ----------------------------------------------------------------------------

# By hand: sequences (4) and (1, 1, 1) in rows of 3 positions, max_length 4.
# token-mean 7/4; seq-mean-token-mean (4 + 1)/2; seq-mean-token-sum (4 + 3)/2;
# sum-norm 7/4; dr-grpo 7/(2 * 4).
HAND_LOSS = np.array([[4.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
HAND_MASK = np.array([[True, False, False], [True, True, True]])
HAND_VALUES = {
    "token-mean": 1.75,
    "seq-mean-token-mean": 2.5,
    "seq-mean-token-sum": 3.5,
    "seq-mean-token-sum-norm": 1.75,
    "dr-grpo": 0.875,
}


@pytest.mark.parametrize("mode", MODES)
def test_aggregate_loss_by_hand(mode):
    assert aggregate_loss(HAND_LOSS, HAND_MASK, mode, max_length=4) == HAND_VALUES[mode]


def test_token_mean_is_the_default_mode():
    assert aggregate_loss(HAND_LOSS, HAND_MASK) == aggregate_loss(
        HAND_LOSS, HAND_MASK, "token-mean"
    )


@pytest.mark.equation("eq-token-mean", "eq-seq-mean", "eq-seq-sum", "eq-sum-norm", "eq-dr-grpo")
@given(
    batch=batches(),
    mode=st.sampled_from(MODES),
    empty_rows=st.sampled_from(["count", "skip"]),
    extra=st.integers(0, 3),
)
def test_aggregate_loss_equals_the_definition(batch, mode, empty_rows, extra):
    loss, mask = batch
    max_length = int(mask.sum(axis=1).max()) + 1 + extra
    expected = reduce_by_loops(loss, mask, mode, max_length, empty_rows)
    if expected is None:
        with pytest.raises(ValueError, match=r"^mask must select at least one token"):
            aggregate_loss(loss, mask, mode, max_length=max_length, empty_rows=empty_rows)
    else:
        got = aggregate_loss(loss, mask, mode, max_length=max_length, empty_rows=empty_rows)
        assert type(got) is float
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_an_empty_row_counts_as_a_sequence_of_loss_zero_or_is_skipped():
    loss = np.array([[2.0, 4.0], [7.0, 7.0]])
    mask = np.array([[True, True], [False, False]])
    assert aggregate_loss(loss, mask, "seq-mean-token-mean") == 1.5  # (3 + 0) / 2
    assert aggregate_loss(loss, mask, "seq-mean-token-mean", empty_rows="skip") == 3.0
    assert aggregate_loss(loss, mask, "seq-mean-token-sum") == 3.0  # (6 + 0) / 2
    assert aggregate_loss(loss, mask, "dr-grpo", max_length=3) == 1.0  # 6 / (2 * 3)
    assert aggregate_loss(loss, mask, "dr-grpo", max_length=3, empty_rows="skip") == 2.0


@pytest.mark.parametrize("mode", [*PER_SEQUENCE, "seq-mean-token-sum-norm"])
def test_an_all_masked_batch_is_zero_where_nothing_divides_by_zero(mode):
    """With empty rows counted, B >= 1 and the constant modes never divide by zero: the
    aggregate of no tokens is exactly 0, not NaN."""
    loss = np.full((2, 3), np.nan)
    assert aggregate_loss(loss, np.zeros((2, 3), bool), mode, max_length=3) == 0.0


@pytest.mark.parametrize(
    ("mode", "empty_rows"),
    [("token-mean", "count"), ("token-mean", "skip")] + [(m, "skip") for m in PER_SEQUENCE],
)
def test_an_all_masked_batch_raises_where_the_mode_would_divide_by_zero(mode, empty_rows):
    with pytest.raises(ValueError, match=r"^mask must select at least one token"):
        aggregate_loss(np.ones((2, 3)), np.zeros((2, 3)), mode, 3, empty_rows)
    with pytest.raises(ValueError, match=r"^mask must select at least one token"):
        token_weights(np.zeros((2, 3)), mode, 3, empty_rows)


def test_no_rows_raises_for_the_per_sequence_modes_and_is_zero_for_sum_norm():
    loss, mask = np.zeros((0, 4)), np.zeros((0, 4), dtype=bool)
    for mode in PER_SEQUENCE:
        with pytest.raises(ValueError, match=r"^mask must have at least one row"):
            aggregate_loss(loss, mask, mode, max_length=4)
    assert aggregate_loss(loss, mask, "seq-mean-token-sum-norm", max_length=4) == 0.0


@given(batch=batches(), mode=st.sampled_from(MODES))
def test_masked_positions_are_never_read(batch, mode):
    """Whatever sits at a masked position (NaN, inf, 1e300) the aggregate is that of zeros."""
    loss, mask = batch
    max_length = int(mask.sum(axis=1).max()) + 1
    if mode == "token-mean" and not mask.any():
        return
    zeros = np.where(mask, loss, 0.0)
    assert aggregate_loss(loss, mask, mode, max_length) == aggregate_loss(
        zeros, mask, mode, max_length
    )


def test_multiplying_by_the_mask_would_leak_nan_and_the_library_does_not():
    loss = np.array([[1.0, -np.inf]])  # a padded log-probability
    mask = np.array([[True, False]])
    with np.errstate(invalid="ignore"):
        assert np.isnan(np.sum(loss * mask))  # the bug np.where avoids: 0 * inf = nan
    assert aggregate_loss(loss, mask) == 1.0


def test_max_length_may_be_shorter_than_the_array_but_not_than_a_sequence():
    loss = np.ones((2, 10))
    mask = np.zeros((2, 10), dtype=bool)
    mask[0, :3] = mask[1, 5:9] = True
    assert aggregate_loss(loss, mask, "dr-grpo", max_length=4) == 7 / 8
    with pytest.raises(ValueError, match=r"^max_length must be at least .* \(row 1 has 4\); got 3"):
        aggregate_loss(loss, mask, "dr-grpo", max_length=3)


def test_modes_without_a_constant_do_not_use_max_length():
    for mode in ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum"):
        assert aggregate_loss(HAND_LOSS, HAND_MASK, mode, max_length=9) == HAND_VALUES[mode]


# --- token_weights -----------------------------------------------------------------------------


def test_token_weights_by_hand():
    # Lengths 1 and 3, B = 2, N = 4, L_max = 4.
    expected = {
        "token-mean": [[1 / 4, 0, 0], [1 / 4, 1 / 4, 1 / 4]],
        "seq-mean-token-mean": [[1 / 2, 0, 0], [1 / 6, 1 / 6, 1 / 6]],
        "seq-mean-token-sum": [[1 / 2, 0, 0], [1 / 2, 1 / 2, 1 / 2]],
        "seq-mean-token-sum-norm": [[1 / 4, 0, 0], [1 / 4, 1 / 4, 1 / 4]],
        "dr-grpo": [[1 / 8, 0, 0], [1 / 8, 1 / 8, 1 / 8]],
    }
    for mode in MODES:
        got = token_weights(HAND_MASK, mode, max_length=4)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, expected[mode], rtol=1e-15)


@pytest.mark.equation("eq-token-weights")
@given(
    batch=batches(),
    mode=st.sampled_from(MODES),
    empty_rows=st.sampled_from(["count", "skip"]),
)
def test_the_aggregate_is_the_weighted_sum_of_the_losses(batch, mode, empty_rows):
    loss, mask = batch
    max_length = int(mask.sum(axis=1).max()) + 2
    if reduce_by_loops(loss, mask, mode, max_length, empty_rows) is None:
        return
    weights = token_weights(mask, mode, max_length, empty_rows)
    assert np.all(weights[~mask] == 0.0)
    assert np.all(weights >= 0.0)
    expected = aggregate_loss(loss, mask, mode, max_length, empty_rows)
    got = float(np.sum(weights * np.where(mask, loss, 0.0)))
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("empty_rows", ["count", "skip"])
def test_the_weights_are_the_gradient_and_exactly_zero_on_masked_tokens(mode, empty_rows):
    rng = np.random.default_rng(8)
    loss = rng.normal(size=(4, 6))
    mask = rng.random((4, 6)) < 0.6
    mask[2] = False  # an empty row
    mask[0, 0] = True
    gradient = central_differences(
        lambda x: aggregate_loss(x, mask, mode, max_length=7, empty_rows=empty_rows), loss
    )
    np.testing.assert_allclose(
        gradient, token_weights(mask, mode, 7, empty_rows), rtol=1e-7, atol=1e-10
    )
    # A masked token's loss is never read, so its difference quotient is exactly 0.
    assert np.all(gradient[~mask] == 0.0)


def test_sequence_totals_of_the_weights():
    """Σ_j w_ij: L_i/N, 1/B, L_i/B, L_i/L_max, L_i/(B L_max) for lengths 1, 3 and 4 (N = 8)."""
    mask = np.zeros((3, 5), dtype=bool)
    mask[0, :1] = mask[1, :3] = mask[2, 1:5] = True
    lengths = np.array([1, 3, 4])
    expected = {
        "token-mean": lengths / 8,
        "seq-mean-token-mean": np.full(3, 1 / 3),
        "seq-mean-token-sum": lengths / 3,
        "seq-mean-token-sum-norm": lengths / 5,
        "dr-grpo": lengths / 15,
    }
    for mode in MODES:
        totals = token_weights(mask, mode, max_length=5).sum(axis=1)
        np.testing.assert_allclose(totals, expected[mode], rtol=1e-14)


# --- invariances -------------------------------------------------------------------------------


@given(
    batch=batches(), pad=st.integers(1, 4), fill=junk, empty_rows=st.sampled_from(["count", "skip"])
)
def test_padding_columns_changes_no_mode(batch, pad, fill, empty_rows):
    loss, mask = batch
    max_length = int(mask.sum(axis=1).max()) + 1
    padded_loss = np.concatenate([loss, np.full((loss.shape[0], pad), fill)], axis=1)
    padded_mask = np.concatenate([mask, np.zeros((mask.shape[0], pad), bool)], axis=1)
    for mode in MODES:
        if reduce_by_loops(loss, mask, mode, max_length, empty_rows) is None:
            continue
        # Equal up to rounding: NumPy's pairwise sums group the terms by the array's length.
        padded = aggregate_loss(padded_loss, padded_mask, mode, max_length, empty_rows)
        plain = aggregate_loss(loss, mask, mode, max_length, empty_rows)
        assert padded == pytest.approx(plain, rel=1e-13, abs=1e-13)


@given(batch=batches(), extra=st.integers(1, 3), fill=junk)
def test_all_masked_rows_change_only_the_per_sequence_modes_that_count_them(batch, extra, fill):
    loss, mask = batch
    rows = loss.shape[0]
    max_length = int(mask.sum(axis=1).max()) + 1
    more_loss = np.concatenate([loss, np.full((extra, loss.shape[1]), fill)])
    more_mask = np.concatenate([mask, np.zeros((extra, mask.shape[1]), bool)])
    for mode in MODES:
        for empty_rows in ("count", "skip"):
            if reduce_by_loops(loss, mask, mode, max_length, empty_rows) is None:
                continue
            before = aggregate_loss(loss, mask, mode, max_length, empty_rows)
            after = aggregate_loss(more_loss, more_mask, mode, max_length, empty_rows)
            if mode in ROW_FREE or empty_rows == "skip":
                assert after == pytest.approx(before, rel=1e-13, abs=1e-13)
            else:  # B grows from rows to rows + extra; the sum over sequences does not change
                assert after == pytest.approx(before * rows / (rows + extra), rel=1e-12)


@given(batch=batches(), data=st.data())
def test_permuting_rows_and_positions_within_rows_changes_no_mode(batch, data):
    loss, mask = batch
    rows, length = loss.shape
    max_length = int(mask.sum(axis=1).max()) + 1
    row_order = data.draw(st.permutations(range(rows)))
    columns = np.array([data.draw(st.permutations(range(length))) for _ in range(rows)])
    shuffled_loss = np.take_along_axis(loss[row_order], columns, axis=1)
    shuffled_mask = np.take_along_axis(mask[row_order], columns, axis=1)
    for mode in MODES:
        if reduce_by_loops(loss, mask, mode, max_length) is None:
            continue
        assert aggregate_loss(shuffled_loss, shuffled_mask, mode, max_length) == pytest.approx(
            aggregate_loss(loss, mask, mode, max_length), rel=1e-12, abs=1e-12
        )


@given(sequences=sequence_lists(), data=st.data())
def test_repacking_sequences_leaves_the_globally_normalized_loss_unchanged(sequences, data):
    """The section-19 invariant: padding or repacking the same examples (one per row, or
    several per row, in any order, with any offsets and gaps) leaves the token mean, and the
    sum over a constant, unchanged."""
    count = len(sequences)
    total = sum(map(len, sequences))
    one_per_row = pack_sequences(sequences, list(range(count)), count, max(map(len, sequences)))
    num_rows = data.draw(st.integers(1, count))
    row_of = data.draw(st.lists(st.integers(0, num_rows - 1), min_size=count, max_size=count))
    order = data.draw(st.permutations(range(count)))
    gap, offset = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))
    packed = pack_sequences(
        [sequences[k] for k in order],
        [row_of[k] for k in order],
        num_rows,
        length=offset + total + gap * count,
        gap=gap,
        offset=offset,
    )
    for mode in ROW_FREE:
        assert aggregate_loss(*packed, mode, max_length=total) == pytest.approx(
            aggregate_loss(*one_per_row, mode, max_length=total), rel=1e-12, abs=1e-12
        )


def test_packing_two_sequences_into_one_row_changes_the_per_sequence_modes():
    """A row is a sequence for the per-sequence modes: packing is not a neutral change."""
    sequences = [[2.0], [0.0, 0.0, 0.0], [4.0, 4.0]]
    one_per_row = pack_sequences(sequences, [0, 1, 2], 3, 3)
    packed = pack_sequences(sequences, [0, 0, 1], 2, 4)
    for mode in PER_SEQUENCE:
        before = aggregate_loss(*one_per_row, mode, max_length=4)
        after = aggregate_loss(*packed, mode, max_length=4)
        assert before != pytest.approx(after)
    assert aggregate_loss(*packed) == aggregate_loss(*one_per_row) == 10 / 6


# --- aggregate_hierarchical and hierarchical_weights -------------------------------------------


@st.composite
def multi_turn_batches(draw):
    """(loss, mask, turn_ids, task_ids): turns labeled within rows, -1 on some masked tokens."""
    loss, mask = draw(batches(max_rows=6, max_length=8))
    rows, length = loss.shape
    turn_ids = draw(hnp.arrays(np.int64, (rows, length), elements=st.integers(0, length - 1)))
    unassigned = draw(hnp.arrays(np.bool_, (rows, length))) & ~mask
    turn_ids = np.where(unassigned, -1, turn_ids)
    task_ids = draw(hnp.arrays(np.int64, (rows,), elements=st.integers(0, 3)))
    return loss, mask, turn_ids, task_ids


def test_hierarchical_by_hand():
    # Task 0: trajectory (1, 3 | 8) -> (2 + 8)/2 = 5 and trajectory (2, 2) -> 2, mean 3.5;
    # task 1: 6. Mean over tasks 4.75.
    loss = [[1.0, 3.0, 8.0], [2.0, 2.0, 0.0], [6.0, 0.0, 0.0]]
    mask = [[1, 1, 1], [1, 1, 0], [1, 0, 0]]
    turns = [[0, 0, 1], [0, 0, -1], [0, -1, -1]]
    assert aggregate_hierarchical(loss, mask, turns, [0, 0, 1]) == 4.75
    np.testing.assert_allclose(
        hierarchical_weights(mask, turns, [0, 0, 1]),
        [[1 / 16, 1 / 16, 1 / 8], [1 / 8, 1 / 8, 0.0], [1 / 2, 0.0, 0.0]],
        rtol=1e-15,
    )


@pytest.mark.equation("eq-hierarchical")
@given(batch=multi_turn_batches())
def test_hierarchical_equals_nested_means_by_dictionary(batch):
    loss, mask, turn_ids, task_ids = batch
    expected = hierarchical_by_loops(loss, mask, turn_ids, task_ids)
    if expected is None:
        with pytest.raises(ValueError, match=r"^mask must select at least one token"):
            aggregate_hierarchical(loss, mask, turn_ids, task_ids)
        return
    assert aggregate_hierarchical(loss, mask, turn_ids, task_ids) == pytest.approx(
        expected, rel=1e-12, abs=1e-12
    )


@pytest.mark.slow
@given(batch=multi_turn_batches())
def test_hierarchical_weights_reproduce_the_aggregate_and_give_each_task_the_same_share(batch):
    loss, mask, turn_ids, task_ids = batch
    if not mask.any():
        return
    weights = hierarchical_weights(mask, turn_ids, task_ids)
    assert np.all(weights[~mask] == 0.0)
    assert weights.sum() == pytest.approx(1.0, rel=1e-12)
    active_tasks = np.unique(task_ids[mask.any(axis=1)])
    for task in active_tasks:
        share = weights[task_ids == task].sum()
        assert share == pytest.approx(1.0 / len(active_tasks), rel=1e-12)
    got = float(np.sum(weights * np.where(mask, loss, 0.0)))
    expected = aggregate_hierarchical(loss, mask, turn_ids, task_ids)
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.equation("eq-hierarchical")
def test_hierarchical_weights_are_its_gradient():
    rng = np.random.default_rng(3)
    loss = rng.normal(size=(4, 6))
    mask = rng.random((4, 6)) < 0.7
    turn_ids = rng.integers(0, 3, size=(4, 6))
    task_ids = np.array([5, 1, 5, 5])
    gradient = central_differences(
        lambda x: aggregate_hierarchical(x, mask, turn_ids, task_ids), loss
    )
    np.testing.assert_allclose(
        gradient, hierarchical_weights(mask, turn_ids, task_ids), rtol=1e-7, atol=1e-10
    )
    assert np.all(gradient[~mask] == 0.0)


@given(batch=batches())
def test_without_turns_and_tasks_hierarchical_is_the_mean_over_nonempty_sequences(batch):
    loss, mask = batch
    if not mask.any():
        return
    assert aggregate_hierarchical(loss, mask) == pytest.approx(
        aggregate_loss(loss, mask, "seq-mean-token-mean", empty_rows="skip"), rel=1e-12, abs=1e-12
    )


@given(batch=multi_turn_batches(), data=st.data())
def test_hierarchical_is_unchanged_by_row_order_padding_empty_rows_and_relabeling(batch, data):
    loss, mask, turn_ids, task_ids = batch
    if not mask.any():
        return
    before = aggregate_hierarchical(loss, mask, turn_ids, task_ids)
    rows, length = loss.shape
    order = data.draw(st.permutations(range(rows)))
    task_names = data.draw(st.permutations(range(10, 14)))  # a bijection of the task labels
    # Rows in another order, turn labels t -> L - 1 - t, one empty row (task 99) and two
    # padding columns holding inf.
    new_loss = np.pad(loss[order], ((0, 1), (0, 2)), constant_values=np.inf)
    new_mask = np.pad(mask[order], ((0, 1), (0, 2)), constant_values=False)
    turns = np.where(turn_ids[order] < 0, -1, (length - 1) - turn_ids[order])
    new_turns = np.pad(turns, ((0, 1), (0, 2)), constant_values=-1)
    new_tasks = np.array([task_names[t] for t in task_ids[order]] + [99])
    after = aggregate_hierarchical(new_loss, new_mask, new_turns, new_tasks)
    assert after == pytest.approx(before, rel=1e-12, abs=1e-12)


def test_a_verbose_turn_a_long_trajectory_and_a_large_task_do_not_gain_weight():
    """Task 0 has two trajectories; the first has a 1-token turn and a 5-token turn."""
    mask = np.zeros((3, 6), dtype=bool)
    mask[0, :6] = True
    mask[1, :2] = True
    mask[2, :1] = True
    turn_ids = np.zeros((3, 6), dtype=int)
    turn_ids[0, 1:] = 1
    weights = hierarchical_weights(mask, turn_ids, task_ids=[0, 0, 1])
    assert weights[0, 0] == pytest.approx(weights[0, 1:].sum())  # turns: equal shares
    assert weights[0].sum() == pytest.approx(weights[1].sum())  # trajectories: equal shares
    assert weights[:2].sum() == pytest.approx(weights[2].sum()) == 0.5  # tasks: equal shares


# --- shards ------------------------------------------------------------------------------------


@given(batch=batches(max_rows=8), data=st.data())
def test_the_global_token_mean_of_any_split_equals_the_concatenated_batch(batch, data):
    """Section 19: distributed reduction (sum of numerators over sum of denominators) equals
    the single-process concatenated batch, for every split into shards, empty ones included."""
    loss, mask = batch
    if not mask.any():
        return
    num_shards = data.draw(st.integers(1, 5))
    shards = data.draw(
        hnp.arrays(np.int64, (loss.shape[0],), elements=st.integers(0, num_shards - 1))
    )
    sums, counts = shard_sums(loss, mask, shards, num_shards)
    assert sums.shape == counts.shape == (num_shards,)
    expected = aggregate_loss(loss, mask, "token-mean")
    assert global_token_mean(sums, counts) == pytest.approx(expected, rel=1e-12, abs=1e-12)
    for combine, together in (("sum", np.sum), ("mean", np.mean)):
        terms = shard_losses(sums, counts, combine)
        assert float(together(terms)) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_shard_sums_by_hand():
    loss = np.array([[4.0, np.nan], [1.0, 1.0], [2.0, -np.inf]])
    mask = np.array([[1, 0], [1, 1], [1, 0]])
    sums, counts = shard_sums(loss, mask, [2, 0, 0], 4)
    np.testing.assert_array_equal(sums, [4.0, 0.0, 4.0, 0.0])
    np.testing.assert_array_equal(counts, [3.0, 0.0, 1.0, 0.0])


@pytest.mark.equation("eq-shard-mismatch")
@given(
    counts=hnp.arrays(np.float64, st.integers(1, 6), elements=st.integers(1, 50).map(float)),
    data=st.data(),
)
def test_the_mismatch_of_local_means_is_minus_the_covariance_over_the_mean_count(counts, data):
    means = data.draw(hnp.arrays(np.float64, counts.shape, elements=finite))
    sums = means * counts
    covariance = np.mean((counts - counts.mean()) * (means - means.mean()))
    mismatch = mean_of_local_means(sums, counts) - global_token_mean(sums, counts)
    assert mismatch == pytest.approx(-covariance / counts.mean(), rel=1e-9, abs=1e-9)


def test_local_means_agree_with_the_global_mean_for_equal_counts():
    sums = np.array([3.0, -1.0, 7.5])
    counts = np.full(3, 4.0)
    assert mean_of_local_means(sums, counts) == pytest.approx(global_token_mean(sums, counts))


def test_local_means_over_uneven_shards_by_hand():
    # Shard 0: one token of loss 4; shard 1: three tokens summing to 4. Global 8 / 4 = 2;
    # local means 4 and 4/3, their average 8/3. With n = (1, 3), mu = (4, 4/3), n̄ = 2:
    # Cov(n, mu) = ((-1)(4 - 8/3) + (1)(4/3 - 8/3)) / 2 = -4/3, and -Cov / n̄ = 2/3.
    assert mean_of_local_means([4.0, 4.0], [1.0, 3.0]) == pytest.approx(8 / 3)
    assert global_token_mean([4.0, 4.0], [1.0, 3.0]) == 2.0
    assert 8 / 3 - 2 == pytest.approx(-(-4 / 3) / 2)


@pytest.mark.equation("eq-shard-fix")
def test_gradient_accumulation_with_the_global_count_gives_token_mean_weights():
    """Three micro-batches of one batch; each differentiates sum / N_global. The summed
    gradient is the token-mean weight matrix of the whole batch; dividing each micro-batch
    by its own count and averaging (what a per-micro-batch mean does) is not."""
    rng = np.random.default_rng(5)
    loss = rng.normal(size=(6, 5))
    mask = rng.random((6, 5)) < 0.5
    mask[:, 0] = True
    micro = np.array([0, 0, 1, 2, 2, 2])
    total = mask.sum()

    def accumulated(x, per_micro_batch_mean):
        sums, counts = shard_sums(x, mask, micro, 3)
        if per_micro_batch_mean:
            return mean_of_local_means(sums, counts)
        return float(shard_losses(sums, counts, "sum").sum())

    right = central_differences(lambda x: accumulated(x, False), loss)
    np.testing.assert_allclose(right, token_weights(mask, "token-mean"), atol=1e-10)
    np.testing.assert_allclose(right[mask], 1.0 / total, rtol=1e-7)
    wrong = central_differences(lambda x: accumulated(x, True), loss)
    counts = np.bincount(micro, weights=mask.sum(axis=1))
    np.testing.assert_allclose(
        wrong[mask], (1.0 / (3 * counts[micro]))[:, None].repeat(5, 1)[mask], rtol=1e-7
    )
    assert not np.allclose(wrong, right)


@pytest.mark.equation("eq-shard-fix")
def test_data_parallel_losses_scale_by_the_number_of_workers():
    terms = shard_losses([4.0, 0.0, 6.0], [2.0, 0.0, 3.0], combine="mean")
    np.testing.assert_allclose(terms, [3 * 4 / 5, 0.0, 3 * 6 / 5])
    assert float(np.mean(terms)) == pytest.approx(2.0)


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: aggregate_loss([[1.0]], [[1]], "sum"), "mode"),
        (lambda: aggregate_loss([[1.0]], [[1, 0]]), "mask"),
        (lambda: aggregate_loss([[1.0]], [[2]]), "mask"),
        (lambda: aggregate_loss([[1.0]], [[1]], "dr-grpo"), "max_length"),
        (lambda: aggregate_loss([[1.0, 1.0]], [[1, 1]], "dr-grpo", 1), "max_length"),
        (lambda: aggregate_loss([[np.nan]], [[1]]), "loss"),
        (lambda: aggregate_hierarchical([[1.0]], [[1]], [[-1]]), "turn_ids"),
        (lambda: global_token_mean([1.0, 1.0], [1.0, -1.0]), "counts"),
        (lambda: mean_of_local_means([1.0, 0.0], [1.0, 0.0]), "counts"),
        (lambda: shard_losses([1.0], [1.0], "max"), "combine"),
        (lambda: shard_sums([[1.0]], [[1]], [1], 1), "shards"),
    ],
)
def test_bad_input_raises_a_value_error_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        call()
