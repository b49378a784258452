"""The reference solution of chapter 4's code exercise is right.

It is checked against the library, against hand computations and an independent per-episode
loop, and against its grading specification, evaluated in-process: the reference must pass
every check and its starter none. The file itself (solution markers, starter, imports,
docstring examples) is checked with every other solution file in ``test_solution_files.py``.
"""

from __future__ import annotations

import traceback

import numpy as np
import pytest

from rlfound import advantages, returns
from rlfound.grading import spec
from rlfound.grading.starter import strip_solutions
from tests._solutions import SOLUTIONS, load_module, load_solution

SPEC_FILE = spec.BUILTIN_DIR / "gae_timeouts.py"

SOURCE = (SOLUTIONS / "gae_timeouts.py").read_text(encoding="utf-8")
solution = load_solution("gae_timeouts")
gae = solution.gae_with_timeouts


def per_episode(rewards, values, next_values, terminated, truncated, gamma, lam):
    """Independent reference for one row: split at boundaries, scalar recursion per episode."""
    out = np.zeros(len(rewards))
    start = 0
    for end in range(len(rewards)):
        if not (terminated[end] or truncated[end] or end == len(rewards) - 1):
            continue
        running = 0.0
        for t in range(end, start - 1, -1):
            if t == end:
                bootstrap = 0.0 if terminated[t] else next_values[t]
            else:
                bootstrap = next_values[t]
            running = rewards[t] + gamma * bootstrap - values[t] + gamma * lam * running
            out[t] = running
        start = end + 1
    return out


def random_case(rng, shape):
    kind = rng.choice(3, size=shape, p=[0.6, 0.2, 0.2])
    return (
        rng.normal(size=shape),
        rng.normal(size=shape),
        rng.normal(size=shape),
        kind == 1,
        kind == 2,
    )


# --- the function itself -------------------------------------------------------------------


def test_the_students_test_passes():
    solution.test_gae_with_timeouts()


@pytest.mark.parametrize("shape", [(1,), (7,), (3, 10), (2, 3, 15)])
@pytest.mark.parametrize(("gamma", "lam"), [(0.99, 0.95), (1.0, 1.0), (0.0, 0.0), (0.9, 0.0)])
def test_matches_the_library_and_a_per_episode_loop(shape, gamma, lam):
    rng = np.random.default_rng(hash((shape, gamma, lam)) % 2**32)
    rewards, values, next_values, terminated, truncated = random_case(rng, shape)
    got = gae(rewards, values, next_values, terminated, truncated, gamma, lam)
    assert got.shape == shape and got.dtype == np.float64
    library = advantages.batched_gae(
        rewards, values, next_values, terminated, truncated, gamma, lam
    )
    np.testing.assert_allclose(got, library, rtol=1e-12, atol=1e-12)
    flat = [x.reshape(-1, shape[-1]) for x in (rewards, values, next_values, terminated, truncated)]
    for row in range(flat[0].shape[0]):
        expected = per_episode(*(x[row] for x in flat), gamma, lam)
        np.testing.assert_allclose(got.reshape(-1, shape[-1])[row], expected, atol=1e-12)


def test_hand_computed_edge_cases():
    r = np.array([1.0, 2.0, 3.0])
    v = np.full(3, 0.5)
    v_next = np.full(3, 4.0)
    yes, no = np.ones(3, dtype=bool), np.zeros(3, dtype=bool)
    np.testing.assert_allclose(gae(r, v, v_next, yes, no, 0.9, 0.9), r - v)
    np.testing.assert_allclose(gae(r, v, v_next, no, yes, 0.9, 0.9), r + 0.9 * v_next - v)
    # No boundary: one episode cut by the array end, the plain recursion with bootstrap 4.
    chain = np.array([0.5, 0.5, 4.0])
    deltas = r + 0.9 * chain - v
    expected = [
        deltas[0] + 0.81 * deltas[1] + 0.81**2 * deltas[2],
        deltas[1] + 0.81 * deltas[2],
        deltas[2],
    ]
    np.testing.assert_allclose(gae(r, v, chain, no, no, 0.9, 0.9), expected)
    # T = 1.
    assert gae([1.0], [0.5], [2.0], [False], [True], 0.9, 0.95).tolist() == pytest.approx([2.3])
    assert gae([1.0], [0.5], [2.0], [True], [False], 0.9, 0.95).tolist() == pytest.approx([0.5])
    assert gae([1.0], [0.5], [2.0], [False], [False], 0.9, 0.95).tolist() == pytest.approx([2.3])


def test_lambda_one_plus_values_is_the_bootstrapped_return():
    rng = np.random.default_rng(3)
    rewards, values, next_values, terminated, truncated = random_case(rng, (4, 12))
    inside = ~(terminated | truncated)[:, :-1]
    next_values[:, :-1][inside] = values[:, 1:][inside]
    got = gae(rewards, values, next_values, terminated, truncated, 0.97, 1.0) + values
    expected = returns.batched_discounted_returns(
        rewards, terminated, truncated, 0.97, next_values=next_values
    )
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_terminal_next_values_are_never_read():
    rng = np.random.default_rng(4)
    rewards, values, next_values, terminated, truncated = random_case(rng, (3, 9))
    changed = np.where(terminated, 1e6, next_values)
    np.testing.assert_array_equal(
        gae(rewards, values, next_values, terminated, truncated, 0.9, 0.8),
        gae(rewards, values, changed, terminated, truncated, 0.9, 0.8),
    )


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"truncated": [False, True, False]}, "truncated"),  # both flags at step 1
        ({"values": [0.0, 0.0]}, "values"),
        ({"next_values": np.zeros((1, 3))}, "next_values"),
        ({"terminated": [False, False]}, "terminated"),
        ({"terminated": [0, 2, 0]}, "terminated"),
        ({"gamma": 1.5}, "gamma"),
        ({"lam": -0.1}, "lam"),
        ({"gamma": float("nan")}, "gamma"),
        ({"rewards": [0.0, float("inf"), 0.0]}, "rewards"),
        ({"rewards": 1.0, "values": 1.0, "next_values": 1.0}, "rewards"),
    ],
)
def test_bad_input_raises_a_value_error_naming_the_argument(change, name):
    arguments = {
        "rewards": [0.0, 1.0, 0.0],
        "values": [0.0, 0.0, 0.0],
        "next_values": [0.0, 0.0, 0.0],
        "terminated": [False, True, False],
        "truncated": [False, False, False],
        "gamma": 0.9,
        "lam": 0.9,
    }
    arguments.update(change)
    with pytest.raises(ValueError, match=rf"^{name}"):
        gae(**arguments)


# --- the grading specification, evaluated in-process ---------------------------------------


def run_checks(exercise, module, seed=7):
    """Score every check of ``exercise`` against ``module`` without the sandbox."""
    reference = exercise.reference()
    outcomes = {}
    for check in exercise.checks:
        prepared = check.prepare(exercise.rng(check, seed), reference)
        replies = []
        for call in prepared.calls:
            try:
                value = getattr(module, call.function)(**call.kwargs)
                replies.append(np.asarray(value, dtype=np.float64))
            except Exception:  # the verdict, not the test, decides what an error means
                replies.append(spec.CallError(traceback.format_exc()))
        outcomes[check.name] = prepared.judge(replies)
    return outcomes


def test_the_specification_loads_and_matches_the_solution():
    exercise = spec.load_file(SPEC_FILE)
    assert exercise.id == "gae-timeouts" and exercise.chapter == 4 and exercise.stars == 3
    assert exercise.solution_path == (SOLUTIONS / "gae_timeouts.py").resolve()
    assert [f.name for f in exercise.functions] == ["gae_with_timeouts"]
    assert any(not check.public for check in exercise.checks)
    exercise.reference()  # the declared signature matches the solution's


def test_the_reference_passes_every_check_and_the_starter_none(tmp_path):
    exercise = spec.load_file(SPEC_FILE)
    for seed in (0, 7):
        outcomes = run_checks(exercise, solution, seed)
        failed = {name: o.message for name, o in outcomes.items() if not o.passed}
        assert not failed, failed
    starter_path = tmp_path / "starter_gae_timeouts.py"
    starter_path.write_text(strip_solutions(SOURCE), encoding="utf-8")
    starter = load_module(starter_path, "_starter_module_gae_timeouts")
    outcomes = run_checks(exercise, starter)
    passed = [name for name, o in outcomes.items() if o.passed]
    assert not passed, passed


def test_the_specification_catches_a_timeout_marked_terminal(tmp_path):
    """A submission that treats truncation like termination must lose points."""
    buggy_source = SOURCE.replace(
        'np.where(terminated, 0.0, arrays["next_values"])',
        'np.where(terminated | truncated, 0.0, arrays["next_values"])',
    )
    assert buggy_source != SOURCE
    path = tmp_path / "buggy_gae_timeouts.py"
    path.write_text(buggy_source, encoding="utf-8")
    buggy = load_module(path, "_buggy_gae_timeouts")
    outcomes = run_checks(spec.load_file(SPEC_FILE), buggy)
    for name in ("random-boundaries", "edge-cases", "folding-identity", "graded-long-batches"):
        assert not outcomes[name].passed, name
