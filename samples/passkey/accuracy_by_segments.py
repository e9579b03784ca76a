#!/usr/bin/python3
"""Teacher-forced passkey accuracy of a GGUF model on training-style streams, per stream length in
segments and per memory dilution: where the model fails, without the runtime.

    /usr/bin/python3 samples/passkey/accuracy_by_segments.py MODEL.gguf --segments 4,8,16,32,64
    /usr/bin/python3 samples/passkey/accuracy_by_segments.py MODEL.gguf --segments 6 --dilution 1,8,64,512,4096

Streams are train_passkey.make_batch's with every prompt ending exactly at a segment's end (the
answer starts a fresh segment, as at every power-of-two length); dilution W counts each filler token
W times in the memory write (1: a real stream). A stream counts as right when every answer token is
the argmax given the right ones before it, which is exactly when greedy decoding answers right.
Seeded: each row sees the same keys and depths on every run. With --by-key-offset, each row also
gives the accuracy per offset of the key's first digit in its segment (in eighths of a segment):
where a segment boundary cuts the key line matters more than the length; --by-answer-token says
which answer token fails first (the space, digit 1-5, the period) and compares keys that repeat a
digit with the rest. --split-zone draws only the placements that fail most (the key's first digit in
the last SPLIT_ZONE tokens of its segment); --prompt-end anywhere --by-kind also tests keys in the
question's own segment (local copying: few streams that end on a boundary have one); --no-write
PARTS zeroes the memory writes of those parts of the key line, to see which tokens write the key:

    /usr/bin/python3 samples/passkey/accuracy_by_segments.py MODEL.gguf --segments 16 --split-zone --no-write middle
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_gguf  # noqa: E402
from train_passkey import KEY_LINE_PARTS, answer_scores, first_digit, key_line_parts, make_batch  # noqa: E402


def accuracy(model, segments, dilution, streams, seed, split_zone=False, no_write=(), prompt_end="boundary"):
    """Per stream: answered right, offset of the key's first digit in its segment, the first answer
    token predicted wrong (0 the space, 1-5 the digits, 6 the period; -1 none), whether the key
    repeats a digit and make_batch's kind ("local": some of the key is in the segment where the
    answer starts, "memory", "edge"). prompt_end "anywhere" ends prompts anywhere in a segment, so
    some keys are local, as at lengths off the segment grid ("boundary": at a segment's end)."""
    rng = np.random.default_rng(seed)
    right, offsets, first_wrong, repeats, kinds = [], [], [], [], []
    on_boundary = 1.0 if prompt_end == "boundary" else 0.0
    parts = key_line_parts()
    spans = [parts[p] for p in no_write]
    for _ in range(0, streams, 16):
        # A dilution range of (1, 1 + tiny] marks the filler (weight above 1) without changing it.
        tokens, weights, batch_kinds, write = make_batch(rng, segments, 16, model.cfg.segment, True, 1.000001, True,
                                                         boundary=on_boundary, exact=on_boundary, fill_only=True,
                                                         split=1.0 if split_zone else 0.0)
        kinds += batch_kinds
        write = torch.where(write > 1.0, torch.full_like(write, dilution), torch.ones_like(write))
        firsts = [first_digit(row.tolist()) for row in tokens]
        for b, first in enumerate(firsts):
            line = first - parts["key1"][0]
            for a, e in spans:
                write[b, line + a:line + e] = 0.0
        with torch.no_grad():
            real = dilution == 1 and not spans
            logits = model(tokens, None if real else write)
        whole, _ = answer_scores(logits, tokens, weights)
        right += whole.tolist()
        offsets += [first % model.cfg.segment for first in firsts]
        wrong = (logits[:, :-1].argmax(-1) != tokens[:, 1:]) & (weights[:, :-1] >= 1.0)
        for b, first in enumerate(firsts):
            answer = (weights[b, :-1] >= 1.0).nonzero().flatten()
            missed = wrong[b, answer].nonzero().flatten()
            first_wrong.append(int(missed[0]) if len(missed) else -1)
            repeats.append(len(set(tokens[b, first:first + 5].tolist())) < 5)
    return tuple(np.array(a[:streams]) for a in (right, offsets, first_wrong, repeats, kinds))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--segments", default="4,8,16,32,64", help="stream lengths in segments, comma-separated")
    ap.add_argument("--dilution", default="1", help="filler write weights, comma-separated (1: real streams)")
    ap.add_argument("--streams", type=int, default=96)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--by-key-offset", action="store_true", help="also accuracy per key offset in its segment")
    ap.add_argument("--by-answer-token", action="store_true",
                    help="also which answer token fails first, and keys with a repeated digit against the rest")
    ap.add_argument("--split-zone", action="store_true",
                    help="only keys whose first digit is in the last SPLIT_ZONE tokens of its segment")
    ap.add_argument("--prompt-end", choices=("boundary", "anywhere"), default="boundary",
                    help="where prompts end: at a segment's end (every answer from memory) or anywhere in one "
                         "(some keys in the question's own segment: local copying)")
    ap.add_argument("--by-kind", action="store_true",
                    help="also accuracy per kind: key (partly) in the answer's segment, in memory, answer starts a segment")
    ap.add_argument("--no-write", default="", help="key line parts that write nothing, comma-separated: " +
                    ", ".join(KEY_LINE_PARTS))
    args = ap.parse_args()
    no_write = [p for p in args.no_write.split(",") if p]
    unknown = [p for p in no_write if p not in KEY_LINE_PARTS]
    if unknown:
        ap.error(f"--no-write: unknown part {unknown[0]!r} (parts: {', '.join(KEY_LINE_PARTS)})")
    torch.set_num_threads(1)
    model = model_gguf.load(args.model, torch.float32).eval()
    for segments in (int(s) for s in args.segments.split(",")):
        for dilution in (float(d) for d in args.dilution.split(",")):
            right, offsets, first_wrong, repeats, kinds = accuracy(model, segments, dilution, args.streams,
                                                                   args.seed, args.split_zone, no_write,
                                                                   args.prompt_end)
            line = f"segments {segments:>4}  dilution {dilution:>6g}  accuracy {right.mean():.3f} of {args.streams}"
            if args.by_key_offset:
                eighth = model.cfg.segment // 8
                bucket = offsets // eighth
                line += "  by key offset:" + "".join(
                    f" {b * eighth}-{(b + 1) * eighth - 1} {right[bucket == b].mean():.2f}/{(bucket == b).sum()}"
                    for b in range(8) if (bucket == b).any())
            if args.by_answer_token:
                names = [" ", "d1", "d2", "d3", "d4", "d5", "."]
                line += "  first wrong token:" + "".join(
                    f" {names[i]!r} {(first_wrong == i).sum()}" for i in range(7) if (first_wrong == i).any())
                line += (f"  key repeats a digit {right[repeats].mean():.3f}/{repeats.sum()},"
                         f" five distinct {right[~repeats].mean():.3f}/{(~repeats).sum()}")
            if args.by_kind:
                line += "  by kind:" + "".join(f" {k} {right[kinds == k].mean():.2f}/{(kinds == k).sum()}"
                                               for k in ("local", "memory", "edge") if (kinds == k).any())
            print(line, flush=True)


if __name__ == "__main__":
    main()
