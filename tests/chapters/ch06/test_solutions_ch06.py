"""The reference solution of chapter 6's code exercise is right, and so are the numbers of the
solutions page.

The solution (``solutions/dpo_gradient.py``) is checked against a DPO loss written out with
``math``, against central differences, against the library's ``kl.dpo_loss`` through the chain
rule of the softmax. Its specification (the reference passes every check, the starter none) is
checked with every exercise's in ``test_exercises.py``, and its typical mistakes in
``test_mutants.py``. The numbers the solutions page states for the derivation exercises are
recomputed here by independent routes (loops, closed forms, root searches, backward induction
by hand). The file itself (markers, starter, imports, docstring examples) is checked with every
other solution file in ``test_solution_files.py``."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import optimize

from rlfound import kl
from tests._solutions import (
    load_solution,
)
from tests.oracles import (
    central_differences,
    kl_by_hand,
    softmax_rows,
    think_then_answer,
    tilted_by_hand,
    two_turn_search,
)

solution = load_solution("dpo_gradient")


def mean_dpo_by_hand(logits, ref_logprobs, chosen, rejected, beta):
    """The mean of -log σ(u_i) over the pairs, with the log-softmax written out."""
    log_pi = np.log(softmax_rows(np.asarray(logits, dtype=np.float64)))
    total = 0.0
    for c, r in zip(chosen, rejected, strict=True):
        u = beta * ((log_pi[c] - ref_logprobs[c]) - (log_pi[r] - ref_logprobs[r]))
        total += math.log1p(math.exp(-u))
    return total / len(chosen)


def random_case(seed, size=5, pairs=7, scale=1.0):
    rng = np.random.default_rng(seed)
    return (
        scale * rng.normal(size=size),
        np.log(rng.dirichlet(np.ones(size))),
        rng.integers(0, size, size=pairs),
        rng.integers(0, size, size=pairs),
        float(rng.uniform(0.1, 2.0)),
    )


# --- the functions themselves ----------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_loss_matches_the_definition(seed):
    case = random_case(seed)
    assert solution.dpo_loss(*case) == pytest.approx(mean_dpo_by_hand(*case), rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_gradient_matches_central_differences(seed):
    logits, ref, chosen, rejected, beta = random_case(seed)
    numerical = central_differences(
        lambda z: mean_dpo_by_hand(z, ref, chosen, rejected, beta), logits
    )
    np.testing.assert_allclose(
        solution.dpo_logit_gradient(logits, ref, chosen, rejected, beta), numerical, atol=1e-8
    )


def test_solution_agrees_with_the_library_through_the_softmax_chain_rule():
    logits, ref, chosen, rejected, beta = random_case(11, size=6, pairs=9)
    log_pi = np.log(softmax_rows(logits))
    args = (log_pi[chosen], log_pi[rejected], ref[chosen], ref[rejected], beta)
    assert solution.dpo_loss(logits, ref, chosen, rejected, beta) == pytest.approx(
        kl.dpo_loss(*args).mean(), rel=1e-12
    )
    grad_c, grad_r = kl.dpo_loss_gradient(*args)
    score = np.eye(6) - softmax_rows(logits)  # d log π(x) / dθ = e_x - π
    library = (grad_c @ score[chosen] + grad_r @ score[rejected]) / len(chosen)
    np.testing.assert_allclose(
        solution.dpo_logit_gradient(logits, ref, chosen, rejected, beta), library, atol=1e-15
    )


def test_hand_pair_and_unpaired_responses():
    assert solution.dpo_loss([0.0, 0.0], np.log([0.5, 0.5]), [0], [1], 1.0) == pytest.approx(
        math.log(2.0)
    )
    gradient = solution.dpo_logit_gradient(
        np.zeros(4), np.log([0.25] * 4), np.array([0, 0]), np.array([1, 1]), 2.0
    )
    np.testing.assert_allclose(gradient, [-1.0, 1.0, 0.0, 0.0])  # both pairs: σ(0) = ½, β = 2
    assert np.all(gradient[2:] == 0.0)


def test_huge_logits_stay_finite():
    assert solution.dpo_loss(
        np.array([900.0, -900.0]), np.log([0.5, 0.5]), [0, 1], [1, 0], 1.0
    ) == pytest.approx(900.0)
    gradient = solution.dpo_logit_gradient(
        np.array([900.0, -900.0]), np.log([0.5, 0.5]), [0, 1], [1, 0], 1.0
    )
    # Pair 1 (0 over 1) is already ordered: weight 0. Pair 2 (1 over 0) has σ(1800) = 1:
    # -(β/N)(e_1 - e_0) = (0.5, -0.5).
    np.testing.assert_allclose(gradient, [0.5, -0.5])


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"beta": 0.0}, "beta"),
        ({"beta": -1.0}, "beta"),
        ({"ref_logprobs": np.log([0.5, 0.5])}, "ref_logprobs"),
        ({"ref_logprobs": np.array([0.1, -1.0, -1.0])}, "ref_logprobs"),
        ({"rejected": np.array([2, 3])}, "rejected"),
        ({"chosen": np.array([0, 1, 0])}, "rejected"),
        ({"logits": np.zeros((1, 3))}, "logits"),
    ],
)
def test_bad_input_raises_a_value_error_naming_the_argument(change, name):
    arguments = {
        "logits": np.zeros(3),
        "ref_logprobs": np.log([0.2, 0.3, 0.5]),
        "chosen": np.array([0, 1]),
        "rejected": np.array([2, 2]),
        "beta": 0.5,
    }
    arguments.update(change)
    for function in (solution.dpo_loss, solution.dpo_logit_gradient):
        with pytest.raises(ValueError, match=rf"^{name}"):
            function(**arguments)


# --- the grading specification, evaluated in-process ---------------------------------------


# --- the numbers of the solutions page ------------------------------------------------------


def test_k3_support_exercise():
    divergence = kl_by_hand([0.5, 0.5, 0.0], [0.4, 0.4, 0.2])
    mean_k3 = sum(0.5 * (0.4 / 0.5 - 1.0 - math.log(0.4 / 0.5)) for _ in range(2))
    assert divergence == pytest.approx(0.2231, abs=5e-5)
    assert mean_k3 == pytest.approx(divergence - 0.2, rel=1e-12)
    assert mean_k3 == pytest.approx(0.0231, abs=5e-5)
    assert divergence >= -math.log(1 - 0.2) >= 0.2


def bernoulli_k2_bias(p, q):
    a, b = math.log((1 - p) / (1 - q)), math.log(p / q)
    return (1 - p) * (a * a / 2 - a) + p * (b * b / 2 - b)


def test_k2_bias_exercise():
    q = 0.3
    leading = (1 / q**2 - 1 / (1 - q) ** 2) / 6
    assert leading == pytest.approx(1.5117, abs=5e-5)
    ratios = [bernoulli_k2_bias(q + eps, q) / eps**3 for eps in (0.02, 0.01, 0.005, 0.0025)]
    np.testing.assert_allclose(ratios, [1.4160, 1.4628, 1.4870, 1.4993], atol=5e-5)
    assert all(abs(b - leading) < abs(a - leading) for a, b in itertools.pairwise(ratios))
    # The library's k2 agrees with the closed form of (a).
    pi, ref = np.array([0.68, 0.32]), np.array([0.7, 0.3])
    library = pi @ kl.k2(np.log(pi), np.log(ref)) - kl.kl_divergence(pi, ref)
    assert library == pytest.approx(bernoulli_k2_bias(0.32, 0.3), rel=1e-9)
    for p, q_ in [(0.25, 0.3), (0.75, 0.7), (0.9, 0.5)]:
        assert bernoulli_k2_bias(p, q_) < 0.0
    assert bernoulli_k2_bias(0.25, 0.3) == pytest.approx(-2.24e-4, abs=5e-7)
    assert bernoulli_k2_bias(0.9, 0.5) == pytest.approx(-8.31e-2, abs=5e-5)


@pytest.mark.parametrize(
    ("beta", "star_better", "other_better", "star_kl", "other_kl"),
    [
        (0.25, 0.8585, 0.7820, 1.5839, 1.2991),
        (1.0, 0.2320, 0.3162, 0.0734, 0.1762),
        (4.0, 0.1249, 0.1279, 0.0032, 0.0040),
    ],
)
def test_k3_loss_exercise_table(beta, star_better, other_better, star_kl, other_kl):
    ref, rewards = np.array([0.9, 0.1]), np.array([0.0, 1.0])
    star = tilted_by_hand(ref, rewards, beta)
    # With two responses and rewards (0, 1), J = π(better): solve the normalization for it.
    j = optimize.brentq(
        lambda j: beta * 0.9 / (beta + j) + beta * 0.1 / (beta + j - 1.0) - 1.0,
        1.0 - beta + 1e-12,
        11.0,
    )
    other = np.array([beta * 0.9 / (beta + j), beta * 0.1 / (beta + j - 1.0)])
    assert other[1] == pytest.approx(j, rel=1e-9)
    assert (star[1], other[1]) == pytest.approx((star_better, other_better), abs=5e-5)
    assert (kl_by_hand(star, ref), kl_by_hand(other, ref)) == pytest.approx(
        (star_kl, other_kl), abs=5e-5
    )
    factors = (math.exp(1 / beta), (beta + j) / (beta + j - 1.0))
    expected = {0.25: (54.60, 32.28), 1.0: (2.72, 4.16), 4.0: (1.28, 1.32)}[beta]
    assert factors == pytest.approx(expected, abs=5e-3)


LENGTHS, CORRECT, REF_LENGTH = think_then_answer()


def length_optimum_by_projected_ascent(rewards, beta):
    """The averaged objective maximized over the simplex by SLSQP (not a root search)."""

    def negative(p):
        p = p / p.sum()
        return -sum(
            pl * (r - beta * math.log(pl / q) / n)
            for pl, r, q, n in zip(p, rewards, REF_LENGTH, LENGTHS, strict=True)
        )

    result = optimize.minimize(
        negative,
        REF_LENGTH.copy(),
        method="SLSQP",
        bounds=[(1e-12, 1.0)] * 8,
        constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1.0}],
        options={"ftol": 1e-15, "maxiter": 2000},
    )
    return result.x / result.x.sum()


def test_length_normalized_exercise():
    numerical = length_optimum_by_projected_ascent(CORRECT, 0.2)
    assert numerical @ LENGTHS == pytest.approx(7.46, abs=5e-3)
    # The closed form with the page's nu = 0.8040.
    closed = REF_LENGTH * np.exp(LENGTHS * (CORRECT - 0.8039663) / 0.2 - 1.0)
    assert closed.sum() == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_allclose(closed, numerical, atol=1e-5)
    assert REF_LENGTH @ LENGTHS == pytest.approx(1.9922, abs=5e-5)
    flat = np.full(8, 0.5)
    for beta in (0.05, 0.2, 1.0):
        optimum = length_optimum_by_projected_ascent(flat, beta)
        assert optimum @ LENGTHS == pytest.approx(3.2420, abs=2e-3)
        penalty = sum(
            p * math.log(p / q) / n for p, q, n in zip(optimum, REF_LENGTH, LENGTHS, strict=True)
        )
        assert penalty == pytest.approx(-0.0992, abs=5e-4)
    c = 0.3964  # the page's constant: pi(L) = ref(L) exp(c L - 1)
    assert np.sum(REF_LENGTH * np.exp(c * LENGTHS - 1.0)) == pytest.approx(1.0, abs=2e-4)


def test_dpo_stochastic_exercise_luck_terms():
    _, _, _, v2 = two_turn_search(0.6)
    assert v2[0] == pytest.approx(0.5 * math.log(0.5 * math.e**2 + 0.5 * math.e**0.8))
    assert (v2[0], v2[1]) == pytest.approx((0.7851, 0.2390), abs=5e-5)
    q_search = 0.6 * v2[0] + 0.4 * v2[1]
    assert q_search == pytest.approx(0.5666, abs=5e-5)
    assert (q_search - v2[0], q_search - v2[1]) == pytest.approx((-0.2184, 0.3277), abs=5e-5)


def test_dpo_stochastic_exercise_gap_is_zero_only_for_a_deterministic_search():
    """Scan p with the population DPO fit written out (BFGS), and the optimum by hand."""
    reward = [[1.0, 0.4], [0.0, 0.4], [0.5, 0.4]]
    first = [0, 0, 1]
    trajectories = [(h, a) for h in range(3) for a in range(2)]

    def objective(pol1, pol2, p):
        reach = [pol1[first[h]] * [p, 1 - p, 1.0][h] for h in range(3)]
        value = -0.5 * kl_by_hand(pol1, [0.5, 0.5])
        for h in range(3):
            value += reach[h] * (pol2[h] @ reward[h] - 0.5 * kl_by_hand(pol2[h], [0.5, 0.5]))
        return value

    def fit(p):
        ref_traj = [0.25 * [p, 1 - p, 1.0][h] for h, _ in trajectories]
        r = [reward[h][a] for h, a in trajectories]

        def loss(params):
            log1 = np.log(softmax_rows(params[:2]))
            log2 = np.log(softmax_rows(params[2:].reshape(3, 2)))
            logp = [log1[first[h]] + log2[h, a] for h, a in trajectories]
            return sum(
                ref_traj[i]
                * ref_traj[j]
                / (1 + math.exp(r[j] - r[i]))
                * math.log1p(math.exp(-0.5 * (logp[i] - logp[j])))
                for i, j in itertools.product(range(6), repeat=2)
            )

        x = optimize.minimize(loss, np.zeros(8), method="BFGS", options={"gtol": 1e-12}).x
        return softmax_rows(x[:2]), softmax_rows(x[2:].reshape(3, 2))

    gaps = {}
    for p in (0.0, 0.3, 0.5, 0.6, 0.7, 1.0):
        soft1, soft2, v_start, _ = two_turn_search(p)
        assert objective(soft1, soft2, p) == pytest.approx(v_start, abs=1e-12)
        gaps[p] = v_start - objective(*fit(p), p)
    assert abs(gaps[0.0]) < 1e-9 and abs(gaps[1.0]) < 1e-9
    assert all(gaps[p] > 1e-4 for p in (0.3, 0.5, 0.6, 0.7))
    assert gaps[0.6] == pytest.approx(5.24e-3, abs=5e-5)
    assert gaps[0.6] > max(gaps[0.5], gaps[0.7])
