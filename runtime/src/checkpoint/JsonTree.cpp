//===- JsonTree.cpp - JSON parsed strictly into a small tree --------------===//

#include "checkpoint/JsonTree.h"

#include <cstdio>

#include "support/Format.h"

#include <nlohmann/json.hpp>

#include <unordered_set>

namespace sinter::rt {
namespace {

using json = nlohmann::json;

/// Builds the tree from SAX events; returning false stops the parse.
class TreeBuilder {
public:
  explicit TreeBuilder(int maxDepth) : maxDepth(maxDepth) {}

  JsonNode root;
  std::string error;

  bool null() { return add(JsonNode()); }
  bool boolean(bool v) {
    JsonNode n;
    n.kind = JsonNode::Kind::Bool;
    n.boolean = v;
    return add(std::move(n));
  }
  bool number_integer(json::number_integer_t v) {
    JsonNode n;
    if (v >= 0) {
      n.kind = JsonNode::Kind::UInt;
      n.unsigned_ = (uint64_t)v;
    } else {
      n.kind = JsonNode::Kind::Int;
      n.integer = v;
    }
    return add(std::move(n));
  }
  bool number_unsigned(json::number_unsigned_t v) {
    JsonNode n;
    n.kind = JsonNode::Kind::UInt;
    n.unsigned_ = v;
    return add(std::move(n));
  }
  bool number_float(json::number_float_t v, const std::string &spelling) {
    JsonNode n;
    n.kind = JsonNode::Kind::Float;
    n.real = v;
    n.text = spelling;
    return add(std::move(n));
  }
  bool string(std::string &v) {
    JsonNode n;
    n.kind = JsonNode::Kind::String;
    n.text = std::move(v);
    return add(std::move(n));
  }
  bool binary(json::binary_t &) {
    error = "binary values are not JSON";
    return false;
  }
  bool start_object(std::size_t) { return open(JsonNode::Kind::Object); }
  bool start_array(std::size_t) { return open(JsonNode::Kind::Array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string &k) {
    if (!keys.back().insert(k).second) {
      error = "the key " + quoteForMessage(k) + " appears twice in the same object";
      return false;
    }
    pendingKey = std::move(k);
    return true;
  }
  bool parse_error(std::size_t position, const std::string &lastToken,
                   const nlohmann::detail::exception &ex) {
    // what() is "[json.exception.parse_error.101] parse error at line 1,
    // column 5: syntax error while parsing ..."; keep the part after the
    // position and give a byte offset instead.
    std::string what = ex.what();
    size_t colon = what.find(": ");
    std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
    // The detail quotes the offending bytes; a damaged file may hold any,
    // and a message must stay printable text.
    std::string printable;
    for (unsigned char c : detail) {
      if (c >= 32 && c < 127) {
        printable += char(c);
        continue;
      }
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      printable += hex;
    }
    error = "syntax error at byte " + std::to_string(position ? position - 1 : 0) + ": " +
            printable;
    (void)lastToken;
    return false;
  }

private:
  int maxDepth;
  std::vector<JsonNode *> stack;
  std::vector<std::unordered_set<std::string>> keys;
  std::string pendingKey;
  bool haveRoot = false;

  /// Places `n` in the open container (or as the root); returns where it went.
  JsonNode *place(JsonNode &&n) {
    if (stack.empty()) {
      root = std::move(n);
      haveRoot = true;
      return &root;
    }
    JsonNode *parent = stack.back();
    if (parent->kind == JsonNode::Kind::Array) {
      parent->items.push_back(std::move(n));
      return &parent->items.back();
    }
    parent->members.emplace_back(std::move(pendingKey), std::move(n));
    pendingKey.clear();
    return &parent->members.back().second;
  }

  bool add(JsonNode &&n) {
    place(std::move(n));
    return true;
  }

  bool open(JsonNode::Kind kind) {
    if ((int)stack.size() >= maxDepth) {
      error = "nested more than " + std::to_string(maxDepth) + " levels deep";
      return false;
    }
    JsonNode n;
    n.kind = kind;
    stack.push_back(place(std::move(n)));
    keys.emplace_back();
    return true;
  }

  bool close() {
    stack.pop_back();
    keys.pop_back();
    return true;
  }
};

} // namespace

std::string JsonNode::describe() const {
  switch (kind) {
  case Kind::Null: return "null";
  case Kind::Bool: return boolean ? "true" : "false";
  case Kind::Int: return "the number " + std::to_string(integer);
  case Kind::UInt: return "the number " + std::to_string(unsigned_);
  case Kind::Float: return "the number " + quoteForMessage(text, 30);
  case Kind::String: return "the string " + quoteForMessage(text, 40);
  case Kind::Array: return "an array";
  case Kind::Object: return "an object";
  }
  return "a value";
}

Expected<JsonNode> parseJsonStrict(std::string_view text, int maxDepth) {
  TreeBuilder builder(maxDepth);
  bool ok = json::sax_parse(text.begin(), text.end(), &builder);
  if (!ok)
    return Status::error(builder.error.empty() ? std::string("invalid JSON") : builder.error);
  return std::move(builder.root);
}

} // namespace sinter::rt
