"""Exercise ``parser-marginal``: the probability of an action under a bigram model and a parser."""

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


def _next_token_probabilities(table):
    """softmax of every row, written here independently of any solution."""
    shifted = np.exp(table - table.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def forward_action_probabilities(bigram_table, length, token_actions, num_actions):
    """Pr(a) by a forward recursion over positions, without enumerating responses.

    ``alive[r]`` is the probability that every token so far is formatting and the last one
    is ``r`` (the start row before the first token). At each position the mass that moves to
    an action token is credited to that action; the mass that moves to a formatting token
    stays alive. Cost O(length V^2).
    """
    table = np.asarray(bigram_table, dtype=np.float64)
    token_actions = np.asarray(token_actions)
    vocab_size = table.shape[1]
    nxt = _next_token_probabilities(table)
    formatting = token_actions < 0
    alive = np.zeros(vocab_size + 1)
    alive[vocab_size] = 1.0
    result = np.zeros(num_actions)
    for _ in range(length):
        moved = alive @ nxt  # probability of each next token, still without an action before
        for action in range(num_actions):
            result[action] += moved[token_actions == action].sum()
        alive = np.zeros(vocab_size + 1)
        alive[:vocab_size] = np.where(formatting, moved, 0.0)
    return result


def random_models(rng, sizes=((2, 4), (3, 3), (4, 3), (5, 2), (4, 1))):
    """Random bigram tables with a random split of the vocabulary into actions and formatting."""
    cases = []
    for vocab_size, length in sizes:
        num_actions = int(rng.integers(1, min(3, vocab_size) + 1))
        token_actions = rng.integers(-1, num_actions, size=vocab_size)
        token_actions[rng.integers(vocab_size)] = -1  # at least one formatting token
        cases.append(
            {
                "bigram_table": rng.normal(scale=1.5, size=(vocab_size + 1, vocab_size)),
                "length": length,
                "token_actions": token_actions.astype(np.int64),
                "num_actions": num_actions,
            }
        )
    return cases


def extreme_action_rows(rng):
    """The rows of the action tokens set to huge values: the answer must not change."""
    cases = random_models(rng)
    for case in cases:
        rows = np.flatnonzero(case["token_actions"] >= 0)
        table = case["bigram_table"]
        table[rows] = rng.uniform(-60.0, 60.0, size=(len(rows), table.shape[1]))
    return cases


def large_logits(rng):
    """Logits in the hundreds: exponentiating them directly overflows."""
    return [
        {
            "bigram_table": rng.normal(scale=300.0, size=(4, 3)),
            "length": 3,
            "token_actions": np.array([0, 1, -1]),
            "num_actions": 2,
        },
        {
            "bigram_table": np.array([[800.0, 0.0], [0.0, 800.0], [800.0, 799.0]]),
            "length": 2,
            "token_actions": np.array([0, -1]),
            "num_actions": 1,
        },
    ]


def edge_cases(rng):
    """Length 1, no action token at all, and no formatting token at all."""
    table = rng.normal(size=(4, 3))
    return [
        {
            "bigram_table": table,
            "length": 1,
            "token_actions": np.array([0, -1, 1]),
            "num_actions": 2,
        },
        {
            "bigram_table": table,
            "length": 3,
            "token_actions": np.array([-1, -1, -1]),
            "num_actions": 2,
        },
        {
            "bigram_table": table,
            "length": 3,
            "token_actions": np.array([0, 1, 1]),
            "num_actions": 2,
        },
    ]


def matches_forward_recursion(probabilities, case):
    """Enumeration and the forward recursion are two computations of the same numbers."""
    want = forward_action_probabilities(**case)
    if probabilities.shape != want.shape:
        return f"expected shape {want.shape}, got shape {probabilities.shape}"
    gap = float(np.max(np.abs(probabilities - want)))
    return gap <= 1e-9 or f"differs from the forward recursion by up to {gap:.3g}"


def total_is_parse_probability(probabilities, case):
    """The probabilities add up to Pr(the response contains an action token) <= 1."""
    want = float(forward_action_probabilities(**case).sum())
    got = float(np.sum(probabilities))
    return abs(got - want) <= 1e-9 or f"they sum to {got:.6g}; Pr(some action) = {want:.6g}"


# The chapter's model: vocabulary "A", "B", " ", "."; the first letter decides the action.
BOOK_TABLE = np.array(
    [
        [-1.5, -1.5, 0.0, 1.5],
        [-1.5, -1.5, 0.5, 0.5],
        [-0.5, 1.0, 0.0, -0.5],
        [-0.5, 0.0, 0.5, 0.5],
        [1.0, 0.6, 0.6, -0.5],
    ]
)
BOOK_CASE = {
    "bigram_table": BOOK_TABLE,
    "length": 3,
    "token_actions": np.array([0, 1, -1, -1]),
    "num_actions": 2,
}

EXERCISE = Exercise(
    id="parser-marginal",
    title="The action probability of a parser",
    chapter=2,
    stars=3,
    solution=BOOK_SOLUTIONS / "parser_marginal.py",
    functions=[
        Function(
            name="action_probabilities",
            parameters="bigram_table, length, token_actions, num_actions",
        )
    ],
    checks=[
        Answer(
            name="book-model",
            function="action_probabilities",
            kwargs=BOOK_CASE,
            expected=forward_action_probabilities(**BOOK_CASE),
            description="The chapter's bigram model: Pr(A) = 0.4507, Pr(B) = 0.4812.",
        ),
        Compare(
            name="random-models",
            function="action_probabilities",
            inputs=random_models,
            points=2,
            description="Matches the reference on random bigram models and parsers.",
        ),
        Property(
            name="forward-recursion",
            function="action_probabilities",
            inputs=random_models,
            holds=matches_forward_recursion,
            description="Agrees with an independent forward recursion over positions.",
        ),
        Property(
            name="total-mass",
            function="action_probabilities",
            inputs=random_models,
            holds=total_is_parse_probability,
            description="Sums to the probability that the response contains an action token.",
        ),
        Property(
            name="action-rows-irrelevant",
            function="action_probabilities",
            inputs=extreme_action_rows,
            holds=matches_forward_recursion,
            description="The rows of action tokens (used only after the parse) do not matter.",
        ),
        Compare(
            name="edge-cases",
            function="action_probabilities",
            inputs=edge_cases,
            description="Length 1, no action token, and no formatting token.",
        ),
        Compare(
            name="large-logits",
            function="action_probabilities",
            inputs=large_logits,
            description="Stays finite and exact for logits in the hundreds.",
        ),
        Raises(
            name="table-shape",
            function="action_probabilities",
            kwargs={
                "bigram_table": np.zeros((4, 4)),
                "length": 2,
                "token_actions": np.array([0, 1, -1, -1]),
                "num_actions": 2,
            },
            description="A table without the start row (V x V) raises ValueError.",
        ),
        Raises(
            name="token-actions-range",
            function="action_probabilities",
            kwargs={
                "bigram_table": np.zeros((5, 4)),
                "length": 2,
                "token_actions": np.array([0, 2, -1, -1]),
                "num_actions": 2,
            },
            description="An action id >= num_actions raises ValueError.",
        ),
        Raises(
            name="token-actions-length",
            function="action_probabilities",
            kwargs={
                "bigram_table": np.zeros((5, 4)),
                "length": 2,
                "token_actions": np.array([0, 1, -1]),
                "num_actions": 2,
            },
            description="token_actions with the wrong length raises ValueError.",
        ),
    ],
    manual=[
        Manual(
            name="action-rows",
            points=2,
            description="Show that Pr(a) does not depend on the table rows of action tokens.",
        ),
        Manual(
            name="forward-recursion",
            points=2,
            description=(
                "Derive a recursion over positions that computes Pr(a) in O(L V^2) operations."
            ),
        ),
    ],
)
