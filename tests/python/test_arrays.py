"""from_array, pack and unpack of numpy views built at random, checked against numpy's copies."""

import numpy as np
import pytest

import ddtkit
from views import apply, assign, over, packed_bytes, random_base, random_dtype, random_view_spec

CASES = 300


def case(seed):
    rng = np.random.default_rng(seed)
    dtype = random_dtype(rng)
    spec = random_view_spec(rng)
    return rng, dtype, spec


@pytest.mark.parametrize("seed", range(CASES))
def test_pack_matches_numpy(seed):
    rng, dtype, spec = case(seed)
    base = random_base(rng, dtype, spec[0])
    view = apply(base, spec)
    if rng.random() < 0.2 and view.ndim > 0 and view.shape[-1] > 0:  # a zero stride: one row seen many times
        view = np.broadcast_to(view[..., :1], view.shape[:-1] + (3,))
    expected = packed_bytes(view)
    t = ddtkit.from_array(view)
    assert t.size == len(expected)
    packed = ddtkit.pack(view)
    assert packed.dtype == np.uint8 and packed.ndim == 1
    assert packed.tobytes() == expected


@pytest.mark.parametrize("seed", range(CASES))
def test_unpack_matches_numpy_assignment(seed):
    rng, dtype, spec = case(seed)
    source = apply(random_base(rng, dtype, spec[0]), spec)
    raw = random_base(rng, dtype, spec[0]).reshape(-1).view(np.uint8)
    target, expected = over(raw.copy(), dtype, spec[0]), over(raw.copy(), dtype, spec[0])
    assign(apply(expected, spec), source)
    result = ddtkit.unpack(ddtkit.pack(source), into=apply(target, spec))
    assert result.base is target or result.size == 0 or np.shares_memory(result, target)
    assert target.tobytes() == expected.tobytes()


@pytest.mark.parametrize("seed", range(100))
def test_partial_ranges(seed):
    rng, dtype, spec = case(seed)
    base = random_base(rng, dtype, spec[0])
    view = apply(base, spec)
    full = packed_bytes(view)
    n = len(full)
    for _ in range(4):
        offset = int(rng.integers(0, n + 1))
        size = int(rng.integers(0, n - offset + 1))
        assert ddtkit.pack(view, offset, size).tobytes() == full[offset:offset + size]
        assert ddtkit.pack(view, offset=offset).tobytes() == full[offset:]
    # Unpacking the stream in random pieces, in random order, rebuilds the whole.
    target = random_base(rng, dtype, spec[0])
    cuts = sorted({0, n, *(int(x) for x in rng.integers(0, n + 1, size=3))})
    pieces = list(zip(cuts[:-1], cuts[1:]))
    for i in rng.permutation(len(pieces)):
        a, b = pieces[i]
        ddtkit.unpack(np.frombuffer(full[a:b], np.uint8), into=apply(target, spec), offset=a)
    assert packed_bytes(apply(target, spec)) == full


def test_contiguous_array_is_one_block():
    a = np.zeros((6, 7, 8), dtype=np.float32)
    t = ddtkit.from_array(a)
    assert t.size == a.nbytes and t.blocks() == (1, True)
    assert ddtkit.from_array(a[:, ::2]).blocks() == (6 * 4, True)


def test_negative_strides_are_relative_to_the_data_pointer():
    a = np.arange(10, dtype=np.int64)
    t = ddtkit.from_array(a[::-1])
    assert t.get_true_extent() == (-72, 80)
    assert ddtkit.pack(a[::-1]).view(np.int64).tolist() == list(range(9, -1, -1))


def test_structured_dtype_is_a_struct_resized_to_itemsize():
    dt = np.dtype([("x", np.int8), ("y", np.float64)], align=True)
    t = ddtkit.from_array(np.zeros((), dtype=dt))
    assert (t.size, t.extent) == (9, 16)
    assert t.contents()[0] == ddtkit.Combiner.RESIZED
    inner = t.contents()[3][0]
    assert inner.contents()[:3] == (ddtkit.Combiner.STRUCT, [2, 1, 1], [0, 8])


def test_pack_accepts_buffer_protocol_objects():
    data = bytearray(range(16))
    assert ddtkit.pack(memoryview(data)[::3]).tobytes() == bytes(data[::3])
    assert ddtkit.pack(data).tobytes() == bytes(data)


def test_pack_writes_straight_into_a_fresh_array():
    a = np.arange(12.0).reshape(3, 4)
    p = ddtkit.pack(a.T)
    assert p.flags.owndata and p.flags.c_contiguous
    assert not np.shares_memory(p, a)
