"""Several objectives: weighted sums, Pareto fronts, constraints, Lagrangians, lexicographic choice.

An agent is judged on more than one number: success, cost, safety violations. This module
holds the three ways of turning several objectives into decisions that the book compares:

- **Scalarization**: one weighted sum of the objectives (:func:`scalarized_reward`), and the
  Pareto front of a finite set of candidates (:func:`pareto_mask`).
- **Constraints**: maximize the expected reward J_R(θ) subject to an expected cost
  J_C(θ) <= C_max. Its Lagrangian J_ν(θ) = J_R(θ) - ν (J_C(θ) - C_max), ν >= 0
  (:func:`lagrangian`, :func:`lagrangian_gradients`), the projected multiplier update
  (:func:`multiplier_update`), one primal-dual step (:func:`primal_dual_step`) and a runner
  that returns every iterate (:func:`primal_dual`); the exact reference for a tabular MDP is a
  linear program over occupancy measures (:func:`occupancy_lp`), and the exact values and
  policy gradients of a tabular softmax policy come from :func:`value_and_gradient`.
- **Lexicographic choice**: keep the candidates whose cost is within a tolerance of the
  best, then take the most useful (:func:`lexicographic_mask`).

The book writes the Lagrange multiplier ν and the budget C_max (most papers and trainers call
them λ and d; the book keeps λ for GAE and d_π for occupancies). One constraint is given as
Python floats; M constraints as arrays of shape (M,) for ``cost_value``, ``multiplier`` and
``budget``, and then gradients of the costs carry a leading axis of length M.

The code lives in private files, one topic each: ``_scalarization`` (weighted sums, Pareto
fronts, lexicographic choice), ``_lagrangian`` (the Lagrangian, the multiplier update and the
primal-dual method) and ``_occupancy`` (the exact tabular references). Import the names from
``rlfound.constrained``; the files are not an API.
"""

from __future__ import annotations

from ._lagrangian import (
    ORDERS,
    PARAMETERIZATIONS,
    PrimalDualHistory,
    lagrangian,
    lagrangian_gradients,
    multiplier_update,
    primal_dual,
    primal_dual_step,
)
from ._occupancy import ConstrainedSolution, occupancy_lp, value_and_gradient
from ._scalarization import (
    lexicographic_mask,
    pareto_mask,
    scalarized_reward,
)

__all__ = [
    "ORDERS",
    "PARAMETERIZATIONS",
    "ConstrainedSolution",
    "PrimalDualHistory",
    "lagrangian",
    "lagrangian_gradients",
    "lexicographic_mask",
    "multiplier_update",
    "occupancy_lp",
    "pareto_mask",
    "primal_dual",
    "primal_dual_step",
    "scalarized_reward",
    "value_and_gradient",
]
