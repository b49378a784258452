"""Bad input fails loudly: a ValueError whose message starts with the offending argument's name."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlfound import advantages as adv
from rlfound import importance as imp
from rlfound import mdp
from rlfound import policy_gradient as pg
from rlfound import returns as ret

NAN = math.nan
INF = math.inf

R = np.array([1.0, 0.0, 2.0])
V = np.array([0.5, 1.0, 0.0, 0.3])
P = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
RW = np.array([0.0, 1.0, 0.0])
TERMINAL = np.array([False, False, True])
LOGITS = np.array([0.1, -0.2, 0.3])
Q = np.array([0.2, 0.5, 1.0])
PI = np.array([0.25, 0.75])
B = np.array([0.8, 0.2])


def with_nan(array, index):
    out = np.array(array, dtype=np.float64)
    out[index] = NAN
    return out


# --- gamma and lam --------------------------------------------------------------------------

GAMMA_CALLS = {
    "discounted_returns": lambda g: ret.discounted_returns(R, g),
    "evaluate_policy": lambda g: mdp.evaluate_policy(P, RW, g, terminal=TERMINAL),
    "tiny_chain": lambda g: mdp.tiny_chain(g),
    "bellman_residual": lambda g: mdp.bellman_residual(np.array([0.9, 1.0, 0.0]), P, RW, g),
    "td_errors": lambda g: adv.td_errors(R, V, g),
    "k_step_advantages": lambda g: adv.k_step_advantages(R, V, g, 2),
    "gae_recursive": lambda g: adv.gae_recursive(R, V, g, 0.5),
    "gae_explicit": lambda g: adv.gae_explicit(R, V, g, 0.5),
}
LAM_CALLS = {
    "gae_recursive": lambda lam: adv.gae_recursive(R, V, 0.9, lam),
    "gae_explicit": lambda lam: adv.gae_explicit(R, V, 0.9, lam),
}
BAD_UNIT = [-0.1, 1.5, NAN, INF]


@pytest.mark.parametrize("bad", BAD_UNIT, ids=str)
@pytest.mark.parametrize("call", GAMMA_CALLS.values(), ids=GAMMA_CALLS.keys())
def test_gamma_outside_unit_interval(call, bad):
    with pytest.raises(ValueError, match=r"^gamma") as info:
        call(bad)
    assert str(bad) in str(info.value)  # says what was given


@pytest.mark.parametrize("bad", BAD_UNIT, ids=str)
@pytest.mark.parametrize("call", LAM_CALLS.values(), ids=LAM_CALLS.keys())
def test_lam_outside_unit_interval(call, bad):
    with pytest.raises(ValueError, match=r"^lam") as info:
        call(bad)
    assert str(bad) in str(info.value)


@pytest.mark.parametrize("good", [0.0, 1.0, np.float64(0.5)], ids=str)
@pytest.mark.parametrize("call", [*GAMMA_CALLS.values(), *LAM_CALLS.values()])
def test_unit_interval_end_points_are_accepted(call, good):
    assert np.all(np.isfinite(call(good)))


# --- everything else ------------------------------------------------------------------------

CASES = [
    # returns
    pytest.param(lambda: ret.discounted_returns([1.0, NAN, 2.0], 0.9), r"^rewards", id="ret-nan"),
    pytest.param(lambda: ret.discounted_returns([1.0, INF], 0.9), r"^rewards", id="ret-inf"),
    pytest.param(lambda: ret.discounted_returns(["a", "b"], 0.9), r"^rewards", id="ret-str"),
    pytest.param(lambda: ret.discounted_returns(1.0, 0.9), r"^rewards", id="ret-scalar"),
    # mdp: transition
    pytest.param(
        lambda: mdp.evaluate_policy(np.full((2, 3), 1 / 3), [0.0, 0.0], 0.9),
        r"^transition",
        id="P-not-square",
    ),
    pytest.param(
        lambda: mdp.evaluate_policy(np.array([0.5, 0.5]), [0.0, 0.0], 0.9),
        r"^transition",
        id="P-1d",
    ),
    pytest.param(
        lambda: mdp.evaluate_policy(np.array([[0.5, 0.4], [0.0, 1.0]]), [0.0, 0.0], 0.9),
        r"^transition",
        id="P-row-sum",
    ),
    pytest.param(
        lambda: mdp.evaluate_policy(np.array([[1.5, -0.5], [0.0, 1.0]]), [0.0, 0.0], 0.9),
        r"^transition",
        id="P-negative",
    ),
    pytest.param(
        lambda: mdp.evaluate_policy(with_nan(P, (0, 0)), RW, 0.9), r"^transition", id="P-nan"
    ),
    pytest.param(
        lambda: mdp.bellman_residual(np.zeros(2), np.array([[0.5, 0.4], [0, 1]]), [0, 0], 0.9),
        r"^transition",
        id="residual-P-row-sum",
    ),
    # mdp: reward, terminal, values
    pytest.param(lambda: mdp.evaluate_policy(P, [0.0, 1.0], 0.9), r"^reward", id="r-length"),
    pytest.param(lambda: mdp.evaluate_policy(P, with_nan(RW, 1), 0.9), r"^reward", id="r-nan"),
    pytest.param(lambda: mdp.evaluate_policy(P, np.ones((3, 1)), 0.9), r"^reward", id="r-2d"),
    pytest.param(
        lambda: mdp.evaluate_policy(P, RW, 0.9, terminal=np.array([True, False])),
        r"^terminal",
        id="terminal-shape",
    ),
    pytest.param(
        lambda: mdp.bellman_residual(np.zeros(2), P, RW, 0.9), r"^values", id="residual-v-length"
    ),
    pytest.param(
        lambda: mdp.bellman_residual(with_nan(np.zeros(3), 2), P, RW, 0.9),
        r"^values",
        id="residual-v-nan",
    ),
    pytest.param(
        lambda: mdp.bellman_residual(np.zeros(3), P, [0.0, 1.0], 0.9),
        r"^reward",
        id="residual-r-length",
    ),
    # policy gradient: logits
    pytest.param(lambda: pg.softmax(with_nan(LOGITS, 1)), r"^logits", id="softmax-nan"),
    pytest.param(lambda: pg.softmax(np.array([1.0, INF])), r"^logits", id="softmax-inf"),
    pytest.param(lambda: pg.log_softmax(with_nan(LOGITS, 0)), r"^logits", id="log-softmax-nan"),
    pytest.param(lambda: pg.categorical_score(np.zeros((2, 3)), 0), r"^logits", id="score-2d"),
    pytest.param(lambda: pg.categorical_score(with_nan(LOGITS, 2), 0), r"^logits", id="score-nan"),
    pytest.param(lambda: pg.bandit_objective(np.zeros((2, 3)), Q), r"^logits", id="J-2d"),
    pytest.param(lambda: pg.exact_bandit_gradient(np.zeros((1, 3)), Q), r"^logits", id="grad-2d"),
    pytest.param(
        lambda: pg.exact_bandit_gradient(with_nan(LOGITS, 0), Q), r"^logits", id="grad-nan"
    ),
    pytest.param(
        lambda: pg.reinforce_gradient_estimate(np.zeros((2, 3)), [0, 1], [1.0, 0.0]),
        r"^logits",
        id="estimate-2d",
    ),
    # policy gradient: actions
    pytest.param(lambda: pg.categorical_score(LOGITS, 3), r"^action", id="score-action-high"),
    pytest.param(lambda: pg.categorical_score(LOGITS, -1), r"^action", id="score-action-neg"),
    pytest.param(lambda: pg.categorical_score(LOGITS, 1.5), r"^action", id="score-action-float"),
    pytest.param(
        lambda: pg.reinforce_gradient_estimate(LOGITS, [0, 3], [1.0, 0.0]),
        r"^actions",
        id="estimate-action-high",
    ),
    pytest.param(
        lambda: pg.reinforce_gradient_estimate(LOGITS, [0, -1], [1.0, 0.0]),
        r"^actions",
        id="estimate-action-neg",
    ),
    pytest.param(
        lambda: pg.reinforce_gradient_estimate(LOGITS, [0.5, 1.0], [1.0, 0.0]),
        r"^actions",
        id="estimate-action-float",
    ),
    # policy gradient: rewards, action values, baselines
    pytest.param(
        lambda: pg.reinforce_gradient_estimate(LOGITS, [0, 1], [1.0, 0.0, 2.0]),
        r"^(rewards|actions)",
        id="estimate-length",
    ),
    pytest.param(
        lambda: pg.reinforce_gradient_estimate(LOGITS, [0, 1], [1.0, NAN]),
        r"^rewards",
        id="estimate-rewards-nan",
    ),
    pytest.param(
        lambda: pg.reinforce_gradient_estimate(LOGITS, [0, 1], [1.0, 0.0], np.zeros(3)),
        r"^baseline",
        id="estimate-baseline-shape",
    ),
    pytest.param(
        lambda: pg.reinforce_gradient_estimate(LOGITS, [0, 1], [1.0, 0.0], NAN),
        r"^baseline",
        id="estimate-baseline-nan",
    ),
    pytest.param(
        lambda: pg.bandit_objective(LOGITS, [0.2, 0.5]),
        r"^(action_values|logits)",
        id="J-length",
    ),
    pytest.param(
        lambda: pg.exact_bandit_gradient(LOGITS, [0.2, 0.5]),
        r"^(action_values|logits)",
        id="grad-length",
    ),
    pytest.param(
        lambda: pg.exact_bandit_gradient(LOGITS, with_nan(Q, 1)),
        r"^action_values",
        id="grad-q-nan",
    ),
    # REINFORCE loop
    pytest.param(lambda: pg.reinforce_bandit(Q, steps=0), r"^steps", id="bandit-steps-0"),
    pytest.param(lambda: pg.reinforce_bandit(Q, steps=-3), r"^steps", id="bandit-steps-neg"),
    pytest.param(lambda: pg.reinforce_bandit(Q, steps=2.5), r"^steps", id="bandit-steps-float"),
    pytest.param(lambda: pg.reinforce_bandit(Q, batch_size=0), r"^batch_size", id="bandit-batch-0"),
    pytest.param(lambda: pg.reinforce_bandit_history(Q, steps=0), r"^steps", id="history-steps-0"),
    pytest.param(
        lambda: pg.reinforce_bandit_history(Q, batch_size=-1),
        r"^batch_size",
        id="history-batch-neg",
    ),
    pytest.param(lambda: pg.reinforce_bandit(Q, lr=0.0), r"^lr", id="bandit-lr-0"),
    pytest.param(lambda: pg.reinforce_bandit_history(Q, lr=-0.1), r"^lr", id="history-lr-neg"),
    pytest.param(
        lambda: pg.reinforce_bandit(Q, baseline="median"), r"^baseline", id="bandit-baseline"
    ),
    pytest.param(
        lambda: pg.reinforce_bandit_history(Q, baseline="mean_of_others"),
        r"^baseline",
        id="history-baseline",
    ),
    pytest.param(lambda: pg.reinforce_bandit(with_nan(Q, 0)), r"^action_values", id="bandit-q-nan"),
    pytest.param(lambda: pg.reinforce_bandit(np.ones((2, 3))), r"^action_values", id="bandit-q-2d"),
    # importance sampling: support
    pytest.param(
        lambda: imp.importance_ratios([0, 1], [0.5, 0.5], [1.0, 0.0]),
        r"^behavior_probs",
        id="ratios-support",
    ),
    pytest.param(
        lambda: imp.off_policy_value([1], [1.0], [0.5, 0.5], [1.0, 0.0]),
        r"^behavior_probs",
        id="ois-support",
    ),
    pytest.param(
        lambda: imp.weighted_off_policy_value([1], [1.0], [0.5, 0.5], [1.0, 0.0]),
        r"^behavior_probs",
        id="wis-support",
    ),
    pytest.param(
        lambda: imp.importance_sampling_variance([0.5, 0.5], [1.0, 0.0], [1.0, 1.0]),
        r"^behavior_probs",
        id="variance-support",
    ),
    # importance sampling: distributions
    pytest.param(lambda: imp.importance_ratios([0], [0.5, 0.6], B), r"^target_probs", id="pi-sum"),
    pytest.param(
        lambda: imp.importance_ratios([0], [1.2, -0.2], B), r"^target_probs", id="pi-negative"
    ),
    pytest.param(
        lambda: imp.off_policy_value([0], [1.0], PI, [0.7, 0.2]),
        r"^behavior_probs",
        id="b-sum",
    ),
    pytest.param(
        lambda: imp.weighted_off_policy_value([0], [1.0], PI, [1.1, -0.1]),
        r"^behavior_probs",
        id="b-negative",
    ),
    pytest.param(
        lambda: imp.importance_ratios([0], PI, with_nan(B, 1)), r"^behavior_probs", id="b-nan"
    ),
    pytest.param(
        lambda: imp.importance_ratios([0], [0.2, 0.3, 0.5], B),
        r"^(target_probs|behavior_probs)",
        id="pi-b-length",
    ),
    pytest.param(
        lambda: imp.importance_sampling_variance([0.5, 0.6], B, [1.0, 3.0]),
        r"^target_probs",
        id="variance-pi-sum",
    ),
    # importance sampling: actions and rewards
    pytest.param(lambda: imp.importance_ratios([2], PI, B), r"^actions", id="is-action-high"),
    pytest.param(lambda: imp.importance_ratios([-1], PI, B), r"^actions", id="is-action-neg"),
    pytest.param(lambda: imp.importance_ratios([0.5], PI, B), r"^actions", id="is-action-float"),
    pytest.param(
        lambda: imp.off_policy_value([0, 1], [1.0, NAN], PI, B), r"^rewards", id="ois-nan"
    ),
    pytest.param(
        lambda: imp.off_policy_value([0, 1], [1.0], PI, B),
        r"^(rewards|actions)",
        id="ois-length",
    ),
    pytest.param(
        lambda: imp.weighted_off_policy_value([0, 1], [1.0, 2.0, 3.0], PI, B),
        r"^(rewards|actions)",
        id="wis-length",
    ),
    pytest.param(
        lambda: imp.importance_sampling_variance(PI, B, [1.0, 3.0, 5.0]),
        r"^rewards",
        id="variance-rewards-length",
    ),
    pytest.param(
        lambda: imp.importance_sampling_variance(PI, B, [1.0, INF]),
        r"^rewards",
        id="variance-rewards-inf",
    ),
    # effective sample size
    pytest.param(lambda: imp.effective_sample_size([1.0, -0.5]), r"^weights", id="ess-neg"),
    pytest.param(lambda: imp.effective_sample_size([0.0, 0.0]), r"^weights", id="ess-zero"),
    pytest.param(lambda: imp.effective_sample_size([1.0, NAN]), r"^weights", id="ess-nan"),
    # advantages: values shape
    pytest.param(lambda: adv.td_errors(R, V[:-1], 0.9), r"^values", id="td-values-T"),
    pytest.param(lambda: adv.td_errors(R, np.append(V, 0.0), 0.9), r"^values", id="td-values-T+2"),
    pytest.param(lambda: adv.k_step_advantages(R, V[:-1], 0.9, 2), r"^values", id="kstep-values-T"),
    pytest.param(lambda: adv.gae_recursive(R, V[:-1], 0.9, 0.5), r"^values", id="gae-rec-values-T"),
    pytest.param(lambda: adv.gae_explicit(R, V[:-1], 0.9, 0.5), r"^values", id="gae-exp-values-T"),
    pytest.param(
        lambda: adv.gae_recursive(np.zeros((2, 3)), np.zeros((1, 4)), 0.9, 0.5),
        r"^values",
        id="gae-values-broadcast",
    ),
    pytest.param(
        lambda: adv.gae_explicit(np.zeros((2, 3)), np.zeros(4), 0.9, 0.5),
        r"^values",
        id="gae-values-missing-batch",
    ),
    # advantages: finiteness
    pytest.param(lambda: adv.td_errors(with_nan(R, 2), V, 0.9), r"^rewards", id="td-r-nan"),
    pytest.param(lambda: adv.td_errors(R, with_nan(V, 3), 0.9), r"^values", id="td-v-nan"),
    pytest.param(
        lambda: adv.gae_recursive(R, np.array([0.0, INF, 0.0, 0.0]), 0.9, 0.5),
        r"^values",
        id="gae-rec-v-inf",
    ),
    pytest.param(
        lambda: adv.gae_explicit(with_nan(R, 0), V, 0.9, 0.5), r"^rewards", id="gae-exp-r-nan"
    ),
    pytest.param(
        lambda: adv.k_step_advantages(with_nan(R, 1), V, 0.9, 2), r"^rewards", id="kstep-r-nan"
    ),
    # advantages: k
    pytest.param(lambda: adv.k_step_advantages(R, V, 0.9, 0), r"^k", id="k-0"),
    pytest.param(lambda: adv.k_step_advantages(R, V, 0.9, -2), r"^k", id="k-neg"),
    pytest.param(lambda: adv.k_step_advantages(R, V, 0.9, 1.5), r"^k", id="k-float"),
]


@pytest.mark.parametrize(("call", "pattern"), CASES)
def test_bad_input_raises_value_error_naming_the_argument(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: ret.discounted_returns([1.0, NAN, 2.0], 0.9), "rewards"),
        (lambda: adv.td_errors(R, with_nan(V, 3), 0.9), "values"),
        (lambda: pg.softmax(with_nan(LOGITS, 1)), "logits"),
    ],
    ids=["rewards", "values", "logits"],
)
def test_non_finite_message_says_finite(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b.*finite"):
        call()
