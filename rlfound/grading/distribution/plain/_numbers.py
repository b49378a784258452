"""The numbers and titles the book gives its labeled things, computed from its pages.

Sphinx (with ``numfig``) numbers, per page and in the order of the page, every labeled
display equation, figure, exercise (sphinx-exercise) and theorem-like box (sphinx-proof,
one counter per kind); on a numbered page the number is prefixed with the chapter's
("4.2"), on the appendix's unnumbered pages it is not ("2"). The chapters are the book's
numbered pages, in the order of their file names, which is the table of contents' order
(tests/book/test_notebook_conversion.py checks both against a built book). A ``(label)=`` target
before a heading names that section; ``{ref}`` without text shows the heading.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from rlfound.grading.distribution.plain._parse import directive as directive_of
from rlfound.grading.distribution.plain._parse import walk

__all__ = ["KIND_NAMES", "BookIndex", "Target", "book_index", "page_targets"]

#: How the book writes the number of each kind (Sphinx's and the extensions' defaults).
KIND_NAMES = {
    "figure": "Fig.",
    "exercise": "Exercise",
    "theorem": "Theorem",
    "definition": "Definition",
    "lemma": "Lemma",
    "proposition": "Proposition",
    "corollary": "Corollary",
}


@dataclass(frozen=True)
class Target:
    """Something a cross-reference can point at."""

    page: str  #: the page's name in the book, without suffix ("chapters/04_critics")
    anchor: str  #: the element's id in the built HTML page
    kind: str  #: "equation", "section", "solution" or a key of KIND_NAMES
    number: str = ""  #: "4.2", or "" for what the book does not number
    title: str = ""  #: a section's heading, an exercise's or a theorem's title

    @property
    def numbered(self) -> str:
        """The number as the book writes it: "(4.2)", "Fig. 4.1", "Exercise 4.3"."""
        if self.kind == "equation":
            return f"({self.number})"
        return f"{KIND_NAMES[self.kind]} {self.number}"


def _heading_text(token_list, at: int) -> str:
    return token_list[at + 1].content.strip()


def page_targets(page: str, text: str, chapter: int | None) -> tuple[str, list[Target]]:
    """The title and the targets of one page (MyST Markdown notebook text), in page order."""
    import jupytext

    counters: Counter = Counter()
    found: list[Target] = []
    title = ""

    def number(kind: str) -> str:
        counters[kind] += 1
        return f"{chapter}.{counters[kind]}" if chapter else str(counters[kind])

    for cell in jupytext.reads(text, fmt="md:myst").cells:
        if cell.cell_type == "code":
            figure = cell.metadata.get("mystnb", {}).get("figure", {})
            if "name" in figure:
                found.append(
                    Target(
                        page, figure["name"], "figure", number("figure"), figure.get("caption", "")
                    )
                )
            continue
        if cell.cell_type != "markdown":
            continue
        blocks = list(walk(cell.source))
        for at, token in enumerate(blocks):
            if token.type == "heading_open" and not title:
                title = _heading_text(blocks, at)
            if token.type == "myst_target":
                following = blocks[at + 1] if at + 1 < len(blocks) else None
                heading = following is not None and following.type == "heading_open"
                kind = "section" if heading else "label"
                text_of = _heading_text(blocks, at + 1) if heading else ""
                found.append(Target(page, token.content, kind, "", text_of))
            elif token.type == "math_block_label":
                found.append(Target(page, f"equation-{token.info}", "equation", number("eq")))
            directive = directive_of(token)
            if directive is None:
                continue
            kind = directive.name.removeprefix("prf:")
            label = str(directive.options.get("label", ""))
            if kind in KIND_NAMES and kind != "figure":
                found.append(Target(page, label, kind, number(kind), directive.argument))
            elif kind == "solution" and label:
                found.append(Target(page, label, "solution", "", directive.argument))
    return title, found


@dataclass(frozen=True)
class BookIndex:
    """Every page's title and every label's target, for a set of the book's pages."""

    titles: dict[str, str]
    targets: dict[str, Target]

    def target(self, label: str) -> Target | None:
        return self.targets.get(label)


def book_index(pages: dict[str, Path]) -> BookIndex:
    """The index of ``pages`` (page name to MyST file). Pages under ``chapters/`` are numbered
    in the order of their names.

    Raises
    ------
    ValueError
        If two pages define the same label.
    """
    chapters = sorted(name for name in pages if name.startswith("chapters/"))
    titles: dict[str, str] = {}
    targets: dict[str, Target] = {}
    for name, path in sorted(pages.items()):
        chapter = chapters.index(name) + 1 if name in chapters else None
        title, found = page_targets(name, path.read_text(encoding="utf-8"), chapter)
        titles[name] = title
        for target in found:
            label = (
                target.anchor.removeprefix("equation-")
                if target.kind == "equation"
                else target.anchor
            )
            if not label:
                continue
            if label in targets:
                raise ValueError(f"label {label!r} is defined in {targets[label].page} and {name}")
            targets[label] = target
    return BookIndex(titles, targets)
