//===- ConfigLoader.h - Load and check the training config ------*- C++ -*-===//
//
// Reads a training config (protobuf text format, schema in sinter_config.proto,
// contract in LANGUAGE.md section 10), applies the defaults the schema cannot
// express and checks every value. Shared by the compiler (sinterc --config)
// and the runtime (PROGRAM --config / --set), so it depends on protobuf only,
// never on MLIR or LLVM.
//
// Every function that can fail returns its failure as text in `error`: one
// line per problem, formatted like a compiler diagnostic,
//   train.pbtxt:3:21: error: batch.micro (48) does not divide batch.global
//   (256); the nearest micro batches that do are 32 or 64
// (one line) with 1-based line and column and the field's dotted name. Several
// problems give several lines, in file order.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RUNTIME_CONFIG_CONFIGLOADER_H
#define SINTER_RUNTIME_CONFIG_CONFIGLOADER_H

#include "runtime/contract/sinter_config.pb.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sinter::config {

/// Reads, parses, completes and validates the config file at `path`.
/// On failure returns nullopt and sets `error`, naming the file, line and
/// column of the field at fault.
std::optional<TrainConfig> loadConfigFile(const std::string &path,
                                          std::string &error);

/// Same as loadConfigFile for text already in memory; `displayPath` is the
/// name diagnostics use (and nothing else).
std::optional<TrainConfig> parseConfigText(const std::string &text,
                                           const std::string &displayPath,
                                           std::string &error);

/// What the config that another is laid over is: the config a program was
/// compiled with, whose compiled-in fields (the model, `set`, `shapes`,
/// parallel.batch_norm, parallel.bucket_cap_mb, parallel.overlap, ...) may not
/// change, or one that sinterc is about to compile, where anything may.
enum class Base { CompiledIn, Compiling };

/// Overlays the config file at `path` on `cfg` (PROGRAM --config over the
/// embedded config): fields written in the file replace those in `cfg`,
/// sub-messages merge field by field, `set`/`shapes` merge by key, a data
/// source or a repeated field is replaced whole, and naming another member of
/// a oneof (e.g. `optimizer { sgd {} }`) switches to it. The result is
/// completed and validated; on failure `cfg` is unchanged. Over a compiled-in
/// config (`base`), a file that changes a compiled-in field is refused at
/// that field.
bool mergeConfigFile(TrainConfig &cfg, const std::string &path,
                     std::string &error, Base base = Base::CompiledIn);
/// Same as mergeConfigFile for text in memory.
bool mergeConfigText(TrainConfig &cfg, const std::string &text,
                     const std::string &displayPath, std::string &error,
                     Base base = Base::CompiledIn);

/// Sets one field by dotted path, e.g. ("steps", "20"),
/// ("optimizer.adamw.lr", "1e-3"), ("parallel.strategy", "ZERO2"),
/// ("shapes.T", "256"), ("set.hidden", "1024"). A message-typed field takes a
/// text-format body: ("optimizer.sgd", "{lr: 0.1 momentum: 0.9}"). Entering a
/// member of a oneof selects it. The result is validated; on failure `cfg` is
/// unchanged and `error` names the field (suggesting the nearest field for an
/// unknown name) or the expected type of the value. As with mergeConfigFile,
/// a compiled-in field may not change over a compiled-in config.
bool applyOverride(TrainConfig &cfg, const std::string &dottedField,
                   const std::string &value, std::string &error,
                   Base base = Base::CompiledIn);

/// Same, for one `FIELD=VALUE` string as given to `--set`.
bool applyOverride(TrainConfig &cfg, const std::string &assignment,
                   std::string &error, Base base = Base::CompiledIn);

/// Applies several `FIELD=VALUE` strings in order and validates once at the
/// end, so `batch.global=48 batch.micro=16` works even though the first alone
/// would leave an old micro that does not divide 48. On failure `cfg` is
/// unchanged.
bool applyOverrides(TrainConfig &cfg, const std::vector<std::string> &assignments,
                    std::string &error, Base base = Base::CompiledIn);

/// Checks every value of an already completed config (as returned by the
/// functions above); diagnostics carry field names but no file positions.
bool validateConfig(const TrainConfig &cfg, std::string &error);

/// Micro-batches per rank and step: global / (micro * worldSize). Returns -1
/// and sets `error` (naming the three numbers, without an "error:" prefix,
/// which the caller's report adds) when that is not a whole number or
/// worldSize < 1.
int64_t accumulationSteps(const TrainConfig &cfg, int64_t worldSize,
                          std::string &error);

/// The model file: `cfg.model()` resolved against the folder of
/// `configPath` when relative; returned unchanged when absolute; "" when
/// the config names no model.
std::string resolveModelPath(const TrainConfig &cfg,
                             const std::string &configPath);

} // namespace sinter::config

#endif // SINTER_RUNTIME_CONFIG_CONFIGLOADER_H
