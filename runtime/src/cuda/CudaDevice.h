//===- CudaDevice.h - One NVIDIA GPU as a step's device ----------*- C++ -*-===//
//
// A CUDA step's buffers are device allocations (cudaMalloc, never managed
// memory). Its work, the generated kernels and the library calls, is queued
// in order on one compute stream. The kernels are the program's one module,
// loaded once when the device opens, each resolved once.
//
// What generated code asks for (abi.h's sinter_cuda_*) returns nothing, so
// a failure there is recorded, the step's remaining work is skipped, and the
// next synchronize() returns it, naming the call and the kernel or library
// op with its source line.
//
// The step's graph regions (abi.h) are captured in CUDA graphs and replayed
// (device/GraphRegions.h decides when): a region's second run runs direct
// and records its calls, which are then captured, so that a capture that
// fails costs nothing but the graph. SINTER_CUDA_GRAPHS=0 in the
// environment runs every kernel direct, so that a fault names its kernel.
// SINTER_CUDA_PROFILE=1 times every kernel and library call instead (no
// graphs then): the run's log ends with where the GPU's time went.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_CUDA_CUDADEVICE_H
#define SINTER_RT_CUDA_CUDADEVICE_H

#include "cuda/StagedUploads.h"
#include "device/Device.h"
#include "device/GraphRegions.h"

#include <cublasLt.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <functional>
#include <initializer_list>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace sinter::rt::cuda {

/// abi.h's three convolution calls: y from x and w; dx from dy and w; dw
/// from x and dy.
enum class ConvolutionPass { Forward = 0, BackwardData = 1, BackwardWeights = 2 };

struct ConvolutionAlgorithm;
struct F32AttentionKernels;

class CudaDevice final : public Device {
public:
  static Expected<std::unique_ptr<CudaDevice>> open(int index);
  ~CudaDevice() override;

  std::string describe() const override;
  bool hostVisible() const override { return false; }
  Expected<void *> allocate(uint64_t bytes) override;
  void release(void *p) override;
  Expected<void *> allocateHost(uint64_t bytes) override;
  void releaseHost(void *p) override;
  Status upload(void *device, const void *host, uint64_t bytes) override;
  Status download(void *host, const void *device, uint64_t bytes) override;
  Status copy(void *dst, const void *src, uint64_t bytes) override;
  Status synchronize() override;
  Status allowTf32Matmuls(bool allowed) override {
    tf32Matmuls = allowed;
    return Status::success();
  }
  std::optional<FreeMemory> freeMemory() const override;
  Status allowNondeterministicAlgorithms(bool allowed) override {
    nondeterministic = allowed;
    return Status::success();
  }
  Status allowWinogradConvolutions(bool allowed) override {
    return allowed ? Status::error("precision.convolution WINOGRAD is built for "
                                   "the CPU (oneDNN's Winograd kernels), not for CUDA")
                   : Status::success();
  }
  void *workQueue() const override { return compute; }
  std::string activity() const override;
  Expected<StagingQueues *> stagingQueues() override;

  // What the generated step asks for, queued on the compute stream.
  void launch(int64_t kernel, const int64_t grid[3], const int64_t block[3],
              int64_t sharedBytes, int64_t nargs, void *args);
  /// One of abi.h's matmuls: its extents, flags, and the elements between
  /// consecutive rows of a, b and c as stored (their row lengths when
  /// dense, more when the memory plan padded the rows).
  struct MatmulShape {
    int64_t batch, m, n, k, flags, lda, ldb, ldc;
    /// A dense product's leading dimensions, from its flags.
    static MatmulShape dense(int64_t batch, int64_t m, int64_t n, int64_t k,
                             int64_t flags);
    using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                           int64_t>;
    Key key() const { return {batch, m, n, k, flags, lda, ldb, ldc}; }
  };
  /// The element types of abi.h's matmuls: all f32; a and b in bf16 and
  /// c and the bias in f32; all bf16 (c rounded once). Sums are f32.
  enum class MatmulTypes { f32, bf16Inputs, bf16 };
  /// abi.h's matmul of `types`.
  void matmul(const void *a, const void *b, void *c, MatmulShape shape, const void *bias,
              MatmulTypes types = MatmulTypes::f32);
  /// One pass of abi.h's conv2d: its two operands in the order abi.h's
  /// call takes them, its result, and the convolution's shape.
  void conv2d(ConvolutionPass pass, const float *first, const float *second,
              float *result, const int64_t shape[15]);
  /// abi.h's fused attention (bf16): o from q, k, v; and the gradients of
  /// q, k and v from o's. `shape` is [batch, heads, Tq, Tk, D, Dv, causal].
  void attention(const void *q, const void *k, const void *v, void *o,
                 const int64_t shape[7]);
  void attentionBackward(const void *q, const void *k, const void *v, const void *gradO,
                         void *gradQ, void *gradK, void *gradV, const int64_t shape[7]);
  /// The same over one packed projection qkv [batch, T, 3, heads, D] (o and
  /// its gradient [batch, T, heads, Dv]): the forward call writes the row
  /// statistics when `stats` is not null, and the backward call reads them.
  void attentionPacked(const void *qkv, void *o, float *stats, const int64_t shape[7]);
  void attentionPackedBackward(const void *qkv, const void *o, const float *stats,
                               const void *gradO, void *gradQkv, const int64_t shape[7]);
  /// abi.h's attention in f32, on Sinter's own kernels (AttentionF32.cpp):
  /// the same layouts as the bf16 calls, heads-major (the backward call
  /// runs the forward pass again for its statistics) or packed.
  void attentionF32(const float *q, const float *k, const float *v, float *o,
                    const int64_t shape[7]);
  void attentionF32Backward(const float *q, const float *k, const float *v,
                            const float *gradO, float *gradQ, float *gradK, float *gradV,
                            const int64_t shape[7]);
  void attentionPackedF32(const float *qkv, float *o, float *stats, const int64_t shape[7]);
  void attentionPackedF32Backward(const float *qkv, const float *o, const float *stats,
                                  const float *gradO, float *gradQkv, const int64_t shape[7]);
  /// abi.h's batch-norm (f32): y, the batch's mean and invstd from x, weight
  /// and bias; and the gradients of x, weight and bias from y's. `shape` is
  /// [n, c, spatial].
  void batchNorm(const float *x, const float *weight, const float *bias, float *y,
                 float *mean, float *invstd, const int64_t shape[3], double epsilon);
  void batchNormBackward(const float *x, const float *dy, const float *weight,
                         const float *mean, const float *invstd, float *dx,
                         float *dweight, float *dbias, const int64_t shape[3],
                         double epsilon);
  /// Waits for the queued work, then copies device memory to the host.
  void read(void *dst, const void *src, int64_t offset, int64_t bytes);
  /// Whether every kernel and library call is timed (SINTER_CUDA_PROFILE).
  bool profiling() const { return profile != nullptr; }
  /// Whether the step waits for each kernel and library call
  /// (SINTER_CUDA_SYNC), so that a failure names the call that failed, not
  /// the next wait.
  bool waitsForEachCall() const { return waitEachCall; }
  /// Waits for the call just queued, `label`; a failure names it.
  void waitForCall(const std::string &label);
  /// Around one kernel or library call when profiling: `kind` is the kind
  /// of work ("kernels", "matmul", ...), `label` names the call.
  void profileBegin();
  void profileEnd(const char *kind, std::string label);
  /// A kernel's name and source line, for messages and the profile.
  const std::string &kernelLabel(int64_t kernel) const;
  /// Whether the calls of the region in progress are to be recorded (the
  /// second run of its signature, captured at its end).
  bool recording() const { return region == GraphRegions::Action::Capture; }
  /// One call of the region in progress, to repeat under capture: its
  /// arguments held by value.
  void record(std::function<void(CudaDevice &)> call) {
    recorded.push_back(std::move(call));
  }
  /// abi.h's graph region `region` starts with this signature, and ends.
  void graphBegin(int64_t region, const int64_t *signature, int64_t count);
  void graphEnd(int64_t region);

private:
  struct Matmul;
  struct Profile;
  struct Convolution;
  struct Attention;
  struct BatchNorm;
  struct AttentionF32;
  struct AttentionF32Unload {
    void operator()(AttentionF32 *kernels) const;
  };
  CudaDevice() = default;
  Status loadKernels();
  /// How the step's work was launched: graphs, or the profile.
  std::string launchActivity() const;
  /// Adds the profiled calls whose work is done to the profile's times.
  void drainProfile();
  /// Records the first failure of queued work; true when `s` is one.
  bool failed(Status s);
  /// Whether a call of the step queues nothing: after a failure, or inside
  /// a region that replays its graph.
  bool skipsWork() const {
    return !firstError.ok() || region == GraphRegions::Action::Replay;
  }
  /// A device workspace of at least `bytes`, grown (after the queued work)
  /// when a library call needs more.
  Expected<void *> workspace(uint64_t bytes);
  /// `bias`: the first call's, whose alignment the heuristic reads.
  Expected<Matmul *> matmulPlan(const MatmulShape &shape, const void *bias = nullptr);
  Expected<Convolution *> convolutionPlan(const int64_t shape[15]);
  Status chooseAlgorithm(Convolution &plan, ConvolutionPass pass);
  Expected<Attention *> attentionPlan(const int64_t shape[7], bool packed);
  Status prepareRecompute(Attention &plan);
  enum class AttentionPass { Forward, ForwardWithStats, Backward };
  /// Runs `plan`'s graph of `pass` on `tensors` (cuDNN's uids to pointers).
  Status runAttention(Attention &plan, AttentionPass pass,
                      std::unordered_map<int64_t, void *> &tensors);
  Expected<BatchNorm *> batchNormPlan(const int64_t shape[3]);
  /// The f32 attention's kernels for `headSize`, loaded at its first call.
  Expected<const F32AttentionKernels *> attentionF32Kernels(int64_t headSize);
  /// An f32 attention call's kernels and `scratchFloats` of workspace (null
  /// for none), once the call is checked (the buffers `vectorAccessed` are
  /// read or written 16 bytes at a time); false when the step skips work or
  /// after a failure, recorded as the call `what`'s.
  bool beginAttentionF32(const int64_t shape[7],
                         std::initializer_list<const void *> vectorAccessed,
                         uint64_t scratchFloats, const char *what,
                         const F32AttentionKernels *&kernels, float *&scratch);
  /// The recorded calls captured in a graph (not run), instantiated,
  /// unless the capture or a call under it failed.
  Expected<cudaGraphExec_t> captureRecorded();
  /// The cuDNN handle, made at the first convolution, attention or batch-norm.
  Status openDnn();

  int index = 0;
  std::string name;
  cudaStream_t compute = nullptr;
  cublasLtHandle_t blasLt = nullptr;
  cudnnHandle_t dnn = nullptr; ///< made at the first cuDNN call
  StagedUploads staging; ///< the step's inputs, copied without waiting
  /// Staged collectives' copies (collectives: GLOO), made when asked for.
  std::unique_ptr<StagingQueues> collectiveStaging;
  void *scratch = nullptr;
  uint64_t scratchBytes = 0;
  uint64_t allocatedBytes = 0; ///< by allocate(): the plans' buffers
  /// Attention's backward calls' recomputed outputs and statistics.
  uint64_t attentionBytes = 0;
  CUmodule module = nullptr;
  std::vector<CUfunction> kernels;
  std::vector<std::string> kernelNames; ///< "name (source line)"
  std::vector<void *> launchParams;     ///< reused by every launch (hot path)
  std::map<MatmulShape::Key, std::unique_ptr<Matmul>> matmuls;
  /// Matmul keys (bias flag set) cuBLASLt has no bias epilogue for: their
  /// bias is written into c's rows and the product added to it.
  std::set<MatmulShape::Key> biasAsRows;
  std::map<std::vector<int64_t>, std::unique_ptr<Convolution>> convolutions;
  std::map<std::vector<int64_t>, std::unique_ptr<BatchNorm>> batchNorms;
  /// Shared: the plans' type is known only where they are made.
  std::map<std::vector<int64_t>, std::shared_ptr<Attention>> attentions;
  std::unique_ptr<AttentionF32, AttentionF32Unload> loadedAttentionF32;
  Status firstError;
  GraphRegions graphs;
  std::unique_ptr<Profile> profile; ///< with SINTER_CUDA_PROFILE
  bool waitEachCall = false;        ///< with SINTER_CUDA_SYNC
  bool tf32Matmuls = false;         ///< precision.matmul TF32
  bool nondeterministic = false;    ///< precision.deterministic false
  /// What the region in progress does; Direct outside one.
  GraphRegions::Action region = GraphRegions::Action::Direct;
  int64_t regionId = -1; ///< the region in progress, or -1
  /// The calls of a region's second run, which ran direct; captured at
  /// its end, so a capture that fails loses no work.
  std::vector<std::function<void(CudaDevice &)>> recorded;
  bool capturing = false; ///< the recorded calls are being captured
  std::string captureProblem; ///< why the last capture that failed did
  /// A graph was launched since the last synchronize (whose failure then
  /// cannot name its kernel).
  bool graphLaunched = false;
};

/// The GPU this process opened (openCudaDevice), or null.
CudaDevice *activeDevice();

} // namespace sinter::rt::cuda

#endif // SINTER_RT_CUDA_CUDADEVICE_H
