"""What the teaching team looks at after a batch: ``checks.csv``, ``summary.md`` (with
``scores.png``) and ``similarity.csv``, written in one call.

The single-exercise ``rlfound grade`` and an assignment's pipeline both call
:func:`write_team_reports` once every submission is graded, each with its results keyed by
exercise id. None of these files changes a score.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

from rlfound.grading.authoring.spec import Exercise
from rlfound.grading.output import checks_report, similarity, summary
from rlfound.grading.scoring.results import SubmissionResult

__all__ = ["TEAM_FILES", "THRESHOLD", "TeamReports", "starter_code", "write_team_reports"]

#: The files :func:`write_team_reports` writes in the output folder.
TEAM_FILES = ("checks.csv", "summary.md", summary.HISTOGRAM, "similarity.csv")
#: Default similarity threshold (:data:`rlfound.grading.output.similarity.THRESHOLD`).
THRESHOLD = similarity.THRESHOLD


@dataclasses.dataclass(frozen=True)
class TeamReports:
    """What :func:`write_team_reports` wrote: the similar pairs, and a sentence for each
    report it left out (its optional package is not installed), for the command to print."""

    pairs: list[similarity.SimilarPair]
    left_out: list[str]


def starter_code(exercise: Exercise) -> str:
    """The code every student of ``exercise`` was given: its ``.py`` starter (the
    boilerplate of the similarity report)."""
    from rlfound.grading.authoring import public

    return public.public_starter(exercise)


def write_team_reports(
    out_dir: str | Path,
    results_by_exercise: Mapping[str, Sequence[SubmissionResult]],
    sources_by_exercise: Mapping[str, Mapping[str, str]],
    starters: Mapping[str, str],
    *,
    threshold: float = THRESHOLD,
) -> TeamReports:
    """Write ``checks.csv``, ``summary.md``, ``scores.png`` and ``similarity.csv``.

    ``scores.png`` needs matplotlib and ``similarity.csv`` copydetect (rlfound's ``teaching``
    extra); where one is missing, that file is not written and :attr:`TeamReports.left_out`
    says why (an old ``similarity.csv`` is removed, so none is mistaken for this batch's).

    Parameters
    ----------
    out_dir : path
        The batch's output folder.
    results_by_exercise : mapping of str to sequence of SubmissionResult
        Each exercise id and its graded results, one per student.
    sources_by_exercise : mapping of str to mapping of str to str
        Each exercise id and, per student, the code handed in for it (a notebook's code
        cells joined).
    starters : mapping of str to str
        Each exercise id and its starter code (:func:`starter_code`).
    threshold : float
        The lowest similarity listed.

    Returns
    -------
    TeamReports
    """
    out_dir = Path(out_dir)
    left_out = []
    checks_report.write_checks(out_dir / "checks.csv", results_by_exercise)
    if not summary.write_summary(out_dir, results_by_exercise):
        left_out.append(f"{summary.HISTOGRAM} not written: {summary.NO_MATPLOTLIB}")
    pairs: list[similarity.SimilarPair] = []
    try:
        for exercise, sources in sources_by_exercise.items():
            pairs += similarity.find_similar(
                sources,
                exercise=exercise,
                boilerplate=starters.get(exercise, ""),
                threshold=threshold,
            )
    except ImportError:
        (out_dir / "similarity.csv").unlink(missing_ok=True)
        left_out.append(f"similarity.csv not written: {similarity.NO_COPYDETECT}")
    else:
        similarity.write_similarity(out_dir / "similarity.csv", pairs)
    return TeamReports(pairs, left_out)
