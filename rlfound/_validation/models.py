"""Checks of the small models the book solves exactly: reward processes, tabular MDPs and
policies, episodes, and POMDPs.

The formats (documented in :mod:`rlfound.mdp`, :mod:`rlfound.episodes` and
:mod:`rlfound.pomdp`): ``transition`` (S, A, S) with rows P(· | s, a); ``reward`` (S, A, S);
``policy`` (S, A) with rows π(· | s); ``terminal`` (S,), a bool or 0/1 mask whose states are
worth 0 and whose outgoing rows are ignored; ``initial`` (S,), the start distribution; one
episode as ``states`` (T + 1,) and ``actions`` (T,) with a trailing block of -1 after it
ended; ``observation_model`` (S, O) with rows O(· | s).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlfound._validation.arrays import (
    as_float_array,
    check_distribution,
    check_indices,
    check_mask,
    check_shape,
    check_unit_interval,
)
from rlfound._validation.limits import ROW_SUM_TOLERANCE, SUPPORT_TOLERANCE

__all__ = [
    "ImpossibleObservation",
    "check_belief",
    "check_bigram_table",
    "check_dynamics",
    "check_episode",
    "check_episode_rewards",
    "check_evidence",
    "check_history",
    "check_initial",
    "check_pomdp",
    "check_reward_process",
    "check_state_function",
    "check_tabular_logits",
    "check_tabular_mdp",
    "check_terminal",
    "check_transition",
]


def check_terminal(terminal: Any, num_states: int) -> np.ndarray:
    """A bool mask with one entry per state (bool or 0/1); None means no terminal states."""
    if terminal is None:
        return np.zeros(num_states, dtype=bool)
    return check_mask(terminal, "terminal", (num_states,))


def _check_discounted_rows(
    transition_pi: np.ndarray, gamma: float, terminal: np.ndarray
) -> None:
    """The condition under which the Bellman system of the live states has a finite solution.

    Two checks, with the slack :data:`ROW_SUM_TOLERANCE` for rounding:

    - γ·(row sum) <= 1 in every live state. A row is accepted as a distribution if it sums
      to 1 within 1e-8, but a discounted row above 1 creates probability: the series
      Σ_t (γ P)^t diverges and a solve would return a meaningless (even negative) value.
    - Every live state reaches, through transitions of probability above
      :data:`SUPPORT_TOLERANCE`, a live state that leaks: one whose discounted
      continuation γ·Σ_{s' live} P(s, s') is below 1 - ROW_SUM_TOLERANCE (it moves to a
      terminal state, or γ < 1 discounts it). Otherwise the live block I - γ P_LL is singular
      or, with an exit like 1e-17 that vanishes when added to 1, singular in floating point.
    """
    live = ~terminal
    discounted = gamma * transition_pi.sum(axis=1)
    over = live & (discounted > 1.0 + ROW_SUM_TOLERANCE)
    if over.any():
        state = int(np.flatnonzero(over)[0])
        raise ValueError(
            f"transition_pi must satisfy gamma * (row sum) <= 1 (within {ROW_SUM_TOLERANCE:g}) "
            f"so that the discounted values are finite; got gamma * "
            f"{float(transition_pi[state].sum())!r} = {float(discounted[state])!r} in state {state}"
        )
    # A move into a terminal state counts through the leak it causes, not by itself: an exit
    # of 1e-17 vanishes from 1 - 1e-17 and leaves the row exactly as if it were not there.
    continuation = gamma * transition_pi[:, live].sum(axis=1)
    reaches_end = terminal | (continuation < 1.0 - ROW_SUM_TOLERANCE)
    moves = (transition_pi > SUPPORT_TOLERANCE) & live[None, :]
    while True:
        # A state reaches the end if it moves with positive probability to one that does.
        grown = reaches_end | moves[:, reaches_end].any(axis=1)
        if np.array_equal(grown, reaches_end):
            break
        reaches_end = grown
    if not reaches_end.all():
        state = int(np.flatnonzero(~reaches_end)[0])
        if gamma == 1.0:
            raise ValueError(
                "gamma must be < 1 unless every state can reach a terminal state; "
                f"got gamma = 1.0 and state {state} never terminates"
            )
        raise ValueError(
            f"gamma must be below 1 - {ROW_SUM_TOLERANCE:g} unless every state can reach a "
            f"terminal state; got gamma = {gamma!r} and state {state} never terminates"
        )


def check_reward_process(
    transition_pi: Any,
    reward_pi: Any,
    gamma: Any,
    terminal: Any = None,
    *,
    solve: bool = True,
) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    """A Markov reward process (P_π, r_π), a discount and a terminal mask that can be solved.

    P_π must be square and row-stochastic, r_π one entry per state and 0 in terminal states
    (a terminal state is worth 0), γ in [0, 1], and with γ = 1 every state must reach a
    terminal state (otherwise the values are infinite and the system is singular). Those
    conditions are checked with tolerances: γ·(row sum) <= 1 + ROW_SUM_TOLERANCE, and
    every live state reaches a terminal state (or, for γ < 1, a discounted leak of more
    than ROW_SUM_TOLERANCE) through transitions above SUPPORT_TOLERANCE; see
    :func:`_check_discounted_rows`. They are only needed to solve for the values:
    ``solve=False`` skips them (a Bellman residual is defined for any γ in [0, 1]).
    """
    transition_pi = as_float_array(transition_pi, "transition_pi", ndim=2)
    if transition_pi.shape[0] != transition_pi.shape[1]:
        raise ValueError(
            f"transition_pi must be a square (S, S) matrix; got shape {transition_pi.shape}"
        )
    transition_pi = check_distribution(transition_pi, "transition_pi")
    num_states = transition_pi.shape[0]
    reward_pi = as_float_array(reward_pi, "reward_pi", ndim=1)
    check_shape(reward_pi, "reward_pi", (num_states,), "one entry per state")
    gamma = check_unit_interval(gamma, "gamma")
    terminal = check_terminal(terminal, num_states)
    rewarded = terminal & (reward_pi != 0.0)
    if rewarded.any():
        state = int(np.flatnonzero(rewarded)[0])
        raise ValueError(
            "reward_pi must be 0 in terminal states (a terminal state is worth 0); "
            f"got {float(reward_pi[state])!r} in terminal state {state}"
        )
    if solve:
        _check_discounted_rows(transition_pi, gamma, terminal)
    return transition_pi, reward_pi, gamma, terminal


def check_transition(transition: Any) -> np.ndarray:
    """A finite (S, A, S) array with S, A >= 1 (its rows are checked with the terminal mask)."""
    transition = as_float_array(transition, "transition", ndim=3)
    num_states, num_actions, next_states = transition.shape
    if num_states < 1 or num_actions < 1 or next_states != num_states:
        raise ValueError(
            "transition must have shape (S, A, S) with S, A >= 1, "
            f"transition[s, a, s'] = P(s' | s, a); got shape {transition.shape}"
        )
    return transition


def _check_live_rows(
    array: np.ndarray, name: str, terminal: np.ndarray
) -> None:
    """Every row of a non-terminal state must be a distribution; terminal rows are ignored.

    Terminal rows are replaced by a valid distribution before the check (rather than
    removed) so that an error message still reports the index in the caller's array.
    """
    checked = array.copy()
    checked[terminal] = 1.0 / array.shape[-1]
    check_distribution(checked, name)


def check_dynamics(
    transition: Any, terminal: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Dynamics (S, A, S) whose rows are distributions in non-terminal states, and the mask."""
    transition = check_transition(transition)
    terminal = check_terminal(terminal, transition.shape[0])
    _check_live_rows(transition, "transition", terminal)
    return transition, terminal


def check_tabular_mdp(
    transition: Any, reward: Any, policy: Any, terminal: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The (transition, reward, policy, terminal) quadruple of the tabular format."""
    transition, terminal = check_dynamics(transition, terminal)
    num_states, num_actions, _ = transition.shape
    reward = as_float_array(reward, "reward", ndim=3)
    check_shape(
        reward,
        "reward",
        transition.shape,
        "the shape of transition (S, A, S)",
    )
    policy = as_float_array(policy, "policy", ndim=2)
    check_shape(
        policy,
        "policy",
        (num_states, num_actions),
        "one row π(· | s) per state",
    )
    _check_live_rows(policy, "policy", terminal)
    return transition, reward, policy, terminal


def check_initial(initial: Any, num_states: int) -> np.ndarray:
    """The start distribution p_0: one probability per state."""
    initial = check_distribution(initial, "initial")
    return check_shape(
        initial, "initial", (num_states,), "one probability per state"
    )


def check_tabular_logits(
    logits: Any, transition: np.ndarray | None = None
) -> np.ndarray:
    """Policy logits of shape (S, A), S, A >= 1, matching ``transition`` when it is given."""
    logits = as_float_array(logits, "logits", ndim=2)
    if logits.shape[0] < 1 or logits.shape[1] < 1:
        raise ValueError(
            "logits must have shape (S, A) with S, A >= 1 (one row per state); "
            f"got shape {logits.shape}"
        )
    if transition is not None:
        check_shape(
            logits,
            "logits",
            transition.shape[:2],
            "the (S, A) of transition",
        )
    return logits


def check_state_function(
    values: Any, name: str, num_states: int, *, optional: bool = False
) -> np.ndarray | None:
    """A finite vector with one entry per state (a value function or a baseline b(s))."""
    if values is None and optional:
        return None
    values = as_float_array(values, name, ndim=1)
    return check_shape(values, name, (num_states,), "one entry per state")


def check_episode(
    states: Any,
    actions: Any,
    num_states: int,
    num_actions: int,
    terminal: Any = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """One episode, ``states`` (T + 1,) and ``actions`` (T,), and its length before padding.

    Actions may end with a block of -1 (the steps after the episode ended). With a terminal
    mask, no action may be taken in a terminal state: the episode ends on entering one.
    """
    actions = check_indices(
        actions, "actions", num_actions, ndim=1, minimum=-1
    )
    states = check_indices(
        states, "states", num_states, ndim=1, kind="state"
    )
    check_shape(
        states,
        "states",
        (actions.size + 1,),
        "one more entry than actions, s_0 to s_T",
    )
    padding = actions < 0
    length = int(np.argmax(padding)) if padding.any() else actions.size
    if not padding[length:].all():
        late = length + int(np.argmin(padding[length:]))
        raise ValueError(
            "actions must be -1 only after the episode ended (a trailing block of padding); "
            f"got action {int(actions[late])} at index {late} after -1 at index {length}"
        )
    if terminal is not None:
        acting_in_terminal = check_terminal(terminal, num_states)[
            states[:length]
        ]
        if acting_in_terminal.any():
            step = int(np.flatnonzero(acting_in_terminal)[0])
            raise ValueError(
                f"actions must end when a terminal state is entered (pad with -1); got action "
                f"{int(actions[step])} at step {step} in terminal state {int(states[step])}"
            )
    return states, actions, length


def check_episode_rewards(
    rewards: Any, actions: np.ndarray, length: int
) -> np.ndarray:
    """One finite reward per step of an episode, 0 at the padded steps after its end."""
    rewards = as_float_array(rewards, "rewards", ndim=1)
    check_shape(rewards, "rewards", actions.shape, "one entry per action")
    late = np.flatnonzero(rewards[length:])
    if late.size:
        index = length + int(late[0])
        raise ValueError(
            "rewards must be 0 after the episode ended (where actions are -1); "
            f"got {float(rewards[index])!r} at index {index}"
        )
    return rewards


def check_pomdp(
    transition: Any, observation_model: Any
) -> tuple[np.ndarray, np.ndarray]:
    """A full (S, A, S) transition array and an (S, O) observation model, rows distributions."""
    transition = check_transition(transition)
    check_distribution(transition, "transition")
    num_states = transition.shape[0]
    observation_model = as_float_array(
        observation_model, "observation_model", ndim=2
    )
    if (
        observation_model.shape[0] != num_states
        or observation_model.shape[1] < 1
    ):
        raise ValueError(
            f"observation_model must have shape (S, O) = ({num_states}, O) with O >= 1, "
            f"rows O(· | s); got shape {observation_model.shape}"
        )
    check_distribution(observation_model, "observation_model")
    return transition, observation_model


def check_belief(belief: Any, name: str, num_states: int) -> np.ndarray:
    """A distribution over the states."""
    belief = check_distribution(belief, name)
    return check_shape(
        belief,
        name,
        (num_states,),
        f"one probability per state ({num_states})",
    )


def check_history(
    actions: Any,
    observations: Any,
    initial_observation: Any,
    num_actions: int,
    num_observations: int,
) -> tuple[np.ndarray, np.ndarray, int | None]:
    """Actions a_0..a_{T-1} and observations o_1..o_T (equal lengths), optional o_0."""
    actions = check_indices(actions, "actions", num_actions, ndim=1)
    observations = check_indices(
        observations,
        "observations",
        num_observations,
        ndim=1,
        kind="observation",
    )
    check_shape(
        observations, "observations", actions.shape, "one entry per action"
    )
    if initial_observation is not None:
        initial_observation = int(
            check_indices(
                initial_observation,
                "initial_observation",
                num_observations,
                ndim=0,
                kind="observation",
            )
        )
    return actions, observations, initial_observation


class ImpossibleObservation(ValueError):
    """An observation of probability 0 was conditioned on: Bayes' rule would divide 0 by 0.

    A ``ValueError`` like every bad input; its own type lets a function that conditions on a
    whole history re-raise it under the name its caller used (``observations[3]``).
    """

    def __init__(self, name: str, what: str, given: str):
        self.what = what
        super().__init__(
            f"{name} must have positive probability {given}; got {what}, which has probability 0"
        )

    def renamed(self, name: str, given: str) -> ImpossibleObservation:
        """The same error, naming the argument as ``name``."""
        return ImpossibleObservation(name, self.what, given)


def check_evidence(
    evidence: float,
    name: str,
    what: str,
    given: str = "under the predicted belief",
) -> float:
    """The probability of what was observed, which Bayes' rule divides by: it must be > 0.

    ``what`` names the observation in the message (``"observation 1"``), ``given`` what its
    probability is conditioned on.

    Raises
    ------
    ImpossibleObservation
        A ``ValueError`` naming ``name``, if ``evidence`` is not positive.
    """
    if not evidence > 0.0:
        raise ImpossibleObservation(name, what, given)
    return float(evidence)


def check_bigram_table(table: Any) -> np.ndarray:
    """Logits of a bigram model: shape (V + 1, V), one row per previous token plus a start row."""
    table = as_float_array(table, "bigram_table", ndim=2)
    vocab_size = table.shape[1]
    if vocab_size < 1 or table.shape[0] != vocab_size + 1:
        raise ValueError(
            "bigram_table must have shape (V + 1, V) with V >= 1 (one row per previous token "
            f"plus a begin-of-sequence row); got shape {table.shape}"
        )
    return table
