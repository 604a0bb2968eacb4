//===- Passes.td - The CUDA target's passes ----------------*- tablegen -*-===//
#ifndef SINTER_TARGET_CUDA_PASSES_TD
#define SINTER_TARGET_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def CUDAMapToGPU : Pass<"sinter-cuda-map-to-gpu", "mlir::ModuleOp"> {
  let summary = "Runs every loop nest over device memory as a GPU kernel";
  let description = [{
    After linalg becomes loops, in every function: each outermost
    `scf.parallel` becomes a `gpu.launch` over its iterations laid out
    flat, 256 threads a block, each thread delinearizing its index (bounds
    checked, so no size needs to divide anything) and running one
    iteration; reductions inside it stay sequential in the thread (long
    ones were given blocks by `sinter-cuda-block-reductions`). A nest of
    at least 2^20 iterations with a straight-line body gives each thread
    four iterations, 256 apart, run op by op side by side so that their
    loads are in flight together; the last block checks each iteration. A sequential
    nest `for p { for d }` whose inner loop writes only elements indexed by
    d (a scatter-add of rows) becomes a thread per d, each walking p in
    order; when it writes at one row computed from p (an embedding
    gradient's id), groups of blocks split the rows as well, and a warp
    tests 32 positions at a time for its group's rows, a lane each, then
    walks the matching ones its ballot (`nvvm.vote.sync`) gives, in order.
    Each other outermost `scf.for` that touches memory and calls
    nothing, and each `memref.store` outside loops, becomes a launch of one
    thread. Loops and
    branches around calls or launches (the micro-batch loop, the update's
    guard) stay on the host, their bodies mapped in turn.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect", "mlir::LLVM::LLVMDialect",
                           "mlir::NVVM::NVVMDialect"];
}

def CUDASplitColumnReductions
    : Pass<"sinter-cuda-split-column-reductions", "mlir::ModuleOp"> {
  let summary = "Splits narrow column reductions (bias gradients) over chunks of rows";
  let description = [{
    On linalg on tensors, before bufferization: a `linalg.generic` whose
    parallel loops come first, whose every input that moves with a reduced
    loop has a parallel loop as its last index (a column sum), whose
    outputs are plain folds (add, mul, max, min) and too few to fill the
    GPU with a thread each, is split in two. One reduced loop, evenly
    divisible, is cut into K chunks (its inputs expanded there): a generic
    with a new outermost parallel loop over the chunks folds each chunk into
    a [K, outputs] partial started at the combiner's identity (taken at each
    chunk's first row, so the partial's tensor is not filled first), and a second
    generic folds the partials, in order, into the original output. K aims
    at 128K threads, each folding at least 32 rows; a split that would give
    fewer than 8192 (chunk, output) pairs is not made. The order of the fold
    depends on the shapes alone.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def CUDAFuseIntoRowReductions
    : Pass<"sinter-cuda-fuse-into-row-reductions", "mlir::ModuleOp"> {
  let summary = "A row reduction computes and stores a producer that other ops read";
  let description = [{
    On linalg on tensors: a reduction that `sinter-cuda-block-reductions`
    will run as a block per row (parallel loops first, at least 32 reduced
    elements, plain folds, not a column sum) and an all-parallel
    `linalg.generic` producer of one of its inputs, read element by element,
    whose result other ops read after it (a residual stream under a layer
    norm's statistics), fuse into one `linalg.generic`. It computes the
    producer's values, folds them, and yields them as an output of its own
    indexed by every loop, which replaces the producer's result. The values
    are computed and folded as before; the pass that stored them and the
    read of them are one.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def CUDABlockReductions : Pass<"sinter-cuda-block-reductions", "mlir::ModuleOp"> {
  let summary = "Runs each long linalg reduction as a block of threads per output";
  let description = [{
    Before linalg becomes loops: each `linalg.generic` on static buffers
    whose loops are parallel and then reduced, over at least 32 reduced
    elements, and whose every output is one combiner (add, mul, max, min)
    of its accumulator and a value of the inputs, becomes a `gpu.launch` of
    one block per output element (256 threads, or 32 below 256 reduced
    elements). The block's threads stride over the reduced elements, each
    folding into a partial that starts at the combiner's identity;
    `gpu.all_reduce` combines the partials and thread 0 folds the total
    into the output; an output that a `linalg.fill` writes just before
    (nothing with memory effects between) takes the fill's value instead of
    its own, and the fill is dropped. A generic marked
    `sinter.online_softmax` combines its (maximum, sum) pairs: the block's
    maximum, then each thread's sum rescaled to it. A column reduction (see
    `sinter-cuda-split-column-reductions`) with at least 8192 outputs keeps
    a thread per output, whose warps read along rows. Other generics are
    left to `sinter-cuda-map-to-gpu`.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::affine::AffineDialect",
                           "mlir::memref::MemRefDialect"];
}

def CUDARegisterAccumulators
    : Pass<"sinter-cuda-register-accumulators", "mlir::ModuleOp"> {
  let summary = "A thread's running sum lives in a register, not in memory";
  let description = [{
    After loops become kernels: inside each `gpu.launch`, where a
    `memref.store` in an `scf.for`'s body block is the loop's only write to
    its buffer, and the loop's only read of that buffer is one `memref.load`
    of the same indices before it (the buffer and indices defined outside
    the loop), the loop loads the element once before it, carries it as an
    iter_arg, and stores it once after
    (as `sinter-cpu-register-accumulators`, without its reassociation and
    loop hints). Loops are taken innermost first. The order of the sum is
    unchanged.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::scf::SCFDialect"];
}

def CUDAUnrollSums : Pass<"sinter-cuda-unroll-sums", "mlir::ModuleOp"> {
  let summary = "A thread's summing or row-walking loop runs four iterations a body, loads first";
  let description = [{
    Inside each `gpu.launch`, an innermost `scf.for` that carries a value
    (a sum, after `sinter-cuda-register-accumulators`) is unrolled by 4
    when its bounds are constants and it runs a multiple of 4 iterations,
    at least 8, or when it starts at its thread's index along x in a
    launch of at most `step` threads along x (a block's threads striding
    over a row) and its extent and step are constants whose ratio is at
    least 8 (a remainder loop takes the last iterations). Then the loads
    of buffers the loop never stores to, with the index computations they
    need (from the induction variable and values defined outside, not from
    what the loop carries), move to the top of its body in their order,
    so a warp has the loads of four iterations in flight at once. The sum
    still adds the values in the loop's order. Stores to other buffers
    (a partial sum's side output) stay where they were: the loop's buffers
    are distinct, as for the register accumulators. A loop that carries
    nothing but stores each iteration (a walk over a row after its
    reduction: cross-entropy's gradient, a layer norm's normalization) is
    unrolled the same way; there a load moves first only when its buffer
    provably shares no byte with any the loop stores to (BufferOverlaps).
  }];
  let dependentDialects = ["mlir::scf::SCFDialect"];
}

def CUDABareKernelArguments
    : Pass<"sinter-cuda-bare-kernel-arguments", "mlir::ModuleOp"> {
  let summary = "Strided views cross into kernels as their base buffers";
  let description = [{
    Kernels take buffers as bare pointers, which only static memrefs of the
    identity layout can be. Just before outlining, each other memref a
    `gpu.launch` uses (a slice) is replaced inside it by a
    `memref.reinterpret_cast` of its allocation's base buffer
    (`memref.extract_strided_metadata` outside), so the base pointer and, if
    dynamic, the offset cross instead. Canonicalization folds the pair back,
    so nothing may canonicalize between this pass and the outlining. A
    constant global a kernel reads (a causal mask), or a view of one, is
    taken inside the launch instead (its `memref.get_global` and views
    cloned there): the host's copy is at a host address, and the outlining
    copies the global into the kernel's module.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def CUDAMergeKernels : Pass<"sinter-cuda-merge-kernels", "mlir::ModuleOp"> {
  let summary = "Puts every kernel in one module, equal kernels once";
  let description = [{
    After `gpu-kernel-outlining` (one `gpu.module` per launch), moves every
    kernel into one `gpu.module @sinter_kernels`. Kernels with the same body
    (the same loop of another layer) become one, named after the first
    function that launched it (`<function>_k<N>`), and every launch is
    retargeted; the constant globals they read move with them, once each.
    The kernels' names and source lines, in order, go to the
    module's `sinter.cuda_kernels`: a launch names its kernel by its index
    in that list.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def CUDAHostMemory : Pass<"sinter-cuda-host-memory", "mlir::ModuleOp"> {
  let summary = "Host reads of device memory become runtime copies";
  let description = [{
    What the host code still loads from a buffer (a loss or a norm it
    branches on, a count it sums over the ranks) lives in device memory: each
    `memref.load` outside the kernels becomes `sinter_cuda_read` (abi.h),
    which waits for the compute stream and copies the element into a host
    slot. Host allocations (`memref.alloca`) are read directly.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def CUDAGraphRegions : Pass<"sinter-cuda-graph-regions", "mlir::ModuleOp"> {
  let summary = "Marks each stretch of device work the runtime may replay as a CUDA graph";
  let description = [{
    After the host's reads of device memory are runtime calls: in each block
    of the host code, every maximal run of kernel launches and library calls
    (`sinter_cuda_*`, and calls of functions that do only that) with no
    other host work between them (pure arithmetic, views and pointers
    aside), of at least two launches, is bracketed by
    `sinter_cuda_graph_begin(region, signature, count)` and
    `sinter_cuda_graph_end(region)` (abi.h). The signature is every value
    the run takes from outside it, constants aside, as 8-byte slots: the
    buffers' pointers and the scalars. The runtime captures a region's work
    in a CUDA graph and replays it only for the signature it was captured
    with. A run that takes a buffer of a dynamic layout is left unmarked.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def CUDAFatbinary : Pass<"sinter-cuda-fatbinary", "mlir::ModuleOp"> {
  let summary = "Assembles each chip's PTX and puts them in one fatbinary";
  let description = [{
    After `gpu-module-to-binary` with one `#nvvm.target` per chip and
    PTX objects (format `isa`): each `gpu.binary` gets one fatbinary
    object instead, holding a cubin per chip (the toolkit's `ptxas` at the
    target's optimization level) and the PTX of the newest chip, so that
    the driver loads the cubin of the GPU's architecture and compiles the
    PTX on a newer one. The object's target is the newest chip's. A chip
    whose PTX `ptxas` rejects is an error with ptxas's message.
  }];
  let options = [
    Option<"toolkitPath", "toolkit-path", "std::string", "\"\"",
           "The CUDA toolkit whose bin/ptxas and bin/fatbinary run "
           "(empty: found on PATH)">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::NVVM::NVVMDialect"];
}

def CUDALaunchCalls : Pass<"sinter-cuda-launch-calls", "mlir::ModuleOp"> {
  let summary = "Embeds the kernel binary and launches through the runtime";
  let description = [{
    After `gpu-module-to-binary`: the `gpu.binary @sinter_kernels` becomes
    the constants `sinter_cuda_module` (its fatbinary: sm_80 and sm_90
    cubins and sm_90 PTX, from `sinter-cuda-fatbinary`) and `sinter_cuda_kernel_names` (abi.h), and every `gpu.launch_func`
    a call of `sinter_cuda_launch` with the kernel's index, the grid, and
    its arguments in 8-byte slots: buffers as device pointers, scalars in
    the low bytes. The runtime loads the module once and launches on its
    compute stream.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def CUDALaunchesOnHost : Pass<"sinter-cuda-launches-on-host", "mlir::ModuleOp"> {
  let summary = "Runs kernels as host loops, so that a test can execute them on a CPU";
  let description = [{
    For tests only: each `gpu.launch` becomes nested `scf.for` loops over
    its blocks and threads, x fastest, its body inlined with the ids and
    sizes those loops give. A `gpu.all_reduce` at the top of the body
    (add, mul, min or max; blocks along x only) cuts it in phases: each
    thread runs a phase and keeps the values later phases read in an
    array with an element per thread, and the host combines the reduced
    value's array, in thread order, before the next phase. A warp's ballot
    (`nvvm.vote.sync ballot` over every lane, in blocks of whole warps
    along x, its predicate computed from the thread index along x, loads
    of buffers the launch never writes and indices of loops whose bounds
    are the warp's) is computed by each thread as its warp's 32
    predicates, and `gpu.lane_id` as the thread index's remainder by 32.
    What a kernel
    computes for each thread is then computed on the CPU, where
    `mlir-runner` can check it. A launch whose threads meet otherwise
    (barriers, shuffles, shared memory) is left as it is, unless `all` is
    set: then it is an error at the launch, as a whole step run on the host
    (sinterc --cuda-on-host) needs every kernel to run there.
  }];
  let options = [
    Option<"all", "all", "bool", "false",
           "Fail on a launch that cannot run on the host">,
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect"];
}

def CUDAConsumersFollowReductions
    : Pass<"sinter-cuda-consumers-follow-reductions", "mlir::ModuleOp"> {
  let summary = "Moves the loops that read a reduction's results to just after it";
  let description = [{
    On linalg on tensors, before bufferization: each all-parallel
    `linalg.generic` that reads a result of a reduction (a generic with
    reduced loops) in its block moves up to just after it (after the
    loops moved there before it), with the ops that make its other
    operands, when those and every op it passes touch no memory (no
    calls in between). Nothing else changes order; on
    tensors the move computes the same. The memory plan then gives the
    loop's result bytes of its own beside what the ops it passed use, so
    that `sinter-cuda-block-reductions` can run it in the reduction's
    launch (cross-entropy's gradient beside its statistics, not after the
    loss's sum, whose partials the plan would otherwise give it).
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def CUDAFoldFilledOutputs : Pass<"sinter-cuda-fold-filled-outputs", "mlir::ModuleOp"> {
  let summary = "An output each iteration writes once reads its fill's constant";
  let description = [{
    On linalg on tensors: a `linalg.generic` output whose indexing map is a
    permutation of all the loops is visited once per element, so what its
    payload reads of it is the value before. When a `linalg.fill` of a
    constant made that value, the payload takes the constant and the
    output the fill's destination (the fill goes when nothing else reads
    it). The output is then written and never read, which lets
    `sinter-cuda-block-reductions` run a reduction beside it as a block of
    threads (the gradient norm's squares of a 1-D parameter).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def CUDAPitchMatmulRows : Pass<"sinter-cuda-pitch-matmul-rows", "mlir::ModuleOp"> {
  let summary = "Pads the rows of the step's matmul operands to 16 bytes";
  let description = [{
    On linalg on tensors, before bufferization: a `tensor.empty` that
    becomes an operand or the result of a `linalg.matmul` (through the ops
    that write it in place and reshapes that keep its rows), whose rows
    are not a multiple of 16 bytes (f32, bf16), becomes the first columns
    (`tensor.extract_slice`) of an empty tensor with rows padded to 16
    bytes. Only where every use reads or writes it through indices: linalg
    ops (not batched matmuls or convolutions), `tensor.extract`, and
    reshapes that keep the rows. cuBLASLt's fast kernels need rows that
    start 16 bytes apart; `sinter-library-calls` passes the padded row
    lengths (`sinter_cuda_matmul_pitched_*`).
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def CUDAMergeParallelLoops : Pass<"sinter-cuda-merge-parallel-loops", "mlir::ModuleOp"> {
  let summary = "Runs neighbouring independent loop nests over the same space as one";
  let description = [{
    After linalg becomes loops, before `sinter-cuda-map-to-gpu`: two
    `scf.parallel` nests in one block, with only ops that touch no memory
    between them, the same bounds and steps, straight-line bodies and no
    reductions, become one nest whose body runs the first's and then the
    second's, when neither writes a byte the other reads or writes (the
    memory plan's byte ranges; BufferAccesses.h). Each iteration computes
    what it did; the two launches are one (attention's query, key and
    value each copied to the layout cuDNN reads, and their gradients
    back).
  }];
  let dependentDialects = ["mlir::scf::SCFDialect"];
}

#endif // SINTER_TARGET_CUDA_PASSES_TD
