"""The conventions atlas (appendix/conventions_atlas.md): every row's call against its formula.

Each row of appendix/atlas.yml names a trainer's setting, the rlfound call that computes the
same numbers, and ``formula``: the trainer's computation restated from its source in plain
NumPy. The call runs with the rlfound modules in scope, the formula with NumPy alone, both on
the small inputs below, and the two must agree. The page's tables must be the rendering of
the same rows, and every row must cite its source.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from rlfound import advantages, groups, kl, ppo, reduction, returns
from tests._book import ROOT
from tests._solutions import load_module

make_atlas = load_module(ROOT / "appendix" / "make_atlas.py", "_make_atlas")
ATLAS = make_atlas.load()
ROWS = ATLAS["rows"]

# The inputs the rows' calls and formulas name. Padding positions hold nonzero numbers on
# purpose: a call that read them would disagree with the trainer's formula.
_MASK = np.array([[1, 1, 1, 1, 0], [1, 1, 1, 0, 0]], dtype=bool)
_VALUES = np.array([[0.4, -0.2, 0.9, 0.3, 5.0], [1.1, 0.6, -0.5, 7.0, 7.0]])
_LAST = np.zeros_like(_MASK)
_LAST[0, 3] = _LAST[1, 2] = True
_AFTER_LAST = np.zeros_like(_MASK)  # TRL's PPO trainer puts the score one position later
_AFTER_LAST[0, 4] = _AFTER_LAST[1, 3] = True
_TOKEN_REWARDS = np.array([[-0.01, 0.02, -0.03, 1.0, 0.0], [0.01, -0.02, 0.5, 0.0, 0.0]])
# A packed stream of six steps: an episode truncated after step 1, one terminated after
# step 3, and one still running at the end of the buffer (bootstrapped from 0.7).
_STREAM_VALUES = np.array([0.5, 0.8, -0.3, 0.2, 1.0, 0.6])
_STREAM_TERMINATED = np.array([False, False, False, True, False, False])
_STREAM_TRUNCATED = np.array([False, True, False, False, False, False])
_STREAM_NEXT = np.array([0.8, 2.5, 0.2, 99.0, 0.6, 0.7])  # V(s_final) = 2.5 at the cut

INPUTS = {
    "group_rewards": np.array([[1.0, 0.0, 0.0, 1.0], [0.5, 0.2, 0.9, 0.1], [2.0, -1.0, 0.5, 3.0]]),
    "token_rewards": _TOKEN_REWARDS,
    # per-token KL rewards, and the scores 0.97 and 0.52 one position after the last token
    "trl_rewards": np.array([[-0.01, 0.02, -0.03, 0.04, 0.97], [0.01, -0.02, 0.03, 0.52, 0.0]]),
    "values": _VALUES,
    "next_values": np.concatenate([_VALUES[:, 1:], np.zeros((2, 1))], axis=1),
    "mask": _MASK,
    "last_token": _LAST,
    "after_last": _AFTER_LAST,
    "mask_p1": _MASK | _AFTER_LAST,
    "no_flags": np.zeros_like(_MASK),
    "loss": np.array(
        [[0.5, -1.0, 2.0, 9.0, 9.0], [0.1, 0.2, 0.3, 0.4, 0.5], [7.0, 7.0, 7.0, 7.0, 7.0]]
    ),
    "loss_mask": np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]], dtype=bool),
    "tool_mask": np.array([[1, 0, 1, 1, 1], [1, 1, 0, 0, 1], [1, 1, 1, 1, 1]], dtype=bool),
    "truncated_rows": np.array([False, True, False]),
    "ratio": np.array([[0.5, 1.1, 1.5, 4.0, 1.0], [0.7, 0.95, 1.3, 5.0, 0.2]]),
    "token_advantages": np.array([[1.0, -0.5, 2.0, -1.0, 0.3], [-2.0, 1.5, -0.7, 0.4, -0.1]]),
    "logprobs": np.log(np.array([[0.5, 0.25, 0.9, 0.6, 0.1], [0.3, 0.7, 0.05, 0.8, 0.4]])),
    "ref_logprobs": np.log(np.array([[0.4, 0.5, 0.6, 0.6, 0.2], [0.2, 0.9, 0.1, 0.5, 0.35]])),
    "old_logprobs": np.log(np.array([[0.45, 0.3, 0.8, 0.5, 0.15], [0.25, 0.6, 0.07, 0.7, 0.4]])),
    "new_values": np.array([[1.0, 0.5, -0.2, 0.3, 2.0], [0.0, 2.0, 1.0, -1.0, 0.4]]),
    "old_values": np.array([[0.8, 0.4, 0.0, 0.3, 1.0], [0.5, 1.5, 1.2, -0.5, 0.4]]),
    "value_targets": np.array([[0.5, 0.5, 0.0, 1.0, 0.0], [1.0, 1.5, 0.0, 0.2, 0.9]]),
    "stream_rewards": np.array([1.0, 0.5, -1.0, 2.0, 0.3, 0.1]),
    "stream_values": _STREAM_VALUES,
    "stream_next_values": _STREAM_NEXT,
    "stream_terminated": _STREAM_TERMINATED,
    "stream_truncated": _STREAM_TRUNCATED,
    "minibatch_advantages": np.array([0.3, -1.2, 2.5, 0.0, 0.7, -0.4, 1.1, 0.9]),
    "rlax_rewards": np.array([1.0, 0.0, 0.5, -1.0, 2.0]),
    "rlax_discounts": np.array([0.9, 0.9, 0.0, 0.9, 0.9]),
    "rlax_values": np.array([0.2, 0.4, -0.1, 0.8, 0.3, 0.6]),
    "chosen": np.array([-3.0, -10.0, -4.5]),
    "rejected": np.array([-4.0, -9.0, -7.5]),
    "ref_chosen": np.array([-3.5, -9.5, -5.0]),
    "ref_rejected": np.array([-3.8, -9.8, -6.0]),
    "chosen_lengths": np.array([3.0, 8.0, 5.0]),
    "rejected_lengths": np.array([4.0, 7.0, 6.0]),
}
MODULES = {
    "advantages": advantages,
    "groups": groups,
    "kl": kl,
    "ppo": ppo,
    "reduction": reduction,
    "returns": returns,
}
FIELDS = {"trainer", "setting", "computes", "call", "path", "symbol"}


def row_id(row: dict) -> str:
    return f"{row['trainer']}:{row['setting']}"


def inputs():
    """Fresh copies: a call that wrote into an input must not change the formula's."""
    return {name: value.copy() for name, value in INPUTS.items()}


EXPRESSIBLE = [row for row in ROWS if row["call"]]


@pytest.mark.parametrize("row", EXPRESSIBLE, ids=row_id)
def test_the_call_computes_the_trainers_formula(row):
    got = eval(row["call"], {"np": np, **MODULES, **inputs()})
    scope = {"np": np, **inputs()}
    exec(row["formula"], scope)  # NumPy only: no rlfound in scope
    expected = np.asarray(scope["expected"], dtype=np.float64)
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == expected.shape, row_id(row)
    if row.get("compare"):
        where = INPUTS[row["compare"]]
        got, expected = got[where], expected[where]
    tolerance = row.get("tolerance", 1e-12)
    np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance, err_msg=row_id(row))


def test_the_inputs_are_not_trivial_for_the_rows_that_use_them():
    """A formula that gives all zeros (or the same number twice) would let a wrong call pass."""
    for row in EXPRESSIBLE:
        scope = {"np": np, **inputs()}
        exec(row["formula"], scope)
        expected = np.asarray(scope["expected"], dtype=np.float64)
        if row.get("compare"):
            expected = expected[INPUTS[row["compare"]]]
        assert np.any(expected != 0.0), row_id(row)
        if expected.size > 1:
            assert np.unique(expected).size > 1, row_id(row)


def test_the_formulas_use_no_rlfound():
    for row in EXPRESSIBLE:
        assert "rlfound" not in row["formula"], row_id(row)
        assert not set(MODULES) & set(re.findall(r"\b(\w+)\.", row["formula"])), row_id(row)


def test_every_row_cites_its_source_and_says_what_it_computes():
    trainers = ATLAS["trainers"]
    for row in ROWS:
        assert FIELDS <= set(row), row_id(row)
        assert row["trainer"] in trainers, row_id(row)
        assert row["computes"].strip() and row["path"].strip() and row["symbol"].strip()
        if row["call"]:
            assert row["formula"].strip(), row_id(row)
        else:
            assert row.get("why", "").strip(), f"{row_id(row)}: say why it is not expressible"
    for trainer in trainers.values():
        assert re.fullmatch(r"[0-9a-f]{40}", trainer["commit"]), trainer["name"]
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", trainer["repo"]), trainer["name"]


def test_the_atlas_covers_six_trainers_and_every_kind_of_setting():
    assert {t["name"] for t in ATLAS["trainers"].values()} == {
        "verl",
        "TRL",
        "OpenRLHF",
        "Stable-Baselines3",
        "CleanRL",
        "rlax",
    }
    for key in ATLAS["trainers"]:
        assert any(row["trainer"] == key for row in ROWS), key
    text = " ".join(row["setting"] + " " + row["computes"] for row in ROWS).lower()
    for topic in ("gae", "grpo", "kl", "loss_agg_mode", "clip", "dual clip", "trunc", "multi-turn"):
        assert topic in text, topic
    assert any("value" in row["setting"].lower() for row in ROWS)


def test_the_page_shows_the_rendered_rows():
    page = (ROOT / "appendix" / "conventions_atlas.md").read_text(encoding="utf-8")
    assert make_atlas.updated_page(page, ATLAS) == page, "run python appendix/make_atlas.py"
    for row in ROWS:
        assert row["setting"] in page


def test_the_page_is_in_the_appendix_part_of_the_toc():
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    appendix = next(part for part in toc["parts"] if part["caption"] == "Appendix")
    assert {"file": "appendix/conventions_atlas"} in appendix["chapters"]
