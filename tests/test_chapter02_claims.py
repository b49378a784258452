"""Claims made in chapter 2 that are not already facts about single library functions.

Each test recomputes a number or a shape the chapter's text relies on, with the chapter's own
parameters and seeds, from an independent implementation (a bigram model and a tiger problem
written out here with plain NumPy), and where useful also through the library:

- the bigram model and the first-letter parser: Pr(A), Pr(B), the number of texts per
  action, and that the most probable texts say A although B is the more probable action;
- credit to formatting: the exact gradient of J vanishes on the rows that only write after
  the action and is negative for a leading space, while one-sample REINFORCE updates those
  rows; the action-level score has the same mean and about 8.5 times less variance;
- figure fig-format-drift: sampled REINFORCE learns the action with either baseline, the
  format after the action drifts widely without a baseline and little with leave-one-out,
  and exact gradient ascent never moves it;
- teacher forcing versus policy gradient: the gradients at the initial table point in
  opposite directions (cosine -0.475), SFT converges to the counting solution with
  Pr(A) = 0.294 and PG to Pr(A) near 1 with a much larger NLL (figure fig-sft-vs-pg);
- the tiger: the filter's beliefs, the value of a summary that keeps only the last
  observation, and the gap between a privileged policy and the best observation-based one
  (figure fig-tiger-information);
- the check for understanding: with a last-letter parser no row has zero gradient.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from rlfound import mdp, tokens

# ---------------------------------------------------------------------------------------------
# The chapter's bigram model, written out independently
# ---------------------------------------------------------------------------------------------

VOCAB = ["A", "B", " ", "."]
V, LENGTH, START = 4, 3, 4
SPACE, AFTER_A = 2, 0
TABLE = np.array(
    [
        [-1.5, -1.5, 0.0, 1.5],
        [-1.5, -1.5, 0.5, 0.5],
        [-0.5, 1.0, 0.0, -0.5],
        [-0.5, 0.0, 0.5, 0.5],
        [1.0, 0.6, 0.6, -0.5],
    ]
)
TEXTS = np.array(list(itertools.product(range(V), repeat=LENGTH)))
PREVIOUS = np.concatenate([np.full((len(TEXTS), 1), START), TEXTS[:, :-1]], axis=1)


def softmax_rows(table):
    z = np.exp(table - table.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def first_letter(text):
    for token in text:
        if token in (0, 1):
            return int(token)
    return -1


def last_letter(text):
    for token in reversed(text):
        if token in (0, 1):
            return int(token)
    return -1


PARSED = np.array([first_letter(x) for x in TEXTS])
REWARDS = (PARSED == 0).astype(float)


def text_probs(table, texts=TEXTS):
    previous = np.concatenate([np.full((len(texts), 1), START), texts[:, :-1]], axis=1)
    return np.prod(softmax_rows(table)[previous, texts], axis=1)


def text_scores(table, texts=TEXTS):
    """grad_table log pi(x) for each text, by the bigram score formula, one loop per token."""
    previous = np.concatenate([np.full((len(texts), 1), START), texts[:, :-1]], axis=1)
    probs = softmax_rows(table)
    scores = np.zeros((len(texts), *table.shape))
    for i, (row_ids, text) in enumerate(zip(previous, texts, strict=True)):
        for r, token in zip(row_ids, text, strict=True):
            scores[i, r] -= probs[r]
            scores[i, r, token] += 1.0
    return scores


def objective(table, rewards=REWARDS):
    return float(text_probs(table) @ rewards)


def finite_difference(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        grad[index] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


# ---------------------------------------------------------------------------------------------
# The parser marginal
# ---------------------------------------------------------------------------------------------


def test_action_probabilities_of_the_chapter_model():
    probs = text_probs(TABLE)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    pr_a, pr_b, none = probs[PARSED == 0].sum(), probs[PARSED == 1].sum(), probs[PARSED == -1].sum()
    assert (pr_a, pr_b, none) == pytest.approx((0.4507, 0.4812, 0.0681), abs=5e-5)
    assert [np.sum(PARSED == a) for a in (0, 1, -1)] == [28, 28, 8]
    # The library's enumeration and marginal agree with the plain computation.
    sequences = tokens.enumerate_sequences(V, LENGTH)
    np.testing.assert_array_equal(sequences, TEXTS)
    logprobs = tokens.sequence_logprob(
        tokens.token_logprobs(tokens.bigram_logits(TABLE, sequences), sequences)
    )
    np.testing.assert_allclose(
        tokens.parser_marginal(logprobs, PARSED, 2), [pr_a, pr_b], rtol=1e-12
    )


def test_the_most_probable_texts_say_a_but_b_is_the_more_probable_action():
    probs = text_probs(TABLE)
    top_two = np.argsort(-probs)[:2]
    assert {"".join(VOCAB[t] for t in TEXTS[i]) for i in top_two} == {"A..", "A. "}
    assert all(PARSED[i] == 0 for i in top_two)
    assert probs[PARSED == 1].sum() > probs[PARSED == 0].sum()


# ---------------------------------------------------------------------------------------------
# Credit to formatting
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exact_gradient():
    return finite_difference(objective, TABLE)


def test_score_formula_matches_finite_differences_of_log_pi():
    for i in (0, 17, 63):
        text = TEXTS[i : i + 1]
        numeric = finite_difference(lambda t, x=text: float(np.log(text_probs(t, x)[0])), TABLE)
        np.testing.assert_allclose(text_scores(TABLE, text)[0], numeric, atol=1e-8)


def test_exact_gradient_vanishes_on_rows_used_only_after_the_action(exact_gradient):
    assert np.abs(exact_gradient[:2]).max() < 1e-9
    assert np.abs(exact_gradient[2:]).max() > 0.1
    # the enumeration formula sum_x pi(x) R(x) grad log pi(x) agrees
    formula = np.einsum("n,nij->ij", text_probs(TABLE) * REWARDS, text_scores(TABLE))
    np.testing.assert_allclose(formula, exact_gradient, atol=1e-8)


def test_a_leading_space_has_a_negative_gradient(exact_gradient):
    assert exact_gradient[START, SPACE] == pytest.approx(-0.0752, abs=5e-5)


def test_one_sample_update_of_a_dot_space_moves_three_rows():
    sample = np.array([[0, 3, 2]])  # "A. "
    update = text_scores(TABLE, sample)[0]  # reward 1
    moved = {r for r in range(V + 1) if np.abs(update[r]).max() > 0}
    assert moved == {AFTER_A, 3, START}
    assert np.abs(update[AFTER_A]).max() == pytest.approx(0.2440, abs=5e-5)


def test_one_sample_estimates_are_unbiased_but_noisy_after_the_action(exact_gradient):
    probs = text_probs(TABLE)
    estimates = REWARDS[:, None, None] * text_scores(TABLE)
    mean = np.einsum("n,nij->ij", probs, estimates)
    np.testing.assert_allclose(mean, exact_gradient, atol=1e-8)
    std = np.sqrt(np.einsum("n,nij->ij", probs, (estimates - mean) ** 2))
    assert std[:2].min() > 0.02


def test_action_level_score_has_the_same_mean_and_less_variance(exact_gradient):
    probs = text_probs(TABLE)
    scores = text_scores(TABLE)
    text_level = REWARDS[:, None, None] * scores
    pr_a = probs[PARSED == 0].sum()
    grad_log_pr_a = finite_difference(
        lambda t: float(np.log(text_probs(t)[PARSED == 0].sum())), TABLE
    )
    np.testing.assert_allclose(
        np.einsum("n,nij->ij", probs * (PARSED == 0) / pr_a, scores), grad_log_pr_a, atol=1e-8
    )
    action_level = REWARDS[:, None, None] * grad_log_pr_a[None]
    variances = []
    for estimates in (text_level, action_level):
        mean = np.einsum("n,nij->ij", probs, estimates)
        np.testing.assert_allclose(mean, exact_gradient, atol=1e-7)
        variances.append(np.einsum("n,nij->", probs, (estimates - mean) ** 2))
    assert variances[0] == pytest.approx(0.7068, abs=5e-4)
    assert variances[1] == pytest.approx(0.0833, abs=5e-4)
    assert variances[0] / variances[1] == pytest.approx(8.5, abs=0.05)
    assert np.abs(action_level[:, :2]).max() < 1e-9


def test_with_a_last_letter_parser_no_row_has_zero_gradient():
    rewards = np.array([last_letter(x) == 0 for x in TEXTS], dtype=float)
    gradient = finite_difference(lambda t: objective(t, rewards), TABLE)
    assert np.abs(gradient).max(axis=1).min() > 1e-3


# ---------------------------------------------------------------------------------------------
# Figure fig-format-drift
# ---------------------------------------------------------------------------------------------


def train_on_samples(seed, baseline, steps=400, batch=8, lr=0.5):
    rng = np.random.default_rng(seed)
    theta = TABLE.copy()
    for _ in range(steps):
        p = text_probs(theta)
        drawn = rng.choice(len(TEXTS), size=batch, p=p / p.sum())
        r = REWARDS[drawn]
        b = (r.sum() - r) / (batch - 1) if baseline == "leave_one_out" else 0.0
        theta = theta + lr * np.einsum("n,nij->ij", r - b, text_scores(theta, TEXTS[drawn])) / batch
    return objective(theta), softmax_rows(theta)[AFTER_A, SPACE], theta


@pytest.fixture(scope="module")
def drift_runs():
    return {
        baseline: [train_on_samples(seed, baseline) for seed in range(20)]
        for baseline in ("none", "leave_one_out")
    }


def test_every_sampled_run_learns_the_action(drift_runs):
    for runs in drift_runs.values():
        assert min(run[0] for run in runs) > 0.99


def test_the_format_after_the_action_drifts_without_a_baseline(drift_runs):
    start = softmax_rows(TABLE)[AFTER_A, SPACE]
    assert start == pytest.approx(0.169, abs=5e-4)
    none = np.array([run[1] for run in drift_runs["none"]])
    loo = np.array([run[1] for run in drift_runs["leave_one_out"]])
    assert none.min() < 0.03 and none.max() > 0.5  # the chapter prints 0.005 and 0.688
    assert none.std() > 0.12
    assert 0.08 < loo.min() and loo.max() < 0.3  # the chapter prints 0.125 and 0.227
    assert loo.std() < 0.06


def test_exact_gradient_ascent_never_moves_the_rows_after_a_letter():
    theta = TABLE.copy()
    for _ in range(400):
        theta = theta + 0.5 * np.einsum(
            "n,nij->ij", text_probs(theta) * REWARDS, text_scores(theta)
        )
    assert objective(theta) == pytest.approx(0.996, abs=1e-3)
    np.testing.assert_allclose(theta[:2], TABLE[:2], atol=1e-12)


# ---------------------------------------------------------------------------------------------
# Teacher forcing versus policy gradient, figure fig-sft-vs-pg
# ---------------------------------------------------------------------------------------------

DATA = ["B. ", "B. ", "B. ", "B..", "B  ", " B.", " B.", "A. ", "A..", " A."]
DATA_IDS = np.array([[VOCAB.index(c) for c in line] for line in DATA])


def data_nll(theta):
    return float(-np.log(text_probs(theta, DATA_IDS)).mean())


def test_imitation_and_reward_gradients_point_apart(exact_gradient):
    imitation = finite_difference(lambda t: -data_nll(t), TABLE)
    np.testing.assert_allclose(imitation, text_scores(TABLE, DATA_IDS).mean(axis=0), atol=1e-8)
    cosine = np.sum(imitation * exact_gradient) / (
        np.linalg.norm(imitation) * np.linalg.norm(exact_gradient)
    )
    assert cosine == pytest.approx(-0.475, abs=5e-4)
    assert imitation[START, 0] < 0 < exact_gradient[START, 0]


def test_sft_converges_to_the_counting_solution():
    counts = np.zeros(TABLE.shape)
    previous = np.concatenate([np.full((len(DATA_IDS), 1), START), DATA_IDS[:, :-1]], axis=1)
    for r, v in zip(previous.ravel(), DATA_IDS.ravel(), strict=True):
        counts[r, v] += 1
    freqs = counts / counts.sum(axis=1, keepdims=True)
    positive = counts > 0
    min_nll = -np.sum(counts[positive] * np.log(freqs[positive])) / len(DATA)
    mle_pr_a = np.prod(freqs[PREVIOUS, TEXTS], axis=1)[PARSED == 0].sum()
    assert (mle_pr_a, min_nll) == pytest.approx((0.294, 2.115), abs=5e-4)
    theta = TABLE.copy()
    for _ in range(300):
        theta = theta + text_scores(theta, DATA_IDS).mean(axis=0)
    assert objective(theta) == pytest.approx(0.292, abs=1e-3)
    assert min_nll <= data_nll(theta) < min_nll + 0.02
    assert np.linalg.norm(text_scores(theta, DATA_IDS).mean(axis=0)) < 0.01
    reward_gradient = np.einsum("n,nij->ij", text_probs(theta) * REWARDS, text_scores(theta))
    assert np.linalg.norm(reward_gradient) > 0.2


def test_policy_gradient_on_own_samples_abandons_the_demonstrations():
    rng = np.random.default_rng(0)
    theta = TABLE.copy()
    shares = []
    for _ in range(300):
        p = text_probs(theta)
        drawn = rng.choice(len(TEXTS), size=16, p=p / p.sum())
        r = REWARDS[drawn]
        shares.append(np.mean(PARSED[drawn] == 0))
        advantage = r - (r.sum() - r) / 15
        theta = theta + np.einsum("n,nij->ij", advantage, text_scores(theta, TEXTS[drawn])) / 16
    assert objective(theta) > 0.99
    assert data_nll(theta) > 6.0
    assert shares[0] < 0.6 and np.mean(shares[-20:]) > 0.95


# ---------------------------------------------------------------------------------------------
# The tiger
# ---------------------------------------------------------------------------------------------

HEAR = 0.85
SENSOR = np.array([[HEAR, 1 - HEAR], [1 - HEAR, HEAR]])


def tiger_transition(switch):
    return np.array([[1 - switch, switch], [switch, 1 - switch]])[:, None, :]


def opening(belief):
    return max(-100 * belief[0] + 10 * belief[1], 10 * belief[0] - 100 * belief[1])


def test_filtered_beliefs_of_the_chapter_history():
    heard = [0, 0, 1, 0, 0, 0]
    # static tiger: the belief depends on the count difference d only, P(left) = 1/(1+r^d)
    d = np.cumsum([1 if o == 0 else -1 for o in heard])
    static = 1 / (1 + ((1 - HEAR) / HEAR) ** d)
    beliefs = mdp.belief_filter([0.5, 0.5], np.zeros(6, int), heard, tiger_transition(0), SENSOR)
    np.testing.assert_allclose(beliefs[1:, 0], static, atol=1e-12)
    np.testing.assert_allclose(static[:3], [0.85, 0.9698, 0.85], atol=5e-5)
    # moving tiger: hand-rolled predict-correct
    b = np.array([0.5, 0.5])
    moving = []
    stay = tiger_transition(0.1)[:, 0, :]
    for o in heard:
        b = SENSOR[:, o] * (b @ stay)
        b /= b.sum()
        moving.append(b[0])
    got = mdp.belief_filter([0.5, 0.5], np.zeros(6, int), heard, tiger_transition(0.1), SENSOR)
    np.testing.assert_allclose(got[1:, 0], moving, atol=1e-12)
    np.testing.assert_allclose(moving[:3], [0.85, 0.9526, 0.5245], atol=5e-5)


def listen_then_open(switch, listens):
    """Exact values (full belief, last observation) by summing over hidden paths."""
    stay = tiger_transition(switch)[:, 0, :]
    full, joint_last = 0.0, np.zeros((2, 2))
    for heard in itertools.product((0, 1), repeat=listens):
        joint = np.zeros(2)  # P(heard, s_k) by a sum over state paths
        for path in itertools.product((0, 1), repeat=listens + 1):
            weight = 0.5
            for t, o in enumerate(heard):
                weight *= stay[path[t], path[t + 1]] * SENSOR[path[t + 1], o]
            joint[path[-1]] += weight
        full += joint.sum() * opening(joint / joint.sum())
        joint_last[heard[-1]] += joint
    last = sum(row.sum() * opening(row / row.sum()) for row in joint_last)
    return full - listens, last - listens


@pytest.mark.parametrize(
    ("switch", "full", "last"), [(0.0, 0.3175, -9.5), (0.1, -8.576, -9.5), (0.5, -9.5, -9.5)]
)
def test_a_last_observation_summary_loses_value(switch, full, last):
    assert listen_then_open(switch, 3) == pytest.approx((full, last), abs=1e-9)


@functools.cache
def best_value(listens_left, difference=0):
    """Optimal value of the static tiger: the belief is a function of the count difference."""
    ratio = ((1 - HEAR) / HEAR) ** difference
    left = 1 / (1 + ratio)
    open_now = opening([left, 1 - left])
    if listens_left == 0:
        return open_now
    hear_left = HEAR * left + (1 - HEAR) * (1 - left)
    listen = (
        -1
        + hear_left * best_value(listens_left - 1, difference + 1)
        + (1 - hear_left) * best_value(listens_left - 1, difference - 1)
    )
    return max(open_now, listen)


def test_privileged_information_gap():
    values = [best_value(k) for k in range(11)]
    expected = [-45, -7.5, -7.5, 1.0625, 1.0625, 3.5927, 3.5927, 4.5604, 4.5604, 4.9306, 4.9306]
    np.testing.assert_allclose(values, expected, atol=5e-5)
    assert 10 - values[-1] == pytest.approx(5.069, abs=5e-4)
    assert opening([0.5, 0.5]) == -45
    # more listening barely helps: the optimum stays far below the privileged 10
    assert best_value(16) < 5.2
    fixed = [listen_then_open(0.0, k) for k in range(1, 7)]
    for k, (full, last) in enumerate(fixed, start=1):
        assert full <= values[k] + 1e-12 and last <= full + 1e-12
