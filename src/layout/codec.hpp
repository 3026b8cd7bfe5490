// Encoding of a layout as bytes: the canonical, compact form that serialize writes, hash
// hashes, and deserialize validates. Little-endian, LEB128 varints, signed values zigzagged.
#pragma once
#include <cstdint>
#include <string>

#include "layout/layout.hpp"

namespace ddt {

// Appends the layout's canonical bytes (disp, nodes, entries; no type-level bounds).
void encode_layout(const Layout& L, std::string& out);

class Reader {
 public:
  Reader(const uint8_t* p, int64_t n) : p_(p), end_(p + n) {}
  bool u(uint64_t& v);  // false at end of input or on an over-long varint
  bool s(int64_t& v);
  bool raw(void* dst, int64_t n);
  int64_t left() const { return end_ - p_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

void put_u(std::string& out, uint64_t v);
void put_s(std::string& out, int64_t v);

// Reads and validates a layout written by encode_layout. Returns DDT_SUCCESS or
// DDT_ERR_CORRUPT; never allocates more than a small multiple of the input's size.
int decode_layout(Reader& r, Layout& L);

}  // namespace ddt
