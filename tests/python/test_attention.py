"""infini.InfiniAttention on NumPy arrays against the float64 reference the CLI's check uses."""
import os
import sys

import numpy as np
import pytest

import infini

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cli"))
from attention_float64 import nmse, reference  # noqa: E402


@pytest.mark.parametrize("dtype,bound", [("float32", 1e-9), ("float16", 1e-5)])
@pytest.mark.parametrize("update", ["delta", "linear"])
def test_layer_matches_float64_over_segments(dtype, bound, update):
    rng = np.random.default_rng(5)
    hq, hkv, d, dv, n, t = 4, 2, 16, 8, 32, 100  # three segments and a part
    q = rng.standard_normal((t, hq, d)).astype(np.float32)
    k = rng.standard_normal((t, hkv, d)).astype(np.float32)
    v = rng.standard_normal((t, hkv, dv)).astype(np.float32)
    beta = np.array([0.5, -1.0, 2.0, 0.0])
    layer = infini.InfiniAttention(hq, hkv, d, dv, beta.tolist(), segment=n, update=update, dtype=dtype)
    # In two calls that cut a segment: the layer keeps its state between them.
    out = np.concatenate([layer(q[:45], k[:45], v[:45]), layer(q[45:], k[45:], v[45:])])
    assert out.shape == (t, hq, dv) and out.dtype == np.float32
    if dtype == "float16":  # the reference sees what the device was sent
        q, k, v = (x.astype(np.float16).astype(np.float64) for x in (q, k, v))
    want, m, _ = reference(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), beta, n, update)
    assert nmse(out.astype(np.float64), want) < bound
    assert layer.tokens_processed == t and layer.segments_written == 3
    assert nmse(layer.memory().astype(np.float64), m_after_full_segments(q, k, v, beta, n, update)) < bound


def m_after_full_segments(q, k, v, beta, n, update):
    """The memory after the whole segments only (the open one is not written yet)."""
    full = (len(q) // n) * n
    return reference(q[:full].astype(np.float64), k[:full].astype(np.float64), v[:full].astype(np.float64),
                     beta, n, update)[1]


def test_bad_shapes_raise():
    layer = infini.InfiniAttention(2, 1, 8, 8, [0.0, 0.0], segment=16)
    q = np.zeros((4, 2, 8), np.float32)
    with pytest.raises(ValueError, match=r"k must be \[tokens, 1, 8\]"):
        layer(q, np.zeros((4, 2, 8), np.float32), np.zeros((4, 1, 8), np.float32))
    with pytest.raises(ValueError, match="same number of tokens"):
        layer(q, np.zeros((3, 1, 8), np.float32), np.zeros((4, 1, 8), np.float32))
    with pytest.raises(infini.Error):
        infini.InfiniAttention(3, 2, 8, 8, [0.0] * 3)  # Hkv must divide Hq
