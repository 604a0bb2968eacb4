//===- Driver.h - The steps of sinterc's compile ----------------*- C++ -*-===//
//
// What sinterc.cpp's run() calls, each from the file that does it. Private
// to sinterc.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TOOLS_SINTERC_DRIVER_H
#define SINTER_TOOLS_SINTERC_DRIVER_H

#include "frontend/Diagnostics.h"
#include "frontend/Program.h"
#include "frontend/Sema.h"
#include "runtime/config/ConfigLoader.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace sinterc {

//===--- ApplyConfig.cpp --------------------------------------------------===//

/// Loads --config with its --set overrides into `config` and binds its
/// consts and shapes in `options`; a missing input file or model comes from
/// it. True without a config; false, with the error printed, if it cannot
/// be loaded.
bool loadConfig(std::optional<sinter::config::TrainConfig> &config,
                sinter::SemaOptions &options, std::string &path,
                std::string &model);
/// DOMAIN.md 4: batch-norm normalizes with the statistics of what one rank
/// sees in one micro-batch. Unless that is the global batch, the step is not
/// the step over the global batch, and the user should know.
void warnLocalBatchNorm(const sinter::config::TrainConfig &cfg,
                        const sinter::ModelGraph &train,
                        sinter::DiagnosticEngine &diags);
/// The graph-dialect module of `phases`, with what the config compiles in.
mlir::OwningOpRef<mlir::ModuleOp>
generateSteps(mlir::MLIRContext &context,
              const std::vector<sinter::ModelGraph> &phases,
              const sinter::SourceManager &sources,
              const std::optional<sinter::config::TrainConfig> &config);

//===--- Steps.cpp --------------------------------------------------------===//

/// The steps of `phases` (train first, then eval) as linalg functions, or
/// as train-dialect ones for --emit=train. A loss that breaks LANGUAGE.md 9
/// is an error. If only the train step cannot be built (an op without a
/// gradient or a training lowering yet), the reason is shown as a warning at
/// the op, and the program is built for evaluation only. The train step is
/// built once: the eval-only build runs only after a failure.
mlir::OwningOpRef<mlir::ModuleOp>
buildSteps(mlir::MLIRContext &context, std::vector<sinter::ModelGraph> &phases,
           const sinter::SourceManager &sources,
           const std::optional<sinter::config::TrainConfig> &config,
           mlir::TimingScope &timing);

//===--- Outputs.cpp ------------------------------------------------------===//

/// Runs the code generation pipelines from linalg up to --emit and writes
/// the result.
int lower(mlir::ModuleOp module, mlir::MLIRContext &context, bool cuda,
          llvm::ToolOutputFile *output, mlir::TimingScope &timing);
/// --report-memory: the train step compiled once per strategy for `world`
/// ranks, up to its memory plan, and the plans' table.
int reportMemory(mlir::MLIRContext &context, std::vector<sinter::ModelGraph> &phases,
                 const sinter::SourceManager &sources,
                 const sinter::config::TrainConfig &config,
                 mlir::TimingScope &timing, llvm::raw_ostream &out);

} // namespace sinterc

#endif // SINTER_TOOLS_SINTERC_DRIVER_H
