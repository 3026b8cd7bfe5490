// PNG (ISO/IEC 15948): the signature, then chunks of length | type | data | CRC-32 over type and
// data. IHDR says the size and the pixel format (8-bit RGB, no interlace), IDAT holds the zlib
// stream of the filtered scanlines (each row led by filter byte 0, "none"), IEND closes.
// The zlib stream (RFC 1950) is a 2-byte header, deflate data and the Adler-32 of the raw bytes;
// its deflate data (RFC 1951) here is a series of stored blocks: a header byte (BFINAL, BTYPE 00)
// then LEN and its complement NLEN, little-endian, then LEN raw bytes, at most 65535 per block.
#include "png.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace png {
namespace {

void be32(std::vector<uint8_t>& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(v >> s));
}

void chunk(std::vector<uint8_t>& out, const char type[4], const std::vector<uint8_t>& data) {
  be32(out, static_cast<uint32_t>(data.size()));
  const size_t at = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  be32(out, crc32(out.data() + at, out.size() - at));
}

// The zlib stream of raw, in stored deflate blocks.
std::vector<uint8_t> zlib_stored(const std::vector<uint8_t>& raw) {
  std::vector<uint8_t> z;
  z.reserve(raw.size() + raw.size() / 65535 * 5 + 16);
  z.push_back(0x78);  // CMF: deflate, 32 KiB window
  z.push_back(0x01);  // FLG: no dictionary, fastest level; (0x78 << 8 | 0x01) % 31 == 0
  size_t at = 0;
  do {
    const size_t len = std::min<size_t>(65535, raw.size() - at);
    const bool last = at + len == raw.size();
    z.push_back(last ? 1 : 0);
    z.push_back(static_cast<uint8_t>(len));
    z.push_back(static_cast<uint8_t>(len >> 8));
    z.push_back(static_cast<uint8_t>(~len));
    z.push_back(static_cast<uint8_t>(~len >> 8));
    z.insert(z.end(), raw.begin() + at, raw.begin() + at + len);
    at += len;
  } while (at < raw.size());
  be32(z, adler32(raw.data(), raw.size()));
  return z;
}

}  // namespace

uint32_t crc32(const uint8_t* p, size_t n, uint32_t crc) {
  static const auto table = [] {
    std::vector<uint32_t> t(256);
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

uint32_t adler32(const uint8_t* p, size_t n, uint32_t a) {
  uint32_t s1 = a & 0xffff, s2 = a >> 16;
  while (n > 0) {
    const size_t run = std::min<size_t>(n, 5552);  // the longest run whose sums fit 32 bits
    for (size_t i = 0; i < run; ++i) s1 += p[i], s2 += s1;
    s1 %= 65521, s2 %= 65521;
    p += run, n -= run;
  }
  return s2 << 16 | s1;
}

std::vector<uint8_t> encode(int64_t width, int64_t height, const std::vector<uint8_t>& rgb) {
  constexpr int64_t kMaxSide = int64_t(1) << 24;
  if (width < 1 || height < 1 || width > kMaxSide || height > kMaxSide) return {};
  if (static_cast<int64_t>(rgb.size()) / 3 / width != height || static_cast<int64_t>(rgb.size()) != 3 * width * height)
    return {};
  std::vector<uint8_t> raw;
  raw.reserve((3 * width + 1) * height);
  for (int64_t y = 0; y < height; ++y) {
    raw.push_back(0);  // filter: none
    raw.insert(raw.end(), rgb.begin() + 3 * width * y, rgb.begin() + 3 * width * (y + 1));
  }
  std::vector<uint8_t> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<uint8_t> ihdr;
  be32(ihdr, static_cast<uint32_t>(width));
  be32(ihdr, static_cast<uint32_t>(height));
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});  // 8 bits, RGB, deflate, adaptive filters, no interlace
  chunk(out, "IHDR", ihdr);
  chunk(out, "IDAT", zlib_stored(raw));
  chunk(out, "IEND", {});
  return out;
}

bool write(const std::string& path, int64_t width, int64_t height, const std::vector<uint8_t>& rgb, std::string* error) {
  const std::vector<uint8_t> file = encode(width, height, rgb);
  if (file.empty()) {
    *error = "image size out of range";
    return false;
  }
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  const bool ok = std::fwrite(file.data(), 1, file.size(), f) == file.size();
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) {
    *error = path + ": " + std::strerror(ok ? errno : err);
    return false;
  }
  return true;
}

}  // namespace png
