"""The teaching team's one-page summary of a graded batch: ``summary.md`` and ``scores.png``.

``summary.md`` gives, for each exercise, the number of submissions and their mean, median,
lowest and highest automatic score, the score distribution (a table of the histogram's bins,
and the histogram itself in ``scores.png`` beside it, drawn by matplotlib's Agg backend), then
the five hardest checks of the batch and how many failures there were of each kind
(:func:`~rlfound.grading.output.checks_report.failure_kind`).

The same results give the same bytes (the PNG carries no date or version), so a regrade with
the same seed rewrites identical files. matplotlib is in the ``teaching`` extra of rlfound, not
a dependency: without it ``summary.md`` says so in place of the image.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from rlfound.grading.output import checks_report
from rlfound.grading.output.atomic import write_atomic, write_atomic_bytes
from rlfound.grading.scoring.results import SubmissionResult

__all__ = [
    "HARDEST",
    "HISTOGRAM",
    "NO_MATPLOTLIB",
    "histogram_bins",
    "histogram_png",
    "summary_markdown",
    "write_summary",
]

#: File name of the histogram, written next to ``summary.md``.
HISTOGRAM = "scores.png"
#: Why there is no histogram where matplotlib is missing.
NO_MATPLOTLIB = (
    "the histogram needs matplotlib, which rlfound does not install: "
    "pip install 'rlfound[teaching]'"
)
#: Checks listed as the hardest.
HARDEST = 5
_MAX_BINS = 10


def _g(x: float) -> str:
    return f"{x:.4g}"


def histogram_bins(scores: Sequence[float], max_score: float) -> list[tuple[float, float, int]]:
    """The score distribution as ``(low, high, count)`` bins covering ``[0, max_score]``, the
    last one closed so that a full score counts.

    A whole-point maximum gets bins a whole number of points wide, at most 10 of them (1 point
    up to 10 points, 2 up to 20, ...); any other maximum gets 10 bins of equal width.

    Examples
    --------
    >>> histogram_bins([0, 1, 1, 2], 2)
    [(0.0, 1.0, 1), (1.0, 2.0, 3)]
    >>> [(low, high) for low, high, _ in histogram_bins([11], 11)][-1]
    (10.0, 12.0)
    """
    top = float(max_score) if max_score > 0 else 1.0
    if top.is_integer():
        width = max(1, int(np.ceil(top / _MAX_BINS)))
        count = int(np.ceil(top / width))
        top = float(width * count)
    else:
        count = _MAX_BINS
    counts, edges = np.histogram(np.asarray(scores, dtype=float), bins=count, range=(0.0, top))
    return [(float(edges[i]), float(edges[i + 1]), int(counts[i])) for i in range(len(counts))]


def histogram_png(distributions: Mapping[str, tuple[Sequence[float], float]]) -> bytes:
    """The histogram of each exercise's scores as one PNG, one panel per exercise.

    ``distributions`` maps an exercise id to its scores and its maximum.

    Raises
    ------
    ImportError
        If matplotlib is not installed.
    """
    try:
        # A Figure of its own, with the Agg canvas: no pyplot state, no display needed.
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:  # the teaching extra, not a dependency of rlfound
        raise ImportError(NO_MATPLOTLIB) from error

    panels = max(1, len(distributions))
    figure = Figure(figsize=(6, 2.6 * panels), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(panels, 1, squeeze=False)[:, 0]
    for ax, (exercise, (scores, max_score)) in zip(axes, distributions.items(), strict=False):
        bins = histogram_bins(scores, max_score)
        lows = [low for low, _, _ in bins]
        widths = [high - low for low, high, _ in bins]
        ax.bar(lows, [n for _, _, n in bins], width=widths, align="edge", edgecolor="black")
        ax.set_title(f"{exercise}: {len(scores)} submission(s)")
        ax.set_xlabel(f"automatic score (of {_g(max_score)})")
        ax.set_ylabel("students")
        ax.set_xlim(0, bins[-1][1])
    buffer = io.BytesIO()
    # No metadata: the same scores give the same bytes.
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _distribution(results: Sequence[SubmissionResult]) -> tuple[list[float], float]:
    scores = [result.score for result in results]
    max_score = max((result.max_score for result in results), default=0.0)
    return scores, max_score


def summary_markdown(
    results_by_exercise: Mapping[str, Sequence[SubmissionResult]],
    *,
    histogram: str | None = HISTOGRAM,
) -> str:
    """The text of ``summary.md``.

    Parameters
    ----------
    results_by_exercise : mapping of str to sequence of SubmissionResult
        Each exercise id and its results, one per student.
    histogram : str or None
        The file name of the histogram to show (None: a line saying why there is none).

    Examples
    --------
    >>> from rlfound.grading.scoring.results import CheckResult, SubmissionResult
    >>> ok = CheckResult("edges", 1.0, 1.0, True, "ok", True, "")
    >>> print(summary_markdown({"demo": [SubmissionResult("a", None, [ok])]}).splitlines()[0])
    # Grading summary
    """
    lines = ["# Grading summary", ""]
    lines += [
        "| exercise | submissions | mean | median | lowest | highest | out of |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for exercise, results in results_by_exercise.items():
        scores, max_score = _distribution(results)
        if scores:
            cells = [np.mean(scores), np.median(scores), min(scores), max(scores)]
            stats = " | ".join(_g(float(x)) for x in cells)
        else:
            stats = "- | - | - | -"
        lines.append(f"| `{exercise}` | {len(scores)} | {stats} | {_g(max_score)} |")
    lines += ["", "## Score distribution", ""]
    if histogram:
        lines += [f"![Histogram of the automatic scores]({histogram})", ""]
    else:
        lines += [f"(No histogram: {NO_MATPLOTLIB}.)", ""]
    for exercise, results in results_by_exercise.items():
        scores, max_score = _distribution(results)
        bins = histogram_bins(scores, max_score)
        lines += [f"`{exercise}`:", "", "| score | students |", "| --- | --- |"]
        for number, (low, high, count) in enumerate(bins):
            closing = "]" if number == len(bins) - 1 else ")"
            lines.append(f"| [{_g(low)}, {_g(high)}{closing} | {count} |")
        lines.append("")
    stats = checks_report.check_stats(results_by_exercise)
    hardest = sorted(
        (row for row in stats if row.students),
        key=lambda r: (r.pass_rate, r.mean_points / (r.max_points or 1), r.exercise, r.check),
    )[:HARDEST]
    lines += [f"## The {HARDEST} hardest checks", ""]
    lines += ["| exercise | check | passed | most common failure |", "| --- | --- | --- | --- |"]
    for row in hardest:
        failure = row.most_common_failure.replace("|", "\\|").replace("`", "'")
        shown = f"`{failure}` ({row.failure_count})" if failure else "-"
        lines.append(
            f"| `{row.exercise}` | `{row.check}` | {row.passed} of {row.students} | {shown} |"
        )
    totals: dict[str, int] = {}
    for row in stats:
        for kind, count in row.failures.items():
            totals[kind] = totals.get(kind, 0) + count
    lines += ["", "## Failures by kind", ""]
    if totals:
        lines += ["| kind | failed checks |", "| --- | --- |"]
        for kind, count in sorted(totals.items(), key=lambda item: (-item[1], item[0])):
            lines.append(f"| {kind} | {count} |")
    else:
        lines.append("No check failed.")
    return "\n".join(lines) + "\n"


def write_summary(
    out_dir: str | Path, results_by_exercise: Mapping[str, Sequence[SubmissionResult]]
) -> None:
    """Write ``out_dir/summary.md`` and its histogram ``out_dir/scores.png``, atomically;
    return whether the histogram was drawn (False where matplotlib is missing)."""
    out_dir = Path(out_dir)
    distributions = {e: _distribution(r) for e, r in results_by_exercise.items()}
    try:
        png = histogram_png(distributions)
    except ImportError:
        png = None
    else:
        write_atomic_bytes(out_dir / HISTOGRAM, png)
    histogram = HISTOGRAM if png is not None else None
    write_atomic(out_dir / "summary.md", summary_markdown(results_by_exercise, histogram=histogram))
    return png is not None
