"""Claims made in chapter 3 that are not already facts about single library functions.

Each test recomputes a number the chapter's text relies on, with the chapter's parameters and
seeds, from an independent implementation written out here (the rated conversation is
enumerated by hand as sequences of actions and ratings, values come from backward induction,
gradients from central differences), and where useful also through the library:

- the conversation's values, action values and advantages, and the Monte Carlo table (every
  estimate within two standard errors);
- the trajectory probability 0.03 (0.0225 for the harsh user), its score, and that changing
  the user changes log p(tau) but not its gradient;
- REINFORCE: the total-return, reward-to-go and value-baseline estimators are unbiased (at
  gamma = 1 and 0.9), their exact variances, and the closed form d(s) pi(a|s) A(s, a);
- figure fig-reinforce-variance: the variances for N = 1..7 turns and the per-turn split;
- the token layout: weights G_t and G_t - v(s_t) copied to the policy tokens only;
- baselines: an arbitrary state baseline adds nothing in expectation, b = q(s, a) removes
  the whole update;
- figure fig-group-baseline-bias and the tables after it: leave-one-out is unbiased, the mean
  including the sample scales by (G - 1)/G, GRPO changes scale and direction, the binary-
  reward factors, and the coupled pairs (shared seed, antithetic, without replacement);
- the section-19 invariant: a constant reward across independent actions gives exactly zero
  expected baseline-centred gradient, in the bandit and in the conversation.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from rlfound import groups, mdp, policy_gradient, returns, tokens

# ---------------------------------------------------------------------------------------------
# The rated conversation, written out independently
# ---------------------------------------------------------------------------------------------

P_GOOD = np.array([[0.6, 0.4], [0.8, 0.5], [0.3, 0.7]])  # kinds: first turn, after good, bad
POLICY_BY_KIND = np.array([[0.5, 0.5], [0.8, 0.2], [0.4, 0.6]])


def state_index(turn, previous_good):
    """0 for the first turn; 2t - 1 / 2t for turn t after a good / bad reply."""
    return 0 if turn == 0 else 2 * turn - (1 if previous_good else 0)


def kind_of(turn, previous_good):
    return 0 if turn == 0 else (1 if previous_good else 2)


def softmax_rows(logits):
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def chapter_logits(num_turns):
    """The chapter's logits: log of the policy of each state's kind; terminal rows zero."""
    logits = np.zeros((2 * num_turns + 1, 2))
    logits[0] = np.log(POLICY_BY_KIND[0])
    for turn in range(1, num_turns):
        for good in (True, False):
            logits[state_index(turn, good)] = np.log(POLICY_BY_KIND[kind_of(turn, good)])
    return logits


def conversations(num_turns, logits, p_good=P_GOOD):
    """Every conversation: (probability, states s_0..s_{N-1}, actions, rewards)."""
    policy = softmax_rows(logits)
    episodes = []
    for steps in itertools.product(itertools.product((0, 1), (True, False)), repeat=num_turns):
        probability, states, previous = 1.0, [], None
        for turn, (action, good) in enumerate(steps):
            state = state_index(turn, previous)
            p = p_good[kind_of(turn, previous), action]
            probability *= policy[state, action] * (p if good else 1.0 - p)
            states.append(state)
            previous = good
        actions = [a for a, _ in steps]
        rewards = [1.0 if g else 0.0 for _, g in steps]
        episodes.append((probability, states, actions, rewards))
    return episodes


def expected_return_by_recursion(logits, num_turns, gamma=1.0, p_good=P_GOOD):
    """J(theta) by backward induction over (turn, previous rating)."""
    policy = softmax_rows(logits)

    @functools.cache
    def value(turn, previous):
        if turn == num_turns:
            return 0.0
        state, kind = state_index(turn, previous), kind_of(turn, previous)
        total = 0.0
        for action in (0, 1):
            p = p_good[kind, action]
            q = p * (1.0 + gamma * value(turn + 1, True)) + (1 - p) * gamma * value(turn + 1, False)
            total += policy[state, action] * q
        return total

    return value(0, None)


def values_by_recursion(num_turns, gamma=1.0):
    """v(s) for every state of the chapter's policy (terminal states 0)."""
    logits = chapter_logits(num_turns)
    policy = softmax_rows(logits)
    v = np.zeros(2 * num_turns + 1)
    q = np.zeros((2 * num_turns + 1, 2))
    for turn in reversed(range(num_turns)):
        for previous in [None] if turn == 0 else [True, False]:
            state, kind = state_index(turn, previous), kind_of(turn, previous)
            following_good = state_index(turn + 1, True) if turn + 1 < num_turns else None
            following_bad = state_index(turn + 1, False) if turn + 1 < num_turns else None
            v_good = v[following_good] if following_good is not None else 0.0
            v_bad = v[following_bad] if following_bad is not None else 0.0
            for action in (0, 1):
                p = P_GOOD[kind, action]
                q[state, action] = p * (1.0 + gamma * v_good) + (1 - p) * gamma * v_bad
            v[state] = policy[state] @ q[state]
    return v, q


def central_differences(f, x, eps=1e-6):
    gradient = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        gradient[index] = (f(x + step) - f(x - step)) / (2 * eps)
    return gradient


def estimate(logits, states, actions, rewards, gamma, form, values=None):
    """One-episode REINFORCE, written out: form is 'total', 'to-go' or 'baseline'."""
    policy = softmax_rows(logits)
    rewards = np.asarray(rewards)
    result = np.zeros_like(logits)
    total = sum(gamma**k * r for k, r in enumerate(rewards))
    for t, (s, a) in enumerate(zip(states, actions, strict=True)):
        to_go = sum(gamma ** (k - t) * rewards[k] for k in range(t, len(rewards)))
        weight = total if form == "total" else gamma**t * to_go
        if form == "baseline":
            weight -= gamma**t * values[s]
        score = -policy[s].copy()
        score[a] += 1.0
        result[s] += weight * score
    return result


def moments(episodes, function):
    probabilities = np.array([e[0] for e in episodes])
    values = np.array([function(e) for e in episodes])
    mean = np.tensordot(probabilities, values, axes=1)
    return mean, float(probabilities @ np.sum((values - mean) ** 2, axis=(1, 2))), values


# ---------------------------------------------------------------------------------------------
# Values, action values, advantages, Monte Carlo
# ---------------------------------------------------------------------------------------------


def library_conversation(num_turns):
    """The chapter's arrays, built from the description (used only to call the library)."""
    num_states = 2 * num_turns + 1
    transition = np.zeros((num_states, 2, num_states))
    reward = np.zeros_like(transition)
    for turn in range(num_turns):
        for previous in [None] if turn == 0 else [True, False]:
            state, kind = state_index(turn, previous), kind_of(turn, previous)
            good, bad = 2 * turn + 1, 2 * turn + 2
            transition[state, :, good] = P_GOOD[kind]
            transition[state, :, bad] = 1.0 - P_GOOD[kind]
            reward[state, :, good] = 1.0
    terminal = np.arange(num_states) >= num_states - 2
    for state in np.flatnonzero(terminal):
        transition[state, :, state] = 1.0
    return transition, reward, terminal, np.eye(num_states)[0]


def test_values_by_hand_and_by_the_library():
    v, q = values_by_recursion(2)
    np.testing.assert_allclose(v, [1.14, 0.74, 0.54, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(q[:3], [[1.26, 1.02], [0.8, 0.5], [0.3, 0.7]], atol=1e-12)
    advantage = q - v[:, None]
    advantage[3:] = 0.0
    np.testing.assert_allclose(
        advantage[:3], [[0.12, -0.12], [0.06, -0.24], [-0.24, 0.16]], atol=1e-12
    )
    transition, reward, terminal, _ = library_conversation(2)
    policy = softmax_rows(chapter_logits(2))
    np.testing.assert_allclose(
        mdp.state_values(transition, reward, policy, 1.0, terminal), v, atol=1e-12
    )
    np.testing.assert_allclose(
        mdp.action_values(transition, reward, policy, 1.0, terminal), q, atol=1e-12
    )


def test_monte_carlo_estimates_lie_within_two_standard_errors():
    transition, reward, terminal, initial = library_conversation(2)
    policy = softmax_rows(chapter_logits(2))
    v, q = values_by_recursion(2)
    batch = mdp.sample_episodes(
        transition, reward, policy, initial, 2, seed=0, num_episodes=20_000, terminal=terminal
    )
    rewards = batch["rewards"]
    to_go = np.stack([rewards[:, 0] + rewards[:, 1], rewards[:, 1]], axis=1)  # gamma = 1
    visited, taken = batch["states"][:, :-1], batch["actions"]
    clarify_after_good = None
    for state in range(3):
        for action in (None, 0, 1):
            mask = (visited == state) & (taken >= 0)
            if action is not None:
                mask &= taken == action
            sample = to_go[mask]
            error = sample.std(ddof=1) / np.sqrt(sample.size)
            exact = v[state] if action is None else q[state, action]
            assert abs(sample.mean() - exact) < 2 * error
            if (state, action) == (1, 1):
                clarify_after_good = sample.size
    assert clarify_after_good == pytest.approx(2000, rel=0.05)  # one conversation in ten


# ---------------------------------------------------------------------------------------------
# Trajectory probability and score
# ---------------------------------------------------------------------------------------------

TAU_STATES, TAU_ACTIONS = [0, 1, 4], [0, 1]  # answer (good), clarify (bad)


def tau_log_probability(logits, p_good=P_GOOD):
    policy = softmax_rows(logits)
    return (
        np.log(policy[0, 0])
        + np.log(p_good[0, 0])
        + np.log(policy[1, 1])
        + np.log(1.0 - p_good[1, 1])
    )


def test_trajectory_probability_and_score():
    logits = chapter_logits(2)
    assert np.exp(tau_log_probability(logits)) == pytest.approx(0.03, abs=1e-12)
    assert np.exp(tau_log_probability(logits, 0.5 * P_GOOD)) == pytest.approx(0.0225, abs=1e-12)
    transition, _, _, initial = library_conversation(2)
    library = policy_gradient.trajectory_log_probability(
        logits, transition, initial, TAU_STATES, TAU_ACTIONS
    )
    assert library == pytest.approx(tau_log_probability(logits), abs=1e-12)
    expected_score = np.zeros((5, 2))
    expected_score[0] = [0.5, -0.5]
    expected_score[1] = [-0.8, 0.8]
    for p_good in (P_GOOD, 0.5 * P_GOOD, 0.5 + 0.5 * P_GOOD):
        numerical = central_differences(lambda x, p=p_good: tau_log_probability(x, p), logits)
        np.testing.assert_allclose(numerical, expected_score, atol=1e-8)
    np.testing.assert_allclose(
        policy_gradient.trajectory_score(logits, TAU_STATES, TAU_ACTIONS), expected_score
    )


def test_sixteen_conversations_with_the_library_probabilities():
    logits = chapter_logits(2)
    ours = conversations(2, logits)
    assert len(ours) == 16
    assert sum(e[0] for e in ours) == pytest.approx(1.0, abs=1e-12)
    transition, reward, terminal, initial = library_conversation(2)
    listed = mdp.enumerate_episodes(transition, reward, softmax_rows(logits), initial, 2, terminal)
    by_path = {(tuple(e[1]), tuple(e[2]), tuple(e[3])): e[0] for e in ours}
    assert len(listed) == 16
    for episode in listed:
        key = (tuple(episode["states"][:-1]), tuple(episode["actions"]), episode["rewards"])
        assert episode["probability"] == pytest.approx(by_path[key], abs=1e-15)


# ---------------------------------------------------------------------------------------------
# REINFORCE: unbiasedness, variances, the closed-form gradient
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gamma", "variances"),
    [(1.0, (1.4662, 1.1270, 0.3830)), (0.9, (1.3139, 0.9926, 0.3374))],
)
def test_three_estimators_are_unbiased_with_the_printed_variances(gamma, variances):
    logits = chapter_logits(2)
    v, _ = values_by_recursion(2, gamma)
    gradient = central_differences(lambda x: expected_return_by_recursion(x, 2, gamma), logits)
    episodes = conversations(2, logits)
    for form, variance in zip(("total", "to-go", "baseline"), variances, strict=True):
        mean, var, _ = moments(episodes, lambda e, f=form: estimate(logits, *e[1:], gamma, f, v))
        np.testing.assert_allclose(mean, gradient, atol=1e-8)
        assert var == pytest.approx(variance, abs=5e-5)
    transition, reward, terminal, initial = library_conversation(2)
    library = policy_gradient.expected_return(logits, transition, reward, initial, gamma, terminal)
    assert library == pytest.approx(expected_return_by_recursion(logits, 2, gamma), abs=1e-12)


def test_variance_reductions_quoted_in_the_text():
    total, to_go, baseline = 1.46624, 1.12704, 0.383
    assert 0.2 < 1 - to_go / total < 0.3  # "about a quarter"
    assert 0.6 < 1 - baseline / to_go < 0.7  # "about two thirds of what is left"


def test_closed_form_gradient_is_visits_times_policy_times_advantage():
    logits = chapter_logits(2)
    v, q = values_by_recursion(2)
    policy = softmax_rows(logits)
    advantage = q - v[:, None]
    advantage[3:] = 0.0
    visits = np.array([1.0, 0.5, 0.5, 0.0, 0.0])  # P(visit): turn 1 surely, turn 2 half each
    gradient = central_differences(lambda x: expected_return_by_recursion(x, 2), logits)
    np.testing.assert_allclose(visits[:, None] * policy * advantage, gradient, atol=1e-8)
    assert gradient[0, 0] == pytest.approx(0.06, abs=1e-8)


@pytest.fixture(scope="module")
def variance_by_turns():
    """Exact variances of the three estimators for N = 1..7 turns, and the per-turn split."""
    totals, per_turn = {}, {}
    for num_turns in range(1, 8):
        logits = chapter_logits(num_turns)
        v, _ = values_by_recursion(num_turns)
        episodes = conversations(num_turns, logits)
        probabilities = np.array([e[0] for e in episodes])
        turn_of_state = (np.arange(2 * num_turns + 1) + 1) // 2
        for form in ("total", "to-go", "baseline"):
            values = np.array([estimate(logits, *e[1:], 1.0, form, v) for e in episodes])
            mean = np.tensordot(probabilities, values, axes=1)
            per_state = np.tensordot(probabilities, (values - mean) ** 2, axes=1).sum(axis=1)
            totals.setdefault(form, []).append(per_state.sum())
            if num_turns == 7:
                per_turn[form] = [per_state[turn_of_state == k].sum() for k in range(7)]
    return totals, per_turn


def test_figure_variances_against_the_printed_table(variance_by_turns):
    totals, _ = variance_by_turns
    printed = {
        "total": [0.25, 1.47, 4.61, 10.67, 20.65, 35.58, 56.48],
        "to-go": [0.25, 1.13, 3.02, 6.27, 11.21, 18.19, 27.55],
        "baseline": [0.12, 0.38, 0.78, 1.30, 1.94, 2.71, 3.60],
    }
    for form, row in printed.items():
        np.testing.assert_allclose(totals[form], row, atol=0.006)


def test_figure_claims(variance_by_turns):
    totals, per_turn = variance_by_turns
    total, to_go, baseline = (np.array(totals[f]) for f in ("total", "to-go", "baseline"))
    assert total[0] == pytest.approx(to_go[0], abs=1e-12)  # one turn: the forms coincide
    assert np.all(total[1:] > to_go[1:]) and np.all(to_go > baseline)
    assert 1.9 < total[-1] / to_go[-1] < 2.2  # "about twice"
    assert total[-1] / baseline[-1] > 15  # "more than fifteen times"
    assert np.all(np.diff(per_turn["to-go"]) < 0) and np.all(np.diff(per_turn["baseline"]) < 0)
    late = np.array(per_turn["total"][1:])
    assert np.ptp(late) < 0.1 * late.mean()  # the last turn as noisy as the second
    assert per_turn["total"][-1] > 30 * per_turn["to-go"][-1]


def test_library_variances_agree_with_the_independent_enumeration(variance_by_turns):
    totals, _ = variance_by_turns
    transition, reward, terminal, initial = library_conversation(4)
    logits = chapter_logits(4)
    policy = softmax_rows(logits)
    values = mdp.state_values(transition, reward, policy, 1.0, terminal)
    episodes = mdp.enumerate_episodes(transition, reward, policy, initial, 4, terminal)
    probabilities = np.array([e["probability"] for e in episodes])
    for form, options in [
        ("total", dict(reward_to_go=False)),
        ("to-go", {}),
        ("baseline", dict(baseline=values)),
    ]:
        estimates = np.array(
            [
                policy_gradient.reinforce_trajectory_gradient(
                    logits, e["states"], e["actions"], e["rewards"], 1.0, **options
                )
                for e in episodes
            ]
        )
        mean = np.tensordot(probabilities, estimates, axes=1)
        variance = probabilities @ np.sum((estimates - mean) ** 2, axis=(1, 2))
        assert variance == pytest.approx(totals[form][3], rel=1e-10)


def test_terminal_only_reward_makes_the_two_forms_identical():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 2))
    for gamma_free_rewards in ([0.0, 0.0, 1.0], [0.0, 0.0, -2.0]):
        total = estimate(logits, [0, 1, 2], [0, 1, 1], gamma_free_rewards, 1.0, "total")
        to_go = estimate(logits, [0, 1, 2], [0, 1, 1], gamma_free_rewards, 1.0, "to-go")
        np.testing.assert_allclose(total, to_go, atol=1e-15)


# ---------------------------------------------------------------------------------------------
# Tokens
# ---------------------------------------------------------------------------------------------


def test_token_layout_weights():
    ids = np.array([-1, -1, -1, -1, 0, 0, 0, -1, -1, 1, 1, 1, 1, -1])
    turn_returns = returns.discounted_returns([1.0, 0.0], 1.0)
    np.testing.assert_allclose(turn_returns, [1.0, 0.0])
    advantages = turn_returns - np.array([1.14, 0.74])
    expected = np.where(ids == 0, -0.14, np.where(ids == 1, -0.74, 0.0))
    np.testing.assert_allclose(
        tokens.expand_turn_values_to_tokens(advantages, ids), expected, atol=1e-12
    )
    # The weighted token sum equals the weighted sum of turn log-probabilities.
    rng = np.random.default_rng(0)
    logprobs = np.log(rng.uniform(0.05, 1.0, size=ids.size))
    weights = tokens.expand_turn_values_to_tokens(advantages, ids)
    by_turn = sum(advantages[k] * logprobs[ids == k].sum() for k in range(2))
    assert float(weights @ logprobs) == pytest.approx(by_turn, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# Baselines in the conversation
# ---------------------------------------------------------------------------------------------


def test_arbitrary_state_baseline_adds_nothing_and_action_baseline_removes_everything():
    logits = chapter_logits(2)
    policy = softmax_rows(logits)
    _, q = values_by_recursion(2)
    episodes = conversations(2, logits)
    baseline = np.array([3.0, -2.0, 7.5, 100.0, -40.0])

    def baseline_term(e):
        result = np.zeros_like(logits)
        for s, a in zip(e[1], e[2], strict=True):
            score = -policy[s].copy()
            score[a] += 1.0
            result[s] -= baseline[s] * score
        return result

    def minus_q(e):
        result = np.zeros_like(logits)
        rewards = e[3]
        for t, (s, a) in enumerate(zip(e[1], e[2], strict=True)):
            score = -policy[s].copy()
            score[a] += 1.0
            result[s] += (sum(rewards[t:]) - q[s, a]) * score
        return result

    mean, _, _ = moments(episodes, baseline_term)
    np.testing.assert_allclose(mean, 0.0, atol=1e-12)
    mean, _, _ = moments(episodes, minus_q)
    np.testing.assert_allclose(mean, 0.0, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# Group baselines: bias measured by exact enumeration
# ---------------------------------------------------------------------------------------------

BANDIT_Q = np.array([0.2, 0.5, 1.0])
BANDIT_LOGITS = np.array([0.5, 0.3, -0.6])


def group_expectation(logits, q, size, advantage, joint=None):
    """E[(1/G) sum_i A_i (e_{a_i} - pi)] by enumeration; joint overrides independent draws."""
    pi = softmax_rows(logits)
    k = len(pi)
    total = np.zeros(k)
    for group in itertools.product(range(k), repeat=size):
        probability = np.prod(pi[list(group)]) if joint is None else joint[group]
        if probability == 0.0:
            continue
        adv = advantage(q[list(group)])
        for i, a in enumerate(group):
            total += probability * adv[i] * (np.eye(k)[a] - pi) / size
    return total


def scale_cosine(update, gradient):
    return (
        update @ gradient / (gradient @ gradient),
        update @ gradient / np.linalg.norm(update) / np.linalg.norm(gradient),
    )


def loo(r):
    return r - (r.sum() - r) / (len(r) - 1)


def with_self(r):
    return r - r.mean()


def standardised(ddof):
    def rule(r):
        centred = r - r.mean()
        if np.all(r == r[0]):
            return np.zeros_like(r)
        return centred / (np.sqrt(np.sum(centred**2) / (len(r) - ddof)) + 1e-6)

    return rule


def bandit_gradient():
    pi = softmax_rows(BANDIT_LOGITS)
    return pi * (BANDIT_Q - pi @ BANDIT_Q)


@pytest.mark.parametrize("size", [2, 3, 4, 5, 6])
def test_group_estimators_scale_and_direction(size):
    gradient = bandit_gradient()
    s, c = scale_cosine(group_expectation(BANDIT_LOGITS, BANDIT_Q, size, loo), gradient)
    assert s == pytest.approx(1.0, abs=1e-10) and c == pytest.approx(1.0, abs=1e-10)
    s, c = scale_cosine(group_expectation(BANDIT_LOGITS, BANDIT_Q, size, with_self), gradient)
    assert s == pytest.approx((size - 1) / size, abs=1e-10) and c == pytest.approx(1.0, abs=1e-10)
    s0, c0 = scale_cosine(
        group_expectation(BANDIT_LOGITS, BANDIT_Q, size, standardised(0)), gradient
    )
    s1, c1 = scale_cosine(
        group_expectation(BANDIT_LOGITS, BANDIT_Q, size, standardised(1)), gradient
    )
    assert c0 == pytest.approx(c1, abs=1e-6)  # ddof changes only the scale
    assert s1 == pytest.approx(s0 * np.sqrt((size - 1) / size), rel=1e-5)
    assert 0.95 < c0 < 0.99 and 2.0 < s0 < 3.35  # "2 to 3.3 times too long"
    library = policy_gradient.enumerate_group_gradient(
        BANDIT_LOGITS, BANDIT_Q, size, functools.partial(groups.group_normalized_advantages)
    )
    assert scale_cosine(library, gradient) == pytest.approx((s0, c0), abs=1e-6)


def test_grpo_printed_numbers_and_large_group_limit():
    gradient = bandit_gradient()
    s, c = scale_cosine(group_expectation(BANDIT_LOGITS, BANDIT_Q, 2, standardised(0)), gradient)
    assert (round(s, 3), round(c, 4)) == (2.048, 0.9583)
    s6, c6 = scale_cosine(group_expectation(BANDIT_LOGITS, BANDIT_Q, 6, standardised(0)), gradient)
    assert (round(s6, 3), round(c6, 4)) == (3.326, 0.9824)
    pi = softmax_rows(BANDIT_LOGITS)
    sigma = np.sqrt(pi @ (BANDIT_Q - pi @ BANDIT_Q) ** 2)
    assert 1 / sigma == pytest.approx(3.612, abs=5e-4)
    assert s6 < 1 / sigma  # still approaching the limit from below


@pytest.mark.parametrize(
    ("p", "printed"), [(0.05, 2.473), (0.2, 2.107), (0.5, 1.856), (0.8, 2.107), (0.95, 2.473)]
)
def test_binary_reward_factors(p, printed):
    logits = np.log([p, 1.0 - p])
    q = np.array([1.0, 0.0])
    gradient = p * (1 - p) * np.array([1.0, -1.0])
    s, c = scale_cosine(group_expectation(logits, q, 8, standardised(0)), gradient)
    assert s == pytest.approx(printed, abs=5e-4) and c == pytest.approx(1.0, abs=1e-12)
    s_loo, _ = scale_cosine(group_expectation(logits, q, 8, loo), gradient)
    assert s_loo == pytest.approx(1.0, abs=1e-10)


def antithetic_joint_by_grid(pi, cells=1_000_000):
    """P(a_1 = i, a_2 = j) for a_1 = F^-1(u), a_2 = F^-1(1 - u), from a fine grid of u."""
    u = (np.arange(cells) + 0.5) / cells
    edges = np.cumsum(pi)
    first = np.searchsorted(edges, u, side="right")
    second = np.searchsorted(edges, 1.0 - u, side="right")
    joint = np.zeros((len(pi), len(pi)))
    np.add.at(joint, (np.minimum(first, len(pi) - 1), np.minimum(second, len(pi) - 1)), 1.0)
    return joint / cells


def test_coupled_pairs():
    pi = softmax_rows(BANDIT_LOGITS)
    gradient = bandit_gradient()
    antithetic = antithetic_joint_by_grid(pi)
    np.testing.assert_allclose(antithetic.sum(axis=0), pi, atol=1e-5)  # exact marginals
    np.testing.assert_allclose(antithetic.sum(axis=1), pi, atol=1e-5)

    def plain(r):
        return r

    s, c = scale_cosine(group_expectation(BANDIT_LOGITS, BANDIT_Q, 2, plain, antithetic), gradient)
    assert s == pytest.approx(1.0, abs=1e-4) and c == pytest.approx(1.0, abs=1e-6)
    s, c = scale_cosine(group_expectation(BANDIT_LOGITS, BANDIT_Q, 2, loo, antithetic), gradient)
    assert (s, c) == pytest.approx((1.815, 0.9719), abs=1e-3)

    shared = np.diag(pi)
    np.testing.assert_allclose(
        group_expectation(BANDIT_LOGITS, BANDIT_Q, 2, loo, shared), 0.0, atol=1e-15
    )
    s, _ = scale_cosine(group_expectation(BANDIT_LOGITS, BANDIT_Q, 2, plain, shared), gradient)
    assert s == pytest.approx(1.0, abs=1e-12)

    without = np.array(
        [[0.0 if i == j else pi[i] * pi[j] / (1 - pi[i]) for j in range(3)] for i in range(3)]
    )
    assert not np.allclose(without.sum(axis=0), pi)
    s, c = scale_cosine(group_expectation(BANDIT_LOGITS, BANDIT_Q, 2, plain, without), gradient)
    assert (s, c) == pytest.approx((1.263, 0.9954), abs=1e-3)
    s, c = scale_cosine(group_expectation(BANDIT_LOGITS, BANDIT_Q, 2, loo, without), gradient)
    assert (s, c) == pytest.approx((1.590, 0.9972), abs=1e-3)


# ---------------------------------------------------------------------------------------------
# Section-19 invariant: a constant reward across independent actions teaches nothing
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("constant", [0.7, -3.0, 0.0])
def test_constant_reward_gives_zero_expected_centred_gradient(size, constant):
    rng = np.random.default_rng(size)
    logits = rng.normal(size=3)
    q = np.full(3, constant)
    rules = [
        groups.leave_one_out_advantages,
        lambda r: r - r.mean(),
        groups.group_normalized_advantages,
        functools.partial(groups.group_normalized_advantages, ddof=1),
    ]
    for rule in rules:
        library = policy_gradient.enumerate_group_gradient(logits, q, size, rule)
        np.testing.assert_allclose(library, 0.0, atol=1e-15)
        np.testing.assert_allclose(rule(q[:1].repeat(size)), 0.0, atol=1e-15)  # every sample
    # Without a baseline the expectation is zero too, but single samples are not.
    plain = group_expectation(logits, q, size, lambda r: r)
    np.testing.assert_allclose(plain, 0.0, atol=1e-14)


def test_constant_reward_in_the_conversation():
    logits = chapter_logits(2)
    # The ratings stay random, but every reply earns 1 whatever the rating.
    episodes = [(p, s, a, [1.0] * len(r)) for p, s, a, r in conversations(2, logits)]
    values = np.array([2.0, 1.0, 1.0, 0.0, 0.0])
    for e in episodes:
        np.testing.assert_allclose(
            estimate(logits, *e[1:], 1.0, "baseline", values), 0.0, atol=1e-15
        )
    mean, _, singles = moments(episodes, lambda e: estimate(logits, *e[1:], 1.0, "to-go"))
    np.testing.assert_allclose(mean, 0.0, atol=1e-15)
    assert np.abs(singles).max() == pytest.approx(1.0)
    transition, reward, terminal, _ = library_conversation(2)
    ones = np.ones_like(reward)
    library_values = mdp.state_values(transition, ones, softmax_rows(logits), 1.0, terminal)
    np.testing.assert_allclose(library_values, values, atol=1e-12)
