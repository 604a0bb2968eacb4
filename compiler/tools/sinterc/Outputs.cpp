//===- Outputs.cpp - What sinterc writes ----------------------------------===//
//
// The steps lowered from linalg to --emit's stage and written: IR as text,
// the kernels' PTX, an object file, or a program linked with the runtime;
// and --report-memory's table of each strategy's memory.
//
//===----------------------------------------------------------------------===//

#include "compiler/tools/sinterc/Driver.h"
#include "compiler/tools/sinterc/MemoryReport.h"
#include "compiler/tools/sinterc/Options.h"

#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Target/Host/ObjectEmitter.h"
#include "compiler/Target/Host/ParallelCodegen.h"
#include "compiler/Target/Host/StepPlan.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <iostream>
#include <optional>
#include <sstream>

namespace sinterc {
namespace {

/// Links the compiled steps with the runtime and its stock main into the
/// program named by -o.
int linkProgram(llvm::Module &llvmModule, bool cuda, mlir::TimingScope &timing) {
  if (outputFile == "-") {
    std::cerr << "sinterc: error: a program needs a file name: use -o FILE\n";
    return 1;
  }
  unsigned threads = jobs ? unsigned(jobs) : llvm::get_physical_cores();
  if (threads == 0 || threads > llvm::hardware_concurrency().compute_thread_count())
    threads = llvm::hardware_concurrency().compute_thread_count();
  mlir::TimingScope codegen = timing.nest(
      "LLVM optimization (-O3) and code generation, " +
      std::to_string(threads) + " thread" + (threads == 1 ? "" : "s"));
  llvm::Expected<std::vector<std::string>> objects =
      sinter::host::compileInParallel(llvmModule, threads);
  codegen.stop();
  if (!objects) {
    std::cerr << "sinterc: error: " << llvm::toString(objects.takeError())
              << "\n";
    return 1;
  }
  std::vector<std::unique_ptr<llvm::FileRemover>> removers;
  for (const std::string &object : *objects)
    removers.push_back(std::make_unique<llvm::FileRemover>(object));
  llvm::ErrorOr<std::string> linker = llvm::sys::findProgramByName("c++");
  if (!linker) {
    std::cerr << "sinterc: error: no C++ linker driver (c++) on PATH\n";
    return 1;
  }
  // The libraries come from the build that made the runtime (a response
  // file it writes next to them).
  std::string linkFile = linkFileFor(cuda);
  if (!llvm::sys::fs::exists(linkFile)) {
    std::cerr << "sinterc: error: " << linkFile
              << " is missing: build the runtime (or point SINTER_RUNTIME_LIB "
                 "at the folder of its libraries)\n";
    return 1;
  }
  // The generated parallel loops run on libomp; listed before oneDNN's
  // libgomp, it answers their GOMP_* calls too: one thread pool.
  std::vector<std::string> args = {*linker};
  args.insert(args.end(), objects->begin(), objects->end());
  for (std::string arg : {std::string("-o"), outputFile.getValue(),
                          "@" + linkFile, std::string("-L" SINTER_OPENMP_LIB_DIR),
                          std::string("-lomp")})
    args.push_back(arg);
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::string error;
  mlir::TimingScope link = timing.nest("Link");
  int rc = llvm::sys::ExecuteAndWait(*linker, argRefs, std::nullopt, {}, 0, 0,
                                     &error);
  if (rc != 0) {
    std::cerr << "sinterc: error: linking " << outputFile << " failed"
              << (error.empty() ? "" : ": " + error) << "\n";
    return 1;
  }
  return 0;
}

/// The chips of --cuda-arch, each checked; none given: `fallback`.
std::optional<std::vector<std::string>>
cudaChips(const std::vector<std::string> &fallback) {
  if (cudaArch.empty())
    return fallback;
  std::vector<std::string> chips;
  llvm::SmallVector<llvm::StringRef> names;
  llvm::StringRef(cudaArch).split(names, ',');
  for (llvm::StringRef name : names) {
    llvm::StringRef digits = name.trim();
    if (!digits.consume_front("sm_") || digits.empty() ||
        !llvm::all_of(digits, llvm::isDigit)) {
      std::cerr << "sinterc: error: --cuda-arch " << cudaArch.getValue()
                << ": expected chips such as sm_80 or sm_90\n";
      return std::nullopt;
    }
    chips.push_back(name.trim().str());
  }
  // Oldest first: the fatbinary's PTX is the last chip's.
  llvm::sort(chips, [](const std::string &a, const std::string &b) {
    return std::stoi(a.substr(3)) < std::stoi(b.substr(3));
  });
  chips.erase(std::unique(chips.begin(), chips.end()), chips.end());
  return chips;
}

/// The CUDA target's options: kernels for `chips`, and the newest one's
/// PTX, from this toolkit.
sinter::CUDAOptions cudaOptions(llvm::StringRef format, std::vector<std::string> chips) {
  sinter::CUDAOptions options;
  options.toolkitPath = cudaToolkit();
  options.format = format.str();
  options.chips = std::move(chips);
  return options;
}

/// --emit=ptx: the kernels' PTX, each module's text.
int printPtx(mlir::ModuleOp module, mlir::MLIRContext &context,
             llvm::ToolOutputFile *output, mlir::TimingScope &timing) {
  std::optional<std::vector<std::string>> chips = cudaChips({"sm_90"});
  if (!chips)
    return 1;
  if (chips->size() != 1) {
    std::cerr << "sinterc: error: --emit=ptx prints one chip's PTX; --cuda-arch "
              << cudaArch.getValue() << " names " << chips->size() << "\n";
    return 1;
  }
  mlir::PassManager pm(&context);
  mlir::TimingScope passes = timing.nest("Passes (linalg to PTX)");
  pm.enableTiming(passes);
  sinter::buildLinalgToGPUPipeline(pm);
  sinter::buildGPUKernelsPipeline(pm, cudaOptions("isa", *chips));
  if (mlir::failed(pm.run(module)))
    return 1;
  for (auto binary : module.getOps<mlir::gpu::BinaryOp>())
    for (mlir::Attribute object : binary.getObjects())
      output->os() << mlir::cast<mlir::gpu::ObjectAttr>(object).getObject().getValue();
  output->keep();
  return 0;
}

} // namespace

int lower(mlir::ModuleOp module, mlir::MLIRContext &context, bool cuda,
          llvm::ToolOutputFile *output, mlir::TimingScope &timing) {
  if ((emitStage == Emit::Gpu || emitStage == Emit::Ptx) && !cuda) {
    std::cerr << "sinterc: error: --emit=gpu and --emit=ptx are stages of the "
                 "CUDA target: use --target=cuda or the config's device: CUDA\n";
    return 1;
  }
  if (emitStage == Emit::Ptx)
    return printPtx(module, context, output, timing);
  if (emitStage != Emit::Train && emitStage != Emit::Linalg) {
    std::optional<std::vector<std::string>> chips =
        cudaChips(sinter::CUDAOptions().chips);
    if (!chips)
      return 1;
    mlir::PassManager pm(&context);
    mlir::TimingScope passes = timing.nest("Passes (linalg to LLVM)");
    pm.enableTiming(passes);
    if (emitStage == Emit::Gpu)
      sinter::buildLinalgToGPUPipeline(pm);
    else if (cuda && cudaOnHost)
      sinter::buildLinalgToCUDAOnHostPipeline(pm);
    else if (cuda)
      sinter::buildLinalgToCUDAPipeline(pm, cudaOptions("fatbin", *chips));
    else
      sinter::buildLinalgToLLVMPipeline(pm);
    if (mlir::failed(pm.run(module)))
      return 1;
  }
  if (emitStage == Emit::Train || emitStage == Emit::Linalg ||
      emitStage == Emit::Gpu || emitStage == Emit::LLVMDialect) {
    module.print(output->os());
    output->keep();
    return 0;
  }
  llvm::LLVMContext llvmContext;
  mlir::TimingScope translation = timing.nest("Translation to LLVM IR");
  auto llvmModule = sinter::host::translateToLLVMIR(module, llvmContext);
  translation.stop();
  if (!llvmModule) {
    std::cerr << "sinterc: error: " << llvm::toString(llvmModule.takeError())
              << "\n";
    return 1;
  }
  // A program's code is optimised and generated on all cores.
  if (emitStage == Emit::Exe)
    return linkProgram(**llvmModule, cuda, timing);
  mlir::TimingScope optimization = timing.nest("LLVM optimization (-O3)");
  if (llvm::Error err = sinter::host::optimizeLLVMIR(**llvmModule)) {
    std::cerr << "sinterc: error: " << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  optimization.stop();
  if (emitStage == Emit::LLVM) {
    (*llvmModule)->print(output->os(), nullptr);
    output->keep();
    return 0;
  }
  mlir::TimingScope codegen = timing.nest("LLVM code generation (object file)");
  if (llvm::Error err = sinter::host::emitObject(**llvmModule, output->os())) {
    std::cerr << "sinterc: error: " << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  output->keep();
  return 0;
}

int reportMemory(mlir::MLIRContext &context, std::vector<sinter::ModelGraph> &phases,
                 const sinter::SourceManager &sources,
                 const sinter::config::TrainConfig &config,
                 mlir::TimingScope &timing, llvm::raw_ostream &out) {
  using Parallel = sinter::config::TrainConfig::Parallel;
  int64_t world = worldOpt > 0 ? worldOpt
                  : config.parallel().world_size() > 0 ? config.parallel().world_size()
                                                       : 1;
  std::optional<sinter::DeviceMemory> device;
  if (!deviceMemoryOpt.empty()) {
    std::optional<uint64_t> bytes = sinter::parseByteSize(deviceMemoryOpt);
    device = sinter::DeviceMemory{deviceMemoryOpt, bytes.value_or(0)};
    if (!bytes) {
      std::cerr << "sinterc: error: --device-memory " << deviceMemoryOpt
                << ": expected a size such as 24GiB or 80GB\n";
      return 1;
    }
  }
  std::vector<sinter::StrategyPlan> columns;
  for (Parallel::Strategy strategy :
       {Parallel::DDP, Parallel::ZERO1, Parallel::ZERO2, Parallel::FULL_SHARD}) {
    sinter::StrategyPlan column{Parallel::Strategy_Name(strategy), std::nullopt, ""};
    std::optional<sinter::config::TrainConfig> cfg = config;
    cfg->mutable_parallel()->set_strategy(strategy);
    cfg->mutable_parallel()->set_world_size(int32_t(world));
    mlir::OwningOpRef<mlir::ModuleOp> module =
        buildSteps(context, phases, sources, cfg, timing);
    if (!module)
      return 1;
    mlir::PassManager pm(&context);
    sinter::buildLinalgToMemoryPlanPipeline(pm, compilesForCuda(cfg));
    if (mlir::failed(pm.run(*module)))
      return 1;
    for (auto f : module->getOps<mlir::func::FuncOp>())
      if (auto phase = sinter::attrs::phase.get(f); phase && phase == "train")
        column.plan = sinter::host::completePlan(f);
    if (!column.plan) {
      std::cerr << "sinterc: error: --report-memory: the model has no train step\n";
      return 1;
    }
    columns.push_back(column);
  }
  std::ostringstream os;
  sinter::printMemoryReport(columns, world, device, os);
  out << os.str();
  using Recompute = sinter::config::TrainConfig::Recompute;
  const Recompute &recompute = config.recompute();
  if (recompute.mode() != Recompute::NONE) {
    std::string scopes;
    for (const std::string &scope : recompute.scopes())
      scopes += (scopes.empty() ? "" : ", ") + ("\"" + scope + "\"");
    out << "Activations are those left by recompute.mode "
        << Recompute::Mode_Name(recompute.mode()) << " in "
        << (scopes.empty() ? "every repeat block" : "the repeats " + scopes)
        << "; --set recompute.mode=NONE shows them without it.\n";
  }
  return 0;
}

} // namespace sinterc
