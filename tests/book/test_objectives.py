"""Every chapter opens with what the reader needs first and what they will be able to do after.

Right under its title, each chapter has two boxes, in this order:

- a "Prerequisites" admonition with two items: **From this book:** (the earlier chapters or
  sections it builds on, as links; chapter 1 builds on nothing) and **Mathematics:**;
- a "Learning objectives" admonition: "After this chapter you will be able to:" followed by a
  numbered list of three to six objectives, each opening with a verb a teacher can check
  ("derive", "compute", "choose"), never with "understand" or "know".
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests._book import ROOT

CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))
ADMONITION = re.compile(r"```\{admonition\} (?P<title>[^\n]+)\n(?P<body>.*?)\n```", re.DOTALL)
LABEL = re.compile(r"^\((?P<label>[a-z0-9-]+)\)=$", re.MULTILINE)
REF = re.compile(r"\{ref\}`(?:[^`<]*<)?(?P<label>[a-z0-9-]+)>?`")
OBJECTIVE = re.compile(r"^\d+\. (?P<verb>\S+)", re.MULTILINE)
#: Verbs no one can check a reader against.
VAGUE = {"understand", "know", "learn", "appreciate", "be", "become", "see", "explore", "grasp"}


def opening_boxes(path: Path) -> tuple[dict[str, str], list[str]]:
    """The admonitions between the title and the first paragraph, by title, and their order."""
    text = path.read_text(encoding="utf-8")
    after_title = text.split("\n# ", 1)[1].split("\n", 1)[1]
    boxes, order = {}, []
    rest = after_title.lstrip("\n")
    while match := ADMONITION.match(rest):
        boxes[match["title"]] = match["body"]
        order.append(match["title"])
        rest = rest[match.end() :].lstrip("\n")
    return boxes, order


def labels_of(path: Path) -> set[str]:
    return set(LABEL.findall(path.read_text(encoding="utf-8")))


def test_every_chapter_is_checked():
    assert len(CHAPTERS) >= 14


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda path: path.name)
def test_chapter_opens_with_prerequisites_and_objectives(path: Path):
    _, order = opening_boxes(path)
    assert order == ["Prerequisites", "Learning objectives"], (
        f"{path.name}: the title must be followed by the Prerequisites and Learning objectives "
        f"admonitions, found {order}"
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda path: path.name)
def test_prerequisites_name_earlier_chapters_and_mathematics(path: Path):
    prerequisites = opening_boxes(path)[0].get("Prerequisites", "")
    items = re.split(r"^- ", prerequisites, flags=re.MULTILINE)[1:]
    openings = [item.split(":**", 1)[0] for item in items]
    assert openings == ["**From this book", "**Mathematics"], f"{path.name}: {openings}"
    book_item = items[0]
    linked = set(REF.findall(book_item))
    everywhere = set().union(
        *(labels_of(other) for other in CHAPTERS), labels_of(ROOT / "notation.md")
    )
    assert linked <= everywhere, f"{path.name} links to missing labels {linked - everywhere}"
    earlier = set().union(*(labels_of(other) for other in CHAPTERS if other.name < path.name))
    if earlier:
        assert linked & earlier, f"{path.name}: the prerequisites link no earlier chapter"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda path: path.name)
def test_learning_objectives_are_checkable(path: Path):
    objectives = opening_boxes(path)[0].get("Learning objectives", "")
    assert "After this chapter you will be able to:" in objectives, path.name
    verbs = OBJECTIVE.findall(objectives)
    assert 3 <= len(verbs) <= 6, f"{path.name}: {len(verbs)} objectives, expected 3 to 6"
    vague = [verb for verb in verbs if verb.lower() in VAGUE or not verb[0].isupper()]
    assert not vague, f"{path.name}: objectives must open with a checkable verb, not {vague}"


def test_the_checks_reject_a_chapter_without_objectives(tmp_path: Path):
    chapter = tmp_path / "99_example.md"
    chapter.write_text(
        "(ch-example)=\n# Example\n\n```{admonition} Prerequisites\n:class: note\n\n"
        "- **From this book:** nothing.\n- **Mathematics:** sums.\n```\n\nText.\n",
        encoding="utf-8",
    )
    boxes, order = opening_boxes(chapter)
    assert order == ["Prerequisites"]
    assert "Learning objectives" not in boxes
