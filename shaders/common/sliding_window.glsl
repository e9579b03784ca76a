// Which keys of the segment cache a query row at cache position `pos` attends. The including
// shader declares the specialization constants SINKS and WINDOW first.
//   WINDOW = 0 (Infini-attention segments, SINKS = 0): causal, keys 0..pos.
//   WINDOW > 0 (a sliding context, ops/infini_attention_layer.hpp): the SINKS first keys, scored
//   with the query rotated at position min(pos, SINKS + WINDOW - 1) (the context's last, "QS"), and
//   the keys pos - WINDOW + 1 .. pos at or after SINKS, scored with the query rotated at pos. Both
//   give every distance that StreamingLLM's positions within the context give.
bool attends_sink(uint key, uint pos) { return key < SINKS && key <= pos; }
bool attends_window(uint key, uint pos) { return key <= pos && key >= SINKS && (WINDOW == 0u || key + WINDOW > pos); }
// The first key past the sinks that a row at `pos` or later attends.
uint window_begin(uint pos) { return WINDOW == 0u || pos + 1u < WINDOW ? SINKS : max(SINKS, pos + 1u - WINDOW); }
