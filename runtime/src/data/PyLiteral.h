//===- PyLiteral.h - The Python literals of a .npy header -------*- C++ -*-===//
//
// A .npy header is a Python dict literal that numpy reads with
// ast.literal_eval. This parser accepts the subset numpy writes and a little
// more (so a hand-written header still reads): strings in ' or " with simple
// escapes, integers (with Python 2's L suffix, which numpy still strips),
// True, False, None, tuples, lists and dicts with string keys. Anything else
// is an error that says what was found where.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_DATA_PYLITERAL_H
#define SINTER_RT_DATA_PYLITERAL_H

#include "sinter/rt/Status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sinter::rt {

struct PyLiteral {
  enum class Kind { String, Int, Bool, None, Tuple, List, Dict };
  Kind kind = Kind::None;
  std::string str;        // String
  uint64_t magnitude = 0; // Int: absolute value
  bool negative = false;  // Int
  bool tooBig = false;    // Int: does not fit in 64 bits
  bool boolean = false;   // Bool
  std::vector<PyLiteral> items;                           // Tuple, List
  std::vector<std::pair<std::string, PyLiteral>> entries; // Dict, in order

  /// "a string", "an integer", "a tuple", ... for messages.
  const char *describe() const;
  /// The literal written back, e.g. "(3, 4)" or "'<f4'", for messages.
  std::string repr() const;
};

/// Parses `text` as one literal followed only by whitespace. Errors are
/// phrased "expected ... at byte N, found ..." (no file name).
Expected<PyLiteral> parsePyLiteral(std::string_view text);

} // namespace sinter::rt

#endif // SINTER_RT_DATA_PYLITERAL_H
