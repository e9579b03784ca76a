#!/usr/bin/python3
"""train_passkey --add-layers: a model grown by new layers on top computes exactly what the loaded
one does (the new layers' output projections start at zero), and the new layers are trainable
(one backward pass gives their weights non-zero gradients).

usage: check_grown_model.py MODEL.gguf
"""
import os
import sys

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


def main():
    torch.manual_seed(0)
    base = model_gguf.load(sys.argv[1], torch.float32)
    grown = initial_model(base.cfg, base, add_layers=2)
    if len(grown.blocks) != len(base.blocks) + 2 or base.cfg.layers != len(base.blocks):
        fail(f"grown model has {len(grown.blocks)} layers from {len(base.blocks)} (+2 asked)")
    # Several segments, so the memory path of every layer is exercised.
    text = task.passkey_text(4 * base.cfg.segment, 0.3, "31415")
    tokens = torch.tensor([task.encode(text)])
    with torch.no_grad():
        want, got = base(tokens), grown(tokens)
    if not torch.equal(want, got):
        fail(f"grown model's logits differ from the loaded one's: max |diff| {(want - got).abs().max().item():.3g}")
    loss = F.cross_entropy(grown(tokens)[0, :-1], tokens[0, 1:])
    loss.backward()
    for i, block in enumerate(grown.blocks[len(base.blocks):]):
        for name in ("wo", "w_down"):
            if not getattr(block, name).weight.grad.abs().max() > 0:
                fail(f"new layer {i}: {name} gets no gradient")
    print(f"ok: {len(base.blocks)} + 2 layers, identical logits over {tokens.shape[1]} tokens, new layers trainable")


if __name__ == "__main__":
    main()
