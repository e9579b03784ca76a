#!/usr/bin/python3
"""Trains the passkey demo model (a small Llama with Infini-attention) on CPU and exports GGUF.

    /usr/bin/python3 samples/passkey/train_passkey.py --out samples/passkey/passkey.gguf

Seeded and reproducible for a given thread count (torch reductions depend on it; a resumed run
restarts the copy bootstrap's generator). Each passkey example is one fresh stream: filler text,
a 5-digit key at a random depth, a question; the loss is the answer and the key's second copy in
the key line (next-character cross-entropy elsewhere, at weight 0.01). Gradients flow through
every segment of the stream, so the model can learn what to write into the compressive memory
and when to read it. Stages (STAGES): a random-token copy bootstrap, then streams of 1, 2, 4 and
8 segments.

Status (2-core machine, about 10 minutes for 2500 steps with libopenblas0-pthread installed;
Debian's torch otherwise runs on the reference BLAS, 12x slower): the one-segment stage reaches
98% answer accuracy (the key and the question share a segment: local attention), but with two
segments, where the key must come back through the memory, accuracy stays near 0 for 600 steps.
The memory read averages over every token written, so the model has to learn keys that leave the
filler out; this recipe does not get there yet.
"""
import argparse
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import passkey_task as task  # noqa: E402
from infini_llama import Config, InfiniLlama  # noqa: E402
import model_gguf  # noqa: E402

# (steps, segments per stream at most, batch): short streams teach the mechanism, long ones teach
# it to keep filler out of the memory so that it survives a million tokens.
# (steps, segments per stream at most, batch); segments 0 is the copy bootstrap (copy_batch).
# One-segment streams teach the format and local copying; longer ones need the memory.
STAGES = [(600, 0, 32), (600, 1, 16), (600, 2, 8), (400, 4, 4), (300, 8, 2)]


def copy_batch(gen, batch=32, T=96):
    """Random characters with one random span (8-32 tokens) repeated at once: the loss is on the
    repeat only. This bootstraps content-based copying (an induction head), which finding the key
    needs and which the passkey task alone teaches slowly."""
    alphabet = torch.tensor([task.PIECE_ID[c] for c in "abcdefghijklmnopqrstuvwxyz0123456789" + task.SPACE])
    x = alphabet[torch.randint(0, len(alphabet), (batch, T), generator=gen)]
    w = torch.zeros(batch, T)
    for b in range(batch):
        n = int(torch.randint(8, 33, (1,), generator=gen))
        s = int(torch.randint(0, T - 2 * n, (1,), generator=gen))
        x[b, s + n:s + 2 * n] = x[b, s:s + n]
        w[b, s + n:s + 2 * n - 1] = 0.999  # w[t] weighs predicting x[t + 1]
    return x, w


def make_batch(rng, segments, batch, cfg, boundary_share=0.25):
    """Token ids [batch, T] and loss weights [batch, T] (weight of predicting token t+1 at t)."""
    T = segments * cfg.segment
    rows, weights = [], []
    for _ in range(batch):
        key = f"{rng.integers(0, 100000):05d}"
        answer = task.encode_continuation(task.ANSWER.format(key=key))
        fixed = 2 + task.fixed_chars()
        f_max = T - fixed - len(answer)
        f = int(rng.integers(max(0, f_max - (segments - 1) * cfg.segment), f_max + 1))
        if rng.random() < boundary_share:  # the question ends within a few tokens of a segment boundary
            prompt = fixed + f
            r = int(rng.integers(-8, 8)) % cfg.segment
            f -= (prompt - r) % cfg.segment
            f = max(f, 0)
        prompt = task.encode(task.passkey_text(f, float(rng.random()), key))
        ids = prompt + answer
        w = np.full(T, 0.01, dtype=np.float32)
        w[len(prompt) - 1:len(ids) - 1] = 1.0
        # The key's second copy in the key line is predictable from the first: a dense
        # signal for the copying that answering needs.
        digits = task.encode_continuation(key)
        at = [i for i in range(len(prompt) - 5) if prompt[i:i + 5] == digits]
        if len(at) >= 2:
            w[at[1] - 1:at[1] + 4] = 0.999
        w[len(ids) - 1:] = 0.0
        ids = ids + [task.EOS] * (T - len(ids))
        rows.append(ids)
        weights.append(w)
    return torch.tensor(rows), torch.from_numpy(np.stack(weights))


def answer_accuracy(logits, tokens, weights):
    """Share of streams whose whole answer is predicted (greedy) correctly."""
    pred = logits[:, :-1].argmax(-1)
    target = tokens[:, 1:]
    answer = weights[:, :-1] >= 1.0  # the answer; the key line's copy has 0.999
    rows = answer.any(dim=1)
    wrong = ((pred != target) & answer).any(dim=1)
    return 1.0 - wrong[rows].float().mean().item() if rows.any() else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--embd", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=128)
    ap.add_argument("--segment", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every stage's steps (for quick trials)")
    ap.add_argument("--checkpoint", default="", help="save/resume training state here")
    ap.add_argument("--stages", default="", help="steps:segments:batch,... (default: STAGES)")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    cfg = Config(vocab=len(task.VOCAB), embd=args.embd, layers=args.layers, heads=args.heads,
                 kv_heads=args.heads, ffn=args.ffn, segment=args.segment)
    model = InfiniLlama(cfg)
    for name, p in model.named_parameters():
        if p.dim() == 2:
            torch.nn.init.normal_(p, std=0.02)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    stages = list(STAGES)
    if args.stages:
        stages = [(int(a), int(b), int(c)) for a, b, c in (x.split(":") for x in args.stages.split(","))]
    stages = [(max(1, int(s * args.scale)), segs, b) for s, segs, b in stages]
    total = sum(s[0] for s in stages)
    step = 0
    if args.checkpoint and os.path.exists(args.checkpoint):
        state = torch.load(args.checkpoint)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step = state["step"]
        print(f"resumed at step {step}", flush=True)

    started = time.time()
    recent, recent_copy = [], []
    stage_start = 0
    copy_gen = torch.Generator().manual_seed(args.seed)
    for steps, segments, batch in stages:
        for i in range(steps):
            if stage_start + i < step:
                continue
            lr = args.lr  # constant: warmup, decay and clipping slowed the copy bootstrap down
            if segments == 0:
                tokens, weights = copy_batch(copy_gen, batch)
            else:
                tokens, weights = make_batch(np.random.default_rng([args.seed, step]), segments, batch, cfg)
            logits = model(tokens)
            ce = F.cross_entropy(logits[:, :-1].reshape(-1, cfg.vocab), tokens[:, 1:].reshape(-1), reduction="none")
            w = weights[:, :-1].reshape(-1)
            loss = (ce * w).sum() / w.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            recent.append(answer_accuracy(logits.detach(), tokens, weights))
            copy = weights[:, :-1] > 0.99
            recent_copy.append(((logits[:, :-1].argmax(-1) == tokens[:, 1:]) & copy).sum().item() / max(1, copy.sum().item()))
            if step % 50 == 0:
                print(f"step {step}/{total} segments {segments} loss {loss.item():.4f} "
                      f"answer acc {np.nanmean(recent):.3f} copy acc {np.mean(recent_copy):.3f} lr {lr:.2e} "
                      f"{time.time() - started:.0f}s", flush=True)
                recent, recent_copy = [], []
            if args.checkpoint and step % 100 == 0:
                torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, args.checkpoint)
        stage_start += steps
    model_gguf.export(model, args.out, "infini passkey demo")
    print(f"wrote {args.out} after {step} steps, {time.time() - started:.0f}s", flush=True)


if __name__ == "__main__":
    main()
