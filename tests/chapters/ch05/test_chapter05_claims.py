"""Claims made in chapter 5 (off-policy data and PPO), recomputed independently.

Each test rebuilds one number, identity or figure property that the chapter's text relies on,
with the chapter's own parameters, by a route that shares no code with the library functions
the chapter calls: values and occupancies by linear solves and by propagating the state
distribution (tests.oracles), ratios as quotients of probabilities, the clipped surrogate and
its gradient written out token by token, and the chapter's simulations replayed with the same
seeds but with their own arithmetic.

Sections: the performance-difference lemma and the surrogate (fig-surrogate-error); sequence
ratios (fig-sequence-ratios), the engine-mismatch weights and the tokenizer toy; the clipped
surrogate (its table and fig-clip-cases); clipping is not a KL bound (fig-clip-not-kl); the
value loss and the entropy bonus; the check for understanding.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tests.oracles import SUBMIT_OR_WORK, linear_solve_values, softmax_rows

CHAPTER = Path(__file__).resolve().parents[3] / "chapters" / "05_off_policy_ppo.md"
TEXT_OF_CHAPTER = " ".join(CHAPTER.read_text(encoding="utf-8").split())

TASK = SUBMIT_OR_WORK
LIVE = TASK.live
LOGITS = np.log(TASK.policy)


def objective(policy):
    values, _ = linear_solve_values(TASK.transition, TASK.reward, policy, TASK.gamma, TASK.terminal)
    return float(TASK.initial @ values)


def occupancy_by_propagation(policy, num_steps=3000):
    """Σ_t Pr(s_t = s) with γ = 1, by pushing the start distribution through P_π."""
    _, p_pi = linear_solve_values(TASK.transition, TASK.reward, policy, TASK.gamma, TASK.terminal)
    distribution, total = TASK.initial.copy(), np.zeros(5)
    for _ in range(num_steps):
        total += np.where(LIVE, distribution, 0.0)
        distribution = np.where(LIVE, distribution, 0.0) @ p_pi
    return total


DIRECTION = np.where(LIVE[:, None], TASK.advantages, 0.0)
DIRECTION = DIRECTION / np.linalg.norm(DIRECTION)


def moved(step):
    return softmax_rows(LOGITS + step * DIRECTION)


def max_tv(other):
    return 0.5 * np.abs(other - TASK.policy).sum(axis=1)[LIVE].max()


# --- the performance-difference lemma ------------------------------------------------------------


def test_the_printed_return_and_occupancy():
    assert objective(TASK.policy) == pytest.approx(0.4137, abs=5e-5)
    np.testing.assert_allclose(
        occupancy_by_propagation(TASK.policy)[LIVE], [1.0753, 0.7527, 0.4182], atol=5e-5
    )


@pytest.mark.parametrize("step", [-8.0, -1.0, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0])
def test_the_lemma_holds_to_rounding_at_every_step(step):
    other = moved(step)
    gain = objective(other) - objective(TASK.policy)
    lemma = np.sum(occupancy_by_propagation(other)[:, None] * other * TASK.advantages)
    assert lemma == pytest.approx(gain, abs=1e-12)


def test_the_printed_table_of_gains_and_surrogate_errors():
    expected = {  # step: (max TV, true gain, surrogate gain)
        0.1: (0.0258, 0.010917, 0.010798),
        1.0: (0.2166, 0.102855, 0.092537),
        8.0: (0.4416, 0.343287, 0.219626),
    }
    for step, (tv, gain, surrogate) in expected.items():
        other = moved(step)
        assert max_tv(other) == pytest.approx(tv, abs=5e-5)
        assert objective(other) - objective(TASK.policy) == pytest.approx(gain, abs=5e-7)
        assert np.sum(TASK.occupancy[:, None] * other * TASK.advantages) == pytest.approx(
            surrogate, abs=5e-7
        )


def test_the_surrogate_is_pessimistic_on_the_line_and_its_error_grows():
    steps = np.linspace(-8.0, 8.0, 161)
    errors = []
    for step in steps:
        other = moved(step)
        gain = objective(other) - objective(TASK.policy)
        errors.append(np.sum(TASK.occupancy[:, None] * other * TASK.advantages) - gain)
    errors = np.array(errors)
    assert np.all(errors[steps != 0] < 0)  # below the true gain on both sides
    positive = steps > 0
    assert np.all(np.diff(np.abs(errors[positive])) > 0)


def test_the_improved_policy_visits_the_revised_and_tested_states_more():
    other = moved(2.0)
    more = occupancy_by_propagation(other) - occupancy_by_propagation(TASK.policy)
    assert more[1] > 0 and more[2] > 0
    assert other[0, 1] > TASK.policy[0, 1]  # works more on a draft
    assert other[2, 0] > TASK.policy[2, 0]  # submits a tested patch more


def test_the_error_is_second_order_in_the_distance():
    steps = np.linspace(-8.0, 8.0, 161)
    points = []
    for step in steps:
        other = moved(step)
        distance = max_tv(other)
        if 1e-3 < distance < 0.15:
            gain = objective(other) - objective(TASK.policy)
            error = abs(np.sum(TASK.occupancy[:, None] * other * TASK.advantages) - gain)
            points.append((math.log(distance), math.log(error)))
    x, y = np.array(points).T
    slope = np.sum((x - x.mean()) * (y - y.mean())) / np.sum((x - x.mean()) ** 2)
    assert slope == pytest.approx(2.03, abs=0.01)


# --- sequence ratios ---------------------------------------------------------------------------


def test_the_worked_sequence_ratios():
    new = np.array([[0.5, 0.2, 0.9, 0.3], [0.4, 0.4, 0.1, 0.7]])
    old = np.array([[0.25, 0.4, 0.1, 0.3], [0.5, 0.4, 0.2, 0.7]])
    assert (new[0, :3] / old[0, :3]).tolist() == pytest.approx([2.0, 0.5, 9.0])
    assert np.prod(new[0, :3] / old[0, :3]) == pytest.approx(9.0)
    assert np.prod(new[1] / old[1]) == pytest.approx(0.4)
    assert np.prod(new[1] / old[1]) ** 0.25 == pytest.approx(0.7953, abs=5e-5)


def replay_sequence_simulation():
    """The chapter's seeded simulation, with ratios formed from the probabilities' logs here."""
    rng = np.random.default_rng(0)
    behavior = softmax_rows(rng.normal(size=16))
    target = softmax_rows(np.log(behavior) + 0.15 * rng.normal(size=16))
    rows = {}
    for length in (1, 3, 10, 30, 100, 300, 1000):
        sampled = rng.choice(16, size=(2000, length), p=behavior)
        log_ratio = (np.log(target) - np.log(behavior))[sampled].sum(axis=1)
        full = np.exp(log_ratio)
        truncated = np.minimum(full, 2.0)
        geometric = np.exp(log_ratio / length)

        def ess(w):
            return w.sum() ** 2 / (w**2).sum() / w.size

        rows[length] = {
            "var": full.var(),
            "median": np.median(full),
            "full": ess(full),
            "truncated": ess(truncated),
            "geometric": ess(geometric),
        }
    return behavior, target, rows


BEHAVIOR, TARGET, ROWS = replay_sequence_simulation()
CHI_SQUARE = float(np.sum(TARGET**2 / BEHAVIOR) - 1.0)


def test_per_token_divergences():
    assert CHI_SQUARE == pytest.approx(0.0116, abs=5e-5)
    assert BEHAVIOR @ np.log(BEHAVIOR / TARGET) == pytest.approx(0.0056, abs=5e-5)


def test_exact_variance_at_a_thousand_tokens_and_the_short_sample_variance():
    exact = (1 + CHI_SQUARE) ** 1000 - 1
    assert exact == pytest.approx(1.01e5, rel=5e-3)
    assert ROWS[1000]["var"] < exact / 1000  # the batch grossly understates it
    assert ROWS[10]["var"] == pytest.approx((1 + CHI_SQUARE) ** 10 - 1, rel=0.1)


def test_short_responses_are_nearly_on_policy_and_long_ones_are_not():
    assert ROWS[10]["full"] > 0.85
    assert ROWS[1000]["full"] == pytest.approx(0.009, abs=0.002)  # "about one percent"
    assert ROWS[1000]["median"] < 0.01  # "close to zero"


def test_truncation_keeps_several_times_more_but_also_degrades():
    for length in (300, 1000):
        assert ROWS[length]["truncated"] > 3 * ROWS[length]["full"]
    values = [ROWS[n]["truncated"] for n in (1, 10, 100, 1000)]
    assert values == sorted(values, reverse=True)
    assert all(ROWS[n]["geometric"] > 0.98 for n in ROWS)


def test_engine_mismatch_weights():
    trainer = np.array([0.61, 0.02, 0.30, 0.95])
    engine = np.array([0.60, 0.005, 0.31, 0.95])
    ratio = trainer / engine
    assert ratio[1] == pytest.approx(4.0)
    assert np.all(np.abs(np.delete(ratio, 1) - 1) < 0.05)  # "within a few percent"
    assert min(ratio[1], 2.0) == 2.0


def test_the_tokenizer_toy():
    table = np.array(
        [
            [0.1, 0.8, 0.05, 0.05],
            [0.1, 0.1, 0.1, 0.7],
            [0.1, 0.1, 0.1, 0.7],
            [0.25, 0.25, 0.25, 0.25],
            [0.3, 0.1, 0.5, 0.1],
        ]
    )
    new_first = np.array([0.4, 0.1, 0.4, 0.1])
    a, b, ab, stop, begin = 0, 1, 2, 3, 4
    sampled = table[begin, a] * table[a, b] * table[b, stop]  # a, b, .
    canonical = table[begin, ab] * table[ab, stop]  # ab, . (greedy longest match)
    assert sampled + canonical == pytest.approx(0.518)
    assert sampled / (sampled + canonical) == pytest.approx(0.32, abs=0.005)  # "a third"
    assert math.log(sampled) == pytest.approx(-1.7838, abs=5e-5)
    assert math.log(canonical) == pytest.approx(-1.0498, abs=5e-5)
    assert new_first[a] / table[begin, a] > 1  # the sampled response became likelier ...
    assert new_first[ab] / table[begin, ab] == pytest.approx(0.8)  # ... the re-tokenized rarer


# --- the clipped surrogate -------------------------------------------------------------------


def surrogate(rho, a, low=0.2, high=0.2, dual=None):
    value = min(rho * a, min(max(rho, 1 - low), 1 + high) * a)
    return max(value, dual * a) if dual is not None and a < 0 else value


def derivative(rho, a, low=0.2, high=0.2, dual=None, h=1e-7):
    """Central difference in log ρ (the table's points are away from the kinks)."""
    up, down = rho * math.exp(h), rho * math.exp(-h)
    return (surrogate(up, a, low, high, dual) - surrogate(down, a, low, high, dual)) / (2 * h)


def test_the_four_case_table():
    ratio = [0.5, 0.9, 1.1, 1.5, 0.5, 0.9, 1.1, 1.5, 4.0]
    advantage = [1, 1, 1, 1, -1, -1, -1, -1, -1]
    objective_column = [0.5, 0.9, 1.1, 1.2, -0.8, -0.9, -1.1, -1.5, -3.0]
    gradient_column = [0.5, 0.9, 1.1, 0.0, 0.0, -0.9, -1.1, -1.5, 0.0]
    for rho, a, value, slope in zip(
        ratio, advantage, objective_column, gradient_column, strict=True
    ):
        assert surrogate(rho, a, dual=3.0) == pytest.approx(value)
        assert derivative(rho, a, dual=3.0) == pytest.approx(slope, abs=1e-6)


def test_the_figure_of_the_four_cases():
    # A = +1: flat at 1.2 beyond 1.2, at 1.28 with clip-higher; A = -1: flat at -0.8 below 0.8,
    # and at -3 beyond 3 with the dual clip.
    assert surrogate(3.0, 1.0) == pytest.approx(1.2)
    assert surrogate(3.0, 1.0, high=0.28) == pytest.approx(1.28)
    assert surrogate(0.1, -1.0) == pytest.approx(-0.8)
    assert surrogate(4.0, -1.0) == pytest.approx(-4.0)
    assert surrogate(4.0, -1.0, dual=3.0) == pytest.approx(-3.0)


def test_the_dual_clip_zero_gradient_band_is_drawn():
    # Erratum: the shading was computed without the dual clip while the alt text said the
    # dual-clip region was shaded. With A = -1 the plain clip passes the gradient at every
    # ratio above 0.8; the dual clip stops it above c_dual = 3.
    for rho in (1.5, 2.9, 3.1, 3.9):
        assert derivative(rho, -1.0) == pytest.approx(-rho, abs=1e-6)
    assert derivative(2.9, -1.0, dual=3.0) == pytest.approx(-2.9, abs=1e-6)
    assert derivative(3.1, -1.0, dual=3.0) == 0.0 and derivative(3.9, -1.0, dual=3.0) == 0.0
    assert "ppo.clipped_surrogate_gradient(grid, advantages_grid, dual_clip=3.0)" in TEXT_OF_CHAPTER
    assert "a hatched band above ratio 3 where the dual clip also makes the gradient zero" in (
        TEXT_OF_CHAPTER
    )
    assert "hatched (right): ratios above c_dual" in TEXT_OF_CHAPTER


def truncated_bias(target, behavior, rewards, cap):
    """(E_mu[min(rho, c) R] - E_pi[R], -E_mu[(rho - c)_+ R]) on a finite response set."""
    rho = [p / q for p, q in zip(target, behavior, strict=True)]
    estimate = math.fsum(
        q * min(r, cap) * x for q, r, x in zip(behavior, rho, rewards, strict=True)
    )
    exact = math.fsum(p * x for p, x in zip(target, rewards, strict=True))
    formula = -math.fsum(
        q * max(r - cap, 0.0) * x for q, r, x in zip(behavior, rho, rewards, strict=True)
    )
    return estimate - exact, formula


def test_truncation_biases_downward_only_for_non_negative_rewards():
    # Erratum: the text said truncation biases the estimate downward, which holds only when the
    # rewards of the truncated responses are non-negative.
    target, behavior, cap = [0.6, 0.3, 0.1], [0.1, 0.3, 0.6], 2.0  # rho = 6, 1, 1/6
    for rewards, sign in (([1.0, 0.0, 1.0], -1), ([0.5, 2.0, 1.0], -1), ([-1.0, 0.0, 1.0], 1),
                          ([-0.5, 2.0, -3.0], 1)):  # fmt: skip
        bias, formula = truncated_bias(target, behavior, rewards, cap)
        assert bias == pytest.approx(formula, abs=1e-15)
        assert math.copysign(1.0, bias) == sign and abs(bias) > 0.1
    assert "With non-negative rewards (a verifier's 0 or 1) the bias is downward" in TEXT_OF_CHAPTER
    assert "(\\rho - c)_+ R(x)" in TEXT_OF_CHAPTER
    assert "biases the estimate downward wherever" not in TEXT_OF_CHAPTER


def test_a_small_policy_lag_keeps_the_sequence_ratio_usable():
    # Coverage (source text, section 9): a small policy lag is a remedy, through chi^2.
    for chi2 in (1e-4, 1e-3, 0.01, 0.05):
        for length in (10, 100, 1000):
            variance = (1 + chi2) ** length - 1  # eq-sequence-ratio-variance
            assert length * chi2 <= variance <= math.expm1(length * chi2)
            if length * chi2 <= 0.1:
                assert variance == pytest.approx(length * chi2, rel=0.06)
    assert "A small *policy lag*, a sampler only a step or two" in TEXT_OF_CHAPTER
    assert "({eq}`eq-diag-policy-lag`)" in TEXT_OF_CHAPTER


def test_stored_old_logprobs_need_the_sampling_mask_and_the_vocabulary():
    # With the sampler's mask (or its smaller vocabulary), the trainer's unmasked recomputation
    # gives ratio pi / pi_c = the allowed mass at theta = theta_old, not 1.
    logits = np.array([1.0, 0.2, -0.5, 2.0])
    allowed = np.array([True, True, False, False])  # e.g. a schema, or ids the engine never emits
    full = np.exp(logits) / np.exp(logits).sum()
    masked = np.where(allowed, np.exp(logits), 0.0) / np.exp(logits[allowed]).sum()
    for token in np.flatnonzero(allowed):
        assert full[token] / masked[token] == pytest.approx(full[allowed].sum())
    assert full[allowed].sum() < 0.5
    for phrase in ("weights, *sampling mask* and *vocabulary* that generation used",
                   "each ratio is the probability mass the mask allowed",
                   "<sec-constrained>`)", "<sec-temperature>`)"):  # fmt: skip
        assert phrase in TEXT_OF_CHAPTER


def test_the_logging_advice_names_entropy_and_gradient_norms():
    # Coverage (source text, section 10): log entropy and gradient norms too.
    start = TEXT_OF_CHAPTER.index("Three lessons follow.")
    lessons = TEXT_OF_CHAPTER[start : TEXT_OF_CHAPTER.index("(sec-value-entropy)=", start)]
    assert "the entropy of the policy" in lessons
    assert "the gradient norm before and after clipping" in lessons


def test_clip_higher_rare_token_sentence():
    assert (1 + 0.2) * 0.01 == pytest.approx(0.012)
    assert (1 + 0.2) * 0.9 > 1.0  # "limited only by 1"


def test_the_loss_at_the_old_policy():
    advantages = np.array([[1.0, 1.0, 1.0], [-0.5, -0.5, -0.5]])
    mask = np.array([[1, 1, 1], [1, 1, 0]], dtype=bool)
    assert -advantages[mask].mean() == pytest.approx(-0.4)
    np.testing.assert_allclose(-advantages[mask] / mask.sum(), [-0.2, -0.2, -0.2, 0.1, 0.1])


# --- clipping is not a KL bound ----------------------------------------------------------------


def replay_ppo_epochs():
    """The chapter's 30 epochs, with the surrogate's gradient written out per token."""
    rng = np.random.default_rng(5)
    contexts_n, features_n, vocab, batch = 64, 6, 8, 256
    features = rng.normal(size=(contexts_n, features_n))
    weights = rng.normal(scale=0.3, size=(features_n, vocab))
    rewards = rng.normal(size=(contexts_n, vocab))
    probs_old = softmax_rows(features @ weights)
    contexts = rng.integers(contexts_n, size=batch)
    tokens = np.array([rng.choice(vocab, p=probs_old[c]) for c in contexts])
    raw = rewards[contexts, tokens] - (probs_old * rewards).sum(axis=1)[contexts]
    adv = (raw - raw.mean()) / raw.std()
    old = probs_old[contexts, tokens]

    def record(w):
        probs = softmax_rows(features @ w)
        ratio = probs[contexts, tokens] / old
        clipped = ((adv > 0) & (ratio > 1.2)) | ((adv < 0) & (ratio < 0.8))
        return {
            "clip+": clipped[adv > 0].mean(),
            "clip-": clipped[adv < 0].mean(),
            "kl": np.mean(np.sum(probs_old * np.log(probs_old / probs), axis=1)),
            "ratio": ratio,
        }

    history = [record(weights)]
    for _ in range(30):
        for part in np.array_split(rng.permutation(batch), 4):
            probs = softmax_rows(features @ weights)
            ratio = probs[contexts[part], tokens[part]] / old[part]
            a = adv[part]
            inside = ~(((a > 0) & (ratio > 1.2)) | ((a < 0) & (ratio < 0.8)))
            d_logprob = -np.where(inside, ratio * a, 0.0) / len(part)  # d loss / d log pi
            score = np.eye(vocab)[tokens[part]] - probs[contexts[part]]
            weights = weights - 0.3 * features[contexts[part]].T @ (d_logprob[:, None] * score)
        history.append(record(weights))
    return adv, history


ADV, HISTORY = replay_ppo_epochs()


def test_the_printed_epochs():
    assert HISTORY[1]["clip+"] == pytest.approx(0.032, abs=5e-4)
    assert HISTORY[30]["kl"] == pytest.approx(0.0759, abs=5e-5)
    assert HISTORY[30]["ratio"].max() == pytest.approx(3.082, abs=5e-4)
    assert HISTORY[30]["ratio"].min() == pytest.approx(0.267, abs=5e-4)


def test_clip_fractions_level_off_while_the_kl_keeps_growing():
    kl = np.array([h["kl"] for h in HISTORY])
    assert np.all(np.diff(kl) > 0)
    second_half = range(15, 31)
    plus = np.mean([HISTORY[e]["clip+"] for e in second_half])
    minus = np.mean([HISTORY[e]["clip-"] for e in second_half])
    assert plus == pytest.approx(0.43, abs=0.005) and minus == pytest.approx(0.40, abs=0.005)
    early = np.polyfit(np.arange(1, 6), kl[1:6], 1)[0]
    late = np.polyfit(np.arange(15, 31), kl[15:31], 1)[0]
    assert 0.4 < late / early < 0.65  # "about half its initial rate"
    assert late > 0


def test_the_extreme_ratios_and_who_owns_them():
    ratio = HISTORY[30]["ratio"]
    assert ADV[np.argmax(ratio)] > 0  # the largest: a positive advantage far past its clip
    assert ratio.max() > 1.2
    assert ADV[np.argmin(ratio)] > 0  # the smallest: a good token made rarer (never clipped)
    assert ratio[ADV < 0].max() > 1.2  # bad tokens made likelier (never clipped)
    spread = [h["ratio"].max() / h["ratio"].min() for h in HISTORY]
    assert spread[5] < spread[10] < spread[20] < spread[30]  # "the ratios keep spreading"


# --- the value loss and the entropy bonus ----------------------------------------------------


def test_the_value_loss_example():
    values, old, target = (
        np.array([0.9, 0.3, -0.2]),
        np.array([0.5, 0.4, 0.0]),
        np.array([1.2, 0.0, 0.6]),
    )
    plain = 0.5 * np.mean((values - target) ** 2)
    moved_values = old + np.clip(values - old, -0.2, 0.2)
    clipped = 0.5 * np.mean(np.maximum((values - target) ** 2, (moved_values - target) ** 2))
    assert plain == pytest.approx(0.1367, abs=5e-5)
    assert clipped == pytest.approx(0.1633, abs=5e-5)
    assert values[0] - old[0] == pytest.approx(0.4) and moved_values[0] == pytest.approx(0.7)


def entropy(logits):
    p = softmax_rows(logits)
    return float(-np.sum(p * np.log(p)))


def test_the_entropy_bonus_and_the_sign_error():
    start = np.log([0.6, 0.25, 0.1, 0.05])
    results = {}
    for sign in (-1.0, 1.0):
        theta = start.copy()
        for _ in range(20):
            # Central differences of the entropy, independent of the closed-form gradient.
            grad = np.array(
                [(entropy(theta + h) - entropy(theta - h)) / 2e-6 for h in 1e-6 * np.eye(4)]
            )
            theta = theta - 5.0 * sign * 0.05 * grad
        results[sign] = entropy(theta)
    assert entropy(start) == pytest.approx(1.0331, abs=5e-5)
    assert results[-1.0] == pytest.approx(1.3145, abs=5e-4)
    assert results[1.0] == pytest.approx(0.3078, abs=5e-4)
    assert -0.12 + 0.5 * 0.30 - 0.01 * 1.05 == pytest.approx(0.0195)


def test_the_check_for_understanding():
    assert surrogate(1.5, -2.0) == pytest.approx(-3.0)
    assert derivative(1.5, -2.0) == pytest.approx(-3.0, rel=1e-6)
    assert surrogate(1.5, -2.0, dual=3.0) == pytest.approx(-3.0)
    assert surrogate(1.5, -2.0, dual=1.4) == pytest.approx(-2.8)
    assert derivative(1.5, -2.0, dual=1.4) == pytest.approx(0.0, abs=1e-9)
