"""Exercise ``gae-recursion``: generalized advantage estimation, recursive and explicit."""

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


def random_trajectories(rng, longest=30):
    """Trajectories of random length (including T = 1) with random gamma and lambda."""
    cases = []
    for horizon in (1, 2, *rng.integers(3, longest, size=3).tolist()):
        cases.append(
            {
                "rewards": rng.normal(size=horizon),
                "values": rng.normal(size=horizon + 1),
                "gamma": float(rng.uniform(0.8, 1.0)),
                "lam": float(rng.uniform(0.0, 1.0)),
            }
        )
    return cases


def edge_parameters(rng):
    """gamma and lambda at 0 and 1, where 0 ** 0 == 1 matters."""
    rewards, values = rng.normal(size=6), rng.normal(size=7)
    return [
        {"rewards": rewards, "values": values, "gamma": gamma, "lam": lam}
        for gamma in (0.0, 1.0)
        for lam in (0.0, 1.0)
    ]


def forms_agree(outputs, case):
    """The recursion and the explicit sum are the same estimator: they agree, and what they
    agree on satisfies A_t = delta_t + gamma lam A_{t+1} with A_T = 0, which only GAE does (two
    functions that return the same wrong thing, all zeros say, agree too)."""
    recursive, explicit = outputs["gae_recursive"], outputs["gae_explicit"]
    if recursive.shape != explicit.shape:
        return f"shapes differ: {recursive.shape} and {explicit.shape}"
    gap = float(np.max(np.abs(recursive - explicit), initial=0.0))
    if gap > 1e-9:
        return f"the two forms differ by up to {gap:.3g}"
    rewards, values = case["rewards"], case["values"]
    gamma, lam = case["gamma"], case["lam"]
    deltas = rewards + gamma * values[1:] - values[:-1]
    if recursive.shape != deltas.shape:
        return f"expected shape {deltas.shape}, got shape {recursive.shape}"
    following = np.append(recursive[1:], 0.0)
    residual = float(np.max(np.abs(recursive - gamma * lam * following - deltas), initial=0.0))
    return residual <= 1e-9 * max(1.0, float(np.max(np.abs(deltas)))) or (
        f"both forms agree, but A_t - gamma lam A_(t+1) differs from delta_t by up to "
        f"{residual:.3g}"
    )


def lambda_zero_is_td_error(advantages, case):
    """With lambda = 0 the advantage is the one-step TD error."""
    rewards, values, gamma = case["rewards"], case["values"], case["gamma"]
    deltas = rewards + gamma * values[1:] - values[:-1]
    if advantages.shape != deltas.shape:
        return f"expected shape {deltas.shape}, got shape {advantages.shape}"
    gap = float(np.max(np.abs(advantages - deltas)))
    return gap <= 1e-9 or f"differs from the TD errors by up to {gap:.3g}"


def lambda_zero(rng):
    return [{**case, "lam": 0.0} for case in random_trajectories(rng)]


EXERCISE = Exercise(
    id="gae-recursion",
    title="GAE: the recursion and the explicit sum",
    chapter=1,
    stars=3,
    solution=BOOK_SOLUTIONS / "gae_recursion.py",
    functions=[
        Function(name="gae_recursive", parameters="rewards, values, gamma, lam"),
        Function(name="gae_explicit", parameters="rewards, values, gamma, lam"),
    ],
    checks=[
        Compare(
            name="recursive-random",
            function="gae_recursive",
            inputs=random_trajectories,
            points=2,
            description="gae_recursive matches the reference on random trajectories.",
        ),
        Compare(
            name="explicit-random",
            function="gae_explicit",
            inputs=random_trajectories,
            points=2,
            description="gae_explicit matches the reference on random trajectories.",
        ),
        Compare(
            name="recursive-edges",
            function="gae_recursive",
            inputs=edge_parameters,
            description="gae_recursive with gamma and lambda at 0 and 1.",
        ),
        Compare(
            name="explicit-edges",
            function="gae_explicit",
            inputs=edge_parameters,
            description="gae_explicit with gamma and lambda at 0 and 1.",
        ),
        Property(
            name="forms-agree",
            function=("gae_recursive", "gae_explicit"),
            inputs=random_trajectories,
            holds=forms_agree,
            description=(
                "The recursive and explicit forms agree, on A_t = delta_t + gamma lam A_(t+1)."
            ),
        ),
        Property(
            name="lambda-zero",
            function="gae_recursive",
            inputs=lambda_zero,
            holds=lambda_zero_is_td_error,
            description="With lambda = 0 the advantages are the TD errors.",
        ),
        Raises(
            name="values-length",
            function="gae_recursive",
            kwargs={"rewards": np.zeros(3), "values": np.zeros(3), "gamma": 0.9, "lam": 0.9},
            description="values without the bootstrap entry (T instead of T + 1) raise ValueError.",
        ),
    ],
    manual=[
        Manual(
            name="k-step-telescoping",
            points=2,
            description="Show that the k-step advantage equals sum_{l<k} gamma^l delta_{t+l}.",
        ),
        Manual(
            name="recursion-derivation",
            points=2,
            description=(
                "Derive the backward recursion A_t = delta_t + gamma lam A_{t+1} from the sum."
            ),
        ),
        Manual(
            name="test-function",
            points=2,
            description=(
                "test_gae_matches_explicit_sum compares both forms with an independent double loop"
                " over a grid of gamma and lambda that includes 0 and 1, and T = 1."
            ),
        ),
    ],
)
