/*===- abi.h - The contract between generated code and the runtime ------===*
 *
 * sinterc compiles a model's steps into an object file that defines the
 * symbols below; the runtime (libsinter_rt and its stock main) uses them and
 * nothing else. This header is the only thing the compiler knows of the
 * runtime. Plain C, versioned: a change that breaks old objects bumps
 * SINTER_ABI_VERSION, and the runtime refuses an object of another version.
 *
 *===--------------------------------------------------------------------===*/
#ifndef SINTER_RT_ABI_H
#define SINTER_RT_ABI_H

#include <stdint.h>

#define SINTER_ABI_VERSION 15

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version the object was compiled for. */
extern const int64_t sinter_abi_version;

/* One step per compiled phase: "eval" (one batch) and "train" (the whole
 * step of one rank: its micro-batches, the gradients summed over the ranks,
 * and the update of the parameters and optimizer states).
 * `buffers` holds one pointer per buffer of the step's plan, in plan order:
 * each points to a dense, row-major, 64-byte aligned array of the buffer's
 * dtype and shape. Params and states are read; the train step loads its
 * inputs itself (sinter_rt_load_input), the eval step reads them. The loss,
 * metrics, gradients and new states are written: for a train step, the loss
 * and gradients of the whole step, and the metrics and new states as means
 * over its micro-batches. A train step also updates its parameters and
 * optimizer states in place, unless the loss or a gradient is not finite
 * (then it writes its non-finite flag and changes nothing), and writes the
 * gradients' global norm. A step keeps no state between calls. The symbols
 * are weak here: a program may have been compiled without a phase. */
void sinter_step_eval(void **buffers) __attribute__((weak));
void sinter_step_train(void **buffers) __attribute__((weak));

/* The plan of each step: a serialized sinter.plan.Step message
 * (runtime/contract/sinter_plan.proto). */
extern const char sinter_plan_eval[] __attribute__((weak));
extern const int64_t sinter_plan_eval_size __attribute__((weak));
extern const char sinter_plan_train[] __attribute__((weak));
extern const int64_t sinter_plan_train_size __attribute__((weak));

/* The training config the program was compiled with, in protobuf text
 * format (sinter.config.TrainConfig), and the folder its relative paths are
 * relative to. Empty when compiled without --config. */
extern const char sinter_config[];
extern const int64_t sinter_config_size;
extern const char sinter_config_dir[];
extern const int64_t sinter_config_dir_size;

/* Library kernels generated code calls (libsinter_rt, through oneDNN).
 * Dense row-major f32 arrays.
 * c[batch, m, n] = a[batch, m, k] @ b[batch or 1, k, n]. Flags: bit 0, b is
 * shared by every batch; bit 1, b is stored transposed, as [n, k]; bit 2, a
 * is stored transposed, as [k, m] (batched: the CPU's only); bit 3, the
 * product is added to c (c += a @ b) instead of replacing it; bit 4, bias[n] (f32) is added
 * to each row of c (c = a @ b + bias; not batched, not with bit 3). `bias`
 * is null without bit 4. */
void sinter_cpu_matmul_f32(const float *a, const float *b, float *c,
                           int64_t batch, int64_t m, int64_t n, int64_t k,
                           int64_t flags, const float *bias);
/* The same with a and b in bf16 (their 16-bit patterns) and c in f32: the
 * products of bf16 values are exact in f32, and they are summed in f32
 * (precision { compute: BF16 }). */
void sinter_cpu_matmul_bf16(const uint16_t *a, const uint16_t *b, float *c,
                            int64_t batch, int64_t m, int64_t n, int64_t k,
                            int64_t flags, const float *bias);
/* The same with c and the bias in bf16 too (precision { activations: BF16 }):
 * the f32 sum, plus the bias or, with bit 3, plus c's values, rounded to the
 * nearest bf16 (ties to even) once, as c is written. */
void sinter_cpu_matmul_bf16_rounded(const uint16_t *a, const uint16_t *b, uint16_t *c,
                                    int64_t batch, int64_t m, int64_t n, int64_t k,
                                    int64_t flags, const uint16_t *bias);
/* What a train step asks of the runtime while it runs, on the thread that
 * called sinter_step_train. The train step is the whole step of one rank: it
 * loops over the step's micro-batches itself.
 *   - the number of micro-batches of this rank in this step (k);
 *   - the number of samples of the step over all ranks (the global batch);
 *   - a 64-bit random key for one micro-batch, a function of the run's seed,
 *     the step, the micro-batch and the rank only;
 *   - whether to run micro-batch `micro_batch` (non-zero) or skip it,
 *     asked before each one: 0 once the run was asked to stop, and then the
 *     step is dropped (it also reads SINTER_HP_APPLY as 0);
 *   - load micro-batch `micro_batch` of the input whose buffer (from the
 *     plan's table) is `buffer` into that buffer;
 *   - the sum of `value` over all ranks (a count of valid targets);
 *   - bucket `bucket` of the plan is final: start summing it over the ranks
 *     and return at once;
 *   - sum `count` floats at `data` over the ranks, in place, now
 *     (synchronized batch-norm statistics);
 *   - every gradient of the step is final (after the last micro-batch): the
 *     runtime sums them over the ranks before returning;
 *   - this process's rank, in [0, world size);
 *   - gather every rank's `count` floats at `shard` into `rows` (rank r's
 *     at rows + r * count), now (a sharded update's new parameters);
 *   - start collective `id`: `shard` (count floats) becomes the sum over the
 *     ranks of their rows + rank * count (the rows are its scratch); return
 *     at once (ZERO2's gradient buckets). Neither may be touched until
 *   - start collective `id`: every rank's `count` floats at `shard` into
 *     `rows`, as above, and return at once (FULL_SHARD's parameters, before
 *     their use). Neither may be touched until
 *   - collective `id` is waited for; `scratch` is the reduce-scatter's rows
 *     or the all-gather's shard it started with (passing them keeps the
 *     step's memory plan from reusing them before). */
int64_t sinter_rt_micro_batch_count(void);
int64_t sinter_rt_global_batch(void);
int64_t sinter_rt_random_key(int64_t micro_batch);
int64_t sinter_rt_micro_batch_begin(int64_t micro_batch);
void sinter_rt_load_input(void *buffer, int64_t micro_batch);
int64_t sinter_rt_sum_over_ranks(int64_t value);
void sinter_rt_bucket_ready(int64_t bucket);
void sinter_rt_all_reduce_sum_f32(float *data, int64_t count);
void sinter_rt_all_reduce_sum_f64(double *data, int64_t count);
void sinter_rt_gradients_ready(void);
int64_t sinter_rt_rank(void);
void sinter_rt_all_gather_f32(const float *shard, float *rows, int64_t count);
void sinter_rt_reduce_scatter_start_f32(int64_t id, float *rows, float *shard,
                                        int64_t count);
void sinter_rt_all_gather_start_f32(int64_t id, const float *shard, float *rows,
                                    int64_t count);
void sinter_rt_collective_wait(int64_t id, const void *scratch);

/* Where each library call of the steps (a matmul, convolution, attention
 * or batch-norm run by the device's library) comes from: its op's .sn
 * position, "FILE:LINE:COL" (", called at FILE:LINE:COL" inside a
 * function), NUL-terminated, in index order. Before each library call the
 * step names its index, so that the call's failure names the op. */
extern const char sinter_library_sites[] __attribute__((weak));
extern const int64_t sinter_library_sites_size __attribute__((weak));
void sinter_rt_library_site(int64_t site);

/* The scalars of this step's update (the train step reads them after its
 * gradients are final). The runtime computes the learning-rate schedule and
 * owns the config, so they change without recompiling. */
enum sinter_hyperparameter {
  SINTER_HP_LR = 0,              /* this step's learning rate */
  SINTER_HP_STEP = 1,            /* the number of this update, 1 for the first */
  SINTER_HP_WEIGHT_DECAY = 2,    /* for parameters of two or more dimensions */
  SINTER_HP_WEIGHT_DECAY_1D = 3, /* for parameters of one dimension */
  SINTER_HP_BETA1 = 4,
  SINTER_HP_BETA2 = 5,
  SINTER_HP_EPS = 6,
  SINTER_HP_MOMENTUM = 7,
  SINTER_HP_NESTEROV = 8,        /* 0 or 1 */
  SINTER_HP_MAX_GRAD_NORM = 9,   /* 0: no clipping */
  SINTER_HP_APPLY = 10,          /* 0: compute the gradients only */
  SINTER_HP_COUNT = 11
};
double sinter_rt_hyperparameter(int64_t which);

/* y[n, o, oh, ow] = conv(x[n, c, h, w], w[o, c, kh, kw]) with strides
 * (sh, sw), dilations (dh, dw) and zero padding (ph, pw) on both sides of
 * x's spatial axes (x itself not padded). */
void sinter_cpu_conv2d_f32(const float *x, const float *w, float *y, int64_t n,
                           int64_t c, int64_t h, int64_t wd, int64_t o,
                           int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                           int64_t sh, int64_t sw, int64_t dh, int64_t dw,
                           int64_t ph, int64_t pw);

/* The gradients of that convolution: of x, from the output's gradient
 * dy[n, o, oh, ow] and w; and of w, from x and dy. */
void sinter_cpu_conv2d_backward_data_f32(const float *dy, const float *w, float *dx,
                                         int64_t n, int64_t c, int64_t h, int64_t wd,
                                         int64_t o, int64_t kh, int64_t kw, int64_t oh,
                                         int64_t ow, int64_t sh, int64_t sw, int64_t dh,
                                         int64_t dw, int64_t ph, int64_t pw);
void sinter_cpu_conv2d_backward_weights_f32(const float *x, const float *dy,
                                            float *dwt, int64_t n, int64_t c,
                                            int64_t h, int64_t wd, int64_t o,
                                            int64_t kh, int64_t kw, int64_t oh,
                                            int64_t ow, int64_t sh, int64_t sw,
                                            int64_t dh, int64_t dw, int64_t ph,
                                            int64_t pw);

/* As sinter_cpu_conv2d_backward_weights_f32, adding the kernel's gradient
 * into dwt (a gradient accumulator) instead of writing it. */
void sinter_cpu_conv2d_backward_weights_add_f32(const float *x, const float *dy,
                                                float *dwt, int64_t n, int64_t c,
                                                int64_t h, int64_t wd, int64_t o,
                                                int64_t kh, int64_t kw, int64_t oh,
                                                int64_t ow, int64_t sh, int64_t sw,
                                                int64_t dh, int64_t dw, int64_t ph,
                                                int64_t pw);

/* The same four with x, y, dy and dx channels last (x[n, h, w, c],
 * y[n, oh, ow, o]); w stays [o, c, kh, kw]; the sizes are as above. */
void sinter_cpu_conv2d_nhwc_f32(const float *x, const float *w, float *y, int64_t n,
                                int64_t c, int64_t h, int64_t wd, int64_t o,
                                int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                                int64_t sh, int64_t sw, int64_t dh, int64_t dw,
                                int64_t ph, int64_t pw);
void sinter_cpu_conv2d_nhwc_backward_data_f32(const float *dy, const float *w, float *dx,
                                              int64_t n, int64_t c, int64_t h,
                                              int64_t wd, int64_t o, int64_t kh,
                                              int64_t kw, int64_t oh, int64_t ow,
                                              int64_t sh, int64_t sw, int64_t dh,
                                              int64_t dw, int64_t ph, int64_t pw);
void sinter_cpu_conv2d_nhwc_backward_weights_f32(const float *x, const float *dy,
                                                 float *dwt, int64_t n, int64_t c,
                                                 int64_t h, int64_t wd, int64_t o,
                                                 int64_t kh, int64_t kw, int64_t oh,
                                                 int64_t ow, int64_t sh, int64_t sw,
                                                 int64_t dh, int64_t dw, int64_t ph,
                                                 int64_t pw);
void sinter_cpu_conv2d_nhwc_backward_weights_add_f32(
    const float *x, const float *dy, float *dwt, int64_t n, int64_t c, int64_t h,
    int64_t wd, int64_t o, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t sh,
    int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw);

/* The eight above for a convolution of `groups` groups: w[o, c / groups,
 * kh, kw], output channel j of group j / (o / groups) reading that group's
 * c / groups input channels; the sizes are as above. */
void sinter_cpu_conv2d_grouped_f32(const float *x, const float *w, float *y, int64_t n,
                                   int64_t c, int64_t h, int64_t wd, int64_t o,
                                   int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                                   int64_t sh, int64_t sw, int64_t dh, int64_t dw,
                                   int64_t ph, int64_t pw, int64_t groups);
void sinter_cpu_conv2d_grouped_backward_data_f32(
    const float *dy, const float *w, float *dx, int64_t n, int64_t c, int64_t h,
    int64_t wd, int64_t o, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t sh,
    int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw, int64_t groups);
void sinter_cpu_conv2d_grouped_backward_weights_f32(
    const float *x, const float *dy, float *dwt, int64_t n, int64_t c, int64_t h,
    int64_t wd, int64_t o, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t sh,
    int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw, int64_t groups);
void sinter_cpu_conv2d_grouped_backward_weights_add_f32(
    const float *x, const float *dy, float *dwt, int64_t n, int64_t c, int64_t h,
    int64_t wd, int64_t o, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t sh,
    int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw, int64_t groups);
void sinter_cpu_conv2d_grouped_nhwc_f32(const float *x, const float *w, float *y,
                                        int64_t n, int64_t c, int64_t h, int64_t wd,
                                        int64_t o, int64_t kh, int64_t kw, int64_t oh,
                                        int64_t ow, int64_t sh, int64_t sw, int64_t dh,
                                        int64_t dw, int64_t ph, int64_t pw, int64_t groups);
void sinter_cpu_conv2d_grouped_nhwc_backward_data_f32(
    const float *dy, const float *w, float *dx, int64_t n, int64_t c, int64_t h,
    int64_t wd, int64_t o, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t sh,
    int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw, int64_t groups);
void sinter_cpu_conv2d_grouped_nhwc_backward_weights_f32(
    const float *x, const float *dy, float *dwt, int64_t n, int64_t c, int64_t h,
    int64_t wd, int64_t o, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t sh,
    int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw, int64_t groups);
void sinter_cpu_conv2d_grouped_nhwc_backward_weights_add_f32(
    const float *x, const float *dy, float *dwt, int64_t n, int64_t c, int64_t h,
    int64_t wd, int64_t o, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t sh,
    int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw, int64_t groups);

/* y = max or average pooling of x (max != 0: the maximum, padding never
 * winning; else the average, padding counted as zeros) over kh x kw
 * windows with strides (sh, sw) and zero padding (ph, pw) on both sides;
 * x[n, c, h, w] and y[n, c, oh, ow], or x[n, h, w, c] and y[n, oh, ow, c]
 * when channels_last != 0 (the sizes are NCHW's either way). The backward
 * call gives dx from x and dy: a window's gradient goes to its first
 * maximum in row-major order, or is shared by the whole window. */
void sinter_cpu_pool2d_f32(const float *x, float *y, int64_t n, int64_t c, int64_t h,
                           int64_t w, int64_t oh, int64_t ow, int64_t kh, int64_t kw,
                           int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t max,
                           int64_t channels_last);
void sinter_cpu_pool2d_backward_f32(const float *x, const float *dy, float *dx,
                                    int64_t n, int64_t c, int64_t h, int64_t w,
                                    int64_t oh, int64_t ow, int64_t kh, int64_t kw,
                                    int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                                    int64_t max, int64_t channels_last);

/* CUDA programs (plan device "cuda"): every buffer of the step's table is
 * device memory, and the step's work is queued on the runtime's compute
 * stream; calls return before it is done unless they say otherwise. The
 * generated kernels are one module, a fatbinary (an sm_90 cubin and PTX)
 * that the runtime loads once, with their names in launch-index order, each
 * "name\tsource line" and NUL-terminated. */
extern const char sinter_cuda_module[] __attribute__((weak));
extern const int64_t sinter_cuda_module_size __attribute__((weak));
extern const char sinter_cuda_kernel_names[] __attribute__((weak));
extern const int64_t sinter_cuda_kernel_names_size __attribute__((weak));

/* Launches kernel `kernel` (its index in sinter_cuda_kernel_names) with a
 * grid of gx*gy*gz blocks of bx*by*bz threads and `shared_bytes` of dynamic
 * shared memory. `args` holds its `nargs` parameters, one 8-byte slot each,
 * a value in its slot's low bytes (a buffer's device pointer, an index, a
 * scalar). */
void sinter_cuda_launch(int64_t kernel, int64_t gx, int64_t gy, int64_t gz,
                        int64_t bx, int64_t by, int64_t bz,
                        int64_t shared_bytes, int64_t nargs, void *args);
/* As sinter_cpu_matmul_f32 and the sinter_cpu_conv2d_* calls, on device
 * buffers (cuBLASLt with f32 compute, the bias as its epilogue; cuDNN in
 * f32 FMA math). */
void sinter_cuda_matmul_f32(const float *a, const float *b, float *c,
                            int64_t batch, int64_t m, int64_t n, int64_t k,
                            int64_t flags, const float *bias);
void sinter_cuda_matmul_bf16(const uint16_t *a, const uint16_t *b, float *c,
                             int64_t batch, int64_t m, int64_t n, int64_t k,
                             int64_t flags, const float *bias);
/* One product (no batch) as sinter_cuda_matmul_f32 and _bf16, whose rows
 * lie lda, ldb and ldc elements apart in a, b and c as they are stored
 * (each at least that operand's stored row length): buffers whose rows
 * the compiler padded to 16 bytes, as cuBLASLt's fastest kernels need. */
void sinter_cuda_matmul_pitched_f32(const float *a, const float *b, float *c,
                                    int64_t m, int64_t n, int64_t k, int64_t flags,
                                    const float *bias, int64_t lda, int64_t ldb,
                                    int64_t ldc);
void sinter_cuda_matmul_pitched_bf16(const uint16_t *a, const uint16_t *b, float *c,
                                     int64_t m, int64_t n, int64_t k, int64_t flags,
                                     const float *bias, int64_t lda, int64_t ldb,
                                     int64_t ldc);
/* sinter_cpu_matmul_bf16_rounded on device buffers, dense and pitched. */
void sinter_cuda_matmul_bf16_rounded(const uint16_t *a, const uint16_t *b, uint16_t *c,
                                     int64_t batch, int64_t m, int64_t n, int64_t k,
                                     int64_t flags, const uint16_t *bias);
void sinter_cuda_matmul_pitched_bf16_rounded(const uint16_t *a, const uint16_t *b,
                                             uint16_t *c, int64_t m, int64_t n, int64_t k,
                                             int64_t flags, const uint16_t *bias,
                                             int64_t lda, int64_t ldb, int64_t ldc);
void sinter_cuda_conv2d_f32(const float *x, const float *w, float *y,
                            int64_t n, int64_t c, int64_t h, int64_t wd,
                            int64_t o, int64_t kh, int64_t kw, int64_t oh,
                            int64_t ow, int64_t sh, int64_t sw, int64_t dh,
                            int64_t dw, int64_t ph, int64_t pw);
void sinter_cuda_conv2d_backward_data_f32(const float *dy, const float *w, float *dx,
                                          int64_t n, int64_t c, int64_t h, int64_t wd,
                                          int64_t o, int64_t kh, int64_t kw, int64_t oh,
                                          int64_t ow, int64_t sh, int64_t sw, int64_t dh,
                                          int64_t dw, int64_t ph, int64_t pw);
void sinter_cuda_conv2d_backward_weights_f32(const float *x, const float *dy,
                                             float *dwt, int64_t n, int64_t c,
                                             int64_t h, int64_t wd, int64_t o,
                                             int64_t kh, int64_t kw, int64_t oh,
                                             int64_t ow, int64_t sh, int64_t sw,
                                             int64_t dh, int64_t dw, int64_t ph,
                                             int64_t pw);
/* Fused scaled dot-product attention (cuDNN), bf16 in and out: for each of
 * batch x heads, o[tq, dv] = softmax(q[tq, d] k[tk, d]^T / sqrt(d)) v[tk, dv],
 * with key j masked from query i where j > i when `causal`; sums in f32.
 * The backward call gives q's, k's and v's gradients from o's, `grad_o`. */
void sinter_cuda_attention_bf16(const uint16_t *q, const uint16_t *k, const uint16_t *v,
                                uint16_t *o, int64_t batch, int64_t heads, int64_t tq,
                                int64_t tk, int64_t d, int64_t dv, int64_t causal);
void sinter_cuda_attention_backward_bf16(const uint16_t *q, const uint16_t *k,
                                         const uint16_t *v, const uint16_t *grad_o,
                                         uint16_t *grad_q, uint16_t *grad_k,
                                         uint16_t *grad_v, int64_t batch, int64_t heads,
                                         int64_t tq, int64_t tk, int64_t d, int64_t dv,
                                         int64_t causal);
/* The same over one packed projection (cuDNN reads and writes through
 * strides): qkv [batch, t, 3, heads, d] holds q, then k, then v in each
 * row; o and grad_o are [batch, t, heads, d], grad_qkv is qkv's layout.
 * `stats` (f32 [batch, heads, t]): each query's log-sum-exp of its scaled
 * scores, which the forward call writes unless it is null and the
 * backward call reads instead of computing it again. */
void sinter_cuda_attention_qkv_bf16(const uint16_t *qkv, uint16_t *o, float *stats,
                                    int64_t batch, int64_t t, int64_t heads, int64_t d,
                                    int64_t causal);
void sinter_cuda_attention_qkv_backward_bf16(const uint16_t *qkv, const uint16_t *o,
                                             const float *stats, const uint16_t *grad_o,
                                             uint16_t *grad_qkv, int64_t batch, int64_t t,
                                             int64_t heads, int64_t d, int64_t causal);
/* The four in f32, on Sinter's own fused kernels (cuDNN's take no f32):
 * self-attention (tq = tk), head sizes 32 and 64 (d = dv), every buffer
 * 16-byte aligned. Each sums in a fixed order, so a step repeated gives the
 * same bits. */
void sinter_cuda_attention_f32(const float *q, const float *k, const float *v, float *o,
                               int64_t batch, int64_t heads, int64_t tq, int64_t tk,
                               int64_t d, int64_t dv, int64_t causal);
void sinter_cuda_attention_backward_f32(const float *q, const float *k, const float *v,
                                        const float *grad_o, float *grad_q, float *grad_k,
                                        float *grad_v, int64_t batch, int64_t heads,
                                        int64_t tq, int64_t tk, int64_t d, int64_t dv,
                                        int64_t causal);
void sinter_cuda_attention_qkv_f32(const float *qkv, float *o, float *stats, int64_t batch,
                                   int64_t t, int64_t heads, int64_t d, int64_t causal);
void sinter_cuda_attention_qkv_backward_f32(const float *qkv, const float *o,
                                            const float *stats, const float *grad_o,
                                            float *grad_qkv, int64_t batch, int64_t t,
                                            int64_t heads, int64_t d, int64_t causal);
/* Batch normalization with the batch's statistics (cuDNN's spatial
 * batch-norm), f32: for x [n, c, spatial] (every axis after the channels
 * folded into spatial), y = (x - mean) * invstd * weight + bias, with
 * mean[c] over n and spatial and invstd[c] = 1 / sqrt(var + epsilon) of the
 * biased variance, both written. The backward call gives x's, weight's and
 * bias's gradients from y's, `dy`, and the forward call's mean and invstd. */
void sinter_cuda_batch_norm_f32(const float *x, const float *weight, const float *bias,
                                float *y, float *mean, float *invstd, int64_t n,
                                int64_t c, int64_t spatial, double epsilon);
void sinter_cuda_batch_norm_backward_f32(const float *x, const float *dy,
                                         const float *weight, const float *mean,
                                         const float *invstd, float *dx, float *dweight,
                                         float *dbias, int64_t n, int64_t c,
                                         int64_t spatial, double epsilon);
/* A graph region: the launches and library calls between these two calls
 * (with no other call between them) are one stretch of device work that
 * is a function of its signature: `count` 8-byte slots, what the region
 * takes from outside it (buffer pointers, scalars). The runtime may
 * capture the region's work in a CUDA graph and, when the region runs
 * again with the same signature, launch that graph instead of the calls
 * between (which then return at once). `region` numbers the program's
 * regions. */
void sinter_cuda_graph_begin(int64_t region, const int64_t *signature,
                             int64_t count);
void sinter_cuda_graph_end(int64_t region);
/* Copies `bytes` at byte `offset` from device buffer `src` to host memory
 * `dst` once the work queued before it is done (it waits). */
void sinter_cuda_read(void *dst, const void *src, int64_t offset,
                      int64_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* SINTER_RT_ABI_H */
