"""infini: Infini-attention and GGUF models on Vulkan, from Python.

    import infini
    model = infini.Model("model.gguf")             # devices="0,0" for a pipeline of two
    session = infini.Session(model)
    session.feed(model.tokenize("The capital of France is"))
    print(session.logits().argmax())               # the last token's logits, a NumPy array
    for text in session.generate(32, temperature=0, stream=True):
        print(text, end="", flush=True)
    state = session.save()                         # bytes; session.restore(state) goes back

Errors raise infini.Error with the library's one-line message. Long calls release the GIL and
stop on Ctrl-C between pieces (segments of a feed, tokens of a generation).
"""
import codecs

from ._infini import Error, GenerationStream, InfiniAttention, Model, devices, selfcheck
from ._infini import Session as _Session

__all__ = ["Error", "InfiniAttention", "Model", "Session", "devices", "selfcheck"]
__version__ = "0.1.0"


class Session:
    """One unbounded stream of a model: feed tokens, read logits, generate, save and restore.

    The weights are uploaded once per session; its state (memory and one segment, or a plain
    file's context) has a fixed size, model.info["state_bytes"], at any stream length."""

    def __init__(self, model):
        self._session = _Session(model)
        self.model = model

    def feed(self, ids, progress=None):
        """Feeds token ids (or text, tokenized as the file asks, with BOS at a stream's start).

        progress(dict(fed, total, tokens_seen, at_segment_boundary)) is called after each piece and may
        return False to stop early."""
        if isinstance(ids, str):
            ids = self.model.tokenize(ids, add_bos=self.model.info["add_bos"] and self.tokens_seen == 0)
        self._session.feed(ids, progress=progress)

    def logits(self):
        """The last fed token's logits, a float32 array of the vocabulary's size."""
        return self._session.logits()

    def generate(self, max_tokens, *, stream=False, tokens=False, temperature=0.8, top_k=40, top_p=0.95,
                 seed=0, frequency_penalty=0.0, presence_penalty=0.0):
        """Samples up to max_tokens tokens (temperature 0: greedy), each fed back; stops at
        end-of-sequence. Returns the text, or with tokens=True the ids; with stream=True an
        iterator of text pieces (of ids with tokens=True) as they come, which stops the
        generation when closed or left."""
        sampling = dict(temperature=temperature, top_k=top_k, top_p=top_p, seed=seed,
                        frequency_penalty=frequency_penalty, presence_penalty=presence_penalty)
        if stream:
            return self._stream(self._session.generate(max_tokens, stream=True, **sampling), tokens)
        ids = self._session.generate(max_tokens, **sampling)
        if tokens:
            return ids
        return b"".join(self.model.piece(i) for i in ids).decode("utf-8", "replace")

    def _stream(self, generation, tokens):
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        try:
            for token, piece in generation:
                if tokens:
                    yield token
                    continue
                text = decoder.decode(piece)
                if text:
                    yield text
            tail = decoder.decode(b"", final=True)
            if tail and not tokens:
                yield tail
        finally:
            generation.close()

    def save(self):
        """The whole stream state as bytes."""
        return self._session.save()

    def restore(self, state):
        """Puts back a state save() gave (a session of the same model and options)."""
        self._session.restore(state)

    def reset(self):
        """Back to an empty stream."""
        self._session.reset()

    @property
    def tokens_seen(self):
        return self._session.tokens_seen

    @property
    def segment(self):
        return self._session.segment
