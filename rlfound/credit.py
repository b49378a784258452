"""Credit assignment across the turns of an episode: turn-level returns, potential-based
shaping, counterfactual branching, and options with semi-Markov discounting.

An agent's episode is a sequence of turns; a reward may arrive after each turn or only at the
end. The functions here turn those rewards into credit for individual decisions:

- :func:`turn_reward_to_go` discounts turn rewards per turn (not per token) and copies each
  turn's reward-to-go onto the tokens of that turn;
- :func:`shaped_reward` and :func:`shaped_episode_rewards` add the potential-based shaping
  term F = γΦ(s') - Φ(s), for a tabular reward function and for one episode;
- :func:`branch_advantage` estimates A(s, a) = q(s, a) - v(s) from continuations sampled
  from a restored copy of state s;
- :func:`option_model`, :func:`option_segments` and :func:`option_returns` describe a
  temporally extended action (an option): its discounted reward and its discounted
  end-state distribution, and the manager's return G_k = r̄_k + γ^τ_k G_{k+1}.

Tabular models use the format of :mod:`rlfound.mdp` (``transition`` and ``reward`` of shape
(S, A, S), ``policy`` of shape (S, A), an optional ``terminal`` mask).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    MAX_ARRAY_ENTRIES,
    ROW_SUM_TOLERANCE,
    SUPPORT_TOLERANCE,
    as_array,
    as_float_array,
    check_bool,
    check_indices,
    check_mask,
    check_positive_int,
    check_rng,
    check_shape,
    check_size,
    check_state_function,
    check_tabular_mdp,
    check_terminal,
    check_unit_interval,
    finite_output,
    raise_first,
)
from rlfound.advantages import td_errors
from rlfound.episodes import sample_episodes
from rlfound.returns import discounted_cumsum, discounted_returns
from rlfound.tokens import expand_turn_values_to_tokens

__all__ = [
    "branch_advantage",
    "option_model",
    "option_returns",
    "option_segments",
    "shaped_episode_rewards",
    "shaped_reward",
    "turn_reward_to_go",
]


# --- turn-level reward-to-go ------------------------------------------------------------------


@finite_output()
def turn_reward_to_go(
    turn_rewards: ArrayLike, token_turn_ids: ArrayLike, gamma: float
) -> np.ndarray:
    """Reward-to-go of every turn, discounted per turn, copied onto the tokens of the turn.

        G_k = Σ_{j >= k} γ^{j-k} r_j,
        out[..., l] = G_k  if token l belongs to turn k,
        out[..., l] = 0    if token l is not a policy token.

    The discount counts turns, not tokens: a turn of 300 tokens is one step. Each turn's
    credit holds only the rewards of that turn and later ones, never those of earlier turns,
    which are independent of its action and would only add noise. This is
    :func:`rlfound.returns.discounted_returns` over the turns followed by
    :func:`rlfound.tokens.expand_turn_values_to_tokens`; prompt, observation (tool output) and
    padding tokens, marked -1, get exactly 0.

    Book: equation (eq-turn-reward-to-go), chapter 9.

    Parameters
    ----------
    turn_rewards : array_like, shape (..., K)
        Reward r_k received after turn k (0 where a turn earned nothing); leading axes a batch.
    token_turn_ids : array_like of int, shape (..., L)
        For each token, the turn in [0, K) whose action it belongs to, or -1 for a token the
        policy did not generate. Leading shape equal to that of ``turn_rewards``.
    gamma : float
        Discount factor per turn, in [0, 1].

    Returns
    -------
    numpy.ndarray, shape (..., L)
        The turn's reward-to-go on each policy token, 0 elsewhere, float64.

    Raises
    ------
    ValueError
        If ``turn_rewards`` is a scalar or non-finite, ``token_turn_ids`` has another leading
        shape or an id outside [-1, K), or ``gamma`` is outside [0, 1].

    Notes
    -----
    verl's ``compute_reinforce_plus_plus_outcome_advantage`` (``verl/trainer/ppo/core_algos.py``,
    version read) instead discounts per *token* and multiplies its running return by the
    response mask after each position, so in a multi-turn row whose tool-output tokens are
    masked, no reward of a later turn reaches an earlier one.

    References
    ----------
    R. J. Williams, "Simple statistical gradient-following algorithms for connectionist
    reinforcement learning", *Machine Learning* 8, 229-256, 1992.
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 13.3.

    Examples
    --------
    Two turns of two tokens each, separated by a tool output (-1): the first turn earns 0.5,
    the second 1.

    >>> turn_reward_to_go([0.5, 1.0], token_turn_ids=[0, 0, -1, -1, 1, 1], gamma=0.9)
    array([1.4, 1.4, 0. , 0. , 1. , 1. ])
    """
    turn_rewards = as_float_array(turn_rewards, "turn_rewards", min_ndim=1)
    gamma = check_unit_interval(gamma, "gamma")

    return expand_turn_values_to_tokens(
        discounted_returns(turn_rewards, gamma), token_turn_ids
    )


# --- potential-based shaping ------------------------------------------------------------------


@finite_output()
def shaped_reward(
    reward: ArrayLike,
    potential: ArrayLike,
    gamma: float,
    terminal: ArrayLike | None = None,
    zero_terminal: bool = True,
) -> np.ndarray:
    """Potential-based shaping of a tabular reward function.

        R'(s, a, s') = R(s, a, s') + γ Φ(s') - Φ(s),
        with Φ(s') = 0 for terminal s'.

    Along any episode the shaping terms telescope, Σ_t γ^t F_t = γ^T Φ(s_T) - Φ(s_0), so when
    every episode ends in a state of potential 0, q'_π(s, a) = q_π(s, a) - Φ(s) for every
    policy and q'* = q* - Φ(s): the same actions are optimal. With ``zero_terminal`` (the
    default) the potential of terminal states is taken to be 0 whatever ``potential`` holds
    there, which is the condition for this invariance in episodic tasks. With
    ``zero_terminal=False`` the potential is used as given; a non-zero potential at a terminal
    state then leaves the term γ^T Φ(s_T) in the return, which depends on where and when the
    episode ends and can change the optimal policy (γ = 1 with one potential shared by all
    terminal states is the exception: the term is then a constant).

    Rows of terminal states (never used) are returned unshaped.

    Book: equations (eq-potential-shaping) and (eq-shaped-values), chapter 9.

    Parameters
    ----------
    reward : array_like, shape (S, A, S)
        reward[s, a, s'] = R(s, a, s').
    potential : array_like, shape (S,)
        The potential Φ(s), any finite numbers.
    gamma : float
        Discount factor γ in [0, 1], the one the task is solved with.
    terminal : array_like of bool or 0/1, shape (S,), optional
        Terminal states. Default: none.
    zero_terminal : bool, optional
        Whether Φ is 0 at terminal states (True, the invariant form) or used as given.

    Returns
    -------
    numpy.ndarray, shape (S, A, S)
        The shaped reward R', float64.

    Raises
    ------
    ValueError
        If ``reward`` is not a finite (S, A, S) array, ``potential`` does not have one finite
        entry per state, ``gamma`` is outside [0, 1], ``terminal`` is not a bool or 0/1 mask
        of shape (S,), or ``zero_terminal`` is not a bool.

    References
    ----------
    A. Y. Ng, D. Harada and S. Russell, "Policy invariance under reward transformations:
    theory and application to reward shaping", ICML, 1999.
    M. Grześ, "Reward shaping in episodic reinforcement learning", AAMAS, 2017.

    Examples
    --------
    One live state that ends the episode with reward 1; Φ = 0.4 there. The shaped reward of
    the transition is 1 + 0.9 * 0 - 0.4, or 1 + 0.9 * 2 - 0.4 if the terminal potential 2 is
    kept.

    >>> reward = np.zeros((2, 1, 2)); reward[0, 0, 1] = 1.0
    >>> shaped_reward(reward, [0.4, 2.0], 0.9, terminal=[False, True])[0, 0, 1]
    np.float64(0.6)
    >>> shaped_reward(reward, [0.4, 2.0], 0.9, terminal=[False, True], zero_terminal=False)[0, 0, 1]
    np.float64(2.4)
    """
    reward = _check_reward_table(reward)
    num_states = reward.shape[0]
    potential = check_state_function(potential, "potential", num_states)
    gamma = check_unit_interval(gamma, "gamma")
    terminal = check_terminal(terminal, num_states)
    zero_terminal = check_bool(zero_terminal, "zero_terminal")

    next_potential = (
        np.where(terminal, 0.0, potential) if zero_terminal else potential
    )
    shaping = (
        gamma * next_potential[None, None, :] - potential[:, None, None]
    )
    shaping[terminal] = (
        0.0  # nothing is paid from a terminal state: its rows are never used
    )
    return reward + shaping


@finite_output()
def shaped_episode_rewards(
    rewards: ArrayLike, potentials: ArrayLike, gamma: float
) -> np.ndarray:
    """Potential-based shaping of the rewards of one episode (or a batch of them).

        r'_t = r_t + γ Φ(s_{t+1}) - Φ(s_t),    t = 0, ..., T - 1,

    and so Σ_{k >= t} γ^{k-t} r'_k = G_t - Φ(s_t) + γ^{T-t} Φ(s_T). Pass Φ(s_T) = 0 when the
    episode ended in a terminal state: the reward-to-go of the shaped rewards is then the
    return minus the state baseline Φ(s_t), and with Φ = V it is the Monte Carlo advantage.
    Each shaped reward is the TD error of the "critic" Φ
    (:func:`rlfound.advantages.td_errors`, which computes it).

    Book: equations (eq-potential-shaping) and (eq-shaping-baseline), chapter 9.

    Parameters
    ----------
    rewards : array_like, shape (..., T)
        Rewards r_t of the episode; leading axes a batch.
    potentials : array_like, shape (..., T + 1)
        Φ(s_0), ..., Φ(s_T): the potential of each state visited, the last entry that of the
        state reached after the last reward (0 after a true termination).
    gamma : float
        Discount factor γ in [0, 1].

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The shaped rewards r'_t, float64.

    Raises
    ------
    ValueError
        If ``rewards`` is a scalar or non-finite, ``potentials`` is non-finite or does not
        have the leading shape of ``rewards`` and one more entry on the last axis, or
        ``gamma`` is outside [0, 1].

    References
    ----------
    A. Y. Ng, D. Harada and S. Russell, "Policy invariance under reward transformations:
    theory and application to reward shaping", ICML, 1999.

    Examples
    --------
    A terminal reward of 1 after three turns, with potentials 0.2, 0.5, 0.5 and 0 at the end
    (γ = 1): the shaped rewards sum to 1 - 0.2.

    >>> shaped_episode_rewards([0.0, 0.0, 1.0], [0.2, 0.5, 0.5, 0.0], gamma=1.0)
    array([0.3, 0. , 0.5])
    """
    rewards = as_float_array(rewards, "rewards", min_ndim=1)
    potentials = as_float_array(potentials, "potentials", min_ndim=1)
    expected = (*rewards.shape[:-1], rewards.shape[-1] + 1)
    check_shape(
        potentials,
        "potentials",
        expected,
        "the leading shape of rewards and T + 1 entries",
    )
    gamma = check_unit_interval(gamma, "gamma")

    return td_errors(rewards, potentials, gamma)


# --- counterfactual branching -----------------------------------------------------------------


def _check_branching(
    transition: np.ndarray,
    terminal: np.ndarray,
    state: Any,
    action: Any,
    gamma: Any,
    num_branches: Any,
    horizon: Any,
    rng: Any,
) -> tuple[int, int, float, int, int, np.random.Generator]:
    """The arguments of :func:`branch_advantage` beyond its (checked) MDP: a live state to
    branch from, an action, and K branches of ``horizon`` steps within the array limit."""
    num_states, num_actions, _ = transition.shape
    state = int(
        check_indices(state, "state", num_states, ndim=0, kind="state")
    )
    if terminal[state]:
        raise ValueError(
            "state must be a live (non-terminal) state to branch from; got "
            f"terminal state {state}"
        )
    action = int(check_indices(action, "action", num_actions, ndim=0))
    gamma = check_unit_interval(gamma, "gamma")
    num_branches = check_positive_int(num_branches, "num_branches")
    horizon = check_positive_int(horizon, "horizon")
    check_size(
        num_branches * (horizon + 1),
        "num_branches * (horizon + 1)",
        MAX_ARRAY_ENTRIES,
        "array entries",
    )
    rng = check_rng(rng)
    return state, action, gamma, num_branches, horizon, rng


@finite_output()
def branch_advantage(
    transition: ArrayLike,
    reward: ArrayLike,
    policy: ArrayLike,
    state: int,
    action: int,
    gamma: float,
    num_branches: int,
    horizon: int,
    terminal: ArrayLike | None = None,
    rng: np.random.Generator | int | None = None,
) -> float:
    """Counterfactual branching estimate of the advantage of one action in one state.

        Â = (1/K) Σ_k G^(a)_k - (1/K) Σ_k G^(π)_k,

    where each G^(a)_k is the return of a continuation restored to ``state`` that takes
    ``action`` first and then follows π, and each G^(π)_k the return of a continuation
    restored to ``state`` that follows π from the start. The 2K continuations are independent,
    so E[Â] = q_π(s, a) - v_π(s) and Var[Â] = (Var[G | s, a] + Var[G | s]) / K. Every
    continuation stops after at most ``horizon`` steps without bootstrapping, so Â estimates
    the advantage of the ``horizon``-step values; choose ``horizon`` at least the length of the
    longest episode for the full advantage.

    The estimate is only as good as the restore: the continuations must start from the very
    state the episode was in. A copy that drops part of the state (a file, a cache, a hidden
    variable of the environment) starts every branch somewhere else, and the estimate is the
    advantage there instead; pass that state to see the bias.

    Book: equations (eq-branch-advantage) and (eq-branch-variance), chapter 9.

    Parameters
    ----------
    transition, reward, policy
        The tabular MDP and the policy π the continuations follow, as in
        :func:`rlfound.mdp.state_values`.
    state : int
        The saved state s the branches start from; must not be terminal.
    action : int
        The action a whose advantage is estimated.
    gamma : float
        Discount factor γ in [0, 1].
    num_branches : int
        Number K >= 1 of continuations for each of the two means (2K in all).
    horizon : int
        Largest number of steps of a continuation, counting the first one (>= 1).
    terminal : array_like of bool or 0/1, shape (S,), optional
        Terminal states. Default: none.
    rng : numpy.random.Generator, int or None, optional
        Source of randomness: a Generator, or a seed for a new one (None: fresh entropy).

    Returns
    -------
    float
        The estimate Â.

    Raises
    ------
    ValueError
        As :func:`rlfound.episodes.sample_episodes` for the MDP, the policy, ``horizon`` and
        ``rng``; and if ``state`` is not a live state index, ``action`` is not an action index,
        ``gamma`` is outside [0, 1] or ``num_branches`` is not a positive integer.

    References
    ----------
    A. Kazemnejad, M. Aghajohari, E. Portelance, A. Sordoni, S. Reddy, A. Courville and
    N. Le Roux, "VinePPO: refining credit assignment in RL training of LLMs", ICML, 2025.
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 8.10 (rollout algorithms).

    Examples
    --------
    One decision, then the end: action 1 pays 1 and action 0 pays 0, and π picks each half
    the time, so A(0, 1) = 1 - 0.5 = 0.5; with 1000 branches each way the estimate is close.

    >>> transition = np.zeros((2, 2, 2)); transition[:, :, 1] = 1.0
    >>> reward = np.zeros((2, 2, 2)); reward[0, 1, 1] = 1.0
    >>> estimate = branch_advantage(transition, reward, np.full((2, 2), 0.5), state=0, action=1,
    ...                             gamma=1.0, num_branches=1000, horizon=1,
    ...                             terminal=[False, True], rng=0)
    >>> abs(estimate - 0.5) < 0.05
    True
    """
    transition, reward, policy, terminal = check_tabular_mdp(
        transition, reward, policy, terminal
    )
    state, action, gamma, num_branches, horizon, rng = _check_branching(
        transition,
        terminal,
        state,
        action,
        gamma,
        num_branches,
        horizon,
        rng,
    )

    # K continuations that take the action first: the first step by hand,
    # then π from the state it reached (sample_episodes starts from that
    # distribution and reports the state).
    after = sample_episodes(
        transition,
        reward,
        policy,
        transition[state, action],
        max(horizon - 1, 1),
        num_branches,
        terminal,
        rng,
    )
    first_reward = reward[state, action, after.states[:, 0]]
    continued = (
        discounted_returns(after.rewards, gamma)[:, 0]
        if horizon > 1
        else 0.0
    )
    with_action = first_reward + gamma * continued

    # K continuations that follow π from the saved state.
    start = np.eye(transition.shape[0])[state]
    following = sample_episodes(
        transition,
        reward,
        policy,
        start,
        horizon,
        num_branches,
        terminal,
        rng,
    )
    with_policy = discounted_returns(following.rewards, gamma)[:, 0]
    return float(with_action.mean() - with_policy.mean())


# --- options and semi-Markov discounting -----------------------------------------------------


@finite_output()
def option_model(
    transition: ArrayLike,
    reward: ArrayLike,
    policy: ArrayLike,
    termination: ArrayLike,
    gamma: float,
    terminal: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The discounted reward and end-state model of an option (its multi-time model).

    An option runs its own policy π_o from the state s it was started in, for at least one
    step, and on arriving in a state s' it stops with probability β(s') (always when s' is
    terminal). With τ its random duration and s_τ where it stopped,

        R_o(s)     = E[r_0 + γ r_1 + ... + γ^{τ-1} r_{τ-1} | s_0 = s],
        M_o(s, x)  = Σ_k γ^k Pr(τ = k, s_τ = x | s_0 = s),

    which solve, with P_o the transition matrix of π_o and B = diag(β),

        R_o = r_o + γ P_o (I - B) R_o,    M_o = γ P_o B + γ P_o (I - B) M_o.

    The rows of M_o sum to E[γ^τ] <= γ: the discount an option's duration costs. With these,
    a manager that chooses among options has the semi-Markov Bellman equation
    V(s) = max_o [R_o(s) + Σ_x M_o(s, x) V(x)]; a one-step option (β = 1 everywhere) gives
    back R_o(s) = r(s, a) and M_o = γ P(· | s, a). Rows of terminal start states are 0.

    Book: equations (eq-option-model) and (eq-smdp-bellman), chapter 9.

    Parameters
    ----------
    transition, reward
        The tabular MDP, as in :func:`rlfound.mdp.state_values`.
    policy : array_like, shape (S, A)
        The option's own policy π_o(a | s); rows of terminal states are ignored.
    termination : array_like, shape (S,)
        β(s) in [0, 1], the probability of stopping on arrival in s (terminal states always
        stop, whatever is given there).
    gamma : float
        Discount factor γ in [0, 1].
    terminal : array_like of bool or 0/1, shape (S,), optional
        Terminal states. Default: none.

    Returns
    -------
    option_reward : numpy.ndarray, shape (S,)
        R_o(s).
    option_transition : numpy.ndarray, shape (S, S)
        M_o(s, x), the discounted probability of stopping in x.

    Raises
    ------
    ValueError
        If the arrays do not follow the tabular format, ``termination`` is not one
        probability per state, ``gamma`` is outside [0, 1], ``terminal`` is not a bool or 0/1
        mask, or ``gamma`` is 1 and the option can run forever from some state (naming
        ``termination``).

    References
    ----------
    R. S. Sutton, D. Precup and S. Singh, "Between MDPs and semi-MDPs: a framework for
    temporal abstraction in reinforcement learning", *Artificial Intelligence* 112(1-2),
    181-211, 1999.

    Examples
    --------
    A chain 0 -> 1 -> 2 (terminal) with reward 1 on the last step; the option "walk until the
    end" from state 0 earns γ after two steps and ends in state 2 with weight γ².

    >>> transition = np.zeros((3, 1, 3))
    >>> transition[0, 0, 1] = transition[1, 0, 2] = transition[2, 0, 2] = 1.0
    >>> reward = np.zeros((3, 1, 3)); reward[1, 0, 2] = 1.0
    >>> option_reward, option_transition = option_model(
    ...     transition, reward, np.ones((3, 1)), termination=[0.0, 0.0, 1.0], gamma=0.5,
    ...     terminal=[False, False, True])
    >>> option_reward, option_transition[0]
    (array([0.5, 1. , 0. ]), array([0.  , 0.  , 0.25]))
    """
    transition, reward, policy, terminal = check_tabular_mdp(
        transition, reward, policy, terminal
    )
    num_states = transition.shape[0]
    termination = _check_termination(termination, num_states)
    gamma = check_unit_interval(gamma, "gamma")

    live = ~terminal
    stops = np.where(
        terminal, 1.0, termination
    )  # an option always ends with the episode
    step = np.einsum("sa,sat->st", policy, transition)  # P_o
    step_reward = np.einsum(
        "sa,sat,sat->s", policy, transition, reward
    )  # r_o
    step[terminal] = (
        0.0  # no option starts in (or continues from) a terminal state
    )
    step_reward[terminal] = 0.0
    continuing = gamma * step * (1.0 - stops)[None, :]  # γ P_o (I - B)
    _check_option_ends(continuing, live, gamma)

    system = np.eye(num_states) - continuing
    option_reward = np.linalg.solve(system, step_reward)
    option_transition = np.linalg.solve(
        system, gamma * step * stops[None, :]
    )
    return option_reward, option_transition


@finite_output()
def option_segments(
    rewards: ArrayLike, option_starts: ArrayLike, gamma: float
) -> tuple[np.ndarray, np.ndarray]:
    """Split one episode's rewards into the options that produced them.

        r̄_k = Σ_{j=0}^{τ_k - 1} γ^j r_{t_k + j},    τ_k = t_{k+1} - t_k,

    where t_0 = 0 < t_1 < ... are the steps at which an option started (``option_starts``)
    and the last option runs to the end of the episode. r̄_k is what option k earned,
    discounted from its own start; τ_k is its duration in primitive steps. With these,
    :func:`option_returns` gives the manager's returns.

    Book: equation (eq-option-return), chapter 9.

    Parameters
    ----------
    rewards : array_like, shape (T,)
        The primitive rewards r_0, ..., r_{T-1} of one episode.
    option_starts : array_like of bool or 0/1, shape (T,)
        True at the steps where a new option began; the first entry must be True.
    gamma : float
        Discount factor γ in [0, 1].

    Returns
    -------
    option_rewards : numpy.ndarray, shape (K,)
        r̄_k, float64.
    durations : numpy.ndarray of int64, shape (K,)
        τ_k >= 1, summing to T.

    Raises
    ------
    ValueError
        If ``rewards`` is not a finite 1-D array with at least one entry, ``option_starts``
        does not have its shape, is not 0/1 or does not start with True, or ``gamma`` is
        outside [0, 1].

    References
    ----------
    R. S. Sutton, D. Precup and S. Singh, "Between MDPs and semi-MDPs: a framework for
    temporal abstraction in reinforcement learning", *Artificial Intelligence* 112(1-2),
    181-211, 1999.

    Examples
    --------
    >>> option_segments([1.0, 0.0, 2.0, 1.0], option_starts=[1, 0, 0, 1], gamma=0.5)
    (array([1.5, 1. ]), array([3, 1]))
    """
    rewards = as_float_array(rewards, "rewards", ndim=1)
    if rewards.size == 0:
        raise ValueError(
            "rewards must have at least one step; got shape (0,)"
        )
    option_starts = check_mask(option_starts, "option_starts", rewards.shape)
    if not option_starts[0]:
        raise ValueError(
            "option_starts must be True at step 0 (the first step belongs "
            "to an option); got False"
        )
    gamma = check_unit_interval(gamma, "gamma")

    starts = np.flatnonzero(option_starts)
    durations = np.diff(np.append(starts, rewards.size)).astype(np.int64)
    # Discount each reward from the start of its own option, then add them up per option.
    owner = np.cumsum(option_starts) - 1
    offset = np.arange(rewards.size) - starts[owner]
    option_rewards = np.bincount(
        owner, weights=gamma**offset * rewards, minlength=starts.size
    )
    return option_rewards, durations


@finite_output()
def option_returns(
    option_rewards: ArrayLike, durations: ArrayLike, gamma: float
) -> np.ndarray:
    """The manager's returns in a semi-Markov decision process: one per option.

        G_k = r̄_k + γ^{τ_k} G_{k+1},    G_K = 0,

    where r̄_k is the discounted reward option k earned and τ_k its duration. The discount
    between two manager decisions is γ^τ, not γ: time passes inside an option. At every option
    start, G_k equals the ordinary discounted return G_t of the primitive rewards from that
    step, so the hierarchy changes who receives the credit (one decision per option instead
    of one per step), not how much reward there is. This is the backward scan
    :func:`rlfound.returns.discounted_cumsum` with the discounts γ^{τ_k}.

    Book: equation (eq-option-return), chapter 9.

    Parameters
    ----------
    option_rewards : array_like, shape (..., K)
        r̄_k of each option, in order; leading axes a batch.
    durations : array_like of int, shape (..., K)
        τ_k >= 1 of each option (integers; whole floats are accepted).
    gamma : float
        Discount factor γ in [0, 1].

    Returns
    -------
    numpy.ndarray, shape (..., K)
        The returns G_k, float64.

    Raises
    ------
    ValueError
        If ``option_rewards`` is a scalar or non-finite, ``durations`` is ragged (nested
        lists of unequal lengths), does not have its shape or holds a value that is not an
        integer >= 1, or ``gamma`` is outside [0, 1].

    References
    ----------
    R. S. Sutton, D. Precup and S. Singh, "Between MDPs and semi-MDPs: a framework for
    temporal abstraction in reinforcement learning", *Artificial Intelligence* 112(1-2),
    181-211, 1999.
    S. J. Bradtke and M. O. Duff, "Reinforcement learning methods for continuous-time Markov
    decision problems", NeurIPS, 1994.

    Examples
    --------
    The options of the example of :func:`option_segments`: G_0 = 1.5 + 0.5³ · 1.

    >>> option_returns([1.5, 1.0], durations=[3, 1], gamma=0.5)
    array([1.625, 1.   ])
    """
    option_rewards = as_float_array(
        option_rewards, "option_rewards", min_ndim=1
    )
    durations = _check_durations(durations, option_rewards.shape)
    gamma = check_unit_interval(gamma, "gamma")

    return discounted_cumsum(option_rewards, gamma**durations)


# --- private checks ---------------------------------------------------------------------------


def _check_reward_table(reward: Any) -> np.ndarray:
    """A finite reward table of shape (S, A, S) with S, A >= 1."""
    reward = as_float_array(reward, "reward", ndim=3)
    num_states, num_actions, next_states = reward.shape
    if num_states < 1 or num_actions < 1 or next_states != num_states:
        raise ValueError(
            "reward must have shape (S, A, S) with S, A >= 1, reward[s, a, "
            f"s'] = R(s, a, s'); got shape {reward.shape}"
        )
    return reward


def _check_termination(termination: Any, num_states: int) -> np.ndarray:
    """One stopping probability in [0, 1] per state."""
    termination = as_float_array(termination, "termination", ndim=1)
    check_shape(
        termination,
        "termination",
        (num_states,),
        "one probability per state",
    )
    outside = (termination < 0.0) | (termination > 1.0)
    if outside.any():
        state = int(np.flatnonzero(outside)[0])
        raise ValueError(
            "termination must be probabilities in [0, 1]; got "
            f"{float(termination[state])!r} at index ({state},)"
        )
    return termination


def _check_option_ends(
    continuing: np.ndarray, live: np.ndarray, gamma: float
) -> None:
    """The option's equations (I - γ P_o (I - B)) x = b have a finite solution.

    With the tolerances of the Bellman solves (:mod:`rlfound._validation.limits`): a row of
    the discounted continuation γ P_o (I - B) may not sum above 1 + ``ROW_SUM_TOLERANCE``,
    and from every live state the option must reach, through steps above
    ``SUPPORT_TOLERANCE``, a state whose continuation sums below 1 - ``ROW_SUM_TOLERANCE``
    (the option stops, the episode ends, or γ < 1 discounts). A stop of 1e-17 next to a
    continuation of 1 vanishes in floating point and does not count.
    """
    totals = continuing.sum(axis=1)
    over = live & (totals > 1.0 + ROW_SUM_TOLERANCE)
    if over.any():
        state = int(np.flatnonzero(over)[0])
        raise ValueError(
            "transition must satisfy gamma * (row sum) <= 1 (within "
            f"{ROW_SUM_TOLERANCE:g}) for the option to have finite values; "
            f"got {float(totals[state])!r} in state {state}"
        )
    ends = ~live | (totals < 1.0 - ROW_SUM_TOLERANCE)
    moves = continuing > SUPPORT_TOLERANCE
    while True:
        grown = ends | moves[:, ends].any(axis=1)
        if np.array_equal(grown, ends):
            break
        ends = grown
    forever = live & ~ends
    if forever.any():
        state = int(np.flatnonzero(forever)[0])
        when = (
            "when gamma = 1"
            if gamma == 1.0
            else f"when gamma = {gamma!r} (within 1e-12 of 1)"
        )
        raise ValueError(
            "termination must let the option stop with probability 1 "
            f"{when}; got an option that can run forever from state {state}"
        )


def _check_durations(durations: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Integer durations >= 1 (whole floats accepted) of exactly ``shape``, as float64."""
    array = as_array(durations, "durations")
    if array.shape != shape:
        raise ValueError(
            f"durations must have the shape of option_rewards, {shape}; got "
            f"shape {array.shape}"
        )
    if array.dtype.kind not in "iuf":
        raise ValueError(
            f"durations must be integers >= 1; got dtype {array.dtype}"
        )
    bad = ~np.isfinite(array) | (array != np.round(array)) | (array < 1)
    raise_first(bad, "durations must be integers >= 1", values=array)
    return array.astype(np.float64)
