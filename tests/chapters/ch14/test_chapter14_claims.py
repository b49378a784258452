"""Claims made in chapter 14 (common category errors), recomputed independently.

Each test rebuilds one number, table or figure property that the chapter's text relies on, by
a route that shares no code with the library functions the chapter calls: values by linear
solves and closed forms (tests.oracles.linear_solve_values, occupancy_by_hand), episodes and
one-episode REINFORCE estimates by recursion and loops (episodes_by_hand, reinforce_by_hand),
exact gradients by central differences of the enumerated expected return, PPO's clipped
gradient written case by case, KL divergences and estimators with ``math.log``, group
advantages member by member, and the three-step solutions enumerated by nested loops.

Sections follow the chapter: 1. the two-prompt batch (eq-sample-baseline-value); 2. PPO steps
on one exact batch (eq-epoch-mismatch, fig-ppo-epochs-mismatch); 3. KL from behavior samples
(eq-behavior-kl, fig-behavior-kl); 4. the two-style task (eq-length-divided-objective,
fig-length-divided-training); 5. copied outcomes and step labels (eq-copied-outcome-steps);
6. the answer-key quiz (eq-privileged-critic-td, fig-privileged-critic); 7. standardized
advantages (eq-standardized-invariance); 8. bias against variance (eq-variance-bias,
fig-variance-not-bias); the In practice section's trainer facts.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from tests.oracles import (
    CE_BEHAVIOR,
    CE_CURRENT,
    CE_PASS_RATES,
    CE_REF,
    central_differences,
    episodes_by_hand,
    expected_total,
    kl_by_hand,
    linear_solve_values,
    occupancy_by_hand,
    quiz_task,
    reinforce_by_hand,
    softmax_rows,
    two_prompt_task,
)

CHAPTER = Path(__file__).resolve().parents[3] / "chapters" / "14_category_errors.md"


def q_values_by_hand(transition, reward, policy, gamma, terminal):
    """q(s, a) = sum_s' P (R + gamma v(s')) from the linear-solve values."""
    values, _ = linear_solve_values(transition, reward, policy, gamma, terminal)
    return np.einsum("sat,sat->sa", transition, reward + gamma * values[None, None, :]), values


def moments(estimates, probabilities):
    """Exact mean and total variance (trace of the covariance) of a discrete estimator."""
    flat = np.array([np.ravel(e) for e in estimates])
    mean = probabilities @ flat
    return mean, float(probabilities @ np.sum((flat - mean) ** 2, axis=1))


# --- 1. a sample baseline is not a value function ---------------------------------------------


def test_two_prompt_values_and_the_sign_table():
    rates = np.asarray(CE_PASS_RATES)
    v = rates.mean(axis=1)  # each style with probability 1/2: v(easy) 0.9, v(hard) 0.2
    j = v.mean()
    assert v == pytest.approx([0.9, 0.2]) and j == pytest.approx(0.55)
    advantage = rates - v[:, None]
    apparent = rates - j  # E[R - batch mean | h, a]
    np.testing.assert_allclose(advantage, [[0.05, -0.05], [0.10, -0.10]], atol=1e-12)
    np.testing.assert_allclose(apparent, [[0.40, 0.30], [-0.25, -0.45]], atol=1e-12)
    wrong = np.sign(apparent) != np.sign(advantage)
    assert wrong.sum() == 2 and wrong[0, 1] and wrong[1, 0]  # quick on easy, careful on hard
    # and the Bellman solve of the arrays agrees with the closed form
    transition, reward, terminal, _ = two_prompt_task()
    q, values = q_values_by_hand(transition, reward, np.full((4, 2), 0.5), 1.0, terminal)
    np.testing.assert_allclose(values[:2], v, atol=1e-12)
    np.testing.assert_allclose(q[:2], rates, atol=1e-12)


def test_explained_variance_and_gradient_variance_of_the_three_baselines():
    transition, reward, terminal, initial = two_prompt_task()
    half = np.full((4, 2), 0.5)
    listed = episodes_by_hand(transition, reward, half, initial, 1, terminal)
    assert len(listed) == 8
    probabilities = np.array([p for p, *_ in listed])
    returns = np.array([sum(r) for *_, r in listed])
    first = np.array([s[0] for _, s, _, _ in listed])
    values = np.array([0.9, 0.2, 0.0, 0.0])
    j = probabilities @ returns
    var_g = probabilities @ (returns - j) ** 2
    assert var_g == pytest.approx(0.2475, abs=5e-5)

    def explained(baseline):
        # eq-diag-explained-variance and notation.md: 1 - Var(G - b) / Var(G).
        residual = returns - baseline
        return 1.0 - probabilities @ (residual - probabilities @ residual) ** 2 / var_g

    def mean_squared_form(baseline):
        return 1.0 - probabilities @ (returns - baseline) ** 2 / var_g

    assert explained(np.full(8, j)) == pytest.approx(0.0, abs=1e-12)
    assert explained(values[first]) == pytest.approx(0.495, abs=5e-4)
    # Erratum: chapter 14 used 1 - E[(G - b)^2] / Var(G), which differs from the book's EV as
    # soon as a baseline is off by a constant; the two agree here only because E[G - b] = 0.
    for baseline in (np.full(8, j), values[first]):
        assert mean_squared_form(baseline) == pytest.approx(explained(baseline), abs=1e-12)
    assert explained(values[first] + 0.3) == pytest.approx(explained(values[first]), abs=1e-12)
    assert mean_squared_form(values[first] + 0.3) < explained(values[first]) - 0.3
    text = " ".join(CHAPTER.read_text(encoding="utf-8").split())
    assert "$\\mathrm{EV}(b) = 1 - \\operatorname{Var}(G - b) / \\operatorname{Var}(G)$" in text
    assert "\\mathrm{EV}(b) = 1 - \\mathbb{E}[(G - b)^2]" not in text
    assert "weights @ (residual - weights @ residual) ** 2 / return_variance" in text
    logits = np.zeros((4, 2))
    exact = central_differences(
        lambda theta: expected_total(
            transition, reward, softmax_rows(theta.reshape(4, 2)), initial, 1.0, terminal
        ),
        logits.ravel(),
    ).reshape(4, 2)
    variances = {}
    for name, baseline in [("none", None), ("mean", np.full(4, j)), ("value", values)]:
        estimates = [
            reinforce_by_hand(logits, s, a, r, 1.0, baseline=baseline) for _, s, a, r in listed
        ]
        mean, variances[name] = moments(estimates, probabilities)
        np.testing.assert_allclose(mean.reshape(4, 2), exact, atol=1e-8)  # all unbiased
    assert variances["none"] == pytest.approx(0.2734, abs=5e-5)
    assert variances["mean"] == pytest.approx(0.1222, abs=5e-5)
    assert variances["value"] == pytest.approx(0.0609, abs=5e-5)
    assert variances["value"] / variances["mean"] == pytest.approx(0.5, abs=0.01)  # "halves"


# --- 2. PPO after the first step is off-policy -------------------------------------------------


def patch_task():
    """Draft (0), revised (1), tested (2), pass (3), fail (4); actions submit (0), work (1)."""
    transition = np.zeros((5, 2, 5))
    reward = np.zeros((5, 2, 5))
    for state, rate in enumerate((0.3, 0.6, 0.9)):
        transition[state, 0, 3], transition[state, 0, 4] = rate, 1.0 - rate
        reward[state, 0, 3] = 1.0
    transition[0, 1, 1] = transition[1, 1, 2] = transition[2, 1, 4] = 1.0
    transition[3, :, 3] = transition[4, :, 4] = 1.0
    return transition, reward, np.array([False] * 3 + [True] * 2), np.eye(5)[0]


PATCH, PATCH_REWARD, PATCH_TERMINAL, PATCH_START = patch_task()


def patch_return(logits, gamma=1.0):
    return expected_total(
        PATCH, PATCH_REWARD, softmax_rows(logits), PATCH_START, gamma, PATCH_TERMINAL
    )


def clipped_derivative(ratio, advantage, eps=0.2):
    """d l_clip / d log rho, case by case: rho A inside the clip, 0 where a clip is active."""
    if advantage > 0 and ratio > 1 + eps:
        return 0.0
    if advantage < 0 and ratio < 1 - eps:
        return 0.0
    return ratio * advantage


def clipped_value(ratio, advantage, eps=0.2):
    return min(ratio * advantage, min(max(ratio, 1 - eps), 1 + eps) * advantage)


def ppo_run(num_steps=31, lr=0.5):
    """Full-batch steps on the exact clipped surrogate of the uniform policy's batch."""
    old = np.full((5, 2), 0.5)
    q, v = q_values_by_hand(PATCH, PATCH_REWARD, old, 1.0, PATCH_TERMINAL)
    adv_old = q - v[:, None]
    weight = occupancy_by_hand(PATCH, old, PATCH_START, 1.0, PATCH_TERMINAL)  # d_old pi_old
    d_old = weight.sum(axis=1)
    logits = np.zeros((5, 2))
    log = []
    for _ in range(num_steps):
        probs = softmax_rows(logits)
        g_ppo = np.zeros((5, 2))
        g_plain = np.zeros((5, 2))
        clipped_mass = surrogate = kl_episodes = 0.0
        for s in range(3):
            for a in range(2):
                rho = probs[s, a] / old[s, a]
                derivative = clipped_derivative(rho, adv_old[s, a])
                clipped_mass += weight[s, a] * (derivative == 0.0)
                surrogate += weight[s, a] * clipped_value(rho, adv_old[s, a])
                for b in range(2):
                    score = (1.0 if b == a else 0.0) - probs[s, b]
                    g_ppo[s, b] += weight[s, a] * derivative * score
                    g_plain[s, b] += weight[s, a] * rho * adv_old[s, a] * score
            kl_episodes += d_old[s] * kl_by_hand(old[s], probs[s])
        exact = central_differences(lambda t: patch_return(t.reshape(5, 2)), logits.ravel())
        exact = exact.reshape(5, 2)
        size = np.linalg.norm(exact)
        log.append(
            {
                "kl": kl_episodes,
                "clipped": clipped_mass / weight.sum(),
                "error": np.linalg.norm(g_ppo - exact) / size,
                "error unclipped": np.linalg.norm(g_plain - exact) / size,
                "length": np.linalg.norm(g_ppo) / size,
                "gain": patch_return(logits) - patch_return(np.zeros((5, 2))),
                "predicted": surrogate,  # the surrogate is 0 at theta_old
                "zero": not np.any(g_ppo),
            }
        )
        logits = logits + lr * g_ppo
    return log, logits


@pytest.fixture(scope="module")
def ppo_log():
    return ppo_run()


def test_ppo_table(ppo_log):
    log, _ = ppo_log
    assert patch_return(np.zeros((5, 2))) == pytest.approx(0.4125, abs=1e-12)
    table = {  # step: (KL, clipped mass, error, error unclipped, length, gain, predicted)
        0: (0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0),
        1: (0.0005, 0.0, 0.028, 0.028, 0.980, 0.0067, 0.0067),
        2: (0.0021, 0.0, 0.054, 0.054, 0.961, 0.0136, 0.0133),
        4: (0.0082, 0.0, 0.105, 0.105, 0.927, 0.0276, 0.0265),
        6: (0.0183, 0.0, 0.152, 0.152, 0.897, 0.0417, 0.0395),
        8: (0.0319, 0.714, 1.003, 0.197, 0.208, 0.0557, 0.0478),
        12: (0.0337, 0.714, 1.004, 0.193, 0.210, 0.0563, 0.0492),
        20: (0.0391, 0.714, 1.004, 0.194, 0.212, 0.0574, 0.0519),
        30: (0.0408, 1.000, 1.000, 0.197, 0.000, 0.0577, 0.0525),
    }
    keys = ("kl", "clipped", "error", "error unclipped", "length", "gain", "predicted")
    for step, row in table.items():
        for key, want in zip(keys, row, strict=True):
            assert log[step][key] == pytest.approx(want, abs=6e-4), (step, key)


def test_ppo_milestones(ppo_log):
    log, _ = ppo_log
    assert log[0]["error"] < 1e-8  # the only on-policy step
    assert next(k for k, e in enumerate(log) if e["error unclipped"] > 0.1) == 4
    assert next(k for k, e in enumerate(log) if e["clipped"] > 0) == 8
    assert next(k for k, e in enumerate(log) if e["clipped"] == 1.0) == 22
    # the clip engages on the draft and tested states: mass (1 + 0.25) / 1.75
    assert log[8]["clipped"] == pytest.approx(1.25 / 1.75, abs=1e-12)
    assert all(e["zero"] for e in log[22:])  # PPO's gradient is exactly zero ...
    assert all(e["error"] == pytest.approx(1.0) for e in log[22:])  # ... the policy gradient not
    assert patch_return(np.zeros((5, 2))) + log[30]["gain"] == pytest.approx(0.4702, abs=5e-5)
    assert all(e["predicted"] <= e["gain"] + 1e-12 for e in log)  # the surrogate is pessimistic
    kl = np.array([e["kl"] for e in log])
    assert np.all(np.diff(kl) >= -1e-12)  # the policy keeps moving away


def test_ppo_kl_is_the_kl_between_episode_distributions(ppo_log):
    """sum_s d_old(s) KL_s = KL(p_old(tau) || p_theta(tau)), by enumerating the episodes."""
    _, logits = ppo_log
    old = np.full((5, 2), 0.5)
    new = softmax_rows(logits)
    old_eps = episodes_by_hand(PATCH, PATCH_REWARD, old, PATCH_START, 3, PATCH_TERMINAL)
    new_eps = {
        (s, a): p
        for p, s, a, _ in episodes_by_hand(PATCH, PATCH_REWARD, new, PATCH_START, 3, PATCH_TERMINAL)
    }
    episode_kl = sum(p * math.log(p / new_eps[(s, a)]) for p, s, a, _ in old_eps)
    d_old = occupancy_by_hand(PATCH, old, PATCH_START, 1.0, PATCH_TERMINAL).sum(axis=1)
    per_state = sum(d_old[s] * kl_by_hand(old[s], new[s]) for s in range(3))
    assert episode_kl == pytest.approx(per_state, rel=1e-10)
    assert per_state == pytest.approx(0.0408, abs=5e-5)


# --- 3. a KL estimate from behavior samples ----------------------------------------------------


def k1_by_hand(pi, ref):
    return math.log(pi / ref)


def k3_by_hand(pi, ref):
    return ref / pi - 1.0 - math.log(ref / pi)


@pytest.mark.equation("eq-behavior-kl")
def test_behavior_kl_exact_numbers():
    pi, mu, ref = (list(map(float, x)) for x in (CE_CURRENT, CE_BEHAVIOR, CE_REF))
    target = kl_by_hand(pi, ref)
    assert target == pytest.approx(0.3759, abs=5e-5)
    assert kl_by_hand(mu, ref) == pytest.approx(0.0303, abs=5e-5)
    assert kl_by_hand(mu, pi) == pytest.approx(0.2116, abs=5e-5)
    naive_k1 = sum(m * k1_by_hand(p, r) for p, m, r in zip(pi, mu, ref, strict=True))
    naive_k3 = sum(m * k3_by_hand(p, r) for p, m, r in zip(pi, mu, ref, strict=True))
    weighted = [
        sum(m * (p / m) * k(p, r) for p, m, r in zip(pi, mu, ref, strict=True))
        for k in (k1_by_hand, k3_by_hand)
    ]
    assert naive_k1 == pytest.approx(-0.1813, abs=5e-5) and naive_k1 < 0  # "negative"
    assert naive_k1 == pytest.approx(kl_by_hand(mu, ref) - kl_by_hand(mu, pi), abs=1e-14)
    assert naive_k3 == pytest.approx(0.5882, abs=5e-5)
    assert naive_k3 > 1.5 * target  # "overstates the KL by more than half"
    assert weighted == pytest.approx([target, target], abs=1e-14)
    on_reference = sum(r * k1_by_hand(p, r) for p, r in zip(pi, ref, strict=True))
    assert on_reference == pytest.approx(-kl_by_hand(ref, pi), abs=1e-14)
    assert on_reference == pytest.approx(-0.4028, abs=5e-5)


def test_behavior_kl_simulation():
    """20,000 tokens drawn from mu with seed 0 (the same draws as the chapter's cell)."""
    pi, mu, ref = (np.asarray(x, float) for x in (CE_CURRENT, CE_BEHAVIOR, CE_REF))
    drawn = np.random.default_rng(0).choice(4, size=20_000, p=mu)
    ratio_ref = ref[drawn] / pi[drawn]
    samples = {
        "naive k1": np.log(pi[drawn] / ref[drawn]),
        "naive k3": ratio_ref - 1.0 - np.log(ratio_ref),
        "weighted k3": pi[drawn] / mu[drawn] * (ratio_ref - 1.0 - np.log(ratio_ref)),
    }
    limits = {"naive k1": -0.18133, "naive k3": 0.58816, "weighted k3": 0.37591}
    printed = {  # mean, standard error
        "naive k1": (-0.1730, 0.0064),
        "naive k3": (0.5750, 0.0049),
        "weighted k3": (0.3688, 0.0030),
    }
    for name, x in samples.items():
        error = x.std(ddof=1) / math.sqrt(len(x))
        assert x.mean() == pytest.approx(printed[name][0], abs=5e-5)
        assert error == pytest.approx(printed[name][1], abs=5e-5)
        assert abs(x.mean() - limits[name]) < 3 * error  # "within three standard errors"
    weights = pi[drawn] / mu[drawn]
    ess = weights.sum() ** 2 / (weights**2).sum()
    assert round(ess) == 14195 and 13_500 < ess < 14_500  # "about 14,000"


# --- 4. dividing by the length changes the objective -------------------------------------------

LENGTHS = (3, 12)
SUCCESS = (0.45, 0.80)


def style_path(divide, centered, num_steps=1500, lr=2.0):
    """Exact expected-gradient ascent on the style logits, written for two styles."""
    logits = [0.0, 0.0]
    path = []
    for _ in range(num_steps + 1):
        z = [math.exp(x - max(logits)) for x in logits]
        probs = [x / sum(z) for x in z]
        path.append(probs[1])
        j = sum(p * c for p, c in zip(probs, SUCCESS, strict=True))
        b = j if centered else 0.0
        w = [
            p * (c - b) * ((1.0 / n) if divide else 1.0)
            for p, c, n in zip(probs, SUCCESS, LENGTHS, strict=True)
        ]
        logits = [x + lr * (wk - p * sum(w)) for x, wk, p in zip(logits, w, probs, strict=True)]
    final = path[-1]
    return path, (1 - final) * SUCCESS[0] + final * SUCCESS[1]


def test_two_style_training_table():
    rows = {
        (False, False): ((0.985, 0.996, 1.000), 0.800),
        (True, False): ((0.077, 0.017, 0.002), 0.451),
        (True, True): ((0.937, 0.988, 0.999), 0.799),
    }
    for (divide, centered), (at, final_j) in rows.items():
        path, j = style_path(divide, centered)
        assert [path[50], path[200], path[1500]] == pytest.approx(list(at), abs=5e-4)
        assert j == pytest.approx(final_j, abs=5e-4)
    # summing with A = R follows the same expected update as summing with A = R - J
    assert style_path(False, True)[0] == pytest.approx(style_path(False, False)[0], abs=1e-12)


def test_length_divided_maximizer_and_figure():
    per_token = [c / n for c, n in zip(SUCCESS, LENGTHS, strict=True)]
    assert per_token == pytest.approx([0.15, 0.0667], abs=5e-5)
    assert max(range(2), key=lambda k: per_token[k]) == 0  # answer directly
    assert max(range(2), key=lambda k: SUCCESS[k]) == 1  # reason
    summed, divided, centered = (
        style_path(*args)[0] for args in ((False, False), (True, False), (True, True))
    )
    assert summed[-1] > 0.99 and divided[-1] < 0.01 and centered[-1] > 0.99
    assert all(c <= s + 1e-12 for c, s in zip(centered[1:401], summed[1:401], strict=True))


# --- 5. a copied outcome is not process supervision --------------------------------------------

STEP_RIGHT = (0.8, 0.7, 0.9)
PASS_BY_MISTAKES = (0.9, 0.35, 0.1, 0.02)


def solutions_by_loops():
    """Every (step labels, outcome) with its probability, by nested loops."""
    listed = []
    for labels in itertools.product((1, 0), repeat=3):
        p = 1.0
        for ok, right in zip(labels, STEP_RIGHT, strict=True):
            p *= right if ok else 1.0 - right
        passing = PASS_BY_MISTAKES[3 - sum(labels)]
        listed.append((labels, 1.0, p * passing))
        listed.append((labels, 0.0, p * (1.0 - passing)))
    return listed


def conditional_outcome(listed, prefix):
    """E[R | the first len(prefix) step labels equal prefix]."""
    num = sum(p * r for labels, r, p in listed if labels[: len(prefix)] == prefix)
    den = sum(p for labels, _, p in listed if labels[: len(prefix)] == prefix)
    return num / den


@pytest.mark.equation("eq-copied-outcome-steps")
def test_copied_outcome_against_step_labels():
    listed = solutions_by_loops()
    assert len(listed) == 16
    j = sum(p * r for _, r, p in listed)
    assert j == pytest.approx(0.6022, abs=5e-5)
    rewarded = {0: 0.255, 1: 0.278, 2: 0.235}
    punished = {0: 0.311, 1: 0.259, 2: 0.357}
    for step in range(3):
        wrong = [(r, p) for labels, r, p in listed if labels[step] == 0]
        right = [(r, p) for labels, r, p in listed if labels[step] == 1]
        got_rewarded = sum(p for r, p in wrong if r - j > 0) / sum(p for _, p in wrong)
        got_punished = sum(p for r, p in right if r - j < 0) / sum(p for _, p in right)
        assert got_rewarded == pytest.approx(rewarded[step], abs=5e-4)
        assert got_punished == pytest.approx(punished[step], abs=5e-4)
        # eq-copied-outcome-steps: P(R - J > 0 | step wrong) = P(R = 1 | step wrong)
        assert got_rewarded == pytest.approx(
            sum(p * r for r, p in wrong) / sum(p for _, p in wrong), abs=1e-15
        )
    assert all(0.2 < x < 0.3 for x in rewarded.values())  # "about a quarter"
    assert (
        0.25 < min(punished.values()) and max(punished.values()) > 1 / 3
    )  # "to more than a third"

    copied, labels_flat, advantage, weight = [], [], [], []
    for labels, r, p in listed:
        for step in range(3):
            before = conditional_outcome(listed, labels[:step])
            after = conditional_outcome(listed, labels[: step + 1])
            copied.append(r - j)
            labels_flat.append(labels[step])
            advantage.append(after - before)
            weight.append(p)
    copied, labels_flat, advantage, weight = map(np.array, (copied, labels_flat, advantage, weight))
    disagree = weight[np.sign(copied) != np.where(labels_flat == 1, 1, -1)].sum() / weight.sum()
    assert disagree == pytest.approx(0.303, abs=5e-4)

    def correlation(x, y):
        mx, my = weight @ x / weight.sum(), weight @ y / weight.sum()
        cov = weight @ ((x - mx) * (y - my))
        return cov / math.sqrt((weight @ (x - mx) ** 2) * (weight @ (y - my) ** 2))

    assert correlation(copied, labels_flat) == pytest.approx(0.346, abs=5e-4)
    assert correlation(advantage, labels_flat) == pytest.approx(0.951, abs=5e-4)


def test_the_lucky_solution_token_by_token():
    listed = solutions_by_loops()
    j = sum(p * r for _, r, p in listed)
    labels = (1, 0, 1)
    tokens_per_step = (3, 2, 4)
    copied = [1.0 - j] * sum(tokens_per_step)
    assert copied[0] == pytest.approx(0.3978, abs=5e-5)
    step_advantage = [
        conditional_outcome(listed, labels[: k + 1]) - conditional_outcome(listed, labels[:k])
        for k in range(3)
    ]
    assert step_advantage == pytest.approx([0.0868, -0.364, 0.025], abs=5e-4)
    per_token = [a for a, n in zip(step_advantage, tokens_per_step, strict=True) for _ in range(n)]
    assert per_token[3] < 0 < copied[3]  # the wrong step's tokens: credited anyway


# --- 6. a privileged critic -------------------------------------------------------------------


def quiz_values(p_check, check_cost=0.1):
    """Closed forms: true action values and the three critics at the question."""
    know, blind = 0.95, (0.8, 0.2)  # P(right) after a check; blind, by key
    q_check = know - check_cost
    q_skip = {key: blind[key] for key in (0, 1)}
    history_key = {key: p_check * q_check + (1 - p_check) * q_skip[key] for key in (0, 1)}
    agent = sum(history_key.values()) / 2
    answering = {key: p_check * know + (1 - p_check) * blind[key] for key in (0, 1)}
    td = {
        "agent's history": (q_check - agent, 0.5 - agent),  # averaged over the key
        "history + key": (
            np.mean([q_check - history_key[key] for key in (0, 1)]),
            np.mean([q_skip[key] - history_key[key] for key in (0, 1)]),
        ),
        "key + stage": (
            np.mean([-check_cost + answering[key] - history_key[key] for key in (0, 1)]),
            np.mean([answering[key] - history_key[key] for key in (0, 1)]),
        ),
    }
    return q_check, float(np.mean(list(q_skip.values()))), history_key, agent, td


def test_quiz_critics_table():
    q_check, q_skip, history_key, agent, td = quiz_values(0.3)
    assert (q_check, q_skip) == pytest.approx((0.85, 0.5))
    assert agent == pytest.approx(0.605) and history_key == pytest.approx({0: 0.815, 1: 0.395})
    assert td["agent's history"] == pytest.approx((0.245, -0.105))
    assert td["history + key"] == pytest.approx((0.245, -0.105))
    assert td["key + stage"] == pytest.approx((-0.070, 0.030))
    # per key, the privileged critic's TD errors differ but average to the agent's
    per_key_check = [q_check - history_key[key] for key in (0, 1)]
    assert per_key_check == pytest.approx([0.035, 0.455])
    # the arrays of the shared oracle give the same values by a linear solve
    transition, reward, terminal, _, policy = quiz_task()
    q, values = q_values_by_hand(transition, reward, policy, 1.0, terminal)
    assert values[:2] == pytest.approx([0.815, 0.395])
    assert q[:2, 0] == pytest.approx([0.85, 0.85]) and q[:2, 1] == pytest.approx([0.8, 0.2])


def check_training(kind, updates=300, lr=2.0):
    logit = math.log(0.3 / 0.7)
    path = []
    for _ in range(updates):
        p = 1.0 / (1.0 + math.exp(-logit))
        path.append(p)
        q_check, q_skip, _, _, td = quiz_values(p)
        gap = q_check - q_skip if kind == "Monte Carlo" else td[kind][0] - td[kind][1]
        logit += lr * p * (1 - p) * gap
    final = path[-1]
    deployed = final * (0.95 - 0.1) + (1 - final) * 0.5
    return path, deployed


def test_quiz_training_and_deployment():
    expected = {
        "agent's history": (0.995, 0.848),
        "history + key": (0.995, 0.848),
        "key + stage": (0.018, 0.506),
        "Monte Carlo": (0.995, 0.848),
    }
    for kind, (p_final, deployed_want) in expected.items():
        path, deployed = check_training(kind)
        assert path[-1] == pytest.approx(p_final, abs=5e-4), kind
        assert deployed == pytest.approx(deployed_want, abs=5e-4), kind
    agent_path, _ = check_training("agent's history")
    assert check_training("history + key")[0] == pytest.approx(agent_path, abs=1e-12)
    assert check_training("Monte Carlo")[0] == pytest.approx(agent_path, abs=1e-12)


# --- 7. a standardized advantage is a rank -----------------------------------------------------

GRADED = [
    [1.0, 1.0, 1.0, 1.0],
    [0.0, 0.0, 0.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
    [0.9, 0.9, 0.9, 0.8],
    [0.1, 0.1, 0.1, 0.2],
    [0.50, 0.50, 0.50, 0.51],
]


def standardized(group, eps=1e-6):
    mean = math.fsum(group) / len(group)
    if max(group) == min(group):
        return [0.0] * len(group)
    std = math.sqrt(math.fsum((r - mean) ** 2 for r in group) / len(group))
    return [(r - mean) / (std + eps) for r in group]


def test_standardized_advantages_of_the_batch():
    advantages = [standardized(g) for g in GRADED]
    assert advantages[0] == [0.0] * 4 and advantages[1] == [0.0] * 4
    for row in (2, 4):
        assert advantages[row] == pytest.approx([-0.5773, -0.5773, -0.5773, 1.732], abs=1e-4)
    assert advantages[3] == pytest.approx([0.5773, 0.5773, 0.5773, -1.732], abs=1e-4)
    assert advantages[5] == pytest.approx([-0.5772, -0.5772, -0.5772, 1.7317], abs=1e-4)
    rewards = [r for g in GRADED for r in g]
    flat = [a for row in advantages for a in row]
    group = [i // 4 for i in range(len(rewards))]
    pairs = [
        (i, k)
        for i in range(len(rewards))
        for k in range(len(rewards))
        if group[i] != group[k] and rewards[i] > rewards[k]
    ]
    assert len(pairs) == 224
    inverted = sum(flat[i] < flat[k] for i, k in pairs) / len(pairs)
    assert inverted == pytest.approx(0.308, abs=5e-4)
    mr, ma = sum(rewards) / len(rewards), sum(flat) / len(flat)
    cov = sum((r - mr) * (a - ma) for r, a in zip(rewards, flat, strict=True))
    var_r = sum((r - mr) ** 2 for r in rewards)
    var_a = sum((a - ma) ** 2 for a in flat)
    assert cov / math.sqrt(var_r * var_a) == pytest.approx(0.259, abs=5e-4)
    assert max(flat) == pytest.approx(1.732, abs=1e-3) and flat.index(max(flat)) == 11
    assert rewards[flat.index(min(flat))] == 0.8  # the 0.8 answer gets the smallest advantage
    assert flat[19] == pytest.approx(max(flat), abs=1e-4)  # the 0.2 answer: as large as any


@pytest.mark.equation("eq-standardized-invariance")
def test_affine_invariance_up_to_eps():
    change = max(
        abs(a - b)
        for g in GRADED
        for a, b in zip(standardized([1000.0 * r + 7.0 for r in g]), standardized(g), strict=True)
    )
    assert change == pytest.approx(4.0e-4, rel=0.01)
    worst = max(
        range(len(GRADED)),
        key=lambda i: max(
            abs(a - b)
            for a, b in zip(
                standardized([1000.0 * r + 7.0 for r in GRADED[i]]),
                standardized(GRADED[i]),
                strict=True,
            )
        ),
    )
    assert worst == 5  # the group whose rewards differ by 0.01


# --- 8. lower variance is not lower bias ------------------------------------------------------


def patch_estimates(logits, listed, estimator):
    """One-episode estimates by hand: G_0; G_t - v(s_t); G_t(0.6) - v_0.6(s_t), no gamma^t."""
    probs = softmax_rows(logits)
    if estimator == "plain REINFORCE":
        return [reinforce_by_hand(logits, s, a, r, 1.0, reward_to_go=False) for s, a, r in listed]
    gamma = 1.0 if estimator == "critic as baseline" else 0.6
    values, _ = linear_solve_values(PATCH, PATCH_REWARD, probs, gamma, PATCH_TERMINAL)
    return [
        reinforce_by_hand(logits, s, a, r, gamma, baseline=values, keep_discount=False)
        for s, a, r in listed
    ]


ESTIMATORS = ("plain REINFORCE", "critic as baseline", "discounted, gamma = 0.6")


def test_bias_and_variance_at_the_uniform_policy():
    logits = np.zeros((5, 2))
    listed = episodes_by_hand(
        PATCH, PATCH_REWARD, softmax_rows(logits), PATCH_START, 3, PATCH_TERMINAL
    )
    assert len(listed) == 7
    probabilities = np.array([p for p, *_ in listed])
    episodes_only = [(s, a, r) for _, s, a, r in listed]
    exact = central_differences(lambda t: patch_return(t.reshape(5, 2)), logits.ravel())
    assert np.linalg.norm(exact) == pytest.approx(0.1156, abs=5e-5)
    table = {  # |bias|, variance, MSE, cosine
        "plain REINFORCE": (0.0, 0.3804, 0.3804, 1.0),
        "critic as baseline": (0.0, 0.2011, 0.2011, 1.0),
        "discounted, gamma = 0.6": (0.0986, 0.1389, 0.1486, 0.589),
    }
    for name, (bias_want, var_want, mse_want, cos_want) in table.items():
        mean, variance = moments(patch_estimates(logits, episodes_only, name), probabilities)
        bias = np.linalg.norm(mean - exact)
        cosine = mean @ exact / (np.linalg.norm(mean) * np.linalg.norm(exact))
        assert bias == pytest.approx(bias_want, abs=5e-5), name
        assert variance == pytest.approx(var_want, abs=5e-5), name
        assert bias**2 + variance == pytest.approx(mse_want, abs=5e-5), name
        assert cosine == pytest.approx(cos_want, abs=5e-4), name
    # the discounted estimator: lowest variance and lowest MSE, yet biased
    mse = {name: row[2] for name, row in table.items()}
    assert min(mse, key=mse.get) == "discounted, gamma = 0.6"
    # its expected update at the draft state points toward submitting
    mean, _ = moments(patch_estimates(logits, episodes_only, ESTIMATORS[2]), probabilities)
    assert mean.reshape(5, 2)[0, 0] > 0 > exact.reshape(5, 2)[0, 0]


def test_discounted_rest_point_is_work_once_then_submit():
    """The gamma = 0.6 optimal policy works on the draft and submits the revised patch."""
    best, best_policy = -1.0, None
    for choice in itertools.product((0, 1), repeat=3):
        policy = np.full((5, 2), 0.5)
        for s, a in enumerate(choice):
            policy[s] = [1.0 - a, float(a)]
        value = expected_total(PATCH, PATCH_REWARD, policy, PATCH_START, 0.6, PATCH_TERMINAL)
        if value > best + 1e-12:
            best, best_policy = value, policy
    assert best_policy[:3, 1].tolist() == [1.0, 0.0, 0.0]  # work, submit, submit
    assert expected_total(
        PATCH, PATCH_REWARD, best_policy, PATCH_START, 1.0, PATCH_TERMINAL
    ) == pytest.approx(0.6)


def batch_mean_estimate(logits, batch, estimator):
    """The mean of the one-episode estimates of ``patch_estimates`` over a sampled batch, by a
    loop over its episodes and steps (the softmax and the values computed once per batch)."""
    probs = softmax_rows(logits)
    gamma = 0.6 if estimator == ESTIMATORS[2] else 1.0
    if estimator == "plain REINFORCE":
        baseline = np.zeros(5)
    else:
        baseline, _ = linear_solve_values(PATCH, PATCH_REWARD, probs, gamma, PATCH_TERMINAL)
    total = np.zeros((5, 2))
    for states, actions, rewards in zip(batch.states, batch.actions, batch.rewards, strict=True):
        steps = [t for t in range(len(actions)) if actions[t] >= 0]
        for t in steps:
            if estimator == "plain REINFORCE":
                weight = sum(rewards[k] for k in steps)
            else:
                to_go = sum(gamma ** (k - t) * rewards[k] for k in steps if k >= t)
                weight = to_go - baseline[states[t]]
            s, a = states[t], actions[t]
            total[s] += weight * (np.eye(2)[a] - probs[s])
    return total / len(batch.states)


@pytest.fixture(scope="module")
def training_curves():
    """The chapter's seeded runs, with the gradient estimates and J recomputed by hand.

    The episodes are drawn by the library's sampler with the chapter's seeds (the draws are
    data, not the claim); every estimate and every J is computed here by loops and linear
    solves, so matching curves mean the chapter's numbers are what the estimators give.
    """
    from rlfound import episodes

    curves = {}
    for name in ESTIMATORS:
        runs = []
        for seed in range(8):
            rng = np.random.default_rng(seed)
            logits = np.zeros((5, 2))
            curve = {0: patch_return(logits)}
            for step in range(1, 301):
                batch = episodes.sample_episodes(
                    PATCH, PATCH_REWARD, softmax_rows(logits), PATCH_START, 3, 8,
                    PATCH_TERMINAL, rng,
                )  # fmt: skip
                logits = logits + batch_mean_estimate(logits, batch, name)
                if step in (25, 50, 300):  # the steps the chapter quotes
                    curve[step] = patch_return(logits)
            runs.append(curve)
        curves[name] = {step: np.array([run[step] for run in runs]) for step in runs[0]}
    return curves


def test_the_batch_estimate_is_the_mean_of_the_one_episode_estimates():
    from rlfound import episodes

    logits = np.array([[0.3, -0.2], [0.1, 0.4], [-0.5, 0.2], [0.0, 0.0], [0.0, 0.0]])
    batch = episodes.sample_episodes(
        PATCH, PATCH_REWARD, softmax_rows(logits), PATCH_START, 3, 16, PATCH_TERMINAL, 3
    )
    listed = list(zip(batch.states, batch.actions, batch.rewards, strict=True))
    for name in ESTIMATORS:
        np.testing.assert_allclose(
            batch_mean_estimate(logits, batch, name),
            np.mean(patch_estimates(logits, listed, name), axis=0),
            atol=1e-14,
        )


@pytest.mark.slow
def test_training_curves(training_curves):
    table = {  # mean J after 25, 50, 300 steps; std at 50
        "plain REINFORCE": (0.708, 0.796, 0.894, 0.075),
        "critic as baseline": (0.709, 0.845, 0.894, 0.016),
        "discounted, gamma = 0.6": (0.492, 0.498, 0.585, 0.043),
    }
    for name, (at25, at50, at300, spread) in table.items():
        runs = training_curves[name]
        assert runs[0] == pytest.approx(0.4125)
        assert runs[25].mean() == pytest.approx(at25, abs=5e-4), name
        assert runs[50].mean() == pytest.approx(at50, abs=5e-4), name
        assert runs[300].mean() == pytest.approx(at300, abs=5e-4), name
        assert runs[50].std() == pytest.approx(spread, abs=5e-4), name
    plain, critic = training_curves["plain REINFORCE"], training_curves["critic as baseline"]
    assert plain[50].std() / critic[50].std() > 4.5  # "almost five times smaller"
    assert training_curves["discounted, gamma = 0.6"][300].max() < 0.62  # far below 0.89


# --- In practice: the trainer facts the chapter states ----------------------------------------


def test_in_practice_names_the_settings_that_were_read_in_the_trainers():
    """The settings quoted in the In practice section, and where each was read.

    - TRL ``trl/trainer/grpo_trainer.py`` (commit d2b69d7), ``_generate_and_score_completions``:
      ``generate_every = steps_per_generation * num_iterations``; old log-probabilities are
      stored only if ``gradient_accumulation_steps % generate_every != 0``, "the samples may
      come from an earlier version of the model"; ``_compute_loss`` otherwise uses
      ``per_token_logps.detach()``, so the ratio is 1. ``trl/trainer/grpo_config.py``:
      ``num_iterations`` defaults to 1, ``steps_per_generation`` to
      ``gradient_accumulation_steps``. In ``_compute_loss`` the KL term is
      ``exp(ref - logp) - (ref - logp) - 1`` (k3) from the current ``per_token_logps`` without
      importance weight, logged as ``kl``; ``loss_type`` "grpo" averages per sequence, "bnpo"
      over tokens, "dr_grpo" divides by batch size times ``max_completion_length``. The
      logged ``reward`` is the mean of the raw group rewards and ``reward_std`` their std.
    - verl ``verl/trainer/config/ppo_trainer.yaml`` (commit 008db45): ``train_batch_size: 1024``,
      ``ppo_mini_batch_size: 256``, ``ppo_epochs: 1``, ``loss_agg_mode: "token-mean"``,
      ``kl_loss_type: low_var_kl``, ``algorithm.gamma: 1.0``, ``algorithm.lam: 1.0``.
      ``verl/workers/actor/dp_actor.py``, ``update_policy``: ``batch.split(ppo_mini_batch_size)``
      and one optimizer step per mini-batch, ``ppo_epochs`` times; the KL loss is
      ``kl_penalty(logprob=log_prob, ref_logprob=ref_log_prob, ...)`` with the current
      log-probabilities, logged as ``actor/kl_loss``; ``actor/ppo_kl`` is logged per
      mini-batch. ``verl/workers/fsdp_workers.py`` multiplies ``ppo_mini_batch_size`` by
      ``rollout.n``. ``verl/trainer/ppo/metric_utils.py``, ``compute_data_metrics``: logs
      ``critic/score/mean``, ``critic/rewards/mean``, ``critic/advantages/mean`` and, only with
      a critic, ``critic/vf_explained_var``.
    """
    text = CHAPTER.read_text(encoding="utf-8")
    practice = text[text.index("(sec-ce-practice)=") : text.index("## Key equations")]
    for setting in (
        "num_iterations",
        "steps_per_generation",
        "gradient_accumulation_steps",
        "ppo_mini_batch_size",
        "ppo_epochs",
        "actor/ppo_kl",
        "actor/kl_loss",
        "low_var_kl",
        'loss_type="grpo"',
        '"token-mean"',
        "algorithm.gamma",
        "critic/vf_explained_var",
        "critic/rewards/mean",
        "reward_std",
    ):
        assert setting in practice, setting
    # 1024 prompts in mini-batches of 256, one epoch: four optimizer steps per batch
    assert "four steps per batch, three of them off-policy" in practice
    assert 1024 // 256 == 4
