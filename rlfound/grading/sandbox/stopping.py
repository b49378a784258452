"""Stopping the grader on SIGTERM or SIGINT with the clean-up of a normal exit.

A fatal signal's default action ends the process at once: no ``finally`` block and no
:mod:`atexit` hook runs, so the private root (:mod:`rlfound.grading.sandbox.runtime`), the
workers' temporary folders and control groups stay, and a worker user's processes keep
running. :func:`stop_on_signals` makes both signals raise :class:`Stopped` in the main
thread instead, so the normal clean-up runs and the command exits with the conventional
status (``128 + N``: 130 for SIGINT, 143 for SIGTERM).

Python runs signal handlers in the main thread only, between two of its bytecodes: one that
raises could interrupt the grader's own clean-up of a worker half-way. So the grading itself
runs in other threads (:func:`run`, the batch's thread pool) while the main thread only waits;
the main thread gets :class:`Stopped` while it waits, asks every worker to stop
(:func:`stop_workers`) and waits for the threads, which raise :class:`Stopped` at their next
check of the flag (:func:`check`: before a worker starts, and every
:data:`~rlfound.grading.sandbox.inside.protocol.POLL_SECONDS` while one runs) and close their
worker on the way out, as at the end of any submission.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

from rlfound.grading.sandbox import runtime

__all__ = [
    "SIGNALS",
    "Stopped",
    "check",
    "request_stop",
    "run",
    "stop_on_signals",
    "stop_workers",
    "stopping",
]

#: The signals that stop the grader with its clean-up.
SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: The signals received (the first is reported), and whether a stop was requested. Plain
#: lists, not a threading.Event: the handler runs between two bytecodes of the main thread,
#: which may be holding the Event's lock at that moment.
_received: list[int] = []
_stop: list[bool] = []
_T = TypeVar("_T")


class Stopped(BaseException):
    """The grader was asked to stop (by ``signum``, or 0 for a request without a signal).

    It derives from BaseException, like KeyboardInterrupt, so that no failure boundary
    (``except Exception``) turns it into a student's zero.
    """

    def __init__(self, signum: int = 0):
        self.signum = signum
        super().__init__(f"the grader was stopped by {self.name}")

    @property
    def name(self) -> str:
        """The signal's name (``SIGTERM``), or ``a request`` when there was none."""
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return "a request"

    @property
    def status(self) -> int:
        """The conventional exit status of a command ended by this signal: ``128 + N``."""
        return 128 + self.signum if self.signum else 1


def request_stop(signum: int = 0) -> None:
    """Ask every worker of this process to stop (see :func:`check`) until the process ends,
    or :func:`stop_on_signals` is left."""
    if signum:
        _received.append(signum)
    _stop.append(True)


@contextlib.contextmanager
def stop_workers() -> Iterator[None]:
    """Within the block, every worker of this process stops at its next :func:`check`.

    For the thread that gives up grading threads (a signal, a Ctrl-C) while it waits for
    them to end. After the block the request is withdrawn, unless it was made before (by a
    signal, which ends the command): a program that caught a KeyboardInterrupt can grade
    again.
    """
    before = bool(_stop)
    request_stop()
    try:
        yield
    finally:
        if not before:
            _stop.clear()


def stopping() -> bool:
    """Whether a stop was requested."""
    return bool(_stop)


def check() -> None:
    """Raise :class:`Stopped` if a stop was requested.

    Raises
    ------
    Stopped
        Carrying the first signal received, if any.
    """
    if _stop:
        raise Stopped(_received[0] if _received else 0)


def _handler(signum, frame) -> None:
    first = not _stop
    request_stop(signum)
    # Only the first signal raises: a second one (an impatient Ctrl-C) must not interrupt the
    # clean-up the first started; the clean-up is bounded, so it ends anyway.
    if first:
        raise Stopped(signum)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGINT raise :class:`Stopped` in the main thread.

    A signal the process inherited as ignored (``nohup``, a background job of a script)
    stays ignored, as Python itself leaves an ignored SIGINT. Outside the main thread (where
    Python cannot set handlers) the block runs unchanged. For a command's main function:
    on leaving after a signal, the private root is removed
    (:func:`~rlfound.grading.sandbox.runtime.remove_base`) and both signals stay ignored
    until the process exits, which it is about to; on leaving without one, the previous
    handlers are back. The stop flag is cleared in both cases, so a process that grades again
    (the tests) starts afresh.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in SIGNALS}
    try:
        for signum, handler in previous.items():
            if handler is not signal.SIG_IGN:
                signal.signal(signum, _handler)
        yield
    finally:
        stopped = bool(_received)
        if stopped:
            # Remove the private root now rather than at exit, while the handler still
            # ignores a second signal.
            runtime.remove_base()
        for signum, handler in previous.items():
            if stopped:
                # The command ends: no second signal (an impatient Ctrl-C) may cut what is left
                # of its exit, or turn its status into death by the signal.
                signal.signal(signum, signal.SIG_IGN)
            else:
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        _stop.clear()
        _received.clear()


def run(function: Callable[..., _T], *args, **kwargs) -> _T:
    """``function(*args, **kwargs)`` in a thread of its own while this thread waits for it.

    If the wait ends with an exception (:class:`Stopped` from a signal, a KeyboardInterrupt,
    or what ``function`` raised), the other thread is asked to stop and waited for before the
    exception goes on, so that its worker has been closed.
    """
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(function, *args, **kwargs)
        try:
            return future.result()
        except BaseException:
            with stop_workers():
                pool.shutdown(wait=True)
            raise
