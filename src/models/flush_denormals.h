#pragma once

// Subnormal floats flushed to zero for the length of a scope.

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace hogwild::detail {

/// While alive, floats below 2^-126 are flushed to zero, as results (FTZ) and as operands (DAZ),
/// on this thread; the destructor restores the thread's setting. Adam's and RMSProp's squared
/// gradients and decaying moments of weights whose inputs are rarely nonzero (Fashion-MNIST's
/// border pixels) fall below 2^-126, and on Intel cores every operation that produces or reads
/// such a value takes a microcode assist of a hundred cycles or more: Adam's pass was 63% of an
/// MLP's training time on a Xeon, 3x slower than with the flush (docs/benchmarks.md). A value
/// flushed is below 1.2e-38, far under what a step adds to a weight. TensorFlow's CPU thread
/// pools train the same way (port::ScopedFlushDenormal). A no-op where the CPU is not x86.
class FlushDenormals {
 public:
#if defined(__SSE__) || defined(__x86_64__)
  FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero); }
  ~FlushDenormals() { _mm_setcsr(saved_); }
#else
  FlushDenormals() = default;
#endif
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
#if defined(__SSE__) || defined(__x86_64__)
  static constexpr unsigned kFlushToZero = 0x8000;     // MXCSR bit 15
  static constexpr unsigned kDenormalsAreZero = 0x40;  // MXCSR bit 6
  unsigned saved_;
#endif
};

}  // namespace hogwild::detail
