"""Exercise ``score-function-gradient``: the exact policy gradient of a softmax bandit."""

import numpy as np

from rlfound.grading.authoring.spec import (
    BOOK_SOLUTIONS,
    Compare,
    Exercise,
    Function,
    Gradient,
    Manual,
    Property,
    Raises,
)


def bandit_objective(logits, action_rewards):
    """J(theta) = sum_a softmax(theta)_a q(a), written independently of any solution."""
    shifted = np.exp(logits - np.max(logits))
    return float(shifted @ action_rewards / shifted.sum())


def random_bandits(rng):
    """Bandits with 2 to 6 arms, standard-normal logits and rewards."""
    cases = []
    for arms in (2, 3, 4, 6):
        cases.append({"logits": rng.normal(size=arms), "action_rewards": rng.normal(size=arms)})
    return cases


def large_logits(rng):
    """Logits in the hundreds: a softmax that exponentiates them directly overflows."""
    return [
        {"logits": np.array([800.0, 799.0, 0.0]), "action_rewards": np.array([1.0, 0.0, 2.0])},
        {"logits": rng.normal(scale=300.0, size=4), "action_rewards": rng.normal(size=4)},
    ]


def sums_to_zero(gradient, case):
    """Adding a constant to every logit leaves the policy unchanged, so the gradient sums to 0;
    and since dJ/dtheta_a = pi_a (q_a - J), sum_a q_a dJ/dtheta_a is the variance of q under pi,
    which a gradient that is zero (or any other vector that merely sums to zero) misses."""
    total = float(np.sum(gradient))
    if abs(total) > 1e-9:
        return f"the components sum to {total:.3g}, not 0"
    logits, rewards = case["logits"], case["action_rewards"]
    if gradient.shape != np.shape(logits):
        return f"expected shape {np.shape(logits)}, got shape {gradient.shape}"
    policy = np.exp(logits - np.max(logits))
    policy /= policy.sum()
    variance = float(policy @ (rewards - policy @ rewards) ** 2)
    weighted = float(gradient @ rewards)
    return abs(weighted - variance) <= 1e-9 * max(1.0, variance) or (
        f"sum_a q(a) dJ/dtheta_a = {weighted:.6g}, but Var_pi(q) = {variance:.6g}"
    )


EXERCISE = Exercise(
    id="score-function-gradient",
    title="Score-function policy gradient of a bandit",
    chapter=1,
    stars=2,
    solution=BOOK_SOLUTIONS / "score_function_gradient.py",
    functions=[Function(name="bandit_gradient", parameters="logits, action_rewards")],
    checks=[
        Gradient(
            name="finite-differences",
            function="bandit_gradient",
            objective=bandit_objective,
            wrt="logits",
            inputs=random_bandits,
            points=2,
            description="Matches central finite differences of J(theta).",
        ),
        Compare(
            name="matches-reference",
            function="bandit_gradient",
            inputs=random_bandits,
            description="Matches the reference on random bandits.",
        ),
        Property(
            name="sums-to-zero",
            function="bandit_gradient",
            inputs=random_bandits,
            holds=sums_to_zero,
            description="The components sum to zero, and sum_a q(a) dJ/dtheta_a = Var_pi(q).",
        ),
        Compare(
            name="large-logits",
            function="bandit_gradient",
            inputs=large_logits,
            description="Stays finite and exact for logits in the hundreds.",
        ),
        Raises(
            name="shape-mismatch",
            function="bandit_gradient",
            kwargs={"logits": np.zeros(3), "action_rewards": np.zeros(2)},
            description="action_rewards of the wrong length raise ValueError.",
        ),
    ],
    manual=[
        Manual(
            name="derivation",
            points=4,
            description=(
                "Derive the policy-gradient theorem (eq-pg-theorem) from J(theta) = E[G_0]; "
                "explain the causality step (G_0 -> reward-to-go) and why it keeps the expectation"
                " but changes the variance."
            ),
        ),
    ],
)
