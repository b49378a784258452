"""Exercise ``importance-sampling``: the exact one-step importance-sampling value."""

import numpy as np

from rlfound.grading.authoring.spec import (
    BOOK_SOLUTIONS,
    Answer,
    Compare,
    Exercise,
    Function,
    Manual,
    Property,
    Raises,
)


def random_policies(rng):
    """Target and behavior distributions over 2 to 6 actions (behavior has full support)."""
    cases = []
    for actions in (2, 3, 5, 6):
        cases.append(
            {
                "target_probs": rng.dirichlet(np.ones(actions)),
                "behavior_probs": rng.dirichlet(np.ones(actions)),
                "rewards": rng.normal(size=actions),
            }
        )
    return cases


def equals_target_expectation(value, case):
    """Importance weighting recovers the target policy's expected reward."""
    want = float(case["target_probs"] @ case["rewards"])
    return abs(float(value) - want) <= 1e-9 * max(1.0, abs(want)) or (
        f"E_pi[r] = {want:.6g} but the function returned {float(value):.6g}"
    )


EXERCISE = Exercise(
    id="importance-sampling",
    title="The one-step importance-sampling value",
    chapter=1,
    stars=2,
    solution=BOOK_SOLUTIONS / "importance_sampling.py",
    functions=[
        Function(
            name="importance_sampling_value", parameters="target_probs, behavior_probs, rewards"
        )
    ],
    checks=[
        Answer(
            name="book-numbers",
            function="importance_sampling_value",
            kwargs={
                "target_probs": np.array([0.25, 0.75]),
                "behavior_probs": np.array([0.8, 0.2]),
                "rewards": np.array([1.0, 3.0]),
            },
            expected=2.5,
            description="The exercise's numbers: b = (0.8, 0.2), pi = (0.25, 0.75), r = (1, 3).",
        ),
        Compare(
            name="random-policies",
            function="importance_sampling_value",
            inputs=random_policies,
            description="Matches the reference on random policies.",
        ),
        Property(
            name="target-expectation",
            function="importance_sampling_value",
            inputs=random_policies,
            holds=equals_target_expectation,
            description="Equals sum_a pi(a) r(a).",
        ),
        Compare(
            name="behavior-zeros",
            function="importance_sampling_value",
            inputs=[
                {
                    "target_probs": np.array([0.0, 0.5, 0.5]),
                    "behavior_probs": np.array([0.0, 0.25, 0.75]),
                    "rewards": np.array([5.0, 1.0, -2.0]),
                }
            ],
            description="An action neither policy takes (b(a) = pi(a) = 0) adds nothing.",
        ),
        Raises(
            name="no-support",
            function="importance_sampling_value",
            kwargs={
                "target_probs": np.array([0.5, 0.5]),
                "behavior_probs": np.array([1.0, 0.0]),
                "rewards": np.array([1.0, 1.0]),
            },
            description="b(a) = 0 where pi(a) > 0 raises ValueError.",
        ),
    ],
    manual=[
        Manual(
            name="proof",
            points=3,
            description=(
                "Prove the baseline identity (eq-baseline); compare E_mu[rho r] with E_pi[r] and "
                "explain the comparison."
            ),
        ),
    ],
)
