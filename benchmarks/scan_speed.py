"""How fast are packed-stream returns and GAE? Each form as a ratio to one ``np.add`` pass.

For each shape (B, T) of float64 streams with about 0.5% terminated and 0.5% truncated
steps, times four ways of getting the same numbers, for discounted returns and for GAE:

- clear: the library function with ``method="loop"``, the reference form the book shows
  (one Python step per time step, vectorized over the B rows);
- SB3-style: a loop over time written here the way Stable-Baselines3's rollout buffer
  computes returns and advantages, a handful of array operations per time step;
- fast: the library function as called by default (``method="auto"``, here the banded
  triangular solve), input checks included;
- np.add: one ``np.add`` of two of the input arrays, the cost of reading the data once:
  the cheaper of writing into a new array and into an existing one (which is cheaper
  depends on what the memory allocator has at hand, so the baseline takes the lower).

Each time is the best of several repeats of CPU time (``time.process_time``), which the load
of a shared machine distorts less than wall time; all forms are measured in the same run, so
the ratios compare like with like. Run from the repository root::

    .venv/bin/python benchmarks/scan_speed.py [--small] [--repeats 15]

``--small`` runs tiny shapes in a second (what the test suite does). This is a benchmark,
not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rlfound.advantages import packed_gae
from rlfound.returns import discounted_cumsum, packed_discounted_returns

SHAPES = [(1024, 2048), (65536, 32), (1, 10**6)]
SMALL_SHAPES = [(16, 64), (512, 8), (1, 5000)]
GAMMA, LAM = 0.99, 0.95
END_PROBABILITY = 0.005  # for each of terminated and truncated
# Stop repeating a form once it has used this much CPU time: the slowest forms run only once.
TIME_BUDGET = 3.0


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


def sb3_style_gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    """GAE by a loop over time, one time step of every row per iteration, as SB3 does it.

    Stable-Baselines3 walks its rollout buffer from the last step to the first, keeping the
    running advantage of every environment, and at each step forms a continuation flag, the
    TD error and the new running advantage from a few whole-row array operations. Here the
    flags follow this library's convention (terminated steps do not bootstrap, truncated
    ones bootstrap from ``next_values``; the stream's end cuts the λ-chain).
    """
    horizon = rewards.shape[-1]
    advantages = np.empty_like(rewards)
    running = np.zeros(rewards.shape[:-1])
    for t in reversed(range(horizon)):
        not_terminal = 1.0 - terminated[..., t]
        goes_on = 1.0 - (terminated[..., t] | truncated[..., t])
        delta = rewards[..., t] + gamma * next_values[..., t] * not_terminal - values[..., t]
        running = delta + gamma * lam * goes_on * running
        advantages[..., t] = running
    return advantages


def sb3_style_returns(rewards, values, next_values, terminated, truncated, gamma):
    """Discounted returns the way SB3 gets them: advantages plus values, with λ = 1.

    SB3 has no loop of its own for returns; its buffer's returns are the GAE advantages
    plus the values, which for λ = 1 and next values that continue the values inside each
    episode are the bootstrapped discounted returns.
    """
    return sb3_style_gae(rewards, values, next_values, terminated, truncated, gamma, 1.0) + values


def best_time(run, repeats):
    """The least CPU time of up to ``repeats`` runs (fewer once TIME_BUDGET is spent)."""
    times = []
    while len(times) < repeats and (not times or sum(times) < TIME_BUDGET):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return min(times)


def worst_scaled_error(fast, reference, bound):
    """max |fast - reference| / bound, where ``bound`` is the scan of |terms| (0/0 counts 0)."""
    error = np.abs(fast - reference)
    return float(np.max(np.divide(error, bound, out=np.zeros_like(error), where=bound > 0)))


def measure(shape, repeats, rng):
    """One table row per quantity: times in seconds and the fast form's agreement."""
    rewards, values, next_values, terminated, truncated = stream = packed_stream(shape, rng)
    done = terminated | truncated
    gae_terms = rewards + GAMMA * np.where(terminated, 0.0, next_values) - values
    forms = {
        "returns": {
            "clear": lambda: packed_discounted_returns(
                rewards, next_values, terminated, truncated, GAMMA, method="loop"
            ),
            "SB3-style": lambda: sb3_style_returns(*stream, GAMMA),
            "fast": lambda: packed_discounted_returns(
                rewards, next_values, terminated, truncated, GAMMA
            ),
        },
        "GAE": {
            "clear": lambda: packed_gae(*stream, GAMMA, LAM, method="loop"),
            "SB3-style": lambda: sb3_style_gae(*stream, GAMMA, LAM),
            "fast": lambda: packed_gae(*stream, GAMMA, LAM),
        },
    }
    # The scale against which agreement is judged: the same scan applied to absolute values.
    cut = truncated.copy()
    cut[..., -1] |= ~terminated[..., -1]
    return_terms = np.abs(rewards) + GAMMA * np.abs(np.where(cut, next_values, 0.0))
    bounds = {
        "returns": discounted_cumsum(return_terms, GAMMA * ~done),
        "GAE": discounted_cumsum(np.abs(gae_terms), GAMMA * LAM * ~done),
    }
    existing = np.empty_like(rewards)
    add_time = min(
        best_time(lambda: np.add(rewards, values), max(repeats, 5)),
        best_time(lambda: np.add(rewards, values, out=existing), max(repeats, 5)),
    )
    rows = []
    for quantity, runs in forms.items():
        times = {name: best_time(run, repeats) for name, run in runs.items()}
        results = {name: run() for name, run in runs.items()}
        errors = {
            name: worst_scaled_error(results[name], results["clear"], bounds[quantity])
            for name in ("SB3-style", "fast")
        }
        rows.append((quantity, times, add_time, errors))
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="tiny shapes, one repeat")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    shapes = SMALL_SHAPES if args.small else SHAPES
    repeats = 1 if args.small else args.repeats
    rng = np.random.default_rng(0)

    print(
        "| shape (B, T) | quantity | clear | SB3-style | fast | np.add | fast vs SB3-style "
        "| worst error of fast |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for shape in shapes:
        for quantity, times, add_time, errors in measure(shape, repeats, rng):
            ratios = [times[name] / add_time for name in ("clear", "SB3-style", "fast")]
            print(
                f"| {shape} | {quantity} | "
                + " | ".join(f"{ratio:,.1f}×" for ratio in ratios)
                + f" | 1× ({add_time * 1e3:.2f} ms) "
                f"| {times['SB3-style'] / times['fast']:,.1f}× faster "
                f"| {errors['fast']:.1e} |"
            )
    print(
        "\nRatios are CPU times over one np.add pass; the worst error is "
        "max |fast - clear| / scan(|x|), the same scan applied to absolute values."
    )


if __name__ == "__main__":
    main()
