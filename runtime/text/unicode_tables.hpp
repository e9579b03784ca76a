#pragma once
// Code point ranges of the Unicode general categories the BPE pre-tokenizers test: letters (L*),
// numbers (N*) and punctuation (P*), sorted and disjoint. Generated: unicode_tables.cpp.
#include <span>

namespace infini::text {

struct CodepointRange {
  char32_t first, last;  // inclusive
};

std::span<const CodepointRange> letter_ranges();
std::span<const CodepointRange> number_ranges();
std::span<const CodepointRange> punctuation_ranges();

}  // namespace infini::text
