"""Ctrl-C between pieces of a long call, and the shipped passkey model's answer from Python."""
import os
import sys
import threading
import _thread

import pytest

import infini
from conftest import ROOT


def test_ctrl_c_in_a_progress_callback_stops_the_feed_after_that_piece(tiny_model):
    s = infini.Session(infini.Model(tiny_model))

    def progress(p):
        if p["tokens_seen"] == 32:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        s.feed([5] * 160, progress=progress)
    assert s.tokens_seen == 32
    s.feed([5])  # still usable
    assert s.tokens_seen == 33


def test_ctrl_c_during_a_long_feed_without_callback(tiny_model):
    s = infini.Session(infini.Model(tiny_model))
    total = 16 * 200000  # far more than 0.3 s of feeding on any device: the interrupt stops it
    timer = threading.Timer(0.3, _thread.interrupt_main)  # what Ctrl-C does to the main thread
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            s.feed([7] * total)
    finally:
        timer.cancel()
    assert 0 < s.tokens_seen < total and s.tokens_seen % 16 == 0  # stopped on a piece's end
    s.feed([7])


def test_passkey_model_answers_from_python():
    sys.path.insert(0, os.path.join(ROOT, "samples", "passkey"))
    import passkey_task as task

    model = infini.Model(os.path.join(ROOT, "samples", "passkey", "passkey.gguf"))
    s = infini.Session(model)
    key = "58213"
    prompt = task.encode(task.passkey_text(task.filler_for_length(2000), 0.5, key))
    s.feed(prompt)
    answer = s.generate(7, temperature=0)
    assert answer.strip().startswith(key), f"the model answered {answer!r} for key {key}"
