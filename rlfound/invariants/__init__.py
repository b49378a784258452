"""The invariants kit (a package; the code is in its private files)."""

from ._batches import (
    INVARIANTS,
    PADDING_CHANGES,
    TOY_VOCABULARY,
    InvariantCheck,
    InvariantViolation,
    check_constant_reward,
    check_distributed_reduction,
    check_event_order,
    check_group_shift,
    check_masked_tokens,
    check_no_retokenization,
    check_old_logprobs_immutable,
    check_padding_invariance,
    check_terminal_bootstrap,
    check_unit_ratios,
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
