// .npy reader and writer: files laid out exactly as numpy writes them parse, every malformed file
// is rejected with a one-line message naming the problem, and writes are atomic.
#include <signal.h>
#include <sys/resource.h>

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "infini/error.hpp"
#include "infini/npy.hpp"

using infini::ElementType;
using infini::Error;
using infini::NpyArray;
using infini::parse_npy;
using infini::read_npy;
using infini::write_npy_f32;
namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<uint8_t>;

Bytes bytes_of(std::string_view s) { return Bytes(s.begin(), s.end()); }
// For literals with embedded NUL bytes.
template <std::size_t N>
Bytes literal(const char (&s)[N]) {
  return Bytes(s, s + N - 1);
}

template <typename T>
Bytes data_of(std::initializer_list<T> values) {
  Bytes b(values.size() * sizeof(T));
  std::memcpy(b.data(), values.begin(), b.size());
  return b;
}

// A file laid out as numpy.lib.format writes it: magic, version, little-endian header length,
// the dict padded with spaces to a 64-byte boundary and ended by '\n', then the data.
Bytes npy(std::string_view dict, const Bytes& data, int major = 1) {
  const std::size_t preamble = major == 1 ? 10 : 12;
  std::string header(dict);
  header.append((64 - (preamble + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  Bytes b = bytes_of("\x93NUMPY");
  b.push_back(static_cast<uint8_t>(major));
  b.push_back(0);
  for (std::size_t i = 0; i < preamble - 8; ++i) b.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  b.insert(b.end(), header.begin(), header.end());
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

std::string dict_for(std::string_view descr, std::string_view shape) {
  return "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " + std::string(shape) + ", }";
}

// The parse must fail with an infini::Error whose one-line message starts with the file name
// and contains `phrase`.
void require_rejected(const Bytes& file, const std::string& phrase) {
  try {
    parse_npy(file, "T.npy");
    FAIL("accepted a file that should be rejected for: " << phrase);
  } catch (const Error& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.rfind("T.npy: ", 0) == 0);
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.find(phrase) != std::string::npos);
  }
}

fs::path scratch_dir(const std::string& leaf) {
  const auto dir = fs::temp_directory_path() / ("infini-test-npy-" + leaf + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

Bytes file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void put_file(const fs::path& p, const Bytes& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

}  // namespace

TEST_CASE("npy: files laid out as numpy writes them parse (f32, f16; versions 1.0, 2.0, 3.0)", "[npy]") {
  // Header text copied from numpy 1.24's np.lib.format.write_array(np.arange(6).reshape(2, 3)).
  const std::string f32 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  const std::string f16 = "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }";
  const Bytes f32_data = data_of<float>({0, 1, 2, 3, 4, 5});
  const Bytes f16_data = data_of<uint16_t>({0x0000, 0x3c00, 0x4000, 0x4200, 0x4400, 0x4500});
  for (int major : {1, 2, 3}) {
    for (bool half : {false, true}) {
      const Bytes file = npy(half ? f16 : f32, half ? f16_data : f32_data, major);
      // Same size and header length as numpy's output: 152 / 140 bytes, header 118 (v1) or 116.
      CHECK(file.size() == (half ? 140u : 152u));
      CHECK(file[8] == (major == 1 ? 118 : 116));
      const NpyArray a = parse_npy(file, "numpy.npy");
      CHECK(a.dtype == (half ? ElementType::F16 : ElementType::F32));
      CHECK(a.shape == std::vector<int64_t>{2, 3});
      CHECK(a.elements() == 6);
      CHECK(a.to_floats() == std::vector<float>{0, 1, 2, 3, 4, 5});
    }
  }
}

TEST_CASE("npy: scalars, empty arrays and every rank up to 8 parse", "[npy]") {
  const NpyArray scalar = parse_npy(npy(dict_for("<f4", "()"), data_of<float>({3.5f})), "s.npy");
  CHECK(scalar.shape.empty());
  CHECK(scalar.elements() == 1);
  CHECK(scalar.to_floats() == std::vector<float>{3.5f});

  const NpyArray empty = parse_npy(npy(dict_for("<f2", "(0, 3)"), {}), "e.npy");
  CHECK(empty.shape == std::vector<int64_t>{0, 3});
  CHECK(empty.elements() == 0);
  CHECK(empty.to_floats().empty());

  std::string shape = "(";
  std::vector<int64_t> dims;
  for (int rank = 1; rank <= 8; ++rank) {
    shape += "1, ";
    dims.push_back(1);
    const NpyArray a = parse_npy(npy(dict_for("<f4", shape + ")"), data_of<float>({7})), "r.npy");
    CHECK(a.shape == dims);
  }
}

TEST_CASE("npy: header spellings numpy and hand-written files use are tolerated", "[npy]") {
  const Bytes two = data_of<float>({1, 2});
  for (const char* dict : {
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
           "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2,)}",
           "{'shape':(2,),'fortran_order':False,'descr':'<f4'}",
           " {\n\t'descr' : '=f4' ,\r\n 'fortran_order' : False ,\n 'shape' : ( 2 , ) ,\n} \n ",
           "{'descr': 'f4', 'fortran_order': False, 'shape': (2L,)}",  // Python 2 numpy
           "{'descr': '<f', 'fortran_order': False, 'shape': (+2,)}",
       }) {
    INFO(dict);
    const NpyArray a = parse_npy(npy(dict, two), "t.npy");
    CHECK(a.dtype == ElementType::F32);
    CHECK(a.shape == std::vector<int64_t>{2});
  }
  for (const char* descr : {"<f2", "=f2", "f2", "<e", "e"})
    CHECK(parse_npy(npy(dict_for(descr, "(1,)"), data_of<uint16_t>({0x3c00})), "h.npy").dtype == ElementType::F16);
  // Data need not start on a 64-byte boundary: an unpadded header is fine.
  Bytes tight = literal("\x93NUMPY\x01\x00");
  const std::string dict = dict_for("<f4", "(2,)");
  tight.push_back(static_cast<uint8_t>(dict.size()));
  tight.push_back(0);
  tight.insert(tight.end(), dict.begin(), dict.end());
  tight.insert(tight.end(), two.begin(), two.end());
  CHECK(parse_npy(tight, "t.npy").to_floats() == std::vector<float>{1, 2});
}

TEST_CASE("npy: f16 data is widened exactly", "[npy]") {
  const NpyArray a = parse_npy(
      npy(dict_for("<f2", "(7,)"), data_of<uint16_t>({0x3c00, 0xc000, 0x7bff, 0x0001, 0x8000, 0x7c00, 0x7e00})), "h.npy");
  const std::vector<float> f = a.to_floats();
  REQUIRE(f.size() == 7);
  CHECK(f[0] == 1.0f);
  CHECK(f[1] == -2.0f);
  CHECK(f[2] == 65504.0f);
  CHECK(f[3] == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK((f[4] == 0.0f && std::signbit(f[4])));
  CHECK(f[5] == INFINITY);
  CHECK(std::isnan(f[6]));
}

TEST_CASE("npy: malformed files are rejected with a message naming the problem", "[npy]") {
  const Bytes six = data_of<float>({0, 1, 2, 3, 4, 5});
  const std::string good = dict_for("<f4", "(2, 3)");

  SECTION("preamble") {
    Bytes b = npy(good, six);
    b[5] = 'X';
    require_rejected(b, "bad magic");
    require_rejected(bytes_of("PK\x03\x04"), "bad magic");
    require_rejected(npy(good, six, 4), "unsupported .npy format version 4.0");
    b = npy(good, six);
    b[7] = 1;
    require_rejected(b, "unsupported .npy format version 1.1");
    require_rejected(literal("\x93NUMPY\x01\x00\x10"), "truncated header");
    require_rejected(literal("\x93NUMPY\x02\x00\x10\x00\x00"), "truncated header");
    require_rejected(bytes_of("\x93NUM"), "truncated header");
    require_rejected({}, "truncated header");
    b = npy(good, six);
    b[8] = 0xff, b[9] = 0xff;
    require_rejected(b, "header length 65535 runs beyond the end of the file");
    b = npy(good, six, 2);
    b[8] = b[9] = b[10] = b[11] = 0xff;
    require_rejected(b, "header length 4294967295 runs beyond the end of the file");
    // A valid but enormous header (a parsed header costs many times its size in memory).
    require_rejected(npy(good + std::string(70000, ' '), six, 2), "header length 70068 exceeds the limit of 65536 bytes");
  }

  SECTION("header syntax") {
    const std::string phrase = "header is not a well-formed Python dict literal";
    for (const std::string& dict : {
             std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)"),
             std::string("{'descr' '<f4', 'fortran_order': False, 'shape': (2, 3)}"),
             std::string("['descr', '<f4']"),
             std::string("{'descr': <f4, 'fortran_order': False, 'shape': (2, 3)}"),
             std::string("{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3)}"),
             std::string("{'descr': '<f4', 'fortran_order': false, 'shape': (2, 3)}"),
             std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3),, }"),
             std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}"),
             std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} x"),
             std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}") + '\0',
             std::string("{'descr': '<\\n4', 'fortran_order': False, 'shape': (2, 3)}"),
             std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}"),
             std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (-,)}"),
             std::string("{'descr': '<f4', 'fortran_order': False, 'shape': ") + std::string(200, '(') +
                 std::string(200, ')') + "}",
             std::string(""),
         }) {
      INFO(dict);
      require_rejected(npy(dict, six), phrase);
    }
    require_rejected(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1e3,)}", six), "in tuple at byte 52");
    require_rejected(npy("{'shape': (99999999999999999999,)}", six), "integer too large");
    require_rejected(npy("{'descr': '<f4', 'fortran_order': false, 'shape': (2, 3)}", six), "unknown name 'false'");
    require_rejected(npy("{'shape': ((((((((((((((((((((((((((((((((((((2,),),),),),),),),),),),),),),),),),),),),),),),),),),),),),),),),),),),)}", six),
                     "nesting deeper than");
  }

  SECTION("keys") {
    require_rejected(npy("{'descr': '<f4', 'fortran_order': False}", six), "header is missing key 'shape'");
    require_rejected(npy("{}", six), "header is missing key 'descr'");
    require_rejected(npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", six),
                     "header has duplicate key 'descr'");
    require_rejected(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'shape': (6,)}", six),
                     "header has duplicate key 'shape'");
    require_rejected(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extra': 1}", six),
                     "header has unexpected key 'extra'");
    require_rejected(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 5: 1}", six),
                     "header has a key that is not a string");
    require_rejected(npy("(1, 2)", six), "expected '{'");
  }

  SECTION("dtypes") {
    require_rejected(npy(dict_for("<f8", "(2, 3)"), six), "unsupported dtype '<f8'");
    require_rejected(npy(dict_for(">f4", "(2, 3)"), six), "unsupported dtype '>f4' (big-endian)");
    require_rejected(npy(dict_for("|u1", "(2, 3)"), six), "unsupported dtype '|u1'");
    require_rejected(npy(dict_for("<i4", "(2, 3)"), six), "unsupported dtype '<i4'");
    require_rejected(npy(dict_for("|O", "(2, 3)"), six), "unsupported dtype '|O' (Python objects)");
    require_rejected(npy(dict_for("<c8", "(2, 3)"), six), "unsupported dtype '<c8'");
    require_rejected(npy(dict_for("\x01\xff", "(2, 3)"), six), "unsupported dtype '\\x01\\xff'");
    require_rejected(npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3)}", six),
                     "unsupported structured dtype");
    require_rejected(npy("{'descr': 4, 'fortran_order': False, 'shape': (2, 3)}", six), "'descr' is not a string");
    require_rejected(npy(dict_for(std::string(1000, 'x'), "(2, 3)"), six), "...'");
  }

  SECTION("fortran order") {
    require_rejected(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3)}", six), "Fortran-order");
    require_rejected(npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3)}", six),
                     "'fortran_order' is not True or False");
  }

  SECTION("shapes") {
    require_rejected(npy(dict_for("<f4", "(2, -3)"), six), "negative dimension -3 in shape");
    require_rejected(npy(dict_for("<f4", "(1, 1, 1, 1, 1, 1, 1, 1, 6)"), six), "rank 9 exceeds the maximum of 8");
    require_rejected(npy(dict_for("<f4", "[2, 3]"), six), "'shape' is not a tuple of integers");
    require_rejected(npy(dict_for("<f4", "(6)"), six), "'shape' is not a tuple of integers");  // (6) is 6
    require_rejected(npy(dict_for("<f4", "('2', 3)"), six), "'shape' is not a tuple of integers");
    require_rejected(npy(dict_for("<f4", "(2, None)"), six), "'shape' is not a tuple of integers");
    require_rejected(npy(dict_for("<f4", "(1099511627776, 1099511627776)"), six),
                     "element count of shape (1099511627776, 1099511627776) overflows");
    require_rejected(npy(dict_for("<f4", "(4611686018427387904,)"), six), "byte size of shape");
    require_rejected(npy(dict_for("<f4", "(3037000500, 3037000500, 0)"), six), "overflows");
  }

  SECTION("data size") {
    require_rejected(npy(good, data_of<float>({0, 1, 2, 3, 4})),
                     "data is truncated: shape (2, 3) of f32 needs 24 data bytes but the file has 20");
    Bytes extra = six;
    extra.push_back(0);
    require_rejected(npy(good, extra), "trailing bytes after the data: shape (2, 3) of f32 needs 24");
    require_rejected(npy(dict_for("<f2", "(2, 3)"), six), "trailing bytes");
    require_rejected(npy(dict_for("<f4", "()"), {}), "data is truncated");
    // A huge but representable shape is compared with the file size, never allocated.
    require_rejected(npy(dict_for("<f4", "(1000000000, 1000000)"), six),
                     "needs 4000000000000000 data bytes but the file has 24");
  }
}

TEST_CASE("npy: a file cut at any length is rejected, from memory and from disk", "[npy]") {
  const auto dir = scratch_dir("cut");
  for (int major : {1, 2}) {
    const Bytes file = npy(dict_for("<f2", "(2, 3)"), data_of<uint16_t>({1, 2, 3, 4, 5, 6}), major);
    REQUIRE_NOTHROW(parse_npy(file, "T.npy"));
    for (std::size_t len = 0; len < file.size(); ++len) {
      INFO("length " << len);
      const Bytes cut(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(len));
      CHECK_THROWS_AS(parse_npy(cut, "T.npy"), Error);
      put_file(dir / "cut.npy", cut);
      CHECK_THROWS_AS(read_npy(dir / "cut.npy"), Error);
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("npy: read_npy reads files from disk and names them in errors", "[npy]") {
  const auto dir = scratch_dir("read");
  const Bytes file = npy(dict_for("<f4", "(3,)"), data_of<float>({1, 2, 3}), 2);
  put_file(dir / "a.npy", file);
  const NpyArray a = read_npy(dir / "a.npy");
  CHECK(a.to_floats() == std::vector<float>{1, 2, 3});
  // The header is shorter than the 12 bytes read first: still handled.
  put_file(dir / "short.npy", bytes_of(std::string("\x93NUMPY\x01\x00\x02\x00{}", 12)));
  CHECK_THROWS_WITH(read_npy(dir / "short.npy"), Catch::Contains("missing key 'descr'"));

  CHECK_THROWS_WITH(read_npy(dir / "missing.npy"), Catch::StartsWith((dir / "missing.npy").string() + ": cannot open"));
  CHECK_THROWS_WITH(read_npy(dir), Catch::Contains("not a regular file"));
  put_file(dir / "bad\nname.npy", bytes_of("nope"));
  CHECK_THROWS_WITH(read_npy(dir / "bad\nname.npy"), Catch::Contains("bad\\x0aname.npy: bad magic"));
  fs::remove_all(dir);
}

TEST_CASE("npy: write_npy_f32 round trips and writes what numpy writes", "[npy]") {
  const auto dir = scratch_dir("write");
  const std::vector<float> values = {1.5f, -2.0f, 0.0f, 3.25e-20f, INFINITY, 65504.0f};
  const std::vector<std::vector<int64_t>> shapes = {{6}, {2, 3}, {1, 2, 1, 3}, {3, 2, 1, 1, 1, 1, 1, 1}};
  for (const auto& shape : shapes) {
    write_npy_f32(dir / "x.npy", values, shape);
    const NpyArray a = read_npy(dir / "x.npy");
    CHECK(a.dtype == ElementType::F32);
    CHECK(a.shape == shape);
    CHECK(a.to_floats() == values);
  }
  write_npy_f32(dir / "s.npy", std::vector<float>{4.0f}, {});
  CHECK(read_npy(dir / "s.npy").shape.empty());
  write_npy_f32(dir / "e.npy", {}, std::vector<int64_t>{0, 5});
  CHECK(read_npy(dir / "e.npy").shape == std::vector<int64_t>{0, 5});

  // Byte for byte what numpy.save writes for np.arange(6, dtype=np.float32).reshape(2, 3).
  write_npy_f32(dir / "n.npy", std::vector<float>{0, 1, 2, 3, 4, 5}, std::vector<int64_t>{2, 3});
  CHECK(file_bytes(dir / "n.npy") == npy(dict_for("<f4", "(2, 3)"), data_of<float>({0, 1, 2, 3, 4, 5})));
  fs::remove_all(dir);
}

TEST_CASE("npy: write_npy_f32 is atomic: replaces the file, leaves no temp file, fails cleanly", "[npy]") {
  const auto dir = scratch_dir("atomic");
  const auto target = dir / "out.npy";
  put_file(target, bytes_of("old contents"));
  write_npy_f32(target, std::vector<float>{1, 2, 3}, std::vector<int64_t>{3});
  CHECK(read_npy(target).to_floats() == std::vector<float>{1, 2, 3});
  CHECK(names_in(dir) == std::vector<std::string>{"out.npy"});

  // Shape and data disagree: nothing is written and the old file stays.
  const Bytes before = file_bytes(target);
  CHECK_THROWS_WITH(write_npy_f32(target, std::vector<float>{1, 2}, std::vector<int64_t>{3}),
                    Catch::Contains("shape (3,) has 3 elements but 2 values were given"));
  CHECK_THROWS_AS(write_npy_f32(target, std::vector<float>{1, 2}, std::vector<int64_t>{-1, -2}), Error);
  CHECK(file_bytes(target) == before);

  // The directory does not exist.
  CHECK_THROWS_WITH(write_npy_f32(dir / "no" / "x.npy", std::vector<float>{1}, std::vector<int64_t>{1}),
                    Catch::Contains("cannot create a temporary file"));

  // The target is a directory: the rename fails and the temp file is removed.
  fs::create_directory(dir / "sub.npy");
  CHECK_THROWS_WITH(write_npy_f32(dir / "sub.npy", std::vector<float>{1}, std::vector<int64_t>{1}),
                    Catch::Contains("cannot rename"));
  CHECK(names_in(dir) == std::vector<std::string>{"out.npy", "sub.npy"});

  // Disk full / short write, simulated with a file size limit (writes past it fail with EFBIG).
  rlimit old{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
  auto* old_handler = signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 4096;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  const std::vector<float> big(10000, 1.0f);
  std::string message;
  try {
    write_npy_f32(target, big, std::vector<int64_t>{10000});
  } catch (const Error& e) {
    message = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, old_handler);
  CHECK_THAT(message, Catch::Contains("write failed"));
  CHECK(file_bytes(target) == before);
  CHECK(names_in(dir) == std::vector<std::string>{"out.npy", "sub.npy"});
  fs::remove_all(dir);
}
