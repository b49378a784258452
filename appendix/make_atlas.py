"""Render the conventions atlas (appendix/atlas.yml) into appendix/conventions_atlas.md.

The page keeps its prose by hand; between the two marker comments it holds one section per
trainer, generated here from the rows, so the page and tests/book/test_atlas.py read the same
data. Run ``python appendix/make_atlas.py`` after editing the rows; the test fails while the
page is out of date.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
DATA = HERE / "atlas.yml"
PAGE = HERE / "conventions_atlas.md"
BEGIN = "% atlas: begin generated rows (python appendix/make_atlas.py)"
END = "% atlas: end generated rows"
#: The columns' widths in the PDF, in percent of the line (LaTeX only; the web page keeps
#: ``:widths:``): the "where" column holds a path and a function name, which ran past its
#: 14 percent. Each table is also a longtable in the PDF, continued over as many pages as it
#: takes; as a tabular, one taller than a page lost its last rows at the bottom edge.
LATEX_COLUMNS = r"\X{19}{100}\X{27}{100}\X{32}{100}\X{22}{100}"


def load(path: Path = DATA) -> dict:
    """The trainers and rows of the atlas."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _code(text: str) -> str:
    """Inline code for any text: a fence of more backticks than the text holds."""
    longest = 0
    run = 0
    for character in text:
        run = run + 1 if character == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def _cell(lines: list[str], text: str, first: bool = False) -> None:
    lines.append(("* - " if first else "  - ") + text)


def render(atlas: dict) -> str:
    """The generated part of the page: one list table per trainer, in the data's order."""
    lines: list[str] = []
    for key, trainer in atlas["trainers"].items():
        rows = [row for row in atlas["rows"] if row["trainer"] == key]
        lines += [
            f"## {trainer['name']}",
            "",
            f"Read in `{trainer['repo']}` at commit `{trainer['commit']}`.",
            "",
            f"```{{tabularcolumns}} {LATEX_COLUMNS}",
            "```",
            "",
            "```{list-table}",
            ":header-rows: 1",
            ":widths: 22 34 30 14",
            ":class: longtable",
            "",
            "* - setting",
            "  - what the trainer computes",
            "  - the rlfound call",
            "  - where",
        ]
        for row in rows:
            _cell(lines, row["setting"], first=True)
            computes = row["computes"]
            if row.get("note"):
                computes += f". {row['note']}"
            _cell(lines, computes)
            if row["call"]:
                _cell(lines, _code(row["call"]))
            else:
                _cell(lines, f"not expressible: {row['why']}")
            _cell(lines, f"`{row['path']}`, {row['symbol']}")
        lines += ["```", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def updated_page(text: str, atlas: dict) -> str:
    """``text`` with the part between the markers replaced by :func:`render`."""
    head, rest = text.split(BEGIN + "\n", 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n\n{render(atlas)}\n{END}{tail}"


def main() -> int:
    PAGE.write_text(updated_page(PAGE.read_text(encoding="utf-8"), load()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
