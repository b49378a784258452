"""Exercise ``belief-update`` (chapter 2, two stars): one step of the Bayes filter.

In a partially observable Markov decision process (POMDP) the agent does not see the state
s. It keeps a belief bel(s) = Pr(s_t = s | history). After taking action a and receiving the
observation o emitted by the next state, the new belief is

    bel'(s') = O(o | s') sum_s P(s' | s, a) bel(s)  /  Pr(o | bel, a),

where Pr(o | bel, a) = sum_{s'} O(o | s') sum_s P(s' | s, a) bel(s) is the probability of the
observation. Array conventions (as in ``rlfound.pomdp``):

* ``transition`` has shape (S, A, S) and ``transition[s, a, s2] = P(s2 | s, a)``;
* ``observation_model`` has shape (S, O) and ``observation_model[s, o] = O(o | s)``.

Implement :func:`belief_update` with NumPy only. An observation the prediction says is
impossible (Pr(o | b, a) = 0) has no posterior: raise ``ValueError`` naming ``observation``.
"""

from __future__ import annotations

import numpy as np


def belief_update(belief, action, observation, transition, observation_model):
    """The belief over hidden states after one action and one observation.

    Parameters
    ----------
    belief : array_like
        Shape (S,): the current belief, a probability distribution over the S states.
    action : int
        The action taken, in [0, A).
    observation : int
        The observation received from the next state, in [0, O).
    transition : array_like
        Shape (S, A, S): ``transition[s, a, s2] = P(s2 | s, a)``; each ``[s, a]`` row sums to 1.
    observation_model : array_like
        Shape (S, O): ``observation_model[s, o] = O(o | s)``; each row sums to 1.

    Returns
    -------
    numpy.ndarray
        Shape (S,), float64: the new belief.

    Raises
    ------
    ValueError
        If ``belief`` is not a distribution over S states, ``transition`` or
        ``observation_model`` has the wrong shape or rows that are not distributions,
        ``action`` or ``observation`` is not an index in range, or ``observation`` has
        probability 0 under the predicted belief; the message starts with the argument's name.

    Examples
    --------
    A sensor that reports the true state 80% of the time, and a state that never changes:

    >>> stay = np.eye(2)[:, None, :]  # shape (2, 1, 2): one action
    >>> belief_update([0.5, 0.5], 0, 0, stay, [[0.8, 0.2], [0.2, 0.8]]).tolist()
    [0.8, 0.2]
    """

    ### BEGIN SOLUTION
    def distribution_rows(x, name, ndim):
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != ndim or x.shape[-1] < 1:
            raise ValueError(f"{name} must be a {ndim}-D array of distributions; got {x.shape}")
        if not np.all(np.isfinite(x)) or np.any(x < 0):
            raise ValueError(f"{name} must be finite and non-negative")
        if not np.allclose(x.sum(axis=-1), 1.0, rtol=0.0, atol=1e-8):
            raise ValueError(f"{name} must sum to 1 along its last axis")
        return x

    def index(x, name, size):
        if isinstance(x, bool) or not isinstance(x, int | np.integer) or not 0 <= x < size:
            raise ValueError(f"{name} must be an integer in [0, {size}); got {x!r}")
        return int(x)

    transition = distribution_rows(transition, "transition", 3)
    num_states, num_actions, _ = transition.shape
    if transition.shape != (num_states, num_actions, num_states):
        raise ValueError(f"transition must have shape (S, A, S); got {transition.shape}")
    observation_model = distribution_rows(observation_model, "observation_model", 2)
    if observation_model.shape[0] != num_states:
        raise ValueError(
            f"observation_model must have {num_states} rows; got {observation_model.shape}"
        )
    belief = distribution_rows(belief, "belief", 1)
    if belief.shape != (num_states,):
        raise ValueError(f"belief must have {num_states} entries; got {belief.shape}")
    action = index(action, "action", num_actions)
    observation = index(observation, "observation", observation_model.shape[1])

    predicted = belief @ transition[:, action, :]  # sum_s bel(s) P(s' | s, a)
    joint = observation_model[:, observation] * predicted  # times the likelihood O(o | s')
    evidence = joint.sum()  # Pr(o | b, a)
    if evidence <= 0.0:
        raise ValueError(f"observation {observation} has probability 0 under the predicted belief")
    return joint / evidence
    ### END SOLUTION
