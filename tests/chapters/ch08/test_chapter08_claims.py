"""Claims made in chapter 8 (loss normalization), recomputed independently.

Each test rebuilds one number, table or figure property the chapter's text relies on, with
the chapter's own inputs, by a route that shares no code with the library: the reductions as
Python sums over lists and the hierarchical average as nested dictionaries
(tests.oracles.reduce_by_loops, hierarchical_by_loops), token weights as central differences
of those sums, and the three-style task by enumeration with the first token's weight written
from the definitions (tests.oracles.style_update_by_enumeration).

Sections: the hand batch; the four responses (push per token and per response); the
three-style task (eq-effective-objective, the table and fig-length-bias); the multi-turn
batch (eq-hierarchical, fig-multi-turn-weights); the invariance table; the shards and the
micro-batches (eq-shard-mismatch, eq-shard-fix); the check for understanding.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.oracles import (
    MULTI_TURN_LAYOUT,
    REDUCTION_MODES,
    central_differences,
    hierarchical_by_loops,
    layout_masks,
    reduce_by_loops,
    softmax_rows,
    style_update_by_enumeration,
)

# --- the hand batch ------------------------------------------------------------------------------

HAND_LOSS = [[4.0, math.nan, -math.inf], [1.0, 1.0, 1.0]]
HAND_MASK = [[1, 0, 0], [1, 1, 1]]


def test_hand_batch_values():
    got = {
        mode: reduce_by_loops(HAND_LOSS, HAND_MASK, mode, max_length=4) for mode in REDUCTION_MODES
    }
    assert got == {
        "token-mean": 1.75,
        "seq-mean-token-mean": 2.5,
        "seq-mean-token-sum": 3.5,
        "seq-mean-token-sum-norm": 1.75,
        "dr-grpo": 0.875,
    }


def weights_by_differences(mode, mask, max_length):
    """∂ aggregate / ∂ loss by central differences of the Python-sum definition."""
    mask = np.asarray(mask)
    return central_differences(
        lambda x: reduce_by_loops(x, mask, mode, max_length), np.zeros(mask.shape)
    )


def test_hand_batch_weights():
    expected = {
        "token-mean": (0.25, 0.25),
        "seq-mean-token-mean": (0.5, 1 / 6),
        "seq-mean-token-sum": (0.5, 0.5),
        "seq-mean-token-sum-norm": (0.25, 0.25),
        "dr-grpo": (0.125, 0.125),
    }
    for mode, (first, second) in expected.items():
        weights = weights_by_differences(mode, HAND_MASK, 4)
        np.testing.assert_allclose(weights[0], [first, 0.0, 0.0], atol=1e-9)
        np.testing.assert_allclose(weights[1], [second] * 3, atol=1e-9)


# --- four responses: the push per token and per response -----------------------------------------

FOUR_LENGTHS = [4, 16, 4, 16]
FOUR_ADVANTAGES = np.array([1.0, 1.0, -1.0, -1.0])
FOUR_MASK = (np.arange(20) < np.array(FOUR_LENGTHS)[:, None]).astype(int)


def test_push_per_token_and_per_response():
    per_token = {
        "token-mean": [1 / 40, 1 / 40],
        "seq-mean-token-mean": [1 / 16, 1 / 64],
        "seq-mean-token-sum": [1 / 4, 1 / 4],
        "seq-mean-token-sum-norm": [1 / 20, 1 / 20],
        "dr-grpo": [1 / 80, 1 / 80],
    }
    for mode, (short, long) in per_token.items():
        weights = weights_by_differences(mode, FOUR_MASK, 20)
        push = FOUR_ADVANTAGES[:, None] * weights
        np.testing.assert_allclose(push[:, 0], [short, long, -short, -long], atol=1e-9)
        totals = push.sum(axis=1)
        expected = FOUR_ADVANTAGES * np.array([4 * short, 16 * long, 4 * short, 16 * long])
        np.testing.assert_allclose(totals, expected, atol=1e-8)
    # "each token of the long wrong answer is pushed down four times less"
    assert per_token["seq-mean-token-mean"][0] / per_token["seq-mean-token-mean"][1] == 4
    # The sequence mean gives every response the same total, 1/4.
    np.testing.assert_allclose(
        weights_by_differences("seq-mean-token-mean", FOUR_MASK, 20).sum(axis=1), 0.25, atol=1e-8
    )


# --- the three-style task -------------------------------------------------------------------------

STYLE_PROBS = [1 / 3, 1 / 3, 1 / 3]
STYLE_LENGTHS = [2, 5, 20]
CORRECT = [0.2, 0.6, 0.3]
GROUP, BUDGET = 4, 20


def style_update(mode, correct=CORRECT):
    return style_update_by_enumeration(STYLE_PROBS, STYLE_LENGTHS, correct, GROUP, mode, BUDGET)


def true_style_gradient(correct=CORRECT):
    """∇_θ Σ_k softmax(θ)_k c_k at θ = 0, by central differences."""
    return central_differences(lambda t: softmax_rows(t) @ np.asarray(correct), np.zeros(3))


def test_success_rate_and_true_gradient():
    assert np.dot(STYLE_PROBS, CORRECT) == pytest.approx(0.3667, abs=5e-5)
    np.testing.assert_allclose(true_style_gradient(), [-0.05556, 0.07778, -0.02222], atol=5e-6)


@pytest.mark.parametrize(
    ("mode", "factor"),
    [("seq-mean-token-sum", 1.0), ("seq-mean-token-sum-norm", 0.2), ("dr-grpo", 0.05)],
)
def test_constant_weights_follow_the_gradient_up_to_a_factor(mode, factor):
    np.testing.assert_allclose(style_update(mode), factor * true_style_gradient(), atol=1e-9)


def test_the_table_of_expected_updates():
    np.testing.assert_allclose(style_update("token-mean"), [-0.01000, 0.01211, -0.00211], atol=5e-6)
    np.testing.assert_allclose(
        style_update("seq-mean-token-mean"), [-0.02333, 0.02000, 0.00333], atol=5e-6
    )


def test_token_mean_pushes_against_rambling_about_half_as_hard():
    update, gradient = style_update("token-mean"), true_style_gradient()
    assert update[2] / update[0] == pytest.approx(0.211, abs=5e-4)
    assert gradient[2] / gradient[0] == pytest.approx(0.400, abs=5e-4)
    cosine = update @ gradient / np.linalg.norm(update) / np.linalg.norm(gradient)
    assert cosine == pytest.approx(0.993, abs=5e-4)


def test_sequence_mean_raises_rambling_although_it_is_worse_than_average():
    update, gradient = style_update("seq-mean-token-mean"), true_style_gradient()
    assert gradient[2] < 0 < update[2]
    assert update[2] / update[0] == pytest.approx(-0.143, abs=5e-4)
    cosine = update @ gradient / np.linalg.norm(update) / np.linalg.norm(gradient)
    assert cosine == pytest.approx(0.916, abs=5e-4)
    # "a wrong ramble is penalized a tenth as much per token as a wrong guess"
    assert (1 / (GROUP * 20)) / (1 / (GROUP * 2)) == pytest.approx(0.1)


@pytest.mark.equation("eq-effective-objective")
@pytest.mark.parametrize(
    ("mode", "f"),
    [
        ("seq-mean-token-mean", lambda length: 1 / length),
        ("seq-mean-token-sum", lambda length: 1.0),
        ("seq-mean-token-sum-norm", lambda length: GROUP / BUDGET),
        ("dr-grpo", lambda length: 1 / BUDGET),
    ],
)
def test_effective_objective_is_the_gradient_of_reward_minus_j_times_f(mode, f):
    """eq-effective-objective: E[update] = ∇ E[(R - J) f(L)] with J held fixed."""
    success = float(np.dot(STYLE_PROBS, CORRECT))
    values = [(c - success) * f(length) for c, length in zip(CORRECT, STYLE_LENGTHS, strict=True)]
    gradient = central_differences(lambda t: softmax_rows(t) @ np.array(values), np.zeros(3))
    np.testing.assert_allclose(style_update(mode), gradient, atol=1e-9)


def test_sign_of_the_ramble_update_is_that_of_twice_g_ramble_minus_the_others():
    for c_ramble in (0.0, 0.15, 0.3, 0.5):
        correct = [0.2, 0.6, c_ramble]
        success = np.mean(correct)
        g = [(c - success) / length for c, length in zip(correct, STYLE_LENGTHS, strict=True)]
        update = style_update("seq-mean-token-mean", correct)[2]
        assert update == pytest.approx((2 * g[2] - g[0] - g[1]) / 9, abs=1e-12)


def test_figure_crossings_at_two_tenths_and_four_tenths():
    """fig-length-bias: the sequence mean changes sign at c = 0.2, the gradient at 0.4, and
    the token mean just below 0.4."""
    for mode, crossing in (("seq-mean-token-mean", 0.2), ("seq-mean-token-sum", 0.4)):
        assert style_update(mode, [0.2, 0.6, crossing - 0.01])[2] < 0
        assert style_update(mode, [0.2, 0.6, crossing + 0.01])[2] > 0
        assert style_update(mode, [0.2, 0.6, crossing])[2] == pytest.approx(0.0, abs=1e-12)
    assert style_update("token-mean", [0.2, 0.6, 0.39])[2] < 0
    assert style_update("token-mean", [0.2, 0.6, 0.40])[2] > 0


# --- the multi-turn batch ------------------------------------------------------------------------


def multi_turn_batch():
    """The chapter's four trajectories, laid out by hand (O: observation tokens)."""
    mask, turns = layout_masks(MULTI_TURN_LAYOUT)
    return mask, turns, [0, 0, 0, 1]


def hierarchical_weights_by_differences():
    mask, turns, tasks = multi_turn_batch()
    return central_differences(
        lambda x: hierarchical_by_loops(x, mask, turns, tasks), np.zeros(mask.shape)
    )


def test_token_mean_shares_of_the_multi_turn_batch():
    mask, _, _ = multi_turn_batch()
    assert mask.sum() == 23 and mask[:3].sum() == 20
    weights = weights_by_differences("token-mean", mask, 14)
    assert weights[:3].sum() == pytest.approx(20 / 23, abs=1e-8)
    np.testing.assert_allclose(weights[:3].sum(axis=1), [10 / 23, 6 / 23, 4 / 23], atol=1e-8)


def test_sequence_mean_gives_the_first_task_three_quarters():
    mask, _, _ = multi_turn_batch()
    weights = weights_by_differences("seq-mean-token-mean", mask, 14)
    assert weights[:3].sum() == pytest.approx(0.75, abs=1e-8)
    np.testing.assert_allclose(
        [weights[0, 5], weights[1, 0], weights[3, 0]], [1 / 40, 1 / 24, 1 / 12], atol=1e-8
    )


def test_hierarchical_shares_and_token_weights():
    mask, _, _ = multi_turn_batch()
    weights = hierarchical_weights_by_differences()
    assert weights[:3].sum() == pytest.approx(0.5, abs=1e-8)
    np.testing.assert_allclose(weights[:3].sum(axis=1), 1 / 6, atol=1e-8)
    verbose, terse, second_task = weights[0, 5], weights[1, 0], weights[3, 0]
    np.testing.assert_allclose([verbose, terse, second_task], [1 / 96, 1 / 36, 1 / 6], atol=1e-8)
    assert second_task / verbose == pytest.approx(16)
    assert np.all(weights[mask == 0] == 0.0)


# --- the invariance table -------------------------------------------------------------------------


def four_batch():
    rng = np.random.default_rng(0)
    loss = np.where(FOUR_MASK == 1, rng.normal(size=FOUR_MASK.shape), np.nan)
    return loss, FOUR_MASK.copy()


def changed_batches(loss, mask):
    """The chapter's four changes, written with explicit loops over rows."""
    padded = (
        [list(row) + [math.inf] * 7 for row in loss],
        [list(row) + [0] * 7 for row in mask],
    )
    empty = ([*map(list, loss), [0.0] * 20, [0.0] * 20], [*map(list, mask), [0] * 20, [0] * 20])
    order = [2, 0, 3, 1]
    shifted = (
        [[*[math.nan] * 3, *loss[i][:17]] for i in order],
        [[0, 0, 0, *mask[i][:17]] for i in order],
    )
    packed_loss = [list(loss[0]), list(loss[1]), list(loss[3])]
    packed_mask = [list(mask[0]), list(mask[1]), list(mask[3])]
    packed_loss[0][4:8] = loss[2][:4]
    packed_mask[0][4:8] = [1, 1, 1, 1]
    return {
        "pad columns": padded,
        "add empty rows": empty,
        "reorder and shift": shifted,
        "pack two per row": (packed_loss, packed_mask),
    }


@pytest.mark.parametrize(
    ("mode", "empty_rows", "expected"),
    [
        ("token-mean", "count", [True, True, True, True]),
        ("seq-mean-token-mean", "count", [True, False, True, False]),
        ("seq-mean-token-mean", "skip", [True, True, True, False]),
        ("seq-mean-token-sum", "count", [True, False, True, False]),
        ("seq-mean-token-sum", "skip", [True, True, True, False]),
        ("seq-mean-token-sum-norm", "count", [True, True, True, True]),
        ("dr-grpo", "count", [True, False, True, False]),
        ("dr-grpo", "skip", [True, True, True, False]),
    ],
)
def test_the_invariance_table(mode, empty_rows, expected):
    loss, mask = four_batch()
    before = reduce_by_loops(loss, mask, mode, 20, empty_rows)
    got = [
        math.isclose(reduce_by_loops(*batch, mode, 20, empty_rows), before, rel_tol=1e-13)
        for batch in changed_batches(loss, mask).values()
    ]
    assert got == expected


# --- shards and micro-batches ---------------------------------------------------------------------

SHARD_LENGTHS = [600, 40, 20, 20, 15, 25, 10, 30]
SHARD_LOSSES = [0.1, 0.3, 0.35, 0.25, 0.2, 0.15, 0.1, 0.2]


def grouped(assignment, num_groups):
    """Loss sums and token counts per group, by a loop over the responses."""
    sums, counts = [0.0] * num_groups, [0] * num_groups
    for length, loss, group in zip(SHARD_LENGTHS, SHARD_LOSSES, assignment, strict=True):
        sums[group] += length * loss
        counts[group] += length
    return np.array(sums), np.array(counts, dtype=float)


def test_uneven_workers():
    sums, counts = grouped([0, 1, 1, 1, 2, 2, 2, 2], 3)
    np.testing.assert_array_equal(counts, [600, 80, 80])
    means = sums / counts
    np.testing.assert_allclose(means, [0.1, 0.3, 0.171875])
    token_mean = sums.sum() / counts.sum()
    mean_of_means = means.mean()
    assert token_mean == pytest.approx(0.12862, abs=5e-6)
    assert mean_of_means == pytest.approx(0.19063, abs=5e-6)
    assert mean_of_means / token_mean == pytest.approx(1.482, abs=5e-4)  # "about 1.5 times"
    covariance = np.mean((counts - counts.mean()) * (means - means.mean()))
    assert mean_of_means - token_mean == pytest.approx(-covariance / counts.mean(), abs=1e-12)


def test_micro_batches():
    sums, counts = grouped([0, 0, 1, 1, 2, 2, 3, 3], 4)
    np.testing.assert_array_equal(counts, [640, 40, 40, 40])
    assert (sums / counts.sum()).sum() == pytest.approx(0.12862, abs=5e-6)
    assert 1 / counts.sum() == pytest.approx(0.0013, abs=5e-5)
    local = 1 / (4 * counts)
    np.testing.assert_allclose(local, [0.0004, 0.0063, 0.0063, 0.0063], atol=5e-5)
    assert local[0] / local[3] == pytest.approx(0.0625)


# --- the check for understanding -----------------------------------------------------------------


def test_check_for_understanding():
    mask = (np.arange(10) < np.array([1, 9])[:, None]).astype(int)
    advantages = np.array([1.0, -1.0])
    sequence = advantages[:, None] * weights_by_differences("seq-mean-token-mean", mask, 10)
    np.testing.assert_allclose([sequence[0, 0], sequence[1, 0]], [0.5, -1 / 18], atol=1e-8)
    np.testing.assert_allclose(sequence.sum(axis=1), [0.5, -0.5], atol=1e-8)
    constant = advantages[:, None] * weights_by_differences("dr-grpo", mask, 10)
    np.testing.assert_allclose([constant[0, 0], constant[1, 0]], [0.05, -0.05], atol=1e-8)
    np.testing.assert_allclose(constant.sum(axis=1), [0.05, -0.45], atol=1e-8)
