"""Every code exercise of the book, one parametrized test per promise.

For each exercise the grader loads (``spec.load_exercises``): its specification declares the
chapter, stars and functions its solutions page gives (the table below, which must cover every
exercise), has graded-only checks and the kinds of check it is built on; the reference solution
passes every check on several seeds, evaluated in-process; the starter generated from it passes
none; and the tests shipped in the solution file for the student pass. Which checks a typical
mistake must lose is in ``test_mutants.py``; each chapter's own maths stays in its
``chNN/test_solutions_chNN.py``.
"""

from __future__ import annotations

import inspect
from typing import NamedTuple

import pytest

from rlfound.grading.authoring import spec
from tests._solutions import SOLUTIONS, load_solution, load_starter, run_checks


class Declared(NamedTuple):
    """What an exercise's specification must declare."""

    chapter: int
    stars: int
    functions: tuple[str, ...]
    kinds: tuple[type, ...] = ()  # check classes it must contain at least one of each
    seeds: tuple[int, ...] = (0, 7)  # the seeds the reference must pass every check on


DECLARED = {
    "bellman-arithmetic": Declared(1, 1, ("chain_values",)),
    "score-function-gradient": Declared(1, 2, ("bandit_gradient",)),
    "importance-sampling": Declared(1, 2, ("importance_sampling_value",)),
    "gae-recursion": Declared(1, 3, ("gae_recursive", "gae_explicit")),
    "parser-marginal": Declared(2, 3, ("action_probabilities",)),
    "belief-update": Declared(2, 2, ("belief_update",)),
    "action-values": Declared(3, 2, ("q_values",)),
    "reward-to-go-reinforce": Declared(3, 2, ("reinforce_estimates",)),
    "gae-timeouts": Declared(4, 3, ("gae_with_timeouts",)),
    "ppo-clip": Declared(
        5, 2, ("clipped_surrogate", "clipped_surrogate_grad"), kinds=(spec.Gradient,)
    ),
    "dpo-gradient": Declared(6, 2, ("dpo_loss", "dpo_logit_gradient"), kinds=(spec.Gradient,)),
    "group-advantages": Declared(
        7,
        2,
        ("rloo_advantages", "dr_grpo_advantages", "grpo_advantages", "batch_normalized_advantages"),
    ),
    "loss-aggregation": Declared(
        8,
        2,
        (
            "token_mean",
            "seq_mean_token_mean",
            "seq_mean_token_sum",
            "seq_mean_token_sum_norm",
            "dr_grpo",
        ),
        kinds=(spec.Property,),
    ),
    "potential-shaping": Declared(9, 2, ("shaped_reward", "shaped_episode_rewards")),
    "entropy-gradient": Declared(
        10, 2, ("softmax_entropy", "softmax_entropy_gradient"), kinds=(spec.Gradient,)
    ),
    "lagrangian-bandit": Declared(
        11,
        2,
        ("bandit_lagrangian", "bandit_lagrangian_gradient", "projected_multiplier_update"),
        kinds=(spec.Gradient,),
    ),
    "estimator-diagnostics": Declared(
        12,
        3,
        ("explained_variance", "effective_sample_size", "fraction_all_equal"),
        seeds=(0, 7, 123),
    ),
    "target-action-mask": Declared(13, 3, ("target_action_mask", "target_turn_ids")),
    "behavior-kl": Declared(
        14, 2, ("weighted_kl_tokens", "behavior_kl_expectations"), kinds=(spec.Raises,)
    ),
}

EXERCISES = spec.load_exercises()


def solution_of(exercise):
    return load_solution(exercise.solution_path.stem)


def student_tests():
    """(exercise id, test name) for every ``test_*`` function a solution file ships."""
    return [
        (exercise_id, name)
        for exercise_id, exercise in sorted(EXERCISES.items())
        for name, function in inspect.getmembers(solution_of(exercise), inspect.isfunction)
        if name.startswith("test_") and function.__module__ == solution_of(exercise).__name__
    ]


def test_the_table_covers_every_exercise():
    assert sorted(DECLARED) == sorted(EXERCISES)


@pytest.mark.parametrize("exercise_id", sorted(DECLARED))
def test_the_specification_loads_and_matches_the_solution(exercise_id):
    exercise, declared = EXERCISES[exercise_id], DECLARED[exercise_id]
    assert (exercise.chapter, exercise.stars) == (declared.chapter, declared.stars)
    assert exercise.solution_path == (SOLUTIONS / exercise.source.name).resolve()
    assert tuple(f.name for f in exercise.functions) == declared.functions
    assert any(not check.public for check in exercise.checks)
    for kind in declared.kinds:
        assert any(isinstance(check, kind) for check in exercise.checks), kind.__name__
    exercise.reference()  # the declared signatures match the solution's


@pytest.mark.parametrize("exercise_id", sorted(DECLARED))
def test_the_reference_passes_every_check_and_the_starter_none(exercise_id, tmp_path):
    exercise = EXERCISES[exercise_id]
    solution = solution_of(exercise)
    for seed in DECLARED[exercise_id].seeds:
        outcomes = run_checks(exercise, solution, seed)
        failed = {name: o.message for name, o in outcomes.items() if not o.passed}
        assert not failed, (seed, failed)
    source = exercise.solution_path.read_text(encoding="utf-8")
    starter = load_starter(source, tmp_path, exercise.solution_path.stem)
    passed = [name for name, o in run_checks(exercise, starter).items() if o.passed]
    assert not passed, passed


@pytest.mark.parametrize(("exercise_id", "test_name"), student_tests())
def test_the_students_tests_pass(exercise_id, test_name):
    getattr(solution_of(EXERCISES[exercise_id]), test_name)()
