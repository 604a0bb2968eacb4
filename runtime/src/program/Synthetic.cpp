//===- Synthetic.cpp - Synthetic data for a step's inputs ---------------===//

#include "program/Synthetic.h"

#include "core/Init.h"
#include "program/Convert.h"

#include <cmath>

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
      bounds.push_back(b.valueBound ? b.valueBound : 2);
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
      Shape all = spec.sampleShape;
      all.insert(all.begin(), n);
      bool real = isFloatingPoint(spec.dtype);
      std::vector<double> values(per);
      for (size_t s = 0; s < ids.size(); ++s) {
        // One stream per input, indexed by (sample, element): any batching
        // of the same samples sees the same values.
        SINTER_RT_RETURN_IF_ERROR(fill(
            "synthetic." + spec.name, real ? InitKind::Normal : InitKind::Uniform,
            real ? std::vector<double>{0, 1}
                 : std::vector<double>{0, double(bounds[i])},
            DType::F64, all, seed, ids[s] * per, per, values.data()));
        if (!real)
          for (double &v : values)
            v = std::floor(v);
        SINTER_RT_RETURN_IF_ERROR(convertElements(
            values.data(), DType::F64,
            t.bytes.data() + s * per * dtypeSize(spec.dtype), spec.dtype, per));
      }
      out.push_back(std::move(t));
    }
    return Status::success();
  }

private:
  uint64_t seed, n;
  std::vector<InputSpec> specs;
  std::vector<uint64_t> bounds;
};

} // namespace

std::unique_ptr<BatchSource> makeSyntheticBatchSource(const StepPlan &plan,
                                                      uint64_t seed,
                                                      uint64_t numSamples) {
  return std::make_unique<SyntheticSource>(plan, seed, numSamples);
}

} // namespace sinter::rt
