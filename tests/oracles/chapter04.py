"""Chapter 4's tasks: submit or work, the job task without an end, the 2 + 2 token task."""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

from tests.oracles.basics import _read_only, softmax_rows
from tests.oracles.episodes import padded_episodes_by_hand
from tests.oracles.mdps import linear_solve_values
from tests.oracles.trajectories import window_gae

# ---------------------------------------------------------------------------------------------
# Chapter 4's tasks
# ---------------------------------------------------------------------------------------------
# The chapter's claims (test_chapter04_claims.py) and the numbers of its solutions page
# (test_solutions_ch04.py) are recomputed on the same tasks: they are built here once.


class SolvedTask(NamedTuple):
    """A tabular task under a fixed policy, with its exact solution by linear solves.

    ``values`` and ``p_pi`` are v_π (0 at terminal states) and P_π from
    :func:`linear_solve_values`; ``advantages`` is A(s, a) = Σ_s' P(s' | s, a)
    (r(s, a, s') + γ v(s')) - v(s); ``occupancy`` is the discounted visit distribution
    d = Σ_t γ^t Pr(s_t = ·) from ``initial``, solved on the live states (0 at terminal ones).
    """

    transition: np.ndarray
    reward: np.ndarray
    terminal: np.ndarray
    policy: np.ndarray
    initial: np.ndarray
    gamma: float
    values: np.ndarray
    p_pi: np.ndarray
    advantages: np.ndarray
    occupancy: np.ndarray

    @property
    def live(self):
        return ~self.terminal

    def td_bias(self, error):
        """eq-td-critic-bias, (S, A): the mean TD error of the critic v_π + error exceeds the
        advantage by γ E[error(s') | s, a] - error(s)."""
        return self.gamma * np.einsum("sat,t->sa", self.transition, error) - error[:, None]

    def expected_update(self, mean_advantage):
        """d(s) π(a|s) (Ā(s, a) - Σ_a' π(a'|s) Ā(s, a')) on the live states: the expected
        policy-gradient update when the advantage estimate of (s, a) averages Ā(s, a)."""
        centered = mean_advantage - np.sum(self.policy * mean_advantage, axis=1, keepdims=True)
        return (self.occupancy[:, None] * self.policy * centered)[self.live]


def solved_task(transition, reward, terminal, policy, initial, gamma):
    """The :class:`SolvedTask` of a model, a policy, a start distribution and γ; its arrays
    are read-only copies (the task is shared by several test files)."""
    values, p_pi = linear_solve_values(transition, reward, policy, gamma, terminal)
    advantages = np.einsum("sat,sat->sa", transition, reward + gamma * values) - values[:, None]
    live = ~terminal
    occupancy = np.zeros(len(terminal))
    occupancy[live] = np.linalg.solve(
        (np.eye(live.sum()) - gamma * p_pi[np.ix_(live, live)]).T, initial[live]
    )
    arrays = (transition, reward, terminal, policy, initial, values, p_pi, advantages, occupancy)
    transition, reward, terminal, policy, initial, values, p_pi, advantages, occupancy = (
        _read_only(array) for array in arrays
    )
    return SolvedTask(
        transition, reward, terminal, policy, initial, gamma, values, p_pi, advantages, occupancy
    )


# The submit-or-work task: a draft is revised and tested, or submitted and passes or fails.
DRAFT, REVISED, TESTED, PASSED, FAILED = range(5)
SUBMIT, WORK = 0, 1


def submit_or_work():
    """The chapter's task and policy: (transition, reward, terminal, policy).

    Submitting passes with probability 0.2, 0.5, 0.9 from the draft, the revised and the
    tested state, and a pass pays 1. Working costs 0.05: it revises the draft with probability
    0.9 and tests the revised one with 0.8 (else the state stays), and from the tested state it
    stays with probability 0.7 or fails. Passed and failed are terminal and absorbing.
    """
    transition = np.zeros((5, 2, 5))
    reward = np.zeros((5, 2, 5))
    for state, p_pass in [(DRAFT, 0.2), (REVISED, 0.5), (TESTED, 0.9)]:
        transition[state, SUBMIT, [PASSED, FAILED]] = [p_pass, 1.0 - p_pass]
    transition[DRAFT, WORK, [REVISED, DRAFT]] = [0.9, 0.1]
    transition[REVISED, WORK, [TESTED, REVISED]] = [0.8, 0.2]
    transition[TESTED, WORK, [TESTED, FAILED]] = [0.7, 0.3]
    transition[[PASSED, FAILED], :, [PASSED, FAILED]] = 1.0
    reward[:, SUBMIT, PASSED] = 1.0
    reward[[DRAFT, REVISED, TESTED], WORK, :] = -0.05
    terminal = np.array([False, False, False, True, True])
    policy = np.array([[0.3, 0.7], [0.5, 0.5], [0.6, 0.4], [0.5, 0.5], [0.5, 0.5]])
    return transition, reward, terminal, policy


#: The submit-or-work task from the draft, undiscounted, solved.
SUBMIT_OR_WORK = solved_task(*submit_or_work(), np.eye(5)[DRAFT], 1.0)

# The task without an end: a hub with quick replies or jobs that keep the agent busy.
HUB, BUSY = 0, 1
QUICK, START = 0, 1
JOB_GAMMA, JOB_LAM = 0.97, 0.95


def job_task():
    """The job task and its policy: (transition, reward, policy); no state is terminal.

    At the hub a quick reply pays 0.5 and stays; starting a job moves to busy, which returns
    to the hub with probability 1/6 a step and then pays 5.6. The policy starts a job half
    the time at the hub.
    """
    transition = np.zeros((2, 2, 2))
    reward = np.zeros((2, 2, 2))
    transition[HUB, QUICK, HUB] = 1.0
    reward[HUB, QUICK, HUB] = 0.5
    transition[HUB, START, BUSY] = 1.0
    transition[BUSY, :, HUB] = 1 / 6
    transition[BUSY, :, BUSY] = 5 / 6
    reward[BUSY, :, HUB] = 5.6
    policy = np.array([[0.5, 0.5], [1.0, 0.0]])
    return transition, reward, policy


_job_transition, _job_reward, _job_policy = job_task()
#: The job task from the hub, γ = 0.97, solved.
JOB = solved_task(
    _job_transition, _job_reward, np.zeros(2, dtype=bool), _job_policy, np.eye(2)[HUB], JOB_GAMMA
)


def hub_preference(estimates, weights, now, actions):
    """E[Â | hub, start] - E[Â | hub, quick] on the job task: the weighted mean of the
    advantage estimates over the visits of the hub where each action was taken (all arrays
    (n, H): estimates, weights, states and actions of every step)."""
    at_hub = now == HUB
    means = [
        np.sum((weights * estimates)[at_hub & (actions == a)])
        / np.sum(weights[at_hub & (actions == a)])
        for a in (QUICK, START)
    ]
    return means[1] - means[0]


def trained_state_only_critic(horizon, lam, marked_terminal):
    """A state-only critic regressed on its own λ-return targets over every window of
    ``horizon`` steps of the job task from the hub: (the critic at its exact fixed point,
    the preference :func:`hub_preference` it implies).

    The windows are every episode of :func:`padded_episodes_by_hand`, the targets
    :func:`window_gae` plus the critic. The refit V -> c + M V is affine in V, so the fixed
    point solves (I - M) V = c.
    """
    states, actions, rewards, _, probs = padded_episodes_by_hand(
        JOB.transition, JOB.reward, JOB.policy, JOB.initial, horizon, JOB.terminal
    )
    weights = np.repeat(probs[:, None], horizon, axis=1)
    now, after = states[:, :-1], states[:, 1:]

    def refit(critic):
        targets = window_gae(rewards, critic[now], critic[after], JOB_GAMMA, lam, marked_terminal)
        targets = targets + critic[now]
        return np.array(
            [np.sum((weights * targets)[now == s]) / np.sum(weights[now == s]) for s in (HUB, BUSY)]
        )

    offset = refit(np.zeros(2))
    slope = np.column_stack([refit(np.eye(2)[i]) - offset for i in range(2)])
    critic = np.linalg.solve(np.eye(2) - slope, offset)
    assert np.allclose(refit(critic), critic, atol=1e-10)  # a fixed point of the regression
    estimates = window_gae(rewards, critic[now], critic[after], JOB_GAMMA, lam, marked_terminal)
    return critic, hub_preference(estimates, weights, now, actions)


# The 2 + 2 token task: tokens "4", "5" and "."; a response earns 1 if it starts with "4" and
# ends with ".".
FOUR, FIVE, STOP = range(3)
#: The bigram policy's probabilities: row = previous token (4, 5, ., then the start row).
TOKEN_BIGRAM = _read_only([[0.3, 0.3, 0.4], [0.3, 0.3, 0.4], [0.2, 0.2, 0.6], [0.5, 0.4, 0.1]])
BEGIN = 3


def token_task(length, probs_table=TOKEN_BIGRAM):
    """Every response of ``length`` tokens: (responses (n, L), previous (n, L), π(x) as a
    product of bigram probabilities, R(x), prefix_value (n, L + 1)).

    ``previous`` is the bigram row each token used; column k of ``prefix_value`` is v_π of
    the first k tokens (a conditional mean of R over the enumeration), column L R(x) itself.
    """
    responses = np.array(list(itertools.product(range(3), repeat=length)))
    previous = np.column_stack([np.full(len(responses), BEGIN), responses[:, :-1]])
    probs = np.prod(probs_table[previous, responses], axis=1)
    outcome = ((responses[:, 0] == FOUR) & (responses[:, -1] == STOP)).astype(float)
    totals, masses = {}, {}
    for x, p, r in zip(map(tuple, responses), probs, outcome, strict=True):
        for k in range(length + 1):
            totals[x[:k]] = totals.get(x[:k], 0.0) + p * r
            masses[x[:k]] = masses.get(x[:k], 0.0) + p
    prefix_value = np.array(
        [
            [totals[tuple(x[:k])] / masses[tuple(x[:k])] for k in range(length + 1)]
            for x in responses
        ]
    )
    return responses, previous, probs, outcome, prefix_value


def token_response_gradients(responses, previous, credit):
    """g(x) = Σ_j A_j (e_{x_j} - π(· | row)) at the bigram row each token used, by loops,
    with π the softmax of log :data:`TOKEN_BIGRAM`."""
    pi = softmax_rows(np.log(TOKEN_BIGRAM))
    gradients = np.zeros((len(responses), *TOKEN_BIGRAM.shape))
    for i, j in itertools.product(range(len(responses)), range(responses.shape[1])):
        row = previous[i, j]
        gradients[i, row] += credit[i, j] * (np.eye(3)[responses[i, j]] - pi[row])
    return gradients


def token_gradient_variance(responses, previous, probs, credit):
    """(mean, total variance) of :func:`token_response_gradients` over the responses, weighted
    by their probabilities."""
    gradients = token_response_gradients(responses, previous, credit)
    mean = np.einsum("n,nij->ij", probs, gradients)
    return mean, probs @ np.sum((gradients - mean) ** 2, axis=(1, 2))
