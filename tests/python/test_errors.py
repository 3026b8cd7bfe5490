"""Bad input: each case raises a clear exception and leaves the output untouched."""

import numpy as np
import pytest

import ddtkit


@pytest.fixture
def target():
    """A writable view (every other column of a 4 x 6 array) and a copy of its whole base."""
    rng = np.random.default_rng(7)
    base = rng.standard_normal((4, 6))
    return base, base[:, ::2], base.copy()


def untouched(base, before):
    return base.tobytes() == before.tobytes()


def test_unpack_wrong_dtype_of_data(target):
    base, view, before = target
    good = ddtkit.pack(view)
    for bad in (good.view(np.int8), good.view(np.float64), good.astype(np.uint16), [1, 2, 3], "text"):
        with pytest.raises(TypeError):
            ddtkit.unpack(bad, into=view)
    assert untouched(base, before)


def test_unpack_into_read_only(target):
    base, view, before = target
    data = ddtkit.pack(view)
    ro = base.copy()
    ro.setflags(write=False)
    for into in (ro[:, ::2], np.broadcast_to(base[0, ::2], view.shape), bytes(data)):
        with pytest.raises(ValueError, match="read-only"):
            ddtkit.unpack(data, into=into)
    assert untouched(ro, before)
    with pytest.raises(ValueError, match="read-only"):
        ddtkit.unpack(data, into=bytes(base.tobytes()), type=ddtkit.vector(4, 1, 2, ddtkit.DOUBLE).commit())


def test_unpack_size_mismatch(target):
    base, view, before = target
    data = ddtkit.pack(view)
    for n in (0, len(data) - 1, len(data) + 1, len(data) + 8):
        payload = np.zeros(n, np.uint8)
        with pytest.raises(ValueError, match="packed size"):
            ddtkit.unpack(payload, into=view)
    with pytest.raises(ValueError):
        ddtkit.unpack(data[:8], into=view, offset=len(data) - 4)  # ends beyond the stream
    with pytest.raises(ValueError):
        ddtkit.unpack(data[:8], into=view, offset=-1)
    with pytest.raises(ValueError):
        ddtkit.unpack(data, into=base[:, 1::2][:, :2])  # a view of another packed size
    assert untouched(base, before)


def test_pack_bad_ranges(target):
    _, view, _ = target
    n = ddtkit.from_array(view).size
    for offset, size in ((-1, None), (n + 1, None), (0, n + 1), (8, n - 7), (0, -1)):
        with pytest.raises(ValueError):
            ddtkit.pack(view, offset, size)
    with pytest.raises(TypeError):
        ddtkit.pack(view, 1.5)
    assert len(ddtkit.pack(view, n)) == 0


def test_explicit_type_outside_the_buffer(target):
    base, _, before = target
    column = ddtkit.vector(4, 1, 6, ddtkit.DOUBLE).commit()  # 4 rows of 6 doubles: fits
    data = ddtkit.pack(base, type=column)
    for count, origin in ((2, 0), (1, 8 * 6), (1, -8)):  # beyond the end, before the start
        with pytest.raises(ValueError, match="touch bytes"):
            ddtkit.unpack(np.zeros(count * 32, np.uint8), into=base, count=count, type=column,
                          origin=origin)
    with pytest.raises(ValueError):
        ddtkit.pack(base, count=-1, type=column)
    with pytest.raises(ValueError, match="contiguous"):
        ddtkit.pack(base[:, ::2], type=column)
    with pytest.raises(TypeError):
        ddtkit.pack(base, type="vector")
    with pytest.raises(TypeError):
        ddtkit.pack(base, count=2)  # count without a type
    assert untouched(base, before)
    assert len(data) == 32


def test_uncommitted_and_freed_types(target):
    base, _, before = target
    t = ddtkit.vector(4, 1, 6, ddtkit.DOUBLE)
    with pytest.raises(ddtkit.Error) as e:
        ddtkit.unpack(np.zeros(32, np.uint8), into=base, type=t)
    assert e.value.code == 4 and e.value.name == "DDT_ERR_NOT_COMMITTED"
    assert "not committed" in str(e.value)
    t.commit()
    t.free()
    for call in (lambda: ddtkit.unpack(np.zeros(32, np.uint8), into=base, type=t),
                 lambda: ddtkit.pack(base, type=t), lambda: t.size, lambda: t.commit(),
                 lambda: ddtkit.contiguous(2, t), lambda: t.hash(), lambda: t.describe()):
        with pytest.raises(ddtkit.Error) as e:
            call()
        assert e.value.code == 3 and e.value.message == ddtkit.error_string(3)
    assert untouched(base, before)


def test_constructor_argument_errors():
    with pytest.raises(ValueError, match="differ in length"):
        ddtkit.indexed([1, 2], [0], ddtkit.INT)
    with pytest.raises(ValueError, match="differ in length"):
        ddtkit.struct([1, 1], [0, 8], [ddtkit.INT])
    with pytest.raises(TypeError):
        ddtkit.struct([1], [0], [None])
    with pytest.raises(TypeError):
        ddtkit.vector(2, 1, 2, "double")
    with pytest.raises(ddtkit.ArgumentError) as e:  # a ddtkit.Error that is also a ValueError
        ddtkit.vector(-1, 1, 2, ddtkit.INT)
    assert isinstance(e.value, ValueError) and isinstance(e.value, ddtkit.Error)
    assert e.value.code == 2
    with pytest.raises(ValueError):
        ddtkit.subarray([4], [5], [0], ddtkit.INT)  # subsize beyond size: DDT_ERR_DIMS
    with pytest.raises(ddtkit.Error) as e:
        ddtkit.DOUBLE.free()
    assert e.value.name == "DDT_ERR_PREDEFINED"


def test_deserialize_rejects_garbage():
    good = ddtkit.vector(3, 2, 5, ddtkit.INT).commit().serialize()
    with pytest.raises(ddtkit.Error) as e:
        ddtkit.deserialize(b"not a layout")
    assert e.value.name == "DDT_ERR_CORRUPT"
    with pytest.raises(ddtkit.Error):
        ddtkit.deserialize(good[:-1])
    with pytest.raises(TypeError):
        ddtkit.deserialize("DDTL")


def test_from_array_rejects_non_numeric():
    for a in (np.array(["ab", "c"]), np.array([b"x"]), np.array([object(), 1]),
              np.array(["2024-01-01"], dtype="datetime64[D]"),
              np.zeros(2, dtype=[("name", "U4"), ("x", "f8")])):
        with pytest.raises(TypeError, match="ddtkit"):
            ddtkit.from_array(a)
        with pytest.raises(TypeError):
            ddtkit.pack(a)
    with pytest.raises(TypeError):
        ddtkit.from_array([1.0, 2.0])  # a list is no array: no silent copy
