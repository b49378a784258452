"""Start a process with the primitive subprocess uses, spliced into the fixtures that need it by
``_grading_helpers.hostile_source`` where they read ``from _parts.spawn import _spawn``."""

import os
import sys


def _spawn(code):
    """Start ``python -c code`` with the primitive subprocess uses, which raises no audit
    event, with an empty environment (no worker token) and in a session of its own."""
    import _posixsubprocess

    argv = [sys.executable, "-I", "-S", "-c", code]
    read_end, write_end = os.pipe()
    arguments = [
        argv,
        (os.fsencode(sys.executable),),
        True,
        (write_end,),
        None,
        [],
        -1,
        -1,
        -1,
        -1,
        -1,
        -1,
        read_end,
        write_end,
        True,
        True,
    ]
    # The signature changed across Python versions: try each known form.
    tails = (
        [-1, None, None, None, -1, None, True],
        [-1, None, None, None, -1, None],
        [None, None, None, -1, None],
    )
    try:
        for tail in tails:
            try:
                return _posixsubprocess.fork_exec(*arguments, *tail)
            except TypeError:
                continue
        return None
    except OSError:
        return None
    finally:
        os.close(read_end)
        os.close(write_end)
