"""Imports the reference library instead of writing the functions: ModuleNotFoundError."""

from rlfound.advantages import gae_explicit, gae_recursive

__all__ = ["gae_explicit", "gae_recursive"]
