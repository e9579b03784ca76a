"""Segment-wise Infini-attention in float64 NumPy, independent of the C++ code: the reference of
the CLI's and the Python module's attention checks (attention_cli.py, tests/python)."""
import numpy as np


def sigma(x):
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def rope(x, base, positions):
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    ang = positions[:, None] * theta[None, :]          # [n, d/2]
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


def reference(q, k, v, beta, n, update, memory_rope="before", head_map="group", gate_sense="memory", z_init=0.0,
              eps=1e-10, eps_mode="clamp", first="mix"):
    """Segment-wise Infini-attention, neox RoPE base 10000, first segment 'mix' (or 'local': A_dot
    alone). The memory's
    conventions (docs/design.md §1.8): q/k into the memory before or after RoPE, query head h
    reading KV head h // group or h % Hkv, the gate beta of shape [Hq], [Hq, Dv] or [1] weighting
    the memory or the local branch, z starting at z_init, the denominator max(den, eps) or den + eps."""
    T, hq, d = q.shape
    hkv, dv = k.shape[1], v.shape[2]
    group = hq // hkv
    M = np.zeros((hkv, d, dv))
    z = np.full((hkv, d), float(z_init))
    beta = np.asarray(beta, dtype=np.float64)
    gates = np.broadcast_to(beta.reshape(hq, -1) if beta.size > 1 else beta.reshape(1, 1), (hq, dv))
    g = 1.0 / (1.0 + np.exp(-gates))                    # [Hq, Dv]
    if gate_sense == "local":
        g = 1.0 - g
    den = (lambda x: x + eps) if eps_mode == "add" else (lambda x: np.maximum(x, eps))
    out = np.zeros((T, hq, dv))
    for s0 in range(0, T, n):
        qs, ks, vs = q[s0:s0 + n], k[s0:s0 + n], v[s0:s0 + n]
        m = len(qs)
        pos = np.arange(m, dtype=np.float64)
        qr, kr = rope(qs, 10000.0, pos), rope(ks, 10000.0, pos)
        qm, km = (qr, kr) if memory_rope == "after" else (qs, ks)
        mask = np.tril(np.ones((m, m), dtype=bool))
        for h in range(hq):
            kv = h // group
            scores = qr[:, h] @ kr[:, kv].T / np.sqrt(d)
            scores = np.where(mask, scores, -np.inf)
            p = np.exp(scores - scores.max(axis=1, keepdims=True))
            a_dot = (p / p.sum(axis=1, keepdims=True)) @ vs[:, kv]
            mem = h % hkv if head_map == "modulo" else kv
            sq = sigma(qm[:, h])
            a_mem = (sq @ M[mem]) / den(sq @ z[mem])[:, None]
            out[s0:s0 + m, h] = a_dot if (s0 == 0 and first == "local") else g[h] * a_mem + (1 - g[h]) * a_dot
        for kv in range(hkv):
            sk = sigma(km[:, kv])
            w = vs[:, kv]
            if update == "delta":
                w = w - (sk @ M[kv]) / den(sk @ z[kv])[:, None]
            M[kv] += sk.T @ w
            z[kv] += sk.sum(axis=0)
    return out, M, z


def nmse(x, ref):
    return float(((x - ref) ** 2).sum() / (ref ** 2).sum())
