# cmake -DSPV=in.spv -DHEADER=out.h -DSYMBOL=name -P embed_spirv.cmake
# Checks that SPV is a real SPIR-V module and writes it as a constexpr uint32_t array.
file(SIZE ${SPV} bytes)
math(EXPR rem "${bytes} % 4")
if(bytes LESS 20 OR NOT rem EQUAL 0)
  message(FATAL_ERROR "${SPV}: ${bytes} bytes is not a SPIR-V module")
endif()
file(READ ${SPV} hex HEX)
string(SUBSTRING "${hex}" 0 8 magic)
if(NOT magic STREQUAL "03022307")
  message(FATAL_ERROR "${SPV}: bad SPIR-V magic ${magic}")
endif()
# Little-endian bytes -> 32-bit words.
string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," words "${hex}")
string(REGEX REPLACE "(([^,]*,){8})" "\\1\n  " words "${words}")
file(WRITE ${HEADER}.tmp
"// Generated from ${SYMBOL}.spv by cmake/embed_spirv.cmake. Do not edit.
#pragma once
#include <cstdint>
namespace infini::spirv {
inline constexpr std::uint32_t ${SYMBOL}[] = {
  ${words}
};
}  // namespace infini::spirv
")
file(RENAME ${HEADER}.tmp ${HEADER})
