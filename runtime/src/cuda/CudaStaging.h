//===- CudaStaging.h - A GPU's staging queues: two copy streams ---*- C++ -*-===//
//
// Host-staged collectives on a GPU (dist/StagedCommunicator.h): pinned host
// buffers, a stream for device-to-host copies and one for host-to-device
// copies, so that a bucket's way down never waits behind another's way
// back; events as marks.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_CUDA_CUDASTAGING_H
#define SINTER_RT_CUDA_CUDASTAGING_H

#include "device/StagingQueues.h"

#include <cuda_runtime_api.h>

#include <memory>

namespace sinter::rt::cuda {

/// Staging queues beside `compute`, the step's stream on GPU `gpu`.
Expected<std::unique_ptr<StagingQueues>> createCudaStaging(int gpu, cudaStream_t compute);

} // namespace sinter::rt::cuda

#endif // SINTER_RT_CUDA_CUDASTAGING_H
