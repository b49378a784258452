"""Start a worker in a private root, as an unprivileged user (the root fallback).

This file is not imported by the grader: the grader (root) runs it as a script with
``python -I -S launcher.py CONFIG``, and it turns itself into the worker. In order, it

* asks the kernel to grant no new privileges to it or its children (``PR_SET_NO_NEW_PRIVS``:
  a set-user-id program would run without them);
* moves into an IPC namespace of its own (``unshare(CLONE_NEWIPC)``, which needs root): the
  System V shared memory, semaphores and message queues the submission makes are then
  destroyed with its last process, and it sees none of the machine's. Where the kernel
  refuses (a container without ``CAP_SYS_ADMIN``) it goes on in the machine's namespace, and
  the grader removes what the worker user leaves (:mod:`rlfound.grading.sandbox.ipc`);
* changes its root to the private root the grader built (:mod:`rlfound.grading.sandbox.runtime`):
  the interpreter, its standard library, NumPy and the libraries they load, the worker's
  script, and one empty folder per worker; no reference solution, no grader code, no
  submissions folder, no results, no ``/proc``;
* leaves every supplementary group, then sets its group and user ids (real, effective and
  saved) to the worker user's, and checks it cannot get root back;
* executes the worker's interpreter inside that root.

Anything that goes wrong ends it with status 127 before a student's code exists.

Default mode (the grader is not root) runs it with a configuration that holds only ``argv``
and ``ipc``: it then only moves into an IPC namespace of its own, inside a user namespace in
which its user is itself (an unprivileged process may make both where the kernel allows user
namespaces), and executes the worker.
"""

import json
import os
import sys

CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000


def private_ipc() -> bool:
    """Move into an IPC namespace of one's own; False where the kernel refuses one."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if os.geteuid() == 0:
        return libc.unshare(CLONE_NEWIPC) == 0
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWIPC) != 0:
        return False
    # The only mapping an unprivileged process may write: its own user and group, so that
    # the worker keeps its identity (an unmapped user could not even create a file).
    for name, line in (
        ("setgroups", "deny"),
        ("uid_map", f"{uid} {uid} 1"),
        ("gid_map", f"{gid} {gid} 1"),
    ):
        with open(f"/proc/self/{name}", "w") as handle:
            handle.write(line)
    return True


def main():
    config = json.loads(sys.argv[1])
    if "root" not in config:  # default mode: a private IPC namespace, if any, and nothing else
        if config.get("ipc"):
            private_ipc()
        argv = config["argv"]
        os.execve(argv[0], argv, dict(os.environ))
    uid, gid = int(config["uid"]), int(config["gid"])
    if uid == 0 or gid == 0:
        raise SystemExit("launcher: refusing to run a worker as root")
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    except Exception:
        pass
    if config.get("ipc"):
        private_ipc()  # before chroot (no /proc there) and while still root
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
