"""Exercise ``lagrangian-bandit``: the Lagrangian of a softmax bandit, its gradient, and the
projected multiplier update."""

import numpy as np

from rlfound.grading.authoring.spec import (
    BOOK_SOLUTIONS,
    Answer,
    Compare,
    Exercise,
    Function,
    Gradient,
    Manual,
    Property,
    Raises,
)


def lagrangian_objective(logits, action_rewards, action_costs, multiplier, budget):
    """J_nu = J_R - nu (J_C - C_max) of the softmax policy, independent of any solution."""
    logits = np.asarray(logits, dtype=np.float64)
    probs = np.exp(logits - np.max(logits))
    probs /= probs.sum()
    reward = float(probs @ np.asarray(action_rewards, dtype=np.float64))
    cost = float(probs @ np.asarray(action_costs, dtype=np.float64))
    return reward - multiplier * (cost - budget)


def bandit_case(rng, size, scale=1.0, multiplier=None):
    """A bandit with ``size`` actions, rewards, costs in [0, 1], a multiplier and a budget."""
    return {
        "logits": scale * rng.normal(size=size),
        "action_rewards": rng.normal(size=size),
        "action_costs": rng.uniform(size=size),
        "multiplier": float(rng.uniform(0.0, 10.0)) if multiplier is None else multiplier,
        "budget": float(rng.uniform(0.0, 1.0)),
    }


def random_bandits(rng):
    """Bandits with 1 to 8 actions; one with a zero multiplier (the unconstrained gradient)."""
    cases = [bandit_case(rng, size) for size in (1, 2, 4, 8)]
    cases.append(bandit_case(rng, 5, multiplier=0.0))
    return cases


def large_logits(rng):
    """Logits in the hundreds: an unshifted softmax overflows."""
    cases = [bandit_case(rng, 4, scale=300.0), bandit_case(rng, 6, scale=500.0)]
    cases.append(
        {
            "logits": np.array([800.0, -800.0, 799.0]),
            "action_rewards": np.array([1.0, 0.0, 2.0]),
            "action_costs": np.array([0.0, 0.0, 1.0]),
            "multiplier": 1.5,
            "budget": 0.1,
        }
    )
    return cases


def update_case(rng):
    return {
        "multiplier": float(rng.uniform(0.0, 5.0)),
        "cost_value": float(rng.uniform(0.0, 1.0)),
        "budget": float(rng.uniform(0.0, 1.0)),
        "multiplier_lr": float(rng.uniform(0.0, 20.0)),
    }


def random_updates(rng):
    """Violated and slack constraints, some steps that the projection must clip at 0."""
    cases = [update_case(rng) for _ in range(6)]
    cases.append({"multiplier": 0.1, "cost_value": 0.0, "budget": 0.5, "multiplier_lr": 10.0})
    cases.append({"multiplier": 0.0, "cost_value": 0.3, "budget": 0.3, "multiplier_lr": 1.0})
    return cases


def sums_to_zero(gradient, case):
    """Adding a constant to every logit changes nothing, so the gradient sums to 0; and it is
    not identically 0 when the penalized rewards q - nu c of two actions differ."""
    if gradient.shape != np.shape(case["logits"]):
        return f"expected shape {np.shape(case['logits'])}, got shape {gradient.shape}"
    total = float(np.sum(gradient))
    if abs(total) > 1e-9:
        return f"the components sum to {total:.3g}, not 0"
    costs = np.asarray(case["action_costs"])
    penalized = np.asarray(case["action_rewards"]) - case["multiplier"] * costs
    if np.ptp(penalized) > 1e-6 and not np.any(gradient != 0.0):
        return "the gradient is identically 0 although the actions' q - nu c differ"
    return True


def moves_with_the_violation(new, case):
    """A violated constraint raises the multiplier, a slack one lowers it (to 0 at the least)."""
    value = float(new)
    violation = case["cost_value"] - case["budget"]
    moving = case["multiplier_lr"] > 0.0 and violation != 0.0
    if value < 0.0:
        return f"the multiplier became negative: {value:.3g}"
    if moving and violation > 0 and value <= case["multiplier"]:
        return f"the constraint is violated by {violation:.3g} but nu went to {value:.3g}"
    if moving and violation < 0 and case["multiplier"] > 0 and value >= case["multiplier"]:
        return f"the constraint has slack {-violation:.3g} but nu went to {value:.3g}"
    return True


def bad(**changes):
    """The book's two-action case with some arguments made invalid."""
    case = {
        "logits": np.zeros(2),
        "action_rewards": np.array([0.0, 1.0]),
        "action_costs": np.array([0.0, 1.0]),
        "multiplier": 2.0,
        "budget": 0.25,
    }
    case.update(changes)
    return case


def bad_update(**changes):
    case = {"multiplier": 2.0, "cost_value": 0.04, "budget": 0.01, "multiplier_lr": 10.0}
    case.update(changes)
    return case


BOOK_CASE = bad(budget=0.1)  # valid: J_R = J_C = 0.5, J_nu = 0.5 - 2 (0.5 - 0.1) = -0.3

EXERCISE = Exercise(
    id="lagrangian-bandit",
    title="The Lagrangian of a softmax bandit",
    chapter=11,
    stars=2,
    solution=BOOK_SOLUTIONS / "lagrangian_bandit.py",
    functions=[
        Function(
            name="bandit_lagrangian",
            parameters="logits, action_rewards, action_costs, multiplier, budget",
        ),
        Function(
            name="bandit_lagrangian_gradient",
            parameters="logits, action_rewards, action_costs, multiplier, budget",
        ),
        Function(
            name="projected_multiplier_update",
            parameters="multiplier, cost_value, budget, multiplier_lr",
        ),
    ],
    checks=[
        Answer(
            name="book-lagrangian",
            function="bandit_lagrangian",
            kwargs=BOOK_CASE,
            expected=-0.3,
            description="Two actions at equal logits: J_nu = 0.5 - 2 (0.5 - 0.1) = -0.3.",
        ),
        Answer(
            name="book-gradient",
            function="bandit_lagrangian_gradient",
            kwargs=BOOK_CASE,
            expected=[0.25, -0.25],
            description="The same case: pi (q - nu c - (J_R - nu J_C)) = (0.25, -0.25).",
        ),
        Answer(
            name="book-update",
            function="projected_multiplier_update",
            kwargs=bad_update(),
            expected=2.3,
            description="A violation of 0.03 with step 10 raises nu from 2 to 2.3.",
        ),
        Compare(
            name="lagrangian-random",
            function="bandit_lagrangian",
            inputs=random_bandits,
            description="The Lagrangian matches the reference on random bandits.",
        ),
        Compare(
            name="gradient-random",
            function="bandit_lagrangian_gradient",
            inputs=random_bandits,
            points=2,
            description="The gradient matches the reference on random bandits.",
        ),
        Gradient(
            name="finite-differences",
            function="bandit_lagrangian_gradient",
            objective=lagrangian_objective,
            wrt="logits",
            inputs=random_bandits,
            points=2,
            description="The gradient matches central finite differences of the Lagrangian.",
        ),
        Property(
            name="sums-to-zero",
            function="bandit_lagrangian_gradient",
            inputs=random_bandits,
            holds=sums_to_zero,
            description="The gradient's components sum to zero.",
        ),
        Compare(
            name="large-logits",
            function="bandit_lagrangian_gradient",
            inputs=large_logits,
            description="The gradient stays finite and exact for logits in the hundreds.",
        ),
        Compare(
            name="update-random",
            function="projected_multiplier_update",
            inputs=random_updates,
            points=2,
            description="The projected update matches the reference, clipping at 0.",
        ),
        Property(
            name="update-direction",
            function="projected_multiplier_update",
            inputs=random_updates,
            holds=moves_with_the_violation,
            description="A violated constraint raises nu, a slack one lowers it, never below 0.",
        ),
        Raises(
            name="negative-multiplier",
            function="bandit_lagrangian",
            kwargs=bad(multiplier=-1.0),
            description="A negative multiplier raises ValueError.",
        ),
        Raises(
            name="negative-multiplier-gradient",
            function="bandit_lagrangian_gradient",
            kwargs=bad(multiplier=-0.5),
            description="A negative multiplier raises ValueError in the gradient too.",
        ),
        Raises(
            name="length-mismatch",
            function="bandit_lagrangian_gradient",
            kwargs=bad(action_costs=np.array([0.0, 1.0, 2.0])),
            description="Costs of another length than the logits raise ValueError.",
        ),
        Raises(
            name="budget-not-a-number",
            function="bandit_lagrangian",
            kwargs=bad(budget=np.array([0.25, 0.5])),
            description="A budget that is not one number raises ValueError.",
        ),
        Raises(
            name="negative-step",
            function="projected_multiplier_update",
            kwargs=bad_update(multiplier_lr=-1.0),
            description="A negative step size raises ValueError.",
        ),
        Raises(
            name="negative-multiplier-update",
            function="projected_multiplier_update",
            kwargs=bad_update(multiplier=-0.1),
            description="A negative multiplier raises ValueError in the update.",
        ),
        Raises(
            name="non-finite-cost",
            function="projected_multiplier_update",
            kwargs=bad_update(cost_value=float("nan")),
            description="A NaN cost raises ValueError.",
        ),
    ],
    manual=[
        Manual(
            name="derivation",
            points=2,
            description=(
                "Derive grad_theta J_nu = pi (q - nu c - (J_R - nu J_C)) from the softmax score "
                "and show that its entries sum to zero and that the budget does not enter it."
            ),
        ),
        Manual(
            name="loss-signs",
            points=2,
            description=(
                "Write the two losses a loss-minimizing trainer uses, -J_R + nu (J_C - C_max) for "
                "the policy (nu held fixed) and -nu (J_C - C_max) for the multiplier (J_C held "
                "fixed), and show that descending the second one is the projected update."
            ),
        ),
        Manual(
            name="test-function",
            points=1,
            description=(
                "test_bandit_lagrangian_gradient compares the gradient with central finite "
                "differences of bandit_lagrangian, including large logits."
            ),
        ),
    ],
)
