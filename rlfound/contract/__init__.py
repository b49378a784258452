"""The training-batch contract (a package; the code is in its private files)."""

from ._validate import (
    FILL,
    OPTIONAL_FIELDS,
    PACKED_FIELDS,
    REQUIRED_FIELDS,
    SEGMENT_KINDS,
    block_diagonal_attention,
    build_batch,
    pack,
    target_logprobs,
    unpack,
    validate,
)

__all__ = [
    "FILL",
    "OPTIONAL_FIELDS",
    "PACKED_FIELDS",
    "REQUIRED_FIELDS",
    "SEGMENT_KINDS",
    "block_diagonal_attention",
    "build_batch",
    "pack",
    "target_logprobs",
    "unpack",
    "validate",
]
