//===- Checkpoint_test.cpp - Saving and resuming a training run -----------===//

#include "program/Checkpoint.h"

#include "checkpoint/Safetensors.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

using namespace sinter::rt;
using namespace sinter::rt::test;

namespace {

BufferSpec spec(const std::string &name, BufferKind kind, DType dtype, Shape shape,
                std::string slot = "") {
  BufferSpec b;
  b.name = name;
  b.kind = kind;
  b.dtype = dtype;
  b.shape = std::move(shape);
  b.slot = std::move(slot);
  b.byteSize = *numBytes(b.shape, dtypeSize(dtype));
  return b;
}

/// A small AdamW train step: two params, a state, their moments, and buffers
/// a checkpoint does not hold (a gradient, the loss).
StepPlan adamwPlan() {
  StepPlan plan;
  plan.model = "mlp";
  plan.phase = "train";
  plan.optimizer = "adamw";
  plan.buffers = {
      spec("x", BufferKind::Input, DType::F32, {2, 3}),
      spec("fc.weight", BufferKind::Param, DType::F32, {3, 2}),
      spec("fc.bias", BufferKind::Param, DType::F32, {2}),
      spec("bn.count", BufferKind::State, DType::I64, {}),
      spec("fc.weight", BufferKind::Gradient, DType::F32, {3, 2}),
      spec("loss", BufferKind::Loss, DType::F32, {}),
      spec("fc.weight", BufferKind::OptimizerState, DType::F32, {3, 2}, "m"),
      spec("fc.weight", BufferKind::OptimizerState, DType::F32, {3, 2}, "v"),
      spec("fc.bias", BufferKind::OptimizerState, DType::F32, {2}, "m"),
      spec("fc.bias", BufferKind::OptimizerState, DType::F32, {2}, "v"),
  };
  return plan;
}

/// The same model compiled for plain SGD: no moments.
StepPlan sgdPlan() {
  StepPlan plan = adamwPlan();
  plan.optimizer = "sgd";
  plan.buffers.resize(6);
  return plan;
}

BufferSet allocate(const StepPlan &plan) {
  Expected<BufferSet> set = BufferSet::allocate(plan);
  EXPECT_TRUE(set.ok()) << set.message();
  return set.take();
}

/// Distinct values in every buffer: element k of buffer i holds 100 i + k + 0.5
/// (f32) or 100 i + k (i64).
void fill(const StepPlan &plan, BufferSet &set) {
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec &b = plan.buffers[i];
    uint64_t n = b.byteSize / dtypeSize(b.dtype);
    for (uint64_t k = 0; k < n; ++k) {
      if (b.dtype == DType::F32)
        static_cast<float *>(set.data(i))[k] = float(100 * i + k) + 0.5f;
      else
        static_cast<int64_t *>(set.data(i))[k] = int64_t(100 * i + k);
    }
  }
}

bool sameBytes(const StepPlan &plan, const BufferSet &a, const BufferSet &b, size_t i) {
  return std::memcmp(a.data(i), b.data(i), plan.buffers[i].byteSize) == 0;
}

bool isZero(const StepPlan &plan, const BufferSet &set, size_t i) {
  const auto *p = static_cast<const unsigned char *>(set.data(i));
  for (uint64_t k = 0; k < plan.buffers[i].byteSize; ++k)
    if (p[k])
      return false;
  return true;
}

} // namespace

TEST(Checkpoint, SavesParamsStatesAndMomentsUnderTheirNames) {
  TempDir dir;
  StepPlan plan = adamwPlan();
  BufferSet set = allocate(plan);
  fill(plan, set);
  Expected<std::string> path = saveCheckpoint(dir.path(), 3, 20, 7, plan, set, 18);
  ASSERT_TRUE(path.ok()) << path.message();
  EXPECT_EQ(*path, dir.file("step-20.safetensors"));

  Expected<SafetensorsFile> file = SafetensorsFile::read(*path);
  ASSERT_TRUE(file.ok()) << file.message();
  std::vector<std::string> names;
  for (const SafetensorsEntry &e : file->tensors())
    names.push_back(e.name);
  std::sort(names.begin(), names.end());
  // No input, gradient or loss: only what a resumed run needs.
  EXPECT_EQ(names, (std::vector<std::string>{
                       "bn.count", "fc.bias", "fc.weight", "optimizer.fc.bias.m",
                       "optimizer.fc.bias.v", "optimizer.fc.weight.m",
                       "optimizer.fc.weight.v"}));
  const SafetensorsEntry *m = file->find("optimizer.fc.weight.m");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->dtype, DType::F32);
  EXPECT_EQ(m->shape, (Shape{3, 2}));
  EXPECT_EQ(std::memcmp(file->data(*m), set.data(6), 24), 0);
  const auto &meta = file->metadata();
  EXPECT_EQ(meta.at("format"), "sinter-checkpoint-1");
  EXPECT_EQ(meta.at("model"), "mlp");
  EXPECT_EQ(meta.at("step"), "20");
  EXPECT_EQ(meta.at("optimizer_steps"), "18");
  EXPECT_EQ(meta.at("seed"), "7");
}

TEST(Checkpoint, RoundTripRestoresEverythingSaved) {
  TempDir dir;
  StepPlan plan = adamwPlan();
  BufferSet saved = allocate(plan);
  fill(plan, saved);
  Expected<std::string> path =
      saveCheckpoint(dir.path() + "/nested/ckpt", 3, 20, 7, plan, saved, 18);
  ASSERT_TRUE(path.ok()) << path.message();

  BufferSet loaded = allocate(plan);
  int64_t updates = -1;
  Expected<int64_t> step = loadCheckpoint(*path, 7, plan, loaded, updates);
  ASSERT_TRUE(step.ok()) << step.message();
  EXPECT_EQ(*step, 20);
  EXPECT_EQ(updates, 18);
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    BufferKind k = plan.buffers[i].kind;
    if (k == BufferKind::Param || k == BufferKind::State || k == BufferKind::OptimizerState)
      EXPECT_TRUE(sameBytes(plan, saved, loaded, i)) << plan.buffers[i].name;
    else // not in the file: left as allocated
      EXPECT_TRUE(isZero(plan, loaded, i)) << plan.buffers[i].name;
  }
}

TEST(Checkpoint, AnotherSeedCannotResume) {
  TempDir dir;
  StepPlan plan = adamwPlan();
  BufferSet set = allocate(plan);
  Expected<std::string> path = saveCheckpoint(dir.path(), 3, 5, 7, plan, set, 5);
  ASSERT_TRUE(path.ok()) << path.message();
  int64_t updates = 0;
  Expected<int64_t> step = loadCheckpoint(*path, 8, plan, set, updates);
  ASSERT_FALSE(step.ok());
  EXPECT_NE(step.message().find("written with seed 7 but this run has seed 8"),
            std::string::npos)
      << step.message();
}

// config.seed is a uint64: every value must round-trip through the file.
TEST(Checkpoint, SeedAboveInt64MaxResumes) {
  TempDir dir;
  StepPlan plan = sgdPlan();
  BufferSet set = allocate(plan);
  const uint64_t seed = (uint64_t(1) << 63) + 5;
  Expected<std::string> path = saveCheckpoint(dir.path(), 3, 2, seed, plan, set, 2);
  ASSERT_TRUE(path.ok()) << path.message();
  int64_t updates = 0;
  Expected<int64_t> step = loadCheckpoint(*path, seed, plan, set, updates);
  ASSERT_TRUE(step.ok()) << step.message();
  EXPECT_EQ(*step, 2);
}

TEST(Checkpoint, KeepsOnlyTheNewestK) {
  TempDir dir;
  StepPlan plan = sgdPlan();
  BufferSet set = allocate(plan);
  writeBytes(dir.file("notes.txt"), bytesOf("not a checkpoint"));
  // Steps 8, 9, 10: 10 is the newest though "step-10" sorts first as text.
  for (int64_t step : {8, 9, 10}) {
    Expected<std::string> path = saveCheckpoint(dir.path(), 2, step, 0, plan, set, step);
    ASSERT_TRUE(path.ok()) << path.message();
  }
  EXPECT_EQ(listDir(dir.path()),
            (std::vector<std::string>{"notes.txt", "step-10.safetensors",
                                      "step-9.safetensors"}));
  EXPECT_EQ(latestCheckpoint(dir.path()), dir.file("step-10.safetensors"));
}

TEST(Checkpoint, KeepBelowOneKeepsOne) {
  TempDir dir;
  StepPlan plan = sgdPlan();
  BufferSet set = allocate(plan);
  for (int64_t step : {1, 2})
    ASSERT_TRUE(saveCheckpoint(dir.path(), 0, step, 0, plan, set, step).ok());
  EXPECT_EQ(listDir(dir.path()), std::vector<std::string>{"step-2.safetensors"});
}

// A new run in a folder that holds a later step of an earlier run keeps what
// it writes: only older checkpoints are pruned.
TEST(Checkpoint, NeverRemovesTheCheckpointJustWritten) {
  TempDir dir;
  StepPlan plan = sgdPlan();
  BufferSet set = allocate(plan);
  for (int64_t step : {4, 10, 5})
    ASSERT_TRUE(saveCheckpoint(dir.path(), 1, step, 0, plan, set, step).ok());
  EXPECT_EQ(listDir(dir.path()),
            (std::vector<std::string>{"step-10.safetensors", "step-5.safetensors"}));
}

TEST(Checkpoint, LatestOfAnEmptyOrMissingFolderIsNone) {
  TempDir dir;
  EXPECT_EQ(latestCheckpoint(dir.path()), "");
  EXPECT_EQ(latestCheckpoint(dir.file("absent")), "");
}

TEST(Checkpoint, MissingOptimizerStateIsRefusedByName) {
  TempDir dir;
  // Written by the SGD program, resumed by the AdamW one.
  StepPlan sgd = sgdPlan();
  BufferSet sgdSet = allocate(sgd);
  Expected<std::string> path = saveCheckpoint(dir.path(), 3, 4, 0, sgd, sgdSet, 4);
  ASSERT_TRUE(path.ok()) << path.message();

  StepPlan plan = adamwPlan();
  BufferSet set = allocate(plan);
  int64_t updates = 0;
  Expected<int64_t> step = loadCheckpoint(*path, 0, plan, set, updates);
  ASSERT_FALSE(step.ok());
  EXPECT_EQ(step.message(),
            *path + ": has no optimizer state 'optimizer.fc.weight.m'; it was "
                    "written with another optimizer than this program's (adamw)");
}

TEST(Checkpoint, MissingOrMismatchedParamIsRefused) {
  TempDir dir;
  StepPlan plan = adamwPlan();
  BufferSet set = allocate(plan);
  Expected<std::string> path = saveCheckpoint(dir.path(), 3, 1, 0, plan, set, 1);
  ASSERT_TRUE(path.ok()) << path.message();
  int64_t updates = 0;

  StepPlan renamed = adamwPlan();
  renamed.buffers[2].name = "fc.scale";
  BufferSet renamedSet = allocate(renamed);
  std::string message = loadCheckpoint(*path, 0, renamed, renamedSet, updates).message();
  EXPECT_NE(message.find("has no tensor 'fc.scale'"), std::string::npos) << message;

  StepPlan reshaped = adamwPlan();
  reshaped.buffers[1] = spec("fc.weight", BufferKind::Param, DType::F32, {2, 3});
  BufferSet reshapedSet = allocate(reshaped);
  message = loadCheckpoint(*path, 0, reshaped, reshapedSet, updates).message();
  EXPECT_NE(message.find("tensor 'fc.weight' has another dtype or shape"),
            std::string::npos)
      << message;
}

TEST(Checkpoint, F64MomentsLoadConverted) {
  TempDir dir;
  StepPlan plan = adamwPlan();
  std::vector<float> weight = {1, 2, 3, 4, 5, 6}, bias = {-1, -2};
  int64_t count = 42;
  // Moments of values no f32 holds exactly, so the conversion shows.
  std::vector<double> wm(6), wv(6), bm = {0.1, -0.3}, bv = {1e-7, 2.5e-3};
  for (size_t k = 0; k < 6; ++k) {
    wm[k] = 0.1 * double(k) + 1.0 / 3;
    wv[k] = 1e-4 * double(k + 1) / 7;
  }
  std::string path = dir.file("step-12.safetensors");
  Status written = writeSafetensors(
      path,
      {{"fc.weight", DType::F32, {3, 2}, weight.data()},
       {"fc.bias", DType::F32, {2}, bias.data()},
       {"bn.count", DType::I64, {}, &count},
       {"optimizer.fc.weight.m", DType::F64, {3, 2}, wm.data()},
       {"optimizer.fc.weight.v", DType::F64, {3, 2}, wv.data()},
       {"optimizer.fc.bias.m", DType::F64, {2}, bm.data()},
       {"optimizer.fc.bias.v", DType::F64, {2}, bv.data()}},
      {{"format", "sinter-checkpoint-1"},
       {"model", "mlp"},
       {"step", "12"},
       {"optimizer_steps", "11"},
       {"seed", "3"}});
  ASSERT_TRUE(written.ok()) << written.message();

  BufferSet set = allocate(plan);
  int64_t updates = 0;
  Expected<int64_t> step = loadCheckpoint(path, 3, plan, set, updates);
  ASSERT_TRUE(step.ok()) << step.message();
  EXPECT_EQ(*step, 12);
  EXPECT_EQ(updates, 11);
  auto floats = [&](size_t i, size_t n) {
    const float *p = static_cast<const float *>(set.data(i));
    return std::vector<float>(p, p + n);
  };
  auto narrowed = [](const std::vector<double> &v) {
    return std::vector<float>(v.begin(), v.end());
  };
  EXPECT_EQ(floats(1, 6), weight);
  EXPECT_EQ(floats(2, 2), bias);
  EXPECT_EQ(*static_cast<const int64_t *>(set.data(3)), 42);
  EXPECT_EQ(floats(6, 6), narrowed(wm));
  EXPECT_EQ(floats(7, 6), narrowed(wv));
  EXPECT_EQ(floats(8, 2), narrowed(bm));
  EXPECT_EQ(floats(9, 2), narrowed(bv));
}

TEST(Checkpoint, FileWithoutSinterMetadataIsRefused) {
  TempDir dir;
  StepPlan plan = sgdPlan();
  BufferSet set = allocate(plan);
  std::string path = dir.file("step-1.safetensors");
  float w[6] = {};
  ASSERT_TRUE(writeSafetensors(path, {{"fc.weight", DType::F32, {3, 2}, w}}).ok());
  int64_t updates = 0;
  Expected<int64_t> step = loadCheckpoint(path, 0, plan, set, updates);
  ASSERT_FALSE(step.ok());
  EXPECT_NE(step.message().find("not a Sinter checkpoint"), std::string::npos)
      << step.message();
}

// Written in the background, from a snapshot: the same bytes as in the
// foreground, even when the buffers change as soon as save() returns.
TEST(CheckpointWriter, WritesTheSameFileFromASnapshot) {
  TempDir sync, background;
  StepPlan plan = adamwPlan();
  BufferSet set = allocate(plan);
  fill(plan, set);
  Expected<std::string> want = saveCheckpoint(sync.path(), 3, 20, 7, plan, set, 18);
  ASSERT_TRUE(want.ok()) << want.message();
  CheckpointWriter writer(/*inBackground=*/true);
  Expected<std::string> got = writer.save(background.path(), 3, 20, 7, plan, set, 18);
  ASSERT_TRUE(got.ok()) << got.message();
  for (size_t i = 0; i < plan.buffers.size(); ++i) // training goes on
    std::memset(set.data(i), 0xff, plan.buffers[i].byteSize);
  ASSERT_TRUE(writer.wait().ok());
  EXPECT_EQ(*got, background.file("step-20.safetensors"));
  EXPECT_EQ(readBytes(*got), readBytes(*want));
  EXPECT_GT(writer.snapshotBytes(), 0u);
}

// Checkpoints complete in order, and keep applies as in the foreground.
TEST(CheckpointWriter, KeepsTheNewestKInOrder) {
  TempDir dir;
  StepPlan plan = adamwPlan();
  BufferSet set = allocate(plan);
  fill(plan, set);
  CheckpointWriter writer(/*inBackground=*/true);
  for (int64_t step = 1; step <= 5; ++step)
    ASSERT_TRUE(writer.save(dir.path(), 2, step, 0, plan, set, step).ok());
  ASSERT_TRUE(writer.wait().ok());
  EXPECT_EQ(listDir(dir.path()),
            (std::vector<std::string>{"step-4.safetensors", "step-5.safetensors"}));
}

// A write that fails is the error of the next wait, naming the folder.
TEST(CheckpointWriter, AFailedWriteIsReported) {
  TempDir dir;
  StepPlan plan = adamwPlan();
  BufferSet set = allocate(plan);
  fill(plan, set);
  writeBytes(dir.file("file"), bytesOf("x"));
  CheckpointWriter writer(/*inBackground=*/true);
  ASSERT_TRUE(writer.save(dir.file("file") + "/ck", 2, 1, 0, plan, set, 1).ok());
  Status s = writer.wait();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("checkpoint.dir"), std::string::npos) << s.message();
}
