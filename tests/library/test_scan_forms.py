"""The two forms of the backward scan: the clear loop and the banded triangular solve.

``method="banded"`` must give the sums of ``method="loop"`` (the reference the book shows) up
to rounding, on every shape and mask, and the packed-stream returns and GAE built on it must
too. "Up to rounding" is judged elementwise against the scan of absolute values,

    |fast_t - clear_t| <= 1e-12 * Σ_{k>=t} (Π_{t<=j<k} |c_j|) |x_k|,

which bounds what rounding can do to either form even where the sum itself cancels to
nearly 0 (a plain relative error would be meaningless there). The banded form is also
checked against the explicit-sum oracles of tests/oracles/. It solves a stream a block of
steps at a time; the property tests shrink the block (down to one step) so that every
block edge, row start and carry between blocks is exercised on small arrays. Speed is measured in
benchmarks/scan_speed.py, not here.
"""

from __future__ import annotations

import contextlib
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlfound import _scan
from rlfound._scan import _lanes, _stream
from rlfound.advantages import packed_gae
from rlfound.returns import discounted_cumsum, packed_discounted_returns
from tests.oracles import (
    _read_only,
    discounted_sum_loop,
    packed_batches,
    packed_gae_loop,
    packed_returns_loop,
    random_packed,
)

# Below the smallest normal float (about 2.2e-308) numbers lose relative precision in either
# form (gradual underflow), so differences that small are not rounding of the scan's own.
SUBNORMAL = np.finfo(np.float64).tiny

batch_shapes = st.sampled_from([(), (1,), (3,), (2, 3)])
horizons = st.one_of(st.integers(1, 4), st.integers(5, 400))
seeds = st.integers(0, 2**32 - 1)
# A boundary at every step, none at all, and densities between.
end_probabilities = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 0.5))
unit_edges = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 1.0))
# Steps per block of the banded solve (one step, a few, and the library's own length), and
# times a block is halved before its serial solve (never, up to the library's own, and more).
# A time-major array of fewer than `narrow` streams is solved stream by stream: 1 never,
# the library's own threshold for the few streams these arrays have. Rows shorter than
# `sparse` steps keep their ends in place, halved as often as their length allows: 1 never.
# Time-major rows of at least `row_axpy` streams are halved one BLAS call per row: 1 always.
# A narrow block is turned stream by stream `transpose` entries (at least a row) at a time.
block_lengths = st.tuples(
    st.sampled_from([1, 2, 3, 7, 8, 64, _scan.BLOCK]),
    st.sampled_from([0, 1, 3, _stream.LEVELS, 6]),
    st.sampled_from([1, _lanes.NARROW]),
    st.sampled_from([1, _stream.SPARSE]),
    st.sampled_from([1, _lanes.ROW_AXPY]),
    st.sampled_from([1, 5, _lanes.TRANSPOSE]),
)


@contextlib.contextmanager
def blocks_of(
    block,
    levels=_stream.LEVELS,
    sparse=1,
    narrow=_lanes.NARROW,
    row_axpy=_lanes.ROW_AXPY,
    transpose=_lanes.TRANSPOSE,
):
    """Run the banded solve with blocks of ``block`` steps, each halved ``levels`` times.

    ``block`` may also be a tuple (steps, levels, narrow, sparse, row_axpy, transpose).
    ``sparse=1`` halves a block however many of its factors are 0, so that small arrays with
    dense stops take the halved path too, however short. A time-major block of at least
    ``narrow`` streams is halved down to two rows (one, if ``block`` is 1 step), by one BLAS
    call per row if it has at least ``row_axpy`` streams; one of fewer is solved stream by
    stream, turned ``transpose`` entries at a time.
    """
    if isinstance(block, tuple):
        block, levels, narrow, sparse, row_axpy, transpose = block
    names = [
        (_scan, "BLOCK", block),
        (_stream, "LEVELS", levels),
        (_stream, "SPARSE", sparse),
        (_stream, "HALVING_MIN", 1),
        (_lanes, "ROWS", 2 if block > 1 else 1),
        (_lanes, "NARROW", narrow),
        (_lanes, "ROW_AXPY", row_axpy),
        (_lanes, "TRANSPOSE", transpose),
    ]
    saved = [(module, name, getattr(module, name)) for module, name, _ in names]
    for module, name, value in names:
        setattr(module, name, value)
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


# Where time is: 0 the first axis (a time-major buffer, as Stable-Baselines3 stores one), the
# last axis, or between (clamped to the last axis of arrays with fewer axes).
time_positions = st.sampled_from([-1, 0, 1])


def in_layout(position, *arrays):
    """The time-last ``arrays`` with time moved to ``position``, copied C-contiguous."""
    axis = min(position % arrays[0].ndim, arrays[0].ndim - 1) if position != -1 else -1
    moved = [np.ascontiguousarray(np.moveaxis(array, -1, axis)) for array in arrays]
    return axis, moved


def time_last(terms, discounts, axis):
    """``terms`` and ``discounts`` (a number or an array) with time moved to the last axis."""
    discounts = np.broadcast_to(discounts, np.shape(terms))
    return np.moveaxis(terms, axis, -1), np.moveaxis(discounts, axis, -1)


def scan_of_absolute_values(terms, discounts):
    discounts = np.broadcast_to(discounts, np.shape(terms))
    return discounted_cumsum(np.abs(terms), np.abs(discounts), method="loop")


def assert_equal_up_to_rounding(fast, clear, terms, discounts):
    assert fast.shape == clear.shape
    bound = 1e-12 * scan_of_absolute_values(terms, discounts) + SUBNORMAL
    excess = np.abs(fast - clear) - bound
    assert np.all(excess <= 0), f"worst excess {excess.max():.3e} at {np.argmax(excess)}"


def random_terms(rng, shape):
    """Normal terms whose sizes span six orders of magnitude, so that sums cancel."""
    return rng.normal(size=shape) * 10.0 ** rng.integers(-3, 4, size=shape)


@st.composite
def scan_inputs(draw):
    """(terms, discounts): per-step factors c·(not done) with c on [0, 1], or any in [-1, 1]."""
    shape = (*draw(batch_shapes), draw(horizons))
    rng = np.random.default_rng(draw(seeds))
    terms = random_terms(rng, shape)
    if draw(st.booleans()):
        done = rng.random(shape) < draw(end_probabilities)
        discounts = draw(unit_edges) * ~done
    else:
        discounts = rng.uniform(-1.0, 1.0, size=shape)
    return terms, discounts


@st.composite
def packed_streams(draw):
    """(rewards, values, next_values, terminated, truncated) of any size, masks of any density."""
    shape = (*draw(batch_shapes), draw(horizons))
    rng = np.random.default_rng(draw(seeds))
    p_end = draw(end_probabilities)
    _, _, _, terminated, truncated = random_packed(rng, shape, p_end=p_end / 2)
    rewards, values, next_values = (random_terms(rng, shape) for _ in range(3))
    return rewards, values, next_values, terminated, truncated


# --- the scan itself ----------------------------------------------------------------------------


@given(pair=scan_inputs(), block=block_lengths, position=time_positions)
def test_the_banded_solve_equals_the_loop_up_to_rounding(pair, block, position):
    terms, discounts = pair
    clear = discounted_cumsum(terms, discounts, method="loop")
    axis, (moved_terms, moved_discounts) = in_layout(position, terms, discounts)
    with blocks_of(block):
        fast = discounted_cumsum(moved_terms, moved_discounts, axis=axis, method="banded")
    assert_equal_up_to_rounding(np.moveaxis(fast, axis, -1), clear, terms, discounts)


@given(
    pair=scan_inputs(),
    discount=unit_edges | st.floats(-1.0, 0.0),
    block=block_lengths,
    position=time_positions,
)
def test_the_banded_solve_with_one_discount_equals_the_loop(pair, discount, block, position):
    terms, _ = pair
    clear = discounted_cumsum(terms, discount, method="loop")
    axis, (moved_terms,) = in_layout(position, terms)
    with blocks_of(block):
        fast = discounted_cumsum(moved_terms, discount, axis=axis, method="banded")
    assert_equal_up_to_rounding(np.moveaxis(fast, axis, -1), clear, terms, discount)


@given(pair=scan_inputs(), position=time_positions)
def test_the_loop_along_any_axis_is_the_loop_along_the_last(pair, position):
    terms, discounts = pair
    axis, (moved_terms, moved_discounts) = in_layout(position, terms, discounts)
    moved = discounted_cumsum(moved_terms, moved_discounts, axis=axis, method="loop")
    np.testing.assert_array_equal(
        np.moveaxis(moved, axis, -1), discounted_cumsum(terms, discounts, method="loop")
    )


@given(pair=scan_inputs(), block=block_lengths)
def test_the_banded_solve_equals_explicit_product_sums(pair, block):
    terms, discounts = pair
    terms, discounts = terms[..., :40], discounts[..., :40]  # the oracle is quadratic in T
    with blocks_of(block):
        fast = discounted_cumsum(terms, discounts, method="banded")
    for index in np.ndindex(terms.shape[:-1]):
        oracle = discounted_sum_loop(terms[index], discounts[index])
        bound = 1e-12 * scan_of_absolute_values(terms[index], discounts[index]) + SUBNORMAL
        assert np.all(np.abs(fast[index] - oracle) <= bound)


@pytest.mark.parametrize("shape", [(1, 20_000), (7, 3001), (4096, 3), (2, 2, 999)])
def test_a_boundary_at_every_step_leaves_each_term_alone(shape):
    terms = np.random.default_rng(0).normal(size=shape)
    np.testing.assert_array_equal(discounted_cumsum(terms, 0.0, method="banded"), terms)


@pytest.mark.parametrize("shape", [(1, 20_000), (7, 3001), (4096, 3), (2, 2, 999)])
def test_with_no_boundary_and_no_discount_the_sums_are_reverse_cumulative_sums(shape):
    terms = np.random.default_rng(1).integers(-5, 6, size=shape).astype(float)
    # Small integers add exactly, so the reverse cumulative sum is the exact answer.
    exact = np.flip(np.cumsum(np.flip(terms, -1), axis=-1), -1)
    np.testing.assert_array_equal(discounted_cumsum(terms, 1.0, method="banded"), exact)


@pytest.mark.slow
def test_long_streams_with_factors_near_one_agree_and_do_not_underflow():
    # γλ^t underflows to 0 within a few thousand steps; a form that divided a cumulative sum
    # by it would return inf or nan here. 10^5 steps with a factor just below 1.
    rng = np.random.default_rng(2)
    terms = rng.normal(size=(1, 100_000))
    for factor in (0.999, 0.5, 1e-3):
        clear = discounted_cumsum(terms, factor, method="loop")
        fast = discounted_cumsum(terms, factor, method="banded")
        assert np.all(np.isfinite(fast))
        assert_equal_up_to_rounding(fast, clear, terms, factor)


def test_factors_above_one_give_the_loop_sums_without_forming_their_products():
    # Factors of 1e30: a product of a few dozen of them overflows, though every sum is
    # finite, since nothing follows step 0: y = (1, 0, 0, ...). A form that multiplied
    # factors together would turn a product times a zero sum into nan.
    terms = np.zeros(5000)
    terms[0] = 1.0
    expected = np.zeros(5000)
    expected[0] = 1.0
    with blocks_of(7):
        np.testing.assert_array_equal(discounted_cumsum(terms, 1e30, method="banded"), expected)
    np.testing.assert_array_equal(discounted_cumsum(terms, 1e30, method="banded"), expected)


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 5), (2, 0, 4)])
def test_empty_arrays_give_empty_sums(shape):
    for method in ("loop", "banded", "auto"):
        sums = discounted_cumsum(np.zeros(shape), 0.5, method=method)
        assert sums.shape == shape
        assert sums.dtype == np.float64


@pytest.mark.parametrize("shape", [(1, 5000), (5000,), (300, 20), (20, 300), (3, 1)])
def test_the_banded_solve_does_not_write_to_its_inputs(shape):
    rng = np.random.default_rng(3)
    terms = _read_only(rng.normal(size=shape))
    discounts = _read_only(rng.uniform(0.0, 1.0, size=shape))
    clear = discounted_cumsum(terms, discounts, method="loop")
    with blocks_of(64):
        fast = discounted_cumsum(terms, discounts, method="banded")
    assert_equal_up_to_rounding(fast, clear, terms, discounts)


@pytest.mark.parametrize(
    ("shape", "axis", "form"),
    [
        ((5000, 1), -1, "loop"),
        ((1, 1), -1, "loop"),
        ((2048, 4), -1, "loop"),
        ((300_000, 2), -1, "loop"),
        ((2047, 4), -1, "banded"),
        ((2048, 5), -1, "banded"),
        ((32768, 8), -1, "banded"),
        ((256, 2), -1, "banded"),
        ((1024, 64), -1, "banded"),
        ((1, 2), -1, "banded"),
        ((1, 10_000), -1, "banded"),
        ((1, 5000), 0, "loop"),
        ((2, 5000), 0, "banded"),
        ((4, 2048), 0, "banded"),
        ((3, 4, 2048), 1, "banded"),
        ((3, 1, 2048), 1, "loop"),
    ],
)
def test_auto_chooses_the_form_by_shape(shape, axis, form, monkeypatch):
    # As documented: the loop for a single step and, with time last, for at most 4 steps of
    # 2048 streams or more; the fast form otherwise.
    # The choice is observed through a spy, not inferred from the sums.
    banded = _scan.scan
    calls = []

    def spy(terms, *arguments, **keywords):
        calls.append(terms.first.shape)
        return banded(terms, *arguments, **keywords)

    monkeypatch.setattr(_scan, "scan", spy)
    rng = np.random.default_rng(4)
    terms, discounts = rng.normal(size=shape), rng.uniform(0.0, 1.0, size=shape)
    sums = discounted_cumsum(terms, discounts, axis=axis)
    assert calls == ([shape] if form == "banded" else [])
    clear = discounted_cumsum(terms, discounts, axis=axis, method="loop")
    assert_equal_up_to_rounding(
        np.moveaxis(sums, axis, -1),
        np.moveaxis(clear, axis, -1),
        *time_last(terms, discounts, axis),
    )


# --- packed-stream returns and GAE ------------------------------------------------------------


def gae_scan_inputs(rewards, values, next_values, terminated, truncated, gamma, lam):
    """The terms and factors packed_gae hands to the scan, for the rounding bound."""
    deltas = rewards + gamma * np.where(terminated, 0.0, next_values) - values
    return deltas, gamma * lam * ~(terminated | truncated)


def return_scan_inputs(rewards, next_values, terminated, truncated, gamma):
    """The terms and factors packed_discounted_returns hands to the scan."""
    cut = truncated.copy()
    cut[..., -1:] |= ~terminated[..., -1:]
    bootstrap = np.where(cut, next_values, 0.0)
    return rewards + gamma * bootstrap, gamma * ~(terminated | cut)


@given(
    stream=packed_streams(),
    gamma=unit_edges,
    lam=unit_edges,
    block=block_lengths,
    position=time_positions,
)
def test_packed_gae_fast_form_equals_the_clear_form(stream, gamma, lam, block, position):
    clear = packed_gae(*stream, gamma, lam, method="loop")
    axis, moved = in_layout(position, *stream)
    with blocks_of(block):
        fast = packed_gae(*moved, gamma, lam, axis=axis, method="banded")
        clear_moved = packed_gae(*moved, gamma, lam, axis=axis, method="loop")
    bound_inputs = gae_scan_inputs(*stream, gamma, lam)
    assert_equal_up_to_rounding(np.moveaxis(fast, axis, -1), clear, *bound_inputs)
    np.testing.assert_array_equal(np.moveaxis(clear_moved, axis, -1), clear)


@given(stream=packed_streams(), gamma=unit_edges, block=block_lengths, position=time_positions)
def test_packed_returns_fast_form_equals_the_clear_form(stream, gamma, block, position):
    rewards, _, next_values, terminated, truncated = stream
    arguments = (rewards, next_values, terminated, truncated, gamma)
    clear = packed_discounted_returns(*arguments, method="loop")
    axis, moved = in_layout(position, rewards, next_values, terminated, truncated)
    with blocks_of(block):
        fast = packed_discounted_returns(*moved, gamma, axis=axis, method="banded")
        clear_moved = packed_discounted_returns(*moved, gamma, axis=axis, method="loop")
    bound_inputs = return_scan_inputs(*arguments)
    assert_equal_up_to_rounding(np.moveaxis(fast, axis, -1), clear, *bound_inputs)
    np.testing.assert_array_equal(np.moveaxis(clear_moved, axis, -1), clear)


@given(batch=packed_batches(), gamma=unit_edges, lam=unit_edges, block=block_lengths)
def test_packed_gae_fast_form_equals_the_per_episode_sums(batch, gamma, lam, block):
    with blocks_of(block):
        fast = packed_gae(*batch, gamma, lam, method="banded")
    bound = scan_of_absolute_values(*gae_scan_inputs(*batch, gamma, lam))
    assert np.all(np.abs(fast - packed_gae_loop(*batch, gamma, lam)) <= 1e-12 * bound + 1e-300)


@given(batch=packed_batches(), gamma=unit_edges, block=block_lengths)
def test_packed_returns_fast_form_equals_the_per_episode_sums(batch, gamma, block):
    rewards, _, next_values, terminated, truncated = batch
    arguments = (rewards, next_values, terminated, truncated, gamma)
    with blocks_of(block):
        fast = packed_discounted_returns(*arguments, method="banded")
    bound = scan_of_absolute_values(*return_scan_inputs(*arguments))
    assert np.all(np.abs(fast - packed_returns_loop(*arguments)) <= 1e-12 * bound + 1e-300)


@pytest.mark.parametrize("shape", [(2, 700), (1, 3000)])
def test_packed_fast_forms_on_long_streams_equal_the_per_episode_sums(shape):
    # Blocks of 97 steps, so that blocks start mid-row and mid-episode; episodes end about
    # every 50 steps so that the quadratic oracle stays quick.
    rng = np.random.default_rng(5)
    batch = random_packed(rng, shape, p_end=0.01)
    gamma, lam = 0.99, 0.95
    rewards, _, next_values, terminated, truncated = batch
    arguments = (rewards, next_values, terminated, truncated, gamma)
    with blocks_of(97):
        gae = packed_gae(*batch, gamma, lam, method="banded")
        sums = packed_discounted_returns(*arguments, method="banded")
    np.testing.assert_allclose(gae, packed_gae_loop(*batch, gamma, lam), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sums, packed_returns_loop(*arguments), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("shape", "halved", "serial"),
    [
        ((4096, 8), True, False),
        ((2048, 24), True, True),
        ((1024, 32), True, False),
        ((1500, 5), False, True),
        ((300, 96), True, True),
        ((300, 100), True, True),
    ],
)
def test_short_rows_at_the_librarys_own_settings_equal_the_per_episode_sums(
    shape, halved, serial, monkeypatch
):
    # Rows of 8, 24 or 32 steps are halved in place as often as their length allows (3, 3
    # and 5 times), rows of 5 never; rows of 96 (a multiple of 2^LEVELS) keep their ends in
    # place, rows of 100 have them listed as stops. Rows of 8 and 32 halve down to one step
    # each, which leaves the serial solve nothing to do: it is not called. Episodes end
    # rarely enough (0.2% of steps) that the stops do not switch the halving off.
    calls = {"_axpy": 0, "_dtbsv": 0}
    for name in calls:
        original = getattr(_stream, name)

        def counted(*arguments, _original=original, _name=name, **keywords):
            calls[_name] += 1
            return _original(*arguments, **keywords)

        monkeypatch.setattr(_stream, name, counted)
    rng = np.random.default_rng(6)
    batch = random_packed(rng, shape, p_end=0.001)
    rewards, _, next_values, terminated, truncated = batch
    arguments = (rewards, next_values, terminated, truncated, 0.99)
    gae = packed_gae(*batch, 0.99, 0.95, method="banded")
    sums = packed_discounted_returns(*arguments, method="banded")
    np.testing.assert_allclose(gae, packed_gae_loop(*batch, 0.99, 0.95), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sums, packed_returns_loop(*arguments), rtol=1e-12, atol=1e-12)
    assert (calls["_axpy"] > 0, calls["_dtbsv"] > 0) == (halved, serial)


@pytest.mark.parametrize("shape", [(64, 300), (130, 1000), (1024, 96)])
@pytest.mark.parametrize("block", [None, 64 * 17 + 5])
def test_wide_time_major_buffers_equal_the_clear_form(shape, block):
    # At least NARROW streams side by side: the rows are halved a block at a time, the
    # episodes' ends put back by flat index at every level. Blocks of the library's own
    # length, and of 17 rows and a few steps, so that blocks end mid-way through the halvings.
    rng = np.random.default_rng(7)
    batch = random_packed(rng, shape, p_end=0.02)
    settings = blocks_of(block, sparse=_stream.SPARSE) if block else contextlib.nullcontext()
    with settings:
        check_time_major_fast_forms(batch)


def check_time_major_fast_forms(batch):
    """GAE and the returns by the fast form on a time-major copy of ``batch`` equal the clear
    forms on ``batch`` up to rounding (γ = 0.99, λ = 0.95)."""
    rewards, _, next_values, terminated, truncated = batch
    major = [np.ascontiguousarray(array.T) for array in batch]
    gae = packed_gae(*major, 0.99, 0.95, axis=0, method="banded")
    sums = packed_discounted_returns(*major[:1], *major[2:], 0.99, axis=0, method="banded")
    arguments = (rewards, next_values, terminated, truncated, 0.99)
    assert_equal_up_to_rounding(
        gae.T, packed_gae(*batch, 0.99, 0.95, method="loop"), *gae_scan_inputs(*batch, 0.99, 0.95)
    )
    assert_equal_up_to_rounding(
        sums.T,
        packed_discounted_returns(*arguments, method="loop"),
        *return_scan_inputs(*arguments),
    )


@pytest.mark.parametrize("lanes", [2, 16, 63])
def test_narrow_time_major_blocks_hold_an_odd_number_of_aligned_runs(lanes, monkeypatch):
    # Blocks of 128 rows, 4 runs of 2^LEVELS, would put a block's streams a power of two
    # apart in the buffer they are solved in; they hold 3 runs instead, solved from the
    # end: 12 rows, then 96 three times, with the clear form's numbers.
    steps = []
    original = _stream._solve_constant

    def spied(*arguments):
        steps.append(arguments[5])  # the block's steps per stream
        return original(*arguments)

    monkeypatch.setattr(_stream, "_solve_constant", spied)
    rng = np.random.default_rng(8)
    with blocks_of(128 * lanes):
        check_time_major_fast_forms(random_packed(rng, (lanes, 300), p_end=0.01))
    assert steps == [12, 96, 96, 96] * 2


@given(stream=packed_streams(), gamma=unit_edges, block=block_lengths, position=time_positions)
def test_the_fast_forms_build_the_clear_forms_terms_bit_for_bit(stream, gamma, block, position):
    # With every factor 0 the scan adds nothing (x_t + 0 · y_{t+1} = x_t exactly), so the
    # sums are the terms each form builds: the TD errors of GAE with λ = 0, and the rewards
    # plus bootstraps of returns when every step is truncated.
    rewards, _, next_values, terminated, _ = stream
    axis, moved = in_layout(position, *stream)
    with blocks_of(block):
        fast = packed_gae(*moved, gamma, 0.0, axis=axis, method="banded")
        everywhere = np.ones_like(terminated)
        fast_returns = packed_discounted_returns(
            rewards, next_values, ~everywhere, everywhere, gamma, method="banded"
        )
    np.testing.assert_array_equal(
        np.moveaxis(fast, axis, -1), packed_gae(*stream, gamma, 0.0, method="loop")
    )
    clear_returns = packed_discounted_returns(
        rewards, next_values, ~everywhere, everywhere, gamma, method="loop"
    )
    np.testing.assert_array_equal(fast_returns, clear_returns)


# --- inf and NaN in the packed functions' inputs, found on the result ---------------------------

METHODS = ["loop", "banded"]


def small_stream():
    """Two rows of six steps: row 0 terminates at step 2, row 1 is truncated at step 3."""
    rewards = np.arange(12.0).reshape(2, 6) / 10
    values = np.linspace(0.0, 1.0, 12).reshape(2, 6)
    next_values = np.concatenate([values[:, 1:], [[0.5], [0.25]]], axis=1)
    terminated = np.zeros((2, 6), dtype=bool)
    truncated = np.zeros((2, 6), dtype=bool)
    terminated[0, 2] = True
    truncated[1, 3] = True
    return rewards, values, next_values, terminated, truncated


def with_entry(array, index, value):
    changed = array.copy()
    changed[index] = value
    return changed


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(
    ("argument", "index", "value", "message"),
    [
        ("rewards", (1, 4), np.nan, "rewards must be finite; got nan at index (1, 4)"),
        ("rewards", (0, 0), -np.inf, "rewards must be finite; got -inf at index (0, 0)"),
        ("values", (0, 5), np.inf, "values must be finite; got inf at index (0, 5)"),
        ("next_values", (1, 3), np.nan, "next_values must be finite; got nan at index (1, 3)"),
    ],
)
def test_gae_names_the_input_that_is_not_finite(method, argument, index, value, message):
    arguments = dict(zip(("rewards", "values", "next_values"), small_stream()[:3], strict=False))
    arguments[argument] = with_entry(arguments[argument], index, value)
    _, _, _, terminated, truncated = small_stream()
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        packed_gae(**arguments, terminated=terminated, truncated=truncated, gamma=0.9, lam=0.8,
                   method=method)  # fmt: skip


@pytest.mark.parametrize("method", METHODS)
def test_an_inf_minus_an_inf_is_reported_as_the_input_not_as_an_overflow(method):
    # r - V at step (0, 1) is inf - inf: under the guard that raises a floating-point error
    # in the loop, and gives NaN in the banded solve; either way the input is named.
    rewards, values, next_values, terminated, truncated = small_stream()
    rewards, values = with_entry(rewards, (0, 1), np.inf), with_entry(values, (0, 1), np.inf)
    message = "rewards must be finite; got inf at index (0, 1)"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        packed_gae(rewards, values, next_values, terminated, truncated, 0.9, 0.8, method=method)


@pytest.mark.parametrize("method", METHODS)
def test_finite_inputs_whose_result_overflows_are_reported_as_an_overflow(method):
    rewards, values, next_values, terminated, truncated = small_stream()
    rewards = np.full_like(rewards, 1e308)
    # (The clear form names the scan it calls, discounted_cumsum, as the overflowing quantity.)
    with pytest.raises(ValueError, match=r"^overflow in \w+: the inputs are finite"):
        packed_gae(rewards, values, next_values, terminated, truncated, 1.0, 1.0, method=method)
    with pytest.raises(ValueError, match=r"^overflow in \w+: the inputs are finite"):
        packed_discounted_returns(rewards, next_values, terminated, truncated, 1.0, method=method)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_a_next_value_that_is_never_read_may_hold_anything(method, value):
    rewards, values, next_values, terminated, truncated = small_stream()
    clean = packed_gae(rewards, values, next_values, terminated, truncated, 0.9, 0.8, method=method)
    # GAE never reads V_next at a terminated step.
    odd = with_entry(next_values, (0, 2), value)
    gae = packed_gae(rewards, values, odd, terminated, truncated, 0.9, 0.8, method=method)
    np.testing.assert_array_equal(gae, clean)
    # The return reads V_next only where an episode is cut: at (1, 3) by the time limit, and
    # at (0, 5) and (1, 5) by the end of the stream.
    clean = packed_discounted_returns(
        rewards, next_values, terminated, truncated, 0.9, method=method
    )
    for index in [(0, 1), (0, 2), (0, 4), (1, 0), (1, 4)]:
        odd = with_entry(next_values, index, value)
        sums = packed_discounted_returns(rewards, odd, terminated, truncated, 0.9, method=method)
        np.testing.assert_array_equal(sums, clean)
    message = f"next_values must be finite; got {value!r} at index (1, 5)"
    odd = with_entry(next_values, (1, 5), value)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        packed_discounted_returns(rewards, odd, terminated, truncated, 0.9, method=method)


def test_a_malformed_input_keeps_its_own_error_when_another_is_not_finite():
    # The guard looks at the inputs it names only for inf and NaN: a ragged ``values``
    # does not replace the function's own message about ``rewards``.
    _, _, next_values, terminated, truncated = small_stream()
    message = "rewards must have at least 1 dimension; got shape ()"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        packed_gae(1.0, [[1.0], [1.0, 2.0]], next_values, terminated, truncated, 0.9, 0.8)


@given(
    shape=st.sampled_from([(1, 40), (3, 17), (40, 2), (70, 3)]),
    position=time_positions,
    block=st.sampled_from([1, 5, 64]),
    data=st.data(),
)
def test_the_fast_scan_finds_an_overflow_in_whichever_block_it_is(shape, position, block, data):
    """The fast form checks its sums a block at a time (FiniteBlocks), not after the call.

    Every sum is its own term but one, x_k + x_{k+1} = 2e308 = inf, at a step drawn anywhere
    (the steps before it in its row become 0 × inf = NaN, as in the clear form): in any
    block, in either layout, it must be found; with 1e200 there instead the sums are finite,
    though their squares overflow, and the result must come back as it should be."""
    terms, discounts = np.ones(shape), np.zeros(shape)
    axis, (terms, discounts) = in_layout(position, terms, discounts)
    # Views with time last: setting them sets the arrays.
    steps, factors = np.moveaxis(terms, axis, -1), np.moveaxis(discounts, axis, -1)
    row = data.draw(st.integers(0, steps.shape[0] - 1))
    step = data.draw(st.integers(0, steps.shape[1] - 2))
    factors[row, step] = 1.0
    steps[row, step : step + 2] = 1e308
    with blocks_of(block), pytest.raises(ValueError, match=r"^overflow in discounted_cumsum: the"):
        discounted_cumsum(terms, discounts, axis=axis, method="banded")
    steps[row, step : step + 2] = 1e200
    with blocks_of(block):
        sums = discounted_cumsum(terms, discounts, axis=axis, method="banded")
    expected = terms.copy()
    np.moveaxis(expected, axis, -1)[row, step] = 2e200
    np.testing.assert_array_equal(sums, expected)


def test_the_guard_does_not_read_again_a_result_the_fast_scan_checked(monkeypatch):
    """The clear form's result is checked after the call, the fast form's only as it is built."""
    from rlfound._validation import guard

    reads = []
    monkeypatch.setattr(guard, "_all_finite", lambda array: reads.append(array.shape) or True)
    stream = small_stream()
    for function, arguments in [
        (packed_gae, (*stream, 0.9, 0.8)),
        (packed_discounted_returns, (stream[0], *stream[2:], 0.9)),
        (discounted_cumsum, (stream[0], 0.9)),
    ]:
        reads.clear()
        function(*arguments, method="loop")
        assert reads and set(reads) == {(2, 6)}, function.__name__  # (inner calls check too)
        reads.clear()
        function(*arguments, method="banded")
        assert reads == [], function.__name__
