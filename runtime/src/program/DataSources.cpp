//===- DataSources.cpp - Batch sources from the config's data section ---===//

#include "program/DataSources.h"

#include "program/CheckedSource.h"
#include "program/Synthetic.h"

namespace sinter::rt {

static std::string resolve(const std::string &baseDir, const std::string &path) {
  if (path.empty() || path[0] == '/' || baseDir.empty())
    return path;
  return baseDir + (baseDir.back() == '/' ? "" : "/") + path;
}

/// The size of a synthetic data set: enough batches for any benchmark.
static constexpr uint64_t kSyntheticSamples = 1 << 16;

Expected<std::unique_ptr<BatchSource>>
openDataSource(const config::TrainConfig::DataSource &source,
               const std::string &baseDir, const StepPlan &plan,
               const std::string &what, uint64_t seed) {
  std::unique_ptr<BatchSource> batches;
  std::map<std::string, std::string> fileOf; // input -> file, for messages
  if (source.npy_size() > 0) {
    std::vector<std::pair<std::string, NpyArray>> arrays;
    for (const auto &npy : source.npy()) {
      fileOf[npy.input()] = npy.path();
      Expected<NpyArray> array = NpyArray::read(resolve(baseDir, npy.path()));
      if (!array.ok())
        return array.status();
      arrays.emplace_back(npy.input(), array.take());
    }
    auto made = makeNpyBatchSource(std::move(arrays));
    if (!made.ok())
      return made.status();
    batches = made.take();
  } else if (source.has_tokens()) {
    const BufferSpec *idx = plan.find("idx", BufferKind::Input);
    if (!idx || idx->shape.size() != 2)
      return Status::error(what + ": token files feed inputs 'idx' and "
                                  "'targets' of shape [B, T]; the model has no "
                                  "such 'idx'");
    TokenType type = source.tokens().dtype() ==
                             config::TrainConfig::Tokens::UINT32
                         ? TokenType::U32
                         : TokenType::U16;
    fileOf["idx"] = fileOf["targets"] = source.tokens().path();
    auto tokens = TokenFile::open(resolve(baseDir, source.tokens().path()), type);
    if (!tokens.ok())
      return tokens.status();
    auto made = makeTokenBatchSource(tokens.take(), idx->shape[1], "idx",
                                     "targets", idx->dtype);
    if (!made.ok())
      return made.status();
    batches = made.take();
  } else {
    // synthetic {} (or nothing): deterministic samples of the right shapes.
    batches = makeSyntheticBatchSource(plan, seed, kSyntheticSamples);
  }

  for (const BufferSpec &b : plan.buffers) {
    if (b.kind != BufferKind::Input)
      continue;
    const InputSpec *fed = nullptr;
    for (const InputSpec &in : batches->inputs())
      if (in.name == b.name)
        fed = &in;
    if (!fed)
      return Status::error(what + ": no data for input '" + b.name +
                           "' of model '" + plan.model + "'");
    Shape sample(b.shape.begin() + 1, b.shape.end());
    if (fed->sampleShape != sample)
      return Status::error(what + ": samples of input '" + b.name + "' are " +
                           formatShape(fed->sampleShape) + " but the model "
                           "declares " + formatShape(sample) +
                           " (after the batch dimension)");
  }
  return checkValueBounds(std::move(batches), plan, std::move(fileOf), what);
}

} // namespace sinter::rt
