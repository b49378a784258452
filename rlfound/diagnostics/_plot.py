"""Tables of successive training steps drawn as panels: :func:`plot_history`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    as_float_array,
    check_positive_int,
    check_shape,
    finite_output,
)

#: Panels :func:`plot_history` draws by default (those present in the history).
DEFAULT_PANELS = (
    "return/mean",
    "group/all_equal_fraction",
    "log_ratio/max_abs",
    "ess/sequence_fraction",
    ("clip/positive", "clip/negative"),
    "kl/old_current/k3",
    "entropy/sampled/mean",
    "value/explained_variance",
    ("grad_norm/before", "grad_norm/after"),
    "lag/steps_mean",
)


# --- plotting ----------------------------------------------------------------------------------


def _check_run(run: Any, label: str) -> list:
    """One run: a non-empty sequence of tables (mappings)."""
    if (
        isinstance(run, Mapping | str)
        or not isinstance(run, Sequence)
        or not run
    ):
        raise ValueError(
            f"history{label} must be a non-empty sequence of tables (dicts of name -> float); "
            f"got {run!r:.60}"
        )
    for step, table in enumerate(run):
        if not isinstance(table, Mapping):
            raise ValueError(
                f"history{label} must hold tables (dicts of name -> float); got "
                f"{type(table).__name__} at step {step}"
            )
    return list(run)


def _runs(history: Any) -> dict[str, list]:
    """The runs of ``history`` by label: one unlabeled run for a plain list of tables."""
    if isinstance(history, Mapping):
        if not history:
            raise ValueError(
                "history must hold at least one run; got an empty mapping"
            )
        return {
            str(label): _check_run(run, f"[{label!r}]")
            for label, run in history.items()
        }
    return {"": _check_run(history, "")}


def _names_of(panel: str | Sequence[str]) -> tuple[str, ...]:
    """The diagnostics one panel draws: a name, or a tuple of names."""
    return (panel,) if isinstance(panel, str) else tuple(panel)


def _choose_panels(names: Any, runs: dict[str, list]) -> list:
    """The panels to draw: ``names`` checked against the diagnostics that occur in the runs,
    or (``names`` None) the default panels that occur."""
    present = set().union(
        *(table.keys() for run in runs.values() for table in run)
    )
    if names is None:
        panels = [
            panel
            for panel in DEFAULT_PANELS
            if any(name in present for name in _names_of(panel))
        ]
        if not panels:
            raise ValueError(
                "names must be given when history holds none of the default panels; got "
                f"names None and the diagnostics {sorted(present)[:5]}"
            )
        return panels
    if (
        isinstance(names, str)
        or not isinstance(names, Sequence)
        or not names
    ):
        raise ValueError(
            f"names must be a non-empty list of diagnostic names; got {names!r}"
        )
    for panel in names:
        for name in _names_of(panel):
            if name not in present:
                raise ValueError(
                    f"names must name diagnostics that occur in history; got {name!r}"
                )
    return list(names)


def _build_series(runs: dict[str, list], panels: list, steps: Any) -> dict:
    """(run, name) -> (x, y) for every diagnostic drawn: NaN where a table lacks the name."""
    if steps is not None:
        steps = as_float_array(steps, "steps", ndim=1)
        for run in runs.values():
            check_shape(
                steps, "steps", (len(run),), "one entry per table of history"
            )
    series = {}
    for label, run in runs.items():
        x = np.arange(len(run), dtype=np.float64) if steps is None else steps
        for panel in panels:
            for name in _names_of(panel):
                column = [table.get(name, np.nan) for table in run]
                try:
                    series[label, name] = (
                        x,
                        np.array(column, dtype=np.float64),
                    )
                except (TypeError, ValueError) as error:
                    raise ValueError(
                        f"history must hold numbers; got {column!r:.60} for {name!r}"
                    ) from error
    return series


def _draw(runs: dict[str, list], panels: list, series: dict, ncols: int):
    """The figure: one panel per entry of ``panels``, a line per run and name."""
    try:
        import matplotlib.pyplot as plt
    except (
        ImportError
    ) as error:  # matplotlib is a dependency of the book, not of rlfound
        raise ImportError(
            "plot_history needs matplotlib, which rlfound does not install; install it with "
            "`pip install matplotlib` (or `pip install rlfound[book]`)"
        ) from error

    ncols = min(
        ncols, len(panels)
    )  # more columns than panels would only be empty axes
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(4.0 * ncols, 2.8 * nrows),
        squeeze=False,
        sharex=True,
    )
    for ax, panel in zip(axes.flat, panels, strict=False):
        group = _names_of(panel)
        for label in runs:
            for name in group:
                text = " ".join(
                    part
                    for part in (label, "" if len(group) == 1 else name)
                    if part
                )
                ax.plot(
                    *series[label, name],
                    marker=".",
                    markersize=3,
                    label=text or None,
                )
        ax.set_title(" / ".join(group), fontsize=9)
        if len(group) > 1 or len(runs) > 1:
            ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("step")
    fig.tight_layout()
    return fig


@finite_output()
def plot_history(
    history: Sequence[Mapping[str, float]]
    | Mapping[str, Sequence[Mapping[str, float]]],
    names: Sequence[str | Sequence[str]] | None = None,
    ncols: int = 3,
    steps: ArrayLike | None = None,
):
    """Draw diagnostics over training steps, one panel per name, and return the figure.

    ``history`` is the list of tables :func:`report` returned at successive steps, or a
    dict of such lists, one per run, to compare runs in every panel. A name missing from a
    step's table leaves a gap. Each entry of ``names`` is one panel: a diagnostic's name, or
    a tuple of names drawn in the same panel. matplotlib is imported here, not when the
    module is imported: it is a dependency of the book, not of the library.

    Parameters
    ----------
    history : sequence of mapping of str to float, or mapping of str to such sequences
        One table per step (at least one); or runs by name.
    names : sequence of str or of tuples of str, optional
        The panels. Default: those of ``DEFAULT_PANELS`` that occur in ``history``.
    ncols : int, optional
        Panels per row, >= 1. Default 3.
    steps : array_like, shape (S,), optional
        The x value of each table (optimizer steps), when every run has S tables. Default
        0, 1, 2, ... These are the step values themselves, not a count of steps (which the
        library calls ``num_steps``).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not shown; call ``plt.show()`` or ``fig.savefig``).

    Raises
    ------
    ImportError
        If matplotlib is not installed (the message says how to install it).
    ValueError
        If ``history`` (or a run) is empty or holds something other than tables of numbers,
        a name occurs in no table, no default panel occurs, ``ncols`` is not a positive
        integer, or ``steps`` is not a finite 1-D array with one entry per table of every run.

    Examples
    --------
    >>> fig = plot_history([{"return/mean": 0.1}, {"return/mean": 0.4, "lag/steps_mean": 2.0}])
    >>> [ax.get_title() for ax in fig.axes if ax.get_visible()]
    ['return/mean', 'lag/steps_mean']
    >>> runs = plot_history({"a": [{"loss": 1.0}], "b": [{"loss": 0.5}]}, names=["loss"])
    >>> [line.get_label() for line in runs.axes[0].get_lines()]
    ['a', 'b']
    >>> import matplotlib.pyplot as plt
    >>> plt.close(fig), plt.close(runs)
    (None, None)
    """
    runs = _runs(history)
    panels = _choose_panels(names, runs)
    ncols = check_positive_int(ncols, "ncols")
    series = _build_series(runs, panels, steps)
    return _draw(runs, panels, series, ncols)
