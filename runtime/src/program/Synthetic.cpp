//===- Synthetic.cpp - Synthetic data for a step's inputs ---------------===//

#include "program/Synthetic.h"

#include "core/FastSampling.h"
#include "program/Convert.h"

#include <algorithm>

namespace sinter::rt {
namespace {

class SyntheticSource : public BatchSource {
public:
  SyntheticSource(const StepPlan &plan, uint64_t seed, uint64_t n)
      : seed(seed), n(n) {
    for (const BufferSpec &b : plan.buffers) {
      if (b.kind != BufferKind::Input)
        continue;
      specs.push_back({b.name, b.dtype, Shape(b.shape.begin() + 1, b.shape.end())});
      // Integer inputs take values below 2^31 (they are i32 or index
      // tensors), so a bound beyond that is the same as 2^31.
      bounds.push_back((uint32_t)std::min<uint64_t>(b.valueBound ? b.valueBound : 2,
                                                    uint64_t(1) << 31));
    }
  }

  uint64_t numSamples() const override { return n; }
  const std::vector<InputSpec> &inputs() const override { return specs; }

  Status gather(const std::vector<uint64_t> &ids,
                std::vector<HostTensor> &out) const override {
    out.clear();
    for (size_t i = 0; i < specs.size(); ++i) {
      const InputSpec &spec = specs[i];
      uint64_t per = numElements(spec.sampleShape).value_or(0);
      HostTensor t{spec.name, spec.dtype, spec.sampleShape, {}};
      t.shape.insert(t.shape.begin(), ids.size());
      t.bytes.resize(ids.size() * per * dtypeSize(spec.dtype));
      // One stream per input, indexed by (sample, element): any batching
      // of the same samples sees the same values.
      PhiloxStream stream{seed, fnv1a64("synthetic." + spec.name)};
      bool real = isFloatingPoint(spec.dtype), direct = spec.dtype == DType::F32;
      // f32 is made in place; other types go through these and convert.
      std::vector<float> reals(real && !direct ? per : 0);
      std::vector<int64_t> integers(real ? 0 : per);
      for (size_t s = 0; s < ids.size(); ++s) {
        uint8_t *to = t.bytes.data() + s * per * dtypeSize(spec.dtype);
        if (direct) {
          fastStandardNormals(stream, ids[s] * per, per, reinterpret_cast<float *>(to));
          continue;
        }
        if (real) {
          fastStandardNormals(stream, ids[s] * per, per, reals.data());
          SINTER_RT_RETURN_IF_ERROR(convertElements(reals.data(), DType::F32, to, spec.dtype, per));
          continue;
        }
        fastUniformIntegers(stream, ids[s] * per, per, bounds[i], integers.data());
        SINTER_RT_RETURN_IF_ERROR(
            convertElements(integers.data(), DType::I64, to, spec.dtype, per));
      }
      out.push_back(std::move(t));
    }
    return Status::success();
  }

private:
  uint64_t seed, n;
  std::vector<InputSpec> specs;
  std::vector<uint32_t> bounds;
};

} // namespace

std::unique_ptr<BatchSource> makeSyntheticBatchSource(const StepPlan &plan,
                                                      uint64_t seed,
                                                      uint64_t numSamples) {
  return std::make_unique<SyntheticSource>(plan, seed, numSamples);
}

} // namespace sinter::rt
