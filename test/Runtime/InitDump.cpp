//===- InitDump.cpp - Print initial values for init_reference.py ----------===//
//
// Reads lines from stdin and prints one line each:
//   NAME KIND DTYPE SHAPE SEED FIRST COUNT [ARG...]   (SHAPE like 8x24, "-"
//       for a scalar) -> the elements' bit patterns in hex
//   perm N SEED EPOCH -> the sampler's ordering of epoch EPOCH
// or "error: MESSAGE".
//
//===----------------------------------------------------------------------===//

#include "core/Init.h"
#include "data/Sampler.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace sinter::rt;

static void printBits(const uint8_t *p, size_t size, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t v = 0;
    std::memcpy(&v, p + i * size, size);
    std::printf("%s%0*" PRIx64, i ? " " : "", (int)(2 * size), v);
  }
  std::printf("\n");
}

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string name;
    in >> name;
    if (name == "perm") {
      uint64_t n, seed, epoch;
      in >> n >> seed >> epoch;
      std::vector<uint64_t> perm = samplerOrdering(n, seed, epoch, true);
      for (size_t i = 0; i < perm.size(); ++i)
        std::printf("%s%" PRIu64, i ? " " : "", perm[i]);
      std::printf("\n");
      continue;
    }
    std::string kind, dtype, shapeText, arg;
    uint64_t seed, first, count;
    in >> kind >> dtype >> shapeText >> seed >> first >> count;
    std::vector<double> args;
    while (in >> arg)
      args.push_back(std::strtod(arg.c_str(), nullptr));
    Shape shape;
    if (shapeText != "-") {
      std::istringstream s(shapeText);
      std::string d;
      while (std::getline(s, d, 'x'))
        shape.push_back(std::strtoull(d.c_str(), nullptr, 10));
    }
    std::optional<InitKind> k = parseInitKind(kind);
    std::optional<DType> t = parseDType(dtype);
    if (!k || !t) {
      std::printf("error: unknown initialiser or dtype\n");
      continue;
    }
    std::vector<uint8_t> out(count * dtypeSize(*t));
    Status st = fill(name, *k, args, *t, shape, seed, first, count, out.data());
    if (!st.ok()) {
      std::printf("error: %s\n", st.message().c_str());
      continue;
    }
    printBits(out.data(), dtypeSize(*t), count);
  }
  return 0;
}
