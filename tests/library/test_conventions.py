"""The library's conventions, checked for every public function.

The table EXAMPLES holds one valid call of every public function of every module (for newer
modules, in their own file under tests/library/tables/); a public function without an entry fails
test_every_public_function_has_an_example, so a new function cannot skip these checks:

- scalars come back as Python ``float``, arrays as float64 ``ndarray`` (except the documented
  integer and boolean outputs);
- every mask argument (``terminal``, ``terminated``, ``truncated``, ``mask``) accepts bool,
  0/1 integers and 0/1 floats with identical results;
- every function with randomness takes ``rng``: an int seed gives reproducible results and is
  the same as passing ``numpy.random.default_rng(seed)``, one Generator passed twice advances,
  and the global NumPy random state is never touched; every other function is deterministic;
- no function modifies its inputs in place.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect

import numpy as np
import pytest

import rlfound
from rlfound import (
    advantages,
    bandits,
    distributions,
    episodes,
    gradcheck,
    groups,
    importance,
    invariants,
    mdp,
    policy_gradient,
    pomdp,
    returns,
    tokens,
)
from tests._library import MODULES
from tests.library.tables import collect_list
from tests.library.tables.kinds import (
    ARRAY,
    BATCH,
    BOOL_ARRAY,
    EPISODES,
    FIGURE,
    FLOAT,
    GRADIENT_CHECK,
    INT_ARRAY,
    REPORT,
    Example,
)

MASK_ARGUMENTS = ("terminal", "terminated", "truncated", "mask")


# --- the fixtures: small valid inputs, as writable arrays of the documented dtypes ---------------

R3 = np.array([1.0, 0.0, 2.0])
V4 = np.array([0.5, 1.0, 0.0, 0.3])
LOGITS_K = np.array([0.1, -0.2, 0.3])
LOGITS_SA = np.array([[0.1, -0.2], [0.3, 0.0], [0.0, 0.0]])
Q = np.array([0.2, 0.5, 1.0])

CHAIN_P = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
CHAIN_R = np.array([0.0, 1.0, 0.0])
CHAIN_TERMINAL = np.array([False, False, True])

# Three states, two actions, state 2 terminal (its rows all zero: they are ignored).
MDP_P = np.zeros((3, 2, 3))
MDP_P[0, 0] = [0.5, 0.5, 0.0]
MDP_P[0, 1] = [0.0, 0.25, 0.75]
MDP_P[1, 0] = [0.5, 0.0, 0.5]
MDP_P[1, 1] = [0.0, 0.0, 1.0]
MDP_R = np.arange(18.0).reshape(3, 2, 3) / 10.0
MDP_R[2] = 0.0
MDP_POLICY = np.array([[0.5, 0.5], [0.25, 0.75], [0.0, 0.0]])
MDP_TERMINAL = np.array([False, False, True])
MDP_INITIAL = np.array([0.6, 0.4, 0.0])
MDP_STATES = np.array([0, 0, 1, 2])
MDP_ACTIONS = np.array([0, 0, 1])
MDP_EPISODE_REWARDS = np.array([0.0, 0.1, 1.1])

PACKED_R = np.array([[1.0, 0.5, -1.0, 2.0], [0.0, 1.0, 1.0, 0.5]])
PACKED_V = np.array([[0.2, 0.1, 0.0, 0.3], [0.5, 0.4, 0.3, 0.2]])
PACKED_NEXT_V = np.array([[0.1, 0.0, 3.0, 1.0], [0.4, 0.3, 0.2, 2.0]])
PACKED_TERMINATED = np.array([[False, True, False, False], [False, False, False, False]])
PACKED_TRUNCATED = np.array([[False, False, True, False], [False, True, False, False]])

TOKEN_LOGITS = np.linspace(-1.0, 1.0, 24).reshape(2, 3, 4)
TOKENS = np.array([[0, 1, 2], [3, 3, 0]])
LOGPROBS = np.log(np.array([[0.5, 0.25, 0.9], [0.1, 1.0, 0.3]]))
MASK = np.array([[True, False, True], [False, True, True]])
BIGRAM_TABLE = np.linspace(-2.0, 2.0, 20).reshape(5, 4)

DOOR = np.stack([np.eye(2), np.eye(2)[::-1]], axis=1)
SENSOR = np.array([[0.8, 0.2], [0.2, 0.8]])

TARGET = np.array([0.25, 0.75])
BEHAVIOR = np.array([0.8, 0.2])
LOGGED = np.array([0, 1, 1, 0])
LOGGED_REWARDS = np.array([1.0, 3.0, 3.0, 1.0])
LOGGED_DATA = {
    "actions": LOGGED,
    "rewards": LOGGED_REWARDS,
    "target_probs": TARGET,
    "behavior_probs": BEHAVIOR,
}


def squares(x):
    return float(np.sum(x**2))


def twice(x):
    return 2.0 * x


MDP_KWARGS = {"transition": MDP_P, "reward": MDP_R, "policy": MDP_POLICY}

EXAMPLES = [
    # returns
    Example(
        returns.discounted_cumsum, {"terms": R3, "discounts": np.array([0.5, 0.0, 1.0])}, ARRAY
    ),
    Example(returns.discounted_returns, {"rewards": R3, "gamma": 0.9}, ARRAY),
    Example(
        returns.packed_discounted_returns,
        {
            "rewards": PACKED_R,
            "next_values": PACKED_NEXT_V,
            "terminated": PACKED_TERMINATED,
            "truncated": PACKED_TRUNCATED,
            "gamma": 0.9,
        },
        ARRAY,
    ),
    # distributions
    Example(distributions.softmax, {"logits": LOGITS_SA, "axis": 0}, ARRAY),
    Example(distributions.log_softmax, {"logits": LOGITS_SA, "axis": -1}, ARRAY),
    Example(distributions.categorical_score, {"logits": LOGITS_K, "actions": LOGGED}, ARRAY),
    # mdp
    Example(
        mdp.evaluate_policy,
        {"transition_pi": CHAIN_P, "reward_pi": CHAIN_R, "gamma": 1.0, "terminal": CHAIN_TERMINAL},
        ARRAY,
    ),
    Example(
        mdp.bellman_residual,
        {
            "values": np.array([1.0, 1.0, 0.0]),
            "transition_pi": CHAIN_P,
            "reward_pi": CHAIN_R,
            "gamma": 0.9,
        },
        ARRAY,
    ),
    Example(mdp.tiny_chain_model, {}, (ARRAY, ARRAY, BOOL_ARRAY)),
    Example(mdp.tiny_chain, {"gamma": 0.9}, ARRAY),
    Example(
        mdp.policy_transition_and_reward, {**MDP_KWARGS, "terminal": MDP_TERMINAL}, (ARRAY, ARRAY)
    ),
    Example(mdp.state_values, {**MDP_KWARGS, "gamma": 1.0, "terminal": MDP_TERMINAL}, ARRAY),
    Example(mdp.action_values, {**MDP_KWARGS, "gamma": 0.9, "terminal": MDP_TERMINAL}, ARRAY),
    Example(mdp.advantage_values, {**MDP_KWARGS, "gamma": 0.9, "terminal": MDP_TERMINAL}, ARRAY),
    # bandits
    Example(bandits.bandit_objective, {"logits": LOGITS_K, "action_rewards": Q}, FLOAT),
    Example(bandits.exact_bandit_gradient, {"logits": LOGITS_K, "action_rewards": Q}, ARRAY),
    Example(
        bandits.reinforce_gradient_estimate,
        {
            "logits": LOGITS_K,
            "actions": LOGGED,
            "rewards": LOGGED_REWARDS,
            "baseline": R3[[0, 1, 2, 0]],
        },
        ARRAY,
    ),
    Example(
        bandits.reinforce_bandit_history,
        {
            "action_rewards": Q,
            "num_steps": 5,
            "batch_size": 4,
            "lr": 0.5,
            "baseline": "mean",
            "rng": 3,
        },
        ARRAY,
    ),
    Example(
        bandits.reinforce_bandit,
        {
            "action_rewards": Q,
            "num_steps": 5,
            "batch_size": 4,
            "lr": 0.5,
            "baseline": "none",
            "rng": 3,
        },
        (ARRAY, ARRAY),
    ),
    # importance
    Example(
        importance.importance_ratios,
        {"actions": LOGGED, "target_probs": TARGET, "behavior_probs": BEHAVIOR},
        ARRAY,
    ),
    *[
        Example(function, dict(LOGGED_DATA), FLOAT)
        for function in (importance.off_policy_value, importance.weighted_off_policy_value)
    ],
    Example(
        importance.importance_sampling_variance,
        {
            "target_probs": TARGET,
            "behavior_probs": BEHAVIOR,
            "action_rewards": np.array([1.0, 3.0]),
        },
        FLOAT,
    ),
    Example(importance.effective_sample_size, {"weights": np.array([0.5, 2.0, 1.0])}, FLOAT),
    # advantages
    Example(advantages.td_errors, {"rewards": R3, "values": V4, "gamma": 0.9}, ARRAY),
    Example(
        advantages.k_step_advantages, {"rewards": R3, "values": V4, "gamma": 0.9, "k": 2}, ARRAY
    ),
    Example(
        advantages.gae_recursive, {"rewards": R3, "values": V4, "gamma": 0.9, "lam": 0.8}, ARRAY
    ),
    Example(
        advantages.gae_explicit, {"rewards": R3, "values": V4, "gamma": 0.9, "lam": 0.8}, ARRAY
    ),
    Example(
        advantages.packed_gae,
        {
            "rewards": PACKED_R,
            "values": PACKED_V,
            "next_values": PACKED_NEXT_V,
            "terminated": PACKED_TERMINATED,
            "truncated": PACKED_TRUNCATED,
            "gamma": 0.9,
            "lam": 0.8,
        },
        ARRAY,
    ),
    Example(
        advantages.whiten_advantages,
        {
            "advantages": np.array([[1.0, -2.0, 0.5], [0.25, 3.0, 9.0]]),
            "mask": np.array([[True, True, False], [True, True, True]]),
            "ddof": 1,
            "eps": 1e-8,
            "eps_form": "variance",
            "shift_mean": True,
        },
        ARRAY,
    ),
    # tokens
    Example(tokens.enumerate_sequences, {"vocab_size": 2, "length": 3}, INT_ARRAY),
    Example(tokens.token_logprobs, {"logits": TOKEN_LOGITS, "tokens": TOKENS}, ARRAY),
    Example(tokens.sequence_logprob, {"logprobs": LOGPROBS[0], "mask": MASK[0]}, FLOAT),
    Example(tokens.sequence_logprob, {"logprobs": LOGPROBS, "mask": MASK}, ARRAY),
    Example(tokens.bigram_logits, {"bigram_table": BIGRAM_TABLE, "tokens": TOKENS}, ARRAY),
    Example(
        tokens.parser_marginal,
        {
            "sequence_logprobs": np.log([0.5, 0.2, 0.2]),
            "actions": np.array([0, 1, -1]),
            "num_actions": 2,
        },
        ARRAY,
    ),
    Example(tokens.negative_log_likelihood, {"logprobs": LOGPROBS, "mask": MASK}, FLOAT),
    Example(
        tokens.cross_entropy_logit_gradient, {"logits": TOKEN_LOGITS, "targets": TOKENS}, ARRAY
    ),
    Example(
        tokens.expand_turn_values_to_tokens,
        {"turn_values": np.array([2.0, -1.0]), "token_turn_ids": np.array([-1, 0, 0, -1, 1])},
        ARRAY,
    ),
    # pomdp
    Example(
        pomdp.predict_belief,
        {"belief": np.array([0.7, 0.3]), "action": 1, "transition": DOOR},
        ARRAY,
    ),
    Example(
        pomdp.correct_belief,
        {"predicted": np.array([0.3, 0.7]), "observation": 0, "observation_model": SENSOR},
        ARRAY,
    ),
    Example(
        pomdp.belief_update,
        {
            "belief": np.array([0.7, 0.3]),
            "action": 1,
            "observation": 0,
            "transition": DOOR,
            "observation_model": SENSOR,
        },
        ARRAY,
    ),
    *[
        Example(
            function,
            {
                "prior": np.array([0.5, 0.5]),
                "actions": np.array([1, 0]),
                "observations": np.array([1, 1]),
                "transition": DOOR,
                "observation_model": SENSOR,
                "initial_observation": 0,
            },
            ARRAY,
        )
        for function in (pomdp.belief_filter, pomdp.belief_by_enumeration)
    ],
    # episodes
    Example(
        episodes.sample_episodes,
        {
            **MDP_KWARGS,
            "initial": MDP_INITIAL,
            "horizon": 3,
            "num_episodes": 20,
            "terminal": MDP_TERMINAL,
            "rng": 5,
        },
        EPISODES,
    ),
    Example(
        episodes.enumerate_episodes,
        {**MDP_KWARGS, "initial": MDP_INITIAL, "horizon": 3, "terminal": MDP_TERMINAL},
        EPISODES,
    ),
    # policy_gradient
    Example(
        policy_gradient.trajectory_log_probability,
        {
            "logits": LOGITS_SA,
            "transition": MDP_P,
            "initial": MDP_INITIAL,
            "states": MDP_STATES,
            "actions": MDP_ACTIONS,
            "terminal": MDP_TERMINAL,
        },
        FLOAT,
    ),
    Example(
        policy_gradient.trajectory_score,
        {"logits": LOGITS_SA, "states": MDP_STATES, "actions": MDP_ACTIONS},
        ARRAY,
    ),
    Example(
        policy_gradient.expected_return,
        {
            "logits": LOGITS_SA,
            "transition": MDP_P,
            "reward": MDP_R,
            "initial": MDP_INITIAL,
            "gamma": 1.0,
            "terminal": MDP_TERMINAL,
        },
        FLOAT,
    ),
    Example(
        policy_gradient.optimal_state_baseline,
        {
            "logits": LOGITS_SA,
            "states": np.array([MDP_STATES, [0, 1, 2, 2]]),
            "actions": np.array([MDP_ACTIONS, [0, 1, -1]]),
            "rewards": np.array([MDP_EPISODE_REWARDS, [0.1, 0.5, 0.0]]),
            "gamma": 0.9,
            "weights": np.array([0.3, 0.7]),
            "reward_to_go": True,
        },
        ARRAY,
    ),
    Example(
        policy_gradient.reinforce_trajectory_gradient,
        {
            "logits": LOGITS_SA,
            "states": MDP_STATES,
            "actions": MDP_ACTIONS,
            "rewards": MDP_EPISODE_REWARDS,
            "gamma": 0.9,
            "reward_to_go": False,
            "baseline": np.array([0.5, -0.5, 0.0]),
        },
        ARRAY,
    ),
    # groups
    Example(groups.leave_one_out_advantages, {"rewards": PACKED_R}, ARRAY),
    Example(
        groups.group_normalized_advantages,
        {"rewards": PACKED_R, "eps": 1e-6, "ddof": 1, "include_self": False},
        ARRAY,
    ),
    Example(
        groups.enumerate_group_gradient,
        {
            "logits": LOGITS_K,
            "action_rewards": Q,
            "group_size": 2,
            "advantage_fn": groups.leave_one_out_advantages,
        },
        ARRAY,
    ),
    # gradcheck
    Example(
        gradcheck.numerical_gradient, {"f": squares, "x": np.array([1.0, -2.0]), "eps": 1e-6}, ARRAY
    ),
    Example(
        gradcheck.relative_error,
        {"a": np.array([1.0, 0.0]), "b": np.array([1.1, 0.0]), "floor": 1e-8},
        ARRAY,
    ),
    Example(
        gradcheck.check_gradient,
        {
            "f": squares,
            "grad": twice,
            "x": np.array([1.0, -2.0]),
            "eps": 1e-6,
            "rtol": 1e-5,
            "atol": 1e-8,
        },
        GRADIENT_CHECK,
    ),
]

EXAMPLES += collect_list("EXAMPLES")  # the modules whose tables live in tests/library/tables/


def public_functions():
    """Every function named in the __all__ of a library module (not classes or constants)."""
    for module in MODULES:
        for name in module.__all__:
            member = getattr(module, name)
            if inspect.isfunction(member):
                yield member


def parameters(function) -> list[str]:
    return list(inspect.signature(function).parameters)


def examples_with(argument_names):
    """The examples of functions that take one of ``argument_names``."""
    return [e for e in EXAMPLES if set(parameters(e.function)) & set(argument_names)]


def call(example: Example, **changes):
    return example.function(**{**example.kwargs, **changes})


def assert_kind(result, kind, where="result"):
    if isinstance(kind, tuple):
        assert isinstance(result, tuple) and len(result) == len(kind), where
        for i, (item, item_kind) in enumerate(zip(result, kind, strict=True)):
            assert_kind(item, item_kind, f"{where}[{i}]")
    elif kind == FLOAT:
        assert type(result) is float, f"{where} is {type(result).__name__}, not a Python float"
    elif kind in (ARRAY, INT_ARRAY, BOOL_ARRAY):
        dtype = {ARRAY: np.float64, INT_ARRAY: np.int64, BOOL_ARRAY: np.bool_}[kind]
        assert type(result) is np.ndarray, f"{where} is {type(result).__name__}, not an ndarray"
        assert result.dtype == dtype, f"{where} has dtype {result.dtype}, not {dtype}"
    elif kind == REPORT:
        assert type(result) is tuple and len(result) == 2, where
        table, skipped = result
        assert type(table) is dict and all(type(v) is float for v in table.values()), where
        assert type(skipped) is dict and all(type(v) is str for v in skipped.values()), where
    elif kind == FIGURE:
        from matplotlib.figure import Figure

        assert isinstance(result, Figure), where
    elif kind == BATCH:
        assert type(result) is dict, f"{where} is {type(result).__name__}, not a dict"
        for name, value in result.items():
            assert type(value) is np.ndarray, f"{where}[{name!r}] is not an ndarray"
            assert value.dtype in (np.float64, np.int64, np.bool_), f"{where}[{name!r}]"
    elif kind == EPISODES:
        assert isinstance(result, episodes.Episodes), where
        for field in ("states", "actions", "lengths"):
            assert_kind(getattr(result, field), INT_ARRAY, f"{where}.{field}")
        for field in ("rewards", "weights"):
            assert_kind(getattr(result, field), ARRAY, f"{where}.{field}")
        for field in ("terminated", "truncated"):
            assert_kind(getattr(result, field), BOOL_ARRAY, f"{where}.{field}")
        assert type(len(result)) is int
    elif kind == GRADIENT_CHECK:
        assert isinstance(result, gradcheck.GradientCheck), where
        assert type(result.passed) is bool
        assert type(result.max_abs_error) is float and type(result.max_rel_error) is float
        assert all(type(i) is int for i in result.worst_index)
        assert_kind(result.numerical, ARRAY, f"{where}.numerical")
        assert_kind(result.analytic, ARRAY, f"{where}.analytic")
    else:
        raise AssertionError(f"unknown kind {kind!r}")


def assert_same(a, b, where="result"):
    """Equal values of equal types, recursively (arrays: equal dtypes and entries)."""
    assert type(a) is type(b), where
    if dataclasses.is_dataclass(a):
        for field in dataclasses.fields(a):
            assert_same(getattr(a, field.name), getattr(b, field.name), f"{where}.{field.name}")
    elif isinstance(a, tuple | list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype, where
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif hasattr(a, "savefig"):  # two figures never compare equal: compare their panels
        import matplotlib.pyplot as plt

        assert [ax.get_title() for ax in a.axes] == [ax.get_title() for ax in b.axes], where
        plt.close(a)
        plt.close(b)
    elif not callable(a):
        assert a == b, where


def global_random_state():
    # Read, never used: the check is that no library function draws from this global state.
    return np.random.get_state(legacy=False)  # noqa: NPY002


# --- coverage ---------------------------------------------------------------------------------


def test_every_library_module_is_checked():
    assert {m.__name__.rsplit(".", 1)[-1] for m in MODULES} == set(rlfound.__all__) - {
        "__version__"
    }


def test_every_public_function_has_an_example():
    covered = {example.function for example in EXAMPLES}
    missing = [f"{f.__module__}.{f.__name__}" for f in public_functions() if f not in covered]
    assert not missing, f"add an entry to EXAMPLES for {missing}"


def test_every_mask_argument_has_an_example_that_sets_it():
    missing = [
        f"{f.__name__}({name})"
        for f in public_functions()
        for name in set(parameters(f)) & set(MASK_ARGUMENTS)
        if not any(e.function is f and e.kwargs.get(name) is not None for e in EXAMPLES)
    ]
    assert not missing, f"give these masks a value in EXAMPLES: {missing}"


# --- return types -----------------------------------------------------------------------------


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_scalars_are_python_floats_and_arrays_are_float64(example):
    assert_kind(call(example), example.returns)


# --- masks ------------------------------------------------------------------------------------

MASK_CASES = [
    (example, name)
    for example in examples_with(MASK_ARGUMENTS)
    for name in MASK_ARGUMENTS
    if example.kwargs.get(name) is not None
]


MASK_FORMS = {
    "int": lambda mask: mask.astype(np.int64),
    "float": lambda mask: mask.astype(np.float64),
    "list": lambda mask: mask.astype(int).tolist(),
}


@pytest.mark.parametrize("form", MASK_FORMS)
@pytest.mark.parametrize(
    ("example", "name"), MASK_CASES, ids=[f"{e.id}-{n}" for e, n in MASK_CASES]
)
def test_masks_accept_bool_and_zero_one_numbers_alike(example, name, form):
    mask = example.kwargs[name]
    assert mask.dtype == np.bool_ and mask.any() and not mask.all()  # a meaningful mask
    assert_same(call(example, **{name: MASK_FORMS[form](mask)}), call(example))


# --- randomness -------------------------------------------------------------------------------

RANDOM = examples_with(["rng"])
DETERMINISTIC = [e for e in EXAMPLES if e not in RANDOM]


def test_the_functions_with_randomness_are_the_ones_listed():
    # The invariants kit draws its test cases from rng; branch_advantage samples branches.
    kit = {name for name in invariants.__all__ if name.startswith("check_")}
    assert {e.function.__name__ for e in RANDOM} == {
        "reinforce_bandit_history",
        "reinforce_bandit",
        "sample_episodes",
        "branch_advantage",
        *kit,
    }


@pytest.mark.parametrize("example", RANDOM, ids=lambda e: e.id)
def test_the_same_int_seed_gives_the_same_result(example):
    assert_same(call(example, rng=11), call(example, rng=11))


@pytest.mark.parametrize("example", RANDOM, ids=lambda e: e.id)
def test_different_seeds_give_different_results(example):
    with pytest.raises(AssertionError):
        assert_same(call(example, rng=11), call(example, rng=12))


@pytest.mark.parametrize("example", RANDOM, ids=lambda e: e.id)
def test_an_int_seed_is_the_same_as_a_generator_seeded_with_it(example):
    assert_same(call(example, rng=np.random.default_rng(11)), call(example, rng=11))


@pytest.mark.parametrize("example", RANDOM, ids=lambda e: e.id)
def test_one_generator_passed_twice_advances(example):
    generator = np.random.default_rng(11)
    first = call(example, rng=generator)
    with pytest.raises(AssertionError):
        assert_same(call(example, rng=generator), first)


@pytest.mark.parametrize("example", RANDOM, ids=lambda e: e.id)
def test_no_rng_draws_fresh_entropy_and_leaves_the_global_state_alone(example):
    before = global_random_state()
    assert_kind(call(example, rng=None), example.returns)
    assert_same(global_random_state(), before)


@pytest.mark.parametrize("example", DETERMINISTIC, ids=lambda e: e.id)
def test_functions_without_rng_are_deterministic_and_leave_the_global_state_alone(example):
    before = global_random_state()
    assert_same(call(example), call(example))
    assert_same(global_random_state(), before)


# --- inputs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_inputs_are_not_modified(example):
    kwargs = {name: value for name, value in example.kwargs.items() if not callable(value)}
    before = copy.deepcopy(kwargs)
    example.function(**example.kwargs)
    assert_same(kwargs, before, "arguments")
