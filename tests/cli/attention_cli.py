#!/usr/bin/env python3
"""`infini attention` end to end: .npy in and out against an independent NumPy float64
implementation of docs/design.md §1, and one-line errors with a non-zero exit for bad input.

Usage: attention_cli.py PATH_TO_INFINI
"""
import os
import sys
import tempfile

import numpy as np

from attention_float64 import nmse, reference
from cli_checks import check, finish, run as run_infini

INFINI = sys.argv[1]


def run(args):
    return run_infini(INFINI, ["attention", *args])


with tempfile.TemporaryDirectory() as tmp:
    P = lambda name: os.path.join(tmp, name)
    rng = np.random.default_rng(7)
    T, hq, hkv, d, n = 77, 4, 2, 64, 20
    q = rng.uniform(-1.5, 1.5, (T, hq, d))
    k = rng.uniform(-1.5, 1.5, (T, hkv, d))
    v = rng.uniform(-1, 1, (T, hkv, d))
    beta = rng.uniform(-2, 2, hq)

    for dtype, tol in ((np.float32, 1e-6), (np.float16, 1e-4)):
        for update in ("delta", "linear"):
            qs, ks, vs = (a.astype(dtype) for a in (q, k, v))
            for name, a in (("q", qs), ("k", ks), ("v", vs)):
                np.save(P(name + ".npy"), a)
            np.save(P("b.npy"), beta.astype(np.float32))
            r = run(["--q", P("q.npy"), "--k", P("k.npy"), "--v", P("v.npy"), "--beta", P("b.npy"),
                     "--segment", str(n), "--update", update, "--out", P("o.npy"),
                     "--memory-out", P("m.npy"), "--norm-out", P("z.npy")])
            check(r.returncode == 0, f"{dtype.__name__} {update}: exit {r.returncode}: {r.stderr.strip()}")
            if r.returncode:
                continue
            out, M, z = reference(qs.astype(np.float64), ks.astype(np.float64), vs.astype(np.float64),
                                  beta.astype(np.float32).astype(np.float64), n, update)
            got = np.load(P("o.npy"))
            check(got.dtype == np.float32 and got.shape == (T, hq, d), f"output dtype/shape {got.dtype} {got.shape}")
            e_out, e_m, e_z = nmse(got, out), nmse(np.load(P("m.npy")), M), nmse(np.load(P("z.npy")), z)
            print(f"{dtype.__name__} {update}: nmse out {e_out:.2e} M {e_m:.2e} z {e_z:.2e}")
            check(max(e_out, e_m, e_z) <= tol, f"{dtype.__name__} {update}: nmse above {tol}")

    # The memory's conventions of the public implementations (docs/design.md §1.8), each against
    # the NumPy reference under the same choices and unlike the default's output.
    default_out = reference(q, k, v, beta.astype(np.float32).astype(np.float64), n, "linear")[0]
    for name, flags, conv, gates in (
            ("beomi", ["--head-map", "modulo"], dict(head_map="modulo"), beta),
            ("lucidrains", ["--gate-sign", "local", "--first-segment", "local"], dict(gate_sense="local", first="local"),
         beta),
            ("dingo", ["--gate-shape", "head_value", "--z-init", str(1 / d)], dict(z_init=np.float32(1 / d)),
             rng.uniform(-2, 2, (hq, d))),
            ("jlamprou", ["--memory-rope", "after", "--gate-shape", "layer", "--eps", "0.5", "--eps-mode", "add"],
             dict(memory_rope="after", eps=0.5, eps_mode="add"), rng.uniform(-2, 2, 1))):
        for a, arr in (("q", q), ("k", k), ("v", v)):
            np.save(P(a + ".npy"), arr.astype(np.float32))
        np.save(P("b.npy"), gates.astype(np.float32))
        r = run(["--q", P("q.npy"), "--k", P("k.npy"), "--v", P("v.npy"), "--beta", P("b.npy"),
                 "--segment", str(n), "--update", "linear", "--out", P("o.npy"), "--memory-out", P("m.npy"),
                 "--norm-out", P("z.npy"), *flags])
        check(r.returncode == 0, f"{name}: exit {r.returncode}: {r.stderr.strip()}")
        if r.returncode:
            continue
        out, M, z = reference(q.astype(np.float32).astype(np.float64), k.astype(np.float32).astype(np.float64),
                              v.astype(np.float32).astype(np.float64), gates.astype(np.float32).astype(np.float64),
                              n, "linear", **conv)
        got = np.load(P("o.npy"))
        e_out, e_m, e_z = nmse(got, out), nmse(np.load(P("m.npy")), M), nmse(np.load(P("z.npy")), z)
        print(f"{name} conventions: nmse out {e_out:.2e} M {e_m:.2e} z {e_z:.2e}; "
              f"against the default's {nmse(got, default_out):.2e}")
        check(max(e_out, e_m, e_z) <= 1e-6, f"{name} conventions: nmse above 1e-6")
        check(nmse(got, default_out) > 1e-4, f"{name} conventions: the output is the default's")

    # Bad input: one line on stderr naming the problem, non-zero exit, never a crash.
    np.save(P("q.npy"), q.astype(np.float32))
    np.save(P("k.npy"), k.astype(np.float32))
    np.save(P("v.npy"), v.astype(np.float32))
    np.save(P("b.npy"), beta.astype(np.float32))
    np.save(P("q64.npy"), q)
    np.save(P("q2d.npy"), q[:, 0].astype(np.float32))
    np.save(P("q3h.npy"), rng.uniform(-1, 1, (T, 3, d)).astype(np.float32))
    np.save(P("kshort.npy"), k[:-1].astype(np.float32))
    np.save(P("qbig.npy"), np.asfortranarray(q.astype(np.float32)))
    with open(P("q.npy"), "rb") as f:
        whole = f.read()
    with open(P("trunc.npy"), "wb") as f:
        f.write(whole[:200])
    with open(P("hostile.npy"), "wb") as f:
        header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776, 4), }"
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header)
    base = {"--q": P("q.npy"), "--k": P("k.npy"), "--v": P("v.npy"), "--beta": P("b.npy"), "--out": P("o.npy")}
    cases = [
        ({"--q": P("q64.npy")}, [], "dtype"),
        ({"--q": P("q2d.npy")}, [], "shape"),
        ({"--q": P("q3h.npy")}, [], "multiple"),
        ({"--k": P("kshort.npy")}, [], "tokens"),
        ({"--q": P("qbig.npy")}, [], "ortran"),
        ({"--q": P("trunc.npy")}, [], "trunc"),
        ({"--q": P("hostile.npy")}, [], "overflow"),
        ({"--q": P("missing.npy")}, [], "missing.npy"),
        ({}, ["--rope-dim", "3"], "even"),
        ({}, ["--rope-layout", "diagonal"], "diagonal"),
        ({}, ["--segment", "0"], "segment"),
        ({}, ["--gate-shape", "head_value"], "[Hq,Dv]"),
        ({}, ["--eps", "0"], "eps"),
        ({}, ["--memory-rope", "during"], "during"),
    ]
    for override, extra, phrase in cases:
        files = dict(base, **override)
        args = [x for kv in files.items() for x in kv] + extra
        r = run(args)
        lines = r.stderr.strip().splitlines()
        what = f"bad input {override or extra}"
        check(r.returncode != 0 and r.returncode < 128, f"{what}: exit {r.returncode}")
        check(len(lines) == 1, f"{what}: stderr has {len(lines)} lines: {r.stderr!r}")
        check(phrase.lower() in r.stderr.lower(), f"{what}: '{phrase}' not in {r.stderr.strip()!r}")

finish("attention CLI")
