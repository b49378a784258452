"""rlfound: the reference library of the open textbook *RL Foundations*.

Small, pure NumPy/SciPy functions for the mathematics of reinforcement learning, one module
per topic in the order the book teaches it:

- :mod:`rlfound.returns`: discounted returns, also across episode boundaries.
- :mod:`rlfound.mdp`: exact policy evaluation with the Bellman equation; V, Q and A of
  tabular MDPs; sampled and enumerated episodes; POMDP beliefs.
- :mod:`rlfound.tokens`: token sequences as actions: sequence log-probabilities, parser
  marginals, negative log-likelihood, turn-to-token expansion.
- :mod:`rlfound.policy_gradient`: softmax policies, score functions, REINFORCE on a bandit
  and on tabular MDPs, exact expectations of group estimators.
- :mod:`rlfound.groups`: leave-one-out and group-normalised advantages.
- :mod:`rlfound.importance`: importance sampling and effective sample size.
- :mod:`rlfound.advantages`: TD errors, k-step advantages and GAE, also across episode
  boundaries with terminations and time-limit truncations.
- :mod:`rlfound.gradcheck`: finite-difference gradient checks.

Conventions: arrays are float64; time is the last axis and leading axes are a batch;
``values`` has one more entry than ``rewards`` along time (the bootstrap value). Every public
function validates its input and raises ``ValueError`` whose message starts with the name of
the offending argument.

Import the modules, not the functions, e.g. ``from rlfound import advantages``.
"""

from rlfound import (
    advantages,
    gradcheck,
    groups,
    importance,
    mdp,
    policy_gradient,
    returns,
    tokens,
)

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "advantages",
    "gradcheck",
    "groups",
    "importance",
    "mdp",
    "policy_gradient",
    "returns",
    "tokens",
]
