// The weight matrix B (binding 1) of a matmul kernel in one of the block formats, chosen by the
// variant's define (B_Q8_0, B_Q4_0, B_Q4_1, B_Q5_0, B_Q5_1, B_IQ4_NL, B_IQ4_XS, B_Q2_K, B_Q3_K,
// B_Q4_K, B_Q5_K, B_Q6_K); B_BLOCKS is defined when one is. Every format gives load_B, load4_B, load8_B and
// B_chunk/B_step (common/storage.glsl). B of 16-bit floats (B_F16, B_BF16) defines B_HALVES and
// unpack_B2, which widens a word of two; the kernel declares that buffer itself.
#ifndef INFINI_BLOCK_WEIGHTS_GLSL
#define INFINI_BLOCK_WEIGHTS_GLSL
#include "storage.glsl"

// DECLARE_BLOCK_WEIGHTS(binding, NAME): a matrix in the variant's block format at that binding
// (a kernel with a second weight matrix of the same format declares it with this too).
#if defined(B_Q8_0)
#define DECLARE_BLOCK_WEIGHTS(BINDING, NAME) DECLARE_Q8_0_INPUT(BINDING, NAME)
#elif defined(B_Q4_0)
#define DECLARE_BLOCK_WEIGHTS(BINDING, NAME) DECLARE_Q4_0_INPUT(BINDING, NAME)
#elif defined(B_Q4_1)
#define DECLARE_BLOCK_WEIGHTS(BINDING, NAME) DECLARE_Q4_1_INPUT(BINDING, NAME)
#elif defined(B_Q5_0)
#define DECLARE_BLOCK_WEIGHTS(BINDING, NAME) DECLARE_Q5_0_INPUT(BINDING, NAME)
#elif defined(B_Q5_1)
#define DECLARE_BLOCK_WEIGHTS(BINDING, NAME) DECLARE_Q5_1_INPUT(BINDING, NAME)
#elif defined(B_IQ4_NL)
#define DECLARE_BLOCK_WEIGHTS(BINDING, NAME) DECLARE_IQ4_NL_INPUT(BINDING, NAME)
#elif defined(B_IQ4_XS)
#define DECLARE_BLOCK_WEIGHTS(BINDING, NAME) DECLARE_IQ4_XS_INPUT(BINDING, NAME)
#elif defined(B_Q2_K)
#define DECLARE_BLOCK_WEIGHTS(BINDING, NAME) DECLARE_Q2_K_INPUT(BINDING, NAME)
#elif defined(B_Q3_K)
#define DECLARE_BLOCK_WEIGHTS(BINDING, NAME) DECLARE_Q3_K_INPUT(BINDING, NAME)
#elif defined(B_Q4_K)
#define DECLARE_BLOCK_WEIGHTS(BINDING, NAME) DECLARE_Q4_K_INPUT(BINDING, NAME)
#elif defined(B_Q5_K)
#define DECLARE_BLOCK_WEIGHTS(BINDING, NAME) DECLARE_Q5_K_INPUT(BINDING, NAME)
#elif defined(B_Q6_K)
#define DECLARE_BLOCK_WEIGHTS(BINDING, NAME) DECLARE_Q6_K_INPUT(BINDING, NAME)
#endif
#ifdef DECLARE_BLOCK_WEIGHTS
#define B_BLOCKS
DECLARE_BLOCK_WEIGHTS(1, B)
#endif
#if defined(B_F16) || defined(B_BF16)
#define B_HALVES
#ifdef B_BF16
vec2 unpack_B2(uint w) { return unpack_bf16x2(w); }
#else
vec2 unpack_B2(uint w) { return unpackHalf2x16(w); }
#endif
#endif

#endif
