#pragma once

#include <stdexcept>

namespace hogwild {

/// Bad input data or configuration: a file that does not parse, an option out of range.
/// The message names the place (`path:line:` or `--option:`), what was expected and what was
/// found. The CLI maps it to exit code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Training diverged: the loss became NaN/Inf or grew beyond its bound. The CLI maps it to
/// exit code 3.
class DivergenceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An operating-system failure (open, read, write) with the errno text in the message.
class SystemError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace hogwild
