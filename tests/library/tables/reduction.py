"""Convention and bad-input rows for rlfound.reduction (chapter 8)."""

from __future__ import annotations

import math

import numpy as np

from rlfound import reduction
from tests.library.tables.kinds import ARRAY, FLOAT, Example, case

NAN, INF = math.nan, math.inf

# Two sequences of 2 and 3 tokens in rows of 4 positions; padding holds -inf, as a padded
# log-probability may, and must never be read.
LOSS = np.array([[0.5, -1.0, -INF, -INF], [2.0, 0.25, 1.0, NAN]])
MASK = np.array([[True, True, False, False], [True, True, True, False]])
TURNS = np.array([[0, 1, -1, -1], [0, 0, 1, -1]])
TASKS = np.array([3, 3])
SUMS = np.array([4.0, 0.0, 6.0])
COUNTS = np.array([2.0, 0.0, 3.0])

EXAMPLES = [
    *(
        Example(reduction.aggregate_loss, {"loss": LOSS, "mask": MASK, "mode": mode}, FLOAT)
        for mode in ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum")
    ),
    Example(
        reduction.aggregate_loss,
        {"loss": LOSS, "mask": MASK, "mode": "dr-grpo", "max_length": 4, "empty_rows": "skip"},
        FLOAT,
    ),
    Example(
        reduction.token_weights,
        {"mask": MASK, "mode": "seq-mean-token-sum-norm", "max_length": 3},
        ARRAY,
    ),
    Example(reduction.token_weights, {"mask": MASK, "mode": "seq-mean-token-mean"}, ARRAY),
    Example(
        reduction.aggregate_hierarchical,
        {"loss": LOSS, "mask": MASK, "turn_ids": TURNS, "task_ids": TASKS},
        FLOAT,
    ),
    Example(reduction.aggregate_hierarchical, {"loss": LOSS, "mask": MASK}, FLOAT),
    Example(
        reduction.hierarchical_weights, {"mask": MASK, "turn_ids": TURNS, "task_ids": TASKS}, ARRAY
    ),
    Example(
        reduction.shard_sums,
        {"loss": LOSS, "mask": MASK, "shards": np.array([2, 0]), "num_shards": 3},
        (ARRAY, ARRAY),
    ),
    Example(reduction.global_token_mean, {"sums": SUMS, "counts": COUNTS}, FLOAT),
    Example(
        reduction.mean_of_local_means,
        {"sums": np.array([4.0, 6.0]), "counts": np.array([2.0, 3.0])},
        FLOAT,
    ),
    Example(reduction.shard_losses, {"sums": SUMS, "counts": COUNTS, "combine": "mean"}, ARRAY),
]

VALID = {
    reduction.aggregate_loss: {
        "loss": [[1.0, 2.0], [3.0, 0.0]],
        "mask": [[1, 1], [1, 0]],
        "mode": "token-mean",
        "max_length": None,
        "empty_rows": "count",
    },
    reduction.token_weights: {
        "mask": [[1, 1], [1, 0]],
        "mode": "token-mean",
        "max_length": None,
        "empty_rows": "count",
    },
    reduction.aggregate_hierarchical: {
        "loss": [[1.0, 2.0], [3.0, 0.0]],
        "mask": [[1, 1], [1, 0]],
        "turn_ids": [[0, 1], [0, -1]],
        "task_ids": [0, 0],
    },
    reduction.hierarchical_weights: {
        "mask": [[1, 1], [1, 0]],
        "turn_ids": [[0, 1], [0, -1]],
        "task_ids": [0, 0],
    },
    reduction.shard_sums: {
        "loss": [[1.0, 2.0], [3.0, 0.0]],
        "mask": [[1, 1], [1, 0]],
        "shards": [0, 1],
        "num_shards": 2,
    },
    reduction.global_token_mean: {"sums": [3.0, 3.0], "counts": [2.0, 1.0]},
    reduction.mean_of_local_means: {"sums": [3.0, 3.0], "counts": [2.0, 1.0]},
    reduction.shard_losses: {"sums": [3.0, 3.0], "counts": [2.0, 1.0], "combine": "sum"},
}

ZERO_MASK = [[0, 0], [0, 0]]

CASES = [
    # aggregate_loss
    case(
        reduction.aggregate_loss,
        "loss",
        "loss must be a 2-D array (B sequences, L positions); got shape (2,)",
        loss=[1.0, 2.0],
    ),
    case(
        reduction.aggregate_loss,
        "loss",
        "loss must be finite where mask is True; got nan at index (1, 0)",
        loss=[[1.0, 2.0], [NAN, 0.0]],
    ),
    case(
        reduction.aggregate_loss,
        "loss",
        "loss must hold real numbers; got dtype <U1",
        loss=[["a", "b"], ["c", "d"]],
    ),
    case(
        reduction.aggregate_loss,
        "loss",
        "loss must be a rectangular array of numbers; got [[1.0, 2.0], [3.0]]",
        loss=[[1.0, 2.0], [3.0]],
    ),
    case(
        reduction.aggregate_loss,
        "mask",
        "mask must have shape (2, 2); got shape (2, 3)",
        mask=[[1, 1, 0], [1, 0, 0]],
    ),
    case(
        reduction.aggregate_loss,
        "mask",
        "mask must be a boolean (or 0/1) mask; got 0.5 at index (0, 1)",
        mask=[[1, 0.5], [1, 0]],
    ),
    case(
        reduction.aggregate_loss,
        "mask",
        "mask must select at least one token for mode 'token-mean' (the mean of no tokens is "
        "undefined); got an all-zero mask of shape (2, 2)",
        mask=ZERO_MASK,
    ),
    case(
        reduction.aggregate_loss,
        "mask",
        "mask must select at least one token for mode 'seq-mean-token-mean' with empty_rows='skip'",
        mask=ZERO_MASK,
        mode="seq-mean-token-mean",
        empty_rows="skip",
    ),
    case(
        reduction.aggregate_loss,
        "mask",
        "mask must have at least one row (sequence) for mode 'seq-mean-token-sum', which "
        "divides by the number of sequences; got shape (0, 2)",
        loss=np.zeros((0, 2)),
        mask=np.zeros((0, 2), dtype=bool),
        mode="seq-mean-token-sum",
    ),
    case(
        reduction.aggregate_loss,
        "mode",
        "mode must be one of ('token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', "
        "'seq-mean-token-sum-norm', 'dr-grpo'); got 'bnpo'",
        mode="bnpo",
    ),
    case(
        reduction.aggregate_loss,
        "max_length",
        "max_length must be given for mode 'dr-grpo', whose normalizer is the constant "
        "max_length (the generation budget in tokens); got None",
        mode="dr-grpo",
    ),
    case(
        reduction.aggregate_loss,
        "max_length",
        "max_length must be at least the number of tokens of every sequence (row 0 has 2); got 1",
        mode="seq-mean-token-sum-norm",
        max_length=1,
    ),
    case(
        reduction.aggregate_loss,
        "max_length",
        "max_length must be a positive integer; got 4.0",
        mode="dr-grpo",
        max_length=4.0,
    ),
    case(
        reduction.aggregate_loss,
        "max_length",
        "max_length must be a positive integer; got 0",
        max_length=0,
    ),
    case(
        reduction.aggregate_loss,
        "empty_rows",
        "empty_rows must be one of ('count', 'skip'); got 'drop'",
        empty_rows="drop",
    ),
    # token_weights
    case(
        reduction.token_weights,
        "mask",
        "mask must be a 2-D array (B sequences, L positions); got shape (2,)",
        mask=[1, 0],
    ),
    case(
        reduction.token_weights,
        "mask",
        "mask must be a boolean (or 0/1) mask; got 2 at index (1, 1)",
        mask=[[1, 1], [1, 2]],
    ),
    case(
        reduction.token_weights,
        "mask",
        "mask must select at least one token for mode 'token-mean'",
        mask=ZERO_MASK,
    ),
    case(
        reduction.token_weights,
        "mode",
        "mode must be one of ('token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', "
        "'seq-mean-token-sum-norm', 'dr-grpo'); got None",
        mode=None,
    ),
    case(
        reduction.token_weights,
        "max_length",
        "max_length must be given for mode 'seq-mean-token-sum-norm'",
        mode="seq-mean-token-sum-norm",
    ),
    case(
        reduction.token_weights,
        "max_length",
        "max_length must be at least the number of tokens of every sequence (row 0 has 2); got 1",
        mode="dr-grpo",
        max_length=1,
    ),
    case(
        reduction.token_weights,
        "empty_rows",
        "empty_rows must be one of ('count', 'skip'); got True",
        empty_rows=True,
    ),
    # aggregate_hierarchical
    case(
        reduction.aggregate_hierarchical,
        "loss",
        "loss must be finite where mask is True; got inf at index (0, 1)",
        loss=[[1.0, INF], [3.0, 0.0]],
    ),
    case(
        reduction.aggregate_hierarchical,
        "mask",
        "mask must select at least one token (the mean of no tokens is undefined); got an "
        "all-zero mask of shape (2, 2)",
        mask=ZERO_MASK,
    ),
    case(
        reduction.aggregate_hierarchical,
        "turn_ids",
        "turn_ids must be >= 0 where mask is True (every policy token belongs to a turn); "
        "got -1 at index (0, 1)",
        turn_ids=[[0, -1], [0, -1]],
    ),
    case(
        reduction.aggregate_hierarchical,
        "turn_ids",
        "turn_ids must be in [-1, 2); got 2 at index (0, 1)",
        turn_ids=[[0, 2], [0, -1]],
    ),
    case(
        reduction.aggregate_hierarchical,
        "turn_ids",
        "turn_ids must have the shape of loss and mask, shape (2, 2); got shape (2,)",
        turn_ids=[0, 1],
    ),
    case(
        reduction.aggregate_hierarchical,
        "task_ids",
        "task_ids must have one entry per row (sequence), shape (2,); got shape (3,)",
        task_ids=[0, 0, 1],
    ),
    case(
        reduction.aggregate_hierarchical,
        "task_ids",
        "task_ids must be integer task indices; got 0.5 at index (1,)",
        task_ids=[0, 0.5],
    ),
    # hierarchical_weights
    case(
        reduction.hierarchical_weights,
        "mask",
        "mask must be a 2-D array (B sequences, L positions); got shape (2, 2, 1)",
        mask=np.ones((2, 2, 1)),
    ),
    case(
        reduction.hierarchical_weights,
        "turn_ids",
        "turn_ids must be in [-1, 2); got -2 at index (1, 1)",
        turn_ids=[[0, 1], [0, -2]],
    ),
    case(
        reduction.hierarchical_weights,
        "task_ids",
        "task_ids must be in [0, 4611686018427387904); got -1 at index (0,)",
        task_ids=[-1, 0],
    ),
    # shard_sums
    case(
        reduction.shard_sums,
        "loss",
        "loss must be a 2-D array (B sequences, L positions); got shape ()",
        loss=1.0,
    ),
    case(
        reduction.shard_sums,
        "mask",
        "mask must have shape (2, 2); got shape (1, 2)",
        mask=[[1, 1]],
    ),
    case(
        reduction.shard_sums,
        "shards",
        "shards must be in [0, 2); got 2 at index (1,)",
        shards=[0, 2],
    ),
    case(
        reduction.shard_sums,
        "shards",
        "shards must have one entry per row (sequence), shape (2,); got shape (1,)",
        shards=[0],
    ),
    case(
        reduction.shard_sums,
        "num_shards",
        "num_shards must be a positive integer; got 0",
        num_shards=0,
    ),
    # global_token_mean
    case(
        reduction.global_token_mean,
        "sums",
        "sums must be finite; got inf at index (0,)",
        sums=[INF, 3.0],
    ),
    case(
        reduction.global_token_mean,
        "sums",
        "sums must be 0 where counts is 0 (a shard without tokens has no loss); got 3.0 at "
        "index (1,)",
        counts=[2.0, 0.0],
    ),
    case(
        reduction.global_token_mean,
        "counts",
        "counts must be non-negative; got -1.0 at index (1,)",
        counts=[2.0, -1.0],
    ),
    case(
        reduction.global_token_mean,
        "counts",
        "counts must not all be zero; got shape (2,)",
        sums=[0.0, 0.0],
        counts=[0.0, 0.0],
    ),
    case(
        reduction.global_token_mean,
        "counts",
        "counts must have one entry per shard, the shape of sums, shape (2,); got shape (3,)",
        counts=[1.0, 1.0, 1.0],
    ),
    # mean_of_local_means
    case(
        reduction.mean_of_local_means,
        "sums",
        "sums must be a 1-D array; got shape (1, 2)",
        sums=[[3.0, 3.0]],
    ),
    case(
        reduction.mean_of_local_means,
        "counts",
        "counts must be positive for every shard when each shard divides by its own count; "
        "got 0.0 at index (1,)",
        sums=[3.0, 0.0],
        counts=[2.0, 0.0],
    ),
    case(
        reduction.mean_of_local_means,
        "counts",
        "counts must be non-negative; got -2.0 at index (0,)",
        counts=[-2.0, 1.0],
    ),
    # shard_losses
    case(
        reduction.shard_losses,
        "sums",
        "sums must be finite; got nan at index (1,)",
        sums=[3.0, NAN],
    ),
    case(
        reduction.shard_losses,
        "counts",
        "counts must be non-negative; got -1.0 at index (0,)",
        counts=[-1.0, 1.0],
    ),
    case(
        reduction.shard_losses,
        "combine",
        "combine must be one of ('sum', 'mean'); got 'average'",
        combine="average",
    ),
]
