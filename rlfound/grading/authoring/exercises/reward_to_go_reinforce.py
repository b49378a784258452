"""Exercise ``reward-to-go-reinforce``: one-episode REINFORCE estimates, both forms."""

import itertools

import numpy as np

from rlfound.grading.authoring.spec import (
    BOOK_SOLUTIONS,
    Answer,
    Compare,
    Exercise,
    Function,
    Manual,
    Property,
    Raises,
)

# A small episodic MDP for the unbiasedness check: states 0, 1, 2 act, state 3 is terminal,
# and every transition moves forward, so all episodes end within three steps.
UNBIASED_TRANSITION = np.zeros((4, 2, 4))
UNBIASED_TRANSITION[0, 0, [1, 2]] = [0.7, 0.3]
UNBIASED_TRANSITION[0, 1, [1, 3]] = [0.4, 0.6]
UNBIASED_TRANSITION[1, 0, [2, 3]] = [0.5, 0.5]
UNBIASED_TRANSITION[1, 1, [2, 3]] = [0.1, 0.9]
UNBIASED_TRANSITION[2, :, 3] = 1.0
UNBIASED_TRANSITION[3, :, 3] = 1.0
UNBIASED_REWARD = np.zeros((4, 2, 4))
UNBIASED_REWARD[0, 0, 1], UNBIASED_REWARD[0, 1, 3] = 0.5, 1.0
UNBIASED_REWARD[1, 0, 2], UNBIASED_REWARD[1, 1, 3] = -0.3, 2.0
UNBIASED_REWARD[2, 0, 3], UNBIASED_REWARD[2, 1, 3] = 1.5, -1.0
HORIZON = 3


def softmax_rows(logits):
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def all_episodes(logits):
    """Every episode of the MDP above from state 0, with its probability, in a fixed order."""
    policy = softmax_rows(logits)
    finished = []

    def extend(states, actions, rewards, probability):
        state = states[-1]
        if state == 3:
            finished.append((states, actions, rewards, probability))
            return
        for action in range(2):
            for following in np.flatnonzero(UNBIASED_TRANSITION[state, action]):
                step = policy[state, action] * UNBIASED_TRANSITION[state, action, following]
                extend(
                    [*states, int(following)],
                    [*actions, action],
                    [*rewards, UNBIASED_REWARD[state, action, following]],
                    probability * step,
                )

    extend([0], [], [], 1.0)
    return finished


def padded_batch(episodes):
    """Stack episodes as sample_episodes does: -1 actions and 0 rewards after the end."""
    count = len(episodes)
    states = np.full((count, HORIZON + 1), 3, dtype=np.int64)
    actions = np.full((count, HORIZON), -1, dtype=np.int64)
    rewards = np.zeros((count, HORIZON))
    for n, (s, a, r, _) in enumerate(episodes):
        states[n, : len(s)] = s
        actions[n, : len(a)] = a
        rewards[n, : len(r)] = r
    return states, actions, rewards


def objective(logits, gamma):
    """J(theta) = E[sum_t gamma^t r_t] by backward induction over the three acting states."""
    policy = softmax_rows(logits)
    values = np.zeros(4)
    for state in (2, 1, 0):
        action_values = np.einsum(
            "at,at->a",
            UNBIASED_TRANSITION[state],
            UNBIASED_REWARD[state] + gamma * values,
        )
        values[state] = policy[state] @ action_values
    return values[0]


def enumerated_cases(rng, count=2):
    """All episodes of the MDP above, at random logits, for both forms and gamma 1 and 0.9."""
    cases = []
    for _ in range(count):
        logits = rng.normal(size=(4, 2))
        states, actions, rewards = padded_batch(all_episodes(logits))
        for gamma, reward_to_go in itertools.product((1.0, 0.9), (True, False)):
            cases.append(
                {
                    "logits": logits,
                    "states": states,
                    "actions": actions,
                    "rewards": rewards,
                    "gamma": gamma,
                    "reward_to_go": reward_to_go,
                }
            )
    return cases


def is_unbiased(estimates, case):
    """sum_episodes p(episode) estimate = grad J, the gradient by central differences."""
    logits, gamma = case["logits"], case["gamma"]
    episodes = all_episodes(logits)
    if estimates.shape != (len(episodes), 4, 2):
        return f"expected shape {(len(episodes), 4, 2)}, got {estimates.shape}"
    probabilities = np.array([episode[3] for episode in episodes])
    mean = np.tensordot(probabilities, estimates, axes=1)
    gradient = np.zeros_like(logits)
    eps = 1e-6
    for index in np.ndindex(logits.shape):
        step = np.zeros_like(logits)
        step[index] = eps
        gradient[index] = (objective(logits + step, gamma) - objective(logits - step, gamma)) / (
            2 * eps
        )
    gap = float(np.max(np.abs(mean - gradient)))
    return gap <= 1e-7 or f"the expected estimate differs from grad J by up to {gap:.3g}"


def rows_sum_to_zero(estimates, case):
    """Each row of a softmax score sums to zero, and so does every weighted sum of scores; and
    an episode whose rewards are not all zero has an estimate that is not zero (its first step
    is weighted by G_0, and random rewards make a cancellation impossible), which an estimate
    of all zeros misses."""
    total = float(np.max(np.abs(estimates.sum(axis=-1)), initial=0.0))
    if total > 1e-9:
        return f"a row of an estimate sums to {total:.3g}, not 0"
    rewards = np.asarray(case["rewards"])
    if estimates.ndim != 3 or estimates.shape[0] != rewards.shape[0]:
        return f"expected one estimate per episode, got shape {estimates.shape}"
    for episode in range(rewards.shape[0]):
        if np.any(rewards[episode] != 0) and not np.any(estimates[episode] != 0):
            return f"episode {episode} has rewards but its estimate is zero"
    return True


def random_batches(rng, longest=6):
    """Batches of episodes of a random MDP (some ended early, some cut by the horizon)."""
    cases = []
    for num_states, num_actions, horizon in ((3, 2, 2), (5, 3, longest), (4, 2, longest)):
        logits = rng.normal(size=(num_states, num_actions))
        count = 6
        states = rng.integers(num_states, size=(count, horizon + 1))
        actions = rng.integers(num_actions, size=(count, horizon))
        rewards = rng.normal(size=(count, horizon))
        for n in range(count):
            length = int(rng.integers(1, horizon + 1))
            actions[n, length:] = -1
            rewards[n, length:] = 0.0
            states[n, length + 1 :] = states[n, length]
        cases.append(
            {
                "logits": logits,
                "states": states,
                "actions": actions,
                "rewards": rewards,
                "gamma": float(rng.uniform(0.5, 1.0)),
                "reward_to_go": bool(rng.integers(2)),
            }
        )
    return cases


def both_forms(rng):
    """The same batch with both forms and gamma at 0 and 1."""
    (case, *_) = random_batches(rng)
    return [
        {**case, "gamma": gamma, "reward_to_go": form}
        for gamma in (0.0, 1.0)
        for form in (True, False)
    ]


# The chapter's conversation: answer (rated good), then clarify (rated bad).
CHAPTER_EPISODE = {
    "logits": np.log(np.array([[0.5, 0.5], [0.8, 0.2], [0.4, 0.6], [0.5, 0.5], [0.5, 0.5]])),
    "states": np.array([[0, 1, 4]]),
    "actions": np.array([[0, 1]]),
    "rewards": np.array([[1.0, 0.0]]),
    "gamma": 1.0,
}

EXERCISE = Exercise(
    id="reward-to-go-reinforce",
    title="REINFORCE from the total return and from the reward-to-go",
    chapter=3,
    stars=2,
    solution=BOOK_SOLUTIONS / "reward_to_go_reinforce.py",
    functions=[
        Function(
            name="reinforce_estimates",
            parameters="logits, states, actions, rewards, gamma, reward_to_go",
        )
    ],
    checks=[
        Answer(
            name="chapter-episode-reward-to-go",
            function="reinforce_estimates",
            kwargs={**CHAPTER_EPISODE, "reward_to_go": True},
            expected=[[[0.5, -0.5], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]],
            description="The chapter's episode with the reward-to-go: only turn 1 is credited.",
        ),
        Answer(
            name="chapter-episode-total",
            function="reinforce_estimates",
            kwargs={**CHAPTER_EPISODE, "reward_to_go": False},
            expected=[[[0.5, -0.5], [-0.8, 0.8], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]],
            description="The chapter's episode with the total return: both turns get G_0 = 1.",
        ),
        Compare(
            name="random-batches",
            function="reinforce_estimates",
            inputs=random_batches,
            points=2,
            description="Matches the reference on random padded batches.",
        ),
        Compare(
            name="edge-gammas",
            function="reinforce_estimates",
            inputs=both_forms,
            description="Both forms with gamma = 0 and gamma = 1.",
        ),
        Property(
            name="unbiased",
            function="reinforce_estimates",
            inputs=enumerated_cases,
            holds=is_unbiased,
            points=2,
            description="Averaged over all episodes, both forms equal grad J.",
        ),
        Property(
            name="rows-sum-to-zero",
            function="reinforce_estimates",
            inputs=random_batches,
            holds=rows_sum_to_zero,
            description="Every row of every estimate sums to zero (and rewards give estimates).",
        ),
        Raises(
            name="padding-inside",
            function="reinforce_estimates",
            kwargs={**CHAPTER_EPISODE, "actions": np.array([[-1, 1]]), "reward_to_go": True},
            description="-1 before a real action raises ValueError.",
        ),
        Raises(
            name="rewards-shape",
            function="reinforce_estimates",
            kwargs={
                **CHAPTER_EPISODE,
                "rewards": np.array([[1.0, 0.0, 0.0]]),
                "reward_to_go": True,
            },
            description="rewards with the wrong shape raise ValueError.",
        ),
    ],
    manual=[
        Manual(
            name="causality-proof",
            points=2,
            description=(
                "Prove that E[r_k grad log pi(a_t | h_t)] = 0 for k < t, so both forms are "
                "unbiased."
            ),
        ),
        Manual(
            name="counterexample",
            points=2,
            description=(
                "An MDP where the total-return form has the smaller variance, with an explanation."
            ),
        ),
    ],
)
