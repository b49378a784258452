"""How fast are packed-stream GAE and returns, next to the loops users run? Ratios to np.add.

For each shape (B, T) of float64 streams with about 0.5% terminated and 0.5% truncated steps,
in one run, with every form first checked against the library's clear form:

- rlfound (B, T) and rlfound (T, B): ``packed_gae`` / ``packed_discounted_returns`` as called by
  default, on the time-last layout and on the time-major one (``axis=0``, no copy), input
  checks included; and, for GAE, what a time-major buffer cost before ``axis``: transposed
  copies of its arrays, rlfound, and the result transposed back;
- clear: the same functions with ``method="loop"``, the form the book shows;
- SB3 loop (T, B) and CleanRL loop (T, B): the loops of those two trainers on their own
  time-major layout (``benchmarks/scan_peers.py`` says where each comes from; CleanRL
  counts a timeout as a termination, and is checked against the clear form told so);
- lfilter, no ends: ``scipy.signal.lfilter`` on a stream without episode ends, next to
  rlfound on the same stream (the one case a constant-coefficient filter can do);
- numba tianshou (B, T), numba fused (T, B), JAX lax.scan (T, B): compiled loops, when numba
  or jax is installed (``pip install rlfound[benchmarks]``; never a dependency of the library).

Each time is the least CPU time (``time.process_time``, which a shared machine's other work
distorts less than wall time) of several repeats, with NumPy's BLAS and XLA held to one thread
so that CPU time is one thread's, and each repeat starts with cold caches (a 128 MiB buffer is
written before it): with warm ones, the three arrays of an ``np.add`` over 10^6 entries stay in
a 32 MB cache from one repeat to the next while a GAE's six do not, and the unit would be a
cached pass at that shape and a memory-bound one at the others. It is printed as a ratio to one
``np.add`` pass of two input arrays (the cheaper of writing into a new array and into an
existing one) and to rlfound on the same layout. ``np.add`` and each form are timed in turn,
``--rounds`` times (5), and the median of the rounds' ratios is printed: the machine's speed
drifts during a run, and one ``np.add`` time per shape made the ratios of the same code vary
from 4.7 to 8.0 passes. The memory-bandwidth limit is the bytes a form
must read and write (GAE: three float arrays and two masks in, one float array out) over the
bandwidth of a measured copy of an input array: no form can beat it. With ``--phases`` it also
prints where rlfound's passes go (input checks and masks, building the terms, the halvings, the
serial solve, the bookkeeping of stops, the result's check). Run from the repository root::

    .venv/bin/python benchmarks/scan_speed.py [--small] [--repeats 9] [--rounds 5] [--phases]

It first prints the fixed cost of a call on a tiny stream. ``--small`` runs tiny shapes in
seconds (what the test suite does). This is a benchmark, not a test: the figures depend on
the machine and its load, which is printed with them.

Where rlfound's GAE passes go (``--phases``; in passes of np.add, each phase timed inside the
library's own functions, so the columns of one run add up to about its total):

- Before this version (commit 7d5de48, load 0.4 to 4 on the 2-core machine): building the
  terms 2.9 to 3.6, the halvings 2.2 to 3.1 (three levels), the serial solve 2.5 to 3.3,
  the bookkeeping of stops 1.9 to 3.1 (a masked copy of the terminated steps in every block,
  the stop mask searched twice), the result's check 0.8 to 1.3 and the input checks 0.5 to
  0.8, with time last; with time first, 6.4 passes in the row halvings at (1024, 2048)
  (an array of factors built and multiplied level by level) and 8.0 of bookkeeping at
  (16, 65536) (each block copied stream by stream and back).
- After (load 2.8 to 4.1): the terms 2.0 to 3.1 (the terminated steps set by index), the
  halvings 2.2 to 3.3 (five levels), the serial solve 0.6 to 0.7 (every 32nd step), the
  bookkeeping 1.3 to 3.4, the input checks and masks 1.1 to 2.3 (which now hold the one
  listing of the stops, formerly counted as bookkeeping), the result's check 0.7 to 1.2;
  with time first, the row halvings with one factor 0.7 to 7.5 (no array of factors; not
  faster at (1024, 2048)), and still 4.1 of bookkeeping at (16, 65536), where the copy of
  each block stream by stream remains. The two runs had different loads, so compare within
  a run; the interleaved comparison below is the fairer one.

An interleaved comparison with commit 7d5de48 (the two versions alternating in one run, load
2.6, best of 9, passes of np.add), GAE then returns, (B, T) / (T, B):
(1024, 2048) 7.3 / 8.1 and 7.1 / 7.7 before, 7.8 / 8.0 and 5.2 / 6.2 after;
(65536, 32) 10.3 / 6.1 and 11.6 / 5.6 before, 7.3 / 3.7 and 7.6 / 4.5 after;
(1, 10^6) 11.9 / 12.1 and 10.8 / 11.3 before, 11.0 / 10.3 and 9.4 / 10.3 after;
(4096, 512) 9.0 / 8.0 and 9.0 / 7.3 before, 7.5 / 5.3 and 5.3 / 4.7 after;
(16, 65536) 9.1 / 12.3 and 8.8 / 11.6 before, 9.6 / 14.1 and 7.8 / 11.1 after.

Since then (2026-12-02, a machine whose np.add pass is 2.6 to 3.6 ms at two million entries,
against 0.8 to 1.4 ms in the runs above): the result's check reads each block while it is in
cache, as it is finished (0.4 to 0.6 passes before, 0.15 to 0.18 after), and every repeat
starts with cold caches, which the runs above did not do (it changes the unit at 10^6
entries, where np.add's arrays had stayed in cache: 0.9 ms warm, 1.5 ms cold). One quiet run
(load 0.4), GAE then returns, (B, T) / (T, B): (1024, 2048) 4.6 / 6.1 and 4.5 / 5.9;
(65536, 32) 7.0 / 4.5 and 6.6 / 4.0; (1, 10^6) 7.0 / 7.2 and 5.7 / 5.6; (4096, 512)
5.4 / 5.6 and 6.0 / 4.4; (16, 65536) 5.5 / 10.3 and 5.4 / 8.2. Where GAE's passes go with
time last: the terms 2.1 to 3.0, the halvings 2.0 to 2.5, the bookkeeping 1.3 to 2.4, the
input checks and masks 0.7 to 0.9, the serial solve 0.3 to 0.4, the result's check 0.15 to
0.18; with time first, the row halvings 0.4 to 4.5 and, at (16, 65536), 4.1 of bookkeeping
(the copy of each block stream by stream and back). Runs of the same code on this machine
differ by up to a fifth.

Later that day (a faster machine: np.add 1.3 to 1.8 ms at two million entries, a call's fixed
cost 22 to 33 µs), medians of three rounds, one run right after the other, before and after
two changes: the returns no longer list every stream's end as a stop (65536 of them at
(65536, 32)) only to filter them out again, reading a still-running episode's bootstrap at a
stream's end as an "open end" of its terms ((65536, 32) returns 7.5 -> 5.9 with time last,
3.6 -> 2.9 with time first); and a wide time-major block reads and puts back its stops by
flat index at every level instead of by (row, lane) ((1024, 2048) with time first: GAE
7.3 -> 6.2, returns 6.5 -> 5.8; (4096, 512): GAE 5.5 -> 4.4). Then, interleaved (each
version twice, alternating): rows kept in place that the halvings leave one step long (rows
of 8 or 32 steps) skip the serial solve, which had nothing left to do, and a level whose
rows have two steps skips its back-substitution axpy, all of whose odd steps are rows' ends:
(262144, 8) with time last 7.7 and 8.0 -> 5.2 and 5.3 for GAE; (65536, 32) 6.7 and 6.6 ->
6.1 and 5.7 for GAE, 6.8 and 6.7 -> 6.0 and 5.6 for the returns.

On 2026-12-03 (another machine: 512 KiB of L2 cache per core and 8 MB of L3, np.add 1.5 to
1.9 ns an entry, Python about five times slower, a call's fixed cost 133 µs), each change
against the code before it in one process, alternating, medians of five rounds: time-major
rows of 512 to 8192 streams halved one BLAS daxpy per row, one pass over each pair of rows,
in place of NumPy's product into scratch and sum (GAE then returns with time first:
(1024, 2048) 7.0 -> 5.6 and 6.1 -> 4.6; (4096, 512) 5.6 -> 4.7 and 4.7 -> 3.8; (512, 4096)
7.6 -> 6.5; (2048, 1024) 6.7 -> 5.1; at 256 streams 8.1 -> 8.3, at 128 8.6 -> 11.7 and at 64
8.9 -> 17.1, where the calls cost more than the pass they save: hence the threshold); then the
stream halvings' daxpy called with its arguments by position (f2py parses keywords about
1.3 µs slower a call, some 32 calls a block): GAE with time last at (1, 10^6) 6.05 -> 5.72,
(4096, 512) 6.44 -> 6.29. Measured and left out the same day: blocks of 2^16 steps (to fit
the smaller L2) are slower at every shape ((1, 10^6) GAE 6.2 -> 7.0), blocks of 2^18 no
faster; the halving of 16-stream time-major rows as one matrix product per level (pairs of
rows times [I; cI]) is four times slower than the strided ufuncs, a transpose through a 3-D
view 15% faster than np.copyto of ``.T`` one way and no faster back, and the remainders of
the stops' flat indices (``% horizon``, 7.5 ns an entry) cost 0.05 to 0.1 passes, which a
floor division by the same number (NumPy's libdivide, 3 ns) would halve.

Later that day (a new machine: an Intel Xeon with 2 MiB of L2 cache per core, np.add about
1.1 ns an entry, a call's fixed cost 26 µs), narrow time-major blocks copied stream by stream
in pieces of 24 KiB of rows instead of one call (interleaved in one process, medians of five
rounds, time of the new over the old, GAE / returns with time first): 0.97 / 0.95 at 16
streams, 0.93 / 0.92 at 32, 0.99 to 1.03 at 2, 4, 8 and 63. A full run before the change
measured GAE with time first at (16, 65536) 6.7 passes, four after it 5.7, 6.3, 5.6 and
(from a fresh clone, right after a book build) 6.2.
Measured and left out: the writer's last ufunc writing the terms straight into the
stream-by-stream buffer (fast only with the streams padded off multiples of 4 KiB: 1.1 ms a
million entries, against 3.7 ms 64 KiB apart, where every entry of a row falls in one cache
set), GAE 5% and 11% faster at 16 and 32 streams but the returns up to 20% slower and 2 to
4 streams 10% slower, since the copy back then pays the result's first write; the padding
alone, for a faster copy back, within ±4%; the terms written into a scratch block that stays
in cache instead of the result's own block, 5% to 10% slower at 4 to 63 streams, for the
same reason; blocks of 2^16 or 2^15 steps (GAE at (16, 65536)
with time first 6.3 -> 6.4 and 6.9 passes) or 2^18 (6.5); a product with an identity matrix
(dgemm) as the transposing copy, no faster than NumPy's; and, to time them, no put-backs of
the stops' terms at all (wrong sums): 0.1 to 0.2 passes.

On 2026-12-04 (a new machine: an AMD EPYC with 32 KiB of L1 and 1 MiB of L2 cache per core,
np.add 0.8 to 0.9 ns an entry, a call's fixed cost 31 to 47 µs), a narrow block holds an odd
number of runs of 2^LEVELS rows (8160 rows of 16 streams, not 8192), so that its streams in
the stream-by-stream buffer are not a multiple of 4 KiB apart. In cache, the copy back of a
block of 16 streams took 3.8 times an np.add over it with the streams 64 KiB apart and 1.65
times with them 65,280 bytes apart (the copy there in pieces, 2.7 times either way).
Interleaved in one process, medians of five rounds, before -> after, GAE / returns with time
first: 32 streams 8.6 -> 6.7 / 7.9 -> 6.3, 16 streams 6.9 -> 6.5 / 6.2 -> 5.4, 8 and 48
streams unchanged (6.9 / 6.1 and 6.6 / 5.9). Three full runs after it: GAE with time first
at (16, 65536) 6.9, 7.4 and 7.1, the one cell over 6 in all three. Measured and left out
that day: the writer's last ufunc writing the terms into the buffer, now that its streams
are not a power of two apart (GAE 6.9 -> 6.7 at 16 streams, 6.7 -> 6.7 at 32, the returns
6.2 -> 6.3 and 6.4 -> 6.5: within the noise); blocks of 2^16 and 2^15 steps (GAE with time
first at (16, 65536) 6.9 -> 7.3 and 8.6); narrow blocks halved row by row as wide ones are
(NARROW = 8: 8.9 against 7.6 passes at 16 streams, medians of three rounds; one level of
NumPy row operations on rows of 16 entries costs 3.7 times a strided daxpy over the same
entries as a stream); and, as the transposing copy, BLAS dcopy stream by stream (1.2 and 2
times slower forward and back), np.take with an index (2.1 and 2.2 times), dgemm by the
identity (1.6 to 6 times), or a complex128 view of pairs of streams (1.8 times an np.add
each way, but the pairs then need another copy apart). The README quotes a full run of five
rounds.
"""

from __future__ import annotations

import os

# One thread for every library, set before any of them loads: CPU time is then one thread's.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import argparse
import collections
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scan_peers

from rlfound.advantages import packed_gae
from rlfound.returns import discounted_cumsum, packed_discounted_returns

SHAPES = [(1024, 2048), (65536, 32), (1, 10**6), (4096, 512), (16, 65536)]
SMALL_SHAPES = [(16, 64), (512, 8), (1, 5000)]
FIXED_COST_SHAPE = (4, 16)
GAMMA, LAM = 0.99, 0.95
END_PROBABILITY = 0.005  # for each of terminated and truncated
# Stop repeating a form once it has used this much CPU time: the slowest forms run only once.
TIME_BUDGET = 3.0
RLFOUND_TOLERANCE, PEER_TOLERANCE = 1e-12, 1e-9  # worst scaled error allowed before timing
GAE_BYTES, RETURN_BYTES = 3 * 8 + 2 + 8, 8 + 2 + 8  # read and written per entry


def packed_stream(shape, rng):
    """Rewards, values, next values and masks of streams that pack episodes end to end."""
    rewards, values, next_values = rng.normal(size=(3, *shape))
    kind = rng.random(shape)
    terminated = kind < END_PROBABILITY
    truncated = kind > 1.0 - END_PROBABILITY
    # Inside an episode the next value is the value of the next step, as a collector stores it.
    goes_on = ~(terminated | truncated)[..., :-1]
    next_values[..., :-1] = np.where(goes_on, values[..., 1:], next_values[..., :-1])
    return rewards, values, next_values, terminated, truncated


def time_major(stream):
    """The same streams in a (T, B) buffer, as SB3 and CleanRL store them."""
    return [np.ascontiguousarray(array.T) for array in stream]


# Written before every timed run, so that each starts with cold caches. Arrays of 10^6 entries
# (8 MB each) otherwise stay in the 32 MB L3 cache from one repeat to the next: np.add's three
# fit, a GAE's six do not, and the unit the passes are counted in would be a cached add there
# and a memory-bound one elsewhere (its time varied by 60% between runs).
EVICTION_BYTES = 128 * 2**20
_eviction = np.zeros(EVICTION_BYTES // 8)


def best_time(run, repeats, cold=True):
    """The least CPU time of up to ``repeats`` runs (fewer once TIME_BUDGET is spent), each
    with cold caches unless ``cold`` is False."""
    times = []
    while len(times) < repeats and (not times or sum(times) < TIME_BUDGET):
        if cold:
            np.add(_eviction, 1.0, out=_eviction)
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return min(times)


def worst_scaled_error(result, reference, bound):
    """max |result - reference| / bound, where ``bound`` is the scan of |terms| (0/0 counts 0)."""
    error = np.abs(result - reference)
    return float(np.max(np.divide(error, bound, out=np.zeros_like(error), where=bound > 0)))


def gae_bound(rewards, values, next_values, terminated, truncated):
    """The scan of |TD errors| with |factors|: how large rounding can make any form's error."""
    deltas = rewards + GAMMA * np.where(terminated, 0.0, next_values) - values
    return discounted_cumsum(np.abs(deltas), GAMMA * LAM * ~(terminated | truncated))


def gae_forms(stream):
    """name -> (layout, run, reference, bound): every GAE form and what it must equal."""
    by_step = time_major(stream)
    rewards, values, next_values, terminated, truncated = stream
    clear = packed_gae(*stream, GAMMA, LAM, method="loop")
    bound = gae_bound(*stream)
    as_terminal = (rewards, values, next_values, terminated | truncated, np.zeros_like(truncated))
    sb3 = scan_peers.sb3_inputs(*by_step, GAMMA)
    cleanrl = scan_peers.cleanrl_inputs(*by_step)
    forms = {
        "rlfound": ("(B, T)", lambda: packed_gae(*stream, GAMMA, LAM), clear, bound),
        "rlfound, axis=0": (
            "(T, B)",
            lambda: packed_gae(*by_step, GAMMA, LAM, axis=0).T,
            clear,
            bound,
        ),
        "rlfound, transposed copies": (
            "(T, B)",
            lambda: np.ascontiguousarray(packed_gae(*time_major(by_step), GAMMA, LAM).T).T,
            clear,
            bound,
        ),
        "clear": ("(B, T)", lambda: packed_gae(*stream, GAMMA, LAM, method="loop"), clear, bound),
        "SB3 loop": ("(T, B)", lambda: scan_peers.sb3_gae(*sb3, GAMMA, LAM).T, clear, bound),
        "CleanRL loop": (
            "(T, B)",
            lambda: scan_peers.cleanrl_gae(*cleanrl, GAMMA, LAM).T,
            packed_gae(*as_terminal, GAMMA, LAM, method="loop"),
            gae_bound(*as_terminal),
        ),
    }
    tianshou, fused = scan_peers.numba_forms()
    compiled = {
        "numba tianshou": ("(B, T)", tianshou, stream, lambda a: a),
        "numba fused": ("(T, B)", fused, by_step, np.transpose),
        "JAX lax.scan": ("(T, B)", scan_peers.jax_gae(), by_step, np.transpose),
    }
    for name, (layout, gae, arrays, back) in compiled.items():
        if gae is not None:
            forms[name] = (
                layout,
                lambda g=gae, a=arrays, b=back: b(g(*a, GAMMA, LAM)),
                clear,
                bound,
            )
    return forms


def no_end_forms(stream):
    """lfilter and rlfound on the same streams with no episode end (the filter's one case)."""
    rewards, values, next_values, _, _ = stream
    never = np.zeros(rewards.shape, dtype=bool)
    open_stream = (rewards, values, next_values, never, never)
    deltas = rewards + GAMMA * next_values - values
    clear = packed_gae(*open_stream, GAMMA, LAM, method="loop")
    bound = gae_bound(*open_stream)
    return {
        "rlfound, no ends": ("(B, T)", lambda: packed_gae(*open_stream, GAMMA, LAM), clear, bound),
        "lfilter, no ends": (
            "(B, T)",
            lambda: scan_peers.lfilter_discounted_sums(
                rewards + GAMMA * next_values - values, GAMMA * LAM
            ),
            discounted_cumsum(deltas, GAMMA * LAM, method="loop"),
            bound,
        ),
    }


def return_forms(stream):
    """name -> (layout, run, reference, bound) for the packed returns."""
    rewards, values, next_values, terminated, truncated = stream
    by_step = time_major(stream)
    arguments = (rewards, next_values, terminated, truncated, GAMMA)
    by_step_arguments = (by_step[0], by_step[2], by_step[3], by_step[4], GAMMA)
    clear = packed_discounted_returns(*arguments, method="loop")
    cut = truncated.copy()
    cut[..., -1] |= ~terminated[..., -1]
    terms = np.abs(rewards) + GAMMA * np.abs(np.where(cut, next_values, 0.0))
    bound = discounted_cumsum(terms, GAMMA * ~(terminated | cut))
    sb3 = scan_peers.sb3_inputs(*by_step, GAMMA)
    return {
        "rlfound": ("(B, T)", lambda: packed_discounted_returns(*arguments), clear, bound),
        "rlfound, axis=0": (
            "(T, B)",
            lambda: packed_discounted_returns(*by_step_arguments, axis=0).T,
            clear,
            bound,
        ),
        "clear": (
            "(B, T)",
            lambda: packed_discounted_returns(*arguments, method="loop"),
            clear,
            bound,
        ),
        # SB3's returns: the advantages with λ = 1 plus the values.
        "SB3 loop": (
            "(T, B)",
            lambda: (scan_peers.sb3_gae(*sb3, GAMMA, 1.0) + by_step[1]).T,
            clear,
            bound + np.abs(values),
        ),
    }


def measure(forms, repeats, stream, rounds=1):
    """name -> (layout, passes of np.add, worst scaled error), each form checked before it is
    timed.

    A round times one np.add pass over ``stream``'s arrays and then the form, each the least
    of ``repeats`` runs, and the form's passes are the median over ``rounds`` of their ratio
    (forms slower than TIME_BUDGET get one round). The two are timed in turn because this
    machine's speed drifts during a run: over a minute, np.add's least time moved by a
    third and a GAE's ratio to it from 4.7 to 8.0 passes, in rounds of the same code.
    """
    rows = {}
    for name, (layout, run, reference, bound) in forms.items():
        error = worst_scaled_error(run(), reference, bound)
        tolerance = RLFOUND_TOLERANCE if name.startswith(("rlfound", "clear")) else PEER_TOLERANCE
        if not error <= tolerance:
            raise AssertionError(f"{name} differs from the clear form: {error:.1e}")
        ratios, spent = [], 0.0
        while len(ratios) < rounds and spent < TIME_BUDGET:
            add = add_time(stream, repeats)
            seconds = best_time(run, repeats)
            ratios.append(seconds / add)
            spent += seconds * repeats
        rows[name] = (layout, statistics.median(ratios), error)
    return rows


def add_time(stream, repeats):
    """One np.add pass over two input arrays: the cheaper of a new and an existing output."""
    rewards, values = stream[0], stream[1]
    existing = np.empty_like(rewards)
    return min(
        best_time(lambda: np.add(rewards, values), max(repeats, 5)),
        best_time(lambda: np.add(rewards, values, out=existing), max(repeats, 5)),
    )


def copy_bandwidth(stream, repeats):
    """Bytes per second of a copy of one input array into an existing one (read and write)."""
    rewards = stream[0]
    target = np.empty_like(rewards)
    return 2 * rewards.nbytes / best_time(lambda: np.copyto(target, rewards), max(repeats, 5))


def phases(stream, axis, repeats):
    """Where rlfound's GAE passes go: phase -> CPU seconds, from the library's own parts."""
    from rlfound import _scan
    from rlfound._scan import _lanes, _stream
    from rlfound._validation import guard

    spent = collections.Counter()
    parts = [
        (_stream, "_axpy", "halvings (BLAS axpy)"),
        (_stream, "_dtbsv", "serial solve (BLAS dtbsv)"),
        (_lanes, "_reduce", "row halvings and loop"),
        (_lanes, "_reduce_constant", "row halvings and loop"),
        (guard.FiniteBlocks, "add", "result's check"),  # a ddot per block, inside the solve
        (_stream, "solve_stream", "solve"),
        (_lanes, "solve_lanes", "solve"),
    ]
    saved = [(module, name, getattr(module, name)) for module, name, _ in parts]
    saved.append((_scan, "_term_writer", _scan._term_writer))

    def timed(function, phase):
        def run(*arguments, **keywords):
            start = time.process_time()
            try:
                return function(*arguments, **keywords)
            finally:
                spent[phase] += time.process_time() - start

        return run

    def writer(*arguments):
        return timed(saved[-1][2](*arguments), "terms")

    for module, name, phase in parts:
        setattr(module, name, timed(getattr(module, name), phase))
    _scan._term_writer = writer
    arrays = stream if axis == -1 else time_major(stream)
    try:
        packed_gae(*arrays, GAMMA, LAM, axis=axis)  # once before timing, as every form
        spent.clear()
        start = time.process_time()
        for _ in range(repeats):
            packed_gae(*arrays, GAMMA, LAM, axis=axis)
        total = (time.process_time() - start) / repeats
    finally:
        for module, name, function in saved:
            setattr(module, name, function)
    spent = {phase: seconds / repeats for phase, seconds in spent.items()}
    inside = sum(spent[p] for p in spent if p != "solve")
    spent["stops and bookkeeping"] = spent.pop("solve", 0.0) - inside
    spent["input checks and masks"] = total - sum(spent.values())
    return spent


def fixed_cost(rng, repeats):
    """The CPU time of a call on a tiny stream, where the call's own overhead is all there is."""
    stream = packed_stream(FIXED_COST_SHAPE, rng)
    rewards, _, next_values, terminated, truncated = stream
    # Warm: the cost of the call's Python, not of fetching the interpreter's code from memory.
    gae = best_time(lambda: packed_gae(*stream, GAMMA, LAM), repeats, cold=False)
    returns = best_time(
        lambda: packed_discounted_returns(rewards, next_values, terminated, truncated, GAMMA),
        repeats,
        cold=False,
    )
    return (
        f"Fixed cost of a call at shape {FIXED_COST_SHAPE}: packed_gae {gae * 1e6:.0f} µs, "
        f"packed_discounted_returns {returns * 1e6:.0f} µs"
    )


def print_table(title, shape, rows, add, limit):
    print(f"\n{title}, shape (B, T) = {shape}: np.add {add * 1e3:.2f} ms; the bandwidth limit "
          f"is {limit:.1f} passes")  # fmt: skip
    print("| form | layout | passes of np.add | vs rlfound on its layout | worst error |")
    print("| --- | --- | --- | --- | --- |")
    for name, (layout, passes, error) in rows.items():
        own = "rlfound" if layout == "(B, T)" else "rlfound, axis=0"
        if name.endswith("no ends"):
            own = "rlfound, no ends"
        versus = passes / rows[own][1] if own in rows else float("nan")
        print(f"| {name} | {layout} | {passes:,.1f} | {versus:,.2f}× | {error:.1e} |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="tiny shapes, one repeat")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument(
        "--rounds", type=int, default=5,
        help="rounds of np.add and each form timed in turn; the median ratio is printed",
    )  # fmt: skip
    parser.add_argument("--phases", action="store_true", help="where rlfound's passes go")
    parser.add_argument(
        "--shape", type=lambda text: tuple(int(n) for n in text.split(",")), action="append",
        help="B,T: run this shape only (repeatable)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    shapes = args.shape or (SMALL_SHAPES if args.small else SHAPES)
    repeats = 1 if args.small else args.repeats
    rounds = 1 if args.small else args.rounds
    rng = np.random.default_rng(0)
    print(f"Load average at the start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(fixed_cost(rng, 1 if args.small else 300))
    for shape in shapes:
        stream = packed_stream(shape, rng)
        add = add_time(stream, repeats)
        bandwidth = copy_bandwidth(stream, repeats)
        entries = np.prod(shape)
        rows = measure(gae_forms(stream), repeats, stream, rounds)
        rows |= measure(no_end_forms(stream), repeats, stream, rounds)
        print_table("GAE", shape, rows, add, GAE_BYTES * entries / bandwidth / add)
        rows = measure(return_forms(stream), repeats, stream, rounds)
        print_table("Returns", shape, rows, add, RETURN_BYTES * entries / bandwidth / add)
        if args.phases:
            print("| where rlfound's GAE passes go | (B, T) | (T, B) |")
            print("| --- | --- | --- |")
            last, first = phases(stream, -1, repeats), phases(stream, 0, repeats)
            for phase in sorted(set(last) | set(first), key=lambda p: -last.get(p, 0.0)):
                print(f"| {phase} | {last.get(phase, 0.0) / add:.2f} | "
                      f"{first.get(phase, 0.0) / add:.2f} |")  # fmt: skip
    print(f"\nLoad average at the end: {os.getloadavg()[0]:.2f}")
    print(
        "Passes are CPU times over one np.add pass; the worst error is max |form - clear| / "
        "scan(|x|), the same scan applied to absolute values."
    )


if __name__ == "__main__":
    main()
