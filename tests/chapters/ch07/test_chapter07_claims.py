"""Claims made in chapter 7 (group and leave-one-out baselines), recomputed independently.

Each test rebuilds one number, identity or figure property that the chapter's text relies on,
by a route that shares no code with the library functions the chapter calls: group
advantages written out member by member with ``math.fsum``, binary groups through the closed
forms of chapter 3's solution (h(k) = k(N-k)/(N(N-1)) for RLOO, sqrt(k(N-k))/N for GRPO),
binomial sums with ``math.comb``, batches of two prompts and groups of episodes enumerated by
index arithmetic, episodes of the search task listed by ``tests.oracles.episodes_by_hand``,
values by a linear solve and the exact gradient by central differences of the enumerated
expected return.

Sections: the family and its identities (eq-rloo-identity, the invariance cell, groups of
one); binary rewards (eq-binomial-expectation, eq-dead-groups and fig-dead-groups, the std
and signal-to-noise tables, eq-difficulty-scale and fig-difficulty-scale, the two-prompt
batch, eq-grpo-decomposition and eq-loo-normalized); the search task (the estimator table,
eq-group-moments and fig-estimator-map); the check for understanding.
"""

from __future__ import annotations

import functools
import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from tests.oracles import central_differences, episodes_by_hand, softmax_rows

CHAPTER = Path(__file__).resolve().parents[3] / "chapters" / "07_group_baselines.md"

# ---------------------------------------------------------------------------------------------
# Group advantages written out member by member
# ---------------------------------------------------------------------------------------------


def std_by_hand(values, ddof=0):
    mean = math.fsum(values) / len(values)
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - ddof))


def rloo(group):
    return [
        r - math.fsum(group[:i] + group[i + 1 :]) / (len(group) - 1) for i, r in enumerate(group)
    ]


def centered(group):
    mean = math.fsum(group) / len(group)
    return [r - mean for r in group]


def grpo(group, eps=1e-6, ddof=0):
    if max(group) == min(group):
        return [0.0] * len(group)
    scale = std_by_hand(group, ddof) + eps
    return [a / scale for a in centered(group)]


def test_the_one_group_table_and_the_rloo_identity():
    group = [1.0, 0.0, 0.0, 0.5]
    np.testing.assert_allclose(rloo(group), [5 / 6, -0.5, -0.5, 1 / 6], atol=1e-15)
    np.testing.assert_allclose(centered(group), [0.625, -0.375, -0.375, 0.125], atol=1e-15)
    np.testing.assert_allclose(rloo(group), [4 / 3 * a for a in centered(group)], atol=1e-15)
    np.testing.assert_allclose(grpo(group), [1.5076, -0.9045, -0.9045, 0.3015], atol=5e-5)
    ratio = np.array(grpo(group, ddof=1)) / np.array(grpo(group))
    np.testing.assert_allclose(ratio, math.sqrt(3 / 4), rtol=1e-6)  # "to six digits"
    np.testing.assert_allclose(grpo(group, ddof=1), [1.3056, -0.7833, -0.7833, 0.2611], atol=5e-5)


def batch_scaled(batch, eps=1e-6):
    flat = [r for group in batch for r in group]
    scale = std_by_hand(flat) + eps
    return [[a / scale if max(g) > min(g) else 0.0 for a in centered(g)] for g in batch]


def test_the_invariance_cell():
    batch = [[1.0, 0.0, 0.0, 0.5], [0.2] * 4, [3.0, 5.0, 4.0, 4.0]]
    shifted = [[r + c for r in g] for g, c in zip(batch, (10.0, -1.0, 0.5), strict=True)]
    stretched = [[7.0 * r for r in g] for g in batch]
    forms = {
        "group": lambda b: [grpo(g) for g in b],
        "batch": batch_scaled,
        "none": lambda b: [centered(g) if max(g) > min(g) else [0.0] * 4 for g in b],
    }
    change = {
        name: [
            float(np.abs(np.array(form(other)) - np.array(form(batch))).max())
            for other in (shifted, stretched)
        ]
        for name, form in forms.items()
    }
    assert change["group"][0] < 1e-12 and 1e-7 < change["group"][1] < 1e-5  # eps at work
    assert change["batch"][0] == pytest.approx(0.33, abs=0.005)  # one group shifted: changes
    assert 1e-8 < change["batch"][1] < 1e-6
    assert change["none"][0] < 1e-12 and change["none"][1] == pytest.approx(6.0)
    assert all(abs(math.fsum(rloo(g))) < 1e-15 for g in batch)


def test_the_one_group_table_matches_the_library_calls_of_the_chapter():
    from rlfound import groups

    group = np.array([1.0, 0.0, 0.0, 0.5])
    np.testing.assert_allclose(groups.leave_one_out_advantages(group), rloo(list(group)))
    np.testing.assert_allclose(
        groups.group_normalized_advantages(group, ddof=1), grpo(list(group), ddof=1)
    )
    with pytest.raises(ValueError, match="at least 2 members per group"):
        groups.group_normalized_advantages([[0.7], [0.2]], scale=None)


# ---------------------------------------------------------------------------------------------
# Binary rewards
# ---------------------------------------------------------------------------------------------


def binomial(p, size):
    return [math.comb(size, k) * p**k * (1 - p) ** (size - k) for k in range(size + 1)]


def h_rloo(k, size):
    return k * (size - k) / (size * (size - 1))


def h_grpo(k, size, ddof=0):
    if k in (0, size):
        return 0.0
    return math.sqrt(k * (size - k)) / size * math.sqrt((size - ddof) / size)


def h_plain(k, size, p, baseline=0.0):
    # (1/N) sum_i (R_i - b) (e_{a_i} - pi)_0: k terms (1 - b)(1 - p), N - k terms (-b)(-p).
    return (k * (1 - baseline) * (1 - p) + (size - k) * baseline * p) / size


def moments(h, weights):
    mean = math.fsum(w * x for w, x in zip(weights, h, strict=True))
    return mean, math.fsum(w * x * x for w, x in zip(weights, h, strict=True)) - mean**2


def test_the_binomial_check_cell():
    weights = binomial(0.3, 6)
    expected = {
        "RLOO": ([h_rloo(k, 6) for k in range(7)], 0.210000, 0.017080),
        "Dr. GRPO": ([5 / 6 * h_rloo(k, 6) for k in range(7)], 0.175000, 0.011861),
        "GRPO, ddof 0": ([h_grpo(k, 6) for k in range(7)], 0.390021, 0.045765),
        "GRPO, ddof 1": ([h_grpo(k, 6, 1) for k in range(7)], 0.356039, 0.038138),
    }
    for h, mean, total in expected.values():
        m, v = moments(h, weights)
        assert m == pytest.approx(mean, abs=2e-6)  # eps = 1e-6 in the chapter
        assert 2 * v == pytest.approx(total, abs=2e-6)


def no_signal(p, size):
    return p**size + (1 - p) ** size


def test_groups_without_signal():
    table = {
        (0.01, 2): 0.980, (0.01, 64): 0.526, (0.05, 8): 0.663, (0.05, 16): 0.440,
        (0.05, 64): 0.038, (0.2, 4): 0.411, (0.2, 16): 0.028, (0.5, 4): 0.125, (0.5, 8): 0.008,
    }  # fmt: skip
    for (p, size), value in table.items():
        # Against the binomial weights of M = 0 and M = N.
        weights = binomial(p, size)
        assert weights[0] + weights[-1] == pytest.approx(value, abs=5e-4)
    assert min(n for n in range(2, 200) if no_signal(0.01, n) <= 0.5) == 69
    assert min(n for n in range(2, 200) if no_signal(0.05, n) <= 0.5) == 14
    grid = np.linspace(0.0, 1.0, 2001)
    for size in (2, 4, 8, 16, 64):  # fig-dead-groups: minimum 2^(1 - N) at p = 1/2
        values = no_signal(grid, size)
        assert values.min() == pytest.approx(2.0 ** (1 - size)) and grid[values.argmin()] == 0.5


def test_the_group_std_table():
    p, sigma = 0.2, 0.4
    rows = {2: (0.160, 0.226, 0.233, 0.680), 4: (0.265, 0.306, 0.223, 0.411),
            8: (0.337, 0.360, 0.162, 0.168), 16: (0.375, 0.388, 0.095, 0.028)}  # fmt: skip
    for size, (mean0, mean1, spread, zero) in rows.items():
        weights = binomial(p, size)
        std0 = [math.sqrt(k * (size - k)) / size for k in range(size + 1)]
        m0, v0 = moments(std0, weights)
        m1, _ = moments([s * math.sqrt(size / (size - 1)) for s in std0], weights)
        assert (m0, m1, math.sqrt(v0)) == pytest.approx((mean0, mean1, spread), abs=5e-4)
        assert weights[0] + weights[-1] == pytest.approx(zero, abs=5e-4)
        assert m1 < sigma  # "does not remove the downward bias"
    assert math.sqrt(p * (1 - p)) == pytest.approx(sigma)


def snr_table(p=0.2):
    table = {}
    for size in (2, 4, 8):
        weights = binomial(p, size)
        hs = {
            "RLOO": [h_rloo(k, size) for k in range(size + 1)],
            "Dr. GRPO": [(size - 1) / size * h_rloo(k, size) for k in range(size + 1)],
            "GRPO": [h_grpo(k, size) for k in range(size + 1)],
            "plain": [h_plain(k, size, p) for k in range(size + 1)],
            "oracle": [h_plain(k, size, p, baseline=p) for k in range(size + 1)],
        }
        for name, h in hs.items():
            mean, var = moments(h, weights)
            table[name, size] = (mean, math.sqrt(var), mean / math.sqrt(var))
    return table


def optimal_baseline(p):
    # eq-optimal-baseline: E[R |psi|^2] / E[|psi|^2] with |e_a - pi|^2 = 2 (1 - pi(a))^2, R = 1
    # on the correct action (probability p) and 0 on the other.
    weights = [p * 2 * (1 - p) ** 2, (1 - p) * 2 * p**2]
    return math.fsum([weights[0] * 1.0, weights[1] * 0.0]) / math.fsum(weights)


def test_the_optimal_baseline_row_has_zero_variance_and_the_oracle_is_not_the_best():
    # Erratum: the chapter said the oracle R - p "beats every unbiased rule" and that GRPO beats
    # it only because it estimates c(p, N) times the gradient. b* = 1 - p is unbiased with zero
    # variance at every N, and a constant factor does not change a signal-to-noise ratio.
    p = 0.2
    b_star = optimal_baseline(p)
    assert b_star == pytest.approx(1 - p, abs=1e-15)
    table = snr_table(p)
    for size in (2, 4, 8, 16):
        h = [h_plain(k, size, p, baseline=b_star) for k in range(size + 1)]
        np.testing.assert_allclose(h, p * (1 - p), atol=1e-15)  # every count gives the gradient
        weights = binomial(p, size)
        mean = math.fsum(w * x for w, x in zip(weights, h, strict=True))
        var = math.fsum(w * (x - mean) ** 2 for w, x in zip(weights, h, strict=True))
        assert mean == pytest.approx(p * (1 - p), abs=1e-15) and var < 1e-24
        oracle = moments([h_plain(k, size, p, baseline=p) for k in range(size + 1)], weights)
        oracle_snr = oracle[0] / math.sqrt(oracle[1])
        assert oracle_snr == pytest.approx(math.sqrt(size * p * (1 - p)) / abs(1 - 2 * p))
        if size in (2, 4, 8):
            assert table["oracle", size][2] == pytest.approx(oracle_snr)
    # A constant factor leaves the ratio unchanged, so c(p, N) cannot explain GRPO's lead.
    for c in (0.5, 2.1, 7.0):
        scaled = moments([c * h_rloo(k, 8) for k in range(9)], binomial(p, 8))
        assert scaled[0] / math.sqrt(scaled[1]) == pytest.approx(table["RLOO", 8][2])
    assert table["GRPO", 8][2] == pytest.approx(2.08, abs=5e-3)
    assert table["oracle", 8][2] == pytest.approx(1.89, abs=5e-3)
    assert [round(h_grpo(k, 8), 2) for k in range(4)] == [0.0, 0.33, 0.43, 0.48]
    # The oracle equals b* only at p = 1/2.
    assert optimal_baseline(0.5) == pytest.approx(0.5)
    text = " ".join(CHAPTER.read_text(encoding="utf-8").split())
    assert "beats every unbiased rule" not in text
    assert "only because it no longer estimates the gradient" not in text
    assert "$b^* = (1 - p) \\cdot 1 + p \\cdot 0 = 1 - p$" in text
    assert "has zero variance at every $N$" in text
    assert '"b* R_i - (1 - p)": lambda r: r - (1 - p)' in text


def test_the_signal_to_noise_table_and_its_four_observations():
    table = snr_table()
    printed = {
        ("RLOO", 2): (0.160, 0.233, 0.69), ("RLOO", 8): (0.160, 0.090, 1.78),
        ("Dr. GRPO", 2): (0.080, 0.117, 0.69), ("GRPO", 4): (0.265, 0.223, 1.19),
        ("GRPO", 8): (0.337, 0.162, 2.08), ("plain", 2): (0.160, 0.226, 0.71),
        ("plain", 4): (0.160, 0.160, 1.00), ("oracle", 2): (0.160, 0.170, 0.94),
        ("oracle", 8): (0.160, 0.085, 1.89),
    }  # fmt: skip
    for key, (mean, sd, ratio) in printed.items():
        assert table[key][0] == pytest.approx(mean, abs=5e-4)
        assert table[key][1] == pytest.approx(sd, abs=5e-4)
        assert table[key][2] == pytest.approx(ratio, abs=5e-3)
    for size in (2, 4, 8):
        assert table["Dr. GRPO", size][2] == pytest.approx(table["RLOO", size][2])
        assert table["oracle", size][2] > max(table["RLOO", size][2], table["plain", size][2])
    assert table["plain", 2][2] > table["RLOO", 2][2] == pytest.approx(table["GRPO", 2][2])
    assert table["RLOO", 4][2] > table["plain", 4][2] and table["RLOO", 8][2] > table["plain", 8][2]
    assert table["GRPO", 4][2] > table["RLOO", 4][2] and table["GRPO", 8][2] > table["RLOO", 8][2]
    assert table["GRPO", 8][2] > table["oracle", 8][2]


def grpo_factor(p, size):
    weights = binomial(p, size)
    return moments([h_grpo(k, size) for k in range(size + 1)], weights)[0] / (p * (1 - p))


@pytest.mark.equation("eq-difficulty-scale")
def test_the_difficulty_factors_and_fig_difficulty_scale():
    grid = np.linspace(0.01, 0.99, 99)
    printed = {3: (1.414, 1.414), 4: (1.616, 1.727), 8: (1.856, 2.609), 32: (1.968, 5.134)}
    for size, (low, high) in printed.items():
        factors = np.array([grpo_factor(p, size) for p in grid])
        assert factors.min() == pytest.approx(low, abs=5e-4)
        assert factors.max() == pytest.approx(high, abs=5e-4)
        assert factors[49] == pytest.approx(low, abs=5e-4)  # the minimum is at p = 0.5
    assert 1 / math.sqrt(0.01 * 0.99) == pytest.approx(10.050, abs=5e-4)
    assert grpo_factor(0.5, 3) == pytest.approx(math.sqrt(2)) == grpo_factor(0.05, 3)
    # One success among N gets the GRPO advantage sqrt(N - 1) (ddof 0).
    for size in (3, 4, 8, 16):
        assert grpo([1.0] + [0.0] * (size - 1), eps=0.0)[0] == pytest.approx(math.sqrt(size - 1))
    # Left panel: RLOO's length is the gradient's, sqrt(2) p (1 - p); GRPO above it.
    for p in (0.1, 0.5, 0.9):
        rloo_mean = moments([h_rloo(k, 8) for k in range(9)], binomial(p, 8))[0]
        assert rloo_mean == pytest.approx(p * (1 - p))
        assert grpo_factor(p, 8) * p * (1 - p) < math.sqrt(p * (1 - p))  # below the limit


def two_prompt_updates(scale, eps=1e-6, size=4):
    """Exact expected update (first entry) of prompts A and B normalized in one batch."""
    values = ((1.0, 0.0), (0.51, 0.50))
    updates = [0.0, 0.0]
    for code in range(2 ** (2 * size)):
        draws = [[(code >> (size * row + i)) & 1 for i in range(size)] for row in range(2)]
        batch = [[values[row][a] for a in draws[row]] for row in range(2)]
        if scale == "group":
            advantages = [grpo(g, eps) for g in batch]
        elif scale == "batch":
            advantages = batch_scaled(batch, eps)
        else:
            advantages = [centered(g) for g in batch]
        for row in range(2):
            score = [0.5 if a == 0 else -0.5 for a in draws[row]]
            term = math.fsum(x * y for x, y in zip(advantages[row], score, strict=True)) / size
            updates[row] += term / 2 ** (2 * size)
    return updates


@pytest.mark.parametrize(
    ("scale", "eps", "a", "b", "ratio"),
    [
        ("group", 1e-6, 0.4040, 0.4039, 0.9998),
        ("group", 1e-4, 0.4039, 0.3954, 0.9790),
        ("group", 0.01, 0.3954, 0.1279, 0.3235),
        ("batch", 1e-6, 0.5486, 0.0058, 0.0105),
        ("none", 0.0, 0.1875, 0.0019, 0.0100),
    ],
)
def test_the_two_prompt_batch(scale, eps, a, b, ratio):
    got_a, got_b = two_prompt_updates(scale, eps)
    assert (got_a, got_b) == pytest.approx((a, b), abs=5e-5)
    assert got_b / got_a == pytest.approx(ratio, abs=5e-5)


def bandit_group_expectation(logits, rewards, size, rule):
    """E[(1/N) sum_i A_i (e_{a_i} - pi)] over all K^N groups, by index arithmetic."""
    probs = softmax_rows(np.asarray(logits)[None, :])[0]
    k = len(probs)
    total = np.zeros(k)
    for code in range(k**size):
        group = [(code // k**i) % k for i in range(size)]
        weight = math.prod(probs[a] for a in group)
        adv = rule([float(rewards[a]) for a in group])
        for i, a in enumerate(group):
            total += weight * adv[i] * (np.eye(k)[a] - probs) / size
    return total


def loo_normalized(group, eps):
    out = []
    for i, r in enumerate(group):
        others = group[:i] + group[i + 1 :]
        if max(group) == min(group):
            out.append(0.0)
            continue
        out.append((r - math.fsum(others) / len(others)) / (std_by_hand(others) + eps))
    return out


@pytest.mark.parametrize(
    ("size", "eps", "grpo_scale", "grpo_cos", "loo_scale"),
    [
        (3, 1e-6, 2.769, 0.9614, 3.847e5),
        (4, 1e-4, 3.082, 0.9692, 1596),
        (6, 0.1, 2.313, 0.9930, 3.412),
    ],
)
def test_the_coupling_table(size, eps, grpo_scale, grpo_cos, loo_scale):
    logits, rewards = np.array([0.5, 0.3, -0.6]), np.array([0.2, 0.5, 1.0])
    gradient = central_differences(lambda t: float(softmax_rows(t[None, :])[0] @ rewards), logits)

    def scale_cos(update):
        return (
            update @ gradient / (gradient @ gradient),
            update @ gradient / (np.linalg.norm(update) * np.linalg.norm(gradient)),
        )

    s, c = scale_cos(
        bandit_group_expectation(logits, rewards, size, functools.partial(grpo, eps=eps))
    )
    assert (s, c) == pytest.approx((grpo_scale, grpo_cos), abs=6e-4)
    update = bandit_group_expectation(
        logits, rewards, size, functools.partial(loo_normalized, eps=eps)
    )
    s, c = scale_cos(update)
    assert s == pytest.approx(loo_scale, rel=5e-4)
    assert c == pytest.approx(1.0, abs=1e-9)  # "1 to every printed digit"


# ---------------------------------------------------------------------------------------------
# The search task and the estimator table
# ---------------------------------------------------------------------------------------------

TASK, GOOD, POOR, PASSED, FAILED = range(5)


def search_task():
    transition = np.zeros((5, 2, 5))
    reward = np.zeros((5, 2, 5))
    transition[TASK, 0, PASSED], transition[TASK, 0, FAILED] = 0.3, 0.7
    transition[TASK, 1, GOOD], transition[TASK, 1, POOR] = 0.6, 0.4
    for state, use, ignore in ((GOOD, 0.9, 0.3), (POOR, 0.2, 0.4)):
        transition[state, 0, PASSED], transition[state, 0, FAILED] = use, 1 - use
        transition[state, 1, PASSED], transition[state, 1, FAILED] = ignore, 1 - ignore
    for s in (TASK, GOOD, POOR):
        for a in (0, 1):
            reward[s, a, PASSED] = 1.0
    reward[TASK, 1, :] -= 0.1
    for s in (PASSED, FAILED):
        transition[s, :, s] = 1.0
    terminal = np.array([False, False, False, True, True])
    return transition, reward, terminal


LOGITS = np.array([[0.4, 0.0], [0.0, 0.5], [0.3, 0.0], [0.0, 0.0], [0.0, 0.0]])
CRITIC_ERROR = np.array([0.15, -0.2, 0.1, 0.0, 0.0])


def listed_episodes(logits):
    transition, reward, terminal = search_task()
    return episodes_by_hand(
        transition, reward, softmax_rows(logits), [1.0, 0, 0, 0, 0], 2, terminal
    )


def expected_return(flat_logits):
    logits = flat_logits.reshape(5, 2)
    return math.fsum(p * math.fsum(r) for p, _, _, r in listed_episodes(logits))


def values_by_solve():
    transition, reward, terminal = search_task()
    policy = softmax_rows(LOGITS)
    live = ~terminal
    p_pi = np.einsum("sa,sat->st", policy, transition)
    r_pi = np.einsum("sa,sat,sat->s", policy, transition, reward)
    v = np.zeros(5)
    v[live] = np.linalg.solve(np.eye(live.sum()) - p_pi[np.ix_(live, live)], r_pi[live])
    return v


def score_rows(states, actions, weights):
    """sum_t w_t e_{s_t} (x) (e_{a_t} - pi(. | s_t)), by loops."""
    policy = softmax_rows(LOGITS)
    out = np.zeros((5, 2))
    for t, a in enumerate(actions):
        for b in range(2):
            out[states[t], b] += weights[t] * ((1.0 if b == a else 0.0) - policy[states[t], b])
    return out.ravel()


@functools.cache
def estimator_table(size=4):
    listed = listed_episodes(LOGITS)
    v = values_by_solve()
    table = {}

    def single(weights_of):
        estimates = [score_rows(s, a, weights_of(s, a, r)) for _, s, a, r in listed]
        mean = sum(p * e for (p, *_), e in zip(listed, estimates, strict=True))
        second = math.fsum(p * float(e @ e) for (p, *_), e in zip(listed, estimates, strict=True))
        return mean, second - float(mean @ mean)

    def to_go(r):
        return [math.fsum(r[t:]) for t in range(len(r))]

    table["G_0"] = single(lambda s, a, r: [math.fsum(r)] * len(r))
    table["rtg"] = single(lambda s, a, r: to_go(r))
    for label, critic in (("exact", v), ("off", v + CRITIC_ERROR)):
        table[f"G-V {label}"] = single(
            lambda s, a, r, V=critic: [g - V[s[t]] for t, g in enumerate(to_go(r))]
        )
        deltas = lambda s, a, r, V=critic: [r[t] + V[s[t + 1]] - V[s[t]] for t in range(len(r))]  # noqa: E731
        table[f"TD {label}"] = single(deltas)

        def gae(s, a, r, V=critic, deltas=deltas):
            d = deltas(s, a, r, V)
            return [
                math.fsum(0.5 ** (k - t) * d[k] for k in range(t, len(d))) for t in range(len(d))
            ]

        table[f"GAE {label}"] = single(gae)
    table = {name: (mean, var, var / size) for name, (mean, var) in table.items()}

    returns = [math.fsum(r) for *_, r in listed]
    scores = [score_rows(s, a, [1.0] * len(a)) for _, s, a, _ in listed]
    probs = [p for p, *_ in listed]
    rules = {
        "RLOO": rloo,
        "GRPO": grpo,
        "Dr": lambda g: centered(g) if max(g) > min(g) else [0.0] * len(g),
    }
    for name, rule in rules.items():
        first = np.zeros(10)
        second = 0.0
        member_first = np.zeros((size, 10))
        member_second = 0.0
        for group in itertools.product(range(len(listed)), repeat=size):
            weight = math.prod(probs[j] for j in group)
            adv = rule([returns[j] for j in group])
            terms = [adv[i] * scores[j] for i, j in enumerate(group)]
            estimate = sum(terms) / size
            first += weight * estimate
            second += weight * float(estimate @ estimate)
            for i, term in enumerate(terms):
                member_first[i] += weight * term
                member_second += weight * float(term @ term)
        per_sample = (member_second - float(np.sum(member_first**2))) / size
        table[name] = (first, per_sample, second - float(first @ first))
    return table


def gradient():
    return central_differences(expected_return, LOGITS.ravel())


def test_the_task_has_ten_episodes_and_the_printed_values_and_gradient():
    listed = listed_episodes(LOGITS)
    assert len(listed) == 10 and math.fsum(p for p, *_ in listed) == pytest.approx(1.0)
    np.testing.assert_allclose(values_by_solve()[:3], [0.312, 0.5265, 0.2851], atol=5e-5)
    g = gradient().reshape(5, 2)
    np.testing.assert_allclose(g[:3, 0], [-0.0072, 0.0340, -0.0078], atol=5e-5)
    # "pushes toward searching and toward using a good lead"
    assert g[TASK, 1] > 0 and g[GOOD, 0] > 0
    assert np.linalg.norm(g) == pytest.approx(0.0503, abs=5e-5)


@pytest.mark.parametrize(
    ("name", "scale", "cosine", "bias", "per_sample", "per_batch"),
    [
        ("G_0", 1.0, 1.0, 0.0, 0.2398, 0.0600),
        ("rtg", 1.0, 1.0, 0.0, 0.2581, 0.0645),
        ("G-V exact", 1.0, 1.0, 0.0, 0.1529, 0.0382),
        ("TD exact", 1.0, 1.0, 0.0, 0.0864, 0.0216),
        ("GAE exact", 1.0, 1.0, 0.0, 0.1031, 0.0258),
        ("G-V off", 1.0, 1.0, 0.0, 0.1744, 0.0436),
        ("TD off", 0.891, 0.8598, 0.0272, 0.1118, 0.0280),
        ("GAE off", 0.945, 0.9630, 0.0136, 0.1247, 0.0312),
        ("RLOO", 1.0, 1.0, 0.0, 0.2091, 0.0525),
        ("GRPO", 1.573, 0.7174, 0.0821, 0.6949, 0.2164),
        ("Dr", 0.750, 1.0, 0.0126, 0.1176, 0.0295),
    ],
)
def test_the_estimator_table(name, scale, cosine, bias, per_sample, per_batch):
    g = gradient()
    mean, sample, batch = estimator_table()[name]
    assert mean @ g / (g @ g) == pytest.approx(scale, abs=6e-4)
    assert mean @ g / (np.linalg.norm(mean) * np.linalg.norm(g)) == pytest.approx(cosine, abs=6e-5)
    assert np.linalg.norm(mean - g) == pytest.approx(bias, abs=6e-5)
    assert sample == pytest.approx(per_sample, abs=6e-5)
    assert batch == pytest.approx(per_batch, abs=6e-5)


def test_the_observations_on_the_estimator_table():
    table = estimator_table()
    g = gradient()

    def unit(name):
        mean, _, batch = table[name]
        return batch / (mean @ g / (g @ g)) ** 2

    assert table["rtg"][1] > table["G_0"][1]  # the reward-to-go is a little noisier here
    assert table["G-V off"][1] > table["G-V exact"][1]  # the critic's error costs variance
    bias = {n: np.linalg.norm(table[n][0] - g) for n in ("TD off", "GAE off")}
    assert bias["GAE off"] < bias["TD off"]  # less bias for the larger lambda
    assert table["G-V exact"][2] < table["RLOO"][2] < table["G_0"][2]
    assert table["G-V off"][2] < table["RLOO"][2]
    assert table["Dr"][2] == pytest.approx(0.75**2 * table["RLOO"][2])
    assert unit("Dr") == pytest.approx(unit("RLOO"))
    assert unit("GRPO") == pytest.approx(0.0875, abs=5e-5)
    assert unit("GRPO") == max(unit(name) for name in table)  # the noisiest at unit scale
    assert min(table, key=lambda n: table[n][2]) == "TD exact"
    returns = sorted({round(math.fsum(r), 10) for *_, r in listed_episodes(LOGITS)})
    assert returns == [-0.1, 0.0, 0.9, 1.0]


def test_eq_group_moments_splits_the_batch_variance():
    # tr Cov of the group mean = per-sample / N + (N - 1)/N cross-covariance; the
    # cross-covariance is 0 for independent single-episode terms and not for a group baseline.
    table = estimator_table()
    for name in ("RLOO", "GRPO", "Dr"):
        _, per_sample, per_batch = table[name]
        assert abs(per_batch - per_sample / 4) > 1e-4


def test_the_check_for_understanding():
    advantage = 0.5 / (math.sqrt(0.5) + 1e-4)
    assert advantage == pytest.approx(0.7070, abs=5e-5)
    np.testing.assert_allclose(grpo([1.0, 0.0], eps=1e-4, ddof=1), [advantage, -advantage])
    assert rloo([1.0, 0.0]) == [1.0, -1.0]
