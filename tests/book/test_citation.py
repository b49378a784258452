"""One version everywhere: pyproject.toml, CITATION.cff, the changelog, the book's footer and
its "How to cite" box; and the release step that moves them together (a dry run and the edits
on a copy, never a real tag)."""

from __future__ import annotations

import datetime
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from pybtex.database import parse_string

from tests._book import ROOT, toc_documents
from tests._solutions import load_module

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, published separately before Python 3.11
    import tomli as tomllib

book_version = load_module(ROOT / "_ext" / "book_version.py", "_book_version")
release = load_module(ROOT / "packaging" / "release.py", "_release")

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
CFF = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
CHANGELOG = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
#: "## [0.1.0] - 2026-11-30" headings of the changelog, in order.
VERSION_HEADING = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", re.MULTILINE)


def test_citation_cff_is_valid_cff_1_2_and_the_projects():
    assert CFF["cff-version"] == "1.2.0"
    assert {"cff-version", "message", "title", "authors"} <= set(CFF)
    assert [author["name"] for author in CFF["authors"]] == [a["name"] for a in PROJECT["authors"]]
    assert CFF["title"] in PROJECT["description"]
    assert CFF["license"] == PROJECT["license"]
    assert CFF["version"] == PROJECT["version"]
    datetime.date.fromisoformat(CFF["date-released"])
    # The repository is the publisher's to fill in: CFF's repository-code key, documented.
    assert "repository-code" not in CFF
    assert "repository-code:" in (ROOT / "CITATION.cff").read_text(encoding="utf-8")


def test_the_changelog_has_an_entry_for_the_version_of_pyproject():
    versions = VERSION_HEADING.findall(CHANGELOG)
    assert (PROJECT["version"], CFF["date-released"]) in versions
    # Newest first, each once, Unreleased on top.
    numbers = [tuple(map(int, v.split("."))) for v, _ in versions]
    assert numbers == sorted(set(numbers), reverse=True)
    assert CHANGELOG.index("## [Unreleased]") < CHANGELOG.index(f"## [{versions[0][0]}]")


def test_the_errata_page_is_the_changelog():
    assert "errata" in toc_documents()
    page = (ROOT / "errata.md").read_text(encoding="utf-8")
    assert "```{include} CHANGELOG.md\n:start-after: <!-- versions -->\n```" in page
    assert CHANGELOG.count("<!-- versions -->") == 1


def test_the_footer_and_the_citation_box_show_pyprojects_version():
    footer = book_version.footer(date=datetime.date(2027, 3, 4), errata="errata.html")
    assert f"Version {PROJECT['version']}, built 2027-03-04." in footer
    (entry,) = parse_string(book_version.bibtex(), "bibtex").entries.values()
    assert entry.fields["title"] == CFF["title"]
    assert entry.fields["version"] == PROJECT["version"]
    assert entry.fields["year"] == CFF["date-released"][:4]
    assert [str(person) for person in entry.persons["author"]] == ["{The rlfound authors}"]


def check_footer(site: Path) -> None:
    """Every page of a built book shows pyproject's version and links to the errata page."""
    for page in toc_documents():
        html = (site / f"{page}.html").read_text(encoding="utf-8")
        assert f"Version {PROJECT['version']}, built " in html, page
        depth = "../" * page.count("/")
        assert f'<a href="{depth}errata.html">Changes and errata</a>' in html, page


@pytest.fixture
def copy(tmp_path) -> Path:
    for name in release.FILES:
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def test_a_release_moves_unreleased_to_the_version_and_bumps_everything(copy):
    major, minor, _ = map(int, PROJECT["version"].split("."))
    new = f"{major}.{minor + 1}.0"
    texts = release.bumped(copy, new, datetime.date(2027, 1, 2))
    assert tomllib.loads(texts["pyproject.toml"])["project"]["version"] == new
    cff = yaml.safe_load(texts["CITATION.cff"])
    assert (cff["version"], cff["date-released"]) == (new, "2027-01-02")
    changelog = texts["CHANGELOG.md"]
    unreleased = CHANGELOG.split("## [Unreleased]")[1].split("\n## [")[0].strip()
    assert f"## [Unreleased]\n\n## [{new}] - 2027-01-02\n\n{unreleased}\n" in changelog
    assert VERSION_HEADING.findall(changelog)[1:] == VERSION_HEADING.findall(CHANGELOG)
    # Only the lines that carry the version change.
    for name in ("pyproject.toml", "CITATION.cff"):
        old, bumped = (copy / name).read_text("utf-8"), texts[name]
        changed = [a for a, b in zip(old.splitlines(), bumped.splitlines(), strict=True) if a != b]
        assert len(changed) == (1 if name == "pyproject.toml" else 2), name
    # Released again, the now empty Unreleased section stops it.
    for name, text in texts.items():
        (copy / name).write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="nothing under 'Unreleased' to release"):
        release.bumped(copy, f"{major}.{minor + 2}.0", datetime.date(2027, 1, 3))


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("1.2", "VERSION must be MAJOR.MINOR.PATCH such as 1.2.0, got '1.2'"),
        ("v1.0.0", "VERSION must be MAJOR.MINOR.PATCH such as 1.2.0, got 'v1.0.0'"),
        ("0.0.1", "VERSION must be above the current version"),
    ],
)
def test_a_bad_version_is_refused(copy, version, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        release.bumped(copy, version, datetime.date(2027, 1, 2))


def test_the_dry_run_changes_nothing_and_names_every_step(copy, capsys):
    before = {name: (copy / name).read_bytes() for name in release.FILES}
    assert release.main(["--version", "9.0.0", "--root", str(copy), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert {name: (copy / name).read_bytes() for name in release.FILES} == before
    assert '+version = "9.0.0"' in printed and "+## [9.0.0] - " in printed
    assert "would run: make book pdf wheels" in printed
    assert "would run: git tag --annotate v9.0.0" in printed


def test_the_release_without_a_version_exits_2_naming_it(capsys):
    with pytest.raises(SystemExit) as stopped:
        release.main(["--version", "", "--dry-run"])
    assert stopped.value.code == 2
    assert "argument --version: VERSION must be MAJOR.MINOR.PATCH" in capsys.readouterr().err
