//===- BatchSource.h - Gather samples into contiguous host buffers -*- C++ -*-===//
//
// A batch source turns a list of sample ids (from the Sampler) into one
// contiguous buffer per model input, row i holding sample ids[i]:
//  - npy: one .npy array per input, all with the same first dimension N;
//    sample i is row i of each, copied bytes as stored (dtype unchanged).
//  - tokens: a TokenFile and a sequence length T; sample i is window i
//    (TokenFile.h), giving an inputs [b, T] and a targets [b, T] tensor as
//    i64 (or i32).
// gather() is const and only reads mapped files, so one source can serve
// several threads.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_DATA_BATCHSOURCE_H
#define SINTER_RT_DATA_BATCHSOURCE_H

#include "data/Npy.h"
#include "data/TokenFile.h"
#include "sinter/rt/DType.h"
#include "sinter/rt/Shape.h"
#include "sinter/rt/Status.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sinter::rt {

/// One model input of a batch: its per-sample shape (the batch dimension
/// excluded) and element type.
struct InputSpec {
  std::string name;
  DType dtype = DType::F32;
  Shape sampleShape;
};

/// A gathered tensor: shape [b, sampleShape...], row-major.
struct HostTensor {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  std::vector<uint8_t> bytes;
};

class BatchSource {
public:
  virtual ~BatchSource() = default;
  virtual uint64_t numSamples() const = 0;
  virtual const std::vector<InputSpec> &inputs() const = 0;
  /// Sets `out` to one tensor per input (reusing its buffers when sizes
  /// match), row i holding sample `ids[i]`.
  virtual Status gather(const std::vector<uint64_t> &ids, std::vector<HostTensor> &out) const = 0;
};

/// Named .npy arrays, e.g. {{"x", x.npy}, {"y", y.npy}}; checks that each has
/// rank >= 1 and that all share the first dimension.
Expected<std::unique_ptr<BatchSource>>
makeNpyBatchSource(std::vector<std::pair<std::string, NpyArray>> arrays);

/// Windows of `seqLen` + 1 tokens; the two inputs are named `inputsName`
/// and `targetsName` and have type `dtype` (I64 or I32).
Expected<std::unique_ptr<BatchSource>>
makeTokenBatchSource(TokenFile tokens, uint64_t seqLen, std::string inputsName = "idx",
                     std::string targetsName = "targets", DType dtype = DType::I64);

} // namespace sinter::rt

#endif // SINTER_RT_DATA_BATCHSOURCE_H
