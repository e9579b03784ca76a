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


def reference(q, k, v, beta, n, update):
    """Segment-wise Infini-attention, neox RoPE base 10000, first segment 'mix'."""
    T, hq, d = q.shape
    hkv, dv = k.shape[1], v.shape[2]
    group = hq // hkv
    M = np.zeros((hkv, d, dv))
    z = np.zeros((hkv, d))
    g = 1.0 / (1.0 + np.exp(-beta))
    out = np.zeros((T, hq, dv))
    for s0 in range(0, T, n):
        qs, ks, vs = q[s0:s0 + n], k[s0:s0 + n], v[s0:s0 + n]
        m = len(qs)
        pos = np.arange(m, dtype=np.float64)
        qr, kr = rope(qs, 10000.0, pos), rope(ks, 10000.0, pos)
        mask = np.tril(np.ones((m, m), dtype=bool))
        for h in range(hq):
            kv = h // group
            scores = qr[:, h] @ kr[:, kv].T / np.sqrt(d)
            scores = np.where(mask, scores, -np.inf)
            p = np.exp(scores - scores.max(axis=1, keepdims=True))
            a_dot = (p / p.sum(axis=1, keepdims=True)) @ vs[:, kv]
            sq = sigma(qs[:, h])
            a_mem = (sq @ M[kv]) / np.maximum(sq @ z[kv], 1e-10)[:, None]
            out[s0:s0 + m, h] = g[h] * a_mem + (1 - g[h]) * a_dot
        for kv in range(hkv):
            sk = sigma(ks[:, kv])
            w = vs[:, kv]
            if update == "delta":
                w = w - (sk @ M[kv]) / np.maximum(sk @ z[kv], 1e-10)[:, None]
            M[kv] += sk.T @ w
            z[kv] += sk.sum(axis=0)
    return out, M, z


def nmse(x, ref):
    return float(((x - ref) ** 2).sum() / (ref ** 2).sum())
