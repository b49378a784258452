"""Exercise ``behavior-kl``: the current policy's KL to the reference from behavior samples."""

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

# The chapter's distributions (chapter 14, section 3): reference, behavior, current policy.
BOOK_REF = np.array([0.40, 0.30, 0.20, 0.10])
BOOK_BEHAVIOR = np.array([0.30, 0.30, 0.25, 0.15])
BOOK_CURRENT = np.array([0.10, 0.25, 0.30, 0.35])


def kl_divergence(p, q):
    """KL(p || q) = sum_{p > 0} p log(p / q), written out (q > 0 wherever p > 0)."""
    keep = p > 0
    return float(np.sum(p[keep] * np.log(p[keep] / q[keep])))


def book_answer():
    """[E_mu[k1], E_mu[k3], E_mu[rho k1], E_mu[rho k3]] for the chapter's three distributions."""
    pi, mu, ref = BOOK_CURRENT, BOOK_BEHAVIOR, BOOK_REF
    naive_k1 = kl_divergence(mu, ref) - kl_divergence(mu, pi)
    naive_k3 = float(np.sum(mu * (ref / pi - 1.0 - np.log(ref / pi))))
    target = kl_divergence(pi, ref)
    return [naive_k1, naive_k3, target, target]


def token_case(rng, shape, on_policy=False):
    """Log-probabilities of tokens sampled from mu, with pi, mu and ref drawn per position."""
    vocab = 5
    pi, mu, ref = (rng.dirichlet(np.ones(vocab), size=shape) for _ in range(3))
    if on_policy:
        mu = pi
    sampled = np.array([rng.choice(vocab, p=m) for m in mu.reshape(-1, vocab)], dtype=int).reshape(
        shape
    )
    pick = np.take_along_axis
    return {
        "logprobs": np.log(pick(pi, sampled[..., None], axis=-1)[..., 0]),
        "old_logprobs": np.log(pick(mu, sampled[..., None], axis=-1)[..., 0]),
        "ref_logprobs": np.log(pick(ref, sampled[..., None], axis=-1)[..., 0]),
        "mask": rng.random(shape) < 0.75,
    }


def random_token_batches(rng):
    return [token_case(rng, shape) for shape in ((4, 6), (2, 11), (1, 1), (8, 3))]


def token_shapes(rng):
    """One sequence (1-D) and extra leading batch axes."""
    return [token_case(rng, shape) for shape in ((7,), (2, 3, 5), (1, 2, 1, 4))]


def on_policy_batches(rng):
    return [token_case(rng, shape, on_policy=True) for shape in ((3, 8), (6,))]


def is_k3_when_on_policy(out, case):
    """With mu = pi every weight is 1: the estimates are k3 at unmasked positions."""
    if out.shape != case["logprobs"].shape:
        return f"expected shape {case['logprobs'].shape}, got {out.shape}"
    u = case["ref_logprobs"] - case["logprobs"]
    k3 = np.exp(u) - 1.0 - u
    mask = case["mask"]
    gap = float(np.max(np.abs(out[mask] - k3[mask]), initial=0.0))
    return gap <= 1e-9 or f"with mu = pi the estimates differ from k3 by up to {gap:.3g}"


def masked_exactly_zero_and_the_rest_weighted(out, case):
    """Exactly 0 where the mask is False; rho * k3, written out, where it is True."""
    if out.shape != case["logprobs"].shape:
        return f"expected shape {case['logprobs'].shape}, got {out.shape}"
    mask = case["mask"]
    if not np.all(out[~mask] == 0.0):
        return "masked positions must be exactly 0"
    u = case["ref_logprobs"] - case["logprobs"]
    want = np.exp(case["logprobs"] - case["old_logprobs"]) * (np.exp(u) - 1.0 - u)
    gap = float(np.max(np.abs(out[mask] - want[mask]), initial=0.0))
    return gap <= 1e-9 * max(1.0, float(np.max(np.abs(want[mask]), initial=0.0))) or (
        f"unmasked positions differ from rho * k3 by up to {gap:.3g}"
    )


def random_distributions(rng):
    return [
        {
            "probs": rng.dirichlet(np.ones(size)),
            "behavior_probs": rng.dirichlet(np.ones(size)),
            "ref_probs": rng.dirichlet(np.ones(size)),
        }
        for size in (2, 3, 4, 8)
    ]


def zero_probability_tokens(rng):
    """Tokens that none of the three policies can produce must add nothing (no 0 * log 0)."""
    cases = []
    for _ in range(2):
        pi, mu, ref = (rng.dirichlet(np.ones(3)) for _ in range(3))
        pad = np.zeros(2)
        cases.append(
            {
                "probs": np.concatenate([pi, pad]),
                "behavior_probs": np.concatenate([mu, pad]),
                "ref_probs": np.concatenate([ref * 0.9, [0.1, 0.0]]),
            }
        )
    return cases


def weighted_is_the_target_kl(out, case):
    """E_mu[rho k1] = E_mu[rho k3] = KL(pi || ref)."""
    if out.shape != (4,):
        return f"expected shape (4,), got {out.shape}"
    target = kl_divergence(np.asarray(case["probs"]), np.asarray(case["ref_probs"]))
    gap = float(np.max(np.abs(out[2:] - target)))
    return gap <= 1e-9 or f"the weighted expectations differ from KL(pi || ref) by {gap:.3g}"


def naive_k1_identity(out, case):
    """E_mu[k1] = KL(mu || ref) - KL(mu || pi)."""
    if out.shape != (4,):
        return f"expected shape (4,), got {out.shape}"
    pi, mu, ref = (np.asarray(case[k]) for k in ("probs", "behavior_probs", "ref_probs"))
    want = kl_divergence(mu, ref) - kl_divergence(mu, pi)
    gap = abs(float(out[0]) - want)
    return gap <= 1e-9 or f"E_mu[k1] differs from KL(mu || ref) - KL(mu || pi) by {gap:.3g}"


def bad_tokens(**change):
    case = {
        "logprobs": np.log([0.5, 0.25]),
        "old_logprobs": np.log([0.4, 0.25]),
        "ref_logprobs": np.log([0.5, 0.5]),
        "mask": np.array([True, True]),
    }
    case.update(change)
    return case


def bad_distributions(**change):
    case = {
        "probs": np.array([0.5, 0.5]),
        "behavior_probs": np.array([0.3, 0.7]),
        "ref_probs": np.array([0.6, 0.4]),
    }
    case.update(change)
    return case


EXERCISE = Exercise(
    id="behavior-kl",
    title="The current policy's KL from behavior samples",
    chapter=14,
    stars=2,
    solution=BOOK_SOLUTIONS / "behavior_kl.py",
    functions=[
        Function(
            name="weighted_kl_tokens", parameters="logprobs, old_logprobs, ref_logprobs, mask"
        ),
        Function(name="behavior_kl_expectations", parameters="probs, behavior_probs, ref_probs"),
    ],
    checks=[
        Compare(
            name="random-token-batches",
            function="weighted_kl_tokens",
            inputs=random_token_batches,
            points=2,
            description="Matches the reference on batches of tokens sampled from mu.",
        ),
        Compare(
            name="token-shapes",
            function="weighted_kl_tokens",
            inputs=token_shapes,
            description="One sequence (1-D) and several leading batch axes.",
        ),
        Property(
            name="on-policy-is-k3",
            function="weighted_kl_tokens",
            inputs=on_policy_batches,
            holds=is_k3_when_on_policy,
            description="With old_logprobs = logprobs every weight is 1.",
        ),
        Property(
            name="masked-exactly-zero",
            function="weighted_kl_tokens",
            inputs=random_token_batches,
            holds=masked_exactly_zero_and_the_rest_weighted,
            description="Masked positions are exactly 0, the others rho * k3.",
        ),
        Raises(
            name="token-shape-mismatch",
            function="weighted_kl_tokens",
            kwargs=bad_tokens(old_logprobs=np.log([0.4, 0.25, 0.35])),
            description="old_logprobs of another shape raises ValueError.",
        ),
        Raises(
            name="positive-logprob",
            function="weighted_kl_tokens",
            kwargs=bad_tokens(ref_logprobs=np.array([0.3, -0.1])),
            description="A positive log-probability raises ValueError.",
        ),
        Answer(
            name="book-numbers",
            function="behavior_kl_expectations",
            kwargs={
                "probs": BOOK_CURRENT,
                "behavior_probs": BOOK_BEHAVIOR,
                "ref_probs": BOOK_REF,
            },
            expected=book_answer(),
            description="The chapter's reference, behavior and current distributions.",
        ),
        Compare(
            name="random-distributions",
            function="behavior_kl_expectations",
            inputs=random_distributions,
            points=2,
            description="Matches the reference on random distributions.",
        ),
        Property(
            name="weighted-is-target-kl",
            function="behavior_kl_expectations",
            inputs=random_distributions,
            holds=weighted_is_the_target_kl,
            description="The weighted expectations equal KL(pi || ref).",
        ),
        Property(
            name="naive-k1-identity",
            function="behavior_kl_expectations",
            inputs=random_distributions,
            holds=naive_k1_identity,
            description="E_mu[k1] = KL(mu || ref) - KL(mu || pi).",
        ),
        Compare(
            name="zero-probability-tokens",
            function="behavior_kl_expectations",
            inputs=zero_probability_tokens,
            description="Tokens no policy (or only the reference) can produce add nothing.",
        ),
        Raises(
            name="no-support",
            function="behavior_kl_expectations",
            kwargs=bad_distributions(behavior_probs=np.array([1.0, 0.0])),
            description="mu(x) = 0 where pi(x) > 0 raises ValueError.",
        ),
        Raises(
            name="not-a-distribution",
            function="behavior_kl_expectations",
            kwargs=bad_distributions(probs=np.array([0.5, 0.6])),
            description="probs that do not sum to 1 raise ValueError.",
        ),
    ],
    manual=[
        Manual(
            name="derivation",
            points=3,
            description=(
                "Derive E_mu[k1] = KL(mu || ref) - KL(mu || pi) and E_mu[rho k] = E_pi[k]; explain "
                "why the naive k1 average can be negative and why the naive k3 average, though "
                "every value is >= 0, is not KL(pi || ref)."
            ),
        ),
        Manual(
            name="test-function",
            points=1,
            description=(
                "test_behavior_kl checks both identities on random distributions and the token "
                "estimates against rho * k3 written out, with masks and mu = pi."
            ),
        ),
    ],
)
