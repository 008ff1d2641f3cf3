// libFuzzer target for the IDX reader (plain and gzip): any input must keep the contract in
// idx_contract.h; a violation aborts, which libFuzzer records as a crash with its input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "idx_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto outcome = hogwild::fuzz::check_idx(bytes);
  if (!outcome.violation.empty()) {
    std::fprintf(stderr, "IDX reader contract violated: %s\n", outcome.violation.c_str());
    if (!outcome.error.empty()) std::fprintf(stderr, "message: %s\n", outcome.error.c_str());
    std::abort();
  }
  return 0;
}
