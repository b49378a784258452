"""Claims made in chapter 6 (KL regularization), recomputed independently.

Each test rebuilds one number, identity or figure property that the chapter's text relies on,
with the chapter's own parameters, by a route that shares no code with the library functions
the chapter calls: divergences and optima by loops with ``math`` (tests.oracles.kl_by_hand,
tilted_by_hand), sequences enumerated by hand, gradients by central differences, optima by
SciPy's optimizers on objectives written out here, the DPO loss as -log(sigmoid) written out,
and the two-turn task by backward induction by hand (tests.oracles.two_turn_search).

Sections: the divergence (hand example, chain rule); the regularized optimum; the estimators
(moments at pi*(0.5), the path of fig-kl-estimators, samples from an older policy); gradients
as losses (eq-estimator-gradients, the k3 stationary point, fig-kl-loss-direction); sum versus
mean (the think-then-answer toy, fig-kl-length); DPO (gradient, population fits, the two-turn
task); the check for understanding; the trainer conventions of the "In practice" table.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize

from tests.oracles import (
    KL_REF_PROBS,
    KL_REWARDS,
    central_differences,
    kl_by_hand,
    softmax_rows,
    think_then_answer,
    tilted_by_hand,
    two_turn_search,
)

CHAPTER = Path(__file__).resolve().parents[3] / "chapters" / "06_kl_regularization.md"
REF, R = np.asarray(KL_REF_PROBS), np.asarray(KL_REWARDS)


def estimator_values(name, pi, ref):
    """k1, k2 or k3 of every category as if it had been sampled, from the definitions."""
    out = []
    for p, q in zip(pi, ref, strict=True):
        log_ratio = math.log(p / q)
        out.append(
            {"k1": log_ratio, "k2": 0.5 * log_ratio**2, "k3": q / p - 1.0 - math.log(q / p)}[name]
        )
    return np.array(out)


def moments(name, pi, ref, sampler=None, weights=None):
    sampler = pi if sampler is None else sampler
    values = estimator_values(name, pi, ref) * (1.0 if weights is None else weights)
    mean = sampler @ values
    return mean, math.sqrt(sampler @ (values - mean) ** 2)


def pi_star(beta):
    return tilted_by_hand(REF, R, beta)


# ---------------------------------------------------------------------------------------------
# The divergence
# ---------------------------------------------------------------------------------------------


def test_hand_example_in_both_directions():
    assert kl_by_hand([0.5, 0.5], [0.25, 0.75]) == pytest.approx(0.1438, abs=5e-5)
    assert kl_by_hand([0.25, 0.75], [0.5, 0.5]) == pytest.approx(0.1308, abs=5e-5)


@pytest.mark.equation("eq-kl-chain-rule")
def test_chain_rule_on_the_two_bigram_policies():
    """eq-kl-chain-rule with the chapter's tables, all 81 sequences enumerated by hand."""
    policy = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25]])
    reference = np.array([[0.4, 0.4, 0.2], [0.3, 0.4, 0.3], [0.3, 0.3, 0.4], [0.4, 0.3, 0.3]])
    seq_p, seq_q, token_kls = [], [], []
    for seq in itertools.product(range(3), repeat=4):
        previous = (3, *seq[:-1])  # row 3: the first token
        seq_p.append(math.prod(policy[a, x] for a, x in zip(previous, seq, strict=True)))
        seq_q.append(math.prod(reference[a, x] for a, x in zip(previous, seq, strict=True)))
        token_kls.append(sum(kl_by_hand(policy[a], reference[a]) for a in previous))
    sequence_level = kl_by_hand(seq_p, seq_q)
    assert sequence_level == pytest.approx(np.dot(seq_p, token_kls), rel=1e-12)
    assert sequence_level == pytest.approx(0.1654670765, abs=1e-10)


# ---------------------------------------------------------------------------------------------
# The regularized optimum
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("beta", "optimum", "value"),
    [
        (0.1, [0.0004, 0.0020, 0.0197, 0.0018, 0.9762], 0.702839),
        (0.5, [0.2214, 0.2477, 0.2257, 0.1008, 0.2045], 0.295821),
        (2.0, [0.3563, 0.2953, 0.1715, 0.1035, 0.0734], 0.231606),
    ],
)
def test_optimum_table(beta, optimum, value):
    np.testing.assert_allclose(pi_star(beta), optimum, atol=5e-5)
    log_z = math.log(sum(q * math.exp(r / beta) for q, r in zip(REF, R, strict=True)))
    assert beta * log_z == pytest.approx(value, abs=5e-7)
    # The numerical maximum on the simplex (Nelder-Mead on logits, not the chapter's SLSQP).
    result = optimize.minimize(
        lambda t: -(softmax_rows(t) @ R - beta * kl_by_hand(softmax_rows(t), REF)),
        np.zeros(5),
        method="Nelder-Mead",
        options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 40_000, "maxfev": 40_000},
    )
    assert -result.fun == pytest.approx(beta * log_z, abs=1e-8)


# ---------------------------------------------------------------------------------------------
# The estimators
# ---------------------------------------------------------------------------------------------


def test_moments_at_the_optimum_for_beta_half():
    pi = pi_star(0.5)
    divergence = kl_by_hand(pi, REF)
    (m1, s1), (m2, s2), (m3, s3) = (moments(n, pi, REF) for n in ("k1", "k2", "k3"))
    assert divergence == pytest.approx(0.202508, abs=5e-7)
    assert m1 == pytest.approx(divergence, rel=1e-12) and m3 == pytest.approx(divergence, rel=1e-12)
    assert m2 == pytest.approx(0.264882, abs=5e-7)
    assert (m2 - divergence) / divergence == pytest.approx(0.31, abs=0.005)  # "almost a third"
    assert (s1, s2, s3) == pytest.approx((0.6991, 0.3733, 0.2402), abs=5e-5)
    assert 3.4 < s1 / divergence < 3.6  # "three and a half times"
    assert 1.0 < s3 / divergence < 1.25  # "little more than the quantity itself"


PATH_TABLE = {  # 1/beta: KL, E[k2] - KL, std k1, std k2, std k3 (the chapter's printout)
    0.5: (0.0088, 0.0006, 0.1372, 0.0185, 0.0162),
    1.0: (0.0402, 0.0058, 0.3006, 0.0820, 0.0643),
    2.0: (0.2025, 0.0624, 0.6991, 0.3733, 0.2402),
    5.0: (1.5655, 0.9453, 1.6033, 1.4010, 1.3268),
    10.0: (2.8412, 1.5574, 0.8513, 0.6424, 22.0938),
    20.0: (2.9942, 1.4955, 0.1188, 0.2541, 3137.5317),
}


@pytest.mark.parametrize("inverse_beta", PATH_TABLE)
def test_the_path_table_of_the_estimators(inverse_beta):
    pi = pi_star(1.0 / inverse_beta)
    divergence = kl_by_hand(pi, REF)
    kl_row, bias, s1, s2, s3 = PATH_TABLE[inverse_beta]
    assert divergence == pytest.approx(kl_row, abs=5e-5)
    assert moments("k2", pi, REF)[0] - divergence == pytest.approx(bias, abs=5e-5)
    stds = [moments(n, pi, REF)[1] for n in ("k1", "k2", "k3")]
    np.testing.assert_allclose(stds, [s1, s2, s3], atol=5e-5, rtol=1e-6)
    for name in ("k1", "k3"):
        assert moments(name, pi, REF)[0] == pytest.approx(divergence, rel=1e-10)


def test_path_claims_in_the_prose():
    near = pi_star(2.0)  # 1/beta = 0.5, KL = 0.0088: std k1 close to sqrt(2 KL)
    assert moments("k1", near, REF)[1] == pytest.approx(
        math.sqrt(2 * kl_by_hand(near, REF)), rel=0.05
    )
    ten = pi_star(0.1)
    assert moments("k3", ten, REF)[1] > 20 * moments("k1", ten, REF)[1]
    far = pi_star(0.05)
    assert 1e-8 < far[0] < 3e-8  # "about 1e-8 against the reference's 0.4"
    assert 1000 < moments("k3", far, REF)[1] < 10_000  # "in the thousands"
    # k2's relative bias: a third at KL = 0.2, about half or more once the KL exceeds 1.
    for t in np.linspace(0.25, 20.0, 80):
        pi = pi_star(1.0 / t)
        divergence = kl_by_hand(pi, REF)
        if divergence > 1.0:
            assert (moments("k2", pi, REF)[0] - divergence) / divergence > 0.495


def test_simulated_markers_agree_with_the_exact_lines():
    """fig-kl-estimators markers: the chapter's seeded draws (seed 6, 4000 per point)."""
    rng = np.random.default_rng(6)
    worst = 0.0
    for t in (0.5, 1.0, 2.0, 5.0):
        pi = pi_star(1.0 / t)
        drawn = rng.choice(5, size=4000, p=pi)
        for name in ("k1", "k2", "k3"):
            sample = estimator_values(name, pi, REF)[drawn]
            worst = max(worst, abs(sample.std(ddof=1) / moments(name, pi, REF)[1] - 1.0))
    assert worst <= 0.05  # "largest relative error of a standard deviation 0.05"
    far = pi_star(0.05)
    drawn = np.random.default_rng(7).choice(5, size=4000, p=far)
    assert np.all(drawn == 4)  # the responsible tokens are never drawn: std ~ 0


def test_older_policy_table():
    pi = pi_star(0.5)
    divergence = kl_by_hand(pi, REF)
    naive1, naive3, spread1, spread3 = [], [], [], []
    for beta_mu in (0.5, 0.7, 1.0, 2.0, math.inf):
        mu = REF if math.isinf(beta_mu) else pi_star(beta_mu)
        naive1.append(moments("k1", pi, REF, sampler=mu)[0])
        naive3.append(moments("k3", pi, REF, sampler=mu)[0])
        # The identity of the text: E_mu[k1] = KL(mu||ref) - KL(mu||pi).
        assert naive1[-1] == pytest.approx(kl_by_hand(mu, REF) - kl_by_hand(mu, pi), abs=1e-12)
        for name, spreads in (("k1", spread1), ("k3", spread3)):
            mean, spread = moments(name, pi, REF, sampler=mu, weights=pi / mu)
            assert mean == pytest.approx(divergence, rel=1e-10)
            spreads.append(spread)
    assert naive1[0] == pytest.approx(divergence) and naive3[0] == pytest.approx(divergence)
    for values in (naive1, naive3):  # "fall short ... by more the further the behavior lags"
        assert all(b < a for a, b in itertools.pairwise(values))
    for spreads in (spread1, spread3):  # "their spread grows with the lag"
        assert all(b > a for a, b in itertools.pairwise(spreads))
    assert naive1[2] < 0.0 and naive1[-1] == pytest.approx(-0.1616, abs=5e-5)
    assert (spread1[-1], spread3[-1]) == pytest.approx((1.3131, 0.5683), abs=5e-5)


# ---------------------------------------------------------------------------------------------
# Gradients as losses
# ---------------------------------------------------------------------------------------------


def test_expected_gradients_of_the_three_estimators():
    pi = pi_star(0.5)
    theta = np.log(pi)

    def per_sample(name, x):
        return central_differences(lambda z: estimator_values(name, softmax_rows(z), REF)[x], theta)

    expected = {n: sum(pi[x] * per_sample(n, x) for x in range(5)) for n in ("k1", "k2", "k3")}
    forward = central_differences(lambda z: kl_by_hand(softmax_rows(z), REF), theta)
    other = central_differences(lambda z: kl_by_hand(REF, softmax_rows(z)), theta)
    np.testing.assert_allclose(expected["k1"], 0.0, atol=1e-8)
    np.testing.assert_allclose(expected["k2"], forward, atol=1e-8)
    np.testing.assert_allclose(expected["k3"], other, atol=1e-8)
    np.testing.assert_allclose(other, pi - REF, atol=1e-8)
    np.testing.assert_allclose(forward, [-0.1758, -0.0976, 0.0465, -0.0196, 0.2465], atol=5e-5)


def test_reward_route_is_exact_for_k1_and_off_by_pi_minus_ref_for_k3():
    """E[k ∇ log π] with the estimate as a constant reward, summed over the five responses."""
    pi = pi_star(0.5)
    theta = np.log(pi)
    forward = central_differences(lambda z: kl_by_hand(softmax_rows(z), REF), theta)
    score = np.eye(5) - pi
    np.testing.assert_allclose((pi * estimator_values("k1", pi, REF)) @ score, forward, atol=1e-8)
    np.testing.assert_allclose(
        (pi * estimator_values("k3", pi, REF)) @ score, forward - (pi - REF), atol=1e-8
    )


def test_per_token_k2_loss_misses_the_prefix_part_of_the_sequence_gradient():
    """A bigram policy over 2 tokens, sequences of 3, every sequence enumerated by loops.

    The gradient of the sequence KL (central differences) equals the reward route,
    E[Σ_j (Σ_{j' >= j} k1_j') ∇ log π(x_j | x_{j-1})], and not the per-token k2 loss,
    E[Σ_j k1_j ∇ log π(x_j | x_{j-1})].
    """
    rng = np.random.default_rng(2)
    table = rng.normal(size=(3, 2))  # rows: after token 0, after token 1, the first token
    reference = softmax_rows(rng.normal(size=(3, 2)))

    def sequences(tab):
        policy = softmax_rows(tab)
        for seq in itertools.product(range(2), repeat=3):
            rows = (2, *seq[:-1])
            prob = math.prod(policy[r, x] for r, x in zip(rows, seq, strict=True))
            k1 = [math.log(policy[r, x] / reference[r, x]) for r, x in zip(rows, seq, strict=True)]
            scores = []
            for r, x in zip(rows, seq, strict=True):
                score = np.zeros((3, 2))
                score[r] = np.eye(2)[x] - policy[r]
                scores.append(score)
            yield prob, rows, seq, k1, scores

    def sequence_kl(tab):
        seqs = list(sequences(tab))
        ref_prob = [
            math.prod(reference[r, x] for r, x in zip(rows, seq, strict=True))
            for _, rows, seq, _, _ in seqs
        ]
        return kl_by_hand([s[0] for s in seqs], ref_prob)

    exact = central_differences(sequence_kl, table)
    reward_route = sum(
        p * sum(sum(k1[j:]) * scores[j] for j in range(3))
        for p, _, _, k1, scores in sequences(table)
    )
    per_token_k2 = sum(
        p * sum(k1[j] * scores[j] for j in range(3)) for p, _, _, k1, scores in sequences(table)
    )
    np.testing.assert_allclose(reward_route, exact, atol=1e-8)
    assert np.abs(per_token_k2 - exact).max() > 1e-2


def other_direction_optimum(beta):
    """Maximize E_pi[R] - beta KL(ref || pi) by BFGS on logits (formula written out)."""
    result = optimize.minimize(
        lambda t: -(softmax_rows(t) @ R - beta * kl_by_hand(REF, softmax_rows(t))),
        np.zeros(5),
        method="BFGS",
        options={"gtol": 1e-11},
    )
    return softmax_rows(result.x)


@pytest.mark.equation("eq-k3-stationary")
def test_k3_stationary_point_and_its_numbers():
    other = other_direction_optimum(0.5)
    np.testing.assert_allclose(other, [0.1891, 0.1749, 0.1345, 0.0660, 0.4354], atol=5e-5)
    np.testing.assert_allclose(other, 0.5 * REF / (0.5 + other @ R - R), atol=1e-6)
    star = pi_star(0.5)
    assert other @ R == pytest.approx(0.5574, abs=5e-5) and star @ R == pytest.approx(
        0.3971, abs=5e-5
    )
    assert kl_by_hand(other, REF) == pytest.approx(0.6641, abs=5e-5)
    assert other[4] > 2 * star[4]  # "more than twice the probability pi* gives E"
    j_other = other @ R - 0.5 * kl_by_hand(other, REF)
    assert j_other == pytest.approx(0.2254, abs=5e-5) and j_other < 0.2958


def test_kl_ratio_of_the_two_optima_over_the_figure_range():
    ratios = [
        kl_by_hand(other_direction_optimum(b), REF) / kl_by_hand(pi_star(b), REF)
        for b in np.geomspace(0.2, 5.0, 25)
    ]
    assert min(ratios) == pytest.approx(1.1, abs=0.05)
    assert max(ratios) == pytest.approx(3.4, abs=0.05)


# ---------------------------------------------------------------------------------------------
# Sum versus mean
# ---------------------------------------------------------------------------------------------

LENGTHS, CORRECT, REF_LENGTH = think_then_answer()


def averaged_optimum(beta, rewards=CORRECT):
    """The stationarity condition of the averaged objective, solved by a root search."""

    def mass(nu):
        return (
            sum(
                q * math.exp(n * (r - nu) / beta - 1.0)
                for q, n, r in zip(REF_LENGTH, LENGTHS, rewards, strict=True)
            )
            - 1.0
        )

    nu = optimize.brentq(mass, min(rewards) - 1.0, max(rewards) + 1.0)
    return REF_LENGTH * np.exp(LENGTHS * (rewards - nu) / beta - 1.0)


def test_reference_length_distribution():
    np.testing.assert_allclose(
        REF_LENGTH, [0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.0078125]
    )
    assert REF_LENGTH @ LENGTHS == pytest.approx(1.992, abs=5e-4)


@pytest.mark.parametrize(
    ("beta", "sum_length", "mean_length", "sum_correct", "mean_correct"),
    [
        (0.05, 6.538, 7.985, 0.889, 0.942),
        (0.2, 3.630, 7.460, 0.663, 0.918),
        (0.5, 2.567, 5.876, 0.539, 0.812),
    ],
)
def test_summed_and_averaged_optima(beta, sum_length, mean_length, sum_correct, mean_correct):
    summed = tilted_by_hand(REF_LENGTH, CORRECT, beta)
    averaged = averaged_optimum(beta)
    assert summed @ LENGTHS == pytest.approx(sum_length, abs=1.5e-3)
    assert averaged @ LENGTHS == pytest.approx(mean_length, abs=1.5e-3)
    assert summed @ CORRECT == pytest.approx(sum_correct, abs=5e-4)
    assert averaged @ CORRECT == pytest.approx(mean_correct, abs=5e-4)
    if beta >= 0.2:  # "more than twice as long at beta = 0.2 and 0.5"
        assert averaged @ LENGTHS > 2 * (summed @ LENGTHS)
    assert kl_by_hand(averaged, REF_LENGTH) > kl_by_hand(summed, REF_LENGTH)


def test_averaged_optimum_is_longer_over_the_figure_grid():
    for beta in np.geomspace(0.02, 2.0, 15):
        assert (
            averaged_optimum(beta) @ LENGTHS > tilted_by_hand(REF_LENGTH, CORRECT, beta) @ LENGTHS
        )


def test_the_length_factor_of_the_misconception():
    # Erratum: the misconception said the average "doubles the optimal length"; the factor is
    # 1.22 at beta = 0.05 and reaches 2 only for beta in about [0.19, 1.2].
    def factor(beta):
        return (averaged_optimum(beta) @ LENGTHS) / (
            tilted_by_hand(REF_LENGTH, CORRECT, beta) @ LENGTHS
        )

    assert factor(0.05) == pytest.approx(1.22, abs=5e-3)
    low = optimize.brentq(lambda b: factor(b) - 2.0, 0.1, 0.3)
    high = optimize.brentq(lambda b: factor(b) - 2.0, 0.5, 2.0)
    assert low == pytest.approx(0.19, abs=0.005) and high == pytest.approx(1.2, abs=0.05)
    grid = np.geomspace(0.02, 2.0, 400)
    factors = [factor(b) for b in grid]
    assert min(factors) > 1.0 and max(factors) == pytest.approx(2.3, abs=0.05)
    text = " ".join(CHAPTER.read_text(encoding="utf-8").split())
    assert "in the toy it doubles the optimal length" not in text
    assert "at least $2$ only for $\\beta$ between about $0.19$ and $1.2$, at most $2.3$" in text


def test_a_length_blind_reward_still_gets_longer_responses_when_averaged():
    flat = np.full(8, 0.5)
    for beta in (0.05, 0.2, 1.0):
        assert averaged_optimum(beta, flat) @ LENGTHS == pytest.approx(3.242, abs=5e-4)
    np.testing.assert_allclose(tilted_by_hand(REF_LENGTH, flat, 0.2), REF_LENGTH)


# ---------------------------------------------------------------------------------------------
# DPO
# ---------------------------------------------------------------------------------------------


def dpo_by_hand(chosen, rejected, ref_chosen, ref_rejected, beta):
    margin = beta * ((chosen - ref_chosen) - (rejected - ref_rejected))
    return math.log1p(math.exp(-margin)) if margin > -700 else -margin


def test_dpo_loss_for_huge_margins():
    assert dpo_by_hand(-1.0, -900.0, -1.0, -1.0, 1.0) < 1e-300
    assert dpo_by_hand(-900.0, -1.0, -1.0, -1.0, 1.0) == 899.0


def population_dpo_fit(weights, beta=0.5):
    """Minimize the expected DPO loss over 5 logits; weights[i, j] of the ordered pair (i, j)."""

    def loss(theta):
        logp = np.log(softmax_rows(theta))
        total = 0.0
        for i, j in itertools.product(range(5), repeat=2):
            if weights[i, j] > 0:
                prefer = 1.0 / (1.0 + math.exp(-(R[i] - R[j])))
                total += (
                    weights[i, j]
                    * prefer
                    * dpo_by_hand(logp[i], logp[j], math.log(REF[i]), math.log(REF[j]), beta)
                )
        return total

    return optimize.minimize(loss, np.log(REF), method="BFGS", options={"gtol": 1e-12}).x


def test_population_dpo_recovers_the_optimum_with_all_pairs():
    fit = population_dpo_fit(np.outer(REF, REF))
    np.testing.assert_allclose(softmax_rows(fit), pi_star(0.5), atol=1e-6)


def test_population_dpo_with_pairs_among_a_b_e_only():
    covered = np.zeros((5, 5))
    covered[np.ix_([0, 1, 4], [0, 1, 4])] = 1.0
    fit = population_dpo_fit(np.outer(REF, REF) * covered)
    moved = fit - np.log(REF)
    np.testing.assert_allclose(moved[[2, 3]], 0.0, atol=1e-6)  # no gradient: only f.d. noise
    assert moved[1] - moved[0] == pytest.approx((R[1] - R[0]) / 0.5, abs=1e-5)
    assert moved[4] - moved[0] == pytest.approx((R[4] - R[0]) / 0.5, abs=1e-5)
    partial = softmax_rows(fit)
    j_partial = partial @ R - 0.5 * kl_by_hand(partial, REF)
    assert j_partial == pytest.approx(0.2927, abs=5e-5) and j_partial < 0.2958


TRAJECTORIES = [(h, a) for h in range(3) for a in range(2)]
TURN2_REWARD = [[1.0, 0.4], [0.0, 0.4], [0.5, 0.4]]
FIRST = [0, 0, 1]


def two_turn_dpo_fit(p_found, beta=0.5):
    p_obs = [p_found, 1.0 - p_found, 1.0]
    reward = [TURN2_REWARD[h][a] for h, a in TRAJECTORIES]
    ref_traj = [0.25 * p_obs[h] for h, _ in TRAJECTORIES]

    def loss(params):
        log1 = np.log(softmax_rows(params[:2]))
        log2 = np.log(softmax_rows(params[2:].reshape(3, 2)))
        logp = [log1[FIRST[h]] + log2[h, a] for h, a in TRAJECTORIES]
        total = 0.0
        for i, j in itertools.product(range(6), repeat=2):
            prefer = 1.0 / (1.0 + math.exp(-(reward[i] - reward[j])))
            ref_log = 2 * math.log(0.5)
            total += (
                ref_traj[i]
                * ref_traj[j]
                * prefer
                * dpo_by_hand(logp[i], logp[j], ref_log, ref_log, beta)
            )
        return total

    fit = optimize.minimize(loss, np.zeros(8), method="BFGS", options={"gtol": 1e-12}).x
    return softmax_rows(fit[:2]), softmax_rows(fit[2:].reshape(3, 2))


def regularized_objective(pol1, pol2, p_found, beta=0.5):
    reach = [pol1[FIRST[h]] * [p_found, 1 - p_found, 1.0][h] for h in range(3)]
    uniform = [0.5, 0.5]
    value = -beta * kl_by_hand(pol1, uniform)
    for h in range(3):
        value += reach[h] * (pol2[h] @ TURN2_REWARD[h] - beta * kl_by_hand(pol2[h], uniform))
    return value


def test_two_turn_task_deterministic_search_dpo_is_optimal():
    soft1, soft2, _, _ = two_turn_search(1.0)
    fit1, fit2 = two_turn_dpo_fit(1.0)
    np.testing.assert_allclose(fit1, soft1, atol=1e-5)
    np.testing.assert_allclose(fit2[[0, 2]], soft2[[0, 2]], atol=1e-5)  # history 1 never occurs
    assert (soft1[0], soft2[0, 0], soft2[2, 0]) == pytest.approx((0.6604, 0.7685, 0.5498), abs=5e-5)


def test_two_turn_task_stochastic_search_numbers():
    soft1, soft2, v_start, v2 = two_turn_search(0.6)
    fit1, fit2 = two_turn_dpo_fit(0.6)
    assert (soft1[0], fit1[0]) == pytest.approx((0.5568, 0.5599), abs=5e-5)
    assert (soft2[0, 0], fit2[0, 0]) == pytest.approx((0.7685, 0.7093), abs=5e-5)
    assert (soft2[1, 0], fit2[1, 0]) == pytest.approx((0.3100, 0.1966), abs=5e-5)
    assert (soft2[2, 0], fit2[2, 0]) == pytest.approx((0.5498, 0.5495), abs=5e-5)
    j_soft, j_fit = regularized_objective(soft1, soft2, 0.6), regularized_objective(fit1, fit2, 0.6)
    assert j_soft == pytest.approx(v_start, abs=1e-12)  # the optimum attains V(h_0)
    assert (j_soft, j_fit) == pytest.approx((0.5128, 0.5076), abs=5e-5)
    q_search = 0.6 * v2[0] + 0.4 * v2[1]
    assert (q_search - v2[0], q_search - v2[1]) == pytest.approx((-0.2184, 0.3277), abs=5e-5)


def test_trajectory_log_ratio_of_the_optimum_is_reward_plus_luck():
    """The identity after eq-soft-bellman, trajectory by trajectory, for p = 0.6."""
    beta = 0.5
    soft1, soft2, v_start, v2 = two_turn_search(0.6)
    q_search = 0.6 * v2[0] + 0.4 * v2[1]
    for h, a in TRAJECTORIES:
        log_ratio = math.log(soft1[FIRST[h]] / 0.5) + math.log(soft2[h, a] / 0.5)
        luck = (q_search - v2[h]) if h < 2 else 0.0
        assert beta * log_ratio == pytest.approx(TURN2_REWARD[h][a] - v_start + luck, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# Check for understanding
# ---------------------------------------------------------------------------------------------


def test_check_for_understanding():
    pi, ref = np.array([0.8, 0.2]), np.array([0.5, 0.5])
    k = {n: estimator_values(n, pi, ref)[0] for n in ("k1", "k2", "k3")}
    assert (k["k1"], k["k2"], k["k3"]) == pytest.approx((0.4700, 0.1105, 0.0950), abs=5e-5)
    theta = np.log(pi)
    grads = [
        central_differences(lambda z, x=x: estimator_values("k3", softmax_rows(z), ref)[x], theta)
        for x in range(2)
    ]
    np.testing.assert_allclose(grads[0], [0.075, -0.075], atol=1e-8)
    np.testing.assert_allclose(pi[1] * grads[1], [0.24, -0.24], atol=1e-8)
    np.testing.assert_allclose(pi[0] * grads[0] + pi[1] * grads[1], pi - ref, atol=1e-8)


# ---------------------------------------------------------------------------------------------
# The trainer conventions of the "In practice" table, as read in each trainer's source
# ---------------------------------------------------------------------------------------------

# Verified with the search tool in the trainers' repositories (the commit read is given):
# - TRL trl/trainer/ppo_trainer.py, PPOTrainer.train (be8a087): logr = ref_logprobs - logprobs;
#   kl = -logr if args.kl_estimator == "k1" else (logr.exp() - 1) - logr; non_score_reward =
#   -args.kl_coef * kl on every token; the score is added at the last token; then GAE.
# - TRL trl/trainer/grpo_trainer.py, GRPOTrainer._compute_loss (d2b69d7): per_token_kl =
#   exp(ref - logp) - (ref - logp) - 1, per_token_loss += beta * per_token_kl; loss_type
#   "grpo" (mean per sequence), "bnpo" (mean over tokens), "dr_grpo" (/ (B * max length)).
# - verl verl/trainer/ppo/core_algos.py, kl_penalty (012be9d): "kl"/"k1", "abs", "mse"/"k2",
#   "low_var_kl"/"k3" (log-ratio clamped to [-20, 20], estimate to [-10, 10]), "full" raises
#   NotImplementedError; verl/trainer/ppo/ray_trainer.py, apply_kl_penalty (0040110): the reward
#   penalty uses data.batch["old_log_probs"]; verl/workers/actor/dp_actor.py, update_policy:
#   use_kl_loss adds kl_penalty(..., kl_loss_type) * kl_loss_coef to the loss;
#   verl/trainer/config/ppo_trainer.yaml (008db45): algorithm.use_kl_in_reward False,
#   kl_penalty "kl"; actor.use_kl_loss False, kl_loss_type "low_var_kl", kl_loss_coef 0.001.
# - OpenRLHF openrlhf/models/utils.py, compute_approx_kl (473f61b): k1, k2, k3, clamped to
#   [-10, 10]; compute_reward: -kl_coef * kl on every token plus r at the last one;
#   openrlhf/cli/train_ppo_ray.py (f5b3f08): --kl_estimator default "k1", choices k1, k2, k3;
#   --use_kl_loss; the warnings recommending k2/k3 for a loss and k1 otherwise;
#   openrlhf/trainer/ppo_utils/experience_maker.py (89308a0): the KL enters the reward only
#   when use_kl_loss is off.
IN_PRACTICE_TERMS = [
    "`PPOTrainer`",
    "`kl_estimator`",
    "`GRPOTrainer`",
    '`"grpo"`',
    '`"bnpo"`',
    "`algorithm.use_kl_in_reward`",
    "`kl_penalty`",
    "`actor.use_kl_loss`",
    "`kl_loss_type`",
    '`"low_var_kl"`',
    '`"mse"`/`"k2"`',
    '`"full"` raises `NotImplementedError`',
    "`old_log_probs`",
    "`compute_reward`",
    "`--use_kl_loss`",
    "`--kl_estimator` `k1` (default)",
    "$[-10, 10]$",
]


def test_the_in_practice_table_states_the_verified_conventions():
    text = CHAPTER.read_text(encoding="utf-8")
    section = text[text.index("## In practice") : text.index("## Key equations")]
    missing = [term for term in IN_PRACTICE_TERMS if term not in section]
    assert not missing, missing
