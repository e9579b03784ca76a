"""Fixtures of the Python module's tests (run by CTest as infini:python:pytest, with PYTHONPATH at
<build>/python and INFINI_CLI the `infini` program of the same build)."""
import os
import subprocess

import pytest

INFINI_CLI = os.environ.get("INFINI_CLI", "infini")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_cli(*args):
    r = subprocess.run([INFINI_CLI, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, f"infini {' '.join(map(str, args))}: {r.stderr}"
    return r.stdout


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """A random llama file (Infini keys, segment 16) with a SentencePiece vocabulary."""
    path = tmp_path_factory.mktemp("models") / "tiny.gguf"
    run_cli("make-model", "--out", path, "--vocab", 300, "--embd", 64, "--layers", 2, "--heads", 4,
            "--kv-heads", 2, "--ffn", 172, "--segment", 16)
    return str(path)


@pytest.fixture(scope="session")
def plain_model(tmp_path_factory):
    """A random plain llama file (no Infini keys) of context 32: it slides past 32 tokens."""
    path = tmp_path_factory.mktemp("models") / "plain.gguf"
    run_cli("make-model", "--out", path, "--vocab", 300, "--embd", 64, "--layers", 2, "--heads", 4,
            "--kv-heads", 2, "--ffn", 172, "--no-infini", "--context", 32)
    return str(path)
