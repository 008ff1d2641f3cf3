#pragma once

// The training rows of a linear model in the fewest bytes that hold them (Buckwild!, De Sa et
// al. 2015): 16-bit feature indices when the dimension allows, no values at all for binary
// data, and on request values as half floats or bytes (--data-precision). The loops that read
// rows for training (margins and updates) take them through `visit`, which hands a row's
// indices and a view of its values to a function instantiated once per layout. The losses
// after each epoch read them too where they hold the data's own values (`visit_exact`; the
// test file is packed alike for its loss); everything else reads the data set itself.

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/force_inline.h"
#include "hogwild/dataset.h"
#include "hogwild/trainer.h"

namespace hogwild::detail {

/// An IEEE half float widened exactly to float, for every finite half (not the infinities or
/// NaN, which PackedRows never stores). No F16C needed: the exponent is rebased by one
/// multiplication by 2^112, which also normalises the subnormals.
inline float widen_half(std::uint16_t half) {
  const std::uint32_t h = half;
  return std::bit_cast<float>(((h & 0x8000u) << 16) | ((h & 0x7fffu) << 13)) * 0x1p112f;
}

/// The half float nearest `value` (ties to even); values beyond the half range become infinite.
std::uint16_t narrow_half(float value);

/// A row's values as floats.
struct F32Values {
  const float* at;
  float operator[](std::size_t k) const { return at[k]; }
};
/// A row's values as half floats.
struct F16Values {
  const std::uint16_t* at;
  float operator[](std::size_t k) const { return widen_half(at[k]); }
};
/// A row's values as half floats with the sign bit clear (data without negative values): two
/// instructions fewer per value than F16Values, which is what a sample's time is made of.
struct PositiveF16Values {
  const std::uint16_t* at;
  float operator[](std::size_t k) const {
    return std::bit_cast<float>(static_cast<std::uint32_t>(at[k]) << 13) * 0x1p112f;
  }
};
/// Each byte as a float: a load from L1 instead of an int-to-float conversion, which in SSE
/// code waits on the previous value of its destination register.
inline constexpr std::array<float, 256> kByteFloats = [] {
  std::array<float, 256> table{};
  for (int q = 0; q < 256; ++q) table[static_cast<std::size_t>(q)] = static_cast<float>(q);
  return table;
}();

/// A row's values as bytes times the row's scale: 1 for a row of integers up to 255 (exact),
/// else its largest value / 255.
struct U8Values {
  const std::uint8_t* at;
  float scale;
  float operator[](std::size_t k) const { return scale * kByteFloats[at[k]]; }
};
/// Binary data: every stored value is 1.
struct OneValues {
  float operator[](std::size_t) const { return 1.0f; }
};

/// The rows of a data set as the training loops read them. Row offsets are the data set's own;
/// so are its indices when 32 bits are needed and its values when stored as floats.
class PackedRows {
 public:
  /// How the values are stored.
  enum class Values : std::uint8_t { kF32, kF16, kPositiveF16, kU8, kOnes };

  /// Lays out the rows of `data` (which must outlive this) for `precision`: values stored as
  /// asked unless every value is 1 (then none are stored, at any precision), indices in 16 bits
  /// when every index is below 65,536. InputError naming `data.source` when the values do not
  /// fit the precision (u8: a negative value; f16: a magnitude beyond 65,504). u8 holds rows of
  /// integers up to 255 exactly. With `numbers` (feature_order.h), feature j is stored as
  /// numbers[j], each row's nonzeros kept in their order.
  PackedRows(const Dataset& data, DataPrecision precision,
             std::span<const std::uint32_t> numbers = {});

  /// Calls fn(indices, values, n) for row r, where indices points at its n feature indices
  /// (std::uint16_t or std::uint32_t) and values is one of the value views above; returns what
  /// fn returns. One branch per row picks the layout.
  template <class Fn>
  HOGWILD_FORCE_INLINE inline decltype(auto) visit(std::uint32_t r, Fn&& fn) const {
    const std::uint64_t begin = offsets_[r];
    const std::size_t n = offsets_[r + 1] - begin;
    if (narrow_) return with_values(r, begin, narrow_indices_.data() + begin, n, fn);
    return with_values(r, begin, wide_indices_ + begin, n, fn);
  }

  /// Whether the values are the data set's own (f32, or binary data's ones, stored as none), so
  /// that what is read from these rows is what the data set holds, bit for bit.
  bool exact() const { return values_kind_ == Values::kF32 || values_kind_ == Values::kOnes; }

  /// For exact() rows: calls fn(indices, values) once, with every row's indices from the first
  /// row's (std::uint16_t or std::uint32_t, row r's from the data set's row_offsets[r]) and a
  /// view of every value (F32Values or OneValues); returns what fn returns.
  template <class Fn>
  decltype(auto) visit_exact(Fn&& fn) const {
    if (narrow_) return exact_values(narrow_indices_.data(), fn);
    return exact_values(wide_indices_, fn);
  }

  /// The bytes of row r's indices and values, [begin, end) each, for prefetching.
  struct Extent {
    const char* indices_begin;
    const char* indices_end;
    const char* values_begin;
    const char* values_end;
  };
  Extent extent(std::uint32_t r) const {
    const std::uint64_t begin = offsets_[r];
    const std::uint64_t end = offsets_[r + 1];
    const char* idx = narrow_ ? reinterpret_cast<const char*>(narrow_indices_.data())
                              : reinterpret_cast<const char*>(wide_indices_);
    const std::size_t index_bytes = narrow_ ? 2 : 4;
    return {idx + begin * index_bytes, idx + end * index_bytes, values_ + begin * value_bytes_,
            values_ + end * value_bytes_};
  }

  /// 16 or 32.
  int index_bits() const { return narrow_ ? 16 : 32; }
  /// The 32-bit indices of every nonzero (renumbered where the rows are), or nullptr where they
  /// are stored in 16 bits.
  const std::uint32_t* wide_indices() const { return narrow_ ? nullptr : wide_indices_; }
  /// True when the features are renumbered (the constructor's `numbers`).
  bool renumbered() const { return renumbered_; }
  /// How the values are stored.
  Values values() const { return values_kind_; }
  /// Bytes each stored nonzero takes (index and value; a u8 row's scale not counted).
  std::size_t bytes_per_nonzero() const { return (narrow_ ? 2 : 4) + value_bytes_; }

 private:
  template <class Index, class Fn>
  decltype(auto) exact_values(const Index* idx, Fn& fn) const {
    if (values_kind_ == Values::kOnes) return fn(idx, OneValues{});
    return fn(idx, F32Values{float_values_});
  }
  template <class Index, class Fn>
  HOGWILD_FORCE_INLINE inline decltype(auto) with_values(std::uint32_t r, std::uint64_t begin,
                                                         const Index* idx, std::size_t n,
                                                         Fn& fn) const {
    switch (values_kind_) {
      case Values::kOnes:
        return fn(idx, OneValues{}, n);
      case Values::kF16:
        return fn(idx, F16Values{half_values_.data() + begin}, n);
      case Values::kPositiveF16:
        return fn(idx, PositiveF16Values{half_values_.data() + begin}, n);
      case Values::kU8:
        return fn(idx, U8Values{byte_values_.data() + begin, row_scales_[r]}, n);
      case Values::kF32:
        break;
    }
    return fn(idx, F32Values{float_values_ + begin}, n);
  }

  const std::uint64_t* offsets_;
  bool narrow_ = false;
  bool renumbered_ = false;
  Values values_kind_ = Values::kF32;
  std::size_t value_bytes_ = 4;
  const char* values_ = nullptr;  // the stored values' bytes, for extent()
  const std::uint32_t* wide_indices_;
  const float* float_values_;
  std::vector<std::uint16_t> narrow_indices_;
  std::vector<std::uint32_t> renumbered_indices_;  // 32-bit indices renumbered
  std::vector<std::uint16_t> half_values_;
  std::vector<std::uint8_t> byte_values_;
  std::vector<float> row_scales_;
};

/// "f32", "f16", "u8" or "none" (binary data).
std::string to_string(PackedRows::Values values);

}  // namespace hogwild::detail
