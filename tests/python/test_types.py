"""Constructors and queries of ddtkit.Type against sizes, bounds and contents known by hand."""

import ctypes

import numpy as np
import pytest

import ddtkit
from ddtkit import Combiner

D, I = ddtkit.DOUBLE, ddtkit.INT


def bounds(t):
    """(size, lb, extent, true_lb, true_extent)."""
    return (t.size, t.lb, t.extent, t.true_lb, t.true_extent)


def test_predefined_sizes_match_c():
    c = {"CHAR": ctypes.c_char, "SHORT": ctypes.c_short, "INT": ctypes.c_int,
         "LONG": ctypes.c_long, "LONG_LONG": ctypes.c_longlong, "FLOAT": ctypes.c_float,
         "DOUBLE": ctypes.c_double, "LONG_DOUBLE": ctypes.c_longdouble, "C_BOOL": ctypes.c_bool,
         "WCHAR": ctypes.c_wchar, "INT64_T": ctypes.c_int64, "UINT16_T": ctypes.c_uint16}
    for name, ct in c.items():
        assert getattr(ddtkit, name).size == ctypes.sizeof(ct), name
    assert ddtkit.C_DOUBLE_COMPLEX.size == 16 and ddtkit.TWOINT.size == 8
    assert ddtkit.TWOINT is ddtkit.predefined["2INT"]
    assert D.predefined and D.name == "DOUBLE" and D.envelope() == (0, 0, 0, Combiner.NAMED)
    assert len(ddtkit.predefined) == 38


CASES = [
    # (constructor call, (size, lb, extent, true_lb, true_extent), combiner, integers, addresses)
    (lambda: ddtkit.contiguous(3, D), (24, 0, 24, 0, 24), Combiner.CONTIGUOUS, [3], []),
    (lambda: ddtkit.vector(4, 1, 5, D), (32, 0, 128, 0, 128), Combiner.VECTOR, [4, 1, 5], []),
    (lambda: ddtkit.vector(3, 2, -4, I), (24, -32, 40, -32, 40), Combiner.VECTOR, [3, 2, -4], []),
    (lambda: ddtkit.hvector(3, 2, -40, I), (24, -80, 88, -80, 88), Combiner.HVECTOR, [3, 2], [-40]),
    (lambda: ddtkit.indexed([2, 1], [0, 5], D), (24, 0, 48, 0, 48), Combiner.INDEXED, [2, 2, 1, 0, 5], []),
    (lambda: ddtkit.hindexed([1, 2], [8, 32], I), (12, 8, 32, 8, 32), Combiner.HINDEXED, [2, 1, 2], [8, 32]),
    (lambda: ddtkit.indexed_block(2, [1, 4], I), (16, 4, 20, 4, 20), Combiner.INDEXED_BLOCK, [2, 2, 1, 4], []),
    (lambda: ddtkit.hindexed_block(1, [0, 10], ddtkit.SHORT), (4, 0, 12, 0, 12), Combiner.HINDEXED_BLOCK,
     [2, 1], [0, 10]),
    # MPI pads a struct's extent to its largest member alignment (8 for a double)
    (lambda: ddtkit.struct([1, 1], [0, 8], [ddtkit.CHAR, D]), (9, 0, 16, 0, 16), Combiner.STRUCT,
     [2, 1, 1], [0, 8]),
    # rows 1-2, columns 1-3 of a 4 x 5 array of doubles
    (lambda: ddtkit.subarray([4, 5], [2, 3], [1, 1], D), (48, 0, 160, 48, 64), Combiner.SUBARRAY,
     [2, 4, 5, 2, 3, 1, 1, ddtkit.ORDER_C], []),
    # the same in Fortran order: the first dimension is the contiguous one
    (lambda: ddtkit.subarray([5, 4], [3, 2], [1, 1], D, ddtkit.ORDER_FORTRAN), (48, 0, 160, 48, 64),
     Combiner.SUBARRAY, [2, 5, 4, 3, 2, 1, 1, ddtkit.ORDER_FORTRAN], []),
    # process 1 of a 2 x 2 grid: rows 0-3 (block), columns 2-3 and 6-7 (cyclic(2)) of 8 x 8
    (lambda: ddtkit.darray(4, 1, [8, 8], [ddtkit.DISTRIBUTE_BLOCK, ddtkit.DISTRIBUTE_CYCLIC],
                           [ddtkit.DISTRIBUTE_DFLT_DARG, 2], [2, 2], D),
     (128, 0, 512, 16, 240), Combiner.DARRAY,
     [4, 1, 2, 8, 8, ddtkit.DISTRIBUTE_BLOCK, ddtkit.DISTRIBUTE_CYCLIC, ddtkit.DISTRIBUTE_DFLT_DARG, 2, 2, 2,
      ddtkit.ORDER_C], []),
    (lambda: ddtkit.resized(D, -4, 20), (8, -4, 20, 0, 8), Combiner.RESIZED, [], [-4, 20]),
    (lambda: ddtkit.dup(ddtkit.vector(2, 1, 3, I)), (8, 0, 16, 0, 16), Combiner.DUP, [], []),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_constructor_bounds_and_contents(i):
    make, expected, combiner, ints, addrs = CASES[i]
    t = make()
    assert bounds(t) == expected
    assert t.get_extent() == (expected[1], expected[2])
    assert t.get_true_extent() == (expected[3], expected[4])
    ni, na, nd, comb = t.envelope()
    assert comb == combiner and (ni, na) == (len(ints), len(addrs))
    c, got_ints, got_addrs, types = t.contents()
    assert (c, got_ints, got_addrs) == (combiner, ints, addrs)
    assert len(types) == nd
    assert t.commit() is t


def test_contents_gives_the_children():
    v = ddtkit.vector(2, 1, 3, I)
    s = ddtkit.struct([1, 2], [0, 16], [D, v])
    types = s.contents()[3]
    assert types[0] == D and types[0].predefined
    assert types[1] == v and not types[1].predefined
    types[1].free()  # the contents' own reference: v stays valid
    assert v.commit().size == 8


def test_canonical_layouts_share_a_hash():
    same = [ddtkit.contiguous(8, D), ddtkit.vector(2, 4, 4, D), ddtkit.vector(8, 1, 1, D),
            ddtkit.hvector(4, 2, 16, D), ddtkit.indexed_block(1, [0, 1], ddtkit.contiguous(4, D)),
            ddtkit.subarray([8], [8], [0], D)]
    hashes = {t.commit().hash() for t in same}
    assert len(hashes) == 1 and len(next(iter(hashes))) == 16
    assert ddtkit.vector(4, 1, 2, D).commit().hash() not in hashes


def test_serialize_round_trip():
    t = ddtkit.resized(ddtkit.struct([1, 3], [4, 24], [I, D]), -8, 64).commit()
    data = t.serialize()
    assert isinstance(data, bytes)
    u = ddtkit.deserialize(data)
    assert u.hash() == t.hash() and bounds(u) == bounds(t)
    assert u.envelope()[3] == Combiner.LAYOUT
    buf = np.arange(256, dtype=np.uint8)
    assert ddtkit.pack(buf, count=2, type=u, origin=8).tobytes() == \
        ddtkit.pack(buf, count=2, type=t, origin=8).tobytes()


def test_describe_and_blocks():
    t = ddtkit.vector(4, 1, 5, D).commit()
    text = t.describe()
    assert text.startswith("size 32 B, lb 0, extent 128") and "stride 40 B" in text
    assert t.blocks() == (4, True)
    assert ddtkit.contiguous(5, I).commit().blocks() == (1, True)
    assert ddtkit.vector(3, 1, -2, I).commit().blocks() == (3, False)


def test_explicit_pack_unpack_by_hand():
    m = np.arange(20.0).reshape(4, 5)
    column = ddtkit.vector(4, 1, 5, D).commit()
    col = ddtkit.pack(m, type=column, origin=2 * 8)
    assert col.view(np.float64).tolist() == [2.0, 7.0, 12.0, 17.0]
    back = np.zeros_like(m)
    ddtkit.unpack(col, into=back, type=column, origin=2 * 8)
    assert back[:, 2].tolist() == [2.0, 7.0, 12.0, 17.0] and back.sum() == m[:, 2].sum()
    # three elements of a resized type: one double every 16 bytes
    every_other = ddtkit.resized(D, 0, 16).commit()
    assert ddtkit.pack(m, count=3, type=every_other).view(np.float64).tolist() == [0.0, 2.0, 4.0]


def test_free_keeps_derived_types_alive():
    inner = ddtkit.vector(2, 1, 2, I)
    outer = ddtkit.contiguous(2, inner).commit()
    before = outer.hash()
    inner.free()
    assert inner.freed and repr(inner) == "<ddtkit.Type (freed)>"
    assert outer.hash() == before and outer.size == 16
    inner.free()  # freeing twice is harmless


def test_many_types_are_released():
    # Every handle is freed when its Type is collected, contents' handles included.
    for i in range(2000):
        t = ddtkit.vector(i % 7 + 1, 1, 2, ddtkit.contiguous(2, D))
        t.contents()
        del t


def test_equality_and_repr():
    assert ddtkit.DOUBLE == ddtkit.predefined["DOUBLE"]
    assert ddtkit.DOUBLE != ddtkit.FLOAT
    assert (ddtkit.DOUBLE == 3) is False
    assert {ddtkit.DOUBLE: 1}[ddtkit.predefined["DOUBLE"]] == 1
    assert repr(ddtkit.DOUBLE) == "<ddtkit.Type DOUBLE>"
    assert repr(ddtkit.contiguous(2, D)) == "<ddtkit.Type size=16 lb=0 extent=16>"
