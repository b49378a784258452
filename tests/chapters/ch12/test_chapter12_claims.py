"""Claims made in chapter 12 (estimator diagnostics), recomputed independently.

Each test rebuilds one number, table or figure claim of the chapter by a route that does not
go through the library function the chapter calls: the exported trainer batch read row by
row, expectations by exact enumeration (binomial sums, a batch that holds each token as often
as μ says), the critic examples by explicit means, and the simulated run by executing the
chapter's own simulation cell with ``diagnostics.report`` wrapped so that the raw batches can
be re-read with loops (the toy is the chapter's experiment; what is tested is that the
diagnostics it prints are right, and that the text's claims about them hold).

Sections follow the chapter: the first report; components and tails (eq-diag-tail-mean);
groups (eq-diag-all-equal); ratios, KL and ESS (eq-diag-log-ratio, eq-diag-kl, eq-diag-ess);
the critic (eq-diag-explained-variance, eq-diag-calibration); the three failures
(fig-diag-curriculum, fig-diag-stale, fig-diag-tail); the In practice section.
"""

from __future__ import annotations

import math

import jupytext
import numpy as np
import pytest

from rlfound import contract, diagnostics, distributions, groups, ppo
from tests._book import ROOT

CHAPTER = ROOT / "chapters" / "12_estimator_diagnostics.md"
DATA = ROOT / "chapters" / "data" / "trainer_batch.npz"


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs)


def code_cells():
    return [c.source for c in jupytext.read(CHAPTER).cells if c.cell_type == "code"]


# --- the first report ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exported():
    with np.load(DATA) as stored:
        return {name: np.array(value) for name, value in stored.items()}


def rows_of(batch):
    """Per row: its rewards, the (turn, old, ref, version, advantage) of each generated token."""
    out = []
    for i in range(batch["action_mask"].shape[0]):
        tokens = [
            (
                int(batch["turn_ids"][i, j]),
                float(batch["old_logprobs"][i, j]),
                float(batch["ref_logprobs"][i, j]),
                int(batch["policy_version"][i, j]),
                float(batch["advantages"][i, j]),
            )
            for j in range(batch["action_mask"].shape[1])
            if batch["action_mask"][i, j]
        ]
        out.append((batch["rewards"][i].astype(float).tolist(), tokens))
    return out


def test_the_first_report_by_hand(exported):
    table, skipped = diagnostics.report(exported, group_ids=[0, 0, 0, 1, 1, 1], learner_version=12)
    rows = rows_of(exported)
    returns = [sum(r) for r, _ in rows]
    assert table["return/mean"] == pytest.approx(mean(returns), abs=1e-6)
    turns = [1 + max(t for t, *_ in tokens) for _, tokens in rows]
    to_go_1 = [sum(r[1:]) for (r, _), k in zip(rows, turns, strict=True) if k > 1]
    assert table["return/by_turn/1/mean"] == pytest.approx(mean(to_go_1), abs=1e-6)
    assert table["length/mean"] == pytest.approx(mean(len(t) for _, t in rows))
    tokens = [tok for _, toks in rows for tok in toks]
    for k in (0, 2):
        assert table[f"advantage/by_turn/{k}/mean"] == pytest.approx(
            mean(a for t, *_, a in tokens if t == k), abs=1e-6
        )
    k1 = mean(o - r for _, o, r, _, _ in tokens)
    k3 = mean(math.exp(r - o) - 1 - (r - o) for _, o, r, _, _ in tokens)
    assert table["kl/old_ref/k1"] == pytest.approx(k1, abs=1e-6)
    assert table["kl/old_ref/k3"] == pytest.approx(k3, abs=1e-6)
    assert table["entropy/sampled/mean"] == pytest.approx(-mean(o for _, o, *_ in tokens), abs=1e-6)
    lags = [12 - v for *_, v, _ in tokens]
    assert table["lag/steps_mean"] == pytest.approx(mean(lags)) and table["lag/steps_max"] == 1.0
    # The text: the mean lag is below one step, the largest one; the KLs differ by almost 2x;
    # the first turn's mean advantage is positive, the third's negative, and the only episode
    # with a third turn failed after two tool calls; nothing is all-equal.
    assert 0 < table["lag/steps_mean"] < 1
    assert 1.5 < table["kl/old_ref/k1"] / table["kl/old_ref/k3"] < 2
    assert table["advantage/by_turn/0/mean"] > 0 > table["advantage/by_turn/2/mean"]
    third = [(r, k) for (r, _), k in zip(rows, turns, strict=True) if k == 3]
    assert len(third) == 1 and third[0][0] == pytest.approx([-0.05, -0.05, 0.0])
    assert table["group/all_equal_fraction"] == 0.0
    assert len(table) == 41
    assert set(skipped) == {
        "reward/<component>/*",
        "*/by_task/*",
        "*/by_success/*",
        "entropy/{mean,position/*}",
        "log_ratio/*",
        "kl/old_current/*",
        "clip/*",
        "ess/*",
        "value/*",
        "grad_norm/*",
    }


# --- components and tails -----------------------------------------------------------------------


def test_the_tail_example():
    rewards = [1.0] * 99 + [-5.0]
    assert mean(rewards) == pytest.approx(0.94)  # 1 - eps (1 + V) with eps = 0.01, V = 5
    worst = sorted(rewards)[:5]
    assert mean(worst) == pytest.approx(-0.2)  # 1 - (eps / alpha)(1 + V): moved by 1.2
    assert 1 - (0.01 / 0.05) * 6 == pytest.approx(-0.2)
    _, std, counts, edges = diagnostics.reward_statistics(np.array(rewards), bins=6)
    assert std == pytest.approx(math.sqrt(mean((r - 0.94) ** 2 for r in rewards)))
    assert counts.tolist() == [1, 0, 0, 0, 0, 99] and edges.tolist() == [-5, -4, -3, -2, -1, 0, 1]


# --- groups -------------------------------------------------------------------------------------


@pytest.mark.equation("eq-diag-all-equal")
@pytest.mark.parametrize("p", [0.05, 0.5, 0.9, 0.99])
def test_expected_all_equal_fraction_and_variance_by_enumeration(p):
    n = 8
    weights = [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]
    expected_f = weights[0] + weights[n]
    expected_var = sum(w * (k / n) * (1 - k / n) for k, w in enumerate(weights))
    assert expected_f == pytest.approx((1 - p) ** n + p**n, rel=1e-12)
    assert expected_var == pytest.approx((n - 1) / n * p * (1 - p), rel=1e-12)


def test_the_printed_group_table():
    printed = {
        0.05: (0.6634, 0.0416),
        0.5: (0.0078, 0.2188),
        0.9: (0.4305, 0.0787),
        0.99: (0.9227, 0.0087),
    }
    for p, (f, v) in printed.items():
        assert (1 - p) ** 8 + p**8 == pytest.approx(f, abs=5e-5)
        assert 7 / 8 * p * (1 - p) == pytest.approx(v, abs=5e-5)


# --- ratios, KL, ESS ----------------------------------------------------------------------------

MU = [1 / 8, 2 / 8, 4 / 8, 1 / 8]
PI = [0.4, 0.3, 0.2, 0.1]


@pytest.mark.equation("eq-diag-log-ratio", "eq-diag-kl", "eq-diag-ess")
def test_the_exact_check_of_the_log_ratio_kl_and_ess():
    kl_mu_pi = sum(m * math.log(m / p) for m, p in zip(MU, PI, strict=True))
    kl_pi_mu = sum(p * math.log(p / m) for m, p in zip(MU, PI, strict=True))
    k2 = sum(m * 0.5 * math.log(m / p) ** 2 for m, p in zip(MU, PI, strict=True))
    chi2 = sum(p * p / m for m, p in zip(MU, PI, strict=True)) - 1
    assert (round(kl_mu_pi, 4), round(kl_pi_mu, 4), round(k2, 4)) == (0.2951, 0.3144, 0.3017)
    assert chi2 == pytest.approx(0.8) and 1 / (1 + chi2) == pytest.approx(0.5556, abs=5e-5)
    tokens = [0, 1, 1, 2, 2, 2, 2, 3]
    weights = [PI[t] / MU[t] for t in tokens]
    assert sum(weights) ** 2 / sum(w * w for w in weights) / 8 == pytest.approx(1 / (1 + chi2))
    old, new = np.log(MU)[tokens], np.log(PI)[tokens]
    assert diagnostics.log_ratio_summary(new, old)[0] == pytest.approx(-kl_mu_pi)
    assert diagnostics.approximate_kl(old, new, None, "k3") == pytest.approx(kl_mu_pi)


# --- the critic ---------------------------------------------------------------------------------


def test_the_two_critics_of_the_calibration_example():
    targets = [[0.2, 0.4, 0.7, 1.0], [0.0, 0.1, 0.1, 0.0], [0.5, 0.6, 0.8, 1.0]]
    flat = [g for row in targets for g in row]
    var_g = mean((g - mean(flat)) ** 2 for g in flat)
    errors = [0.1 * h for _ in targets for h in (3, 2, 1, 0)]
    var_e = mean((e - mean(errors)) ** 2 for e in errors)
    assert round(1 - var_e / var_g, 4) == 0.9020
    critic = np.array(targets) + 0.1 * np.array([3, 2, 1, 0])
    v_bar, g_bar, _ = diagnostics.calibration_by_horizon(critic, np.array(targets))
    np.testing.assert_allclose(v_bar - g_bar, [0.0, 0.1, 0.2, 0.3], atol=1e-12)
    assert diagnostics.explained_variance(np.array(targets) + 0.25, np.array(targets)) == 1.0


# --- the simulated run --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def simulation():
    """The chapter's simulation cell, run with report wrapped to keep every batch."""
    cell = next(source for source in code_cells() if "def toy_run" in source)
    recorded = {}
    current = []

    def recording_report(batch, **kwargs):
        current.append((batch, kwargs))
        return diagnostics.report(batch, **kwargs)

    class Diagnostics:  # the module, with report recorded
        def __getattr__(self, name):
            return recording_report if name == "report" else getattr(diagnostics, name)

    namespace = {
        "np": np,
        "contract": contract,
        "diagnostics": Diagnostics(),
        "distributions": distributions,
        "groups": groups,
        "ppo": ppo,
    }
    head = cell[: cell.index("runs = {")]
    exec(head, namespace)  # the chapter's own toy (its definitions only)
    runs = {}
    for name, kwargs in (
        ("easy", {"curriculum": "easy"}),
        ("adaptive", {"curriculum": "adaptive"}),
        ("stuck worker", {"curriculum": "adaptive", "stuck_groups": 4}),
        ("shortcuts", {"curriculum": "all", "shortcuts_allowed": True, "num_steps": 80}),
    ):
        current.clear()
        runs[name] = namespace["toy_run"](**kwargs)
        recorded[name] = list(current)
    assert '"shortcuts": toy_run(curriculum="all", shortcuts_allowed=True, num_steps=80)' in cell
    return runs, recorded


def series(history, name):
    return np.array([table.get(name, np.nan) for table in history])


def check_step_by_loops(table, batch, kwargs):
    """A few of the step's diagnostics recomputed from the raw batch with loops."""
    mask, rows = batch["action_mask"], batch["action_mask"].shape[0]
    returns = [float(batch["rewards"][i].sum()) for i in range(rows)]
    assert table["return/mean"] == pytest.approx(mean(returns))
    group_ids = kwargs["group_ids"]
    equal = []
    for g in sorted(set(group_ids.tolist())):
        members = [r for r, k in zip(returns, group_ids, strict=True) if k == g]
        equal.append(max(members) == min(members))
    assert table["group/all_equal_fraction"] == pytest.approx(mean(equal))
    current = kwargs["logprobs"]
    token_d, sequence_d = [], []
    for i in range(rows):
        row = [
            float(current[i, j] - batch["old_logprobs"][i, j])
            for j in range(mask.shape[1])
            if mask[i, j]
        ]
        token_d += row
        sequence_d.append(sum(row))
    assert table["log_ratio/max_abs"] == pytest.approx(max(abs(d) for d in token_d), abs=1e-12)
    assert table["log_ratio/sequence/max_abs"] == pytest.approx(
        max(abs(d) for d in sequence_d), abs=1e-9
    )
    w = [math.exp(d) for d in sequence_d]
    assert table["ess/sequence_fraction"] == pytest.approx(
        sum(w) ** 2 / sum(x * x for x in w) / rows, rel=1e-9
    )
    versions = [
        int(batch["policy_version"][i, j])
        for i in range(rows)
        for j in range(mask.shape[1])
        if mask[i, j]
    ]
    assert table["lag/steps_max"] == kwargs["learner_version"] - min(versions)


@pytest.mark.slow
def test_the_recorded_batches_give_the_printed_diagnostics(simulation):
    runs, recorded = simulation
    for name in recorded:
        for step in (0, 10, 30, len(runs[name]) - 1):
            batch, kwargs = recorded[name][step]
            contract.validate(batch, learner_version=kwargs["learner_version"])
            check_step_by_loops(runs[name][step], batch, kwargs)


@pytest.mark.slow
def test_failure_1_the_easy_curriculum_goes_silent(simulation):
    runs, _ = simulation
    easy, adaptive = runs["easy"], runs["adaptive"]
    assert series(easy, "return/mean")[20] == 1.0  # "reaches one within twenty steps"
    for step in (20, 40, 59):
        assert easy[step]["group/all_equal_fraction"] == 1.0
        assert easy[step]["grad_norm/before"] == 0.0
    assert (series(easy, "grad_norm/before")[20:] == 0.0).sum() == 30  # "30 of 40"
    higher = series(easy, "return/mean") - series(adaptive, "return/mean")
    assert np.all(higher[:3] == 0.0) and np.all(higher[3:] > 0.0)  # "higher at every step"
    assert easy[-1]["eval/longest_task"] < 0.001 < 0.8 < adaptive[-1]["eval/longest_task"]
    assert round(adaptive[-1]["eval/longest_task"], 3) == 0.822
    assert adaptive[-1]["group/all_equal_fraction"] > adaptive[10]["group/all_equal_fraction"]


@pytest.mark.slow
def test_failure_2_a_flat_loss_hides_exploding_ratios(simulation):
    runs, _ = simulation
    stuck, clean = runs["stuck worker"], runs["adaptive"]
    assert np.abs(series(clean, "loss")).max() < 1e-12
    assert np.abs(series(stuck, "loss")).max() < 0.03  # "within a few hundredths of zero"
    np.testing.assert_array_equal(series(stuck, "lag/steps_max"), np.arange(60))
    for name in ("log_ratio/max_abs", "kl/old_current/k3", "clip/negative"):
        assert np.all(series(clean, name) == 0.0), name
    for name in ("ess/token_fraction", "ess/sequence_fraction"):
        assert np.allclose(series(clean, name), 1.0), name
    late = slice(30, 60)
    assert 5.0 < series(stuck, "log_ratio/max_abs")[late].mean() < 6.0  # "several nats"
    assert series(stuck, "log_ratio/sequence/max_abs")[late].mean() > 20  # "tens of nats"
    sequence_ess = series(stuck, "ess/sequence_fraction")[late]
    assert 0.6 < sequence_ess.mean() < 0.7 and 0.15 < sequence_ess.min() < 0.25  # 2/3, 1/5
    assert stuck[-1]["eval/longest_task"] < 0.6 * clean[-1]["eval/longest_task"]


@pytest.mark.slow
def test_failure_3_a_good_mean_with_a_heavy_tail(simulation):
    runs, recorded = simulation
    run = runs["shortcuts"]
    early, late = run[:10], run[70:80]
    for name in ("return/mean", "reward/task/mean", "reward/speed/mean"):
        assert series(late, name).mean() > series(early, name).mean() + 0.5, name
    assert series(late, "reward/safety/mean").mean() < series(early, "reward/safety/mean").mean()
    early_rate = series(early, "safety/violation_rate").mean()
    late_rate = series(late, "safety/violation_rate").mean()
    assert late_rate > 3 * early_rate  # "more than triples"
    assert series(late, "return/tail_mean").mean() < series(early, "return/tail_mean").mean()
    # The safety component lost less than the mean return gained.
    lost = series(early, "reward/safety/mean").mean() - series(late, "reward/safety/mean").mean()
    gained = series(late, "return/mean").mean() - series(early, "return/mean").mean()
    assert lost < gained
    # A late tail below a failed episode without a violation (return 0).
    assert series(late, "return/tail_mean").mean() < -1
    # The violation rate, by loops over a recorded batch's safety component.
    _, kwargs = recorded["shortcuts"][75]
    safety = kwargs["reward_components"]["safety"][:, 0]
    assert run[75]["safety/violation_rate"] == pytest.approx(mean(s < 0 for s in safety))
    # The expected value of a shortcut: 0.2 - 0.02 * 5.
    assert 0.2 - 0.02 * 5 == pytest.approx(0.1)


# --- In practice --------------------------------------------------------------------------------


def test_in_practice_names_the_settings_that_were_read_in_the_trainers():
    """The metrics and settings quoted in the In practice section, and where each was read.

    - verl ``verl/trainer/ppo/metric_utils.py``, ``compute_data_metrics``:
      ``critic/vf_explained_var`` = ``1.0 - return_diff_var / (return_var + 1e-5)`` with
      ``torch.var`` over ``response_mask``; ``response_length/clip_ratio``.
    - verl ``verl/trainer/ppo/core_algos.py``, ``compute_policy_loss``: ``negative_approx_kl =
      log_prob - old_log_prob``; ``ppo_kl = masked_mean(-negative_approx_kl, response_mask)``;
      ``pg_clipfrac`` and ``pg_clipfrac_lower`` masked means over all response tokens.
    - verl ``verl/workers/actor/dp_actor.py``: ``_optimizer_step`` returns the value of
      ``clip_grad_norm_(..., max_norm=self.config.grad_clip)``; ``update_policy`` logs it as
      ``actor/grad_norm`` next to ``actor/pg_loss``, ``actor/pg_clipfrac``, ``actor/ppo_kl``,
      ``actor/pg_clipfrac_lower``.
    - verl ``verl/trainer/ppo/rollout_corr_helper.py``, ``compute_rs_metrics``:
      ``rollout_rs_eff_sample_size = 1 / masked_mean((w / (mean w + 1e-8))**2)`` on weights
      clamped to ``[threshold_lower, threshold]``.
    - TRL ``trl/trainer/ppo_trainer.py``, ``PPOTrainer.train``: ``approxkl = 0.5 *
      (logprobs_diff**2).mean()`` logged as ``policy/approxkl_avg``; documentation "Logging".
    - TRL ``trl/trainer/grpo_trainer.py``: ``is_std_zero = torch.isclose(std_rewards, 0)`` and
      ``frac_reward_zero_std = is_std_zero.float().mean()`` in
      ``_generate_and_score_completions``; ``clip_ratio/low_mean`` from ``(coef_1 < 1 -
      epsilon_low) & (advantages < 0)`` with ``masked_batch_mean`` over all completion tokens,
      in ``_compute_loss`` (read in copies of the file vendored by downstream projects).
    - PyTorch ``torch/nn/utils/clip_grad.py``: ``clip_coef = max_norm / (total_norm + 1e-6)``,
      ``clip_coef_clamped = torch.clamp(clip_coef, max=1.0)``; ``clip_grad_norm_`` returns
      ``total_norm`` (before clipping).
    - AReaL documentation, "Asynchronous RL": ``rollout.max_head_offpolicyness`` (0 is
      synchronous); TorchRL documentation, ``StalenessAwareSampler``: staleness =
      ``consumer_version - policy_version``.
    """
    text = CHAPTER.read_text(encoding="utf-8")
    practice = text[text.index("(sec-diag-practice)=") : text.index("## Key equations")]
    for setting in (
        "critic/vf_explained_var",
        "1e-5",
        "actor/ppo_kl",
        "actor/pg_clipfrac",
        "actor/grad_norm",
        "rollout_rs_eff_sample_size",
        "policy/approxkl_avg",
        "frac_reward_zero_std",
        "clip_ratio/low_mean",
        "rollout.max_head_offpolicyness",
        "StalenessAwareSampler",
        "clip_grad_norm_",
        "1e-6",
    ):
        assert setting in practice, setting


def test_entropy_by_semantic_decision_points_to_chapter_10():
    # Coverage (source text, section 17): entropy by semantic decision, not only by position.
    text = " ".join(CHAPTER.read_text(encoding="utf-8").split())
    section = text[text.index("## Entropy by position") : text.index("## The critic")]
    assert "To track exploration by semantic decision" in section
    assert "{eq}`eq-action-entropy`" in section and "`entropy.action_entropy`" in section
    assert "<sec-token-vs-semantic>`" in section
    chapter10 = (ROOT / "chapters" / "10_entropy_exploration.md").read_text(encoding="utf-8")
    assert "The chatty policy has twice the mean token entropy of the decisive one" in chapter10
    assert "its action entropy is 0" in chapter10
