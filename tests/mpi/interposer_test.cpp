// An unmodified MPI program (it calls MPI only; it is not linked with the interposer) that moves
// derived datatypes along every path the interposer intercepts, and checks what arrives against
// the reference interpreter's prediction for this MPI's own bounds. Run it under mpiexec with
// 2-4 ranks, with and without LD_PRELOAD=libddtkit-mpi.so:
//   --expect-interposer  fail unless MPI_Send resolves into libddtkit-mpi.so (so a broken
//                        preload cannot pass as a native run), and require every check exact;
//   otherwise (native)   mismatches are the MPI's own findings: counted and printed, not failed.
// x87 long double padding is compared only under the interposer (MPICH copies long double by
// value and leaves those 6 bytes unwritten; that is not a wrong value).
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cases.hpp"
#include "gen.hpp"
#include "mpi_build.hpp"

namespace {

int me = 0, np = 1;
bool strict = false;
int64_t failures = 0, findings = 0, checks = 0;

void check(bool ok, const std::string& what) {
  ++checks;
  if (ok) return;
  if (strict) {
    if (++failures <= 30) std::printf("  FAILURE rank %d: %s\n", me, what.c_str());
  } else if (++findings <= 10) {
    std::printf("  native MPI finding rank %d: %s\n", me, what.c_str());
  }
}

std::vector<char> fill(int64_t n, uint64_t i, int r) { return case_bytes(n, i, r); }

// A buffer for count elements of ref: data[base + k] holds byte k of the span.
struct Buf {
  std::vector<char> data;
  int64_t lo = 0, hi = 0;
  char* base() { return data.data() - lo; }
  const char* base() const { return data.data() - lo; }
};
Buf make_buf(const RefType& ref, int64_t count, uint64_t i, int r) {
  Buf b;
  ref_span(ref, count, b.lo, b.hi);
  b.data = fill(b.hi - b.lo, i, r);
  return b;
}

bool same(const std::vector<char>& a, const std::vector<char>& b, const std::vector<bool>* skip) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (a[k] != b[k] && !(skip && !strict && (*skip)[k])) return false;
  return true;
}

// The receive buffer after unpacking `packed` into the initial contents of rank r's buffer.
std::vector<char> expect_unpack(const RefType& ref, int64_t count, const std::vector<char>& packed, uint64_t i, int r) {
  Buf b = make_buf(ref, count, i, r);
  ref_unpack(ref, packed.data(), count, b.base());
  return b.data;
}

std::vector<char> packed_of(const RefType& ref, int64_t count, uint64_t i, int r) {
  Buf b = make_buf(ref, count, i, r);
  std::vector<char> out(ref.size * count);
  ref_pack(ref, b.base(), count, out.data());
  return out;
}

// Padding mask of a receive buffer (x87 bytes) mapped from the packed stream.
std::vector<bool> pad_of_buffer(const RefType& ref, int64_t count, const Buf& b) {
  std::vector<bool> mask(b.data.size(), false), pp = x87_padding(ref, count);
  // Unpack a marker stream to find which buffer bytes the padding bytes land on.
  std::vector<char> marks(pp.size());
  for (size_t k = 0; k < pp.size(); ++k) marks[k] = pp[k] ? 1 : 0;
  std::vector<char> tmp(b.data.size(), 0);
  ref_unpack(ref, marks.data(), count, tmp.data() - b.lo);
  for (size_t k = 0; k < tmp.size(); ++k) mask[k] = tmp[k] != 0;
  return mask;
}

// Whether n elements write some byte twice (overlapping entries, or extents that make elements
// overlap): a receive into such a typemap has no defined result, so those types are received as
// bytes and left out of the collectives.
bool overlaps(const RefType& ref, int64_t n) {
  int64_t lo, hi;
  ref_span(ref, n, lo, hi);
  std::vector<char> seen(hi - lo, 0);
  for (int64_t k = 0; k < n; ++k)
    for (auto [d, len] : ref.map)
      for (int64_t b = 0; b < len; ++b)
        if (seen[k * ref.extent() + d + b - lo]++) return true;
  return false;
}

// ---- point to point with random types ---------------------------------------------------------

// One random type moved from src to dst along path (i % 8). The receiver gets either the same
// type or its packed bytes as MPI_BYTE (a different type of equal size on each side), every other
// time of those as one contiguous derived type of that many MPI_BYTEs (what the interposer calls a
// Contig type, which its fast paths receive as bytes, where a runtime ticket may come). Path 7 is
// MPI 4's MPI_Isendrecv on both sides; every other time the receiver's is
// MPI_Isendrecv_replace, which sends its buffer's prior contents back, checked at the sender.
void p2p_case(uint64_t i, MPI_Datatype mt, const RefType& ref, int64_t count, bool bytes_only) {
  const int src = static_cast<int>(i % np), dst = static_cast<int>((i + 1) % np);
  const int path = static_cast<int>(i % 8);
  const bool as_bytes = bytes_only || (i / 8) % 2 == 1;
  const bool replace = (i / 16) % 2 == 1;  // path 7: the receiver's MPI_Isendrecv_replace
  const int tag = static_cast<int>(i % 30000);
  const int64_t bytes = ref.size * count;
  // Received as one contiguous type of its bytes; on path 0 the message is then sent twice and
  // received twice, so that the second, checked receive finds its type known (the interposer
  // decides a type's first use on its general way).
  const bool as_contig = as_bytes && (i / 32) % 2 == 1 && bytes > 0;
  const int sends = path == 0 && as_contig ? 2 : 1;
  if (me == src && src != dst) {
    Buf b = make_buf(ref, count, i, src);
    MPI_Request r[2];
    switch (path) {
      case 0:
        for (int k = 0; k < sends; ++k) MPI_Send(b.base(), (int)count, mt, dst, tag, MPI_COMM_WORLD);
        break;
      case 1: MPI_Isend(b.base(), (int)count, mt, dst, tag, MPI_COMM_WORLD, r); MPI_Wait(r, MPI_STATUS_IGNORE); break;
      case 2: MPI_Ssend(b.base(), (int)count, mt, dst, tag, MPI_COMM_WORLD); break;
      case 3: {  // persistent, started twice: the second start must send the buffer as it is then
        MPI_Send_init(b.base(), (int)count, mt, dst, tag, MPI_COMM_WORLD, r);
        MPI_Start(r);
        MPI_Wait(r, MPI_STATUS_IGNORE);
        Buf b2 = make_buf(ref, count, i + 77, src);
        std::memcpy(b.data.data(), b2.data.data(), b.data.size());
        MPI_Start(r);
        MPI_Wait(r, MPI_STATUS_IGNORE);
        MPI_Request_free(r);
        break;
      }
      case 4: MPI_Issend(b.base(), (int)count, mt, dst, tag, MPI_COMM_WORLD, r); MPI_Waitall(1, r, MPI_STATUSES_IGNORE); break;
      case 5: {  // a send request freed while active: it must still be delivered, and its
                 // buffer must stay valid until then (to the end of the program, here)
        static std::vector<std::vector<char>> kept;
        kept.push_back(b.data);
        MPI_Isend(kept.back().data() - b.lo, (int)count, mt, dst, tag, MPI_COMM_WORLD, r);
        MPI_Request_free(r);
        MPI_Barrier(MPI_COMM_WORLD);
        break;
      }
      case 6: {
        int x = 0;
        MPI_Sendrecv(b.base(), (int)count, mt, dst, tag, &x, 0, MPI_INT, dst, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
      }
      case 7: {
        int x = 0;
        std::vector<char> back(bytes, 0);
        if (replace)
          MPI_Isendrecv(b.base(), (int)count, mt, dst, tag, back.data(), (int)bytes, MPI_BYTE, dst, tag, MPI_COMM_WORLD, r);
        else
          MPI_Isendrecv(b.base(), (int)count, mt, dst, tag, &x, 0, MPI_INT, dst, tag, MPI_COMM_WORLD, r);
        MPI_Status st;
        int flag = 0;
        if ((i / 32) % 2 == 1)
          while (!flag) MPI_Test(r, &flag, &st);
        else
          MPI_Wait(r, &st);
        int got = -1;
        MPI_Get_count(&st, MPI_BYTE, &got);
        check(st.MPI_SOURCE == dst && st.MPI_TAG == tag && got == (replace ? bytes : 0),
              "case " + std::to_string(i) + ": MPI_Isendrecv's status: source " + std::to_string(st.MPI_SOURCE) +
                  " count " + std::to_string(got));
        if (replace) {  // the receiver's buffer as it was before its receive, packed
          std::vector<char> want = as_bytes ? std::vector<char>(bytes, 0x5a) : packed_of(ref, count, i, dst);
          std::vector<bool> pad = x87_padding(ref, count);
          check(same(back, want, as_bytes ? nullptr : &pad), "case " + std::to_string(i) + ": MPI_Isendrecv_replace sent other bytes");
        }
        break;
      }
    }
  } else if (me == dst && src != dst) {
    Buf b = make_buf(ref, count, i, dst);
    std::vector<char> raw(bytes + 8, 0x5a);
    void* buf = as_bytes ? raw.data() : static_cast<void*>(b.base());
    int n = as_bytes ? (int)bytes : (int)count;
    MPI_Datatype t = as_bytes ? MPI_BYTE : mt, contig = MPI_DATATYPE_NULL;
    if (as_contig) {
      MPI_Type_contiguous((int)bytes, MPI_BYTE, &contig);
      MPI_Type_commit(&contig);
      t = contig, n = 1;
    }
    MPI_Status st;
    MPI_Request r[2];
    switch (path) {
      case 0:
        for (int k = 0; k < sends; ++k) MPI_Recv(buf, n, t, src, tag, MPI_COMM_WORLD, &st);
        break;
      case 1: MPI_Irecv(buf, n, t, src, tag, MPI_COMM_WORLD, r); MPI_Waitall(1, r, &st); break;
      case 2: {
        MPI_Irecv(buf, n, t, src, tag, MPI_COMM_WORLD, r);
        int flag = 0;
        while (!flag) MPI_Test(r, &flag, &st);
        break;
      }
      case 3: {
        MPI_Recv_init(buf, n, t, src, tag, MPI_COMM_WORLD, r);
        MPI_Start(r);
        MPI_Wait(r, &st);
        MPI_Start(r);
        int idx;
        MPI_Waitany(1, r, &idx, &st);
        MPI_Request_free(r);
        break;
      }
      case 4: {
        MPI_Irecv(buf, n, t, src, tag, MPI_COMM_WORLD, r);
        int flag = 0;
        while (!flag) MPI_Request_get_status(r[0], &flag, &st);
        MPI_Wait(r, MPI_STATUS_IGNORE);  // must not unpack a second time
        break;
      }
      case 5: {  // probes must report the message as sent (not the runtime's 64-byte ticket)
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Status pst;
        MPI_Message m;
        const int how = static_cast<int>((i / 14) % 3);
        if (how == 0) {
          MPI_Mprobe(src, tag, MPI_COMM_WORLD, &m, &pst);
          MPI_Mrecv(buf, n, t, &m, &st);
        } else if (how == 1) {
          MPI_Probe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &pst);
          MPI_Status again;
          int flag = 0;
          MPI_Iprobe(src, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &again);  // the same message again
          int c1 = -1, c2 = -2;
          MPI_Get_count(&pst, MPI_BYTE, &c1);
          MPI_Get_count(&again, MPI_BYTE, &c2);
          check(flag && c1 == c2 && again.MPI_TAG == tag, "case " + std::to_string(i) + ": probe, then Iprobe, disagree");
          MPI_Recv(buf, n, t, src, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        } else {
          int flag = 0;
          while (!flag) MPI_Improbe(src, tag, MPI_COMM_WORLD, &flag, &m, &pst);
          MPI_Request q;
          MPI_Imrecv(buf, n, t, &m, &q);
          MPI_Wait(&q, &st);
        }
        if (bytes > 0) {
          int got = -1;
          MPI_Get_count(&pst, t, &got);
          check(got == n && pst.MPI_SOURCE == src && pst.MPI_TAG == tag,
                "case " + std::to_string(i) + ": probe " + std::to_string(how) + " reports count " + std::to_string(got) +
                    " != " + std::to_string(n));
        }
        break;
      }
      case 6: {
        int x = 0;
        MPI_Sendrecv(&x, 0, MPI_INT, src, tag, buf, n, t, src, tag, MPI_COMM_WORLD, &st);
        break;
      }
      case 7: {
        int x = 0;
        if (replace)
          MPI_Isendrecv_replace(buf, n, t, src, tag, src, tag, MPI_COMM_WORLD, r);
        else
          MPI_Isendrecv(&x, 0, MPI_INT, src, tag, buf, n, t, src, tag, MPI_COMM_WORLD, r);
        MPI_Waitall(1, r, &st);
        break;
      }
    }
    if (path != 4 && bytes > 0) {  // MPI_Get_count of a zero-size type is 0
      int got;
      MPI_Get_count(&st, t, &got);
      check(got == n, "case " + std::to_string(i) + ": MPI_Get_count " + std::to_string(got) + " != " + std::to_string(n));
    }
    uint64_t sent_i = path == 3 ? i + 77 : i;
    std::vector<char> packed = packed_of(ref, count, sent_i, src);
    if (as_contig) MPI_Type_free(&contig);
    std::string what = "case " + std::to_string(i) + " path " + std::to_string(path) +
                       (as_contig ? " (contiguous bytes)" : as_bytes ? " (bytes)" : "");
    if (as_bytes) {
      raw.resize(bytes);
      std::vector<bool> pad = x87_padding(ref, count);
      check(same(raw, packed, &pad), what + " packed bytes differ");
    } else {
      std::vector<char> want = expect_unpack(ref, count, packed, i, dst);
      std::vector<bool> pad = pad_of_buffer(ref, count, b);
      check(same(b.data, want, &pad), what + " received buffer differs");
    }
  } else if (path == 5) {
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// ---- collectives ------------------------------------------------------------------------------

// Every collective once per type, blocking and non-blocking, with MPI_IN_PLACE where it applies.
// Every other type takes MPI 4's large-count forms (MPI_Bcast_c ...) where the MPI has them
// (MPICH; mpi4py calls those wherever they exist): the interposer must take them as the int forms.
#if MPI_VERSION >= 4
#define DDT_LC_(large, call, ...) ((large) ? call##_c(__VA_ARGS__) : call(__VA_ARGS__))
#else
#define DDT_LC_(large, call, ...) call(__VA_ARGS__)
#endif
// One collective, by mode: 0 blocking, 1 non-blocking (then waited for), 2 persistent (MPI 4's
// _init forms): the init is made on scrambled buffers, which get their contents back before each
// of two starts, so a pack made at the init instead of at the start shows (and so does a second
// activation that does not repeat the first). call(req) makes the call of its mode; check runs
// after each completion and may read the buffers' initial contents (restored before each start).
void run_case(int mode, std::vector<Buf*> bufs, const std::function<int(MPI_Request*)>& call,
              const std::function<void(int)>& check) {
  MPI_Request req = MPI_REQUEST_NULL;
  if (mode < 2) {
    int rc = call(mode ? &req : nullptr);
    if (rc == MPI_SUCCESS && mode) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(rc);
    return;
  }
  std::vector<std::vector<char>> keep;
  for (Buf* b : bufs) keep.push_back(b->data), std::fill(b->data.begin(), b->data.end(), char(0x5a));
  int rc = call(&req);
  for (int start = 0; start < 2; ++start) {
    for (size_t k = 0; k < bufs.size(); ++k) bufs[k]->data = keep[k];
    if (rc == MPI_SUCCESS) rc = MPI_Start(&req);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(rc);
  }
  if (req != MPI_REQUEST_NULL) MPI_Request_free(&req);
}

void collectives_case(uint64_t i, MPI_Datatype mt, const RefType& ref, int64_t count) {
  const int root = static_cast<int>(i % np);
  const bool large = MPI_VERSION >= 4 && (i / 2) % 2 == 1;
  const std::string tag = "collectives type " + std::to_string(i) + (large ? " (_c)" : "");
  const int c = (int)count;
  for (int mode = 0; mode < 3; ++mode) {
    [[maybe_unused]] const bool lc = large;
    const std::string how = mode == 1 ? " (non-blocking)" : mode == 2 ? " (persistent)" : "";
    auto ok = [&](int rc, bool good, const std::string& what) {
      check(rc == MPI_SUCCESS && good, tag + " " + what + how + (rc != MPI_SUCCESS ? " returned an error" : ""));
    };
    {  // Bcast
      Buf b = make_buf(ref, count, i, me);
      run_case(
          mode, {&b},
          [&](MPI_Request* r) {
            if (mode == 2) return DDT_LC_(lc, MPI_Bcast_init, b.base(), c, mt, root, MPI_COMM_WORLD, MPI_INFO_NULL, r);
            return r ? DDT_LC_(lc, MPI_Ibcast, b.base(), c, mt, root, MPI_COMM_WORLD, r)
                     : DDT_LC_(lc, MPI_Bcast, b.base(), c, mt, root, MPI_COMM_WORLD);
          },
          [&](int rc) {
            std::vector<char> want = me == root ? make_buf(ref, count, i, me).data
                                                : expect_unpack(ref, count, packed_of(ref, count, i, root), i, me);
            ok(rc, same(b.data, want, nullptr), "bcast");
          });
    }
    // All-to-all family with count elements per peer: rank p's chunk k is elements [k*count, ...).
    const int64_t all = count * np;
    for (int in_place = 0; in_place < 2; ++in_place) {  // Alltoall (and in place)
      Buf s = make_buf(ref, all, i, me), r = make_buf(ref, all, i + 1, me);
      if (in_place) r = make_buf(ref, all, i, me);  // in place: the data to send is in r
      const void* sb = in_place ? MPI_IN_PLACE : s.base();
      run_case(
          mode, {&s, &r},
          [&](MPI_Request* q) {
            if (mode == 2)
              return DDT_LC_(lc, MPI_Alltoall_init, sb, c, mt, r.base(), c, mt, MPI_COMM_WORLD, MPI_INFO_NULL, q);
            return q ? DDT_LC_(lc, MPI_Ialltoall, sb, c, mt, r.base(), c, mt, MPI_COMM_WORLD, q)
                     : DDT_LC_(lc, MPI_Alltoall, sb, c, mt, r.base(), c, mt, MPI_COMM_WORLD);
          },
          [&](int rc) {
            // Expected: chunk p of my receive buffer = chunk me of rank p's send data.
            std::vector<char> packed(ref.size * all);
            for (int p = 0; p < np; ++p) {
              std::vector<char> theirs = packed_of(ref, all, i, p);
              std::memcpy(packed.data() + p * count * ref.size, theirs.data() + me * count * ref.size, count * ref.size);
            }
            std::vector<char> want = expect_unpack(ref, all, packed, in_place ? i : i + 1, me);
            ok(rc, same(r.data, want, nullptr), std::string("alltoall") + (in_place ? " in place" : ""));
          });
    }
    for (int in_place = 0; in_place < 2; ++in_place) {  // Allgather (and in place)
      Buf s = make_buf(ref, count, i, me), r = make_buf(ref, all, i + 2, me);
      if (in_place) {  // my contribution sits in my chunk of r
        std::vector<char> mine = packed_of(ref, count, i, me), whole(ref.size * all);
        ref_pack(ref, r.base(), all, whole.data());
        std::memcpy(whole.data() + me * count * ref.size, mine.data(), mine.size());
        ref_unpack(ref, whole.data(), all, r.base());
      }
      const std::vector<char> before = r.data;
      const void* sb = in_place ? MPI_IN_PLACE : s.base();
      run_case(
          mode, {&s, &r},
          [&](MPI_Request* q) {
            if (mode == 2)
              return DDT_LC_(lc, MPI_Allgather_init, sb, c, mt, r.base(), c, mt, MPI_COMM_WORLD, MPI_INFO_NULL, q);
            return q ? DDT_LC_(lc, MPI_Iallgather, sb, c, mt, r.base(), c, mt, MPI_COMM_WORLD, q)
                     : DDT_LC_(lc, MPI_Allgather, sb, c, mt, r.base(), c, mt, MPI_COMM_WORLD);
          },
          [&](int rc) {
            std::vector<char> packed(ref.size * all);
            for (int p = 0; p < np; ++p) {
              std::vector<char> theirs = packed_of(ref, count, i, p);
              std::memcpy(packed.data() + p * count * ref.size, theirs.data(), count * ref.size);
            }
            Buf w;
            w.lo = r.lo, w.hi = r.hi, w.data = before;
            ref_unpack(ref, packed.data(), all, w.base());
            ok(rc, same(r.data, w.data, nullptr), std::string("allgather") + (in_place ? " in place" : ""));
          });
    }
    {  // Gather at root
      Buf s = make_buf(ref, count, i, me), r = make_buf(ref, all, i + 3, me);
      run_case(
          mode, {&s, &r},
          [&](MPI_Request* q) {
            if (mode == 2)
              return DDT_LC_(lc, MPI_Gather_init, s.base(), c, mt, r.base(), c, mt, root, MPI_COMM_WORLD, MPI_INFO_NULL,
                             q);
            return q ? DDT_LC_(lc, MPI_Igather, s.base(), c, mt, r.base(), c, mt, root, MPI_COMM_WORLD, q)
                     : DDT_LC_(lc, MPI_Gather, s.base(), c, mt, r.base(), c, mt, root, MPI_COMM_WORLD);
          },
          [&](int rc) {
            if (me != root) return ok(rc, true, "gather");
            std::vector<char> packed(ref.size * all);
            for (int p = 0; p < np; ++p) {
              std::vector<char> theirs = packed_of(ref, count, i, p);
              std::memcpy(packed.data() + p * count * ref.size, theirs.data(), count * ref.size);
            }
            ok(rc, same(r.data, expect_unpack(ref, all, packed, i + 3, me), nullptr), "gather");
          });
    }
    {  // Scatterv with reversed displacements
      std::vector<int> counts(np, c), displs(np);
      for (int p = 0; p < np; ++p) displs[p] = (int)((np - 1 - p) * count);
      Buf s2 = make_buf(ref, all, i + 4, me), r2 = make_buf(ref, count, i + 5, me);
#if MPI_VERSION >= 4
      std::vector<MPI_Count> lcounts(counts.begin(), counts.end());  // live until the request completes
      std::vector<MPI_Aint> ldispls(displs.begin(), displs.end());
#endif
      run_case(
          mode, {&s2, &r2},
          [&](MPI_Request* q) {
#if MPI_VERSION >= 4
            if (lc && mode == 2)
              return MPI_Scatterv_init_c(s2.base(), lcounts.data(), ldispls.data(), mt, r2.base(), count, mt, root,
                                         MPI_COMM_WORLD, MPI_INFO_NULL, q);
#endif
            if (mode == 2)
              return MPI_Scatterv_init(s2.base(), counts.data(), displs.data(), mt, r2.base(), c, mt, root,
                                       MPI_COMM_WORLD, MPI_INFO_NULL, q);
#if MPI_VERSION >= 4
            if (lc)
              return q ? MPI_Iscatterv_c(s2.base(), lcounts.data(), ldispls.data(), mt, r2.base(), count, mt, root,
                                         MPI_COMM_WORLD, q)
                       : MPI_Scatterv_c(s2.base(), lcounts.data(), ldispls.data(), mt, r2.base(), count, mt, root,
                                        MPI_COMM_WORLD);
#endif
            return q ? MPI_Iscatterv(s2.base(), counts.data(), displs.data(), mt, r2.base(), c, mt, root,
                                     MPI_COMM_WORLD, q)
                     : MPI_Scatterv(s2.base(), counts.data(), displs.data(), mt, r2.base(), c, mt, root,
                                    MPI_COMM_WORLD);
          },
          [&](int rc) {
            std::vector<char> rootdata = packed_of(ref, all, i + 4, root);
            std::vector<char> mine(rootdata.begin() + displs[me] * ref.size,
                                   rootdata.begin() + (displs[me] + count) * ref.size);
            ok(rc, same(r2.data, expect_unpack(ref, count, mine, i + 5, me), nullptr), "scatterv");
          });
    }
  }
}

// ---- neighborhood collectives -----------------------------------------------------------------

// Two topologies over all ranks: a 1-D Cartesian line that is not periodic (rank 0's neighbor
// below and the last rank's above are MPI_PROC_NULL, whose chunks of the receive buffer must stay
// as they were) and a distributed graph in which each rank sends to the next and hears from the
// one before. sources(r) and dests(r) are rank r's neighbors in the standard's order.
struct Topo {
  const char* name;
  MPI_Comm comm;
  std::function<std::vector<int>(int)> sources, dests;
};
std::vector<Topo> topologies() {
  static std::vector<Topo> ts;
  if (!ts.empty()) return ts;
  auto line = [](int r) { return std::vector<int>{r > 0 ? r - 1 : MPI_PROC_NULL, r < np - 1 ? r + 1 : MPI_PROC_NULL}; };
  int dims[1] = {np}, periods[1] = {0};
  MPI_Comm cart, ring;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
  const int from = (me + np - 1) % np, to = (me + 1) % np;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &from, MPI_UNWEIGHTED, 1, &to, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                 &ring);
  ts.push_back({"cartesian line", cart, line, line});
  ts.push_back({"distributed graph ring", ring, [](int r) { return std::vector<int>{(r + np - 1) % np}; },
                [](int r) { return std::vector<int>{(r + 1) % np}; }});
  return ts;
}

// Each neighborhood collective once per topology, blocking and non-blocking. The receive buffer
// holds in chunks of count elements, chunk k at element rpos(k) * count (v- and w-forms reverse
// the order); the all-to-all forms send out chunks, chunk j at spos(j) * count.
void neighbor_case(uint64_t i, MPI_Datatype mt, const RefType& ref, int64_t count) {
  const int64_t cb = count * ref.size;
  const bool large = MPI_VERSION >= 4 && (i / 2) % 2 == 1;  // the _c forms, as collectives_case
  const int c = (int)count;
  for (const Topo& t : topologies()) {
    const std::vector<int> src = t.sources(me);
    const int in = static_cast<int>(src.size()), out = static_cast<int>(t.dests(me).size());
    for (int form = 0; form < 5; ++form)  // allgather, allgatherv, alltoall, alltoallv, alltoallw
      for (int mode = 0; mode < 3; ++mode) {  // blocking, non-blocking, persistent (run_case)
        const bool all = form >= 2, rev = form == 1 || form >= 3, lc = large;
        const uint64_t sseed = i + 10 + form, rseed = i + 20 + form;
        auto pos = [&](int k, int n) { return rev ? n - 1 - k : k; };
        Buf sb = make_buf(ref, all ? out * count : count, sseed, me), rb = make_buf(ref, in * count, rseed, me);
        std::vector<int> counts(std::max(in, out), c), sd(out), rd(in);
        std::vector<MPI_Aint> swd(out), rwd(in);
        std::vector<MPI_Datatype> types(std::max(in, out), mt);
        for (int j = 0; j < out; ++j) sd[j] = (int)(pos(j, out) * count), swd[j] = sd[j] * ref.extent();
        for (int k = 0; k < in; ++k) rd[k] = (int)(pos(k, in) * count), rwd[k] = rd[k] * ref.extent();
#if MPI_VERSION >= 4
        std::vector<MPI_Count> lcounts(counts.begin(), counts.end());
        std::vector<MPI_Aint> lsd(sd.begin(), sd.end()), lrd(rd.begin(), rd.end());
#endif
        void *s = sb.base(), *r = rb.base();
        const MPI_Comm m = t.comm;
        const MPI_Info inf = MPI_INFO_NULL;
        auto call = [&](MPI_Request* q) -> int {
#if MPI_VERSION >= 4
          if (mode == 2 && lc) switch (form) {
              case 0: return MPI_Neighbor_allgather_init_c(s, c, mt, r, c, mt, m, inf, q);
              case 1: return MPI_Neighbor_allgatherv_init_c(s, c, mt, r, lcounts.data(), lrd.data(), mt, m, inf, q);
              case 2: return MPI_Neighbor_alltoall_init_c(s, c, mt, r, c, mt, m, inf, q);
              case 3:
                return MPI_Neighbor_alltoallv_init_c(s, lcounts.data(), lsd.data(), mt, r, lcounts.data(), lrd.data(),
                                                     mt, m, inf, q);
              default:
                return MPI_Neighbor_alltoallw_init_c(s, lcounts.data(), swd.data(), types.data(), r, lcounts.data(),
                                                     rwd.data(), types.data(), m, inf, q);
            }
#endif
          if (mode == 2) switch (form) {
              case 0: return MPI_Neighbor_allgather_init(s, c, mt, r, c, mt, m, inf, q);
              case 1: return MPI_Neighbor_allgatherv_init(s, c, mt, r, counts.data(), rd.data(), mt, m, inf, q);
              case 2: return MPI_Neighbor_alltoall_init(s, c, mt, r, c, mt, m, inf, q);
              case 3:
                return MPI_Neighbor_alltoallv_init(s, counts.data(), sd.data(), mt, r, counts.data(), rd.data(), mt, m,
                                                   inf, q);
              default:
                return MPI_Neighbor_alltoallw_init(s, counts.data(), swd.data(), types.data(), r, counts.data(),
                                                   rwd.data(), types.data(), m, inf, q);
            }
#if MPI_VERSION >= 4
          if (lc) switch (form) {
              case 0:
                return q ? MPI_Ineighbor_allgather_c(s, c, mt, r, c, mt, m, q) : MPI_Neighbor_allgather_c(s, c, mt, r, c, mt, m);
              case 1:
                return q ? MPI_Ineighbor_allgatherv_c(s, c, mt, r, lcounts.data(), lrd.data(), mt, m, q)
                         : MPI_Neighbor_allgatherv_c(s, c, mt, r, lcounts.data(), lrd.data(), mt, m);
              case 2:
                return q ? MPI_Ineighbor_alltoall_c(s, c, mt, r, c, mt, m, q) : MPI_Neighbor_alltoall_c(s, c, mt, r, c, mt, m);
              case 3:
                return q ? MPI_Ineighbor_alltoallv_c(s, lcounts.data(), lsd.data(), mt, r, lcounts.data(), lrd.data(), mt,
                                                     m, q)
                         : MPI_Neighbor_alltoallv_c(s, lcounts.data(), lsd.data(), mt, r, lcounts.data(), lrd.data(), mt,
                                                    m);
              default:
                return q ? MPI_Ineighbor_alltoallw_c(s, lcounts.data(), swd.data(), types.data(), r, lcounts.data(),
                                                     rwd.data(), types.data(), m, q)
                         : MPI_Neighbor_alltoallw_c(s, lcounts.data(), swd.data(), types.data(), r, lcounts.data(),
                                                    rwd.data(), types.data(), m);
            }
#endif
          switch (form) {
            case 0: return q ? MPI_Ineighbor_allgather(s, c, mt, r, c, mt, m, q) : MPI_Neighbor_allgather(s, c, mt, r, c, mt, m);
            case 1:
              return q ? MPI_Ineighbor_allgatherv(s, c, mt, r, counts.data(), rd.data(), mt, m, q)
                       : MPI_Neighbor_allgatherv(s, c, mt, r, counts.data(), rd.data(), mt, m);
            case 2: return q ? MPI_Ineighbor_alltoall(s, c, mt, r, c, mt, m, q) : MPI_Neighbor_alltoall(s, c, mt, r, c, mt, m);
            case 3:
              return q ? MPI_Ineighbor_alltoallv(s, counts.data(), sd.data(), mt, r, counts.data(), rd.data(), mt, m, q)
                       : MPI_Neighbor_alltoallv(s, counts.data(), sd.data(), mt, r, counts.data(), rd.data(), mt, m);
            default:
              return q ? MPI_Ineighbor_alltoallw(s, counts.data(), swd.data(), types.data(), r, counts.data(), rwd.data(),
                                                 types.data(), m, q)
                       : MPI_Neighbor_alltoallw(s, counts.data(), swd.data(), types.data(), r, counts.data(), rwd.data(),
                                                types.data(), m);
          }
        };
        // Expected: chunk k of my receive stream is what source k sent me (its chunk for me in the
        // all-to-all forms, its whole buffer in the allgathers); a null source's chunk as it was.
        auto verify = [&](int rc) {
          std::vector<char> want = packed_of(ref, in * count, rseed, me);
          for (int k = 0; k < in; ++k) {
            const int p = src[k];
            if (p == MPI_PROC_NULL) continue;
            const std::vector<int> theirs = t.dests(p);
            const int n = static_cast<int>(theirs.size());
            const int j = static_cast<int>(std::find(theirs.begin(), theirs.end(), me) - theirs.begin());
            std::vector<char> sent = packed_of(ref, all ? n * count : count, sseed, p);
            std::memcpy(want.data() + pos(k, in) * cb, sent.data() + (all ? pos(j, n) * cb : 0), cb);
          }
          static const char* names[] = {"allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"};
          static const char* modes[] = {"", " (non-blocking)", " (persistent)"};
          check(rc == MPI_SUCCESS && same(rb.data, expect_unpack(ref, in * count, want, rseed, me), nullptr),
                "neighborhood collectives type " + std::to_string(i) + " " + t.name + ": neighbor_" + names[form] +
                    (lc ? "_c" : "") + modes[mode] + (rc != MPI_SUCCESS ? " returned an error" : ""));
        };
        run_case(mode, {&sb, &rb}, call, verify);
      }
  }
}

// ---- fixed cases ------------------------------------------------------------------------------

// --heap-vector-only: 8 KiB of 32-byte blocks of chars at a stride of 40 (51 bytes of each cache
// line) from 1 MiB allocations, which the interposer's allocator serves from the runtime's heap,
// and nothing else: under Open MPI a cell-sized message that goes by RTS from there (src/mpi/
// local_transfer.cpp: heap_rts) and is otherwise handed to Open MPI as it is. Run with the
// default thresholds and DDTKIT_EXPECT_HEAP=1 (tests/CMakeLists.txt), the heap must have carried
// it. Ranks 0 and 1 each send and receive it, three times. (It was osu_latency -D vect:8:4's
// shape, 4-byte blocks at 8, until such tiny blocks stayed in the cells at these sizes:
// rendezvous.cpp's layout_pays_heap.)
void heap_vector_case() {
  if (np < 2 || me >= 2) return;
  MPI_Datatype vc;
  constexpr int kBlocks = 256, kBlock = 32, kStride = 40;
  MPI_Type_vector(kBlocks, kBlock, kStride, MPI_CHAR, &vc);
  MPI_Type_commit(&vc);
  const size_t big = size_t{1} << 20;
  char* sb = static_cast<char*>(std::malloc(big));
  char* rb = static_cast<char*>(std::malloc(big));
  for (int round = 0; round < 3; ++round) {
    for (size_t k = 0; k < big; ++k) sb[k] = static_cast<char>(k * 13 + me * 7 + round), rb[k] = 0x5a;
    const int other = 1 - me;
    MPI_Status st;
    if (me == 0) {
      MPI_Send(sb, 1, vc, other, 40 + round, MPI_COMM_WORLD);
      MPI_Recv(rb, 1, vc, other, 40 + round, MPI_COMM_WORLD, &st);
    } else {
      MPI_Recv(rb, 1, vc, other, 40 + round, MPI_COMM_WORLD, &st);
      MPI_Send(sb, 1, vc, other, 40 + round, MPI_COMM_WORLD);
    }
    int n = -1;
    MPI_Get_count(&st, vc, &n);
    bool ok = n == 1 && st.MPI_SOURCE == other && st.MPI_TAG == 40 + round;
    for (size_t k = 0; k < size_t{kBlocks} * kStride + 64; ++k) {
      const bool in_block = k < size_t{kBlocks} * kStride && k % kStride < kBlock;
      const char want = in_block ? static_cast<char>(k * 13 + other * 7 + round) : static_cast<char>(0x5a);
      ok = ok && rb[k] == want;
    }
    check(ok, "vector(256,32,40,char) from 1 MiB allocations, round " + std::to_string(round));
  }
  std::free(sb);
  std::free(rb);
  MPI_Type_free(&vc);
}

// Receives on communicators whose handle the MPI may give again after MPI_Comm_free, each time
// with other processes behind the same ranks: the interposer remembers whether a (communicator,
// source) may send a ticket (local.hpp: LocalHit), and MPI_Comm_free must make it forget. Rounds
// alternate pairs (0,1)(2,3) of world ranks with pairs (0,2)(1,3), each process's partner being
// rank me ^ 1 of the new communicator: under DDTKIT_PRETEND_NODES=2 with 4 processes the partner
// is off-node in one round and on the node in the next, where a stale answer would take the
// runtime's ticket for the message.
void reused_comm_case() {
  if (np % 2 != 0) return;
  MPI_Datatype v;
  MPI_Type_vector(4096, 1, 2, MPI_INT, &v);  // 16 KiB of 4 B pieces: the runtime's, where on the node
  MPI_Type_commit(&v);
  std::vector<int> out(8191), in(8191);
  for (int round = 0; round < 6; ++round) {
    const bool crossed = round % 2 == 0 && np >= 4;  // first off-node where there are two pretend nodes
    // New rank of world rank me: crossed swaps world ranks 1 and 2 of each group of four.
    int key = me;
    if (crossed && me % 4 == 1) key = me + 1;
    if (crossed && me % 4 == 2) key = me - 1;
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, 0, key, &c);
    int r = 0;
    MPI_Comm_rank(c, &r);
    const int partner = r ^ 1;
    for (size_t k = 0; k < out.size(); ++k) out[k] = round * 100000000 + r * 100000 + static_cast<int>(k);
    std::fill(in.begin(), in.end(), -1);
    for (int rep = 0; rep < 2; ++rep) {
      if (r < partner) {
        MPI_Send(out.data(), 1, v, partner, round, c);
        MPI_Recv(in.data(), 1, v, partner, round, c, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(in.data(), 1, v, partner, round, c, MPI_STATUS_IGNORE);
        MPI_Send(out.data(), 1, v, partner, round, c);
      }
      bool ok = true;
      for (size_t k = 0; k < in.size(); ++k)
        ok = ok && in[k] == (k % 2 ? -1 : round * 100000000 + partner * 100000 + static_cast<int>(k));
      check(ok, "round " + std::to_string(round) + ": vector(4096,1,2,int) from rank " + std::to_string(partner) +
                    " of a communicator split after another's MPI_Comm_free");
    }
    MPI_Comm_free(&c);
  }
  MPI_Type_free(&v);
}

void fixed_cases() {
  // get_envelope / get_contents keep answering as the MPI does.
  MPI_Datatype v;
  MPI_Type_vector(3, 2, 5, MPI_INT, &v);
  MPI_Type_commit(&v);
  int ni, na, nd, comb, ints[3];
  MPI_Aint addrs[1];
  MPI_Datatype olds[1];
  MPI_Type_get_envelope(v, &ni, &na, &nd, &comb);
  check(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1, "envelope of vector(3,2,5,int)");
  MPI_Type_get_contents(v, 3, 0, 1, ints, addrs, olds);
  check(ints[0] == 3 && ints[1] == 2 && ints[2] == 5 && olds[0] == MPI_INT, "contents of vector(3,2,5,int)");
  // The true extent is where the bytes lie (src/mpi/hooks.cpp): hvector(3, 3, -1 B, MPI_BYTE)
  // has them at [-2, 3), which Open MPI 5.0.11 answers as [0, 9); asked before and after commit.
  {
    MPI_Datatype h;
    MPI_Type_create_hvector(3, 3, -1, MPI_BYTE, &h);
    for (int committed = 0; committed < 2; ++committed) {
      MPI_Aint tlb = 0, text = 0;
      MPI_Count tlbx = 0, textx = 0;
      MPI_Type_get_true_extent(h, &tlb, &text);
      MPI_Type_get_true_extent_x(h, &tlbx, &textx);
      check(tlb == -2 && text == 5 && tlbx == -2 && textx == 5,
            "true extent of hvector(3,3,-1B,byte)" + std::string(committed ? "" : " (not committed)") + ": " +
                std::to_string(tlb) + "+" + std::to_string(text) + ", _x " + std::to_string(tlbx) + "+" + std::to_string(textx));
      MPI_Type_commit(&h);
    }
    MPI_Type_free(&h);
  }
  // Alltoall from a vector into plain ints: a collective takes the runtime or the MPI alike at
  // every rank whatever each rank's types (src/mpi/local_coll.cpp), and moves each side as it is.
  {
    MPI_Datatype v2;
    MPI_Type_vector(1024, 1, 2, MPI_INT, &v2);  // extent 2047 ints
    MPI_Type_commit(&v2);
    std::vector<int> sv(2047 * static_cast<size_t>(np)), rv(1024 * static_cast<size_t>(np), -1);
    for (size_t k = 0; k < sv.size(); ++k) sv[k] = me * 1000000 + static_cast<int>(k);
    MPI_Alltoall(sv.data(), 1, v2, rv.data(), 1024, MPI_INT, MPI_COMM_WORLD);
    bool ok = true;
    for (int p = 0; p < np; ++p)
      for (int k = 0; k < 1024; ++k) ok = ok && rv[p * 1024 + k] == p * 1000000 + me * 2047 + 2 * k;
    check(ok, "alltoall of vector(1024,1,2,int) into 1024 MPI_INT per rank");
    // Rooted ones and allgather with the vector on some ranks and plain ints on the others.
    const int root = np - 1;
    std::vector<int> one(1024, -1);
    if (me == root) MPI_Scatter(sv.data(), 1, v2, one.data(), 1024, MPI_INT, root, MPI_COMM_WORLD);
    else MPI_Scatter(nullptr, 0, MPI_INT, one.data(), 1024, MPI_INT, root, MPI_COMM_WORLD);
    ok = true;
    for (int k = 0; k < 1024; ++k) ok = ok && one[k] == root * 1000000 + me * 2047 + 2 * k;
    check(ok, "scatter of vector(1024,1,2,int) chunks into 1024 MPI_INT");
    std::vector<int> g(2047 * static_cast<size_t>(np), -1);
    MPI_Gather(one.data(), 1024, MPI_INT, g.data(), 1, v2, root, MPI_COMM_WORLD);
    if (me == root) {
      ok = true;
      for (int p = 0; p < np; ++p)
        for (int k = 0; k < 2047; ++k) ok = ok && g[p * 2047 + k] == (k % 2 ? -1 : root * 1000000 + p * 2047 + k);
      check(ok, "gather of 1024 MPI_INT into vector(1024,1,2,int) chunks, gaps untouched");
    }
    std::vector<int> a(2047 * static_cast<size_t>(np), -1);
    MPI_Allgather(one.data(), 1024, MPI_INT, a.data(), 1, v2, MPI_COMM_WORLD);
    ok = true;
    for (int p = 0; p < np; ++p)
      for (int k = 0; k < 2047; ++k) ok = ok && a[p * 2047 + k] == (k % 2 ? -1 : root * 1000000 + p * 2047 + k);
    check(ok, "allgather of 1024 MPI_INT into vector(1024,1,2,int) chunks, gaps untouched");
    std::vector<int> b(2047, -1);
    if (me == root) b.assign(sv.begin(), sv.begin() + 2047);
    if (me == root) MPI_Bcast(b.data(), 1, v2, root, MPI_COMM_WORLD);
    else MPI_Bcast(one.data(), 1024, MPI_INT, root, MPI_COMM_WORLD);
    ok = true;
    for (int k = 0; k < 1024; ++k) ok = ok && (me == root ? b[2 * k] : one[k]) == root * 1000000 + 2 * k;
    check(ok, "bcast of vector(1024,1,2,int) from the root into 1024 MPI_INT elsewhere");
    MPI_Type_free(&v2);
  }
  // Truncation: 2 elements sent, room for 1; MPI_Get_elements counts basic elements received.
  if (np >= 2 && me < 2) {
    int data[20];
    for (int k = 0; k < 20; ++k) data[k] = k;
    if (me == 0) {
      MPI_Send(data, 2, v, 1, 7, MPI_COMM_WORLD);
      MPI_Send(data, 1, v, 1, 8, MPI_COMM_WORLD);
    } else {
      MPI_Status st;
      int out[40] = {0};
      int rc = MPI_Recv(out, 1, v, 0, 7, MPI_COMM_WORLD, &st), cls = MPI_SUCCESS;
      MPI_Error_class(rc, &cls);
      check(cls == MPI_ERR_TRUNCATE, "truncation reports MPI_ERR_TRUNCATE (got class " + std::to_string(cls) + ")");
      rc = MPI_Recv(out, 2, v, 0, 8, MPI_COMM_WORLD, &st);
      int n = -1, e = -1;
      MPI_Get_count(&st, v, &n);
      MPI_Get_elements(&st, v, &e);
      check(rc == MPI_SUCCESS && n == 1 && e == 6, "Get_count 1 / Get_elements 6 after receiving one vector(3,2,5)");
      check(out[0] == 0 && out[1] == 1 && out[5] == 5 && out[6] == 6 && out[10] == 10 && out[11] == 11 && out[2] == 0,
            "received vector(3,2,5,int) values");
    }
  }
  MPI_Type_free(&v);
  // MPI_BOTTOM with absolute displacements (as WRF uses it).
  if (np >= 2 && me < 2) {
    double a[8];
    int b[4];
    for (int k = 0; k < 8; ++k) a[k] = me == 0 ? k + 0.5 : -1;
    for (int k = 0; k < 4; ++k) b[k] = me == 0 ? 100 + k : -1;
    MPI_Aint da, db;
    MPI_Get_address(&a[1], &da);
    MPI_Get_address(&b[2], &db);
    int bls[2] = {3, 2};
    MPI_Aint ds[2] = {da, db};
    MPI_Datatype ts[2] = {MPI_DOUBLE, MPI_INT}, s;
    MPI_Type_create_struct(2, bls, ds, ts, &s);
    MPI_Type_commit(&s);
    if (me == 0) MPI_Send(MPI_BOTTOM, 1, s, 1, 9, MPI_COMM_WORLD);
    else MPI_Recv(MPI_BOTTOM, 1, s, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (me == 1)
      check(a[0] == -1 && a[1] == 1.5 && a[3] == 3.5 && a[4] == -1 && b[1] == -1 && b[2] == 102 && b[3] == 103,
            "MPI_BOTTOM struct with absolute addresses");
    MPI_Type_free(&s);
  }
  reused_comm_case();
}


}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int64_t types = 300;
  uint64_t seed = 1;
  bool expect = false, heap_vector_only = false;
  for (int k = 1; k < argc; ++k) {
    if (!std::strcmp(argv[k], "--types") && k + 1 < argc) types = std::atoll(argv[++k]);
    else if (!std::strcmp(argv[k], "--seed") && k + 1 < argc) seed = std::strtoull(argv[++k], nullptr, 10);
    else if (!std::strcmp(argv[k], "--expect-interposer")) expect = true;
    else if (!std::strcmp(argv[k], "--heap-vector-only")) heap_vector_only = true;
  }
  // Errors return (a truncation is checked; Open MPI refuses some legal darrays, which are skipped).
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  const bool loaded = interposer_loaded();
  strict = expect;
  if (expect && !loaded) {
    std::printf("FAILURE: --expect-interposer, but MPI_Send does not resolve into libddtkit-mpi.so\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (heap_vector_only)
    heap_vector_case();
  else
    fixed_cases();
  // The two fixed types and the random ones; none with --heap-vector-only.
  const int64_t cases = heap_vector_only ? 0 : types + 2;
  // The two types Open MPI 5.0.11 packs wrongly (issue 4), then random types.
  std::vector<TPtr> trees = open_mpi_wrong_pack_types();
  GenOptions opt;
  opt.allow_overlap = false;  // a receive into overlapping entries has no defined result
  int64_t skipped = 0;
  if (!heap_vector_only) {  // FFT2D's shape with 2 KiB rows (elements interleave): large messages of it go to MPICH as
     // they are (src/mpi/pass.cpp), so this checks that path too.
    auto c2 = std::make_shared<TNode>();
    c2->kind = TNode::Contig, c2->count = 2;
    c2->kids = {std::make_shared<TNode>()};
    std::const_pointer_cast<TNode>(c2->kids[0])->basic = 13;  // double
    auto v = std::make_shared<TNode>();
    v->kind = TNode::Vector, v->count = 64, v->bl = 128, v->stride = 128 * np, v->kids = {c2};  // N = P n
    auto r = std::make_shared<TNode>();
    r->kind = TNode::Resized, r->lb = 0, r->extent = 16 * 128, r->kids = {v};
    TPtr adj;
    MPI_Datatype mt = mpi_build_adjusted(*r, adj);
    MPI_Type_commit(&mt);
    RefType ref;
    ref_eval(*adj, ref, 1 << 22);
    for (uint64_t i = 7000; i < 7008; ++i) p2p_case(i, mt, ref, 2, overlaps(ref, 2));
    collectives_case(7003, mt, ref, 1);
    neighbor_case(7003, mt, ref, 1);
    MPI_Type_free(&mt);
  }
  for (int64_t i = 0; i < cases; ++i) {
    std::mt19937_64 rng(seed * 1000003 + i);
    RefType ref;
    TPtr t = i < 2 ? trees[i] : random_type(rng, opt, ref, 2000, 1 << 16);
    if (i < 2) ref_eval(*t, ref);
    TPtr adj;
    MPI_Datatype mt = mpi_build_adjusted(*t, adj);
    if (mt == MPI_DATATYPE_NULL) {  // the MPI refuses a legal type (Open MPI: some darrays)
      ++skipped;
      continue;
    }
    MPI_Type_commit(&mt);
    RefType aref;
    ref_eval(*adj, aref, 1 << 22);
    const int64_t count = 1 + static_cast<int64_t>(i % 3);
    if (aref.size > 0 && t->kind != TNode::Basic) {  // the true bounds of the data, as the reference has them
      MPI_Count tlb = 0, text = 0;
      MPI_Type_get_true_extent_x(mt, &tlb, &text);
      check(tlb == aref.true_lb && text == aref.true_ub - aref.true_lb,
            "true extent of " + describe(*t) + ": " + std::to_string(tlb) + "+" + std::to_string(text) + ", reference " +
                std::to_string(aref.true_lb) + "+" + std::to_string(aref.true_ub - aref.true_lb));
    }
    if (i < 2)  // MPI_Pack of the fixed types, counts 1-3, against the reference
      for (int c = 1; c <= 3; ++c) {
        Buf b = make_buf(aref, c, i, me);
        std::vector<char> out(aref.size * c);
        int pos = 0;
        MPI_Pack(b.base(), c, mt, out.data(), (int)out.size(), &pos, MPI_COMM_WORLD);
        check(pos == (int)out.size() && same(out, packed_of(aref, c, i, me), nullptr),
              "MPI_Pack of " + describe(*t) + " count " + std::to_string(c));
      }
    p2p_case(static_cast<uint64_t>(i), mt, aref, count, overlaps(aref, count));
    if (i % 10 == 3 && aref.size > 0 && !overlaps(aref, count * std::max(np, 2))) {
      collectives_case(static_cast<uint64_t>(i), mt, aref, count);
      neighbor_case(static_cast<uint64_t>(i), mt, aref, count);
    } else if (i < 2 && aref.size > 0 && !overlaps(aref, count * 2)) {  // Open MPI's wrongly packed types
      neighbor_case(static_cast<uint64_t>(i), mt, aref, count);
    }
    if (t->kind != TNode::Basic) MPI_Type_free(&mt);
  }
  int64_t totals[3] = {failures, findings, checks}, sums[3];
  MPI_Reduce(totals, sums, 3, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (me == 0) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    std::string v(version, std::strcspn(version, "\n,"));
    std::printf("%s, %d ranks, %s: %lld types (%lld refused by the MPI), %lld checks, %lld failures, %lld native MPI findings\n",
                v.c_str(), np, loaded ? "under libddtkit-mpi.so" : "native", (long long)cases, (long long)skipped,
                (long long)sums[2], (long long)sums[0], (long long)sums[1]);
  }
  MPI_Finalize();
  return failures ? 1 : 0;
}
