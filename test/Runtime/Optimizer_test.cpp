//===- Optimizer_test.cpp - Schedule, update scalars, compiled update -----===//

#include "program/Optimizer.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace sinter::rt;
using sinter::config::TrainConfig;

namespace {

TrainConfig adamw(double lr, int64_t steps) {
  TrainConfig cfg;
  cfg.set_steps(steps);
  cfg.mutable_optimizer()->mutable_adamw()->set_lr(lr);
  return cfg;
}

TrainConfig sgd(double lr, double momentum) {
  TrainConfig cfg;
  cfg.mutable_optimizer()->mutable_sgd()->set_lr(lr);
  cfg.mutable_optimizer()->mutable_sgd()->set_momentum(momentum);
  return cfg;
}

StepPlan planFor(const std::string &optimizer) {
  StepPlan plan;
  plan.phase = "train";
  plan.optimizer = optimizer;
  return plan;
}

} // namespace

TEST(OptimizerSchedule, ConstantKeepsTheWrittenRate) {
  TrainConfig cfg = adamw(0.003, 100);
  for (int64_t step : {0, 1, 50, 99, 500})
    EXPECT_DOUBLE_EQ(scheduledLearningRate(cfg, step), 0.003) << step;
  cfg.mutable_schedule()->mutable_constant();
  EXPECT_DOUBLE_EQ(scheduledLearningRate(cfg, 42), 0.003);
}

TEST(OptimizerSchedule, DefaultsToAdamwRateWithoutOptimizer) {
  TrainConfig cfg; // optimizer absent: adamw's default lr 1e-3
  EXPECT_DOUBLE_EQ(scheduledLearningRate(cfg, 0), 1e-3);
}

TEST(OptimizerSchedule, SgdUsesItsOwnRate) {
  EXPECT_DOUBLE_EQ(scheduledLearningRate(sgd(0.2, 0), 3), 0.2);
}

TEST(OptimizerSchedule, WarmupRisesLinearlyToTheRate) {
  TrainConfig cfg = adamw(0.1, 100);
  cfg.mutable_schedule()->set_warmup_steps(4);
  // Step s (0-based) of the warm-up runs at lr * (s + 1) / warmup.
  EXPECT_DOUBLE_EQ(scheduledLearningRate(cfg, 0), 0.1 * 1 / 4);
  EXPECT_DOUBLE_EQ(scheduledLearningRate(cfg, 1), 0.1 * 2 / 4);
  EXPECT_DOUBLE_EQ(scheduledLearningRate(cfg, 2), 0.1 * 3 / 4);
  EXPECT_DOUBLE_EQ(scheduledLearningRate(cfg, 3), 0.1);
  EXPECT_DOUBLE_EQ(scheduledLearningRate(cfg, 4), 0.1); // then constant
  EXPECT_DOUBLE_EQ(scheduledLearningRate(cfg, 99), 0.1);
}

TEST(OptimizerSchedule, CosineDecaysToMinLrAfterWarmup) {
  const int64_t steps = 110, warmup = 10;
  const double lr = 0.5, minLr = 0.05;
  TrainConfig cfg = adamw(lr, steps);
  cfg.mutable_schedule()->set_warmup_steps(warmup);
  cfg.mutable_schedule()->mutable_cosine()->set_min_lr(minLr);
  for (int64_t step = warmup; step < steps; ++step) {
    double progress = double(step - warmup) / double(steps - warmup);
    double want = minLr + (lr - minLr) * (1 + std::cos(M_PI * progress)) / 2;
    EXPECT_NEAR(scheduledLearningRate(cfg, step), want, 1e-15) << step;
  }
  EXPECT_DOUBLE_EQ(scheduledLearningRate(cfg, warmup), lr);
  // Halfway through the decay: the mean of the two rates.
  EXPECT_NEAR(scheduledLearningRate(cfg, warmup + 50), (lr + minLr) / 2, 1e-15);
  // Past the last step it stays at min_lr.
  EXPECT_NEAR(scheduledLearningRate(cfg, steps), minLr, 1e-15);
  EXPECT_NEAR(scheduledLearningRate(cfg, steps + 1000), minLr, 1e-15);
  // During warm-up the cosine plays no part.
  EXPECT_DOUBLE_EQ(scheduledLearningRate(cfg, 4), lr * 5 / 10);
}

TEST(OptimizerSchedule, LinearDecaysToEndLr) {
  TrainConfig cfg = adamw(0.5, 10);
  cfg.mutable_schedule()->mutable_linear()->set_end_lr(0.1);
  for (int64_t step = 0; step <= 10; ++step)
    EXPECT_NEAR(scheduledLearningRate(cfg, step), 0.5 + (0.1 - 0.5) * step / 10.0, 1e-15)
        << step;
  EXPECT_NEAR(scheduledLearningRate(cfg, 25), 0.1, 1e-15);
}

TEST(OptimizerSchedule, LinearMayRiseToo) {
  TrainConfig cfg = adamw(0.1, 4);
  cfg.mutable_schedule()->mutable_linear()->set_end_lr(0.3);
  EXPECT_NEAR(scheduledLearningRate(cfg, 2), 0.2, 1e-15);
}

TEST(OptimizerLrScaling, NoneLinearAndSqrt) {
  TrainConfig cfg = adamw(0.001, 10);
  cfg.mutable_batch()->set_global(256);
  cfg.mutable_lr_scaling()->set_base_global_batch(64);
  cfg.mutable_lr_scaling()->set_rule(TrainConfig::LrScaling::NONE);
  EXPECT_DOUBLE_EQ(learningRateScale(cfg), 1.0);
  cfg.mutable_lr_scaling()->set_rule(TrainConfig::LrScaling::LINEAR);
  EXPECT_DOUBLE_EQ(learningRateScale(cfg), 4.0);
  cfg.mutable_lr_scaling()->set_rule(TrainConfig::LrScaling::SQRT);
  EXPECT_DOUBLE_EQ(learningRateScale(cfg), 2.0);
  // A batch smaller than the base scales down.
  cfg.mutable_batch()->set_global(16);
  EXPECT_DOUBLE_EQ(learningRateScale(cfg), 0.5);
}

TEST(OptimizerLrScaling, WithoutBaseBatchIsOne) {
  TrainConfig cfg = adamw(0.001, 10);
  cfg.mutable_batch()->set_global(256);
  cfg.mutable_lr_scaling()->set_rule(TrainConfig::LrScaling::LINEAR);
  EXPECT_DOUBLE_EQ(learningRateScale(cfg), 1.0);
}

TEST(OptimizerLrScaling, ScalesTheWholeSchedule) {
  TrainConfig cfg = adamw(0.01, 100);
  cfg.mutable_batch()->set_global(96);
  cfg.mutable_lr_scaling()->set_rule(TrainConfig::LrScaling::LINEAR);
  cfg.mutable_lr_scaling()->set_base_global_batch(32);
  cfg.mutable_schedule()->set_warmup_steps(2);
  cfg.mutable_schedule()->mutable_linear()->set_end_lr(0.0);
  EXPECT_NEAR(scheduledLearningRate(cfg, 0), 3 * 0.01 / 2, 1e-15);
  EXPECT_NEAR(scheduledLearningRate(cfg, 1), 3 * 0.01, 1e-15);
  EXPECT_NEAR(scheduledLearningRate(cfg, 51), 3 * 0.01 * (1 - 49.0 / 98), 1e-15);
}

TEST(OptimizerLrScaling, DescribesWhereTheRateComesFrom) {
  TrainConfig cfg = adamw(0.001, 10);
  EXPECT_EQ(describeLearningRate(cfg), "learning rate 0.001 (as written)");
  cfg.mutable_batch()->set_global(256);
  cfg.mutable_lr_scaling()->set_rule(TrainConfig::LrScaling::SQRT);
  cfg.mutable_lr_scaling()->set_base_global_batch(64);
  EXPECT_EQ(describeLearningRate(cfg),
            "learning rate 0.002 = 0.001 x sqrt(256 / 64) (lr_scaling SQRT "
            "from base_global_batch 64 to batch.global 256)");
}

TEST(OptimizerUpdateScalars, AdamwSlots) {
  TrainConfig cfg = adamw(0.1, 100);
  auto *a = cfg.mutable_optimizer()->mutable_adamw();
  a->set_beta1(0.8);
  a->set_beta2(0.95);
  a->set_eps(1e-6);
  a->set_weight_decay(0.05);
  cfg.set_clip_grad_norm(1.5);
  cfg.mutable_schedule()->set_warmup_steps(10);

  UpdateScalars s = updateScalars(cfg, 4, 3);
  EXPECT_DOUBLE_EQ(s[SINTER_HP_LR], 0.1 * 5 / 10); // the scheduled rate of step 4
  EXPECT_EQ(s[SINTER_HP_STEP], 3.0);                // the update count, not the step
  EXPECT_EQ(s[SINTER_HP_WEIGHT_DECAY], 0.05);
  EXPECT_EQ(s[SINTER_HP_WEIGHT_DECAY_1D], 0.0); // biases and scales left alone
  EXPECT_EQ(s[SINTER_HP_BETA1], 0.8);
  EXPECT_EQ(s[SINTER_HP_BETA2], 0.95);
  EXPECT_EQ(s[SINTER_HP_EPS], 1e-6);
  EXPECT_EQ(s[SINTER_HP_MOMENTUM], 0.0);
  EXPECT_EQ(s[SINTER_HP_NESTEROV], 0.0);
  EXPECT_EQ(s[SINTER_HP_MAX_GRAD_NORM], 1.5);
  EXPECT_EQ(s[SINTER_HP_APPLY], 1.0);
}

TEST(OptimizerUpdateScalars, AdamwDefaults) {
  TrainConfig cfg; // adamw {} as the loader fills it in
  UpdateScalars s = updateScalars(cfg, 0, 1);
  EXPECT_EQ(s[SINTER_HP_LR], 1e-3);
  EXPECT_EQ(s[SINTER_HP_BETA1], 0.9);
  EXPECT_EQ(s[SINTER_HP_BETA2], 0.999);
  EXPECT_EQ(s[SINTER_HP_EPS], 1e-8);
  EXPECT_EQ(s[SINTER_HP_WEIGHT_DECAY], 0.01);
  EXPECT_EQ(s[SINTER_HP_MAX_GRAD_NORM], 0.0); // no clipping
}

TEST(OptimizerUpdateScalars, Decay1dParamsAppliesTheDecayToRankOne) {
  TrainConfig cfg = adamw(0.1, 100);
  cfg.mutable_optimizer()->mutable_adamw()->set_weight_decay(0.2);
  cfg.mutable_optimizer()->set_decay_1d_params(true);
  UpdateScalars s = updateScalars(cfg, 0, 1);
  EXPECT_EQ(s[SINTER_HP_WEIGHT_DECAY], 0.2);
  EXPECT_EQ(s[SINTER_HP_WEIGHT_DECAY_1D], 0.2);
}

TEST(OptimizerUpdateScalars, SgdSlots) {
  TrainConfig cfg = sgd(0.05, 0.9);
  cfg.mutable_optimizer()->mutable_sgd()->set_nesterov(true);
  cfg.mutable_optimizer()->mutable_sgd()->set_weight_decay(1e-4);
  UpdateScalars s = updateScalars(cfg, 7, 8);
  EXPECT_EQ(s[SINTER_HP_LR], 0.05);
  EXPECT_EQ(s[SINTER_HP_STEP], 8.0);
  EXPECT_EQ(s[SINTER_HP_MOMENTUM], 0.9);
  EXPECT_EQ(s[SINTER_HP_NESTEROV], 1.0);
  EXPECT_EQ(s[SINTER_HP_WEIGHT_DECAY], 1e-4);
  EXPECT_EQ(s[SINTER_HP_WEIGHT_DECAY_1D], 0.0);
  // AdamW's slots stay zero for SGD.
  EXPECT_EQ(s[SINTER_HP_BETA1], 0.0);
  EXPECT_EQ(s[SINTER_HP_BETA2], 0.0);
  EXPECT_EQ(s[SINTER_HP_EPS], 0.0);
  EXPECT_EQ(s[SINTER_HP_APPLY], 1.0);

  cfg.mutable_optimizer()->set_decay_1d_params(true);
  EXPECT_EQ(updateScalars(cfg, 7, 8)[SINTER_HP_WEIGHT_DECAY_1D], 1e-4);
  cfg.mutable_optimizer()->mutable_sgd()->set_nesterov(false);
  EXPECT_EQ(updateScalars(cfg, 7, 8)[SINTER_HP_NESTEROV], 0.0);
}

TEST(OptimizerUpdateScalars, GradientsOnlyLeavesParametersAlone) {
  UpdateScalars s = gradientsOnly();
  EXPECT_EQ(s[SINTER_HP_APPLY], 0.0);
  // Step 1, not 0: AdamW's bias correction divides by 1 - beta^step.
  EXPECT_EQ(s[SINTER_HP_STEP], 1.0);
  for (int i = 0; i < SINTER_HP_COUNT; ++i) {
    if (i != SINTER_HP_STEP) {
      EXPECT_EQ(s[i], 0.0) << "slot " << i;
    }
  }
}

TEST(OptimizerCompiled, KindOfAConfig) {
  EXPECT_EQ(compiledOptimizerOf(TrainConfig()), "adamw");
  EXPECT_EQ(compiledOptimizerOf(adamw(0.1, 10)), "adamw");
  EXPECT_EQ(compiledOptimizerOf(sgd(0.1, 0)), "sgd");
  EXPECT_EQ(compiledOptimizerOf(sgd(0.1, 0.9)), "sgd_momentum");
}

TEST(OptimizerCompiled, SameKindIsAccepted) {
  EXPECT_TRUE(checkCompiledOptimizer(adamw(0.5, 10), planFor("adamw")).ok());
  EXPECT_TRUE(checkCompiledOptimizer(sgd(0.1, 0), planFor("sgd")).ok());
  EXPECT_TRUE(checkCompiledOptimizer(sgd(0.1, 0.9), planFor("sgd_momentum")).ok());
  // A plan without an update (eval) accepts any config.
  EXPECT_TRUE(checkCompiledOptimizer(sgd(0.1, 0.9), planFor("")).ok());
}

TEST(OptimizerCompiled, MomentumBuffersAcceptMomentumZero) {
  // SGD with momentum 0 is plain SGD, whatever its buffers hold.
  EXPECT_TRUE(checkCompiledOptimizer(sgd(0.1, 0), planFor("sgd_momentum")).ok());
}

TEST(OptimizerCompiled, PlainSgdRefusesMomentum) {
  Status s = checkCompiledOptimizer(sgd(0.1, 0.9), planFor("sgd"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("compiled for sgd without momentum but the config "
                             "asks for sgd with momentum"),
            std::string::npos)
      << s.message();
}

TEST(OptimizerCompiled, AdamwRefusesSgdAndSaysToRecompile) {
  Status s = checkCompiledOptimizer(sgd(0.1, 0), planFor("adamw"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("optimizer: ", 0), 0u) << s.message();
  EXPECT_NE(s.message().find("compiled for adamw but the config asks for sgd "
                             "without momentum"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("recompile with this config"), std::string::npos)
      << s.message();

  EXPECT_FALSE(checkCompiledOptimizer(adamw(0.1, 10), planFor("sgd_momentum")).ok());
}
