"""Citations as text: "(Author, year)" and "Author (year)", and the works as a list.

The book cites with sphinxcontrib-bibtex in its author-year style; a plain notebook writes
the same labels in parentheses and lists the works it cites at its end. The bibliography is
read with pybtex, the library sphinxcontrib-bibtex itself uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Bibliography"]


def _text(latex: str) -> str:
    """A BibTeX field without its LaTeX markup ("{\\\"u}" is "ü", braces go)."""
    from pybtex.richtext import Text

    return str(Text.from_latex(latex))


@dataclass(frozen=True)
class Bibliography:
    """The works of a ``.bib`` file, by key."""

    entries: dict

    @classmethod
    def read(cls, path: Path) -> Bibliography:
        from pybtex.database import parse_file

        return cls(dict(parse_file(str(path), bib_format="bibtex").entries))

    def _entry(self, key: str):
        if key not in self.entries:
            raise ValueError(f"cite: no work {key!r} in the bibliography")
        return self.entries[key]

    def authors(self, key: str) -> str:
        """The author part of a label: "Sutton", "Sutton and Barto", "Schulman et al."."""
        entry = self._entry(key)
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [_text(" ".join(person.prelast_names + person.last_names)) for person in people]
        if not names:
            return _text(entry.fields.get("organization", key))
        if len(names) == 1:
            return names[0]
        if len(names) == 2:
            return f"{names[0]} and {names[1]}"
        return f"{names[0]} et al."

    def year(self, key: str) -> str:
        return self._entry(key).fields.get("year", "n.d.")

    def parenthetical(self, keys: list[str]) -> str:
        """``{cite:p}``: "(Sutton and Barto, 2018; Sutton, 1988)"."""
        return "(" + "; ".join(f"{self.authors(k)}, {self.year(k)}" for k in keys) + ")"

    def textual(self, keys: list[str]) -> str:
        """``{cite:t}``: "Sutton and Barto (2018)"."""
        return ", ".join(f"{self.authors(k)} ({self.year(k)})" for k in keys)

    def references(self, keys: list[str]) -> list[str]:
        """Each work as a Markdown line, in the order of the labels, in the plain style the
        book's bibliography page uses."""
        from pybtex.style.formatting.plain import Style

        chosen = sorted(set(keys), key=lambda k: (self.authors(k), self.year(k), k))
        style = Style()
        return [
            f"{self.authors(key)}, {self.year(key)}. "
            + " ".join(style.format_entry(key, self._entry(key)).text.render_as("text").split())
            for key in chosen
        ]
