//===- CudaDevice.cpp - One NVIDIA GPU as a step's device ---------------===//

#include "cuda/CudaDevice.h"

#include "cuda/CudaStaging.h"
#include "cuda/Driver.h"
#include "cuda/Errors.h"
#include "cuda/LibraryPlans.h"
#include "device/Cuda.h"
#include "device/KernelTimes.h"
#include "device/LibrarySite.h"
#include "runtime/contract/abi.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace sinter::rt::cuda {

struct CudaDevice::Profile {
  struct Pending {
    const char *kind;
    std::string label;
    cudaEvent_t start, end;
  };
  KernelTimes times;
  std::vector<cudaEvent_t> spare; ///< recorded and read, free for reuse
  std::vector<Pending> pending;   ///< recorded, not yet read
  cudaEvent_t start = nullptr;    ///< of the call in progress
};

namespace {

/// Profiled calls kept before their times are read (which waits).
constexpr size_t kMostPendingCalls = 1 << 16;

/// Whether environment variable `name` is set to something other than 0.
bool switchedOn(const char *name) {
  const char *v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

/// The rows of the profile's table: SINTER_CUDA_PROFILE=1 lists the 20
/// kernels and library calls that took the most time; a larger number,
/// that many.
size_t profileRows() {
  const char *v = std::getenv("SINTER_CUDA_PROFILE");
  long rows = v ? std::strtol(v, nullptr, 10) : 0;
  return rows > 1 ? size_t(rows) : 20;
}

/// Never destroyed: at exit the CUDA runtime tears itself down before
/// static destructors would run, and destroying the library handles and
/// the module after it can crash; the driver frees everything with the
/// process.
CudaDevice *opened = nullptr;

/// The names table: "name\tsource\0" per kernel, in index order.
std::vector<std::pair<std::string, std::string>> kernelTable() {
  std::vector<std::pair<std::string, std::string>> out;
  if (!sinter_cuda_kernel_names)
    return out;
  const char *p = sinter_cuda_kernel_names;
  const char *end = p + sinter_cuda_kernel_names_size;
  while (p < end) {
    std::string entry(p);
    p += entry.size() + 1;
    size_t tab = entry.find('\t');
    out.push_back({entry.substr(0, tab),
                   tab == std::string::npos ? "" : entry.substr(tab + 1)});
  }
  return out;
}

const char *const kCompiledForCuda =
    "this program was compiled for CUDA (device: CUDA): run it on a machine "
    "with an NVIDIA GPU and its driver, or recompile it with device: CPU";

} // namespace

CudaDevice *activeDevice() { return opened; }

Expected<std::unique_ptr<CudaDevice>> CudaDevice::open(int index) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorInsufficientDriver)
    return Status::error(std::string("no NVIDIA GPU can be used here: the NVIDIA "
                                     "driver (libcuda.so.1) is missing or older "
                                     "than CUDA ") +
                         std::to_string(CUDART_VERSION / 1000) +
                         " needs (cudaGetDeviceCount: cudaErrorInsufficientDriver); " +
                         kCompiledForCuda);
  if (e != cudaSuccess)
    return Status::error(std::string("no NVIDIA GPU can be used here (cudaGetDeviceCount: ") +
                         cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + "); " +
                         kCompiledForCuda);
  if (count == 0)
    return Status::error(std::string("no NVIDIA GPU is present; ") +
                         kCompiledForCuda);
  // A rank that sees one GPU (CUDA_VISIBLE_DEVICES set per rank, as srun's
  // --gpus-per-task does) uses it, whatever its LOCAL_RANK.
  if (count == 1)
    index = 0;
  if (index < 0 || index >= count)
    return Status::error("LOCAL_RANK=" + std::to_string(index) +
                         " asks for GPU " + std::to_string(index) +
                         " but this machine has " + std::to_string(count) +
                         "; start one rank per GPU");
  std::unique_ptr<CudaDevice> d(new CudaDevice());
  d->index = index;
  if (switchedOn("SINTER_CUDA_PROFILE"))
    d->profile = std::make_unique<Profile>();
  d->waitEachCall = switchedOn("SINTER_CUDA_SYNC");
  // A graph runs its kernels as one launch: no time for each, and no wait
  // between them. Graphs are on unless SINTER_CUDA_GRAPHS=0.
  const char *graphs = std::getenv("SINTER_CUDA_GRAPHS");
  d->graphs = GraphRegions(!d->profile && !d->waitEachCall &&
                           (!graphs || std::strcmp(graphs, "0") != 0));
  SINTER_CUDA_CHECK(cudaSetDevice(index));
  // The primary context, current on this thread for the driver calls.
  SINTER_CUDA_CHECK(cudaFree(nullptr));
  cudaDeviceProp props;
  SINTER_CUDA_CHECK(cudaGetDeviceProperties(&props, index));
  d->name = props.name;
  // The program carries cubins for sm_80 and sm_90 and PTX for later chips;
  // bf16 matmuls and cuDNN's fused attention need Ampere too.
  if (props.major < 8)
    return Status::error(d->describe() + " has compute capability " +
                         std::to_string(props.major) + "." +
                         std::to_string(props.minor) +
                         "; Sinter's CUDA programs need 8.0 or later (A100, H100 "
                         "and newer)");
  SINTER_CUDA_CHECK(cudaStreamCreateWithFlags(&d->compute, cudaStreamNonBlocking));
  SINTER_CUDA_CHECK(cublasLtCreate(&d->blasLt));
  SINTER_RT_RETURN_IF_ERROR(loadDriver());
  SINTER_RT_RETURN_IF_ERROR(d->loadKernels());
  return d;
}

CudaDevice::~CudaDevice() {
  if (compute)
    cudaStreamSynchronize(compute);
  graphs.forEachGraph(
      [](void *exec) { cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec)); });
  if (module && driver())
    driver()->moduleUnload(module);
  if (scratch)
    cudaFree(scratch);
  if (dnn)
    cudnnDestroy(dnn);
  if (blasLt)
    cublasLtDestroy(blasLt);
  if (compute)
    cudaStreamDestroy(compute);
}

Status CudaDevice::loadKernels() {
  if (!sinter_cuda_module || sinter_cuda_module_size == 0)
    return Status::success();
  const Driver &d = *driver();
  SINTER_CUDA_CHECK(d.moduleLoadData(&module, sinter_cuda_module));
  for (const auto &[kernel, source] : kernelTable()) {
    CUfunction f = nullptr;
    SINTER_RT_RETURN_IF_ERROR(
        check(d.moduleGetFunction(&f, module, kernel.c_str()), "cuModuleGetFunction")
            .withPrefix("kernel " + kernel + ": "));
    kernels.push_back(f);
    kernelNames.push_back(source.empty() ? kernel : kernel + " (" + source + ")");
  }
  return Status::success();
}

std::string CudaDevice::describe() const {
  return "cuda:" + std::to_string(index) + " (" + name + ")";
}

Expected<void *> CudaDevice::allocate(uint64_t bytes) {
  void *p = nullptr;
  cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
  if (e != cudaSuccess)
    return Status::error("out of GPU memory on " + describe() + " allocating " +
                         std::to_string(bytes) + " bytes (" +
                         cudaGetErrorString(e) + ")");
  SINTER_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, compute));
  allocatedBytes += bytes;
  return p;
}

std::optional<FreeMemory> CudaDevice::freeMemory() const {
  size_t free = 0, total = 0;
  if (cudaSetDevice(index) != cudaSuccess || cudaMemGetInfo(&free, &total) != cudaSuccess)
    return std::nullopt;
  return FreeMemory{free, "cudaMemGetInfo, of " + std::to_string(total >> 20) + " MiB"};
}

void CudaDevice::release(void *p) {
  cudaStreamSynchronize(compute);
  cudaFree(p);
}

Expected<void *> CudaDevice::allocateHost(uint64_t bytes) {
  void *p = nullptr;
  cudaError_t e = cudaHostAlloc(&p, bytes ? bytes : 1, cudaHostAllocDefault);
  if (e != cudaSuccess)
    return Status::error("cannot pin " + std::to_string(bytes) +
                         " bytes of host memory for " + describe() + " (" +
                         cudaGetErrorString(e) + ")");
  return p;
}

void CudaDevice::releaseHost(void *p) { cudaFreeHost(p); }

Status CudaDevice::upload(void *device, const void *host, uint64_t bytes) {
  return staging.upload(compute, device, host, bytes);
}

Status CudaDevice::download(void *host, const void *device, uint64_t bytes) {
  SINTER_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost,
                                    compute));
  return synchronize();
}

Status CudaDevice::copy(void *dst, const void *src, uint64_t bytes) {
  SINTER_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                                    compute));
  return Status::success();
}

Status CudaDevice::synchronize() {
  Status done = check(cudaStreamSynchronize(compute), "cudaStreamSynchronize")
                    .withPrefix(describe() + ": ");
  // The failed call is one of those queued since the last wait.
  if (!done.ok() && !waitEachCall)
    done = Status::error(done.message() + " (in work queued before this wait" +
                         (graphLaunched ? ", some replayed from a CUDA graph" : "") +
                         "; run with SINTER_CUDA_SYNC=1 to have the failure name its "
                         "kernel or library call)");
  graphLaunched = false;
  if (done.ok())
    drainProfile();
  Status first = firstError;
  firstError = Status::success();
  return first.ok() ? done : first;
}

void CudaDevice::waitForCall(const std::string &label) {
  if (!skipsWork())
    failed(check(cudaStreamSynchronize(compute), "cudaStreamSynchronize")
               .withPrefix(label + ": "));
}

bool CudaDevice::failed(Status s) {
  if (s.ok())
    return false;
  if (firstError.ok())
    firstError = s.withPrefix(describe() + librarySiteSuffix() + ": ");
  return true;
}

Expected<void *> CudaDevice::workspace(uint64_t bytes) {
  if (bytes <= scratchBytes)
    return scratch;
  if (capturing)
    return Status::error("a library call needed a larger workspace while its CUDA graph "
                         "was captured");
  SINTER_CUDA_CHECK(cudaStreamSynchronize(compute));
  // The captured graphs name the old workspace; a region recording its
  // calls for one goes on direct.
  graphs.forget(
      [](void *exec) { cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec)); });
  if (region == GraphRegions::Action::Capture) {
    region = GraphRegions::Action::Direct;
    recorded.clear();
  }
  if (scratch)
    SINTER_CUDA_CHECK(cudaFree(scratch));
  scratch = nullptr;
  scratchBytes = 0;
  SINTER_CUDA_CHECK(cudaMalloc(&scratch, bytes));
  scratchBytes = bytes;
  return scratch;
}

void CudaDevice::launch(int64_t kernel, const int64_t grid[3],
                        const int64_t block[3], int64_t sharedBytes,
                        int64_t nargs, void *args) {
  if (skipsWork())
    return;
  if (kernel < 0 || size_t(kernel) >= kernels.size()) {
    failed(Status::error("internal error: the step launched kernel " +
                         std::to_string(kernel) + " of " +
                         std::to_string(kernels.size())));
    return;
  }
  launchParams.resize(static_cast<size_t>(nargs));
  for (int64_t i = 0; i < nargs; ++i)
    launchParams[size_t(i)] = static_cast<int64_t *>(args) + i;
  CUresult r = driver()->launchKernel(
      kernels[size_t(kernel)], unsigned(grid[0]), unsigned(grid[1]),
      unsigned(grid[2]), unsigned(block[0]), unsigned(block[1]),
      unsigned(block[2]), unsigned(sharedBytes),
      reinterpret_cast<CUstream>(compute), launchParams.data(), nullptr);
  if (r != CUDA_SUCCESS)
    failed(check(r, "cuLaunchKernel")
               .withPrefix("kernel " + kernelNames[size_t(kernel)] + ": "));
}

void CudaDevice::read(void *dst, const void *src, int64_t offset, int64_t bytes) {
  if (regionId >= 0)
    failed(Status::error("internal error: the step read device memory inside graph "
                         "region " + std::to_string(regionId)));
  if (firstError.ok() &&
      !failed(check(cudaMemcpyAsync(dst, static_cast<const char *>(src) + offset,
                                    size_t(bytes), cudaMemcpyDeviceToHost, compute),
                    "cudaMemcpyAsync (a value the host reads)")) &&
      !failed(check(cudaStreamSynchronize(compute), "cudaStreamSynchronize"))) {
    drainProfile();
    return;
  }
  // After a failure the step goes on without device work: it reads zeros.
  std::memset(dst, 0, size_t(bytes));
}

std::string CudaDevice::activity() const {
  auto mib = [](uint64_t b) { return std::to_string((b + (1 << 19)) >> 20) + " MiB"; };
  // In use on the whole GPU (every process's), at the end, context
  // included: near the run's peak (its buffers stay; a library's workspace
  // may have been replaced by a larger one).
  std::string inUse;
  size_t free = 0, total = 0;
  if (cudaSetDevice(index) == cudaSuccess && cudaMemGetInfo(&free, &total) == cudaSuccess)
    inUse = "; in use on the GPU at the end (cudaMemGetInfo, every process's): " +
            mib(total - free) + " of " + mib(total);
  return "GPU memory allocated by Sinter on " + describe() + ": the plans' buffers " +
         mib(allocatedBytes) + ", the libraries' workspace " + mib(scratchBytes) +
         ", input staging " + mib(staging.deviceBytes()) +
         ", attention's recomputed outputs and statistics " + mib(attentionBytes) +
         " (beside them: CUDA's context, the kernels' module, the libraries' "
         "handles and NCCL's buffers)" + inUse + "\n" + launchActivity();
}

std::string CudaDevice::launchActivity() const {
  if (profile)
    return "CUDA graphs: off while profiling (SINTER_CUDA_PROFILE)\n" +
           profile->times.table(profileRows());
  const GraphRegions::Counts &n = graphs.counts();
  if (!graphs.isEnabled())
    return "CUDA graphs: off (SINTER_CUDA_GRAPHS=0); " + std::to_string(n.direct) +
           " runs of graph regions launched kernel by kernel";
  std::string text = "CUDA graphs: " + std::to_string(n.captured) + " captured, " +
                     std::to_string(n.replayed) + " replays; " + std::to_string(n.direct) +
                     " runs of graph regions direct (first runs, and regions whose "
                     "inputs change: learning rate, step, random keys)";
  if (!captureProblem.empty())
    text += "; a region stayed direct because its capture failed: " + captureProblem;
  return text;
}

Expected<StagingQueues *> CudaDevice::stagingQueues() {
  if (!collectiveStaging) {
    Expected<std::unique_ptr<StagingQueues>> made = createCudaStaging(index, compute);
    if (!made.ok())
      return made.status().withPrefix(describe() + ": ");
    collectiveStaging = made.take();
  }
  return collectiveStaging.get();
}

const std::string &CudaDevice::kernelLabel(int64_t kernel) const {
  static const std::string unknown = "an unknown kernel";
  return kernel >= 0 && size_t(kernel) < kernelNames.size() ? kernelNames[size_t(kernel)]
                                                            : unknown;
}

namespace {

/// An event for the profile: a spare one, or a new one (null on failure).
cudaEvent_t takeEvent(std::vector<cudaEvent_t> &spare, Status &error) {
  if (!spare.empty()) {
    cudaEvent_t e = spare.back();
    spare.pop_back();
    return e;
  }
  cudaEvent_t e = nullptr;
  error = check(cudaEventCreate(&e), "cudaEventCreate");
  return error.ok() ? e : nullptr;
}

} // namespace

void CudaDevice::profileBegin() {
  Status error;
  profile->start = takeEvent(profile->spare, error);
  if (profile->start &&
      failed(check(cudaEventRecord(profile->start, compute), "cudaEventRecord"))) {
    profile->spare.push_back(profile->start);
    profile->start = nullptr;
  }
  failed(error);
}

void CudaDevice::profileEnd(const char *kind, std::string label) {
  cudaEvent_t start = profile->start;
  profile->start = nullptr;
  if (!start)
    return; // its start was not recorded: nothing to time
  Status error;
  cudaEvent_t end = takeEvent(profile->spare, error);
  if (!end || failed(check(cudaEventRecord(end, compute), "cudaEventRecord"))) {
    failed(error);
    profile->spare.push_back(start);
    if (end)
      profile->spare.push_back(end);
    return;
  }
  profile->pending.push_back({kind, std::move(label), start, end});
  if (profile->pending.size() >= kMostPendingCalls &&
      !failed(check(cudaStreamSynchronize(compute), "cudaStreamSynchronize")))
    drainProfile();
}

void CudaDevice::drainProfile() {
  if (!profile)
    return;
  for (Profile::Pending &p : profile->pending) {
    float ms = 0;
    if (!failed(check(cudaEventElapsedTime(&ms, p.start, p.end), "cudaEventElapsedTime")))
      profile->times.add(p.kind, p.label, double(ms));
    profile->spare.push_back(p.start);
    profile->spare.push_back(p.end);
  }
  profile->pending.clear();
}

void CudaDevice::graphBegin(int64_t id, const int64_t *signature, int64_t count) {
  // A failure of the graph calls names no library op.
  setLibrarySite(-1);
  if (regionId >= 0) {
    failed(Status::error("internal error: graph region " + std::to_string(id) +
                         " began inside region " + std::to_string(regionId)));
    return;
  }
  regionId = id;
  region = firstError.ok() ? graphs.begin(id, signature, count)
                           : GraphRegions::Action::Direct;
  recorded.clear();
}

Expected<cudaGraphExec_t> CudaDevice::captureRecorded() {
  // Thread-local: the capture takes this thread's calls only, and no other
  // thread queues work on the compute stream.
  SINTER_CUDA_CHECK(cudaStreamBeginCapture(compute, cudaStreamCaptureModeThreadLocal));
  capturing = true;
  for (const auto &call : recorded)
    call(*this);
  capturing = false;
  cudaGraph_t graph = nullptr;
  Status ended = check(cudaStreamEndCapture(compute, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  if (ended.ok() && firstError.ok())
    ended = check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  if (graph)
    cudaGraphDestroy(graph);
  if (ended.ok() && firstError.ok())
    return exec;
  if (exec)
    cudaGraphExecDestroy(exec);
  return ended.ok() ? firstError : ended;
}

void CudaDevice::graphEnd(int64_t id) {
  setLibrarySite(-1);
  GraphRegions::Action action = region;
  int64_t begun = regionId;
  region = GraphRegions::Action::Direct;
  regionId = -1;
  if (id != begun) {
    recorded.clear();
    graphs.runFailed();
    graphs.end();
    failed(Status::error("internal error: graph region " + std::to_string(id) +
                         " ended inside region " + std::to_string(begun)));
    return;
  }
  if (action != GraphRegions::Action::Replay && !firstError.ok()) {
    // Its library calls may not have made their plans: not a warm-up, and
    // nothing to capture.
    graphs.runFailed();
  } else if (action == GraphRegions::Action::Capture) {
    // The region's work ran direct, its calls recorded; they are now
    // captured, not run. A capture that fails leaves the region direct,
    // and its errors are not the step's.
    Status before = firstError;
    Expected<cudaGraphExec_t> exec = captureRecorded();
    firstError = before;
    cudaGetLastError();
    if (exec.ok() && graphs.graph()) {
      *graphs.graph() = *exec;
    } else if (exec.ok()) {
      cudaGraphExecDestroy(*exec); // its record was forgotten meanwhile
    } else {
      captureProblem = "graph region " + std::to_string(id) + ": " +
                       exec.status().message();
      graphs.captureFailed();
    }
  } else if (action == GraphRegions::Action::Replay) {
    graphLaunched = true;
    failed(check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(*graphs.graph()), compute),
                 "cudaGraphLaunch")
               .withPrefix("graph region " + std::to_string(id) + ": "));
  }
  recorded.clear();
  graphs.end();
}

} // namespace sinter::rt::cuda

namespace sinter::rt {

Expected<Device *> openCudaDevice(int index) {
  static std::mutex lock;
  std::lock_guard<std::mutex> hold(lock);
  if (!cuda::opened) {
    Expected<std::unique_ptr<cuda::CudaDevice>> d = cuda::CudaDevice::open(index);
    if (!d.ok())
      return d.status();
    cuda::opened = d.take().release();
  }
  return static_cast<Device *>(cuda::opened);
}

} // namespace sinter::rt
