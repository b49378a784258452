"""What learning-management systems write around a class's hand-ins: Canvas's bulk-download
file names and Gradescope's export metadata, read as hostile data.

**Canvas.** "Download Submissions" gives one zip of loose files, each named
``<lastfirst>_<user id>_<submission id>_<original name>``, with ``LATE`` (or ``late``)
inserted after the student's name when Canvas marked the submission late, and ``-1``, ``-2``,
... added before the extension of a file the student handed in again under the same name.
(The format is undocumented; it is described from real downloads by
github.com/mikewesthad/canvas-unzipper, ``README.md``, and the ``LATE`` form and the
resubmission suffix by github.com/TimHanneman/Canvas_submission_sort, ``submission_sort.sh``
and ``sub_name.awk`` at commit feb8f70.) :func:`canvas_name` parses one such name.

**Gradescope.** "Export Submissions" of an assignment gives a zip holding one folder,
``assignment_<id>_export/``, with a ``submission_<id>/`` folder of each submission's files and
a ``submission_metadata.yml`` keyed by those folder names; each value has ``:submitters:``
(a list of ``:name:``, ``:sid:``, ``:email:``) and ``:created_at:``, the submission's time
with its offset. (Also undocumented: the folders and the ``:submitters:`` / ``:name:`` keys are
those otter-grader reads, github.com/ucbds-infra/otter-grader, ``otter/grade/metadata.py``
(``GradescopeParser``) at commit 3b7c5b0; Gradescope documents only the autograder's
``submission_metadata.json``, a different file, at gradescope-autograders.readthedocs.io,
"Submission Metadata".)
:func:`gradescope_metadata` reads it with ``yaml.safe_load`` semantics (no object is built
from a tag), after a size cap; a time without an offset is UTC, as YAML defines.
"""

from __future__ import annotations

import dataclasses
import datetime
import re

from rlfound.grading.intake import text

__all__ = [
    "MAX_METADATA_BYTES",
    "METADATA_NAME",
    "CanvasName",
    "GradescopeSubmission",
    "Submitter",
    "aware_time",
    "canvas_name",
    "gradescope_metadata",
    "without_resubmission_suffix",
]

#: Largest ``submission_metadata.yml`` read (a class of hundreds with their histories).
MAX_METADATA_BYTES = 16 * 1024**2
#: The name of Gradescope's export metadata.
METADATA_NAME = "submission_metadata.yml"
#: Submitters of one submission read (a group); the rest are ignored.
MAX_SUBMITTERS = 20

_CANVAS = re.compile(
    r"(?P<student>[^_]+)(?P<late>_(?i:late))?_(?P<user>[0-9]+)_(?P<submission>[0-9]+)_"
    r"(?P<file>.+)",
    re.DOTALL,
)
_RESUBMITTED = re.compile(r"-[0-9]+(?=(\.[^.]*)?$)")


@dataclasses.dataclass(frozen=True)
class CanvasName:
    """The parts of a Canvas bulk-download file name."""

    student: str
    user_id: str
    submission_id: str
    file_name: str
    late: bool


def canvas_name(name: str) -> CanvasName | None:
    """The parts of ``name`` if it is a Canvas bulk-download file name, else None.

    Examples
    --------
    >>> canvas_name("smithjane_late_4321_98765_gae_recursion.py")
    CanvasName(student='smithjane', user_id='4321', submission_id='98765', file_name='gae_recursion.py', late=True)
    >>> canvas_name("alice.py") is None
    True
    """  # noqa: E501
    match = _CANVAS.fullmatch(name)
    if match is None:
        return None
    return CanvasName(
        match["student"], match["user"], match["submission"], match["file"], bool(match["late"])
    )


def without_resubmission_suffix(file_name: str) -> str:
    """``file_name`` without the ``-N`` Canvas adds to a file handed in again.

    Examples
    --------
    >>> without_resubmission_suffix("gae_recursion-2.py")
    'gae_recursion.py'
    """
    return _RESUBMITTED.sub("", file_name, count=1)


@dataclasses.dataclass(frozen=True)
class Submitter:
    """One student of a Gradescope submission (each field inert and capped; "" if absent)."""

    name: str
    sid: str
    email: str


@dataclasses.dataclass(frozen=True)
class GradescopeSubmission:
    """One entry of ``submission_metadata.yml``."""

    submitters: tuple[Submitter, ...]
    created_at: datetime.datetime | None


def _field(mapping: dict, name: str):
    """A field written as Ruby's symbol (``:sid``) or plainly (``sid``)."""
    if f":{name}" in mapping:
        return mapping[f":{name}"]
    return mapping.get(name)


def _string(value) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return ""
    return text.clean(str(value).strip(), text.NAME_CHARS)


def aware_time(value) -> datetime.datetime | None:
    """A metadata time as an aware datetime: a naive one is UTC (YAML's rule); a text is read
    as ISO 8601; anything else is None."""
    if isinstance(value, str) and len(value) <= 64:
        try:
            value = datetime.datetime.fromisoformat(re.sub(r"\s+([+-]\d)", r"\1", value.strip()))
        except ValueError:
            return None
    if not isinstance(value, datetime.datetime):
        return None
    if value.tzinfo is None or value.utcoffset() is None:
        return value.replace(tzinfo=datetime.timezone.utc)
    return value


def gradescope_metadata(data: bytes) -> dict[str, GradescopeSubmission]:
    """Read a ``submission_metadata.yml`` (its bytes): submission folder name → entry.

    Entries that are not mappings, and submitters that are not, are left out.

    Raises
    ------
    ValueError
        If the text is larger than :data:`MAX_METADATA_BYTES`, is not YAML, or is not a
        mapping.

    Examples
    --------
    >>> text = b"submission_7:\\n  :submitters:\\n  - :name: Ana\\n    :sid: '42'\\n"
    >>> gradescope_metadata(text)["submission_7"].submitters[0].sid
    '42'
    """
    import yaml

    if len(data) > MAX_METADATA_BYTES:
        raise ValueError(f"{METADATA_NAME} is larger than {MAX_METADATA_BYTES} bytes")
    # yaml.safe_load with the C parser when it is there (much faster on a large class): the
    # same safe constructor, which builds no object from a tag.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        document = yaml.load(data, Loader=loader)
    except (yaml.YAMLError, RecursionError, UnicodeDecodeError) as error:
        detail = text.clean(str(error), 300)
        raise ValueError(f"{METADATA_NAME} is not readable YAML ({detail})") from None
    if not isinstance(document, dict):
        raise ValueError(f"{METADATA_NAME} does not map submission folders to their entries")
    found = {}
    for key, entry in document.items():
        if not isinstance(key, str) or not isinstance(entry, dict):
            continue
        listed = _field(entry, "submitters")
        submitters = tuple(
            Submitter(
                _string(_field(person, "name")),
                _string(_field(person, "sid")),
                _string(_field(person, "email")),
            )
            for person in (listed if isinstance(listed, list) else [])[:MAX_SUBMITTERS]
            if isinstance(person, dict)
        )
        found[key] = GradescopeSubmission(submitters, aware_time(_field(entry, "created_at")))
    return found
