"""Labeled equations of the book that define a quantity or fix a notation.

Every labeled equation of the book is either checked by a test marked
``@pytest.mark.equation("eq-...")`` (a test that computes both sides on concrete numbers) or
listed here, with the reason it has nothing to check: it defines the symbol on its left, or
states an assumption. ``tests/chapters/test_equations.py`` enforces the rule, and fails for a label
that is both listed here and marked (pick one).
"""

from __future__ import annotations

DEFINITIONS: dict[str, str] = {
    # Chapter 2
    "eq-markov-property": "an assumption on the environment, not an identity to compute",
    # Chapter 3
    "eq-history-values": "notation: defines v, q and A of a history as conditional expectations",
    "eq-baseline-estimator": "defines the estimator g(b) and the score psi_t",
    "eq-loo-baseline": "defines the leave-one-out baseline b_i and the advantage R_i - b_i",
    # Chapter 4
    "eq-token-gae": "defines token-level TD errors and GAE (eq-gae, gamma = 1, one response)",
    # Chapter 5
    "eq-ppo-total-loss": "defines PPO's loss as a weighted sum of its three terms",
    # Chapter 6
    "eq-kl-objective": "defines the KL-regularized objective J_beta",
    "eq-kl-sum-vs-mean": "defines the summed and the length-averaged penalized objectives",
    "eq-bradley-terry": "a model of preferences that DPO assumes, not an identity",
    # Chapter 7
    "eq-group-advantages": "defines the family of group advantages by its mean and its scale",
    # Chapter 9
    "eq-terminal-credit": "defines the estimator that copies the outcome to every turn",
    "eq-potential-shaping": "defines the shaping term F and the shaped reward R'",
    # Chapter 11
    "eq-constrained": "states the constrained problem",
    "eq-lagrangian": "defines the Lagrangian J_nu of the constrained problem",
    # Chapter 14
    "eq-length-divided-objective": "defines the objective J_f that a length-divided loss follows",
}
