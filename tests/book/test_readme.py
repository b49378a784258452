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


def run_blocks() -> list[dict]:
    """Execute every Python block of the README, each in a fresh namespace."""
    namespaces = []
    for block in python_blocks():
        namespace: dict = {}
        exec(compile(block, "README.md", "exec"), namespace)
        namespaces.append(namespace)
    return namespaces


def test_readme_has_python_examples():
    assert len(python_blocks()) >= 2


def test_the_library_example_returns_what_its_comments_say():
    (namespace,) = [ns for ns in run_blocks() if "next_values" in ns]
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


def test_the_contract_example_prints_what_its_comments_say(capsys):
    (namespace,) = [ns for ns in run_blocks() if "batch" in ns]
    assert namespace["batch"]["action_mask"].astype(int).tolist() == [[0, 0, 1, 1, 0, 0, 1, 0, 0]]
    assert namespace["check"].max_error < 1e-12
    printed = capsys.readouterr().out
    assert "[[0 0 1 1 0 0 1 0 0]]" in printed
    assert "invariants hold" in printed
