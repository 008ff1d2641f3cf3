#include "hogwild/delay.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <filesystem>

#include "data/text.h"
#include "engine/rng.h"
#include "engine/samplers.h"
#include "hogwild/error.h"
#include "hogwild/input.h"

namespace hogwild {
namespace {

[[noreturn]] void bad(std::string_view spec, std::string_view expected) {
  throw InputError(fmt::format("--delay: expected {}, found '{}'", expected, spec));
}

constexpr std::uint32_t kMaxDelay = 1 << 16;

std::vector<std::uint32_t> read_trace(const std::string& path) {
  const std::string text = read_text(path);
  std::vector<std::uint32_t> delays;
  std::size_t line_no = 0;
  std::string_view rest = text;
  while (!rest.empty()) {
    std::string_view line = detail::next_line(rest);
    ++line_no;
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
      line.remove_suffix(1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front())))
      line.remove_prefix(1);
    if (line.empty()) continue;
    std::uint32_t d = 0;
    if (!detail::parse_number(line, d) || d > kMaxDelay) {
      throw InputError(fmt::format("{}:{}: expected a delay in [0, {}], found '{}'", path, line_no,
                                   kMaxDelay, line.substr(0, 40)));
    }
    delays.push_back(d);
  }
  if (delays.empty()) {
    throw InputError(
        fmt::format("{}:{}: expected at least one delay, found none", path, line_no + 1));
  }
  return delays;
}

}  // namespace

DelaySpec DelaySpec::parse(std::string_view spec) {
  DelaySpec d;
  d.text = std::string(spec);
  const auto [family, args, has_args] = detail::split_spec(spec);
  constexpr auto kForms = "none, const:S, uniform:S, geometric:P[:CAP] or trace:FILE";
  if (family == "none" && !has_args) return d;
  if (family == "const" || family == "uniform") {
    std::uint32_t s = 0;
    if (!detail::parse_number(args, s) || s > kMaxDelay) {
      bad(spec, fmt::format("{}:S with S an integer in [0, {}]", family, kMaxDelay));
    }
    d.kind = family == "const" ? Kind::kConst : Kind::kUniform;
    d.bound = s;
    return d;
  }
  if (family == "geometric") {
    const auto colon2 = args.find(':');
    const std::string_view p_text = args.substr(0, colon2);
    double p = 0;
    if (!detail::parse_number(p_text, p) || !(p > 0 && p <= 1)) {
      bad(spec, "geometric:P[:CAP] with P a probability in (0, 1]");
    }
    d.kind = Kind::kGeometric;
    d.p = p;
    if (colon2 != std::string_view::npos) {
      std::uint32_t cap = 0;
      if (!detail::parse_number(args.substr(colon2 + 1), cap) || cap > kMaxDelay) {
        bad(spec, fmt::format("geometric:P:CAP with CAP an integer in [0, {}]", kMaxDelay));
      }
      d.bound = cap;
    } else if (p >= 1) {
      d.bound = 0;
    } else {
      // Default cap: where the tail mass falls below 1e-6.
      const double k = std::ceil(std::log(1e-6) / std::log1p(-p));
      d.bound = static_cast<std::uint32_t>(std::min<double>(kMaxDelay, std::max(0.0, k)));
    }
    return d;
  }
  if (family == "trace") {
    if (args.empty()) bad(spec, "trace:FILE");
    d.kind = Kind::kTrace;
    d.trace = read_trace(std::string(args));
    d.bound = 0;
    for (const auto v : d.trace) d.bound = std::max(d.bound, v);
    return d;
  }
  bad(spec, kForms);
}

double DelaySpec::probability(std::uint32_t k) const {
  switch (kind) {
    case Kind::kNone:
      return k == 0 ? 1.0 : 0.0;
    case Kind::kConst:
      return k == bound ? 1.0 : 0.0;
    case Kind::kUniform:
      return k <= bound ? 1.0 / (bound + 1.0) : 0.0;
    case Kind::kGeometric: {
      if (k > bound) return 0.0;
      const double mass = 1.0 - std::pow(1.0 - p, bound + 1.0);  // P(d <= cap)
      return p * std::pow(1.0 - p, k) / mass;
    }
    case Kind::kTrace:
      break;
  }
  std::size_t hits = 0;
  for (const auto v : trace) hits += v == k;
  return static_cast<double>(hits) / static_cast<double>(trace.size());
}

double DelaySpec::mean() const {
  double m = 0;
  for (std::uint32_t k = 0; k <= max_delay(); ++k) m += k * probability(k);
  return m;
}

namespace detail {

DelaySampler::DelaySampler(const DelaySpec& spec, std::uint64_t seed) : spec_(&spec), rng_(seed) {
  if (spec.kind == DelaySpec::Kind::kGeometric && spec.p < 1) log_q_ = std::log1p(-spec.p);
}

std::uint32_t DelaySampler::next() {
  switch (spec_->kind) {
    case DelaySpec::Kind::kNone:
      return 0;
    case DelaySpec::Kind::kConst:
      return spec_->bound;
    case DelaySpec::Kind::kUniform:
      return static_cast<std::uint32_t>(rng_.uniform() * (spec_->bound + 1.0));
    case DelaySpec::Kind::kGeometric: {
      if (spec_->p >= 1) return 0;
      // Inverse CDF; draws beyond the cap are redrawn (truncation by conditioning).
      for (;;) {
        const double k = std::floor(std::log(1.0 - rng_.uniform()) / log_q_);
        if (k <= spec_->bound) return static_cast<std::uint32_t>(k);
      }
    }
    case DelaySpec::Kind::kTrace:
      break;
  }
  const auto d = spec_->trace[trace_pos_];
  trace_pos_ = trace_pos_ + 1 == spec_->trace.size() ? 0 : trace_pos_ + 1;
  return d;
}

}  // namespace detail
}  // namespace hogwild
