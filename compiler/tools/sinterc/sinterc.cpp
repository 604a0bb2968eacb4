//===- sinterc.cpp - The Sinter compiler driver ---------------------------===//
//
// sinterc FILE.sn [--model NAME] [--config CFG.pbtxt] [-D NAME=VALUE]...
//         [--emit=STAGE] [--target cpu|cuda] [--list-params] [-o OUT]
//
//===----------------------------------------------------------------------===//

#include "compiler/InitAll.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Target/Host/ObjectEmitter.h"
#include "compiler/Target/Host/ParallelCodegen.h"
#include "compiler/Target/Host/StepPlan.h"
#include "compiler/tools/sinterc/ListParams.h"
#include "compiler/tools/sinterc/MemoryReport.h"
#include "dialects/Sinter/IR/SinterAttrs.h"
#include "frontend/MLIRDiagnostics.h"
#include "frontend/MLIRGen.h"
#include "frontend/Sema.h"
#include "runtime/config/ConfigLoader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "google/protobuf/text_format.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <map>
#include <iostream>
#include <sstream>

namespace cl = llvm::cl;

static cl::OptionCategory category("sinterc options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<file.sn>"),
                                      cl::init(""), cl::cat(category));
static cl::opt<std::string> modelName("model",
                                      cl::desc("The model to compile, when the "
                                               "file holds several"),
                                      cl::value_desc("name"), cl::cat(category));
static cl::opt<std::string> configFile("config",
                                       cl::desc("Training config (protobuf "
                                                "text format)"),
                                       cl::value_desc("file.pbtxt"),
                                       cl::cat(category));
static cl::list<std::string>
    settings("set",
             cl::desc("Set one config field, as a program's --set does "
                      "(--set optimizer.adamw.lr=1e-3)"),
             cl::value_desc("FIELD=VALUE"), cl::cat(category));
static cl::list<std::string>
    defines("D", cl::Prefix,
            cl::desc("Override a const or bind a shape symbol (B, T, ...)"),
            cl::value_desc("NAME=VALUE"), cl::cat(category));

enum class Emit { Ast, Graph, Train, Linalg, Gpu, Ptx, LLVMDialect, LLVM, Obj, Exe };
static cl::opt<Emit> emitStage(
    "emit", cl::desc("Stop after this stage and print it"), cl::init(Emit::Graph),
    cl::values(
        clEnumValN(Emit::Ast, "ast", "the syntax tree"),
        clEnumValN(Emit::Graph, "graph", "the graph dialect (train and eval)"),
        clEnumValN(Emit::Train, "train",
                   "the steps after autodiff, with the train step's "
                   "micro-batch loop"),
        clEnumValN(Emit::Linalg, "linalg",
                   "the steps as fused linalg on tensors"),
        clEnumValN(Emit::Gpu, "gpu",
                   "CUDA: the steps' kernels in the gpu dialect, and their "
                   "host code"),
        clEnumValN(Emit::Ptx, "ptx", "CUDA: the PTX of the steps' kernels"),
        clEnumValN(Emit::LLVMDialect, "llvm-dialect",
                   "the steps in the LLVM dialect"),
        clEnumValN(Emit::LLVM, "llvm", "the steps as LLVM IR"),
        clEnumValN(Emit::Obj, "obj", "the steps as an object file"),
        clEnumValN(Emit::Exe, "exe",
                   "a program: the steps linked with the runtime (the default "
                   "with -o FILE)")),
    cl::cat(category));
enum class Target { Config, CPU, CUDA };
static cl::opt<Target> targetDevice(
    "target",
    cl::desc("The device to compile for (default: the config's `device`, "
             "else cpu)"),
    cl::init(Target::Config),
    cl::values(clEnumValN(Target::CPU, "cpu", "the CPU: LLVM and oneDNN"),
               clEnumValN(Target::CUDA, "cuda",
                          "NVIDIA GPUs: kernels for sm_90 with PTX, cuBLASLt "
                          "and cuDNN")),
    cl::cat(category));
static cl::opt<bool> listParams("list-params",
                                cl::desc("Print every param and state with its "
                                         "shape, and the trainable total"),
                                cl::cat(category));
static cl::opt<bool> reportMemoryOpt(
    "report-memory",
    cl::desc("Print each rank's memory for every parallel.strategy, from the "
             "compiled plans (needs --config)"),
    cl::cat(category));
static cl::opt<int> worldOpt(
    "world",
    cl::desc("With --report-memory: the number of ranks (default: the "
             "config's parallel.world_size, else 1)"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::opt<std::string> deviceMemoryOpt(
    "device-memory",
    cl::desc("With --report-memory: each device's memory, e.g. 24GiB; the "
             "report says whether each strategy fits"),
    cl::value_desc("size"), cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(category));
static cl::opt<bool> timePhases(
    "timing",
    cl::desc("Print where the compile time goes: the frontend, each pass, "
             "LLVM's code generation and the link"),
    cl::cat(category));
static cl::opt<unsigned> jobs(
    "j",
    cl::desc("Threads that optimise and generate the program's code "
             "(default: one per core)"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::opt<std::string> stdlibDir("stdlib",
                                      cl::desc("Folder of the standard library "
                                               "(default: $SINTER_STDLIB or the "
                                               "built-in one)"),
                                      cl::value_desc("dir"), cl::cat(category));

namespace {

/// Where libsinter_rt, the stock main and the link file that lists them
/// live: $SINTER_RUNTIME_LIB, else the build tree the compiler came from.
std::string runtimeLibraryDir() {
  if (const char *env = std::getenv("SINTER_RUNTIME_LIB"))
    return env;
  return SINTER_RUNTIME_LIB_DIR;
}

std::string standardLibrary() {
  if (!stdlibDir.empty())
    return stdlibDir;
  if (const char *env = std::getenv("SINTER_STDLIB"))
    return env;
  return SINTER_STDLIB_DIR;
}

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

/// The CUDA toolkit whose ptxas and fatbinary build the kernels: $CUDA_HOME,
/// else the one the build found.
std::string cudaToolkit() {
  if (const char *env = std::getenv("CUDA_HOME"))
    return env;
  return SINTER_CUDA_TOOLKIT_DIR;
}

/// The response file that links a program for `cuda` or the CPU.
std::string linkFileFor(bool cuda) {
  return runtimeLibraryDir() + "/" +
         (cuda ? SINTER_PROGRAM_CUDA_LINK_FILE : SINTER_PROGRAM_LINK_FILE);
}

/// Whether the steps are compiled for CUDA: --target, else the config.
bool compilesForCuda(const std::optional<sinter::config::TrainConfig> &config) {
  if (targetDevice != Target::Config)
    return targetDevice == Target::CUDA;
  return config && config->device() == sinter::config::TrainConfig::CUDA;
}

/// What a CUDA compile up to `stage` needs that this machine may lack: for a
/// program, the runtime built with CUDA; for the kernels' binary, the
/// toolkit's ptxas and fatbinary (PTX itself needs neither). An error, or "".
std::string missingForCuda(Emit stage) {
  if (stage == Emit::Exe && !llvm::sys::fs::exists(linkFileFor(true)))
    return "device CUDA needs a Sinter built with the CUDA toolkit (cuBLAS, "
           "cuDNN and NCCL); this one found none when it was built, so it "
           "compiles for the CPU only (device: CPU)";
  for (const char *tool : {"ptxas", "fatbinary"}) {
    std::string path = cudaToolkit() + "/bin/" + tool;
    if (!llvm::sys::fs::can_execute(path))
      return std::string("device CUDA needs the CUDA toolkit's ") + tool +
             ", not found at " + path + "; set CUDA_HOME to the toolkit";
  }
  return "";
}

/// DOMAIN.md 4: batch-norm normalizes with the statistics of what one rank
/// sees in one micro-batch. Unless that is the global batch, the step is not
/// the step over the global batch, and the user should know.
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

/// The CUDA target's options: sm_90 kernels and PTX from this toolkit.
sinter::CUDAOptions cudaOptions(llvm::StringRef format) {
  sinter::CUDAOptions options;
  options.toolkitPath = cudaToolkit();
  options.format = format.str();
  return options;
}

/// --emit=ptx: the kernels' PTX, each module's text.
int printPtx(mlir::ModuleOp module, mlir::MLIRContext &context,
             llvm::ToolOutputFile *output, mlir::TimingScope &timing) {
  mlir::PassManager pm(&context);
  mlir::TimingScope passes = timing.nest("Passes (linalg to PTX)");
  pm.enableTiming(passes);
  sinter::buildLinalgToGPUPipeline(pm);
  sinter::buildGPUKernelsPipeline(pm, cudaOptions("isa"));
  if (mlir::failed(pm.run(module)))
    return 1;
  for (auto binary : module.getOps<mlir::gpu::BinaryOp>())
    for (mlir::Attribute object : binary.getObjects())
      output->os() << mlir::cast<mlir::gpu::ObjectAttr>(object).getObject().getValue();
  output->keep();
  return 0;
}

/// Runs the code generation pipelines from linalg up to --emit and writes
/// the result.
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
    mlir::PassManager pm(&context);
    mlir::TimingScope passes = timing.nest("Passes (linalg to LLVM)");
    pm.enableTiming(passes);
    if (emitStage == Emit::Gpu)
      sinter::buildLinalgToGPUPipeline(pm);
    else if (cuda)
      sinter::buildLinalgToCUDAPipeline(pm, cudaOptions("fatbin"));
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

/// The graph-dialect module of `phases`, with what the config compiles in.
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
  if (parallel.world_size() > 0)
    sinter::attrs::worldSize.set(
        *module, mlir::IntegerAttr::get(mlir::IntegerType::get(&context, 64),
                                        parallel.world_size()));
  if (config->precision().compute() == sinter::config::TrainConfig::Precision::BF16)
    sinter::attrs::compute.set(*module, mlir::StringAttr::get(&context, "bf16"));
  sinter::attrs::bucketCapMb.set(
      *module, mlir::FloatAttr::get(mlir::Float64Type::get(&context),
                                    config->parallel().bucket_cap_mb()));
  if (!parallel.overlap())
    sinter::attrs::noOverlap.set(*module, mlir::UnitAttr::get(&context));
  return module;
}

/// Adds the passes that build the steps after the loss: up to the
/// micro-batch loop for --emit=train, to fused linalg otherwise.
void addStepPasses(mlir::PassManager &pm) {
  sinter::buildStepPipeline(pm);
  if (emitStage != Emit::Train)
    sinter::buildTrainToLinalgPipeline(pm);
}

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
           mlir::TimingScope &timing) {
  mlir::TimingScope generation = timing.nest("MLIR generation (graph dialect)");
  mlir::OwningOpRef<mlir::ModuleOp> module =
      generateSteps(context, phases, sources, config);
  generation.stop();
  if (!module || emitStage == Emit::Graph)
    return module;
  mlir::TimingScope passes = timing.nest("Passes (graph to linalg)");
  mlir::PassManager loss(&context);
  loss.enableTiming(passes);
  sinter::buildLossPipeline(loss);
  if (mlir::failed(loss.run(*module)))
    return nullptr;
  // The steps' diagnostics are held, formatted at the user's source, until
  // it is known whether they are errors or the reason for an eval-only
  // program.
  std::ostringstream held;
  bool built;
  {
    sinter::DiagnosticEngine holding(sources);
    holding.setStream(held);
    sinter::SourceDiagnosticHandler handler(context, holding, sources);
    mlir::PassManager pm(&context);
    pm.enableTiming(passes);
    addStepPasses(pm);
    built = mlir::succeeded(pm.run(*module));
  }
  if (built || phases.size() < 2 || !phases.front().training) {
    std::cerr << held.str();
    return built ? std::move(module) : nullptr;
  }
  std::string trainModel = phases.front().name;
  phases.erase(phases.begin());
  mlir::OwningOpRef<mlir::ModuleOp> eval =
      generateSteps(context, phases, sources, config);
  if (!eval)
    return nullptr;
  mlir::PassManager pm(&context);
  pm.enableTiming(passes);
  sinter::buildLossPipeline(pm);
  addStepPasses(pm);
  if (mlir::failed(pm.run(*eval)))
    return nullptr;
  std::cerr << "sinterc: warning: no training step for model '" << trainModel
            << "'; the program will only evaluate, because:\n"
            << held.str();
  return eval;
}

/// --report-memory: the train step compiled once per strategy for `world`
/// ranks, up to its memory plan, and the plans' table.
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
  return 0;
}

int run() {
  // Reported on stderr when run returns (--timing).
  mlir::DefaultTimingManager timingManager;
  timingManager.setEnabled(timePhases);
  timingManager.setDisplayMode(mlir::DefaultTimingManager::DisplayMode::Tree);
  mlir::TimingScope timing = timingManager.getRootScope();
  mlir::TimingScope frontend = timing.nest("Frontend (parse, elaborate)");
  sinter::SourceManager sources;
  sinter::DiagnosticEngine diags(sources);
  sinter::SemaOptions options;
  options.stdlibDir = standardLibrary();

  std::string path = inputFile;
  std::string model = modelName;
  std::optional<sinter::config::TrainConfig> config;
  if (configFile.empty() && !settings.empty()) {
    std::cerr << "sinterc: --set needs a config (--config FILE)\n";
    return 1;
  }
  if (!configFile.empty()) {
    std::string error;
    std::optional<sinter::config::TrainConfig> cfg =
        sinter::config::loadConfigFile(configFile, error);
    if (!cfg || !sinter::config::applyOverrides(*cfg, settings, error,
                                        sinter::config::Base::Compiling)) {
      std::cerr << error << "\n";
      return 1;
    }
    bindConfig(*cfg, options);
    config = *cfg;
    if (path.empty())
      path = sinter::config::resolveModelPath(*cfg, configFile);
    if (model.empty())
      model = cfg->model_name();
  }
  if (compilesForCuda(config) && emitStage > Emit::Ptx && !listParams) {
    std::string missing = missingForCuda(emitStage);
    if (!missing.empty()) {
      std::cerr << "sinterc: error: " << missing << "\n";
      return 1;
    }
  }
  if (path.empty()) {
    std::cerr << "sinterc: error: no input file; give FILE.sn or --config "
                 "with a 'model' field\n";
    return 1;
  }
  for (const std::string &d : defines) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "sinterc: error: -D" << d << ": expected NAME=VALUE\n";
      return 1;
    }
    options.defines.push_back({d.substr(0, eq), d.substr(eq + 1)});
  }

  sinter::SourceSet files(sources, diags);
  if (!files.load(path, options.stdlibDir))
    return 1;

  // A program is written by the linker; every other stage through `output`.
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output;
  if (emitStage != Emit::Exe || listParams || reportMemoryOpt) {
    output = mlir::openOutputFile(outputFile, &errorMessage);
    if (!output) {
      std::cerr << "sinterc: error: " << errorMessage << "\n";
      return 1;
    }
  }

  if (emitStage == Emit::Ast && !listParams) {
    std::ostringstream os;
    sinter::ast::dump(*files.mainFile(), sources, os);
    output->os() << os.str();
    output->keep();
    return 0;
  }

  std::vector<sinter::ModelGraph> phases;
  for (bool training : {true, false}) {
    std::optional<sinter::ModelGraph> graph =
        sinter::elaborate(files, model, training, options, diags);
    if (!graph)
      return 1;
    phases.push_back(std::move(*graph));
  }

  if (listParams) {
    std::ostringstream os;
    sinter::printParamTable(phases.front(), os);
    output->os() << os.str();
    output->keep();
    return 0;
  }

  frontend.stop();
  mlir::DialectRegistry registry;
  sinter::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Errors point at the user's source; the op's IR would only be noise.
  context.printOpOnDiagnostic(false);
  sinter::SourceDiagnosticHandler handler(context, diags, sources);
  if (config)
    warnLocalBatchNorm(*config, phases.front(), diags);
  if (reportMemoryOpt) {
    if (!config) {
      std::cerr << "sinterc: error: --report-memory needs a config (--config FILE)\n";
      return 1;
    }
    int rc = reportMemory(context, phases, sources, *config, timing, output->os());
    if (rc == 0)
      output->keep();
    return rc;
  }
  mlir::OwningOpRef<mlir::ModuleOp> module =
      buildSteps(context, phases, sources, config, timing);
  if (!module)
    return 1;
  if (emitStage == Emit::Graph) {
    module->print(output->os());
    output->keep();
    return 0;
  }
  return lower(*module, context, compilesForCuda(config), output.get(), timing);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "Sinter compiler\n");
  // With -o FILE and no --emit, build the program.
  if (emitStage.getNumOccurrences() == 0 && outputFile != "-" && !listParams &&
      !reportMemoryOpt)
    emitStage = Emit::Exe;
  // The report builds the steps to linalg, then plans their memory.
  if (reportMemoryOpt)
    emitStage = Emit::Linalg;
  if (!reportMemoryOpt &&
      (worldOpt.getNumOccurrences() || deviceMemoryOpt.getNumOccurrences())) {
    std::cerr << "sinterc: error: --world and --device-memory go with "
                 "--report-memory; a program's ranks are parallel.world_size "
                 "(--set parallel.world_size=N)\n";
    return 1;
  }
  return run();
}
