//===- TensorMap.h - Parameter names in another framework's files -*- C++ -*-===//
//
// The config's tensor_map says how a file of another framework (a Hugging
// Face GPT-2 checkpoint) names and lays out each parameter: a rule maps a
// parameter name pattern to the file's name, and may say the file holds the
// matrix transposed. --init reads such files and --save writes them.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_PROGRAM_TENSORMAP_H
#define SINTER_RT_PROGRAM_TENSORMAP_H

#include "runtime/contract/sinter_config.pb.h"

#include <map>
#include <optional>
#include <string>

namespace sinter::rt {

class TensorMap {
public:
  /// The identity: files use the model's own names.
  TensorMap() = default;
  explicit TensorMap(const config::TrainConfig::TensorMap &map) : map(map) {}

  bool identity() const { return map.rule_size() == 0; }

  struct Stored {
    std::string name;
    bool transposed = false;
  };
  /// Where parameter `param` is in a file, or nothing when no rule maps it.
  std::optional<Stored> find(const std::string &param) const;
  /// Whether --init may leave the file's tensor `name` unread.
  bool ignored(const std::string &name) const;
  /// What --save writes into the header besides Sinter's own keys.
  std::map<std::string, std::string> metadata() const;

private:
  config::TrainConfig::TensorMap map;
};

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_TENSORMAP_H
