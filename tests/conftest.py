"""Shared pytest configuration: hypothesis profiles that keep the property tests fast.

``rlfound`` is used locally and in CI (50 examples per property, no per-example deadline,
because a loaded 2-core CI machine makes wall-clock deadlines flaky). ``thorough`` is for a
deliberate deep run: ``pytest --hypothesis-profile=thorough``.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "rlfound",
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("rlfound")
