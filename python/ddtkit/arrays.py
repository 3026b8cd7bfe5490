"""The type that describes a numpy array or view: ``from_array``.

A view is described element by element in C order of its indices (the order of
``np.ascontiguousarray(view)``), with byte displacements relative to the view's data pointer:
one ``hvector`` per dimension with the dimension's stride (negative and zero strides included),
around the type of one element. Structured dtypes become ``struct`` types (fields in the
dtype's order, at their offsets, padding skipped), resized to the dtype's itemsize; fields that
are arrays become ``contiguous`` types. ddtkit's canonical layout merges the dimensions that are
contiguous, so a contiguous array is one block whatever its shape.
"""

import functools
import operator

import numpy as np

from . import _core

from ._predefined import PREDEFINED as _PREDEFINED

# numpy (kind, itemsize) -> ddtkit's predefined type of the same representation (native byte
# order; the sizes of long double types are checked against the C library's below).
_BY_KIND = {
    ("b", 1): "C_BOOL",
    ("i", 1): "INT8_T", ("i", 2): "INT16_T", ("i", 4): "INT32_T", ("i", 8): "INT64_T",
    ("u", 1): "UINT8_T", ("u", 2): "UINT16_T", ("u", 4): "UINT32_T", ("u", 8): "UINT64_T",
    ("f", 4): "FLOAT", ("f", 8): "DOUBLE",
    ("c", 8): "C_FLOAT_COMPLEX", ("c", 16): "C_DOUBLE_COMPLEX",
}
for _kind, _name in (("f", "LONG_DOUBLE"), ("c", "C_LONG_DOUBLE_COMPLEX")):
    _t = _PREDEFINED[_name]
    _np = np.longdouble if _kind == "f" else np.clongdouble
    if np.dtype(_np).itemsize == _t.size:
        _BY_KIND[(_kind, _t.size)] = _name

_NUMERIC_KINDS = "biufc"


def _element_type(dtype):
    """The ddtkit type of one element of ``dtype``; TypeError for dtypes that are not data."""
    if dtype.subdtype is not None:  # a field that is itself an array: C-contiguous inside
        base, shape = dtype.subdtype
        inner = _element_type(base)
        return _core.contiguous(int(np.prod(shape, dtype=np.int64)), inner)
    if dtype.fields is not None:
        return _struct_type(dtype)
    if dtype.hasobject:
        raise TypeError(f"ddtkit: dtype {dtype} holds Python objects, which have no byte layout")
    if dtype.kind in _NUMERIC_KINDS:
        name = _BY_KIND.get((dtype.kind, dtype.itemsize)) if dtype.isnative else None
        if name is not None:
            return _PREDEFINED[name]
        # float16, or a non-native byte order: moved as bytes (ddtkit converts no values).
        return _core.contiguous(dtype.itemsize, _PREDEFINED["BYTE"])
    if dtype.kind == "V":  # raw bytes (np.void without fields)
        return _core.contiguous(dtype.itemsize, _PREDEFINED["BYTE"])
    raise TypeError(
        f"ddtkit: dtype {dtype} is not numeric (strings, dates and objects are not supported); "
        "use a numeric or structured dtype")


def _struct_type(dtype):
    names = dtype.names
    types, offsets = [], []
    for name in names:
        field = dtype.fields[name]
        types.append(_element_type(field[0]))
        offsets.append(field[1])
    st = _core.struct([1] * len(names), offsets, types)
    # The dtype's itemsize places the next element (padding included), not MPI's alignment rule.
    return _core.resized(st, 0, dtype.itemsize)


def _view_type(dtype, shape, strides):
    t = _element_type(dtype)
    for n, stride in zip(reversed(shape), reversed(strides)):
        t = _core.hvector(n, 1, stride, t)
    return t.commit()


def _as_array(view, what):
    if isinstance(view, np.ndarray):
        return view
    try:
        return np.asarray(memoryview(view))  # any buffer exporter, without a copy
    except TypeError:
        raise TypeError(f"ddtkit: {what} must be a numpy array or support the buffer protocol, "
                        f"not {type(view).__name__}") from None


def from_array(view):
    """The committed type that describes ``view``'s bytes, relative to its data pointer.

    Packing one element of it from the view's data pointer gives the bytes of
    ``np.ascontiguousarray(view)`` (structured dtypes: only the fields' bytes, padding left out).
    TypeError for dtypes that are not numeric or structured (objects, strings, dates).
    """
    arr = _as_array(view, "from_array's argument")
    return _view_type(arr.dtype, arr.shape, arr.strides)


# pack and unpack of views reuse the type of a view of the same dtype, shape and strides:
# committed types are immutable, and these ones are never handed out (a user's free() cannot
# reach them).
@functools.lru_cache(maxsize=256)
def _cached_view_type(dtype, shape, strides):
    return _view_type(dtype, shape, strides)


def view_type(arr):
    """The (shared, cached) committed type of ndarray ``arr``; not for callers to free."""
    return _cached_view_type(arr.dtype, arr.shape, arr.strides)


def data_address(arr):
    """The address of ``arr``'s first element (its data pointer)."""
    return arr.__array_interface__["data"][0]


def index(value, what):
    """``value`` as an int (TypeError for non-integers, as Python's own indexing)."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"ddtkit: {what} must be an integer, not {type(value).__name__}") from None
