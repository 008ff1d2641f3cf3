// HOGWILD_FORCE_INLINE: inlining forced where the training loops need it, and left to the
// compiler in sanitizer builds.
//
// The per-nonzero helpers (a row's visit, a bf16 weight's load and store, the sparse update)
// must inline into the loops for those loops to vectorise and keep their operands in
// registers. Forced into every kernel the linear models instantiate, they also make the one
// translation unit that holds the kernels the longest compile of the project: 9.5 minutes under
// clang's AddressSanitizer + UndefinedBehaviorSanitizer at -O1 (3.5 without the forcing), most
// of CI's sanitizer build. Sanitizer builds check what the code does, not how fast it runs, and
// the code is the same either way.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HOGWILD_SANITIZED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HOGWILD_SANITIZED_BUILD 1
#endif
#endif

#if defined(HOGWILD_SANITIZED_BUILD)
#define HOGWILD_FORCE_INLINE
#else
/// Forces the function it precedes to be inlined at every call (see above).
#define HOGWILD_FORCE_INLINE [[gnu::always_inline]]
#endif
