"""rlfound.gradcheck: central differences, relative errors and gradient checks.

References: functions whose gradients are known in closed form. (These are the only tests that
use rlfound.gradcheck; every other gradient test uses tests.oracles.central_differences.)
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound.gradcheck import check_gradient, numerical_gradient, relative_error

X23 = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, -0.25]])


def square_sum(x):
    return float(np.sum(x**2))


def square_sum_grad(x):
    return 2 * x


# --- numerical_gradient ---------------------------------------------------------------------


def test_numerical_gradient_of_a_sum_of_squares_on_a_matrix():
    grad = numerical_gradient(square_sum, X23)
    assert grad.shape == (2, 3)
    np.testing.assert_allclose(grad, 2 * X23, atol=1e-8)


def test_numerical_gradient_uses_central_differences():
    # For f = sum x^3 the central difference is exactly 3 x^2 + eps^2 (the cubic term),
    # while a forward difference would be off by about 3 x eps.
    x = np.array([1.0, -2.0, 0.5])
    eps = 1e-3
    grad = numerical_gradient(lambda z: float(np.sum(z**3)), x, eps=eps)
    np.testing.assert_allclose(grad, 3 * x**2 + eps**2, rtol=0, atol=1e-9)


@pytest.mark.parametrize(
    ("f", "grad"),
    [
        (lambda x: float(np.sum(np.sin(x))), np.cos),
        (lambda x: float(np.exp(x).sum()), np.exp),
        (lambda x: float(x[0] * x[1] + 3 * x[2]), lambda x: np.array([x[1], x[0], 3.0])),
        (lambda x: float(np.log(np.sum(np.exp(x)))), lambda x: np.exp(x) / np.exp(x).sum()),
    ],
    ids=["sin", "exp", "bilinear", "logsumexp"],
)
def test_numerical_gradient_of_functions_with_known_gradients(f, grad):
    x = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(numerical_gradient(f, x), grad(x), rtol=1e-7, atol=1e-8)


@given(
    x=hnp.arrays(np.float64, (4,), elements=st.floats(-3.0, 3.0)),
    seed=st.integers(0, 2**32 - 1),
)
def test_numerical_gradient_of_a_quadratic_form(x, seed):
    # f(x) = x^T A x / 2 has gradient (A + A^T) x / 2.
    a = np.random.default_rng(seed).normal(size=(4, 4))
    grad = numerical_gradient(lambda z: float(z @ a @ z / 2), x)
    np.testing.assert_allclose(grad, (a + a.T) @ x / 2, atol=1e-7)


# --- relative_error -------------------------------------------------------------------------


def test_relative_error_by_hand():
    # |a - b| / max(|a|, |b|, floor): 0.1 / 1.1; 4 / 2; 0 / floor; below the floor, 1e-10 / 1e-8.
    np.testing.assert_allclose(
        relative_error([1.0, -2.0, 0.0, 0.0], [1.1, 2.0, 0.0, 1e-10]),
        [0.1 / 1.1, 2.0, 0.0, 1e-2],
        rtol=1e-12,
    )


def test_relative_error_floor_is_the_smallest_denominator():
    np.testing.assert_allclose(relative_error([0.0], [1e-10], floor=1e-4), [1e-6], rtol=1e-12)


def test_relative_error_is_elementwise_and_symmetric():
    a = np.array([1.0, 2.0, -3.0])
    b = np.array([1.0, 1.0, 3.0])
    np.testing.assert_allclose(relative_error(a, b), [0.0, 0.5, 2.0], rtol=1e-14)
    np.testing.assert_allclose(relative_error(b, a), relative_error(a, b), rtol=0)


# --- check_gradient -------------------------------------------------------------------------


def test_check_gradient_passes_a_correct_gradient():
    result = check_gradient(square_sum, square_sum_grad, X23)
    assert result.passed
    assert result.max_abs_error < 1e-6
    assert result.max_rel_error < 1e-5
    np.testing.assert_allclose(result.numerical, 2 * X23, atol=1e-8)
    np.testing.assert_allclose(result.analytic, 2 * X23, rtol=0)
    assert result.numerical.shape == result.analytic.shape == X23.shape


def test_check_gradient_fails_a_wrong_entry_and_points_at_it():
    def wrong(x):
        g = 2 * x
        g[1, 2] += 1.0
        return g

    result = check_gradient(square_sum, wrong, X23)
    assert not result.passed
    assert tuple(int(i) for i in result.worst_index) == (1, 2)
    assert result.max_abs_error == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_allclose(result.numerical, 2 * X23, atol=1e-8)
    np.testing.assert_allclose(result.analytic, wrong(X23), rtol=0)


def test_check_gradient_fails_a_gradient_off_by_a_factor():
    result = check_gradient(square_sum, lambda x: x, X23)
    assert not result.passed
    # |2x - x| = |x| is largest at x = 3; relative to max(|2x|, |x|) it is 1/2 wherever x != 0.
    assert result.max_abs_error == pytest.approx(3.0, rel=1e-6)
    assert result.max_rel_error == pytest.approx(0.5, rel=1e-6)
    assert X23[tuple(result.worst_index)] != 0.0


def test_check_gradient_respects_its_tolerances():
    # Analytic gradient off by 1e-4 everywhere: fails at the default rtol, passes if loosened.
    def nearly(x):
        return 2 * x + 1e-4

    x = np.array([1.0, 2.0, 3.0])
    assert not check_gradient(square_sum, nearly, x).passed
    assert check_gradient(square_sum, nearly, x, rtol=1e-3, atol=1e-3).passed


def test_check_gradient_result_unpacks_as_a_named_tuple():
    result = check_gradient(square_sum, square_sum_grad, np.array([1.0, -1.0]))
    passed, max_abs, max_rel, worst, numerical, analytic = result
    assert numerical.shape == analytic.shape == (2,)
    assert passed == result.passed
    assert isinstance(worst, tuple)
    assert max_abs == result.max_abs_error
    assert max_rel == result.max_rel_error
