#pragma once
// The passkey retrieval input (Mohtashami & Jaggi 2023; Infini-attention's Table 3), built exactly
// as samples/passkey/passkey_task.py builds the training data of the demo model:
//
//   INTRO + " " + a filler stream of F characters with the key line at a sentence start + QUESTION
//
// The filler cycles one block of sentences and is cut at exactly F characters, so an input can be
// made exactly as long as asked. The model is expected to continue with " 71432.".
//
// Two fillers: `grass`, the task's own ("The grass is green. The sky is blue. ..."), which the demo
// model was trained on, and `rivers`, sentences of other words and lengths it never saw, to check
// that what it learned is the key line, not the filler around it.
#include <cstdint>
#include <string>

namespace infini::cli {

enum class PasskeyFiller { Grass, Rivers };

// Characters of an input that are not filler (intro, its space, the key line, the question).
int64_t passkey_fixed_chars();

// F characters of filler with the key line inserted at the sentence start nearest depth * F
// (depth in [0, 1]); then intro and question around it.
std::string passkey_text(int64_t filler_chars, double depth, const std::string& key,
                         PasskeyFiller filler = PasskeyFiller::Grass);

// Filler characters that make the input `tokens` long for a tokenizer that spends one token per
// character, adds a leading space and a BOS (the demo model's); 0 when even that is too long.
int64_t passkey_filler_for_tokens(int64_t tokens);

}  // namespace infini::cli
