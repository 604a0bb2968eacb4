//===- PyLiteral_test.cpp - Python literals of .npy headers ---------------===//

#include "data/PyLiteral.h"

#include <gtest/gtest.h>

using namespace sinter::rt;

TEST(PyLiteral, NumpyHeader) {
  Expected<PyLiteral> v =
      parsePyLiteral("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }   \n");
  ASSERT_TRUE(v.ok()) << v.message();
  ASSERT_EQ(v->kind, PyLiteral::Kind::Dict);
  ASSERT_EQ(v->entries.size(), 3u);
  EXPECT_EQ(v->entries[0].second.str, "<f4");
  EXPECT_FALSE(v->entries[1].second.boolean);
  EXPECT_EQ(v->entries[2].second.repr(), "(3, 4)");
}

TEST(PyLiteral, Forms) {
  EXPECT_EQ(parsePyLiteral("(3,)")->repr(), "(3,)");
  EXPECT_EQ(parsePyLiteral("(3)")->kind, PyLiteral::Kind::Int) << "parenthesised, not a tuple";
  EXPECT_EQ(parsePyLiteral("()")->kind, PyLiteral::Kind::Tuple);
  EXPECT_EQ(parsePyLiteral("(3L, 4L)")->repr(), "(3, 4)") << "Python 2 long suffix";
  EXPECT_EQ(parsePyLiteral("\"a\\\"b\"")->str, "a\"b");
  EXPECT_EQ(parsePyLiteral("[('a', '<f4')]")->kind, PyLiteral::Kind::List);
  EXPECT_TRUE(parsePyLiteral("True")->boolean);
  EXPECT_EQ(parsePyLiteral("-5")->repr(), "-5");
  EXPECT_TRUE(parsePyLiteral("99999999999999999999")->tooBig);
  EXPECT_EQ(parsePyLiteral("18446744073709551615")->magnitude, UINT64_MAX);
}

TEST(PyLiteral, Errors) {
  EXPECT_EQ(parsePyLiteral("{'a' 1}").message(), "expected ':' after the key 'a' at byte 5, found '1}'");
  EXPECT_EQ(parsePyLiteral("{'a': 1, 'a': 2}").message(),
            "the key 'a' appears twice at byte 15, found '}'");
  EXPECT_EQ(parsePyLiteral("(1, 2").message(), "expected ',' or ')' at byte 5, found the end of the header");
  EXPECT_EQ(parsePyLiteral("'abc").message(), "unterminated string at byte 4, found the end of the header");
  EXPECT_EQ(parsePyLiteral("1.5").message(), "expected an integer at byte 1, found '.5'");
  EXPECT_EQ(parsePyLiteral("{} x").message(),
            "expected the end of the header after the literal at byte 3, found 'x'");
  EXPECT_EQ(parsePyLiteral("nan").message(),
            "expected a string, an integer, True, False, None, a tuple, a list or a dict at byte 0, found 'nan'");
  EXPECT_EQ(parsePyLiteral("{'a': 1, 'b': 2, 'c': 3 'd'}").message(),
            "expected ',' or '}' at byte 24, found \"'d'}\"");
  std::string deep(100, '(');
  EXPECT_EQ(parsePyLiteral(deep).message(), "literals nested more than 16 deep at byte 17, found '(((((((((((('...");
}
