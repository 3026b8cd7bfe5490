// A layout's identity: its 128-bit hash and its description in words. Both read only the layout
// (codec.hpp's canonical encoding for the hash), so equal layouts hash and read alike whatever
// type they came from; the type-level entry points (type/identity.cpp) add the type's header.
#pragma once
#include <cstdint>
#include <string>

#include "layout/layout.hpp"

namespace ddt {

// The hash of L's canonical encoding. Stable across processes and releases: hashes name layouts
// in caches and between peers, and golden values are tested. May throw std::bad_alloc.
void hash_layout(const Layout& L, uint8_t out[16]);

// Appends L in words: "@disp: " and its node tree, or "no data" for an empty layout; one line
// per node, at most 8 entries shown per table. May throw std::bad_alloc.
void describe_layout(const Layout& L, std::string& out);

}  // namespace ddt
