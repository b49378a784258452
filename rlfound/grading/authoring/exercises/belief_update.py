"""Exercise ``belief-update``: one step of the Bayes filter of a POMDP."""

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


def random_pomdps(rng, shapes=((2, 1, 2), (3, 2, 2), (4, 3, 3), (5, 2, 4))):
    """Random POMDPs (S states, A actions, O observations) with full-support rows."""
    cases = []
    for states, actions, observations in shapes:
        cases.append(
            {
                "belief": rng.dirichlet(np.ones(states)),
                "action": int(rng.integers(actions)),
                "observation": int(rng.integers(observations)),
                "transition": rng.dirichlet(np.ones(states), size=(states, actions)),
                "observation_model": rng.dirichlet(np.ones(observations), size=states),
            }
        )
    return cases


def sparse_pomdps(rng):
    """Zeros in the belief, the dynamics and the sensor: the posterior keeps exact zeros."""
    transition = np.zeros((3, 2, 3))
    transition[:, 0, :] = np.eye(3)  # action 0: stay
    transition[:, 1, :] = np.roll(np.eye(3), 1, axis=1)  # action 1: move to s + 1 (mod 3)
    sensor = np.array([[0.9, 0.1, 0.0], [0.0, 0.5, 0.5], [0.2, 0.0, 0.8]])
    return [
        {
            "belief": np.array([0.5, 0.5, 0.0]),
            "action": 0,
            "observation": 1,
            "transition": transition,
            "observation_model": sensor,
        },
        {
            "belief": np.array([0.5, 0.5, 0.0]),
            "action": 1,
            "observation": 2,
            "transition": transition,
            "observation_model": sensor,
        },
        {
            "belief": rng.dirichlet(np.ones(3)),
            "action": 1,
            "observation": 0,
            "transition": transition,
            "observation_model": np.eye(3),  # a perfect sensor: the belief becomes one-hot
        },
    ]


def bayes_over_state_pairs(new_belief, case):
    """Bayes' rule on the joint of (s, s'), marginalised over s: written independently."""
    joint = (
        case["belief"][:, None]
        * case["transition"][:, case["action"], :]
        * case["observation_model"][None, :, case["observation"]]
    )
    want = joint.sum(axis=0) / joint.sum()
    if new_belief.shape != want.shape:
        return f"expected shape {want.shape}, got shape {new_belief.shape}"
    gap = float(np.max(np.abs(new_belief - want)))
    return gap <= 1e-9 or f"differs from Bayes' rule on (s, s') pairs by up to {gap:.3g}"


def screened_pomdps(rng):
    """Random POMDPs in which the observation received is impossible in some states (and
    possible in the others): the posterior must move away from the prior."""
    cases = random_pomdps(rng)
    for case in cases:
        states = len(case["belief"])
        model = case["observation_model"].copy()
        observation = case["observation"]
        excluded = rng.permutation(states)[: int(rng.integers(1, states))] if states > 1 else []
        model[excluded, observation] = 0.0
        model /= model.sum(axis=1, keepdims=True)
        case["observation_model"] = model
    return cases


def is_distribution(new_belief, case):
    """A belief is a probability distribution over the states, and after an observation it is
    supported exactly by the states where that observation is possible (the prior, which
    is a distribution too, is not)."""
    if new_belief.ndim != 1 or new_belief.shape[0] != len(case["belief"]):
        return f"expected shape {np.shape(case['belief'])}, got shape {new_belief.shape}"
    if np.any(new_belief < 0):
        return "it has negative entries"
    total = float(new_belief.sum())
    if abs(total - 1.0) > 1e-9:
        return f"it sums to {total:.6g}, not 1"
    reachable = case["belief"] @ case["transition"][:, case["action"], :]
    possible = (reachable > 0) & (case["observation_model"][:, case["observation"]] > 0)
    if np.any(new_belief[~possible] > 1e-12):
        return "it gives probability to a state in which the observation is impossible"
    if not np.all(new_belief[possible] > 0):
        return "it gives no probability to a state in which the observation is possible"
    return True


TIGER = {
    "transition": np.eye(2)[:, None, :],  # the tiger stays where it is while the agent listens
    "observation_model": np.array([[0.85, 0.15], [0.15, 0.85]]),
}

EXERCISE = Exercise(
    id="belief-update",
    title="The Bayes filter",
    chapter=2,
    stars=2,
    solution=BOOK_SOLUTIONS / "belief_update.py",
    functions=[
        Function(
            name="belief_update",
            parameters="belief, action, observation, transition, observation_model",
        )
    ],
    checks=[
        Answer(
            name="tiger-second-listen",
            function="belief_update",
            kwargs={"belief": np.array([0.85, 0.15]), "action": 0, "observation": 0, **TIGER},
            expected=[0.7225 / 0.745, 0.0225 / 0.745],
            description="The tiger heard on the left a second time: P(left) = 0.7225 / 0.745.",
        ),
        Compare(
            name="random-pomdps",
            function="belief_update",
            inputs=random_pomdps,
            points=2,
            description="Matches the reference on random POMDPs.",
        ),
        Property(
            name="bayes-rule",
            function="belief_update",
            inputs=random_pomdps,
            holds=bayes_over_state_pairs,
            description="Equals Bayes' rule applied to the pairs (s, s').",
        ),
        Property(
            name="distribution",
            function="belief_update",
            inputs=screened_pomdps,
            holds=is_distribution,
            description=(
                "Returns a probability distribution on the states where the observation is "
                "possible."
            ),
        ),
        Compare(
            name="sparse",
            function="belief_update",
            inputs=sparse_pomdps,
            description="Zeros in the belief, the dynamics and the sensor; a perfect sensor.",
        ),
        Raises(
            name="impossible-observation",
            function="belief_update",
            kwargs={
                "belief": np.array([1.0, 0.0]),
                "action": 0,
                "observation": 1,
                "transition": np.eye(2)[:, None, :],
                "observation_model": np.eye(2),
            },
            description="An observation of probability 0 raises ValueError.",
        ),
        Raises(
            name="belief-not-a-distribution",
            function="belief_update",
            kwargs={"belief": np.array([0.7, 0.7]), "action": 0, "observation": 0, **TIGER},
            description="A belief that does not sum to 1 raises ValueError.",
        ),
        Raises(
            name="action-out-of-range",
            function="belief_update",
            kwargs={"belief": np.array([0.5, 0.5]), "action": 1, "observation": 0, **TIGER},
            description="An action index outside [0, A) raises ValueError.",
        ),
    ],
    manual=[
        Manual(
            name="derivation",
            points=3,
            description=(
                "Derive eq-belief-update from Bayes' rule, naming where the Markov property and "
                "the observation model's dependence on the current state only are used."
            ),
        ),
    ],
)
