"""from_mpi on mpi4py types built at random, compared byte for byte with MPI's own Pack and
Unpack of the same buffer (MPICH from PyPI, initialised as a singleton in this process)."""

import numpy as np
import pytest

import ddtkit

MPI = pytest.importorskip("mpi4py.MPI", reason="make test-python installs mpi4py")

# Not MPI.LONG_DOUBLE: MPICH moves the 10 value bytes of an x87 long double and, where it is
# unaligned, writes zeros for the 6 padding bytes; ddtkit moves all 16. The values agree, the
# padding does not, so it stays out of this byte-for-byte comparison (test_named_types_map_to_
# predefined checks its mapping).
BASIC = [MPI.DOUBLE, MPI.INT, MPI.SHORT, MPI.CHAR, MPI.FLOAT, MPI.INT64_T, MPI.UINT8_T,
         MPI.C_DOUBLE_COMPLEX, MPI.C_BOOL, MPI.TWOINT, MPI.DOUBLE_INT, MPI.SHORT_INT]


class Types:
    """Builds random MPI types and frees every one of them at the end."""

    def __init__(self, rng):
        self.rng = rng
        self.made = []

    def keep(self, dt):
        self.made.append(dt)
        return dt

    def ints(self, n, lo, hi):
        return [int(x) for x in self.rng.integers(lo, hi + 1, size=n)]

    def random(self, depth):
        rng = self.rng
        if depth == 0 or rng.random() < 0.2:
            return BASIC[rng.integers(len(BASIC))]
        kind = rng.integers(12)
        old = self.random(depth - 1)
        n = int(rng.integers(1, 4))
        if kind == 0:
            return self.keep(old.Create_contiguous(n))
        if kind == 1:
            return self.keep(old.Create_vector(n, int(rng.integers(1, 3)), int(rng.integers(-4, 5))))
        if kind == 2:
            return self.keep(old.Create_hvector(n, int(rng.integers(1, 3)), int(rng.integers(-48, 49))))
        if kind == 3:
            return self.keep(old.Create_indexed(self.ints(n, 0, 2), self.ints(n, -3, 6)))
        if kind == 4:
            return self.keep(old.Create_hindexed(self.ints(n, 0, 2), self.ints(n, -32, 64)))
        if kind == 5:
            return self.keep(old.Create_indexed_block(int(rng.integers(1, 3)), self.ints(n, -2, 6)))
        if kind == 6:
            return self.keep(old.Create_hindexed_block(int(rng.integers(1, 3)), self.ints(n, 0, 64)))
        if kind == 7:
            types = [old] + [self.random(depth - 1) for _ in range(n - 1)]
            return self.keep(MPI.Datatype.Create_struct(self.ints(n, 0, 2), self.ints(n, 0, 96), types))
        if kind == 8:
            nd = int(rng.integers(1, 4))
            sizes = self.ints(nd, 1, 4)
            subsizes = [int(rng.integers(1, s + 1)) for s in sizes]
            starts = [int(rng.integers(0, s - b + 1)) for s, b in zip(sizes, subsizes)]
            order = MPI.ORDER_C if rng.random() < 0.5 else MPI.ORDER_FORTRAN
            return self.keep(old.Create_subarray(sizes, subsizes, starts, order))
        if kind == 9:
            nd = int(rng.integers(1, 3))
            psizes = self.ints(nd, 1, 2)
            size = int(np.prod(psizes))
            distribs, dargs = [], []
            for p in psizes:
                d = [MPI.DISTRIBUTE_BLOCK, MPI.DISTRIBUTE_CYCLIC, MPI.DISTRIBUTE_NONE][rng.integers(3 if p == 1 else 2)]
                distribs.append(d)
                dargs.append(int(rng.integers(1, 3)) if d == MPI.DISTRIBUTE_CYCLIC and rng.random() < 0.5
                             else MPI.DISTRIBUTE_DFLT_DARG)
            order = MPI.ORDER_C if rng.random() < 0.5 else MPI.ORDER_FORTRAN
            return self.keep(old.Create_darray(size, int(rng.integers(size)), self.ints(nd, 2, 6),
                                               distribs, dargs, psizes, order))
        if kind == 10:
            return self.keep(old.Create_resized(int(rng.integers(-16, 17)), int(rng.integers(1, 65))))
        return self.keep(old.Dup())

    def free(self):
        for dt in self.made:
            dt.Free()


def bounds_of_mpi(dt):
    lb, extent = dt.Get_extent()
    true_lb, true_extent = dt.Get_true_extent()
    return dt.Get_size(), lb, extent, true_lb, true_extent


def bounds_of(t):
    return t.size, t.lb, t.extent, t.true_lb, t.true_extent


@pytest.mark.parametrize("seed", range(200))
def test_from_mpi_packs_as_mpi(seed):
    rng = np.random.default_rng(1000 + seed)
    types = Types(rng)
    try:
        dt = types.random(int(rng.integers(1, 4)))
        if dt.Get_extent()[1] <= 0:  # mpi4py's Pack counts elements as buffer bytes // extent
            dt = types.keep(dt.Create_resized(dt.Get_extent()[0], dt.Get_true_extent()[1] + 1))
        dt = types.keep(dt.Dup()).Commit()
        t = ddtkit.from_mpi(dt)
        assert bounds_of(t)[:3] == bounds_of_mpi(dt)[:3]  # size, lb, extent
        # True bounds: MPICH counts zero-length blocks in them (tests/oracle says the same of
        # the C oracle), so its true range may only be wider than ddtkit's, never narrower.
        _, _, _, mpi_tlb, mpi_text = bounds_of_mpi(dt)
        assert mpi_tlb <= t.true_lb and t.true_lb + t.true_extent <= mpi_tlb + mpi_text
        if t.size == 0 or t.blocks()[0] > 0 and not has_empty_blocks(dt):
            assert (t.true_lb, t.true_extent) == (mpi_tlb, mpi_text)

        count = int(rng.integers(1, 4))
        size, _, extent, true_lb, true_extent = bounds_of_mpi(dt)
        span = (count - 1) * extent
        lo, hi = true_lb + min(0, span), true_lb + true_extent + max(0, span)
        origin = max(0, -lo) + int(rng.integers(0, 8))  # unaligned starts too
        nbytes = origin + max(hi, count * extent) + 8
        buf = rng.integers(0, 256, size=nbytes, dtype=np.uint8)
        element_bytes = memoryview(buf)[origin:origin + count * extent]

        mpi_packed = bytearray(dt.Pack_size(count, MPI.COMM_WORLD))
        end = dt.Pack(element_bytes, mpi_packed, 0, MPI.COMM_WORLD)
        assert end == count * size
        packed = ddtkit.pack(buf, count=count, type=t, origin=origin)
        assert packed.tobytes() == bytes(mpi_packed[:end])

        # Unpack new bytes into two equal buffers, one by MPI, one by ddtkit.
        data = rng.integers(0, 256, size=end, dtype=np.uint8)
        by_mpi, by_ddt = buf.copy(), buf.copy()
        dt.Unpack(data.tobytes(), 0, memoryview(by_mpi)[origin:origin + count * extent], MPI.COMM_WORLD)
        ddtkit.unpack(data, into=by_ddt, count=count, type=t, origin=origin)
        if not overlapping(t):
            assert by_ddt.tobytes() == by_mpi.tobytes()
        # Overlapping typemaps (MPI leaves unpacking them undefined): ddtkit's bytes read back
        # as it wrote them, in typemap order, the last write to a byte winning.
        assert ddtkit.pack(by_ddt, count=count, type=t, origin=origin).tobytes() == \
            last_writes(data, t, count, origin, by_ddt)
    finally:
        types.free()


def has_empty_blocks(dt):
    """Whether dt's construction has a zero count or block length somewhere (or a child whose
    typemap is empty), the case where MPICH's true bounds may be wider than the standard's."""
    if dt.Get_envelope()[-1] == MPI.COMBINER_NAMED:
        return False
    if dt.Get_size() == 0:
        return True
    _, combiner, params = dt.decode()
    counts = [v for k, v in params.items() if k in ("count", "blocklength", "blocklengths")]
    flat = [x for v in counts for x in (v if isinstance(v, list) else [v])]
    children = params.get("datatypes") or [dt.decode()[0]]
    empty = 0 in flat or any(has_empty_blocks(c) for c in children)
    for c in children:
        if not c.is_predefined:
            c.Free()
    return empty


def overlapping(t):
    """Whether some byte of one element appears twice in t's typemap."""
    addresses = stream_addresses(t, 1, 0)
    return len(set(addresses)) != len(addresses)


def stream_addresses(t, count, origin):
    """The buffer byte of each stream byte, found by packing a buffer of byte indices."""
    lo = min(0, t.true_lb + min(0, (count - 1) * t.extent))
    hi = t.true_lb + t.true_extent + max(0, (count - 1) * t.extent)
    n = origin - lo + hi
    index = np.arange(n, dtype=np.int64)
    as_bytes = index.astype("<u8").view(np.uint8).reshape(n, 8)
    words = ddtkit.resized(ddtkit.hindexed([1], [0], ddtkit.UINT64_T), 0, 1)  # noqa: F841
    positions = []
    for k in range(8):  # byte k of each index, gathered through the same typemap
        plane = np.ascontiguousarray(as_bytes[:, k])
        positions.append(ddtkit.pack(plane, count=count, type=t, origin=origin - lo).astype(np.int64) << (8 * k))
    return [int(x) + lo for x in sum(positions)]


def last_writes(data, t, count, origin, buf):
    """What packing reads back after unpacking data in typemap order, later writes winning."""
    final = {}
    for i, address in enumerate(stream_addresses(t, count, origin)):
        final[address] = data[i]
    return bytes(final[a] for a in stream_addresses(t, count, origin))


def test_named_types_map_to_predefined():
    for name in ("DOUBLE", "INT", "CHAR", "C_BOOL", "INT64_T", "C_DOUBLE_COMPLEX", "LONG_DOUBLE",
                 "DOUBLE_INT", "SHORT_INT", "PACKED", "BYTE", "AINT", "WCHAR"):
        assert ddtkit.from_mpi(getattr(MPI, name)) is ddtkit.predefined[name]
    assert ddtkit.from_mpi(MPI.TWOINT) is ddtkit.TWOINT
    assert ddtkit.from_mpi(MPI.CXX_BOOL) is ddtkit.C_BOOL


def test_types_ddtkit_cannot_express():
    for dt in (MPI.REAL, MPI.INTEGER, MPI.DOUBLE_PRECISION):
        with pytest.raises(TypeError, match="no ddtkit equivalent"):
            ddtkit.from_mpi(dt)
    f90 = MPI.Datatype.Create_f90_real(6, 30)
    with pytest.raises(TypeError, match="COMBINER_F90_REAL"):
        ddtkit.from_mpi(f90)
    nested = MPI.DOUBLE.Create_vector(2, 1, 3)
    holder = MPI.Datatype.Create_struct([1, 1], [0, 64], [nested, MPI.REAL])
    with pytest.raises(TypeError, match="MPI_REAL"):
        ddtkit.from_mpi(holder)
    holder.Free()
    nested.Free()
    for bad in (None, 3, ddtkit.DOUBLE):
        with pytest.raises(TypeError):
            ddtkit.from_mpi(bad)
    with pytest.raises(ValueError):
        ddtkit.from_mpi(MPI.DATATYPE_NULL)


class Classic(MPI.Datatype):
    """An MPI.Datatype that reports its contents in the classic (MPI-3) layout: integers and
    addresses, no large counts. mpi4py 4 builds every type with MPI-4's large-count constructors,
    so this stands in for types built by C code with the classic ones. It answers for a ddtkit
    type, whose contents follow the classic layout."""

    COMBINERS = {ddtkit.Combiner[n]: getattr(MPI, "COMBINER_" + n) for n in (
        "CONTIGUOUS", "VECTOR", "HVECTOR", "INDEXED", "HINDEXED", "INDEXED_BLOCK",
        "HINDEXED_BLOCK", "STRUCT", "SUBARRAY", "DARRAY", "RESIZED", "DUP")}
    ORDERS = {ddtkit.ORDER_C: MPI.ORDER_C, ddtkit.ORDER_FORTRAN: MPI.ORDER_FORTRAN}
    DISTRIBS = {ddtkit.DISTRIBUTE_BLOCK: MPI.DISTRIBUTE_BLOCK,
                ddtkit.DISTRIBUTE_CYCLIC: MPI.DISTRIBUTE_CYCLIC,
                ddtkit.DISTRIBUTE_NONE: MPI.DISTRIBUTE_NONE}

    def __new__(cls, t):
        self = super().__new__(cls, MPI.BYTE)  # a valid handle; the methods below answer for t
        self.t = t
        return self

    def __init__(self, t):
        pass

    def Get_envelope(self):
        ni, na, nd, combiner = self.t.envelope()
        return ni, na, 0, nd, self.COMBINERS[combiner]

    def Get_contents(self):
        combiner, ints, addrs, types = self.t.contents()
        if combiner == ddtkit.Combiner.SUBARRAY:
            ints[-1] = self.ORDERS[ints[-1]]
        if combiner == ddtkit.Combiner.DARRAY:
            nd = ints[2]
            ints[3 + nd:3 + 2 * nd] = [self.DISTRIBS[d] for d in ints[3 + nd:3 + 2 * nd]]
            ints[-1] = self.ORDERS[ints[-1]]
        named = {t.handle: getattr(MPI, "TWOINT" if t.name == "2INT" else t.name)
                 for t in types if t.predefined}
        return ints, addrs, [], [named[c.handle] if c.predefined else Classic(c) for c in types]

    def Get_extent(self):
        return self.t.get_extent()

    def Free(self):
        pass


def test_classic_contents_layout():
    I, D = ddtkit.INT, ddtkit.DOUBLE
    made = [
        ddtkit.contiguous(3, D), ddtkit.vector(3, 2, -4, I), ddtkit.hvector(2, 2, 40, D),
        ddtkit.indexed([2, 1], [0, 5], D), ddtkit.hindexed([1, 2], [8, 32], I),
        ddtkit.indexed_block(2, [1, 4], I), ddtkit.hindexed_block(1, [0, 10], ddtkit.SHORT),
        ddtkit.struct([1, 2], [0, 16], [ddtkit.CHAR, ddtkit.vector(2, 1, 3, D)]),
        ddtkit.subarray([5, 4], [3, 2], [1, 1], D, ddtkit.ORDER_FORTRAN),
        ddtkit.darray(4, 1, [8, 8], [ddtkit.DISTRIBUTE_BLOCK, ddtkit.DISTRIBUTE_CYCLIC],
                      [ddtkit.DISTRIBUTE_DFLT_DARG, 2], [2, 2], D),
        ddtkit.resized(ddtkit.contiguous(2, ddtkit.TWOINT), -4, 40), ddtkit.dup(ddtkit.vector(2, 1, 3, I)),
    ]
    for t in made:
        u = ddtkit.from_mpi(Classic(t))
        assert u.envelope() == t.envelope()
        assert u.commit().hash() == t.commit().hash() and bounds_of(u) == bounds_of(t)
