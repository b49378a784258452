"""Beliefs over hidden states in a partially observable MDP: the Bayes filter, exactly.

In a POMDP the agent sees an observation o ~ O(· | s) of the hidden state s instead of the
state itself. What it can know is the belief bel(s) = Pr(s_t = s | history), which the Bayes
filter updates after each action and observation in two steps: *predict* through the
dynamics (:func:`predict_belief`), then *correct* by the observation's likelihood with Bayes'
rule (:func:`correct_belief`). :func:`belief_by_enumeration` computes the same posterior from
its definition, summing over every hidden state sequence.

Formats: ``transition`` of shape (S, A, S) with transition[s, a, s'] = P(s' | s, a) (every row
a distribution), ``observation_model`` of shape (S, O) with rows O(· | s), beliefs of shape
(S,).
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    MAX_ENUMERATION,
    ImpossibleObservation,
    as_float_array,
    capped_power,
    check_belief,
    check_distribution,
    check_enumeration_size,
    check_evidence,
    check_history,
    check_indices,
    check_pomdp,
    check_transition,
    finite_output,
)

__all__ = [
    "belief_by_enumeration",
    "belief_filter",
    "belief_update",
    "correct_belief",
    "predict_belief",
]


@finite_output()
def predict_belief(
    belief: ArrayLike, action: int, transition: ArrayLike
) -> np.ndarray:
    """Prediction step of the Bayes filter: the next state's distribution before observing it.

        bel̄(s') = Σ_s P(s' | s, a) bel(s),

    the law of total probability; by the Markov property the history adds nothing once s_t
    and a_t are given.

    Book: equation (eq-belief-predict), chapter 2.

    Parameters
    ----------
    belief : array_like, shape (S,)
        Current belief bel(s) = Pr(s_t = s | history).
    action : int
        Action a taken, in [0, A).
    transition : array_like, shape (S, A, S)
        transition[s, a, s'] = P(s' | s, a); every row a distribution.

    Returns
    -------
    numpy.ndarray, shape (S,)
        The predicted belief bel̄, a distribution.

    Raises
    ------
    ValueError
        If ``transition`` is not (S, A, S) with distribution rows, ``belief`` is not a
        distribution over its S states, or ``action`` is not an index in [0, A).

    References
    ----------
    K. J. Åström, "Optimal control of Markov processes with incomplete state information",
    *Journal of Mathematical Analysis and Applications* 10, 174-205, 1965.

    Examples
    --------
    A light that switches state with probability 0.1 at every step:

    >>> flip = np.array([[[0.9, 0.1]], [[0.1, 0.9]]])  # one action
    >>> predict_belief([1.0, 0.0], 0, flip)
    array([0.9, 0.1])
    """
    transition = check_transition(transition)
    check_distribution(transition, "transition")
    num_states, num_actions, _ = transition.shape
    belief = check_belief(belief, "belief", num_states)
    action = int(check_indices(action, "action", num_actions, ndim=0))

    return belief @ transition[:, action, :]


@finite_output()
def correct_belief(
    predicted: ArrayLike, observation: int, observation_model: ArrayLike
) -> np.ndarray:
    """Correction step of the Bayes filter: Bayes' rule with the observation's likelihood.

        bel'(s') = O(o | s') bel̄(s') / Pr(o),
        Pr(o) = Σ_{s''} O(o | s'') bel̄(s''),

    where the evidence Pr(o) is the probability of seeing o at all under the prediction bel̄.
    An observation of probability 0 has no posterior, and that is an error, not a 0/0.

    Book: equation (eq-belief-correct), chapter 2.

    Parameters
    ----------
    predicted : array_like, shape (S,)
        Belief bel̄ before the observation (a prediction, or the prior for o_0).
    observation : int
        Observation o received, in [0, O).
    observation_model : array_like, shape (S, O)
        observation_model[s, o] = O(o | s); rows are distributions.

    Returns
    -------
    numpy.ndarray, shape (S,)
        The posterior belief bel'.

    Raises
    ------
    ValueError
        If ``observation_model`` is not a finite (S, O) array of distribution rows,
        ``predicted`` is not a distribution over its S states, or ``observation`` is not an
        index in [0, O) or has probability 0 under ``predicted``.

    References
    ----------
    L. P. Kaelbling, M. L. Littman and A. R. Cassandra, "Planning and acting in partially
    observable stochastic domains", *Artificial Intelligence* 101, 99-134, 1998.

    Examples
    --------
    A sensor that reports the truth 80% of the time, from an even prior:

    >>> correct_belief([0.5, 0.5], 0, observation_model=[[0.8, 0.2], [0.2, 0.8]])
    array([0.8, 0.2])
    """
    observation_model = as_float_array(
        observation_model, "observation_model", ndim=2
    )
    check_distribution(observation_model, "observation_model")
    predicted = check_belief(
        predicted, "predicted", observation_model.shape[0]
    )
    num_observations = observation_model.shape[1]
    observation = int(
        check_indices(
            observation,
            "observation",
            num_observations,
            ndim=0,
            kind="observation",
        )
    )

    joint = (
        observation_model[:, observation] * predicted
    )  # O(o | s') bel̄(s')
    evidence = check_evidence(
        joint.sum(), "observation", f"observation {observation}"
    )
    return joint / evidence


@finite_output()
def belief_update(
    belief: ArrayLike,
    action: int,
    observation: int,
    transition: ArrayLike,
    observation_model: ArrayLike,
) -> np.ndarray:
    """Bayes filter step: the belief over hidden states after one action and observation.

        bel'(s') = O(o | s') Σ_s P(s' | s, a) bel(s) / Pr(o | bel, a),

    a prediction through the dynamics (:func:`predict_belief`) followed by Bayes' rule with
    the observation's likelihood (:func:`correct_belief`); the normalizer
    Pr(o | bel, a) = Σ_{s'} O(o | s') Σ_s P(s' | s, a) bel(s) is the probability of seeing o at all.

    Book: equation (eq-belief-update), chapter 2.

    Parameters
    ----------
    belief : array_like, shape (S,)
        Current belief bel(s) = Pr(s_t = s | history).
    action : int
        Action a taken, in [0, A).
    observation : int
        Observation o received from the next state, in [0, O).
    transition : array_like, shape (S, A, S)
        transition[s, a, s'] = P(s' | s, a).
    observation_model : array_like, shape (S, O)
        observation_model[s, o] = O(o | s); rows are distributions.

    Returns
    -------
    numpy.ndarray, shape (S,)
        The new belief bel'.

    Raises
    ------
    ValueError
        If an array is malformed (shapes, distribution rows, finiteness), ``action`` or
        ``observation`` is not an index in range, or ``observation`` has probability 0
        under the predicted belief (the belief would be 0/0).

    References
    ----------
    K. J. Åström, "Optimal control of Markov processes with incomplete state information",
    *Journal of Mathematical Analysis and Applications* 10, 174-205, 1965.
    L. P. Kaelbling, M. L. Littman and A. R. Cassandra, "Planning and acting in partially
    observable stochastic domains", *Artificial Intelligence* 101, 99-134, 1998.

    Examples
    --------
    A door is open or shut and stays so; a sensor reports the truth 80% of the time.

    >>> transition = np.stack([np.eye(2)], axis=1)  # one action, "wait"
    >>> sensor = [[0.8, 0.2], [0.2, 0.8]]
    >>> belief_update([0.5, 0.5], 0, observation=0, transition=transition,
    ...               observation_model=sensor)
    array([0.8, 0.2])
    """
    transition, observation_model = check_pomdp(
        transition, observation_model
    )

    predicted = predict_belief(belief, action, transition)
    return correct_belief(predicted, observation, observation_model)


@finite_output()
def belief_filter(
    prior: ArrayLike,
    actions: ArrayLike,
    observations: ArrayLike,
    transition: ArrayLike,
    observation_model: ArrayLike,
    initial_observation: int | None = None,
) -> np.ndarray:
    """Beliefs along a whole history, by repeated Bayes filter steps.

        bel_0 = prior (times O(o_0 | ·), normalized, if an initial observation is given),
        bel_{t+1} = belief_update(bel_t, a_t, o_{t+1}),    t = 0, ..., T - 1.

    The cost is O(T S²), linear in the length of the history, although bel_T is the
    posterior given all of it (see :func:`belief_by_enumeration`).

    Book: equation (eq-belief-update), chapter 2.

    Parameters
    ----------
    prior : array_like, shape (S,)
        Distribution of s_0 before any observation.
    actions : array_like of int, shape (T,)
        Actions a_0, ..., a_{T-1}.
    observations : array_like of int, shape (T,)
        Observations o_1, ..., o_T; o_{t+1} is emitted by s_{t+1}, after action a_t.
    transition : array_like, shape (S, A, S)
        transition[s, a, s'] = P(s' | s, a).
    observation_model : array_like, shape (S, O)
        observation_model[s, o] = O(o | s).
    initial_observation : int, optional
        Observation o_0 emitted by s_0. Default: none.

    Returns
    -------
    numpy.ndarray, shape (T + 1, S)
        bel_0, ..., bel_T.

    Raises
    ------
    ValueError
        As :func:`belief_update`; if ``actions`` and ``observations`` differ in length;
        and if an observation has probability 0 given the history before it (naming
        ``observations``, or ``initial_observation`` for o_0).

    References
    ----------
    K. J. Åström, "Optimal control of Markov processes with incomplete state information",
    *Journal of Mathematical Analysis and Applications* 10, 174-205, 1965.

    Examples
    --------
    >>> transition = np.stack([np.eye(2)], axis=1)
    >>> sensor = [[0.8, 0.2], [0.2, 0.8]]
    >>> belief_filter([0.5, 0.5], [0, 0], [0, 0], transition, sensor)
    array([[0.5       , 0.5       ],
           [0.8       , 0.2       ],
           [0.94117647, 0.05882353]])
    """
    transition, observation_model = check_pomdp(
        transition, observation_model
    )
    num_states, num_actions, _ = transition.shape
    prior = check_belief(prior, "prior", num_states)
    actions, observations, initial_observation = check_history(
        actions,
        observations,
        initial_observation,
        num_actions,
        observation_model.shape[1],
    )

    beliefs = np.empty((len(actions) + 1, num_states))
    beliefs[0] = prior
    try:
        if initial_observation is not None:
            beliefs[0] = correct_belief(
                prior, initial_observation, observation_model
            )
    except ImpossibleObservation as error:
        raise error.renamed(
            "initial_observation", "under the prior"
        ) from None
    for t, (action, observation) in enumerate(
        zip(actions, observations, strict=True)
    ):
        try:
            beliefs[t + 1] = belief_update(
                beliefs[t],
                action,
                observation,
                transition,
                observation_model,
            )
        except ImpossibleObservation as error:
            raise error.renamed(
                f"observations[{t}]", "given the history before it"
            ) from None
    return beliefs


@finite_output()
def belief_by_enumeration(
    prior: ArrayLike,
    actions: ArrayLike,
    observations: ArrayLike,
    transition: ArrayLike,
    observation_model: ArrayLike,
    initial_observation: int | None = None,
) -> np.ndarray:
    """Final belief by brute force: Bayes' rule over every hidden state sequence.

        Pr(s_T = s | history) ∝ Σ_{s_0, ..., s_T = s} prior(s_0) [O(o_0 | s_0)]
                                  Π_{t<T} P(s_{t+1} | s_t, a_t) O(o_{t+1} | s_{t+1}).

    This is the definition of the posterior, with no recursion; it costs S^(T+1) terms and
    is the clear reference the filter :func:`belief_filter` is tested against.

    Book: equation (eq-belief-state), chapter 2.

    Parameters
    ----------
    prior, actions, observations, transition, observation_model, initial_observation
        As in :func:`belief_filter`.

    Returns
    -------
    numpy.ndarray, shape (S,)
        The posterior of s_T, equal to ``belief_filter(...)[-1]``.

    Raises
    ------
    ValueError
        As :func:`belief_filter`, with a history of probability 0 naming ``observations``
        (or ``initial_observation`` if o_0 alone is impossible), and if S^(T+1) exceeds one
        million (naming ``observations``).

    References
    ----------
    L. R. Rabiner, "A tutorial on hidden Markov models and selected applications in
    speech recognition", *Proceedings of the IEEE* 77, 257-286, 1989.

    Examples
    --------
    >>> transition = np.stack([np.eye(2)], axis=1)
    >>> sensor = [[0.8, 0.2], [0.2, 0.8]]
    >>> belief_by_enumeration([0.5, 0.5], [0, 0], [0, 0], transition, sensor)
    array([0.94117647, 0.05882353])
    """
    transition, observation_model = check_pomdp(
        transition, observation_model
    )
    num_states, num_actions, _ = transition.shape
    prior = check_belief(prior, "prior", num_states)
    actions, observations, initial_observation = check_history(
        actions,
        observations,
        initial_observation,
        num_actions,
        observation_model.shape[1],
    )
    steps = len(actions)
    check_enumeration_size(
        capped_power(num_states, steps + 1),  # exact up to the limit
        "observations",
        f"S**(T+1) = {num_states}**{steps + 1} > {MAX_ENUMERATION} state "
        "sequences",
    )
    if initial_observation is not None:
        evidence = prior @ observation_model[:, initial_observation]
        what = f"observation {initial_observation}"
        check_evidence(
            evidence, "initial_observation", what, given="under the prior"
        )

    posterior = np.zeros(num_states)
    for path in itertools.product(range(num_states), repeat=steps + 1):
        weight = prior[path[0]]
        if initial_observation is not None:
            weight *= observation_model[path[0], initial_observation]
        for t in range(steps):
            weight *= transition[path[t], actions[t], path[t + 1]]
            weight *= observation_model[path[t + 1], observations[t]]
        posterior[path[-1]] += weight
    evidence = check_evidence(
        posterior.sum(),
        "observations",
        "a history",
        given="given the actions and the prior",
    )
    return posterior / evidence
