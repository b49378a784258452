"""Claims made in chapter 2 (and in its solutions page, where they rest on the chapter's runs).

Each test recomputes one number, table entry or statement of the chapter with the chapter's
own parameters and seeds, independently of :mod:`rlfound`: the bigram model, its scores and
its training loops are written out here with plain NumPy, gradients are checked by central
differences, and the tiger's beliefs and values come from sums over hidden paths and from the
count difference of a static tiger. Facts about single library functions (token
log-probabilities, the parser marginal, the Bayes filter against enumeration, the score
identity of the cross-entropy gradient) are tested with the library.

Sections: the parser marginal; credit to formatting (the exact gradient, one-sample updates,
the action-level estimator, the check for understanding); figure fig-format-drift; teacher
forcing versus policy gradient (figure fig-sft-vs-pg); the tiger (beliefs, summaries,
privileged information, figure fig-tiger-information).
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

from tests.oracles import BIGRAM_TABLE, central_differences, softmax_rows

# ---------------------------------------------------------------------------------------------
# The chapter's bigram model, written out independently
# ---------------------------------------------------------------------------------------------

VOCAB = ["A", "B", " ", "."]
V, LENGTH, START = 4, 3, 4
AFTER_A, AFTER_B, AFTER_DOT = 0, 1, 3
SPACE = 2
TABLE = BIGRAM_TABLE  # tests.oracles: the chapter's bigram logits
TEXTS = np.array(list(itertools.product(range(V), repeat=LENGTH)))


def ids(text):
    return np.array([VOCAB.index(c) for c in text])


def first_letter(text):
    for token in text:
        if token in (0, 1):
            return int(token)
    return -1


def last_letter(text):
    return first_letter(text[::-1])


PARSED = np.array([first_letter(x) for x in TEXTS])
REWARDS = (PARSED == 0).astype(float)  # R(A) = 1, R(B) = R(no parse) = 0


def predecessors(texts):
    """The table row that predicts each token: the start row, then the previous token."""
    return np.concatenate([np.full((len(texts), 1), START), texts[:, :-1]], axis=1)


def text_probs(table, texts=TEXTS):
    """pi(x) = prod_j softmax(table[x_{j-1}])[x_j]."""
    return np.prod(softmax_rows(table)[predecessors(texts), texts], axis=1)


def text_scores(table, texts=TEXTS):
    """grad_table log pi(x) by eq-bigram-score, one token at a time: shape (N, V + 1, V)."""
    probs = softmax_rows(table)
    scores = np.zeros((len(texts), *table.shape))
    for i, (rows, text) in enumerate(zip(predecessors(texts), texts, strict=True)):
        for row, token in zip(rows, text, strict=True):
            scores[i, row] -= probs[row]
            scores[i, row, token] += 1.0
    return scores


def objective(table, rewards=REWARDS):
    """J = sum_x pi(x) R(g(x)) (eq-parser-objective)."""
    return float(text_probs(table) @ rewards)


def enumerated_gradient(table, rewards=REWARDS):
    """grad J = sum_x pi(x) R(g(x)) grad log pi(x), the finite sum of the chapter."""
    return np.einsum("n,nij->ij", text_probs(table) * rewards, text_scores(table))


@pytest.fixture(scope="module")
def exact_gradient():
    """grad J at the chapter's table, by central differences of J."""
    return central_differences(objective, TABLE)


# ---------------------------------------------------------------------------------------------
# The parser marginal
# ---------------------------------------------------------------------------------------------


def test_the_64_responses_split_28_28_8_between_a_b_and_no_parse():
    assert len(TEXTS) == 64
    assert [int(np.sum(PARSED == a)) for a in (0, 1, -1)] == [28, 28, 8]


def test_pr_a_is_0_4507_pr_b_0_4812_and_no_parse_0_0681():
    probs = text_probs(TABLE)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    by_action = [probs[PARSED == a].sum() for a in (0, 1, -1)]
    assert by_action == pytest.approx([0.4507, 0.4812, 0.0681], abs=5e-5)


def test_the_two_most_probable_texts_say_a_but_b_is_the_more_probable_action():
    probs = text_probs(TABLE)
    top_two = np.argsort(-probs)[:2]
    assert {"".join(VOCAB[t] for t in TEXTS[i]) for i in top_two} == {"A..", "A. "}
    assert probs[PARSED == 1].sum() > probs[PARSED == 0].sum()


# ---------------------------------------------------------------------------------------------
# Credit to formatting
# ---------------------------------------------------------------------------------------------


@pytest.mark.equation("eq-bigram-score")
@pytest.mark.parametrize("text", ["A. ", " B.", "..A", "BAB"])
def test_bigram_score_formula_matches_finite_differences_of_log_pi(text):
    x = ids(text)[None]
    numeric = central_differences(lambda t: np.log(text_probs(t, x)[0]), TABLE)
    np.testing.assert_allclose(text_scores(TABLE, x)[0], numeric, atol=1e-8)


def test_the_enumerated_gradient_matches_finite_differences_of_j(exact_gradient):
    np.testing.assert_allclose(enumerated_gradient(TABLE), exact_gradient, atol=1e-8)


def test_the_exact_gradient_is_zero_on_the_rows_after_a_letter(exact_gradient):
    assert np.abs(exact_gradient[[AFTER_A, AFTER_B]]).max() < 1e-9
    assert np.abs(exact_gradient[[SPACE, AFTER_DOT, START]]).max() > 0.1


def test_exact_gradient_ascent_never_moves_the_rows_after_a_letter():
    """The rows are irrelevant to J at every table, so the black line of the figure is flat."""
    rng = np.random.default_rng(20)
    for _ in range(5):
        table = TABLE + rng.normal(scale=2.0, size=TABLE.shape)
        gradient = enumerated_gradient(table)
        assert np.abs(gradient[[AFTER_A, AFTER_B]]).max() < 1e-12
        assert np.abs(gradient).max() > 1e-3


def test_the_sample_a_dot_space_updates_exactly_three_rows():
    update = text_scores(TABLE, ids("A. ")[None])[0]  # reward 1
    moved = {row for row in range(V + 1) if np.abs(update[row]).max() > 0}
    assert moved == {START, AFTER_A, AFTER_DOT}


def test_the_sample_a_dot_space_moves_the_row_after_a_by_up_to_0_24():
    update = text_scores(TABLE, ids("A. ")[None])[0]
    assert np.abs(update[AFTER_A]).max() == pytest.approx(0.2440, abs=5e-5)


def test_a_leading_space_has_exact_gradient_minus_0_075(exact_gradient):
    assert exact_gradient[START, SPACE] == pytest.approx(-0.0752, abs=5e-5)


def test_one_sample_updates_to_the_rows_after_a_letter_are_noise():
    """Mean zero (the exact gradient, tested above) but a positive spread in every entry."""
    probs = text_probs(TABLE)
    estimates = REWARDS[:, None, None] * text_scores(TABLE)
    mean = np.einsum("n,nij->ij", probs, estimates)
    std = np.sqrt(np.einsum("n,nij->ij", probs, (estimates - mean) ** 2))
    assert std[[AFTER_A, AFTER_B]].min() > 0.02


@pytest.mark.equation("eq-action-score")
@pytest.mark.parametrize("action", [0, 1])
def test_the_action_score_is_the_conditional_mean_of_the_text_scores(action):
    """eq-action-score against central differences of log Pr(a)."""
    members = PARSED == action
    numeric = central_differences(lambda t: np.log(text_probs(t)[members].sum()), TABLE)
    probs = text_probs(TABLE)
    conditional_mean = np.einsum(
        "n,nij->ij", probs[members] / probs[members].sum(), text_scores(TABLE)[members]
    )
    np.testing.assert_allclose(conditional_mean, numeric, atol=1e-8)


@pytest.fixture(scope="module")
def estimators():
    """The one-sample text-level and action-level estimates of grad J for all 64 texts."""
    probs = text_probs(TABLE)
    scores = text_scores(TABLE)
    pr_a = probs[PARSED == 0].sum()
    grad_log_pr_a = np.einsum("n,nij->ij", probs * (PARSED == 0) / pr_a, scores)
    text_level = REWARDS[:, None, None] * scores
    action_level = REWARDS[:, None, None] * grad_log_pr_a[None]  # R = 0 unless g(x) = A
    return probs, text_level, action_level


def total_variance(probs, estimates):
    mean = np.einsum("n,nij->ij", probs, estimates)
    return np.einsum("n,nij->", probs, (estimates - mean) ** 2)


def test_the_action_level_estimator_has_the_same_mean_as_the_text_level_one(
    estimators, exact_gradient
):
    probs, text_level, action_level = estimators
    for estimates in (text_level, action_level):
        np.testing.assert_allclose(
            np.einsum("n,nij->ij", probs, estimates), exact_gradient, atol=1e-8
        )


def test_total_variances_are_0_7068_text_level_and_0_0833_action_level(estimators):
    probs, text_level, action_level = estimators
    assert total_variance(probs, text_level) == pytest.approx(0.7068, abs=5e-5)
    assert total_variance(probs, action_level) == pytest.approx(0.0833, abs=5e-5)


def test_the_action_level_variance_is_8_5_times_smaller(estimators):
    probs, text_level, action_level = estimators
    ratio = total_variance(probs, text_level) / total_variance(probs, action_level)
    assert ratio == pytest.approx(8.5, abs=0.05)


def test_the_action_level_estimator_never_updates_the_rows_after_a_letter(estimators):
    _, _, action_level = estimators
    assert np.abs(action_level[:, [AFTER_A, AFTER_B]]).max() < 1e-12


def test_with_a_last_letter_parser_every_row_has_a_nonzero_gradient():
    """The chapter's check for understanding."""
    rewards = np.array([last_letter(x) == 0 for x in TEXTS], dtype=float)
    gradient = central_differences(lambda t: objective(t, rewards), TABLE)
    assert np.abs(gradient).max(axis=1).min() > 1e-3


# ---------------------------------------------------------------------------------------------
# Figure fig-format-drift: 20 seeds of sampled REINFORCE, batches of 8, step size 0.5
# ---------------------------------------------------------------------------------------------


def space_after_a(table):
    return softmax_rows(table)[AFTER_A, SPACE]


@functools.cache
def format_drift(baseline):
    """(final Pr(A), final pi(' ' | 'A')) of the chapter's 20 seeds, 400 steps each."""
    finals = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        theta = TABLE.copy()
        for _ in range(400):
            p = text_probs(theta)
            drawn = rng.choice(len(TEXTS), size=8, p=p / p.sum())
            r = REWARDS[drawn]
            b = (r.sum() - r) / 7 if baseline == "leave_one_out" else 0.0
            update = np.einsum("n,nij->ij", r - b, text_scores(theta, TEXTS[drawn]))
            theta += 0.5 * update / 8
        finals.append((objective(theta), space_after_a(theta)))
    return np.array(finals)


@pytest.mark.slow
@pytest.mark.parametrize("baseline", ["none", "leave_one_out"])
def test_every_sampled_run_learns_the_action(baseline):
    assert format_drift(baseline)[:, 0].min() > 0.99


def test_a_space_after_a_starts_at_0_169():
    assert space_after_a(TABLE) == pytest.approx(0.169, abs=5e-4)


def test_without_a_baseline_the_space_after_a_ends_between_0_005_and_0_688():
    """The chapter's text and solution (c): a spread over the seeds, not a collapse in all."""
    final = format_drift("none")[:, 1]
    assert (final.min(), final.max()) == pytest.approx((0.005, 0.688), abs=5e-4)


def test_without_a_baseline_the_standard_deviation_over_seeds_is_0_178():
    """Solution (c)."""
    assert format_drift("none")[:, 1].std() == pytest.approx(0.178, abs=5e-4)


def test_with_leave_one_out_the_space_after_a_ends_between_0_125_and_0_227():
    final = format_drift("leave_one_out")[:, 1]
    assert (final.min(), final.max()) == pytest.approx((0.125, 0.227), abs=5e-4)


def test_with_leave_one_out_the_standard_deviation_over_seeds_is_0_030():
    """Solution (c)."""
    assert format_drift("leave_one_out")[:, 1].std() == pytest.approx(0.030, abs=5e-4)


# ---------------------------------------------------------------------------------------------
# Teacher forcing versus policy gradient, figure fig-sft-vs-pg
# ---------------------------------------------------------------------------------------------

DATA = np.array(
    [ids(line) for line in ["B. ", "B. ", "B. ", "B..", "B  ", " B.", " B.", "A. ", "A..", " A."]]
)


def data_nll(table):
    """Mean negative log-likelihood per demonstration."""
    return float(-np.log(text_probs(table, DATA)).mean())


def counting_solution():
    """Maximum-likelihood next-token frequencies, from counts: (freqs, min NLL)."""
    counts = np.zeros(TABLE.shape)
    for row, token in zip(predecessors(DATA).ravel(), DATA.ravel(), strict=True):
        counts[row, token] += 1
    freqs = counts / counts.sum(axis=1, keepdims=True)
    seen = counts > 0
    return freqs, -np.sum(counts[seen] * np.log(freqs[seen])) / len(DATA)


def test_imitation_and_reward_gradients_have_cosine_minus_0_475(exact_gradient):
    imitation = central_differences(lambda t: -data_nll(t), TABLE)
    cosine = np.sum(imitation * exact_gradient) / (
        np.linalg.norm(imitation) * np.linalg.norm(exact_gradient)
    )
    assert cosine == pytest.approx(-0.475, abs=5e-4)


def test_on_the_first_token_logit_of_a_imitation_pulls_down_and_reward_pushes_up(exact_gradient):
    imitation = central_differences(lambda t: -data_nll(t), TABLE)
    assert imitation[START, 0] == pytest.approx(-0.190, abs=5e-4)
    assert exact_gradient[START, 0] == pytest.approx(0.214, abs=5e-4)


def test_maximum_likelihood_from_counts_gives_pr_a_0_294_and_nll_2_115():
    freqs, min_nll = counting_solution()
    pr_a = np.prod(freqs[predecessors(TEXTS), TEXTS], axis=1)[PARSED == 0].sum()
    assert (pr_a, min_nll) == pytest.approx((0.294, 2.115), abs=5e-4)


@pytest.fixture(scope="module")
def sft_table():
    """300 steps of gradient descent on the mean NLL, step size 1 (the chapter's SFT run)."""
    theta = TABLE.copy()
    for _ in range(300):
        theta = theta + text_scores(theta, DATA).mean(axis=0)
    return theta


def test_sft_converges_to_the_counting_solution(sft_table):
    _, min_nll = counting_solution()
    assert objective(sft_table) == pytest.approx(0.292, abs=5e-4)
    assert min_nll <= data_nll(sft_table) < min_nll + 0.02
    assert np.linalg.norm(text_scores(sft_table, DATA).mean(axis=0)) < 0.01


def test_at_the_sft_solution_the_reward_gradient_is_not_zero(sft_table):
    assert np.linalg.norm(enumerated_gradient(sft_table)) == pytest.approx(0.22, abs=5e-3)


@pytest.fixture(scope="module")
def pg_run():
    """The chapter's PG run: seed 0, batches of 16, leave-one-out, 300 steps of size 1."""
    rng = np.random.default_rng(0)
    theta = TABLE.copy()
    shares = []
    for _ in range(301):
        p = text_probs(theta)
        drawn = rng.choice(len(TEXTS), size=16, p=p / p.sum())
        r = REWARDS[drawn]
        shares.append(np.mean(PARSED[drawn] == 0))
        advantage = r - (r.sum() - r) / 15
        theta = theta + np.einsum("n,nij->ij", advantage, text_scores(theta, TEXTS[drawn])) / 16
    return theta, np.array(shares)


def test_policy_gradient_drives_pr_a_toward_one(pg_run):
    theta, _ = pg_run
    assert objective(theta) > 0.99


def test_policy_gradient_makes_the_demonstrations_much_less_likely(pg_run, sft_table):
    theta, _ = pg_run
    assert data_nll(theta) > 3 * data_nll(sft_table)


def test_pg_batches_start_mixed_and_end_almost_all_a(pg_run):
    _, shares = pg_run
    assert shares[0] == pytest.approx(0.375)  # printed as 0.38
    assert shares[-20:].mean() > 0.995  # printed as 1.00


# ---------------------------------------------------------------------------------------------
# The tiger: state 0 = tiger left, observation 0 = heard on the left, action 0 = listen
# ---------------------------------------------------------------------------------------------

HEAR = 0.85
SENSOR = np.array([[HEAR, 1 - HEAR], [1 - HEAR, HEAR]])
HISTORY = [0, 0, 1, 0, 0, 0]  # heard: left, left, right, left, left, left


def switching(switch):
    return np.array([[1 - switch, switch], [switch, 1 - switch]])


def opening(belief):
    """Expected reward of opening the better door: +10 if the tiger is behind the other one."""
    return max(-100 * belief[0] + 10 * belief[1], 10 * belief[0] - 100 * belief[1])


def posterior_by_paths(heard, switch):
    """Joint Pr(heard, s_T) by a sum over every hidden path from the uniform prior."""
    stay = switching(switch)
    joint = np.zeros(2)
    for path in itertools.product((0, 1), repeat=len(heard) + 1):
        weight = 0.5
        for t, o in enumerate(heard):
            weight *= stay[path[t], path[t + 1]] * SENSOR[path[t + 1], o]
        joint[path[-1]] += weight
    return joint


def test_static_tiger_beliefs_depend_only_on_the_count_difference():
    difference = np.cumsum([1 if o == 0 else -1 for o in HISTORY])
    by_difference = 1 / (1 + ((1 - HEAR) / HEAR) ** difference)
    for t in range(1, len(HISTORY) + 1):
        joint = posterior_by_paths(HISTORY[:t], 0.0)
        assert joint[0] / joint.sum() == pytest.approx(by_difference[t - 1], abs=1e-12)
    # left, left, right leaves the agent where a single left did
    assert by_difference[[0, 1, 2]] == pytest.approx([0.85, 0.9698, 0.85], abs=5e-5)


def test_a_moving_tiger_never_makes_the_belief_as_confident():
    moving = [posterior_by_paths(HISTORY[:t], 0.1) for t in range(1, len(HISTORY) + 1)]
    moving = np.array([joint[0] / joint.sum() for joint in moving])
    assert moving[:3] == pytest.approx([0.85, 0.9526, 0.5245], abs=5e-5)
    static = [posterior_by_paths(HISTORY[:t], 0.0) for t in range(1, len(HISTORY) + 1)]
    assert moving.max() < max(joint[0] / joint.sum() for joint in static)


def listen_then_open(switch, listens):
    """Exact values of listening `listens` times and opening: (full belief, last observation)."""
    full, joint_last = 0.0, np.zeros((2, 2))
    for heard in itertools.product((0, 1), repeat=listens):
        joint = posterior_by_paths(heard, switch)
        full += joint.sum() * opening(joint / joint.sum())
        joint_last[heard[-1]] += joint
    last = sum(row.sum() * opening(row / row.sum()) for row in joint_last)
    return full - listens, last - listens


@pytest.mark.parametrize(
    ("switch", "full", "last"), [(0.0, 0.3175, -9.5), (0.1, -8.576, -9.5), (0.5, -9.5, -9.5)]
)
def test_a_last_observation_summary_loses_9_8_0_9_and_0(switch, full, last):
    assert listen_then_open(switch, 3) == pytest.approx((full, last), abs=1e-9)


@functools.cache
def best_value(listens_left, difference=0):
    """Optimal value of the static tiger (eq-tiger-bellman); the belief is a function of the
    count difference of left and right observations."""
    left = 1 / (1 + ((1 - HEAR) / HEAR) ** difference)
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


def test_best_observation_based_values_for_budgets_0_to_10():
    expected = [-45, -7.5, -7.5, 1.0625, 1.0625, 3.5927, 3.5927, 4.5604, 4.5604, 4.9306, 4.9306]
    assert [best_value(m) for m in range(11)] == pytest.approx(expected, abs=5e-5)


def test_the_privileged_policy_looks_5_07_better_than_the_best_with_ten_listens():
    assert 10 - best_value(10) == pytest.approx(5.069, abs=5e-4)


def static_listen_then_open(listens):
    """listen_then_open(0.0, listens) for the static tiger, grouped by the number of lefts.

    With a tiger that never moves, Pr(heard, s) = 1/2 prod_t O(o_t | s) depends only on how
    many observations said left, so the sums run over binomial counts instead of sequences.
    """
    full, joint_last = 0.0, np.zeros((2, 2))
    for lefts in range(listens + 1):
        joint = 0.5 * np.array(
            [
                HEAR**lefts * (1 - HEAR) ** (listens - lefts),
                (1 - HEAR) ** lefts * HEAR ** (listens - lefts),
            ]
        )
        full += math.comb(listens, lefts) * joint.sum() * opening(joint / joint.sum())
        # sequences with this many lefts that end in left (0) or in right (1)
        joint_last[0] += math.comb(listens - 1, lefts - 1) * joint if lefts >= 1 else 0.0
        joint_last[1] += math.comb(listens - 1, lefts) * joint if lefts <= listens - 1 else 0.0
    last = sum(row.sum() * opening(row / row.sum()) for row in joint_last)
    return full - listens, last - listens


@pytest.mark.parametrize("listens", range(1, 11))
def test_fixed_length_listening_with_the_full_belief_is_no_better_than_the_best_policy(listens):
    """Figure fig-tiger-information: the green curve lies on or below the blue one."""
    full, _ = static_listen_then_open(listens)
    assert full <= best_value(listens) + 1e-12


@pytest.mark.parametrize("listens", range(1, 11))
def test_fixed_length_listening_with_the_last_observation_is_worse_still(listens):
    """Figure fig-tiger-information: the red curve lies on or below the green one."""
    full, last = static_listen_then_open(listens)
    assert last <= full + 1e-12
