"""Claims made in chapter 10 (entropy and exploration), recomputed independently.

Each test rebuilds one number, identity or figure property that the chapter's text relies on,
by a route that shares no code with the library functions the chapter calls: every response
of a bigram policy enumerated by loops (``tests.oracles.bigram_by_hand``), entropies by
``math.log`` sums, softmaxes written out, gradients by central differences, and the two seeded
simulations (the diversity table and the REINFORCE run) re-run with NumPy alone on the same
seeds. A claim about a simulation is checked on the chapter's own draws.

Sections: one distribution (the examples, eq-entropy-gradient, eq-entropy-sampled); sequences
(eq-entropy-chain on chapter 2's policy); token versus semantic entropy
(eq-entropy-decomposition, the chatty and decisive policies); temperature (the flip of the
action preference, eq-naive-temperature, eq-temperature-ratio, eq-tempered-gradient,
fig-temperature, eq-score-temperature); constrained decoding (eq-constrained-decoding, the two
schemas, the ratio at theta_old); the four logged numbers; the entropy dynamics
(eq-entropy-change, eq-entropy-change-pg) and fig-entropy-collapse; the check for
understanding.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tests.oracles import (
    BIGRAM_TABLE,
    CHATTY_TABLE,
    COLLAPSE_TABLE,
    DECISIVE_TABLE,
    HABIT_TABLE,
    bigram_by_hand,
    central_differences,
    entropy_by_hand,
    first_letter,
    softmax_rows,
)

# The trainer facts of the chapter's "In practice" section cannot be tested here; they were read
# in the trainers' sources and documentation:
# - verl: `_forward_micro_batch` in verl/workers/actor/dp_actor.py divides the logits by the
#   temperature (`logits.div_(temperature)`) before the log-probabilities and
#   `entropy_from_logits`; `update_policy` there forms `pg_loss - entropy_loss * entropy_coeff`
#   when `entropy_coeff != 0`; verl/trainer/config/actor/actor.yaml sets `entropy_coeff: 0` and
#   lists the `clip-cov` and `kl-cov` loss modes "from https://arxiv.org/abs/2505.22617";
#   `fit` in verl/trainer/ppo/ray_trainer.py logs `actor/entropy` as `agg_loss` of the
#   entropies over the response mask with the configured `loss_agg_mode`.
# - TRL: `_get_per_token_logps` in trl/trainer/grpo_trainer.py divides the logits by
#   `self.temperature` ("Divide logits by sampling temperature", citing the blog post "The N
#   implementation details of RLHF with PPO") and `_generate_and_score_completions` logs
#   `reward_std`, the mean over groups of `rewards.view(-1, num_generations).std(dim=1)`;
#   trl/trainer/grpo_config.py documents `temperature`, `vllm_structured_outputs_regex` and
#   `top_entropy_quantile` ("Beyond the 80/20 Rule", arXiv:2506.01939); the PPO trainer's
#   documentation ("Explanation of the logged metrics") defines `objective/entropy` as
#   `(-logprobs).sum(1).mean()`.

LENGTH = 3
Q = np.array([1.0, 0.8, 0.0])
THETA0 = np.log([0.2, 0.5, 0.3])
ZETA = 0.5


def budget(table, length=LENGTH):
    """Per-position expected entropies, H(X), H(A) (no parse as a value) and Pr(A), by hand."""
    responses, probs, entropies = bigram_by_hand(table, length)
    actions = [first_letter(x, 2) for x in responses]
    action_probs = [
        sum(p for p, a in zip(probs, actions, strict=True) if a == k) for k in (0, 1, -1)
    ]
    return probs @ entropies, entropy_by_hand(probs), entropy_by_hand(action_probs), action_probs


def softmax(logits):
    return softmax_rows(np.asarray(logits, dtype=float))


# ---------------------------------------------------------------------------------------------
# One distribution
# ---------------------------------------------------------------------------------------------


def test_the_distribution_with_one_favorite():
    probs = [0.7, 0.1, 0.1, 0.1]
    h = entropy_by_hand(probs)
    assert h == pytest.approx(0.9404, abs=5e-5)
    assert math.exp(h) == pytest.approx(2.561, abs=5e-4)  # "about 2.6 tokens"
    assert entropy_by_hand([0.25] * 4) == pytest.approx(math.log(4))


def test_the_naive_formula_fails_where_the_log_softmax_does_not():
    logits = np.array([1000.0, 0.0, -1000.0, 0.0])
    probs = softmax(logits)
    assert np.count_nonzero(probs == 0.0) == 3  # three probabilities underflow
    with np.errstate(divide="ignore", invalid="ignore"):
        assert math.isnan(-np.sum(probs * np.log(probs)))
    logprobs = logits - logits.max() - math.log(np.sum(np.exp(logits - logits.max())))
    assert -sum(math.exp(lp) * lp for lp in logprobs) == 0.0


def test_the_gradient_takes_from_the_favorite_and_gives_to_the_rare_tokens():
    logits = np.log([0.7, 0.1, 0.1, 0.1])
    gradient = central_differences(lambda z: entropy_by_hand(softmax(z)), logits)
    assert gradient[0] < 0 and np.all(gradient[1:] > 0)
    np.testing.assert_allclose(gradient, [-0.4086, 0.1362, 0.1362, 0.1362], atol=5e-5)


def test_the_varentropy_of_the_example():
    probs = np.array([0.7, 0.1, 0.1, 0.1])
    h = entropy_by_hand(probs)
    assert sum(p * math.log(p) ** 2 for p in probs) - h**2 == pytest.approx(0.7952, abs=5e-5)


# ---------------------------------------------------------------------------------------------
# Sequences: the chain rule on chapter 2's policy
# ---------------------------------------------------------------------------------------------


def test_the_chain_rule_on_chapter_2s_policy():
    per_position, response_h, _, _ = budget(BIGRAM_TABLE)
    np.testing.assert_allclose(per_position, [1.2812, 0.9924, 1.1865], atol=5e-5)
    assert per_position.sum() == pytest.approx(response_h, rel=1e-12)
    assert response_h == pytest.approx(3.4600, abs=5e-5)
    assert per_position.mean() == pytest.approx(1.1533, abs=5e-5)


def test_the_full_logit_estimate_is_less_noisy_than_the_sampled_one():
    # For one response, mean_j H_j(x_<j) and mean_j -log pi(x_j | x_<j) have the same mean,
    # and the first (which averages over each next token exactly) the smaller variance.
    responses, probs, entropies = bigram_by_hand(BIGRAM_TABLE, LENGTH)
    table = np.array(BIGRAM_TABLE)
    full = entropies.mean(axis=1)
    sampled = np.array(
        [
            np.mean([-math.log(softmax(table[x[j - 1] if j else 4])[x[j]]) for j in range(LENGTH)])
            for x in responses
        ]
    )
    assert probs @ full == pytest.approx(probs @ sampled, rel=1e-12)
    variance = [probs @ (v - probs @ v) ** 2 for v in (full, sampled)]
    assert variance[0] < 0.5 * variance[1]


# ---------------------------------------------------------------------------------------------
# Token entropy versus semantic entropy
# ---------------------------------------------------------------------------------------------


def test_the_chatty_policy_is_all_syntax():
    per_position, response_h, action_h, _ = budget(CHATTY_TABLE)
    np.testing.assert_allclose(per_position, [0.0, math.log(2), math.log(2)], atol=1e-6)
    assert response_h == pytest.approx(math.log(4), abs=1e-6)
    assert action_h == pytest.approx(0.0, abs=1e-6)


def test_the_decisive_policy_is_all_semantics():
    per_position, response_h, action_h, _ = budget(DECISIVE_TABLE)
    np.testing.assert_allclose(per_position, [math.log(2), 0.0, 0.0], atol=1e-6)
    assert response_h == pytest.approx(math.log(2), abs=1e-6)
    assert action_h == pytest.approx(math.log(2), abs=1e-6)


def test_the_chatty_policy_has_twice_the_token_entropy_of_the_decisive_one():
    chatty, decisive = budget(CHATTY_TABLE)[0].mean(), budget(DECISIVE_TABLE)[0].mean()
    assert chatty == pytest.approx(0.4621, abs=5e-5) and decisive == pytest.approx(0.2310, abs=5e-5)
    assert chatty == pytest.approx(2 * decisive, rel=1e-5)


def test_chapter_2s_policy_is_mostly_formatting():
    _, response_h, action_h, _ = budget(BIGRAM_TABLE)
    assert action_h == pytest.approx(0.8941, abs=5e-5)
    assert response_h - action_h == pytest.approx(2.57, abs=5e-3)


# ---------------------------------------------------------------------------------------------
# Temperature
# ---------------------------------------------------------------------------------------------


def test_a_low_temperature_flips_the_preferred_action():
    _, _, _, at_one = budget(BIGRAM_TABLE)
    assert at_one[1] > at_one[0]  # B is more probable at temperature 1
    at_half = budget(BIGRAM_TABLE / ZETA)[3]
    assert at_half[0] == pytest.approx(0.5264, abs=5e-5)
    assert at_half[1] == pytest.approx(0.4527, abs=5e-5)
    # Tempering the action distribution itself would have kept B ahead.
    tempered = np.array(at_one[:2]) ** 2 / np.sum(np.array(at_one[:2]) ** 2)
    assert tempered[1] > tempered[0]
    np.testing.assert_allclose(tempered, [0.4673, 0.5327], atol=5e-5)


def test_token_and_action_entropy_rise_with_the_temperature_on_this_policy():
    rows = [budget(BIGRAM_TABLE / zeta) for zeta in (0.5, 1.0, 2.0)]
    token = [row[0].mean() for row in rows]
    action = [row[2] for row in rows]
    assert token == sorted(token) and action == sorted(action)
    np.testing.assert_allclose(token, [0.8634, 1.1533, 1.3134], atol=5e-5)


@pytest.mark.parametrize("seed", range(5))
def test_the_entropy_of_a_tempered_softmax_grows_with_the_temperature(seed):
    # dH/dbeta = -beta Var(z) <= 0 with beta = 1/zeta, so H grows with zeta.
    logits = np.random.default_rng(seed).normal(size=6) * 2
    entropies = [entropy_by_hand(softmax(logits / zeta)) for zeta in np.linspace(0.1, 5.0, 50)]
    assert np.all(np.diff(entropies) > 0)
    beta = 1.3
    probs = softmax(beta * logits)
    variance = probs @ logits**2 - (probs @ logits) ** 2
    numerical = (
        entropy_by_hand(softmax((beta + 1e-6) * logits))
        - entropy_by_hand(softmax((beta - 1e-6) * logits))
    ) / 2e-6
    assert numerical == pytest.approx(-beta * variance, rel=1e-5)


def bandit_return(logits):
    return float(softmax(logits) @ Q)


def naive_by_enumeration(theta, zeta, baseline=0.0):
    """E_{a ~ pi^zeta}[(q(a) - b)(e_a - pi)], term by term."""
    pi, pi_zeta = softmax(theta), softmax(theta / zeta)
    return sum(pi_zeta[a] * (Q[a] - baseline) * (np.eye(3)[a] - pi) for a in range(3))


@pytest.mark.equation("eq-temperature-ratio")
def test_the_bandit_updates_at_the_start():
    pi, pi_zeta = softmax(THETA0), softmax(THETA0 / ZETA)
    assert pi_zeta[0] == pytest.approx(0.1053, abs=5e-5)  # "0.11 against 0.2"
    exact = central_differences(bandit_return, THETA0)
    naive = naive_by_enumeration(THETA0, ZETA)
    np.testing.assert_allclose(naive, [-0.0211, 0.2105, -0.1895], atol=5e-5)
    assert naive[0] < 0 < exact[0]  # the naive update lowers the best action's logit
    ratio = sum(pi_zeta[a] * (pi[a] / pi_zeta[a]) * Q[a] * (np.eye(3)[a] - pi) for a in range(3))
    np.testing.assert_allclose(ratio, exact, atol=1e-8)
    tempered = central_differences(lambda t: bandit_return(t / ZETA), THETA0)
    np.testing.assert_allclose(tempered, [0.0776, 0.2216, -0.2992], atol=5e-5)
    assert np.all(np.sign(tempered) == np.sign(exact))


def test_fig_temperature_final_policies():
    def run(update):
        theta = THETA0.copy()
        for _ in range(2000):
            theta = theta + 0.5 * update(theta)
        return softmax(theta)

    def exact(theta):
        pi = softmax(theta)
        return pi * (Q - pi @ Q)

    def tempered(theta):
        pi_zeta = softmax(theta / ZETA)
        return pi_zeta * (Q - pi_zeta @ Q) / ZETA

    naive_final = run(lambda t: naive_by_enumeration(t, ZETA))
    assert naive_final @ Q == pytest.approx(0.7998, abs=5e-5)
    assert naive_final[0] == pytest.approx(0.0004, abs=5e-5)
    exact_final = run(exact)
    assert exact_final @ Q == pytest.approx(0.9993, abs=5e-5)
    assert exact_final[0] == pytest.approx(0.9978, abs=5e-5)
    tempered_final = run(tempered)
    assert tempered_final @ Q == pytest.approx(0.9874, abs=5e-5)
    assert tempered_final[0] == pytest.approx(0.9705, abs=5e-5)


@pytest.mark.parametrize("zeta", [0.5, 2.0])
def test_a_mean_baseline_makes_the_bandit_update_the_tempered_gradient(zeta):
    pi_zeta = softmax(THETA0 / zeta)
    naive = naive_by_enumeration(THETA0, zeta, baseline=pi_zeta @ Q)
    tempered = central_differences(lambda t: bandit_return(t / zeta), THETA0)
    np.testing.assert_allclose(naive, zeta * tempered, atol=1e-8)


def bigram_scores(table, responses, zeta=1.0):
    """grad_table log pi^zeta(x) of each response, by loops over positions."""
    table = np.asarray(table, dtype=float)
    vocab = table.shape[1]
    out = np.zeros((len(responses), *table.shape))
    for n, response in enumerate(responses):
        for j, token in enumerate(response):
            row = response[j - 1] if j > 0 else vocab
            out[n, row] += (np.eye(vocab)[token] - softmax(table[row] / zeta)) / zeta
    return out


def test_the_naive_update_moves_rows_no_objective_depends_on():
    responses, p1, _ = bigram_by_hand(BIGRAM_TABLE, LENGTH)
    _, p_zeta, _ = bigram_by_hand(BIGRAM_TABLE / ZETA, LENGTH)
    reward = np.array([1.0 if first_letter(x, 2) == 0 else 0.0 for x in responses])
    scores, tempered_scores = (
        bigram_scores(BIGRAM_TABLE, responses),
        bigram_scores(BIGRAM_TABLE, responses, ZETA),
    )
    exact = np.einsum("n,nij->ij", p1 * reward, scores)
    exact_tempered = np.einsum("n,nij->ij", p_zeta * reward, tempered_scores)
    naive = np.einsum("n,nij->ij", p_zeta * (reward - p_zeta @ reward), scores)
    np.testing.assert_allclose(exact[:2], 0.0, atol=1e-12)
    np.testing.assert_allclose(exact_tempered[:2], 0.0, atol=1e-12)
    assert np.abs(naive[:2]).max() == pytest.approx(0.0476, abs=5e-5)  # "as much as 0.05"
    no_baseline = np.einsum("n,nij->ij", p_zeta * reward, scores)
    assert np.abs(no_baseline[:2]).max() == pytest.approx(0.1009, abs=5e-5)  # "0.10"
    np.testing.assert_allclose(naive[-1], ZETA * exact_tempered[-1], atol=1e-12)  # start row

    # ... and the sum of both exact gradients equals finite differences of J.
    def objective(t):
        _, probs, _ = bigram_by_hand(t, LENGTH)
        return probs @ reward

    np.testing.assert_allclose(exact, central_differences(objective, BIGRAM_TABLE), atol=1e-8)


# ---------------------------------------------------------------------------------------------
# Constrained decoding
# ---------------------------------------------------------------------------------------------


def tidy(prefix):
    decided = any(token < 2 for token in prefix)
    return [False, False, False, True] if decided else [True] * 4


def decide_first(prefix):
    return [True, True, False, False] if len(prefix) == 0 else [False, False, False, True]


def constrained(table, schema):
    responses, probs, entropies = bigram_by_hand(table, LENGTH, allowed=schema)
    actions = np.array([first_letter(x, 2) for x in responses])
    parsed = np.array([probs[actions == a].sum() for a in (0, 1)])
    return (probs @ entropies).mean(), parsed.sum(), entropy_by_hand(parsed / parsed.sum()), parsed


@pytest.mark.parametrize("table", [HABIT_TABLE, BIGRAM_TABLE], ids=["habit", "chapter 2"])
def test_the_schemas_cut_the_token_entropy(table):
    free = constrained(table, None)[0]
    kept_tidy = constrained(table, tidy)[0] / free
    kept_decide = constrained(table, decide_first)[0] / free
    assert 0.5 <= kept_tidy <= 2 / 3 + 0.01  # "removes a third to a half"
    assert 0.15 <= kept_decide <= 0.25  # "about four fifths"


@pytest.mark.parametrize("table", [HABIT_TABLE, BIGRAM_TABLE], ids=["habit", "chapter 2"])
def test_the_tidy_schema_leaves_the_actions_exactly_alone(table):
    free_parsed = constrained(table, None)[3]
    tidy_parsed = constrained(table, tidy)[3]
    np.testing.assert_allclose(tidy_parsed, free_parsed, atol=1e-14)


def test_deciding_first_raises_the_habit_policys_action_entropy_and_lowers_chapter_2s():
    _, rate, habit_free, _ = constrained(HABIT_TABLE, None)
    _, decided_rate, habit_decided, habit_probs = constrained(HABIT_TABLE, decide_first)
    assert habit_free == pytest.approx(0.6142, abs=5e-5)
    assert habit_decided == pytest.approx(math.log(2), abs=1e-12)
    assert decided_rate == pytest.approx(1.0) and rate < 1.0
    np.testing.assert_allclose(habit_probs, [0.5, 0.5], atol=1e-12)
    _, _, chapter2_free, _ = constrained(BIGRAM_TABLE, None)
    _, _, chapter2_decided, _ = constrained(BIGRAM_TABLE, decide_first)
    assert chapter2_free == pytest.approx(0.6926, abs=5e-5)
    assert chapter2_decided == pytest.approx(0.6735, abs=5e-5)


def test_unmasked_ratios_at_theta_old_are_the_allowed_mass():
    response = (2, 0, 3)  # " A."
    rows = [HABIT_TABLE[4], HABIT_TABLE[2], HABIT_TABLE[0]]
    ratios, masses = [], []
    for j, (row, token) in enumerate(zip(rows, response, strict=True)):
        probs = softmax(row)
        keep = tidy(response[:j])
        mass = sum(p for p, k in zip(probs, keep, strict=True) if k)
        masses.append(mass)
        ratios.append(probs[token] / (probs[token] / mass))
    np.testing.assert_allclose(ratios, masses)
    np.testing.assert_allclose(ratios, [1.0, 1.0, 0.7001], atol=5e-5)


# ---------------------------------------------------------------------------------------------
# The four logged numbers, on the chapter's seeded simulation
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def diversity_table():
    """The chapter's 500 groups of 8 per policy and task (seed 2025), measured by hand."""
    rng = np.random.default_rng(2025)
    tasks = {"only A": np.array([1.0, 0.0]), "A or B": np.array([1.0, 1.0])}
    results = {}
    for name, table in (
        ("chatty", CHATTY_TABLE),
        ("decisive", DECISIVE_TABLE),
        ("chapter 2", BIGRAM_TABLE),
    ):
        responses, probs, _ = bigram_by_hand(table, LENGTH)
        actions = np.array([first_letter(x, 2) for x in responses])
        for task, action_rewards in tasks.items():
            picks = rng.choice(len(responses), size=(500, 8), p=probs)
            group_actions = actions[picks]
            rewards = np.where(
                group_actions >= 0, action_rewards[np.maximum(group_actions, 0)], 0.0
            )
            plug_in = []
            for row in group_actions:
                parsed = row[row >= 0]
                counts = np.bincount(parsed, minlength=2)[:2]
                plug_in.append(entropy_by_hand(counts / counts.sum()) if parsed.size else 0.0)
            unique = [
                len({a for a, r in zip(row, rr, strict=True) if a >= 0 and r >= 1.0})
                for row, rr in zip(group_actions, rewards, strict=True)
            ]
            results[name, task] = {
                "action H": np.mean(plug_in),
                "unique": np.mean(unique),
                "equal": np.mean([np.all(r == r[0]) for r in rewards]),
                "variance": np.mean(rewards.var(axis=-1)),
                "p_no_parse": probs[actions < 0].sum(),
                "p_a": probs[actions == 0].sum(),
            }
    return results


def test_the_chatty_policy_never_has_a_signal(diversity_table):
    for task in ("only A", "A or B"):
        row = diversity_table["chatty", task]
        assert row["action H"] == 0.0 and row["equal"] == 1.0 and row["unique"] == 1.0


def test_the_decisive_policy_keeps_two_strategies_and_learns_nothing_when_both_work(
    diversity_table,
):
    row = diversity_table["decisive", "A or B"]
    assert row["unique"] == pytest.approx(2.0, abs=0.01)  # "U = 2" in almost every group
    assert row["equal"] == 1.0 and row["variance"] == 0.0
    assert diversity_table["decisive", "only A"]["equal"] == pytest.approx(0.01, abs=0.006)


def test_the_plug_in_action_entropy_of_the_decisive_policy(diversity_table):
    # Exact expectation for groups of 8 fair coin flips, by the binomial sum ...
    expected = sum(math.comb(8, k) / 2**8 * entropy_by_hand([k / 8, 1 - k / 8]) for k in range(9))
    assert expected < math.log(2) - 0.06
    # ... and the chapter's two simulated averages, "0.62 to 0.63".
    for task in ("only A", "A or B"):
        value = diversity_table["decisive", task]["action H"]
        assert 0.62 <= value <= 0.63
        assert value == pytest.approx(expected, abs=0.01)


def test_chapter_2s_policy_has_signal_only_when_it_fails(diversity_table):
    row = diversity_table["chapter 2", "A or B"]
    p_success = 1 - row["p_no_parse"]
    exact_equal = p_success**8 + row["p_no_parse"] ** 8
    assert exact_equal == pytest.approx(0.569, abs=5e-4)
    assert row["equal"] == pytest.approx(0.56, abs=0.005)
    assert diversity_table["chapter 2", "only A"]["equal"] == pytest.approx(0.01, abs=0.006)


# ---------------------------------------------------------------------------------------------
# Entropy dynamics and the REINFORCE run
# ---------------------------------------------------------------------------------------------


@pytest.mark.equation("eq-entropy-change", "eq-entropy-change-pg")
def test_the_first_order_entropy_changes_of_the_bandit_steps():
    pi = softmax(THETA0)
    advantage = Q - pi @ Q
    gradient = central_differences(lambda z: entropy_by_hand(softmax(z)), THETA0)
    for step, actual_expected in (
        (0.05 * pi * advantage, -0.000866),
        (0.05 * 0.2 * gradient, 0.000444),
    ):
        actual = entropy_by_hand(softmax(THETA0 + step)) - entropy_by_hand(pi)
        centered = np.log(pi) - pi @ np.log(pi)
        assert actual == pytest.approx(actual_expected, abs=5e-7)
        assert -pi @ (centered * step) == pytest.approx(actual, rel=0.03)  # eq-entropy-change


def test_the_bonus_rate_vanishes_at_both_ends():
    rates = []
    for e in (2 / 3, 0.3, 0.1, 0.01, 0.001):
        probs = np.array([1 - e, e / 2, e / 2])
        h = entropy_by_hand(probs)
        rates.append(sum((p * (math.log(p) + h)) ** 2 for p in probs))
    np.testing.assert_allclose(rates, [0.0, 0.156972, 0.101504, 0.004111, 0.000086], atol=5e-7)


def collapse_run(seed, coef, num_steps=300, group_size=8, lr=1.0):
    """The chapter's REINFORCE run, with every probability and gradient written out."""
    vocab, letters = 5, 3
    rewards_by_action = np.array([1.0, 0.8, 0.0])
    responses = [(a, b, c) for a in range(vocab) for b in range(vocab) for c in range(vocab)]
    previous = np.array([(vocab, a, b) for a, b, _ in responses])
    tokens_ = np.array(responses)
    actions = np.array([first_letter(x, letters) for x in responses])
    rewards = np.where(actions >= 0, rewards_by_action[np.maximum(actions, 0)], 0.0)
    rng = np.random.default_rng(seed)
    table = np.array(COLLAPSE_TABLE, dtype=float)
    log = []
    for _ in range(num_steps):
        next_token = softmax_rows(table)  # (vocab + 1, vocab)
        row_h = np.array([entropy_by_hand(row) for row in next_token])
        probs = next_token[previous, tokens_].prod(axis=1)
        token_h = probs @ row_h[previous].mean(axis=1)
        action_probs = np.array([probs[actions == a].sum() for a in range(letters)])
        action_h = entropy_by_hand(action_probs / action_probs.sum())
        picked = rng.choice(len(responses), size=group_size, p=probs)
        group_rewards = rewards[picked]
        loo = group_rewards - (group_rewards.sum() - group_rewards) / (group_size - 1)
        step = np.zeros_like(table)
        for i, n in enumerate(picked):
            for j in range(LENGTH):
                row, token = previous[n, j], tokens_[n, j]
                p = next_token[row]
                step[row] += loo[i] * (np.eye(vocab)[token] - p) / group_size
                step[row] += coef * (-p * (np.log(p) + row_h[row])) / LENGTH / group_size
        succeeded = {actions[n] for n, r in zip(picked, group_rewards, strict=True) if r >= 0.8}
        log.append((token_h, action_h, len(succeeded), group_rewards.var(), probs @ rewards))
        table = table + lr * step
    return np.array(log)


@pytest.fixture(scope="module")
def collapse():
    return {coef: np.array([collapse_run(seed, coef) for seed in range(5)]) for coef in (0.0, 0.2)}


@pytest.mark.slow
def test_fig_entropy_collapse_without_a_bonus(collapse):
    logs = collapse[0.0]
    start, end = logs[:, 0].mean(axis=0), logs[:, -1].mean(axis=0)
    assert start[0] == pytest.approx(1.503, abs=5e-4) and start[1] == pytest.approx(1.083, abs=5e-4)
    assert end[1] / start[1] == pytest.approx(0.04, abs=0.005)  # "4% of its starting value"
    assert end[0] / start[0] == pytest.approx(0.61, abs=0.005)  # "keeps 61%"
    assert end[4] == pytest.approx(0.997, abs=5e-4)


@pytest.mark.slow
def test_fig_entropy_collapse_with_a_bonus(collapse):
    logs = collapse[0.2]
    start, end = logs[:, 0].mean(axis=0), logs[:, -1].mean(axis=0)
    assert end[0] / start[0] == pytest.approx(0.76, abs=0.005)
    assert end[1] / start[1] == pytest.approx(0.19, abs=0.005)
    # In both runs the action entropy collapses while the token entropy stays high.
    for coef_logs in collapse.values():
        final = coef_logs[:, -1].mean(axis=0)
        assert final[1] < 0.25 * start[1] and final[0] > 0.6 * start[0]


@pytest.mark.slow
def test_the_groups_end_with_one_strategy_and_little_variance(collapse):
    for coef, (unique, variance) in {0.0: (1.05, 0.0024), 0.2: (1.27, 0.0100)}.items():
        late = collapse[coef][:, -50:]
        assert late[..., 2].mean() == pytest.approx(unique, abs=0.005)
        assert late[..., 3].mean() == pytest.approx(variance, abs=5e-5)


# ---------------------------------------------------------------------------------------------
# The check for understanding
# ---------------------------------------------------------------------------------------------


def test_the_check_for_understanding():
    responses = {(tool, fmt): 1 / 8 for tool in range(2) for fmt in range(4)}
    h_x = entropy_by_hand(list(responses.values()))
    assert h_x == pytest.approx(2.079, abs=5e-4)
    assert entropy_by_hand([0.5, 0.5]) == pytest.approx(0.693, abs=5e-4)
    assert h_x - math.log(2) == pytest.approx(1.386, abs=5e-4)
    trained = entropy_by_hand([0.99, 0.01])
    assert trained == pytest.approx(0.056, abs=5e-4)
    assert 1 - trained / math.log(2) == pytest.approx(0.92, abs=0.005)
    assert trained + math.log(4) == pytest.approx(1.442, abs=5e-4)
    assert 1 - (trained + math.log(4)) / math.log(8) == pytest.approx(0.31, abs=0.005)


def test_the_entropy_grows_with_the_temperature_at_the_stated_rate():
    # The chapter wrote the rate with beta = 1/zeta, a second meaning for the KL coefficient; it
    # now states dH/dzeta = Var_{pi^zeta}[z] / zeta^3. Central differences of the exact entropy.
    logits = np.array([2.0, 0.5, -1.0, 0.0, 1.2])

    def tempered_entropy(zeta):
        scaled = logits / zeta
        probs = np.exp(scaled - scaled.max())
        probs /= probs.sum()
        return -float(probs @ np.log(probs)), probs

    for zeta in (0.5, 1.0, 2.0):
        step = 1e-5
        rate = (tempered_entropy(zeta + step)[0] - tempered_entropy(zeta - step)[0]) / (2 * step)
        probs = tempered_entropy(zeta)[1]
        variance = probs @ logits**2 - (probs @ logits) ** 2
        assert rate == pytest.approx(variance / zeta**3, rel=1e-6) and rate > 0
    text = (
        Path(__file__).resolve().parents[3] / "chapters" / "10_entropy_exploration.md"
    ).read_text(encoding="utf-8")
    stated = r"\mathrm{d}\mathcal{H}/\mathrm{d}\zeta = \operatorname{Var}_{v \sim \pi^\zeta}[z_v]"
    assert stated + r" / \zeta^3" in " ".join(text.split())
