//===- Main.cpp - The stock main of every Sinter program ----------------===//
//
// PROGRAM [--eval [--outputs DIR]] [--config CFG.pbtxt] [--set FIELD=VALUE]...
//         [--init P.safetensors] [--save P.safetensors]
//
// Linked by sinterc with the compiled steps (abi.h). Reads the embedded
// config, lays the command line over it, and runs.
//
//===----------------------------------------------------------------------===//

#include "data/Npy.h"
#include "device/Cuda.h"
#include "dist/Bootstrap.h"
#include "main/StartAffinity.h"
#include "main/Subnormals.h"
#include "program/DataSources.h"
#include "program/Evaluator.h"
#include "program/Parameters.h"
#include "program/RunCollectives.h"
#include "program/StepPlan.h"
#include "program/Trainer.h"
#include "runtime/config/ConfigLoader.h"
#include "runtime/contract/abi.h"
#include "support/AtomicFile.h"
#include "support/Format.h"
#include "support/ResidentMemory.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

using namespace sinter::rt;
namespace config = sinter::config;

namespace {

struct Options {
  bool eval = false;
  bool help = false;
  std::vector<std::string> configFiles;
  std::vector<std::string> sets;
  std::string initFile;
  std::string saveFile;
  std::string outputsDir;
  std::string gradientsDir;
};

const char *const kUsage =
    "usage: %s [--eval [--outputs DIR]] [--config CFG.pbtxt] [--set F=V]...\n"
    "  (without --eval: train for `steps` steps, as the config says)\n"
    "          [--init PARAMS.safetensors] [--save PARAMS.safetensors]\n"
    "          [--trace TRACE.json]\n"
    "  --eval       evaluate: run the eval step over data.eval and print the\n"
    "               loss and metrics\n"
    "  --config F   fields given in F override the config compiled in; again\n"
    "               for more files (later ones override earlier ones; relative\n"
    "               paths are relative to the first file's folder)\n"
    "  --set F=V    override one field, e.g. --set eval.batches=10\n"
    "  --init P     start from these params and states, not the initialisers\n"
    "  --save P     write the params and states at the end\n"
    "  --trace T    write a Chrome trace of the run to T (log.trace_file;\n"
    "               with several ranks, each writes T.rank-R)\n"
    "  --outputs D  with --eval: write each `output` of the model over the\n"
    "               evaluated batches to D/NAME.npy\n"
    "  --gradients D  run the forward and backward pass once on the first\n"
    "               micro-batch of data.train; write each parameter's gradient\n"
    "               to D/NAME.npy\n";

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

/// The config loader's messages are complete: `FILE:LINE:COL: error: ...`.
int failConfig(const std::string &message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  return 1;
}

bool parseArgs(int argc, char **argv, Options &o, std::string &error) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc) {
        error = a + " needs a value";
        return false;
      }
      out = argv[++i];
      return true;
    };
    if (a == "--eval")
      o.eval = true;
    else if (a == "--help" || a == "-h")
      o.help = true;
    else if (a == "--config") {
      std::string file;
      if (!value(file))
        return false;
      o.configFiles.push_back(file);
    } else if (a == "--set") {
      std::string s;
      if (!value(s))
        return false;
      o.sets.push_back(s);
    } else if (a == "--init") {
      if (!value(o.initFile))
        return false;
    } else if (a == "--save") {
      if (!value(o.saveFile))
        return false;
    } else if (a == "--outputs") {
      if (!value(o.outputsDir))
        return false;
    } else if (a == "--gradients") {
      if (!value(o.gradientsDir))
        return false;
    } else if (a == "--trace") {
      std::string file;
      if (!value(file))
        return false;
      o.sets.push_back("log.trace_file=" + file);
    } else {
      error = "unknown argument '" + a + "'; see --help";
      return false;
    }
  }
  return true;
}

/// A compiled step with its buffers allocated and its params and states set
/// from the initialisers, or from --init.
struct Step {
  StepPlan plan;
  BufferSet buffers;
  StepFn fn = nullptr;
  StepRun run() { return {&plan, &buffers, fn}; }
};

/// The device a step was compiled for: the CPU, or for device: CUDA this
/// rank's GPU (LOCAL_RANK), opened once.
Expected<Device *> deviceFor(const StepPlan &plan) {
  if (plan.device == "cpu")
    return &hostDevice();
  static Expected<Device *> gpu = [] {
    if (!openCudaDevice)
      return Expected<Device *>(Status::error(
          "internal error: this program was compiled for CUDA but linked "
          "without the runtime's CUDA device"));
    Expected<WorldInfo> world =
        readWorld([](const char *n) { return std::getenv(n); });
    if (!world.ok())
      return Expected<Device *>(world.status());
    return openCudaDevice(world->localRank);
  }();
  return gpu;
}

/// The step of `fn`: its plan and device, then (once `beforeAllocating`
/// accepts the plan, so that a config or data error is named before a large
/// model's buffers are allocated and filled) its buffers with the
/// parameters.
Expected<Step> prepare(StepFn fn, const char *planBytes, int64_t planSize,
                       const config::TrainConfig &cfg, const std::string &initFile,
                       const std::function<Status(const StepPlan &)> &beforeAllocating = {}) {
  Expected<StepPlan> plan = StepPlan::parse(planBytes, planSize);
  if (!plan.ok())
    return plan.status();
  Expected<Device *> device = deviceFor(*plan);
  if (!device.ok())
    return device.status();
  SINTER_RT_RETURN_IF_ERROR((*device)->allowTf32Matmuls(
      cfg.precision().matmul() == config::TrainConfig::Precision::TF32));
  SINTER_RT_RETURN_IF_ERROR((*device)->allowWinogradConvolutions(
      cfg.precision().convolution() == config::TrainConfig::Precision::WINOGRAD));
  SINTER_RT_RETURN_IF_ERROR(
      (*device)->allowNondeterministicAlgorithms(!cfg.precision().deterministic()));
  if (beforeAllocating)
    SINTER_RT_RETURN_IF_ERROR(beforeAllocating(*plan));
  Expected<BufferSet> buffers = BufferSet::allocate(*plan, **device);
  if (!buffers.ok())
    return buffers.status();
  // A rank that holds shards of the parameters fills only its own.
  uint64_t rank = 0;
  if (plan->shardsParameters()) {
    Expected<WorldInfo> world = readWorld([](const char *n) { return std::getenv(n); });
    if (!world.ok())
      return world.status();
    rank = uint64_t(world->rank);
  }
  Status params = initFile.empty()
                      ? initialiseParameters(*plan, *buffers, cfg.seed(), rank)
                      : loadParameters(*plan, *buffers, initFile, rank,
                                       TensorMap(cfg.tensor_map()));
  if (!params.ok())
    return params;
  return Step{plan.take(), buffers.take(), fn};
}

Expected<std::shared_ptr<const BatchSource>>
openData(const config::TrainConfig &cfg, bool eval, const std::string &baseDir,
         const StepPlan &plan) {
  const auto &data = cfg.data();
  bool useEval = eval && data.has_eval();
  auto source = openDataSource(useEval ? data.eval() : data.train(), baseDir,
                               plan, useEval ? "data.eval" : "data.train",
                               cfg.seed());
  if (!source.ok())
    return source.status();
  return std::shared_ptr<const BatchSource>(source.take());
}

const char *const kNoTrainStep =
    "this program has no training step (see sinterc's warning when it was "
    "compiled); run it with --eval";

/// The train step, ready to run, and the data it reads.
struct TrainInputs {
  Step step;
  std::shared_ptr<const BatchSource> data;
};

/// `training`: the run trains (not --gradients), so the config must match
/// what the step compiled in (checkCompiledTraining).
Expected<TrainInputs> prepareTraining(const config::TrainConfig &cfg,
                                      const std::string &baseDir, const Options &opts,
                                      bool training) {
  if (!sinter_step_train || !sinter_plan_train)
    return Status::error(kNoTrainStep);
  std::shared_ptr<const BatchSource> data;
  Expected<Step> step = prepare(
      sinter_step_train, sinter_plan_train, sinter_plan_train_size, cfg, opts.initFile,
      [&](const StepPlan &plan) -> Status {
        if (training)
          SINTER_RT_RETURN_IF_ERROR(checkCompiledTraining(cfg, plan));
        auto opened = openData(cfg, /*eval=*/false, baseDir, plan);
        if (!opened.ok())
          return opened.status();
        data = opened.take();
        return Status::success();
      });
  if (!step.ok())
    return step.status();
  return TrainInputs{step.take(), std::move(data)};
}

/// The default: train for cfg.steps steps, evaluating every eval.every.
/// What this process held resident before the steps' buffers.
struct ResidentAtStart {
  std::optional<uint64_t> all = residentBytes();
  std::optional<uint64_t> files = residentFileBytes();
};

/// Each rank's measured memory against its plan's: the most it held
/// resident, how much above what it held before the steps' buffers, and how
/// much of that growth is mapped files (code first run, mapped data), which
/// no plan holds.
void logMemory(int rank, const ResidentAtStart &before, const Step &train,
               const std::optional<Step> &eval) {
  std::optional<uint64_t> peak = peakResidentBytes();
  std::optional<uint64_t> files = residentFileBytes();
  if (!peak || !before.all || !files || !before.files)
    return;
  uint64_t planned = train.buffers.deviceBytes() + train.buffers.hostCopyBytes();
  if (eval)
    planned += eval->buffers.deviceBytes() + eval->buffers.hostCopyBytes();
  std::string onDevice = !train.buffers.device().hostVisible()
                             ? " (" + formatMiB(train.buffers.deviceBytes()) + " of it on the GPU)"
                             : "";
  uint64_t grown = *peak - std::min(*peak, *before.all);
  uint64_t mapped = std::min(grown, *files - std::min(*files, *before.files));
  std::printf("memory, rank %d: peak %s resident, %s above its start, %s of it mapped "
              "files (code, data); the plans' buffers %s%s\n",
              rank, formatMiB(*peak).c_str(), formatMiB(grown).c_str(), formatMiB(mapped).c_str(),
              formatMiB(planned).c_str(), onDevice.c_str());
}

int runTraining(const config::TrainConfig &cfg, const std::string &baseDir,
                const Options &opts) {
  ResidentAtStart residentAtStart;
  Expected<TrainInputs> inputs = prepareTraining(cfg, baseDir, opts, /*training=*/true);
  if (!inputs.ok())
    return fail(inputs.message());
  Step *step = &inputs->step;
  // The eval step, when the program has one and the config evaluates; its
  // parameters are copied from the training step's before each evaluation.
  std::optional<Step> eval;
  std::shared_ptr<const BatchSource> evalData;
  if (cfg.eval().every() > 0 && sinter_step_eval && cfg.data().has_eval()) {
    Expected<Step> e = prepare(sinter_step_eval, sinter_plan_eval,
                               sinter_plan_eval_size, cfg, "");
    if (!e.ok())
      return fail(e.message());
    eval.emplace(e.take());
    auto data = openData(cfg, /*eval=*/true, baseDir, eval->plan);
    if (!data.ok())
      return fail(data.message());
    evalData = data.take();
  }
  installInterruptHandlers();
  // The ranks of the run, from the environment (sinter-run, torchrun,
  // mpirun, srun); one process when none is set.
  Expected<WorldInfo> world = readWorld([](const char *n) { return std::getenv(n); });
  if (!world.ok())
    return fail(world.message());
  if (step->plan.worldSize > 0 && uint64_t(world->size) != step->plan.worldSize)
    return fail("this program was compiled for " +
                std::to_string(step->plan.worldSize) +
                " ranks (parallel.world_size; a sharded strategy's slices are "
                "sized for them) but runs on " + std::to_string(world->size) +
                "; run it on " + std::to_string(step->plan.worldSize) +
                " ranks, or recompile with --set parallel.world_size=" +
                std::to_string(world->size));
  Expected<std::unique_ptr<Communicator>> comm =
      connectRun(cfg, *world, step->buffers.device());
  if (!comm.ok())
    return fail(comm.message());
  StepRun evalRun = eval ? eval->run() : StepRun();
  Status trained = train(cfg, **comm, step->run(), inputs->data,
                         eval ? &evalRun : nullptr, evalData);
  if (!trained.ok() && trained.message() == kInterrupted)
    return 128 + interruptSignal(); // stopped cleanly, with a checkpoint
  if (!trained.ok())
    return fail(trained.message());
  std::fflush(stdout);
  logMemory((*comm)->rank(), residentAtStart, *step, eval);
  if (!opts.saveFile.empty()) {
    Status saved = saveParameters(step->plan, step->buffers, opts.saveFile,
                                  comm->get(), TensorMap(cfg.tensor_map()));
    if (!saved.ok())
      return fail(saved.message());
  }
  return 0;
}

/// --gradients: one forward and backward pass of the train phase.
int runGradients(const config::TrainConfig &cfg, const std::string &baseDir,
                 const Options &opts) {
  Expected<TrainInputs> inputs = prepareTraining(cfg, baseDir, opts, /*training=*/false);
  if (!inputs.ok())
    return fail(inputs.message());
  Step *step = &inputs->step;
  if (step->plan.sharded())
    return fail("--gradients writes every parameter's whole gradient, but this "
                "program shards its optimizer step over " +
                std::to_string(step->plan.worldSize) +
                " ranks (parallel.strategy); recompile it with strategy: DDP");
  Status made = createDirectories(opts.gradientsDir, "--gradients");
  if (!made.ok())
    return fail(made.message());
  Expected<double> loss = writeGradients(step->plan, step->buffers, step->fn,
                                         *inputs->data, opts.gradientsDir);
  if (!loss.ok())
    return fail(loss.message());
  std::printf("train: loss %.17g, gradients written to %s\n", *loss,
              opts.gradientsDir.c_str());
  return 0;
}

/// --eval: the eval step over data.eval (or data.train).
int runEval(const config::TrainConfig &cfg, const std::string &baseDir,
            const Options &opts) {
  if (!sinter_step_eval || !sinter_plan_eval)
    return fail("this program was compiled without an eval step");
  Expected<Step> step = prepare(sinter_step_eval, sinter_plan_eval,
                                sinter_plan_eval_size, cfg, opts.initFile);
  if (!step.ok())
    return fail(step.message());
  if (step->plan.shardsParameters())
    return fail("--eval runs one process, but this program's parameters are "
                "sharded over " + std::to_string(step->plan.worldSize) +
                " ranks (parallel.strategy FULL_SHARD): evaluate in the training "
                "run (eval { every: N }), or recompile with another strategy");
  auto data = openData(cfg, /*eval=*/true, baseDir, step->plan);
  if (!data.ok())
    return fail(data.message());
  if (!opts.outputsDir.empty()) {
    Status made = createDirectories(opts.outputsDir, "--outputs");
    if (!made.ok())
      return fail(made.message());
  }
  Expected<EvalResult> result =
      evaluate(step->plan, step->buffers, step->fn, data.take(),
               uint64_t(cfg.eval().batches()), isatty(2), nullptr, opts.outputsDir);
  if (!result.ok())
    return fail(result.message());
  std::printf("eval: loss %.6f", result->loss);
  for (const auto &[name, value] : result->metrics)
    std::printf("  %s %.6f", name.c_str(), value);
  std::printf("  (%llu batches, %llu samples, %.3f s, %.0f samples/s)\n",
              (unsigned long long)result->batches,
              (unsigned long long)result->samples, result->seconds,
              result->seconds > 0 ? double(result->samples) / result->seconds
                                  : 0.0);
  if (!opts.saveFile.empty()) {
    Status saved = saveParameters(step->plan, step->buffers, opts.saveFile, nullptr,
                                  TensorMap(cfg.tensor_map()));
    if (!saved.ok())
      return fail(saved.message());
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  restoreStartAffinity();
  flushSubnormals();
  Options opts;
  std::string error;
  if (!parseArgs(argc, argv, opts, error))
    return fail(error);
  if (opts.help) {
    std::printf(kUsage, argv[0]);
    return 0;
  }
  if (sinter_abi_version != SINTER_ABI_VERSION)
    return fail("this program's code was compiled for runtime ABI " +
                std::to_string(sinter_abi_version) + " but the runtime is ABI " +
                std::to_string(SINTER_ABI_VERSION) + "; recompile it");

  // The config: compiled in, then --config, then --set. Both are laid over
  // the compiled-in config, so the loader can refuse a change to what sinterc
  // fixed when it compiled (parallel.bucket_cap_mb, the bucket layout).
  std::string baseDir(sinter_config_dir, size_t(sinter_config_dir_size));
  std::optional<config::TrainConfig> cfg = config::parseConfigText(
      std::string(sinter_config, size_t(sinter_config_size)),
      "<compiled-in config>", error);
  if (!cfg)
    return failConfig(error);
  for (const std::string &file : opts.configFiles)
    if (!config::mergeConfigFile(*cfg, file, error))
      return failConfig(error);
  if (!opts.configFiles.empty()) {
    std::string dir = opts.configFiles.front();
    size_t slash = dir.find_last_of('/');
    baseDir = slash == std::string::npos ? "." : dir.substr(0, slash);
  }
  if (!config::applyOverrides(*cfg, opts.sets, error))
    return failConfig(error);

  if (!opts.gradientsDir.empty())
    return runGradients(*cfg, baseDir, opts);
  if (opts.eval)
    return runEval(*cfg, baseDir, opts);
  return runTraining(*cfg, baseDir, opts);
}
