"""The parent's comparison: shape first, finiteness, then a tolerance scaled to the answer."""

from __future__ import annotations

import numpy as np
import pytest

from rlfound.grading.scoring.compare import compare


def test_equal_arrays_pass():
    assert compare(np.array([1.0, 2.0]), np.array([1.0, 2.0]), rtol=1e-7, atol=0).passed


@pytest.mark.parametrize(
    ("got", "expected"),
    [
        (np.array([2.0]), np.array(2.0)),
        (np.array(2.0), np.array([2.0])),
        (np.ones((3, 1)), np.ones(3)),
        (np.ones(1), np.ones(3)),
    ],
)
def test_shapes_never_broadcast(got, expected):
    verdict = compare(got, expected, rtol=1.0, atol=1.0)
    assert not verdict.passed
    assert f"expected shape {expected.shape}, got shape {got.shape}" == verdict.message


def test_non_finite_answers_fail_with_their_index():
    verdict = compare(np.array([0.0, np.nan]), np.array([0.0, 1.0]), rtol=1, atol=1)
    assert not verdict.passed and "index (1,)" in verdict.message


def test_tolerance_is_scaled_to_the_reference():
    expected = np.array([1e6, 1e-6])
    assert compare(expected * (1 + 1e-9), expected, rtol=1e-7, atol=0).passed
    verdict = compare(expected + np.array([0.0, 1e-3]), expected, rtol=1e-7, atol=1e-9)
    assert not verdict.passed
    assert "worst at index (1,)" in verdict.message
    assert "max abs error 0.001" in verdict.message


def test_messages_name_expected_and_got():
    verdict = compare(np.array(2.5), np.array(2.0), rtol=0, atol=0)
    assert verdict.message == "max abs error 0.5, max rel error 0.2; expected 2, got 2.5"
