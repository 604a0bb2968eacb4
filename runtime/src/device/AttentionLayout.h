//===- AttentionLayout.h - Where abi.h's attention operands lie -*- C++ -*-===//
//
// The two layouts of abi.h's fused attention calls, shared by the CUDA
// device (cuDNN's graphs read and write through these strides) and the
// host's answer to the same calls (sinterc --cuda-on-host), and how a call
// is cut into slices of its batch when its library wants a workspace that
// grows with the batch.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_DEVICE_ATTENTIONLAYOUT_H
#define SINTER_RT_DEVICE_ATTENTIONLAYOUT_H

#include <cstdint>

namespace sinter::rt {

/// Where element (b, h, t, i) of one operand lies: b * batch + h * head +
/// t * row + i elements from its base.
struct AttentionStrides {
  int64_t batch, head, row;
};

/// The shape of one call, and the strides of q, k, v and o (each gradient
/// lies as its value does). The row statistics are [batch, heads, tq] f32,
/// packed.
struct AttentionShape {
  int64_t batch, heads, tq, tk, d, dv;
  bool causal;
  AttentionStrides q, k, v, o;
};

/// abi.h's heads-major layout: q, k, v and o each [batch, heads, T, d].
inline AttentionShape headsMajorAttention(int64_t batch, int64_t heads, int64_t tq,
                                          int64_t tk, int64_t d, int64_t dv, bool causal) {
  return {batch,
          heads,
          tq,
          tk,
          d,
          dv,
          causal,
          {heads * tq * d, tq * d, d},
          {heads * tk * d, tk * d, d},
          {heads * tk * dv, tk * dv, dv},
          {heads * tq * dv, tq * dv, dv}};
}

/// abi.h's packed layout (self-attention): q, k and v side by side in one
/// projection [batch, t, 3, heads, d], o [batch, t, heads, d]. The three
/// bases are the projection's plus 0, heads * d and 2 * heads * d.
inline AttentionShape packedAttention(int64_t batch, int64_t t, int64_t heads, int64_t d,
                                      bool causal) {
  const int64_t row = 3 * heads * d;
  AttentionStrides qkv = {t * row, d, row};
  return {batch, heads, t, t, d, d, causal, qkv, qkv, qkv, {t * heads * d, d, heads * d}};
}

/// abi.h's shape array {batch, heads, tq, tk, d, dv, causal} in either layout.
inline AttentionShape attentionShapeOf(const int64_t s[7], bool packed) {
  return packed ? packedAttention(s[0], s[2], s[1], s[4], s[6] != 0)
                : headsMajorAttention(s[0], s[1], s[2], s[3], s[4], s[5], s[6] != 0);
}

/// How many bytes into each operand batch element `first` starts, for
/// elements of `elementBytes` (the statistics are f32 whatever they are).
struct AttentionOffsets {
  int64_t q, k, v, o, stats;
};

inline AttentionOffsets attentionBatchOffsets(const AttentionShape &s, int64_t first,
                                              int64_t elementBytes) {
  return {first * s.q.batch * elementBytes, first * s.k.batch * elementBytes,
          first * s.v.batch * elementBytes, first * s.o.batch * elementBytes,
          first * s.heads * s.tq * int64_t(sizeof(float))};
}

/// How many batch elements one call takes when the whole batch's call wants
/// `workspaceBytes` and that grows with the batch: the largest divisor of
/// `batch` whose share stays within `limitBytes`, at least 1. Attention's
/// batch elements are independent, so the slices' calls compute the whole
/// call's values.
inline int64_t attentionSliceBatch(int64_t batch, int64_t workspaceBytes,
                                   int64_t limitBytes) {
  if (batch <= 1 || workspaceBytes <= limitBytes)
    return batch;
  for (int64_t size = batch - 1; size > 1; --size)
    if (batch % size == 0 && workspaceBytes / batch * size <= limitBytes)
      return size;
  return 1;
}

} // namespace sinter::rt

#endif // SINTER_RT_DEVICE_ATTENTIONLAYOUT_H
