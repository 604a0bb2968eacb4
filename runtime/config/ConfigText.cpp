//===- ConfigText.cpp - Text helpers and "did you mean" suggestions -------===//
//
// Formatting of numbers and lists for messages, and the nearest names of the
// schema for a misspelt field or enum value.
//
//===----------------------------------------------------------------------===//

#include "runtime/config/ConfigInternals.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace sinter::config::detail {

std::string formatInt(int64_t v) { return std::to_string(v); }

/// Shortest decimal that reads back as `v`, so 3e-4 prints as 0.0003, not
/// 0.00029999999999999997, and 40 as 40, not 4e+01.
std::string formatDouble(double v) {
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
    return buf;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  return buf;
}

bool isIdentifier(const std::string &s) {
  if (s.empty() || !(std::isalpha((unsigned char)s[0]) || s[0] == '_'))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum((unsigned char)c) || c == '_';
  });
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos)
    return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string join(const std::vector<std::string> &parts, const std::string &sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i ? sep : "") + parts[i];
  return out;
}

/// "'a'", "'a' or 'b'", "'a', 'b' or 'c'".
std::string quoteAlternatives(const std::vector<std::string> &names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i)
      out += i + 1 == names.size() ? " or " : ", ";
    out += "'" + names[i] + "'";
  }
  return out;
}

/// Protobuf's messages start with a capital; ours follow the compiler
/// convention of a lowercase start.
std::string lowerFirst(std::string s) {
  if (s.size() >= 2 && std::isupper((unsigned char)s[0]) &&
      !std::isupper((unsigned char)s[1]))
    s[0] = (char)std::tolower((unsigned char)s[0]);
  return s;
}

/// Optimal string alignment distance, case-insensitive, so that a swapped
/// pair ("mciro") or a case slip ("ddp") counts as one edit.
static int editDistance(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return (char)std::tolower((unsigned char)c); };
  size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1));
  for (size_t i = 0; i <= n; ++i)
    d[i][0] = (int)i;
  for (size_t j = 0; j <= m; ++j)
    d[0][j] = (int)j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      int cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

/// The candidate closest to `name`, if it is close enough to be a typo.
std::optional<std::string> nearest(const std::string &name,
                                   const std::vector<std::string> &candidates) {
  int limit = std::max<int>(1, ((int)name.size() + 2) / 3);
  std::optional<std::string> best;
  int bestDist = limit + 1;
  for (const std::string &c : candidates) {
    int dist = editDistance(name, c);
    if (dist < bestDist) {
      bestDist = dist;
      best = c;
    }
  }
  return best;
}

std::vector<std::string> fieldNames(const pb::Descriptor *d) {
  std::vector<std::string> names;
  for (int i = 0; i < d->field_count(); ++i)
    names.push_back(d->field(i)->name());
  return names;
}

std::vector<std::string> enumNames(const pb::EnumDescriptor *e) {
  std::vector<std::string> names;
  for (int i = 0; i < e->value_count(); ++i)
    names.push_back(e->value(i)->name());
  return names;
}

/// Every dotted field path of the schema below `d` ("batch", "batch.global",
/// ...), to find where a field given at the wrong place really lives.
static void collectPaths(const pb::Descriptor *d, const std::string &prefix,
                  std::vector<std::string> &out) {
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor *f = d->field(i);
    std::string path = prefix.empty() ? f->name() : prefix + "." + f->name();
    out.push_back(path);
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !f->is_map())
      collectPaths(f->message_type(), path, out);
  }
}

const std::vector<std::string> &allPaths() {
  static const std::vector<std::string> paths = [] {
    std::vector<std::string> out;
    collectPaths(TrainConfig::descriptor(), "", out);
    return out;
  }();
  return paths;
}

/// Schema paths that end in `tail` ("lr" -> optimizer.adamw.lr, optimizer.sgd.lr).
std::vector<std::string> pathsEndingIn(const std::string &tail) {
  std::vector<std::string> out;
  for (const std::string &p : allPaths())
    if (p == tail || (p.size() > tail.size() &&
                      p.compare(p.size() - tail.size(), tail.size(), tail) == 0 &&
                      p[p.size() - tail.size() - 1] == '.'))
      out.push_back(p);
  return out;
}

} // namespace sinter::config::detail
