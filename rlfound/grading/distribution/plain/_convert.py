"""MyST Markdown to the Markdown every Jupyter renders.

The text is parsed into markdown-it tokens (:mod:`._parse`); each MyST construct the parser
finds is replaced where its source is, and everything else stays as it was written:

- a directive (a fence ```` ```{name} ````) becomes plain Markdown: an admonition a
  blockquote with its title in bold, a theorem, definition or exercise its number and title in
  bold followed by its body, a solution "Solution to Exercise 4.1 (...)", a proof "Proof.",
  a ``listing`` the code it shows (:mod:`._listings`); its body is converted the same way;
- a labeled display equation keeps its number as ``\\tag{4.3}``; a ``(label)=`` target goes;
- a role becomes text: ``{eq}`` "(4.3)", ``{numref}`` "Fig. 4.2" or "Exercise 4.1",
  ``{prf:ref}`` "Theorem 1.1", ``{ref}`` the section's title or the link text, each linked to
  the page that holds it; ``{cite:p}`` "(Author, year)" and ``{cite:t}`` "Author (year)";
  ``{checked}`` (which names a test file of the book's repository) is dropped.

A directive or role the converter does not know is an error, never left in the text: a
``literalinclude`` among them, since the book shows code only through ``listing``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rlfound.grading.distribution.plain._citations import Bibliography
from rlfound.grading.distribution.plain._listings import listed
from rlfound.grading.distribution.plain._numbers import KIND_NAMES, BookIndex, Target
from rlfound.grading.distribution.plain._parse import Directive, directive, roles, tokens

__all__ = ["ADMONITIONS", "CROSS_REFERENCES", "THEOREMS", "Context", "convert_markdown"]

ADMONITIONS = {
    "admonition", "attention", "caution", "danger", "error", "hint", "important", "note",
    "seealso", "tip", "warning",
}  # fmt: skip
THEOREMS = {f"prf:{kind}" for kind in KIND_NAMES if kind not in ("figure", "exercise")}
CROSS_REFERENCES = {"eq", "ref", "numref", "prf:ref", "doc"}


@dataclass
class Context:
    """What converting one page needs, and what it collects (the works it cites)."""

    page: str  #: the page's name in the book ("chapters/04_critics_gae_timeouts")
    index: BookIndex
    bibliography: Bibliography
    #: The URL of a target from this page, or None where the reader has no copy of its page.
    link: Callable[[str, Target | None], str | None]
    #: The folders of the top-level names a ``listing`` reads without importing them
    #: (``{"solutions": ...}``: the reference solutions, see :mod:`rlfound._listing`).
    roots: Mapping[str, Path] = field(default_factory=dict)
    cited: list[str] = field(default_factory=list)


def _split_reference(content: str) -> tuple[str | None, str]:
    """``text <label>`` as (text, label); a bare ``label`` as (None, label)."""
    content = " ".join(content.split())
    if content.endswith(">") and " <" in content:
        text, _, label = content[:-1].rpartition(" <")
        return text.strip(), label.strip()
    return None, content


def _linked(text: str, url: str | None) -> str:
    return f"[{text}]({url})" if url else text


def _role(name: str, content: str, context: Context) -> str:
    """The plain text of one role."""
    if name == "checked":
        return ""
    if name == "math":
        return f"${content}$"
    if name in ("cite", "cite:p", "cite:t"):
        keys = [key.strip() for key in content.split(",") if key.strip()]
        context.cited.extend(keys)
        if name == "cite:t":
            return context.bibliography.textual(keys)
        return context.bibliography.parenthetical(keys)
    if name not in CROSS_REFERENCES:
        raise ValueError(f"{context.page}: a {{{name}}} role has no plain Markdown form")
    text, label = _split_reference(content)
    if name == "doc":
        page = _parse_doc(context.page, label)
        title = context.index.titles.get(page)
        if text is None and title is None:
            raise ValueError(f"{context.page}: {{doc}} to {label!r}, a page not in the book")
        return _linked(text or title, context.link(page, None))
    target = context.index.target(label)
    if target is None:
        # A page the reader does not get (a solution in a student's copy): the text alone.
        if text is None:
            raise ValueError(f"{context.page}: {{{name}}} to {label!r}, which is not defined")
        return text
    if name == "ref":
        shown = text or target.title
        if not shown:
            raise ValueError(f"{context.page}: {{ref}} to {label!r} needs link text")
    elif text is not None:
        # Sphinx's numref text: "%s" or "{number}" is the number, "{name}" the title.
        shown = text.replace("%s", target.number).replace("{number}", target.number)
        shown = shown.replace("{name}", target.title)
    else:
        shown = target.numbered
    return _linked(shown, context.link(target.page, target))


def _parse_doc(page: str, label: str) -> str:
    if label.startswith("/"):
        return label.lstrip("/")
    return posixpath.normpath(posixpath.join(posixpath.dirname(page), label))


def _inline(lines: list, token, context: Context) -> None:
    """Replace the roles of an inline token in ``lines`` (the page's lines; a line that the
    replacement empties becomes None)."""
    found = roles(token)
    if not found:
        return
    content = token.content
    for role in reversed(found):
        start, end = role.meta["span"]
        content = content[:start] + _role(role.meta["name"], role.content, context) + content[end:]
    old, new = token.content.split("\n"), content.split("\n")
    first = token.map[0]
    for number, old_line in enumerate(old):
        row = first + number
        source = lines[row]
        at = source.find(old_line)
        if at < 0:
            raise ValueError(f"{context.page}: cannot place the text of line {row + 1}")
        replacement = new[number] if number < len(new) else None
        if replacement is None:
            lines[row] = None
        else:
            lines[row] = source[:at] + replacement + source[at + len(old_line) :]


def _prefixed(prefix: str, text: str) -> list[str]:
    return [(prefix + line).rstrip() if line else prefix.rstrip() for line in text.split("\n")]


def _directive(found: Directive, context: Context) -> str:
    """The plain Markdown of one directive."""
    name = found.name
    if name == "listing":
        return listed(found.argument, found.options, context.roots)
    if name in ("code-block", "code", "sourcecode"):
        return f"```{found.argument}\n{found.body}\n```"
    body = convert_markdown(found.body, context)
    label = str(found.options.get("label", ""))
    if name in ADMONITIONS:
        title = found.argument or name.capitalize()
        quoted = "\n".join(_prefixed("> ", f"**{title}**\n\n{body}"))
        return quoted
    if name == "exercise" or name in THEOREMS:
        target = context.index.target(label) if label else None
        heading = (
            f"**{target.numbered}**" if target else f"**{name.removeprefix('prf:').capitalize()}**"
        )
        title = f" ({found.argument})" if found.argument else ""
        return f"{heading}{title}\n\n{body}"
    if name == "prf:proof":
        return f"**Proof.**\n\n{body}"
    if name == "solution":
        exercise = context.index.target(found.argument)
        if exercise is None:
            raise ValueError(f"{context.page}: a solution of {found.argument!r}, no exercise")
        shown = f"Solution to {exercise.numbered} ({exercise.title})"
        return f"**{_linked(shown, context.link(exercise.page, exercise))}**\n\n{body}"
    raise ValueError(f"{context.page}: a {{{name}}} directive has no plain Markdown form")


def convert_markdown(text: str, context: Context) -> str:
    """A MyST Markdown text as plain Markdown (see the module's description).

    Raises
    ------
    ValueError
        If the text uses a directive or role with no plain form, or cites or refers to
        something the book does not define.
    """
    lines: list = text.split("\n")
    blocks: list[tuple[int, int, str | None]] = []
    for token in tokens(text):
        if token.type == "inline":
            _inline(lines, token, context)
            continue
        if token.map is None:
            continue
        start, end = token.map
        indent = lines[start][: len(lines[start]) - len(lines[start].lstrip(" >"))]
        if token.type == "myst_target":
            blocks.append((start, end, None))
        elif token.type == "math_block_label":
            target = context.index.target(token.info)
            number = f"\n\\tag{{{target.number}}}" if target else ""
            math = f"$$\n{token.content.strip()}{number}\n$$"
            blocks.append((start, end, "\n".join(_prefixed(indent, math))))
        else:
            found = directive(token)
            if found is not None:
                blocks.append(
                    (start, end, "\n".join(_prefixed(indent, _directive(found, context))))
                )
    for start, end, replacement in reversed(blocks):
        lines[start:end] = [] if replacement is None else replacement.split("\n")
    return "\n".join(line for line in lines if line is not None)
