"""infini.Model and infini.Session against the `infini` program on the same files and tokens."""
import subprocess

import numpy as np
import pytest

import infini
from conftest import INFINI_CLI, run_cli

TOKENS = [1, 17, 42, 99, 5, 250, 3, 77, 128, 64, 31, 200, 11, 9, 180, 2, 45, 46, 47, 48]


def cli_logits(model, tokens, tmp_path):
    out = tmp_path / "logits.npy"
    run_cli("eval", "-m", model, "--tokens", ",".join(map(str, tokens)), "--logits", out)
    return np.load(out)


def test_devices_and_info(tiny_model):
    assert any(d["usable"] for d in infini.devices())
    model = infini.Model(tiny_model)
    info = model.info
    assert (info["vocab"], info["embd"], info["layers"], info["segment"]) == (300, 64, 2, 16)
    assert info["memory"] and info["state_bytes"] > 0


def test_sessions_of_a_model_share_its_weights(tiny_model, tmp_path):
    model = infini.Model(tiny_model)
    empty = model.device_memory_bytes()
    first = infini.Session(model)
    one = model.device_memory_bytes() - empty
    second = infini.Session(model)
    two = model.device_memory_bytes() - empty
    assert one - (two - one) >= model.info["weight_bytes"] > 0  # the second adds no weights
    second.feed(TOKENS)  # on the shared copy: what infini eval gives
    np.testing.assert_array_equal(second.logits(), cli_logits(tiny_model, TOKENS, tmp_path).reshape(-1))
    del first, second


@pytest.mark.parametrize("which", ["tiny_model", "plain_model"])
def test_logits_equal_infini_eval(which, request, tmp_path):
    path = request.getfixturevalue(which)
    tokens = TOKENS * 3  # past a segment of 16 and past the plain file's context of 32
    session = infini.Session(infini.Model(path))
    session.feed(tokens)
    ours = session.logits()
    assert ours.dtype == np.float32 and ours.shape == (300,)
    np.testing.assert_array_equal(ours, cli_logits(path, tokens, tmp_path).reshape(-1))
    assert session.tokens_seen == len(tokens)


def test_feed_in_calls_equals_one_feed_and_progress_reports_pieces(tiny_model):
    model = infini.Model(tiny_model)
    whole, parts = infini.Session(model), infini.Session(model)
    whole.feed(TOKENS * 2)
    seen = []
    parts.feed(TOKENS[:7])
    parts.feed(TOKENS[7:] + TOKENS, progress=lambda p: seen.append(dict(p)))
    np.testing.assert_array_equal(whole.logits(), parts.logits())
    assert [p["tokens_seen"] for p in seen] == [16, 32, 40]
    assert [p["at_segment_boundary"] for p in seen] == [True, True, False]
    assert seen[-1]["fed"] == seen[-1]["total"] == 33


def test_generation_text_tokens_and_stream_agree(tiny_model):
    model = infini.Model(tiny_model)
    prompt = model.tokenize("hello world")
    results = []
    for mode in ("ids", "text", "stream"):
        s = infini.Session(model)
        s.feed(prompt)
        if mode == "ids":
            results.append(s.generate(12, temperature=0, tokens=True))
        elif mode == "text":
            results.append(s.generate(12, temperature=0))
        else:
            results.append("".join(s.generate(12, temperature=0, stream=True)))
    ids, text, streamed = results
    assert 0 < len(ids) <= 12
    generated = b"".join(model.piece(i) for i in ids)
    assert text == streamed == generated.decode("utf-8", "replace")
    # The bytes `infini run` prints for the same prompt, greedy.
    r = subprocess.run([INFINI_CLI, "run", "-m", tiny_model, "-p", "hello world", "-n", "12", "--temp", "0",
                        "--quiet"], capture_output=True, check=True)
    assert r.stdout.rstrip(b"\n") == generated.rstrip(b"\n")


def test_stream_closed_early_leaves_the_session_as_a_stop_does(tiny_model):
    model = infini.Model(tiny_model)
    a, b = infini.Session(model), infini.Session(model)
    a.feed(TOKENS)
    b.feed(TOKENS)
    stream = a.generate(20, temperature=0, tokens=True, stream=True)
    first = [next(stream) for _ in range(3)]
    stream.close()
    assert first == b.generate(3, temperature=0, tokens=True)
    # Exactly the tokens handed out were fed: the same stream, the same next logits.
    assert a.tokens_seen == b.tokens_seen == len(TOKENS) + 3
    np.testing.assert_array_equal(a.logits(), b.logits())
    with pytest.raises(infini.Error, match="busy"):
        busy = a.generate(5, stream=True)
        next(busy)
        a.feed([1])
    busy.close()
    a.feed([1])  # usable again once the stream is closed


def test_state_bytes_round_trip(tiny_model):
    model = infini.Model(tiny_model)
    s = infini.Session(model)
    s.feed(TOKENS * 2)
    state = s.save()
    assert isinstance(state, bytes) and len(state) > 0
    after = s.generate(10, temperature=0, tokens=True)
    fresh = infini.Session(model)
    fresh.restore(state)
    assert fresh.tokens_seen == 40
    assert fresh.generate(10, temperature=0, tokens=True) == after
    with pytest.raises(infini.Error):
        fresh.restore(state[:-8] + b"garbage!")


def test_errors_are_one_line_exceptions(tiny_model, tmp_path):
    with pytest.raises(infini.Error, match="missing.gguf"):
        infini.Model(str(tmp_path / "missing.gguf"))
    with pytest.raises(TypeError, match="unknown option 'segmnt'"):
        infini.Model(tiny_model, segmnt=8)
    with pytest.raises(TypeError):
        infini.Session(None)
    model = infini.Model(tiny_model)
    s = infini.Session(model)
    with pytest.raises(infini.Error, match="feed at least one token"):
        s.generate(3)
    with pytest.raises(infini.Error, match="feed at least one token"):
        s.logits()
    with pytest.raises(infini.Error) as e:
        s.feed([1, 300])
    assert "\n" not in str(e.value) and "300" in str(e.value)
    assert s.tokens_seen == 0  # a bad id is refused before anything is fed


def test_text_round_trip(tiny_model):
    model = infini.Model(tiny_model)
    ids = model.tokenize("hello world")
    assert model.detokenize(ids) == "hello world"
