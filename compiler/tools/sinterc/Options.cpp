//===- Options.cpp - sinterc's command-line options -----------------------===//
//
// The options, their defaults and checks, and where the compiler finds what
// it builds with: the standard library, the runtime's libraries and the
// CUDA toolkit (an option, else the environment, else the build's own).
//
//===----------------------------------------------------------------------===//

#include "compiler/tools/sinterc/Options.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"

#include <cstdlib>
#include <iostream>

namespace cl = llvm::cl;

namespace sinterc {

static cl::OptionCategory category("sinterc options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<file.sn>"),
                               cl::init(""), cl::cat(category));
cl::opt<std::string> modelName("model",
                               cl::desc("The model to compile, when the "
                                        "file holds several"),
                               cl::value_desc("name"), cl::cat(category));
cl::opt<std::string> configFile("config",
                                cl::desc("Training config (protobuf "
                                         "text format)"),
                                cl::value_desc("file.pbtxt"),
                                cl::cat(category));
cl::list<std::string>
    settings("set",
             cl::desc("Set one config field, as a program's --set does "
                      "(--set optimizer.adamw.lr=1e-3)"),
             cl::value_desc("FIELD=VALUE"), cl::cat(category));
static cl::list<std::string>
    defines("D", cl::Prefix,
            cl::desc("Override a const or bind a shape symbol (B, T, ...)"),
            cl::value_desc("NAME=VALUE"), cl::cat(category));

cl::opt<Emit> emitStage(
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
                          "NVIDIA GPUs: kernels for sm_80 and sm_90 with "
                          "PTX, cuBLASLt and cuDNN")),
    cl::cat(category));
cl::opt<bool> cudaOnHost(
    "cuda-on-host",
    cl::desc("Compile for CUDA but run the step on the CPU: the same kernels "
             "as host loops, the libraries' calls answered on host memory "
             "(checks the CUDA target where there is no GPU; slow)"),
    cl::cat(category));
cl::opt<std::string> cudaArch(
    "cuda-arch",
    cl::desc("The CUDA chips to build kernels for, comma-separated "
             "(default: sm_80,sm_90); with --emit=ptx, the one chip whose "
             "PTX is printed (default: sm_90)"),
    cl::value_desc("CHIPS"), cl::cat(category));
cl::opt<bool> listParams("list-params",
                         cl::desc("Print every param and state with its "
                                  "shape, and the trainable total"),
                         cl::cat(category));
cl::opt<bool> reportMemoryOpt(
    "report-memory",
    cl::desc("Print each rank's memory for every parallel.strategy, from the "
             "compiled plans (needs --config)"),
    cl::cat(category));
cl::opt<int> worldOpt(
    "world",
    cl::desc("With --report-memory: the number of ranks (default: the "
             "config's parallel.world_size, else 1)"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
cl::opt<std::string> deviceMemoryOpt(
    "device-memory",
    cl::desc("With --report-memory: each device's memory, e.g. 24GiB; the "
             "report says whether each strategy fits"),
    cl::value_desc("size"), cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(category));
cl::opt<bool> timePhases(
    "timing",
    cl::desc("Print where the compile time goes: the frontend, each pass, "
             "LLVM's code generation and the link"),
    cl::cat(category));
cl::opt<unsigned> jobs(
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

} // namespace

std::string standardLibrary() {
  if (!stdlibDir.empty())
    return stdlibDir;
  if (const char *env = std::getenv("SINTER_STDLIB"))
    return env;
  return SINTER_STDLIB_DIR;
}

std::string cudaToolkit() {
  if (const char *env = std::getenv("CUDA_HOME"))
    return env;
  return SINTER_CUDA_TOOLKIT_DIR;
}

std::string linkFileFor(bool cuda) {
  return runtimeLibraryDir() + "/" +
         (!cuda        ? SINTER_PROGRAM_LINK_FILE
          : cudaOnHost ? SINTER_PROGRAM_CUDA_ON_HOST_LINK_FILE
                       : SINTER_PROGRAM_CUDA_LINK_FILE);
}

bool compilesForCuda(const std::optional<sinter::config::TrainConfig> &config) {
  if (cudaOnHost)
    return true;
  if (targetDevice != Target::Config)
    return targetDevice == Target::CUDA;
  return config && config->device() == sinter::config::TrainConfig::CUDA;
}

std::string missingForCuda(Emit stage) {
  // Neither the GPU's libraries nor the kernels' binary: the CPU runs both.
  if (cudaOnHost)
    return "";
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

bool parseOptions(int argc, char **argv) {
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
    return false;
  }
  if (cudaOnHost && (emitStage == Emit::Gpu || emitStage == Emit::Ptx)) {
    std::cerr << "sinterc: error: --emit=gpu and --emit=ptx are stages of the CUDA "
                 "target's build for a GPU; --cuda-on-host has no kernels to print\n";
    return false;
  }
  if (cudaOnHost && targetDevice == Target::CPU) {
    std::cerr << "sinterc: error: --cuda-on-host builds the CUDA target's step "
                 "(to run on the CPU); it does not go with --target=cpu\n";
    return false;
  }
  return true;
}

bool addDefines(sinter::SemaOptions &options) {
  for (const std::string &d : defines) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "sinterc: error: -D" << d << ": expected NAME=VALUE\n";
      return false;
    }
    options.defines.push_back({d.substr(0, eq), d.substr(eq + 1)});
  }
  return true;
}

int64_t boundMicroBatch(const sinter::config::TrainConfig &config) {
  int64_t micro = config.batch().micro();
  for (const std::string &d : defines)
    if (d.rfind("B=", 0) == 0)
      micro = std::strtoll(d.c_str() + 2, nullptr, 10); // checked by Sema
  return micro;
}

} // namespace sinterc
