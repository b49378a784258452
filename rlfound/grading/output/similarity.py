"""Pairs of submissions that look alike (``similarity.csv``): a prompt for a human look, never
evidence and never a change to a score.

The fingerprints are copydetect's (https://github.com/blingenf/copydetect), the winnowing
method of MOSS (Schleimer, Wilkerson and Aiken, "Winnowing: local algorithms for document
fingerprinting", SIGMOD 2003): the code is tokenized by Pygments, every identifier becomes one
letter (so renaming variables changes nothing), comments and white space are dropped, and every
run of :data:`NOISE` characters of what is left is hashed. The starter is the *boilerplate*:
its fingerprints are removed from every submission, so the code every student was given makes
no two submissions similar. Every fingerprint is kept (a winnowing window of 1), because the
window's choice depends on Python's per-process string hashes, and the same submissions must
give the same file on every regrade.

The score of a pair is the larger of the two *containments*: the fraction of one
submission's fingerprinted code that also appears in the other. A pair is listed when it
reaches the threshold, with the shared regions as line ranges of each file.

Student code is hostile and this runs in the grader's own process, so each source is cut to
:data:`MAX_CHARS` characters before it is tokenized (Pygments' lexer is a loop over regular
expressions, with no recursion to exhaust, so nesting or a syntax error costs nothing more).
"""

from __future__ import annotations

import bisect
import csv
import dataclasses
import io
import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path

from rlfound.grading.intake import text
from rlfound.grading.output.atomic import write_atomic

__all__ = [
    "MAX_CHARS",
    "NOISE",
    "NO_COPYDETECT",
    "SIMILARITY_COLUMNS",
    "THRESHOLD",
    "SimilarPair",
    "find_similar",
    "similarity_csv",
    "write_similarity",
]

#: Characters of one source that are fingerprinted (the rest is ignored).
MAX_CHARS = 50_000
#: Length of a fingerprinted run of the normalized code, in characters; shorter matches are
#: noise (copydetect's default).
NOISE = 25
#: Default score at which a pair is listed.
THRESHOLD = 0.6
#: Columns of ``similarity.csv``.
SIMILARITY_COLUMNS = (
    "exercise",
    "first",
    "second",
    "score",
    "first_share",
    "second_share",
    "first_lines",
    "second_lines",
)
_MAX_REGIONS = 20


@dataclasses.dataclass(frozen=True)
class SimilarPair:
    """Two submissions of one exercise that share code.

    ``first_share`` is the fraction of ``first``'s fingerprinted code found in ``second`` (and
    ``second_share`` the other way); ``score`` is the larger. ``first_lines`` and
    ``second_lines`` are the shared regions as ``(first line, last line)``, 1-based.
    """

    exercise: str
    first: str
    second: str
    score: float
    first_share: float
    second_share: float
    first_lines: tuple[tuple[int, int], ...]
    second_lines: tuple[tuple[int, int], ...]


#: Why there is no similarity report where copydetect is missing.
NO_COPYDETECT = (
    "the similarity report needs copydetect, which rlfound does not install: "
    "pip install 'rlfound[teaching]'"
)


def _copydetect():
    try:
        import copydetect
    except ImportError as error:  # the teaching extra, not a dependency of rlfound
        raise ImportError(NO_COPYDETECT) from error
    return copydetect


def _fingerprint(source: str, boilerplate):
    CodeFingerprint = _copydetect().CodeFingerprint
    return CodeFingerprint(
        "submission.py",
        NOISE,
        1,
        boilerplate=boilerplate,
        language="python",
        fp=io.StringIO(source[:MAX_CHARS]),
    )


def _lines(raw: str, slices) -> tuple[tuple[int, int], ...]:
    """Character slices of ``raw`` as merged ``(first line, last line)`` ranges."""
    breaks = [i for i, char in enumerate(raw) if char == "\n"]
    ranges: list[list[int]] = []
    for start, end in sorted(zip(slices[0].tolist(), slices[1].tolist(), strict=True)):
        first = bisect.bisect_right(breaks, int(start) - 1) + 1
        last = bisect.bisect_right(breaks, max(int(start), int(end) - 1) - 1) + 1
        if ranges and first <= ranges[-1][1] + 1:
            ranges[-1][1] = max(ranges[-1][1], last)
        else:
            ranges.append([first, last])
    return tuple((a, b) for a, b in ranges[:_MAX_REGIONS])


def find_similar(
    sources: Mapping[str, str],
    *,
    exercise: str = "",
    boilerplate: str = "",
    threshold: float = THRESHOLD,
) -> list[SimilarPair]:
    """The pairs of ``sources`` whose similarity reaches ``threshold``, most similar first.

    Parameters
    ----------
    sources : mapping of str to str
        Each submission's name and its Python code (a notebook's code cells joined). A
        submission that could not be read is left out by the caller.
    exercise : str
        The exercise id, written in each pair.
    boilerplate : str
        Code every student was given (the starter): it never counts as shared.
    threshold : float
        The lowest score listed, in [0, 1].

    Returns
    -------
    list of SimilarPair

    Raises
    ------
    ValueError
        If ``threshold`` is not in [0, 1].
    ImportError
        If copydetect is not installed (:data:`NO_COPYDETECT`).

    Examples
    --------
    >>> code = "def total(xs):\\n    s = 0\\n    for x in xs:\\n        s = s + x * x\\n"
    >>> code += "    return s\\n"
    >>> renamed = code.replace("xs", "values").replace("s = ", "acc = ").replace("x ", "v ")
    >>> [p.score for p in find_similar({"ann": code, "bob": renamed})]
    [1.0]
    >>> find_similar({"ann": code, "bob": code}, boilerplate=code)  # both are the starter
    []
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1]; got {threshold!r}")
    compare_files = _copydetect().compare_files
    base = _fingerprint(boilerplate, None) if boilerplate.strip() else None
    ignored = sorted(base.hashes) if base is not None else None
    prints = {name: _fingerprint(code, ignored) for name, code in sorted(sources.items())}
    pairs = []
    for (first, one), (second, other) in itertools.combinations(prints.items(), 2):
        if not one.hashes or not other.hashes:
            continue
        _, (share_one, share_other), (slices_one, slices_two) = compare_files(one, other)
        score = float(max(share_one, share_other))
        if score < threshold or score == 0.0:
            continue
        pairs.append(
            SimilarPair(
                exercise,
                first,
                second,
                round(score, 4),
                round(float(share_one), 4),
                round(float(share_other), 4),
                _lines(one.raw_code, slices_one),
                _lines(other.raw_code, slices_two),
            )
        )
    pairs.sort(key=lambda p: (-p.score, p.exercise, p.first, p.second))
    return pairs


def _ranges(ranges: Sequence[tuple[int, int]]) -> str:
    return " ".join(f"{a}-{b}" if a != b else str(a) for a, b in ranges)


def similarity_csv(pairs: Sequence[SimilarPair]) -> str:
    """``similarity.csv`` (:data:`SIMILARITY_COLUMNS`); line ranges as ``3-10 14-20``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(SIMILARITY_COLUMNS)
    for pair in pairs:
        writer.writerow(
            [
                pair.exercise,
                text.csv_cell(pair.first),
                text.csv_cell(pair.second),
                f"{pair.score:.4g}",
                f"{pair.first_share:.4g}",
                f"{pair.second_share:.4g}",
                _ranges(pair.first_lines),
                _ranges(pair.second_lines),
            ]
        )
    return buffer.getvalue()


def write_similarity(path: str | Path, pairs: Sequence[SimilarPair]) -> None:
    """Write ``similarity.csv`` (see :func:`similarity_csv`) atomically."""
    write_atomic(path, similarity_csv(pairs))
