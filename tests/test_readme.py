"""The README's Python examples run and print what their comments promise."""

from __future__ import annotations

import re

import numpy as np

from tests._book import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)


def test_readme_starts_with_the_two_commands():
    first_screen = "\n".join(README.splitlines()[:40])
    assert "make book" in first_screen
    assert "make test" in first_screen


def test_readme_python_examples_run():
    blocks = python_blocks()
    assert blocks
    for block in blocks:
        namespace: dict = {}
        exec(compile(block, "README.md", "exec"), namespace)
    # The examples' comments state what the calls return.
    np.testing.assert_allclose(namespace["mdp"].tiny_chain(0.9), [0.9, 1.0, 0.0])
    packed = namespace["returns"].packed_discounted_returns(
        namespace["rewards"],
        namespace["next_values"],
        namespace["terminated"],
        namespace["truncated"],
        gamma=0.5,
    )
    np.testing.assert_allclose(packed, [1.5, 1.0, 4.0, 6.0])
    score = namespace["distributions"].categorical_score([0.0, 0.0], 1)
    np.testing.assert_allclose(score, [-0.5, 0.5])
