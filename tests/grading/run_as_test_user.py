"""Run pytest on the grader's tests as an unprivileged test user (CI runs it as root).

::

    .venv/bin/python tests/grading/run_as_test_user.py tests/grading [pytest options]

The test user (``rlfound-tester``) is created if missing; where the interpreter sits in a
folder other users cannot enter (``/root/.pyenv``), pytest runs in a private mount namespace
in which that folder is the grader's private root (see ``non_root_runner`` in
``_grading_helpers.py``). Its temporary folders go to a folder of its own, removed afterward.
Exit status: pytest's, or 0 with the reason on stderr when no test user can be arranged.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    sys.path[:0] = [str(HERE), str(HERE.parents[1])]
    from _grading_helpers import REPO, TEST_USER, chown_tree, non_root_runner

    prefix, reason = non_root_runner()
    if prefix is None:
        print(f"skipped: no unprivileged test user here: {reason}", file=sys.stderr)
        return 0
    home = Path(tempfile.mkdtemp(prefix="rlfound-test-user-"))
    try:
        os.chmod(home, 0o755)
        chown_tree(home, TEST_USER)
        environment = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": str(home),
            "TMPDIR": str(home),
        }
        for name in ("RLFOUND_NO_BWRAP", "RLFOUND_NO_CGROUPS"):
            if name in os.environ:
                environment[name] = os.environ[name]
        command = [*prefix, sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
        command += [f"--basetemp={home / 'pytest'}", *argv]
        return subprocess.run(command, cwd=REPO, env=environment, check=False).returncode
    finally:
        from rlfound.grading.intake.files import remove_tree

        remove_tree(home)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
