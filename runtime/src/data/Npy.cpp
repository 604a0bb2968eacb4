//===- Npy.cpp - Read and write numpy .npy files --------------------------===//

#include "data/Npy.h"

#include "data/PyLiteral.h"
#include "support/AtomicFile.h"
#include "support/Format.h"

#include <cstring>
#include <optional>

namespace sinter::rt {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr uint64_t kAlign = 64;            // numpy's ARRAY_ALIGN
constexpr size_t kGrowthAxisMaxDigits = 21; // numpy's GROWTH_AXIS_MAX_DIGITS

const DType kAllTypes[] = {DType::F64, DType::F32, DType::F16, DType::I64,
                           DType::I32, DType::Bool, DType::BF16};

std::string expectedDescrs() {
  std::string s;
  for (DType t : kAllTypes) {
    if (!s.empty())
      s += ", ";
    s += std::string("'") + npyDescr(t) + "' (" + dtypeName(t) + ")";
  }
  return s;
}

std::optional<DType> dtypeOfDescr(const std::string &descr) {
  for (DType t : kAllTypes)
    if (descr == npyDescr(t))
      return t;
  return std::nullopt;
}

/// Why `descr` is not accepted, in words that say what to do instead.
std::string explainDescr(const std::string &descr) {
  std::string q = quoteForMessage(descr, 40);
  if (descr.size() >= 2 && descr[0] == '>') {
    std::string little = "<" + descr.substr(1);
    if (dtypeOfDescr(little))
      return "big-endian data (descr " + q + ") is not supported; save the array as little-endian, e.g. arr.astype('" + little + "')";
  }
  if (descr == "<V2" || descr == "|V2")
    return "descr " + q + " (a 2-byte void type) is ambiguous: np.save writes it for ml_dtypes.bfloat16 but also for any other 2-byte type; write bfloat16 arrays with descr 'bfloat16' or save them as float32";
  return "unsupported element type (descr " + q + "); expected one of " + expectedDescrs();
}

uint32_t readLE(const uint8_t *p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i)
    v |= (uint32_t)p[i] << (8 * i);
  return v;
}

/// The dict text numpy writes, before padding: keys sorted, a trailing ", ",
/// and spare room for the first dimension to grow (np.save does the same).
std::string headerDict(DType t, const Shape &shape) {
  std::string s = std::string("{'descr': '") + npyDescr(t) +
                  "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  s += shape.size() == 1 ? ",), }" : "), }";
  if (!shape.empty())
    s += std::string(kGrowthAxisMaxDigits - std::to_string(shape[0]).size(), ' ');
  return s;
}

/// Magic, version, length and padded header, exactly as numpy's
/// _wrap_header does: padding brings the data offset to a multiple of 64.
std::vector<uint8_t> encodeHeader(DType t, const Shape &shape) {
  std::string dict = headerDict(t, shape);
  uint64_t hlen = dict.size() + 1; // + '\n'
  int version = 1;
  size_t lenBytes = 2;
  uint64_t pad = kAlign - ((kMagicLen + 2 + lenBytes + hlen) % kAlign);
  if (hlen + pad > 0xffff) {
    version = 2;
    lenBytes = 4;
    pad = kAlign - ((kMagicLen + 2 + lenBytes + hlen) % kAlign);
  }
  std::vector<uint8_t> out(kMagic, kMagic + kMagicLen);
  out.push_back((uint8_t)version);
  out.push_back(0);
  uint64_t total = hlen + pad;
  for (size_t i = 0; i < lenBytes; ++i)
    out.push_back((uint8_t)(total >> (8 * i)));
  out.insert(out.end(), dict.begin(), dict.end());
  out.insert(out.end(), pad, ' ');
  out.push_back('\n');
  return out;
}

} // namespace

const char *npyDescr(DType t) {
  switch (t) {
  case DType::F64: return "<f8";
  case DType::F32: return "<f4";
  case DType::F16: return "<f2";
  case DType::I64: return "<i8";
  case DType::I32: return "<i4";
  case DType::Bool: return "|b1";
  case DType::BF16: return "bfloat16";
  }
  return "?";
}

Expected<NpyArray> NpyArray::read(const std::string &path) {
  Expected<std::shared_ptr<const FileBuffer>> file = FileBuffer::open(path);
  if (!file.ok())
    return file.status();
  return parse(file.take());
}

Expected<NpyArray> NpyArray::parse(std::shared_ptr<const FileBuffer> file) {
  const std::string &name = file->name();
  const uint8_t *p = file->data();
  uint64_t size = file->size();
  auto error = [&](const std::string &what) { return Status::error(name + ": " + what); };

  if (size >= 4 && std::memcmp(p, "PK\x03\x04", 4) == 0)
    return error("is a .npz (zip) archive, not a .npy file; extract its arrays with numpy.load and save each with numpy.save");
  if (size < kMagicLen || std::memcmp(p, kMagic, kMagicLen) != 0)
    return error("not a .npy file: it starts with " +
                 quoteForMessage(std::string_view((const char *)p, size < kMagicLen ? size : kMagicLen)) +
                 ", expected the magic '\\x93NUMPY'");
  if (size < kMagicLen + 2)
    return error("truncated: the file ends inside the format version (" + formatBytes(size) + ")");
  int major = p[kMagicLen], minor = p[kMagicLen + 1];
  if (!(major >= 1 && major <= 3) || minor != 0)
    return error("unsupported .npy format version " + std::to_string(major) + "." +
                 std::to_string(minor) + "; expected 1.0, 2.0 or 3.0");
  size_t lenBytes = major == 1 ? 2 : 4;
  uint64_t preamble = kMagicLen + 2 + lenBytes;
  if (size < preamble)
    return error("truncated: the file ends inside the header length (" + formatBytes(size) +
                 ", a version " + std::to_string(major) + ".0 preamble is " +
                 formatBytes(preamble) + ")");
  uint64_t headerLen = readLE(p + kMagicLen + 2, lenBytes);
  if (headerLen > size - preamble)
    return error("truncated: the header length field says " + formatBytes(headerLen) +
                 " but only " + formatBytes(size - preamble) + " follow it");
  std::string_view header((const char *)p + preamble, (size_t)headerLen);

  Expected<PyLiteral> literal = parsePyLiteral(header);
  if (!literal.ok())
    return error("malformed header " + quoteForMessage(header, 120) + ": " + literal.message());
  const PyLiteral &dict = *literal;
  if (dict.kind != PyLiteral::Kind::Dict)
    return error("malformed header: expected a dict with the keys 'descr', 'fortran_order' and 'shape', found " +
                 std::string(dict.describe()) + " " + dict.repr());

  const PyLiteral *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (const auto &[key, value] : dict.entries) {
    if (key == "descr")
      descr = &value;
    else if (key == "fortran_order")
      fortran = &value;
    else if (key == "shape")
      shape = &value;
    else
      return error("malformed header: unexpected key " + quoteForMessage(key) +
                   "; expected exactly the keys 'descr', 'fortran_order' and 'shape'");
  }
  for (auto [value, key] : {std::pair{descr, "descr"}, std::pair{fortran, "fortran_order"},
                            std::pair{shape, "shape"}})
    if (!value)
      return error(std::string("malformed header: the key '") + key +
                   "' is missing; expected exactly the keys 'descr', 'fortran_order' and 'shape'");

  if (descr->kind == PyLiteral::Kind::List)
    return error("structured arrays (a list as 'descr') are not supported; expected one of " +
                 expectedDescrs());
  if (descr->kind != PyLiteral::Kind::String)
    return error("malformed header: 'descr' must be a string, found " +
                 std::string(descr->describe()) + " " + descr->repr());
  std::optional<DType> type = dtypeOfDescr(descr->str);
  if (!type)
    return error(explainDescr(descr->str));

  if (fortran->kind != PyLiteral::Kind::Bool)
    return error("malformed header: 'fortran_order' must be True or False, found " +
                 std::string(fortran->describe()) + " " + fortran->repr());
  if (fortran->boolean)
    return error("fortran_order=True (column-major) arrays are not supported; save a C-order array, e.g. numpy.save(path, numpy.ascontiguousarray(arr))");

  if (shape->kind != PyLiteral::Kind::Tuple)
    return error("malformed header: 'shape' must be a tuple of integers, found " +
                 std::string(shape->describe()) + " " + shape->repr());
  NpyArray arr;
  for (const PyLiteral &d : shape->items) {
    if (d.kind != PyLiteral::Kind::Int)
      return error("malformed header: 'shape' must be a tuple of integers, found " +
                   std::string(d.describe()) + " " + d.repr() + " in " + shape->repr());
    if (d.negative)
      return error("malformed header: 'shape' " + shape->repr() + " has a negative dimension");
    if (d.tooBig)
      return error("malformed header: 'shape' " + shape->repr() + " has a dimension that does not fit in 64 bits");
    arr.dims.push_back(d.magnitude);
  }

  std::string what = std::string(dtypeNumpyName(*type)) + " " + formatShape(arr.dims);
  std::optional<uint64_t> elements = sinter::rt::numElements(arr.dims);
  std::optional<uint64_t> bytes = numBytes(arr.dims, dtypeSize(*type));
  if (!bytes || (!elements && *bytes != 0))
    return error("the header declares " + what + ", more bytes than fit in 64 bits");
  uint64_t dataStart = preamble + headerLen;
  uint64_t held = size - dataStart;
  if (held < *bytes)
    return error("truncated: the header declares " + what + " = " + formatBytes(*bytes) +
                 " of data but the file holds " + formatCount(held));
  if (held > *bytes)
    return error("trailing bytes: the header declares " + what + " = " + formatBytes(*bytes) +
                 " of data but the file holds " + formatCount(held) + " (" +
                 formatCount(held - *bytes) + " more)");

  arr.file = std::move(file);
  arr.type = *type;
  arr.elements = elements ? *elements : 0;
  arr.offset = dataStart;
  arr.bytes = *bytes;
  arr.version = major;
  return arr;
}

Expected<std::vector<uint8_t>> encodeNpy(DType t, const Shape &shape, const void *data) {
  std::optional<uint64_t> bytes = numBytes(shape, dtypeSize(t));
  if (!bytes || *bytes > (uint64_t)SIZE_MAX / 2)
    return Status::error("cannot encode " + std::string(dtypeNumpyName(t)) + " " +
                         formatShape(shape) + " as .npy: the size does not fit in memory");
  std::vector<uint8_t> out = encodeHeader(t, shape);
  const uint8_t *p = static_cast<const uint8_t *>(data);
  if (*bytes)
    out.insert(out.end(), p, p + *bytes);
  return out;
}

Status writeNpy(const std::string &path, DType t, const Shape &shape, const void *data) {
  Expected<NpyWriter> w = NpyWriter::create(path, t, shape);
  if (!w.ok())
    return w.status();
  std::optional<uint64_t> bytes = numBytes(shape, dtypeSize(t));
  if (*bytes)
    SINTER_RT_RETURN_IF_ERROR(w->append(data, (size_t)*bytes));
  return w->commit();
}

Expected<NpyWriter> NpyWriter::create(const std::string &path, DType t, const Shape &shape) {
  std::optional<uint64_t> bytes = numBytes(shape, dtypeSize(t));
  if (!bytes || *bytes > (uint64_t)SIZE_MAX / 2)
    return Status::error(path + ": cannot write " + std::string(dtypeNumpyName(t)) + " " +
                         formatShape(shape) + ": the size does not fit in 64 bits");
  std::vector<uint8_t> header = encodeHeader(t, shape);
  Expected<AtomicFileWriter> w = AtomicFileWriter::create(path);
  if (!w.ok())
    return w.status();
  SINTER_RT_RETURN_IF_ERROR(w->write(header.data(), header.size()));
  return NpyWriter(path, w.take(), *bytes);
}

Status NpyWriter::append(const void *data, size_t size) {
  if (size > expected - written)
    return Status::error(path + ": internal error: more data than its shape holds");
  written += size;
  return file.write(data, size);
}

Status NpyWriter::commit() {
  if (written != expected)
    return Status::error(path + ": internal error: " + std::to_string(written) + " of " +
                         std::to_string(expected) + " bytes written");
  return file.commit();
}

} // namespace sinter::rt
