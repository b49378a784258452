"""The book and the library use American spelling, as the literature they cite does.

A list of British forms that have crept in before (normalise, behaviour, centred, ...) is
searched for in the prose and the code; the bibliography is exempt, since a title is cited as
it was published.
"""

from __future__ import annotations

import re

import pytest

from tests._book import ROOT

BRITISH = re.compile(
    r"\b(?:\w*(?:behaviour|centred|centre|colour|favour|honour|labour|neighbour|flavour|rigour)s?"
    r"|(?:re)?(?:normalis|generalis|standardis|optimis|minimis|maximis|summaris|recognis|realis"
    r"|parametris|initialis|regularis|penalis|utilis|characteris|vectoris|tokenis|serialis"
    r"|capitalis|factoris|organis|randomis|stabilis|visualis|memoris|categoris|emphasis)"
    r"(?:e|es|ed|ing|ation|ations|er|ers)"
    r"|analys(?:e|es|ed|ing)|modelling|modelled|labelled|travelled|cancelled|signalling"
    r"|judgement|judgements|defence|artefacts?|towards|afterwards|amongst|whilst|learnt)\b",
    re.IGNORECASE,
)
FILES = sorted(
    [
        *ROOT.glob("*.md"),
        *ROOT.glob("chapters/*.md"),
        *ROOT.glob("appendix/*.md"),
        *ROOT.glob("appendix/*.py"),
        *ROOT.glob("appendix/*.yml"),
        *ROOT.glob("solutions/*.md"),
        *ROOT.glob("solutions/*.py"),
        *ROOT.glob("rlfound/**/*.py"),
        *ROOT.glob("tests/**/*.py"),
        *ROOT.glob("_ext/*.py"),
        *ROOT.glob("benchmarks/*.py"),
    ]
)


@pytest.mark.parametrize("path", FILES, ids=lambda path: str(path.relative_to(ROOT)))
def test_american_spelling(path):
    if path == ROOT / "tests" / "book" / "test_spelling.py":
        return
    found = [
        f"line {number}: {match.group(0)}"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        for match in BRITISH.finditer(line)
    ]
    assert not found, f"{path.name}: " + ", ".join(found)
