"""The chapter-2 bigram model."""

from __future__ import annotations

from tests.oracles.basics import _read_only

# ---------------------------------------------------------------------------------------------
# The chapter-2 bigram model
# ---------------------------------------------------------------------------------------------

#: The chapter's bigram logits: row = previous token (A, B, space, ., then the start row),
#: column = next token (A, B, space, .).
BIGRAM_TABLE = _read_only(
    [
        [-1.5, -1.5, 0.0, 1.5],
        [-1.5, -1.5, 0.5, 0.5],
        [-0.5, 1.0, 0.0, -0.5],
        [-0.5, 0.0, 0.5, 0.5],
        [1.0, 0.6, 0.6, -0.5],
    ]
)
