//===- ConfigLoader.cpp - Load and check the training config --------------===//
//
// Parsing is protobuf's TextFormat::Parser; what this library adds is the
// diagnostics: 1-based positions, dotted field names, suggestions for
// misspelt fields and enum values, and the checks of LANGUAGE.md section 10
// that the schema cannot express. Field positions come from a
// TextFormat::ParseInfoTree recorded during the parse.
//
// This file is the public API of ConfigLoader.h: each entry point reads,
// parses or sets, completes the defaults and validates, with the steps that
// ConfigInternals.h declares.
//
//===----------------------------------------------------------------------===//

#include "runtime/config/ConfigLoader.h"
#include "runtime/config/ConfigInternals.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

namespace sinter::config {

using namespace detail;

//===----------------------------------------------------------------------===//
// Defaults
//===----------------------------------------------------------------------===//

/// The defaults the schema cannot state. Idempotent, and it never touches a
/// field the file wrote, so a config completed here can still be overlaid.
static void applyDefaults(TrainConfig &cfg) {
  // Left alone when global is bad, so that only global is reported.
  if (!cfg.batch().has_micro() && cfg.batch().global() > 0)
    cfg.mutable_batch()->set_micro(cfg.batch().global());
  if (!cfg.has_optimizer())
    cfg.mutable_optimizer()->mutable_adamw();
  if (cfg.schedule().kind_case() == TrainConfig::Schedule::KIND_NOT_SET)
    cfg.mutable_schedule()->mutable_constant();
  if (!cfg.data().has_train())
    cfg.mutable_data()->mutable_train()->mutable_synthetic();
}

//===----------------------------------------------------------------------===//
// Reading a file
//===----------------------------------------------------------------------===//

static bool readFile(const std::string &path, std::string &text, std::string &error) {
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    error = path + ": error: cannot open the config file: " + std::strerror(errno);
    return false;
  }
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0)
    text.append(buf, n);
  bool failed = std::ferror(f);
  int err = errno;
  std::fclose(f);
  if (failed) {
    error = path + ": error: cannot read the config file: " + std::strerror(err);
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

std::optional<TrainConfig> parseConfigText(const std::string &text,
                                           const std::string &displayPath,
                                           std::string &error) {
  SourceText source(text);
  Diagnostics diags(displayPath.empty() ? "<config>" : displayPath, &source);
  TrainConfig cfg;
  ParseInfoTree tree;
  if (!parseRaw(text, source, diags, cfg, tree)) {
    error = diags.take();
    return std::nullopt;
  }
  applyDefaults(cfg);
  if (!validate(cfg, &tree, diags)) {
    error = diags.take();
    return std::nullopt;
  }
  return cfg;
}

std::optional<TrainConfig> loadConfigFile(const std::string &path, std::string &error) {
  std::string text;
  if (!readFile(path, text, error))
    return std::nullopt;
  return parseConfigText(text, path, error);
}

bool mergeConfigText(TrainConfig &cfg, const std::string &text,
                     const std::string &displayPath, std::string &error, Base base) {
  SourceText source(text);
  Diagnostics diags(displayPath.empty() ? "<config>" : displayPath, &source);
  TrainConfig top;
  ParseInfoTree tree;
  if (!parseRaw(text, source, diags, top, tree)) {
    error = diags.take();
    return false;
  }
  TrainConfig merged = cfg;
  overlay(merged, top);
  applyDefaults(merged);
  if (base == Base::CompiledIn)
    checkCompiledFields(cfg, merged, &tree, diags);
  if (!validate(merged, &tree, diags)) {
    error = diags.take();
    return false;
  }
  cfg = std::move(merged);
  return true;
}

bool mergeConfigFile(TrainConfig &cfg, const std::string &path, std::string &error,
                     Base base) {
  std::string text;
  if (!readFile(path, text, error))
    return false;
  return mergeConfigText(cfg, text, path, error, base);
}

bool validateConfig(const TrainConfig &cfg, std::string &error) {
  Diagnostics diags("", nullptr);
  if (validate(cfg, nullptr, diags))
    return true;
  error = diags.take();
  return false;
}

bool applyOverride(TrainConfig &cfg, const std::string &dottedField,
                   const std::string &value, std::string &error, Base base) {
  Diagnostics diags("--set " + trim(dottedField) + "=" + trim(value), nullptr);
  TrainConfig updated = cfg;
  std::string why;
  if (!setField(updated, dottedField, value, why)) {
    diags.error(-1, -1, why);
    error = diags.take();
    return false;
  }
  applyDefaults(updated);
  if (base == Base::CompiledIn)
    checkCompiledFields(cfg, updated, nullptr, diags);
  if (!validate(updated, nullptr, diags)) {
    error = diags.take();
    return false;
  }
  cfg = std::move(updated);
  return true;
}

bool applyOverride(TrainConfig &cfg, const std::string &assignment, std::string &error,
                   Base base) {
  std::string field, value;
  if (!splitAssignment(assignment, field, value, error))
    return false;
  return applyOverride(cfg, field, value, error, base);
}

bool applyOverrides(TrainConfig &cfg, const std::vector<std::string> &assignments,
                    std::string &error, Base base) {
  TrainConfig updated = cfg;
  for (const std::string &assignment : assignments) {
    std::string field, value, why;
    if (!splitAssignment(assignment, field, value, error))
      return false;
    Diagnostics diags("--set " + field + "=" + trim(value), nullptr);
    if (!setField(updated, field, value, why))
      diags.error(-1, -1, why);
    else if (base == Base::CompiledIn) // here, so the message names the --set
      checkCompiledFields(cfg, updated, nullptr, diags);
    if (!diags.empty()) {
      error = diags.take();
      return false;
    }
  }
  applyDefaults(updated);
  if (!validateConfig(updated, error))
    return false;
  cfg = std::move(updated);
  return true;
}

int64_t accumulationSteps(const TrainConfig &cfg, int64_t worldSize, std::string &error) {
  int64_t global = cfg.batch().global();
  int64_t micro = cfg.batch().has_micro() ? cfg.batch().micro() : global;
  if (worldSize < 1) {
    error = "the world size (" + formatInt(worldSize) + ") must be at least 1";
    return -1;
  }
  if (global <= 0 || micro <= 0) {
    error = "batch.global (" + formatInt(global) + ") and batch.micro (" +
            formatInt(micro) + ") must be positive";
    return -1;
  }
  if (global % micro == 0 && (global / micro) % worldSize == 0)
    return global / micro / worldSize;

  std::string product;
  int64_t p;
  if (!__builtin_mul_overflow(micro, worldSize, &p))
    product = " = " + formatInt(p);
  error = "batch.global (" + formatInt(global) +
          ") is not divisible by batch.micro (" + formatInt(micro) +
          ") x world size (" + formatInt(worldSize) + ")" + product +
          "; accumulation steps = global / (micro x world size) must be a whole number";
  if (global % worldSize != 0) {
    error += "; " + formatInt(global) + " samples cannot be split evenly over " +
             formatInt(worldSize) + " ranks";
    if (global % micro == 0)
      error += " (with batch.micro " + formatInt(micro) +
               ", use a world size that divides " + formatInt(global / micro) + ")";
    return -1;
  }
  int64_t perRank = global / worldSize;
  error += "; each rank takes " + formatInt(perRank) + " samples per step";
  std::vector<int64_t> near = divisorsAround(perRank, micro);
  if (!near.empty())
    error += ", which batch.micro must divide (e.g. " + orList(near) + ")";
  return -1;
}

std::string resolveModelPath(const TrainConfig &cfg, const std::string &configPath) {
  namespace fs = std::filesystem;
  if (cfg.model().empty())
    return "";
  fs::path model(cfg.model());
  if (model.is_absolute())
    return model.string();
  fs::path dir = fs::path(configPath).parent_path();
  if (dir.empty())
    return model.lexically_normal().string();
  return (dir / model).lexically_normal().string();
}

} // namespace sinter::config
