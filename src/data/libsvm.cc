#include "hogwild/libsvm.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <ostream>
#include <string>
#include <thread>

#include "data/input.h"
#include "data/text.h"
#include "data/write_file.h"
#include "engine/force_inline.h"
#include "engine/subsets.h"
#include "hogwild/detail/huge_pages.h"
#include "hogwild/error.h"

namespace hogwild {
namespace {

// The part of the file one task parses: whole lines, and what came out of them. Its nonzeros
// are stored straight into its slot of the data set's arrays, which has room for one per ':' of
// its text (every stored pair has one), so they are not copied after parsing.
struct Chunk {
  std::string_view text;
  std::size_t pairs = 0;                // ':' in text: the room of the slot
  std::size_t newlines = 0;             // '\n' in text: its rows, give or take one
  std::vector<std::uint64_t> row_ends;  // nnz count after each row, chunk-local
  std::uint32_t* indices = nullptr;     // the slot, `pairs` long
  float* values = nullptr;
  std::size_t nnz = 0;  // nonzeros stored
  std::vector<float> labels;
  std::size_t lines = 0;
  std::uint64_t max_index = 0;                               // 1 + largest stored index
  std::optional<std::pair<std::size_t, std::string>> error;  // chunk-local line, message
  // Indices: `base` is subtracted from each as it is stored; 0 is accepted unless it is 1.
  std::uint32_t base = 1;
  bool saw_zero = false;           // an index 0 appeared
  std::size_t top_index_line = 0;  // chunk-local line of the first index 2^32-1 (base 0)
};

// The ':' and '\n' of a text, counted in one pass: sixteen bytes compared at a time in a
// vector (GCC's vector extensions: SSE2 on any x86-64), each lane counting up to 255 before
// the block's counts are summed. std::ranges::count, a scalar loop in the portable library,
// took a pass of its own for each.
struct Separators {
  std::size_t colons = 0;
  std::size_t newlines = 0;
};
Separators count_separators(std::string_view text) {
  using Bytes = std::uint8_t __attribute__((vector_size(16)));
  constexpr std::size_t kLanes = sizeof(Bytes);
  constexpr std::size_t kBlock = 255 * kLanes;  // a lane's count holds up to 255
  Separators counted;
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p != end) {
    const char* const block_end = p + std::min<std::size_t>(kBlock, end - p);
    Bytes colons{};
    Bytes newlines{};
    for (; block_end - p >= static_cast<std::ptrdiff_t>(kLanes); p += kLanes) {
      Bytes bytes;
      std::memcpy(&bytes, p, kLanes);
      // A true comparison is a lane of all ones, -1.
      colons -= std::bit_cast<Bytes>(bytes == ':');
      newlines -= std::bit_cast<Bytes>(bytes == '\n');
    }
    for (; p != block_end; ++p) {
      counted.colons += *p == ':';
      counted.newlines += *p == '\n';
    }
    for (std::size_t j = 0; j < kLanes; ++j) {
      counted.colons += colons[j];
      counted.newlines += newlines[j];
    }
  }
  return counted;
}

// What ends a token: LIBSVM's separators, and '#', which starts a comment to the end of the line.
enum class CharClass : std::uint8_t { kToken, kSpace, kComment };
constexpr std::array<CharClass, 256> kCharClasses = [] {
  std::array<CharClass, 256> classes{};
  for (const char c : {' ', '\t', '\r', '\v', '\f'}) {
    classes[static_cast<unsigned char>(c)] = CharClass::kSpace;
  }
  classes[static_cast<unsigned char>('#')] = CharClass::kComment;
  return classes;
}();
CharClass class_of(char c) { return kCharClasses[static_cast<unsigned char>(c)]; }
bool is_digit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

// from_chars reports a range error, and leaves the value alone, both when a number is too large
// for a float and when it is too small; `token` (already known to be a well-formed number) is
// told apart by the decimal order of its leading digit, so that 1e-50 reads as 0 (as strtof
// would round it) instead of being called infinite.
float out_of_range_value(std::string_view token) {
  const bool negative = !token.empty() && token.front() == '-';
  if (!token.empty() && (token.front() == '-' || token.front() == '+')) token.remove_prefix(1);
  const std::size_t exponent_at = std::min(token.find_first_of("eE"), token.size());
  const std::string_view mantissa = token.substr(0, exponent_at);
  const std::size_t point = std::min(mantissa.find('.'), mantissa.size());
  const std::size_t lead = mantissa.find_first_not_of("0.");
  if (lead == std::string_view::npos) return negative ? -0.0f : 0.0f;
  // Order of magnitude of the leading digit, e.g. 0 for 5.1, 2 for 512, -3 for 0.005.
  const long long digits_order = lead < point ? static_cast<long long>(point - lead - 1)
                                              : -static_cast<long long>(lead - point);
  long long exponent = 0;
  if (exponent_at < token.size()) {
    std::string_view e = token.substr(exponent_at + 1);
    const bool exponent_negative = !e.empty() && e.front() == '-';
    if (!e.empty() && (e.front() == '-' || e.front() == '+')) e.remove_prefix(1);
    for (const char c : e) exponent = std::min(exponent * 10 + (c - '0'), 1'000'000'000'000LL);
    if (exponent_negative) exponent = -exponent;
  }
  const float magnitude =
      digits_order + exponent < 0 ? 0.0f : std::numeric_limits<float>::infinity();
  return negative ? -magnitude : magnitude;
}

std::optional<float> parse_float(std::string_view token) {
  if (token.size() > 1 && token.front() == '+' && token[1] != '-') token.remove_prefix(1);
  float value = 0;
  const auto* end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), end, value);
  if (ec == std::errc::result_out_of_range && ptr == end) return out_of_range_value(token);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// Powers of ten that are floats exactly (5^10 < 2^24).
constexpr std::array<float, 11> kExactPowersOfTen = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f,
                                                     1e6f, 1e7f, 1e8f, 1e9f, 1e10f};

// Reads a plain decimal token at `p` ([+-]digits[.digits], ended by a separator, '#' or the
// line's end) whose digits, read as an integer, are at most 2^24 and whose fraction has at most
// 10 digits; advances `p` past it. Both parts are then floats exactly, and one division rounds as
// the decimal does (Clinger's fast path), so `out` is what parse_float gives, bit for bit.
// Anything else (exponents, longer mantissas, a lone sign or point, trailing text) returns false
// with `p` unmoved, and parse_float decides; labels, counts, binary values and the short fractions
// of typical files take this path.
HOGWILD_FORCE_INLINE inline bool read_plain_decimal(const char*& p, const char* end, float& out) {
  constexpr std::uint64_t kExactMantissa = std::uint64_t{1} << 24;
  constexpr int kMostDigits = 18;  // no overflow of the mantissa before it is checked
  const char* q = p;
  bool negative = false;
  if (q != end && (*q == '-' || *q == '+')) negative = *q++ == '-';
  std::uint64_t mantissa = 0;
  int digits = 0;
  for (; q != end && is_digit(*q) && digits < kMostDigits; ++q, ++digits) {
    mantissa = mantissa * 10 + static_cast<std::uint64_t>(*q - '0');
  }
  if (digits == 0) return false;
  int fraction = 0;
  if (q != end && *q == '.') {
    ++q;
    for (; q != end && is_digit(*q) && digits < kMostDigits; ++q, ++digits, ++fraction) {
      mantissa = mantissa * 10 + static_cast<std::uint64_t>(*q - '0');
    }
    if (fraction == 0) return false;
  }
  if ((q != end && class_of(*q) == CharClass::kToken) || mantissa > kExactMantissa ||
      fraction >= static_cast<int>(kExactPowersOfTen.size())) {
    return false;
  }
  const float magnitude = static_cast<float>(mantissa) / kExactPowersOfTen[fraction];
  out = negative ? -magnitude : magnitude;
  p = q;
  return true;
}

// Reads an index of at most 10 digits followed by ':' at `p` and advances `p` past the ':';
// false, with `p` unmoved, for anything else (the general path then names what is wrong).
HOGWILD_FORCE_INLINE inline bool read_plain_index(const char*& p, const char* end,
                                                  std::uint64_t& out) {
  constexpr int kMostDigits = 10;  // below 2^64; the caller checks the 32-bit range
  const char* q = p;
  std::uint64_t index = 0;
  int digits = 0;
  for (; q != end && is_digit(*q) && digits < kMostDigits; ++q, ++digits) {
    index = index * 10 + static_cast<std::uint64_t>(*q - '0');
  }
  if (digits == 0 || q == end || *q != ':') return false;
  out = index;
  p = q + 1;
  return true;
}

// The token at `p` (up to a separator, '#' or the line's end); advances `p` past it.
std::string_view take_token(const char*& p, const char* end) {
  const char* const begin = p;
  while (p != end && class_of(*p) == CharClass::kToken) ++p;
  return {begin, static_cast<std::size_t>(p - begin)};
}

// Moves `p` past separators; true when a token follows (not the line's end or a comment).
bool at_token(const char*& p, const char* end) {
  while (p != end && class_of(*p) == CharClass::kSpace) ++p;
  return p != end && class_of(*p) == CharClass::kToken;
}

// The label token, read by parse_float; a message when it is not a finite number.
std::optional<std::string> label_error(std::string_view token, float& label) {
  if (token.find(':') != std::string_view::npos) {
    return fmt::format("expected a label before the features, found {}", detail::quote(token));
  }
  const auto parsed = parse_float(token);
  if (!parsed) return fmt::format("expected a numeric label, found {}", detail::quote(token));
  if (!std::isfinite(*parsed)) {
    return fmt::format("expected a finite label, found {}", detail::quote(token));
  }
  label = *parsed;
  return std::nullopt;
}

// What is wrong with index `index` after `previous` on a line, if anything.
std::optional<std::string> order_error(std::uint64_t index, std::int64_t previous,
                                       const Chunk& chunk) {
  if (index == 0 && chunk.base == 1) {
    return "expected a feature index >= 1 (indices are 1-based), found 0";
  }
  if (static_cast<std::int64_t>(index) == previous) {
    return fmt::format("expected each feature index once per line, found {} twice", index);
  }
  if (static_cast<std::int64_t>(index) < previous) {
    return fmt::format("expected feature indices in increasing order, found {} after {}", index,
                       previous);
  }
  return std::nullopt;
}

// A feature token `index:value` (or `qid:N`, skipped), read by from_chars and parse_float: the
// path of every token the plain readers above leave, and of every error. Sets `index` and
// `value` and returns nothing, or returns a message; `skip` is set for a qid.
std::optional<std::string> read_feature_token(std::string_view token, std::int64_t previous,
                                              const Chunk& chunk, std::uint64_t& index,
                                              float& value, bool& skip) {
  skip = false;
  const auto colon = token.find(':');
  if (colon == std::string_view::npos) {
    return fmt::format("expected index:value, found {}", detail::quote(token));
  }
  const std::string_view index_text = token.substr(0, colon);
  const std::string_view value_text = token.substr(colon + 1);
  if (index_text == "qid") {
    std::uint64_t qid = 0;
    const auto [p, ec] =
        std::from_chars(value_text.data(), value_text.data() + value_text.size(), qid);
    if (ec != std::errc() || p != value_text.data() + value_text.size()) {
      return fmt::format("expected an integer query id in qid:N, found {}", detail::quote(token));
    }
    skip = true;
    return std::nullopt;
  }
  const auto* index_end = index_text.data() + index_text.size();
  const auto [p, ec] = std::from_chars(index_text.data(), index_end, index);
  if (ec == std::errc::result_out_of_range ||
      (ec == std::errc() && p == index_end && index > std::numeric_limits<std::uint32_t>::max())) {
    return fmt::format("expected a feature index <= {}, found {}",
                       std::numeric_limits<std::uint32_t>::max(), detail::quote(index_text));
  }
  if (ec != std::errc() || p != index_end) {
    return fmt::format("expected a positive integer feature index, found {}",
                       detail::quote(index_text));
  }
  if (auto error = order_error(index, previous, chunk)) return error;
  const auto parsed = parse_float(value_text);
  if (!parsed) {
    return fmt::format("expected a numeric value for feature {}, found {}", index,
                       detail::quote(value_text));
  }
  if (!std::isfinite(*parsed)) {
    return fmt::format("expected a finite value for feature {}, found {}", index,
                       detail::quote(value_text));
  }
  value = *parsed;
  return std::nullopt;
}

// Parses one line (without its '\n') into the chunk; returns an error message or nothing.
// Tokens are read in one pass: the plain readers take the usual forms, and a token they leave
// goes whole to the general readers, which accept what from_chars accepts and name any error.
std::optional<std::string> parse_line(std::string_view line, Chunk& chunk) {
  const char* p = line.data();
  const char* const end = p + line.size();
  if (!at_token(p, end)) return std::nullopt;  // blank or comment-only line
  float label = 0;
  if (!read_plain_decimal(p, end, label)) {
    if (auto error = label_error(take_token(p, end), label)) return error;
  }
  const std::size_t row_begin = chunk.nnz;
  std::int64_t previous = -1;
  while (at_token(p, end)) {
    const char* const token_begin = p;
    std::uint64_t index = 0;
    float value = 0;
    if (read_plain_index(p, end, index) && index <= std::numeric_limits<std::uint32_t>::max() &&
        read_plain_decimal(p, end, value)) {
      if (static_cast<std::int64_t>(index) <= previous || (index == 0 && chunk.base == 1)) {
        chunk.nnz = row_begin;
        return order_error(index, previous, chunk);
      }
    } else {
      p = token_begin;
      bool skip = false;
      if (auto error =
              read_feature_token(take_token(p, end), previous, chunk, index, value, skip)) {
        chunk.nnz = row_begin;
        return error;
      }
      if (skip) continue;
    }
    previous = static_cast<std::int64_t>(index);
    chunk.saw_zero |= index == 0;
    if (chunk.base == 0 && index == std::numeric_limits<std::uint32_t>::max() &&
        chunk.top_index_line == 0) {
      chunk.top_index_line = chunk.lines;
    }
    chunk.indices[chunk.nnz] = static_cast<std::uint32_t>(index - chunk.base);
    chunk.values[chunk.nnz] = value;
    ++chunk.nnz;
  }
  if (chunk.nnz > row_begin) {
    chunk.max_index = std::max<std::uint64_t>(chunk.max_index, chunk.indices[chunk.nnz - 1] + 1ull);
  }
  chunk.labels.push_back(label);
  chunk.row_ends.push_back(chunk.nnz);
  return std::nullopt;
}

// Parses the chunk's text into its slot (indices and values set) and its rows.
void parse_chunk(Chunk& chunk) {
  chunk.labels.reserve(chunk.newlines + 1);
  chunk.row_ends.reserve(chunk.newlines + 1);
  std::string_view rest = chunk.text;
  while (!rest.empty()) {
    const auto newline = rest.find('\n');
    const std::string_view line = rest.substr(0, newline);
    rest = newline == std::string_view::npos ? std::string_view{} : rest.substr(newline + 1);
    ++chunk.lines;
    if (auto error = parse_line(line, chunk)) {
      chunk.error.emplace(chunk.lines, std::move(*error));
      return;
    }
  }
}

// The chunk-local line of the chunk's example number `example` (from 0), as the parser counts.
std::size_t line_of_example(std::string_view text, std::uint32_t base, std::size_t example) {
  Chunk scratch;
  scratch.base = base;
  const std::size_t pairs = count_separators(text).colons;
  std::vector<std::uint32_t> indices(pairs);
  std::vector<float> values(pairs);
  scratch.indices = indices.data();
  scratch.values = values.data();
  std::size_t line_number = 0;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    ++line_number;
    const std::size_t before = scratch.labels.size();
    parse_line(line, scratch);
    if (scratch.labels.size() > before && before == example) break;
  }
  return line_number;
}

// Where parsed text lies in its file, for messages: the lines before it (counted only when a
// message needs them), and whether it is a part of the file, which may hold no example.
struct Placement {
  std::function<std::size_t()> lines_before = [] { return std::size_t{0}; };
  bool part = false;
};

// InputError naming the first example whose label is a third value.
void check_two_classes(const std::vector<Chunk>& chunks, std::string_view name,
                       const Placement& placement) {
  std::vector<float> seen;
  std::size_t line_base = 0;
  for (const auto& chunk : chunks) {
    for (std::size_t r = 0; r < chunk.labels.size(); ++r) {
      const float y = chunk.labels[r];
      if (std::find(seen.begin(), seen.end(), y) != seen.end()) continue;
      if (seen.size() < 2) {
        seen.push_back(y);
        continue;
      }
      throw InputError(fmt::format(
          "{}:{}: expected two label classes for a binary model, found a third, {}, after {} and "
          "{}",
          name, placement.lines_before() + line_base + line_of_example(chunk.text, chunk.base, r),
          y, std::min(seen[0], seen[1]), std::max(seen[0], seen[1])));
    }
    line_base += chunk.lines;
  }
}

// Whether the indices are 0-based: as asked, or with kAuto when an index 0 appears (as
// scikit-learn's reader decides). Auto read them as they are; 1-based, they are shifted down here.
// A 0-based index 2^32-1 does not fit the dimension: an InputError naming its line.
bool resolve_base(std::vector<Chunk>& chunks, IndexBase base, std::string_view name,
                  const Placement& placement, tbb::task_arena& arena) {
  if (base == IndexBase::kOne) return false;
  bool zero_based = base == IndexBase::kZero;
  for (const auto& chunk : chunks) zero_based |= chunk.saw_zero;
  if (!zero_based) {
    arena.execute([&] {
      tbb::parallel_for(std::size_t{0}, chunks.size(), [&](std::size_t c) {
        std::for_each(chunks[c].indices, chunks[c].indices + chunks[c].nnz,
                      [](std::uint32_t& index) { --index; });
        if (chunks[c].max_index > 0) --chunks[c].max_index;
      });
    });
    return false;
  }
  std::size_t line_base = 0;
  for (const auto& chunk : chunks) {
    if (chunk.top_index_line > 0) {
      throw InputError(
          fmt::format("{}:{}: expected a feature index <= {} in a 0-based file, found '{}'", name,
                      placement.lines_before() + line_base + chunk.top_index_line,
                      std::numeric_limits<std::uint32_t>::max() - 1,
                      std::numeric_limits<std::uint32_t>::max()));
    }
    line_base += chunk.lines;
  }
  return true;
}

int resolve_threads(int threads) {
  return threads > 0 ? threads
                     : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Parses plain LIBSVM text in parallel chunks of whole lines.
Dataset parse_text(std::string_view text, std::string_view name, const LibsvmReadOptions& options,
                   const Placement& placement = {}) {
  const int threads = resolve_threads(options.threads);
  // Cut the text into chunks of whole lines, a few per thread for balance.
  constexpr std::size_t kMinChunk = 1 << 20;
  const std::size_t wanted = std::max<std::size_t>(
      1, std::min<std::size_t>(static_cast<std::size_t>(threads) * 8, text.size() / kMinChunk));
  std::vector<Chunk> chunks;
  std::size_t begin = 0;
  for (std::size_t c = 1; c <= wanted && begin < text.size(); ++c) {
    std::size_t end = c == wanted ? text.size() : text.size() * c / wanted;
    end = std::max(end, begin);
    if (end < text.size()) {
      const auto newline = text.find('\n', end);
      end = newline == std::string_view::npos ? text.size() : newline + 1;
    }
    auto& chunk = chunks.emplace_back();
    chunk.text = text.substr(begin, end - begin);
    chunk.base = options.index_base == IndexBase::kOne ? 1 : 0;
    begin = end;
  }

  tbb::task_arena arena(threads);
  // The data set's arrays with room for every ':' of the text, each chunk's slot after the
  // one before: fresh memory faulted in once, on every core (where the chunks parsed into
  // vectors of their own and were copied into the arrays, that was twice).
  Dataset data;
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, chunks.size(), [&](std::size_t c) {
      const Separators counted = count_separators(chunks[c].text);
      chunks[c].pairs = counted.colons;
      chunks[c].newlines = counted.newlines;
    });
  });
  std::vector<std::size_t> slot_base(chunks.size() + 1, 0);
  for (std::size_t c = 0; c < chunks.size(); ++c) slot_base[c + 1] = slot_base[c] + chunks[c].pairs;
  detail::resize_on_huge_pages(data.indices, slot_base.back());
  detail::resize_on_huge_pages(data.values, slot_base.back());
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, chunks.size(), [&](std::size_t c) {
      chunks[c].indices = data.indices.data() + slot_base[c];
      chunks[c].values = data.values.data() + slot_base[c];
      parse_chunk(chunks[c]);
    });
  });

  std::size_t line_base = 0;
  std::size_t rows = 0;
  std::size_t nnz = 0;
  for (const auto& chunk : chunks) {
    if (chunk.error) {
      throw InputError(fmt::format("{}:{}: {}", name,
                                   placement.lines_before() + line_base + chunk.error->first,
                                   chunk.error->second));
    }
    line_base += chunk.lines;
    rows += chunk.labels.size();
    nnz += chunk.nnz;
  }
  const bool zero_based = resolve_base(chunks, options.index_base, name, placement, arena);
  if (options.binary_labels) check_two_classes(chunks, name, placement);
  if (rows == 0 && !placement.part) {
    throw InputError(
        fmt::format("{}:{}: expected at least one example 'label index:value ...', found {}", name,
                    line_base + 1, text.empty() ? "an empty file" : "only blank or comment lines"));
  }

  data.source = std::string(name);
  data.zero_based = zero_based;
  for (const auto& chunk : chunks) data.num_features = std::max(data.num_features, chunk.max_index);
  data.row_offsets.resize(rows + 1);
  data.labels.resize(rows);
  std::vector<std::size_t> row_base(chunks.size() + 1, 0);
  std::vector<std::size_t> nnz_base(chunks.size() + 1, 0);
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    row_base[c + 1] = row_base[c] + chunks[c].labels.size();
    nnz_base[c + 1] = nnz_base[c] + chunks[c].nnz;
  }
  // A chunk whose comments or query ids held ':' left room unused: the later slots move down
  // (in order, each to an offset at or below its own). Ordinary files move nothing.
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    if (nnz_base[c] == slot_base[c]) continue;
    std::copy_n(chunks[c].indices, chunks[c].nnz, data.indices.begin() + nnz_base[c]);
    std::copy_n(chunks[c].values, chunks[c].nnz, data.values.begin() + nnz_base[c]);
  }
  data.indices.resize(nnz);
  data.values.resize(nnz);
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, chunks.size(), [&](std::size_t c) {
      auto& chunk = chunks[c];
      std::copy(chunk.labels.begin(), chunk.labels.end(), data.labels.begin() + row_base[c]);
      for (std::size_t r = 0; r < chunk.row_ends.size(); ++r) {
        data.row_offsets[row_base[c] + r + 1] = nnz_base[c] + chunk.row_ends[r];
      }
    });
  });
  return data;
}

}  // namespace

Dataset parse_libsvm(std::string_view bytes, std::string_view name,
                     const LibsvmReadOptions& options) {
  if (detail::compression_of(bytes) == detail::Compression::kNone) {
    return parse_text(bytes, name, options);
  }
  return parse_text(detail::decompress(bytes, name), name, options);
}

Dataset read_libsvm(const std::filesystem::path& path, const LibsvmReadOptions& options) {
  return detail::parse_whole_file(path, [&](std::string_view text, std::string_view name) {
    return parse_text(text, name, options);
  });
}

Dataset read_libsvm_part(const std::filesystem::path& path, FilePart part,
                         const LibsvmReadOptions& options) {
  if (part.count < 1 || part.index < 0 || part.index >= part.count) {
    throw InputError(fmt::format("{}: expected a part from 0 to {} of the file, found part {}",
                                 detail::input_name(path), part.count - 1, part.index));
  }
  if (auto text = detail::read_text_part(path, part.index, part.count)) {
    Placement placement;
    placement.part = true;
    placement.lines_before = [&] { return detail::lines_before(path, text->offset); };
    return parse_text(text->text, detail::input_name(path), options, placement);
  }
  // Compressed or standard input: all of it is decompressed; the part keeps its rows.
  const Dataset whole = read_libsvm(path, options);
  const std::size_t n = whole.rows();
  const auto count = static_cast<std::size_t>(part.count);
  const auto index = static_cast<std::size_t>(part.index);
  std::vector<std::size_t> rows(n * (index + 1) / count - n * index / count);
  std::iota(rows.begin(), rows.end(), n * index / count);
  Dataset kept = detail::subset(whole, rows);
  kept.source = whole.source;
  kept.zero_based = whole.zero_based;
  return kept;
}

void make_zero_based(Dataset& data) {
  if (data.zero_based) return;
  if (std::any_of(data.indices.begin(), data.indices.end(),
                  [](std::uint32_t i) { return i == std::numeric_limits<std::uint32_t>::max(); })) {
    throw InputError(fmt::format("{}: expected feature indices <= {} read 0-based, found {}",
                                 data.source, std::numeric_limits<std::uint32_t>::max() - 1,
                                 std::numeric_limits<std::uint32_t>::max()));
  }
  for (auto& index : data.indices) ++index;
  if (data.num_features > 0) ++data.num_features;
  data.zero_based = true;
}

void write_libsvm(const Dataset& data, std::ostream& out) {
  constexpr std::size_t kRowsPerBlock = 4096;
  const std::size_t blocks = (data.rows() + kRowsPerBlock - 1) / kRowsPerBlock;
  std::vector<std::string> text(blocks);
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    fmt::memory_buffer buffer;
    const std::size_t end = std::min(data.rows(), (b + 1) * kRowsPerBlock);
    for (std::size_t i = b * kRowsPerBlock; i < end; ++i) {
      fmt::format_to(std::back_inserter(buffer), "{}", data.labels[i]);
      const auto row = data.row(i);
      for (std::size_t k = 0; k < row.indices.size(); ++k) {
        fmt::format_to(std::back_inserter(buffer), " {}:{}", row.indices[k] + 1, row.values[k]);
      }
      buffer.push_back('\n');
    }
    text[b] = fmt::to_string(buffer);
  });
  for (const auto& block : text)
    out.write(block.data(), static_cast<std::streamsize>(block.size()));
}

void write_libsvm(const Dataset& data, const std::filesystem::path& path) {
  detail::write_file(path, [&](std::ostream& out) { write_libsvm(data, out); });
}

}  // namespace hogwild
