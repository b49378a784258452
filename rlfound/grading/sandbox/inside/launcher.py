"""Start a worker in a private root, as an unprivileged user (the root fallback).

This file is not imported by the grader: the grader (root) runs it as a script with
``python -I -S launcher.py CONFIG``, and it turns itself into the worker. In order, it

* asks the kernel to grant no new privileges to it or its children (``PR_SET_NO_NEW_PRIVS``:
  a set-user-id program would run without them);
* changes its root to the private root the grader built (:mod:`rlfound.grading.sandbox.runtime`):
  the interpreter, its standard library, NumPy and the libraries they load, the worker's
  script, and one empty folder per worker; no reference solution, no grader code, no
  submissions folder, no results, no ``/proc``;
* leaves every supplementary group, then sets its group and user ids (real, effective and
  saved) to the worker user's, and checks it cannot get root back;
* executes the worker's interpreter inside that root.

Anything that goes wrong ends it with status 127 before a student's code exists.
"""

import json
import os
import sys


def main():
    config = json.loads(sys.argv[1])
    uid, gid = int(config["uid"]), int(config["gid"])
    if uid == 0 or gid == 0:
        raise SystemExit("launcher: refusing to run a worker as root")
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    except Exception:
        pass
    os.chroot(config["root"])
    os.chdir(config["cwd"])
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid) or os.getgroups():
        raise SystemExit("launcher: could not drop privileges")
    try:
        os.setuid(0)
    except PermissionError:
        pass
    else:
        raise SystemExit("launcher: root could be regained")
    os.umask(0o077)
    argv = config["argv"]
    os.execve(argv[0], argv, dict(os.environ))


if __name__ == "__main__":
    try:
        main()
    except BaseException as error:  # reported in the worker's output, before student code
        sys.stderr.write(f"launcher: {type(error).__name__}: {error}\n")
        sys.stderr.flush()
        os._exit(127)
