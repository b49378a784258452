"""The numerical edges of the library: size limits and tolerances (the finite-output guard
that goes with them is :mod:`rlfound._validation.guard`).

Every public function keeps one promise for inputs of the right types: it either returns
finite numbers or raises ``ValueError``. Three kinds of guard make that hold at the edge of
the valid domain, so that every function uses the same ones:

- **Size limits.** A size argument (a horizon, a batch size, a number of steps, of actions,
  of samples, ...) is checked with exact integer arithmetic before any work starts, against
  :data:`MAX_ENUMERATION` (items of an exact enumeration), :data:`MAX_ARRAY_ENTRIES` (entries
  of an array whose size the argument controls) or :data:`MAX_ITERATIONS` (passes of a loop
  it controls). The message names the argument and gives the limit and the requested size.
- **Tolerances.** A probability that must be positive (the support condition) must exceed
  :data:`SUPPORT_TOLERANCE`; a discounted row γ·Σ P(s, ·) may exceed 1 by at most
  :data:`ROW_SUM_TOLERANCE` and counts as "ending" (leaking probability) only when it is
  below 1 by more than that.
- **Finite output.** :func:`~rlfound._validation.guard.finite_output` wraps a public
  function: floating-point overflow, invalid operations and division by zero inside it
  raise (``numpy.errstate``), and every float it returns is checked to be finite. Either
  failure becomes a ``ValueError`` that names the quantity that overflowed. It has a file
  of its own because it converts arrays with :mod:`~rlfound._validation.arrays`, which
  reads the tolerances here.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "MAX_ARRAY_ENTRIES",
    "MAX_ENUMERATION",
    "MAX_ITERATIONS",
    "ROW_SUM_TOLERANCE",
    "SUPPORT_TOLERANCE",
    "capped_power",
    "check_enumeration_size",
    "check_size",
]

#: Largest number of items (episodes, sequences, tuples) an exact enumeration may list:
#: beyond it the brute-force references of the library would take minutes or fill memory.
MAX_ENUMERATION = 1_000_000

#: Largest number of entries of an array whose size an argument controls (10^8 float64
#: numbers are 800 MB): a larger request is refused before anything is allocated.
MAX_ARRAY_ENTRIES = 100_000_000

#: Largest number of passes of a loop that an argument controls (steps of an algorithm,
#: random cases of a check): beyond it a call would not finish in any reasonable time.
MAX_ITERATIONS = 10_000_000

#: A probability that must be positive (the support condition) must exceed this, the
#: smallest normal float64 (about 2.2e-308): a subnormal probability has lost its relative
#: precision, and dividing by it overflows.
SUPPORT_TOLERANCE = float(np.finfo(np.float64).tiny)

#: Slack of the discounted row-sum condition γ·Σ_s' P(s, s') <= 1 (rounding in a sum of
#: probabilities): a row above 1 + this would make the discounted series diverge, and a row
#: counts as leaking (the process ends or is discounted from it) only below 1 - this.
ROW_SUM_TOLERANCE = 1e-12


def check_size(count: int, name: str, limit: int, what: str) -> int:
    """Refuse a size above ``limit``, compared exactly as Python integers, before any work.

    ``count`` is the size the argument ``name`` asks for, an ``int`` (never a float, which
    would round or overflow); ``what`` says what is counted, e.g. ``"array entries"``. The
    message reads ``"batch_size must keep ... to at most 100000000 array entries; got
    1000000000000000000"``.

    Raises
    ------
    ValueError
        Naming ``name``, with the limit and the requested size, if ``count > limit``.
    """
    if not isinstance(count, numbers.Integral) or isinstance(count, bool):
        raise TypeError(
            f"a size must be counted with integers; got {count!r}"
        )
    if int(count) > limit:
        raise ValueError(
            f"{name} must keep the call to at most {limit} {what}; got {int(count)}"
        )
    return int(count)


def check_enumeration_size(count: int, name: str, what: str) -> None:
    """Refuse an exact enumeration of more than :data:`MAX_ENUMERATION` items before building it.

    ``count`` is an exact ``int`` (see :func:`capped_power` for counts like V**L);
    ``what`` describes it for the message, e.g. ``"2**30 = 1073741824 sequences"``.
    """
    if not isinstance(count, numbers.Integral) or isinstance(count, bool):
        raise TypeError(
            f"an enumeration must be counted with integers; got {count!r}"
        )
    if int(count) > MAX_ENUMERATION:
        raise ValueError(
            f"{name} must keep the exact enumeration to at most {MAX_ENUMERATION} items; got {what}"
        )


def capped_power(
    base: int, exponent: int, cap: int = MAX_ENUMERATION
) -> int:
    """``base ** exponent`` exactly if it is at most ``cap``, otherwise ``cap + 1``.

    The power is never formed when it is large (10**(10**18) would never finish), so a
    guard can compare it with the limit at once.
    """
    if base <= 1 or exponent == 0:
        return base**exponent if exponent else 1
    result = 1
    for _ in range(exponent):
        result *= base
        if result > cap:
            return cap + 1
    return result
