// Optimisers: one step of each against a hand-computed reference, sparse steps touching only
// their coordinates' state, clipping, schedules, and the same step under every policy (dense
// steps' one pass under serial and racy against the pass per buffer of the others).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "hogwild/detail/policies.h"
#include "hogwild/error.h"
#include "hogwild/optimizer.h"
#include "models/optimizer_kernel.h"

using namespace hogwild;
using namespace hogwild::detail;
using detail::apply_step;
using detail::GradientView;
using detail::OptimizerScratch;
using detail::OptimizerState;

namespace {

struct Fixture {
  OptimizerConfig config;
  ParamStore w{4};
  OptimizerState state;
  OptimizerScratch scratch{4};
  explicit Fixture(OptimizerKind kind) : state(kind, 4) {
    config.kind = kind;
    w.fill(1.0f);
    w.data()[1] = -2.0f;
  }
  // Two dense steps with gradients g1 then g2; returns the parameters.
  std::vector<float> two_steps(float eta) {
    const std::vector<float> g1{0.5f, -1.0f, 0.0f, 2.0f};
    const std::vector<float> g2{0.25f, 1.0f, -1.0f, 0.0f};
    apply_step<SerialPolicy>(config, w, state, GradientView{{}, g1}, eta, 1, scratch);
    apply_step<SerialPolicy>(config, w, state, GradientView{{}, g2}, eta, 2, scratch);
    return {w.data(), w.data() + 4};
  }
};

// The same two steps computed by hand in double precision, coordinate by coordinate.
std::vector<double> reference(OptimizerKind kind, const OptimizerConfig& c, double eta) {
  const double g1[4] = {0.5, -1.0, 0.0, 2.0};
  const double g2[4] = {0.25, 1.0, -1.0, 0.0};
  std::vector<double> out(4);
  for (int i = 0; i < 4; ++i) {
    double w = i == 1 ? -2.0 : 1.0;
    double s1 = 0, s2 = 0;
    for (int t = 1; t <= 2; ++t) {
      const double g = t == 1 ? g1[i] : g2[i];
      switch (kind) {
        case OptimizerKind::kSgd:
          w -= eta * g;
          break;
        case OptimizerKind::kMomentum:
          s1 = c.momentum * s1 + g;
          w -= eta * s1;
          break;
        case OptimizerKind::kNesterov:
          s1 = c.momentum * s1 + g;
          w -= eta * (g + c.momentum * s1);
          break;
        case OptimizerKind::kAdagrad:
          s1 += g * g;
          w -= eta * g / (std::sqrt(s1) + c.epsilon);
          break;
        case OptimizerKind::kRmsprop:
          s1 = c.rho * s1 + (1 - c.rho) * g * g;
          w -= eta * g / (std::sqrt(s1) + c.epsilon);
          break;
        case OptimizerKind::kAdam: {
          s1 = c.beta1 * s1 + (1 - c.beta1) * g;
          s2 = c.beta2 * s2 + (1 - c.beta2) * g * g;
          const double m_hat = s1 / (1 - std::pow(c.beta1, t));
          const double v_hat = s2 / (1 - std::pow(c.beta2, t));
          w -= eta * m_hat / (std::sqrt(v_hat) + c.epsilon);
          break;
        }
      }
    }
    out[static_cast<std::size_t>(i)] = w;
  }
  return out;
}

}  // namespace

TEST_CASE("each optimiser's steps match a hand-computed reference") {
  for (const auto kind : {OptimizerKind::kSgd, OptimizerKind::kMomentum, OptimizerKind::kNesterov,
                          OptimizerKind::kAdagrad, OptimizerKind::kRmsprop, OptimizerKind::kAdam}) {
    CAPTURE(to_string(kind));
    Fixture f(kind);
    f.config.momentum = 0.8;
    f.config.rho = 0.7;
    const auto got = f.two_steps(0.1f);
    const auto want = reference(kind, f.config, 0.1);
    for (std::size_t i = 0; i < 4; ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5));
  }
}

TEST_CASE("a hand-checked first step: SGD, heavy ball, Adam") {
  Fixture sgd(OptimizerKind::kSgd);
  const std::vector<float> g{0.5f, -1.0f, 0.0f, 2.0f};
  apply_step<SerialPolicy>(sgd.config, sgd.w, sgd.state, {{}, g}, 0.1f, 1, sgd.scratch);
  CHECK(sgd.w.data()[0] == doctest::Approx(0.95));
  CHECK(sgd.w.data()[1] == doctest::Approx(-1.9));
  CHECK(sgd.w.data()[3] == doctest::Approx(0.8));
  // Adam's first step moves every coordinate with a nonzero gradient by eta * sign(g).
  Fixture adam(OptimizerKind::kAdam);
  apply_step<SerialPolicy>(adam.config, adam.w, adam.state, {{}, g}, 0.1f, 1, adam.scratch);
  CHECK(adam.w.data()[0] == doctest::Approx(0.9));
  CHECK(adam.w.data()[1] == doctest::Approx(-1.9));
  CHECK(adam.w.data()[2] == doctest::Approx(1.0));
  CHECK(adam.w.data()[3] == doctest::Approx(0.9));
}

#if defined(__SSE__) || defined(__x86_64__)
TEST_CASE(
    "an adaptive optimiser's step flushes subnormal floats to zero, and the thread's mode is "
    "restored") {
  volatile float tiny = 0x1p-100f;  // volatile: computed at run time, in the thread's mode
  volatile float small = 0x1p-30f;
  volatile float subnormal = 0x1p-130f;
  {
    const FlushDenormals flush;
    CHECK(tiny * small == 0.0f);        // a subnormal result
    CHECK(subnormal * 1.0f == 0.0f);    // a subnormal operand
    CHECK(tiny * 0x1p26f == 0x1p-74f);  // normal numbers as ever
  }
  CHECK(tiny * small == 0x1p-130f);
  CHECK(subnormal * 1.0f == 0x1p-130f);
  // Adam's second moment of a gradient of 2^-60: (1 - beta2) 2^-120, about 2^-130, subnormal.
  Fixture adam(OptimizerKind::kAdam);
  const std::vector<float> g{0x1p-60f, 1.0f, 0.0f, -1.0f};
  apply_step<SerialPolicy>(adam.config, adam.w, adam.state, {{}, g}, 0.1f, 1, adam.scratch);
  CHECK(adam.state.s2->data()[0] == 0.0f);
  CHECK(adam.state.s2->data()[1] == doctest::Approx(1.0 - adam.config.beta2));
  CHECK(tiny * small == 0x1p-130f);
}
#endif

TEST_CASE("sparse steps touch only their coordinates and state (lazy Adam)") {
  Fixture f(OptimizerKind::kAdam);
  const std::vector<std::uint32_t> idx{3, 0};
  const std::vector<float> g{2.0f, 0.5f};
  apply_step<SerialPolicy>(f.config, f.w, f.state, {idx, g}, 0.1f, 1, f.scratch);
  CHECK(f.w.data()[3] == doctest::Approx(0.9));
  CHECK(f.w.data()[0] == doctest::Approx(0.9));
  CHECK(f.w.data()[1] == -2.0f);
  CHECK(f.state.s1->data()[1] == 0.0f);
  CHECK(f.state.s2->data()[2] == 0.0f);
  CHECK(f.state.s1->data()[3] == doctest::Approx(0.2));
  CHECK(f.state.s2->data()[3] == doctest::Approx(0.004));
}

TEST_CASE("Adam's moments never exceed the bound, which the growing worst case approaches") {
  OptimizerConfig c;
  const double bound = adam_moment_bound(c.beta1, c.beta2);
  // The closed form: (1 - b1) / sqrt((1 - b2) (1 - b1^2 / b2)) = 7.27 for 0.9 and 0.999.
  CHECK(bound == doctest::Approx(0.1 / std::sqrt(0.001 * (1 - 0.81 / 0.999))));
  CHECK(std::isinf(adam_moment_bound(0.9, 0.5)));
  // Gradients growing by b2 / b1 a step meet Cauchy-Schwarz with equality as the history grows;
  // the double-precision moments approach the bound from below and the float steps are plain
  // Adam's (the bound does not bind on a real history).
  Fixture f(OptimizerKind::kAdam);
  double m = 0, v = 0, w = 1, g = 1e-3;
  for (int t = 1; t <= 80; ++t, g *= c.beta2 / c.beta1) {
    const std::vector<float> grad{static_cast<float>(g), 0, 0, 0};
    apply_step<SerialPolicy>(f.config, f.w, f.state, {{}, grad}, 0.01f, t, f.scratch);
    m = c.beta1 * m + (1 - c.beta1) * g;
    v = c.beta2 * v + (1 - c.beta2) * g * g;
    w -= 0.01 * (m / (1 - std::pow(c.beta1, t))) /
         (std::sqrt(v / (1 - std::pow(c.beta2, t))) + c.epsilon);
    REQUIRE(m / std::sqrt(v) < bound);
  }
  CHECK(m / std::sqrt(v) > 0.999 * bound);
  CHECK(f.w.data()[0] == doctest::Approx(w).epsilon(1e-5));
}

TEST_CASE("an Adam step from a racing worker's moments stays within the bound's step") {
  // Another worker has written m for coordinate 0 but not yet v (m is written first), and this
  // worker's gradient there is zero: unbounded, the step would be eta m / eps.
  for (const float old_v : {0.0f, 1e-12f, 1e-6f}) {
    CAPTURE(old_v);
    Fixture f(OptimizerKind::kAdam);
    f.state.s1->data()[0] = 0.1f;
    f.state.s2->data()[0] = old_v;
    const std::vector<float> g{0, 0, 0, 0};
    const double t = 1000;
    apply_step<SerialPolicy>(f.config, f.w, f.state, {{}, g}, 0.01f, t, f.scratch);
    const OptimizerConfig& c = f.config;
    const double largest = 0.01 / (1 - std::pow(c.beta1, t)) * adam_moment_bound(c.beta1, c.beta2) *
                           std::sqrt(1 - std::pow(c.beta2, t));
    CHECK(std::abs(f.w.data()[0] - 1.0) <= largest * (1 + 1e-5));
    // Its moments are stored as computed; only the step is held.
    CHECK(f.state.s1->data()[0] == doctest::Approx(0.09));
  }
}

TEST_CASE("a long Adam step, dense or naming coordinates again, matches plain Adam") {
  // The sparse step names each of the first 1,024 coordinates two or three times, so later
  // positions read the moments and weight the earlier ones wrote, as plain Adam applied in
  // order would.
  constexpr std::size_t kNamed = 1024;
  const std::size_t n = kNamed * 5 / 2;
  OptimizerConfig config;
  config.kind = OptimizerKind::kAdam;
  std::vector<float> grad(n);
  for (std::size_t k = 0; k < n; ++k) grad[k] = std::sin(0.37f * static_cast<float>(k)) - 0.2f;
  std::vector<std::uint32_t> idx(n);
  for (std::size_t k = 0; k < n; ++k) idx[k] = static_cast<std::uint32_t>(k % kNamed);
  for (const bool dense : {true, false}) {
    CAPTURE(dense);
    ParamStore w(n);
    w.fill(0.5f);
    OptimizerState state(config.kind, n);
    OptimizerScratch scratch(n);
    std::vector<double> want(n, 0.5), m(n, 0), v(n, 0);
    for (int t = 1; t <= 3; ++t) {
      const GradientView view = dense ? GradientView{{}, grad} : GradientView{idx, grad};
      apply_step<SerialPolicy>(config, w, state, view, 0.01f, t, scratch);
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = dense ? k : idx[k];
        m[i] = config.beta1 * m[i] + (1 - config.beta1) * grad[k];
        v[i] = config.beta2 * v[i] + (1 - config.beta2) * double{grad[k]} * grad[k];
        want[i] -= 0.01 * (m[i] / (1 - std::pow(config.beta1, t))) /
                   (std::sqrt(v[i] / (1 - std::pow(config.beta2, t))) + config.epsilon);
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      CAPTURE(i);
      REQUIRE(w.data()[i] == doctest::Approx(want[i]).epsilon(1e-4));
    }
  }
}

TEST_CASE("clipping rescales the gradient to the norm bound") {
  Fixture f(OptimizerKind::kSgd);
  f.config.clip_norm = 1.0;
  const std::vector<float> g{3.0f, 0.0f, 0.0f, 4.0f};  // norm 5
  apply_step<SerialPolicy>(f.config, f.w, f.state, {{}, g}, 1.0f, 1, f.scratch);
  CHECK(f.w.data()[0] == doctest::Approx(1 - 0.6));
  CHECK(f.w.data()[3] == doctest::Approx(1 - 0.8));
  f.config.clip_norm = 10.0;  // a bound above the norm changes nothing
  apply_step<SerialPolicy>(f.config, f.w, f.state, {{}, g}, 1.0f, 2, f.scratch);
  CHECK(f.w.data()[0] == doctest::Approx(0.4 - 3));
}

TEST_CASE("every policy applies the same single-threaded step") {
  for (const auto policy :
       {Policy::kRacy, Policy::kAtomic, Policy::kStriped, Policy::kLocked, Policy::kSerial}) {
    Fixture f(OptimizerKind::kNesterov);
    const std::vector<std::uint32_t> idx{1, 3};
    const std::vector<float> g{1.0f, -1.0f};
    dispatch_policy(policy, [&](auto p) {
      using P = decltype(p);
      apply_step<P>(f.config, f.w, f.state, {idx, g}, 0.5f, 1, f.scratch);
      apply_step<P>(f.config, f.w, f.state, {idx, g}, 0.5f, 2, f.scratch);
    });
    // v1 = 1, w1 = -2 - 0.5 (1 + 0.9) = -2.95; v2 = 1.9, w2 = -2.95 - 0.5 (1 + 1.71) = -4.305
    CHECK(f.w.data()[1] == doctest::Approx(-4.305));
    CHECK(f.w.data()[3] == doctest::Approx(1 + 4.305 - 2));
  }
}

TEST_CASE("step schedules and option checks") {
  OptimizerConfig c;
  c.schedule = Schedule::kConstant;
  CHECK(c.step_at(0.5, 3, 3.5) == 0.5);
  c.schedule = Schedule::kEpoch;
  c.decay = 0.5;
  CHECK(c.step_at(0.8, 2, 2.7) == doctest::Approx(0.2));
  c.schedule = Schedule::kInverse;
  c.schedule_scale = 2;
  CHECK(c.step_at(1.0, 0, 2.0) == doctest::Approx(0.5));
  c.schedule = Schedule::kInverseSqrt;
  CHECK(c.step_at(1.0, 0, 6.0) == doctest::Approx(0.5));
  CHECK(parse_optimizer("nesterov") == OptimizerKind::kNesterov);
  CHECK(parse_schedule("inverse-sqrt") == Schedule::kInverseSqrt);
  CHECK_THROWS_WITH_AS(parse_optimizer("lbfgs"), doctest::Contains("--optimizer: expected one of"),
                       InputError);
  c = {};
  c.beta2 = 1;
  CHECK_THROWS_WITH_AS(c.validate(), "--beta2: expected a factor in [0, 1), found 1", InputError);
  c = {};
  c.clip_norm = -1;
  CHECK_THROWS_WITH_AS(c.validate(), doctest::Contains("--clip-norm"), InputError);
}

namespace {

// Parameters and state after four dense steps of `config` under `policy`, from the same start.
std::vector<float> four_steps(const OptimizerConfig& config, Policy policy, std::size_t n) {
  ParamStore w(n);
  for (std::size_t k = 0; k < n; ++k) w.data()[k] = std::cos(0.11f * static_cast<float>(k));
  OptimizerState state(config.kind, n);
  OptimizerScratch scratch(n);
  std::vector<float> grad(n);
  for (int t = 1; t <= 4; ++t) {
    for (std::size_t k = 0; k < n; ++k) {
      grad[k] = std::sin(0.37f * static_cast<float>(k * t)) * static_cast<float>(t);
    }
    dispatch_policy(policy, [&](auto p) {
      apply_step<decltype(p)>(config, w, state, GradientView{{}, grad}, 0.01f, t, scratch);
    });
  }
  std::vector<float> all(w.data(), w.data() + n);
  for (const auto* buffer : {state.s1.get(), state.s2.get()}) {
    if (buffer) all.insert(all.end(), buffer->data(), buffer->data() + n);
  }
  return all;
}

}  // namespace

TEST_CASE("dense steps in one pass (serial, racy) equal the pass per buffer of the others") {
  constexpr std::size_t n = 3000;
  for (const auto kind : {OptimizerKind::kSgd, OptimizerKind::kMomentum, OptimizerKind::kNesterov,
                          OptimizerKind::kAdagrad, OptimizerKind::kRmsprop, OptimizerKind::kAdam}) {
    CAPTURE(to_string(kind));
    OptimizerConfig config;
    config.kind = kind;
    config.momentum = 0.8;
    config.rho = 0.7;
    config.clip_norm = 40.0;  // clipped on some steps
    const auto per_buffer = four_steps(config, Policy::kAtomic, n);
    CHECK(four_steps(config, Policy::kSerial, n) == per_buffer);
    CHECK(four_steps(config, Policy::kRacy, n) == per_buffer);
    CHECK(four_steps(config, Policy::kLocked, n) == per_buffer);
  }
}
