// The weight matrix B (binding 1) of a matmul kernel in one of the block formats, chosen by the
// variant's define (B_Q8_0, B_Q4_0, B_Q4_K, B_Q5_K, B_Q6_K); B_BLOCKS is defined when one is.
// Every format gives load_B, load4_B, load8_B and B_chunk/B_step (common/storage.glsl).
#ifndef INFINI_BLOCK_WEIGHTS_GLSL
#define INFINI_BLOCK_WEIGHTS_GLSL
#include "common/storage.glsl"

#if defined(B_Q8_0)
DECLARE_Q8_0_INPUT(1, B)
#define B_BLOCKS
#elif defined(B_Q4_0)
DECLARE_Q4_0_INPUT(1, B)
#define B_BLOCKS
#elif defined(B_Q4_K)
DECLARE_Q4_K_INPUT(1, B)
#define B_BLOCKS
#elif defined(B_Q5_K)
DECLARE_Q5_K_INPUT(1, B)
#define B_BLOCKS
#elif defined(B_Q6_K)
DECLARE_Q6_K_INPUT(1, B)
#define B_BLOCKS
#endif

#endif
