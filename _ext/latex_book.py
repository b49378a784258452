"""The book as LaTeX (``make pdf``): what the PDF needs beyond Jupyter Book's defaults.

- Sphinx's own book class. sphinx-jupyterbook-latex (which turns the book's parts into
  ``\\part``, selects XeLaTeX and sets off code cells) imposes its class ``jupyterBook``,
  which loads TikZ, pgfplots and bbm that this book never uses; bbm is only in Debian's
  texlive-fonts-extra (1.4 GB installed). The two environments of that class that its
  writer emits for code cells are defined in the preamble instead.
- Characters that the FreeMono font (code) lacks, found in the library's docstrings, are set
  from the math font; XeLaTeX would otherwise drop them with a "Missing character" line.
- Inline code breaks after an underscore: the test ids of the ``{checked}`` notes and the
  function names in tables are single words of 60 to 100 characters, which ran past the
  margin, where the page cut them (Sphinx breaks inline code only after ``. , ; ? ! /``).
- Tables fit the column. Their cells are set ragged right in the small size; inline code
  also breaks after ``= ( [`` and a hyphen, and a cell's text inside a path or a dotted name
  (the file and function names of the conventions atlas) and a list of symbols in one
  formula after its commas; and tabulary no longer squeezes a column of short cells beside a
  long paragraph below its longest word. A table that may be taller than a page (the
  atlas's) is declared a ``longtable`` where it is written, so that it continues on the next
  page.
- The book's equation on an API page (``_ext/api_reference.py``) carries its number, the
  chapter's, linked to it, as a tag at the right, as in the chapter, not as a paragraph.
- Cross-references to an exercise from another page: sphinx-exercise labels an exercise
  ``exercise:LABEL`` in LaTeX, but a ``{ref}`` from another page points at ``PAGE:LABEL``
  (as for any other target); each exercise gets that label too.

The HTML build is unaffected: every change applies to the LaTeX builder only.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.builders.latex.nodes import math_reference
from sphinx.transforms.post_transforms import SphinxPostTransform

PREAMBLE = r"""
% Code cells and their outputs, as sphinx-jupyterbook-latex's own class sets them off.
\usepackage{changepage}
\newenvironment{sphinxVerbatimInput}{\begin{adjustwidth}{5pt}{}}{\end{adjustwidth}}
\newenvironment{sphinxVerbatimOutput}{\begin{adjustwidth}{20pt}{}}{\end{adjustwidth}}
% Symbols of the docstrings that FreeMono has no glyph for.
\usepackage{newunicodechar}
\newunicodechar{⟨}{\ensuremath{\langle}}
\newunicodechar{⟩}{\ensuremath{\rangle}}
\newunicodechar{⊗}{\ensuremath{\otimes}}
\newunicodechar{𝒢}{\ensuremath{\mathcal{G}}}
% A line may break after an underscore of text or inline code (\_ is how Sphinx writes one).
\DeclareRobustCommand{\_}{\ifmmode\text{\textunderscore}\else\textunderscore\allowbreak\fi}
% Inline code breaks also after = ( [ and a hyphen: a call with keyword arguments and a
% string such as "seq-mean-token-mean" wrap in a narrow table cell instead of running on.
\renewcommand*\sphinxbreaksafteractivelist{\do\.\do\,\do\;\do\?\do\!\do\/\do\=\do\(\do\[}
\protected\def\sphinxhyphenininlineliteral#1{-\penalty\exhyphenpenalty}
% Tables: cells ragged right (a narrow justified cell is mostly gaps), in the small size.
% Sphinx's tabulary column T is tabulary's justified J and its column of given widths \X a
% justified p; redefined, array would say each is "already defined".
\makeatletter
\let\rlfound@PackageWarning\PackageWarning
\let\PackageWarning\@gobbletwo
\newcolumntype{T}{L}
\newcolumntype{\X}[2]{>{\raggedright\arraybackslash}p{\dimexpr
  (\linewidth-\spx@arrayrulewidth)*#1/#2-\tw@\tabcolsep-\spx@arrayrulewidth\relax}}
\newcolumntype{\Y}[1]{>{\raggedright\arraybackslash}p{\dimexpr
  #1\dimexpr\linewidth-\spx@arrayrulewidth\relax-\tw@\tabcolsep-\spx@arrayrulewidth\relax}}
\let\PackageWarning\rlfound@PackageWarning
% tabulary shares the width among the columns in proportion to their text set on one line
% (Sphinx counts a long paragraph in full, so that a table with one fills the line) and
% gives a column it squeezes at least \tymin. Sphinx's three digits left a column of short
% cells beside a paragraph ("float64", "GRPOTrainer") narrower than its longest word.
\g@addto@macro\sphinxattablestart{\small\setlength{\tymin}{7em}}
\g@addto@macro\sphinxatlongtablestart{\small}
\makeatother
"""


def _use_sphinx_book_class(app, config) -> None:
    config["latex_theme"] = "manual"
    elements = dict(config["latex_elements"])
    elements["preamble"] = elements.get("preamble", "") + PREAMBLE
    config["latex_elements"] = elements


def _label_by_page(visit):
    def visit_with_page_label(self, node) -> None:
        visit(self, node)
        label = node.attributes.get("label")
        docname = self.builder.env.sphinx_exercise_registry.get(label, {}).get("docname")
        if not (label and docname):
            return
        # The exercise's number, so that a {numref} from another page reads "Exercise 13.3".
        numbers = self.builder.env.toc_fignumbers.get(docname, {}).get("exercise", {})
        number = ".".join(map(str, numbers.get((node.get("ids") or [None])[0], ())))
        current_label = r"\expandafter\def\csname @currentlabel\endcsname{" + number + "}"
        self.body.append(
            "{" + current_label + r"\label{\detokenize{" + f"{docname}:{label}" + "}}}"
        )

    return visit_with_page_label


def _label_exercises_by_page(app) -> None:
    if app.builder.format != "latex":
        return
    from sphinx_exercise import nodes

    for node, visit, depart in (
        (nodes.exercise_node, nodes.visit_exercise_node, nodes.depart_exercise_node),
        (
            nodes.exercise_enumerable_node,
            nodes.visit_exercise_enumerable_node,
            nodes.depart_exercise_enumerable_node,
        ),
    ):
        app.add_node(node, override=True, latex=(_label_by_page(visit), depart))


class TagBookEquations(SphinxPostTransform):
    """An API page's ``book-equation`` container (its equation, then a reference to the
    chapter's) as one display tagged with the chapter's number."""

    # After Sphinx's MathReferenceTransform (5), which names the equation's document.
    default_priority = 6
    formats = ("latex",)

    def run(self, **kwargs) -> None:
        for container in list(self.document.findall(nodes.container)):
            if "book-equation" not in container["classes"]:
                continue
            equation = next(container.findall(nodes.math_block), None)
            number = next(container.findall(math_reference), None)
            if equation is None or number is None:
                continue
            label = f"equation:{number['docname']}:{number['target']}"
            tag = self.config.math_eqref_format.format(number=rf"\ref{{{label}}}")
            latex = (
                f"\\begin{{equation*}}\n\\begin{{split}}{equation.astext()}\\end{{split}}\n"
                f"\\tag*{{{tag}}}\n\\end{{equation*}}"
            )
            container.replace_self(nodes.math_block(latex, latex, nowrap=True))


#: Where a word of a table cell's text may break: after a slash, a dot or an equals sign
#: inside a word, as in a path, a dotted name or a setting (``norm_adv=True``), where inline
#: code breaks too; not inside a number (0.99, gamma=0.9) or an abbreviation (e.g.).
WORD_BREAK = re.compile(r"(?<=\w[/.=])(?=[^\W\d]\w)")
#: The separator of a list of symbols in one formula, and the same with a break after the
#: comma (TeX breaks inline math at a penalty outside braces, and drops the space there).
LIST_SEPARATOR = r",\ "
LIST_SEPARATOR_BREAK = r",\allowbreak\ "


class BreakWordsInTables(SphinxPostTransform):
    """Text in a table cell may break inside a path or a dotted name, and a formula after the
    commas of a list (``v_\\pi(s),\\ q_\\pi(s, a)``): the file and function names of the
    conventions atlas's narrow "where" column are single words of up to 40 characters, and
    the notation page lists symbols in one formula, wider than the column."""

    # After the references are resolved (10): their text breaks too.
    default_priority = 800
    formats = ("latex",)

    def run(self, **kwargs) -> None:
        for entry in self.document.findall(nodes.entry):
            for math in entry.findall(nodes.math):
                latex = math.astext()
                if LIST_SEPARATOR in latex:
                    broken = latex.replace(LIST_SEPARATOR, LIST_SEPARATOR_BREAK)
                    math.children = [nodes.Text(broken)]
            for text in list(entry.findall(nodes.Text)):
                pieces = WORD_BREAK.split(text.astext())
                if len(pieces) == 1 or _in_code_or_math(text):
                    continue
                parent = text.parent
                # By identity: Text nodes are strings, and equal ones compare equal.
                index = next(i for i, child in enumerate(parent.children) if child is text)
                replacement: list[nodes.Node] = []
                for piece in pieces:
                    if replacement:
                        replacement.append(
                            nodes.raw("", r"\penalty\exhyphenpenalty{}", format="latex")
                        )
                    replacement.append(nodes.Text(piece))
                parent[index : index + 1] = replacement


def _in_code_or_math(node: nodes.Node) -> bool:
    """Inline code breaks at the preamble's list of characters; math is TeX's to break."""
    while node is not None:
        if isinstance(node, (nodes.literal, nodes.math, nodes.FixedTextElement)):
            return True
        node = node.parent
    return False


def setup(app):
    # After sphinx-jupyterbook-latex's own config-inited handler (default priority 500).
    app.connect("config-inited", _use_sphinx_book_class, priority=900)
    app.connect("builder-inited", _label_exercises_by_page)
    app.add_post_transform(TagBookEquations)
    app.add_post_transform(BreakWordsInTables)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
