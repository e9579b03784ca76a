"""A Llama-style transformer whose attention is Infini-attention exactly as docs/design.md §1 (and
reference/infini_attention_reference.cpp): segment-local RoPE (interleaved pairs, as llama.cpp's
NORM mode reads GGUF files), compressive memory M, z per KV head in fp32, delta or linear update,
a learned gate g = sigmoid(beta) per query head weighting the memory, first segment 'mix'.

Used to train the passkey demo model and, in tests, as the PyTorch side of the
PyTorch-vs-infini logits comparison.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

EPS = 1e-10


class Config:
    def __init__(self, vocab, embd, layers, heads, kv_heads, ffn, segment, update="delta",
                 rms_eps=1e-5, rope_base=10000.0, head_dim=None):
        """head_dim: None is embd // heads (GGUF files without llama.attention.key_length)."""
        assert (head_dim or embd % heads == 0) and heads % kv_heads == 0 and update in ("delta", "linear")
        self.vocab, self.embd, self.layers, self.heads, self.kv_heads = vocab, embd, layers, heads, kv_heads
        self.ffn, self.segment, self.update, self.rms_eps, self.rope_base = ffn, segment, update, rms_eps, rope_base
        self.head_dim = head_dim or embd // heads


def sigma(x):
    return F.elu(x) + 1.0


class RmsNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(cfg, n, dtype):
    """cos, sin [n, D/2] for positions 0..n-1; angles in float64 as the runtime computes them."""
    d = cfg.head_dim
    inv_freq = cfg.rope_base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = torch.arange(n, dtype=torch.float64)[:, None] * inv_freq[None, :]
    return angles.cos().to(dtype), angles.sin().to(dtype)


def rotate(x, cos, sin):
    """Interleaved RoPE: pairs (2i, 2i+1)."""
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)


QUERY_BLOCK = 64


def causal_attention(q, k, v):
    """softmax(q k^T / sqrt(D) + causal mask) v inside one segment, QUERY_BLOCK query rows at a time,
    each against only the keys up to its last row: the same values as one masked n x n matrix, but
    on CPU 5-10x faster at 512 tokens, where the whole matrix (50 MB a layer at batch 8) no longer
    stays in cache and half of it is masked anyway."""
    n, D = q.shape[2], q.shape[3]
    mask = torch.full((n, n), float("-inf"), dtype=q.dtype, device=q.device).triu(1)
    blocks = []
    for a in range(0, n, QUERY_BLOCK):
        e = min(n, a + QUERY_BLOCK)
        scores = (q[:, :, a:e] @ k[:, :, :e].transpose(-1, -2)) / math.sqrt(D) + mask[a:e, :e]
        blocks.append(torch.softmax(scores, dim=-1) @ v[:, :, :e])
    return torch.cat(blocks, dim=2)


def infini_attention(q, k, v, beta, cfg, write_weight=None):
    """q [B,Hq,T,D], k and v [B,Hkv,T,D] (before RoPE) -> [B,Hq,T,D]. The stream starts at T=0.

    write_weight [B,T] (training only; None is the model as infini runs it) counts token t as
    write_weight[t] tokens in the memory write: the sums over tokens in M and z weigh it so."""
    B, Hq, T, D = q.shape
    rep = Hq // k.shape[1]
    k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)  # memory is per KV head: copies agree
    N = cfg.segment
    cos, sin = rope_tables(cfg, min(N, T), q.dtype)
    g = torch.sigmoid(beta).to(q.dtype)[None, :, None, None]
    M = q.new_zeros(B, Hq, D, D)
    z = q.new_zeros(B, Hq, D)
    out = []
    for start in range(0, T, N):
        qs, ks, vs = q[:, :, start:start + N], k[:, :, start:start + N], v[:, :, start:start + N]
        n = qs.shape[2]
        sq, sk = sigma(qs), sigma(ks)
        a_mem = (sq @ M) / torch.clamp(sq @ z[..., None], min=EPS)
        qr, kr = rotate(qs, cos[:n], sin[:n]), rotate(ks, cos[:n], sin[:n])
        out.append(g * a_mem + (1 - g) * causal_attention(qr, kr, vs))
        wk = sk if write_weight is None else sk * write_weight[:, None, start:start + N, None]
        if cfg.update == "delta":
            retrieved = (sk @ M) / torch.clamp(sk @ z[..., None], min=EPS)
            M = M + wk.transpose(-1, -2) @ (vs - retrieved)
        else:
            M = M + wk.transpose(-1, -2) @ vs
        z = z + wk.sum(dim=2)
    return torch.cat(out, dim=2)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        e, d = cfg.embd, cfg.head_dim
        self.cfg = cfg
        self.attn_norm = RmsNorm(e, cfg.rms_eps)
        self.wq = nn.Linear(e, cfg.heads * d, bias=False)
        self.wk = nn.Linear(e, cfg.kv_heads * d, bias=False)
        self.wv = nn.Linear(e, cfg.kv_heads * d, bias=False)
        self.wo = nn.Linear(cfg.heads * d, e, bias=False)
        self.beta = nn.Parameter(torch.zeros(cfg.heads))
        self.ffn_norm = RmsNorm(e, cfg.rms_eps)
        self.w_gate = nn.Linear(e, cfg.ffn, bias=False)
        self.w_up = nn.Linear(e, cfg.ffn, bias=False)
        self.w_down = nn.Linear(cfg.ffn, e, bias=False)

    def forward(self, x, write_weight=None):
        cfg = self.cfg
        B, T, _ = x.shape
        h = self.attn_norm(x)
        split = lambda t, heads: t.view(B, T, heads, cfg.head_dim).transpose(1, 2)
        q, k, v = split(self.wq(h), cfg.heads), split(self.wk(h), cfg.kv_heads), split(self.wv(h), cfg.kv_heads)
        a = infini_attention(q, k, v, self.beta, cfg, write_weight).transpose(1, 2).reshape(B, T, -1)
        x = x + self.wo(a)
        h = self.ffn_norm(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


class InfiniLlama(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.embd)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = RmsNorm(cfg.embd, cfg.rms_eps)
        self.output = nn.Linear(cfg.embd, cfg.vocab, bias=False)

    def forward(self, tokens, write_weight=None):
        """tokens [B,T] -> logits [B,T,vocab]; every input is a fresh stream."""
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, write_weight)
        return self.output(self.norm(x))
