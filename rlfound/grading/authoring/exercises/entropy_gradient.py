"""Exercise ``entropy-gradient``: the entropy of a softmax and its gradient, for any logits."""

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


def total_entropy(logits):
    """Σ over rows of -Σ_a π(a) log π(a), written independently of any solution (trusted)."""
    logits = np.asarray(logits, dtype=np.float64)
    top = np.max(logits, axis=-1, keepdims=True)
    logprobs = logits - top - np.log(np.sum(np.exp(logits - top), axis=-1, keepdims=True))
    return float(-np.sum(np.exp(logprobs) * logprobs))


def random_cases(rng):
    """Logits of a single distribution and of batches, with K from 1 to 12."""
    shapes = ((1,), (2,), (5,), (3, 4), (2, 3, 6), (4, 12))
    return [{"logits": float(rng.uniform(0.5, 4.0)) * rng.normal(size=shape)} for shape in shapes]


def peaked_cases(rng):
    """Moderately peaked rows (logit gaps up to ~15), where the gradient is still visible."""
    cases = []
    for size in (3, 6):
        logits = rng.normal(size=(4, size))
        logits[np.arange(4), rng.integers(0, size, 4)] += rng.uniform(5.0, 15.0, 4)
        cases.append({"logits": logits})
    return cases


def extreme_cases(rng):
    """Logits hundreds to ~1e308 apart: probabilities underflow to exactly 0.

    A naive ``log(softmax(z))`` gives ``-inf`` there and ``0 * -inf = nan``. Rows with one huge
    favorite have entropy and gradient exactly 0; rows whose two favorites are huge but close
    (``scale`` and ``scale + log 3``) have those of the distribution (1/4, 3/4).
    """
    scale = float(rng.uniform(500.0, 2000.0))
    return [
        {"logits": np.array([scale, 0.0, -scale])},
        {"logits": np.array([[scale, scale + np.log(3.0), -scale, 1.0], [0.0, 0.0, 0.0, 0.0]])},
        {"logits": np.array([1e300, -1e300, 0.0])},
        {"logits": np.array([[1.7e308, -1.7e308], [1e300, 1e300]])},
        {"logits": np.array([[-scale, scale, scale + 1.0, 0.0], [scale, -scale, 0.0, 0.0]])},
        {"logits": np.full((2, 5), float(rng.uniform(-1e6, 1e6)))},
    ]


def _uniform_rows(logits):
    logits = np.asarray(logits)
    return np.all(logits == logits[..., :1], axis=-1)


def rows_sum_to_zero(gradient, case):
    """Adding a constant to a row of logits leaves its entropy unchanged: each row sums to 0;
    and a row that is not uniform has a gradient that is not zero."""
    if gradient.shape != np.shape(case["logits"]):
        return f"expected shape {np.shape(case['logits'])}, got shape {gradient.shape}"
    worst = float(np.max(np.abs(np.sum(gradient, axis=-1))))
    if worst > 1e-10:
        return f"a row of the gradient sums to {worst:.3g}, not 0"
    moving = np.max(np.abs(gradient), axis=-1)[~_uniform_rows(case["logits"])]
    return bool(np.all(moving > 1e-8)) or "the gradient is zero at a row that is not uniform"


def zero_at_uniform(gradient, case):
    """The uniform distribution is the maximum of the entropy: the gradient is 0 there, and only
    there."""
    if gradient.shape != np.shape(case["logits"]):
        return f"expected shape {np.shape(case['logits'])}, got shape {gradient.shape}"
    uniform = _uniform_rows(case["logits"])
    size = np.max(np.abs(gradient), axis=-1)
    if np.any(size[uniform] > 1e-12):
        return f"the gradient at a uniform row is up to {float(np.max(size[uniform])):.3g}, not 0"
    return (
        bool(np.all(size[~uniform] > 1e-8)) or "the gradient is zero at a row that is not uniform"
    )


# pi = (1/4, 3/4): H = -(1/4) log(1/4) - (3/4) log(3/4) and dH/dz_a = -pi(a) (log pi(a) + H).
BOOK_PI = np.array([0.25, 0.75])
BOOK_H = float(-np.sum(BOOK_PI * np.log(BOOK_PI)))
BOOK_GRADIENT = -BOOK_PI * (np.log(BOOK_PI) + BOOK_H)

# Uniform rows (gradient 0) next to rows that are not (gradient not 0); K = 1 is uniform.
MIXED_ROWS = [
    {"logits": np.array([[0.0, 0.0, 0.0, 0.0], [0.0, np.log(3.0), 1.0, 2.0]])},
    {"logits": np.array([[-2.5] * 7, [-2.5] * 6 + [-2.0], [4.0] * 7])},
    {"logits": np.full((2, 1), 9.0)},
    {"logits": np.array([1.0, 1.0, 1.0, 1.0001])},
]

EXERCISE = Exercise(
    id="entropy-gradient",
    title="The entropy of a softmax and its gradient",
    chapter=10,
    stars=2,
    solution=BOOK_SOLUTIONS / "entropy_gradient.py",
    functions=[
        Function(name="softmax_entropy", parameters="logits"),
        Function(name="softmax_entropy_gradient", parameters="logits"),
    ],
    checks=[
        Answer(
            name="uniform-entropy",
            function="softmax_entropy",
            kwargs={"logits": np.zeros(4)},
            expected=np.log(4.0),
            description="The uniform distribution over 4 tokens has entropy log 4.",
        ),
        Answer(
            name="book-gradient",
            function="softmax_entropy_gradient",
            kwargs={"logits": np.log(BOOK_PI)},
            expected=BOOK_GRADIENT,
            description="pi = (1/4, 3/4): the gradient is -pi (log pi + H), H = 0.5623.",
        ),
        Compare(
            name="entropy-random",
            function="softmax_entropy",
            inputs=random_cases,
            points=2,
            description="The entropy matches the reference on random logits of several shapes.",
        ),
        Compare(
            name="gradient-random",
            function="softmax_entropy_gradient",
            inputs=random_cases,
            points=2,
            description="The gradient matches the reference on random logits of several shapes.",
        ),
        Gradient(
            name="finite-differences",
            function="softmax_entropy_gradient",
            objective=total_entropy,
            wrt="logits",
            inputs=random_cases,
            points=2,
            description="The gradient matches central finite differences of the entropy.",
        ),
        Gradient(
            name="finite-differences-peaked",
            function="softmax_entropy_gradient",
            objective=total_entropy,
            wrt="logits",
            inputs=peaked_cases,
            description="Finite differences on peaked rows, where most gradients are tiny.",
        ),
        Property(
            name="rows-sum-to-zero",
            function="softmax_entropy_gradient",
            inputs=random_cases,
            holds=rows_sum_to_zero,
            description="Every row of the gradient sums to zero, and is not zero everywhere.",
        ),
        Property(
            name="zero-at-uniform",
            function="softmax_entropy_gradient",
            inputs=MIXED_ROWS,
            holds=zero_at_uniform,
            description="The gradient is zero at uniform rows and only there.",
        ),
        Compare(
            name="extreme-logits-entropy",
            function="softmax_entropy",
            inputs=extreme_cases,
            description="Exact, finite entropies for logits hundreds to 1e308 apart.",
        ),
        Compare(
            name="extreme-logits-gradient",
            function="softmax_entropy_gradient",
            inputs=extreme_cases,
            description="Exact, finite gradients for logits hundreds to 1e308 apart.",
        ),
        Raises(
            name="non-finite-logits",
            function="softmax_entropy",
            kwargs={"logits": np.array([0.0, np.inf])},
            description="An infinite logit raises ValueError.",
        ),
        Raises(
            name="nan-logits-gradient",
            function="softmax_entropy_gradient",
            kwargs={"logits": np.array([[0.0, 1.0], [np.nan, 0.0]])},
            description="A NaN logit raises ValueError.",
        ),
        Raises(
            name="scalar-logits",
            function="softmax_entropy",
            kwargs={"logits": np.array(1.5)},
            description="A scalar (no category axis) raises ValueError.",
        ),
        Raises(
            name="empty-last-axis",
            function="softmax_entropy_gradient",
            kwargs={"logits": np.zeros((3, 0))},
            description="Rows without a category raise ValueError.",
        ),
    ],
    manual=[
        Manual(
            name="derivation",
            points=2,
            description=(
                "Derive dH/dz_a = -pi(a) (log pi(a) + H) from d pi(b)/dz_a = pi(b) (1[a = b] - "
                "pi(a)), and explain why the rows sum to zero and why the gradient is zero at the "
                "uniform distribution."
            ),
        ),
        Manual(
            name="test-function",
            points=1,
            description=(
                "test_softmax_entropy_gradient compares the gradient with central differences on "
                "several shapes and checks rows with extreme logits and bad input."
            ),
        ),
    ],
)
