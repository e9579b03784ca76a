#pragma once
// Code points for the byte-level BPE tokenizer: UTF-8 decoding as llama.cpp decodes text before
// pre-tokenizing it, the character classes its pre-tokenizer expressions use, and GPT-2's
// byte-to-character mapping.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace infini::text {

// The code points of `utf8`, read as llama.cpp reads them: a lead byte followed by the right
// number of continuation bytes is one code point (overlong forms and surrogates included); any
// other byte becomes U+FFFD on its own.
std::vector<char32_t> decode_utf8_lenient(std::string_view utf8);

void append_utf8(char32_t cp, std::string& out);  // cp < 0x110000

bool is_letter(char32_t cp);       // general category L*
bool is_number(char32_t cp);       // N*
bool is_punctuation(char32_t cp);  // P*
bool is_whitespace(char32_t cp);   // the White_Space property

// GPT-2's byte-level alphabet: every byte maps to a printable character (bytes 0x21-0x7E,
// 0xA1-0xAC and 0xAE-0xFF to themselves, the others to U+0100 upwards in byte order), so any byte
// string is a string of vocabulary characters; byte_of_char inverts it (-1 for other characters).
char32_t char_of_byte(uint8_t byte);
int byte_of_char(char32_t cp);

}  // namespace infini::text
