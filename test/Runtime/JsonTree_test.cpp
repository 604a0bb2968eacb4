//===- JsonTree_test.cpp - Strict JSON ------------------------------------===//

#include "checkpoint/JsonTree.h"

#include <gtest/gtest.h>

using namespace sinter::rt;

TEST(JsonTree, Parses) {
  Expected<JsonNode> v = parseJsonStrict(R"({"a": [1, -2, 3.5, 18446744073709551615], "b": {"c": "d"}, "e": null})", 8);
  ASSERT_TRUE(v.ok()) << v.message();
  ASSERT_EQ(v->members.size(), 3u);
  const JsonNode &a = v->members[0].second;
  EXPECT_EQ(a.items[0].kind, JsonNode::Kind::UInt);
  EXPECT_EQ(a.items[1].kind, JsonNode::Kind::Int);
  EXPECT_EQ(a.items[2].kind, JsonNode::Kind::Float);
  EXPECT_EQ(a.items[3].unsigned_, UINT64_MAX);
  EXPECT_EQ(v->members[1].second.members[0].second.text, "d");
}

TEST(JsonTree, TooBigIntegersAreFloats) {
  Expected<JsonNode> v = parseJsonStrict("[18446744073709551616]", 8);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->items[0].kind, JsonNode::Kind::Float);
  EXPECT_EQ(v->items[0].describe(), "the number '18446744073709551616'");
}

TEST(JsonTree, Errors) {
  EXPECT_EQ(parseJsonStrict(R"({"a": 1, "a": 2})", 8).message(),
            "the key 'a' appears twice in the same object");
  EXPECT_EQ(parseJsonStrict("[[[[[[[[[1]]]]]]]]]", 8).message(), "nested more than 8 levels deep");
  std::string m = parseJsonStrict(R"({"a": 1,})", 8).message();
  EXPECT_EQ(m.rfind("syntax error at byte 8: ", 0), 0u) << m;
  EXPECT_NE(parseJsonStrict("{\"a\": \"\xff\"}", 8).message().find("UTF-8"), std::string::npos);
  EXPECT_FALSE(parseJsonStrict("{} {}", 8).ok());
}
