#!/usr/bin/env python3
"""A plain file's context in `infini serve` (project issue 56), on lavapipe with a tiny random file
without Infini tensors, from Python over HTTP:

- `-c C`: a completion whose prompt and reply cross C slides on, and its greedy text is what
  `infini run -c C` writes for the same prompt; session objects state the context and the sinks;
- `--ctx-full stop`: a prompt, or an append to a session, that would pass C is refused with
  OpenAI's 400 `context_length_exceeded` (streamed requests too, before their stream starts), and
  generation ends at C with finish_reason "length";
- `-c`, `--sinks` and `--ctx-full stop` on an Infini-attention file are refused with one line.

Usage: serve_context.py PATH_TO_INFINI   (about 15 s)
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Replica, check, events, failures, request  # noqa: E402

INFINI = os.path.abspath(sys.argv[1])
C = 64
SHAPE = ["--vocab", "512", "--embd", "64", "--layers", "2", "--heads", "4", "--kv-heads", "2", "--ffn", "128",
         "--seed", "11", "--tokenizer", "gpt2", "--pre", "qwen2"]
PROMPT = "The river runs past the mill and on to the sea"


def infini(*args, **kw):
    return subprocess.run([INFINI, *args], capture_output=True, text=True, errors="replace", **kw)


def exceeded(status, body):
    e = body.get("error", {}) if isinstance(body, dict) else {}
    return status == 400 and e.get("code") == "context_length_exceeded" and "context is %d tokens" % C in e.get("message", "")


def sliding(plain, tmp):
    prompt_tokens = len(infini("tokenize", "-m", plain, "-p", PROMPT).stdout.split())
    reply = C + 8 - prompt_tokens  # the stream passes C by 8 tokens
    check(0 < prompt_tokens < C, "the prompt is %d tokens, under C" % prompt_tokens)
    rep = Replica(INFINI, plain, os.path.join(tmp, "store-slide"), ["-c", str(C)])
    try:
        s, c = request(rep.port, "POST", "/v1/completions", {"prompt": PROMPT, "max_tokens": reply, "temperature": 0})
        run = infini("run", "-m", plain, "-c", str(C), "-p", PROMPT, "-n", str(reply), "--temp", "0", "--quiet")
        check(s == 200 and c["usage"]["completion_tokens"] == reply and c["choices"][0]["finish_reason"] == "length"
              and run.returncode == 0 and run.stdout == c["choices"][0]["text"] + "\n",
              "a completion crossing C slides on, as `infini run -c %d` does (%r vs %r)"
              % (C, c.get("choices", [{}])[0].get("text"), run.stdout))
        s, sess = request(rep.port, "POST", "/v1/sessions")
        check(s == 201 and sess.get("context") == C and sess.get("sinks") == 4 and sess.get("device_state_bytes", 0) > 0,
              "a session states the context and the sinks: %r" % sess)
    finally:
        rep.stop()


def stopping(plain, tmp):
    rep = Replica(INFINI, plain, os.path.join(tmp, "store-stop"), ["-c", str(C), "--ctx-full", "stop"])
    try:
        p = rep.port
        s, body = request(p, "POST", "/v1/completions", {"prompt": list(range(1, C + 2)), "max_tokens": 1})
        check(exceeded(s, body), "a prompt past C: 400 context_length_exceeded (%d %r)" % (s, body))
        s, evs = events(p, "/v1/completions", {"prompt": list(range(1, C + 2)), "max_tokens": 1})
        check(exceeded(s, evs[0]), "... streamed too, before the stream starts (%d %r)" % (s, evs[0]))
        s, c = request(p, "POST", "/v1/completions", {"prompt": list(range(1, C - 9)), "max_tokens": 40, "temperature": 0})
        check(s == 200 and c["usage"]["completion_tokens"] == 10 and c["choices"][0]["finish_reason"] == "length",
              "a completion ends at C with finish_reason length (%r)" % c.get("usage"))

        sid = request(p, "POST", "/v1/sessions")[1]["id"]
        s, a = request(p, "POST", "/v1/sessions/%s/append" % sid, {"tokens": list(range(1, C - 3))})
        check(s == 200 and a["tokens_seen"] == C - 4, "an append under C is taken (%d %r)" % (s, a))
        s, g = request(p, "POST", "/v1/sessions/%s/generate" % sid, {"max_tokens": 10, "temperature": 0})
        check(s == 200 and len(g["tokens"]) == 4 and g["finish_reason"] == "length" and g["tokens_seen"] == C,
              "a session's generation ends at C (%r)" % {k: g.get(k) for k in ("tokens", "finish_reason", "tokens_seen")})
        s, body = request(p, "POST", "/v1/sessions/%s/append" % sid, {"tokens": [7]})
        check(exceeded(s, body), "an append past C: 400 context_length_exceeded (%d %r)" % (s, body))
        s, evs = events(p, "/v1/sessions/%s/append" % sid, {"text": "more"})
        check(exceeded(s, evs[0]), "... a streamed text append too (%d %r)" % (s, evs[0]))
        s, st = request(p, "GET", "/v1/sessions/" + sid)
        check(s == 200 and st["tokens_seen"] == C and st["version"] == g["version"],
              "nothing refused was committed (%r)" % st)
    finally:
        rep.stop()


def refusals(infini_model, tmp):
    for extra, what in ((["-c", "32"], "--ctx-size"), (["--sinks", "2"], "--sinks"), (["--ctx-full", "stop"], "--ctx-full")):
        r = infini("serve", "-m", infini_model, "--port", "0", "--store", os.path.join(tmp, "never"), *extra, timeout=120)
        check(r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1 and what in r.stderr
              and not os.path.exists(os.path.join(tmp, "never")),
              "serve %s on an Infini file is refused with one line (%r)" % (" ".join(extra), r.stderr))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        plain, model = os.path.join(tmp, "plain.gguf"), os.path.join(tmp, "infini.gguf")
        for path, extra in ((plain, ["--no-infini"]), (model, ["--segment", "16"])):
            r = infini("make-model", "--out", path, *SHAPE, *extra)
            if r.returncode:
                sys.exit("make-model failed: " + r.stderr)
        sliding(plain, tmp)
        stopping(plain, tmp)
        refusals(model, tmp)
    print("serve_context:", "FAILED (%d)" % len(failures) if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
