"""rlfound: the reference library of the open textbook *RL Foundations*.

Small, pure NumPy/SciPy functions for the mathematics of reinforcement learning, one module
per topic in the order the book teaches it:

- :mod:`rlfound.returns`: discounted returns and the backward scan, also for streams that
  pack several episodes with terminations and time-limit truncations.
- :mod:`rlfound.distributions`: softmax, log-softmax and the categorical score e_a - π.
- :mod:`rlfound.mdp`: exact policy evaluation with the Bellman equation; V, Q and A of
  tabular MDPs.
- :mod:`rlfound.bandits`: the bandit objective, its exact gradient, REINFORCE on a bandit.
- :mod:`rlfound.importance`: importance sampling and effective sample size.
- :mod:`rlfound.advantages`: TD errors, k-step advantages and GAE, also for packed streams.
- :mod:`rlfound.tokens`: token sequences as actions: sequence log-probabilities, parser
  marginals, negative log-likelihood, turn-to-token expansion.
- :mod:`rlfound.pomdp`: beliefs over hidden states, by the Bayes filter and by enumeration.
- :mod:`rlfound.episodes`: episodes of a tabular MDP, sampled or enumerated exactly.
- :mod:`rlfound.policy_gradient`: trajectory log-probabilities and scores, the exact
  expected return, REINFORCE from episodes.
- :mod:`rlfound.ppo`: the clipped surrogate of PPO, its gradient, clip fractions, the value
  loss and the entropy bonus.
- :mod:`rlfound.kl`: exact KL divergences, the k1/k2/k3 estimators, the KL-regularized
  optimum and the DPO loss.
- :mod:`rlfound.groups`: leave-one-out and group-normalized advantages, and the exact
  moments of a group estimator.
- :mod:`rlfound.reduction`: how per-token losses become one number: token and sequence
  means, constant normalizers, multi-turn hierarchies, sharded reduction.
- :mod:`rlfound.credit`: credit over turns: turn-level reward-to-go, potential-based
  shaping, counterfactual branching, options and SMDP returns.
- :mod:`rlfound.entropy`: categorical entropy and its gradient, entropy per position, and
  the diversity measures (action entropy, unique successful strategies, group variance).
- :mod:`rlfound.diagnostics`: estimator diagnostics of a training batch: reward tails,
  group signal, log-ratios, KL, effective sample size, critic calibration, gradient norms,
  policy lag; ``report`` and ``plot_history``.
- :mod:`rlfound.constrained`: scalarized rewards, Pareto fronts, the Lagrangian and its
  primal-dual updates, the occupancy-measure linear program, lexicographic selection.
- :mod:`rlfound.contract`: the training batch: building it from episodes, validating it,
  packing and unpacking it.
- :mod:`rlfound.invariants`: the invariants kit, checks to point at any loss or advantage
  function.
- :mod:`rlfound.gradcheck`: finite-difference gradient checks.

Conventions: arrays are float64 and scalars Python floats; time is the last axis and leading
axes are a batch; ``values`` has one more entry than ``rewards`` along time (the bootstrap
value); masks accept bool or 0/1; randomness comes only from an ``rng`` argument (a
``numpy.random.Generator`` or an int seed). Every public function validates its input and
raises ``ValueError`` whose message starts with the name of the offending argument. For
finite input no function returns inf or NaN: an overflow raises ``ValueError`` starting
``"overflow in <quantity>"``, and sizes, supports and discounted row sums are checked against
the documented limits and tolerances of ``rlfound._validation.limits`` (see the README's
"The promise at the numerical edges").

Import the modules, not the functions, e.g. ``from rlfound import advantages``.
"""

from rlfound import (
    advantages,
    bandits,
    constrained,
    contract,
    credit,
    diagnostics,
    distributions,
    entropy,
    episodes,
    gradcheck,
    groups,
    importance,
    invariants,
    kl,
    mdp,
    policy_gradient,
    pomdp,
    ppo,
    reduction,
    returns,
    tokens,
)

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "advantages",
    "bandits",
    "constrained",
    "contract",
    "credit",
    "diagnostics",
    "distributions",
    "entropy",
    "episodes",
    "gradcheck",
    "groups",
    "importance",
    "invariants",
    "kl",
    "mdp",
    "policy_gradient",
    "pomdp",
    "ppo",
    "reduction",
    "returns",
    "tokens",
]
