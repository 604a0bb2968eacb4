//===- Options.h - sinterc's command-line options ---------------*- C++ -*-===//
//
// The options the driver's files read, and what they resolve to. Private to
// sinterc.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TOOLS_SINTERC_OPTIONS_H
#define SINTER_TOOLS_SINTERC_OPTIONS_H

#include "frontend/Sema.h"
#include "runtime/config/ConfigLoader.h"

#include "llvm/Support/CommandLine.h"

#include <optional>
#include <string>

namespace sinterc {

enum class Emit { Ast, Graph, Train, Linalg, Gpu, Ptx, LLVMDialect, LLVM, Obj, Exe };

extern llvm::cl::opt<std::string> inputFile;
extern llvm::cl::opt<std::string> modelName;
extern llvm::cl::opt<std::string> configFile;
extern llvm::cl::list<std::string> settings;
extern llvm::cl::opt<Emit> emitStage;
extern llvm::cl::opt<bool> listParams;
extern llvm::cl::opt<bool> reportMemoryOpt;
extern llvm::cl::opt<int> worldOpt;
extern llvm::cl::opt<std::string> deviceMemoryOpt;
extern llvm::cl::opt<bool> cudaOnHost;
extern llvm::cl::opt<std::string> cudaArch;
extern llvm::cl::opt<std::string> outputFile;
extern llvm::cl::opt<bool> timePhases;
extern llvm::cl::opt<unsigned> jobs;

/// Parses the command line, fills in the defaults that depend on other
/// options and checks their combination. False, with the error printed, if
/// they do not go together.
bool parseOptions(int argc, char **argv);
/// Appends the -D bindings to `options`. False, with the error printed, if
/// one is not NAME=VALUE.
bool addDefines(sinter::SemaOptions &options);
/// The micro-batch the steps are compiled for: B as -D binds it (the last
/// binding wins), else batch.micro.
int64_t boundMicroBatch(const sinter::config::TrainConfig &config);

/// The standard library's folder: --stdlib, $SINTER_STDLIB, else the
/// built-in one.
std::string standardLibrary();
/// The CUDA toolkit whose ptxas and fatbinary build the kernels: $CUDA_HOME,
/// else the one the build found.
std::string cudaToolkit();
/// The response file that links a program for `cuda` (its step on the host
/// with --cuda-on-host) or the CPU.
std::string linkFileFor(bool cuda);
/// Whether the steps are compiled for CUDA: --cuda-on-host or --target, else
/// the config.
bool compilesForCuda(const std::optional<sinter::config::TrainConfig> &config);
/// What a CUDA compile up to `stage` needs that this machine may lack: for a
/// program, the runtime built with CUDA; for the kernels' binary, the
/// toolkit's ptxas and fatbinary (PTX itself needs neither). An error, or "".
std::string missingForCuda(Emit stage);

} // namespace sinterc

#endif // SINTER_TOOLS_SINTERC_OPTIONS_H
