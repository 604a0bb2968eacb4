//===- CompiledFields.cpp - The fields fixed when a program is compiled ---===//
//
// A run-time config or --set laid over the compiled-in config may not change
// what sinterc compiled into the program.
//
//===----------------------------------------------------------------------===//

#include "runtime/config/ConfigInternals.h"

#include <map>
#include <type_traits>

namespace sinter::config::detail {

namespace {

/// `key=value, ...` in key order, or "none".
template <typename V>
std::string mapText(const google::protobuf::Map<std::string, V> &map) {
  std::map<std::string, std::string> sorted;
  for (const auto &[key, value] : map) {
    if constexpr (std::is_same_v<V, std::string>)
      sorted[key] = value;
    else
      sorted[key] = std::to_string(value);
  }
  std::string out;
  for (const auto &[key, value] : sorted)
    out += (out.empty() ? "" : ", ") + key + "=" + value;
  return out.empty() ? "none" : out;
}

/// A field sinterc compiles into the program: its path and how it reads.
struct CompiledField {
  std::vector<const char *> path;
  std::string (*text)(const TrainConfig &);
};

const CompiledField kCompiledFields[] = {
    {{"model"}, [](const TrainConfig &c) { return "\"" + c.model() + "\""; }},
    {{"model_name"}, [](const TrainConfig &c) { return "\"" + c.model_name() + "\""; }},
    {{"set"}, [](const TrainConfig &c) { return mapText(c.set()); }},
    {{"shapes"}, [](const TrainConfig &c) { return mapText(c.shapes()); }},
    {{"parallel", "batch_norm"},
     [](const TrainConfig &c) {
       return TrainConfig::Parallel::BatchNorm_Name(c.parallel().batch_norm());
     }},
    {{"parallel", "strategy"},
     [](const TrainConfig &c) {
       return TrainConfig::Parallel::Strategy_Name(c.parallel().strategy());
     }},
    {{"parallel", "world_size"},
     [](const TrainConfig &c) { return formatInt(c.parallel().world_size()); }},
    {{"parallel", "bucket_cap_mb"},
     [](const TrainConfig &c) { return formatDouble(c.parallel().bucket_cap_mb()); }},
    {{"parallel", "overlap"},
     [](const TrainConfig &c) {
       return std::string(c.parallel().overlap() ? "true" : "false");
     }},
    {{"device"}, [](const TrainConfig &c) { return TrainConfig::Device_Name(c.device()); }},
    {{"precision", "compute"},
     [](const TrainConfig &c) {
       return TrainConfig::Precision::Compute_Name(c.precision().compute());
     }},
    {{"precision", "activations"},
     [](const TrainConfig &c) {
       return TrainConfig::Precision::Compute_Name(c.precision().activations());
     }},
    {{"precision", "residual"},
     [](const TrainConfig &c) {
       return TrainConfig::Precision::Compute_Name(c.precision().residual());
     }},
    {{"recompute", "mode"},
     [](const TrainConfig &c) {
       return TrainConfig::Recompute::Mode_Name(c.recompute().mode());
     }},
    {{"recompute", "scopes"},
     [](const TrainConfig &c) {
       std::string out;
       for (const std::string &scope : c.recompute().scopes())
         out += (out.empty() ? "\"" : ", \"") + scope + "\"";
       return out.empty() ? std::string("none") : out;
     }},
};

} // namespace

/// sinterc compiles the model with its constants and shapes, the batch-norm
/// mode, the gradient bucket layout and its overlap, the device, the
/// compute precision and what is recomputed into the program, so a run-time
/// config or --set (laid over the compiled-in config) that changes one of
/// them would be ignored: it is refused, at the field when `tree` holds the
/// overriding file's positions.
void checkCompiledFields(const TrainConfig &compiled, const TrainConfig &overridden,
                         const ParseInfoTree *tree, Diagnostics &diags) {
  for (const CompiledField &field : kCompiledFields) {
    std::string was = field.text(compiled), now = field.text(overridden);
    if (now == was)
      continue;
    FieldPath path, firstEntry;
    for (const char *name : field.path)
      path = sub(path, name);
    // A map (set, shapes) is located at its first entry in the file.
    firstEntry = path;
    if (firstEntry.back().field->is_repeated())
      firstEntry.back().index = 0;
    std::pair<int, int> at = tree ? Locator(tree).find(firstEntry) : std::pair{-1, -1};
    diags.error(at.first, at.second,
                displayName(path) + " (" + now +
                    ") is fixed when sinterc compiles the program (this one has " +
                    was + "); changing it at run time is not built yet, "
                    "so recompile with the new value");
  }
}

} // namespace sinter::config::detail
