// Building a TNode through a real MPI (whichever mpi.h this is compiled against). Shared by
// the MPI oracle and the benchmark peers, so both build exactly the calls the tree describes.
#pragma once
#include <mpi.h>

#include <functional>
#include <vector>

#include "ddtkit.h"
#include "reference.hpp"
#include "tnode.hpp"

inline MPI_Datatype mpi_basic(int i) {
  const MPI_Datatype all[] = {
      MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT,
      MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT,
      MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T,
      MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_C_FLOAT_COMPLEX,
      MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX, MPI_WCHAR, MPI_AINT, MPI_OFFSET, MPI_COUNT,
      MPI_PACKED, MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT,
      MPI_LONG_DOUBLE_INT};
  return all[i];
}

// Called after each derived node is built, children first: what the MPI made of that node.
using MpiNodeHook = std::function<void(const TNode&, MPI_Datatype)>;

// Builds t's MPI type; returns MPI_DATATYPE_NULL (with *rc set) if the MPI refuses a call.
// Intermediate handles are freed once their parent exists; predefined ones are never freed.
inline MPI_Datatype mpi_build(const TNode& t, int* rc, const MpiNodeHook& hook = nullptr) {
  *rc = MPI_SUCCESS;
  if (t.kind == TNode::Basic) return mpi_basic(t.basic);
  std::vector<MPI_Datatype> kids;
  for (const TPtr& k : t.kids) {
    MPI_Datatype m = mpi_build(*k, rc, hook);
    if (m == MPI_DATATYPE_NULL) {
      for (size_t j = 0; j < kids.size(); ++j)
        if (t.kids[j]->kind != TNode::Basic) MPI_Type_free(&kids[j]);
      return MPI_DATATYPE_NULL;
    }
    kids.push_back(m);
  }
  MPI_Datatype o = kids.empty() ? MPI_DATATYPE_NULL : kids[0], out = MPI_DATATYPE_NULL;
  int n = static_cast<int>(t.count);
  std::vector<int> bls(t.bls.begin(), t.bls.end()), di(t.displs.begin(), t.displs.end());
  std::vector<MPI_Aint> da(t.displs.begin(), t.displs.end());
  std::vector<int> sz(t.sizes.begin(), t.sizes.end()), sub(t.subsizes.begin(), t.subsizes.end()),
      st(t.starts.begin(), t.starts.end());
  std::vector<int> dist, dargs(t.dargs);
  for (int d : t.distribs)
    dist.push_back(d == DDT_DISTRIBUTE_BLOCK ? MPI_DISTRIBUTE_BLOCK
                   : d == DDT_DISTRIBUTE_CYCLIC ? MPI_DISTRIBUTE_CYCLIC : MPI_DISTRIBUTE_NONE);
  for (int& d : dargs)
    if (d == DDT_DISTRIBUTE_DFLT_DARG) d = MPI_DISTRIBUTE_DFLT_DARG;
  int order = t.order == DDT_ORDER_C ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
  int r = MPI_ERR_OTHER;
  switch (t.kind) {
    case TNode::Contig: r = MPI_Type_contiguous(n, o, &out); break;
    case TNode::Vector: r = MPI_Type_vector(n, (int)t.bl, (int)t.stride, o, &out); break;
    case TNode::HVector: r = MPI_Type_create_hvector(n, (int)t.bl, t.stride, o, &out); break;
    case TNode::Indexed: r = MPI_Type_indexed(n, bls.data(), di.data(), o, &out); break;
    case TNode::HIndexed: r = MPI_Type_create_hindexed(n, bls.data(), da.data(), o, &out); break;
    case TNode::IndexedBlock: r = MPI_Type_create_indexed_block(n, (int)t.bl, di.data(), o, &out); break;
    case TNode::HIndexedBlock: r = MPI_Type_create_hindexed_block(n, (int)t.bl, da.data(), o, &out); break;
    case TNode::Struct: r = MPI_Type_create_struct(n, bls.data(), da.data(), kids.data(), &out); break;
    case TNode::Subarray: r = MPI_Type_create_subarray(t.ndims, sz.data(), sub.data(), st.data(), order, o, &out); break;
    case TNode::Darray:
      r = MPI_Type_create_darray(t.psize, t.prank, t.ndims, sz.data(), dist.data(), dargs.data(), t.psizes.data(),
                                 order, o, &out);
      break;
    case TNode::Resized: r = MPI_Type_create_resized(o, t.lb, t.extent, &out); break;
    case TNode::Dup: r = MPI_Type_dup(o, &out); break;
    default: break;
  }
  for (size_t i = 0; i < kids.size(); ++i)
    if (t.kids[i]->kind != TNode::Basic) MPI_Type_free(&kids[i]);
  if (r != MPI_SUCCESS) {
    *rc = r;
    return MPI_DATATYPE_NULL;
  }
  if (hook) hook(t, out);
  return out;
}

// Builds t through MPI and returns, in adj, t with explicit bounds wherever this MPI's lb or
// extent for a node differ from the standard's (the reference interpreter's): the tree whose
// reference expansion is what this MPI's own bounds make a type move, and what an interposer
// imposes with ddt_type_set_bounds. on_override sees each such node. MPI_DATATYPE_NULL if the
// MPI refuses a call.
inline MPI_Datatype mpi_build_adjusted(const TNode& t, TPtr& adj,
                                       const std::function<void(const TNode&)>& on_override = nullptr) {
  std::vector<std::pair<const TNode*, std::pair<MPI_Aint, MPI_Aint>>> mpi_bounds;
  int rc;
  MPI_Datatype out = mpi_build(t, &rc, [&](const TNode& n, MPI_Datatype m) {
    MPI_Aint lb, ext;
    MPI_Type_get_extent(m, &lb, &ext);
    mpi_bounds.push_back({&n, {lb, ext}});
  });
  if (out == MPI_DATATYPE_NULL) return out;
  // Children first, so each node's reference bounds see its children's overrides.
  std::function<TPtr(const TNode&)> adjust = [&](const TNode& n) -> TPtr {
    auto a = std::make_shared<TNode>(n);
    for (auto& k : a->kids) k = adjust(*k);
    const std::pair<MPI_Aint, MPI_Aint>* b = nullptr;
    for (auto& e : mpi_bounds)
      if (e.first == &n) b = &e.second;
    if (!b) return a;
    RefType r;
    ref_eval(*a, r, 1 << 22);
    if (b->first != r.lb || b->second != r.extent()) {
      if (on_override) on_override(n);
      a->override_bounds = true;
      a->ov_lb = b->first;
      a->ov_extent = b->second;
    }
    return a;
  };
  adj = adjust(t);
  return out;
}
