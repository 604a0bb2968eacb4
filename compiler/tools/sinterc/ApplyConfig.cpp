//===- ApplyConfig.cpp - The training config in the compile ---------------===//
//
// What a config (--config, with its --set overrides) does to the compile:
// its consts and shapes become -D bindings, what it fixes at compile time
// (device, optimizer, strategy, precision, ...) becomes attributes of the
// module, and a setting that changes what a step computes is warned about.
//
//===----------------------------------------------------------------------===//

#include "compiler/tools/sinterc/Driver.h"
#include "compiler/tools/sinterc/Options.h"

#include "dialects/Sinter/IR/SinterAttrs.h"
#include "frontend/MLIRGen.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "google/protobuf/text_format.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <iostream>
#include <map>

namespace sinterc {
namespace {

/// Turns the config into -D style bindings: `set` consts, `shapes` symbols and
/// B from batch.micro. Command-line -D values come after, so they win.
void bindConfig(const sinter::config::TrainConfig &cfg,
                sinter::SemaOptions &options) {
  std::map<std::string, std::string> set(cfg.set().begin(), cfg.set().end());
  for (const auto &[k, v] : set)
    options.defines.push_back({k, v});
  std::map<std::string, int64_t> shapes(cfg.shapes().begin(), cfg.shapes().end());
  for (const auto &[k, v] : shapes)
    options.defines.push_back({k, std::to_string(v)});
  options.defines.push_back({"B", std::to_string(cfg.batch().micro())});
}

/// Whether `scope` names the repeat block `block`: its scope path, or that
/// path with the `_N` that tells apart repeats of one scope whose
/// iterations differ.
bool scopeNamesBlock(llvm::StringRef scope, llvm::StringRef block) {
  if (!block.consume_front(scope))
    return false;
  return block.empty() ||
         (block.consume_front("_") && !block.empty() &&
          llvm::all_of(block, [](char c) { return llvm::isDigit(c); }));
}

/// Marks the train step's repeat blocks that recompute.mode applies to
/// (`sinter.recompute`, which graph-autodiff reads). A scope that names no
/// block, or a mode with no block to apply to, is an error.
bool markRecomputedBlocks(mlir::ModuleOp module,
                          const sinter::config::TrainConfig &cfg,
                          const sinter::ModelGraph &train) {
  using Recompute = sinter::config::TrainConfig::Recompute;
  const Recompute &recompute = cfg.recompute();
  if (recompute.mode() == Recompute::NONE)
    return true;
  std::string mode = Recompute::Mode_Name(recompute.mode());
  std::string known;
  for (const sinter::BlockGraph &block : train.blocks)
    known += (known.empty() ? "" : ", ") + ("\"" + block.name + "\"");
  auto fail = [&](const std::string &message) {
    std::cerr << configFile.getValue() << ": error: " << message << "\n";
    return false;
  };
  if (train.blocks.empty())
    return fail("recompute.mode " + mode + " recomputes repeat blocks, but model '" +
                train.name +
                "' has none compiled once (a `repeat` whose iterations are the "
                "same layer); set recompute.mode NONE");
  for (int i = 0; i < recompute.scopes_size(); ++i)
    if (llvm::none_of(train.blocks, [&](const sinter::BlockGraph &block) {
          return scopeNamesBlock(recompute.scopes(i), block.name);
        }))
      return fail("recompute.scopes[" + std::to_string(i) + "] \"" +
                  recompute.scopes(i) + "\" names no repeat block of model '" +
                  train.name + "'; its blocks are " + known);
  auto value = mlir::StringAttr::get(module.getContext(), llvm::StringRef(mode).lower());
  for (const sinter::BlockGraph &block : train.blocks) {
    bool asked = recompute.scopes().empty() ||
                 llvm::any_of(recompute.scopes(), [&](const std::string &scope) {
                   return scopeNamesBlock(scope, block.name);
                 });
    auto function =
        module.lookupSymbol<mlir::func::FuncOp>(train.name + "." + block.name);
    if (asked && function)
      sinter::attrs::recompute.set(function, value);
  }
  return true;
}

} // namespace

bool loadConfig(std::optional<sinter::config::TrainConfig> &config,
                sinter::SemaOptions &options, std::string &path,
                std::string &model) {
  if (configFile.empty() && !settings.empty()) {
    std::cerr << "sinterc: --set needs a config (--config FILE)\n";
    return false;
  }
  if (!configFile.empty()) {
    std::string error;
    std::optional<sinter::config::TrainConfig> cfg =
        sinter::config::loadConfigFile(configFile, error);
    if (!cfg || !sinter::config::applyOverrides(*cfg, settings, error,
                                        sinter::config::Base::Compiling)) {
      std::cerr << error << "\n";
      return false;
    }
    bindConfig(*cfg, options);
    config = *cfg;
    if (path.empty())
      path = sinter::config::resolveModelPath(*cfg, configFile);
    if (model.empty())
      model = cfg->model_name();
  }
  return true;
}

void warnLocalBatchNorm(const sinter::config::TrainConfig &cfg,
                        const sinter::ModelGraph &train,
                        sinter::DiagnosticEngine &diags) {
  using Parallel = sinter::config::TrainConfig::Parallel;
  if (cfg.parallel().batch_norm() != Parallel::LOCAL ||
      cfg.batch().global() == cfg.batch().micro())
    return;
  // A block's batch-norms count once per call.
  std::map<std::string, const sinter::BlockGraph *> blocks;
  for (const sinter::BlockGraph &block : train.blocks)
    blocks[block.name] = &block;
  int layers = 0;
  const sinter::Node *first = nullptr;
  auto count = [&](const sinter::Node &node) {
    if (node.op == "batch_norm_stats" && layers++ == 0)
      first = &node;
  };
  for (const sinter::Node &node : train.nodes) {
    count(node);
    if (node.op == "call")
      for (const sinter::Node &inner :
           blocks.at(std::get<std::string>(node.attrs[0].second))->nodes)
        count(inner);
  }
  if (!first)
    return;
  std::string micro = std::to_string(cfg.batch().micro());
  diags.warning(
      first->where.back(),
      "batch_norm in LOCAL mode normalizes each micro-batch of " + micro +
          " samples with its own statistics, but a step covers " +
          std::to_string(cfg.batch().global()) +
          " (batch.global): with several micro-batches or ranks the step is "
          "not the step over the global batch, and running statistics move "
          "to the mean of the micro-batches' statistics (DOMAIN.md 4). Set "
          "parallel { batch_norm: SYNC } to share statistics across ranks, or "
          "batch.micro to batch.global (" +
          std::to_string(layers) + " batch-norm layer" +
          (layers == 1 ? "" : "s") + ")");
}

mlir::OwningOpRef<mlir::ModuleOp>
generateSteps(mlir::MLIRContext &context,
              const std::vector<sinter::ModelGraph> &phases,
              const sinter::SourceManager &sources,
              const std::optional<sinter::config::TrainConfig> &config) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      sinter::generateModule(context, phases, sources);
  if (!module)
    return module;
  sinter::attrs::device.set(
      *module, mlir::StringAttr::get(&context, compilesForCuda(config) ? "cuda" : "cpu"));
  if (!config)
    return module;
  // The program trains with this config unless told otherwise at run time;
  // its relative paths stay relative to the config's folder.
  std::string text;
  google::protobuf::TextFormat::PrintToString(*config, &text);
  llvm::SmallString<256> dir(configFile.getValue());
  llvm::sys::fs::make_absolute(dir);
  llvm::sys::path::remove_filename(dir);
  sinter::attrs::config.set(*module, mlir::StringAttr::get(&context, text));
  sinter::attrs::configDir.set(*module, mlir::StringAttr::get(&context, dir.str()));
  if (config->parallel().batch_norm() ==
      sinter::config::TrainConfig::Parallel::SYNC)
    sinter::attrs::syncBatchNorm.set(*module, mlir::UnitAttr::get(&context));
  // The update compiled into the train step; its scalars stay the runtime's.
  const auto &optimizer = config->optimizer();
  const char *update = !optimizer.has_sgd() ? "adamw"
                       : optimizer.sgd().momentum() > 0 ? "sgd_momentum"
                                                        : "sgd";
  sinter::attrs::optimizer.set(*module, mlir::StringAttr::get(&context, update));
  // A sharded strategy's shard sizes are compiled in for its world size.
  const auto &parallel = config->parallel();
  sinter::attrs::strategy.set(
      *module, mlir::StringAttr::get(
                   &context, sinter::config::TrainConfig::Parallel::Strategy_Name(
                                 parallel.strategy())));
  sinter::attrs::microBatch.set(
      *module, mlir::IntegerAttr::get(mlir::IntegerType::get(&context, 64),
                                      boundMicroBatch(*config)));
  if (parallel.world_size() > 0)
    sinter::attrs::worldSize.set(
        *module, mlir::IntegerAttr::get(mlir::IntegerType::get(&context, 64),
                                        parallel.world_size()));
  if (config->precision().compute() == sinter::config::TrainConfig::Precision::BF16)
    sinter::attrs::compute.set(*module, mlir::StringAttr::get(&context, "bf16"));
  if (config->precision().activations() == sinter::config::TrainConfig::Precision::BF16)
    sinter::attrs::activations.set(*module, mlir::StringAttr::get(&context, "bf16"));
  if (config->precision().residual() == sinter::config::TrainConfig::Precision::BF16)
    sinter::attrs::residual.set(*module, mlir::StringAttr::get(&context, "bf16"));
  sinter::attrs::bucketCapMb.set(
      *module, mlir::FloatAttr::get(mlir::Float64Type::get(&context),
                                    config->parallel().bucket_cap_mb()));
  if (!parallel.overlap())
    sinter::attrs::noOverlap.set(*module, mlir::UnitAttr::get(&context));
  if (phases.front().training &&
      !markRecomputedBlocks(*module, *config, phases.front()))
    return nullptr;
  return module;
}

} // namespace sinterc
