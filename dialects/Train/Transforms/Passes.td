//===- Passes.td - Passes that build the training step -----*- tablegen -*-===//
#ifndef SINTER_TRAIN_PASSES_TD
#define SINTER_TRAIN_PASSES_TD

include "mlir/Pass/PassBase.td"

def TrainNormalizeLoss : Pass<"train-normalize-loss", "mlir::ModuleOp"> {
  let summary = "Makes a micro-batch's loss its exact share of the global "
                "batch's loss";
  let description = [{
    In each `graph.model` of phase "train", splits the loss into terms
    `c * L` (LANGUAGE.md 9): sums, differences, negations and products or
    quotients with a coefficient that depends on no input and no parameter.
    Each term is rewritten so that its values summed over the step's
    micro-batches (and ranks) give the term over the global batch:

    - a mean over samples (a loss with `reduction = "mean"` and no
      `ignore_index`, or a full `mean`) is scaled by
      `train.sample_fraction` (b / G);
    - a mean over valid targets (`ignore_index`) becomes the sum over the
      micro-batch divided by `train.global_count` of `target != ignore_index`;
    - a sum over samples is left as it is;
    - a term that depends on no input (a penalty on parameters, a
      constant) is scaled by `train.sample_fraction`, so the step counts it
      once.

    Anything else that depends on the batch is an error at the offending
    op that states the rule.
  }];
  let dependentDialects = ["sinter::train::TrainDialect"];
}

def TrainAccumulate : Pass<"train-accumulate", "mlir::ModuleOp"> {
  let summary = "The loop over a step's micro-batches, with accumulators";
  let description = [{
    Turns each function of phase "train" (after `graph-model-to-func` and
    the lowering to linalg) into the whole step of one rank:

    1. `k = train.micro_batch_count`, known at run time;
    2. for each `train.global_count`, a first loop over the k micro-batches
       that loads only the inputs the mask needs and sums the mask, then
       the sum over ranks (`train.sum_over_ranks`);
    3. the main loop: each iteration loads the micro-batch of every input
       into the input's buffer (`train.micro_batch_input`), runs the
       forward and backward pass, and adds the loss, the metrics, the
       gradients and the new state values into accumulators carried by the
       loop (zero before it);
    4. `train.gradients_ready` after the loop, never inside it;
    5. metrics and state values divided by k: a state moves once per step
       to the mean of the micro-batches' values (DOMAIN.md 4).

    The gradient accumulators are the step's gradient results, so after
    bufferization they live in the runtime's gradient buffers. Outputs are
    dropped from the train step. `train.sample_fraction` becomes
    b / `train.global_batch`. A repeated block that reads
    `train.micro_batch_index` (a dropout's key) takes it as a new last
    argument, which the loop passes.
  }];
  let dependentDialects = ["sinter::train::TrainDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect"];
}

def DistBucket : Pass<"dist-bucket", "mlir::ModuleOp"> {
  let summary = "Gradient buckets whose sums over ranks overlap backward";
  let description = [{
    On a train step built by `train-accumulate`: peels the last micro-batch
    out of the loop (the only one whose gradients are final), adds each
    gradient into its accumulator right after the backward op that computes
    it, packs the gradients into buckets in the order they become final
    (the first at most `first-bucket-mb`, the others at most
    `bucket-cap-mb`, one element type each; a larger gradient alone), and
    inserts `train.bucket_ready` after each bucket's last gradient. The
    layout is the function's `sinter.buckets` attribute (names per bucket,
    in order), which the plan carries to the runtime. The cap comes from the
    module's `sinter.bucket_cap_mb` (the config's) unless given, and
    without either from `parallel.bucket_cap_mb`'s default in
    sinter_config.proto, its one definition.

    Without overlap (`overlap=false`, or the module's `sinter.no_overlap`,
    the config's `parallel { overlap: false }`), the buckets are the same
    but every `train.bucket_ready` comes after the last micro-batch's whole
    backward pass, in bucket order: no sum starts while backward runs.
  }];
  let options = [
    Option<"overlap", "overlap", "bool", /*default=*/"true",
           "Start each bucket's sum as soon as its gradients are final">,
    Option<"bucketCapMb", "bucket-cap-mb", "double", /*default=*/"0.0",
           "Largest bucket after the first, in MiB; 0: the module's "
           "sinter.bucket_cap_mb, else the config schema's default">,
    Option<"firstBucketMb", "first-bucket-mb", "double", /*default=*/"1.0",
           "Largest first bucket, in MiB">
  ];
  let dependentDialects = ["sinter::train::TrainDialect",
                           "mlir::arith::ArithDialect"];
}

def TrainBuildStep : Pass<"train-build-step", "mlir::ModuleOp"> {
  let summary = "Appends the optimizer's update to the training step";
  let description = [{
    Runs after `train-accumulate` (and `dist-bucket`), where a train step
    ends with its final gradients (summed over the ranks). Appends:

    - `train.global_norm` of the gradients (f64) and the clipping factor
      `min(1, max_grad_norm / (norm + 1e-6))` when `max_grad_norm` > 0;
    - the check that the loss and the norm are finite;
    - in an `scf.if` taken when they are (and the runtime asks for an
      update), one `train.adamw_update` or `train.sgd_update` per parameter.

    Each optimizer moment becomes a new argument (`sinter.optimizer_state`,
    `sinter.slot` "m" or "v"); each updated parameter and moment a result
    marked `sinter.updates` with the index of the argument it replaces, which
    bufferization writes in place. The norm and the non-finite flag become
    results (`sinter.grad_norm`, `sinter.non_finite`). Scalars come from
    `train.hyperparameter`. The optimizer is the module's `sinter.optimizer`
    (the config's) unless the option is given.
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adamw\"",
           "adamw, sgd or sgd_momentum">
  ];
  let dependentDialects = ["sinter::train::TrainDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect"];
}

def DistShard : Pass<"dist-shard", "mlir::ModuleOp"> {
  let summary = "Shards the training state over the ranks (ZeRO-1, -2, -3)";
  let description = [{
    Runs after `train-build-step`. With W ranks, every parameter of n
    elements is seen flat and padded with zeros to W * s elements,
    s = ceil(n / W); rank r owns elements [r * s, (r + 1) * s).

    - ZERO1: each optimizer moment becomes that rank's shard, an argument of
      s elements marked `sinter.global_shape` (the parameter's shape), so
      the runtime and its checkpoints know where it belongs. Each update
      reads its rank's shard of the parameter and of the summed gradient
      (`train.rank` finds the offset) and writes the new shard. After the
      update (taken or skipped alike, so every rank reaches the same
      collectives), the new shards of one gradient bucket are packed and
      gathered in one `train.all_gather`; each parameter is copied back into
      its own buffer from the gathered rows.
    - ZERO2: as ZERO1, and each bucket's gradients are reduce-scattered in
      every micro-batch (`train.reduce_scatter_start`), so a rank keeps only
      its slices.
    - FULL_SHARD: as ZERO2, and the parameters are shards too, in every
      step (train and eval). Before the forward pass uses a group (a block
      of a repeat), its parameters are gathered (`train.all_gather_start`,
      `train.collective_wait`), the next group's gather starting as this
      one's is waited for; the backward pass gathers them again. The update
      writes the shards in place.

    The gradients' sum and global norm stay those of DDP, so the step is
    DDP's step. The strategy and W are the module's `sinter.strategy` and
    `sinter.world_size` (the config's) unless the options are given. DDP, or
    one rank, leaves the step as it is.
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", /*default=*/"\"DDP\"",
           "DDP, ZERO1, ZERO2 or FULL_SHARD">,
    Option<"worldSize", "world-size", "int64_t", /*default=*/"1",
           "the ranks the step is compiled for">
  ];
  let dependentDialects = ["sinter::train::TrainDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect"];
}

def DistSyncBatchNorm : Pass<"dist-sync-batch-norm", "mlir::ModuleOp"> {
  let summary = "Batch-norm statistics over every rank (SyncBatchNorm)";
  let description = [{
    When the module has `sinter.sync_batch_norm` (the config's
    `parallel { batch_norm: SYNC }`), rewrites each `graph.batch_norm_stats`
    of a train-phase model into two passes over the ranks: the mean is the
    per-channel sum over the ranks (`graph.all_reduce_sum`) divided by the
    count over the ranks, the biased variance the sum over the ranks of the
    squared deviations from that mean divided by the same count (no sum of
    squares, which cancels when |mean| is much larger than the deviation); each
    `graph.batch_norm_count` becomes its sum over the ranks. Runs before
    autodiff, which derives the synchronized backward pass.
  }];
  let dependentDialects = ["sinter::graph::GraphDialect"];
}

#endif // SINTER_TRAIN_PASSES_TD
