"""Exercise ``target-action-mask``: the target-aligned action mask and turn ids of an episode."""

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

POLICY = 3


def episode(rng, max_segments=8, max_tokens=6, left=None, extra=None):
    """A random episode layout: a context segment first, then segments of any kind (policy
    segments back to back included), in a row with random padding on a random side."""
    count = int(rng.integers(1, max_segments + 1))
    kinds = np.concatenate([[rng.choice([0, 1, 2, 4])], rng.choice(5, size=count - 1)])
    lengths = rng.integers(1, max_tokens + 1, size=count)
    total = int(lengths.sum())
    length = max(2, total + int(rng.integers(0, 5) if extra is None else extra))
    if left is None:
        left = bool(rng.random() < 0.5)
    offset = length - total if left else 0
    return {
        "kinds": kinds.astype(np.int64),
        "lengths": lengths.astype(np.int64),
        "length": length,
        "offset": offset,
    }


def random_episodes(rng):
    return [episode(rng) for _ in range(12)]


def middle_offsets(rng):
    """The episode anywhere in the row, not only at one end."""
    cases = []
    for _ in range(6):
        case = episode(rng, extra=int(rng.integers(2, 6)))
        total = int(case["lengths"].sum())
        case["offset"] = int(rng.integers(0, case["length"] - total + 1))
        cases.append(case)
    return cases


def edge_cases(rng):
    """A single context segment; a full row; a policy segment at the very end; two, then
    four policy segments back to back; a one-token policy segment after a one-token prompt."""
    cases = [
        {"kinds": np.array([1]), "lengths": np.array([3]), "length": 3, "offset": 0},
        {"kinds": np.array([0, 3, 2]), "lengths": np.array([2, 3, 1]), "length": 6, "offset": 0},
        {"kinds": np.array([0, 3]), "lengths": np.array([2, 3]), "length": 7, "offset": 2},
        {
            "kinds": np.array([1, 3, 3, 2]),
            "lengths": np.array([1, 2, 1, 2]),
            "length": 8,
            "offset": 1,
        },
        {
            "kinds": np.array([1, 3, 3, 3, 3]),
            "lengths": np.array([1, 1, 1, 1, 1]),
            "length": 5,
            "offset": 0,
        },
        {"kinds": np.array([1, 3]), "lengths": np.array([1, 1]), "length": 2, "offset": 0},
    ]
    return [
        {
            **case,
            "kinds": case["kinds"].astype(np.int64),
            "lengths": case["lengths"].astype(np.int64),
        }
        for case in cases
    ]


def policy_tokens(case):
    return int(np.sum(case["lengths"][case["kinds"] == POLICY]))


def agree(outputs, case):
    """The mask is exactly the set of targets that have a turn, one per policy token."""
    mask, turns = outputs["target_action_mask"], outputs["target_turn_ids"]
    expected = (case["length"] - 1,)
    if mask.shape != expected or turns.shape != expected:
        return f"expected shape {expected}, got {mask.shape} and {turns.shape}"
    if not np.array_equal(mask != 0, turns >= 0):
        return "target_action_mask is 1 exactly where target_turn_ids is >= 0: they disagree"
    if int(np.sum(mask != 0)) != policy_tokens(case):
        return f"the mask must select the {policy_tokens(case)} policy tokens, one target each"
    return True


def counts_turns(turns, case):
    """Every policy token has a turn; every policy segment is its own turn, in order."""
    segments = int(np.sum(case["kinds"] == POLICY))
    labels = turns[turns >= 0]
    if labels.size != policy_tokens(case):
        return f"expected {policy_tokens(case)} targets with a turn, got {labels.size}"
    if labels.size and not np.array_equal(np.unique(labels), np.arange(segments)):
        return f"expected the turns 0..{segments - 1}, got {np.unique(labels).tolist()}"
    if np.any(np.diff(labels) < 0):
        return "the turns must appear in order along the row"
    return True


EXERCISE = Exercise(
    id="target-action-mask",
    title="The action mask of the targets",
    chapter=13,
    stars=3,
    solution=BOOK_SOLUTIONS / "target_action_mask.py",
    functions=[
        Function(name="target_action_mask", parameters="kinds, lengths, length, offset"),
        Function(name="target_turn_ids", parameters="kinds, lengths, length, offset"),
    ],
    checks=[
        Compare(
            name="random-mask",
            function="target_action_mask",
            inputs=random_episodes,
            points=2,
            description="The action mask matches the reference on random episodes.",
        ),
        Compare(
            name="random-turns",
            function="target_turn_ids",
            inputs=random_episodes,
            points=2,
            description="The turn ids match the reference on random episodes.",
        ),
        Compare(
            name="edge-mask",
            function="target_action_mask",
            inputs=edge_cases,
            description="A full row, a policy segment at the end, adjacent policy segments.",
        ),
        Compare(
            name="edge-turns",
            function="target_turn_ids",
            inputs=edge_cases,
            points=2,
            description="Policy segments back to back are separate turns.",
        ),
        Compare(
            name="middle-offsets",
            function="target_action_mask",
            inputs=middle_offsets,
            description="The episode can start anywhere in the row.",
        ),
        Property(
            name="mask-and-turns-agree",
            function=("target_action_mask", "target_turn_ids"),
            inputs=random_episodes,
            holds=agree,
            description="The mask is 1 exactly where a turn id is set.",
        ),
        Property(
            name="turns-in-order",
            function="target_turn_ids",
            inputs=random_episodes,
            holds=counts_turns,
            description="Every policy segment is one turn, numbered 0, 1, 2, ... in order.",
        ),
        Raises(
            name="policy-first",
            function="target_action_mask",
            kwargs={
                "kinds": np.array([3, 1]),
                "lengths": np.array([2, 1]),
                "length": 4,
                "offset": 0,
            },
            description="A policy segment cannot come first: its first token has no prediction.",
        ),
        Raises(
            name="policy-first-turns",
            function="target_turn_ids",
            kwargs={"kinds": np.array([3]), "lengths": np.array([2]), "length": 2, "offset": 0},
            description="The same for the turn ids.",
        ),
        Raises(
            name="does-not-fit",
            function="target_action_mask",
            kwargs={
                "kinds": np.array([1, 3]),
                "lengths": np.array([2, 2]),
                "length": 4,
                "offset": 1,
            },
            description="An episode that does not fit in the row raises ValueError.",
        ),
    ],
    manual=[
        Manual(
            name="alignment",
            points=2,
            description=(
                "Explain, for the episode [user 2, policy 2, tool 1] right-padded to 6 positions, "
                "which tokens a mask written at the input positions of the policy tokens would "
                "train, and why the first policy token would lose its gradient."
            ),
        ),
    ],
)
