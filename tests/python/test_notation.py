"""Type.notation() and ddtkit.parse(): the round trip keeps the layout, errors carry the place."""

import numpy as np
import pytest

import ddtkit
from views import apply, random_base, random_dtype, random_view_spec

D = ddtkit.DOUBLE


def every_constructor():
    """One type of each constructor, nested, with negative and shifted displacements."""
    pair = ddtkit.struct([1, 2], [0, 8], [ddtkit.INT, ddtkit.FLOAT])
    return [
        ddtkit.contiguous(3, D),
        ddtkit.vector(4, 1, 5, D),
        ddtkit.vector(3, 2, -4, ddtkit.INT),
        ddtkit.hvector(3, 2, 44, pair),
        ddtkit.indexed([1, 3, 2], [0, 5, -2], ddtkit.SHORT),
        ddtkit.hindexed([2, 1], [16, -8], pair),
        ddtkit.indexed_block(2, [4, 0, 9], D),
        ddtkit.hindexed_block(1, [24, 0, 12], ddtkit.UINT32_T),
        ddtkit.struct([1, 3, 1], [0, 8, 40], [ddtkit.CHAR, ddtkit.vector(2, 1, 3, ddtkit.FLOAT), D]),
        ddtkit.subarray([4, 6, 8], [4, 1, 8], [0, 2, 0], D),
        ddtkit.subarray([5, 7], [2, 3], [1, 4], ddtkit.INT, order=ddtkit.ORDER_FORTRAN),
        ddtkit.darray(4, 1, [8, 6], [ddtkit.DISTRIBUTE_BLOCK, ddtkit.DISTRIBUTE_CYCLIC],
                      [ddtkit.DISTRIBUTE_DFLT_DARG, 2], [2, 2], D),
        ddtkit.resized(ddtkit.vector(2, 1, 3, D), -16, 64),
        ddtkit.dup(ddtkit.vector(2, 2, 3, ddtkit.LONG_DOUBLE)),
        ddtkit.TWOINT,
        ddtkit.C_DOUBLE_COMPLEX,
        ddtkit.deserialize(ddtkit.vector(3, 1, 4, D).commit().serialize()),  # no history
    ]


def same_layout(a, b):
    a.commit()
    b.commit()
    assert b.hash() == a.hash()
    assert (b.size, b.get_extent(), b.get_true_extent()) == (a.size, a.get_extent(), a.get_true_extent())


@pytest.mark.parametrize("i", range(len(every_constructor())))
def test_round_trip_keeps_the_layout(i):
    t = every_constructor()[i]
    text = t.notation()
    assert isinstance(text, str) and text
    back = ddtkit.parse(text)
    same_layout(t, back)
    assert ddtkit.parse(back.notation()).commit().hash() == t.hash()


@pytest.mark.parametrize("seed", range(60))
def test_round_trip_of_random_views(seed):
    rng = np.random.default_rng(seed)
    dtype = random_dtype(rng)
    spec = random_view_spec(rng)
    view = apply(random_base(rng, dtype, spec[0]), spec)
    t = ddtkit.from_array(view)
    back = ddtkit.parse(t.notation())
    same_layout(t, back)


def test_parsed_type_moves_the_same_bytes():
    m = np.arange(48.0).reshape(6, 8)
    t = ddtkit.parse("vector(6, 2, 8, double)").commit()
    assert ddtkit.pack(m, type=t, origin=3 * 8).view(np.float64).tolist() == m[:, 3:5].ravel().tolist()
    assert ddtkit.parse("  vector( 6 ,2,8,\n double )  ").commit().hash() == t.hash()


def test_predefined_names():
    d = ddtkit.parse("double")  # a committed dup of DOUBLE
    assert not d.predefined and d.size == 8
    assert d.hash() == ddtkit.DOUBLE.hash()
    assert ddtkit.DOUBLE.notation() == "double"


@pytest.mark.parametrize("text, code, position", [
    ("vector(4, 1, 5 double)", "DDT_ERR_ARG", 16),
    ("doubel", "DDT_ERR_ARG", 1),
    ("vector(-4, 1, 5, double)", "DDT_ERR_COUNT", 1),
    ("contiguous(99999999999999999999, int)", "DDT_ERR_ARG", 12),
    ("indexed([1, 2], [0], int)", "DDT_ERR_ARG", None),
    ("", "DDT_ERR_ARG", None),
    ("contiguous(2, int) trailing", "DDT_ERR_ARG", None),
    ("(" * 400, "DDT_ERR_ARG", None),
])
def test_bad_text_raises_with_the_place(text, code, position):
    with pytest.raises(ddtkit.Error) as e:
        ddtkit.parse(text)
    err = e.value
    assert err.name == code
    assert isinstance(err, ValueError)  # syntax and argument errors are ArgumentErrors
    assert err.message.startswith(f"character {err.position} (line {err.line}, column {err.column}): ")
    assert str(err).startswith(f"{code}: character ")
    if position is not None:
        assert err.position == position


def test_place_on_a_later_line():
    with pytest.raises(ddtkit.ArgumentError) as e:
        ddtkit.parse("struct([1, 1],\n       [0, 8],\n       [int, flaot])")
    assert (e.value.line, e.value.column) == (3, 14)  # at "flaot"
    assert "flaot" in e.value.message


def test_parse_argument_types():
    with pytest.raises(TypeError):
        ddtkit.parse(b"double")
    with pytest.raises(TypeError):
        ddtkit.parse(None)
    with pytest.raises(ValueError, match="NUL"):
        ddtkit.parse("double\0garbage")


def test_notation_of_a_freed_type():
    t = ddtkit.contiguous(2, ddtkit.INT)
    t.free()
    with pytest.raises(ddtkit.Error) as e:
        t.notation()
    assert e.value.name == "DDT_ERR_TYPE"
    assert ddtkit.Error(1, "m").position is None  # only parse's errors carry a place
