//===- BatchSource.cpp - Gather samples into contiguous host buffers ------===//

#include "data/BatchSource.h"

#include "support/Format.h"

#include <cstring>

namespace sinter::rt {
namespace {

/// Sizes `t` for `rows` samples of `spec`, keeping its buffer when possible.
Status shapeTensor(const InputSpec &spec, uint64_t rows, HostTensor &t) {
  t.name = spec.name;
  t.dtype = spec.dtype;
  t.shape.assign(1, rows);
  t.shape.insert(t.shape.end(), spec.sampleShape.begin(), spec.sampleShape.end());
  std::optional<uint64_t> bytes = numBytes(t.shape, dtypeSize(spec.dtype));
  if (!bytes || *bytes > (uint64_t)SIZE_MAX / 2)
    return Status::error("input '" + spec.name + "': a batch of " + formatShape(t.shape) +
                         " does not fit in memory");
  t.bytes.resize((size_t)*bytes);
  return Status::success();
}

class NpySource final : public BatchSource {
public:
  NpySource(std::vector<std::pair<std::string, NpyArray>> arrays, uint64_t n)
      : arrays(std::move(arrays)), n(n) {
    for (auto &[name, arr] : this->arrays) {
      InputSpec spec{name, arr.dtype(), Shape(arr.shape().begin() + 1, arr.shape().end())};
      rowBytes.push_back(n ? arr.byteSize() / n : 0);
      specs.push_back(std::move(spec));
    }
  }

  uint64_t numSamples() const override { return n; }
  const std::vector<InputSpec> &inputs() const override { return specs; }

  Status gather(const std::vector<uint64_t> &ids, std::vector<HostTensor> &out) const override {
    out.resize(arrays.size());
    for (size_t a = 0; a < arrays.size(); ++a) {
      SINTER_RT_RETURN_IF_ERROR(shapeTensor(specs[a], ids.size(), out[a]));
      const NpyArray &arr = arrays[a].second;
      uint64_t row = rowBytes[a];
      for (size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] >= n)
          return Status::error(arr.path() + ": sample " + std::to_string(ids[i]) +
                               " is out of range; the array has " + formatCount(n) + " rows");
        if (row)
          std::memcpy(out[a].bytes.data() + i * row, arr.data() + ids[i] * row, (size_t)row);
      }
    }
    return Status::success();
  }

private:
  std::vector<std::pair<std::string, NpyArray>> arrays;
  std::vector<InputSpec> specs;
  std::vector<uint64_t> rowBytes;
  uint64_t n;
};

class TokenSource final : public BatchSource {
public:
  TokenSource(TokenFile tokens, uint64_t seqLen, std::string in, std::string tgt, DType dtype)
      : tokens(std::move(tokens)), seqLen(seqLen) {
    specs.push_back({std::move(in), dtype, {seqLen}});
    specs.push_back({std::move(tgt), dtype, {seqLen}});
  }

  uint64_t numSamples() const override { return tokens.numWindows(seqLen); }
  const std::vector<InputSpec> &inputs() const override { return specs; }

  Status gather(const std::vector<uint64_t> &ids, std::vector<HostTensor> &out) const override {
    out.resize(2);
    SINTER_RT_RETURN_IF_ERROR(shapeTensor(specs[0], ids.size(), out[0]));
    SINTER_RT_RETURN_IF_ERROR(shapeTensor(specs[1], ids.size(), out[1]));
    size_t rowBytes = (size_t)seqLen * dtypeSize(specs[0].dtype);
    for (size_t i = 0; i < ids.size(); ++i)
      SINTER_RT_RETURN_IF_ERROR(tokens.copyWindow(ids[i], seqLen, specs[0].dtype,
                                                  out[0].bytes.data() + i * rowBytes,
                                                  out[1].bytes.data() + i * rowBytes));
    return Status::success();
  }

private:
  TokenFile tokens;
  uint64_t seqLen;
  std::vector<InputSpec> specs;
};

} // namespace

Expected<std::unique_ptr<BatchSource>>
makeNpyBatchSource(std::vector<std::pair<std::string, NpyArray>> arrays) {
  if (arrays.empty())
    return Status::error("npy data: no arrays; expected at least one npy { input: ... path: ... }");
  for (size_t a = 0; a < arrays.size(); ++a) {
    const NpyArray &arr = arrays[a].second;
    if (arr.shape().empty())
      return Status::error(arr.path() + ": the array is a scalar (shape []); input '" +
                           arrays[a].first + "' needs a first dimension that indexes samples");
    for (size_t b = 0; b < a; ++b)
      if (arrays[b].first == arrays[a].first)
        return Status::error("npy data: input '" + arrays[a].first + "' is given twice (" +
                             arrays[b].second.path() + " and " + arr.path() + ")");
    const NpyArray &first = arrays[0].second;
    if (arr.shape()[0] != first.shape()[0])
      return Status::error(arr.path() + " has " + formatCount(arr.shape()[0]) + " rows but " +
                           first.path() + " has " + formatCount(first.shape()[0]) +
                           "; every npy input must have the same first dimension (one row per sample)");
  }
  uint64_t n = arrays[0].second.shape()[0];
  return std::unique_ptr<BatchSource>(new NpySource(std::move(arrays), n));
}

Expected<std::unique_ptr<BatchSource>>
makeTokenBatchSource(TokenFile tokens, uint64_t seqLen, std::string inputsName,
                     std::string targetsName, DType dtype) {
  if (dtype != DType::I64 && dtype != DType::I32)
    return Status::error(tokens.path() + ": token inputs must be i64 or i32, not " +
                         dtypeName(dtype));
  if (seqLen == 0)
    return Status::error(tokens.path() + ": the sequence length T is 0; expected at least 1");
  if (tokens.numWindows(seqLen) == 0)
    return Status::error(tokens.path() + ": the file's " + formatCount(tokens.numTokens()) +
                         " tokens are fewer than one window of T+1 = " +
                         formatCount(seqLen + 1));
  return std::unique_ptr<BatchSource>(new TokenSource(std::move(tokens), seqLen,
                                                      std::move(inputsName),
                                                      std::move(targetsName), dtype));
}

} // namespace sinter::rt
