"""A table of mutants: typical mistakes in the reference solutions, each with the checks of its
exercise's specification it must lose and those it must keep.

A mutant is the reference solution with some of its lines replaced (every replacement must
change the source, so a stale row fails instead of testing the reference). Its checks are
evaluated in-process on the default seed, as ``test_exercises.py`` evaluates the reference:
the checks in ``loses`` must fail, those in ``keeps`` must pass, and a mutant that is not a
mistake (``loses`` empty) must pass every check.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

from rlfound.grading.authoring import spec
from tests._solutions import load_module, run_checks


class Mutant(NamedTuple):
    exercise: str
    label: str
    replacements: tuple[tuple[str, str], ...]
    loses: tuple[str, ...]
    keeps: tuple[str, ...] = ()
    quiet: bool = False  # numpy's floating-point warnings silenced (an overflow is the mistake)


MUTANTS = [
    Mutant(
        "gae-timeouts",
        "timeout-marked-terminal",
        (
            (
                'np.where(terminated, 0.0, arrays["next_values"])',
                'np.where(terminated | truncated, 0.0, arrays["next_values"])',
            ),
        ),
        loses=("random-boundaries", "edge-cases", "folding-identity", "graded-long-batches"),
    ),
    Mutant(  # clipping both sides regardless of the sign of A
        "ppo-clip",
        "clip-ignores-the-advantage-sign",
        (
            (
                "above = (advantages > 0) & (ratio > 1.0 + clip_high)",
                "above = ratio > 1.0 + clip_high",
            ),
            (
                "below = (advantages < 0) & (ratio < 1.0 - clip_low)",
                "below = ratio < 1.0 - clip_low",
            ),
        ),
        loses=("finite-differences", "graded-finite-differences"),
        keeps=("surrogate-values",),  # the objective itself is still right
    ),
    Mutant(  # a fancy-indexed += counts a response that appears in several pairs only once
        "dpo-gradient",
        "fancy-index",
        (
            (
                "np.add.at(gradient, c, -weights)  # add.at: a response may appear in several"
                " pairs\n"
                "    np.add.at(gradient, r, weights)",
                "gradient[c] -= weights\n    gradient[r] += weights",
            ),
        ),
        loses=("gradient-random", "finite-differences", "graded-gradient"),
    ),
    Mutant(  # ascending the loss
        "dpo-gradient",
        "sign",
        (("np.add.at(gradient, c, -weights)", "np.add.at(gradient, c, weights)"),),
        loses=("finite-differences",),
    ),
    Mutant(  # an unstable -log(sigmoid(u)) overflows for huge margins
        "dpo-gradient",
        "naive-log-sigmoid",
        (
            (
                "return float(np.mean(np.logaddexp(0.0, -margins)))",
                "return float(np.mean(-np.log(1.0 / (1.0 + np.exp(-margins)))))",
            ),
        ),
        loses=("large-logits-loss",),
        quiet=True,
    ),
    Mutant(
        "dpo-gradient",
        "no-beta-check",
        (
            (
                "    if not (np.isfinite(beta) and beta > 0.0):\n"
                '        raise ValueError(f"beta must be a positive finite number; got'
                ' {beta!r}")\n',
                "",
            ),
        ),
        loses=("beta-zero", "beta-negative"),
    ),
    Mutant(  # the batch form with the group's std: the point of the batch scale is lost
        "group-advantages",
        "batch-std-per-group",
        (
            (
                "std = np.sqrt(((rewards - rewards.mean()) ** 2).sum() / (rewards.size - ddof))",
                "size = rewards.shape[-1]\n"
                "    std = np.sqrt((centered**2).sum(axis=-1, keepdims=True) / (size - ddof))",
            ),
        ),
        loses=("batch-random", "graded-batch"),
    ),
    Mutant(  # always the population std
        "group-advantages",
        "ddof-ignored",
        (
            (
                "std = np.sqrt((centered**2).sum(axis=-1, keepdims=True) / (size - ddof))",
                "std = np.sqrt((centered**2).sum(axis=-1, keepdims=True) / size)",
            ),
        ),
        loses=("grpo-random", "graded-grpo"),
    ),
    Mutant(  # RLOO as the centered reward: the (N - 1)/N mistake
        "group-advantages",
        "rloo-centered",
        (
            (
                "others = (rewards.sum(axis=-1, keepdims=True) - rewards) / (size - 1)",
                "others = rewards.mean(axis=-1, keepdims=True)",
            ),
        ),
        loses=("rloo-random", "rloo-identity", "graded-rloo"),
    ),
    Mutant(  # 0/0 for a constant group with eps = 0 gives NaN
        "group-advantages",
        "equal-groups-not-exact-zeros",
        (
            (
                "return np.where(constant, 0.0, centered / (std + eps))\n    ### END SOLUTION\n\n\n"
                "def batch_normalized_advantages",
                "return centered / (std + eps)\n    ### END SOLUTION\n\n\n"
                "def batch_normalized_advantages",
            ),
        ),
        loses=("grpo-edges", "graded-edges"),
    ),
    Mutant(  # averaging only the non-empty rows
        "loss-aggregation",
        "skipped-empty-rows",
        (("    return float(means.mean())", "    return float(means[lengths > 0].mean())"),),
        loses=("seq-mean-token-mean-empty-rows", "graded-seq-mean-token-mean-empty-rows"),
        keeps=("seq-mean-token-mean-hand",),
    ),
    Mutant(  # Dr. GRPO with the array's width as L_max (verl's default factor)
        "loss-aggregation",
        "constant-read-from-the-array",
        (
            (
                "    return float(loss.sum() / (len(loss) * max_length))",
                "    return float(loss.sum() / (len(loss) * loss.shape[1]))",
            ),
        ),
        loses=(
            "padding-invariance-constant",
            "graded-padding-invariance-constant",
            "dr-grpo-random",
        ),
    ),
    Mutant(
        "potential-shaping",
        "kept-terminal-potential",
        (("next_potential = np.where(terminal, 0.0, potential)", "next_potential = potential"),),
        loses=("random-tables", "optimal-values-shift", "graded-optimal-values-shift"),
        keeps=("random-episodes",),  # the episode function is still right
    ),
    Mutant(  # log 0 = -inf and 0 * -inf = nan on extreme rows
        "entropy-gradient",
        "log-of-the-softmax",
        (
            (
                "p_log_p = np.where(probs > 0.0, probs * np.where(probs > 0.0, logprobs, 0.0),"
                " 0.0)",
                "p_log_p = probs * np.log(probs)",
            ),
        ),
        loses=(
            "extreme-logits-entropy",
            "extreme-logits-gradient",
            "graded-extreme-entropy",
            "graded-extreme-gradient",
        ),
        keeps=("entropy-random", "finite-differences"),
    ),
    Mutant(  # the gradient of -H
        "entropy-gradient",
        "sign",
        (("return -p_log_p - probs * entropy + 0.0", "return p_log_p + probs * entropy"),),
        loses=("finite-differences", "gradient-random", "graded-finite-differences"),
    ),
    Mutant(  # -pi log pi is not a gradient: its rows do not sum to zero
        "entropy-gradient",
        "no-h",
        (("return -p_log_p - probs * entropy + 0.0", "return -p_log_p + 0.0"),),
        loses=("finite-differences", "rows-sum-to-zero", "book-gradient"),
    ),
    Mutant(  # descending the violation instead of following it
        "lagrangian-bandit",
        "flipped-multiplier-sign",
        (
            (
                'step = values["multiplier_lr"] * (values["cost_value"] - values["budget"])',
                'step = values["multiplier_lr"] * (values["budget"] - values["cost_value"])',
            ),
        ),
        loses=("book-update", "update-random", "update-direction", "graded-update"),
    ),
    Mutant(
        "lagrangian-bandit",
        "flipped-penalty-sign",
        (
            (
                "np.asarray(action_rewards, float) - float(multiplier)",
                "np.asarray(action_rewards, float) + float(multiplier)",
            ),
        ),
        loses=("book-gradient", "gradient-random", "finite-differences", "graded-gradient"),
    ),
    Mutant(  # sample variances: the ratio is unchanged, so this is not a mistake
        "estimator-diagnostics",
        "sample-variances",
        (
            (
                "np.mean((error - error.mean()) ** 2) / spread",
                "np.var(error, ddof=1) / np.var(returns, ddof=1)",
            ),
        ),
        loses=(),
        quiet=True,
    ),
    Mutant(  # a mean squared error instead of a variance: no longer blind to the offset
        "estimator-diagnostics",
        "mean-squared-error",
        (("np.mean((error - error.mean()) ** 2) / spread", "np.mean(error**2) / spread"),),
        loses=("ev-offset-and-negative", "ev-random", "graded-ev"),
        quiet=True,
    ),
    Mutant(  # the naive ratio overflows for weights near 1e300
        "estimator-diagnostics",
        "unscaled-weights",
        (("scaled = weights / largest", "scaled = weights"),),
        loses=("ess-huge-and-tiny", "graded-ess"),
        quiet=True,
    ),
    Mutant(  # a tolerance where exact equality is asked
        "estimator-diagnostics",
        "tolerance-for-equality",
        (
            (
                "equal = np.all(rewards == rewards[:, :1], axis=1)",
                "equal = np.all(np.isclose(rewards, rewards[:, :1]), axis=1)",
            ),
        ),
        loses=("all-equal-exact",),
        quiet=True,
    ),
    Mutant(  # a standard deviation test that misses groups of one reward
        "estimator-diagnostics",
        "std-test",
        (
            (
                "equal = np.all(rewards == rewards[:, :1], axis=1)",
                "equal = np.nan_to_num(rewards.std(axis=1, ddof=1), nan=1.0) == 0",
            ),
        ),
        loses=("all-equal-random",),
        quiet=True,
    ),
    Mutant(
        "target-action-mask",
        "mask-at-the-input-positions",
        (("return columns[1:].astype(np.float64)", "return columns[:-1].astype(np.float64)"),),
        loses=("random-mask", "edge-mask", "mask-and-turns-agree", "graded-long-episodes"),
    ),
    Mutant(  # numbering runs of policy tokens instead of policy segments merges adjacent turns
        "target-action-mask",
        "merged-adjacent-turns",
        (
            (
                "turn_of_segment = np.where(policy, np.cumsum(policy) - 1, -1)",
                "starts = policy & ~np.concatenate([[False], policy[:-1]])\n"
                "    turn_of_segment = np.where(policy, np.cumsum(starts) - 1, -1)",
            ),
        ),
        loses=("edge-turns",),
        keeps=("random-mask",),
    ),
    Mutant(
        "target-action-mask",
        "no-policy-first-check",
        (
            (
                '    if kinds[0] == POLICY:\n        raise ValueError("kinds[0] must not be a'
                " policy "
                'segment: the first token has no prediction")\n    # One flag',
                "    # One flag",
            ),
        ),
        loses=("policy-first",),
    ),
    Mutant(  # the naive k3 on behavior samples, without the importance weight
        "behavior-kl",
        "missing-weight",
        (
            (
                "    return np.where(mask, np.exp(log_weight) * k3, 0.0)",
                "    return np.where(mask, k3, 0.0)",
            ),
        ),
        loses=("random-token-batches", "graded-token-batches"),
        keeps=("on-policy-is-k3",),  # indistinguishable when mu = pi
    ),
    Mutant(  # the naive estimators averaged under pi instead of mu
        "behavior-kl",
        "expectations-under-the-wrong-policy",
        (("np.array([weight @ k1, weight @ k3,", "np.array([pi[seen] @ k1, pi[seen] @ k3,"),),
        loses=("book-numbers", "naive-k1-identity", "random-distributions"),
        keeps=("weighted-is-target-kl",),
    ),
    Mutant(  # the weighted estimate returned at masked positions too
        "behavior-kl",
        "masked-positions-leak",
        (
            (
                "    return np.where(mask, np.exp(log_weight) * k3, 0.0)",
                "    u = arrays['ref_logprobs'] - arrays['logprobs']\n"
                "    return np.exp(arrays['logprobs'] - arrays['old_logprobs']) * (np.expm1(u) -"
                " u)",
            ),
        ),
        loses=("masked-exactly-zero", "random-token-batches"),
    ),
]

EXERCISES = spec.load_exercises()


def mutant_module(mutant: Mutant, folder):
    """The reference solution of ``mutant.exercise`` with the mutant's replacements, imported."""
    path = EXERCISES[mutant.exercise].solution_path
    source = path.read_text(encoding="utf-8")
    for old, new in mutant.replacements:
        assert old in source, f"{mutant.label}: not in {path.name}: {old!r}"
        source = source.replace(old, new)
    mutated = folder / f"{path.stem}_{mutant.label.replace('-', '_')}.py"
    mutated.write_text(source, encoding="utf-8")
    return load_module(mutated, f"_mutant_{mutated.stem}")


@pytest.mark.parametrize("mutant", MUTANTS, ids=[f"{m.exercise}:{m.label}" for m in MUTANTS])
def test_the_specification_catches_the_mistake(mutant, tmp_path):
    exercise = EXERCISES[mutant.exercise]
    names = {check.name for check in exercise.checks}
    assert {*mutant.loses, *mutant.keeps} <= names, {*mutant.loses, *mutant.keeps} - names
    module = mutant_module(mutant, tmp_path)
    with np.errstate(all="ignore") if mutant.quiet else np.errstate():
        outcomes = run_checks(exercise, module)
    failed = {name for name, outcome in outcomes.items() if not outcome.passed}
    assert set(mutant.loses) <= failed, ("kept", set(mutant.loses) - failed)
    assert not failed & set(mutant.keeps), ("lost", failed & set(mutant.keeps))
    if not mutant.loses:
        assert not failed, failed
