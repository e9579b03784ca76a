"""Hugging Face tensor names -> llama.cpp's, each shape checked against config.json, and the Q/K row
permutation that makes the file's interleaved RoPE Hugging Face's rotate_half RoPE."""
import re

from .errors import fail, say


def permute_rows(w, heads, head_dim):
    """llama.cpp's Q/K permutation: within each head, row i of the first half and row i of the
    second half become rows 2i and 2i+1, so interleaved RoPE on the result is neox RoPE on w."""
    shape = w.shape
    return w.reshape(heads, 2, head_dim // 2, *shape[1:]).swapaxes(1, 2).reshape(shape)


LAYER_RE = re.compile(r"^model\.layers\.(\d+)\.(.+)$")
LAYER_TENSORS = {
    "input_layernorm.weight": ("attn_norm.weight", "norm"),
    "post_attention_layernorm.weight": ("ffn_norm.weight", "norm"),
    "self_attn.q_proj.weight": ("attn_q.weight", "q"),
    "self_attn.k_proj.weight": ("attn_k.weight", "k"),
    "self_attn.v_proj.weight": ("attn_v.weight", "v"),
    "self_attn.o_proj.weight": ("attn_output.weight", "o"),
    "self_attn.q_proj.bias": ("attn_q.bias", "qb"),
    "self_attn.k_proj.bias": ("attn_k.bias", "kb"),
    "self_attn.v_proj.bias": ("attn_v.bias", "vb"),
    "mlp.gate_proj.weight": ("ffn_gate.weight", "up"),
    "mlp.up_proj.weight": ("ffn_up.weight", "up"),
    "mlp.down_proj.weight": ("ffn_down.weight", "down"),
}
# Buffers some implementations save that are not weights: RoPE tables, and jlamprou's memory
# state (M, z registered as buffers: a stream starts from zero memory, as the code's reset does).
LAYER_IGNORED = {"self_attn.rotary_emb.inv_freq": "RoPE table", "self_attn.M": "memory state",
                 "self_attn.z": "memory state"}


def plan_tensors(m, ckpt, gate_names):
    """[(gguf name, numpy shape (out, in), kind, hf name)] after checking every tensor's name and
    shape; the gate tensors are returned apart: {layer: hf name}."""
    E, F = m.embd, m.ffn
    want = {"norm": (E,), "q": (m.q_width, E), "k": (m.kv_width, E), "v": (m.kv_width, E), "o": (E, m.q_width),
            "qb": (m.q_width,), "kb": (m.kv_width,), "vb": (m.kv_width,)}
    plan, gates, ignored = [], {}, {}
    for name, shape in ckpt.shapes.items():
        mm = LAYER_RE.match(name)
        if mm:
            layer, rest = int(mm.group(1)), mm.group(2)
            if layer >= m.layers:
                fail(f"tensor '{name}': layer {layer} but config.json has num_hidden_layers {m.layers}")
            if rest in LAYER_IGNORED:
                ignored.setdefault(LAYER_IGNORED[rest], []).append(name)
                continue
            if rest.startswith("self_attn.") and rest[len("self_attn."):] in gate_names:
                gates.setdefault(layer, []).append(name)
                continue
            if rest not in LAYER_TENSORS:
                fail(f"tensor '{name}' is not one this converter maps (unknown tensor)")
            gguf, kind = LAYER_TENSORS[rest]
            need = want.get(kind) or ((F, E) if kind == "up" else (E, F))
            gguf = f"blk.{layer}.{gguf}"
        elif name == "model.embed_tokens.weight":
            gguf, kind, need = "token_embd.weight", "embd", (m.vocab, E)
        elif name == "model.norm.weight":
            gguf, kind, need = "output_norm.weight", "norm", (E,)
        elif name == "lm_head.weight":
            gguf, kind, need = "output.weight", "out", (m.vocab, E)
        else:
            fail(f"tensor '{name}' is not one this converter maps (unknown tensor)")
        if tuple(shape) != need:
            fail(f"tensor '{name}' has shape {list(shape)} but config.json needs {list(need)}")
        plan.append((gguf, need, kind, name))
    names = {p[0] for p in plan}
    required = ["token_embd.weight", "output_norm.weight"] + [
        f"blk.{i}.{t}" for i in range(m.layers) for t in ("attn_norm.weight", "attn_q.weight", "attn_k.weight",
                                                          "attn_v.weight", "attn_output.weight", "ffn_norm.weight",
                                                          "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight")]
    for r in required:
        if r not in names:
            hf = {v[0]: k for k, v in LAYER_TENSORS.items()}
            what = (f"model.layers.{r.split('.')[1]}.{hf['.'.join(r.split('.')[2:])]}" if r.startswith("blk.")
                    else {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight"}[r])
            fail(f"tensor '{what}' is missing")
    for b in ("attn_q.bias", "attn_k.bias", "attn_v.bias"):
        have = [i for i in range(m.layers) if f"blk.{i}.{b}" in names]
        if have and len(have) != m.layers:
            fail(f"{b.replace('attn_', '').replace('.bias', '')}_proj.bias is on layers {have} only")
    if "output.weight" in names and m.tied:
        plan = [p for p in plan if p[0] != "output.weight"]
        say("lm_head.weight: ignored (tie_word_embeddings: the output is the embedding)")
    elif "output.weight" in names and m.arch == "gemma":
        fail("lm_head.weight is not tied to the embedding, but infini's gemma always uses the embedding for the logits")
    elif "output.weight" not in names and not m.tied:
        if m.arch == "llama":
            say("no lm_head.weight: the output is tied to the embedding")
    for what, which in ignored.items():
        say(f"ignored: {len(which)} {what} tensors ({which[0]}{', ...' if len(which) > 1 else ''})")
    order = {"token_embd.weight": 0, "output_norm.weight": 1, "output.weight": 2}
    suffix = ["attn_norm.weight", "attn_q.weight", "attn_q.bias", "attn_k.weight", "attn_k.bias", "attn_v.weight",
              "attn_v.bias", "attn_output.weight", "ffn_norm.weight", "ffn_gate.weight", "ffn_up.weight",
              "ffn_down.weight"]

    def key(p):
        if p[0] in order:
            return (order[p[0]], 0, 0)
        parts = p[0].split(".")
        return (3, int(parts[1]), suffix.index(".".join(parts[2:])))

    return sorted(plan, key=key), gates
