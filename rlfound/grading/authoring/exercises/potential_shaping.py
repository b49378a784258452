"""Exercise ``potential-shaping``: potential-based reward shaping, tabular and per episode."""

import numpy as np

from rlfound.grading.authoring.spec import (
    BOOK_SOLUTIONS,
    Compare,
    Exercise,
    Function,
    Manual,
    Property,
    Raises,
)
from rlfound.mdp import value_iteration


def table_case(rng, num_states, num_actions, gamma=None, num_terminal=1):
    """A random reward table, potential, discount and terminal mask (the last states)."""
    potential = rng.normal(size=num_states) * 2.0
    terminal = np.arange(num_states) >= num_states - num_terminal
    potential[terminal] = rng.normal(size=num_terminal) * 5.0  # must be ignored
    return {
        "reward": rng.normal(size=(num_states, num_actions, num_states)),
        "potential": potential,
        "gamma": float(rng.uniform(0.5, 0.99)) if gamma is None else gamma,
        "terminal": terminal,
    }


def random_tables(rng):
    """Tables of a few sizes, one or two terminal states."""
    return [
        table_case(rng, num_states, num_actions, num_terminal=num_terminal)
        for num_states, num_actions, num_terminal in ((2, 1, 1), (3, 2, 1), (5, 3, 2), (7, 2, 1))
    ]


def edge_tables(rng):
    """gamma at 0 and 1, no terminal state, and every state but one terminal."""
    return [
        table_case(rng, 4, 2, gamma=0.0),
        table_case(rng, 4, 2, gamma=1.0),
        table_case(rng, 4, 3, num_terminal=0),
        table_case(rng, 4, 2, num_terminal=3),
    ]


def dynamics_for(reward):
    """A fixed random transition model for a reward table of this shape (every entry > 0).

    The student's functions never see it; the invariance check recomputes it from the shape.
    """
    num_states, num_actions, _ = reward.shape
    rng = np.random.default_rng([num_states, num_actions, 2025])
    return rng.dirichlet(np.ones(num_states), size=(num_states, num_actions))


def invariance_tables(rng):
    """Random tables with gamma < 1, for the invariance of the optimal action values."""
    return [
        table_case(rng, num_states, num_actions, gamma=float(rng.uniform(0.3, 0.9)), num_terminal=k)
        for num_states, num_actions, k in ((3, 2, 1), (4, 3, 1), (6, 2, 2))
    ]


def optimal_values_shift_by_the_potential(shaped, case):
    """q*' = q* - Phi(s) on the live states, by value iteration on a fixed random model."""
    reward, potential, gamma = case["reward"], case["potential"], case["gamma"]
    terminal = case["terminal"]
    if shaped.shape != reward.shape:
        return f"expected shape {reward.shape}, got shape {shaped.shape}"
    transition = dynamics_for(reward)
    _, q, _ = value_iteration(transition, reward, gamma, terminal, tolerance=1e-12)
    _, q_shaped, _ = value_iteration(transition, shaped, gamma, terminal, tolerance=1e-12)
    live = ~terminal
    gap = float(np.max(np.abs(q_shaped - (q - potential[:, None]))[live]))
    return gap <= 1e-7 or f"q*' - (q* - Phi) reaches {gap:.3g} in a live state"


def episode_case(rng, shape, gamma=None):
    """Random rewards (..., T) and potentials (..., T + 1)."""
    return {
        "rewards": rng.normal(size=shape),
        "potentials": rng.normal(size=(*shape[:-1], shape[-1] + 1)),
        "gamma": float(rng.uniform(0.0, 1.0)) if gamma is None else gamma,
    }


def random_episodes(rng):
    """One episode, a batch, and T = 1."""
    return [episode_case(rng, shape) for shape in ((6,), (3, 5), (2, 1), (2, 3, 4))]


def extreme_episodes(rng):
    """gamma at 0 and 1."""
    return [episode_case(rng, (4, 7), gamma=gamma) for gamma in (0.0, 1.0)]


def shaped_rewards_telescope(shaped, case):
    """sum_t gamma^t r'_t = sum_t gamma^t r_t - Phi(s_0) + gamma^T Phi(s_T), row by row."""
    rewards, potentials, gamma = case["rewards"], case["potentials"], case["gamma"]
    if shaped.shape != rewards.shape:
        return f"expected shape {rewards.shape}, got shape {shaped.shape}"
    horizon = rewards.shape[-1]
    discounts = gamma ** np.arange(horizon)
    expected = rewards @ discounts - potentials[..., 0] + gamma**horizon * potentials[..., -1]
    gap = float(np.max(np.abs(shaped @ discounts - expected)))
    return gap <= 1e-9 or f"the discounted sums differ by up to {gap:.3g}"


def bad_table(**changes):
    case = {
        "reward": np.zeros((2, 1, 2)),
        "potential": np.array([0.5, 1.0]),
        "gamma": 0.9,
        "terminal": np.array([False, True]),
    }
    case.update(changes)
    return case


def bad_episode(**changes):
    case = {"rewards": np.zeros(3), "potentials": np.zeros(4), "gamma": 0.9}
    case.update(changes)
    return case


EXERCISE = Exercise(
    id="potential-shaping",
    title="Potential-based reward shaping",
    chapter=9,
    stars=2,
    solution=BOOK_SOLUTIONS / "potential_shaping.py",
    functions=[
        Function(name="shaped_reward", parameters="reward, potential, gamma, terminal"),
        Function(name="shaped_episode_rewards", parameters="rewards, potentials, gamma"),
    ],
    checks=[
        Compare(
            name="random-tables",
            function="shaped_reward",
            inputs=random_tables,
            points=2,
            description="Matches the reference on random reward tables with terminal states.",
        ),
        Compare(
            name="edge-tables",
            function="shaped_reward",
            inputs=edge_tables,
            description="gamma at 0 and 1, no terminal state, all but one state terminal.",
        ),
        Property(
            name="optimal-values-shift",
            function="shaped_reward",
            inputs=invariance_tables,
            holds=optimal_values_shift_by_the_potential,
            points=2,
            description="The shaped optimal action values are q* - Phi (value iteration).",
        ),
        Compare(
            name="random-episodes",
            function="shaped_episode_rewards",
            inputs=random_episodes,
            description="Matches the reference on one episode, batches and T = 1.",
        ),
        Compare(
            name="extreme-gamma-episodes",
            function="shaped_episode_rewards",
            inputs=extreme_episodes,
            description="gamma at 0 and 1.",
        ),
        Property(
            name="telescoping",
            function="shaped_episode_rewards",
            inputs=random_episodes,
            holds=shaped_rewards_telescope,
            description="The discounted sum of shaped rewards telescopes.",
        ),
        Raises(
            name="potential-shape",
            function="shaped_reward",
            kwargs=bad_table(potential=np.zeros(3)),
            description="A potential with the wrong number of states raises ValueError.",
        ),
        Raises(
            name="reward-shape",
            function="shaped_reward",
            kwargs=bad_table(reward=np.zeros((2, 1, 3))),
            description="A reward table that is not (S, A, S) raises ValueError.",
        ),
        Raises(
            name="table-gamma",
            function="shaped_reward",
            kwargs=bad_table(gamma=1.5),
            description="gamma outside [0, 1] raises ValueError.",
        ),
        Raises(
            name="potentials-length",
            function="shaped_episode_rewards",
            kwargs=bad_episode(potentials=np.zeros(3)),
            description="Potentials without the extra entry for s_T raise ValueError.",
        ),
        Raises(
            name="episode-not-finite",
            function="shaped_episode_rewards",
            kwargs=bad_episode(rewards=np.array([0.0, np.nan, 1.0])),
            description="A non-finite reward raises ValueError.",
        ),
    ],
    manual=[
        Manual(
            name="test-function",
            points=2,
            description=(
                "test_potential_shaping checks q*' = q* - Phi by value iteration on random MDPs "
                "with random potentials (ignored at terminal states) and the telescoping "
                "identity on random episodes, including gamma at 0 and 1."
            ),
        ),
    ],
)
