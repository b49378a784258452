"""Exercise ``loss-aggregation``: the five reductions of a batch of per-token losses.

The solution file provides the helper ``as_batch`` (shape, mask and finiteness checks), so
the checks of those errors are worth half a point each; the points are in the reductions,
the empty rows, the padding invariance, the token mean of no tokens and ``max_length``.
"""

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

PLAIN = ("token_mean", "seq_mean_token_mean", "seq_mean_token_sum")
CONSTANT = ("seq_mean_token_sum_norm", "dr_grpo")
JUNK = np.array([np.nan, np.inf, -np.inf, 1e300])


def batch(rng, rows, length, p_token=0.6, p_empty=0.2):
    """Random losses and mask; masked positions hold NaN or inf; some rows are empty."""
    mask = rng.random((rows, length)) < p_token
    mask[rng.random(rows) < p_empty] = False
    if not mask.any():
        mask[0, 0] = True
    loss = np.where(mask, rng.normal(scale=2.0, size=(rows, length)), rng.choice(JUNK))
    return loss, mask


def with_max_length(cases, rng):
    """The same batches with a max_length at least every row's token count."""
    out = []
    for case in cases:
        longest = int(case["mask"].sum(axis=1).max())
        out.append({**case, "max_length": max(longest, 1) + int(rng.integers(0, 4))})
    return out


def hand(rng):
    """The chapter's batch: sequences (4) and (1, 1, 1), a NaN at a padded position."""
    del rng
    return [
        {
            "loss": np.array([[4.0, np.nan, 0.0], [1.0, 1.0, 1.0]]),
            "mask": np.array([[True, False, False], [True, True, True]]),
        }
    ]


def random_batches(rng, shapes=((1, 1), (2, 5), (4, 3), (6, 12), (3, 1))):
    cases = []
    for rows, length in shapes:
        loss, mask = batch(rng, rows, length)
        cases.append({"loss": loss, "mask": mask.astype(int) if rng.random() < 0.5 else mask})
    return cases


def empty_rows(rng):
    """Most rows empty, or every row but one, or a mask selecting a single token."""
    cases = []
    for rows, length, p_empty in ((8, 6, 0.7), (5, 4, 0.95), (10, 3, 0.5)):
        loss, mask = batch(rng, rows, length, p_empty=p_empty)
        cases.append({"loss": loss, "mask": mask})
    loss, mask = batch(rng, 4, 5)
    mask[:] = False
    mask[2, 3] = True
    loss[2, 3] = float(rng.normal())
    cases.append({"loss": loss, "mask": mask})
    return cases


def padded(rng, shapes=((3, 4), (5, 6), (2, 9))):
    """Batches whose rows are shifted right by a random offset inside wider padded rows,
    the padding holding NaN or inf (what a left-padded, over-padded batch looks like)."""
    cases = []
    for rows, length in shapes:
        loss, mask = batch(rng, rows, length)
        width = length + int(rng.integers(1, 6))
        wide_loss = np.full((rows, width), rng.choice(JUNK))
        wide_mask = np.zeros((rows, width), dtype=bool)
        for row in range(rows):
            shift = int(rng.integers(0, width - length + 1))
            wide_loss[row, shift : shift + length] = loss[row]
            wide_mask[row, shift : shift + length] = mask[row]
        cases.append({"loss": wide_loss, "mask": wide_mask})
    return cases


def compact(case):
    """The same sequences left-aligned in rows just wide enough, zeros elsewhere."""
    mask = np.asarray(case["mask"]).astype(bool)
    loss = np.asarray(case["loss"], dtype=np.float64)
    width = max(int(mask.sum(axis=1).max()), 1)
    tight_loss = np.zeros((len(mask), width))
    tight_mask = np.zeros((len(mask), width), dtype=bool)
    for row in range(len(mask)):
        tokens = loss[row][mask[row]]
        tight_loss[row, : len(tokens)] = tokens
        tight_mask[row, : len(tokens)] = True
    return tight_loss, tight_mask


def reference_values(loss, mask, max_length=None):
    """The five reductions of the chapter, written out (trusted: evaluated by the grader)."""
    lengths = mask.sum(axis=1)
    sums = np.where(mask, loss, 0.0).sum(axis=1)
    means = np.divide(sums, lengths, out=np.zeros_like(sums), where=lengths > 0)
    values = {
        "token_mean": sums.sum() / lengths.sum(),
        "seq_mean_token_mean": means.mean(),
        "seq_mean_token_sum": sums.mean(),
    }
    if max_length is not None:
        values["seq_mean_token_sum_norm"] = sums.sum() / max_length
        values["dr_grpo"] = sums.sum() / (len(sums) * max_length)
    return values


def padding_changes_nothing(outputs, case):
    """Each output equals the reduction of the same sequences without padding or shifts."""
    tight_loss, tight_mask = compact(case)
    expected = reference_values(tight_loss, tight_mask, case.get("max_length"))
    for name, got in outputs.items():
        if got.shape != ():
            return f"{name} must return a scalar; got shape {got.shape}"
        want = expected[name]
        if not abs(float(got) - want) <= 1e-9 * (1.0 + abs(want)):
            return (
                f"{name} = {float(got)!r} on the padded batch, but {want!r} for the same "
                "sequences without padding"
            )
    return True


def bad(**changes):
    base = {
        "loss": np.array([[1.0, 2.0, 0.0], [3.0, 0.0, 0.0]]),
        "mask": np.array([[True, True, False], [True, False, False]]),
    }
    return {**base, **changes}


def compare(name, function, inputs, points=1.0, public=True, description=""):
    return Compare(
        name=name,
        function=function,
        inputs=inputs,
        points=points,
        public=public,
        description=description,
    )


def slug(function):
    return function.replace("_", "-")


def constant_aware(function, source):
    """Inputs of ``function``: ``source``'s cases, with a max_length for the constant ones."""
    if function not in CONSTANT:
        return source
    return lambda rng: with_max_length(source(rng), rng)


def per_function_checks():
    """The public Compare checks of every function: hand, random, empty rows."""
    checks = []
    for function in PLAIN + CONSTANT:
        checks += [
            compare(
                f"{slug(function)}-hand",
                function,
                constant_aware(function, hand),
                description="The chapter's batch (4) and (1, 1, 1), NaN on a padded position.",
            ),
            compare(
                f"{slug(function)}-random",
                function,
                constant_aware(function, random_batches),
                description="Random masks with empty rows; NaN or inf at masked positions.",
            ),
            compare(
                f"{slug(function)}-empty-rows",
                function,
                constant_aware(function, empty_rows),
                description="Batches where most rows are empty (each counts as loss 0).",
            ),
        ]
    return checks


def raises(name, function, description, points=1.0, **changes):
    return Raises(
        name=name,
        function=function,
        kwargs=bad(**changes),
        points=points,
        description=description,
    )


EXERCISE = Exercise(
    id="loss-aggregation",
    title="Loss aggregation: five reductions of a batch of token losses",
    chapter=8,
    stars=2,
    solution=BOOK_SOLUTIONS / "loss_aggregation.py",
    functions=[
        Function(name="token_mean", parameters="loss, mask"),
        Function(name="seq_mean_token_mean", parameters="loss, mask"),
        Function(name="seq_mean_token_sum", parameters="loss, mask"),
        Function(name="seq_mean_token_sum_norm", parameters="loss, mask, max_length"),
        Function(name="dr_grpo", parameters="loss, mask, max_length"),
    ],
    checks=[
        *per_function_checks(),
        Property(
            name="padding-invariance",
            function=PLAIN,
            inputs=padded,
            holds=padding_changes_nothing,
            points=2,
            description="Shifting rows inside wider, junk-filled padding changes nothing.",
        ),
        Property(
            name="padding-invariance-constant",
            function=CONSTANT,
            inputs=lambda rng: with_max_length(padded(rng), rng),
            holds=padding_changes_nothing,
            points=2,
            description="Padding beyond max_length changes neither constant reduction.",
        ),
        raises(
            "token-mean-no-token",
            "token_mean",
            "The token mean of a batch without tokens raises ValueError (never NaN).",
            mask=np.zeros((2, 3), dtype=bool),
        ),
        raises(
            "mask-shape",
            "seq_mean_token_mean",
            "A mask of another shape raises ValueError.",
            points=0.5,
            mask=np.ones((2, 2), dtype=bool),
        ),
        raises(
            "mask-values",
            "seq_mean_token_sum",
            "A mask entry other than 0/1 raises ValueError.",
            points=0.5,
            mask=np.array([[1.0, 0.5, 0.0], [1.0, 0.0, 0.0]]),
        ),
        raises(
            "selected-nan",
            "token_mean",
            "A NaN loss on a selected token raises ValueError.",
            points=0.5,
            loss=np.array([[1.0, np.nan, 0.0], [3.0, 0.0, 0.0]]),
        ),
        raises(
            "max-length-short",
            "seq_mean_token_sum_norm",
            "max_length below a sequence's number of tokens raises ValueError.",
            max_length=1,
        ),
        raises(
            "max-length-zero",
            "dr_grpo",
            "max_length = 0 raises ValueError.",
            max_length=0,
        ),
        raises(
            "max-length-float",
            "dr_grpo",
            "A max_length that is not an integer raises ValueError.",
            max_length=2.5,
        ),
    ],
    manual=[
        Manual(
            name="long-wrong-answers",
            points=2,
            description=(
                "With an outcome advantage copied to every token, states which of the five "
                "reductions gives each token of a long wrong answer the smallest penalty and "
                "why, and which ones weigh a token independently of its sequence's length."
            ),
        ),
    ],
)
