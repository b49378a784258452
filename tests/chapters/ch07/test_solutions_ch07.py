"""The reference solution of chapter 7's code exercise is right, and so are the numbers of the
solutions page.

The solution is checked against group advantages written out member by member, against the RLOO
identity. Its specification (the reference passes every check, the starter none) is checked
with every exercise's in ``test_exercises.py``, and its typical mistakes in
``test_mutants.py``. The numbers the solutions page states for the derivation exercises (groups
without signal, the others' standard deviation, GRPO as RLOO with a larger step) are recomputed
by binomial sums and by enumerating groups by index arithmetic. The file itself (solution
markers, starter, imports, docstring examples) is checked with every other solution file in
``test_solution_files.py``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests._solutions import (
    load_solution,
)
from tests.oracles import softmax_rows

solution = load_solution("group_advantages")

finite = st.floats(-10.0, 10.0, allow_nan=False).map(lambda x: round(x, 6))


@st.composite
def batches(draw):
    shape = draw(st.sampled_from([(), (1,), (3,), (2, 2)]))
    return draw(hnp.arrays(np.float64, (*shape, draw(st.integers(2, 6))), elements=finite))


def loop_std(values, ddof):
    mean = math.fsum(values) / len(values)
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - ddof))


# --- the reference solution ------------------------------------------------------------------


@given(rewards=batches())
def test_rloo_and_dr_grpo_by_loops_and_the_identity(rewards):
    loo, cen = solution.rloo_advantages(rewards), solution.dr_grpo_advantages(rewards)
    size = rewards.shape[-1]
    for index in np.ndindex(rewards.shape[:-1]):
        group = list(rewards[index])
        mean = math.fsum(group) / size
        for i, r in enumerate(group):
            others = group[:i] + group[i + 1 :]
            assert loo[index][i] == pytest.approx(r - math.fsum(others) / (size - 1), abs=1e-9)
            assert cen[index][i] == pytest.approx(r - mean, abs=1e-9)
    np.testing.assert_allclose(cen, (size - 1) / size * loo, atol=1e-9)


@given(rewards=batches(), eps=st.sampled_from([0.0, 1e-6, 0.1]), ddof=st.integers(0, 1))
def test_grpo_and_batch_forms_by_loops(rewards, eps, ddof):
    grouped = solution.grpo_advantages(rewards, eps, ddof)
    batched = solution.batch_normalized_advantages(rewards, eps, ddof)
    batch_std = loop_std(list(rewards.ravel()), ddof)
    for index in np.ndindex(rewards.shape[:-1]):
        group = list(rewards[index])
        mean = math.fsum(group) / len(group)
        for i, r in enumerate(group):
            if max(group) == min(group):
                assert grouped[index][i] == 0.0 and batched[index][i] == 0.0
                continue
            assert grouped[index][i] == pytest.approx(
                (r - mean) / (loop_std(group, ddof) + eps), rel=1e-7, abs=1e-7
            )
            assert batched[index][i] == pytest.approx(
                (r - mean) / (batch_std + eps), rel=1e-7, abs=1e-7
            )


@pytest.mark.parametrize(
    ("function", "kwargs"),
    [
        ("rloo_advantages", {"rewards": [[1.0], [2.0]]}),
        ("dr_grpo_advantages", {"rewards": [1.0, np.inf]}),
        ("grpo_advantages", {"rewards": [1.0, 2.0], "eps": -1e-3, "ddof": 0}),
        ("grpo_advantages", {"rewards": [1.0, 2.0], "eps": 0.0, "ddof": 2}),
        ("grpo_advantages", {"rewards": [1.0, 2.0], "eps": 0.0, "ddof": 0.5}),
        ("batch_normalized_advantages", {"rewards": [[1.0, 2.0]], "eps": 0.0, "ddof": 2}),
    ],
)
def test_bad_input_raises_value_error(function, kwargs):
    with pytest.raises(ValueError):
        getattr(solution, function)(**kwargs)


# --- the grading specification, evaluated in-process ---------------------------------------


# --- the numbers of the solutions page ------------------------------------------------------


def no_signal(p, size):
    return p**size + (1 - p) ** size


def test_groups_without_signal():
    assert min(n for n in range(2, 100) if 1 - no_signal(0.02, n) >= 0.5) == 35
    assert math.log(2) / -math.log(0.98) == pytest.approx(34.31, abs=5e-3)
    assert math.log(2) / 0.02 == pytest.approx(34.66, abs=5e-3)
    kinds = (0.02, 0.3, 0.7, 0.98)
    eight = math.fsum(16 * (1 - no_signal(p, 8)) for p in kinds)
    sixteen = math.fsum(8 * (1 - no_signal(p, 16)) for p in kinds)
    assert eight == pytest.approx(34.93, abs=5e-3) and 1 - eight / 64 == pytest.approx(
        0.45, abs=5e-3
    )
    assert sixteen == pytest.approx(20.37, abs=5e-3)
    assert 1 - sixteen / 32 == pytest.approx(0.36, abs=5e-3)
    assert 16 * (1 - no_signal(0.02, 8)) == pytest.approx(2.39, abs=5e-3)
    assert 8 * (1 - no_signal(0.02, 16)) == pytest.approx(2.21, abs=5e-3)
    assert no_signal(0.5, 8) == 2.0**-7


def others_normalized_update(p, size, eps):
    """E[(1/N) sum_i A_i (e_{a_i} - pi)]_0 with the others' mean and std, by index arithmetic."""
    probs = softmax_rows(np.log([[p, 1 - p]]))[0]
    total = 0.0
    for code in range(2**size):
        group = [(code >> i) & 1 for i in range(size)]  # 0: correct (reward 1), 1: incorrect
        rewards = [1.0 - a for a in group]
        weight = math.prod(probs[a] for a in group)
        if max(rewards) == min(rewards):
            continue
        for i, a in enumerate(group):
            others = rewards[:i] + rewards[i + 1 :]
            mean = math.fsum(others) / len(others)
            std = math.sqrt(math.fsum((r - mean) ** 2 for r in others) / len(others))
            total += weight * (rewards[i] - mean) / (std + eps) * ((a == 0) - probs[0]) / size
    return total


@pytest.mark.parametrize(("eps", "factor"), [(1e-6, 370001), (1e-2, 38.3087)])
def test_normalizing_by_the_others(eps, factor):
    p, size = 0.3, 4
    update = others_normalized_update(p, size, eps)
    assert update / (p * (1 - p)) == pytest.approx(factor, rel=1e-5)
    assert 0.7**3 + 0.3**3 == pytest.approx(0.370)


def test_grpo_is_rloo_with_a_larger_step_for_small_groups():
    def ratio(k, size, ddof):
        grpo = math.sqrt(k * (size - k)) / size * math.sqrt((size - ddof) / size)
        return grpo / (k * (size - k) / (size * (size - 1)))

    assert {round(ratio(1, 2, d), 12) for d in (0, 1)} == {1.0, round(1 / math.sqrt(2), 12)}
    assert ratio(1, 3, 0) == pytest.approx(math.sqrt(2)) == ratio(2, 3, 0)
    assert ratio(1, 3, 1) == pytest.approx(2 / math.sqrt(3)) == ratio(2, 3, 1)
    assert ratio(1, 4, 0) != pytest.approx(ratio(2, 4, 0))

    def c(p, size):
        weights = [math.comb(size, k) * p**k * (1 - p) ** (size - k) for k in range(size + 1)]
        h = [math.sqrt(k * (size - k)) / size for k in range(size + 1)]
        return math.fsum(w * x for w, x in zip(weights, h, strict=True)) / (p * (1 - p))

    for p in (0.01, 0.3, 0.5, 0.9):
        assert c(p, 3) == pytest.approx(math.sqrt(2))
        q = p * (1 - p)
        assert c(p, 4) == pytest.approx(math.sqrt(3) + (3 - 2 * math.sqrt(3)) * q)
    assert c(0.5, 4) == pytest.approx((3 + 2 * math.sqrt(3)) / 4) == pytest.approx(1.616, abs=5e-4)
    assert c(1e-6, 4) == pytest.approx(math.sqrt(3), abs=1e-5)
