"""Exercise ``ppo-clip``: PPO's clipped surrogate and its derivative with respect to log-ratios."""

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

#: Inputs keep every ratio this far (in relative terms) from a clip boundary, so that central
#: differences with a step of 1e-6 never straddle a kink.
MARGIN = 1e-3


def surrogate_sum(log_ratio, advantages, clip_low, clip_high):
    """Sum over tokens of min(rho A, clip(rho, 1 - clip_low, 1 + clip_high) A), written out."""
    ratio = np.exp(np.asarray(log_ratio, dtype=np.float64))
    advantages = np.asarray(advantages, dtype=np.float64)
    clipped = np.minimum(np.maximum(ratio, 1.0 - clip_low), 1.0 + clip_high)
    return float(np.sum(np.minimum(ratio * advantages, clipped * advantages)))


def away_from_kinks(rng, shape, clip_low, clip_high, scale=0.4):
    """Log-ratios drawn around 0 whose ratios are not within MARGIN of 1 - ε_low or 1 + ε_high."""
    log_ratio = rng.normal(scale=scale, size=shape)
    for boundary in (1.0 - clip_low, 1.0 + clip_high):
        near = np.abs(np.exp(log_ratio) - boundary) < MARGIN * boundary
        log_ratio[near] += 10 * MARGIN
    return log_ratio


def case(rng, shape, clip_low, clip_high):
    return {
        "log_ratio": away_from_kinks(rng, shape, clip_low, clip_high),
        "advantages": rng.normal(size=shape),
        "clip_low": clip_low,
        "clip_high": clip_high,
    }


def random_batches(rng):
    """Batches of tokens with symmetric and clip-higher ranges, ratios on both sides of 1."""
    return [
        case(rng, shape, clip_low, clip_high)
        for shape, clip_low, clip_high in (
            ((12,), 0.2, 0.2),
            ((4, 9), 0.2, 0.28),
            ((2, 3, 5), 0.1, 0.3),
            ((30,), 0.0, 0.0),
        )
    ]


def edge_cases(rng):
    """Zero advantages, ratios exactly 1 and exactly on a boundary, and extreme ratios."""
    boundary = np.log([0.8, 1.2, 0.8, 1.2])
    return [
        {
            "log_ratio": rng.normal(size=7),
            "advantages": np.zeros(7),
            "clip_low": 0.2,
            "clip_high": 0.2,
        },
        {
            "log_ratio": np.zeros(5),
            "advantages": rng.normal(size=5),
            "clip_low": 0.2,
            "clip_high": 0.2,
        },
        {
            "log_ratio": boundary,
            "advantages": np.array([-1.0, 1.0, 1.0, -1.0]),
            "clip_low": 0.2,
            "clip_high": 0.2,
        },
        {
            "log_ratio": np.array([-30.0, 30.0, -30.0, 30.0]),
            "advantages": np.array([1.0, 1.0, -1.0, -1.0]),
            "clip_low": 0.2,
            "clip_high": 0.2,
        },
    ]


def on_policy(rng):
    """θ = θ_old on some tokens (log-ratio exactly 0); the others are off-policy, their ratios
    at least 2 % from 1 but inside the clip, so that the advantage itself is not their
    derivative (a function that returns its advantages argument unchanged fails)."""
    cases = []
    for shape in ((6,), (3, 4)):
        size = int(np.prod(shape))
        off = np.zeros(size, dtype=bool)
        off[rng.permutation(size)[: size // 2]] = True
        log_ratio = np.zeros(size)
        # |log_ratio| in [0.02, 0.15]: inside log(1 - 0.2) = -0.223 and log(1 + 0.28) = 0.247.
        log_ratio[off] = rng.choice([-1.0, 1.0], size=off.sum()) * rng.uniform(
            0.02, 0.15, size=off.sum()
        )
        cases.append(
            {
                "log_ratio": log_ratio.reshape(shape),
                "advantages": rng.normal(size=shape),
                "clip_low": 0.2,
                "clip_high": 0.28,
            }
        )
    return cases


def gradient_is_the_advantage(gradient, case):
    """At ratio 1 the derivative is the advantage itself (the policy-gradient weight); off
    policy, with the ratio inside the clip, it is rho A: the ratio reweights the advantage."""
    advantages = case["advantages"]
    if gradient.shape != advantages.shape:
        return f"expected shape {advantages.shape}, got shape {gradient.shape}"
    on = case["log_ratio"] == 0.0
    gap = float(np.max(np.abs(gradient[on] - advantages[on])))
    if gap > 1e-12:
        return f"at log_ratio = 0 the derivative differs from A by up to {gap:.3g}"
    weighted = np.exp(case["log_ratio"][~on]) * advantages[~on]
    gap = float(np.max(np.abs(gradient[~on] - weighted) / (1.0 + np.abs(weighted))))
    return gap <= 1e-9 or (
        f"off policy, inside the clip, the derivative differs from rho A by up to {gap:.3g} "
        "(relative)"
    )


def bad(**changes):
    valid = {"log_ratio": np.zeros(3), "advantages": np.ones(3), "clip_low": 0.2, "clip_high": 0.2}
    return {**valid, **changes}


EXERCISE = Exercise(
    id="ppo-clip",
    title="PPO's clipped surrogate and its gradient",
    chapter=5,
    stars=2,
    solution=BOOK_SOLUTIONS / "ppo_clip.py",
    functions=[
        Function(name="clipped_surrogate", parameters="log_ratio, advantages, clip_low, clip_high"),
        Function(
            name="clipped_surrogate_grad", parameters="log_ratio, advantages, clip_low, clip_high"
        ),
    ],
    checks=[
        Compare(
            name="surrogate-values",
            function="clipped_surrogate",
            inputs=random_batches,
            points=2,
            description="The objective matches the reference, symmetric and clip-higher ranges.",
        ),
        Gradient(
            name="finite-differences",
            function="clipped_surrogate_grad",
            objective=surrogate_sum,
            wrt="log_ratio",
            inputs=random_batches,
            points=3,
            description="The derivative matches central differences (away from the kinks).",
        ),
        Compare(
            name="edge-cases",
            function="clipped_surrogate",
            inputs=edge_cases,
            description="A = 0, ratio 1, ratios on a boundary and extreme ratios.",
        ),
        Compare(
            name="gradient-edge-cases",
            function="clipped_surrogate_grad",
            inputs=edge_cases,
            description="The derivative at the edge cases, with the inside convention at kinks.",
        ),
        Property(
            name="on-policy-gradient",
            function="clipped_surrogate_grad",
            inputs=on_policy,
            holds=gradient_is_the_advantage,
            description="At θ = θ_old the derivative is A; off-policy, inside the clip, ρA.",
        ),
        Raises(
            name="shape-mismatch",
            function="clipped_surrogate",
            kwargs=bad(advantages=np.ones(4)),
            description="Advantages of another shape raise ValueError.",
        ),
        Raises(
            name="negative-clip-low",
            function="clipped_surrogate",
            kwargs=bad(clip_low=-0.1),
            description="A negative clip_low raises ValueError.",
        ),
        Raises(
            name="clip-low-too-large",
            function="clipped_surrogate_grad",
            kwargs=bad(clip_low=1.0),
            description="clip_low >= 1 raises ValueError.",
        ),
        Raises(
            name="negative-clip-high",
            function="clipped_surrogate_grad",
            kwargs=bad(clip_high=-0.2),
            description="A negative clip_high raises ValueError.",
        ),
    ],
    manual=[
        Manual(
            name="four-cases",
            points=2,
            description=(
                "Explain the four cases (sign of A, side of the clip) and which of them stop the "
                "gradient; state the convention at the kinks."
            ),
        ),
    ],
)
