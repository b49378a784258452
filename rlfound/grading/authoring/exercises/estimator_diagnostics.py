"""Exercise ``estimator-diagnostics``: explained variance, effective sample size, dead groups."""

import numpy as np

from rlfound.grading.authoring.spec import (
    BOOK_SOLUTIONS,
    Compare,
    Exercise,
    Function,
    Manual,
    Raises,
)


def critic_cases(rng, shapes=((7,), (3, 5), (2, 3, 4)), noise=(0.3, 1.0, 3.0)):
    """Targets and predictions of several shapes; the noise sets how good the critic is."""
    cases = []
    for shape, scale in zip(shapes, noise, strict=True):
        returns = rng.normal(size=shape)
        cases.append({"values": returns + scale * rng.normal(size=shape), "returns": returns})
    return cases


def biased_critics(rng):
    """Critics with a constant offset (EV is blind to it) and one worse than the mean."""
    returns = rng.normal(size=12)
    good = returns + 0.2 * rng.normal(size=12)
    return [
        {"values": good + 5.0, "returns": returns},
        {"values": good - 100.0, "returns": returns},
        {"values": -returns + 0.3 * rng.normal(size=12), "returns": returns},
    ]


def weight_cases(rng, sizes=(1, 2, 9, 50)):
    """Exponential weights (with some zeros) of several lengths."""
    cases = []
    for size in sizes:
        weights = rng.exponential(size=size)
        weights[rng.random(size) < 0.2] = 0.0
        weights[rng.integers(size)] += 0.5  # never all zero
        cases.append({"weights": weights})
    return cases


def huge_weights(rng):
    """Weights near 1e300, where w squared overflows, and weights near 1e-300."""
    weights = rng.exponential(size=20)
    return [{"weights": 1e300 * weights / weights.max()}, {"weights": 1e-300 * weights}]


def group_cases(rng, shapes=((7, 4), (12, 8), (5, 1), (30, 3))):
    """Groups of rewards where some rows are all equal, with a fraction that is not 0, 1/2, 1.

    Rows of a shape (G, 1) are all equal by definition; that case is mixed with others so
    that no constant answer passes the check.
    """
    cases = []
    for groups, size in shapes:
        rewards = rng.integers(0, 2, size=(groups, size)).astype(float)
        constant = rng.random(groups) < 0.4
        rewards[constant] = rng.choice([0.0, 0.5, 1.0], size=(int(constant.sum()), 1))
        if size > 1:  # make sure the fraction is strictly between 0 and 1, and not 1/2
            rewards[0] = rewards[0, 0]
            rewards[1, 0], rewards[1, -1] = 0.0, 1.0
            if 2 * np.all(rewards == rewards[:, :1], axis=1).sum() == groups:
                rewards[2] = rewards[2, 0]
        cases.append({"rewards": rewards})
    return cases


def nearly_equal_groups(rng):
    """Rewards that differ by 1e-12 are not equal: the check is exact."""
    rewards = np.ones((7, 4))  # rows 0, 2, 5 and 6 are equal: 4 / 7
    rewards[1, 2] += 1e-12
    rewards[3] = rng.normal(size=4)
    rewards[4, 0] = 0.0
    return [{"rewards": rewards}]


EXERCISE = Exercise(
    id="estimator-diagnostics",
    title="Three estimator diagnostics from scratch",
    chapter=12,
    stars=3,
    solution=BOOK_SOLUTIONS / "estimator_diagnostics.py",
    functions=[
        Function(name="explained_variance", parameters="values, returns"),
        Function(name="effective_sample_size", parameters="weights"),
        Function(name="fraction_all_equal", parameters="rewards"),
    ],
    checks=[
        Compare(
            name="ev-random",
            function="explained_variance",
            inputs=critic_cases,
            points=2,
            description="Explained variance of critics of three qualities, in 1-D, 2-D and 3-D.",
        ),
        Compare(
            name="ev-offset-and-negative",
            function="explained_variance",
            inputs=biased_critics,
            description="A constant offset does not change EV; a bad critic has EV < 0.",
        ),
        Compare(
            name="ess-random",
            function="effective_sample_size",
            inputs=weight_cases,
            points=2,
            description="ESS of random weights (with zeros), N from 1 to 50.",
        ),
        Compare(
            name="ess-huge-and-tiny",
            function="effective_sample_size",
            inputs=huge_weights,
            description="Weights near 1e300 (w squared overflows) and near 1e-300.",
        ),
        Compare(
            name="all-equal-random",
            function="fraction_all_equal",
            inputs=group_cases,
            points=2,
            description="Fraction of all-equal groups, including groups of one reward.",
        ),
        Compare(
            name="all-equal-exact",
            function="fraction_all_equal",
            inputs=nearly_equal_groups,
            description="Rewards that differ by 1e-12 are not equal.",
        ),
        Raises(
            name="ev-shape-mismatch",
            function="explained_variance",
            kwargs={"values": np.zeros(3), "returns": np.arange(4.0)},
            points=0.5,
            description="values and returns of different shapes raise ValueError.",
        ),
        Raises(
            name="ev-constant-returns",
            function="explained_variance",
            kwargs={"values": np.arange(3.0), "returns": np.ones(3)},
            points=0.5,
            description="Constant returns (EV undefined) raise ValueError.",
        ),
        Raises(
            name="ess-negative",
            function="effective_sample_size",
            kwargs={"weights": np.array([1.0, -0.5, 2.0])},
            points=0.5,
            description="A negative weight raises ValueError.",
        ),
        Raises(
            name="ess-all-zero",
            function="effective_sample_size",
            kwargs={"weights": np.zeros(4)},
            points=0.5,
            description="All-zero weights raise ValueError.",
        ),
        Raises(
            name="all-equal-not-2d",
            function="fraction_all_equal",
            kwargs={"rewards": np.ones(5)},
            points=0.5,
            description="A 1-D array of rewards (no groups) raises ValueError.",
        ),
        Raises(
            name="all-equal-nan",
            function="fraction_all_equal",
            kwargs={"rewards": np.array([[1.0, np.nan], [0.0, 0.0]])},
            points=0.5,
            description="A NaN reward raises ValueError.",
        ),
    ],
    manual=[
        Manual(
            name="test-function",
            points=1,
            description=(
                "test_diagnostics compares the three functions with explicit loops on random "
                "inputs and checks the edge cases (a constant offset, a single non-zero weight, "
                "bad input)."
            ),
        ),
    ],
)
