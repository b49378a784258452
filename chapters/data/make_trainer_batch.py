"""Generate ``trainer_batch.npz``: a training batch as a trainer would export it (chapter 13).

The batch imitates one step of an asynchronous GRPO-style trainer for a tool-using agent:
two prompts with three episodes each; every episode is a system prompt, a user message and
one to three turns, each a policy action followed by a tool observation (none after the last
one); the turns were sampled by policy versions 11 and 12 (one episode switches version
between turns); the learner is at version 12. The "policy" is a bigram model over 64 token
ids, so every recorded log-probability is the exact log-probability of the sampled token
under the version that sampled it, and a reference model supplies ``ref_logprobs``. Each
tool call costs 0.05 and a solved task pays 1 at its last turn; the advantage of an episode
is its total reward normalized within its prompt's group, copied to every policy token.

The arrays are stored as a PyTorch trainer exports them with ``tensor.cpu().numpy()``:
masks as int64 0/1, floating-point fields as float32, left padding, per-token versions, and
an extra ``position_ids`` field. Everything is seeded, so running the script again writes
the same arrays (tests/chapters/ch13/test_chapter13_claims.py checks that the shipped file equals a
fresh one):

    python chapters/data/make_trainer_batch.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rlfound import contract, distributions, groups

VOCAB = 64
SEED = 20_260_113
PATH = Path(__file__).resolve().parent / "trainer_batch.npz"
LEARNER_VERSION = 12


def bigram_tables(rng):
    """Logit tables (row: previous token) of policy versions 11 and 12 and of the reference."""
    base = rng.normal(0.0, 1.5, size=(VOCAB, VOCAB))
    reference = base + rng.normal(0.0, 0.3, size=base.shape)
    version_11 = base + rng.normal(0.0, 0.2, size=base.shape)
    version_12 = version_11 + rng.normal(0.0, 0.1, size=base.shape)
    return {11: version_11, 12: version_12}, reference


def sample_turn(rng, table, reference, previous, size):
    """Sample ``size`` tokens from a bigram table after token ``previous``; return the tokens,
    their log-probabilities under the sampler and under the reference."""
    tokens, logprobs, ref_logprobs = [], [], []
    for _ in range(size):
        probs = distributions.softmax(table[previous])
        token = int(rng.choice(VOCAB, p=probs))
        logprobs.append(float(distributions.log_softmax(table[previous])[token]))
        ref_logprobs.append(float(distributions.log_softmax(reference[previous])[token]))
        tokens.append(token)
        previous = token
    return tokens, logprobs, ref_logprobs


def make_episodes(rng):
    tables, reference = bigram_tables(rng)
    system = rng.integers(0, VOCAB, size=5).tolist()
    episodes, outcomes = [], []
    for prompt in range(2):
        user = rng.integers(0, VOCAB, size=6).tolist()
        for sample in range(3):
            segments = [{"kind": "system", "tokens": system}, {"kind": "user", "tokens": user}]
            switches = prompt == 1 and sample == 0
            turns = 3 if switches else int(rng.integers(1, 4))
            # Asynchronous sampling: most episodes by one version, one switches mid-episode.
            versions = [11 + (prompt + sample) % 2] * turns
            if switches:
                versions = [11] * (turns - 1) + [12]
            rewards = []
            for turn, version in enumerate(versions):
                previous = segments[-1]["tokens"][-1]
                size = int(rng.integers(4, 10))
                tokens, logprobs, ref_logprobs = sample_turn(
                    rng, tables[version], reference, previous, size
                )
                segments.append(
                    {
                        "kind": "policy",
                        "tokens": tokens,
                        "logprobs": logprobs,
                        "ref_logprobs": ref_logprobs,
                        "version": version,
                    }
                )
                last = turn == turns - 1
                if last:
                    rewards.append(float(rng.random() < 0.5))
                else:
                    segments.append(
                        {
                            "kind": "tool",
                            "tokens": rng.integers(0, VOCAB, size=int(rng.integers(3, 7))).tolist(),
                        }
                    )
                    rewards.append(-0.05)
            episodes.append({"segments": segments, "rewards": rewards})
            outcomes.append(sum(rewards))
    return episodes, np.array(outcomes).reshape(2, 3)


def make_batch():
    """The exported batch: a dict of arrays in a trainer's dtypes."""
    rng = np.random.default_rng(SEED)
    episodes, outcomes = make_episodes(rng)
    batch = contract.build_batch(episodes, padding_side="left")
    # GRPO: one advantage per episode, normalized within its prompt's group, on every token.
    advantages = groups.group_normalized_advantages(outcomes).reshape(-1)
    batch["advantages"] = np.where(batch["action_mask"], advantages[:, None], 0.0)
    attention = batch["attention_mask"].astype(np.int64)
    exported = {
        name: (
            value.astype(np.int64)
            if value.dtype == bool
            else value.astype(np.float32)
            if value.dtype == np.float64
            else value
        )
        for name, value in batch.items()
    }
    # Left padding: positions count the valid tokens (as OpenRLHF computes them).
    exported["position_ids"] = np.maximum(np.cumsum(attention, axis=1) - 1, 0)
    return exported


def write_batch():
    np.savez(PATH, **make_batch())
    print(f"wrote {PATH}")


if __name__ == "__main__":
    write_batch()
