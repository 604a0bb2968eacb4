//===- StepPlan_test.cpp - Parsing a step's plan, allocating its buffers --===//

#include "program/StepPlan.h"

#include "runtime/contract/sinter_plan.pb.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace sinter::rt;
namespace pb = sinter::plan;

namespace {

pb::Buffer *addBuffer(pb::Step &step, const std::string &name, pb::BufferKind kind,
                      pb::DType dtype, std::vector<int64_t> shape) {
  pb::Buffer *b = step.add_buffers();
  b->set_name(name);
  b->set_kind(kind);
  b->set_dtype(dtype);
  for (int64_t d : shape)
    b->add_shape(d);
  return b;
}

void addBucket(pb::Step &step, std::vector<std::string> gradients) {
  pb::Bucket *bucket = step.add_buckets();
  for (const std::string &g : gradients)
    bucket->add_gradients(g);
}

Expected<StepPlan> parse(const pb::Step &step) {
  std::string bytes = step.SerializeAsString();
  return StepPlan::parse(bytes.data(), int64_t(bytes.size()));
}

/// A train step with one buffer of every kind.
pb::Step trainStep() {
  pb::Step step;
  step.set_model("mlp");
  step.set_phase("train");
  step.set_optimizer("adamw");
  addBuffer(step, "x", pb::INPUT, pb::F32, {4, 3});
  pb::Buffer *y = addBuffer(step, "y", pb::INPUT, pb::I64, {4});
  y->set_value_bound(10);
  y->set_value_bound_source("cross_entropy at mlp.sn:7:10");
  y->set_ignore_index(-100);
  pb::Buffer *w = addBuffer(step, "fc.weight", pb::PARAM, pb::F32, {3, 2});
  w->set_init("normal");
  w->add_init_args(0.0);
  w->add_init_args(0.02);
  addBuffer(step, "bn.mean", pb::STATE, pb::F64, {2});
  addBuffer(step, "loss", pb::LOSS, pb::F32, {});
  addBuffer(step, "accuracy", pb::METRIC, pb::F32, {});
  addBuffer(step, "bn.mean", pb::STATE_OUT, pb::F64, {2});
  addBuffer(step, "logits", pb::OUTPUT, pb::BF16, {4, 5});
  addBuffer(step, "workspace", pb::WORKSPACE, pb::BOOL, {100});
  addBuffer(step, "fc.weight", pb::GRADIENT, pb::F32, {3, 2});
  addBuffer(step, "fc.weight", pb::OPTIMIZER_STATE, pb::F32, {3, 2})->set_slot("m");
  addBuffer(step, "fc.weight", pb::OPTIMIZER_STATE, pb::F32, {3, 2})->set_slot("v");
  addBuffer(step, "grad_norm", pb::GRAD_NORM, pb::F64, {});
  addBuffer(step, "non_finite", pb::NON_FINITE, pb::I32, {});
  addBuffer(step, "half", pb::OUTPUT, pb::F16, {3});
  addBuffer(step, "empty", pb::OUTPUT, pb::F32, {0, 7});
  addBucket(step, {"fc.weight"});
  return step;
}

} // namespace

TEST(StepPlanParse, ReadsModelPhaseAndOptimizer) {
  Expected<StepPlan> plan = parse(trainStep());
  ASSERT_TRUE(plan.ok()) << plan.message();
  EXPECT_EQ(plan->model, "mlp");
  EXPECT_EQ(plan->phase, "train");
  EXPECT_EQ(plan->optimizer, "adamw");
  EXPECT_EQ(plan->microBatch(), 4u);
}

TEST(StepPlanParse, MicroBatchComesFromThePlan) {
  pb::Step step = trainStep();
  step.set_micro_batch(4);
  Expected<StepPlan> plan = parse(step);
  ASSERT_TRUE(plan.ok()) << plan.message();
  EXPECT_EQ(plan->compiledMicroBatch, 4u);
  EXPECT_EQ(plan->microBatch(), 4u);
}

TEST(StepPlanParse, RefusesInputsThatDoNotLeadWithTheMicroBatch) {
  pb::Step step = trainStep();
  step.set_micro_batch(8);
  Expected<StepPlan> plan = parse(step);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.message().find("micro-batch is 8 but input 'x'"), std::string::npos)
      << plan.message();
}

TEST(StepPlanParse, MapsEveryKindInOrder) {
  Expected<StepPlan> plan = parse(trainStep());
  ASSERT_TRUE(plan.ok()) << plan.message();
  std::vector<BufferKind> kinds;
  for (const BufferSpec &b : plan->buffers)
    kinds.push_back(b.kind);
  std::vector<BufferKind> expected = {
      BufferKind::Input,     BufferKind::Input,    BufferKind::Param,
      BufferKind::State,     BufferKind::Loss,     BufferKind::Metric,
      BufferKind::StateOut,  BufferKind::Output,   BufferKind::Workspace,
      BufferKind::Gradient,  BufferKind::OptimizerState,
      BufferKind::OptimizerState, BufferKind::GradNorm, BufferKind::NonFinite,
      BufferKind::Output,    BufferKind::Output};
  EXPECT_EQ(kinds, expected);
}

TEST(StepPlanParse, MapsDtypesShapesAndByteSizes) {
  Expected<StepPlan> plan = parse(trainStep());
  ASSERT_TRUE(plan.ok()) << plan.message();
  struct Want {
    const char *name;
    BufferKind kind;
    DType dtype;
    Shape shape;
    uint64_t bytes;
  };
  std::vector<Want> wants = {
      {"x", BufferKind::Input, DType::F32, {4, 3}, 4 * 3 * 4},
      {"y", BufferKind::Input, DType::I64, {4}, 4 * 8},
      {"bn.mean", BufferKind::State, DType::F64, {2}, 2 * 8},
      {"loss", BufferKind::Loss, DType::F32, {}, 4},
      {"logits", BufferKind::Output, DType::BF16, {4, 5}, 4 * 5 * 2},
      {"workspace", BufferKind::Workspace, DType::Bool, {100}, 100},
      {"non_finite", BufferKind::NonFinite, DType::I32, {}, 4},
      {"half", BufferKind::Output, DType::F16, {3}, 3 * 2},
      {"empty", BufferKind::Output, DType::F32, {0, 7}, 0},
  };
  for (const Want &w : wants) {
    const BufferSpec *b = plan->find(w.name, w.kind);
    ASSERT_NE(b, nullptr) << w.name;
    EXPECT_EQ(b->dtype, w.dtype) << w.name;
    EXPECT_EQ(b->shape, w.shape) << w.name;
    EXPECT_EQ(b->byteSize, w.bytes) << w.name;
  }
}

TEST(StepPlanParse, FindTellsBuffersOfOneNameApartByKind) {
  Expected<StepPlan> plan = parse(trainStep());
  ASSERT_TRUE(plan.ok()) << plan.message();
  const BufferSpec *param = plan->find("fc.weight", BufferKind::Param);
  const BufferSpec *grad = plan->find("fc.weight", BufferKind::Gradient);
  ASSERT_NE(param, nullptr);
  ASSERT_NE(grad, nullptr);
  EXPECT_NE(param, grad);
  EXPECT_EQ(param->init, "normal");
  EXPECT_EQ(param->initArgs, (std::vector<double>{0.0, 0.02}));
  EXPECT_EQ(plan->find("fc.weight", BufferKind::Input), nullptr);
  EXPECT_EQ(plan->find("nothing", BufferKind::Param), nullptr);
}

TEST(StepPlanParse, OptimizerStatesKeepTheirSlot) {
  Expected<StepPlan> plan = parse(trainStep());
  ASSERT_TRUE(plan.ok()) << plan.message();
  std::vector<std::string> slots;
  for (const BufferSpec &b : plan->buffers)
    if (b.kind == BufferKind::OptimizerState) {
      EXPECT_EQ(b.name, "fc.weight");
      slots.push_back(b.slot);
    }
  EXPECT_EQ(slots, (std::vector<std::string>{"m", "v"}));
}

TEST(StepPlanParse, ReadsValueBoundsAndIgnoreIndex) {
  Expected<StepPlan> plan = parse(trainStep());
  ASSERT_TRUE(plan.ok()) << plan.message();
  const BufferSpec *y = plan->find("y", BufferKind::Input);
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->valueBound, 10u);
  EXPECT_EQ(y->valueBoundSource, "cross_entropy at mlp.sn:7:10");
  ASSERT_TRUE(y->ignoreIndex.has_value());
  EXPECT_EQ(*y->ignoreIndex, -100);
  // Unbounded inputs: no bound, no ignore_index.
  const BufferSpec *x = plan->find("x", BufferKind::Input);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->valueBound, 0u);
  EXPECT_EQ(x->valueBoundSource, "");
  EXPECT_FALSE(x->ignoreIndex.has_value());
}

TEST(StepPlanParse, IgnoreIndexZeroIsPresentAndNegativeBoundIsUnknown) {
  pb::Step step;
  pb::Buffer *t = addBuffer(step, "t", pb::INPUT, pb::I32, {2});
  t->set_ignore_index(0); // written as 0: present, unlike an absent field
  t->set_value_bound(-5);
  Expected<StepPlan> plan = parse(step);
  ASSERT_TRUE(plan.ok()) << plan.message();
  ASSERT_TRUE(plan->buffers[0].ignoreIndex.has_value());
  EXPECT_EQ(*plan->buffers[0].ignoreIndex, 0);
  EXPECT_EQ(plan->buffers[0].valueBound, 0u);
}

TEST(StepPlanParse, EvalPlanWithoutOptimizerOrBuckets) {
  pb::Step step;
  step.set_model("mlp");
  step.set_phase("eval");
  addBuffer(step, "x", pb::INPUT, pb::F32, {8, 3});
  addBuffer(step, "out", pb::OUTPUT, pb::F32, {8, 2});
  Expected<StepPlan> plan = parse(step);
  ASSERT_TRUE(plan.ok()) << plan.message();
  EXPECT_EQ(plan->optimizer, "");
  EXPECT_TRUE(plan->buckets.empty());
  EXPECT_EQ(plan->microBatch(), 8u);
}

TEST(StepPlanParse, CorruptBytesAreAnError) {
  // Field 1 (model) claims 5 bytes but only 2 follow.
  const char truncated[] = {0x0a, 0x05, 'a', 'b'};
  Expected<StepPlan> plan = StepPlan::parse(truncated, sizeof truncated);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.message().find("corrupt"), std::string::npos) << plan.message();
  EXPECT_NE(plan.message().find("recompile"), std::string::npos) << plan.message();

  std::string whole = trainStep().SerializeAsString();
  EXPECT_FALSE(StepPlan::parse(whole.data(), int64_t(whole.size()) - 1).ok());
  EXPECT_FALSE(StepPlan::parse(nullptr, 0).ok());
  EXPECT_FALSE(StepPlan::parse(whole.data(), -1).ok());
}

TEST(StepPlanParse, NegativeDimensionIsAnError) {
  pb::Step step;
  addBuffer(step, "x", pb::INPUT, pb::F32, {4, -1});
  Expected<StepPlan> plan = parse(step);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.message().find("negative size in the plan of 'x'"), std::string::npos)
      << plan.message();
}

TEST(StepPlanParse, OverflowingSizeIsAnError) {
  pb::Step step;
  addBuffer(step, "huge", pb::PARAM, pb::F32, {int64_t(1) << 62, 8});
  Expected<StepPlan> plan = parse(step);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.message().find("the size of 'huge' overflows"), std::string::npos)
      << plan.message();
}

TEST(StepPlanParse, GradientInNoBucketIsAnError) {
  pb::Step step = trainStep();
  step.clear_buckets();
  Expected<StepPlan> plan = parse(step);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.message().find("the gradient of 'fc.weight' is in 0 gradient buckets"),
            std::string::npos)
      << plan.message();
}

TEST(StepPlanParse, GradientInTwoBucketsIsAnError) {
  pb::Step step = trainStep();
  addBucket(step, {"fc.weight"});
  Expected<StepPlan> plan = parse(step);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.message().find("the gradient of 'fc.weight' is in 2 gradient buckets"),
            std::string::npos)
      << plan.message();
}

TEST(StepPlanParse, BucketNamingANonGradientIsAnError) {
  pb::Step step = trainStep();
  addBucket(step, {"bn.mean"}); // a state, not a gradient
  Expected<StepPlan> plan = parse(step);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.message().find("names 'bn.mean', not a gradient"), std::string::npos)
      << plan.message();
}

TEST(StepPlanParse, BucketMixingDtypesIsAnError) {
  pb::Step step;
  addBuffer(step, "a", pb::GRADIENT, pb::F32, {2});
  addBuffer(step, "b", pb::GRADIENT, pb::F64, {2});
  addBucket(step, {"a", "b"});
  Expected<StepPlan> plan = parse(step);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.message().find("names 'b'"), std::string::npos) << plan.message();
}

TEST(StepPlanParse, BucketsListGradientIndicesInSlotOrder) {
  pb::Step step;
  addBuffer(step, "a", pb::GRADIENT, pb::F64, {2});
  addBuffer(step, "b", pb::GRADIENT, pb::F64, {3});
  addBuffer(step, "c", pb::GRADIENT, pb::F32, {1});
  addBucket(step, {"b", "a"}); // slot order is the bucket's, not the plan's
  addBucket(step, {"c"});
  Expected<StepPlan> plan = parse(step);
  ASSERT_TRUE(plan.ok()) << plan.message();
  ASSERT_EQ(plan->buckets.size(), 2u);
  EXPECT_EQ(plan->buckets[0].gradients, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(plan->buckets[0].dtype, DType::F64);
  EXPECT_EQ(plan->buckets[1].gradients, (std::vector<size_t>{2}));
  EXPECT_EQ(plan->buckets[1].dtype, DType::F32);
}

namespace {

bool aligned64(const void *p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

bool allZero(const void *p, uint64_t bytes) {
  const auto *c = static_cast<const unsigned char *>(p);
  for (uint64_t i = 0; i < bytes; ++i)
    if (c[i])
      return false;
  return true;
}

} // namespace

TEST(StepPlanBufferSet, EveryBufferIsAlignedZeroedAndInTheTable) {
  Expected<StepPlan> plan = parse(trainStep());
  ASSERT_TRUE(plan.ok()) << plan.message();
  Expected<BufferSet> set = BufferSet::allocate(*plan);
  ASSERT_TRUE(set.ok()) << set.message();
  for (size_t i = 0; i < plan->buffers.size(); ++i) {
    const BufferSpec &b = plan->buffers[i];
    void *p = set->data(i);
    ASSERT_NE(p, nullptr) << b.name; // even the empty one
    EXPECT_TRUE(aligned64(p)) << b.name;
    EXPECT_TRUE(allZero(p, b.byteSize)) << b.name;
    EXPECT_EQ(set->table()[i], p) << b.name;
    for (size_t j = 0; j < i; ++j)
      EXPECT_NE(set->data(j), p) << b.name << " shares memory with "
                                 << plan->buffers[j].name;
  }
}

TEST(StepPlanBufferSet, BucketGradientsShareOneAllocationBackToBack) {
  pb::Step step;
  addBuffer(step, "w", pb::PARAM, pb::F32, {20});
  addBuffer(step, "small", pb::GRADIENT, pb::F32, {3});  // 12 bytes: one 64-byte slot
  addBuffer(step, "big", pb::GRADIENT, pb::F32, {20});   // 80 bytes: two slots
  addBuffer(step, "exact", pb::GRADIENT, pb::F32, {16}); // 64 bytes: one slot
  addBuffer(step, "other", pb::GRADIENT, pb::F64, {5});  // 40 bytes: one slot
  addBucket(step, {"big", "small", "exact"});
  addBucket(step, {"other"});
  Expected<StepPlan> plan = parse(step);
  ASSERT_TRUE(plan.ok()) << plan.message();
  Expected<BufferSet> set = BufferSet::allocate(*plan);
  ASSERT_TRUE(set.ok()) << set.message();

  char *base = static_cast<char *>(set->bucketData(0));
  EXPECT_TRUE(aligned64(base));
  EXPECT_EQ(set->data(2), base);       // big, first slot
  EXPECT_EQ(set->data(1), base + 128); // small, after big's 80 bytes rounded up
  EXPECT_EQ(set->data(3), base + 192); // exact
  // The whole bucket, gaps included, in elements of its dtype.
  EXPECT_EQ(set->bucketElements(0), (128u + 64u + 64u) / 4);
  EXPECT_TRUE(allZero(base, 256)) << "gaps between slots stay zero";

  EXPECT_EQ(set->bucketData(1), set->data(4));
  EXPECT_EQ(set->bucketElements(1), 64u / 8);

  // The parameter has its own allocation, outside both buckets.
  char *w = static_cast<char *>(set->data(0));
  EXPECT_TRUE(w < base || w >= base + 256);
}

TEST(StepPlanBufferSet, WritesToOneGradientLandInItsBucketSlot) {
  pb::Step step;
  addBuffer(step, "a", pb::GRADIENT, pb::F32, {2});
  addBuffer(step, "b", pb::GRADIENT, pb::F32, {2});
  addBucket(step, {"a", "b"});
  Expected<StepPlan> plan = parse(step);
  ASSERT_TRUE(plan.ok()) << plan.message();
  Expected<BufferSet> set = BufferSet::allocate(*plan);
  ASSERT_TRUE(set.ok()) << set.message();
  float one = 1.5f, two = -2.0f;
  std::memcpy(static_cast<float *>(set->data(0)) + 1, &one, 4);
  std::memcpy(set->data(1), &two, 4);
  // Seen through the bucket: a at elements [0, 16), b at [16, 32).
  const float *bucket = static_cast<const float *>(set->bucketData(0));
  ASSERT_EQ(set->bucketElements(0), 32u);
  for (uint64_t i = 0; i < 32; ++i) {
    float want = i == 1 ? one : i == 16 ? two : 0.0f;
    EXPECT_EQ(bucket[i], want) << "element " << i;
  }
}
