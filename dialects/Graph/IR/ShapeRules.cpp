//===- ShapeRules.cpp - Shape and dtype rules of the graph operations -----===//

#include "dialects/Graph/IR/ShapeRules.h"

#include <algorithm>

namespace sinter::shape {

//===----------------------------------------------------------------------===//
// Dim
//===----------------------------------------------------------------------===//

Dim Dim::known(int64_t value) {
  Dim d;
  d.coef_ = value;
  return d;
}

Dim Dim::symbol(const std::string &name) {
  Dim d;
  d.coef_ = 1;
  d.symbols_.push_back(name);
  return d;
}

Dim Dim::unknown() {
  Dim d;
  d.unknown_ = true;
  return d;
}

std::optional<Dim> Dim::mul(const Dim &other) const {
  if (unknown_ || other.unknown_)
    return unknown();
  Dim d;
  if (__builtin_mul_overflow(coef_, other.coef_, &d.coef_))
    return std::nullopt;
  if (d.coef_ == 0)
    return known(0);
  d.symbols_ = symbols_;
  d.symbols_.insert(d.symbols_.end(), other.symbols_.begin(),
                    other.symbols_.end());
  std::sort(d.symbols_.begin(), d.symbols_.end());
  return d;
}

std::optional<Dim> Dim::divExact(const Dim &other) const {
  if (unknown_ || other.unknown_)
    return unknown();
  if (other.coef_ == 0 || coef_ % other.coef_ != 0)
    return std::nullopt;
  Dim d;
  d.coef_ = coef_ / other.coef_;
  d.symbols_ = symbols_;
  for (const std::string &s : other.symbols_) {
    auto it = std::find(d.symbols_.begin(), d.symbols_.end(), s);
    if (it == d.symbols_.end())
      return std::nullopt;
    d.symbols_.erase(it);
  }
  return d;
}

std::optional<Dim> Dim::add(const Dim &other) const {
  if (unknown_ || other.unknown_)
    return unknown();
  if (symbols_ != other.symbols_)
    return std::nullopt;
  Dim d = *this;
  if (__builtin_add_overflow(coef_, other.coef_, &d.coef_))
    return std::nullopt;
  if (d.coef_ == 0)
    return known(0);
  return d;
}

bool Dim::operator==(const Dim &other) const {
  return unknown_ == other.unknown_ && coef_ == other.coef_ &&
         symbols_ == other.symbols_;
}

bool Dim::compatible(const Dim &other) const {
  return unknown_ || other.unknown_ || *this == other;
}

std::string Dim::str() const {
  if (unknown_)
    return "?";
  if (symbols_.empty())
    return std::to_string(coef_);
  std::string s = coef_ == 1 ? "" : std::to_string(coef_) + "*";
  for (size_t i = 0; i < symbols_.size(); ++i)
    s += (i ? "*" : "") + symbols_[i];
  return s;
}

std::string str(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + shape[i].str();
  return s + "]";
}

std::optional<Dim> numElements(const Shape &shape) {
  Dim n = Dim::known(1);
  for (const Dim &d : shape) {
    std::optional<Dim> next = n.mul(d);
    if (!next)
      return std::nullopt;
    n = *next;
  }
  return n;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

//===----------------------------------------------------------------------===//
// Rules
//===----------------------------------------------------------------------===//

static std::string axisError(int64_t axis, const Shape &in) {
  return "axis " + std::to_string(axis) + " is out of range for a tensor of " +
         "rank " + std::to_string(in.size()) + " " + str(in);
}

Result broadcast(const Shape &a, const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank, Dim::known(1));
  for (size_t i = 0; i < rank; ++i) {
    const Dim *da = i < a.size() ? &a[a.size() - 1 - i] : nullptr;
    const Dim *db = i < b.size() ? &b[b.size() - 1 - i] : nullptr;
    Dim &o = out[rank - 1 - i];
    if (!da || (da->isKnown() && da->value() == 1)) {
      o = db ? *db : *da;
      continue;
    }
    if (!db || (db->isKnown() && db->value() == 1)) {
      o = *da;
      continue;
    }
    if (!da->compatible(*db))
      return Result::failure("shapes " + str(a) + " and " + str(b) +
                             " cannot be broadcast together");
    o = da->isUnknown() ? *db : *da;
  }
  return {out, ""};
}

Result matmul(const Shape &a, const Shape &b) {
  if (a.size() < 2 || b.size() < 2)
    return Result::failure("matrix multiplication needs operands of rank 2 "
                           "or more, got " + str(a) + " @ " + str(b));
  const Dim &k1 = a[a.size() - 1], &k2 = b[b.size() - 2];
  if (!k1.compatible(k2))
    return Result::failure("matrix multiplication " + str(a) + " @ " + str(b) +
                           ": inner dimensions " + k1.str() + " and " +
                           k2.str() + " differ");
  Result batch = broadcast(Shape(a.begin(), a.end() - 2),
                           Shape(b.begin(), b.end() - 2));
  if (!batch.ok())
    return Result::failure("matrix multiplication " + str(a) + " @ " + str(b) +
                           ": batch dimensions cannot be broadcast");
  batch.shape.push_back(a[a.size() - 2]);
  batch.shape.push_back(b[b.size() - 1]);
  return batch;
}

Result reduce(const Shape &in, const std::vector<int64_t> &axes, bool keepdim) {
  int64_t rank = in.size();
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t axis : axes) {
    std::optional<int64_t> a = normalizeAxis(axis, rank);
    if (!a)
      return Result::failure(axisError(axis, in));
    if (reduced[*a])
      return Result::failure("axis " + std::to_string(axis) +
                             " is named twice");
    reduced[*a] = true;
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      out.push_back(in[i]);
    else if (keepdim)
      out.push_back(Dim::known(1));
  }
  return {out, ""};
}

Result reshape(const Shape &in, const Shape &target) {
  std::optional<Dim> total = numElements(in);
  if (!total)
    return Result::failure("the element count of " + str(in) + " overflows");
  int inferred = -1;
  Dim known = Dim::known(1);
  for (size_t i = 0; i < target.size(); ++i) {
    const Dim &d = target[i];
    if (d.isKnown() && d.value() == -1) {
      if (inferred >= 0)
        return Result::failure("reshape to " + str(target) +
                               ": only one dimension may be -1");
      inferred = i;
      continue;
    }
    if (d.isKnown() && d.value() < 0)
      return Result::failure("reshape to " + str(target) +
                             ": negative dimension " + d.str());
    std::optional<Dim> next = known.mul(d);
    if (!next)
      return Result::failure("reshape to " + str(target) + ": size overflows");
    known = *next;
  }
  Shape out = target;
  if (inferred >= 0) {
    std::optional<Dim> rest = total->divExact(known);
    if (!rest)
      return Result::failure("cannot reshape " + str(in) + " into " +
                             str(target) + ": " + total->str() +
                             " elements are not a multiple of " + known.str());
    out[inferred] = *rest;
    return {out, ""};
  }
  if (!total->compatible(known))
    return Result::failure("cannot reshape " + str(in) + " (" + total->str() +
                           " elements) into " + str(target) + " (" +
                           known.str() + " elements)");
  return {out, ""};
}

Result transpose(const Shape &in, const std::vector<int64_t> &perm) {
  if (perm.size() != in.size())
    return Result::failure("permutation of length " +
                           std::to_string(perm.size()) +
                           " for a tensor of rank " +
                           std::to_string(in.size()));
  Shape out;
  std::vector<bool> seen(in.size(), false);
  for (int64_t p : perm) {
    std::optional<int64_t> a = normalizeAxis(p, in.size());
    if (!a || seen[*a])
      return Result::failure("invalid permutation: axis " + std::to_string(p) +
                             " is out of range or repeated");
    seen[*a] = true;
    out.push_back(in[*a]);
  }
  return {out, ""};
}

Result concat(const std::vector<Shape> &inputs, int64_t axis) {
  if (inputs.empty())
    return Result::failure("concat needs at least one tensor");
  const Shape &first = inputs.front();
  std::optional<int64_t> a = normalizeAxis(axis, first.size());
  if (!a)
    return Result::failure(axisError(axis, first));
  Shape out = first;
  for (size_t i = 1; i < inputs.size(); ++i) {
    const Shape &s = inputs[i];
    if (s.size() != first.size())
      return Result::failure("concat of tensors of different ranks: " +
                             str(first) + " and " + str(s));
    for (size_t d = 0; d < s.size(); ++d) {
      if (int64_t(d) == *a)
        continue;
      if (!s[d].compatible(first[d]))
        return Result::failure("concat along axis " + std::to_string(*a) +
                               ": shapes " + str(first) + " and " + str(s) +
                               " differ in dimension " + std::to_string(d));
    }
    std::optional<Dim> sum = out[*a].add(s[*a]);
    if (!sum)
      return Result::failure("concat along axis " + std::to_string(*a) +
                             ": cannot add sizes " + out[*a].str() + " and " +
                             s[*a].str() + "; bind the symbols with -D");
    out[*a] = *sum;
  }
  return {out, ""};
}

Result slice(const Shape &in, int64_t axis, int64_t start, int64_t end) {
  std::optional<int64_t> a = normalizeAxis(axis, in.size());
  if (!a)
    return Result::failure(axisError(axis, in));
  const Dim &d = in[*a];
  if (d.isKnown()) {
    if (start < 0)
      start += d.value();
    if (end < 0)
      end += d.value();
    if (start < 0 || end > d.value() || start > end)
      return Result::failure("slice [" + std::to_string(start) + ", " +
                             std::to_string(end) + ") is out of range for "
                             "dimension " + std::to_string(*a) + " of " +
                             str(in));
  } else if (start < 0 || end < 0 || start > end) {
    return Result::failure("slice bounds of the symbolic dimension " + d.str() +
                           " must be non-negative and ordered");
  }
  Shape out = in;
  out[*a] = Dim::known(end - start);
  return {out, ""};
}

static Result spatialOut(const Dim &in, int64_t k, int64_t s, int64_t p,
                         int64_t dil, const char *what, int axis) {
  if (k <= 0 || s <= 0 || p < 0 || dil <= 0)
    return Result::failure(std::string(what) +
                           ": kernel, stride and dilation must be positive "
                           "and padding non-negative");
  int64_t span, padded;
  if (__builtin_mul_overflow(dil, k - 1, &span) ||
      __builtin_add_overflow(span, 1, &span))
    return Result::failure(std::string(what) + ": kernel extent overflows");
  if (in.isUnknown())
    return {{Dim::unknown()}, ""};
  if (!in.isKnown())
    return Result::failure(std::string(what) + ": spatial dimension " +
                           in.str() + " must be known; bind it with -D");
  if (__builtin_mul_overflow(p, 2, &padded) ||
      __builtin_add_overflow(padded, in.value(), &padded))
    return Result::failure(std::string(what) + ": padded size overflows");
  if (padded < span)
    return Result::failure(std::string(what) + ": kernel extent " +
                           std::to_string(span) + " exceeds the padded input " +
                           std::to_string(padded) + " along axis " +
                           std::to_string(axis));
  return {{Dim::known((padded - span) / s + 1)}, ""};
}

Result conv2d(const Shape &x, const Shape &w, const int64_t stride[2],
              const int64_t padding[2], const int64_t dilation[2],
              int64_t groups) {
  if (x.size() != 4 || w.size() != 4)
    return Result::failure("conv2d needs an NCHW input and an OIHW weight, "
                           "got " + str(x) + " and " + str(w));
  if (groups <= 0)
    return Result::failure("conv2d: groups must be positive");
  if (w[0].isKnown() && w[0].value() % groups != 0)
    return Result::failure("conv2d: " + std::to_string(groups) +
                           " groups do not divide the " + w[0].str() +
                           " output channels");
  std::optional<Dim> inCh = w[1].mul(Dim::known(groups));
  if (!inCh || !x[1].compatible(*inCh))
    return Result::failure("conv2d: the input has " + x[1].str() +
                           " channels but the weight " + str(w) +
                           " with groups=" + std::to_string(groups) +
                           " expects " + (inCh ? inCh->str() : "?"));
  Shape out = {x[0], w[0]};
  for (int i = 0; i < 2; ++i) {
    if (!w[2 + i].isKnown() && !w[2 + i].isUnknown())
      return Result::failure("conv2d: kernel size must be known");
    int64_t k = w[2 + i].isUnknown() ? 1 : w[2 + i].value();
    Result r = spatialOut(x[2 + i], k, stride[i], padding[i], dilation[i],
                          "conv2d", 2 + i);
    if (!r.ok())
      return r;
    out.push_back(w[2 + i].isUnknown() ? Dim::unknown() : r.shape[0]);
  }
  return {out, ""};
}

Result pool2d(const Shape &x, const int64_t kernel[2], const int64_t stride[2],
              const int64_t padding[2]) {
  if (x.size() != 4)
    return Result::failure("pooling needs an NCHW input, got " + str(x));
  Shape out = {x[0], x[1]};
  for (int i = 0; i < 2; ++i) {
    if (padding[i] > kernel[i] / 2)
      return Result::failure("pooling: padding " + std::to_string(padding[i]) +
                             " is more than half the kernel " +
                             std::to_string(kernel[i]));
    Result r = spatialOut(x[2 + i], kernel[i], stride[i], padding[i], 1,
                          "pooling", 2 + i);
    if (!r.ok())
      return r;
    out.push_back(r.shape[0]);
  }
  return {out, ""};
}

Result attention(const Shape &q, const Shape &k, const Shape &v) {
  if (q.size() < 2 || k.size() != q.size() || v.size() != q.size())
    return Result::failure("attention needs q, k and v of one rank >= 2, got " +
                           str(q) + ", " + str(k) + ", " + str(v));
  size_t r = q.size();
  if (!q[r - 1].compatible(k[r - 1]))
    return Result::failure("attention: query " + str(q) + " and key " + str(k) +
                           " have different head sizes");
  if (!k[r - 2].compatible(v[r - 2]))
    return Result::failure("attention: key " + str(k) + " and value " + str(v) +
                           " have different lengths");
  for (size_t i = 0; i + 2 < r; ++i)
    if (!q[i].compatible(k[i]) || !q[i].compatible(v[i]))
      return Result::failure("attention: batch dimensions of " + str(q) + ", " +
                             str(k) + " and " + str(v) + " differ");
  Shape out(q.begin(), q.end() - 1);
  out.push_back(v[r - 1]);
  return {out, ""};
}

Result embedding(const Shape &ids, const Shape &table) {
  if (table.size() != 2)
    return Result::failure("embedding table must have rank 2, got " +
                           str(table));
  Shape out = ids;
  out.push_back(table[1]);
  return {out, ""};
}

Result classTargets(const Shape &logits, const Shape &target) {
  if (logits.empty())
    return Result::failure("logits must have a class axis, got a scalar");
  Shape expect(logits.begin(), logits.end() - 1);
  if (target.size() != expect.size())
    return Result::failure("targets " + str(target) + " do not match logits " +
                           str(logits) + ": expected targets of shape " +
                           str(expect));
  for (size_t i = 0; i < expect.size(); ++i)
    if (!expect[i].compatible(target[i]))
      return Result::failure("targets " + str(target) +
                             " do not match logits " + str(logits) +
                             ": expected targets of shape " + str(expect));
  return {expect, ""};
}

Result sameShape(const Shape &a, const Shape &b) {
  if (a.size() != b.size())
    return Result::failure("shapes " + str(a) + " and " + str(b) + " differ");
  Shape out = a;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].compatible(b[i]))
      return Result::failure("shapes " + str(a) + " and " + str(b) + " differ");
    if (a[i].isUnknown())
      out[i] = b[i];
  }
  return {out, ""};
}

Result softmax(const Shape &in, int64_t axis) {
  if (!normalizeAxis(axis, in.size()))
    return Result::failure(axisError(axis, in));
  return {in, ""};
}

Result oneHot(const Shape &ids, int64_t numClasses) {
  if (numClasses <= 0)
    return Result::failure("one_hot needs a positive number of classes, got " +
                           std::to_string(numClasses));
  Shape out = ids;
  out.push_back(Dim::known(numClasses));
  return {out, ""};
}

Result globalPool2d(const Shape &x) {
  if (x.size() != 4)
    return Result::failure("global pooling needs an NCHW input, got " + str(x));
  return {{x[0], x[1]}, ""};
}

} // namespace sinter::shape
