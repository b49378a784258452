"""Exercise ``parser-marginal`` (chapter 2, three stars): the probability of a parsed action.

A bigram language model over a vocabulary of V tokens has a table of logits of shape
(V + 1, V): row ``v`` holds the logits of the next token after token ``v``, and row ``V``
those of the first token. A response of ``length`` tokens x = (x_1, ..., x_L) has probability

    pi(x) = prod_j softmax(table[x_{j-1}])[x_j],     with x_0 = V (the start row).

Each token stands for an action or is formatting: ``token_actions[v]`` is the action of token
``v`` (an integer in [0, num_actions)) or -1. The parser g returns the action of the *first*
token that stands for an action, and -1 (no action) if the response has none. Implement

* :func:`action_probabilities`, the probability of each action,

      Pr(a) = sum over the responses x with g(x) = a of pi(x),

  by enumerating all V ** length responses and adding their probabilities in log space.

Use NumPy only. The result sums to 1 minus the probability of the responses that contain no
action token.
"""

from __future__ import annotations

import numpy as np

#: Largest number of responses the enumeration will list.
MAX_RESPONSES = 1_000_000


def action_probabilities(bigram_table, length, token_actions, num_actions):
    """Probability of each action under a bigram model and a first-action-token parser.

    Parameters
    ----------
    bigram_table : array_like
        Shape (V + 1, V), finite: row ``v`` gives the logits of the token after token ``v``;
        row ``V`` gives the logits of the first token.
    length : int
        Number of tokens in a response, at least 1.
    token_actions : array_like of int
        Shape (V,): the action each token stands for, in [0, num_actions), or -1 for a
        formatting token.
    num_actions : int
        Number of actions, at least 1.

    Returns
    -------
    numpy.ndarray
        Shape (num_actions,), float64: ``Pr(a)`` for every action ``a``.

    Raises
    ------
    ValueError
        If ``bigram_table`` is not a finite array of shape (V + 1, V), ``length`` or
        ``num_actions`` is not a positive integer (or V ** length exceeds one million), or
        ``token_actions`` does not have shape (V,) or holds an entry outside
        [-1, num_actions); the message starts with the argument's name.

    Examples
    --------
    One letter token (action 0) and one space (formatting), uniform logits: a response of two
    tokens contains the letter unless it is two spaces, so Pr(0) = 1 - 1/4.

    >>> action_probabilities(np.zeros((3, 2)), 2, [0, -1], 1).tolist()
    [0.75]
    """
    ### BEGIN SOLUTION
    table = np.asarray(bigram_table, dtype=np.float64)
    if table.ndim != 2 or table.shape[1] < 1 or table.shape[0] != table.shape[1] + 1:
        raise ValueError(f"bigram_table must have shape (V + 1, V); got shape {table.shape}")
    if not np.all(np.isfinite(table)):
        raise ValueError("bigram_table must be finite")
    vocab_size = table.shape[1]
    for name, value in (("length", length), ("num_actions", num_actions)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ValueError(f"{name} must be a positive integer; got {value!r}")
    if vocab_size**length > MAX_RESPONSES:
        raise ValueError(f"length must keep V ** length <= {MAX_RESPONSES}; got {length}")
    token_actions = np.asarray(token_actions)
    if token_actions.shape != (vocab_size,) or token_actions.dtype.kind not in "iu":
        raise ValueError(
            f"token_actions must be {vocab_size} integers; got shape {token_actions.shape} "
            f"of dtype {token_actions.dtype}"
        )
    if np.any(token_actions < -1) or np.any(token_actions >= num_actions):
        raise ValueError(f"token_actions must lie in [-1, {num_actions}); got {token_actions}")

    # log softmax of every row, shifted by the row's maximum so that exp cannot overflow
    shifted = table - table.max(axis=1, keepdims=True)
    log_next = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))

    # all V ** L responses in lexicographic order: the base-V digits of 0, 1, ..., V ** L - 1
    place_values = vocab_size ** np.arange(length - 1, -1, -1)
    responses = (np.arange(vocab_size**length)[:, None] // place_values) % vocab_size
    previous = np.concatenate([np.full((len(responses), 1), vocab_size), responses[:, :-1]], axis=1)
    logprobs = log_next[previous, responses].sum(axis=1)

    meaning = token_actions[responses]  # action of every token of every response
    has_action = meaning >= 0
    first = np.argmax(has_action, axis=1)  # index of the first action token (0 if none)
    parsed = np.where(has_action.any(axis=1), meaning[np.arange(len(responses)), first], -1)

    probabilities = np.zeros(num_actions)
    for action in range(num_actions):
        chosen = logprobs[parsed == action]
        if chosen.size:
            top = chosen.max()  # log-sum-exp: factor out the largest term
            probabilities[action] = np.exp(top) * np.exp(chosen - top).sum()
    return probabilities
    ### END SOLUTION
