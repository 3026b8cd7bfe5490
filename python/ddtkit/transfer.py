"""pack and unpack: between a numpy view (or a buffer with an explicit type) and packed bytes.

Two forms:

* ``pack(view)`` / ``unpack(data, into=view)``: the view is described by ``from_array`` (any
  strides, any numeric or structured dtype), relative to its data pointer.
* ``pack(buffer, count=n, type=t)`` / ``unpack(data, into=buffer, count=n, type=t)``: a
  committed type built by hand over a contiguous buffer; displacement 0 is byte ``origin`` of the
  buffer, and every byte the n elements touch must lie inside it (checked before any byte moves).

Both take byte ranges of the packed stream as ddt_pack and ddt_unpack do: ``pack(..., offset,
size)`` returns stream bytes ``[offset, offset + size)``; ``unpack(data, ..., offset=k)`` writes
``len(data)`` bytes at stream position ``k``. Every check happens before the C call, and the C
call itself writes nothing on error, so a rejected call leaves the output untouched.
"""

import numpy as np

from . import _core
from .arrays import _as_array, data_address, index, view_type


def _contiguous_buffer(buffer, writable):
    """(address, nbytes) of a buffer whose bytes are one contiguous block."""
    arr = _as_array(buffer, "the buffer")
    if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        raise ValueError("ddtkit: a buffer used with an explicit type must be contiguous; "
                         "pass a strided view without type= (from_array describes it)")
    if writable and not arr.flags.writeable:
        raise ValueError("ddtkit: the output buffer is read-only")
    return data_address(arr), arr.nbytes


def _explicit(buffer, count, type, origin, writable):
    """(address, count, type) for the explicit form, after checking the type's footprint."""
    if not isinstance(type, _core.Type):
        raise TypeError(f"ddtkit: type must be a ddtkit.Type, not {type.__class__.__name__}")
    count = index(count, "count")
    origin = index(origin, "origin")
    if count < 0:
        raise ValueError(f"ddtkit: count must not be negative, got {count}")
    base, nbytes = _contiguous_buffer(buffer, writable)
    size = type.size  # ddtkit.Error for a freed type
    if size > 0 and count > 0:
        true_lb, true_extent = type.get_true_extent()
        extent = type.extent
        span = (count - 1) * extent
        lo = origin + true_lb + min(0, span)
        hi = origin + true_lb + true_extent + max(0, span)
        if lo < 0 or hi > nbytes:
            raise ValueError(
                f"ddtkit: {count} element(s) of the type touch bytes [{lo}, {hi}) of a buffer of "
                f"{nbytes} bytes (origin {origin})")
    return base + origin, count, type


def _source(view, count, type, origin, writable):
    if type is not None:
        return _explicit(view, 1 if count is None else count, type, origin, writable)
    if count is not None or origin != 0:
        raise TypeError("ddtkit: count and origin go with an explicit type=")
    arr = _as_array(view, "the view")
    if writable and not arr.flags.writeable:
        raise ValueError("ddtkit: the output view is read-only")
    return data_address(arr), 1, view_type(arr)


def _range(total, offset, size):
    offset = index(offset, "offset")
    if not 0 <= offset <= total:
        raise ValueError(f"ddtkit: offset {offset} outside the packed stream of {total} bytes")
    if size is None:
        return offset, total - offset
    size = index(size, "size")
    if not 0 <= size <= total - offset:
        raise ValueError(f"ddtkit: range [{offset}, {offset + size}) outside the packed stream "
                         f"of {total} bytes")
    return offset, size


def pack(view, offset=0, size=None, *, count=None, type=None, origin=0):
    """Packed bytes ``[offset, offset + size)`` of ``view`` as a new 1-D uint8 array.

    ``size=None`` packs to the end of the stream. The bytes go straight from the view's memory
    into the returned array. With ``type=``, ``view`` is a contiguous buffer holding ``count``
    elements of that committed type (see the module's documentation).
    """
    address, n, t = _source(view, count, type, origin, writable=False)
    offset, size = _range(n * t.size, offset, size)
    out = np.empty(size, dtype=np.uint8)
    if size > 0:
        _core._pack(address, n, t, offset, data_address(out), size)
    return out


def _packed_input(data):
    """(address, nbytes, keep-alive) of packed bytes: a uint8 array or bytes-like object."""
    if isinstance(data, np.ndarray):
        if data.dtype != np.uint8:
            raise TypeError(f"ddtkit: packed data must be a uint8 array, not {data.dtype}")
        if not data.flags.c_contiguous:
            raise ValueError("ddtkit: packed data must be contiguous")
        return data_address(data), data.nbytes, data
    try:
        mv = memoryview(data)
    except TypeError:
        raise TypeError(f"ddtkit: packed data must be a uint8 array or bytes-like, "
                        f"not {type(data).__name__}") from None
    if mv.itemsize != 1 or mv.format not in ("B", "b", "c"):
        raise TypeError(f"ddtkit: packed data must hold bytes, not items of format {mv.format!r}")
    if not mv.c_contiguous:
        raise ValueError("ddtkit: packed data must be contiguous")
    arr = np.frombuffer(mv, dtype=np.uint8) if mv.nbytes else np.empty(0, np.uint8)
    return data_address(arr), arr.nbytes, arr


def unpack(data, into, offset=None, *, count=None, type=None, origin=0):
    """Writes packed bytes ``data`` into the writable view ``into``; returns ``into``.

    ``offset=None``: ``data`` is the whole packed stream, and its length must equal the packed
    size of ``into``. ``offset=k``: ``data`` is the piece at stream position k (a partial unpack);
    it must end within the stream. Read-only outputs, size mismatches and data that is not uint8
    raise before anything is written. With ``type=``, ``into`` is a contiguous buffer holding
    ``count`` elements of that committed type.
    """
    address, nbytes, keep = _packed_input(data)
    out, n, t = _source(into, count, type, origin, writable=True)
    total = n * t.size
    if offset is None:
        if nbytes != total:
            raise ValueError(f"ddtkit: {nbytes} bytes of packed data for an output whose packed "
                             f"size is {total} bytes (pass offset= for a partial unpack)")
        offset = 0
    else:
        offset, _ = _range(total, offset, nbytes)
    if nbytes > 0:
        _core._unpack(address, nbytes, out, n, t, offset)
    del keep
    return into
