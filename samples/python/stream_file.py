#!/usr/bin/env python3
"""Streams a text file through a model from Python and shows that memory stays flat: tokens/s and
device memory per piece, printed as a table and, where matplotlib is installed, plotted.

    PYTHONPATH=build/python python3 samples/python/stream_file.py -m model.gguf -f book.txt [--png out.png]

Any GGUF file infini runs will do; samples/passkey/passkey.gguf (a character vocabulary) is one.
"""
import argparse
import time

import infini


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-m", "--model", required=True)
    ap.add_argument("-f", "--file", required=True, help="text file to stream")
    ap.add_argument("--png", help="where to save the plot (needs matplotlib)")
    ap.add_argument("--devices", help="a pipeline of devices, as infini's --devices takes it")
    args = ap.parse_args()

    model = infini.Model(args.model, devices=args.devices)
    print(f"{args.model}: {model.info['layers']} layers, segment {model.info['segment']}, "
          f"state {model.info['state_bytes'] / 2**20:.1f} MiB per session on {', '.join(model.devices)}")
    with open(args.file, encoding="utf-8", errors="replace") as f:
        ids = model.tokenize(f.read())
    session = infini.Session(model)
    rows = []
    start = last = time.perf_counter()

    def progress(p):
        nonlocal last
        now = time.perf_counter()
        rows.append((p["tokens_seen"], (p["tokens_seen"] - (rows[-1][0] if rows else 0)) / (now - last),
                     model.device_memory_bytes() / 2**20))
        last = now

    session.feed(ids, progress=progress)
    elapsed = time.perf_counter() - start
    print(f"{len(ids)} tokens in {elapsed:.1f} s ({len(ids) / elapsed:,.0f} tokens/s)")
    print("tokens seen   tokens/s   device MiB")
    for seen, rate, mib in rows[:: max(1, len(rows) // 20)]:
        print(f"{seen:11d} {rate:10.0f} {mib:12.1f}")
    print("next:", repr(session.generate(24, temperature=0)))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)")
        return
    fig, (a, b) = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
    a.plot([r[0] for r in rows], [r[1] for r in rows])
    a.set_ylabel("tokens/s")
    b.plot([r[0] for r in rows], [r[2] for r in rows])
    b.set_ylabel("device memory (MiB)")
    b.set_xlabel("tokens of stream")
    b.set_ylim(bottom=0)
    fig.suptitle(f"{args.file} through {args.model}")
    out = args.png or "stream.png"
    fig.savefig(out, dpi=100)
    print(f"plot: {out}")


if __name__ == "__main__":
    main()
