// The token a chain's step picks on the device (ops::PickToken) is the one the host sampler's draw
// (ops::ranked_draw) picks from the same ranking and uniform, bit for bit, over rankings with ties,
// -inf, subnormal and huge logits, every temperature and top-p regime, and empty slots; and the
// host's draw is itself what a float64 inverse CDF of the same definition gives wherever the
// uniform is not within rounding of a boundary, with an exp within a few ulp of the libm's.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "support/gpu_fixture.hpp"
#include "infini/error.hpp"
#include "ops/pick_token.hpp"
#include "ops/ranked_draw.hpp"
#include "ops/top_k.hpp"
#include "vk/transfer.hpp"

namespace infini::test {
namespace {

constexpr uint32_t kNone = 0xffffffffu;
constexpr uint64_t kSlotBytes = 512;  // one ranking of up to 64 pairs; a multiple of every offset alignment

struct Case {
  std::vector<ops::RankedLogit> ranked;  // best first
  uint32_t k;                            // pairs the kernel is told of (empty slots past ranked)
  ops::DrawSettings settings;
  float u;
};

// A ranking as top_k.comp gives it: sorted best first, ties to the lower id.
std::vector<ops::RankedLogit> ranking(std::vector<float> logits) {
  std::vector<ops::RankedLogit> r;
  for (size_t i = 0; i < logits.size(); ++i) r.push_back({logits[i], int32_t(i * 3 + 1)});
  std::stable_sort(r.begin(), r.end(), [](const ops::RankedLogit& a, const ops::RankedLogit& b) { return a.logit > b.logit; });
  return r;
}

Case random_case(std::mt19937& rng) {
  const uint32_t sizes[] = {1, 2, 3, 7, 40, 64};
  const uint32_t n = sizes[rng() % 6];
  const float scales[] = {1e-3f, 0.3f, 1.0f, 4.0f, 40.0f};
  const float scale = scales[rng() % 5];
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> logits(n);
  for (float& l : logits) {
    l = normal(rng);
    switch (rng() % 16) {
      case 0: l = std::round(l); break;  // ties
      case 1: l = -std::numeric_limits<float>::infinity(); break;
      case 2: l = std::bit_cast<float>(uint32_t(rng() % 0x007fffffu) | (rng() % 2 ? 0x80000000u : 0u)); break;  // subnormal
      case 3: l = 0.0f; break;
      default: break;
    }
  }
  const double temperatures[] = {0.05, 0.7, 1.0, 1.5, 1e30, 1e40};
  const double top_ps[] = {1.0, 0.95, 0.5, 1e-30};
  Case c;
  c.ranked = ranking(logits);
  c.k = std::min<uint32_t>(n + uint32_t(rng() % 3), ops::TopK::kMaxK);
  c.settings = ops::draw_settings(temperatures[rng() % 6], top_ps[rng() % 4]);
  const uint32_t u24 = rng() % 5 == 0 ? (rng() % 2 ? 0u : 0xffffffu) : uint32_t(rng() >> 8u);
  c.u = float(u24) * 0x1.0p-24f;
  return c;
}

// The ids the device picks for `cases` (at most PickToken::kMaxSteps), step i drawing case i;
// the last case fed (ids and position), `position` its start.
std::vector<ops::RankedLogit> picks_on_device(vk::Device& dev, const std::vector<Case>& cases, bool greedy,
                                              int32_t* fed_id = nullptr, uint32_t* position = nullptr) {
  const size_t steps = cases.size();
  std::vector<uint32_t> words(steps * kSlotBytes / 4, 0xdeadbeefu);
  for (size_t s = 0; s < steps; ++s)
    for (uint32_t i = 0; i < cases[s].k; ++i) {
      const bool real = i < cases[s].ranked.size();
      words[s * kSlotBytes / 4 + 2 * i] = real ? std::bit_cast<uint32_t>(cases[s].ranked[i].logit) : 0u;
      words[s * kSlotBytes / 4 + 2 * i + 1] = real ? uint32_t(cases[s].ranked[i].id) : kNone;
    }
  vk::Buffer ranked(dev, words.size() * 4, vk::MemoryUse::DeviceLocal, "rankings");
  vk::upload(ranked, 0, words.data(), words.size() * 4);
  vk::Buffer picks(dev, (steps + 2) * 8, vk::MemoryUse::DeviceLocal, "picks");
  const std::vector<uint32_t> guard((steps + 2) * 2, 0xdeadbeefu);
  vk::upload(picks, 0, guard.data(), guard.size() * 4);
  vk::Buffer ids(dev, 8, vk::MemoryUse::DeviceLocal, "ids"), open(dev, 8, vk::MemoryUse::DeviceLocal, "position");
  const uint32_t ids_init[2] = {0xdeadbeefu, 0xdeadbeefu}, open_init[2] = {position ? *position : 0u, 0xdeadbeefu};
  vk::upload(ids, 0, ids_init, 8);
  vk::upload(open, 0, open_init, 8);
  std::vector<vk::Buffer> draws;
  for (const Case& c : cases) {
    ops::PickToken::Draws d;
    d.greedy = greedy ? 1 : 0;
    d.inv_temperature = c.settings.inv_temperature;
    d.top_p = c.settings.top_p;
    d.uniforms.fill(-1.0f);
    d.uniforms[draws.size()] = c.u;  // each step reads its own uniform only
    draws.emplace_back(dev, sizeof d, vk::MemoryUse::DeviceLocal, "draws");
    vk::upload(draws.back(), 0, &d, sizeof d);
  }
  ops::PickToken pick(dev);
  vk::CommandStream stream(dev);
  stream.begin();
  for (size_t s = 0; s < steps; ++s) {
    const ops::PickToken::Feed feed{vk::BufferRange::whole(ids), vk::BufferRange::whole(open)};
    pick.record(stream, {&ranked, s * kSlotBytes, kSlotBytes}, cases[s].k, vk::BufferRange::whole(draws[s]),
                uint32_t(s), vk::BufferRange::whole(picks), s + 1 == steps && fed_id ? &feed : nullptr);
  }
  stream.end();
  stream.submit_and_wait();
  std::vector<uint32_t> out(guard.size());
  vk::download(picks, 0, out.data(), out.size() * 4);
  for (size_t i = steps * 2; i < out.size(); ++i) CHECK(out[i] == 0xdeadbeefu);  // nothing past the steps
  uint32_t fed[2], opened[2];
  vk::download(ids, 0, fed, 8);
  vk::download(open, 0, opened, 8);
  CHECK(fed[1] == 0xdeadbeefu);  // one word each
  CHECK(opened[1] == 0xdeadbeefu);
  if (fed_id) *fed_id = int32_t(fed[0]);
  if (position) *position = opened[0];
  std::vector<ops::RankedLogit> result;
  for (size_t s = 0; s < steps; ++s) result.push_back({std::bit_cast<float>(out[2 * s]), int32_t(out[2 * s + 1])});
  return result;
}

// The draw's definition in float64 with the libm's exp: the independent reference.
size_t draw_in_f64(const Case& c) {
  const std::vector<ops::RankedLogit>& r = c.ranked;
  const auto norm = [](float v) { return std::fabs(v) < 0x1.0p-126f ? 0.0 : double(v); };
  const double best = norm(r[0].logit);
  std::vector<double> w;
  for (const auto& x : r) {
    const double l = norm(x.logit);
    // exp(-inf / T) is 0 at any temperature (the draw gets there through NaN when 1/T flushed to 0).
    w.push_back(l == best ? 1.0 : std::isinf(l) ? 0.0 : std::exp((l - best) * double(c.settings.inv_temperature)));
  }
  double sum = 0;
  for (double v : w) sum += v;
  size_t keep = w.size();
  double held = 0;
  for (size_t i = 0; i < w.size(); ++i)
    if ((held += w[i]) >= double(c.settings.top_p) * sum) {
      keep = i + 1;
      break;
    }
  double total = 0;
  for (size_t i = 0; i < keep; ++i) total += w[i];
  double x = double(c.u) * total;
  for (size_t i = 0; i < keep; ++i) {
    if (x < w[i]) return i;
    x -= w[i];
  }
  return keep - 1;
}

// Whether the uniform lies within float rounding of a boundary of the f64 draw (nucleus or CDF).
bool near_boundary(const Case& c) {
  Case lo = c, hi = c;
  lo.u = std::max(0.0f, c.u - 1e-4f);
  hi.u = std::min(0x1.fffffep-1f, c.u + 1e-4f);
  Case wide_lo = c, wide_hi = c;
  wide_lo.settings.top_p *= 0.9999f;
  wide_hi.settings.top_p = std::min(1.0f, c.settings.top_p * 1.0001f);
  const size_t at = draw_in_f64(c);
  return draw_in_f64(lo) != at || draw_in_f64(hi) != at || draw_in_f64(wide_lo) != at || draw_in_f64(wide_hi) != at;
}

TEST_CASE("portable exp is within a few ulp of the libm's and never subnormal", "[sampler]") {
  for (float x = -87.0f; x <= 88.0f; x += 0.0137f) {
    const double want = std::exp(double(x));
    const float got = ops::portable_exp(x);
    INFO("x = " << x);
    CHECK(std::abs(double(got) - want) <= 4e-7 * want);
    CHECK(std::fpclassify(got) == FP_NORMAL);
  }
  CHECK(ops::portable_exp(-87.5f) == 0.0f);
  CHECK(ops::portable_exp(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(ops::portable_exp(std::nanf("")) == 0.0f);
  CHECK(std::isinf(ops::portable_exp(89.0f)));
  CHECK(ops::portable_exp(0.0f) == 1.0f);
}

TEST_CASE("a row's weights in one loop are the weights one by one, bit for bit", "[sampler]") {
  std::mt19937 rng(5);
  std::vector<float> row(4099);
  for (float& l : row) {
    const uint32_t kind = uint32_t(rng() % 8);
    l = kind == 0 ? -std::numeric_limits<float>::infinity()
        : kind == 1 ? std::bit_cast<float>(uint32_t(rng() % 0x007fffffu))  // subnormal
        : kind == 2 ? 3.0f
                    : std::normal_distribution<float>(0.0f, 20.0f)(rng);
  }
  for (const float inv_t : {1.0f, 0.01f, 25.0f, 0.0f}) {
    std::vector<float> loop(row.size());
    ops::draw_weights(row, 3.0f, inv_t, loop.data());
    for (size_t i = 0; i < row.size(); ++i) {
      INFO("logit " << row[i] << ", 1/T " << inv_t);
      REQUIRE(std::bit_cast<uint32_t>(loop[i]) == std::bit_cast<uint32_t>(ops::draw_weight(row[i], 3.0f, inv_t)));
    }
  }
}

TEST_CASE("the host's draw is the float64 draw away from rounding boundaries", "[sampler]") {
  std::mt19937 rng(20261128);
  int compared = 0;
  for (int i = 0; i < 20000; ++i) {
    const Case c = random_case(rng);
    if (near_boundary(c)) continue;
    ++compared;
    std::ostringstream desc;
    for (const auto& r : c.ranked) desc << r.logit << " ";
    INFO("case " << i << ": " << c.ranked.size() << " logits, u " << c.u << " 1/T " << c.settings.inv_temperature
                 << " top-p " << c.settings.top_p << ": " << desc.str());
    REQUIRE(ops::ranked_draw(c.ranked, c.settings, c.u) == draw_in_f64(c));
  }
  CHECK(compared > 15000);
}

TEST_CASE_METHOD(GpuTest, "pick_token draws on the device the token the host's draw picks", "[gpu][sampler]") {
  std::mt19937 rng(7);
  for (int batch = 0; batch < 24; ++batch) {
    std::vector<Case> cases;
    for (uint32_t s = 0; s < ops::PickToken::kMaxSteps; ++s) cases.push_back(random_case(rng));
    const std::vector<ops::RankedLogit> got = picks_on_device(dev(), cases, false);
    for (size_t s = 0; s < cases.size(); ++s) {
      const ops::RankedLogit& want = cases[s].ranked[ops::ranked_draw(cases[s].ranked, cases[s].settings, cases[s].u)];
      INFO("batch " << batch << " step " << s << ": " << cases[s].ranked.size() << " logits, u " << cases[s].u
                    << ", 1/T " << cases[s].settings.inv_temperature << ", top-p " << cases[s].settings.top_p);
      CHECK(got[s].id == want.id);
      CHECK(std::bit_cast<uint32_t>(got[s].logit) == std::bit_cast<uint32_t>(want.logit));
    }
  }
}

TEST_CASE_METHOD(GpuTest, "pick_token feeds the next step, greedy picks the best, NaN passes", "[gpu][sampler]") {
  std::mt19937 rng(11);
  std::vector<Case> cases;
  for (int s = 0; s < 5; ++s) cases.push_back(random_case(rng));
  cases.back().ranked = ranking({0.5f, 2.0f, 1.0f, 2.0f});  // ties: the lower id (4) is the best
  cases.back().k = 6;
  int32_t fed = -1;
  uint32_t position = 41;
  const std::vector<ops::RankedLogit> greedy = picks_on_device(dev(), cases, true, &fed, &position);
  for (size_t s = 0; s < cases.size(); ++s) CHECK(greedy[s].id == cases[s].ranked[0].id);
  CHECK(fed == 4);
  CHECK(position == 42);

  cases.back().ranked[0].logit = std::numeric_limits<float>::quiet_NaN();
  const std::vector<ops::RankedLogit> drawn = picks_on_device(dev(), cases, false, &fed, &position);
  CHECK(std::isnan(drawn.back().logit));
  CHECK(drawn.back().id == cases.back().ranked[0].id);
  CHECK(fed == cases.back().ranked[0].id);
  CHECK(position == 43);

  ops::PickToken pick(dev());
  vk::Buffer b(dev(), 1024, vk::MemoryUse::DeviceLocal, "b");
  vk::CommandStream stream(dev());
  stream.begin();
  const vk::BufferRange all = vk::BufferRange::whole(b);
  CHECK_THROWS_AS(pick.record(stream, all, 0, all, 0, all), Error);
  CHECK_THROWS_AS(pick.record(stream, all, 65, all, 0, all), Error);
  CHECK_THROWS_AS(pick.record(stream, all, 4, all, ops::PickToken::kMaxSteps, all), Error);
  CHECK_THROWS_AS(pick.record(stream, {&b, 0, 16}, 4, all, 0, all), Error);
  stream.end();
}

// Whole rows (top-k off, top-p 1): pick_row.comp against ops::row_draw, and row_draw against a
// float64 inverse CDF in id order away from rounding boundaries.
std::vector<float> random_row(std::mt19937& rng, size_t n) {
  const float scales[] = {1e-3f, 1.0f, 4.0f, 40.0f};
  std::normal_distribution<float> normal(0.0f, scales[rng() % 4]);
  std::vector<float> row(n);
  for (float& l : row) {
    l = normal(rng);
    switch (rng() % 16) {
      case 0: l = std::round(l); break;
      case 1: l = -std::numeric_limits<float>::infinity(); break;
      case 2: l = std::bit_cast<float>(uint32_t(rng() % 0x007fffffu) | (rng() % 2 ? 0x80000000u : 0u)); break;
      default: break;
    }
  }
  return row;
}

size_t row_draw_in_f64(const std::vector<float>& row, float inv_t, double u) {
  const auto norm = [](float v) { return std::fabs(v) < 0x1.0p-126f ? 0.0 : double(v); };
  double best = -std::numeric_limits<double>::infinity();
  for (float v : row) best = std::max(best, norm(v));
  std::vector<double> w;
  double total = 0;
  for (float v : row) {
    const double l = norm(v);
    total += w.emplace_back(l == best ? 1.0 : std::isinf(l) ? 0.0 : std::exp((l - best) * double(inv_t)));
  }
  double x = u * total;
  size_t last = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i] <= 0) continue;
    if (x < w[i]) return i;
    x -= w[i];
    last = i;
  }
  return last;
}

TEST_CASE("the host's row draw is the float64 draw away from rounding boundaries", "[sampler]") {
  std::mt19937 rng(99);
  std::vector<float> scratch;
  int compared = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::vector<float> row = random_row(rng, 1 + rng() % 1500);
    const float inv_t = ops::draw_settings(i % 3 == 0 ? 0.3 : 1.2, 1.0).inv_temperature;
    const float u = float(rng() >> 8) * 0x1.0p-24f;
    const size_t at = row_draw_in_f64(row, inv_t, u);
    if (row_draw_in_f64(row, inv_t, std::max(0.0, u - 1e-4)) != at || row_draw_in_f64(row, inv_t, std::min(0.9999999, u + 1e-4)) != at)
      continue;
    ++compared;
    INFO("case " << i << ": " << row.size() << " logits, u " << u);
    REQUIRE(ops::row_draw(row, inv_t, u, scratch) == at);
  }
  CHECK(compared > 2000);
}

TEST_CASE_METHOD(GpuTest, "pick_row draws from a whole row on the device what the host's row draw picks",
                 "[gpu][sampler]") {
  std::mt19937 rng(31);
  // 4100: one weight of 1 and 4,099 of 2^-30, which adding to 1 loses and adding to each other
  // keeps: how the sums are grouped (the chunks) shows in where uniforms near 1 land.
  const size_t sizes[] = {1, 7, 255, 256, 257, 1000, 4099, 32000, 4100};
  std::vector<float> scratch;
  ops::PickToken pick(dev());
  for (const size_t n : sizes) {
    // Sixteen rows of n logits, step s drawing from row s with its own uniform, the last one fed.
    const uint32_t steps = ops::PickToken::kMaxSteps;
    std::vector<float> rows;
    for (uint32_t s = 0; s < steps; ++s) {
      std::vector<float> row = random_row(rng, n);
      if (n == 4100) {
        std::fill(row.begin(), row.end(), -30.0f * std::log(2.0f));
        row[0] = 0.0f;
      }
      rows.insert(rows.end(), row.begin(), row.end());
    }
    if (n == 257) rows[5 * n + 100] = std::numeric_limits<float>::quiet_NaN();  // step 5 passes the NaN on
    ops::PickToken::Draws d;
    d.greedy = 0;
    d.inv_temperature = ops::draw_settings(n % 2 ? 0.7 : 1.3, 1.0).inv_temperature;
    for (float& u : d.uniforms) u = rng() % 7 == 0 ? 0.0f : float(rng() >> 8) * 0x1.0p-24f;
    if (n == 4100) {
      d.inv_temperature = 1.0f;
      for (uint32_t s = 0; s < steps; ++s) d.uniforms[s] = 1.0f - float(s + 1) * 0x1.0p-24f * 4;
    }
    vk::Buffer logits(dev(), (rows.size() + 3) * 4, vk::MemoryUse::DeviceLocal, "rows");
    vk::upload(logits, 12, rows.data(), rows.size() * 4);  // the rows start at element 3
    vk::Buffer draws(dev(), sizeof d, vk::MemoryUse::DeviceLocal, "draws"), picks(dev(), steps * 8, vk::MemoryUse::DeviceLocal, "picks");
    vk::upload(draws, 0, &d, sizeof d);
    vk::Buffer ids(dev(), 4, vk::MemoryUse::DeviceLocal, "ids"), open(dev(), 4, vk::MemoryUse::DeviceLocal, "position");
    const uint32_t zero = 7;
    vk::upload(open, 0, &zero, 4);
    vk::CommandStream stream(dev());
    stream.begin();
    const ops::PickToken::Feed feed{vk::BufferRange::whole(ids), vk::BufferRange::whole(open)};
    for (uint32_t s = 0; s < steps; ++s)
      pick.record_row(stream, logits, 3 + uint64_t(s) * n, uint32_t(n), vk::BufferRange::whole(draws), s,
                      vk::BufferRange::whole(picks), s + 1 == steps ? &feed : nullptr);
    stream.end();
    stream.submit_and_wait();
    std::vector<uint32_t> out(steps * 2);
    vk::download(picks, 0, out.data(), out.size() * 4);
    for (uint32_t s = 0; s < steps; ++s) {
      const std::span<const float> row(rows.data() + size_t(s) * n, n);
      INFO(n << " logits, step " << s << ", u " << d.uniforms[s]);
      if (n == 257 && s == 5) {
        CHECK(out[2 * s + 1] == 100);
        CHECK(std::isnan(std::bit_cast<float>(out[2 * s])));
        continue;
      }
      const size_t want = ops::row_draw(row, d.inv_temperature, d.uniforms[s], scratch);
      CHECK(out[2 * s + 1] == want);
      CHECK(out[2 * s] == std::bit_cast<uint32_t>(row[want]));
    }
    uint32_t fed = 0, position = 0;
    vk::download(ids, 0, &fed, 4);
    vk::download(open, 0, &position, 4);
    CHECK(fed == out[2 * (steps - 1) + 1]);
    CHECK(position == 8);
  }
  vk::Buffer b(dev(), 128, vk::MemoryUse::DeviceLocal, "b");  // 32 logits; room for the draws and picks
  vk::CommandStream stream(dev());
  stream.begin();
  const vk::BufferRange all = vk::BufferRange::whole(b);
  CHECK_THROWS_AS(pick.record_row(stream, b, 0, 0, all, 0, all), Error);
  CHECK_THROWS_AS(pick.record_row(stream, b, 0, ops::PickToken::kMaxRow + 1, all, 0, all), Error);
  CHECK_THROWS_AS(pick.record_row(stream, b, 26, 7, all, 0, all), Error);  // one past the buffer
  CHECK_NOTHROW(pick.record_row(stream, b, 25, 7, all, 0, all));          // up to its end
  stream.end();
}

}  // namespace
}  // namespace infini::test
