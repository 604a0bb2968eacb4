#!/usr/bin/env python3
"""Reference implementation, in numpy, of Sinter's parameter initialisers and
sampler ordering (runtime/src/core/Init.h, runtime/src/data/Sampler.h).

It reproduces the C++ runtime bit for bit: the same Philox-4x32-10 stream, the
same conversions to uniforms, and the same deterministic log/exp/cos/erfc/
quantile built from IEEE-754 + - * / sqrt only (runtime/src/core/DetMath.cpp),
performed in the same order. Other implementations (the JAX reference of the
test suite) can import this module to start from Sinter's exact parameters:

    import init_reference as ir
    w = ir.init_values("h.0.attn.c_attn.weight", "normal", [0.0, 0.02],
                       "f32", (768, 2304), seed=0)
    order = ir.sampler_ordering(50000, seed=0, epoch=3, shuffle=True)

Command line:
    init_reference.py --check PATH/TO/sinter-init-dump
        compares the C++ values with this module's on a set of cases and
        prints "N passed, M failed" (fails when numpy is missing);
    init_reference.py --emit-cpp
        prints the expected values embedded in Init_test.cpp.
"""

import math
import subprocess
import sys

try:
    import numpy as np
except ImportError:  # --emit-cpp works without numpy; --check reports it
    np = None

MASK32 = 0xFFFFFFFF

# --- Philox-4x32-10 ---------------------------------------------------------


def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Vectorised Philox: counters are uint64 arrays holding 32-bit values,
    the key two Python ints. Returns the four output words (uint64 arrays)."""
    m0 = np.uint64(0xD2511F53)
    m1 = np.uint64(0xCD9E8D57)
    mask = np.uint64(MASK32)
    s32 = np.uint64(32)
    for r in range(10):
        if r:
            k0 = (k0 + 0x9E3779B9) & MASK32
            k1 = (k1 + 0xBB67AE85) & MASK32
        p0 = m0 * c0
        p1 = m1 * c2
        c0, c1, c2, c3 = ((p1 >> s32) ^ c1 ^ np.uint64(k0), p1 & mask,
                          (p0 >> s32) ^ c3 ^ np.uint64(k1), p0 & mask)
    return c0, c1, c2, c3


def fnv1a64(name):
    h = 0xCBF29CE484222325
    for b in name.encode("utf-8"):
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def stream_words(seed, stream_id, index):
    """(x, y) for element indices `index` (uint64 array) of stream
    (seed, stream_id): x = w0 | w1 << 32, y = w2 | w3 << 32."""
    index = np.asarray(index, dtype=np.uint64)
    mask = np.uint64(MASK32)
    s32 = np.uint64(32)
    c0 = index & mask
    c1 = index >> s32
    c2 = np.full_like(index, stream_id & MASK32)
    c3 = np.full_like(index, stream_id >> 32)
    w0, w1, w2, w3 = philox4x32_10(c0, c1, c2, c3, seed & MASK32, seed >> 32)
    return w0 | (w1 << s32), w2 | (w3 << s32)


# --- Deterministic math (DetMath.cpp, same constants, same order) -----------

LN2_HI = 0.6931471803691238
LN2_LO = 1.9082149292705877e-10
INV_LN2 = 1.4426950408889634
SQRT_HALF = 0.7071067811865476
PI_2 = 1.5707963267948966
INV_SQRT_PI = 0.5641895835477563
TWO_OVER_SQRT_PI = 1.1283791670955126
LOG_C = [0.3333333333333333, 0.2, 0.14285714285714285, 0.1111111111111111,
         0.09090909090909091, 0.07692307692307693, 0.06666666666666667,
         0.058823529411764705, 0.05263157894736842, 0.047619047619047616,
         0.043478260869565216]
EXP_C = [1.0, 1.0, 0.5, 0.16666666666666666, 0.041666666666666664,
         0.008333333333333333, 0.001388888888888889, 0.0001984126984126984,
         2.48015873015873e-05, 2.7557319223985893e-06, 2.755731922398589e-07,
         2.505210838544172e-08, 2.08767569878681e-09, 1.6059043836821613e-10,
         1.1470745597729725e-11]
SIN_C = [-0.16666666666666666, 0.008333333333333333, -0.0001984126984126984,
         2.7557319223985893e-06, -2.505210838544172e-08, 1.6059043836821613e-10,
         -7.647163731819816e-13, 2.8114572543455206e-15, -8.22063524662433e-18]
COS_C = [-0.5, 0.041666666666666664, -0.001388888888888889, 2.48015873015873e-05,
         -2.755731922398589e-07, 2.08767569878681e-09, -1.1470745597729725e-11,
         4.779477332387385e-14, -1.5619206968586225e-16]


def det_log(x):
    """Array log for x > 0."""
    m, e = np.frexp(x)
    small = m < SQRT_HALF
    m = np.where(small, m * 2.0, m)
    e = np.where(small, e - 1, e)
    f = (m - 1.0) / (m + 1.0)
    s = f * f
    p = np.full_like(s, LOG_C[10])
    for k in range(9, -1, -1):
        p = p * s + LOG_C[k]
    logm = 2.0 * f + (2.0 * f) * (s * p)
    de = e.astype(np.float64)
    return de * LN2_HI + (logm + de * LN2_LO)


def det_exp_scalar(x):
    if x < -700.0:
        return 0.0
    k = math.floor(x * INV_LN2 + 0.5)
    r = (x - k * LN2_HI) - k * LN2_LO
    p = EXP_C[14]
    for j in range(13, -1, -1):
        p = p * r + EXP_C[j]
    return math.ldexp(p, int(k))


def _sin_kernel(x):
    z = x * x
    p = np.full_like(z, SIN_C[8])
    for k in range(7, -1, -1):
        p = p * z + SIN_C[k]
    return x + x * (z * p)


def _cos_kernel(x):
    z = x * x
    p = np.full_like(z, COS_C[8])
    for k in range(7, -1, -1):
        p = p * z + COS_C[k]
    return 1.0 + z * p


def det_cos2pi(u):
    t = 4.0 * u
    q = np.floor(t)
    r = t - q
    comp = r > 0.5
    x = PI_2 * np.where(comp, 1.0 - r, r)
    sk = _sin_kernel(x)
    ck = _cos_kernel(x)
    c = np.where(comp, sk, ck)
    s = np.where(comp, ck, sk)
    return np.select([q == 0, q == 1, q == 2], [c, -s, -c], s)


def det_erfc_scalar(y):
    if y < 0.0:
        return 2.0 - det_erfc_scalar(-y)
    if y < 2.0:
        z = -(y * y)
        term = y
        total = y
        for n in range(1, 41):
            term = term * z / float(n)
            total = total + term / float(2 * n + 1)
        return 1.0 - total * TWO_OVER_SQRT_PI
    t = y
    for n in range(60, 0, -1):
        t = y + (float(n) / 2.0) / t
    return det_exp_scalar(-(y * y)) * INV_SQRT_PI / t


def det_normal_cdf_scalar(x):
    if math.isinf(x):
        return 0.0 if x < 0 else 1.0
    return 0.5 * det_erfc_scalar(-(x * SQRT_HALF))


def _horner(coeffs, r):
    acc = np.full_like(r, coeffs[0])
    for c in coeffs[1:]:
        acc = acc * r + c
    return acc


AS241_A = [2.5090809287301226727e+3, 3.3430575583588128105e+4, 6.7265770927008700853e+4,
           4.5921953931549871457e+4, 1.3731693765509461125e+4, 1.9715909503065514427e+3,
           1.3314166789178437745e+2, 3.3871328727963666080e+0]
AS241_B = [5.2264952788528545610e+3, 2.8729085735721942674e+4, 3.9307895800092710610e+4,
           2.1213794301586595867e+4, 5.3941960214247511077e+3, 6.8718700749205790830e+2,
           4.2313330701600911252e+1, 1.0]
AS241_C = [7.74545014278341407640e-4, 2.27238449892691845833e-2, 2.41780725177450611770e-1,
           1.27045825245236838258e+0, 3.64784832476320460504e+0, 5.76949722146069140550e+0,
           4.63033784615654529590e+0, 1.42343711074968357734e+0]
AS241_D = [1.05075007164441684324e-9, 5.47593808499534494600e-4, 1.51986665636164571966e-2,
           1.48103976427480074590e-1, 6.89767334985100004550e-1, 1.67638483018380384940e+0,
           2.05319162663775882187e+0, 1.0]
AS241_E = [2.01033439929228813265e-7, 2.71155556874348757815e-5, 1.24266094738807843860e-3,
           2.65321895265761230930e-2, 2.96560571828504891230e-1, 1.78482653991729133580e+0,
           5.46378491116411436990e+0, 6.65790464350110377720e+0]
AS241_F = [2.04426310338993978564e-15, 1.42151175831644588870e-7, 1.84631831751005468180e-5,
           7.86869131145613259100e-4, 1.48753612908506148525e-2, 1.36929880922735805310e-1,
           5.99832206555887937690e-1, 1.0]


def det_normal_quantile(p):
    """AS241 with det_log; -inf for p <= 0, +inf for p >= 1."""
    p = np.asarray(p, dtype=np.float64)
    low = ~(p > 0.0)
    high = ~(p < 1.0)
    ok = ~(low | high)
    ps = np.where(ok, p, 0.5)
    q = ps - 0.5
    central = np.abs(q) <= 0.425
    r = 0.180625 - q * q
    xc = (_horner(AS241_A, r) * q) / _horner(AS241_B, r)
    rt = np.where(q < 0.0, ps, 1.0 - ps)
    rt = np.where(central, 0.25, rt)  # unused there; keeps log's input valid
    rt = np.sqrt(-det_log(rt))
    near = rt <= 5.0
    r1 = rt - 1.6
    r2 = rt - 5.0
    xt = np.where(near, _horner(AS241_C, r1) / _horner(AS241_D, r1),
                  _horner(AS241_E, r2) / _horner(AS241_F, r2))
    xt = np.where(q < 0.0, -xt, xt)
    x = np.where(central, xc, xt)
    x = np.where(low, -np.inf, x)
    return np.where(high, np.inf, x)


# --- Initialisers (Init.h) --------------------------------------------------

TWO_POW_MINUS_53 = 2.0 ** -53


def _plan(kind, args):
    """(family, params) as Init.cpp's makePlan; raises ValueError on bad args."""
    a = [float(x) for x in args]
    if kind == "zeros":
        return "constant", (0.0,)
    if kind == "ones":
        return "constant", (1.0,)
    if kind == "constant":
        return "constant", (a[0],)
    if kind == "normal":
        return "normal", (a[0], a[1])
    if kind == "uniform":
        return "uniform", (a[0], a[1])
    if kind == "trunc_normal":
        return "trunc_normal", (a[0], a[1], a[2], a[3])
    if kind == "kaiming_uniform":
        slope = a[1] if len(a) > 1 else 0.0
        bound = math.sqrt(6.0 / ((1.0 + slope * slope) * a[0]))
        return "uniform", (-bound, bound)
    if kind == "kaiming_normal":
        return "normal", (0.0, a[1] / math.sqrt(a[0]))
    if kind == "xavier_uniform":
        bound = math.sqrt(6.0 / (a[0] + a[1]))
        return "uniform", (-bound, bound)
    raise ValueError("unknown initialiser " + kind)


def init_values(name, kind, args, dtype, shape, seed, first=0, count=None):
    """Elements [first, first + count) of parameter `name` (flat C order), as
    float64 ("f64") or float32 ("f32"). Constants also as f16/i64/i32/bool."""
    total = 1
    for d in shape:
        total *= int(d)
    if count is None:
        count = total - first
    family, params = _plan(kind, args)
    npdt = {"f64": np.float64, "f32": np.float32, "f16": np.float16, "i64": np.int64,
            "i32": np.int32, "bool": np.bool_}[dtype]
    if family == "constant":
        return np.full(count, params[0], dtype=npdt)
    seed = int(seed) & 0xFFFFFFFFFFFFFFFF
    idx = np.arange(first, first + count, dtype=np.uint64)
    x, y = stream_words(seed, fnv1a64(name), idx)
    u = (x >> np.uint64(11)).astype(np.float64) * TWO_POW_MINUS_53
    if family == "uniform":
        lo, hi = params
        r = lo + (hi - lo) * u
    elif family == "normal":
        mean, std = params
        v = ((y >> np.uint64(11)) + np.uint64(1)).astype(np.float64) * TWO_POW_MINUS_53
        z = np.sqrt(-2.0 * det_log(v)) * det_cos2pi(u)
        r = mean + std * z
    else:
        mean, std, a, b = params
        al = (a - mean) / std
        be = (b - mean) / std
        flip = al + be > 0
        if flip:
            al, be = -be, -al
        pa = det_normal_cdf_scalar(al)
        pb = det_normal_cdf_scalar(be)
        z = det_normal_quantile(pa + (pb - pa) * u)
        if flip:
            z = -z
        r = mean + std * z
        r = np.where(r < a, a, r)
        r = np.where(r > b, b, r)
    if dtype == "f64":
        if family == "uniform":
            r = np.where(r >= hi, np.nextafter(hi, -np.inf), r)
        return r
    if dtype == "f32":
        f = r.astype(np.float32)
        if family == "uniform":
            hi32 = np.float32(hi)
            lo32 = np.float32(lo)
            below = np.nextafter(hi32, np.float32(-np.inf))
            f = np.where((f >= hi32) & (lo32 < hi32), below, f).astype(np.float32)
        return f
    raise ValueError(kind + " fills f32 or f64 tensors, not " + dtype)


# --- Sampler ordering (Sampler.h) -------------------------------------------


def sampler_ordering(n, seed, epoch, shuffle=True):
    perm = list(range(n))
    if not shuffle or n < 2:
        return perm
    x, _ = stream_words(int(seed), fnv1a64("sampler:epoch:%d" % epoch),
                        np.arange(n, dtype=np.uint64))
    for i in range(n - 1, 0, -1):
        j = (int(x[i]) * (i + 1)) >> 64
        perm[i], perm[j] = perm[j], perm[i]
    return perm


# --- The comparison with the C++ runtime ------------------------------------

# (name, kind, args, dtype, shape, seed, first, count)
CASES = [
    ("h.3.attn.c_attn.weight", "normal", [0.0, 0.02], "f32", (8, 24), 0, 0, None),
    ("h.3.attn.c_attn.weight", "normal", [0.0, 0.02], "f64", (8, 24), 0, 0, None),
    ("h.3.attn.c_attn.weight", "normal", [0.0, 0.02], "f64", (8, 24), 0, 37, 50),
    ("wte.weight", "normal", [0.5, 2.0], "f64", (1000,), 1234567, 0, None),
    ("fc1.weight", "kaiming_uniform", [784.0, math.sqrt(5.0)], "f32", (64, 784), 0, 1000, 300),
    ("fc1.weight", "kaiming_uniform", [784.0, math.sqrt(5.0)], "f64", (64, 784), 0, 0, 400),
    ("fc1.bias", "uniform", [-0.0357, 0.0357], "f32", (64,), 7, 0, None),
    ("layer1.0.conv1.weight", "kaiming_normal", [576.0, math.sqrt(2.0)], "f32", (64, 64, 3, 3),
     42, 0, 512),
    ("proj.weight", "xavier_uniform", [128.0, 256.0], "f64", (256, 128), 2**64 - 1, 5, 333),
    ("vit.pos_embed", "trunc_normal", [0.0, 0.02, -0.04, 0.04], "f32", (197, 768), 0, 0, 600),
    ("vit.pos_embed", "trunc_normal", [0.0, 1.0, -2.0, 2.0], "f64", (1000,), 3, 0, None),
    ("tail", "trunc_normal", [0.0, 1.0, 3.0, 10.0], "f64", (500,), 9, 0, None),
    ("tail.neg", "trunc_normal", [1.0, 2.0, -float("inf"), -5.0], "f64", (500,), 9, 0, None),
    ("one.side", "trunc_normal", [0.0, 1.0, -1.0, float("inf")], "f32", (500,), 9, 0, None),
    ("u.narrow", "uniform", [1.0, 1.0000001], "f32", (2000,), 5, 0, None),
    ("caf\u00e9.\u03b2", "normal", [0.0, 1.0], "f64", (64,), 11, 0, None),
    ("ln.weight", "ones", [], "f32", (16,), 0, 0, None),
    ("bn.num_batches_tracked", "zeros", [], "i64", (), 0, 0, None),
    ("scale", "constant", [0.1], "f64", (3,), 0, 0, None),
    ("scale32", "constant", [0.1], "f32", (3,), 0, 0, None),
]


def _bits(arr, dtype):
    view = {"f64": np.uint64, "f32": np.uint32, "f16": np.uint16, "i64": np.uint64,
            "i32": np.uint32, "bool": np.uint8}[dtype]
    width = {"f64": 16, "f32": 8, "f16": 4, "i64": 16, "i32": 8, "bool": 2}[dtype]
    return ["%0*x" % (width, int(v)) for v in np.ascontiguousarray(arr).view(view)]


def _case_line(case):
    name, kind, args, dtype, shape, seed, first, count = case
    total = 1
    for d in shape:
        total *= d
    if count is None:
        count = total - first
    shape_text = "x".join(str(d) for d in shape) if shape else "-"
    return "%s %s %s %s %d %d %d %s" % (name, kind, dtype, shape_text, seed, first, count,
                                        " ".join(repr(float(a)) for a in args)), count


PERM_CASES = [(10, 0, 0), (1000, 5, 3), (37, 2**64 - 1, 12345), (2, 1, 0)]


def check(tool):
    lines = [_case_line(c)[0] for c in CASES]
    lines += ["perm %d %d %d" % c for c in PERM_CASES]
    out = subprocess.run([tool], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, encoding="utf-8")
    if out.returncode != 0:
        print(out.stderr)
        print("0 passed, 1 failed")
        return 1
    got = out.stdout.splitlines()
    passed = failed = 0
    for i, case in enumerate(CASES):
        want = _bits(init_values(*case[:6], first=case[6], count=case[7]), case[3])
        have = got[i].split() if i < len(got) else ["<missing>"]
        if have == want:
            passed += 1
        else:
            failed += 1
            diff = next((k for k in range(min(len(have), len(want))) if have[k] != want[k]),
                        min(len(have), len(want)))
            print("MISMATCH %s %s %s: first difference at element %d: C++ %s, numpy %s" % (
                case[0], case[1], case[3], diff, have[diff:diff + 1], want[diff:diff + 1]))
    for j, (n, seed, epoch) in enumerate(PERM_CASES):
        i = len(CASES) + j
        want = [str(v) for v in sampler_ordering(n, seed, epoch)]
        have = got[i].split() if i < len(got) else ["<missing>"]
        if have == want:
            passed += 1
        else:
            failed += 1
            print("MISMATCH sampler ordering n=%d seed=%d epoch=%d" % (n, seed, epoch))
    print("init reference: %d cases compared bit for bit" % (passed + failed))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


def emit_cpp():
    """The expected values embedded in Init_test.cpp (a few elements per case
    keeps the table short; the --check run compares every element)."""
    print("// Generated by test/Runtime/init_reference.py --emit-cpp; do not edit.")
    print("// Each row: the dump tool's input line, then the expected bit patterns")
    print("// of its first elements.")
    for case in CASES:
        line, count = _case_line(case)
        bits = _bits(init_values(*case[:6], first=case[6], count=case[7]), case[3])[:6]
        escaped = line.encode("utf-8").decode("latin-1")
        cline = "".join(c if ord(c) < 128 else "\\x%02x" % ord(c) for c in escaped)
        print('    {"%s",\n     {%s}},' % (cline, ", ".join('"%s"' % b for b in bits)))
    for (n, seed, epoch) in PERM_CASES[:3]:
        order = sampler_ordering(n, seed, epoch)[:12]
        print('    {"perm %d %d %d",\n     {%s}},' % (n, seed, epoch,
                                                    ", ".join('"%d"' % v for v in order)))


def main(argv):
    if np is None:
        print("init_reference.py: numpy is not installed; run scripts/setup.sh, "
              "which prepares .venv with it")
        return 1
    if len(argv) == 3 and argv[1] == "--check":
        return check(argv[2])
    if len(argv) == 2 and argv[1] == "--emit-cpp":
        emit_cpp()
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
