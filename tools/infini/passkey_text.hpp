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
//
// Several keys (`infini passkey --keys K`) each have a name ("The blue pass key is 71432. ...") and
// the question asks for one of them ("What is the blue pass key? The blue pass key is"). One key has
// no name: the task's own input, exactly.
#include <cstdint>
#include <string>
#include <vector>

namespace infini::cli {

enum class PasskeyFiller { Grass, Rivers };

struct HiddenKey {
  double depth = 0;   // in [0, 1]: where in the filler its line goes (the sentence start nearest)
  std::string key;    // five digits
  std::string name;   // "" for the task's single, unnamed key
};

// The names of the keys of an input with several (as many as --keys allows).
const std::vector<std::string>& passkey_key_names();

// Characters of an input that are not filler (intro, its space, the key lines, the question for
// key `asked`).
int64_t passkey_fixed_chars(const std::vector<HiddenKey>& keys, size_t asked);
int64_t passkey_fixed_chars();  // of the single unnamed key

// F characters of filler with each key's line inserted at the sentence start nearest depth * F
// (keys at the same place in the order given); then intro and the question for key `asked`.
std::string passkey_text(int64_t filler_chars, const std::vector<HiddenKey>& keys, size_t asked,
                         PasskeyFiller filler = PasskeyFiller::Grass);
std::string passkey_text(int64_t filler_chars, double depth, const std::string& key,
                         PasskeyFiller filler = PasskeyFiller::Grass);

// Filler characters that make the input `tokens` long for a tokenizer that spends one token per
// character, adds a leading space and a BOS (the demo model's), around `fixed_chars` characters
// of the rest; 0 when even that is too long.
int64_t passkey_filler_for_tokens(int64_t tokens, int64_t fixed_chars);
int64_t passkey_filler_for_tokens(int64_t tokens);  // around the single unnamed key's

}  // namespace infini::cli
