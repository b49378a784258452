"""One symbol, one meaning: the symbols notation.md reserves are not reused for something else.

notation.md gives each of its symbols one meaning and says that a letter outside its tables is
local to the section that defines it. A program cannot read what a symbol means, but it can
recognize the ways the book has reused a reserved symbol before (issue 24): an inverse
temperature written β, a probability mass written ε, a dual function written g, a severity or an
iteration count written K, a Bernoulli parameter written q, a task count written Q, a token count
written M, the options' matrix written Ω. Each such form is a pattern below, searched in the
mathematics of every chapter and solution (inline and display math, and the TeX of figure labels
in code cells), and each pattern is first shown to match the old text it was written for, so
none of them can silently stop matching anything.
"""

from __future__ import annotations

import re

import pytest

from tests._book import ROOT

PAGES = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md")) + sorted(
    (ROOT / "solutions").glob("[0-9][0-9]_*.md")
)
NOTATION = ROOT / "notation.md"

# Inline or display math in prose; TeX inside a Python string of a code cell (figure labels).
MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+(?:\n[^$\n]+)*?\$", re.S)

# (reserved symbol, its meaning in notation.md, a pattern of another meaning, the old text).
MISUSES = [
    ("β", "KL coefficient", r"\\beta\s*=\s*1\s*/", r"$\beta = 1/\zeta$"),
    ("β", "KL coefficient", r"\\mathrm\{d\}\s*\\beta", r"$\mathrm{d}\mathcal{H}/\mathrm{d}\beta$"),
    ("ε", "clip range", r"\\epsilon", r"$(1 - \epsilon, \epsilon/(K-1))$"),
    ("ε", "clip range", r"\\varepsilon\s*/\s*\(", r"$\varepsilon/(K-1)$"),
    ("ε", "clip range", r"\\varepsilon\s*\\to\s*0", r"$\varepsilon \to 0$"),
    ("g", "the parser", r"(?<![A-Za-z\\])g'?\s*\(\s*(?:\\nu|J)\b", r"$g(\nu^*) \ge J_R^*$"),
    (
        "g",
        "the parser",
        r"(?<![A-Za-z\\{_])g_(?:k\b|\{k|\{\\text|\{\\max|[rgs]\b)",
        r"$g_k = c_k - J$",
    ),
    ("g", "the parser", r"\[\\ell_j\s*=\s*g\]", r"$\bar x_g = \sum_j m_j [\ell_j = g] x_j$"),
    ("K", "number of actions", r"\\sum_\{k\s*=\s*1\}\^\{?K\b", r"$\sum_{k=1}^{K} J_R(\theta_k)$"),
    ("K", "number of actions", r"\\frac\{1\}\{K\}", r"$\frac{1}{K} \sum_k a_k/n_k$"),
    ("K", "number of actions", r"\bk\s*<\s*K\b", r"$\sum_{k < K} \mathbf{M}^k$"),
    ("K", "number of actions", r"0\.05\s*K\b", r"$1 + 0.05K$"),
    ("q", "action value", r"(?<![A-Za-z\\_{])q\s*=\s*0?\.\d", r"$q = 0.3$"),
    ("q", "action value", r"\(1\s*-\s*q\s*,\s*q\)", r"$\pi_{\mathrm{ref}} = (1 - q, q)$"),
    ("q", "action value", r"(?<![A-Za-z\\])q\s*\\gamma\s*/", r"$q\gamma / (1 - (1 - q)\gamma)$"),
    (
        "q, Q",
        "action values",
        r"N_q\b|\\frac\{1\}\{Q\}|\\tau \\in q",
        r"$\frac{1}{Q} \sum_q \frac{1}{N_q}$",
    ),
    (
        "N_tok",
        "number of tokens",
        r"\\frac\{1\}\{M\}|(?<![A-Za-z\\_^])M\s*=\s*\\sum",
        r"$M = \sum_{ij} m_{ij}$",
    ),
    (
        "Ω",
        "set of options",
        r"\\boldsymbol\{?\\Omega\}?",
        r"$\boldsymbol{\Omega} = \operatorname{diag}$",
    ),
    ("ω", "an option's stopping probability", r"e\^\{\\pm i \\omega\}", r"$e^{\pm i \omega}$"),
]
# Prose (outside math) that gave a reserved symbol another meaning.
PROSE_MISUSES = [
    ("K", "number of actions", r"severity \$K\$", "With severity $K$, force-pushing"),
    (
        "K",
        "number of actions",
        r"over \$K\$\s+micro-batches",
        "accumulates gradients over $K$ micro-batches",
    ),
]


def math_of(text: str) -> list[str]:
    return MATH.findall(text)


@pytest.mark.parametrize(("symbol", "meaning", "pattern", "old"), MISUSES)
def test_each_pattern_catches_the_old_text(symbol, meaning, pattern, old):
    assert any(re.search(pattern, span) for span in math_of(old)), (symbol, pattern)


@pytest.mark.parametrize(("symbol", "meaning", "pattern", "old"), PROSE_MISUSES)
def test_each_prose_pattern_catches_the_old_text(symbol, meaning, pattern, old):
    assert re.search(pattern, old), (symbol, pattern)


def test_the_patterns_leave_the_reserved_meanings_alone():
    allowed = [
        r"$\beta = 0.1$", r"$\varepsilon_{\mathrm{low}} = 0.2$", r"$1 - \varepsilon$",
        r"$\mathcal{H}(g(X))$", r"$g(x)$", r"$K$ actions", r"$\upsilon/(K-1)$",
        r"$q(a) - \nu c(a)$", r"$q_\pi(s, a)$", r"$\mathcal{D}(\nu)$", r"$\Omega,\ \omega_o$",
        r"$\frac{1}{N_{\mathrm{tok}}}$", r"$\lVert \mathbf{g} \rVert_{\max}$", r"$\mathbf{g}_k$",
    ]  # fmt: skip
    for text in allowed:
        for symbol, _, pattern, _ in MISUSES:
            assert not any(re.search(pattern, span) for span in math_of(text)), (text, symbol)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_reserved_symbol_takes_another_meaning(page):
    text = page.read_text(encoding="utf-8")
    found = []
    for span in math_of(text):
        for symbol, meaning, pattern, _ in MISUSES:
            if re.search(pattern, span):
                found.append(f"{symbol} ({meaning} in notation.md) reused in {span[:80]!r}")
    for symbol, meaning, pattern, _ in PROSE_MISUSES:
        for match in re.finditer(pattern, text):
            found.append(f"{symbol} ({meaning} in notation.md) reused in {match.group(0)!r}")
    assert not found, "\n".join(found)


def test_notation_lists_the_symbols_the_renames_use():
    text = NOTATION.read_text(encoding="utf-8")
    rows = {
        r"$\mathcal{D}(\nu)$": "the dual function",
        r"$N_{\mathrm{tok}}$": "valid tokens of a batch",
        r"$R_o,\ \mathbf{M}_o$": "discounted transition model",
        r"$\mathbf{P}_o,\ \mathbf{W}_o$": r"the transition matrix of the option's policy",
    }
    for symbol, meaning in rows.items():
        line = next((line for line in text.splitlines() if line.startswith(f"| {symbol} ")), "")
        assert meaning in line, (symbol, line)


def test_explained_variance_has_one_definition():
    # notation.md, eq-diag-explained-variance and every page that writes EV(b) = ... agree.
    definition = re.compile(
        r"\\mathrm\{EV\}(?:\(b\))?\s*=\s*1\s*-\s*(\\mathbb\{E\}|\\operatorname\{Var\}|\\mathrm\{Var\}|\\frac)"
    )
    for page in [*PAGES, NOTATION]:
        for match in definition.finditer(page.read_text(encoding="utf-8")):
            assert match.group(1) != r"\mathbb{E}", (page.name, match.group(0))
