"""The ten invariants of a training batch, as a test kit to point at your own functions.

Each ``check_*`` function takes the callable(s) under test, runs them on cases it generates
from ``rng`` (and, where it says so, on a batch you give it, such as one exported from your
trainer), and either returns an :class:`InvariantCheck` (the check passed) or raises
:class:`InvariantViolation`, an ``AssertionError`` whose message names the invariant, the
failing case and what went wrong. Use them in a test suite as they are::

    def test_my_loss_ignores_masked_tokens():
        invariants.check_masked_tokens(my_loss, rng=0)

The callables have NumPy signatures (wrap a framework function to convert its tensors):

==========================  ===========================================================  =====
callable                    signature                                                    used by
==========================  ===========================================================  =====
advantage_fn                (rewards) -> advantages, both (G, N): G groups of N samples   1, 2
loss_fn                     (logprobs, old_logprobs, advantages, mask) -> float, arrays  3, 6, 8
                            (B, L) and a bool mask (B, L) with at least one True
gradient_fn                 as loss_fn -> d loss / d logprobs, shape (B, L)              3
build_fn                    (episodes) -> batch: the episodes of                         4, 10
                            :func:`rlfound.contract.build_batch` to a contract batch
logprob_fn                  (logits (B, L, V), input_ids (B, L)) -> (B, L - 1)           5
                            log-probabilities of the targets
returns_fn                  (rewards, values, next_values, terminated, truncated)        7
                            -> (B, T), packed streams as in
                            :func:`rlfound.advantages.packed_gae`
sharded_loss_fn             (shards) -> float: a list of dicts with the four arrays of   8
                            loss_fn, one per worker; the combined loss the optimizer
                            sees
step_fn                     (batch) -> its loss (or ratios, or a gradient): one          9
                            training step on a contract batch with the current
                            ``logprobs`` added
==========================  ===========================================================  =====

The invariants, in the order of :data:`INVARIANTS`:

1. :func:`check_constant_reward` 2. :func:`check_group_shift` 3. :func:`check_masked_tokens`
4. :func:`check_no_retokenization` 5. :func:`check_unit_ratios`
6. :func:`check_padding_invariance` 7. :func:`check_terminal_bootstrap`
8. :func:`check_distributed_reduction` 9. :func:`check_old_logprobs_immutable`
10. :func:`check_event_order`.

A check generates small cases (a few rows, tens of tokens), so each runs in milliseconds to
a fraction of a second. Passing proves the property on those cases, not in general; failing
proves a bug, and the message shows the smallest thing that went wrong.

The code lives in private files: ``_kit`` (the invariants, :class:`InvariantCheck`,
:class:`InvariantViolation`), ``_cases`` (the case generators), and the checks by the kind of
function they take: ``_advantages`` (advantage and return functions), ``_losses`` (loss
functions), ``_batches`` (batch builders, log-probability functions, training steps).
Import the names from ``rlfound.invariants``; the files are not an API.

Book: chapter 13 (the training-batch contract and its invariants).
"""

from ._advantages import (
    check_constant_reward,
    check_group_shift,
    check_terminal_bootstrap,
)
from ._batches import (
    check_event_order,
    check_no_retokenization,
    check_old_logprobs_immutable,
    check_unit_ratios,
)
from ._kit import (
    INVARIANTS,
    PADDING_CHANGES,
    TOY_VOCABULARY,
    InvariantCheck,
    InvariantViolation,
)
from ._losses import (
    check_distributed_reduction,
    check_masked_tokens,
    check_padding_invariance,
)

__all__ = [
    "INVARIANTS",
    "PADDING_CHANGES",
    "TOY_VOCABULARY",
    "InvariantCheck",
    "InvariantViolation",
    "check_constant_reward",
    "check_distributed_reduction",
    "check_event_order",
    "check_group_shift",
    "check_masked_tokens",
    "check_no_retokenization",
    "check_old_logprobs_immutable",
    "check_padding_invariance",
    "check_terminal_bootstrap",
    "check_unit_ratios",
]
