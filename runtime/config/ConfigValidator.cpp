//===- ConfigValidator.cpp - The checks the schema cannot express ---------===//
//
// The checks of LANGUAGE.md section 10, each reported at the field at fault.
//
//===----------------------------------------------------------------------===//

#include "runtime/config/ConfigInternals.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace sinter::config::detail {

/// Divisors of `n` just below and above `near` (excluding `near`), to
/// suggest batch sizes that work.
std::vector<int64_t> divisorsAround(int64_t n, int64_t near) {
  int64_t below = 0, above = 0;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d)
      continue;
    for (int64_t c : {d, n / d}) {
      if (c < near && c > below)
        below = c;
      if (c > near && (above == 0 || c < above))
        above = c;
    }
  }
  std::vector<int64_t> out;
  if (below)
    out.push_back(below);
  if (above)
    out.push_back(above);
  return out;
}

std::string orList(const std::vector<int64_t> &values) {
  std::vector<std::string> parts;
  for (int64_t v : values)
    parts.push_back(formatInt(v));
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i ? (i + 1 == parts.size() ? " or " : ", ") : "") + parts[i];
  return out;
}

namespace {

class Validator {
public:
  Validator(Diagnostics &diags, const Locator *locator)
      : diags(diags), locator(locator) {}

  void run(const TrainConfig &cfg);

private:
  void report(const FieldPath &path, const std::string &message) {
    std::pair<int, int> at = locator ? locator->find(path) : std::pair{-1, -1};
    diags.error(at.first, at.second, message);
  }

  void positive(const FieldPath &p, int64_t v) {
    if (v <= 0)
      report(p, displayName(p) + " (" + formatInt(v) + ") must be positive");
  }
  void nonNegative(const FieldPath &p, int64_t v) {
    if (v < 0)
      report(p, displayName(p) + " (" + formatInt(v) + ") must not be negative");
  }
  // The negated comparisons below also reject NaN.
  void positive(const FieldPath &p, double v) {
    if (!(v > 0) || !std::isfinite(v))
      report(p, displayName(p) + " (" + formatDouble(v) + ") must be a positive number");
  }
  void nonNegative(const FieldPath &p, double v) {
    if (!(v >= 0) || !std::isfinite(v))
      report(p, displayName(p) + " (" + formatDouble(v) + ") must not be negative");
  }
  void unitInterval(const FieldPath &p, double v) {
    if (!(v >= 0 && v < 1))
      report(p, displayName(p) + " (" + formatDouble(v) + ") must be in [0, 1)");
  }

  void checkBatch(const TrainConfig &cfg);
  void checkOptimizer(const TrainConfig &cfg);
  void checkSource(const FieldPath &p, const TrainConfig::DataSource &source);
  void checkMaps(const TrainConfig &cfg);
  void checkTensorMap(const TrainConfig &cfg);
  void checkRecompute(const TrainConfig &cfg);
  void checkPrecision(const TrainConfig &cfg);

  Diagnostics &diags;
  const Locator *locator;
};

void Validator::checkBatch(const TrainConfig &cfg) {
  FieldPath batch = sub({}, "batch");
  FieldPath global = sub(batch, "global"), micro = sub(batch, "micro");
  const TrainConfig::Batch &b = cfg.batch();
  positive(global, b.global());
  if (b.has_micro())
    positive(micro, b.micro());
  if (b.global() <= 0 || !b.has_micro() || b.micro() <= 0 || b.global() % b.micro() == 0)
    return;
  std::string msg = "batch.micro (" + formatInt(b.micro()) +
                    ") does not divide batch.global (" + formatInt(b.global()) + ")";
  std::vector<int64_t> near = divisorsAround(b.global(), b.micro());
  if (!near.empty())
    msg += "; the nearest micro batches that do are " + orList(near);
  report(micro, msg);
}

void Validator::checkOptimizer(const TrainConfig &cfg) {
  FieldPath opt = sub({}, "optimizer");
  const TrainConfig::Optimizer &o = cfg.optimizer();
  if (o.has_adamw()) {
    FieldPath p = sub(opt, "adamw");
    const TrainConfig::AdamW &a = o.adamw();
    positive(sub(p, "lr"), a.lr());
    unitInterval(sub(p, "beta1"), a.beta1());
    unitInterval(sub(p, "beta2"), a.beta2());
    positive(sub(p, "eps"), a.eps());
    nonNegative(sub(p, "weight_decay"), a.weight_decay());
    return;
  }
  if (o.has_sgd()) {
    FieldPath p = sub(opt, "sgd");
    const TrainConfig::Sgd &s = o.sgd();
    positive(sub(p, "lr"), s.lr());
    nonNegative(sub(p, "momentum"), s.momentum());
    nonNegative(sub(p, "weight_decay"), s.weight_decay());
    if (s.nesterov() && s.momentum() == 0)
      report(sub(p, "nesterov"),
             "optimizer.sgd.nesterov needs optimizer.sgd.momentum > 0 (it is 0)");
    return;
  }
  report(opt, "optimizer is empty; write adamw { ... } or sgd { ... } in it");
}

void Validator::checkSource(const FieldPath &p, const TrainConfig::DataSource &s) {
  std::string name = displayName(p);
  std::vector<std::string> forms;
  if (s.npy_size())
    forms.push_back("npy");
  if (s.has_tokens())
    forms.push_back("tokens");
  if (s.has_synthetic())
    forms.push_back("synthetic");
  if (forms.empty())
    report(p, name + " has no source; write npy { input: \"x\" path: \"x.npy\" }, "
                     "tokens { path: \"train.bin\" } or synthetic {} in it");
  if (forms.size() > 1)
    report(p, name + " gives " + join(forms, " and ") + "; a data source has one form");

  std::vector<std::pair<std::string, int>> seen;
  for (int i = 0; i < s.npy_size(); ++i) {
    FieldPath entry = sub(p, "npy", i);
    const TrainConfig::Npy &npy = s.npy(i);
    std::string entryName = displayName(entry);
    if (npy.input().empty())
      report(entry, entryName + " needs the model input it feeds (input: \"x\")");
    else if (!isIdentifier(npy.input()))
      report(sub(entry, "input"), entryName + ".input (\"" + npy.input() +
                                      "\") is not an identifier");
    if (npy.path().empty())
      report(entry, entryName + " needs the path of its .npy file (path: \"x.npy\")");
    if (npy.input().empty())
      continue;
    auto it = std::find_if(seen.begin(), seen.end(),
                           [&](const auto &e) { return e.first == npy.input(); });
    if (it != seen.end())
      report(sub(entry, "input"), entryName + ".input (\"" + npy.input() +
                                      "\") is already fed by " + name + ".npy[" +
                                      std::to_string(it->second) + "]");
    else
      seen.emplace_back(npy.input(), i);
  }
  if (s.has_tokens() && s.tokens().path().empty())
    report(sub(p, "tokens"), name + ".tokens needs the path of its token file "
                                    "(path: \"train.bin\")");
}

/// Map entries are walked through reflection because only the repeated view
/// keeps the file's order, which the location tree is indexed by.
void Validator::checkMaps(const TrainConfig &cfg) {
  const pb::Reflection *refl = cfg.GetReflection();
  for (const char *mapName : {"set", "shapes"}) {
    const FieldDescriptor *f = TrainConfig::descriptor()->FindFieldByName(mapName);
    const FieldDescriptor *keyField = f->message_type()->map_key();
    const FieldDescriptor *valueField = f->message_type()->map_value();
    std::set<std::string> seen;
    for (int i = 0, e = refl->FieldSize(cfg, f); i < e; ++i) {
      const pb::Message &entry = refl->GetRepeatedMessage(cfg, f, i);
      const pb::Reflection *er = entry.GetReflection();
      std::string key = er->GetString(entry, keyField);
      FieldPath keyPath{{f, i, key}, {keyField, -1, "", true}};
      FieldPath valuePath{{f, i, key}, {valueField, -1, "", true}};
      std::string what = std::string(mapName) + " key \"" + key + "\"";
      if (!isIdentifier(key)) {
        report(keyPath, what + " is not an identifier");
        continue;
      }
      if (!seen.insert(key).second)
        report(keyPath, what + " is given more than once");
      if (f->name() == "shapes") {
        if (key == "B")
          report(keyPath, "shapes cannot bind B; the batch dimension is batch.micro");
        int64_t v = er->GetInt64(entry, valueField);
        if (v <= 0)
          report(valuePath, "shapes." + key + " (" + formatInt(v) + ") must be positive");
      }
    }
  }
}

/// Each rule names both sides, and a '*' on one side has one on the other.
void Validator::checkTensorMap(const TrainConfig &cfg) {
  FieldPath map = sub({}, "tensor_map");
  auto stars = [](const std::string &s) { return std::count(s.begin(), s.end(), '*'); };
  for (int i = 0; i < cfg.tensor_map().rule_size(); ++i) {
    const auto &rule = cfg.tensor_map().rule(i);
    FieldPath at = sub(map, "rule", i);
    if (rule.param().empty() || rule.file().empty())
      report(at, "tensor_map.rule needs both param and file");
    else if (stars(rule.param()) > 1 || stars(rule.file()) != stars(rule.param()))
      report(sub(at, "file"), "tensor_map.rule: param \"" + rule.param() + "\" and file \"" +
                                  rule.file() +
                                  "\" must have one '*' each, or none");
  }
  for (int i = 0; i < cfg.tensor_map().ignore_size(); ++i)
    if (stars(cfg.tensor_map().ignore(i)) > 1)
      report(sub(map, "ignore", i), "tensor_map.ignore \"" + cfg.tensor_map().ignore(i) +
                                        "\" may have one '*' at most");
}

void Validator::run(const TrainConfig &cfg) {
  checkMaps(cfg);
  checkTensorMap(cfg);
  checkBatch(cfg);
  checkOptimizer(cfg);

  FieldPath schedule = sub({}, "schedule");
  nonNegative(sub(schedule, "warmup_steps"), cfg.schedule().warmup_steps());
  if (cfg.schedule().has_cosine())
    nonNegative(sub(sub(schedule, "cosine"), "min_lr"), cfg.schedule().cosine().min_lr());
  if (cfg.schedule().has_linear())
    nonNegative(sub(sub(schedule, "linear"), "end_lr"), cfg.schedule().linear().end_lr());

  FieldPath scaling = sub({}, "lr_scaling");
  const TrainConfig::LrScaling &ls = cfg.lr_scaling();
  if (ls.rule() != TrainConfig::LrScaling::NONE && ls.base_global_batch() <= 0)
    report(ls.has_base_global_batch() ? sub(scaling, "base_global_batch")
                                      : sub(scaling, "rule"),
           "lr_scaling.rule " + TrainConfig::LrScaling::Rule_Name(ls.rule()) +
               " needs lr_scaling.base_global_batch > 0 (it is " +
               formatInt(ls.base_global_batch()) + ")");
  else
    nonNegative(sub(scaling, "base_global_batch"), ls.base_global_batch());

  nonNegative(sub({}, "clip_grad_norm"), cfg.clip_grad_norm());
  FieldPath parallel = sub({}, "parallel");
  positive(sub(parallel, "bucket_cap_mb"), cfg.parallel().bucket_cap_mb());
  nonNegative(sub(parallel, "world_size"), int64_t(cfg.parallel().world_size()));
  TrainConfig::Parallel::Strategy strategy = cfg.parallel().strategy();
  bool sharded = strategy != TrainConfig::Parallel::DDP;
  if (sharded && cfg.parallel().world_size() < 1)
    report(sub(parallel, "strategy"),
           "parallel.strategy " + TrainConfig::Parallel::Strategy_Name(strategy) +
               " compiles each rank's shard of the optimizer state, so it needs "
               "parallel.world_size, the number of ranks (--set "
               "parallel.world_size=N)");

  if (cfg.parallel().collectives() == TrainConfig::Parallel::NCCL &&
      cfg.device() != TrainConfig::CUDA)
    report(sub(parallel, "collectives"),
           "parallel.collectives NCCL runs between GPUs, so it needs device: CUDA "
           "(this config has device " + TrainConfig::Device_Name(cfg.device()) +
               "); CPU ranks use GLOO (or AUTO)");

  checkPrecision(cfg);

  FieldPath data = sub({}, "data");
  checkSource(sub(data, "train"), cfg.data().train());
  if (cfg.data().has_eval())
    checkSource(sub(data, "eval"), cfg.data().eval());

  nonNegative(sub({}, "steps"), cfg.steps());

  FieldPath eval = sub({}, "eval");
  nonNegative(sub(eval, "every"), cfg.eval().every());
  nonNegative(sub(eval, "batches"), cfg.eval().batches());
  if (cfg.eval().every() > 0 && !cfg.data().has_eval())
    report(sub(eval, "every"), "eval.every (" + formatInt(cfg.eval().every()) +
                                   ") asks for evaluation but data.eval gives no data");

  positive(sub(sub({}, "log"), "every"), cfg.log().every());

  FieldPath ckpt = sub({}, "checkpoint");
  const TrainConfig::Checkpoint &c = cfg.checkpoint();
  nonNegative(sub(ckpt, "every"), c.every());
  if (c.keep() < 1)
    report(sub(ckpt, "keep"),
           "checkpoint.keep (" + formatInt(c.keep()) + ") must be at least 1");
  if (c.dir().empty() && c.every() > 0)
    report(sub(ckpt, "every"), "checkpoint.every (" + formatInt(c.every()) +
                                   ") needs checkpoint.dir to say where to write");
  if (c.dir().empty() && c.resume())
    report(sub(ckpt, "resume"), "checkpoint.resume needs checkpoint.dir to say "
                                "where to look");
  checkRecompute(cfg);
}

/// TF32 is a GPU's tensor cores' format, for f32 matmuls; Winograd
/// convolutions are oneDNN's, on the CPU; only cuDNN's calls have
/// non-deterministic algorithms to allow; bf16 matmul results come from
/// bf16 matmuls, and a bf16 residual stream comes with them.
void Validator::checkPrecision(const TrainConfig &cfg) {
  using Precision = TrainConfig::Precision;
  const Precision &p = cfg.precision();
  if (p.activations() == Precision::BF16 && p.compute() != Precision::BF16)
    report(sub(sub({}, "precision"), "activations"),
           "precision.activations BF16 rounds what bf16 matmuls write, so it needs "
           "precision.compute BF16 (this config has " +
               Precision::Compute_Name(p.compute()) + ")");
  if (p.residual() == Precision::BF16 && p.activations() != Precision::BF16)
    report(sub(sub({}, "precision"), "residual"),
           "precision.residual BF16 keeps the residual stream in bf16 beside the bf16 "
           "activations the matmuls write, so it needs precision.activations BF16 (this "
           "config has " +
               Precision::Compute_Name(p.activations()) + ")");
  if (p.convolution() == Precision::WINOGRAD && cfg.device() != TrainConfig::CPU)
    report(sub(sub({}, "precision"), "convolution"),
           "precision.convolution WINOGRAD is built for the CPU (oneDNN's Winograd "
           "kernels), not for device " + TrainConfig::Device_Name(cfg.device()) +
               ", whose convolutions run the algorithm cuDNN's heuristic picks");
  if (!p.deterministic() && cfg.device() != TrainConfig::CUDA)
    report(sub(sub({}, "precision"), "deterministic"),
           "precision.deterministic false lets cuDNN's calls sum in an order that "
           "changes between runs, so it needs device: CUDA (this config has device " +
               TrainConfig::Device_Name(cfg.device()) +
               "); every CPU kernel is deterministic");
  if (p.matmul() != Precision::TF32)
    return;
  FieldPath matmul = sub(sub({}, "precision"), "matmul");
  if (cfg.device() != TrainConfig::CUDA)
    report(matmul, "precision.matmul TF32 rounds f32 matmuls' inputs on a GPU's "
                   "tensor cores, so it needs device: CUDA (this config has device " +
                       TrainConfig::Device_Name(cfg.device()) +
                       "); the CPU multiplies f32 in f32");
  else if (p.compute() != Precision::F32)
    report(matmul, "precision.matmul TF32 applies to f32 matmuls, but with "
                   "precision.compute " + Precision::Compute_Name(p.compute()) +
                       " every matmul reads bf16 inputs; leave matmul at HIGHEST");
}

/// Scopes are names, and name what a mode applies to.
void Validator::checkRecompute(const TrainConfig &cfg) {
  FieldPath recompute = sub({}, "recompute");
  const TrainConfig::Recompute &r = cfg.recompute();
  for (int i = 0; i < r.scopes_size(); ++i) {
    if (r.scopes(i).empty())
      report(sub(recompute, "scopes", i),
             "recompute.scopes: an empty scope names no repeat block");
    else if (r.mode() == TrainConfig::Recompute::NONE)
      report(sub(recompute, "scopes", i),
             "recompute.scopes names \"" + r.scopes(i) +
                 "\" but recompute.mode is NONE: say what to recompute there "
                 "(SELECTIVE or FULL)");
  }
}

} // namespace

bool validate(const TrainConfig &cfg, const ParseInfoTree *tree, Diagnostics &diags) {
  Locator locator(tree);
  Validator(diags, tree ? &locator : nullptr).run(cfg);
  return diags.empty();
}

} // namespace sinter::config::detail
