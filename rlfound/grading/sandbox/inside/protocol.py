"""The wire format between the grader and its worker: framed, tagged, strict JSON.

Both sides of the pipe use this module: the parent imports it as
``rlfound.grading.sandbox.inside.protocol`` and the worker gets a copy next to its script (the
worker cannot import ``rlfound``). It
depends on the standard library only; NumPy is imported inside the functions that need it so
that the parent can frame and parse messages without it.

A message is an 8-byte big-endian length followed by that many bytes of UTF-8 JSON. JSON is
written with ``allow_nan=False`` and read with a ``parse_constant`` that refuses ``NaN`` and
``Infinity``, so a non-finite number only travels in an explicit tag:

* ``{"__float__": "nan" | "inf" | "-inf"}`` for a non-finite float;
* ``{"__ndarray__": {"dtype": ..., "shape": [...], "data": [...]}}`` for an array, ``data``
  flat in C order with non-finite entries tagged as above.

Nothing here unpickles or evaluates anything: a value is numbers, booleans, lists and those
two tags, and :func:`to_float64` turns whatever the worker claims into an exact ``float64``
ndarray or raises :class:`ProtocolError`.
"""

from __future__ import annotations

import json
import math
import os
import select
import struct
import time

#: Largest message either side accepts; a bigger length prefix kills the worker.
MAX_MESSAGE_BYTES = 32 * 1024 * 1024
#: Largest number of elements in one returned array.
MAX_ELEMENTS = 2_000_000
#: Deepest nesting of lists accepted in a returned value.
MAX_DEPTH = 8
#: Longest wait between two calls of a reader's ``poll`` function.
POLL_SECONDS = 0.1
#: Array dtypes that may travel; everything else is refused by the sender and the receiver.
DTYPES = ("float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool")

_HEADER = struct.Struct(">Q")
_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class ProtocolError(Exception):
    """A message that breaks the framing, the JSON rules, the size caps or the schema."""


class Timeout(Exception):
    """No complete message arrived before the deadline."""


class Closed(Exception):
    """The other end closed the pipe (the worker exited or was killed)."""


# ---------------------------------------------------------------- encoding


def _tag_float(x: float):
    if math.isfinite(x):
        return x
    return {"__float__": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}


def encode_value(value):
    """Turn an argument or a result into tagged JSON-ready data.

    Accepts exactly: ``None``, ``bool``, ``int``, ``float``, NumPy scalars of a numeric type,
    plain ``numpy.ndarray`` (``type(x) is numpy.ndarray``, not a subclass) of a dtype in
    :data:`DTYPES`, and lists and tuples of those. The checks use ``type(x) is``, never
    ``isinstance``, so a subclass with lying methods (``__eq__``, ``__array_ufunc__``,
    ``__reduce__``, ``__float__``) is refused rather than trusted.

    Raises
    ------
    TypeError
        For any other type; the message names the type.
    """
    return _encode(value, 0)


def _encode(value, depth):
    if depth > MAX_DEPTH:
        raise TypeError(f"value is nested more than {MAX_DEPTH} levels deep")
    kind = type(value)
    if value is None or kind is bool:
        return value
    if kind is int:
        return _tag_float(float(value)) if abs(value) > 2**53 else value
    if kind is float:
        return _tag_float(value)
    if kind is list or kind is tuple:
        return [_encode(item, depth + 1) for item in value]
    import numpy as np

    if kind in (np.float64, np.float32, np.float16):
        return _tag_float(float(value))
    if kind in (np.int64, np.int32, np.int16, np.int8, np.uint8, np.uint16, np.uint32):
        return int(value)
    if kind is np.bool_:
        return bool(value)
    if kind is np.ndarray:
        name = value.dtype.name
        if name not in DTYPES:
            raise TypeError(f"unsupported array dtype {name}")
        if value.size > MAX_ELEMENTS:
            raise TypeError(f"array has {value.size} elements; at most {MAX_ELEMENTS}")
        flat = np.ascontiguousarray(value).reshape(-1).tolist()
        if value.dtype.kind == "f":
            flat = [_tag_float(x) for x in flat]
        return {"__ndarray__": {"dtype": name, "shape": list(value.shape), "data": flat}}
    raise TypeError(f"unsupported type {kind.__module__}.{kind.__qualname__}")


def dumps(message) -> bytes:
    """Serialize an already-encoded message to one frame (header + strict JSON)."""
    body = json.dumps(message, allow_nan=False, separators=(",", ":")).encode()
    if len(body) > MAX_MESSAGE_BYTES:
        raise ProtocolError(f"message of {len(body)} bytes exceeds {MAX_MESSAGE_BYTES}")
    return _HEADER.pack(len(body)) + body


# ---------------------------------------------------------------- decoding


def _refuse_constant(name):
    raise ProtocolError(f"untagged non-finite number {name} in message")


def loads(body: bytes):
    """Parse one frame's body: strict JSON, no bare NaN or Infinity."""
    try:
        return json.loads(body.decode("utf-8"), parse_constant=_refuse_constant)
    except ProtocolError:
        raise
    except (ValueError, RecursionError, UnicodeDecodeError) as error:
        raise ProtocolError(f"malformed JSON: {type(error).__name__}") from None


def _scalar(item):
    """A number from the wire: int, float or a tagged non-finite float; never bool-as-dict."""
    kind = type(item)
    if kind is int or kind is float or kind is bool:
        return item
    if kind is dict and set(item) == {"__float__"} and item["__float__"] in _NONFINITE:
        return _NONFINITE[item["__float__"]]
    raise ProtocolError(f"expected a number, got {kind.__name__}")


def decode_value(data, *, depth=0):
    """Turn tagged JSON data back into Python numbers, lists and NumPy arrays.

    The inverse of :func:`encode_value`. Arrays keep their dtype (the worker uses that for
    arguments such as integer action indices); lists stay lists.

    Raises
    ------
    ProtocolError
        If the data does not follow the schema.
    """
    import numpy as np

    if depth > MAX_DEPTH:
        raise ProtocolError(f"value nested more than {MAX_DEPTH} levels deep")
    kind = type(data)
    if data is None:
        return None
    if kind is list:
        return [decode_value(item, depth=depth + 1) for item in data]
    if kind is dict and set(data) == {"__ndarray__"}:
        spec = data["__ndarray__"]
        if type(spec) is not dict or set(spec) != {"dtype", "shape", "data"}:
            raise ProtocolError("array tag needs exactly dtype, shape and data")
        dtype, shape, flat = spec["dtype"], spec["shape"], spec["data"]
        if dtype not in DTYPES:
            raise ProtocolError(f"array dtype {dtype!r} is not allowed")
        if (
            type(shape) is not list
            or len(shape) > MAX_DEPTH
            or any(type(n) is not int or n < 0 for n in shape)
        ):
            raise ProtocolError("array shape must be a short list of non-negative integers")
        if type(flat) is not list or math.prod(shape) != len(flat) or len(flat) > MAX_ELEMENTS:
            raise ProtocolError("array data does not match its shape")
        values = [_scalar(item) for item in flat]
        try:
            return np.array(values, dtype=dtype).reshape(shape)
        except (OverflowError, ValueError) as error:
            raise ProtocolError(f"array data does not fit {dtype}: {error}") from None
    return _scalar(data)


def to_float64(data):
    """Coerce a value received from the worker to an exact ``float64`` ndarray.

    Scalars become 0-d arrays, nested lists become arrays if they are rectangular. Shapes are
    kept exactly as sent: the caller compares shapes before anything can broadcast.

    Raises
    ------
    ProtocolError
        If the data is not a number, a rectangular nesting of numbers or an array tag, or
        holds more than :data:`MAX_ELEMENTS` numbers.
    """
    import numpy as np

    value = decode_value(data)
    if value is None:
        raise ProtocolError("the function returned None")
    try:
        array = np.array(value, dtype=np.float64)
    except (ValueError, TypeError, OverflowError):
        raise ProtocolError("returned lists are ragged or not numeric") from None
    if type(array) is not np.ndarray or array.size > MAX_ELEMENTS:
        raise ProtocolError("returned value is too large")
    return array


# ---------------------------------------------------------------- framing over file descriptors


def write_frame(fd: int, message, deadline: float | None = None) -> None:
    """Write one message to a file descriptor, retrying short writes.

    With a ``deadline`` the descriptor must be non-blocking: a reader that stops reading
    then costs a :class:`Timeout`, not a parent blocked forever. A closed reader raises
    :class:`Closed`.
    """
    view = memoryview(dumps(message))
    try:
        while view:
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise Timeout
                _, ready, _ = select.select([], [fd], [], remaining)
                if not ready:
                    raise Timeout
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                continue
            view = view[written:]
    except (BrokenPipeError, ConnectionResetError):
        raise Closed from None


def _read_exact(fd: int, count: int, deadline: float | None, poll=None) -> bytes:
    chunks = []
    while count:
        if deadline is not None:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise Timeout
                if poll is not None:
                    remaining = min(remaining, POLL_SECONDS)
                ready, _, _ = select.select([fd], [], [], remaining)
                if ready:
                    break
                if poll is None:
                    raise Timeout
                poll()  # nothing to read yet: check the limits, then wait again
        chunk = os.read(fd, min(count, 1 << 20))
        if not chunk:
            raise Closed
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, deadline: float | None = None, poll=None):
    """Read and parse one message; ``deadline`` is a ``time.monotonic()`` value or None.

    With a ``deadline``, ``poll`` (if given) is called at least every :data:`POLL_SECONDS`
    while the message is awaited; whatever it raises ends the wait (the grader's per-check
    CPU-time limit uses it).

    Raises
    ------
    Timeout
        If the message is not complete by the deadline.
    Closed
        If the pipe reaches end of file.
    ProtocolError
        If the length prefix exceeds :data:`MAX_MESSAGE_BYTES` or the body is not strict JSON.
    """
    (length,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline, poll))
    if length > MAX_MESSAGE_BYTES:
        raise ProtocolError(f"message of {length} bytes exceeds {MAX_MESSAGE_BYTES}")
    return loads(_read_exact(fd, length, deadline, poll))
