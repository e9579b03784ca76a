#!/usr/bin/python3
"""train_passkey.make_batch's stream options place what they say: with boundary=1 and exact=1
every prompt ends on a segment's end; with split=1 every key's first digit lies in the last
SPLIT_ZONE tokens of its segment (the last `zone` tokens when given); with drop=1 every stream writes exactly one part of its key line
(prefix, key, middle, key, tail: one whole part, found by its text) with weight 0, and nothing else;
with drop_first=1 every stream writes nothing of its key line before the key's second copy.

usage: check_training_streams.py
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "samples", "passkey"))
import passkey_task as task  # noqa: E402
from train_passkey import SPLIT_ZONE, first_digit, key_line_parts, make_batch  # noqa: E402

SEGMENT = 64
PIECE = {i: p for i, p in enumerate(task.VOCAB)}


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def text(ids):
    return "".join(PIECE[int(i)] for i in ids).replace(task.SPACE, " ")


def main():
    rng = np.random.default_rng(0)
    tokens, weights, _, write = make_batch(rng, 6, 32, SEGMENT, True, 64.0, True, boundary=1.0, exact=1.0,
                                           fill_only=True, split=1.0, drop=1.0)
    parts = key_line_parts()
    spans = {span: name for name, span in parts.items()}
    line_text = task.KEY_LINE.format(key="#####")
    dropped_parts = set()
    for b in range(tokens.shape[0]):
        ids = tokens[b].tolist()
        answer = (weights[b, :-1] >= 1.0).nonzero().flatten()
        prompt_end = int(answer[0]) + 1  # weight at t scores token t + 1: the answer starts there
        if prompt_end % SEGMENT:
            fail(f"stream {b}: prompt ends at {prompt_end}, not on a segment's end (exact=1)")
        f = first_digit(ids)
        if f % SEGMENT < SEGMENT - SPLIT_ZONE:
            fail(f"stream {b}: key's first digit at offset {f % SEGMENT} of its segment (split=1)")
        zero = (write[b] == 0).nonzero().flatten().tolist()
        if not zero or zero != list(range(zero[0], zero[-1] + 1)):
            fail(f"stream {b}: write weight 0 at {zero}, not one span (drop=1)")
        line = f - parts["key1"][0]
        span = (zero[0] - line, zero[-1] + 1 - line)
        if span not in spans:
            fail(f"stream {b}: dropped span {span} of the key line is not one of its parts")
        got = text(ids[zero[0]:zero[-1] + 1])
        want = line_text[span[0]:span[1]]
        if want != "#####" and got != want:
            fail(f"stream {b}: dropped {got!r}, expected the key line's part {want!r}")
        dropped_parts.add(spans[span])
    if len(dropped_parts) < 3:
        fail(f"32 streams dropped only {len(dropped_parts)} distinct parts of the key line")
    tokens, _, _, write = make_batch(rng, 4, 16, SEGMENT, True, 64.0, True, drop_first=1.0)
    second_key = parts["key2"][0]
    for b in range(tokens.shape[0]):
        line = first_digit(tokens[b].tolist()) - parts["key1"][0]
        zero = (write[b] == 0).nonzero().flatten().tolist()
        if zero != list(range(line, line + second_key)):
            fail(f"stream {b}: drop_first=1 zeroed {zero[:3]}..{zero[-3:]}, not the key line's first "
                 f"{second_key} tokens from {line}")
    zone = 40
    tokens, _, _, _ = make_batch(rng, 3, 32, 256, True, 64.0, True, split=1.0, zone=zone)
    offsets = [first_digit(row.tolist()) % 256 for row in tokens]
    if min(offsets) < 256 - zone:
        fail(f"split=1, zone={zone}: a key's first digit at offset {min(offsets)} of its 256-token segment")
    if min(offsets) >= 256 - SPLIT_ZONE:
        fail(f"split=1, zone={zone}: all 32 keys' first digits in the last {SPLIT_ZONE} tokens (zone ignored)")
    print(f"ok: {len(dropped_parts)} distinct key-line parts dropped over 32 streams, prompts on boundaries, "
          f"keys in the split zone (also a wider one); drop_first zeroes the key line up to its second copy")


if __name__ == "__main__":
    main()
