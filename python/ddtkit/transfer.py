"""pack, unpack, iov and copy: between numpy views (or buffers with an explicit type) and
packed bytes, lists of pieces, or each other.

Two forms for each buffer:

* ``pack(view)`` / ``unpack(data, into=view)``: the view is described by ``from_array`` (any
  strides, any numeric or structured dtype), relative to its data pointer.
* ``pack(buffer, count=n, type=t)`` / ``unpack(data, into=buffer, count=n, type=t)``: a
  committed type built by hand over a contiguous buffer; displacement 0 is byte ``origin`` of the
  buffer, and every byte the n elements touch must lie inside it (checked before any byte moves).

``iov`` takes the same forms (and ``None`` for no buffer at all), ``copy`` one of them for each
side (``src_type=``, ``dst_type=``, ...).

pack, unpack and iov take byte ranges of the packed stream as ddt_pack, ddt_unpack and ddt_iov
do: ``pack(..., offset, size)`` returns stream bytes ``[offset, offset + size)``; ``unpack(data,
..., offset=k)`` writes ``len(data)`` bytes at stream position ``k``. Every check happens before
the C call, and the C call itself writes nothing on error, so a rejected call leaves the output
untouched.
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


def _explicit(buffer, count, type, origin, writable, kw=""):
    """(address, count, type) for the explicit form, after checking the type's footprint. kw
    prefixes the keywords' names in messages (copy's "src_", "dst_")."""
    if not isinstance(type, _core.Type):
        raise TypeError(f"ddtkit: {kw}type must be a ddtkit.Type, not {type.__class__.__name__}")
    count = index(count, kw + "count")
    origin = index(origin, kw + "origin")
    if count < 0:
        raise ValueError(f"ddtkit: {kw}count must not be negative, got {count}")
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


def _source(view, count, type, origin, writable, kw=""):
    if type is not None:
        return _explicit(view, 1 if count is None else count, type, origin, writable, kw)
    if count is not None or origin != 0:
        raise TypeError(f"ddtkit: {kw}count and {kw}origin go with an explicit {kw}type=")
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


def iov(view, offset=0, size=None, *, count=None, type=None, origin=0, addresses=False,
        max_pieces=None):
    """The contiguous pieces of packed-stream bytes ``[offset, offset + size)`` of ``view``, as
    a list of ``(start, length)`` pairs in stream order (merged where they touch).

    ``start`` is a byte offset from ``view``'s data pointer (with ``type=``: from the start of the
    buffer, ``origin`` included), so a piece of a contiguous buffer ``b`` is
    ``b[start:start + length]``; ``addresses=True`` gives memory addresses instead. ``view=None``
    with ``type=`` lists the type's own displacements (from its displacement 0), no buffer
    involved. The first piece starts at ``offset`` (maybe inside a block), the last is cut at the
    end of the range; ``max_pieces`` stops the list after that many. Nothing is read or written.
    """
    if view is None:
        if type is None:
            raise TypeError("ddtkit: iov(None, ...) lists a type's pieces and needs type=")
        if addresses:
            raise ValueError("ddtkit: addresses=True needs a buffer, not None")
        if not isinstance(type, _core.Type):
            raise TypeError(f"ddtkit: type must be a ddtkit.Type, not {type.__class__.__name__}")
        n = index(1 if count is None else count, "count")
        if n < 0:
            raise ValueError(f"ddtkit: count must not be negative, got {n}")
        if origin != 0:
            raise TypeError("ddtkit: origin goes with a buffer, not None")
        t, base = type, 0
    else:
        address, n, t = _source(view, count, type, origin, writable=False)
        base = address if addresses else address - data_address(_as_array(view, "the view"))
    offset, size = _range(n * t.size, offset, size)
    if max_pieces is None:
        limit = size  # never more pieces than bytes
    else:
        limit = index(max_pieces, "max_pieces")
        if limit < 0:
            raise ValueError(f"ddtkit: max_pieces must not be negative, got {limit}")
    if size == 0 or limit == 0:
        return []
    return [tuple(p) for p in _core._iov(base, n, t, offset, size, limit)]


def _merged(runs):
    out = []
    for k, c in runs:
        if out and out[-1][0] == k:
            out[-1] = (k, out[-1][1] + c)
        else:
            out.append((k, c))
    return out


def _leaves(dtype):
    """The element's values in packed order as runs [(scalar dtype.str, count)]: fields in order,
    array fields expanded, offsets and padding left out (packing leaves them out)."""
    if dtype.subdtype is not None:
        base, shape = dtype.subdtype
        inner = _leaves(base)
        n = int(np.prod(shape, dtype=np.int64))
        return [(inner[0][0], inner[0][1] * n)] if len(inner) == 1 else _merged(inner * n)
    if dtype.fields is not None:
        return _merged([run for name in dtype.names for run in _leaves(dtype.fields[name][0])])
    return [(dtype.str, 1)]


def _same_values(a, b):
    """Whether views of dtypes a and b of the same packed size hold the same kinds of values in
    the same order: the same leaves, or one scalar kind throughout on both sides."""
    if a == b:
        return True
    la, lb = _leaves(a), _leaves(b)
    return la == lb or (len(la) == 1 and len(lb) == 1 and la[0][0] == lb[0][0])


def copy(src, dst, *, src_count=None, src_type=None, src_origin=0, dst_count=None, dst_type=None,
         dst_origin=0):
    """Copies the packed stream of ``src`` into ``dst`` without a packed copy in between (as
    ``ddt_copy``); returns ``dst``.

    Each side is a view (described by ``from_array``) or, with ``src_type=`` / ``dst_type=``, a
    contiguous buffer holding ``*_count`` elements of that committed type from byte ``*_origin``
    on, as for pack and unpack. The two packed sizes must be equal. Bytes move as they are: two
    views must hold the same kinds of values in the same order (``float64`` into ``float64``, a
    struct into the same fields at other offsets, a struct of three doubles into doubles, ...),
    or a TypeError says to use explicit types; no value is converted. ``dst`` must be writable.
    When the two may share memory, the source is staged first, so the result is as if it had
    been read whole before any byte was written. A call that raises writes nothing.
    """
    s_addr, sn, st = _source(src, src_count, src_type, src_origin, writable=False, kw="src_")
    d_addr, dn, dt = _source(dst, dst_count, dst_type, dst_origin, writable=True, kw="dst_")
    total, d_total = sn * st.size, dn * dt.size
    if total != d_total:
        raise ValueError(f"ddtkit: the source's packed size is {total} bytes and the "
                         f"destination's {d_total} bytes; copy needs them equal")
    s_arr, d_arr = _as_array(src, "the source"), _as_array(dst, "the destination")
    if src_type is None and dst_type is None and not _same_values(s_arr.dtype, d_arr.dtype):
        raise TypeError(f"ddtkit: copy moves bytes and converts no values: {s_arr.dtype} values into "
                        f"{d_arr.dtype} places would be reinterpreted (pass src_type= and dst_type= "
                        "to copy bytes regardless)")
    if total == 0:
        return dst
    if np.may_share_memory(s_arr, d_arr):
        staged = np.empty(total, dtype=np.uint8)
        _core._pack(s_addr, sn, st, 0, data_address(staged), total)
        _core._unpack(data_address(staged), total, d_addr, dn, dt, 0)
    else:
        _core._copy(s_addr, sn, st, d_addr, dn, dt)
    return dst
