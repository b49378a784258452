"""The course secret: the seed of the graded-only checks' inputs.

Graded-only checks draw their inputs from a seed. With the public default (0) anyone who has
the repository can compute those inputs and their expected outputs, so ``rlfound grade`` and
``rlfound gradescope`` refuse to run graded-only checks without a seed of the course's own,
unless told the public seed is meant (``--public-seed``, for practice runs). The seed comes
from, in order: ``--seed S``; the environment variable :data:`SEED_VARIABLE`; the course
secret file that ``rlfound secret`` creates once per teaching team (:func:`secret_path`).
The same seed regrades identically, so keep the file (and share it with co-instructors).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = [
    "PUBLIC_DEFAULT",
    "SECRET_VARIABLE",
    "SEED_VARIABLE",
    "create_secret",
    "read_secret",
    "resolve_seed",
    "secret_path",
]

#: The seed anyone can read in the repository.
PUBLIC_DEFAULT = 0
#: Environment variable holding the seed itself.
SEED_VARIABLE = "RLFOUND_SEED"
#: Environment variable naming another secret file.
SECRET_VARIABLE = "RLFOUND_SECRET_FILE"


def secret_path() -> Path:
    """Where the course secret lives: ``$RLFOUND_SECRET_FILE``, else
    ``$XDG_CONFIG_HOME/rlfound/course-secret`` (``~/.config/rlfound/course-secret``)."""
    named = os.environ.get(SECRET_VARIABLE)
    if named:
        return Path(named)
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "rlfound" / "course-secret"


def _parse(text: str, where: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError(f"{where} must hold a non-negative integer seed; got {text!r}") from None
    if value < 0:
        raise ValueError(f"{where} must hold a non-negative integer seed; got {value}")
    return value


def create_secret(path: Path | None = None, *, force: bool = False) -> tuple[Path, int]:
    """Write a new random seed (63 bits) to the course secret file, readable by its owner
    only; return the path and the seed.

    Raises
    ------
    FileExistsError
        If the file exists and ``force`` is not set: replacing it changes every hidden input.
    """
    path = Path(path) if path is not None else secret_path()
    seed = secrets.randbits(63)
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if force else os.O_EXCL)
    descriptor = os.open(path, flags, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(f"{seed}\n")
    os.chmod(path, 0o600)
    return path, seed


def read_secret(path: Path | None = None) -> int | None:
    """The seed in the course secret file, or None if there is none."""
    path = Path(path) if path is not None else secret_path()
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    return _parse(text, f"the course secret {path}")


def resolve_seed(seed: int | None, *, public_seed: bool = False) -> tuple[int, str]:
    """The grading seed and where it came from.

    Raises
    ------
    ValueError
        If no course seed is set and ``public_seed`` is not given, saying why and how to set
        one; or if ``RLFOUND_SEED`` or the secret file does not hold a non-negative integer.
    """
    if seed is not None:
        return seed, "--seed"
    if public_seed:
        return PUBLIC_DEFAULT, "--public-seed (the public default: not for credit)"
    from_environment = os.environ.get(SEED_VARIABLE)
    if from_environment:
        return _parse(from_environment, SEED_VARIABLE), SEED_VARIABLE
    from_file = read_secret()
    if from_file is not None:
        return from_file, f"the course secret {secret_path()}"
    raise ValueError(
        "the graded-only checks draw their inputs from a course secret, and none is set: with "
        "the public default seed anyone with the repository can compute those inputs and their "
        "answers. Create one once with `rlfound secret` (it writes "
        f"{secret_path()}), or pass --seed S or set {SEED_VARIABLE}; pass --public-seed to "
        "grade with the public seed anyway (practice, not credit)"
    )
