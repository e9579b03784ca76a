// Writes the seed corpus of fuzz_state (fuzz/corpus/state): small valid session state files made
// by the real encoder, so the fuzzer starts from inputs that pass the checksum and every check.
// Run by hand when the format changes: make_state_seeds fuzz/corpus/state
#include <cstdio>
#include <filesystem>
#include <string>

#include "formats/session_state.hpp"

namespace {

using infini::ops::LayerSnapshot;
using infini::stream::SessionState;

std::vector<std::byte> ramp(size_t n, int start) {
  std::vector<std::byte> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = std::byte(uint8_t(start + int(i)));
  return b;
}

// A layer with Hkv heads of dims D, Dv and `open` tokens of 4-byte K/V in the open segment.
LayerSnapshot layer(int hkv, int d, int dv, uint32_t open, int64_t segments, int seed) {
  LayerSnapshot l;
  l.open = open;
  l.segments_written = segments;
  l.m = ramp(size_t(hkv * d * dv * 4), seed);
  l.z = ramp(size_t(hkv * d * 4), seed + 1);
  l.k = ramp(size_t(open * hkv * d * 4), seed + 2);
  l.v = ramp(size_t(open * hkv * dv * 4), seed + 3);
  l.kr = ramp(size_t(open * hkv * d * 4), seed + 4);
  return l;
}

SessionState state(int layers, uint32_t open, int64_t tokens) {
  SessionState s;
  auto& f = s.fingerprint;
  f.vocab = 32, f.embd = 8, f.layers = layers, f.heads = 2, f.heads_kv = 1, f.head_dim = 4, f.ffn = 16;
  f.segment = 4, f.update = 1, f.first_segment = 0, f.gate_sign = 1, f.memory = 1, f.input_type = 0;
  s.tokens_seen = tokens;
  for (int i = 0; i < layers; ++i) s.layers.push_back(layer(1, 4, 4, open, tokens / 4, 16 * i));
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_state_seeds DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  // Version 2 (the seeds without "v2" in their names were written by the version 1 encoder and
  // are kept: readers still accept that format).
  infini::stream::write_session_state(dir / "v2_empty_stream_0_layers.state", state(0, 0, 0));
  SessionState fed = state(2, 3, 11);
  fed.model_digest = 0x0123456789abcdefull;
  fed.last_logits.assign(size_t(fed.fingerprint.vocab), 0.5f);
  infini::stream::write_session_state(dir / "v2_open_segment_2_layers_logits.state", fed);
  return 0;
}
