"""Random numpy views for the tests: dtypes, shapes, slices with steps (negative too),
transposes and broadcasts, drawn from a seeded generator so that every run sees the same cases."""

import numpy as np
import numpy.lib.recfunctions as rfn

SCALARS = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
           np.uint64, np.float16, np.float32, np.float64, np.longdouble, np.complex64,
           np.complex128, np.clongdouble, ">i4", ">f8", "V3"]


def random_scalar(rng):
    return np.dtype(SCALARS[rng.integers(len(SCALARS))])


def random_struct(rng, depth=0):
    """A structured dtype: 1-3 fields, some nested or arrays, with padding or out-of-order
    offsets (the names' order is the typemap order)."""
    n = int(rng.integers(1, 4))
    fields = []
    for i in range(n):
        r = rng.random()
        if r < 0.2 and depth < 2:
            f = random_struct(rng, depth + 1)
        elif r < 0.35:
            f = np.dtype((random_scalar(rng), tuple(int(x) for x in rng.integers(1, 4, size=rng.integers(1, 3)))))
        else:
            f = random_scalar(rng)
        fields.append((f"f{i}", f))
    kind = rng.integers(3)
    if kind == 0:  # packed
        return np.dtype(fields)
    if kind == 1:  # C alignment padding
        return np.dtype(fields, align=True)
    # explicit offsets with gaps, in shuffled order, and trailing padding
    order = rng.permutation(n)
    offsets, pos = [0] * n, 0
    for j in order:
        pos += int(rng.integers(0, 5))
        offsets[j] = pos
        pos += fields[j][1].itemsize
    return np.dtype({"names": [f[0] for f in fields], "formats": [f[1] for f in fields],
                     "offsets": offsets, "itemsize": pos + int(rng.integers(0, 4))})


def random_dtype(rng):
    return random_struct(rng) if rng.random() < 0.3 else random_scalar(rng)


def random_base(rng, dtype, shape):
    """An array of random bytes (every byte, padding included, is random)."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    return over(rng.integers(0, 256, size=nbytes, dtype=np.uint8), dtype, shape)


def over(raw, dtype, shape):
    """An array of dtype and shape over the uint8 array raw. (Copies of structured arrays are
    made through raw bytes: numpy copies structured arrays field by field, padding not kept.)"""
    return raw.view(dtype).reshape(shape)


def random_view_spec(rng):
    """(base shape, index tuple, transpose axes or None): applied the same way to equal bases."""
    ndim = int(rng.integers(0, 5))
    shape = tuple(int(x) for x in rng.integers(1, 7, size=ndim))
    index = []
    for n in shape:
        r = rng.random()
        if r < 0.15:
            index.append(int(rng.integers(n)))  # drops the dimension
        elif r < 0.2:
            index.append(slice(0, 0))  # an empty dimension
        else:
            step = int(rng.choice([1, 1, 2, 3, -1, -2]))
            a, b = sorted(int(x) for x in rng.integers(0, n + 1, size=2))
            index.append(slice(a, b, step) if step > 0 else slice(b - 1 if b > 0 else None, a - 1 if a > 0 else None, step))
    nd_after = sum(1 for i in index if isinstance(i, slice))
    axes = tuple(int(x) for x in rng.permutation(nd_after)) if rng.random() < 0.4 else None
    return shape, tuple(index), axes


def apply(base, spec):
    _, index, axes = spec
    v = base[index + (Ellipsis,)]  # a view even when every index is an integer
    return v.transpose(axes) if axes is not None else v


def packed_bytes(view):
    """What packing the view must give: its elements in C order, fields only (no padding)."""
    c = np.ascontiguousarray(view)
    if c.dtype.names is not None:
        c = rfn.repack_fields(c, recurse=True)
    return c.tobytes()


def assign(dst, src):
    """dst[...] = src, field by field down to the leaves, so that padding is never copied."""
    if dst.dtype.names is None:
        dst[...] = src
        return
    for name in dst.dtype.names:
        assign(dst[name], src[name])
