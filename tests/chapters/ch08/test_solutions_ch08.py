"""The reference solution of chapter 8's code exercise is right, and so are the numbers of
the solutions page.

The five reductions of ``solutions/loss_aggregation.py`` are checked against the Python-sum
definitions of ``tests.oracles`` and against hand computations. Its specification (the
reference passes every check, the starter none) is checked with every exercise's in
``test_exercises.py``, and its typical mistakes in ``test_mutants.py``. The numbers the
solutions page states for the derivation exercises are recomputed from the definitions, by
loops that share no code with the library."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from tests._solutions import (
    load_solution,
)
from tests.oracles import (
    MULTI_TURN_LAYOUT,
    central_differences,
    hierarchical_by_loops,
    layout_masks,
    reduce_by_loops,
    style_update_by_enumeration,
)

solution = load_solution("loss_aggregation")
FUNCTIONS = {
    "token-mean": solution.token_mean,
    "seq-mean-token-mean": solution.seq_mean_token_mean,
    "seq-mean-token-sum": solution.seq_mean_token_sum,
    "seq-mean-token-sum-norm": solution.seq_mean_token_sum_norm,
    "dr-grpo": solution.dr_grpo,
}
CONSTANT = ("seq-mean-token-sum-norm", "dr-grpo")


def call(mode, loss, mask, max_length):
    args = (max_length,) if mode in CONSTANT else ()
    return FUNCTIONS[mode](loss, mask, *args)


# --- the functions themselves ------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("mode", list(FUNCTIONS))
def test_matches_the_definitions_on_random_batches(mode, seed):
    rng = np.random.default_rng([seed, len(mode)])
    for _ in range(20):
        rows, width = int(rng.integers(1, 6)), int(rng.integers(1, 8))
        mask = rng.random((rows, width)) < 0.5
        mask[rng.random(rows) < 0.3] = False
        mask[0, 0] = True
        loss = np.where(mask, rng.normal(size=(rows, width)), rng.choice([np.nan, -np.inf]))
        budget = int(mask.sum(axis=1).max()) + int(rng.integers(0, 3))
        got = call(mode, loss, mask, budget)
        assert type(got) is float
        assert got == pytest.approx(reduce_by_loops(loss, mask, mode, budget), abs=1e-12)


def test_the_hand_batch():
    loss = [[4.0, np.nan, 0.0], [1.0, 1.0, 1.0]]
    mask = [[1, 0, 0], [1, 1, 1]]
    values = [call(mode, loss, mask, 4) for mode in FUNCTIONS]
    assert values == [1.75, 2.5, 3.5, 1.75, 0.875]


def test_a_batch_without_tokens():
    loss, mask = np.full((2, 3), np.nan), np.zeros((2, 3), dtype=bool)
    for mode in FUNCTIONS:
        if mode == "token-mean":
            with pytest.raises(ValueError):
                call(mode, loss, mask, 3)
        else:
            assert call(mode, loss, mask, 3) == 0.0


@pytest.mark.parametrize(
    ("mode", "loss", "mask", "max_length"),
    [
        ("seq-mean-token-mean", [[1.0, 2.0]], [[1, 1, 0]], None),
        ("seq-mean-token-sum", [[1.0, 2.0]], [[1, 2]], None),
        ("token-mean", [[1.0, np.inf]], [[1, 1]], None),
        ("seq-mean-token-sum-norm", [[1.0, 2.0]], [[1, 1]], 1),
        ("dr-grpo", [[1.0, 2.0]], [[1, 1]], True),
        ("dr-grpo", [[1.0, 2.0]], [[1, 1]], 2.0),
        ("seq-mean-token-sum", np.zeros((0, 2)), np.zeros((0, 2)), None),
    ],
)
def test_bad_input_raises_a_value_error(mode, loss, mask, max_length):
    with pytest.raises(ValueError):
        call(mode, loss, mask, max_length)


# --- the grading specification, evaluated in-process -------------------------------------------


# --- the numbers of the solutions page ---------------------------------------------------------


def weights(mode, lengths, max_length, empty_rows=0):
    """∂ aggregate / ∂ loss of the first token of every response, by central differences of
    the Python-sum definition; ``empty_rows`` all-masked rows appended (counted)."""
    mask = (np.arange(max_length) < np.array(list(lengths) + [0] * empty_rows)[:, None]).astype(int)
    gradient = central_differences(
        lambda x: reduce_by_loops(x, mask, mode, max_length), np.zeros(mask.shape)
    )
    return gradient[:, 0]


def test_weights_by_hand():
    lengths = [3, 3, 12, 12]
    expected = {
        "token-mean": (1 / 30, 1 / 30, 1 / 30),
        "seq-mean-token-mean": (1 / 12, 1 / 48, 1 / 60),
        "seq-mean-token-sum": (1 / 4, 1 / 4, 1 / 5),
        "seq-mean-token-sum-norm": (1 / 16, 1 / 16, 1 / 16),
        "dr-grpo": (1 / 64, 1 / 64, 1 / 80),
    }
    for mode, (short, long, long_with_empty_row) in expected.items():
        np.testing.assert_allclose(weights(mode, lengths, 16)[[0, 2]], [short, long], atol=1e-9)
        with_empty = weights(mode, lengths, 16, empty_rows=1)
        assert with_empty[2] == pytest.approx(long_with_empty_row, abs=1e-9)
    # Totals of the sequence mean: 1/4 each; with an empty row counted, 1/5.
    assert 3 * (1 / 12) == pytest.approx(12 * (1 / 48)) == pytest.approx(0.25)
    assert 12 * (1 / 60) == pytest.approx(0.2)


def test_two_workers_of_1000_and_10_tokens():
    token_mean = (1000 * 0.1 + 10 * 1.0) / 1010
    mean_of_means = (0.1 + 1.0) / 2
    assert token_mean == pytest.approx(0.1089, abs=5e-5)
    assert mean_of_means == 0.55
    assert mean_of_means / token_mean == pytest.approx(5.05, abs=5e-3)
    covariance = ((1000 - 505) * (0.1 - 0.55) + (10 - 505) * (1.0 - 0.55)) / 2
    assert covariance == pytest.approx(-222.75)
    assert -covariance / 505 == pytest.approx(0.4411, abs=5e-5)
    assert mean_of_means - token_mean == pytest.approx(-covariance / 505, abs=1e-12)
    # (d): each of the D = 2 workers differentiates D a_d / M; their mean is the token mean.
    losses = [2 * 100.0 / 1010, 2 * 10.0 / 1010]
    assert np.mean(losses) == pytest.approx(token_mean)


def test_threshold_of_the_length_normalized_update():
    """The ramble component changes sign at c = 0.2 (length-normalized) and 0.4 (gradient)."""
    for c, sign_normalized, sign_gradient in ((0.19, -1, -1), (0.21, 1, -1), (0.41, 1, 1)):
        normalized = style_update_by_enumeration(
            [1 / 3] * 3, [2, 5, 20], [0.2, 0.6, c], 4, "seq-mean-token-mean", 20
        )[2]
        gradient = style_update_by_enumeration(
            [1 / 3] * 3, [2, 5, 20], [0.2, 0.6, c], 4, "seq-mean-token-sum", 20
        )[2]
        assert np.sign(normalized) == sign_normalized
        assert np.sign(gradient) == sign_gradient
    at_threshold = style_update_by_enumeration(
        [1 / 3] * 3, [2, 5, 20], [0.2, 0.6, 0.2], 4, "seq-mean-token-mean", 20
    )[2]
    assert at_threshold == pytest.approx(0.0, abs=1e-12)
    # 2c + 12 J - 4.4 with J = (0.8 + c)/3 is 6c - 1.2.
    for c in (0.0, 0.2, 0.5):
        assert 2 * c + 12 * (0.8 + c) / 3 - 4.4 == pytest.approx(6 * c - 1.2)


def token_mean_update_by_styles(group_size, correct=(0.2, 0.6, 0.3), lengths=(2, 5, 20)):
    """E[update] under the token mean with E[A_i | styles] = c_i - mean of the others' c."""
    expected = np.zeros(3)
    for styles in itertools.product(range(3), repeat=group_size):
        total = sum(lengths[k] for k in styles)
        for i, k in enumerate(styles):
            others = [correct[s] for n, s in enumerate(styles) if n != i]
            advantage = correct[k] - sum(others) / len(others)
            score = np.eye(3)[k] - 1 / 3
            expected += (1 / 3) ** group_size * advantage / total * score
    return expected


@pytest.mark.parametrize("group_size", [2, 3, 4])
def test_the_styles_only_shortcut_equals_the_full_enumeration(group_size):
    full = style_update_by_enumeration(
        [1 / 3] * 3, [2, 5, 20], [0.2, 0.6, 0.3], group_size, "token-mean", 20
    )
    np.testing.assert_allclose(token_mean_update_by_styles(group_size), full, atol=1e-12)


def test_token_mean_ratio_rises_with_the_group():
    ratios = []
    for size in range(2, 9):
        update = token_mean_update_by_styles(size)
        ratios.append(update[2] / update[0])
    np.testing.assert_allclose([ratios[0], ratios[2], ratios[6]], [0.121, 0.211, 0.300], atol=5e-4)
    assert all(b > a for a, b in itertools.pairwise(ratios))
    assert ratios[-1] < 0.4


def test_a_second_answer_for_the_second_task():
    """Token mean 1/23 -> 1/26; hierarchical: task 0 unchanged, task 1 halves (1/6 -> 1/12)."""
    mask, turns = layout_masks([*MULTI_TURN_LAYOUT, (0, 0, 0)])  # a second 3-token answer
    tasks = [0, 0, 0, 1, 1]
    assert mask.sum() == 26
    assert mask[:3].sum() / mask.sum() == pytest.approx(0.7692, abs=5e-5)
    gradient = central_differences(
        lambda x: hierarchical_by_loops(x, mask, turns, tasks), np.zeros(mask.shape)
    )
    np.testing.assert_allclose(
        [gradient[0, 0], gradient[0, 5], gradient[1, 0], gradient[3, 0], gradient[4, 0]],
        [1 / 24, 1 / 96, 1 / 36, 1 / 12, 1 / 12],
        atol=1e-9,
    )


def test_hierarchical_without_labels_is_the_sequence_mean_with_empty_rows_skipped():
    rng = np.random.default_rng(1)
    loss = rng.normal(size=(5, 6))
    mask = rng.random((5, 6)) < 0.5
    mask[2] = False
    mask[0, 0] = True
    assert hierarchical_by_loops(loss, mask) == pytest.approx(
        reduce_by_loops(loss, mask, "seq-mean-token-mean", empty_rows="skip"), abs=1e-15
    )
    assert not math.isclose(
        reduce_by_loops(loss, mask, "seq-mean-token-mean", empty_rows="count"),
        reduce_by_loops(loss, mask, "seq-mean-token-mean", empty_rows="skip"),
    )
