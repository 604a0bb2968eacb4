//===- InitLine.cpp - One line of the initialisers' text protocol ---------===//

#include "InitLine.h"

#include "core/Init.h"
#include "data/Sampler.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>

namespace sinter::rt::test {

std::vector<std::string> answerInitLine(const std::string &line, size_t limit,
                                        std::string &error) {
  std::istringstream in(line);
  std::string name;
  in >> name;
  std::vector<std::string> out;
  if (name == "perm") {
    uint64_t n, seed, epoch;
    in >> n >> seed >> epoch;
    std::vector<uint64_t> perm = samplerOrdering(n, seed, epoch, true);
    for (size_t i = 0; i < perm.size() && i < limit; ++i)
      out.push_back(std::to_string(perm[i]));
    return out;
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
    error = "unknown initialiser or dtype";
    return out;
  }
  std::vector<uint8_t> buf(count * dtypeSize(*t));
  Status st = fill(name, *k, args, *t, shape, seed, first, count, buf.data());
  if (!st.ok()) {
    error = st.message();
    return out;
  }
  size_t size = dtypeSize(*t);
  for (uint64_t i = 0; i < count && i < limit; ++i) {
    uint64_t v = 0;
    std::memcpy(&v, buf.data() + i * size, size);
    char hex[24];
    std::snprintf(hex, sizeof(hex), "%0*" PRIx64, int(2 * size), v);
    out.push_back(hex);
  }
  return out;
}

} // namespace sinter::rt::test
