//===- JsonTree.h - JSON parsed strictly into a small tree ------*- C++ -*-===//
//
// nlohmann::json's DOM parser keeps the last of two equal keys silently;
// a checkpoint with two tensors of one name must be an error instead. So the
// text is parsed with nlohmann's SAX interface (which validates syntax and
// UTF-8 and reports positions without throwing) into this tree, which
// rejects duplicate keys and limits nesting (the tree is freed recursively,
// so depth must be bounded for hostile input).
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_CHECKPOINT_JSONTREE_H
#define SINTER_RT_CHECKPOINT_JSONTREE_H

#include "sinter/rt/Status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sinter::rt {

struct JsonNode {
  enum class Kind { Null, Bool, Int, UInt, Float, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  int64_t integer = 0;   // Int (negative numbers)
  uint64_t unsigned_ = 0; // UInt (non-negative integers)
  double real = 0;       // Float (anything with a fraction or exponent, or too big)
  std::string text;      // String, or the number's spelling for Float
  std::vector<JsonNode> items;                          // Array
  std::vector<std::pair<std::string, JsonNode>> members; // Object, in file order

  /// "an object", "a string", "the number 1.5", ... for messages.
  std::string describe() const;
};

/// Parses `text` (exactly one JSON value, whitespace around it allowed).
/// Errors read like "syntax error at byte 17: ...", "the key 'a' appears
/// twice in the same object", "nested more than 8 levels deep".
Expected<JsonNode> parseJsonStrict(std::string_view text, int maxDepth);

} // namespace sinter::rt

#endif // SINTER_RT_CHECKPOINT_JSONTREE_H
