"""MyST Markdown as markdown-it tokens: the parser the book's Markdown is read with.

The plugins are those of mdit-py-plugins that myst-parser itself uses for the book's
``myst_enable_extensions`` (dollar maths with labels, amsmath, colon fences, definition lists)
and for MyST's own syntax (roles, ``(label)=`` targets, front matter). A role token carries
the span of its source text in the inline content (``meta["span"]``), so that a converter can
replace exactly that text and keep the rest of the line as it was written.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.amsmath import amsmath_plugin
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.deflist import deflist_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.front_matter import front_matter_plugin
from mdit_py_plugins.myst_blocks import myst_block_plugin
from mdit_py_plugins.myst_role import myst_role_plugin

# The rule function itself, to wrap it (the package exports only the plugin).
from mdit_py_plugins.myst_role.index import myst_role

__all__ = ["Directive", "directive", "parser", "roles", "tokens", "walk"]


def _positioned_role(state, silent: bool) -> bool:
    """mdit-py-plugins' role rule, recording where in the inline source the role was."""
    start = state.pos
    if not myst_role(state, silent):
        return False
    if not silent:
        state.tokens[-1].meta["span"] = (start, state.pos)
    return True


@lru_cache(maxsize=1)
def parser() -> MarkdownIt:
    """The MyST parser (cached: building it costs more than parsing a page)."""
    md = (
        MarkdownIt("commonmark")
        .enable("table")
        .use(front_matter_plugin)
        .use(myst_block_plugin)
        .use(myst_role_plugin)
        .use(dollarmath_plugin, allow_labels=True, allow_space=True, allow_digits=True)
        .use(amsmath_plugin)
        .use(colon_fence_plugin)
        .use(deflist_plugin)
    )
    md.inline.ruler.at("myst_role", _positioned_role)
    return md


def tokens(text: str) -> list[Token]:
    """The block tokens of a MyST Markdown text."""
    return parser().parse(text)


@dataclass(frozen=True)
class Directive:
    """A MyST directive: ``{name} argument``, its options and its body (MyST Markdown)."""

    name: str
    argument: str
    options: dict
    body: str


def directive(token: Token) -> Directive | None:
    """The directive a fence token writes (```` ```{name} ````), or None for a code block.

    Options are read as MyST reads them: a YAML block between ``---`` lines, or ``:name:
    value`` lines, at the start of the body.

    Examples
    --------
    >>> (fence,) = tokens("```{exercise} A title\\n:label: ex-a\\n\\nThe body.\\n```\\n")
    >>> directive(fence)
    Directive(name='exercise', argument='A title', options={'label': 'ex-a'}, body='The body.')
    """
    if token.type not in ("fence", "colon_fence") or not token.info.startswith("{"):
        return None
    name, closed, argument = token.info[1:].partition("}")
    if not closed:
        return None
    lines = token.content.splitlines()
    options: dict = {}
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1)
        options = yaml.safe_load("\n".join(lines[1:end])) or {}
        lines = lines[end + 1 :]
    else:
        count = 0
        while count < len(lines) and lines[count].lstrip().startswith(":"):
            count += 1
        block = "\n".join(line.strip()[1:].replace(":", ": ", 1) for line in lines[:count])
        options = yaml.safe_load(block) or {} if count else {}
        lines = lines[count:]
    while lines and not lines[0].strip():
        lines = lines[1:]
    return Directive(name.strip(), argument.strip(), options, "\n".join(lines).rstrip())


def walk(text: str):
    """Every block token of a text and, recursively, of its directives' bodies, in the order
    of the page (a directive's token comes before the tokens of its body)."""
    for token in tokens(text):
        yield token
        found = directive(token)
        if found is not None:
            yield from walk(found.body)


def roles(token: Token):
    """The role tokens of an inline token."""
    return [child for child in token.children or [] if child.type == "myst_role"]
