"""Exercise ``action-values``: q_pi of a tabular MDP from the Bellman expectation equation."""

import numpy as np

from rlfound.grading.authoring.spec import (
    BOOK_SOLUTIONS,
    Answer,
    Compare,
    Exercise,
    Function,
    Manual,
    Property,
    Raises,
)


def conversation_case():
    """The chapter's two-turn conversation and its policy (q is known by hand)."""
    p_good = np.array([[0.6, 0.4], [0.8, 0.5], [0.3, 0.7]])  # rows: turn 1, after good, after bad
    transition = np.zeros((5, 2, 5))
    reward = np.zeros((5, 2, 5))
    for state, good, bad in ((0, 1, 2), (1, 3, 4), (2, 3, 4)):
        transition[state, :, good] = p_good[state]
        transition[state, :, bad] = 1.0 - p_good[state]
        reward[state, :, good] = 1.0
    transition[3, :, 3] = transition[4, :, 4] = 1.0
    policy = np.array([[0.5, 0.5], [0.8, 0.2], [0.4, 0.6], [0.5, 0.5], [0.5, 0.5]])
    terminal = np.array([False, False, False, True, True])
    return {
        "transition": transition,
        "reward": reward,
        "policy": policy,
        "gamma": 1.0,
        "terminal": terminal,
    }


def random_mdp(rng, num_states, num_actions, gamma, acyclic=False, terminal_rows="self-loop"):
    """A random tabular MDP with the last state terminal.

    ``acyclic`` moves only to later states, so every episode ends (needed for gamma = 1).
    ``terminal_rows`` is "self-loop" or "zeros": terminal rows must be ignored either way.
    """
    transition = rng.dirichlet(np.ones(num_states), size=(num_states, num_actions))
    if acyclic:
        for s in range(num_states - 1):
            transition[s, :, : s + 1] = 0.0
            transition[s] /= transition[s].sum(axis=-1, keepdims=True)
    terminal = np.zeros(num_states, dtype=bool)
    terminal[-1] = True
    transition[-1] = 0.0
    if terminal_rows == "self-loop":
        transition[-1, :, -1] = 1.0
    policy = rng.dirichlet(np.ones(num_actions), size=num_states)
    return {
        "transition": transition,
        "reward": rng.normal(size=(num_states, num_actions, num_states)),
        "policy": policy,
        "gamma": gamma,
        "terminal": terminal,
    }


def random_discounted(rng):
    """Discounted MDPs with 2 to 6 states and 1 to 3 actions."""
    return [
        random_mdp(rng, num_states, num_actions, float(rng.uniform(0.5, 0.99)))
        for num_states, num_actions in ((2, 2), (3, 1), (4, 2), (5, 3), (6, 2))
    ]


def random_episodic(rng):
    """Undiscounted (gamma = 1) MDPs whose episodes always end; terminal rows all zero."""
    return [
        random_mdp(rng, num_states, 2, 1.0, acyclic=True, terminal_rows="zeros")
        for num_states in (2, 4, 6)
    ]


def edge_discounts(rng):
    """gamma = 0 (q is the expected immediate reward) and a cyclic MDP with gamma = 1 but a
    terminal state reachable from everywhere."""
    cases = [random_mdp(rng, 4, 2, 0.0)]
    cyclic = random_mdp(rng, 4, 2, 1.0)
    cyclic["transition"][:-1, :, -1] += 0.3  # every live state can end the episode
    cyclic["transition"][:-1] /= cyclic["transition"][:-1].sum(axis=-1, keepdims=True)
    return [*cases, cyclic]


def satisfies_bellman_q(q, case):
    """q(s, a) = sum_s' P [R + gamma sum_a' pi(a'|s') q(s', a')], and 0 on terminal rows."""
    transition, reward, policy = case["transition"], case["reward"], case["policy"]
    terminal, gamma = case["terminal"], case["gamma"]
    if q.shape != policy.shape:
        return f"expected shape {policy.shape}, got {q.shape}"
    next_values = np.where(terminal, 0.0, (policy * q).sum(axis=1))
    target = np.einsum("sat,sat->sa", transition, reward + gamma * next_values)
    target[terminal] = 0.0
    gap = float(np.max(np.abs(q - target)))
    return gap <= 1e-8 or f"the Bellman equation for q is violated by up to {gap:.3g}"


def bad_policy():
    case = conversation_case()
    case["policy"] = case["policy"] * 1.5  # rows sum to 1.5
    return case


def bad_gamma():
    return {**conversation_case(), "gamma": 1.5}


EXERCISE = Exercise(
    id="action-values",
    title="Action values from the Bellman equation",
    chapter=3,
    stars=2,
    solution=BOOK_SOLUTIONS / "action_values.py",
    functions=[Function(name="q_values", parameters="transition, reward, policy, gamma, terminal")],
    checks=[
        Answer(
            name="conversation",
            function="q_values",
            kwargs=conversation_case(),
            expected=[[1.26, 1.02], [0.8, 0.5], [0.3, 0.7], [0.0, 0.0], [0.0, 0.0]],
            description="The chapter's conversation: q = (1.26, 1.02), (0.8, 0.5), (0.3, 0.7).",
        ),
        Compare(
            name="random-discounted",
            function="q_values",
            inputs=random_discounted,
            points=2,
            description="Matches the reference on random discounted MDPs.",
        ),
        Compare(
            name="episodic-gamma-one",
            function="q_values",
            inputs=random_episodic,
            description="gamma = 1 on MDPs whose episodes end; terminal rows are ignored.",
        ),
        Compare(
            name="edge-discounts",
            function="q_values",
            inputs=edge_discounts,
            description="gamma = 0, and gamma = 1 on an MDP with cycles that still terminates.",
        ),
        Property(
            name="bellman-q",
            function="q_values",
            inputs=random_discounted,
            holds=satisfies_bellman_q,
            description="The result satisfies the Bellman expectation equation for q.",
        ),
        Raises(
            name="policy-rows",
            function="q_values",
            kwargs=bad_policy(),
            description="A policy whose rows do not sum to 1 raises ValueError.",
        ),
        Raises(
            name="gamma-range",
            function="q_values",
            kwargs=bad_gamma(),
            description="gamma outside [0, 1] raises ValueError.",
        ),
    ],
    manual=[
        Manual(
            name="proof",
            points=2,
            description="Show that q = sum_s' P [R + gamma v] satisfies the Bellman equation for q "
            "(eq-bellman-q-mdp) and that sum_a pi(a|s) q(s, a) = v(s).",
        ),
    ],
)
