#pragma once

// Applies one optimiser step to the shared parameters under an update policy.
//
// Glossary: w = parameters, g = gradient entries of this update, idx = their coordinates
// (empty for a dense update of coordinates [0, g.size())), eta = step size, c = clipping
// factor, a/b = this worker's scratch copies of the state values just written (so the
// parameter write uses exactly the state it computed), s1/s2 = the shared state buffers
// (momentum or squared-gradient sums; Adam's first and second moments), t = step count for
// Adam's bias correction.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "hogwild/detail/param_store.h"
#include "hogwild/detail/policies.h"
#include "hogwild/optimizer.h"
#include "models/flush_denormals.h"

namespace hogwild::detail {

/// The optimiser's shared state: zero, one or two buffers the size of the model.
struct OptimizerState {
  std::unique_ptr<ParamStore> s1;  ///< momentum, Adagrad sum, RMSProp average, Adam m
  std::unique_ptr<ParamStore> s2;  ///< Adam v

  OptimizerState(OptimizerKind kind, std::size_t size) {
    if (state_buffers(kind) >= 1) s1 = std::make_unique<ParamStore>(size);
    if (state_buffers(kind) >= 2) s2 = std::make_unique<ParamStore>(size);
  }
};

/// One worker's scratch space, sized once to the largest update (no allocation per step).
struct OptimizerScratch {
  std::vector<float> a;
  std::vector<float> b;
  explicit OptimizerScratch(std::size_t max_update = 0) : a(max_update), b(max_update) {}
};

/// The gradient of one update: entries g at coordinates idx, or dense from coordinate 0.
struct GradientView {
  std::span<const std::uint32_t> idx;  ///< empty: dense, g[k] belongs to coordinate k
  std::span<const float> g;
};

/// The largest |m| / sqrt(v) any sequence of gradients can give Adam's moments, for beta1^2 <
/// beta2: by Cauchy-Schwarz, |m| = (1 - b1) |sum_i b1^i g_i| <= (1 - b1) sqrt(sum_i (b1^2 /
/// b2)^i) sqrt(sum_i b2^i g_i^2) < (1 - b1) / sqrt((1 - b2) (1 - b1^2 / b2)) sqrt(v), whatever
/// the length of the history. Infinite (no bound) when beta1^2 >= beta2.
inline float adam_moment_bound(double beta1, double beta2) {
  const double ratio = beta1 * beta1 / beta2;
  if (ratio >= 1) return std::numeric_limits<float>::infinity();
  return static_cast<float>((1 - beta1) / std::sqrt((1 - beta2) * (1 - ratio)));
}

/// Whether P's dense updates are plain loads and stores (serial; racy on x86-64 outside
/// ThreadSanitizer builds, RacyPolicy::dense_update's benign race), so that one loop may update
/// several buffers at once.
template <class P>
inline constexpr bool kPlainAccesses = std::is_same_v<P, SerialPolicy>
#if defined(__x86_64__) && !defined(HOGWILD_TSAN)
                                       || std::is_same_v<P, RacyPolicy>
#endif
    ;

/// Adam's step: one pass over w, m and v where P allows (one_pass), else a pass per buffer
/// (update) through the scratch copies a and b. g is the gradient, c its clipping factor.
template <class Update, class OnePass>
void adam_step(const OptimizerConfig& config, ParamStore& w, OptimizerState& state, const float* g,
               float c, float eta, double t, float* a, float* b, Update& update,
               OnePass& one_pass) {
  float* x = w.data();
  float* s1 = state.s1->data();
  float* s2 = state.s2->data();
  const auto eps = static_cast<float>(config.epsilon);
  const auto b1 = static_cast<float>(config.beta1);
  const auto b2 = static_cast<float>(config.beta2);
  const auto eta_hat = static_cast<float>(eta / (1 - std::pow(config.beta1, t)));
  const auto root_hat = static_cast<float>(1 / std::sqrt(1 - std::pow(config.beta2, t)));
  // Concurrent workers can pair one worker's new m with the v from before its write (m is
  // written before v; a stalled write can also put back an old v). With a zero gradient
  // here that v can be 0 while m is not, and the step m / (0 + eps) throws the weight out
  // by orders of magnitude. No real history moves a weight further than eta_hat times
  // adam_moment_bound / root_hat, so holding each step to that leaves a consistent
  // (serial) history as it is and keeps such a pair to a step of ordinary size.
  const float largest = eta_hat * adam_moment_bound(config.beta1, config.beta2) / root_hat;
  if (one_pass([&](std::size_t k) {
        const float mk = b1 * s1[k] + (1 - b1) * c * g[k];
        const float gk = c * g[k];
        const float vk = b2 * s2[k] + (1 - b2) * gk * gk;
        s1[k] = mk;
        s2[k] = vk;
        const float step = eta_hat * mk / (std::sqrt(vk) * root_hat + eps);
        x[k] = x[k] - std::clamp(step, -largest, largest);
      })) {
    return;
  }
  update(*state.s1, [=](float m, std::size_t k) { return a[k] = b1 * m + (1 - b1) * c * g[k]; });
  update(*state.s2, [=](float v, std::size_t k) {
    const float gk = c * g[k];
    return b[k] = b2 * v + (1 - b2) * gk * gk;
  });
  update(w, [=](float xk, std::size_t k) {
    const float step = eta_hat * a[k] / (std::sqrt(b[k]) * root_hat + eps);
    return xk - std::clamp(step, -largest, largest);
  });
}

/// Applies one step of `config` with step size `eta`; `t` >= 1 counts steps for Adam.
template <class P>
void apply_step(const OptimizerConfig& config, ParamStore& w, OptimizerState& state,
                const GradientView& grad, float eta, double t, OptimizerScratch& scratch) {
  const float* g = grad.g.data();
  const std::size_t n = grad.g.size();
  const bool dense = grad.idx.empty();
  auto update = [&](ParamStore& store, auto&& op) {
    if (dense) {
      P::dense_update(store, 0, n, op);
    } else {
      P::sparse_update(store, grad.idx, op);
    }
  };
  float c = 1.0f;
  if (config.clip_norm > 0) {
    double norm2 = 0;
    for (std::size_t k = 0; k < n; ++k) norm2 += double{g[k]} * g[k];
    const double norm = std::sqrt(norm2);
    if (norm > config.clip_norm) c = static_cast<float>(config.clip_norm / norm);
  }
  float* a = scratch.a.data();
  float* b = scratch.b.data();
  const auto eps = static_cast<float>(config.epsilon);
  // With P's dense updates plain accesses, a dense step runs body(k) for each entry in one loop
  // over every buffer it touches, instead of a pass per buffer through the scratch copies: the
  // same arithmetic in the same order for each entry, fewer bytes read and written (Adam: 28 an
  // entry instead of 48). Returns whether it did.
  const auto one_pass = [&](auto&& body) {
    if constexpr (kPlainAccesses<P>) {
      if (dense) {
        for (std::size_t k = 0; k < n; ++k) body(k);
        return true;
      }
    }
    return false;
  };
  float* x = w.data();
  float* s1 = state.s1 ? state.s1->data() : nullptr;
  switch (config.kind) {
    case OptimizerKind::kSgd: {
      const float scale = eta * c;
      update(w, [=](float xk, std::size_t k) { return xk - scale * g[k]; });
      break;
    }
    case OptimizerKind::kMomentum:
    case OptimizerKind::kNesterov: {
      const auto mu = static_cast<float>(config.momentum);
      const bool heavy_ball = config.kind == OptimizerKind::kMomentum;
      if (heavy_ball && one_pass([&](std::size_t k) {
            const float ak = mu * s1[k] + c * g[k];
            s1[k] = ak;
            x[k] = x[k] - eta * ak;
          })) {
        break;
      }
      if (!heavy_ball && one_pass([&](std::size_t k) {
            const float ak = mu * s1[k] + c * g[k];
            s1[k] = ak;
            x[k] = x[k] - eta * (c * g[k] + mu * ak);
          })) {
        break;
      }
      update(*state.s1, [=](float v, std::size_t k) { return a[k] = mu * v + c * g[k]; });
      if (heavy_ball) {
        update(w, [=](float xk, std::size_t k) { return xk - eta * a[k]; });
      } else {
        update(w, [=](float xk, std::size_t k) { return xk - eta * (c * g[k] + mu * a[k]); });
      }
      break;
    }
    case OptimizerKind::kAdagrad:
    case OptimizerKind::kRmsprop: {
      const FlushDenormals flush;  // the squared gradients' sums
      const bool adagrad = config.kind == OptimizerKind::kAdagrad;
      const auto rho = static_cast<float>(config.rho);
      const auto step = [&](std::size_t k, float ak) {
        s1[k] = ak;
        x[k] = x[k] - eta * c * g[k] / (std::sqrt(ak) + eps);
      };
      if (adagrad && one_pass([&](std::size_t k) {
            const float gk = c * g[k];
            step(k, s1[k] + gk * gk);
          })) {
        break;
      }
      if (!adagrad && one_pass([&](std::size_t k) {
            const float gk = c * g[k];
            step(k, rho * s1[k] + (1 - rho) * gk * gk);
          })) {
        break;
      }
      if (adagrad) {
        update(*state.s1, [=](float s, std::size_t k) {
          const float gk = c * g[k];
          return a[k] = s + gk * gk;
        });
      } else {
        update(*state.s1, [=](float s, std::size_t k) {
          const float gk = c * g[k];
          return a[k] = rho * s + (1 - rho) * gk * gk;
        });
      }
      update(w, [=](float xk, std::size_t k) {
        return xk - eta * c * g[k] / (std::sqrt(a[k]) + eps);
      });
      break;
    }
    case OptimizerKind::kAdam: {
      const FlushDenormals flush;  // the moments
      adam_step(config, w, state, g, c, eta, t, a, b, update, one_pass);
      break;
    }
  }
}

}  // namespace hogwild::detail
