#!/usr/bin/python3
"""accuracy_by_segments.accuracy's per-stream diagnosis is consistent with its verdicts: a stream has
a first wrong answer token exactly when it is counted wrong, that token is one of the answer's
seven (the space, five digits, the period), and "repeats a digit" matches the key found in the
stream's text; on the shipped model most 4-segment streams are right. With prompts ending anywhere,
each stream's kind (key in the answer's segment, in memory, answer starting a segment) matches the
one read from its text, and both local and memory streams occur.

usage: check_accuracy_by_segments.py MODEL.gguf
"""
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "samples", "passkey"))
import model_gguf  # noqa: E402
import passkey_task as task  # noqa: E402
from accuracy_by_segments import accuracy  # noqa: E402
from train_passkey import DIGIT_IDS, first_digit, make_batch  # noqa: E402

STREAMS = 32


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def kind_from_text(row, segment):
    """The stream's kind read from its tokens: where the question ends and the key's last digit is."""
    question = task.encode_continuation(task.QUESTION)
    end = next(i for i in range(len(row)) if row[i:i + len(question)] == question) + len(question)
    last_digit = max(i for i in range(end) if row[i] in DIGIT_IDS)
    if last_digit >= (end - 1) // segment * segment:
        return "local"
    return "edge" if end % segment == 0 else "memory"


def check_kinds(model):
    seg = model.cfg.segment
    _, _, _, _, kinds = accuracy(model, 4, 1.0, STREAMS, seed=4, prompt_end="anywhere")
    rng = np.random.default_rng(4)
    for b0 in range(0, STREAMS, 16):
        tokens, _, _, _ = make_batch(rng, 4, 16, seg, True, 1.000001, True, fill_only=True)
        for i, row in enumerate(tokens.tolist()):
            said = kind_from_text(row, seg)
            if kinds[b0 + i] != said:
                fail(f"stream {b0 + i}: kind {kinds[b0 + i]}, its text says {said}")
    if not {"local", "memory"} <= set(kinds):
        fail(f"prompts ending anywhere gave only kinds {sorted(set(kinds))}")


def main():
    torch.set_num_threads(1)
    model = model_gguf.load(sys.argv[1], torch.float32).eval()
    right, offsets, first_wrong, repeats, _ = accuracy(model, 4, 1.0, STREAMS, seed=3)
    if not all(len(a) == STREAMS for a in (right, offsets, first_wrong, repeats)):
        fail(f"accuracy returned {[len(a) for a in (right, offsets, first_wrong, repeats)]} values, not {STREAMS} each")
    for b in range(STREAMS):
        if (first_wrong[b] >= 0) != (right[b] == 0):
            fail(f"stream {b}: right {right[b]} but first wrong answer token {first_wrong[b]}")
        if not -1 <= first_wrong[b] <= 6:
            fail(f"stream {b}: first wrong answer token {first_wrong[b]} is not one of the answer's 7")
    # The same streams again (accuracy draws 16 at a time from its seed), keys read from their text.
    rng = np.random.default_rng(3)
    keys = []
    for _ in range(0, STREAMS, 16):
        tokens, _, _, _ = make_batch(rng, 4, 16, model.cfg.segment, True, 1.000001, True, boundary=1.0,
                                     exact=1.0, fill_only=True)
        for row in tokens.tolist():
            f = first_digit(row)
            keys.append("".join(task.VOCAB[i] for i in row[f:f + 5]))
    for b, key in enumerate(keys):
        if bool(repeats[b]) != (len(set(key)) < 5):
            fail(f"stream {b}: key {key} marked repeats={bool(repeats[b])}")
    if right.mean() < 0.75:
        fail(f"only {right.mean():.2f} of {STREAMS} 4-segment streams right")
    check_kinds(model)
    print(f"ok: {int(right.sum())} of {STREAMS} right, {int((first_wrong >= 0).sum())} with a first wrong token, "
          f"{int(repeats.sum())} keys with a repeated digit")


if __name__ == "__main__":
    main()
