"""The conversion itself: config, weights, variant, vocabulary and tensors into one GGUF file."""
import os

import numpy as np

from .checkpoint import Checkpoint
from .errors import fail, say
from .gguf_writer import GGML_F16, GGML_F32, GgufWriter
from .model_config import Model, read_json, rope_keys
from .tensors import permute_rows, plan_tensors
from .variants import GATE_NAMES, choose_variant, gate_values
from .vocabulary import vocabulary


def convert(args):
    folder = args.dir
    if not os.path.isdir(folder):
        fail(f"{folder}: not a folder")
    cfg = read_json(os.path.join(folder, "config.json"), True)
    if not isinstance(cfg, dict):
        fail("config.json: not a JSON object")
    m = Model(cfg)
    ckpt = Checkpoint(folder)
    plan, gates = plan_tensors(m, ckpt, GATE_NAMES)
    variant = choose_variant(args, cfg, gates, m)

    w = GgufWriter()
    pre = m.arch + "."
    w.string("general.architecture", m.arch)
    w.string("general.name", os.path.basename(os.path.normpath(folder)))
    w.u32("general.file_type", 1 if args.outtype == "f16" else 0)
    w.u32(pre + "context_length", min(m.context, 2**32 - 1))
    w.u32(pre + "embedding_length", m.embd)
    w.u32(pre + "block_count", m.layers)
    w.u32(pre + "feed_forward_length", m.ffn)
    w.u32(pre + "attention.head_count", m.heads)
    w.u32(pre + "attention.head_count_kv", m.heads_kv)
    if m.head_dim * m.heads != m.embd:
        w.u32(pre + "attention.key_length", m.head_dim)
        w.u32(pre + "attention.value_length", m.head_dim)
    w.u32(pre + "rope.dimension_count", m.head_dim)
    w.f32(pre + "rope.freq_base", m.rope_base)
    w.f32(pre + "attention.layer_norm_rms_epsilon", m.rms_eps)
    w.u32(pre + "vocab_size", m.vocab)
    rope_freqs = rope_keys(w, m)
    if variant:
        s, _ = variant
        w.u32("infini.segment_length", s["segment"])
        w.string("infini.memory_update", s["update"])
        w.string("infini.first_segment", s["first_segment"])
        w.string("infini.memory_rope", s["memory_rope"])
        w.string("infini.memory_head_map", s["head_map"])
        w.string("infini.gate_shape", s["gate_shape"])
        w.string("infini.gate_sense", s["gate_sense"])
        w.f32("infini.memory_z_init", s["z_init"])
        w.f32("infini.memory_eps", s["eps"])
        w.string("infini.memory_eps_mode", s["eps_mode"])
    vocabulary(folder, m, cfg, w)

    mat_type = GGML_F16 if args.outtype == "f16" else GGML_F32

    def encode(a, ggml_type):
        return np.ascontiguousarray(a, "<f2" if ggml_type == GGML_F16 else "<f4").tobytes()

    for gguf, shape, kind, hf in plan:
        ggml_type = mat_type if len(shape) == 2 else GGML_F32

        def make(hf=hf, kind=kind, ggml_type=ggml_type, gguf=gguf):
            a = ckpt.load(hf)
            if m.arch == "llama" and kind in ("q", "qb"):
                a = permute_rows(a, m.heads, m.head_dim)
            elif m.arch == "llama" and kind in ("k", "kb"):
                a = permute_rows(a, m.heads_kv, m.head_dim)
            if m.arch == "gemma" and kind == "norm":
                a = a.astype(np.float32) + np.float32(1.0)  # Gemma's RMSNorm multiplies by (1 + w)
            return encode(a, ggml_type)

        w.tensor(gguf, shape, ggml_type, make)
    if rope_freqs is not None:
        w.tensor("rope_freqs.weight", rope_freqs.shape, GGML_F32, lambda: encode(rope_freqs, GGML_F32))
    if variant:
        s, kind = variant
        for i in range(m.layers):
            name = gates[i][0]
            gshape = gate_values(ckpt.shapes[name], s["gate_shape"], m, name)
            w.tensor(f"blk.{i}.attn_mem_gate", gshape, GGML_F32,
                     lambda name=name, gshape=gshape: encode(ckpt.load(name).reshape(gshape), GGML_F32))
    try:
        size = w.write(args.out)
    except OSError as e:
        fail(f"{args.out}: {e.strerror}")
    say(f"wrote {args.out}: {size} bytes, {m.arch}, {len(w.tensors)} tensors ({args.outtype} matrices), "
        f"{'variant ' + (args.variant or GATE_NAMES[variant[1]]) if variant else 'plain'}")
