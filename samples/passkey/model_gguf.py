"""InfiniLlama <-> GGUF (llama.cpp tensor names, Infini-attention keys and gate tensors)."""
import numpy as np
import torch

import gguf_io
import passkey_task
from infini_llama import Config, InfiniLlama


def export(model, path, name):
    c = model.cfg
    vocab = passkey_task.VOCAB
    types = [2, 3, 3] + [1] * (len(vocab) - 3)  # unknown, control (BOS, EOS), normal
    kvs = [
        ("general.architecture", "str", "llama"),
        ("general.name", "str", name),
        ("general.file_type", "u32", 1),
        ("llama.context_length", "u32", c.segment),
        ("llama.embedding_length", "u32", c.embd),
        ("llama.block_count", "u32", c.layers),
        ("llama.feed_forward_length", "u32", c.ffn),
        ("llama.attention.head_count", "u32", c.heads),
        ("llama.attention.head_count_kv", "u32", c.kv_heads),
        ("llama.attention.layer_norm_rms_epsilon", "f32", c.rms_eps),
        ("llama.rope.freq_base", "f32", c.rope_base),
        ("llama.rope.dimension_count", "u32", c.head_dim),
    ] + ([("llama.attention.key_length", "u32", c.head_dim), ("llama.attention.value_length", "u32", c.head_dim)]
         if c.head_dim * c.heads != c.embd else []) + [
        ("infini.segment_length", "u32", c.segment),
        ("infini.memory_update", "str", c.update),
        ("infini.first_segment", "str", "mix"),
        ("tokenizer.ggml.model", "str", "llama"),
        ("tokenizer.ggml.tokens", ("array", "str"), vocab),
        ("tokenizer.ggml.scores", ("array", "f32"), [0.0] * len(vocab)),
        ("tokenizer.ggml.token_type", ("array", "i32"), types),
        ("tokenizer.ggml.unknown_token_id", "u32", passkey_task.UNK),
        ("tokenizer.ggml.bos_token_id", "u32", passkey_task.BOS),
        ("tokenizer.ggml.eos_token_id", "u32", passkey_task.EOS),
        ("tokenizer.ggml.add_bos_token", "bool", True),
        ("tokenizer.ggml.add_eos_token", "bool", False),
    ]
    f16, f32 = gguf_io.F16, gguf_io.F32
    arr = lambda t: t.detach().cpu().float().numpy()
    tensors = [("token_embd.weight", arr(model.embed.weight), f16)]
    for i, b in enumerate(model.blocks):
        p = f"blk.{i}."
        tensors += [
            (p + "attn_norm.weight", arr(b.attn_norm.weight), f32),
            (p + "attn_q.weight", arr(b.wq.weight), f16),
            (p + "attn_k.weight", arr(b.wk.weight), f16),
            (p + "attn_v.weight", arr(b.wv.weight), f16),
            (p + "attn_output.weight", arr(b.wo.weight), f16),
            (p + "attn_mem_gate", arr(b.beta), f32),
            (p + "ffn_norm.weight", arr(b.ffn_norm.weight), f32),
            (p + "ffn_gate.weight", arr(b.w_gate.weight), f16),
            (p + "ffn_up.weight", arr(b.w_up.weight), f16),
            (p + "ffn_down.weight", arr(b.w_down.weight), f16),
        ]
    tensors += [("output_norm.weight", arr(model.norm.weight), f32), ("output.weight", arr(model.output.weight), f16)]
    gguf_io.write_gguf(path, kvs, tensors)


def load(path, dtype=torch.float64):
    """The model exactly as stored (f16 weights widened), in `dtype`."""
    kv, t = gguf_io.read_gguf(path)
    cfg = Config(vocab=len(kv["tokenizer.ggml.tokens"]), embd=kv["llama.embedding_length"],
                 layers=kv["llama.block_count"], heads=kv["llama.attention.head_count"],
                 kv_heads=kv["llama.attention.head_count_kv"], ffn=kv["llama.feed_forward_length"],
                 segment=kv["infini.segment_length"], update=kv["infini.memory_update"],
                 rms_eps=kv["llama.attention.layer_norm_rms_epsilon"], rope_base=kv["llama.rope.freq_base"],
                 head_dim=kv.get("llama.attention.key_length"))
    assert kv.get("infini.first_segment", "mix") == "mix"
    model = InfiniLlama(cfg).to(dtype)
    put = lambda param, name: param.data.copy_(torch.from_numpy(np.array(t[name])).to(dtype))
    put(model.embed.weight, "token_embd.weight")
    for i, b in enumerate(model.blocks):
        p = f"blk.{i}."
        for param, name in [(b.attn_norm.weight, "attn_norm.weight"), (b.wq.weight, "attn_q.weight"),
                            (b.wk.weight, "attn_k.weight"), (b.wv.weight, "attn_v.weight"),
                            (b.wo.weight, "attn_output.weight"), (b.beta, "attn_mem_gate"),
                            (b.ffn_norm.weight, "ffn_norm.weight"), (b.w_gate.weight, "ffn_gate.weight"),
                            (b.w_up.weight, "ffn_up.weight"), (b.w_down.weight, "ffn_down.weight")]:
            put(param, p + name)
    put(model.norm.weight, "output_norm.weight")
    put(model.output.weight, "output.weight")
    return model
