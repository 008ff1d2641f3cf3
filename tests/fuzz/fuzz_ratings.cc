// libFuzzer target for the ratings reader: any input must keep the contract in
// ratings_contract.h; a violation aborts, which libFuzzer records as a crash with its input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "ratings_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto outcome = hogwild::fuzz::check_ratings(text);
  if (!outcome.violation.empty()) {
    std::fprintf(stderr, "ratings reader contract violated: %s\n", outcome.violation.c_str());
    if (!outcome.error.empty()) std::fprintf(stderr, "message: %s\n", outcome.error.c_str());
    std::abort();
  }
  return 0;
}
