//===- ConfigLoaderTest.cpp - Tests of the training-config loader ---------===//
//
// The schema (runtime/contract/sinter_config.proto), its defaults, and every
// diagnostic of runtime/config/ConfigLoader.h, checked with exact text where
// the message is the contract (file:line:col, field name).
//
//===----------------------------------------------------------------------===//

#include "runtime/config/ConfigLoader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

using namespace sinter::config;

namespace {

/// test/Config/Inputs, found from this file's path so the test needs no
/// configuration from CMake.
std::string inputPath(const std::string &name) {
  std::filesystem::path here(__FILE__);
  return (here.parent_path().parent_path() / "Config" / "Inputs" / name).string();
}

TrainConfig parseOk(const std::string &text) {
  std::string error;
  std::optional<TrainConfig> cfg = parseConfigText(text, "train.pbtxt", error);
  EXPECT_TRUE(cfg.has_value()) << error;
  EXPECT_EQ(error, "");
  return cfg.value_or(TrainConfig());
}

std::string parseError(const std::string &text) {
  std::string error;
  std::optional<TrainConfig> cfg = parseConfigText(text, "train.pbtxt", error);
  EXPECT_FALSE(cfg.has_value()) << "parsed although an error was expected:\n" << text;
  return error;
}

/// Every field, most with a value other than their default.
const char *const kFullConfig = R"pb(model: "mlp.sn"
model_name: "mlp"
set { key: "hidden" value: "512" }
shapes { key: "T" value: 128 }
batch { global: 256 micro: 32 }
optimizer { adamw { lr: 3e-4 beta1: 0.9 beta2: 0.95 eps: 1e-8 weight_decay: 0.1 } }
schedule { warmup_steps: 100 cosine { min_lr: 3e-5 } }
lr_scaling { rule: LINEAR base_global_batch: 256 }
clip_grad_norm: 1.0
parallel {
  strategy: DDP
  bucket_cap_mb: 40
  overlap: false
  batch_norm: SYNC
}
precision { compute: F32 }
device: CPU
data {
  train { npy { input: "x" path: "data/x.npy" } npy { input: "y" path: "data/y.npy" } }
  eval  { tokens { path: "data/val.bin" dtype: UINT32 } }
  shuffle: false
  drop_last: false
}
steps: 1000
eval { every: 100 batches: 10 }
log { every: 5 tensorboard_dir: "" trace_file: "" }
checkpoint { dir: "ckpt" every: 500 keep: 2 resume: true }
seed: 7
)pb";

//===----------------------------------------------------------------------===//
// Parsing and defaults
//===----------------------------------------------------------------------===//

TEST(ConfigLoader, ParsesEveryField) {
  TrainConfig cfg = parseOk(kFullConfig);
  EXPECT_EQ(cfg.model(), "mlp.sn");
  EXPECT_EQ(cfg.model_name(), "mlp");
  ASSERT_EQ(cfg.set().count("hidden"), 1u);
  EXPECT_EQ(cfg.set().at("hidden"), "512");
  ASSERT_EQ(cfg.shapes().count("T"), 1u);
  EXPECT_EQ(cfg.shapes().at("T"), 128);
  EXPECT_EQ(cfg.batch().global(), 256);
  EXPECT_EQ(cfg.batch().micro(), 32);
  ASSERT_TRUE(cfg.optimizer().has_adamw());
  EXPECT_DOUBLE_EQ(cfg.optimizer().adamw().lr(), 3e-4);
  EXPECT_DOUBLE_EQ(cfg.optimizer().adamw().beta1(), 0.9);
  EXPECT_DOUBLE_EQ(cfg.optimizer().adamw().beta2(), 0.95);
  EXPECT_DOUBLE_EQ(cfg.optimizer().adamw().eps(), 1e-8);
  EXPECT_DOUBLE_EQ(cfg.optimizer().adamw().weight_decay(), 0.1);
  EXPECT_EQ(cfg.schedule().warmup_steps(), 100);
  ASSERT_TRUE(cfg.schedule().has_cosine());
  EXPECT_DOUBLE_EQ(cfg.schedule().cosine().min_lr(), 3e-5);
  EXPECT_EQ(cfg.lr_scaling().rule(), TrainConfig::LrScaling::LINEAR);
  EXPECT_EQ(cfg.lr_scaling().base_global_batch(), 256);
  EXPECT_DOUBLE_EQ(cfg.clip_grad_norm(), 1.0);
  EXPECT_EQ(cfg.parallel().strategy(), TrainConfig::Parallel::DDP);
  EXPECT_TRUE(cfg.parallel().has_strategy());
  EXPECT_DOUBLE_EQ(cfg.parallel().bucket_cap_mb(), 40);
  EXPECT_FALSE(cfg.parallel().overlap());
  EXPECT_TRUE(cfg.parallel().has_overlap());
  EXPECT_EQ(cfg.parallel().batch_norm(), TrainConfig::Parallel::SYNC);
  EXPECT_EQ(cfg.precision().compute(), TrainConfig::Precision::F32);
  EXPECT_TRUE(cfg.precision().has_compute());
  EXPECT_EQ(cfg.device(), TrainConfig::CPU);
  EXPECT_TRUE(cfg.has_device());
  ASSERT_EQ(cfg.data().train().npy_size(), 2);
  EXPECT_EQ(cfg.data().train().npy(0).input(), "x");
  EXPECT_EQ(cfg.data().train().npy(0).path(), "data/x.npy");
  EXPECT_EQ(cfg.data().train().npy(1).input(), "y");
  EXPECT_EQ(cfg.data().train().npy(1).path(), "data/y.npy");
  EXPECT_FALSE(cfg.data().train().has_tokens());
  ASSERT_TRUE(cfg.data().eval().has_tokens());
  EXPECT_EQ(cfg.data().eval().tokens().path(), "data/val.bin");
  EXPECT_EQ(cfg.data().eval().tokens().dtype(), TrainConfig::Tokens::UINT32);
  EXPECT_FALSE(cfg.data().shuffle());
  EXPECT_FALSE(cfg.data().drop_last());
  EXPECT_EQ(cfg.steps(), 1000);
  EXPECT_EQ(cfg.eval().every(), 100);
  EXPECT_EQ(cfg.eval().batches(), 10);
  EXPECT_EQ(cfg.log().every(), 5);
  EXPECT_TRUE(cfg.log().has_tensorboard_dir());
  EXPECT_EQ(cfg.log().tensorboard_dir(), "");
  EXPECT_TRUE(cfg.log().has_trace_file());
  EXPECT_EQ(cfg.log().trace_file(), "");
  EXPECT_EQ(cfg.checkpoint().dir(), "ckpt");
  EXPECT_EQ(cfg.checkpoint().every(), 500);
  EXPECT_EQ(cfg.checkpoint().keep(), 2);
  EXPECT_TRUE(cfg.checkpoint().resume());
  EXPECT_EQ(cfg.seed(), 7u);
}

TEST(ConfigLoader, ParsesTheOtherForms) {
  TrainConfig cfg = parseOk(R"pb(
    optimizer { sgd { lr: 0.1 momentum: 0.9 nesterov: true weight_decay: 5e-4 } }
    schedule { linear { end_lr: 0.001 } }
    lr_scaling { rule: SQRT base_global_batch: 64 }
    data { train { synthetic {} } eval { npy { input: "x" path: "x.npy" } } }
  )pb");
  ASSERT_TRUE(cfg.optimizer().has_sgd());
  EXPECT_DOUBLE_EQ(cfg.optimizer().sgd().lr(), 0.1);
  EXPECT_DOUBLE_EQ(cfg.optimizer().sgd().momentum(), 0.9);
  EXPECT_TRUE(cfg.optimizer().sgd().nesterov());
  EXPECT_DOUBLE_EQ(cfg.optimizer().sgd().weight_decay(), 5e-4);
  ASSERT_TRUE(cfg.schedule().has_linear());
  EXPECT_DOUBLE_EQ(cfg.schedule().linear().end_lr(), 0.001);
  EXPECT_EQ(cfg.lr_scaling().rule(), TrainConfig::LrScaling::SQRT);
  EXPECT_TRUE(cfg.data().train().has_synthetic());
  EXPECT_EQ(cfg.data().eval().npy_size(), 1);

  TrainConfig constant = parseOk("schedule { warmup_steps: 10 constant {} }");
  EXPECT_TRUE(constant.schedule().has_constant());
}

TEST(ConfigLoader, EmptyConfigTakesEveryDefault) {
  TrainConfig cfg = parseOk("");
  EXPECT_EQ(cfg.model(), "");
  EXPECT_EQ(cfg.model_name(), "");
  EXPECT_TRUE(cfg.set().empty());
  EXPECT_TRUE(cfg.shapes().empty());
  EXPECT_EQ(cfg.batch().global(), 32);
  EXPECT_EQ(cfg.batch().micro(), 32);
  ASSERT_TRUE(cfg.optimizer().has_adamw());
  EXPECT_DOUBLE_EQ(cfg.optimizer().adamw().lr(), 1e-3);
  EXPECT_DOUBLE_EQ(cfg.optimizer().adamw().beta1(), 0.9);
  EXPECT_DOUBLE_EQ(cfg.optimizer().adamw().beta2(), 0.999);
  EXPECT_DOUBLE_EQ(cfg.optimizer().adamw().eps(), 1e-8);
  EXPECT_DOUBLE_EQ(cfg.optimizer().adamw().weight_decay(), 0.01);
  EXPECT_EQ(cfg.schedule().warmup_steps(), 0);
  EXPECT_TRUE(cfg.schedule().has_constant());
  EXPECT_EQ(cfg.lr_scaling().rule(), TrainConfig::LrScaling::NONE);
  EXPECT_EQ(cfg.lr_scaling().base_global_batch(), 0);
  EXPECT_DOUBLE_EQ(cfg.clip_grad_norm(), 0);
  EXPECT_EQ(cfg.parallel().strategy(), TrainConfig::Parallel::DDP);
  EXPECT_DOUBLE_EQ(cfg.parallel().bucket_cap_mb(), 25);
  EXPECT_TRUE(cfg.parallel().overlap());
  EXPECT_EQ(cfg.parallel().batch_norm(), TrainConfig::Parallel::LOCAL);
  EXPECT_EQ(cfg.precision().compute(), TrainConfig::Precision::F32);
  EXPECT_EQ(cfg.device(), TrainConfig::CPU);
  EXPECT_TRUE(cfg.data().train().has_synthetic());
  EXPECT_FALSE(cfg.data().has_eval());
  EXPECT_TRUE(cfg.data().shuffle());
  EXPECT_TRUE(cfg.data().drop_last());
  EXPECT_EQ(cfg.steps(), 1000);
  EXPECT_EQ(cfg.eval().every(), 0);
  EXPECT_EQ(cfg.eval().batches(), 0);
  EXPECT_EQ(cfg.log().every(), 10);
  EXPECT_EQ(cfg.log().tensorboard_dir(), "");
  EXPECT_EQ(cfg.log().trace_file(), "");
  EXPECT_EQ(cfg.checkpoint().dir(), "");
  EXPECT_EQ(cfg.checkpoint().every(), 0);
  EXPECT_EQ(cfg.checkpoint().keep(), 3);
  EXPECT_FALSE(cfg.checkpoint().resume());
  EXPECT_EQ(cfg.seed(), 0u);
}

TEST(ConfigLoader, MicroDefaultsToGlobal) {
  TrainConfig cfg = parseOk("batch { global: 96 }");
  EXPECT_EQ(cfg.batch().micro(), 96);
  EXPECT_TRUE(cfg.batch().has_micro());
}

TEST(ConfigLoader, WrittenFieldsKeepTheirPresence) {
  // Defaults are not written into the message, so a later overlay can tell
  // what a file really said.
  TrainConfig cfg = parseOk("steps: 5");
  EXPECT_TRUE(cfg.has_steps());
  EXPECT_FALSE(cfg.has_seed());
  EXPECT_FALSE(cfg.parallel().has_bucket_cap_mb());
}

TEST(ConfigLoader, CommentsAndListSyntax) {
  TrainConfig cfg = parseOk(R"pb(
    # a comment
    data { train { npy [{ input: "x" path: "x.npy" }, { input: "y" path: "y.npy" }] } }
  )pb");
  EXPECT_EQ(cfg.data().train().npy_size(), 2);
}

//===----------------------------------------------------------------------===//
// Syntax errors and unknown names
//===----------------------------------------------------------------------===//

TEST(ConfigLoader, SyntaxErrorHasLineAndColumn) {
  EXPECT_EQ(parseError("steps: 10\nbatch { global: \"x\" }\n"),
            "train.pbtxt:2:17: error: batch.global: expected integer, got: \"x\"");
  EXPECT_EQ(parseError("batch { global: 3.5 }"),
            "train.pbtxt:1:17: error: batch.global: expected integer, got: 3.5");
  EXPECT_EQ(parseError("model: mlp.sn"), "train.pbtxt:1:8: error: model: expected string, "
                                         "got: mlp (write strings in double quotes)");
  EXPECT_EQ(parseError("seed: -1"), "train.pbtxt:1:7: error: seed must not be negative");
}

TEST(ConfigLoader, UnclosedAndUnmatchedBraces) {
  EXPECT_EQ(parseError("steps: 1\nbatch { global: 3\n"),
            "train.pbtxt:3:1: error: unexpected end of file: 'batch {' is not closed");
  EXPECT_EQ(parseError("batch { global: 3 } }"),
            "train.pbtxt:1:21: error: unexpected '}': no message is open here");
}

TEST(ConfigLoader, UnknownFieldNamesItAndItsLine) {
  EXPECT_EQ(parseError("model: \"m.sn\"\nstpes: 10\n"),
            "train.pbtxt:2:1: error: unknown field 'stpes'; did you mean 'steps'?");
  EXPECT_EQ(parseError("model: \"m.sn\"\nbatch { global: 256 mciro: 32 }\n"),
            "train.pbtxt:2:21: error: unknown field 'mciro' in 'batch'; did you mean 'micro'?");
  EXPECT_EQ(parseError("data { train { npy { input: \"x\" pth: \"a\" } } }"),
            "train.pbtxt:1:33: error: unknown field 'pth' in 'data.train.npy[0]'; "
            "did you mean 'path'?");
  EXPECT_EQ(parseError("set { key: \"a\" vlaue: \"b\" }"),
            "train.pbtxt:1:16: error: unknown field 'vlaue' in 'set'; did you mean 'value'?");
}

TEST(ConfigLoader, UnknownFieldThatLivesElsewhere) {
  EXPECT_EQ(parseError("lr: 3e-4"),
            "train.pbtxt:1:1: error: unknown field 'lr'; 'lr' belongs at "
            "'optimizer.adamw.lr' or 'optimizer.sgd.lr'");
  // A field of an enclosing message: the '}' before it is missing.
  EXPECT_EQ(parseError("batch { global: 256 micro: 32\nsteps: 10\n"),
            "train.pbtxt:2:1: error: unknown field 'steps' in 'batch'; is a '}' missing "
            "before it? 'steps' is a field of the top level");
}

TEST(ConfigLoader, UnknownFieldWithoutSuggestionListsTheFields) {
  EXPECT_EQ(parseError("batch { foo: 1 }"),
            "train.pbtxt:1:9: error: unknown field 'foo' in 'batch'; the fields here are "
            "global, micro");
}

TEST(ConfigLoader, UnknownEnumValueSuggestsOne) {
  EXPECT_EQ(parseError("parallel { strategy: DPP }"),
            "train.pbtxt:1:22: error: unknown value 'DPP' for parallel.strategy; did you "
            "mean 'DDP'? (expected one of DDP, ZERO1, ZERO2, FULL_SHARD)");
  EXPECT_EQ(parseError("device: cuda"),
            "train.pbtxt:1:9: error: unknown value 'cuda' for device; did you mean "
            "'CUDA'? (expected one of CPU, CUDA)");
}

TEST(ConfigLoader, FieldGivenTwiceAndOneofClash) {
  EXPECT_EQ(parseError("steps: 1\nsteps: 2"),
            "train.pbtxt:2:1: error: steps is given more than once");
  EXPECT_EQ(parseError("optimizer { adamw {} sgd {} }"),
            "train.pbtxt:1:22: error: optimizer.sgd cannot be given together with "
            "optimizer.adamw; choose one");
}

TEST(ConfigLoader, TabsCountAsOneColumn) {
  // Protobuf's tokenizer advances a tab to the next multiple of 8.
  EXPECT_EQ(parseError("batch {\n\t\tmciro: 3 }"),
            "train.pbtxt:2:3: error: unknown field 'mciro' in 'batch'; did you mean 'micro'?");
  EXPECT_EQ(parseError("batch {\n\tglobal: 7 micro: 2\n}"),
            "train.pbtxt:2:12: error: batch.micro (2) does not divide batch.global (7); the "
            "nearest micro batches that do are 1 or 7");
}

TEST(ConfigLoader, DisplayPathDefaults) {
  std::string error;
  EXPECT_FALSE(parseConfigText("stpes: 1", "", error));
  EXPECT_EQ(error, "<config>:1:1: error: unknown field 'stpes'; did you mean 'steps'?");
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

TEST(ConfigLoader, MicroNotDividingGlobal) {
  EXPECT_EQ(parseError("model: \"m.sn\"\nbatch { global: 256 micro: 48 }"),
            "train.pbtxt:2:21: error: batch.micro (48) does not divide batch.global (256); "
            "the nearest micro batches that do are 32 or 64");
  EXPECT_EQ(parseError("batch { global: 16 micro: 32 }"),
            "train.pbtxt:1:20: error: batch.micro (32) does not divide batch.global (16); "
            "the nearest micro batches that do are 16");
}

struct ValidationCase {
  const char *name;
  const char *text;
  const char *error;
};

void PrintTo(const ValidationCase &c, std::ostream *os) { *os << c.name; }

class ValidationErrors : public ::testing::TestWithParam<ValidationCase> {};

TEST_P(ValidationErrors, NamesFileLineAndField) {
  EXPECT_EQ(parseError(GetParam().text), GetParam().error);
}

const ValidationCase kValidationCases[] = {
    {"GlobalPositive", "batch { global: 0 }",
     "train.pbtxt:1:9: error: batch.global (0) must be positive"},
    {"GlobalNegativeOnlyOnce", "batch { global: -4 }",
     "train.pbtxt:1:9: error: batch.global (-4) must be positive"},
    {"MicroPositive", "batch { global: 8 micro: 0 }",
     "train.pbtxt:1:19: error: batch.micro (0) must be positive"},
    {"AdamLr", "optimizer { adamw { lr: 0 } }",
     "train.pbtxt:1:21: error: optimizer.adamw.lr (0) must be a positive number"},
    {"AdamLrNan", "optimizer { adamw { lr: nan } }",
     "train.pbtxt:1:21: error: optimizer.adamw.lr (nan) must be a positive number"},
    {"AdamLrInf", "optimizer { adamw { lr: inf } }",
     "train.pbtxt:1:21: error: optimizer.adamw.lr (inf) must be a positive number"},
    {"Beta1", "optimizer { adamw { beta1: 1 } }",
     "train.pbtxt:1:21: error: optimizer.adamw.beta1 (1) must be in [0, 1)"},
    {"Beta1Whole", "optimizer { adamw { beta1: 10 } }",
     "train.pbtxt:1:21: error: optimizer.adamw.beta1 (10) must be in [0, 1)"},
    {"Beta2", "optimizer { adamw { beta2: -0.5 } }",
     "train.pbtxt:1:21: error: optimizer.adamw.beta2 (-0.5) must be in [0, 1)"},
    {"Eps", "optimizer { adamw { eps: 0 } }",
     "train.pbtxt:1:21: error: optimizer.adamw.eps (0) must be a positive number"},
    {"AdamWeightDecay", "optimizer { adamw { weight_decay: -0.1 } }",
     "train.pbtxt:1:21: error: optimizer.adamw.weight_decay (-0.1) must not be negative"},
    {"SgdLr", "optimizer { sgd { lr: -1 } }",
     "train.pbtxt:1:19: error: optimizer.sgd.lr (-1) must be a positive number"},
    {"Momentum", "optimizer { sgd { momentum: -0.9 } }",
     "train.pbtxt:1:19: error: optimizer.sgd.momentum (-0.9) must not be negative"},
    {"SgdWeightDecay", "optimizer { sgd { weight_decay: -1 } }",
     "train.pbtxt:1:19: error: optimizer.sgd.weight_decay (-1) must not be negative"},
    {"NesterovNeedsMomentum", "optimizer { sgd { nesterov: true } }",
     "train.pbtxt:1:19: error: optimizer.sgd.nesterov needs optimizer.sgd.momentum > 0 "
     "(it is 0)"},
    {"EmptyOptimizer", "optimizer { }",
     "train.pbtxt:1:1: error: optimizer is empty; write adamw { ... } or sgd { ... } in it"},
    {"Warmup", "schedule { warmup_steps: -1 }",
     "train.pbtxt:1:12: error: schedule.warmup_steps (-1) must not be negative"},
    {"MinLr", "schedule { cosine { min_lr: -1e-5 } }",
     "train.pbtxt:1:21: error: schedule.cosine.min_lr (-1e-05) must not be negative"},
    {"EndLr", "schedule { linear { end_lr: -1 } }",
     "train.pbtxt:1:21: error: schedule.linear.end_lr (-1) must not be negative"},
    {"ScalingNeedsBase", "lr_scaling { rule: LINEAR }",
     "train.pbtxt:1:14: error: lr_scaling.rule LINEAR needs lr_scaling.base_global_batch > 0 "
     "(it is 0)"},
    {"ScalingBaseNegative", "lr_scaling { rule: SQRT base_global_batch: -8 }",
     "train.pbtxt:1:25: error: lr_scaling.rule SQRT needs lr_scaling.base_global_batch > 0 "
     "(it is -8)"},
    {"ClipGradNorm", "clip_grad_norm: -1",
     "train.pbtxt:1:1: error: clip_grad_norm (-1) must not be negative"},
    {"BucketCap", "parallel { bucket_cap_mb: 0 }",
     "train.pbtxt:1:12: error: parallel.bucket_cap_mb (0) must be a positive number"},
    {"Steps", "steps: -1", "train.pbtxt:1:1: error: steps (-1) must not be negative"},
    {"EvalEvery", "eval { every: -1 }",
     "train.pbtxt:1:8: error: eval.every (-1) must not be negative"},
    {"EvalBatches", "eval { batches: -1 }",
     "train.pbtxt:1:8: error: eval.batches (-1) must not be negative"},
    {"EvalNeedsData", "eval { every: 10 }",
     "train.pbtxt:1:8: error: eval.every (10) asks for evaluation but data.eval gives no data"},
    {"LogEvery", "log { every: 0 }", "train.pbtxt:1:7: error: log.every (0) must be positive"},
    {"CheckpointKeep", "checkpoint { dir: \"c\" keep: 0 }",
     "train.pbtxt:1:23: error: checkpoint.keep (0) must be at least 1"},
    {"CheckpointEvery", "checkpoint { dir: \"c\" every: -1 }",
     "train.pbtxt:1:23: error: checkpoint.every (-1) must not be negative"},
    {"CheckpointEveryNeedsDir", "checkpoint { every: 100 }",
     "train.pbtxt:1:14: error: checkpoint.every (100) needs checkpoint.dir to say where to "
     "write"},
    {"ResumeNeedsDir", "checkpoint { resume: true }",
     "train.pbtxt:1:14: error: checkpoint.resume needs checkpoint.dir to say where to look"},
    {"ShapeValue", "shapes { key: \"T\" value: 0 }",
     "train.pbtxt:1:19: error: shapes.T (0) must be positive"},
    {"ShapeKey", "shapes { key: \"T x\" value: 4 }",
     "train.pbtxt:1:10: error: shapes key \"T x\" is not an identifier"},
    {"ShapeB", "shapes { key: \"B\" value: 4 }",
     "train.pbtxt:1:10: error: shapes cannot bind B; the batch dimension is batch.micro"},
    {"SetKey", "set { key: \"1st\" value: \"2\" }",
     "train.pbtxt:1:7: error: set key \"1st\" is not an identifier"},
    {"SetKeyTwice", "set { key: \"a\" value: \"1\" }\nset { key: \"a\" value: \"2\" }",
     "train.pbtxt:2:7: error: set key \"a\" is given more than once"},
    {"EmptyTrainSource", "data { train { } }",
     "train.pbtxt:1:8: error: data.train has no source; write npy { input: \"x\" path: "
     "\"x.npy\" }, tokens { path: \"train.bin\" } or synthetic {} in it"},
    {"EmptyEvalSource", "data { eval { } }",
     "train.pbtxt:1:8: error: data.eval has no source; write npy { input: \"x\" path: "
     "\"x.npy\" }, tokens { path: \"train.bin\" } or synthetic {} in it"},
    {"TwoForms", "data { train { synthetic {} tokens { path: \"t.bin\" } } }",
     "train.pbtxt:1:8: error: data.train gives tokens and synthetic; a data source has one "
     "form"},
    {"NpyNeedsInput", "data { train { npy { path: \"x.npy\" } } }",
     "train.pbtxt:1:16: error: data.train.npy[0] needs the model input it feeds (input: "
     "\"x\")"},
    {"NpyNeedsPath", "data { train { npy { input: \"x\" } } }",
     "train.pbtxt:1:16: error: data.train.npy[0] needs the path of its .npy file (path: "
     "\"x.npy\")"},
    {"NpyInputIdentifier", "data { train { npy { input: \"a-b\" path: \"p\" } } }",
     "train.pbtxt:1:22: error: data.train.npy[0].input (\"a-b\") is not an identifier"},
    {"NpyInputTwice",
     "data { train { npy { input: \"x\" path: \"a\" } npy { input: \"x\" path: \"b\" } } }",
     "train.pbtxt:1:51: error: data.train.npy[1].input (\"x\") is already fed by "
     "data.train.npy[0]"},
    {"TokensNeedPath", "data { eval { tokens { dtype: UINT32 } } }",
     "train.pbtxt:1:15: error: data.eval.tokens needs the path of its token file (path: "
     "\"train.bin\")"},
};

INSTANTIATE_TEST_SUITE_P(ConfigLoader, ValidationErrors, ::testing::ValuesIn(kValidationCases),
                         [](const ::testing::TestParamInfo<ValidationCase> &info) {
                           return std::string(info.param.name);
                         });

TEST(ConfigLoader, AllErrorsInFileOrder) {
  EXPECT_EQ(parseError("log { every: 0 }\n"
                       "optimizer { adamw { lr: -1 beta2: 1.0 } }\n"
                       "checkpoint { keep: 0 }\n"),
            "train.pbtxt:1:7: error: log.every (0) must be positive\n"
            "train.pbtxt:2:21: error: optimizer.adamw.lr (-1) must be a positive number\n"
            "train.pbtxt:2:28: error: optimizer.adamw.beta2 (1) must be in [0, 1)\n"
            "train.pbtxt:3:14: error: checkpoint.keep (0) must be at least 1");
}

//===----------------------------------------------------------------------===//
// Settings that need another: refused at the field
//===----------------------------------------------------------------------===//

class NeedsAnother : public ::testing::TestWithParam<ValidationCase> {};

TEST(ConfigLoader, BF16ComputeIsAccepted) {
  TrainConfig cfg = parseOk("precision { compute: BF16 }\n");
  EXPECT_EQ(cfg.precision().compute(), TrainConfig::Precision::BF16);
}

TEST_P(NeedsAnother, RefusedAtTheField) {
  EXPECT_EQ(parseError(GetParam().text), GetParam().error);
}

const ValidationCase kNeedsAnotherCases[] = {
    {"StrategyZero1WithoutWorldSize", "parallel { strategy: ZERO1 }",
     "train.pbtxt:1:12: error: parallel.strategy ZERO1 compiles each rank's shard of the "
     "optimizer state, so it needs parallel.world_size, the number of ranks (--set "
     "parallel.world_size=N)"},
    {"StrategyZero2WithoutWorldSize", "parallel { strategy: ZERO2 }",
     "train.pbtxt:1:12: error: parallel.strategy ZERO2 compiles each rank's shard of the "
     "optimizer state, so it needs parallel.world_size, the number of ranks (--set "
     "parallel.world_size=N)"},
    {"StrategyFullShardWithoutWorldSize", "parallel { bucket_cap_mb: 10 strategy: FULL_SHARD }",
     "train.pbtxt:1:30: error: parallel.strategy FULL_SHARD compiles each rank's shard of "
     "the optimizer state, so it needs parallel.world_size, the number of ranks (--set "
     "parallel.world_size=N)"},
};

INSTANTIATE_TEST_SUITE_P(ConfigLoader, NeedsAnother, ::testing::ValuesIn(kNeedsAnotherCases),
                         [](const ::testing::TestParamInfo<ValidationCase> &info) {
                           return std::string(info.param.name);
                         });

TEST(ConfigLoader, Zero1WithItsWorldSizeIsAccepted) {
  TrainConfig cfg = parseOk("parallel { strategy: ZERO1 world_size: 4 }\n");
  EXPECT_EQ(cfg.parallel().strategy(), TrainConfig::Parallel::ZERO1);
  EXPECT_EQ(cfg.parallel().world_size(), 4);
}

TEST(ConfigLoader, DefaultsWrittenOutAreAccepted) {
  TrainConfig cfg = parseOk("device: CPU\n"
                            "precision { compute: F32 }\n"
                            "parallel { strategy: DDP overlap: true }\n"
                            "log { tensorboard_dir: \"\" trace_file: \"\" }\n");
  EXPECT_TRUE(cfg.has_device());
  EXPECT_TRUE(cfg.parallel().has_overlap());
  EXPECT_TRUE(cfg.log().has_trace_file());
}

TEST(ConfigLoader, OverlapFalseIsAccepted) {
  TrainConfig cfg = parseOk("parallel { overlap: false }\n");
  EXPECT_FALSE(cfg.parallel().overlap());
  std::string error;
  EXPECT_TRUE(validateConfig(cfg, error)) << error;
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

TEST(ConfigLoader, LoadsTheValidInputs) {
  for (const char *name : {"valid_full.pbtxt", "valid_minimal.pbtxt",
                           "valid_sgd_tokens.pbtxt", "valid_overlay_sgd.pbtxt"}) {
    std::string error;
    std::optional<TrainConfig> cfg = loadConfigFile(inputPath(name), error);
    EXPECT_TRUE(cfg.has_value()) << name << ": " << error;
  }
}

TEST(ConfigLoader, InvalidInputsNameTheFile) {
  struct {
    const char *name;
    const char *error;
  } cases[] = {
      {"invalid_syntax.pbtxt", ":3:1: error: unknown field 'steps' in 'batch'; is a '}' "
                               "missing before it? 'steps' is a field of the top level"},
      {"invalid_unknown_field.pbtxt",
       ":2:21: error: unknown field 'mciro' in 'batch'; did you mean 'micro'?"},
      {"invalid_micro.pbtxt", ":2:21: error: batch.micro (48) does not divide batch.global "
                              "(256); the nearest micro batches that do are 32 or 64"},
      {"invalid_enum.pbtxt", ":2:22: error: unknown value 'DPP' for parallel.strategy; did "
                             "you mean 'DDP'? (expected one of DDP, ZERO1, ZERO2, FULL_SHARD)"},
      {"invalid_values.pbtxt", ":2:21: error: optimizer.adamw.lr (-1) must be a positive "
                               "number"},
  };
  for (const auto &c : cases) {
    std::string path = inputPath(c.name), error;
    EXPECT_FALSE(loadConfigFile(path, error)) << c.name;
    // The first line of the diagnostics is the one checked.
    EXPECT_EQ(error.substr(0, error.find('\n')), path + c.error);
  }
}

TEST(ConfigLoader, MissingFile) {
  std::string error;
  EXPECT_FALSE(loadConfigFile("/nonexistent/train.pbtxt", error));
  EXPECT_EQ(error, "/nonexistent/train.pbtxt: error: cannot open the config file: No such "
                   "file or directory");
}

TEST(ConfigLoader, ResolveModelPath) {
  TrainConfig cfg;
  EXPECT_EQ(resolveModelPath(cfg, "examples/mlp/train.pbtxt"), "");
  cfg.set_model("mlp.sn");
  EXPECT_EQ(resolveModelPath(cfg, "examples/mlp/train.pbtxt"), "examples/mlp/mlp.sn");
  EXPECT_EQ(resolveModelPath(cfg, "train.pbtxt"), "mlp.sn");
  EXPECT_EQ(resolveModelPath(cfg, "/abs/dir/train.pbtxt"), "/abs/dir/mlp.sn");
  cfg.set_model("../gpt/gpt.sn");
  EXPECT_EQ(resolveModelPath(cfg, "examples/mlp/train.pbtxt"), "examples/gpt/gpt.sn");
  cfg.set_model("/models/x.sn");
  EXPECT_EQ(resolveModelPath(cfg, "examples/mlp/train.pbtxt"), "/models/x.sn");
}

//===----------------------------------------------------------------------===//
// Overrides
//===----------------------------------------------------------------------===//

TEST(ConfigOverride, SetsFieldsByDottedPath) {
  TrainConfig cfg = parseOk(kFullConfig);
  std::string error;
  EXPECT_TRUE(applyOverride(cfg, "steps", "20", error)) << error;
  EXPECT_EQ(cfg.steps(), 20);
  EXPECT_TRUE(applyOverride(cfg, "optimizer.adamw.lr=1e-3", error)) << error;
  EXPECT_DOUBLE_EQ(cfg.optimizer().adamw().lr(), 1e-3);
  // Fields compiled into the program change only before compiling.
  EXPECT_TRUE(applyOverride(cfg, "parallel.batch_norm=LOCAL", error, Base::Compiling))
      << error;
  EXPECT_EQ(cfg.parallel().batch_norm(), TrainConfig::Parallel::LOCAL);
  EXPECT_TRUE(applyOverride(cfg, "data.shuffle=true", error)) << error;
  EXPECT_TRUE(cfg.data().shuffle());
  EXPECT_TRUE(applyOverride(cfg, "seed=123", error)) << error;
  EXPECT_EQ(cfg.seed(), 123u);
  EXPECT_TRUE(applyOverride(cfg, "checkpoint.keep=5", error)) << error;
  EXPECT_EQ(cfg.checkpoint().keep(), 5);
  EXPECT_TRUE(applyOverride(cfg, "checkpoint.dir=\"runs/x\"", error)) << error;
  EXPECT_EQ(cfg.checkpoint().dir(), "runs/x");
  EXPECT_TRUE(applyOverride(cfg, "model_name=gpt", error, Base::Compiling)) << error;
  EXPECT_EQ(cfg.model_name(), "gpt");
  EXPECT_TRUE(applyOverride(cfg, " batch.micro = 64 ", error)) << error;
  EXPECT_EQ(cfg.batch().micro(), 64);
}

TEST(ConfigOverride, SetsMapEntries) {
  TrainConfig cfg = parseOk(kFullConfig);
  std::string error;
  EXPECT_TRUE(applyOverride(cfg, "shapes.T=256", error, Base::Compiling)) << error;
  EXPECT_EQ(cfg.shapes().at("T"), 256);
  EXPECT_TRUE(applyOverride(cfg, "set.n_layer=4", error, Base::Compiling)) << error;
  EXPECT_EQ(cfg.set().at("n_layer"), "4");
  EXPECT_EQ(cfg.set().at("hidden"), "512");
}

TEST(ConfigOverride, SwitchesAOneofAndSetsMessages) {
  TrainConfig cfg = parseOk(kFullConfig);
  std::string error;
  EXPECT_TRUE(applyOverride(cfg, "optimizer.sgd.lr=0.1", error)) << error;
  ASSERT_TRUE(cfg.optimizer().has_sgd());
  EXPECT_FALSE(cfg.optimizer().has_adamw());
  EXPECT_DOUBLE_EQ(cfg.optimizer().sgd().lr(), 0.1);

  EXPECT_TRUE(applyOverride(cfg, "optimizer.sgd={lr: 0.2 momentum: 0.9 nesterov: true}", error))
      << error;
  EXPECT_DOUBLE_EQ(cfg.optimizer().sgd().lr(), 0.2);
  EXPECT_TRUE(cfg.optimizer().sgd().nesterov());

  EXPECT_TRUE(applyOverride(cfg, "data.train=tokens { path: \"t.bin\" }", error)) << error;
  EXPECT_TRUE(cfg.data().train().has_tokens());
  EXPECT_EQ(cfg.data().train().npy_size(), 0);

  EXPECT_TRUE(applyOverride(cfg, "schedule.linear={}", error)) << error;
  EXPECT_TRUE(cfg.schedule().has_linear());
  EXPECT_EQ(cfg.schedule().warmup_steps(), 100);
}

TEST(ConfigOverride, UnknownFieldSuggestsTheNearest) {
  TrainConfig cfg = parseOk(kFullConfig);
  std::string before = cfg.SerializeAsString(), error;
  EXPECT_FALSE(applyOverride(cfg, "stpes=20", error));
  EXPECT_EQ(error, "--set stpes=20: error: unknown field 'stpes'; did you mean 'steps'?");
  EXPECT_FALSE(applyOverride(cfg, "optimizer.adamw.lrr=1", error));
  EXPECT_EQ(error, "--set optimizer.adamw.lrr=1: error: unknown field 'optimizer.adamw.lrr'; "
                   "did you mean 'optimizer.adamw.lr'?");
  EXPECT_FALSE(applyOverride(cfg, "optimzer.adamw.lr=1", error));
  EXPECT_EQ(error, "--set optimzer.adamw.lr=1: error: unknown field 'optimzer.adamw.lr'; "
                   "did you mean 'optimizer.adamw.lr'?");
  EXPECT_FALSE(applyOverride(cfg, "lr=1", error));
  EXPECT_EQ(error, "--set lr=1: error: unknown field 'lr'; did you mean 'optimizer.adamw.lr' "
                   "or 'optimizer.sgd.lr'?");
  EXPECT_FALSE(applyOverride(cfg, "batch.foo=1", error));
  EXPECT_EQ(error, "--set batch.foo=1: error: unknown field 'batch.foo'; batch has the fields "
                   "global, micro");
  EXPECT_EQ(cfg.SerializeAsString(), before);
}

TEST(ConfigOverride, BadValueSaysWhatIsExpected) {
  TrainConfig cfg = parseOk(kFullConfig);
  std::string before = cfg.SerializeAsString(), error;
  EXPECT_FALSE(applyOverride(cfg, "steps=abc", error));
  EXPECT_EQ(error, "--set steps=abc: error: steps expects an integer, got 'abc'");
  EXPECT_FALSE(applyOverride(cfg, "steps=1.5", error));
  EXPECT_EQ(error, "--set steps=1.5: error: steps expects an integer, got '1.5'");
  EXPECT_FALSE(applyOverride(cfg, "optimizer.adamw.lr=fast", error));
  EXPECT_EQ(error, "--set optimizer.adamw.lr=fast: error: optimizer.adamw.lr expects a "
                   "finite number, got 'fast'");
  EXPECT_FALSE(applyOverride(cfg, "parallel.overlap=maybe", error));
  EXPECT_EQ(error, "--set parallel.overlap=maybe: error: parallel.overlap expects true or "
                   "false, got 'maybe'");
  EXPECT_FALSE(applyOverride(cfg, "parallel.strategy=zero2", error));
  EXPECT_EQ(error, "--set parallel.strategy=zero2: error: parallel.strategy expects one of "
                   "DDP, ZERO1, ZERO2, FULL_SHARD, got 'zero2'; did you mean 'ZERO2'?");
  EXPECT_FALSE(applyOverride(cfg, "seed=-1", error));
  EXPECT_EQ(error, "--set seed=-1: error: seed expects a non-negative integer, got '-1'");
  EXPECT_FALSE(applyOverride(cfg, "shapes.T=x", error));
  EXPECT_EQ(error, "--set shapes.T=x: error: shapes.T expects an integer, got 'x'");
  EXPECT_EQ(cfg.SerializeAsString(), before);
}

TEST(ConfigOverride, BadFieldShapes) {
  TrainConfig cfg = parseOk(kFullConfig);
  std::string error;
  EXPECT_FALSE(applyOverride(cfg, "steps", error));
  EXPECT_EQ(error, "error: --set steps: expected FIELD=VALUE, e.g. steps=20");
  EXPECT_FALSE(applyOverride(cfg, "steps.x=1", error));
  EXPECT_EQ(error, "--set steps.x=1: error: steps is not a message; it has no field 'x'");
  EXPECT_FALSE(applyOverride(cfg, "shapes=3", error));
  EXPECT_EQ(error, "--set shapes=3: error: shapes is a map; name one key: shapes.KEY=VALUE");
  EXPECT_FALSE(applyOverride(cfg, "data.train.npy=x", error));
  EXPECT_EQ(error, "--set data.train.npy=x: error: data.train.npy is a list and cannot be set "
                   "by an override; set the whole 'data.train' instead, e.g. "
                   "data.train='npy { ... }'");
  EXPECT_FALSE(applyOverride(cfg, "optimizer.sgd={lrr: 1}", error));
  EXPECT_EQ(error, "--set optimizer.sgd={lrr: 1}: error: optimizer.sgd expects a message in "
                   "text format, e.g. optimizer.sgd='{ ... }': unknown field 'lrr'; did you "
                   "mean 'lr'?");
  EXPECT_FALSE(applyOverride(cfg, "a..b=1", error));
  EXPECT_EQ(error, "--set a..b=1: error: 'a..b' is not a dotted field name (e.g. "
                   "optimizer.adamw.lr)");
}

TEST(ConfigOverride, RevalidatesAndLeavesTheConfigOnFailure) {
  TrainConfig cfg = parseOk(kFullConfig);
  std::string error;
  EXPECT_FALSE(applyOverride(cfg, "batch.micro=48", error));
  EXPECT_EQ(error, "--set batch.micro=48: error: batch.micro (48) does not divide batch.global "
                   "(256); the nearest micro batches that do are 32 or 64");
  EXPECT_EQ(cfg.batch().micro(), 32);
  EXPECT_FALSE(applyOverride(cfg, "optimizer.adamw.beta1=1", error));
  EXPECT_EQ(error, "--set optimizer.adamw.beta1=1: error: optimizer.adamw.beta1 (1) must be "
                   "in [0, 1)");
  EXPECT_DOUBLE_EQ(cfg.optimizer().adamw().beta1(), 0.9);
}

TEST(ConfigOverride, StrategyIsCompiledIn) {
  TrainConfig cfg = parseOk(kFullConfig);
  std::string before = cfg.SerializeAsString(), error;
  struct {
    const char *assignment;
    const char *error;
  } cases[] = {
      // The strategy is compiled in, too.
      {"parallel.strategy=FULL_SHARD",
       "--set parallel.strategy=FULL_SHARD: error: parallel.strategy (FULL_SHARD) is fixed "
       "when sinterc compiles the program (this one has DDP); changing it at run time is not "
       "built yet, so recompile with the new value\n"
       "--set parallel.strategy=FULL_SHARD: error: parallel.strategy FULL_SHARD compiles each "
       "rank's shard of the optimizer state, so it needs parallel.world_size, the number of "
       "ranks (--set parallel.world_size=N)"},
  };
  for (const auto &c : cases) {
    EXPECT_FALSE(applyOverride(cfg, c.assignment, error)) << c.assignment;
    EXPECT_EQ(error, c.error);
  }
  EXPECT_EQ(cfg.SerializeAsString(), before);
}

TEST(ConfigOverride, LogFilesAreSetAtRunTime) {
  TrainConfig cfg = parseOk(kFullConfig);
  std::string error;
  EXPECT_TRUE(applyOverrides(cfg, {"log.tensorboard_dir=runs/a", "log.trace_file=t.json",
                                   "log.jsonl=m.jsonl"},
                             error))
      << error;
  EXPECT_EQ(cfg.log().tensorboard_dir(), "runs/a");
  EXPECT_EQ(cfg.log().trace_file(), "t.json");
  EXPECT_EQ(cfg.log().jsonl(), "m.jsonl");
}

TEST(ConfigOverride, BucketCapIsFixedAtCompileTime) {
  TrainConfig cfg = parseOk(kFullConfig); // compiled with bucket_cap_mb: 40
  std::string before = cfg.SerializeAsString(), error;
  EXPECT_FALSE(applyOverride(cfg, "parallel.bucket_cap_mb=8", error));
  EXPECT_EQ(error, "--set parallel.bucket_cap_mb=8: error: parallel.bucket_cap_mb (8) is "
                   "fixed when sinterc compiles the program (this one has 40); changing it "
                   "at run time is not built yet, so recompile with the new value");
  EXPECT_FALSE(applyOverrides(cfg, {"steps=5", "parallel.bucket_cap_mb=0.5"}, error));
  EXPECT_EQ(error, "--set parallel.bucket_cap_mb=0.5: error: parallel.bucket_cap_mb (0.5) is "
                   "fixed when sinterc compiles the program (this one has 40); changing it "
                   "at run time is not built yet, so recompile with the new value");
  // Replacing the whole message drops the written cap and overlap back to
  // their defaults: each is named.
  EXPECT_FALSE(applyOverrides(cfg, {"parallel={batch_norm: SYNC}"}, error));
  EXPECT_EQ(error, "--set parallel={batch_norm: SYNC}: error: parallel.bucket_cap_mb (25) is "
                   "fixed when sinterc compiles the program (this one has 40); changing it "
                   "at run time is not built yet, so recompile with the new value\n"
                   "--set parallel={batch_norm: SYNC}: error: parallel.overlap (true) is "
                   "fixed when sinterc compiles the program (this one has false); changing "
                   "it at run time is not built yet, so recompile with the new value");
  EXPECT_EQ(cfg.SerializeAsString(), before);

  // The compiled value itself changes nothing, and is accepted.
  EXPECT_TRUE(applyOverride(cfg, "parallel.bucket_cap_mb=40", error)) << error;
  EXPECT_TRUE(applyOverrides(cfg, {"parallel.bucket_cap_mb=40", "steps=5"}, error)) << error;
  EXPECT_EQ(cfg.steps(), 5);

  // A program compiled without the field has the default, 25.
  TrainConfig defaults = parseOk("");
  EXPECT_TRUE(applyOverride(defaults, "parallel.bucket_cap_mb=25", error)) << error;
  EXPECT_FALSE(applyOverride(defaults, "parallel.bucket_cap_mb=8", error));
  EXPECT_EQ(error, "--set parallel.bucket_cap_mb=8: error: parallel.bucket_cap_mb (8) is "
                   "fixed when sinterc compiles the program (this one has 25); changing it "
                   "at run time is not built yet, so recompile with the new value");
}

TEST(ConfigOverride, EveryCompiledInFieldIsFixed) {
  // The model, its constants and shapes, the batch-norm mode, the device,
  // the compute precision and the overlap of the gradient sums are compiled
  // into the program like the bucket layout: a change would be ignored.
  TrainConfig cfg = parseOk(kFullConfig);
  std::string before = cfg.SerializeAsString(), error;
  const std::pair<const char *, const char *> cases[] = {
      {"model=other.sn", "model (\"other.sn\") is fixed when sinterc compiles the "
                         "program (this one has \"mlp.sn\")"},
      {"shapes.T=256", "shapes (T=256) is fixed when sinterc compiles the program "
                       "(this one has T=128)"},
      {"set.hidden=1024", "set (hidden=1024) is fixed when sinterc compiles the program "
                          "(this one has hidden=512)"},
      {"parallel.batch_norm=LOCAL", "parallel.batch_norm (LOCAL) is fixed when sinterc "
                                    "compiles the program (this one has SYNC)"},
      {"device=CUDA", "device (CUDA) is fixed when sinterc compiles the program "
                      "(this one has CPU)"},
      {"precision.compute=BF16", "precision.compute (BF16) is fixed when sinterc "
                                 "compiles the program (this one has F32)"},
      {"parallel.overlap=true", "parallel.overlap (true) is fixed when sinterc compiles "
                                "the program (this one has false)"},
  };
  for (const auto &[assignment, message] : cases) {
    EXPECT_FALSE(applyOverride(cfg, assignment, error)) << assignment;
    EXPECT_NE(error.find(message), std::string::npos) << error;
  }
  EXPECT_EQ(cfg.SerializeAsString(), before);
  // From a file, the error points at the field.
  EXPECT_FALSE(mergeConfigText(cfg, "steps: 3\nshapes { key: \"T\" value: 64 }\n",
                               "run.pbtxt", error));
  EXPECT_EQ(error.rfind("run.pbtxt:2:", 0), 0u) << error;
  // Repeating the compiled values changes nothing and is accepted.
  EXPECT_TRUE(mergeConfigText(cfg, kFullConfig, "same.pbtxt", error)) << error;
}

TEST(ConfigOverride, AnythingChangesBeforeCompiling) {
  // sinterc --set lays settings over the config it is about to compile.
  TrainConfig cfg = parseOk(kFullConfig);
  std::string error;
  EXPECT_TRUE(applyOverrides(cfg,
                             {"parallel.bucket_cap_mb=8", "shapes.T=256",
                              "parallel.batch_norm=LOCAL", "model=other.sn"},
                             error, Base::Compiling))
      << error;
  EXPECT_DOUBLE_EQ(cfg.parallel().bucket_cap_mb(), 8);
  EXPECT_EQ(cfg.shapes().at("T"), 256);
  EXPECT_EQ(cfg.model(), "other.sn");
}

TEST(ConfigOverride, SeveralAtOnceValidateOnce) {
  TrainConfig cfg = parseOk(kFullConfig);
  std::string error;
  // One at a time, the first would fail: 32 does not divide 48.
  EXPECT_TRUE(applyOverrides(cfg, {"batch.global=48", "batch.micro=16"}, error)) << error;
  EXPECT_EQ(cfg.batch().global(), 48);
  EXPECT_EQ(cfg.batch().micro(), 16);
  EXPECT_FALSE(applyOverrides(cfg, {"steps=5", "batch.micro=7"}, error));
  EXPECT_EQ(error, "error: batch.micro (7) does not divide batch.global (48); the nearest micro "
                   "batches that do are 6 or 8");
  EXPECT_EQ(cfg.steps(), 1000);
  EXPECT_FALSE(applyOverrides(cfg, {"steps=5", "stpes=6"}, error));
  EXPECT_EQ(error, "--set stpes=6: error: unknown field 'stpes'; did you mean 'steps'?");
  EXPECT_EQ(cfg.steps(), 1000);
}

TEST(ConfigOverride, ValidateConfigAlone) {
  TrainConfig cfg = parseOk("");
  std::string error;
  EXPECT_TRUE(validateConfig(cfg, error)) << error;
  cfg.mutable_log()->set_every(-3);
  EXPECT_FALSE(validateConfig(cfg, error));
  EXPECT_EQ(error, "error: log.every (-3) must be positive");
}

//===----------------------------------------------------------------------===//
// Merging a second config file
//===----------------------------------------------------------------------===//

TEST(ConfigMerge, OverlayReplacesOnlyWrittenFields) {
  TrainConfig cfg = parseOk(kFullConfig);
  std::string error;
  ASSERT_TRUE(mergeConfigText(cfg, R"pb(
    steps: 50
    optimizer { sgd { lr: 0.05 momentum: 0.9 } }
    parallel { batch_norm: LOCAL }
    set { key: "depth" value: "3" }
    shapes { key: "T" value: 64 }
    data { train { synthetic {} } }
  )pb", "over.pbtxt", error, Base::Compiling)) << error;
  EXPECT_EQ(cfg.shapes().at("T"), 64); // same key: replaced
  EXPECT_EQ(cfg.shapes().size(), 1u);
  EXPECT_EQ(cfg.steps(), 50);
  ASSERT_TRUE(cfg.optimizer().has_sgd());
  EXPECT_DOUBLE_EQ(cfg.optimizer().sgd().lr(), 0.05);
  EXPECT_EQ(cfg.parallel().batch_norm(), TrainConfig::Parallel::LOCAL);
  EXPECT_DOUBLE_EQ(cfg.parallel().bucket_cap_mb(), 40); // kept
  EXPECT_TRUE(cfg.parallel().has_strategy());           // kept
  EXPECT_EQ(cfg.set().at("hidden"), "512");             // kept
  EXPECT_EQ(cfg.set().at("depth"), "3");
  EXPECT_TRUE(cfg.data().train().has_synthetic());
  EXPECT_EQ(cfg.data().train().npy_size(), 0); // replaced, not mixed
  EXPECT_TRUE(cfg.data().eval().has_tokens()); // kept
  EXPECT_EQ(cfg.batch().global(), 256);
  EXPECT_EQ(cfg.batch().micro(), 32);
}

TEST(ConfigMerge, ErrorsPointIntoTheOverlay) {
  TrainConfig cfg = parseOk(kFullConfig);
  std::string before = cfg.SerializeAsString(), error;
  EXPECT_FALSE(mergeConfigText(cfg, "steps: 3\nbatch { global: 100 }\n", "over.pbtxt", error));
  // micro (32) comes from the first config: the diagnostic points at the
  // overlay's `batch`.
  EXPECT_EQ(error, "over.pbtxt:2:1: error: batch.micro (32) does not divide batch.global (100); "
                   "the nearest micro batches that do are 25 or 50");
  EXPECT_FALSE(mergeConfigText(cfg, "stpes: 3", "over.pbtxt", error));
  EXPECT_EQ(error, "over.pbtxt:1:1: error: unknown field 'stpes'; did you mean 'steps'?");
  EXPECT_EQ(cfg.SerializeAsString(), before);
}

TEST(ConfigMerge, NotBuiltSettingsInTheOverlayAreRefusedAtTheField) {
  TrainConfig cfg = parseOk(kFullConfig);
  std::string before = cfg.SerializeAsString(), error;
  EXPECT_FALSE(mergeConfigText(
      cfg, "steps: 3\nparallel { strategy: FULL_SHARD }\nprecision { compute: BF16 }\n",
      "over.pbtxt", error));
  EXPECT_EQ(error, "over.pbtxt:2:12: error: parallel.strategy (FULL_SHARD) is fixed when "
                   "sinterc compiles the program (this one has DDP); changing it at run time "
                   "is not built yet, so recompile with the new value\n"
                   "over.pbtxt:2:12: error: parallel.strategy FULL_SHARD compiles each rank's "
                   "shard of the optimizer state, so it needs parallel.world_size, the number "
                   "of ranks (--set parallel.world_size=N)\n"
                   "over.pbtxt:3:13: error: precision.compute (BF16) is fixed when sinterc "
                   "compiles the program (this one has F32); changing it at run time is not "
                   "built yet, so recompile with the new value");
  EXPECT_EQ(cfg.SerializeAsString(), before);
}

TEST(ConfigMerge, BucketCapIsFixedAtCompileTime) {
  TrainConfig cfg = parseOk(kFullConfig); // compiled with bucket_cap_mb: 40
  std::string before = cfg.SerializeAsString(), error;
  EXPECT_FALSE(mergeConfigText(cfg, "steps: 3\nparallel { bucket_cap_mb: 8 }\n",
                               "over.pbtxt", error));
  EXPECT_EQ(error, "over.pbtxt:2:12: error: parallel.bucket_cap_mb (8) is fixed when sinterc "
                   "compiles the program (this one has 40); changing it at run time is not "
                   "built yet, so recompile with the new value");
  EXPECT_EQ(cfg.SerializeAsString(), before);
  // The compiled value is accepted: the same file can be given again.
  EXPECT_TRUE(mergeConfigText(cfg, "steps: 3\nparallel { bucket_cap_mb: 40 }\n", "over.pbtxt",
                              error))
      << error;
  EXPECT_EQ(cfg.steps(), 3);
  // At compile time any positive cap is taken.
  EXPECT_DOUBLE_EQ(parseOk("parallel { bucket_cap_mb: 8 }").parallel().bucket_cap_mb(), 8);
}

TEST(ConfigMerge, FromFile) {
  std::string error;
  std::optional<TrainConfig> cfg = loadConfigFile(inputPath("valid_full.pbtxt"), error);
  ASSERT_TRUE(cfg) << error;
  ASSERT_TRUE(mergeConfigFile(*cfg, inputPath("valid_overlay_sgd.pbtxt"), error)) << error;
  EXPECT_TRUE(cfg->optimizer().has_sgd());
  EXPECT_EQ(cfg->steps(), 50);
  EXPECT_EQ(cfg->model(), "mlp.sn");
}

//===----------------------------------------------------------------------===//
// Accumulation steps
//===----------------------------------------------------------------------===//

TEST(AccumulationSteps, WholeNumbers) {
  TrainConfig cfg = parseOk("batch { global: 256 micro: 32 }");
  std::string error;
  EXPECT_EQ(accumulationSteps(cfg, 1, error), 8);
  EXPECT_EQ(accumulationSteps(cfg, 2, error), 4);
  EXPECT_EQ(accumulationSteps(cfg, 8, error), 1);
  EXPECT_EQ(error, "");
  TrainConfig defaults = parseOk("");
  EXPECT_EQ(accumulationSteps(defaults, 1, error), 1);
}

TEST(AccumulationSteps, ErrorNamesTheThreeNumbers) {
  TrainConfig cfg = parseOk("batch { global: 256 micro: 32 }");
  std::string error;
  EXPECT_EQ(accumulationSteps(cfg, 3, error), -1);
  EXPECT_EQ(error, "batch.global (256) is not divisible by batch.micro (32) x world size "
                   "(3) = 96; accumulation steps = global / (micro x world size) must be a "
                   "whole number; 256 samples cannot be split evenly over 3 ranks (with "
                   "batch.micro 32, use a world size that divides 8)");
  EXPECT_EQ(accumulationSteps(cfg, 16, error), -1);
  EXPECT_EQ(error, "batch.global (256) is not divisible by batch.micro (32) x world size "
                   "(16) = 512; accumulation steps = global / (micro x world size) must be a "
                   "whole number; each rank takes 16 samples per step, which batch.micro must "
                   "divide (e.g. 16)");
  EXPECT_EQ(accumulationSteps(cfg, 0, error), -1);
  EXPECT_EQ(error, "the world size (0) must be at least 1");
}

TEST(AccumulationSteps, MicroDefaultIsGlobal) {
  TrainConfig cfg; // not completed by the loader: micro absent
  cfg.mutable_batch()->set_global(64);
  std::string error;
  EXPECT_EQ(accumulationSteps(cfg, 1, error), 1);
  EXPECT_EQ(accumulationSteps(cfg, 2, error), -1);
  EXPECT_NE(error.find("batch.micro (64) x world size (2) = 128"), std::string::npos) << error;
}

} // namespace
