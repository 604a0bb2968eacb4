//===- TensorMap.cpp - Parameter names in another framework's files ------===//

#include "program/TensorMap.h"

namespace sinter::rt {
namespace {

/// What `pattern`'s '*' matched in `name`; "" for a pattern without one that
/// equals `name`; nothing when it does not match.
std::optional<std::string> match(const std::string &pattern, const std::string &name) {
  size_t star = pattern.find('*');
  if (star == std::string::npos)
    return pattern == name ? std::optional<std::string>("") : std::nullopt;
  std::string prefix = pattern.substr(0, star), suffix = pattern.substr(star + 1);
  if (name.size() < prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix))
    return std::nullopt;
  return name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
}

} // namespace

std::optional<TensorMap::Stored> TensorMap::find(const std::string &param) const {
  if (identity())
    return Stored{param, false};
  for (const auto &rule : map.rule()) {
    std::optional<std::string> matched = match(rule.param(), param);
    if (!matched)
      continue;
    std::string file = rule.file();
    size_t star = file.find('*');
    if (star != std::string::npos)
      file.replace(star, 1, *matched);
    return Stored{file, rule.transpose()};
  }
  return std::nullopt;
}

bool TensorMap::ignored(const std::string &name) const {
  for (const std::string &pattern : map.ignore())
    if (match(pattern, name))
      return true;
  return false;
}

std::map<std::string, std::string> TensorMap::metadata() const {
  return {map.metadata().begin(), map.metadata().end()};
}

} // namespace sinter::rt
