#include "mpi_peer.hpp"

#include <mpi.h>

#include <cstring>

#include "gen.hpp"
#include "mpi_build.hpp"

namespace {

// A null buffer is MPI_BOTTOM (absolute displacements): the same value in both MPIs today, but
// said here so that the core never needs it.
void* bottom_or(const void* p) { return p ? const_cast<void*>(p) : MPI_BOTTOM; }

class MpiType : public PeerType {
 public:
  MpiType(MPI_Datatype m, bool owned) : m_(m), owned_(owned) {}
  ~MpiType() override {
    if (owned_) MPI_Type_free(&m_);
  }
  bool pack(const void* in, int64_t count, void* out, int64_t outsize, int64_t* position) override {
    int pos = static_cast<int>(*position);
    int rc = MPI_Pack(bottom_or(in), static_cast<int>(count), m_, out, static_cast<int>(outsize), &pos, MPI_COMM_SELF);
    *position = pos;
    return rc == MPI_SUCCESS;
  }
  bool unpack(const void* in, int64_t insize, int64_t* position, void* out, int64_t count) override {
    int pos = static_cast<int>(*position);
    int rc = MPI_Unpack(in, static_cast<int>(insize), &pos, bottom_or(out), static_cast<int>(count), m_, MPI_COMM_SELF);
    *position = pos;
    return rc == MPI_SUCCESS;
  }

 private:
  MPI_Datatype m_;
  bool owned_;  // derived (ours to free), not predefined
};

class MpiPeer : public Peer {
 public:
  MpiPeer() {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    std::string v(version);
    v = v.substr(0, v.find_first_of(",\n"));
    while (v.find("  ") != std::string::npos) v.erase(v.find("  "), 1);
    v.erase(0, v.find_first_not_of(' '));
    const bool mpich = v.rfind("MPICH", 0) == 0;
    name_ = mpich ? "MPICH " + v.substr(v.find_last_of(' ') + 1) : v;
    key_ = mpich ? "mpich" : "openmpi";
  }
  std::string name() const override { return name_; }
  std::string key() const override { return key_; }

  std::unique_ptr<PeerType> type_of(ddt_type t) override {
    TPtr n = tnode_from_ddt(t);
    if (!n) return nullptr;
    int rc;
    MPI_Datatype m = mpi_build(*n, &rc);
    if (m == MPI_DATATYPE_NULL) return nullptr;
    const bool derived = n->kind != TNode::Basic;
    if (derived) MPI_Type_commit(&m);
    return std::make_unique<MpiType>(m, derived);
  }

  std::function<void()> create_commit_free(ddt_type t) override {
    TPtr tree = tnode_from_ddt(t);
    if (!tree || tree->kind == TNode::Basic) return nullptr;
    return [tree] {
      int rc;
      MPI_Datatype m = mpi_build(*tree, &rc);
      MPI_Type_commit(&m);
      MPI_Type_free(&m);
    };
  }

 private:
  std::string name_, key_;
};

}  // namespace

std::unique_ptr<Peer> make_mpi_peer() { return std::make_unique<MpiPeer>(); }
