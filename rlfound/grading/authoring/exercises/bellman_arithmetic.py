"""Exercise ``bellman-arithmetic``: the values of the chain ``0 -> 1 -> terminal``."""

from rlfound.grading.authoring.spec import BOOK_SOLUTIONS, Answer, Compare, Exercise, Function


def random_gammas(rng):
    """Five discounts drawn uniformly from [0, 1]."""
    return [{"gamma": float(g)} for g in rng.uniform(0.0, 1.0, size=5)]


EXERCISE = Exercise(
    id="bellman-arithmetic",
    title="Bellman arithmetic on a tiny chain",
    chapter=1,
    stars=1,
    solution=BOOK_SOLUTIONS / "bellman_arithmetic.py",
    functions=[Function(name="chain_values", parameters="gamma")],
    checks=[
        Answer(
            name="book-gamma",
            function="chain_values",
            kwargs={"gamma": 0.8},
            expected=[0.8, 1.0, 0.0],
            description="The exercise's numbers: gamma = 0.8.",
        ),
        Compare(
            name="edge-gammas",
            function="chain_values",
            inputs=[{"gamma": 0.0}, {"gamma": 1.0}],
            description="gamma = 0 (only the next reward counts) and gamma = 1 (no discount).",
        ),
        Compare(
            name="random-gammas",
            function="chain_values",
            inputs=random_gammas,
            description="Random discounts in [0, 1].",
        ),
    ],
)
