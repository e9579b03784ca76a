// infini passkey: the passkey retrieval test of the Infini-attention paper (its Table 3). For each
// length and depth, K inputs hide a random 5-digit key in filler text and end with a question;
// each is streamed through a fresh session (or resumed from a state saved in the prefix it shares
// with the input before it: PrefixCheckpoints) and the model's greedy answer is compared with the key.
// Prints accuracy per depth as a table, or one JSON object per (length, depth) with --json.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "command.hpp"
#include "option_checks.hpp"
#include "stopwatch.hpp"
#include "infini/error.hpp"
#include "model_options.hpp"
#include "passkey_heatmap.hpp"
#include "passkey_text.hpp"
#include "prefix_checkpoints.hpp"
#include "infini/printable.hpp"

namespace infini::cli {
namespace {

struct PasskeyArgs {
  ModelArgs model;
  std::vector<std::string> lengths{"16K"};
  std::vector<std::string> depths{"start", "middle", "end"};
  int trials = 5;
  int keys = 1;  // keys hidden in each input, each asked for in turn
  uint64_t seed = 0;
  int answer_tokens = 8;
  bool json = false;
  bool quiet = false;
  bool reuse_prefix = true;  // resume each input from a state saved in an earlier one's shared prefix
  std::string dump_inputs;  // JSON lines: each trial's depth, key, input tokens and answer
  std::string svg;          // the accuracy as a length x depth heatmap
  PasskeyFiller filler = PasskeyFiller::Grass;
};

// A named depth is a third of the input, drawn uniformly per trial; a number is an exact depth.
struct Depth {
  std::string name;
  double lo, hi;
};

Depth parse_depth(const std::string& s) {
  if (s == "start") return {s, 0.0, 1.0 / 3};
  if (s == "middle") return {s, 1.0 / 3, 2.0 / 3};
  if (s == "end") return {s, 2.0 / 3, 1.0};
  size_t used = 0;
  double d = -1;
  try {
    d = std::stod(s, &used);
  } catch (const std::exception&) {
  }
  if (used != s.size() || !(d >= 0.0 && d <= 1.0))
    throw Error("--depths: '" + printable(s, true, 32) + "' is not start, middle, end or a number from 0 to 1");
  return {s, d, d};
}

// "4096", "4K" (4096), "1M" (1048576).
int64_t parse_length(const std::string& s) {
  const std::string bad = "--length: '" + printable(s, true, 32) + "' is not a token count like 4096, 32K or 1M";
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) throw Error(bad);
  size_t used = 0;
  long long n = 0;
  try {
    n = std::stoll(s, &used);
  } catch (const std::exception&) {
    throw Error(bad);
  }
  int shift = 0;
  if (used + 1 == s.size() && (s[used] == 'K' || s[used] == 'k')) shift = 10;
  else if (used + 1 == s.size() && (s[used] == 'M' || s[used] == 'm')) shift = 20;
  else if (used != s.size()) throw Error(bad);
  if (n < 1 || n > (int64_t(1) << (40 - shift))) throw Error(bad + " (1 to 2^40)");
  return int64_t(n) << shift;
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// ASCII digits only: the key is ASCII, and std::isdigit's result depends on the locale.
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string first_digit_run(const std::string& text) {
  const auto begin = std::find_if(text.begin(), text.end(), is_digit);
  const auto end = std::find_if_not(begin, text.end(), is_digit);
  return std::string(begin, end);
}

struct Trial {
  double depth;
  std::string key, name, answer;
  std::vector<int32_t> input, answer_tokens;
  int64_t key_token;  // where the key's first digit is: its offset in a segment matters most
  int64_t resumed_at;  // tokens not streamed again: restored from an earlier input's state
  double prefill_s;    // streaming the rest
};

// Index of the token where `key` first starts (nothing but keys in a passkey input has digits):
// the first token with a digit from which the pieces spell the key; -1 when there is none.
int64_t key_token(const Model& model, const std::vector<int32_t>& ids, const std::string& key) {
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string bytes = model.piece(ids[i]);
    if (!std::any_of(bytes.begin(), bytes.end(), is_digit)) continue;
    std::string digits;
    for (size_t j = i; j < ids.size() && digits.size() < key.size() + 8; ++j) digits += model.piece(ids[j]);
    if (first_digit_run(digits) == key) return int64_t(i);
  }
  return -1;
}

// Streams the input with `keys` hidden that asks for keys[asked], and reads the greedy answer.
Trial run_trial(const Model& model, Session& session, int64_t length, const std::vector<HiddenKey>& keys, size_t asked,
                const PasskeyArgs& args, PrefixCheckpoints& checkpoints) {
  const std::string text =
      passkey_text(passkey_filler_for_tokens(length, passkey_fixed_chars(keys, asked)), keys, asked, args.filler);
  const std::vector<int32_t> ids = model.tokenize(text, model.info().add_bos);
  const int64_t segment = session.segment();
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t resumed_at = args.reuse_prefix ? checkpoints.resume(session, ids) : (session.reset(), 0);
  const bool progress = !args.quiet && ids.size() > 65536;
  std::vector<float> logits =
      session.feed(std::span<const int32_t>(ids).subspan(size_t(resumed_at)), [&](const FeedProgress& p) {
        if (args.reuse_prefix) checkpoints.after_piece(session);
        if (progress && (p.tokens_seen / segment) % 64 == 0)
          std::fprintf(stderr, "\r  %lld/%zu tokens, %.0f tokens/s ", static_cast<long long>(p.tokens_seen), ids.size(),
                       double(p.fed) / seconds_since(t0));
        return true;
      });
  const double prefill_s = seconds_since(t0);
  if (progress) std::fprintf(stderr, "\r%60s\r", "");
  std::vector<int32_t> answer;
  std::string answer_text;
  for (int i = 0; i < args.answer_tokens; ++i) {
    const int32_t next = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
    if (next == model.info().eos) break;
    answer.push_back(next);
    answer_text += model.piece(next);
    logits = session.feed(std::span<const int32_t>(&next, 1));
  }
  const HiddenKey& k = keys[asked];
  return {k.depth, k.key, k.name, answer_text, ids, answer, key_token(model, ids, k.key), resumed_at, prefill_s};
}

int run_passkey(const PasskeyArgs& args) {
  std::vector<int64_t> lengths;
  for (const std::string& s : args.lengths) lengths.push_back(parse_length(s));
  std::vector<Depth> depths;
  for (const std::string& s : args.depths) depths.push_back(parse_depth(s));
  OpenModel m = open_model(args.model);
  const ModelInfo& info = m.model->info();
  std::FILE* trials_out = args.json ? stderr : stdout;
  std::ofstream dump;
  if (!args.dump_inputs.empty()) {
    dump.open(args.dump_inputs, std::ios::binary | std::ios::trunc);
    if (!dump) throw Error(args.dump_inputs + ": cannot write");
  }
  // Opened now, so that a path that cannot be written fails before the trials, not after them.
  std::ofstream svg;
  if (!args.svg.empty()) {
    svg.open(args.svg, std::ios::binary | std::ios::trunc);
    if (!svg) throw Error("--svg " + args.svg + ": cannot write");
  }
  std::vector<std::vector<HeatmapCell>> cells(depths.size());
  if (!args.json)
    std::printf("passkey retrieval: %s, segment %lld, memory %s, %d trials per cell%s%s\n", args.model.model.c_str(),
                static_cast<long long>(info.segment), info.memory ? "on" : "off", args.trials,
                args.keys > 1 ? (", " + std::to_string(args.keys) + " keys per input").c_str() : "",
                args.filler == PasskeyFiller::Rivers ? ", filler rivers" : "");

  struct Row {
    int64_t length;
    std::vector<double> accuracy;
    double tokens_per_s;
    uint64_t peak;
  };
  std::vector<Row> rows;
  // 32 states of at most 256 MiB: the passkey model's take a few hundred KiB each.
  PrefixCheckpoints checkpoints(32, uint64_t(256) << 20);
  for (const int64_t length : lengths) {
    if (passkey_filler_for_tokens(length) == 0)
      throw Error("--length " + std::to_string(length) + " is shorter than the question and key alone (" +
                  std::to_string(passkey_fixed_chars() + 2) + " tokens)");
    Row row{length, {}, 0, 0};
    // Each cell counts the keys asked for whose depth it holds. With one key per input that is
    // its trials; with K keys, an input of cell d puts key j in cell (d + j) mod cells.
    struct Cell {
      int correct = 0, asked = 0;
      int64_t tokens = 0, reused = 0;
      double seconds = 0;
    };
    std::vector<Cell> cell(depths.size());
    m.context->reset_peak_device_memory();
    for (size_t d = 0; d < depths.size(); ++d) {
      for (int t = 0; t < args.trials; ++t) {
        // The seed is spread over all 64 bits first: XORed in as it is, seed 1 only swapped trial
        // pairs (t ^ 1) of seed 0's draw. Seed 0 keeps the draw of the tables made before.
        uint64_t state = args.seed * 0x9e3779b97f4a7c15ull ^ (uint64_t(length) * 0x100000001b3ull) ^
                         (uint64_t(d) << 48) ^ uint64_t(t);
        std::vector<HiddenKey> keys;
        std::vector<size_t> cell_of;
        for (int j = 0; j < args.keys; ++j) {
          const size_t c = (d + size_t(j)) % depths.size();
          char key[8];
          std::snprintf(key, sizeof key, "%05u", unsigned(splitmix64(state) % 100000));
          const double u = double(splitmix64(state) >> 11) * 0x1.0p-53;
          keys.push_back({depths[c].lo + u * (depths[c].hi - depths[c].lo), key,
                          args.keys == 1 ? std::string() : passkey_key_names()[size_t(j)]});
          cell_of.push_back(c);
        }
        for (size_t j = 0; j < keys.size(); ++j) {
          const Trial r = run_trial(*m.model, *m.session, length, keys, j, args, checkpoints);
          const bool ok = first_digit_run(r.answer) == r.key;
          Cell& c = cell[cell_of[j]];
          c.correct += ok;
          c.asked += 1;
          c.tokens += int64_t(r.input.size()) - r.resumed_at;
          c.reused += r.resumed_at;
          c.seconds += r.prefill_s;
          if (dump.is_open()) {
            dump << nlohmann::json{{"length", length}, {"depth", r.depth}, {"key", r.key}, {"name", r.name},
                                   {"keys", args.keys}, {"answer", r.answer}, {"answer_tokens", r.answer_tokens},
                                   {"key_token", r.key_token}, {"resumed_at", r.resumed_at}, {"tokens", r.input}}
                        .dump()
                 << "\n";
            if (!dump) throw Error(args.dump_inputs + ": write failed");
          }
          // The key's offset in its segment: keys in a segment's last tokens, whose line a boundary
          // cuts, are the ones the demo model misses.
          std::fprintf(trials_out,
                       "  %lld tokens, %sdepth %.3f (%s): key %s at token %lld (%lld of its segment), answer '%s' %s, "
                       "%.0f tokens/s%s\n",
                       static_cast<long long>(r.input.size()), r.name.empty() ? "" : (r.name + " key, ").c_str(),
                       r.depth, depths[cell_of[j]].name.c_str(), r.key.c_str(), static_cast<long long>(r.key_token),
                       static_cast<long long>(r.key_token % info.segment), printable(r.answer, false, 64).c_str(),
                       ok ? "ok" : "WRONG", double(int64_t(r.input.size()) - r.resumed_at) / r.prefill_s,
                       r.resumed_at ? (" after resuming at token " + std::to_string(r.resumed_at)).c_str() : "");
          std::fflush(trials_out);
        }
      }
    }
    row.peak = m.context->peak_device_memory_bytes();
    int64_t all_tokens = 0;
    double all_s = 0;
    for (size_t d = 0; d < depths.size(); ++d) {
      const Cell& c = cell[d];
      cells[d].push_back({c.correct, c.asked});
      const double accuracy = c.asked ? double(c.correct) / c.asked : 0.0;
      row.accuracy.push_back(accuracy);
      all_tokens += c.tokens;
      all_s += c.seconds;
      if (args.json) {
        const nlohmann::json line{{"length", length},
                                  {"depth", depths[d].name},
                                  {"trials", c.asked},
                                  {"keys", args.keys},
                                  {"accuracy", accuracy},
                                  {"tokens_per_s", c.seconds > 0 ? double(c.tokens) / c.seconds : 0.0},
                                  {"tokens_reused", c.reused},
                                  {"peak_device_bytes", row.peak},
                                  {"device", m.context->device().name},
                                  {"devices", m.context->devices().size()},
                                  {"model", args.model.model},
                                  {"segment", info.segment},
                                  {"filler", args.filler == PasskeyFiller::Rivers ? "rivers" : "grass"}};
        std::cout << line.dump() << std::endl;
      }
    }
    row.tokens_per_s = double(all_tokens) / all_s;
    rows.push_back(row);
  }
  if (svg.is_open()) {
    std::vector<std::string> length_labels, depth_labels;
    for (const int64_t l : lengths) length_labels.push_back(std::to_string(l));
    for (const Depth& d : depths) depth_labels.push_back(d.name);
    svg << passkey_heatmap_svg("passkey retrieval: " + std::filesystem::path(args.model.model).filename().string() +
                                   ", segment " + std::to_string(info.segment),
                               length_labels, depth_labels, cells);
    svg.close();
    if (!svg) throw Error("--svg " + args.svg + ": write failed");
    std::fprintf(args.json ? stderr : stdout, "heatmap written to %s\n", args.svg.c_str());
  }
  if (!args.json) {
    std::printf("\n%-10s", "length");
    for (const Depth& d : depths) std::printf(" %8s", d.name.c_str());
    std::printf(" %10s %18s\n", "tokens/s", "peak device bytes");
    for (const Row& r : rows) {
      std::printf("%-10lld", static_cast<long long>(r.length));
      for (double a : r.accuracy) std::printf(" %7.0f%%", 100.0 * a);
      std::printf(" %10.0f %18llu\n", r.tokens_per_s, static_cast<unsigned long long>(r.peak));
    }
  }
  return 0;
}

const RegisterCommand registration{
    "passkey", "Passkey retrieval: accuracy per depth for inputs of any length (the paper's Table 3)",
    [](CLI::App& app) {
      auto args = std::make_shared<PasskeyArgs>();
      add_model_options(app, args->model);
      app.add_option("--length", args->lengths, "Input lengths in tokens, comma-separated (4096, 32K, 1M)")
          ->delimiter(',')
          ->capture_default_str();
      app.add_option("--depths", args->depths,
                     "Where the key is: start, middle, end (a third of the input each, drawn per trial) or a "
                     "fraction from 0 to 1; comma-separated")
          ->delimiter(',')
          ->capture_default_str();
      app.add_option("--trials", args->trials, "Inputs per length and depth")
          ->check(integer_range(1, 1 << 20))
          ->capture_default_str();
      app.add_option("--seed", args->seed, "Seed of the keys and depths")->capture_default_str();
      app.add_option("--keys", args->keys,
                     "Keys hidden in each input, each with its own name (blue, gold, ...) and asked for in turn; an "
                     "input of depth cell d puts key j in cell d + j (cyclically), and each cell counts the keys in it")
          ->check(integer_range(1, int(passkey_key_names().size())))
          ->capture_default_str();
      app.add_option("--answer-tokens", args->answer_tokens, "Most tokens generated for an answer")
          ->check(integer_range(1, 64))
          ->capture_default_str();
      app.add_flag("--json", args->json, "One JSON object per length and depth on stdout; trials on stderr");
      app.add_flag("--quiet", args->quiet, "No progress on stderr");
      app.add_flag("!--no-reuse-prefix", args->reuse_prefix,
                   "Stream every input from its first token (by default an input resumes from a state saved "
                   "in the prefix it shares with the one before: the same answers, bit for bit)");
      add_choice_option(app, "--filler", args->filler, {{"grass", PasskeyFiller::Grass}, {"rivers", PasskeyFiller::Rivers}},
                        "The text the key hides in: grass (the task's, which the demo model was trained on) or rivers "
                        "(other sentences, never seen in training)");
      app.add_option("--svg", args->svg,
                     "Also draw the accuracy as a length x depth heatmap (the needle-in-a-haystack figure) with "
                     "each cell's keys found of its trials, as an SVG file");
      app.add_option("--dump-inputs", args->dump_inputs,
                     "Write each trial as a JSON line (length, depth, key, answer, input tokens) to this file");
      return [args] { return run_passkey(*args); };
    }};

}  // namespace
}  // namespace infini::cli
