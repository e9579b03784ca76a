#!/usr/bin/python3
"""train_passkey --add-layers and --add-heads: a model grown by new layers on top, by new heads in
every layer, or by both computes what the loaded one does (the new layers' output projections and the
new heads' columns of wo start at zero), and the new weights are trainable (one backward pass gives
those projections non-zero gradients). The grown model also round-trips through GGUF (with new heads,
the head dim is no longer n_embd / n_head: llama.attention.key_length says it).

usage: check_grown_model.py MODEL.gguf
"""
import os
import sys
import tempfile

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "samples", "passkey"))
import model_gguf  # noqa: E402
import passkey_task as task  # noqa: E402
from train_passkey import initial_model  # noqa: E402


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def check(base, tokens, add_layers, add_heads, out_dir):
    grown = initial_model(base.cfg, base, add_layers=add_layers, add_heads=add_heads).double()
    what = f"+{add_layers} layers +{add_heads} heads"
    if len(grown.blocks) != len(base.blocks) + add_layers or base.cfg.layers != len(base.blocks):
        fail(f"{what}: grown model has {len(grown.blocks)} layers from {len(base.blocks)}")
    if grown.cfg.heads != base.cfg.heads + add_heads or grown.cfg.head_dim != base.cfg.head_dim:
        fail(f"{what}: grown model has {grown.cfg.heads} heads of {grown.cfg.head_dim} from "
             f"{base.cfg.heads} of {base.cfg.head_dim}")
    with torch.no_grad():
        want, got = base(tokens), grown(tokens)
    # New layers add exact zeros; new heads add zero terms to wo's sums, which BLAS may block
    # differently, so those agree to float64 rounding only (float32 rounding would hide a real
    # leak of the new heads into the output of the size 1e-5).
    diff = (want - got).abs().max().item()
    if diff > (0 if add_heads == 0 else 1e-10 * want.abs().max().item()):
        fail(f"{what}: grown model's logits differ from the loaded one's: max |diff| {diff:.3g}")
    loss = F.cross_entropy(grown(tokens)[0, :-1], tokens[0, 1:])
    loss.backward()
    old = base.cfg.heads * base.cfg.head_dim
    for i, block in enumerate(grown.blocks):
        new_layer = i >= len(base.blocks)
        grads = ([block.wo.weight.grad, block.w_down.weight.grad] if new_layer else
                 [block.wo.weight.grad[:, old:]] if add_heads else [])
        if any(not g.abs().max() > 0 for g in grads):
            fail(f"{what}: layer {i}: the new output projection gets no gradient")
    # GGUF round trip with the new heads and layers switched on (their projections off zero, so a
    # head stored in the wrong place or with the wrong head dim changes the logits), every weight
    # rounded to f16 first, so storing it loses nothing and the logits must agree to float64 rounding.
    with torch.no_grad():
        for i, block in enumerate(grown.blocks):
            block.wo.weight[:, old:].normal_(0, 0.02)
            if i >= len(base.blocks):
                block.w_down.weight.normal_(0, 0.02)
        for p in grown.parameters():
            p.copy_(p.half().double())
        used = grown(tokens)
    path = os.path.join(out_dir, "grown.gguf")
    model_gguf.export(grown, path, "grown")
    with torch.no_grad():
        stored = model_gguf.load(path, torch.float64)
        again = stored(tokens)
    if stored.cfg.heads != grown.cfg.heads or stored.cfg.head_dim != grown.cfg.head_dim:
        fail(f"{what}: GGUF round trip reads {stored.cfg.heads} heads of {stored.cfg.head_dim}")
    if (again - used).abs().max().item() > 1e-10 * used.abs().max().item():
        fail(f"{what}: GGUF round trip changed the logits by {(again - used).abs().max().item():.3g}")
    print(f"ok: {what}: logits agree (max |diff| {diff:.3g}), new projections trainable, GGUF round trip")


def main():
    torch.manual_seed(0)
    base = model_gguf.load(sys.argv[1], torch.float64)
    # Several segments, so the memory path of every layer is exercised.
    text = task.passkey_text(4 * base.cfg.segment, 0.3, "31415")
    tokens = torch.tensor([task.encode(text)])
    with tempfile.TemporaryDirectory() as out_dir:
        for add_layers, add_heads in [(2, 0), (0, 4), (1, 2)]:
            check(base, tokens, add_layers, add_heads, out_dir)


if __name__ == "__main__":
    main()
