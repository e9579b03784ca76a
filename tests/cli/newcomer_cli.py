#!/usr/bin/env python3
"""The CLI defects a newcomer found (issue 55, items 7 to 13), each checked as it was reported, on
tiny random models (lavapipe: about 25 s):

 7 continuing a saved stream feeds no BOS; an empty prompt after --load-state generates from the
   state as it is;
 8 -f DIR is refused; an empty prompt on a terminal says where it is read from; tokenize --text "";
 9 sampling values and output paths are checked before any work;
10 unknown commands, usage errors naming the command's --help, "not an integer", enum help;
11 quantize: not over its input, --allow-requantize, type names in any case, `quantize IN OUT TYPE`;
12 make-model states the size, refuses what the disk cannot hold, shows progress on large files;
13 -c/--ctx-size, -t/--threads, tokenize -p, bench -m, a random printed seed in run, eval's note;
issue 56: a plain file slides past -c, --ctx-full stop ends there, --sinks refused on Infini files.

Usage: newcomer_cli.py PATH_TO_INFINI
"""
import ast
import os
import pty
import re
import select
import struct
import subprocess
import sys
import tempfile
import time

from cli_checks import check, finish, is_one_line_error, run as run_infini

INFINI = sys.argv[1]
SHAPE = ["--vocab", "512", "--embd", "64", "--layers", "2", "--heads", "4", "--kv-heads", "2", "--ffn", "128",
         "--segment", "8"]


def run(args, **kw):
    return run_infini(INFINI, args, errors="replace", **kw)  # a random model's text is any bytes


def read_npy(path):
    """A float32 .npy as (shape, values), without numpy."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    if data[6] == 1:
        length, start = struct.unpack("<H", data[8:10])[0], 10
    else:
        length, start = struct.unpack("<I", data[8:12])[0], 12
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    assert header["descr"] == "<f4" and not header["fortran_order"], header
    body = data[start + length:]
    return tuple(header["shape"]), struct.unpack(f"<{len(body) // 4}f", body)


def stream_length(stderr):
    found = re.findall(r"stream length (\d+) tokens", stderr)
    return int(found[-1]) if found else None


def ids_of(model, text, bos=True):
    r = run(["tokenize", "-m", model, "--text", text] + ([] if bos else ["--no-bos"]))
    return [int(t) for t in r.stdout.split()] if r.returncode == 0 else None


def item7_no_bos_after_load_state(tmp, model):
    """A stream continued from a saved state reads exactly the new text's tokens (the logits equal
    those of one uninterrupted pass over both parts); an empty prompt feeds nothing."""
    state = os.path.join(tmp, "s.bin")
    first, rest = "Once upon", " a time there"
    r = run(["run", "-m", model, "-p", first, "-n", "0", "--save-state", state])
    ids1, ids2 = ids_of(model, first), ids_of(model, rest, bos=False)
    if not check(r.returncode == 0 and ids1 and ids2, f"item 7: saving a state: {r.stderr.strip()}"):
        return
    cont = os.path.join(tmp, "cont.npy")
    r = run(["run", "-m", model, "--load-state", state, "-p", rest, "-n", "0", "--logits-out", cont])
    check(r.returncode == 0 and stream_length(r.stderr) == len(ids1) + len(ids2),
          f"item 7: continuing adds {len(ids2)} tokens to {len(ids1)}: {r.stderr.strip()!r}")
    ref = os.path.join(tmp, "ref.npy")
    e = run(["eval", "-m", model, "--tokens", ",".join(map(str, ids1 + ids2)), "--logits", ref])
    if check(r.returncode == 0 and e.returncode == 0, f"item 7: eval: {e.stderr.strip()}"):
        (shape_a, a), (shape_b, b) = read_npy(cont), read_npy(ref)
        worst = max(abs(x - y) for x, y in zip(a, b))
        # The state was saved on a segment boundary (8 tokens, segment 8): bit-identical then.
        exact = len(ids1) % 8 == 0
        check(shape_a == shape_b == (512,) and (a == b if exact else worst < 1e-4),
              f"item 7: continued logits differ from one pass over both parts (max {worst})")
        # item 13: eval says what it wrote.
        check(ref in e.stderr and "[512]" in e.stderr, f"item 13: eval says what it wrote: {e.stderr!r}")

    # An empty prompt after --load-state generates from the state as it is: what the run that saved
    # it would have generated next.
    greedy = ["-n", "6", "--temp", "0"]
    whole = run(["run", "-m", model, "-p", first] + greedy)
    resumed = run(["run", "-m", model, "--load-state", state, "-p", ""] + greedy)
    check(whole.returncode == 0 and resumed.returncode == 0 and whole.stdout == resumed.stdout and whole.stdout.strip()
          and stream_length(resumed.stderr) == stream_length(whole.stderr),
          f"item 7: -p '' after --load-state: {resumed.stdout!r} {resumed.stderr!r} vs {whole.stdout!r}")
    # Nothing fed, so no logits to write: refused before the model opens.
    r = run(["run", "-m", model, "--load-state", state, "-p", "", "--logits-out", os.path.join(tmp, "x.npy")])
    check(is_one_line_error(r) and "--logits-out" in r.stderr, f"item 7: --logits-out with nothing fed: {r.stderr!r}")


def item8_input_files_and_terminal(tmp, model):
    for args in (["run", "-m", model, "-f", tmp, "-n", "1"], ["tokenize", "-m", model, "-f", tmp]):
        r = run(args)
        check(is_one_line_error(r) and "is a directory" in r.stderr and not r.stdout,
              f"item 8: {args[0]} -f DIR: exit {r.returncode}, {r.stdout!r} {r.stderr!r}")
    r = run(["tokenize", "-m", model, "--text", ""])
    check(r.returncode == 0 and r.stdout.split() == ["1"], f"item 8: tokenize --text '': {r.stdout!r} {r.stderr!r}")
    r = run(["tokenize", "-m", model, "--text", "", "--no-bos"])
    check(r.returncode == 0 and r.stdout.strip() == "", f"item 8: tokenize --text '' --no-bos: {r.stdout!r}")

    # No prompt with stdin a terminal: one line says where the prompt is read from, then it is read.
    master, slave = pty.openpty()
    p = subprocess.Popen([INFINI, "run", "-m", model, "-n", "2", "--temp", "0", "--quiet"], stdin=slave,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(slave)
    ready, _, _ = select.select([p.stderr], [], [], 10)
    said = os.read(p.stderr.fileno(), 4096).decode(errors="replace") if ready else ""
    os.write(master, b"\x04")  # Ctrl-D: the end of an empty prompt
    try:
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    os.close(master)
    check("reading the prompt from stdin" in said and "Ctrl-D" in said and p.returncode == 0,
          f"item 8: a terminal on stdin: said {said!r}, exit {p.returncode}, {err!r}")


def item9_arguments_before_work(tmp, model):
    """Bad sampling values and output paths are refused at the start: before the model is even
    looked at (a missing model file would otherwise be the error), with nothing written."""
    missing = os.path.join(tmp, "missing.gguf")
    nowhere = os.path.join(tmp, "no-such-folder", "s.bin")
    for args, option in ((["--top-k", "-1"], "--top-k"), (["--top-p", "2"], "--top-p"), (["--top-p", "0"], "--top-p"),
                         (["--temp", "-1"], "--temp"), (["--save-state", nowhere], "--save-state"),
                         (["--logits-out", nowhere], "--logits-out"), (["--save-state", tmp], "--save-state")):
        r = run(["run", "-m", missing, "-p", "x"] + args)
        check(is_one_line_error(r) and r.returncode == 2 and option in r.stderr and "missing.gguf" not in r.stderr,
              f"item 9: run {' '.join(args)}: exit {r.returncode}, {r.stderr!r}")
    # On a real model and input too, nothing is fed or written.
    r = run(["run", "-m", model, "-p", "x" * 200, "--save-state", nowhere])
    check(is_one_line_error(r) and "prefill" not in r.stderr and not os.path.exists(os.path.dirname(nowhere)),
          f"item 9: --save-state into a missing folder: {r.stderr!r}")
    r = run(["eval", "-m", missing, "--tokens", "1,2", "--logits", nowhere])
    check(is_one_line_error(r) and "--logits" in r.stderr and "missing.gguf" not in r.stderr,
          f"item 9: eval --logits into a missing folder: {r.stderr!r}")


def item10_usage_errors_and_help(model):
    r = run(["foo"])
    check(is_one_line_error(r) and r.returncode == 2 and "unknown command 'foo'" in r.stderr
          and "infini --help" in r.stderr, f"item 10: unknown command: {r.stderr!r}")
    r = run(["rope", "foo"])
    check(is_one_line_error(r) and "unknown command 'foo'" in r.stderr and "infini rope --help" in r.stderr,
          f"item 10: unknown rope command: {r.stderr!r}")
    r = run(["run", "-m", model, "-n", "abc"])
    check(is_one_line_error(r) and r.returncode == 2 and "'abc' is not an integer" in r.stderr
          and r.stderr.startswith("infini run: error:") and "(see infini run --help)" in r.stderr,
          f"item 10: -n abc: {r.stderr!r}")
    r = run(["quantize", model])
    check(is_one_line_error(r) and "(see infini quantize --help)" in r.stderr, f"item 10: quantize usage: {r.stderr!r}")
    r = run(["tokenize", "-m", model, "--text", "x", "-f", model])
    check(is_one_line_error(r) and r.returncode == 2 and "(see infini tokenize --help)" in r.stderr,
          f"item 10: tokenize usage: {r.stderr!r}")
    for args in (["quantize", "--help"], ["run", "--help"], ["bench", "--help"], ["make-model", "--help"],
                 ["rope", "freqs", "--help"], ["attention", "--help"]):
        h = run(args).stdout
        check("->" not in h and "{," not in h and ",}" not in h, f"item 10: {args[0]} help shows enum internals")
    h = run(["run", "--help"]).stdout
    check("auto|on|off" in h and "llama architecture" not in h and "qwen3" in h, "item 10: run help")
    check("q8_0|q4_0|q4_k_m|q5_k_m|q6_k" in run(["quantize", "--help"]).stdout, "item 10: quantize --type help")


def item11_quantize(tmp, model):
    with open(model, "rb") as f:
        before = f.read()
    r = run(["quantize", model, model, "--type", "q8_0"])
    with open(model, "rb") as f:
        check(is_one_line_error(r) and f.read() == before, f"item 11: quantize IN IN: {r.stderr!r}")
    r = run(["quantize", model, os.path.join(tmp, ".", os.path.basename(model)), "q8_0"])
    check(is_one_line_error(r), f"item 11: quantize IN ./IN: {r.stderr!r}")
    q8 = os.path.join(tmp, "q8.gguf")
    r = run(["quantize", model, q8, "Q8_0"])  # llama-quantize's form, in capitals
    check(r.returncode == 0 and "quantized as q8_0" in r.stdout, f"item 11: quantize IN OUT Q8_0: {r.stderr!r}")
    r = run(["quantize", model, os.path.join(tmp, "k.gguf"), "--type", "Q4_K_M"])
    check(r.returncode == 0 and "quantized as q4_k_m" in r.stdout, f"item 11: --type Q4_K_M: {r.stderr!r}")
    r = run(["quantize", model, os.path.join(tmp, "k.gguf"), "q8_0", "--type", "q4_0"])
    check(is_one_line_error(r), f"item 11: the type twice: {r.stderr!r}")
    again = os.path.join(tmp, "q4.gguf")
    r = run(["quantize", q8, again, "--type", "q4_0"])
    check(is_one_line_error(r) and "--allow-requantize" in r.stderr and not os.path.exists(again),
          f"item 11: requantizing: {r.stderr!r}")
    r = run(["quantize", q8, again, "--type", "q4_0", "--allow-requantize"])
    check(r.returncode == 0 and os.path.exists(again), f"item 11: --allow-requantize: {r.stderr!r}")


def item12_make_model_size(tmp):
    out = os.path.join(tmp, "huge.gguf")
    t0 = time.time()
    try:
        r = run(["make-model", "--out", out, "--vocab", "100000000", "--embd", "4096", "--heads", "32",
                 "--kv-heads", "8"], timeout=20)
    except subprocess.TimeoutExpired:
        r = subprocess.CompletedProcess([], -9, "", "(still running after 20 s)")
    took = time.time() - t0
    check(is_one_line_error(r) and "TiB" in r.stderr and took < 10 and not os.path.exists(out)
          and not [n for n in os.listdir(tmp) if n.startswith(".huge.gguf")],
          f"item 12: 1.6 TB model: exit {r.returncode} after {took:.1f} s, {r.stderr!r}")
    small = os.path.join(tmp, "small.gguf")
    r = run(["make-model", "--out", small] + SHAPE)
    check(r.returncode == 0 and re.match(r"writing .*small\.gguf: [\d.]+ KiB of weights \(vocab 512 x embd 64", r.stderr)
          and "making" not in r.stderr, f"item 12: the size stated first, no progress: {r.stderr!r}")
    # Over 256 MiB: progress as a percentage on stderr.
    big = os.path.join(tmp, "big.gguf")
    r = run(["make-model", "--out", big, "--vocab", "40000", "--embd", "1024", "--layers", "1", "--heads", "8",
             "--kv-heads", "1", "--ffn", "64"])
    # (text mode reads the progress line's carriage returns as newlines)
    check(r.returncode == 0 and "MiB of weights" in r.stderr and r.stderr.count("making") >= 3
          and r.stderr.rstrip().endswith(": 100%")
          and os.path.getsize(big) == int(r.stdout.split(": ")[1].split(" ")[0]), f"item 12: progress: {r.stderr[-200:]!r}")
    if os.path.exists(big):
        os.remove(big)


def max_threads(args, env):
    """The most threads the process had at once (lavapipe starts LP_NUM_THREADS workers per pool)."""
    p = subprocess.Popen([INFINI] + args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    most = 0
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                most = max([most] + [int(line.split()[1]) for line in f if line.startswith("Threads:")])
        except (OSError, ValueError):
            pass
        time.sleep(0.005)
    return most, p.returncode


def item13_conventions(tmp, model, plain):
    # -c on a file without Infini tensors is the segment length: the same logits as --segment.
    prompt = "one two three four five six seven eight nine ten eleven twelve"
    logits = {}
    for name, args in (("c", ["-c", "8"]), ("segment", ["--segment", "8"]), ("default", [])):
        out = os.path.join(tmp, f"ctx-{name}.npy")
        r = run(["run", "-m", plain, "-p", prompt, "-n", "0", "--quiet", "--logits-out", out] + args)
        check(r.returncode == 0, f"item 13: run {args}: {r.stderr.strip()}")
        logits[name] = read_npy(out)[1] if r.returncode == 0 else None
    check(logits["c"] is not None and logits["c"] == logits["segment"] and logits["c"] != logits["default"],
          "item 13: -c 8 is --segment 8 on a file without Infini tensors")
    r = run(["run", "-m", model, "-c", "8", "-p", "x"])
    check(is_one_line_error(r) and f"--ctx-size: {model} is an Infini-attention model whose context is unbounded; "
          "set its local span with --segment" in r.stderr, f"item 13: -c on an Infini model: {r.stderr!r}")
    # ... unless --memory off asks for its local attention alone, windowed.
    r = run(["run", "-m", model, "-c", "8", "--memory", "off", "-p", prompt, "-n", "4", "--temp", "0"])
    check(r.returncode == 0 and "context 8 tokens, then sliding with 4 sinks" in r.stderr,
          f"issue 56: an Infini model's local attention alone as a sliding window: {r.stderr!r}")
    r = run(["run", "-m", model, "--sinks", "2", "-p", "x"])
    check(is_one_line_error(r) and "(--memory off -c C gives it one)" in r.stderr,
          f"issue 56: --sinks on an Infini model: {r.stderr!r}")
    r = run(["run", "-m", plain, "-c", "8", "--segment", "8", "-p", "x"])
    check(is_one_line_error(r), f"item 13: -c with --segment: {r.stderr!r}")
    r = run(["run", "-m", plain, "-c", "8", "--memory", "on", "-p", "x"])
    check(is_one_line_error(r), f"item 13: -c with --memory on: {r.stderr!r}")

    # Issue 56: a plain file slides past -c unless --ctx-full stop ends generation at the context.
    r = run(["run", "-m", plain, "-c", "16", "-p", "one two", "-n", "40", "--temp", "0", "--seed", "1"])
    check(r.returncode == 0 and "context 16 tokens, then sliding with 4 sinks" in r.stderr
          and "stream length 4" in r.stderr, f"issue 56: -c 16 slides on: {r.stderr!r}")
    r = run(["run", "-m", plain, "-c", "16", "--ctx-full", "stop", "-p", "one two", "-n", "40", "--temp", "0",
             "--seed", "1"])
    check(r.returncode == 0 and "stopped: the context of 16 tokens is full" in r.stderr
          and "stream length 16 tokens" in r.stderr, f"issue 56: --ctx-full stop ends at the context: {r.stderr!r}")
    r = run(["run", "-m", plain, "-c", "6", "--ctx-full", "stop", "-p", prompt])
    check(is_one_line_error(r) and "more than the context of 6" in r.stderr, f"issue 56: input past C: {r.stderr!r}")
    chat = ["run", "-m", plain, "--chat", "--chat-template", "chatml", "--ctx-full", "stop", "--temp", "0", "--seed", "1"]
    r = run(chat + ["-c", "200", "-n", "400"], input="hi\nand then?\n")
    check(r.returncode == 0 and r.stderr.count("stopped: the context of 200 tokens is full") == 1
          and "stream length 200 tokens" in r.stderr, f"issue 56: a chat reply ends at the context: {r.stderr!r}")
    r = run(chat + ["-c", "20", "-n", "4", "--quiet"], input="a first message longer than the context\n")
    check(is_one_line_error(r) and "message 1 makes a stream of" in r.stderr and "context of 20" in r.stderr,
          f"issue 56: a chat message past C: {r.stderr!r}")
    r = run(["run", "-m", model, "--chat", "--chat-template", "chatml", "--ctx-full", "stop"], input="hi\n")
    check(is_one_line_error(r) and "whose context never fills" in r.stderr, f"issue 56: chat --ctx-full on Infini: {r.stderr!r}")
    r = run(["run", "-m", model, "--sinks", "2", "-p", "x"])
    check(is_one_line_error(r) and "no sliding context" in r.stderr, f"issue 56: --sinks on an Infini file: {r.stderr!r}")

    # -t sets lavapipe's threads unless LP_NUM_THREADS does.
    env = {k: v for k, v in os.environ.items() if k != "LP_NUM_THREADS"}
    base = ["run", "-m", model, "-p", "x", "-n", "2", "--temp", "0", "--quiet"]
    one, code1 = max_threads(base + ["-t", "1"], env)
    six, code6 = max_threads(base + ["-t", "6"], env)
    preset, code_p = max_threads(base + ["-t", "6"], dict(env, LP_NUM_THREADS="1"))
    check(code1 == code6 == code_p == 0 and six >= one + 5 and preset == one,
          f"item 13: -t: {one} threads with -t 1, {six} with -t 6, {preset} with LP_NUM_THREADS=1 -t 6")
    for bad in ("0", "abc"):
        r = run(base + ["-t", bad])
        check(is_one_line_error(r) and "--threads" in r.stderr, f"item 13: -t {bad}: {r.stderr!r}")

    # tokenize -p, bench -m.
    check(run(["tokenize", "-m", model, "-p", "Hello"]).stdout == run(["tokenize", "-m", model, "--text", "Hello"]).stdout
          != "", "item 13: tokenize -p")
    r = run(["bench", "-m", model, "--workload", "model", "--prefill", "8", "--decode", "2", "--repeat", "1"])
    check(r.returncode == 0 and '"workload":"model"' in r.stdout, f"item 13: bench -m: {r.stderr!r}")

    # run draws a seed when none is given and prints it; --seed N repeats that run.
    sampled = ["run", "-m", model, "-p", "Once upon a time", "-n", "16", "--temp", "1.5", "--top-k", "0"]
    a, b = run(sampled), run(sampled)
    seeds = [re.findall(r"^seed (\d+)$", x.stderr, re.M) for x in (a, b)]
    if check(a.returncode == b.returncode == 0 and len(seeds[0]) == len(seeds[1]) == 1 and seeds[0] != seeds[1],
             f"item 13: a random seed printed: {seeds} {a.stderr!r}"):
        again = run(sampled + ["--seed", seeds[0][0]])
        check(again.returncode == 0 and again.stdout == a.stdout and f"seed {seeds[0][0]}" in again.stderr,
              f"item 13: --seed {seeds[0][0]} repeats: {again.stdout!r} vs {a.stdout!r}")
    q = run(sampled + ["--quiet", "--seed", "3"])
    check(q.returncode == 0 and q.stderr == "", f"item 13: --quiet prints no seed: {q.stderr!r}")


with tempfile.TemporaryDirectory() as tmp:
    model, plain = os.path.join(tmp, "m.gguf"), os.path.join(tmp, "plain.gguf")
    made = run(["make-model", "--out", model] + SHAPE)
    made_plain = run(["make-model", "--out", plain, "--no-infini"] + SHAPE)
    if made.returncode or made_plain.returncode:
        sys.exit("make-model failed: " + made.stderr + made_plain.stderr)
    for name, test in (("item 7", lambda: item7_no_bos_after_load_state(tmp, model)),
                       ("item 8", lambda: item8_input_files_and_terminal(tmp, model)),
                       ("item 9", lambda: item9_arguments_before_work(tmp, model)),
                       ("item 10", lambda: item10_usage_errors_and_help(model)),
                       ("item 11", lambda: item11_quantize(tmp, model)),
                       ("item 12", lambda: item12_make_model_size(tmp)),
                       ("item 13", lambda: item13_conventions(tmp, model, plain))):
        t0 = time.time()
        test()
        print(f"{name}: {time.time() - t0:.1f} s", flush=True)

finish("newcomer cli")
