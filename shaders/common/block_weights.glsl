// The weight matrix B (binding 1) of a matmul kernel in one of the block formats, chosen by the
// variant's define (B_Q8_0, B_Q4_0, B_Q4_K, B_Q5_K, B_Q6_K); B_BLOCKS is defined when one is.
// Every format gives load_B, load4_B, load8_B and B_chunk/B_step (common/storage.glsl).
#ifndef INFINI_BLOCK_WEIGHTS_GLSL
#define INFINI_BLOCK_WEIGHTS_GLSL
#include "common/storage.glsl"

// DECLARE_BLOCK_WEIGHTS(binding, NAME): a matrix in the variant's block format at that binding
// (a kernel with a second weight matrix of the same format declares it with this too).
#if defined(B_Q8_0)
#define DECLARE_BLOCK_WEIGHTS(BINDING, NAME) DECLARE_Q8_0_INPUT(BINDING, NAME)
#elif defined(B_Q4_0)
#define DECLARE_BLOCK_WEIGHTS(BINDING, NAME) DECLARE_Q4_0_INPUT(BINDING, NAME)
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

#endif
