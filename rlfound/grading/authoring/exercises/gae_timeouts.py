"""Exercise ``gae-timeouts``: GAE over packed episodes with terminated and truncated steps."""

import numpy as np

from rlfound.grading.authoring.spec import (
    BOOK_SOLUTIONS,
    Compare,
    Exercise,
    Function,
    Manual,
    Property,
    Raises,
)


def boundary_flags(rng, shape, p_terminal=0.15, p_truncated=0.15):
    """Random terminated and truncated masks of ``shape`` that are never both True."""
    kind = rng.choice(3, size=shape, p=[1.0 - p_terminal - p_truncated, p_terminal, p_truncated])
    return kind == 1, kind == 2


def packed_case(rng, shape, gamma=None, lam=None):
    """One batch with random rewards, values and episode boundaries.

    Inside an episode ``next_values`` equals the next step's value, as a collector would store
    it; at a boundary and at the array end it is an independent number (the final
    observation's value, or anything at a terminated step).
    """
    rewards = rng.normal(size=shape)
    values = rng.normal(size=shape)
    terminated, truncated = boundary_flags(rng, shape)
    next_values = rng.normal(size=shape)
    inside = ~(terminated | truncated)[..., :-1]
    next_values[..., :-1][inside] = values[..., 1:][inside]
    return {
        "rewards": rewards,
        "values": values,
        "next_values": next_values,
        "terminated": terminated,
        "truncated": truncated,
        "gamma": float(rng.uniform(0.8, 1.0)) if gamma is None else gamma,
        "lam": float(rng.uniform(0.0, 1.0)) if lam is None else lam,
    }


def random_batches(rng):
    """Batches of a few rows with random lengths (including T = 1) and random boundaries."""
    return [packed_case(rng, (4, horizon)) for horizon in (1, 2, 5, 12, 30)]


def batch_shapes(rng):
    """One trajectory (1-D) and extra leading batch axes."""
    return [packed_case(rng, shape) for shape in ((9,), (1, 1), (3, 2, 7), (2, 1, 3, 4))]


def edge_cases(rng):
    """Every step terminated, every step truncated, no boundary at all, and T = 1."""
    cases = []
    for label in ("all-terminated", "all-truncated", "no-boundary"):
        case = packed_case(rng, (3, 6), gamma=0.9, lam=0.95)
        case["terminated"] = np.full((3, 6), label == "all-terminated")
        case["truncated"] = np.full((3, 6), label == "all-truncated")
        if label == "no-boundary":
            case["next_values"][:, :-1] = case["values"][:, 1:]
        cases.append(case)
    for terminated, truncated in ((True, False), (False, True), (False, False)):
        case = packed_case(rng, (2, 1), gamma=0.9, lam=0.5)
        case["terminated"] = np.full((2, 1), terminated)
        case["truncated"] = np.full((2, 1), truncated)
        cases.append(case)
    return cases


def extreme_parameters(rng):
    """gamma and lambda at 0 and 1 (0 ** 0 == 1: with lambda = 0 the advantage is delta)."""
    return [
        packed_case(rng, (3, 8), gamma=gamma, lam=lam) for gamma in (0.0, 1.0) for lam in (0.0, 1.0)
    ]


def stacked(first, second):
    """One case whose two rows are the two given 1-D problems (same gamma and lambda)."""
    keys = ("rewards", "values", "next_values", "terminated", "truncated")
    return {
        **{key: np.stack([first[key], second[key]]) for key in keys},
        "gamma": first["gamma"],
        "lam": first["lam"],
    }


def folded_pairs(rng):
    """Row 0: a problem with truncations; row 1: the same with each truncation folded.

    Folding adds gamma * next_values to the reward of a truncated step and marks it terminated,
    which must not change any advantage.
    """
    cases = []
    for horizon in (1, 6, 20):
        original = packed_case(rng, (horizon,))
        original["terminated"][-1] = False  # at least one truncation: the last step
        original["truncated"][-1] = True
        folded = dict(original)
        folded["rewards"] = original["rewards"] + original["gamma"] * (
            original["truncated"] * original["next_values"]
        )
        folded["terminated"] = original["terminated"] | original["truncated"]
        folded["truncated"] = np.zeros(horizon, dtype=bool)
        cases.append(stacked(original, folded))
    return cases


def terminal_values_ignored(rng):
    """Row 1 differs from row 0 only in next_values at terminated steps (never read)."""
    cases = []
    for horizon in (4, 15):
        original = packed_case(rng, (horizon,))
        original["terminated"][-1] = True
        original["truncated"][-1] = False
        changed = dict(original)
        changed["next_values"] = np.where(
            original["terminated"], 1e3 * rng.normal(size=horizon), original["next_values"]
        )
        cases.append(stacked(original, changed))
    return cases


def recursion_residual(advantages, case):
    """How far advantages are from the defining recursion of GAE over packed episodes:
    A_t = delta_t + gamma lam (1 - done_t) A_(t+1), with A_T = 0 at the array end and delta_t =
    r_t + gamma (1 - terminated_t) next_values_t - values_t. Only the right advantages satisfy
    it (the recursion determines them), unlike two rows that are merely equal."""
    terminated = np.asarray(case["terminated"], dtype=bool)
    done = terminated | np.asarray(case["truncated"], dtype=bool)
    gamma, lam = case["gamma"], case["lam"]
    deltas = case["rewards"] + gamma * np.where(terminated, 0.0, case["next_values"])
    deltas = deltas - case["values"]
    following = np.concatenate([advantages[..., 1:], np.zeros((*advantages.shape[:-1], 1))], -1)
    expected = deltas + gamma * lam * np.where(done, 0.0, following)
    scale = max(1.0, float(np.max(np.abs(deltas))))
    return float(np.max(np.abs(advantages - expected))) / scale


def rows_agree(advantages, case):
    """The two rows of a stacked case describe the same advantages (and they are GAE's)."""
    if advantages.shape != case["rewards"].shape:
        return f"expected shape {case['rewards'].shape}, got shape {advantages.shape}"
    gap = float(np.max(np.abs(advantages[0] - advantages[1])))
    if gap > 1e-9:
        return f"the two equivalent rows differ by up to {gap:.3g}"
    residual = recursion_residual(advantages, case)
    return residual <= 1e-9 or (
        f"the rows agree, but miss A_t = delta_t + gamma lam (1 - done_t) A_(t+1) by up to "
        f"{residual:.3g} (relative)"
    )


def both_flags():
    rewards = np.zeros(3)
    flags = np.array([False, True, False])
    return {
        "rewards": rewards,
        "values": rewards,
        "next_values": rewards,
        "terminated": flags,
        "truncated": flags,
        "gamma": 0.9,
        "lam": 0.9,
    }


def wrong_shape():
    case = both_flags()
    case["truncated"] = np.zeros(3, dtype=bool)
    case["next_values"] = np.zeros(4)
    return case


def bad_parameter(name, value):
    case = both_flags()
    case["truncated"] = np.zeros(3, dtype=bool)
    case[name] = value
    return case


EXERCISE = Exercise(
    id="gae-timeouts",
    title="GAE with terminated and truncated steps",
    chapter=4,
    stars=3,
    solution=BOOK_SOLUTIONS / "gae_timeouts.py",
    functions=[
        Function(
            name="gae_with_timeouts",
            parameters="rewards, values, next_values, terminated, truncated, gamma, lam",
        )
    ],
    checks=[
        Compare(
            name="random-boundaries",
            function="gae_with_timeouts",
            inputs=random_batches,
            points=3,
            description="Matches the reference on batches with random episode boundaries.",
        ),
        Compare(
            name="edge-cases",
            function="gae_with_timeouts",
            inputs=edge_cases,
            points=2,
            description="All steps terminated, all truncated, no boundary, and T = 1.",
        ),
        Compare(
            name="batch-shapes",
            function="gae_with_timeouts",
            inputs=batch_shapes,
            description="A single trajectory (1-D) and several leading batch axes.",
        ),
        Compare(
            name="extreme-parameters",
            function="gae_with_timeouts",
            inputs=extreme_parameters,
            description="gamma and lambda at 0 and 1.",
        ),
        Property(
            name="folding-identity",
            function="gae_with_timeouts",
            inputs=folded_pairs,
            holds=rows_agree,
            points=2,
            description="A truncation is a termination whose reward includes gamma V_next.",
        ),
        Property(
            name="terminal-never-bootstraps",
            function="gae_with_timeouts",
            inputs=terminal_values_ignored,
            holds=rows_agree,
            description="next_values at terminated steps have no effect.",
        ),
        Raises(
            name="both-flags",
            function="gae_with_timeouts",
            kwargs=both_flags(),
            description="A step that is both terminated and truncated raises ValueError.",
        ),
        Raises(
            name="shape-mismatch",
            function="gae_with_timeouts",
            kwargs=wrong_shape(),
            description="next_values of another shape raises ValueError.",
        ),
        Raises(
            name="gamma-range",
            function="gae_with_timeouts",
            kwargs=bad_parameter("gamma", 1.5),
            description="gamma outside [0, 1] raises ValueError.",
        ),
        Raises(
            name="lam-range",
            function="gae_with_timeouts",
            kwargs=bad_parameter("lam", -0.1),
            description="lam outside [0, 1] raises ValueError.",
        ),
    ],
    manual=[
        Manual(
            name="test-function",
            points=2,
            description=(
                "test_gae_with_timeouts compares the implementation with a per-episode computation"
                " on random boundaries (including T = 1 and gamma, lambda at 0 and 1) and checks "
                "the folding identity."
            ),
        ),
    ],
)
