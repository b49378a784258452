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
- The book's equation on an API page (``_ext/api_reference.py``) carries its number, the
  chapter's, linked to it, as a tag at the right, as in the chapter, not as a paragraph.
- Cross-references to an exercise from another page: sphinx-exercise labels an exercise
  ``exercise:LABEL`` in LaTeX, but a ``{ref}`` from another page points at ``PAGE:LABEL``
  (as for any other target); each exercise gets that label too.

The HTML build is unaffected: every change applies to the LaTeX builder only.
"""

from __future__ import annotations

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


def setup(app):
    # After sphinx-jupyterbook-latex's own config-inited handler (default priority 500).
    app.connect("config-inited", _use_sphinx_book_class, priority=900)
    app.connect("builder-inited", _label_exercises_by_page)
    app.add_post_transform(TagBookEquations)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
