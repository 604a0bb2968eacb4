//===- TrainDialect.td - The Sinter train dialect ----------*- tablegen -*-===//
#ifndef SINTER_TRAIN_DIALECT_TD
#define SINTER_TRAIN_DIALECT_TD

include "mlir/IR/OpBase.td"

def Train_Dialect : Dialect {
  let name = "train";
  let cppNamespace = "::sinter::train";
  let summary = "The structure of a training step over the global batch";
  let description = [{
    The `train` dialect says what a training step needs from the world
    around one micro-batch: how much of the global batch a micro-batch is
    (`train.sample_fraction`), counts over the whole global batch
    (`train.global_count`), the loop over the micro-batches of a step
    (`train.micro_batch_count`, `train.micro_batch_input`), the step's
    random key (`train.random_key`) and the point where the gradients are
    final (`train.gradients_ready`).

    `train-normalize-loss` introduces the first two on the graph; the
    `train-accumulate` pass builds the micro-batch loop and replaces them
    with values computed before it. A target lowers what is left to calls of
    the runtime's C ABI (`runtime/contract/abi.h`).
  }];
}

#endif // SINTER_TRAIN_DIALECT_TD
