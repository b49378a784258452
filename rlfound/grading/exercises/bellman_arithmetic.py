"""Exercise ``bellman-arithmetic``: the values of the chain ``0 -> 1 -> terminal``."""

from rlfound.grading.spec import BOOK_SOLUTIONS, Answer, Compare, Exercise, Function


def random_gammas(rng):
    """Five discounts drawn uniformly from [0, 1]."""
    return [{"gamma": float(g)} for g in rng.uniform(0.0, 1.0, size=5)]


EXERCISE = Exercise(
    id="bellman-arithmetic",
    title="Bellman arithmetic on a tiny chain",
    chapter=1,
    stars=1,
    solution=BOOK_SOLUTIONS / "bellman_arithmetic.py",
    functions=[Function("chain_values", "gamma")],
    checks=[
        Answer(
            "book-gamma",
            "chain_values",
            {"gamma": 0.8},
            [0.8, 1.0, 0.0],
            description="The exercise's numbers: gamma = 0.8.",
        ),
        Compare(
            "edge-gammas",
            "chain_values",
            [{"gamma": 0.0}, {"gamma": 1.0}],
            description="gamma = 0 (only the next reward counts) and gamma = 1 (no discount).",
        ),
        Compare(
            "random-gammas",
            "chain_values",
            random_gammas,
            description="Random discounts in [0, 1].",
        ),
        Compare(
            "graded-gammas",
            "chain_values",
            random_gammas,
            public=False,
            description="Random discounts the student has not seen.",
        ),
    ],
)
