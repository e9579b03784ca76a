#!/usr/bin/env python3
"""scripts/convert-hf.py end to end. Random small Hugging Face checkpoint folders are written by
hand (config.json, safetensors single and sharded with an index, one pytorch_model.bin through
torch.save), one in the naming of each public Infini-attention implementation plus a Gemma one;
each is converted with its variant at a segment of 8 and `infini eval --all-logits` runs 30 tokens
(4 segments: the memory is written three times and read by three segments), at once and (f32) one
token per piece. The logits are
compared with a float64 NumPy forward written from that implementation's math on the Hugging
Face weights (un-permuted Q/K, rotate_half RoPE at positions restarting per segment, sigma =
ELU + 1, the implementation's head map, gate shape and sense, update rule, z init and eps), not
from the converted file: normalised MSE below 1e-6 for f32 files and 1e-3 for f16. For every
convention where a variant departs from the paper's, the same forward with that one convention
set back to the paper's must be far from infini's logits, so a runtime that ignored the key
fails. Hostile folders (truncated or lying safetensors, unknown dtype, no config.json, an unknown
tensor, a shape against the config, gates on some layers, a gate of the wrong shape) must each
give exit status 1 and one line naming the problem. About 15 s on 2 cores with lavapipe.

Usage: convert_hf.py PATH_TO_INFINI
"""
import importlib.util
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_checks import check, finish, is_one_line_error  # noqa: E402

INFINI = sys.argv[1]
CONVERTER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                         "scripts", "convert-hf.py")
ENV = dict(os.environ, LP_NUM_THREADS="2")
TOKENS = [(i * 37 + 11) % 97 for i in range(30)]
HAVE_TORCH = importlib.util.find_spec("torch") is not None  # for the pytorch_model.bin case only
SEGMENT = 8
TOL = {"f32": 1e-6, "f16": 1e-3}
FAR = 1e-4  # a forward with one convention set back to the paper's is this far: 100 x the f32 bound


def ok(cond, what):
    if check(cond, what):
        print("ok:", what, flush=True)
    return cond


def nmse(got, ref):
    return float(((got - ref) ** 2).sum() / (ref ** 2).sum())


# ---------------------------------------------------------------------------------------------
# Checkpoint folders, written by hand


def bf16_bits(a):
    """float -> bfloat16 bits, rounding to nearest even (as torch does)."""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def stored(a, dtype):
    """The bytes of `a` in a safetensors dtype, and the float64 values they hold."""
    if dtype == "F32":
        v = np.asarray(a, "<f4")
        return v.tobytes(), v.astype(np.float64)
    if dtype == "F16":
        v = np.asarray(a, "<f2")
        return v.tobytes(), v.astype(np.float64)
    bits = bf16_bits(a)
    return bits.astype("<u2").tobytes(), (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def write_safetensors(path, tensors, dtype, mutate=None):
    """tensors: name -> array. Returns name -> the float64 values stored. mutate(header) may edit
    the header before it is written (hostile files)."""
    header, blobs, values, offset = {}, [], {}, 0
    for name, a in tensors.items():
        data, values[name] = stored(a, dtype)
        header[name] = {"dtype": dtype, "shape": list(np.shape(a)), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt"}
    if mutate:
        mutate(header)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    return values


def save(folder, cfg, weights, form="single", dtype="F32", extra=None):
    """A checkpoint folder; returns the weights as stored (float64)."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f)
    for name, content in (extra or {}).items():
        with open(os.path.join(folder, name), "wb" if isinstance(content, bytes) else "w") as f:
            f.write(content)
    if form == "single":
        return write_safetensors(os.path.join(folder, "model.safetensors"), weights, dtype)
    if form == "sharded":
        names = list(weights)
        halves = [names[: len(names) // 2], names[len(names) // 2:]]
        values, weight_map = {}, {}
        for i, part in enumerate(halves):
            shard = f"model-{i + 1:05d}-of-00002.safetensors"
            values.update(write_safetensors(os.path.join(folder, shard), {n: weights[n] for n in part}, dtype))
            weight_map.update({n: shard for n in part})
        with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f)
        return values
    import torch  # pytorch_model.bin, as transformers' save_pretrained(safe_serialization=False)
    state = {n: torch.tensor(np.asarray(a, np.float32)) for n, a in weights.items()}
    torch.save(state, os.path.join(folder, "pytorch_model.bin"))
    return {n: t.double().numpy() for n, t in state.items()}


def random_model(rng, arch="llama", embd=64, heads=4, heads_kv=2, head_dim=16, layers=2, ffn=128, vocab=97,
                 gate=None, biases=False, tied=False, rope_theta=10000.0):
    """config.json and HF-named weights of a random model whose activations stay O(1); `gate` is
    (tensor name, shape) of the Infini-attention gate logits, drawn around 0."""
    cfg = {"architectures": ["LlamaForCausalLM" if arch == "llama" else "GemmaForCausalLM"], "model_type": arch,
           "hidden_size": embd, "intermediate_size": ffn, "num_hidden_layers": layers,
           "num_attention_heads": heads, "num_key_value_heads": heads_kv, "head_dim": head_dim,
           "vocab_size": vocab, "rms_norm_eps": 1e-6, "rope_theta": rope_theta, "max_position_embeddings": 4096,
           "tie_word_embeddings": tied, "bos_token_id": 1, "eos_token_id": 2}
    if arch == "gemma":
        cfg["hidden_activation"] = "gelu_pytorch_tanh"
    else:
        cfg["hidden_act"] = "silu"
    n = lambda *shape, s=1.0: rng.normal(0.0, s, shape)  # noqa: E731
    norm = (lambda: n(embd, s=0.1)) if arch == "gemma" else (lambda: 1.0 + n(embd, s=0.1))
    w = {"model.embed_tokens.weight": n(vocab, embd)}
    for i in range(layers):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = norm()
        w[p + "self_attn.q_proj.weight"] = n(heads * head_dim, embd, s=2 * embd ** -0.5)  # sharp enough that
        w[p + "self_attn.k_proj.weight"] = n(heads_kv * head_dim, embd, s=2 * embd ** -0.5)  # RoPE moves the memory
        w[p + "self_attn.v_proj.weight"] = n(heads_kv * head_dim, embd, s=embd ** -0.5)
        if biases:
            w[p + "self_attn.q_proj.bias"] = n(heads * head_dim, s=0.3)
            w[p + "self_attn.k_proj.bias"] = n(heads_kv * head_dim, s=0.3)
            w[p + "self_attn.v_proj.bias"] = n(heads_kv * head_dim, s=0.3)
        w[p + "self_attn.o_proj.weight"] = n(embd, heads * head_dim, s=(heads * head_dim) ** -0.5)
        if gate:
            w[p + "self_attn." + gate[0]] = n(*gate[1], s=0.8)
        w[p + "post_attention_layernorm.weight"] = norm()
        w[p + "mlp.gate_proj.weight"] = n(ffn, embd, s=embd ** -0.5)
        w[p + "mlp.up_proj.weight"] = n(ffn, embd, s=embd ** -0.5)
        w[p + "mlp.down_proj.weight"] = n(embd, ffn, s=ffn ** -0.5)
    w["model.norm.weight"] = norm()
    if not tied:
        w["lm_head.weight"] = n(vocab, embd, s=embd ** -0.5)
    return cfg, w


# ---------------------------------------------------------------------------------------------
# The float64 forward, from each implementation's math

PAPER = {"update": "delta", "first_segment": "mix", "memory_rope": "before", "head_map": "group",
         "gate_sense": "memory", "z_init": 0.0, "eps": 1e-10, "eps_mode": "clamp"}
# What each implementation computes (file:line in scripts/hf_to_gguf/variants.py, above PRESETS).
CONVENTIONS = {
    "paper": {},
    "beomi": {"head_map": "modulo", "update": "linear"},            # memory.repeat(1, groups, 1, 1); no delta
    "nanotron": {},                                                  # delta, repeat "(n_kv_heads n)"
    "lucidrains": {"gate_sense": "local", "update": "linear", "first_segment": "local"},  # out*g + mem*(1-g)
    "dingo": {"update": "linear", "z_init": "1/D"},                  # z = ones / dim_key; betas [1,H,1,Dv]
    "jlamprou": {"memory_rope": "after", "update": "linear", "eps": 1e-8, "eps_mode": "add"},
}


def rms_norm(x, w, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def rope_hf(x, positions, base):
    """Hugging Face's rotate_half RoPE on x [T, heads, D]."""
    d = x.shape[-1]
    inv = 1.0 / base ** (np.arange(0, d, 2, dtype=np.float64) / d)
    ang = np.concatenate([positions[:, None] * inv[None, :]] * 2, axis=-1)[:, None, :]
    rot = np.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
    return x * np.cos(ang) + rot * np.sin(ang)


def sigma(x):
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def infini_attention(q, k, v, gate, c, n, base):
    """q [T,Hq,D], k/v [T,Hkv,D]; gate: logits of shape [Hq], [Hq,Dv] or [1]; c: conventions."""
    T, hq, d = q.shape
    hkv = k.shape[1]
    group = hq // hkv
    M = np.zeros((hkv, d, d))
    z = np.full((hkv, d), 1.0 / d if c["z_init"] == "1/D" else c["z_init"])
    g = 1.0 / (1.0 + np.exp(-np.asarray(gate, np.float64)))
    g = g.reshape(hq, -1) if g.size > 1 else np.full((hq, 1), g.item())
    w = g if c["gate_sense"] == "memory" else 1.0 - g

    def ratio(num, den):
        den = np.maximum(den, c["eps"]) if c["eps_mode"] == "clamp" else den + c["eps"]
        return num / den[:, None]

    out = np.zeros((T, hq, d))
    for s0 in range(0, T, n):
        qs, ks, vs = q[s0:s0 + n], k[s0:s0 + n], v[s0:s0 + n]
        m = len(qs)
        pos = np.arange(m, dtype=np.float64)
        qr, kr = rope_hf(qs, pos, base), rope_hf(ks, pos, base)
        qm, km = (qr, kr) if c["memory_rope"] == "after" else (qs, ks)
        causal = np.tril(np.ones((m, m), dtype=bool))
        for h in range(hq):
            kv = h // group
            s = np.where(causal, qr[:, h] @ kr[:, kv].T / np.sqrt(d), -np.inf)
            p = np.exp(s - s.max(axis=1, keepdims=True))
            a_dot = (p / p.sum(axis=1, keepdims=True)) @ vs[:, kv]
            if s0 == 0 and c["first_segment"] == "local":
                out[s0:s0 + m, h] = a_dot
                continue
            mem = h // group if c["head_map"] == "group" else h % hkv
            sq = sigma(qm[:, h])
            a_mem = ratio(sq @ M[mem], sq @ z[mem])
            out[s0:s0 + m, h] = w[h] * a_mem + (1.0 - w[h]) * a_dot
        for kv in range(hkv):
            sk = sigma(km[:, kv])
            upd = vs[:, kv]
            if c["update"] == "delta":
                upd = upd - ratio(sk @ M[kv], sk @ z[kv])
            M[kv] += sk.T @ upd
            z[kv] += sk.sum(axis=0)
    return out


def forward(cfg, w, tokens, c, n):
    """The logits [T, vocab] of an HF Llama or Gemma checkpoint with Infini-attention (c=None: plain)."""
    gemma = cfg["model_type"] == "gemma"
    E, H, Hkv, D = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    eps, base = cfg["rms_norm_eps"], cfg["rope_theta"]
    emb = w["model.embed_tokens.weight"]
    x = emb[tokens] * (np.sqrt(E) if gemma else 1.0)
    norm_w = (lambda a: 1.0 + a) if gemma else (lambda a: a)
    T = len(tokens)
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = rms_norm(x, norm_w(w[p + "input_layernorm.weight"]), eps)
        proj = {}
        for t in "qkv":
            proj[t] = h @ w[p + f"self_attn.{t}_proj.weight"].T + w.get(p + f"self_attn.{t}_proj.bias", 0.0)
        q, k, v = proj["q"].reshape(T, H, D), proj["k"].reshape(T, Hkv, D), proj["v"].reshape(T, Hkv, D)
        gate = next(w[p + "self_attn." + g] for g in ("gate", "balance_factors", "head_gates", "betas", "beta")
                    if p + "self_attn." + g in w)
        a = infini_attention(q, k, v, gate, c, n, base)
        x = x + a.reshape(T, H * D) @ w[p + "self_attn.o_proj.weight"].T
        h = rms_norm(x, norm_w(w[p + "post_attention_layernorm.weight"]), eps)
        g, u = h @ w[p + "mlp.gate_proj.weight"].T, h @ w[p + "mlp.up_proj.weight"].T
        if gemma:
            act = 0.5 * g * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (g + 0.044715 * g ** 3)))
        else:
            act = g / (1.0 + np.exp(-g))
        x = x + (act * u) @ w[p + "mlp.down_proj.weight"].T
    x = rms_norm(x, norm_w(w["model.norm.weight"]), eps)
    return x @ w.get("lm_head.weight", emb).T


# ---------------------------------------------------------------------------------------------
# Tokenizer files


def bpe_tokenizer_json():
    """A byte-level BPE tokenizer.json of 97 tokens: GPT-2's alphabet for '!'..'~' and space, one
    merge, one special token."""
    tokens = [chr(b) for b in range(0x21, 0x7F)] + ["\u0120", "ab"]
    vocab = {t: i for i, t in enumerate(tokens)}
    return json.dumps({
        "version": "1.0", "added_tokens": [{"id": 96, "content": "<|end|>", "special": True}],
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": vocab, "merges": ["a b"]}})


def varint(v):
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
        v >>= 7
        if not v:
            return bytes(out)


def field(number, wire, payload):
    if wire == 2:
        return varint(number << 3 | 2) + varint(len(payload)) + payload
    if wire == 5:
        return varint(number << 3 | 5) + payload
    return varint(number << 3) + varint(payload)


def sentencepiece_model(pieces):
    """A SentencePiece ModelProto: pieces (text, score, type) and trainer_spec's special ids."""
    body = b"".join(field(1, 2, field(1, 2, t.encode()) + field(2, 5, struct.pack("<f", s)) + field(3, 0, k))
                    for t, s, k in pieces)
    trainer = field(40, 0, 3) + field(41, 0, 2) + field(42, 0, 1) + field(43, 0, 0)
    return body + field(2, 2, trainer)


def gemma_pieces(n):
    pieces = [("<pad>", 0.0, 3), ("<eos>", 0.0, 3), ("<bos>", 0.0, 3), ("<unk>", 0.0, 2), ("\u2581", -1.0, 1)]
    pieces += [(chr(c), -2.0 - i * 0.01, 1) for i, c in enumerate(range(ord("a"), ord("z") + 1))]
    pieces += [("\u2581" + chr(c), -1.5 - i * 0.01, 1) for i, c in enumerate(range(ord("a"), ord("z") + 1))]
    pieces += [(f"p{i}", -9.0, 1) for i in range(n - len(pieces))]
    return pieces


# ---------------------------------------------------------------------------------------------


def convert(folder, out, *flags):
    return subprocess.run([sys.executable, CONVERTER, folder, out, *flags], capture_output=True, text=True)


def evaluate(model, tmp, *flags):
    out = os.path.join(tmp, "logits.npy")
    if os.path.exists(out):
        os.remove(out)
    try:
        r = subprocess.run([INFINI, "eval", "-m", model, "--tokens", ",".join(map(str, TOKENS)), "--all-logits",
                            "--logits", out, *flags], capture_output=True, text=True, env=ENV)
    except OSError as e:
        return None, f"{INFINI}: {e.strerror}"
    if r.returncode:
        return None, r.stderr.strip()
    return np.load(out).astype(np.float64), r.stderr.strip()


def main():
    start = time.time()
    rng = np.random.default_rng(59)
    H, D = 4, 16
    # (variant, gate (name, shape), storage form, dtype, converter flags, extras)
    cases = [
        ("paper", ("balance_factors", (H,)), "single", "F32", ["--variant", "paper", "--segment", "8"], {}),
        ("beomi", ("gate", (1, H, 1, 1)), "sharded", "F16", [], {"segment_size": SEGMENT}),
        ("nanotron", ("balance_factors", (H,)), "single", "BF16", ["--segment", "8"], {"rope_theta": 1e6}),
        ("lucidrains", ("head_gates", (H,)), "single", "F32", ["--segment", "8"], {}),
        # dingo: keys pushed negative (about -6) so that z stays small next to its start of 1/D.
        ("dingo", ("betas", (1, H, 1, D)), "bin", "F32", ["--segment", "8"], {"key_shift": -1.0}),
        ("jlamprou", ("beta", (1,)), "single", "BF16", ["--segment", "8"], {"biases": True}),
    ]
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        P = lambda *a: os.path.join(tmp, *a)  # noqa: E731
        for variant, gate, form, dtype, flags, extra in cases:
            cfg, weights = random_model(rng, gate=gate, biases=extra.get("biases", False),
                                        rope_theta=extra.get("rope_theta", 10000.0))
            if "segment_size" in extra:
                cfg["segment_size"] = extra["segment_size"]
            if "key_shift" in extra:
                weights["model.embed_tokens.weight"][:, 0] += 8.0
                for i in range(cfg["num_hidden_layers"]):
                    weights[f"model.layers.{i}.self_attn.k_proj.weight"][:, 0] = extra["key_shift"]
            files = {"tokenizer.json": bpe_tokenizer_json()} if variant == "paper" else None
            if form == "bin" and not HAVE_TORCH:
                print(f"skipped: {variant} as pytorch_model.bin (no torch here): written as safetensors")
                form = "single"
            w = save(P(variant), cfg, weights, form, dtype, files)
            conv = {**PAPER, **CONVENTIONS[variant]}
            ref = forward(cfg, w, TOKENS, conv, SEGMENT)
            row = [variant]
            for outtype in ("f32", "f16"):
                out = P(f"{variant}-{outtype}.gguf")
                r = convert(P(variant), out, "--outtype", outtype, *flags)
                if not ok(r.returncode == 0, f"{variant} {outtype}: converted"
                          + (f" (exit {r.returncode}: {r.stderr.strip()})" if r.returncode else "")):
                    row.append(None)
                    continue
                if outtype == "f32":
                    said = r.stdout
                    if variant != "paper":
                        ok(f"variant: {variant} (inferred from the gate tensors" in said,
                           f"{variant}: the variant is inferred from the gate tensors' name")
                    ok(("(config segment_size)" if "segment_size" in extra else "(flag --segment)") in said
                       and "infini.segment_length = 8 " in said, f"{variant}: the segment's source is printed")
                got, err = evaluate(out, tmp)
                if not ok(got is not None, f"{variant} {outtype}: infini eval runs the file"
                          + (f" ({err})" if got is None else "")):
                    row.append(None)
                    continue
                e = nmse(got, ref)
                row.append(e)
                ok(e < TOL[outtype], f"{variant} {outtype}: nmse {e:.2e} against the float64 forward (< {TOL[outtype]:g})")
                if outtype != "f32":
                    continue
                # Token by token (the decode kernels, the memory written mid-piece): the same logits.
                one, err = evaluate(out, tmp, "--max-piece", "1")
                if ok(one is not None, f"{variant}: infini eval --max-piece 1 runs" + (f" ({err})" if one is None else "")):
                    e1 = nmse(one, ref)
                    ok(e1 < TOL["f32"], f"{variant} f32, one token per piece: nmse {e1:.2e} (< 1e-06)")
                if variant in ("beomi", "lucidrains"):  # the same weights as the paper's variant: other logits
                    r = convert(P(variant), P("as-paper.gguf"), "--outtype", "f32", "--variant", "paper", "--segment", "8")
                    paper, err = evaluate(P("as-paper.gguf"), tmp) if r.returncode == 0 else (None, r.stderr.strip())
                    if ok(paper is not None, f"{variant} as paper: converted and run" + ("" if paper is not None else f" ({err})")):
                        e_paper = nmse(paper, forward(cfg, w, TOKENS, PAPER, SEGMENT))
                        ok(e_paper < TOL["f32"], f"{variant} as paper: nmse {e_paper:.2e} against the paper's forward")
                        far = nmse(got, paper)
                        ok(far > FAR, f"{variant}: infini's logits differ from the paper variant's on the same weights"
                           f" (nmse {far:.2e} > {FAR:g})")
                # Every convention where the variant departs from the paper's matters on these weights.
                for key, value in CONVENTIONS[variant].items():
                    if key in ("eps", "eps_mode"):
                        continue  # O(1) denominators: checked by the eps case below
                    other = forward(cfg, w, TOKENS, {**conv, key: PAPER[key]}, SEGMENT)
                    far = nmse(got, other)
                    ok(far > FAR, f"{variant}: with {key} {PAPER[key]} instead of {value} infini's logits would be"
                       f" off by nmse {far:.2e} (> {FAR:g})")
            summary.append(row)
            if variant == "paper":  # the byte-level BPE vocabulary came along
                r = subprocess.run([INFINI, "tokenize", "-m", P("paper-f32.gguf"), "--text", "ab a", "--no-bos"],
                                   capture_output=True, text=True)
                ok(r.returncode == 0 and r.stdout.split() == ["95", "94", str(ord("a") - 0x21)],
                   f"paper: tokenizer.json's BPE tokenizes 'ab a' as 95 94 64 (got {r.stdout.split()} {r.stderr.strip()})")

        # Gemma: MQA, head dim 32 (not embd / heads), tied output, Beomi's gates, tokenizer.model.
        cfg, weights = random_model(rng, arch="gemma", heads=4, heads_kv=1, head_dim=32, tied=True,
                                    gate=("gate", (1, H, 1, 1)))
        cfg.update(segment_size=SEGMENT, bos_token_id=2, eos_token_id=1)
        sp = sentencepiece_model(gemma_pieces(97))
        w = save(P("gemma"), cfg, weights, "single", "F32", {"tokenizer.model": sp})
        ref = forward(cfg, w, TOKENS, {**PAPER, **CONVENTIONS["beomi"]}, SEGMENT)
        row = ["gemma (beomi)"]
        for outtype in ("f32", "f16"):
            out = P(f"gemma-{outtype}.gguf")
            r = convert(P("gemma"), out, "--outtype", outtype)
            ok(r.returncode == 0 and "variant: beomi" in r.stdout and "SentencePiece" in r.stdout,
               f"gemma {outtype}: converted as beomi with the SentencePiece vocabulary {r.stderr.strip()}")
            got, err = evaluate(out, tmp)
            if not ok(got is not None, f"gemma {outtype}: infini eval runs the file" + (f" ({err})" if got is None else "")):
                row.append(None)
                continue
            ok("output.weight" not in err, "gemma: no output tensor (tied)")
            e = nmse(got, ref)
            row.append(e)
            ok(e < TOL[outtype], f"gemma {outtype}: nmse {e:.2e} against the float64 forward (< {TOL[outtype]:g})")
        summary.append(row)
        r = subprocess.run([INFINI, "tokenize", "-m", P("gemma-f32.gguf"), "--text", "a b", "--json"],
                           capture_output=True, text=True)
        ids = json.loads(r.stdout)["ids"] if r.returncode == 0 else None
        ok(ids == [2, 31, 32], f"gemma: tokenizer.model's pieces tokenize 'a b' as <bos> ▁a ▁b (got {ids} {r.stderr.strip()})")

        # eps: keys of about -25 in layer 0 make sigma(q).z about 1e-8, where the eps form decides the
        # memory read. eps is the power of ten nearest the median of those denominators (the second
        # segment's in layer 0), added; against the paper's 1e-10 clamped, eps clamped, 1e-10 added.
        cfg, weights = random_model(np.random.default_rng(591), gate=("balance_factors", (H,)))
        weights["model.embed_tokens.weight"][:, 0] += 8.0
        weights["model.layers.0.self_attn.k_proj.weight"][:, 0] = -4.5
        w = save(P("eps"), cfg, weights, "single", "F32")
        h = rms_norm(w["model.embed_tokens.weight"][TOKENS], w["model.layers.0.input_layernorm.weight"], 1e-6)
        q0 = (h @ w["model.layers.0.self_attn.q_proj.weight"].T)[:, :D]
        k0 = (h @ w["model.layers.0.self_attn.k_proj.weight"].T)[:, :D]
        eps = float(10.0 ** np.round(np.log10(np.median(sigma(q0[8:16]) @ sigma(k0[:8]).sum(axis=0)))))
        conv = {**PAPER, "eps": eps, "eps_mode": "add"}
        ref = forward(cfg, w, TOKENS, conv, SEGMENT)
        r = convert(P("eps"), P("eps.gguf"), "--outtype", "f32", "--segment", "8", "--eps", str(eps), "--eps-mode", "add")
        ok(r.returncode == 0 and f"infini.memory_eps = {eps:g} (flag --eps)" in r.stdout, f"eps: converted {r.stderr.strip()}")
        got, err = evaluate(P("eps.gguf"), tmp)
        if ok(got is not None, "eps: infini eval runs the file" + (f" ({err})" if got is None else "")):
            e = nmse(got, ref)
            ok(e < TOL["f32"], f"eps {eps:g} add: nmse {e:.2e} against the float64 forward (< 1e-06)")
            summary.append([f"eps {eps:g} add", e, None])
            for other in ({"eps": 1e-10, "eps_mode": "clamp"}, {"eps": eps, "eps_mode": "clamp"},
                          {"eps": 1e-10, "eps_mode": "add"}):
                far = nmse(got, forward(cfg, w, TOKENS, {**conv, **other}, SEGMENT))
                ok(far > FAR, f"eps: with eps {other['eps']:g} {other['eps_mode']} infini's logits would be off by"
                   f" nmse {far:.2e} (> {FAR:g})")

        # A plain checkpoint (no gates) converts to a plain file.
        cfg, weights = random_model(rng, tied=True)
        save(P("plain"), cfg, weights, "single", "F16")
        r = convert(P("plain"), P("plain.gguf"))
        ok(r.returncode == 0 and "plain file" in r.stdout, f"plain: no gates, no infini keys {r.stderr.strip()}")

        # Hostile folders: exit status 1 and one line naming the problem.
        def hostile(label, folder, phrase, *flags):
            r = convert(folder, P("hostile.gguf"), *flags)
            ok(r.returncode == 1 and is_one_line_error(r) and phrase in r.stderr and "Traceback" not in r.stderr
               and not os.path.exists(P("hostile.gguf")),
               f"{label}: exit {r.returncode}, {r.stderr.strip()!r}")

        cfg, weights = random_model(rng, layers=1, gate=("gate", (1, H, 1, 1)))

        def folder(name, mutate=None, cfg=cfg, weights=weights):
            d = P("bad", name)
            os.makedirs(d)
            with open(os.path.join(d, "config.json"), "w") as f:
                json.dump(cfg, f)
            write_safetensors(os.path.join(d, "model.safetensors"), weights, "F32", mutate)
            return d

        d = folder("truncated")
        with open(os.path.join(d, "model.safetensors"), "r+b") as f:
            f.truncate(os.path.getsize(os.path.join(d, "model.safetensors")) - 100)
        hostile("truncated safetensors", d, "truncated")
        d = folder("short", lambda h: h.__setitem__("lm_head.weight", {**h["lm_head.weight"], "shape": [97, 63]}))
        hostile("offsets disagree with the shape", d, "lm_head.weight")

        def overlap(h):
            a, b = h["model.norm.weight"], h["model.embed_tokens.weight"]
            size = a["data_offsets"][1] - a["data_offsets"][0]
            a["data_offsets"] = [b["data_offsets"][0], b["data_offsets"][0] + size]
        hostile("offsets that overlap", folder("overlap", overlap), "overlap")
        d = folder("dtype", lambda h: h["model.norm.weight"].__setitem__("dtype", "Q7"))
        hostile("unknown dtype", d, "unknown dtype")
        d = folder("noconfig")
        os.remove(os.path.join(d, "config.json"))
        hostile("no config.json", d, "config.json")
        hostile("unknown tensor", folder("unknown", weights={**weights, "model.layers.0.self_attn.rope_scale": np.ones(4)}),
                "rope_scale")
        hostile("shape against config.json", folder("shape", cfg={**cfg, "intermediate_size": 130}), "needs [130, 64]")
        two, w2 = random_model(rng, layers=2, gate=("gate", (1, H, 1, 1)))
        del w2["model.layers.1.self_attn.gate"]
        hostile("gates on some layers only", folder("partial", cfg=two, weights=w2), "layers [0] only")
        hostile("a gate of the wrong shape", folder("gateshape"), "gate_shape head_value", "--gate-shape", "head_value")
        plain_cfg, plain_w = random_model(rng, layers=1)
        hostile("a variant without gates", folder("nogates", cfg=plain_cfg, weights=plain_w), "no gate tensors",
                "--variant", "paper")
        d = folder("noweights")
        os.remove(os.path.join(d, "model.safetensors"))
        hostile("no weights", d, "no weights")

    print("normalised MSE of infini's logits against each implementation's float64 forward:")
    print(f"  {'variant':16} {'f32':>10} {'f16':>10}")
    for name, *errs in summary:
        print(f"  {name:16} " + " ".join(f"{e:10.2e}" if e is not None else f"{'-':>10}" for e in errs))
    print(f"wall time {time.time() - start:.1f} s")
    finish("convert-hf")


if __name__ == "__main__":
    main()
