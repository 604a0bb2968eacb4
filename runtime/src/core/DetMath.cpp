//===- DetMath.cpp - Math that every IEEE-754 machine reproduces ----------===//
//
// Every constant is written as the shortest decimal that reads back as the
// intended double (Python's repr), so C++ and Python parse the same bits.
// The order of operations is the contract: change nothing here without
// changing test/Runtime/init_reference.py the same way.
//
//===----------------------------------------------------------------------===//

#include "core/DetMath.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace sinter::rt::detmath {
namespace {

constexpr double kLn2Hi = 0.6931471803691238;   // fdlibm's ln2_hi: low 32 bits zero
constexpr double kLn2Lo = 1.9082149292705877e-10; // ln2 - kLn2Hi
constexpr double kInvLn2 = 1.4426950408889634;
constexpr double kSqrtHalf = 0.7071067811865476;
constexpr double kPi2 = 1.5707963267948966;
constexpr double kInvSqrtPi = 0.5641895835477563;
constexpr double kTwoOverSqrtPi = 1.1283791670955126;

// 1/(2k+1), k = 1..11: the atanh series of log.
constexpr double kLogC[11] = {0.3333333333333333,  0.2,
                              0.14285714285714285, 0.1111111111111111,
                              0.09090909090909091, 0.07692307692307693,
                              0.06666666666666667, 0.058823529411764705,
                              0.05263157894736842, 0.047619047619047616,
                              0.043478260869565216};
// 1/j!, j = 0..14.
constexpr double kExpC[15] = {1.0,
                              1.0,
                              0.5,
                              0.16666666666666666,
                              0.041666666666666664,
                              0.008333333333333333,
                              0.001388888888888889,
                              0.0001984126984126984,
                              2.48015873015873e-05,
                              2.7557319223985893e-06,
                              2.755731922398589e-07,
                              2.505210838544172e-08,
                              2.08767569878681e-09,
                              1.6059043836821613e-10,
                              1.1470745597729725e-11};
// (-1)^k/(2k+1)!, k = 1..9.
constexpr double kSinC[9] = {-0.16666666666666666,   0.008333333333333333,
                             -0.0001984126984126984, 2.7557319223985893e-06,
                             -2.505210838544172e-08, 1.6059043836821613e-10,
                             -7.647163731819816e-13, 2.8114572543455206e-15,
                             -8.22063524662433e-18};
// (-1)^k/(2k)!, k = 1..9.
constexpr double kCosC[9] = {-0.5,
                             0.041666666666666664,
                             -0.001388888888888889,
                             2.48015873015873e-05,
                             -2.755731922398589e-07,
                             2.08767569878681e-09,
                             -1.1470745597729725e-11,
                             4.779477332387385e-14,
                             -1.5619206968586225e-16};

/// std::frexp for finite x > 0, exactly (m in [0.5, 1), x = m * 2^e), by
/// bit manipulation for normal numbers, which is much faster than the libm
/// call; subnormals take the libm path.
double frexpPositive(double x, int *e) {
  uint64_t bits;
  std::memcpy(&bits, &x, 8);
  int biased = (int)(bits >> 52 & 0x7ff);
  if (biased == 0 || biased == 0x7ff)
    return std::frexp(x, e);
  *e = biased - 1022;
  bits = (bits & ~(0x7ffull << 52)) | (1022ull << 52);
  double m;
  std::memcpy(&m, &bits, 8);
  return m;
}

/// sin x for x in [0, pi/4]: x + x*(z*S(z)), z = x*x.
double sinKernel(double x) {
  double z = x * x;
  double p = kSinC[8];
  for (int k = 7; k >= 0; --k)
    p = p * z + kSinC[k];
  return x + x * (z * p);
}

/// cos x for x in [0, pi/4]: 1 + z*C(z), z = x*x.
double cosKernel(double x) {
  double z = x * x;
  double p = kCosC[8];
  for (int k = 7; k >= 0; --k)
    p = p * z + kCosC[k];
  return 1.0 + z * p;
}

} // namespace

double log(double x) {
  int e;
  double m = frexpPositive(x, &e); // m in [0.5, 1)
  if (m < kSqrtHalf) {
    m = m * 2.0;
    e = e - 1;
  }
  double f = (m - 1.0) / (m + 1.0);
  double s = f * f;
  double p = kLogC[10];
  for (int k = 9; k >= 0; --k)
    p = p * s + kLogC[k];
  double logm = 2.0 * f + (2.0 * f) * (s * p);
  double de = (double)e;
  return de * kLn2Hi + (logm + de * kLn2Lo);
}

double exp(double x) {
  if (x < -700.0)
    return 0.0;
  double k = std::floor(x * kInvLn2 + 0.5);
  double r = (x - k * kLn2Hi) - k * kLn2Lo;
  double p = kExpC[14];
  for (int j = 13; j >= 0; --j)
    p = p * r + kExpC[j];
  return std::ldexp(p, (int)k);
}

double cos2pi(double u) {
  double t = 4.0 * u;
  double q = std::floor(t);
  double r = t - q;
  bool complement = r > 0.5;
  double x = kPi2 * (complement ? 1.0 - r : r);
  // Quadrants 0 and 2 need cos(pi/2 * r), 1 and 3 sin(pi/2 * r); for
  // r > 1/2 each is the other kernel at 1 - r. Only that kernel is computed.
  int quadrant = (int)q;
  bool wantCos = quadrant % 2 == 0;
  double v = wantCos != complement ? cosKernel(x) : sinKernel(x);
  return quadrant == 1 || quadrant == 2 ? -v : v;
}

double erfc(double y) {
  if (y < 0.0)
    return 2.0 - erfc(-y);
  if (y < 2.0) {
    double z = -(y * y);
    double term = y;
    double sum = y;
    for (int n = 1; n <= 40; ++n) {
      term = term * z / (double)n;
      sum = sum + term / (double)(2 * n + 1);
    }
    return 1.0 - sum * kTwoOverSqrtPi;
  }
  double t = y;
  for (int n = 60; n >= 1; --n)
    t = y + ((double)n / 2.0) / t;
  return exp(-(y * y)) * kInvSqrtPi / t;
}

double normalCdf(double x) {
  if (std::isinf(x))
    return x < 0 ? 0.0 : 1.0;
  return 0.5 * erfc(-(x * kSqrtHalf));
}

double normalQuantile(double p) {
  if (!(p > 0.0))
    return -INFINITY;
  if (!(p < 1.0))
    return INFINITY;
  double q = p - 0.5;
  if (std::fabs(q) <= 0.425) {
    double r = 0.180625 - q * q;
    double num = (((((((2.5090809287301226727e+3 * r + 3.3430575583588128105e+4) * r +
                       6.7265770927008700853e+4) * r + 4.5921953931549871457e+4) * r +
                     1.3731693765509461125e+4) * r + 1.9715909503065514427e+3) * r +
                   1.3314166789178437745e+2) * r + 3.3871328727963666080e+0) * q;
    double den = (((((((5.2264952788528545610e+3 * r + 2.8729085735721942674e+4) * r +
                       3.9307895800092710610e+4) * r + 2.1213794301586595867e+4) * r +
                     5.3941960214247511077e+3) * r + 6.8718700749205790830e+2) * r +
                   4.2313330701600911252e+1) * r + 1.0);
    return num / den;
  }
  double r = q < 0.0 ? p : 1.0 - p;
  r = std::sqrt(-log(r));
  double num, den;
  if (r <= 5.0) {
    r = r - 1.6;
    num = (((((((7.74545014278341407640e-4 * r + 2.27238449892691845833e-2) * r +
                2.41780725177450611770e-1) * r + 1.27045825245236838258e+0) * r +
              3.64784832476320460504e+0) * r + 5.76949722146069140550e+0) * r +
            4.63033784615654529590e+0) * r + 1.42343711074968357734e+0);
    den = (((((((1.05075007164441684324e-9 * r + 5.47593808499534494600e-4) * r +
                1.51986665636164571966e-2) * r + 1.48103976427480074590e-1) * r +
              6.89767334985100004550e-1) * r + 1.67638483018380384940e+0) * r +
            2.05319162663775882187e+0) * r + 1.0);
  } else {
    r = r - 5.0;
    num = (((((((2.01033439929228813265e-7 * r + 2.71155556874348757815e-5) * r +
                1.24266094738807843860e-3) * r + 2.65321895265761230930e-2) * r +
              2.96560571828504891230e-1) * r + 1.78482653991729133580e+0) * r +
            5.46378491116411436990e+0) * r + 6.65790464350110377720e+0);
    den = (((((((2.04426310338993978564e-15 * r + 1.42151175831644588870e-7) * r +
                1.84631831751005468180e-5) * r + 7.86869131145613259100e-4) * r +
              1.48753612908506148525e-2) * r + 1.36929880922735805310e-1) * r +
            5.99832206555887937690e-1) * r + 1.0);
  }
  double x = num / den;
  return q < 0.0 ? -x : x;
}

} // namespace sinter::rt::detmath
