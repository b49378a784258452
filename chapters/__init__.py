"""The book's chapters, installed as ``rlfound.chapters`` for ``rlfound classpack``.

``pyproject.toml`` maps this folder into the ``rlfound`` package, with the chapters (MyST
Markdown notebooks) and ``data/`` as package data, so that a teacher who installed the wheel
can hand the chapters out as notebooks. Nothing imports this package's contents as modules.
"""
