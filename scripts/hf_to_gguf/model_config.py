"""config.json -> the model's hyperparameters (Model), checked, and its RoPE scaling as GGUF keys:
what the loader (runtime/model/llama_loader.cpp) reads, refused early where infini cannot run it."""
import json
import math
import os

import numpy as np

from .errors import fail, say


def read_json(path, required):
    if not os.path.isfile(path):
        if required:
            fail(f"{path}: missing")
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        fail(f"{os.path.basename(path)}: not readable JSON ({str(e).splitlines()[0][:80]})")


def config_int(cfg, key, default=None, lo=1, hi=1 << 40):
    v = cfg.get(key)
    if v is None:  # absent or null
        v = default
    if v is None:
        fail(f"config.json: '{key}' is missing")
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        fail(f"config.json: '{key}' is {json.dumps(v)[:40]} (must be an integer {lo} to {hi})")
    return v


def config_float(cfg, key, default, lo, hi):
    v = cfg.get(key, default)
    if v is None:
        v = default
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not lo <= v <= hi:
        fail(f"config.json: '{key}' is {json.dumps(v)[:40]} (must be a number {lo} to {hi})")
    return float(v)


class Model:
    def __init__(self, cfg):
        mt = cfg.get("model_type")
        archs = cfg.get("architectures") or []
        if mt == "llama" or (mt is None and "LlamaForCausalLM" in archs):
            self.arch = "llama"
        elif mt == "gemma" or (mt is None and "GemmaForCausalLM" in archs):
            self.arch = "gemma"
        else:
            fail(f"config.json: model_type {json.dumps(mt)} / architectures {json.dumps(archs)[:80]} is not "
                 "llama (LlamaForCausalLM) or gemma (GemmaForCausalLM)")
        self.embd = config_int(cfg, "hidden_size")
        self.ffn = config_int(cfg, "intermediate_size")
        self.layers = config_int(cfg, "num_hidden_layers")
        self.heads = config_int(cfg, "num_attention_heads")
        self.heads_kv = config_int(cfg, "num_key_value_heads", self.heads)
        self.vocab = config_int(cfg, "vocab_size", hi=2**31 - 1)
        if self.heads % self.heads_kv:
            fail(f"config.json: num_attention_heads {self.heads} is not a multiple of num_key_value_heads {self.heads_kv}")
        default_dim = self.embd // self.heads if self.embd % self.heads == 0 else None
        self.head_dim = config_int(cfg, "head_dim", default_dim, hi=4096)
        if self.head_dim % 2:
            fail(f"config.json: head_dim {self.head_dim} is odd (RoPE rotates pairs)")
        self.rms_eps = config_float(cfg, "rms_norm_eps", 1e-6, 1e-30, 1.0)
        self.rope_base = config_float(cfg, "rope_theta", 10000.0, 1.0 + 1e-9, 1e30)
        self.context = config_int(cfg, "max_position_embeddings", 8192 if self.arch == "gemma" else 2048)
        self.tied = bool(cfg.get("tie_word_embeddings", self.arch == "gemma"))
        self.rope_scaling = cfg.get("rope_scaling")
        if self.arch == "llama":
            act = cfg.get("hidden_act", "silu")
            if act != "silu":
                fail(f"config.json: hidden_act '{act}' (llama in infini is SwiGLU: silu)")
            for k in ("attention_bias", "mlp_bias"):
                if cfg.get(k):
                    fail(f"config.json: {k} is set: infini's llama has no output or MLP biases")
        else:
            act = cfg.get("hidden_activation") or cfg.get("hidden_act") or "gelu_pytorch_tanh"
            if act not in ("gelu_pytorch_tanh", "gelu"):
                fail(f"config.json: gemma activation '{act}' (infini's gemma is GeGLU with tanh GELU)")
            if act == "gelu":
                say("note: config.json says gelu (erf); infini computes GELU's tanh approximation, as Hugging Face's"
                    " Gemma does for Gemma 1")
        self.q_width = self.heads * self.head_dim
        self.kv_width = self.heads_kv * self.head_dim


def rope_keys(w, m):
    """RoPE scaling from config.json's rope_scaling: keys, or the rope_freqs tensor (llama3)."""
    rs = m.rope_scaling
    if not rs:
        return None
    if not isinstance(rs, dict):
        fail("config.json: rope_scaling is not an object")
    kind = rs.get("rope_type", rs.get("type"))
    pre = m.arch + "."
    if kind in (None, "default"):
        return None
    factor = config_float(rs, "factor", None, 1e-6, 1e6) if "factor" in rs else fail("config.json: rope_scaling has no factor")
    if kind == "linear":
        w.string(pre + "rope.scaling.type", "linear")
        w.f32(pre + "rope.scaling.factor", factor)
        return None
    if kind == "yarn":
        w.string(pre + "rope.scaling.type", "yarn")
        w.f32(pre + "rope.scaling.factor", factor)
        w.u32(pre + "rope.scaling.original_context_length",
              config_int(rs, "original_max_position_embeddings", m.context))
        for src, dst in (("beta_fast", "yarn_beta_fast"), ("beta_slow", "yarn_beta_slow"), ("attention_factor", "attn_factor")):
            if rs.get(src) is not None:
                w.f32(pre + "rope.scaling." + dst, config_float(rs, src, None, 0.0, 1e6))
        return None
    if kind == "llama3":  # per-frequency divisors, as llama.cpp's rope_freqs
        low = config_float(rs, "low_freq_factor", 1.0, 1e-6, 1e6)
        high = config_float(rs, "high_freq_factor", 4.0, 1e-6, 1e6)
        old = config_float(rs, "original_max_position_embeddings", 8192, 1, 1e12)
        freqs = m.rope_base ** (-np.arange(0, m.head_dim, 2, dtype=np.float64) / m.head_dim)
        out = []
        for f in freqs:
            wavelen = 2 * math.pi / f
            if wavelen < old / high:
                out.append(1.0)
            elif wavelen > old / low:
                out.append(factor)
            else:
                smooth = (old / wavelen - low) / (high - low)
                out.append(1.0 / ((1 - smooth) / factor + smooth))
        return np.asarray(out, np.float32)
    fail(f"config.json: rope_scaling type '{kind}' is not one infini runs (linear, yarn, llama3)")
