"""Input checks shared by every public function of :mod:`rlfound`.

Each check either returns a clean value or raises ``ValueError`` with a message that begins
with the argument's name, states what was expected and shows what was given, for example
``"gamma must be in [0, 1]; got 1.5"``. Keeping the checks here lets the public functions
open with one or two calls and then read like the mathematics they implement.

:mod:`~rlfound._validation.limits` holds the numerical edges every function shares (size
limits, tolerances) and :mod:`~rlfound._validation.guard` the finite-output guard;
:mod:`~rlfound._validation.arrays` checks arrays, scalars, masks, indices and generators;
:mod:`~rlfound._validation.models` checks the small models the book solves exactly (reward
processes, tabular MDPs and policies, episodes, POMDPs); :mod:`~rlfound._validation.messages`
holds the parts of a message that point at the first bad entry, and :func:`raise_first`;
:mod:`~rlfound._validation.renames` keeps a renamed keyword working for one release.
"""

from rlfound._validation.arrays import *  # noqa: F403
from rlfound._validation.arrays import __all__ as _arrays
from rlfound._validation.guard import *  # noqa: F403
from rlfound._validation.guard import __all__ as _guard
from rlfound._validation.limits import *  # noqa: F403
from rlfound._validation.limits import __all__ as _limits
from rlfound._validation.messages import *  # noqa: F403
from rlfound._validation.messages import __all__ as _messages
from rlfound._validation.models import *  # noqa: F403
from rlfound._validation.models import __all__ as _models
from rlfound._validation.renames import *  # noqa: F403
from rlfound._validation.renames import __all__ as _renames

__all__ = [*_arrays, *_guard, *_limits, *_messages, *_models, *_renames]
