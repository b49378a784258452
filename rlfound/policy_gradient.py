"""Policy gradients of tabular softmax policies: trajectories, their score, and REINFORCE.

In a tabular MDP (the format of :mod:`rlfound.mdp`) a softmax policy has one row of logits
per state, ``logits`` of shape (S, A) with π(a | s) = softmax(logits[s])_a. One episode is a
row of :class:`rlfound.episodes.Episodes`: ``states`` (T + 1,), ``actions`` (T,) and
``rewards`` (T,), where the steps after the episode ended carry action -1 and reward 0 and
are skipped. The score of each step is :func:`rlfound.distributions.categorical_score`; the
reward-to-go is :func:`rlfound.returns.discounted_returns`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    as_float_array,
    check_bool,
    check_dynamics,
    check_episode,
    check_episode_rewards,
    check_indices,
    check_initial,
    check_shape,
    check_state_function,
    check_tabular_logits,
    check_unit_interval,
    check_weights,
    finite_output,
)
from rlfound.distributions import categorical_score, log_softmax, softmax
from rlfound.mdp import state_values
from rlfound.returns import discounted_returns

__all__ = [
    "expected_return",
    "optimal_state_baseline",
    "reinforce_trajectory_gradient",
    "trajectory_log_probability",
    "trajectory_score",
]


def _check_policy_and_dynamics(
    transition: ArrayLike,
    logits: ArrayLike,
    initial: ArrayLike,
    terminal: ArrayLike | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dynamics (rows of terminal states ignored), matching (S, A) logits, a start distribution."""
    transition, _ = check_dynamics(transition, terminal)
    logits = check_tabular_logits(logits, transition)
    return transition, logits, check_initial(initial, transition.shape[0])


@finite_output(
    log_of_zero=True
)  # -inf is the exact log p of an impossible episode
def trajectory_log_probability(
    logits: ArrayLike,
    transition: ArrayLike,
    initial: ArrayLike,
    states: ArrayLike,
    actions: ArrayLike,
    terminal: ArrayLike | None = None,
) -> float:
    """Log-probability of an episode under a tabular softmax policy and the MDP's dynamics.

        log p_θ(τ) = log p_0(s_0)
                     + Σ_{t<T} [log π_θ(a_t | s_t)
                                + log P(s_{t+1} | s_t, a_t)].

    Only the policy terms depend on θ, which is why the gradient
    (:func:`trajectory_score`) needs no model of the environment.

    Book: equation (eq-trajectory-probability), chapter 3.

    Parameters
    ----------
    logits : array_like, shape (S, A)
        Policy logits θ.
    transition : array_like, shape (S, A, S)
        transition[s, a, s'] = P(s' | s, a); every row a distribution.
    initial : array_like, shape (S,)
        Start distribution p_0.
    states : array_like of int, shape (T + 1,)
        s_0, ..., s_T.
    actions : array_like of int, shape (T,)
        a_0, ..., a_{T-1}; a trailing block of -1 (steps after the episode ended) is
        skipped, together with the states after it.
    terminal : array_like of bool, shape (S,), optional
        Terminal states, as in :func:`rlfound.mdp.state_values`: the episode ends on
        entering one, so their rows of ``transition`` are ignored (they may be all zero).

    Returns
    -------
    float
        log p_θ(τ); ``-inf`` for an episode the start distribution or the dynamics cannot
        produce.

    Raises
    ------
    ValueError
        If ``logits`` is not (S, A) matching ``transition``, ``transition`` or ``initial``
        is not made of distributions (rows of terminal states excepted), ``states``/
        ``actions`` are not index arrays in range with T + 1 and T entries (-1 allowed only
        as trailing padding of actions), or an action is taken in a terminal state.

    References
    ----------
    R. J. Williams, "Simple statistical gradient-following algorithms for connectionist
    reinforcement learning", *Machine Learning* 8, 229-256, 1992.

    Examples
    --------
    >>> transition = np.zeros((2, 2, 2)); transition[:, :, 1] = 1.0
    >>> trajectory_log_probability(np.zeros((2, 2)), transition, [1.0, 0.0],
    ...                            states=[0, 1], actions=[1])
    -0.6931471805599453
    """
    transition, logits, initial = _check_policy_and_dynamics(
        transition, logits, initial, terminal
    )
    states, actions, length = check_episode(
        states, actions, *logits.shape, terminal=terminal
    )

    here, chosen, there = (
        states[:length],
        actions[:length],
        states[1 : length + 1],
    )
    # log 0 = -inf is the right answer for an impossible episode, not a
    # warning.
    with np.errstate(divide="ignore"):
        return float(
            np.log(initial[states[0]])
            + log_softmax(logits)[here, chosen].sum()
            + np.log(transition[here, chosen, there]).sum()
        )


@finite_output()
def trajectory_score(
    logits: ArrayLike, states: ArrayLike, actions: ArrayLike
) -> np.ndarray:
    """Gradient of an episode's log-probability with respect to the policy logits.

        ∇_θ log p_θ(τ) = Σ_{t<T} ∇_θ log π_θ(a_t | s_t)
                       = Σ_{t<T} e_{s_t} ⊗ (e_{a_t} - π_θ(· | s_t)).

    The start distribution and the transition probabilities do not depend on θ and drop
    out, so the score needs only the visited states and the chosen actions: row s collects
    e_a - π(· | s) once for every visit to s.

    Book: equation (eq-trajectory-score), chapter 3.

    Parameters
    ----------
    logits : array_like, shape (S, A)
        Policy logits θ.
    states : array_like of int, shape (T + 1,)
        s_0, ..., s_T (s_T is not used: no action is taken there).
    actions : array_like of int, shape (T,)
        a_0, ..., a_{T-1}, with optional trailing -1 padding, which is skipped.

    Returns
    -------
    numpy.ndarray, shape (S, A)
        ∇_θ log p_θ(τ); rows of unvisited states are 0 and every row sums to 0.

    Raises
    ------
    ValueError
        If ``logits`` is not a finite (S, A) array, or ``states``/``actions`` are not index
        arrays in range with T + 1 and T entries (-1 only as trailing padding of actions).

    References
    ----------
    R. J. Williams, "Simple statistical gradient-following algorithms for connectionist
    reinforcement learning", *Machine Learning* 8, 229-256, 1992.

    Examples
    --------
    >>> trajectory_score(np.zeros((2, 2)), states=[0, 0, 1], actions=[1, 1])
    array([[-1.,  1.],
           [ 0.,  0.]])
    """
    logits = check_tabular_logits(logits)
    states, actions, length = check_episode(states, actions, *logits.shape)

    here, chosen = (
        states[:length],
        actions[:length],
    )  # the padding after the end is skipped
    score = np.zeros_like(logits)
    np.add.at(
        score, here, categorical_score(logits[here], chosen)
    )  # row s_t += e_{a_t} - π
    return score


@finite_output()
def expected_return(
    logits: ArrayLike,
    transition: ArrayLike,
    reward: ArrayLike,
    initial: ArrayLike,
    gamma: float,
    terminal: ArrayLike | None = None,
) -> float:
    """Expected discounted return of a tabular softmax policy, exactly.

        J(θ) = E[Σ_t γ^t r_t] = Σ_s p_0(s) v_{π_θ}(s),

    with v_π from the Bellman expectation equation (:func:`rlfound.mdp.state_values`).
    The objective whose gradient REINFORCE estimates; differentiating this exact value by
    finite differences gives the reference gradient.

    Book: equation (eq-reinforce-total), chapter 3.

    Parameters
    ----------
    logits : array_like, shape (S, A)
        Policy logits θ.
    transition : array_like, shape (S, A, S)
        transition[s, a, s'] = P(s' | s, a).
    reward : array_like, shape (S, A, S)
        reward[s, a, s'] = R(s, a, s').
    initial : array_like, shape (S,)
        Start distribution p_0.
    gamma : float
        Discount factor γ in [0, 1] (γ = 1 needs every state to reach a terminal state).
    terminal : array_like of bool, shape (S,), optional
        Terminal states (worth 0; their rows are ignored).

    Returns
    -------
    float
        J(θ).

    Raises
    ------
    ValueError
        If ``logits`` does not have the (S, A) of ``transition``, the MDP arrays or
        ``initial`` are malformed, or ``gamma`` is invalid (see
        :func:`rlfound.mdp.state_values`, whose tolerances and ``"overflow in the Bellman
        solve"`` error apply here too).

    References
    ----------
    R. S. Sutton, D. McAllester, S. Singh and Y. Mansour, "Policy gradient methods for
    reinforcement learning with function approximation", NeurIPS, 2000.

    Examples
    --------
    >>> transition = np.zeros((2, 2, 2)); transition[:, :, 1] = 1.0
    >>> reward = np.zeros((2, 2, 2)); reward[0, 1, 1] = 1.0
    >>> expected_return([[0.0, np.log(3.0)], [0.0, 0.0]], transition, reward, [1.0, 0.0],
    ...                 gamma=1.0, terminal=np.array([False, True]))
    0.75
    """
    transition, logits, initial = _check_policy_and_dynamics(
        transition, logits, initial, terminal
    )

    values = state_values(
        transition, reward, softmax(logits), gamma, terminal=terminal
    )
    return float(initial @ values)


@finite_output()
def reinforce_trajectory_gradient(
    logits: ArrayLike,
    states: ArrayLike,
    actions: ArrayLike,
    rewards: ArrayLike,
    gamma: float,
    reward_to_go: bool = True,
    baseline: ArrayLike | None = None,
) -> np.ndarray:
    """REINFORCE estimate of ∇J from one episode of a tabular softmax policy.

        ĝ = Σ_t w_t ∇_θ log π_θ(a_t | s_t),

    with weight w_t = G_0 = Σ_k γ^k r_k (the total return, ``reward_to_go=False``) or
    w_t = γ^t G_t with G_t = Σ_{k>=t} γ^(k-t) r_k (the reward to go, the default), and,
    when a baseline b(s) is given, w_t -= γ^t b(s_t) in either form. All these are
    unbiased for the gradient of J(θ) = E[Σ_t γ^t r_t]: rewards earned before a_t do not
    depend on it, and neither does b(s_t), so both average to zero against the score; the
    reward to go and the baseline only reduce the variance. γ = 1 is the usual setting for
    language-model agents.

    Book: equations (eq-reinforce-total) and (eq-reinforce-rtg), chapter 3.

    Parameters
    ----------
    logits : array_like, shape (S, A)
        Logits θ of the policy that generated the episode.
    states : array_like of int, shape (T + 1,)
        s_0, ..., s_T.
    actions : array_like of int, shape (T,)
        a_0, ..., a_{T-1}, with optional trailing -1 padding (steps after the episode
        ended), which is skipped.
    rewards : array_like, shape (T,)
        r_0, ..., r_{T-1}; 0 at padded steps.
    gamma : float
        Discount factor γ in [0, 1].
    reward_to_go : bool, optional
        Weight step t by γ^t G_t (True, default) or by G_0 (False).
    baseline : array_like, shape (S,), optional
        State-dependent baseline b(s). Default: none.

    Returns
    -------
    numpy.ndarray, shape (S, A)
        The one-episode estimate ĝ.

    Raises
    ------
    ValueError
        As :func:`trajectory_score`; and if ``rewards`` does not have one entry per step,
        is non-finite or non-zero at a padded step, ``gamma`` is outside [0, 1],
        ``reward_to_go`` is not a bool, or ``baseline`` is not a finite (S,) array.

    References
    ----------
    R. J. Williams, "Simple statistical gradient-following algorithms for connectionist
    reinforcement learning", *Machine Learning* 8, 229-256, 1992.
    E. Greensmith, P. L. Bartlett and J. Baxter, "Variance reduction techniques for gradient
    estimates in reinforcement learning", *JMLR* 5, 1471-1530, 2004.

    Examples
    --------
    Two steps in state 0 and a reward only for the first: with the total return the
    second action shares the credit (and here cancels the first's); with the reward to go
    it gets none.

    >>> reinforce_trajectory_gradient(np.zeros((1, 2)), [0, 0, 0], [0, 1], [1.0, 0.0],
    ...                               gamma=1.0, reward_to_go=False)
    array([[0., 0.]])
    >>> reinforce_trajectory_gradient(np.zeros((1, 2)), [0, 0, 0], [0, 1], [1.0, 0.0],
    ...                               gamma=1.0)
    array([[ 0.5, -0.5]])
    """
    logits = check_tabular_logits(logits)
    states, actions, length = check_episode(states, actions, *logits.shape)
    rewards = check_episode_rewards(rewards, actions, length)[:length]
    gamma = check_unit_interval(gamma, "gamma")
    reward_to_go = check_bool(reward_to_go, "reward_to_go")
    baseline = check_state_function(
        baseline, "baseline", len(logits), optional=True
    )

    here, chosen = states[:length], actions[:length]
    discounts = gamma ** np.arange(
        length
    )  # γ^t, with γ^0 = 1 even when γ = 0
    if reward_to_go:
        weights = discounts * discounted_returns(rewards, gamma)  # γ^t G_t
    else:
        weights = np.full(length, discounts @ rewards)  # G_0 for every step
    if baseline is not None:
        weights -= discounts * baseline[here]  # γ^t b(s_t)
    gradient = np.zeros_like(logits)
    np.add.at(
        gradient,
        here,
        weights[:, None] * categorical_score(logits[here], chosen),
    )
    return gradient


def _check_baseline_episodes(
    logits: Any,
    states: Any,
    actions: Any,
    rewards: Any,
    gamma: Any,
    weights: Any,
    reward_to_go: Any,
) -> tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, np.ndarray, bool
]:
    """The arguments of :func:`optimal_state_baseline`: tabular logits and padded episodes
    (each one checked as an episode of the tabular model), checked and converted."""
    logits = check_tabular_logits(logits)
    num_states, num_actions = logits.shape
    actions = check_indices(
        actions, "actions", num_actions, ndim=2, minimum=-1
    )
    states = check_indices(
        states, "states", num_states, ndim=2, kind="state"
    )
    episodes_shape = (actions.shape[0], actions.shape[1] + 1)
    check_shape(
        states,
        "states",
        episodes_shape,
        "one more column than actions, s_0 to s_H",
    )
    rewards = as_float_array(rewards, "rewards", ndim=2)
    check_shape(rewards, "rewards", actions.shape, "one entry per action")
    for row_states, row_actions, row_rewards in zip(
        states, actions, rewards, strict=True
    ):
        _, _, length = check_episode(
            row_states, row_actions, num_states, num_actions
        )
        check_episode_rewards(row_rewards, row_actions, length)
    gamma = check_unit_interval(gamma, "gamma")
    weights = check_weights(weights, "weights")
    check_shape(
        weights, "weights", actions.shape[:1], "one entry per episode"
    )
    reward_to_go = check_bool(reward_to_go, "reward_to_go")
    return logits, states, actions, rewards, gamma, weights, reward_to_go


@finite_output()
def optimal_state_baseline(
    logits: ArrayLike,
    states: ArrayLike,
    actions: ArrayLike,
    rewards: ArrayLike,
    gamma: float,
    weights: ArrayLike,
    reward_to_go: bool = True,
) -> np.ndarray:
    """The state baseline b*(s) that minimizes the variance of the REINFORCE estimate.

    The estimate is the one of :func:`reinforce_trajectory_gradient` with a baseline,

        ĝ(b) = Σ_t (w_t - γ^t b(s_t)) ψ_t,
        ψ_t = ∇_θ log π_θ(a_t | s_t) = e_{s_t} ⊗ (e_{a_t} - π_θ(· | s_t)),

    with w_t = γ^t G_t (the reward to go, the default) or G_0 (``reward_to_go=False``), and
    b a constant per state. Its mean does not depend on b, so the trace of its covariance,
    E‖ĝ(b)‖² - ‖∇J‖², is smallest where E‖ĝ(b)‖² is. The score ψ_t lives in row s_t, so
    row s of ĝ(b) is u_s - b(s) y_s with the sums over the visits to s in the episode

        u_s = Σ_{t: s_t = s} w_t ψ_t,    y_s = Σ_{t: s_t = s} γ^t ψ_t,

    and E‖ĝ(b)‖² is a sum over the states of parabolas in b(s), each smallest at

        b*(s) = E[⟨u_s, y_s⟩] / E[‖y_s‖²].

    When a state is visited at most once per episode, at step t, and with the reward to go,

        b*(s) = E[G_t ‖ψ_t‖² | s_t = s] / E[‖ψ_t‖² | s_t = s]
              = Σ_a π(a | s) ‖e_a - π(· | s)‖² q_π(s, a) / Σ_a π(a | s) ‖e_a - π(· | s)‖²:

    the action values averaged with the weights π(a | s) ‖e_a - π(· | s)‖² rather than the
    weights π(a | s) that give v_π(s). So v_π is not the optimal baseline, although often a
    close one: the excess variance grows with the square of b(s) - b*(s).

    The expectations are the weighted sums E[f] = Σ_i weights[i] f(τ_i) over the episodes
    given: exact for the episodes and probabilities of
    :func:`rlfound.episodes.enumerate_episodes`, a Monte Carlo estimate for sampled ones
    (weights 1/N). A state with E[‖y_s‖²] = 0 (never visited, or a deterministic policy
    there) does not affect the variance; its baseline is returned as 0.

    Book: equation (eq-optimal-baseline), chapter 3.

    Parameters
    ----------
    logits : array_like, shape (S, A)
        Logits θ of the policy that generated the episodes.
    states : array_like of int, shape (N, H + 1)
        s_0, ..., s_H of each episode, as in :class:`rlfound.episodes.Episodes`.
    actions : array_like of int, shape (N, H)
        a_0, ..., a_{H-1} of each episode, with a trailing block of -1 after it ended.
    rewards : array_like, shape (N, H)
        r_0, ..., r_{H-1} of each episode; 0 after it ended.
    gamma : float
        Discount factor γ in [0, 1].
    weights : array_like, shape (N,)
        What each episode counts for in an expectation: its probability (``weights`` of
        enumerated :class:`~rlfound.episodes.Episodes`) or 1/N (sampled ones); only the
        ratios matter, so they need not sum to 1.
    reward_to_go : bool, optional
        The estimator's weights: γ^t G_t (True, default) or G_0 (False).

    Returns
    -------
    numpy.ndarray, shape (S,)
        b*(s); 0 where E[‖y_s‖²] = 0.

    Raises
    ------
    ValueError
        If ``logits`` is not a finite (S, A) array; ``states``, ``actions`` are not index
        arrays in range of shapes (N, H + 1) and (N, H) (-1 only as trailing padding of
        actions); ``rewards`` is not a finite (N, H) array, 0 after each episode's end;
        ``gamma`` is outside [0, 1]; ``weights`` is not N non-negative numbers, not all 0;
        or ``reward_to_go`` is not a bool.

    References
    ----------
    E. Greensmith, P. L. Bartlett and J. Baxter, "Variance reduction techniques for gradient
    estimates in reinforcement learning", *JMLR* 5, 1471-1530, 2004.

    Examples
    --------
    One decision in state 0 (then state 1, the end): answer (π = 0.8) earns 0.8, clarify
    (π = 0.2) earns 0.5, so v_π(0) = 0.74. The variance-optimal baseline weights each value
    by the probability of the other action, 0.2 · 0.8 + 0.8 · 0.5:

    >>> optimal_state_baseline(np.log([[0.8, 0.2], [0.5, 0.5]]), states=[[0, 1], [0, 1]],
    ...                        actions=[[0], [1]], rewards=[[0.8], [0.5]], gamma=1.0,
    ...                        weights=[0.8, 0.2])
    array([0.56, 0.  ])
    """
    logits, states, actions, rewards, gamma, weights, reward_to_go = (
        _check_baseline_episodes(
            logits, states, actions, rewards, gamma, weights, reward_to_go
        )
    )
    num_states, num_actions = logits.shape

    taken = actions >= 0  # the steps of the episodes, not their padding
    episode, step = np.nonzero(taken)
    here, chosen = states[:, :-1][taken], actions[taken]
    scores = categorical_score(logits[here], chosen)  # ψ_t, as its row s_t
    discounts = gamma**step  # γ^t, with γ^0 = 1 even when γ = 0
    returns_to_go = discounted_returns(
        rewards, gamma
    )  # G_t (0 after the end)
    if reward_to_go:
        w = discounts * returns_to_go[taken]  # γ^t G_t
    else:
        w = returns_to_go[episode, 0]  # G_0 for every step
    # Row s of each episode's estimate: u_s - b(s) y_s.
    u = np.zeros((len(weights), num_states, num_actions))
    y = np.zeros_like(u)
    np.add.at(
        u, (episode, here), w[:, None] * scores
    )  # u_s = Σ_{t: s_t = s} w_t ψ_t
    np.add.at(
        y, (episode, here), discounts[:, None] * scores
    )  # y_s = Σ_{t: s_t = s} γ^t ψ_t
    numerator = weights @ np.sum(u * y, axis=2)  # E[⟨u_s, y_s⟩]
    denominator = weights @ np.sum(y * y, axis=2)  # E[‖y_s‖²]
    return np.divide(
        numerator,
        denominator,
        out=np.zeros(num_states),
        where=denominator > 0.0,
    )
