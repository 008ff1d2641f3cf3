#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hogwild {

/// A distribution of injected delays, as given by `--delay SPEC`:
/// `none`, `const:s`, `uniform:s` (0..s), `geometric:p[:cap]` (P(d=k) = p(1-p)^k, k >= 0,
/// truncated at cap), `trace:FILE` (one delay per line, replayed cyclically).
/// A delay d means an update is applied after d more of its worker's own steps.
struct DelaySpec {
  /// The family of the distribution.
  enum class Kind { kNone, kConst, kUniform, kGeometric, kTrace };
  Kind kind = Kind::kNone;           ///< family
  std::uint32_t bound = 0;           ///< const: s; uniform: s; geometric: cap; trace: its max
  double p = 1.0;                    ///< geometric success probability in (0, 1]
  std::vector<std::uint32_t> trace;  ///< trace: the delays, in order
  std::string text = "none";         ///< the spec as given

  /// Parses a spec; throws InputError("--delay: expected ..., found ...") or, for a trace
  /// file, InputError("path:line: ...") / SystemError.
  static DelaySpec parse(std::string_view spec);
  /// The largest delay this spec can produce (sizes the ring buffers).
  std::uint32_t max_delay() const { return kind == Kind::kNone ? 0 : bound; }
  /// The probability of delay k under this spec (truncation renormalised; trace: its
  /// empirical frequency).
  double probability(std::uint32_t k) const;
  /// The mean delay.
  double mean() const;
};

}  // namespace hogwild
