#pragma once

// Whether the tests run under a sanitizer, for the few checks whose behaviour it changes.

namespace hogwild::test {

/// Whether this build runs under AddressSanitizer or ThreadSanitizer, which reserve terabytes
/// of address space for their shadow memory (a limit on it would stop them).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
inline constexpr bool kSanitized =
    __has_feature(address_sanitizer) || __has_feature(thread_sanitizer);
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace hogwild::test
