"""Where the book's sources are, shared by the book and chapter tests."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
#: A listing: ```{listing} rlfound.module.function``` of a library function, or
#: ```{listing} solutions.file.function``` of a reference solution (_ext/listing.py).
LIBRARY_LISTING = re.compile(r"```\{listing\}\s+(?P<object>\S+)\n(?P<options>(?::[^\n]*\n)*)```")
#: How the object path of a reference solution's listing starts (the book's ``listing_roots``).
SOLUTION_PREFIX = "solutions."


def toc_documents() -> list[str]:
    """Every document named in ``_toc.yml``, root first, as paths without suffix."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    documents = [toc["root"]]
    for part in toc.get("parts", []):
        documents.extend(entry["file"] for entry in part.get("chapters", []))
    return documents


def notebook_documents() -> list[Path]:
    """The toc's MyST notebooks: Markdown files with a jupytext kernelspec header."""
    found = []
    for document in toc_documents():
        path = ROOT / f"{document}.md"
        head = path.read_text(encoding="utf-8").split("\n---", 1)[0]
        if path.read_text(encoding="utf-8").startswith("---") and "kernelspec:" in head:
            found.append(path)
    return found


def library_listings(path: Path) -> list[str]:
    """The object paths of the ``{listing}`` directives of a document that show the library
    (every one but those of reference solutions), in order."""
    return [
        match["object"]
        for match in LIBRARY_LISTING.finditer(path.read_text("utf-8"))
        if not match["object"].startswith(SOLUTION_PREFIX)
    ]


def solution_listings(path: Path) -> list[tuple[str, dict[str, str]]]:
    """The ``{listing} solutions.file.function`` directives of a document, in order: the
    object path and the options (a flag's value is the empty string)."""
    return [
        (
            match["object"],
            dict(
                (name, value.strip())
                for name, value in re.findall(r"^:([\w-]+):(.*)$", match["options"], re.M)
            ),
        )
        for match in LIBRARY_LISTING.finditer(path.read_text("utf-8"))
        if match["object"].startswith(SOLUTION_PREFIX)
    ]
