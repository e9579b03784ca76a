#!/usr/bin/env python3
"""A Hugging Face checkpoint folder -> a GGUF file infini runs (docs/design.md §3), with the
Infini-attention conventions of the public implementations written as infini.* keys.

    scripts/convert-hf.py DIR OUT.gguf [--variant paper|beomi|nanotron|lucidrains|dingo|jlamprou]
                          [--outtype f32|f16] [--segment N] [per-key overrides, see --help]

DIR holds config.json (LlamaForCausalLM -> llama, GemmaForCausalLM -> gemma) and the weights:
model.safetensors, the shards named by model.safetensors.index.json, or pytorch_model.bin (read
with torch.load(weights_only=True); torch is imported only then). Safetensors are parsed here,
strictly: F32, F16 and BF16 tensors; a truncated file, offsets outside the data, overlapping,
leaving holes or disagreeing with shape x dtype, or an unknown dtype is refused. Every refusal is
one line on stderr and exit status 1.

What is written, as llama.cpp's converter writes it: the hyperparameter keys infini's loader reads
(runtime/model/llama_loader.cpp), llama.cpp's tensor names, llama's Q and K rows permuted so that
the interleaved RoPE on the file's rows is Hugging Face's rotate_half RoPE on its rows, Gemma's
RMSNorm weights stored as 1 + w and its output tied to the embedding. Norms, biases and gates stay
f32; the 2-D matrices are --outtype (default f16). The vocabulary comes from tokenizer.json
(byte-level BPE -> "gpt2"), tokenizer.model (SentencePiece, its protobuf read here -> "llama") or,
without either, numbered placeholder tokens (the file then runs on token ids only).

Infini-attention: the per-layer gate tensors model.layers.N.self_attn.<name> name the
implementation that trained them (gate: Beomi/InfiniTransformer, balance_factors: nanotron,
head_gates: lucidrains/infini-transformer-pytorch, betas: dingo-actual/infini-transformer, beta:
jlamprou/Infini-Attention); each preset is what that code computes (see PRESETS in hf_to_gguf/variants.py). Without gate
tensors the file is a plain one (no infini.* keys).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_to_gguf.arguments import parse_args  # noqa: E402
from hf_to_gguf.convert import convert  # noqa: E402
from hf_to_gguf.errors import ConvertError  # noqa: E402


def main():
    convert(parse_args())


if __name__ == "__main__":
    try:
        main()
    except ConvertError as e:
        print(f"convert-hf: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # a case no check above foresaw: still one line
        print(f"convert-hf: unexpected {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}",
              file=sys.stderr)
        sys.exit(1)
