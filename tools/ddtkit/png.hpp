// A minimal PNG writer for `ddtkit inspect --png`: 8-bit RGB, no compression library. The image
// data goes into stored (uncompressed) deflate blocks inside a zlib stream, which every PNG
// reader accepts; pictures of typemaps are small, so the size this costs does not matter.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace png {

// CRC-32 (ISO 3309, as PNG and zlib define it) of n bytes, continuing from crc (0 to start).
uint32_t crc32(const uint8_t* p, size_t n, uint32_t crc = 0);
// Adler-32 (RFC 1950) of n bytes, continuing from a (1 to start).
uint32_t adler32(const uint8_t* p, size_t n, uint32_t a = 1);

// The PNG file of a width x height image, rgb holding 3 bytes per pixel row by row. Empty when
// the sizes are out of range (0, above 2^24 per side, or rgb of the wrong length).
std::vector<uint8_t> encode(int64_t width, int64_t height, const std::vector<uint8_t>& rgb);

// encode() into a file; false with a message in *error when it cannot be written.
bool write(const std::string& path, int64_t width, int64_t height, const std::vector<uint8_t>& rgb, std::string* error);

}  // namespace png
