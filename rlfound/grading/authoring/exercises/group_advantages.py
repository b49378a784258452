"""Exercise ``group-advantages``: RLOO, Dr. GRPO, GRPO and batch-normalized advantages."""

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


def with_scale(cases, rng):
    """The same reward batches with eps and ddof for the two normalized forms."""
    return [
        {**case, "eps": float(rng.choice([0.0, 1e-6, 1e-4, 0.1])), "ddof": int(rng.integers(0, 2))}
        for case in cases
    ]


def random_batches(rng, shapes=((8, 4), (3, 2), (5,), (2, 3, 6))):
    """Continuous rewards, binary rewards (many groups all 0 or all 1), and N = 2."""
    cases = []
    for shape in shapes:
        cases.append({"rewards": rng.normal(size=shape)})
        cases.append({"rewards": (rng.uniform(size=shape) < 0.3).astype(np.float64)})
    return cases


def equal_groups(rng):
    """Batches where every group, or some groups, have equal rewards (must give exact 0)."""
    same = np.repeat(rng.normal(size=(5, 1)), 4, axis=1)
    mixed = rng.normal(size=(4, 3))
    mixed[[0, 2]] = 0.7
    return [
        {"rewards": same},
        {"rewards": mixed},
        {"rewards": np.full((3, 2), 1e6)},
        {"rewards": np.array([[0.1, 0.1], [0.2, 0.3]])},
    ]


def pairs(rng):
    """Groups of two, the smallest allowed."""
    return [{"rewards": rng.normal(size=(6, 2))}, {"rewards": np.array([1.0, 0.0])}]


def plain(rng):
    return random_batches(rng)


def scaled(rng):
    return with_scale(random_batches(rng), rng)


def scaled_edges(rng):
    return with_scale(equal_groups(rng) + pairs(rng), rng)


def rloo_identity(outputs, case):
    """R_i - mean of the others = N / (N - 1) (R_i - group mean), and Dr. GRPO = (N - 1)/N RLOO."""
    rewards = np.asarray(case["rewards"], dtype=np.float64)
    size = rewards.shape[-1]
    loo, centered = outputs["rloo_advantages"], outputs["dr_grpo_advantages"]
    if loo.shape != rewards.shape or centered.shape != rewards.shape:
        return f"expected shape {rewards.shape}, got {loo.shape} and {centered.shape}"
    expected = size / (size - 1) * (rewards - rewards.mean(axis=-1, keepdims=True))
    gap = float(np.max(np.abs(loo - expected)))
    if gap > 1e-9 * (1.0 + float(np.max(np.abs(rewards)))):
        return f"rloo_advantages differs from N/(N-1) (R - mean) by up to {gap:.3g}"
    gap = float(np.max(np.abs(centered - (size - 1) / size * loo)))
    return gap <= 1e-9 * (1.0 + float(np.max(np.abs(rewards)))) or (
        f"dr_grpo_advantages differs from (N-1)/N rloo_advantages by up to {gap:.3g}"
    )


def shifted_pairs(rng):
    """Row 1 is row 0 plus a constant: every group-centered advantage is unchanged."""
    cases = []
    for size in (2, 5):
        rewards = rng.normal(size=size)
        cases.append({"rewards": np.stack([rewards, rewards + float(rng.normal(scale=10.0))])})
    return cases


def misranked(advantages, rewards):
    """Why the advantages do not rank the members of a group as their rewards do (a strictly
    better reward must get a strictly larger advantage), or None if they do. Zeros, a constant
    or any other advantages blind to the rewards fail on a group of unequal rewards."""
    tolerance = 1e-9 * (1.0 + float(np.max(np.abs(rewards))))
    better = rewards[..., :, None] - rewards[..., None, :] > tolerance
    larger = advantages[..., :, None] > advantages[..., None, :]
    if np.any(better & ~larger):
        return "a member with a higher reward than another of its group has no larger advantage"
    return None


def rows_agree(advantages, case):
    """Adding a constant to a group leaves its advantages unchanged, and they still rank the
    members as their rewards do (which advantages of all zeros, or a constant, do not)."""
    rewards = np.asarray(case["rewards"], dtype=np.float64)
    if advantages.shape != rewards.shape:
        return f"expected shape {rewards.shape}, got shape {advantages.shape}"
    gap = float(np.max(np.abs(advantages[0] - advantages[1])))
    if gap > 1e-9:
        return f"adding a constant to a group changed its advantages by {gap:.3g}"
    return misranked(advantages, rewards) or True


def sums_to_zero(advantages, case):
    """Leave-one-out advantages sum to 0 in every group, and rank its members as their rewards
    do (which advantages of all zeros do not)."""
    rewards = np.asarray(case["rewards"], dtype=np.float64)
    if advantages.shape != rewards.shape:
        return f"expected shape {rewards.shape}, got shape {advantages.shape}"
    total = float(np.max(np.abs(advantages.sum(axis=-1))))
    if total > 1e-9:
        return f"the advantages of a group sum to {total:.3g}, not 0"
    return misranked(advantages, rewards) or True


def bad(name, **changes):
    base = {"rewards": np.array([[1.0, 2.0], [0.0, 1.0]]), "eps": 1e-6, "ddof": 0}
    if name in ("rloo_advantages", "dr_grpo_advantages"):
        base = {"rewards": base["rewards"]}
    return {**base, **changes}


def raises(function, argument, description, **changes):
    return Raises(
        name=f"{function.replace('_advantages', '').replace('_', '-')}-{argument}",
        function=function,
        kwargs=bad(function, **changes),
        points=0.5,
        description=description,
    )


EXERCISE = Exercise(
    id="group-advantages",
    title="Group advantages: RLOO, Dr. GRPO, GRPO and a batch std",
    chapter=7,
    stars=2,
    solution=BOOK_SOLUTIONS / "group_advantages.py",
    functions=[
        Function(name="rloo_advantages", parameters="rewards"),
        Function(name="dr_grpo_advantages", parameters="rewards"),
        Function(name="grpo_advantages", parameters="rewards, eps, ddof"),
        Function(name="batch_normalized_advantages", parameters="rewards, eps, ddof"),
    ],
    checks=[
        Compare(
            name="rloo-random",
            function="rloo_advantages",
            inputs=plain,
            description="Matches the reference on random continuous and binary groups.",
        ),
        Compare(
            name="dr-grpo-random",
            function="dr_grpo_advantages",
            inputs=plain,
            description="Matches the reference on random continuous and binary groups.",
        ),
        Compare(
            name="grpo-random",
            function="grpo_advantages",
            inputs=scaled,
            points=2,
            description="Matches the reference for several eps and ddof.",
        ),
        Compare(
            name="batch-random",
            function="batch_normalized_advantages",
            inputs=scaled,
            points=2,
            description="Group mean, std of the whole batch, for several eps and ddof.",
        ),
        Compare(
            name="grpo-edges",
            function="grpo_advantages",
            inputs=scaled_edges,
            description="Groups of equal rewards give exactly 0; groups of two.",
        ),
        Compare(
            name="batch-edges",
            function="batch_normalized_advantages",
            inputs=scaled_edges,
            description="Groups of equal rewards give exactly 0; groups of two.",
        ),
        Property(
            name="rloo-identity",
            function=("rloo_advantages", "dr_grpo_advantages"),
            inputs=plain,
            holds=rloo_identity,
            points=2,
            description="The RLOO identity and Dr. GRPO = (N - 1)/N RLOO.",
        ),
        Property(
            name="rloo-sums-to-zero",
            function="rloo_advantages",
            inputs=plain,
            holds=sums_to_zero,
            description=(
                "Leave-one-out advantages sum to 0 in every group (and rank its members as "
                "their rewards do)."
            ),
        ),
        Property(
            name="shift-invariance",
            function="dr_grpo_advantages",
            inputs=shifted_pairs,
            holds=rows_agree,
            description=(
                "Adding a constant to a group leaves its advantages unchanged (and they rank "
                "its members as their rewards do)."
            ),
        ),
        raises(
            "rloo_advantages",
            "group-of-one",
            "A group of one raises ValueError.",
            rewards=np.array([[1.0], [2.0]]),
        ),
        raises(
            "dr_grpo_advantages",
            "group-of-one",
            "A group of one raises ValueError.",
            rewards=np.array([3.0]),
        ),
        raises(
            "grpo_advantages",
            "group-of-one",
            "A group of one raises ValueError.",
            rewards=np.array([[1.0], [2.0]]),
        ),
        raises(
            "grpo_advantages",
            "nan",
            "A NaN reward raises ValueError.",
            rewards=np.array([1.0, np.nan]),
        ),
        raises("grpo_advantages", "eps", "A negative eps raises ValueError.", eps=-1e-3),
        raises("grpo_advantages", "ddof", "ddof = N raises ValueError.", ddof=2),
        raises("batch_normalized_advantages", "ddof", "ddof = number of rewards raises.", ddof=4),
        raises("batch_normalized_advantages", "eps", "A negative eps raises ValueError.", eps=-1.0),
    ],
    manual=[
        Manual(
            name="rloo-identity-proof",
            points=2,
            description=(
                "Proves R_i - (1/(N-1)) sum_{k != i} R_k = N/(N-1) (R_i - mean(R)) and "
                "deduces that Dr. GRPO's advantages are (N-1)/N times RLOO's in every group."
            ),
        ),
    ],
)
