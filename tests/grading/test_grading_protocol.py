"""The wire format: strict JSON, tagged non-finite numbers and arrays, caps and schema."""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest

from rlfound.grading.sandbox.inside import protocol


def roundtrip(value):
    return protocol.loads(protocol.dumps(protocol.encode_value(value))[8:])


@pytest.mark.parametrize(
    "value",
    [
        1.5,
        -3,
        True,
        None,
        [[1.0, 2.0], (3.0, 4.0)],
        np.float64(2.5),
        np.arange(6, dtype=np.int64).reshape(2, 3),
        np.array([1.0, np.nan, np.inf, -np.inf]),
        np.zeros((0, 3)),
    ],
)
def test_values_survive_the_round_trip(value):
    decoded = protocol.decode_value(roundtrip(value))
    if value is None:
        assert decoded is None
    else:
        expected = np.asarray(value, dtype=float)
        np.testing.assert_array_equal(np.asarray(decoded, dtype=float), expected)


def test_arrays_keep_their_dtype_for_arguments():
    decoded = protocol.decode_value(roundtrip(np.array([1, 2], dtype=np.int64)))
    assert type(decoded) is np.ndarray and decoded.dtype == np.int64


class Liar:
    def __eq__(self, other):
        return True


class Subclass(np.ndarray):
    pass


@pytest.mark.parametrize(
    "value",
    [
        Liar(),
        "text",
        {"a": 1},
        np.zeros(3).view(Subclass),
        np.array([Liar()], dtype=object),
        np.array([1 + 2j]),
        [1.0, Liar()],
        [[[[[[[[[[1.0]]]]]]]]]],
    ],
)
def test_unsupported_values_are_refused_by_type(value):
    with pytest.raises(TypeError):
        protocol.encode_value(value)


def test_untagged_non_finite_numbers_are_refused():
    with pytest.raises(protocol.ProtocolError, match="non-finite"):
        protocol.loads(b'{"value": NaN}')
    with pytest.raises(protocol.ProtocolError, match="non-finite"):
        protocol.loads(b"[Infinity]")
    with pytest.raises(ValueError):
        protocol.dumps({"value": float("nan")})


@pytest.mark.parametrize(
    "data",
    [
        {"__ndarray__": {"dtype": "object", "shape": [1], "data": [1]}},
        {"__ndarray__": {"dtype": "float64", "shape": [3], "data": [1, 2]}},
        {"__ndarray__": {"dtype": "float64", "shape": [-1], "data": []}},
        {"__ndarray__": {"dtype": "float64", "shape": [1], "data": ["1"]}},
        {"__ndarray__": {"dtype": "float64", "shape": [1], "data": [1], "extra": 1}},
        {"__float__": "banana"},
        {"__reduce__": ["os.system", "true"]},
        "a string",
        [[1.0, 2.0], [3.0]],
        None,
    ],
)
def test_off_schema_values_are_refused(data):
    with pytest.raises(protocol.ProtocolError):
        protocol.to_float64(data)


def test_to_float64_gives_exact_float64_arrays():
    array = protocol.to_float64({"__ndarray__": {"dtype": "int8", "shape": [2], "data": [1, 2]}})
    assert type(array) is np.ndarray and array.dtype == np.float64 and array.shape == (2,)
    assert protocol.to_float64(2).shape == ()
    assert np.isnan(protocol.to_float64({"__float__": "nan"}))


def test_malformed_json_and_huge_numbers_are_protocol_errors():
    for body in (b"{", b"[" * 100_000 + b"]" * 100_000, b"\xff\xfe"):
        with pytest.raises(protocol.ProtocolError):
            protocol.loads(body)
    with pytest.raises(protocol.ProtocolError):
        protocol.to_float64(protocol.loads(b"1" + b"0" * 400))


def test_frames_over_pipes_with_caps_and_deadlines():
    read_end, write_end = os.pipe()
    try:
        protocol.write_frame(write_end, {"id": 1, "ok": True})
        assert protocol.read_frame(read_end) == {"id": 1, "ok": True}
        with pytest.raises(protocol.Timeout):
            protocol.read_frame(read_end, deadline=0.0)
        os.write(write_end, struct.pack(">Q", protocol.MAX_MESSAGE_BYTES + 1))
        with pytest.raises(protocol.ProtocolError, match="exceeds"):
            protocol.read_frame(read_end)
        os.close(write_end)
        write_end = None
        with pytest.raises(protocol.Closed):
            protocol.read_frame(read_end)
    finally:
        os.close(read_end)
        if write_end is not None:
            os.close(write_end)
