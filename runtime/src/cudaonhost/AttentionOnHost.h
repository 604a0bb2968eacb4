//===- AttentionOnHost.h - abi.h's fused attention, on host memory -*- C++ -*-===//
//
// What the CUDA device's fused attention computes (cuDNN's in bf16, the
// runtime's own kernels in f32), written plainly for a step run on the CPU
// (sinterc --cuda-on-host): scores, softmax and products one query at a
// time, summed in f32 as the device sums them, through the same strides
// the device reads and writes.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_CUDAONHOST_ATTENTIONONHOST_H
#define SINTER_RT_CUDAONHOST_ATTENTIONONHOST_H

#include <cstdint>

namespace sinter::rt::cudaonhost {

/// Where element (b, h, t, i) of one operand lies: b * batch + h * head +
/// t * row + i elements from its base.
struct Strides {
  int64_t batch, head, row;
};

/// The shape of one call, and the strides of q, k, v and o (each gradient
/// lies as its value does).
struct AttentionShape {
  int64_t batch, heads, tq, tk, d, dv;
  bool causal;
  Strides q, k, v, o;
};

/// abi.h's heads-major layout: q, k, v and o each [batch, heads, T, d].
AttentionShape headsMajor(int64_t batch, int64_t heads, int64_t tq, int64_t tk, int64_t d,
                          int64_t dv, bool causal);
/// abi.h's packed layout: q, k and v in one projection [batch, t, 3, heads,
/// d], o [batch, t, heads, d].
AttentionShape packed(int64_t batch, int64_t t, int64_t heads, int64_t d, bool causal);

/// Elements as the device stores them: f32, or bf16 (16-bit patterns,
/// rounded to nearest even as they are written).
template <typename T> struct Element;

/// o = softmax(q k^T / sqrt(d)) v; each query's natural log-sum-exp of its
/// scaled scores into `stats` ([batch, heads, tq]) unless it is null.
template <typename T>
void attentionForward(const AttentionShape &s, const T *q, const T *k, const T *v, T *o,
                      float *stats);
/// The gradients of q, k and v from o's, written (not added). Where the
/// device's call takes the forward call's o and statistics (the packed
/// layout), so does this one: each probability from its row's statistic and
/// each row's dO . o from o, so that a step that passed the wrong ones
/// computes the wrong gradients here too. Null: computed again.
template <typename T>
void attentionBackward(const AttentionShape &s, const T *q, const T *k, const T *v,
                       const T *o, const float *stats, const T *gradO, T *gradQ,
                       T *gradK, T *gradV);

} // namespace sinter::rt::cudaonhost

#endif // SINTER_RT_CUDAONHOST_ATTENTIONONHOST_H
