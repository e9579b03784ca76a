// The environment variables the library reads: one table, each documented for users.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "util/environment.hpp"

using namespace infini;

TEST_CASE("every environment variable the library reads is named once and documented", "[env]") {
  std::ifstream in(INFINI_ENVIRONMENT_DOC);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const size_t section = doc.find("## Environment variables");
  REQUIRE(section != std::string::npos);
  std::set<std::string> names;
  for (const env::VariableInfo& v : env::variables()) {
    INFO(v.name);
    CHECK(names.insert(v.name).second);
    CHECK(std::string(env::name(v.variable)) == v.name);
    const std::string quoted = std::string(1, '`').append(v.name).append(1, '`');
    CHECK(doc.find(quoted, section) != std::string::npos);
  }
}

TEST_CASE("an empty environment variable reads as unset", "[env]") {
  const env::Variable v = env::Variable::WaitSpinUs;
  const std::optional<std::string> before = env::value(v);
  ::setenv(env::name(v), "", 1);
  CHECK_FALSE(env::value(v).has_value());
  ::setenv(env::name(v), "250", 1);
  CHECK(env::value(v) == std::optional<std::string>("250"));
  if (before) ::setenv(env::name(v), before->c_str(), 1);
  else ::unsetenv(env::name(v));
}
