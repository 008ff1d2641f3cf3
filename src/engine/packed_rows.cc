#include "engine/packed_rows.h"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "hogwild/detail/huge_pages.h"
#include "hogwild/error.h"

namespace hogwild::detail {
namespace {

// The largest finite half float.
constexpr float kHalfMax = 65504.0f;

bool all_ones(const Dataset& data) {
  return std::all_of(data.values.begin(), data.values.end(), [](float v) { return v == 1.0f; });
}

std::string source_of(const Dataset& data) {
  return data.source.empty() ? std::string("training data") : data.source;
}

}  // namespace

std::uint16_t narrow_half(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const float magnitude = std::fabs(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>(sign | 0x7e00u);
  // Beyond the largest half: the halfway point to 2^16 rounds to infinity (ties to even).
  if (magnitude >= 65520.0f) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (magnitude < 0x1p-14f) {
    // Subnormal halves are multiples of 2^-24: round magnitude / 2^-24 to the nearest integer,
    // ties to even (the default rounding mode of nearbyint).
    return static_cast<std::uint16_t>(
        sign | static_cast<std::uint16_t>(std::nearbyint(magnitude * 0x1p24f)));
  }
  // Normal: keep 10 of the 23 mantissa bits, rounding the 13 dropped to nearest, ties to even;
  // a carry out of the mantissa moves the exponent up, as it should.
  const std::uint32_t m = std::bit_cast<std::uint32_t>(magnitude);
  const std::uint32_t rebased = m - (112u << 23);  // exponent bias 127 -> 15
  const std::uint32_t dropped = rebased & 0x1fffu;
  std::uint32_t half = rebased >> 13;
  if (dropped > 0x1000u || (dropped == 0x1000u && (half & 1u))) ++half;
  return static_cast<std::uint16_t>(sign | half);
}

PackedRows::PackedRows(const Dataset& data, DataPrecision precision,
                       std::span<const std::uint32_t> numbers)
    : offsets_(data.row_offsets.data()),
      renumbered_(!numbers.empty()),
      wide_indices_(data.indices.data()),
      float_values_(data.values.data()) {
  values_ = reinterpret_cast<const char*>(float_values_);
  const std::size_t nnz = data.nnz();
  const auto narrow_indices = [&](const std::uint32_t* from) {
    resize_on_huge_pages(narrow_indices_, nnz);
    tbb::parallel_for(std::size_t{0}, nnz, [&](std::size_t k) {
      narrow_indices_[k] = static_cast<std::uint16_t>(from[k]);
    });
  };
  std::size_t width = data.num_features;  // 1 + the largest index stored
  if (renumbered_) {
    // One pass of lookups numbers the nonzeros and finds the largest number (a pass for each
    // read the 16 MB numbering of a 4M-feature model twice, out of the caches); where the
    // numbers fit in 16 bits, a streaming pass narrows them.
    resize_on_huge_pages(renumbered_indices_, nnz);
    width = tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, nnz), std::size_t{0},
        [&](const tbb::blocked_range<std::size_t>& range, std::size_t largest) {
          std::uint32_t top = 0;
          for (std::size_t k = range.begin(); k < range.end(); ++k) {
            const std::uint32_t number = numbers[data.indices[k]];
            renumbered_indices_[k] = number;
            top = std::max(top, number);
          }
          return range.empty() ? largest : std::max(largest, std::size_t{top} + 1);
        },
        [](std::size_t a, std::size_t b) { return std::max(a, b); });
  }
  narrow_ = width <= std::size_t{std::numeric_limits<std::uint16_t>::max()} + 1;
  if (narrow_) {
    narrow_indices(renumbered_ ? renumbered_indices_.data() : data.indices.data());
    renumbered_indices_ = {};
  } else if (renumbered_) {
    wide_indices_ = renumbered_indices_.data();
  }
  if (all_ones(data)) {
    values_kind_ = Values::kOnes;
    value_bytes_ = 0;
    return;
  }
  if (precision == DataPrecision::kF16) {
    const auto beyond = std::find_if(data.values.begin(), data.values.end(),
                                     [](float v) { return std::fabs(v) > kHalfMax; });
    if (beyond != data.values.end()) {
      throw InputError(fmt::format(
          "{}: expected values within +-65504 for --data-precision f16, found {} (use f32)",
          source_of(data), *beyond));
    }
    resize_on_huge_pages(half_values_, nnz);
    tbb::parallel_for(std::size_t{0}, nnz,
                      [&](std::size_t k) { half_values_[k] = narrow_half(data.values[k]); });
    const bool signs = std::any_of(data.values.begin(), data.values.end(),
                                   [](float v) { return std::signbit(v); });
    values_kind_ = signs ? Values::kF16 : Values::kPositiveF16;
    value_bytes_ = 2;
    values_ = reinterpret_cast<const char*>(half_values_.data());
  } else if (precision == DataPrecision::kU8) {
    const auto negative =
        std::find_if(data.values.begin(), data.values.end(), [](float v) { return v < 0.0f; });
    if (negative != data.values.end()) {
      throw InputError(fmt::format(
          "{}: expected values >= 0 for --data-precision u8 (a byte times a scale per row), "
          "found {} (use f16 for signed values)",
          source_of(data), *negative));
    }
    resize_on_huge_pages(byte_values_, nnz);
    row_scales_.resize(data.rows());
    tbb::parallel_for(std::size_t{0}, data.rows(), [&](std::size_t r) {
      const auto first = data.values.begin() + static_cast<std::ptrdiff_t>(offsets_[r]);
      const auto last = data.values.begin() + static_cast<std::ptrdiff_t>(offsets_[r + 1]);
      const float largest = first == last ? 0.0f : *std::max_element(first, last);
      // Counts (integers up to 255, hashed one-hot fields that collided) are held exactly.
      const bool counts = largest <= 255.0f &&
                          std::all_of(first, last, [](float v) { return v == std::nearbyint(v); });
      const float scale = counts ? 1.0f : largest / 255.0f;
      row_scales_[r] = scale;
      for (auto k = offsets_[r]; k < offsets_[r + 1]; ++k) {
        const float q = scale > 0 ? std::nearbyint(data.values[k] / scale) : 0.0f;
        byte_values_[k] = static_cast<std::uint8_t>(std::clamp(q, 0.0f, 255.0f));
      }
    });
    values_kind_ = Values::kU8;
    value_bytes_ = 1;
    values_ = reinterpret_cast<const char*>(byte_values_.data());
  }
}

std::string to_string(PackedRows::Values values) {
  switch (values) {
    case PackedRows::Values::kF16:
    case PackedRows::Values::kPositiveF16:
      return "f16";
    case PackedRows::Values::kU8:
      return "u8";
    case PackedRows::Values::kOnes:
      return "none";
    case PackedRows::Values::kF32:
      break;
  }
  return "f32";
}

}  // namespace hogwild::detail
