#pragma once
// CLI11 checks the subcommands share, so that every option says what is wrong in the same words:
// integer options that say "'abc' is not an integer" (CLI11's Range says "not in range" for
// text), and options taking one of a few names whose help shows those names only (CLI11's
// CheckedTransformer shows the enum's numbers) and that take them in any case.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace infini::cli {

// An integer from lo to hi (inclusive), for an option of any integer type.
template <typename T>
CLI::Validator integer_range(T lo, T hi) {
  const auto low = static_cast<long long>(lo);
  const auto high = static_cast<unsigned long long>(hi);
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        const char* begin = text.data() + (text.starts_with('+') ? 1 : 0);
        const char* end = text.data() + text.size();
        long long v = 0;
        const auto [stop, ec] = std::from_chars(begin, end, v);
        if (ec == std::errc::invalid_argument || stop != end || begin == end)
          return "'" + text + "' is not an integer";
        const bool below = ec == std::errc() ? v < low : text.starts_with('-');
        const bool above = ec == std::errc() ? v >= 0 && static_cast<unsigned long long>(v) > high : !below;
        if (below || above) return text + " is not in " + std::to_string(low) + " to " + std::to_string(high);
        return "";
      },
      "[" + std::to_string(low) + " to " + std::to_string(high) + "]");
}

// A finite number from lo to hi; open at lo when lo_open ("0 < p <= 1").
inline CLI::Validator number_range(double lo, double hi, bool lo_open = false) {
  const auto show = [](double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (s.ends_with('.')) s.pop_back();
    return s;
  };
  const std::string range = (lo_open ? "(" : "[") + show(lo) + ", " + (std::isinf(hi) ? "inf)" : show(hi) + "]");
  return CLI::Validator(
      [lo, hi, lo_open, range](std::string& text) -> std::string {
        double v = 0;
        const char* end = text.data() + text.size();
        const auto [stop, ec] = std::from_chars(text.data() + (text.starts_with('+') ? 1 : 0), end, v);
        if (ec != std::errc() || stop != end || !std::isfinite(v)) return "'" + text + "' is not a number";
        if (v < lo || (lo_open && v == lo) || v > hi) return text + " is not in " + range;
        return "";
      },
      range);
}

// "auto|on|off", the names of a choice option's values, for its help.
template <typename E>
std::string choice_names(const std::vector<std::pair<std::string, E>>& choices) {
  std::string names;
  for (const auto& [name, value] : choices) names += (names.empty() ? "" : "|") + name;
  return names;
}

// An option taking one of `choices` by name (in any case) into `target`; the help shows
// "NAME auto|on|off" and a wrong name gets "'x' is not one of auto, on, off".
template <typename E>
CLI::Option* add_choice_option(CLI::App& app, const std::string& name, E& target,
                               std::vector<std::pair<std::string, E>> choices, const std::string& help) {
  std::string listed;
  for (const auto& [n, value] : choices) listed += (listed.empty() ? "" : ", ") + n;
  const std::string long_name = name.substr(name.rfind(',') + 1);
  CLI::Option* option = app.add_option_function<std::string>(
      name,
      [&target, choices, listed, long_name](const std::string& given) {
        std::string lower = given;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
        for (const auto& [n, value] : choices)
          if (n == lower) {
            target = value;
            return;
          }
        throw CLI::ValidationError(long_name, "'" + given + "' is not one of " + listed);
      },
      help);
  option->type_name(choice_names(choices));
  return option;
}

}  // namespace infini::cli
