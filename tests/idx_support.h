#pragma once

// Small gzip IDX files for tests: n images of 4 x 4 pixels, class c lighting up row c.

#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

#include "engine/rng.h"

namespace hogwild::test {

/// Writes DIR/PREFIX-images-idx3-ubyte.gz and DIR/PREFIX-labels-idx1-ubyte.gz (the standard
/// names): `n` seeded images of 4 x 4 pixels in 4 classes, class c brightest in row c.
inline void write_idx(const std::filesystem::path& dir, const std::string& prefix, std::size_t n,
                      std::uint64_t seed) {
  std::string images{'\0', '\0', '\x08', '\x03'};
  std::string labels{'\0', '\0', '\x08', '\x01'};
  auto size = [](std::string& s, std::uint32_t v) {
    for (int b = 3; b >= 0; --b) s.push_back(static_cast<char>((v >> (8 * b)) & 0xff));
  };
  size(images, static_cast<std::uint32_t>(n));
  size(images, 4);
  size(images, 4);
  size(labels, static_cast<std::uint32_t>(n));
  hogwild::detail::Rng rng(seed);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<int>(rng.below(4));
    labels.push_back(static_cast<char>(c));
    for (int p = 0; p < 16; ++p) {
      const double v = (p / 4 == c ? 180 : 0) + 60 * rng.uniform();
      images.push_back(static_cast<char>(static_cast<unsigned char>(v)));
    }
  }
  for (const auto& [name, bytes] : {std::pair{prefix + "-images-idx3-ubyte.gz", images},
                                    std::pair{prefix + "-labels-idx1-ubyte.gz", labels}}) {
    gzFile f = gzopen((dir / name).c_str(), "wb");
    REQUIRE(f != nullptr);
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
  }
}

}  // namespace hogwild::test
