"""Chapter 14: common category errors."""

from __future__ import annotations

import numpy as np

from tests.oracles.basics import _read_only

# ---------------------------------------------------------------------------------------------
# --- Chapter 14: common category errors
# ---------------------------------------------------------------------------------------------

#: Section 1 and exercise ex-batch-mean-explained: P(pass | prompt, style), rows easy and hard,
#: columns careful and quick; both prompts are drawn with probability 1/2.
CE_PASS_RATES = _read_only([[0.95, 0.85], [0.30, 0.10]])
#: Section 3 and exercise ex-behavior-kl: reference, behavior and current next-token distributions.
CE_REF = _read_only([0.40, 0.30, 0.20, 0.10])
CE_BEHAVIOR = _read_only([0.30, 0.30, 0.25, 0.15])
CE_CURRENT = _read_only([0.10, 0.25, 0.30, 0.35])


def two_prompt_task():
    """(transition, reward, terminal, initial) of the two-prompt batch, built entry by entry:
    states easy, hard, passed, failed; actions careful, quick; a pass pays 1."""
    transition = np.zeros((4, 2, 4))
    reward = np.zeros((4, 2, 4))
    for prompt in range(2):
        for style in range(2):
            rate = float(CE_PASS_RATES[prompt, style])
            transition[prompt, style, 2] = rate
            transition[prompt, style, 3] = 1.0 - rate
            reward[prompt, style, 2] = 1.0
    for end in (2, 3):
        transition[end, :, end] = 1.0
    return transition, reward, np.array([False, False, True, True]), np.array([0.5, 0.5, 0, 0])


def quiz_task(check_cost=0.1, know=0.95, blind_zero=0.8, p_check=0.3):
    """The answer-key quiz of section 6, entry by entry: (transition, reward, terminal, initial,
    policy). States: question with key 0 and 1 (0, 1), answering after a check (2, 3), answering
    blind (4, 5), right (6), wrong (7). At a question action 0 checks (costs ``check_cost``) and
    1 skips; at an answer state action k answers k. After a check the agent answers the key with
    probability ``know``; blind it answers 0 with probability ``blind_zero``."""
    transition = np.zeros((8, 2, 8))
    reward = np.zeros((8, 2, 8))
    policy = np.full((8, 2), 0.5)
    for key in (0, 1):
        question, known, blind = key, 2 + key, 4 + key
        transition[question, 0, known] = 1.0
        reward[question, 0, known] = -check_cost
        transition[question, 1, blind] = 1.0
        policy[question] = [p_check, 1.0 - p_check]
        for answering in (known, blind):
            for answer in (0, 1):
                end = 6 if answer == key else 7
                transition[answering, answer, end] = 1.0
                reward[answering, answer, end] = 1.0 if end == 6 else 0.0
        policy[known] = [know, 1.0 - know] if key == 0 else [1.0 - know, know]
        policy[blind] = [blind_zero, 1.0 - blind_zero]
    for end in (6, 7):
        transition[end, :, end] = 1.0
    terminal = np.array([False] * 6 + [True, True])
    initial = np.array([0.5, 0.5, 0, 0, 0, 0, 0, 0])
    return transition, reward, terminal, initial, policy
