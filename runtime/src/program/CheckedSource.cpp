//===- CheckedSource.cpp - Integer inputs checked against their model --===//

#include "program/CheckedSource.h"

#include <cstring>
#include <optional>

namespace sinter::rt {
namespace {

struct Bound {
  std::string input;
  uint64_t limit = 0; ///< values in [0, limit)
  std::optional<int64_t> allowed; ///< ignore_index
  std::string source;
};

class CheckedSource : public BatchSource {
public:
  CheckedSource(std::unique_ptr<BatchSource> inner, std::vector<Bound> bounds,
                std::map<std::string, std::string> fileOf, std::string what)
      : inner(std::move(inner)), bounds(std::move(bounds)),
        fileOf(std::move(fileOf)), what(std::move(what)) {}

  uint64_t numSamples() const override { return inner->numSamples(); }
  const std::vector<InputSpec> &inputs() const override {
    return inner->inputs();
  }

  Status gather(const std::vector<uint64_t> &ids,
                std::vector<HostTensor> &out) const override {
    SINTER_RT_RETURN_IF_ERROR(inner->gather(ids, out));
    for (const HostTensor &t : out)
      for (const Bound &b : bounds)
        if (b.input == t.name)
          SINTER_RT_RETURN_IF_ERROR(check(t, b, ids));
    return Status::success();
  }

private:
  Status check(const HostTensor &t, const Bound &b,
               const std::vector<uint64_t> &ids) const {
    if (t.dtype != DType::I64 && t.dtype != DType::I32)
      return Status::success(); // floats and bools: nothing indexes with them
    uint64_t n = t.bytes.size() / dtypeSize(t.dtype);
    uint64_t perSample = ids.empty() ? n : n / ids.size();
    for (uint64_t i = 0; i < n; ++i) {
      int64_t v;
      if (t.dtype == DType::I64) {
        std::memcpy(&v, t.bytes.data() + 8 * i, 8);
      } else {
        int32_t v32;
        std::memcpy(&v32, t.bytes.data() + 4 * i, 4);
        v = v32;
      }
      if ((v >= 0 && uint64_t(v) < b.limit) || (b.allowed && v == *b.allowed))
        continue;
      auto file = fileOf.find(b.input);
      std::string where =
          file != fileOf.end() && !file->second.empty() ? file->second + ": " : "";
      std::string sample = std::to_string(ids[i / perSample]);
      std::string allowed =
          b.allowed ? " or the ignore_index " + std::to_string(*b.allowed) : "";
      return Status::error(
          what + ": " + where + "input '" + b.input + "', sample " + sample +
          ", element " + std::to_string(i % perSample) + ": the value " +
          std::to_string(v) + " is outside [0, " + std::to_string(b.limit) +
          ")" + allowed + " that " + b.source + " accepts");
    }
    return Status::success();
  }

  std::unique_ptr<BatchSource> inner;
  std::vector<Bound> bounds;
  std::map<std::string, std::string> fileOf;
  std::string what;
};

} // namespace

std::unique_ptr<BatchSource>
checkValueBounds(std::unique_ptr<BatchSource> source, const StepPlan &plan,
                 std::map<std::string, std::string> fileOf, std::string what) {
  std::vector<Bound> bounds;
  for (const BufferSpec &b : plan.buffers)
    if (b.kind == BufferKind::Input && b.valueBound > 0)
      bounds.push_back({b.name, b.valueBound, b.ignoreIndex,
                        b.valueBoundSource.empty() ? "the model"
                                                   : b.valueBoundSource});
  if (bounds.empty())
    return source;
  return std::make_unique<CheckedSource>(std::move(source), std::move(bounds),
                                         std::move(fileOf), std::move(what));
}

} // namespace sinter::rt
