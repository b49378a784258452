"""The reference solution of chapter 12's code exercise is right, and so are the numbers of the
solutions page.

The three functions are checked against explicit loops and the library's diagnostics. Its
specification (the reference passes every check, the starter none) is checked with every
exercise's in ``test_exercises.py``, and its typical mistakes in ``test_mutants.py``. The
numbers the solutions page states for the derivation exercises are recomputed here by closed
forms, exact enumeration and loops. The file itself (markers, starter, imports, docstring
examples) is checked with every other solution in ``test_solution_files.py``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound import diagnostics, importance, ppo
from tests._solutions import (
    load_solution,
)

solution = load_solution("estimator_diagnostics")

finite = st.floats(-10.0, 10.0, allow_nan=False)


# --- the functions ------------------------------------------------------------------------------


@given(
    returns=hnp.arrays(np.float64, st.integers(2, 20), elements=finite),
    noise=hnp.arrays(np.float64, 20, elements=finite),
)
def test_explained_variance_by_loops_and_against_the_library(returns, noise):
    if np.ptp(returns) < 1e-3:
        return
    values = returns + noise[: returns.size]
    n = returns.size
    mg = sum(returns) / n
    errors = [g - v for g, v in zip(returns, values, strict=True)]
    me = sum(errors) / n
    expected = 1 - sum((e - me) ** 2 for e in errors) / sum((g - mg) ** 2 for g in returns)
    got = solution.explained_variance(values, returns)
    assert got == pytest.approx(expected, abs=1e-9)
    assert got == pytest.approx(diagnostics.explained_variance(values, returns), abs=1e-12)


@given(
    weights=hnp.arrays(
        np.float64, st.integers(1, 30), elements=st.just(0.0) | st.floats(1e-3, 1e3)
    ),
    scale=st.sampled_from([1.0, 1e-300, 1e300]),
)
def test_effective_sample_size_by_loops_at_every_scale(weights, scale):
    if not weights.any():
        return
    by_hand = sum(weights) ** 2 / sum(w * w for w in weights)
    assert solution.effective_sample_size(weights * scale) == pytest.approx(by_hand, rel=1e-9)
    assert solution.effective_sample_size(weights) == pytest.approx(
        importance.effective_sample_size(weights), rel=1e-12
    )


@given(
    rewards=hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 8), st.integers(1, 5)),
        elements=st.sampled_from([0.0, 0.5, 1.0]),
    )
)
def test_fraction_all_equal_by_loops_and_against_the_library(rewards):
    rows = rewards.tolist()
    expected = sum(all(r == row[0] for r in row) for row in rows) / len(rows)
    assert solution.fraction_all_equal(rewards) == expected
    groups, size = rewards.shape
    library = diagnostics.group_variance_statistics(rewards.ravel(), np.repeat(range(groups), size))
    assert library[1] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("function", "kwargs", "name"),
    [
        ("explained_variance", {"values": [1.0, 2.0], "returns": [3.0, 3.0]}, "returns"),
        ("explained_variance", {"values": [1.0, 2.0], "returns": [1.0]}, "returns"),
        ("explained_variance", {"values": [np.nan, 2.0], "returns": [1.0, 0.0]}, "values"),
        ("effective_sample_size", {"weights": [1.0, -2.0]}, "weights"),
        ("effective_sample_size", {"weights": [0.0, 0.0]}, "weights"),
        ("effective_sample_size", {"weights": [[1.0]]}, "weights"),
        ("fraction_all_equal", {"rewards": [1.0, 1.0]}, "rewards"),
        ("fraction_all_equal", {"rewards": [[np.inf, 1.0]]}, "rewards"),
    ],
)
def test_bad_input_raises_value_error_naming_the_argument(function, kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}"):
        getattr(solution, function)(**kwargs)


# --- the specification --------------------------------------------------------------------------


# --- the solutions page -------------------------------------------------------------------------


def test_ev_offset_closed_form_and_calibration():
    # EV = 1 - a^2 Var(h) / sigma^2 with h uniform on 0..H-1: Var(h) = (H^2 - 1) / 12.
    h = list(range(10))
    var_h = sum((x - 4.5) ** 2 for x in h) / 10
    assert var_h == pytest.approx(99 / 12)
    assert 1 - 0.01 * 99 / 12 == pytest.approx(0.9175)
    rng = np.random.default_rng(0)
    targets = rng.normal(size=(2000, 10))  # the page's draw
    critic = targets + 0.1 * np.arange(10)[::-1]
    by_loops = 1 - 0.01 * var_h / targets.var()
    assert diagnostics.explained_variance(critic, targets) == pytest.approx(by_loops, rel=1e-12)
    v_bar, g_bar, _ = diagnostics.calibration_by_horizon(critic, targets)
    np.testing.assert_allclose(v_bar - g_bar, 0.1 * np.arange(10), atol=1e-12)


def test_clip_bounds_of_part_a():
    eps = 0.2
    for rho in np.linspace(0.0, 5.0, 501):
        for a in (0.3, 2.0):
            value = min(rho * a, min(max(rho, 1 - eps), 1 + eps) * a)
            assert -1e-15 <= value <= (1 + eps) * a + 1e-15
            if rho <= 1:
                negative = min(-rho * a, min(max(rho, 1 - eps), 1 + eps) * -a)
                assert -a - 1e-15 <= negative <= (1 - eps) * -a + 1e-15


def test_the_stale_batch_of_the_clip_solution():
    """The page's batch: the loss moves within f max|A|, both ESS fractions fall toward 0.75."""
    rng = np.random.default_rng(1)
    rows, length, stale = 64, 8, 16
    advantages = np.repeat(rng.normal(size=rows), length).reshape(rows, length)
    old = np.log(rng.uniform(0.2, 0.9, size=(rows, length)))
    noise = rng.normal(size=(stale, length))
    losses, ess = [], []
    for s in (0.0, 0.5, 1.0, 2.0, 4.0):
        shift = np.zeros((rows, length))
        shift[:stale] = np.minimum(s * noise - s**2 / 2, 0.0)
        ratio = np.exp(shift)
        # The clipped objective token by token, without the library.
        total = 0.0
        for r, a in zip(ratio.ravel(), advantages.ravel(), strict=True):
            total += min(r * a, min(max(r, 0.8), 1.2) * a)
        losses.append(-total / ratio.size)
        assert losses[-1] == pytest.approx(ppo.clipped_policy_loss(old + shift, old, advantages))
        w = [math.exp(x) for x in shift.sum(axis=1)]
        ess.append(sum(w) ** 2 / sum(x * x for x in w) / rows)
    bound = stale / rows * np.abs(advantages).max()
    assert max(losses) - min(losses) < bound
    assert ess[0] == pytest.approx(1.0) and 0.75 <= ess[-1] < 0.76


def test_dead_curriculum_numbers():
    p = 0.9170040426885321
    assert p**8 + (1 - p) ** 8 == pytest.approx(0.5, abs=1e-12)
    assert 0.95**13 + 0.05**13 > 0.5 >= 0.95**14 + 0.05**14
    probs = [0.3, 0.8, 0.95, 0.99]
    expected_var = sum(7 / 8 * q * (1 - q) for q in probs) / 4
    expected_f = sum((1 - q) ** 8 + q**8 for q in probs) / 4
    assert (round(expected_var, 4), round(expected_f, 4)) == (0.0935, 0.4529)


def test_ess_chi2_numbers():
    mu, pi = [1 / 8, 2 / 8, 4 / 8, 1 / 8], [0.4, 0.3, 0.2, 0.1]
    chi2 = sum(p * p / m for m, p in zip(mu, pi, strict=True)) - 1
    assert chi2 == pytest.approx(0.8)
    assert 0.95**100 == pytest.approx(0.0059, abs=5e-5)
    # The sequence ESS limit by exact enumeration of all responses of two tokens.
    second = sum(
        mu[a] * mu[b] * (pi[a] * pi[b] / (mu[a] * mu[b])) ** 2 for a in range(4) for b in range(4)
    )
    assert 1 / second == pytest.approx((1 + chi2) ** -2)
