"""Exercise ``dpo-gradient``: the DPO loss of a categorical policy and its logit gradient."""

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
from rlfound.grading.scoring import compare


def dpo_objective(logits, ref_logprobs, chosen, rejected, beta):
    """The mean DPO loss, written independently of any solution (log-softmax and all)."""
    logits = np.asarray(logits, dtype=np.float64)
    log_pi = logits - (np.max(logits) + np.log(np.sum(np.exp(logits - np.max(logits)))))
    implicit = beta * (log_pi - np.asarray(ref_logprobs, dtype=np.float64))
    margins = implicit[np.asarray(chosen)] - implicit[np.asarray(rejected)]
    return float(np.mean(np.logaddexp(0.0, -margins)))


def dpo_case(rng, size, num_pairs, beta=None, scale=1.0, responses=None):
    """One policy over ``size`` responses and ``num_pairs`` pairs drawn among ``responses``."""
    responses = np.arange(size) if responses is None else np.asarray(responses)
    chosen = rng.choice(responses, size=num_pairs)
    rejected = rng.choice(responses, size=num_pairs)
    return {
        "logits": scale * rng.normal(size=size),
        "ref_logprobs": np.log(rng.dirichlet(np.ones(size))),
        "chosen": chosen.astype(np.int64),
        "rejected": rejected.astype(np.int64),
        "beta": float(rng.uniform(0.05, 2.0)) if beta is None else beta,
    }


def random_cases(rng):
    """Policies over 2 to 8 responses with 1 to 20 pairs (a pair may repeat a response)."""
    return [dpo_case(rng, size, pairs) for size, pairs in ((2, 1), (3, 4), (5, 10), (8, 20))]


def partial_coverage(rng):
    """Pairs among the first half of the responses only: the others appear in no pair."""
    return [
        dpo_case(rng, size, pairs, responses=np.arange(size // 2))
        for size, pairs in ((4, 3), (8, 12), (10, 5))
    ]


def large_logits(rng):
    """Logits in the hundreds and margins far beyond the range of exp."""
    cases = [dpo_case(rng, 4, 6, beta=1.0, scale=400.0), dpo_case(rng, 3, 3, beta=5.0, scale=300.0)]
    cases.append(
        {
            "logits": np.array([900.0, -900.0]),
            "ref_logprobs": np.log([0.5, 0.5]),
            "chosen": np.array([0, 1]),
            "rejected": np.array([1, 0]),
            "beta": 1.0,
        }
    )
    return cases


def margins_of(case):
    """The margins u_i = beta [(theta_c - theta_r) - (ref_c - ref_r)] of a case's pairs."""
    implicit = case["beta"] * (
        np.asarray(case["logits"], dtype=np.float64) - np.asarray(case["ref_logprobs"])
    )
    return implicit[np.asarray(case["chosen"])] - implicit[np.asarray(case["rejected"])]


def sums_to_zero(gradient, case):
    """Adding a constant to every logit leaves the loss unchanged, so the gradient sums to 0;
    and moving theta along theta - ref scales every margin u_i alike, so (theta - ref) . grad is
    the derivative of (1/N) sum_i softplus(-t u_i) at t = 1, -(1/N) sum_i sigmoid(-u_i) u_i,
    which a gradient that is zero (or any other vector that merely sums to zero) misses."""
    total = float(np.sum(gradient))
    if abs(total) > 1e-9:
        return f"the components sum to {total:.3g}, not 0"
    logits, ref_logprobs = case["logits"], case["ref_logprobs"]
    if gradient.shape != np.shape(logits):
        return f"expected shape {np.shape(logits)}, got shape {gradient.shape}"
    margins = margins_of(case)
    rate = float(-np.mean(margins * np.exp(-np.logaddexp(0.0, margins))))
    direction = np.asarray(logits, dtype=np.float64) - ref_logprobs
    along = float(direction @ gradient)
    scale = max(1.0, float(np.max(np.abs(direction))))
    return abs(along - rate) <= 1e-9 * scale or (
        f"(theta - ref) . gradient = {along:.6g}, but -(1/N) sum_i sigmoid(-u_i) u_i = {rate:.6g}"
    )


def unpaired_get_zero(gradient, case):
    """A response that appears in no pair gets exactly zero gradient, and the others get the
    derivative of the loss (central differences of dpo_objective), which zeros miss."""
    if gradient.shape != np.shape(case["logits"]):
        return f"expected shape {np.shape(case['logits'])}, got shape {gradient.shape}"
    used = np.union1d(case["chosen"], case["rejected"])
    unused = np.setdiff1d(np.arange(len(case["logits"])), used)
    worst = float(np.max(np.abs(gradient[unused]))) if unused.size else 0.0
    if worst != 0.0:
        return f"responses in no pair have gradient up to {worst:.3g}, not 0"
    numerical = compare.numerical_gradient(
        lambda x: dpo_objective(**{**case, "logits": x}),
        np.asarray(case["logits"], dtype=np.float64),
        1e-6,
    )
    expected = np.zeros_like(numerical)
    expected[used] = numerical[used]  # unused: exactly 0, as checked above
    verdict = compare.compare(gradient, expected, rtol=1e-5, atol=1e-7)
    return verdict.passed or (
        f"the responses in a pair differ from central finite differences: {verdict.message}"
    )


def bad(**changes):
    """The hand case of the book, with some arguments made invalid."""
    case = {
        "logits": np.zeros(3),
        "ref_logprobs": np.log([0.2, 0.3, 0.5]),
        "chosen": np.array([0, 1]),
        "rejected": np.array([2, 2]),
        "beta": 0.5,
    }
    case.update(changes)
    return case


# Margin 0 for one pair: loss log 2, gradient (-beta/2, beta/2) with beta = 1.
BOOK_PAIR = {
    "logits": np.array([0.0, 0.0]),
    "ref_logprobs": np.log([0.5, 0.5]),
    "chosen": np.array([0]),
    "rejected": np.array([1]),
    "beta": 1.0,
}

EXERCISE = Exercise(
    id="dpo-gradient",
    title="DPO on a categorical policy",
    chapter=6,
    stars=2,
    solution=BOOK_SOLUTIONS / "dpo_gradient.py",
    functions=[
        Function(name="dpo_loss", parameters="logits, ref_logprobs, chosen, rejected, beta"),
        Function(
            name="dpo_logit_gradient", parameters="logits, ref_logprobs, chosen, rejected, beta"
        ),
    ],
    checks=[
        Answer(
            name="book-pair-loss",
            function="dpo_loss",
            kwargs=BOOK_PAIR,
            expected=np.log(2.0),
            description="One pair with margin 0 has loss log 2.",
        ),
        Answer(
            name="book-pair-gradient",
            function="dpo_logit_gradient",
            kwargs=BOOK_PAIR,
            expected=[-0.5, 0.5],
            description="One pair with margin 0 and beta = 1 has gradient (-1/2, 1/2).",
        ),
        Compare(
            name="loss-random",
            function="dpo_loss",
            inputs=random_cases,
            points=2,
            description="The loss matches the reference on random policies and pairs.",
        ),
        Compare(
            name="gradient-random",
            function="dpo_logit_gradient",
            inputs=random_cases,
            points=2,
            description="The gradient matches the reference on random policies and pairs.",
        ),
        Gradient(
            name="finite-differences",
            function="dpo_logit_gradient",
            objective=dpo_objective,
            wrt="logits",
            inputs=random_cases,
            points=2,
            description="The gradient matches central finite differences of the mean loss.",
        ),
        Property(
            name="sums-to-zero",
            function="dpo_logit_gradient",
            inputs=random_cases,
            holds=sums_to_zero,
            description="The components sum to zero, and (θ - ref) · grad = -mean_i σ(-u_i) u_i.",
        ),
        Property(
            name="unpaired-responses",
            function="dpo_logit_gradient",
            inputs=partial_coverage,
            holds=unpaired_get_zero,
            description=(
                "Responses in no pair get exactly zero gradient; the others match finite "
                "differences."
            ),
        ),
        Compare(
            name="large-logits-loss",
            function="dpo_loss",
            inputs=large_logits,
            description="The loss stays finite and exact for logits and margins in the hundreds.",
        ),
        Compare(
            name="large-logits-gradient",
            function="dpo_logit_gradient",
            inputs=large_logits,
            description="The gradient stays finite and exact for huge logits and margins.",
        ),
        Raises(
            name="beta-zero",
            function="dpo_loss",
            kwargs=bad(beta=0.0),
            description="beta = 0 raises ValueError.",
        ),
        Raises(
            name="beta-negative",
            function="dpo_logit_gradient",
            kwargs=bad(beta=-1.0),
            description="A negative beta raises ValueError.",
        ),
        Raises(
            name="ref-shape",
            function="dpo_loss",
            kwargs=bad(ref_logprobs=np.log([0.5, 0.5])),
            description="ref_logprobs of another shape than logits raises ValueError.",
        ),
        Raises(
            name="index-out-of-range",
            function="dpo_logit_gradient",
            kwargs=bad(rejected=np.array([2, 3])),
            description="A response index outside [0, K) raises ValueError.",
        ),
        Raises(
            name="pair-lengths",
            function="dpo_loss",
            kwargs=bad(chosen=np.array([0, 1, 0])),
            description="chosen and rejected of different lengths raise ValueError.",
        ),
        Raises(
            name="positive-ref-logprobs",
            function="dpo_logit_gradient",
            kwargs=bad(ref_logprobs=np.array([0.5, -1.0, -1.0])),
            description="A positive reference log-probability raises ValueError.",
        ),
    ],
    manual=[
        Manual(
            name="derivation",
            points=3,
            description=(
                "Show that the loss depends on theta only through theta_c - theta_r, derive the "
                "gradient -(beta/N) sum_i sigmoid(-u_i) (e_c - e_r), and explain why a response in "
                "no pair gets zero gradient although its probability still changes."
            ),
        ),
        Manual(
            name="test-function",
            points=1,
            description=(
                "test_dpo_logit_gradient compares the gradient with central finite differences "
                "of dpo_loss, including pairs that leave responses out and large logits."
            ),
        ),
    ],
)
