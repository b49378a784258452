"""The library's promise at its numerical edges, fuzzed for every public function.

Every public function of every module in ``rlfound.__all__`` starts from its valid call in
the convention table (tests/library/test_conventions.py and tests/library/tables/), and
hypothesis changes one argument at a time: a shape (an axis shortened, an axis added, a ragged
list, an empty array), an entry set to NaN, ±inf, ±1e308 or the subnormal 5e-324, the whole
array scaled to 1e308, probability mass moved below resolution (an entry of 5e-324), a scalar
set to an extreme, a size set to 10**18 or 2**63. The function must then either

- return finite floats (no inf, no NaN) and, when only values changed, the documented kind
  and the shapes of the valid call; or
- raise ``ValueError``.

Nothing else may escape: no ``LinAlgError``, ``MemoryError``, ``OverflowError``, unnamed
NumPy error, and no ``RuntimeWarning`` (pyproject turns those into errors). Two outcomes are
someone else's and are allowed: an exception raised inside a callable the table passes in
(the user's code, e.g. an oracle that cannot take a reshaped input), and
``InvariantViolation`` from a check of the invariants kit (its documented verdict on the
function under test).

The sizes get a deterministic pass of their own: every integer argument at 10**18 and 2**63
must be refused (or handled) at once, before anything is allocated.
"""

from __future__ import annotations

import dataclasses
import inspect
import traceback
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rlfound
from rlfound import invariants
from tests._library import public_module
from tests.library.tables.kinds import BATCH, EPISODES, FIGURE, GRADIENT_CHECK, REPORT
from tests.library.test_conventions import EXAMPLES, assert_kind, public_functions

_RLFOUND = str(Path(rlfound.__file__).resolve().parent)
_TESTS = str(Path(__file__).resolve().parents[1])  # all of tests/, not only tests/library/

#: Examples whose function takes no argument to change (they still have an example).
NOTHING_TO_MUTATE = {"tiny_chain_model"}

#: The functions that hand back the arrays of a training batch as given: the contract lets
#: positions outside the masks hold anything, NaN included, so only there may NaN come back.
PASS_THROUGH = {"validate", "pack", "unpack"}

#: The functions that return a log-probability, documented as exactly -inf (log 0) for an
#: event of probability 0.
LOG_OF_ZERO = {"trajectory_log_probability"}

#: Python and NumPy integer sizes nothing can allocate or loop over.
HUGE_SIZES = (10**18, 2**63)


# --- mutations ----------------------------------------------------------------------------------


def _is_mutable(value) -> bool:
    if isinstance(value, (bool, np.bool_, str)) or value is None or callable(value):
        return False
    if isinstance(value, (int, float, np.integer, np.floating)):
        return True
    if isinstance(value, dict):  # a training batch: its arrays are changed one at a time
        return any(_is_mutable(item) for item in value.values())
    return isinstance(value, np.ndarray) and value.size > 0 and value.dtype.kind in "iuf"


def mutable_arguments(example) -> list[str]:
    return [name for name, value in example.kwargs.items() if _is_mutable(value)]


def _sub_resolution(array: np.ndarray) -> np.ndarray:
    """Move the smallest entry of the first row's mass to its largest, leaving 5e-324 behind."""
    changed = array.astype(np.float64).copy()
    row = changed.reshape(-1, changed.shape[-1])[0] if changed.ndim else changed.reshape(1)
    smallest, largest = int(np.argmin(row)), int(np.argmax(row))
    if smallest != largest:
        row[largest] += row[smallest]
    row[smallest] = 5e-324
    return changed


@st.composite
def mutation(draw, value):
    """(label, new value, whether only values changed) for one argument's valid value."""
    if isinstance(value, (int, np.integer)):
        new = draw(st.sampled_from([10**18, 2**63, 2**31, 0, -1, -(2**63) - 1]))
        return f"int {new}", new, False
    if isinstance(value, dict):
        key = draw(st.sampled_from([k for k, item in value.items() if _is_mutable(item)]))
        label, new, values_only = draw(mutation(value[key]))
        return f"[{key!r}] {label}", {**value, key: new}, values_only
    if isinstance(value, (float, np.floating)):
        new = draw(st.sampled_from([np.nan, np.inf, -np.inf, 1e308, -1e308, 5e-324, 1e-300]))
        return f"float {new}", new, True
    kind = draw(
        st.sampled_from(
            ["entry", "scaled", "sub-resolution", "drop", "extra axis", "ragged", "empty"]
            if value.dtype.kind == "f"
            else ["entry", "drop", "extra axis", "ragged", "empty"]
        )
    )
    if kind == "entry":
        index = draw(st.integers(0, value.size - 1))
        changed = value.astype(np.float64 if value.dtype.kind == "f" else value.dtype).copy()
        if value.dtype.kind == "f":
            new = draw(st.sampled_from([np.nan, np.inf, -np.inf, 1e308, -1e308, 5e-324]))
        else:
            new = draw(st.sampled_from([10**18, -(10**18), int(np.iinfo(np.int64).max)]))
        changed.flat[index] = new
        return f"entry {index} = {new}", changed, True
    if kind == "scaled":
        top = float(np.max(np.abs(value)))
        sign = draw(st.sampled_from([1.0, -1.0]))
        return "scaled to 1e308", value / (top or 1.0) * (sign * 1e308), True
    if kind == "sub-resolution":
        return "sub-resolution entry", _sub_resolution(value), True
    if kind == "drop":
        return "last axis shortened", value[..., :-1], False
    if kind == "extra axis":
        return "extra axis", value[None], False
    if kind == "ragged":
        flat = value.ravel().tolist()
        return "ragged", [flat, flat[:-1]], False
    return "empty", np.empty((0,) * value.ndim, dtype=value.dtype), False


# --- the verdict ---------------------------------------------------------------------------------


def _leaves(result):
    if isinstance(result, np.ndarray):
        yield result
    elif isinstance(result, float):
        yield np.asarray(result)
    elif isinstance(result, (tuple, list)):
        for item in result:
            yield from _leaves(item)
    elif isinstance(result, dict):
        for item in result.values():
            yield from _leaves(item)
    elif dataclasses.is_dataclass(result):
        for field in dataclasses.fields(result):
            yield from _leaves(getattr(result, field.name))


def _all_finite(value) -> bool:
    if isinstance(value, dict):
        return all(_all_finite(item) for item in value.values())
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return True  # ragged: refused before anything is computed
    return bool(np.isfinite(array).all())


def _raised_in_user_code(error: BaseException) -> bool:
    """Whether the innermost frame of ours (library or tests) that raised is a test's callable."""
    ours = [
        frame.filename
        for frame in traceback.extract_tb(error.__traceback__)
        if frame.filename.startswith((_RLFOUND, _TESTS))
    ]
    return bool(ours) and ours[-1].startswith(_TESTS) and ours[-1] != __file__


def _shapes(result) -> list[tuple[int, ...]]:
    return [leaf.shape for leaf in _leaves(result)]


# The kinds whose sizes depend on the values (which episodes have positive probability,
# which diagnostics apply) rather than on the shapes of the inputs alone.
_VALUE_DEPENDENT_SHAPES = {EPISODES, BATCH, REPORT, FIGURE, GRADIENT_CHECK}


def check_outcome(example, argument: str, new_value, values_only: bool, label: str) -> None:
    where = f"{example.id}({argument} = {label})"
    try:
        result = example.function(**{**example.kwargs, argument: new_value})
    except ValueError:
        return
    except invariants.InvariantViolation:
        assert public_module(example.function) == invariants.__name__, where
        return
    except Exception as error:
        if _raised_in_user_code(error):
            return
        pytest.fail(f"{where} raised {type(error).__name__}: {error}")
    finally:
        import matplotlib.pyplot as plt

        plt.close("all")
    finite_input = _all_finite(new_value)
    for leaf in _leaves(result):
        if example.id in LOG_OF_ZERO:
            leaf = np.where(leaf == -np.inf, 0.0, leaf)
        if leaf.dtype.kind in "fc" and (finite_input or example.id not in PASS_THROUGH):
            assert np.isfinite(leaf).all(), f"{where} returned a non-finite value"
    if values_only:
        assert_kind(result, example.returns, where)
        if example.returns not in _VALUE_DEPENDENT_SHAPES and not isinstance(
            example.returns, tuple
        ):
            baseline = example.function(**example.kwargs)
            assert _shapes(result) == _shapes(baseline), f"{where} changed the output shape"


# --- coverage -----------------------------------------------------------------------------------


def test_every_public_function_is_fuzzed():
    fuzzed = {e.function for e in EXAMPLES if mutable_arguments(e)}
    exempt = {e.function for e in EXAMPLES if e.function.__name__ in NOTHING_TO_MUTATE}
    missing = [
        f"{f.__module__}.{f.__name__}" for f in public_functions() if f not in fuzzed | exempt
    ]
    assert not missing, f"give these an example with an argument to mutate: {missing}"
    for function in exempt:  # the exemption is only for functions without parameters
        assert not inspect.signature(function).parameters, function.__name__


# --- the properties -----------------------------------------------------------------------------

FUZZED = [e for e in EXAMPLES if mutable_arguments(e)]


@pytest.mark.parametrize("example", FUZZED, ids=lambda e: e.id)
@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_one_changed_argument_gives_finite_output_or_a_value_error(example, data):
    argument = data.draw(st.sampled_from(mutable_arguments(example)), label="argument")
    label, new_value, values_only = data.draw(mutation(example.kwargs[argument]), label="change")
    check_outcome(example, argument, new_value, values_only, label)


SIZE_CASES = [
    pytest.param(example, name, size, id=f"{example.id}-{name}-{size}")
    for example in EXAMPLES
    for name, value in example.kwargs.items()
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    for size in HUGE_SIZES
]


@pytest.mark.parametrize(("example", "argument", "size"), SIZE_CASES)
def test_huge_sizes_are_refused_before_any_work(example, argument, size):
    check_outcome(example, argument, size, False, f"{size}")


# --- ragged nesting: every array argument -------------------------------------------------------


def ragged_forms(value: np.ndarray) -> list[tuple[str, list]]:
    """Nested lists of ``value``'s numbers whose rows at one depth differ in length.

    For a 1-D array, two rows of unequal length (one level added); for an n-D array, also
    its own nesting with the last innermost row shortened by one, so the depth is the valid
    one and only the rectangle is broken.
    """
    flat = value.ravel().tolist()
    forms = [("ragged rows", [flat, flat[:-1]])]
    if value.ndim >= 2 and value.shape[-1] >= 1:
        nested = value.tolist()
        innermost = nested
        for _ in range(value.ndim - 1):
            innermost = innermost[-1]
        innermost.pop()
        forms.append(("ragged innermost row", nested))
    return forms


def _raggable(value) -> bool:
    return isinstance(value, np.ndarray) and value.size > 1 and value.dtype.kind in "biuf"


def ragged_arguments(example):
    """(argument, label, new value) for every array argument, a batch's arrays one at a time."""
    for name, value in example.kwargs.items():
        if _raggable(value):
            for label, nested in ragged_forms(value):
                yield name, label, nested
        elif isinstance(value, dict):
            for key, item in value.items():
                if _raggable(item):
                    for label, nested in ragged_forms(item):
                        yield name, f"[{key!r}] {label}", {**value, key: nested}


RAGGED_CASES = [
    pytest.param(example, name, new, id=f"{example.id}-{name}{label}")
    for example in EXAMPLES
    for name, label, new in ragged_arguments(example)
]


@pytest.mark.parametrize(("example", "argument", "nested"), RAGGED_CASES)
def test_ragged_nesting_is_a_value_error_that_names_the_argument(example, argument, nested):
    """NumPy's own "inhomogeneous shape" error names no argument; the library's must."""
    try:
        example.function(**{**example.kwargs, argument: nested})
    except ValueError as error:
        message = str(error)
        assert "inhomogeneous" not in message, f"{example.id}({argument}): {message}"
        assert message.startswith(argument), f"{example.id}({argument}): {message}"
        return
    except Exception as error:
        if _raised_in_user_code(error):
            return
        pytest.fail(f"{example.id}({argument} ragged) raised {type(error).__name__}: {error}")
    pytest.fail(f"{example.id}({argument} ragged) returned instead of raising")
