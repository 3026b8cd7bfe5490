"""ddtkit.iov and ddtkit.copy on numpy views built at random, checked against numpy; bad input
raises and writes nothing."""

import numpy as np
import pytest

import ddtkit
from views import apply, assign, over, packed_bytes, random_base, random_dtype, random_view_spec

CASES = 200


def address(a):
    return a.__array_interface__["data"][0]


def gather(base, view, pieces):
    """The bytes the pieces (offsets from view's data pointer) name, read from base's memory."""
    raw = base.reshape(-1).view(np.uint8)
    at = address(view) - address(base)
    return b"".join(raw[at + s:at + s + n].tobytes() for s, n in pieces)


# ---- iov ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(CASES))
def test_iov_pieces_are_the_packed_bytes(seed):
    rng = np.random.default_rng(seed)
    dtype, spec = random_dtype(rng), random_view_spec(rng)
    base = random_base(rng, dtype, spec[0])
    view = apply(base, spec)
    if rng.random() < 0.2 and view.ndim > 0 and view.shape[-1] > 0:  # zero strides: bytes seen twice
        view = np.broadcast_to(view[..., :1], view.shape[:-1] + (3,))
    full = packed_bytes(view)
    pieces = ddtkit.iov(view)
    assert all(isinstance(p, tuple) and len(p) == 2 and p[1] > 0 for p in pieces)
    assert gather(base, view, pieces) == full
    # Merged: no piece ends where the next begins.
    assert all(a + n != b for (a, n), (b, _) in zip(pieces, pieces[1:]))
    assert [(s + address(view), n) for s, n in pieces] == ddtkit.iov(view, addresses=True)
    for _ in range(3):  # byte ranges, cut inside blocks
        offset = int(rng.integers(0, len(full) + 1))
        size = int(rng.integers(0, len(full) - offset + 1))
        part = ddtkit.iov(view, offset, size)
        assert sum(n for _, n in part) == size
        assert gather(base, view, part) == full[offset:offset + size]
        k = int(rng.integers(0, 4))
        assert ddtkit.iov(view, offset, size, max_pieces=k) == part[:k]


def test_iov_of_a_type_over_a_buffer():
    m = np.arange(20.0).reshape(4, 5)
    column = ddtkit.vector(4, 1, 5, ddtkit.DOUBLE).commit()
    pieces = ddtkit.iov(m, type=column, origin=2 * 8)  # offsets from the buffer's start
    assert pieces == [(16, 8), (56, 8), (96, 8), (136, 8)]
    raw = m.view(np.uint8).reshape(-1)
    assert np.concatenate([raw[s:s + n] for s, n in pieces]).view(np.float64).tolist() == [2, 7, 12, 17]
    assert ddtkit.iov(bytearray(m.tobytes()), type=column, origin=16) == pieces
    # No buffer: the type's own displacements; two elements of it, and a range in the middle.
    assert ddtkit.iov(None, type=column) == [(0, 8), (40, 8), (80, 8), (120, 8)]
    # (element 1 starts at 128, where element 0's last block ends: one piece across them)
    assert ddtkit.iov(None, type=column, count=2, offset=28, size=16) == [(124, 12), (168, 4)]
    back = ddtkit.vector(3, 1, -2, ddtkit.INT).commit()  # negative displacements
    assert ddtkit.iov(None, type=back) == [(0, 4), (-8, 4), (-16, 4)]
    assert ddtkit.iov(m[:, 2], offset=32) == []


def test_iov_bad_input():
    m = np.arange(20.0).reshape(4, 5)
    column = ddtkit.vector(4, 1, 5, ddtkit.DOUBLE).commit()
    for offset, size in ((-1, None), (33, None), (0, 33), (8, 25), (0, -1)):
        with pytest.raises(ValueError):
            ddtkit.iov(m[:, 2], offset, size)
    with pytest.raises(ValueError, match="max_pieces"):
        ddtkit.iov(m[:, 2], max_pieces=-1)
    with pytest.raises(ValueError, match="touch bytes"):
        ddtkit.iov(m, type=column, origin=5 * 8)
    with pytest.raises(TypeError):
        ddtkit.iov(None)
    with pytest.raises(ValueError, match="addresses"):
        ddtkit.iov(None, type=column, addresses=True)
    with pytest.raises(TypeError):
        ddtkit.iov(m, count=2)  # count without a type
    with pytest.raises(TypeError):
        ddtkit.iov(m[:, 2], 1.5)
    with pytest.raises(ddtkit.Error) as e:
        ddtkit.iov(None, type=ddtkit.vector(4, 1, 5, ddtkit.DOUBLE))
    assert e.value.name == "DDT_ERR_NOT_COMMITTED"


# ---- copy --------------------------------------------------------------------------------------

def other_layout(rng, shape):
    """(base shape, apply): views of `shape` over a larger base, with other strides than a plain
    array of that shape (steps, reversals, a transpose), so that source and destination layouts
    differ while the view's C-order elements pair with the source's. apply(base) takes the view."""
    nd = len(shape)
    perm = [int(p) for p in rng.permutation(nd)]
    steps = [int(rng.choice([1, 2, 3])) for _ in range(nd)]
    flips = tuple(slice(None, None, -1) if rng.random() < 0.3 else slice(None) for _ in range(nd))
    big = tuple(shape[p] * steps[i] + int(rng.integers(0, 2)) for i, p in enumerate(perm))
    index = tuple(slice(None, shape[p] * steps[i], steps[i]) for i, p in enumerate(perm))
    back = tuple(int(i) for i in np.argsort(perm))

    def view(base):
        return base[index + (Ellipsis,)][flips + (Ellipsis,)].transpose(back)
    return big, view


@pytest.mark.parametrize("seed", range(CASES))
def test_copy_matches_numpy_assignment(seed):
    rng = np.random.default_rng(1000 + seed)
    dtype, spec = random_dtype(rng), random_view_spec(rng)
    src = apply(random_base(rng, dtype, spec[0]), spec)
    big, view = other_layout(rng, src.shape)
    raw = random_base(rng, dtype, big).reshape(-1).view(np.uint8)
    target, expected = over(raw.copy(), dtype, big), over(raw.copy(), dtype, big)
    assign(view(expected), src)  # numpy, field by field: padding bytes stay as they were
    dst = view(target)
    assert dst.shape == src.shape
    assert ddtkit.copy(src, dst) is dst
    assert target.tobytes() == expected.tobytes()


def test_copy_into_a_view_of_another_shape():
    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    out = np.zeros((3, 16), dtype=np.int32)
    ddtkit.copy(a[:, ::2], out[:, ::4])  # 12 values into 12 places, C order on both sides
    expected = np.zeros_like(out)
    expected[:, ::4] = a[:, ::2].reshape(3, 4)
    assert (out == expected).all()


def test_copy_with_explicit_types():
    m = np.arange(48.0).reshape(6, 8)
    out = np.zeros((8, 6))
    column = ddtkit.vector(6, 1, 8, ddtkit.DOUBLE).commit()
    row = ddtkit.contiguous(6, ddtkit.DOUBLE).commit()
    ddtkit.copy(m, out, src_type=column, src_origin=3 * 8, dst_type=row, dst_origin=2 * 6 * 8)
    assert out[2].tolist() == m[:, 3].tolist()
    assert (np.delete(out, 2, axis=0) == 0).all()
    # Transposing with counts: 8 columns (each a resized vector) into 8 rows.
    col1 = ddtkit.resized(column, 0, 8).commit()
    ddtkit.copy(m, out, src_count=8, src_type=col1, dst_count=8, dst_type=row)
    assert (out == m.T).all()
    # One side a view, the other an explicit type.
    dst = np.zeros(6)
    ddtkit.copy(m, dst, src_type=column, src_origin=8)
    assert dst.tolist() == m[:, 1].tolist()


def test_copy_between_struct_layouts():
    packed = np.dtype([("id", np.int32), ("pos", np.float64, (3,))])
    aligned = np.dtype([("id", np.int32), ("pos", np.float64, (3,))], align=True)
    a = np.zeros(5, packed)
    a["id"] = np.arange(5)
    a["pos"] = np.arange(15.0).reshape(5, 3)
    b = np.zeros(5, aligned)
    ddtkit.copy(a, b)  # the same fields at other offsets
    assert (b["id"] == a["id"]).all() and (b["pos"] == a["pos"]).all()
    xyz = np.zeros((5, 3))
    ddtkit.copy(a["pos"], xyz)  # a field of arrays of doubles into doubles
    assert (xyz == a["pos"]).all()
    vec = np.zeros(5, np.dtype([("v", np.float64, (3,))]))
    ddtkit.copy(xyz, vec)  # doubles into a struct of three doubles
    assert (vec["v"] == xyz).all()


def test_copy_overlapping_views():
    m = np.arange(20.0).reshape(4, 5)
    expected = m[::-1].copy()
    ddtkit.copy(m, m[::-1])  # as if the source were read whole first
    assert (m == expected).all()
    a = np.arange(10, dtype=np.int64)
    ddtkit.copy(a[:-2], a[2:])
    assert a.tolist() == [0, 1, 0, 1, 2, 3, 4, 5, 6, 7]


def test_copy_bad_input_writes_nothing():
    rng = np.random.default_rng(3)
    src_base = rng.standard_normal((4, 6))
    dst_base = rng.standard_normal((4, 6))
    before = dst_base.copy()
    column = ddtkit.vector(4, 1, 6, ddtkit.DOUBLE).commit()
    frozen = dst_base.copy()
    frozen.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        ddtkit.copy(src_base[:, ::2], frozen[:, ::2])
    with pytest.raises(ValueError, match="read-only"):
        ddtkit.copy(src_base, bytes(dst_base.tobytes()), src_type=column, dst_type=column)
    with pytest.raises(ValueError, match="read-only"):
        ddtkit.copy(src_base[:, 0], np.broadcast_to(dst_base[0, :1], (4,)))
    with pytest.raises(ValueError, match="packed size"):
        ddtkit.copy(src_base[:, ::2], dst_base[:, ::3])  # 12 values into 8 places
    with pytest.raises(ValueError, match="packed size"):
        ddtkit.copy(src_base, dst_base, src_type=column, dst_type=ddtkit.vector(3, 1, 6, ddtkit.DOUBLE).commit())
    with pytest.raises(TypeError, match="converts no values"):
        ddtkit.copy(src_base[:, ::2], dst_base.view(np.int64)[:, ::2])
    with pytest.raises(TypeError, match="converts no values"):
        ddtkit.copy(src_base.astype(">f8")[:, ::2], dst_base[:, ::2])  # another byte order
    with pytest.raises(ValueError, match="touch bytes"):
        ddtkit.copy(src_base, dst_base, src_type=column, dst_type=column, dst_origin=6 * 8)
    with pytest.raises(ValueError, match="dst_count must not be negative"):
        ddtkit.copy(src_base, dst_base, src_type=column, dst_type=column, dst_count=-1)
    with pytest.raises(TypeError, match="src_count and src_origin go with an explicit src_type="):
        ddtkit.copy(src_base, dst_base, src_count=1)
    with pytest.raises(TypeError):
        ddtkit.copy(src_base, "not a buffer")
    uncommitted = ddtkit.vector(4, 1, 6, ddtkit.DOUBLE)
    with pytest.raises(ddtkit.Error) as e:
        ddtkit.copy(src_base, dst_base, src_type=column, dst_type=uncommitted)
    assert e.value.name == "DDT_ERR_NOT_COMMITTED"
    assert frozen.tobytes() == before.tobytes()
    assert dst_base.tobytes() == before.tobytes()
    # Explicit types copy bytes regardless of dtypes (MPI's rule), when asked to.
    ints = np.zeros(24, np.int64)
    ddtkit.copy(src_base, ints, src_type=column, dst_type=ddtkit.contiguous(4, ddtkit.INT64_T).commit())
    assert ints[:4].view(np.float64).tolist() == src_base[:, 0].tolist()
