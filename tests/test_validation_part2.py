"""Part II bad input fails loudly: a ValueError whose message starts with the argument's name."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlfound import advantages as adv
from rlfound import groups as grp
from rlfound import mdp
from rlfound import policy_gradient as pg
from rlfound import returns as ret
from rlfound import tokens as tok

NAN = math.nan
INF = math.inf

# A two-state, two-action MDP; state 1 is terminal.
P = np.zeros((2, 2, 2))
P[0, 0] = [0.5, 0.5]
P[0, 1] = [0.0, 1.0]
P[1, :, 1] = 1.0
RW = np.zeros((2, 2, 2))
RW[0, 1, 1] = 1.0
PI = np.full((2, 2), 0.5)
TERM = np.array([False, True])
RHO = np.array([1.0, 0.0])
LOGITS2 = np.zeros((2, 2))
OBS = np.array([[0.9, 0.1], [0.2, 0.8]])
BELIEF = np.array([0.5, 0.5])

# Token arrays: batch 2, length 3, vocabulary 4.
TOKEN_LOGITS = np.zeros((2, 3, 4))
TOKENS = np.array([[0, 1, 2], [3, 3, 0]])
LOGPROBS = np.log(np.full((2, 3), 0.25))
TABLE = np.zeros((5, 4))

# A batch for GAE: two streams of four steps.
R4 = np.ones((2, 4))
V4 = np.zeros((2, 4))
NO = np.zeros((2, 4), dtype=bool)


def with_value(array, index, value):
    out = np.array(array, dtype=np.float64)
    out[index] = value
    return out


def bad_rows(array):
    """The first row no longer sums to 1."""
    out = np.array(array, dtype=np.float64)
    out[(0,) * (out.ndim - 1)] *= 0.5
    return out


def gae(**changes):
    args = {
        "rewards": R4,
        "values": V4,
        "next_values": V4,
        "terminated": NO,
        "truncated": NO,
        "gamma": 0.9,
        "lam": 0.95,
    }
    args.update(changes)
    return adv.batched_gae(**args)


def batched_returns(**changes):
    args = {"rewards": R4, "terminated": NO, "truncated": NO, "gamma": 0.9, "next_values": V4}
    args.update(changes)
    return ret.batched_discounted_returns(**args)


BOTH = NO.copy()
BOTH[1, 2] = True

CASES = [
    # --- tabular MDP arrays ---------------------------------------------------------------------
    pytest.param(lambda: mdp.state_values(P[:, :, :1], RW, PI, 0.9), r"^transition", id="P-shape"),
    pytest.param(lambda: mdp.state_values(P[0], RW, PI, 0.9), r"^transition", id="P-2d"),
    pytest.param(lambda: mdp.state_values(bad_rows(P), RW, PI, 0.9), r"^transition", id="P-rows"),
    pytest.param(
        lambda: mdp.state_values(with_value(P, (0, 0, 0), -0.5), RW, PI, 0.9),
        r"^transition",
        id="P-negative",
    ),
    pytest.param(
        lambda: mdp.state_values(with_value(P, (0, 1, 0), NAN), RW, PI, 0.9),
        r"^transition",
        id="P-nan",
    ),
    pytest.param(
        lambda: mdp.policy_transition_and_reward(bad_rows(P), RW, PI),
        r"^transition",
        id="averages-P-rows",
    ),
    pytest.param(lambda: mdp.state_values(P, RW[:, :, 0], PI, 0.9), r"^reward", id="R-shape"),
    pytest.param(
        lambda: mdp.action_values(P, with_value(RW, (0, 0, 0), INF), PI, 0.9),
        r"^reward",
        id="R-inf",
    ),
    pytest.param(lambda: mdp.state_values(P, RW, PI[:1], 0.9), r"^policy", id="pi-shape"),
    pytest.param(lambda: mdp.state_values(P, RW, bad_rows(PI), 0.9), r"^policy", id="pi-rows"),
    pytest.param(
        lambda: mdp.advantage_values(P, RW, [[1.5, -0.5], [0.5, 0.5]], 0.9),
        r"^policy",
        id="pi-negative",
    ),
    pytest.param(
        lambda: mdp.policy_transition_and_reward(P, RW, bad_rows(PI)),
        r"^policy",
        id="averages-pi-rows",
    ),
    pytest.param(
        lambda: mdp.state_values(P, RW, PI, 0.9, terminal=[0, 1]), r"^terminal", id="term-dtype"
    ),
    pytest.param(
        lambda: mdp.action_values(P, RW, PI, 0.9, terminal=np.array([True])),
        r"^terminal",
        id="term-shape",
    ),
    pytest.param(lambda: mdp.state_values(P, RW, PI, 1.5, TERM), r"^gamma", id="V-gamma"),
    pytest.param(lambda: mdp.action_values(P, RW, PI, -0.1, TERM), r"^gamma", id="Q-gamma"),
    pytest.param(lambda: mdp.advantage_values(P, RW, PI, NAN, TERM), r"^gamma", id="A-gamma"),
    pytest.param(lambda: mdp.state_values(P, RW, PI, 1.0), r"^gamma", id="V-gamma-one-never-ends"),
    # --- episodes -------------------------------------------------------------------------------
    pytest.param(
        lambda: mdp.sample_episodes(P, RW, PI, [0.5, 0.6], 3, terminal=TERM),
        r"^initial",
        id="sample-initial-sum",
    ),
    pytest.param(
        lambda: mdp.sample_episodes(P, RW, PI, [1.0, 0.0, 0.0], 3, terminal=TERM),
        r"^initial",
        id="sample-initial-shape",
    ),
    pytest.param(
        lambda: mdp.sample_episodes(P, RW, PI, RHO, 0, terminal=TERM), r"^horizon", id="H-0"
    ),
    pytest.param(
        lambda: mdp.sample_episodes(P, RW, PI, RHO, 2.5, terminal=TERM), r"^horizon", id="H-float"
    ),
    pytest.param(
        lambda: mdp.sample_episodes(P, RW, PI, RHO, 3, seed=-1, terminal=TERM),
        r"^seed",
        id="seed-neg",
    ),
    pytest.param(
        lambda: mdp.sample_episodes(P, RW, PI, RHO, 3, num_episodes=0, terminal=TERM),
        r"^num_episodes",
        id="episodes-0",
    ),
    pytest.param(
        lambda: mdp.sample_episodes(bad_rows(P), RW, PI, RHO, 3), r"^transition", id="sample-P"
    ),
    pytest.param(
        lambda: mdp.enumerate_episodes(P, RW, bad_rows(PI), RHO, 3), r"^policy", id="enum-pi"
    ),
    pytest.param(
        lambda: mdp.enumerate_episodes(P, RW, PI, [0.2, 0.2], 3), r"^initial", id="enum-initial"
    ),
    pytest.param(
        lambda: mdp.enumerate_episodes(
            np.full((4, 4, 4), 0.25),
            np.zeros((4, 4, 4)),
            np.full((4, 4), 0.25),
            np.full(4, 0.25),
            6,
        ),
        r"^horizon",
        id="enum-too-large",
    ),
    # --- beliefs --------------------------------------------------------------------------------
    pytest.param(
        lambda: mdp.belief_update(BELIEF, 0, 0, bad_rows(P), OBS), r"^transition", id="b-P-rows"
    ),
    pytest.param(
        lambda: mdp.belief_update(BELIEF, 0, 0, P, bad_rows(OBS)),
        r"^observation_model",
        id="b-O-rows",
    ),
    pytest.param(
        lambda: mdp.belief_update(BELIEF, 0, 0, P, OBS[:1]), r"^observation_model", id="b-O-shape"
    ),
    pytest.param(
        lambda: mdp.belief_update([0.5, 0.6], 0, 0, P, OBS), r"^belief", id="b-belief-sum"
    ),
    pytest.param(
        lambda: mdp.belief_update([1.0, 0.0, 0.0], 0, 0, P, OBS), r"^belief", id="b-belief-shape"
    ),
    pytest.param(lambda: mdp.belief_update(BELIEF, 2, 0, P, OBS), r"^action", id="b-action"),
    pytest.param(
        lambda: mdp.belief_update(BELIEF, 0, 2, P, OBS), r"^observation", id="b-observation"
    ),
    pytest.param(
        lambda: mdp.belief_update([1.0, 0.0], 1, 0, P, np.eye(2)),
        r"^observation\b",
        id="b-impossible-observation",
    ),
    pytest.param(lambda: mdp.belief_filter([0.5, 0.6], [0], [0], P, OBS), r"^prior", id="f-prior"),
    pytest.param(
        lambda: mdp.belief_filter(BELIEF, [0, 1], [0], P, OBS), r"^observations", id="f-lengths"
    ),
    pytest.param(
        lambda: mdp.belief_filter(BELIEF, [0, 3], [0, 0], P, OBS), r"^actions", id="f-actions"
    ),
    pytest.param(
        lambda: mdp.belief_filter(BELIEF, [0], [5], P, OBS), r"^observations", id="f-obs-range"
    ),
    pytest.param(
        lambda: mdp.belief_filter(BELIEF, [0], [0], P, OBS, initial_observation=2),
        r"^initial_observation",
        id="f-initial-range",
    ),
    pytest.param(
        lambda: mdp.belief_filter([1.0, 0.0], [0, 0], [0, 1], np.eye(2)[:, None, :], np.eye(2)),
        r"^observations",
        id="f-impossible",
    ),
    pytest.param(
        lambda: mdp.belief_by_enumeration(BELIEF, [0] * 20, [0] * 20, P, OBS),
        r"^observations",
        id="enum-belief-too-large",
    ),
    pytest.param(
        lambda: mdp.belief_by_enumeration(BELIEF, [0], [0, 1], P, OBS),
        r"^observations",
        id="enum-belief-lengths",
    ),
    # --- tokens ---------------------------------------------------------------------------------
    pytest.param(lambda: tok.enumerate_sequences(0, 2), r"^vocab_size", id="enum-V-0"),
    pytest.param(lambda: tok.enumerate_sequences(2, -1), r"^length", id="enum-L-neg"),
    pytest.param(lambda: tok.enumerate_sequences(10, 7), r"^length", id="enum-too-large"),
    pytest.param(lambda: tok.token_logprobs(np.zeros(4), [0]), r"^logits", id="tlp-1d"),
    pytest.param(
        lambda: tok.token_logprobs(with_value(TOKEN_LOGITS, (0, 0, 0), NAN), TOKENS),
        r"^logits",
        id="tlp-nan",
    ),
    pytest.param(
        lambda: tok.token_logprobs(TOKEN_LOGITS, TOKENS[:, :2]), r"^tokens", id="tlp-shape"
    ),
    pytest.param(
        lambda: tok.token_logprobs(TOKEN_LOGITS, TOKENS + 1), r"^tokens", id="tlp-out-of-range"
    ),
    pytest.param(
        lambda: tok.token_logprobs(TOKEN_LOGITS, TOKENS - 1), r"^tokens", id="tlp-negative"
    ),
    pytest.param(
        lambda: tok.token_logprobs(TOKEN_LOGITS, TOKENS + 0.5), r"^tokens", id="tlp-fractional"
    ),
    pytest.param(lambda: tok.sequence_logprob(0.0), r"^token_logprobs", id="slp-scalar"),
    pytest.param(lambda: tok.sequence_logprob([-0.5, 0.5]), r"^token_logprobs", id="slp-positive"),
    pytest.param(
        lambda: tok.sequence_logprob(LOGPROBS, mask=np.ones((2, 2))), r"^mask", id="slp-mask-shape"
    ),
    pytest.param(
        lambda: tok.sequence_logprob(LOGPROBS, mask=np.full((2, 3), 0.5)),
        r"^mask",
        id="slp-mask-values",
    ),
    pytest.param(
        lambda: tok.negative_log_likelihood(with_value(LOGPROBS, (1, 1), NAN)),
        r"^token_logprobs",
        id="nll-nan",
    ),
    pytest.param(
        lambda: tok.negative_log_likelihood(LOGPROBS, mask=np.ones(3, dtype=bool)),
        r"^mask",
        id="nll-mask-broadcast",
    ),
    pytest.param(
        lambda: tok.bigram_logits(np.zeros((4, 4)), TOKENS), r"^bigram_table", id="bg-shape"
    ),
    pytest.param(lambda: tok.bigram_logits(np.zeros((1, 0)), TOKENS), r"^bigram_table", id="bg-V0"),
    pytest.param(lambda: tok.bigram_logits(TABLE, TOKENS + 1), r"^tokens", id="bg-range"),
    pytest.param(lambda: tok.bigram_logits(TABLE, 2), r"^tokens", id="bg-scalar"),
    pytest.param(
        lambda: tok.parser_marginal(np.log([0.5, 0.5]), [0, 2], 2), r"^actions", id="pm-range"
    ),
    pytest.param(
        lambda: tok.parser_marginal(np.log([0.5, 0.5]), [0, -2], 2), r"^actions", id="pm-below"
    ),
    pytest.param(
        lambda: tok.parser_marginal(np.log([0.5, 0.5]), [0], 2), r"^actions", id="pm-length"
    ),
    pytest.param(
        lambda: tok.parser_marginal(np.log([0.7, 0.7]), [0, 1], 2),
        r"^sequence_logprobs",
        id="pm-mass-above-one",
    ),
    pytest.param(
        lambda: tok.parser_marginal([0.1, -1.0], [0, 1], 2),
        r"^sequence_logprobs",
        id="pm-positive",
    ),
    pytest.param(
        lambda: tok.parser_marginal(LOGPROBS, TOKENS, 4), r"^sequence_logprobs", id="pm-2d"
    ),
    pytest.param(lambda: tok.parser_marginal(np.log([0.5]), [0], 0), r"^num_actions", id="pm-K0"),
    pytest.param(
        lambda: tok.cross_entropy_logit_gradient(np.zeros((2, 3)), [0, 3]),
        r"^targets",
        id="ce-range",
    ),
    pytest.param(
        lambda: tok.cross_entropy_logit_gradient(np.zeros((2, 3)), [0]),
        r"^targets",
        id="ce-shape",
    ),
    pytest.param(lambda: tok.cross_entropy_logit_gradient([0.0, NAN], 0), r"^logits", id="ce-nan"),
    pytest.param(
        lambda: tok.expand_turn_values_to_tokens([1.0, 2.0], [0, 2]),
        r"^token_turn_ids",
        id="expand-range",
    ),
    pytest.param(
        lambda: tok.expand_turn_values_to_tokens([1.0, 2.0], [0, -2]),
        r"^token_turn_ids",
        id="expand-below",
    ),
    pytest.param(
        lambda: tok.expand_turn_values_to_tokens(np.ones((2, 2)), [[0, 1]]),
        r"^token_turn_ids",
        id="expand-batch",
    ),
    pytest.param(
        lambda: tok.expand_turn_values_to_tokens([1.0, NAN], [0, 1]),
        r"^turn_values",
        id="expand-nan",
    ),
    pytest.param(
        lambda: tok.expand_turn_values_to_tokens(1.0, [0]), r"^turn_values", id="expand-scalar"
    ),
    # --- policy gradient in tabular MDPs ------------------------------------------------------
    pytest.param(lambda: pg.tabular_softmax_policy(np.zeros(3)), r"^logits", id="tsp-1d"),
    pytest.param(lambda: pg.tabular_softmax_policy(np.zeros((2, 0))), r"^logits", id="tsp-A0"),
    pytest.param(
        lambda: pg.trajectory_log_probability(np.zeros((3, 2)), P, RHO, [0, 1], [0]),
        r"^logits",
        id="tlogp-logits-shape",
    ),
    pytest.param(
        lambda: pg.trajectory_log_probability(LOGITS2, bad_rows(P), RHO, [0, 1], [0]),
        r"^transition",
        id="tlogp-P",
    ),
    pytest.param(
        lambda: pg.trajectory_log_probability(LOGITS2, P, [0.5, 0.4], [0, 1], [0]),
        r"^initial",
        id="tlogp-initial",
    ),
    pytest.param(
        lambda: pg.trajectory_log_probability(LOGITS2, P, RHO, [0, 1], [0, 1]),
        r"^states",
        id="tlogp-lengths",
    ),
    pytest.param(
        lambda: pg.trajectory_score(LOGITS2, [0, 2], [0]), r"^states", id="score-state-range"
    ),
    pytest.param(
        lambda: pg.trajectory_score(LOGITS2, [0, 1, 1], [0, 2]), r"^actions", id="score-action"
    ),
    pytest.param(
        lambda: pg.trajectory_score(LOGITS2, [0, 1, 1], [-1, 0]),
        r"^actions",
        id="score-padding-not-trailing",
    ),
    pytest.param(lambda: pg.trajectory_score(LOGITS2, [[0, 1]], [[0]]), r"^actions", id="score-2d"),
    pytest.param(
        lambda: pg.expected_return(np.zeros((2, 3)), P, RW, RHO, 0.9, TERM),
        r"^logits",
        id="J-logits-shape",
    ),
    pytest.param(
        lambda: pg.expected_return(LOGITS2, P, RW, RHO, 1.1, TERM), r"^gamma", id="J-gamma"
    ),
    pytest.param(
        lambda: pg.expected_return(LOGITS2, P, RW[0], RHO, 0.9, TERM), r"^reward", id="J-reward"
    ),
    pytest.param(
        lambda: pg.expected_return(LOGITS2, P, RW, [1.0], 0.9, TERM), r"^initial", id="J-initial"
    ),
    pytest.param(
        lambda: pg.reinforce_trajectory_gradient(LOGITS2, [0, 1], [1], [1.0, 2.0], 0.9),
        r"^rewards",
        id="rg-rewards-shape",
    ),
    pytest.param(
        lambda: pg.reinforce_trajectory_gradient(LOGITS2, [0, 1, 1], [1, -1], [1.0, 2.0], 0.9),
        r"^rewards",
        id="rg-rewards-after-end",
    ),
    pytest.param(
        lambda: pg.reinforce_trajectory_gradient(LOGITS2, [0, 1], [1], [NAN], 0.9),
        r"^rewards",
        id="rg-rewards-nan",
    ),
    pytest.param(
        lambda: pg.reinforce_trajectory_gradient(LOGITS2, [0, 1], [1], [1.0], 2.0),
        r"^gamma",
        id="rg-gamma",
    ),
    pytest.param(
        lambda: pg.reinforce_trajectory_gradient(LOGITS2, [0, 1], [1], [1.0], 0.9, baseline=[1.0]),
        r"^baseline",
        id="rg-baseline-shape",
    ),
    pytest.param(
        lambda: pg.reinforce_trajectory_gradient(
            LOGITS2, [0, 1], [1], [1.0], 0.9, baseline=[1.0, NAN]
        ),
        r"^baseline",
        id="rg-baseline-nan",
    ),
    pytest.param(
        lambda: pg.reinforce_trajectory_gradient(LOGITS2, [0, 1], [1], [1.0], 0.9, "yes"),
        r"^reward_to_go",
        id="rg-reward-to-go",
    ),
    pytest.param(
        lambda: pg.enumerate_group_gradient(
            [0.0, 0.0], [1.0, 2.0], 0, grp.leave_one_out_advantages
        ),
        r"^group_size",
        id="group-size-0",
    ),
    pytest.param(
        lambda: pg.enumerate_group_gradient(
            np.zeros(10), np.zeros(10), 7, grp.leave_one_out_advantages
        ),
        r"^group_size",
        id="group-too-large",
    ),
    pytest.param(
        lambda: pg.enumerate_group_gradient([0.0, 0.0], [1.0, 2.0, 3.0], 2, np.negative),
        r"^(action_values|logits)",
        id="group-lengths",
    ),
    pytest.param(
        lambda: pg.enumerate_group_gradient([0.0, 0.0], [1.0, 2.0], 2, "loo"),
        r"^advantage_fn",
        id="group-fn-not-callable",
    ),
    pytest.param(
        lambda: pg.enumerate_group_gradient([0.0, 0.0], [1.0, 2.0], 2, np.sum),
        r"^advantage_fn",
        id="group-fn-shape",
    ),
    pytest.param(
        lambda: pg.enumerate_group_gradient([0.0, 0.0], [1.0, 2.0], 2, lambda r: np.full(2, NAN)),
        r"^advantage_fn",
        id="group-fn-not-finite",
    ),
    pytest.param(
        lambda: pg.enumerate_group_gradient(
            [0.0, 0.0], [1.0, 2.0], 1, grp.leave_one_out_advantages
        ),
        r"^(advantage_fn|rewards)",
        id="group-loo-of-one",
    ),
    # --- groups ---------------------------------------------------------------------------------
    pytest.param(lambda: grp.leave_one_out_advantages([1.0]), r"^rewards", id="loo-G1"),
    pytest.param(lambda: grp.leave_one_out_advantages(np.ones((3, 1))), r"^rewards", id="loo-G1b"),
    pytest.param(lambda: grp.leave_one_out_advantages(2.0), r"^rewards", id="loo-scalar"),
    pytest.param(lambda: grp.leave_one_out_advantages([1.0, NAN]), r"^rewards", id="loo-nan"),
    pytest.param(lambda: grp.group_normalized_advantages([1.0, INF]), r"^rewards", id="grpo-inf"),
    pytest.param(
        lambda: grp.group_normalized_advantages(np.ones((2, 0))), r"^rewards", id="grpo-G0"
    ),
    pytest.param(
        lambda: grp.group_normalized_advantages([1.0], include_self=False),
        r"^rewards",
        id="grpo-without-self-G1",
    ),
    pytest.param(
        lambda: grp.group_normalized_advantages([1.0, 2.0], eps=-1e-6), r"^eps", id="grpo-eps-neg"
    ),
    pytest.param(
        lambda: grp.group_normalized_advantages([1.0, 2.0], eps=NAN), r"^eps", id="grpo-eps-nan"
    ),
    pytest.param(
        lambda: grp.group_normalized_advantages([1.0, 2.0, 2.0], eps=0.0, include_self=False),
        r"^eps",
        id="grpo-eps-zero-infinite",
    ),
    pytest.param(
        lambda: grp.group_normalized_advantages([1.0, 2.0], ddof=2), r"^ddof", id="grpo-ddof-G"
    ),
    pytest.param(
        lambda: grp.group_normalized_advantages([1.0], ddof=1), r"^ddof", id="grpo-ddof-1-of-1"
    ),
    pytest.param(
        lambda: grp.group_normalized_advantages([1.0, 2.0], ddof=-1), r"^ddof", id="grpo-ddof-neg"
    ),
    pytest.param(
        lambda: grp.group_normalized_advantages([1.0, 2.0], ddof=0.5), r"^ddof", id="grpo-ddof-f"
    ),
    pytest.param(
        lambda: grp.group_normalized_advantages([1.0, 2.0], include_self="no"),
        r"^include_self",
        id="grpo-include-self",
    ),
    # --- batched GAE and returns ------------------------------------------------------------------
    pytest.param(lambda: gae(rewards=1.0), r"^rewards", id="gae-r-scalar"),
    pytest.param(lambda: gae(rewards=with_value(R4, (1, 2), NAN)), r"^rewards", id="gae-r-nan"),
    pytest.param(lambda: gae(values=np.zeros((2, 5))), r"^values", id="gae-v-T+1"),
    pytest.param(lambda: gae(values=np.zeros(4)), r"^values", id="gae-v-broadcast"),
    pytest.param(lambda: gae(next_values=np.zeros((2, 3))), r"^next_values", id="gae-nv-shape"),
    pytest.param(
        lambda: gae(next_values=with_value(V4, (0, 0), INF)), r"^next_values", id="gae-nv-inf"
    ),
    pytest.param(lambda: gae(terminated=NO[:, :3]), r"^terminated", id="gae-term-shape"),
    pytest.param(lambda: gae(truncated=NO[0]), r"^truncated", id="gae-trunc-broadcast"),
    pytest.param(lambda: gae(terminated=NO + 2), r"^terminated", id="gae-term-values"),
    pytest.param(lambda: gae(terminated=BOTH, truncated=BOTH), r"^truncated", id="gae-both"),
    pytest.param(lambda: gae(gamma=1.5), r"^gamma", id="gae-gamma"),
    pytest.param(lambda: gae(gamma=-0.1), r"^gamma", id="gae-gamma-neg"),
    pytest.param(lambda: gae(lam=1.01), r"^lam", id="gae-lam"),
    pytest.param(lambda: gae(lam=NAN), r"^lam", id="gae-lam-nan"),
    pytest.param(lambda: batched_returns(rewards=[[NAN]]), r"^rewards", id="ret-r-nan"),
    pytest.param(lambda: batched_returns(terminated=NO[:1]), r"^terminated", id="ret-term-shape"),
    pytest.param(
        lambda: batched_returns(truncated=np.full((2, 4), 0.3)), r"^truncated", id="ret-trunc-0.3"
    ),
    pytest.param(
        lambda: batched_returns(terminated=BOTH, truncated=BOTH), r"^truncated", id="ret-both"
    ),
    pytest.param(lambda: batched_returns(gamma=2.0), r"^gamma", id="ret-gamma"),
    pytest.param(
        lambda: batched_returns(next_values=np.zeros((2, 5))), r"^next_values", id="ret-nv-shape"
    ),
]


@pytest.mark.parametrize(("call", "pattern"), CASES)
def test_bad_input_raises_value_error_naming_the_argument(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: gae(gamma=1.5), "got 1.5"),
        (lambda: gae(values=np.zeros((2, 5))), "(2, 4)"),
        (lambda: gae(terminated=BOTH, truncated=BOTH), "(1, 2)"),
        (lambda: tok.token_logprobs(TOKEN_LOGITS, TOKENS + 1), "[0, 4)"),
        (lambda: tok.expand_turn_values_to_tokens([1.0, 2.0], [0, 2]), "[-1, 2)"),
        (lambda: mdp.state_values(bad_rows(P), RW, PI, 0.9), "sum"),
        (lambda: grp.leave_one_out_advantages([1.0]), "at least 2"),
    ],
)
def test_messages_say_what_was_expected_and_what_was_given(call, fragment):
    with pytest.raises(ValueError) as info:
        call()
    assert fragment in str(info.value)


def test_valid_edge_inputs_are_accepted():
    # The boundaries of each check are inside the domain.
    assert mdp.state_values(P, RW, PI, 1.0, TERM)[1] == 0.0
    assert mdp.belief_filter(BELIEF, [], [], P, OBS).shape == (1, 2)
    assert tok.enumerate_sequences(1, 0).shape == (1, 0)
    assert tok.expand_turn_values_to_tokens(np.zeros(0), [-1, -1]).tolist() == [0.0, 0.0]
    assert grp.group_normalized_advantages([1.0, 2.0], ddof=1).shape == (2,)
    assert grp.group_normalized_advantages([5.0], ddof=0).tolist() == [0.0]
    assert gae(gamma=0.0, lam=1.0).shape == (2, 4)
    assert batched_returns(next_values=None, gamma=1.0).shape == (2, 4)
