"""The passkey retrieval task (Mohtashami & Jaggi 2023, used by the Infini-attention paper) and the
character vocabulary of the demo model.

The C++ `infini passkey` command builds exactly the same text (tools/infini/passkey_text.cpp);
tests/passkey/check_passkey_text.py compares the two.

Layout of one input, all plain text:

    INTRO + " " + filler stream of F characters with KEY_LINE inserted at a sentence start + QUESTION

The filler stream cycles FILLER_BLOCK and is cut at exactly F characters (possibly mid-word), so
the length of an input can be set to the token. The answer the model must produce is " 71432."
"""

INTRO = ("There is an important info hidden inside a lot of irrelevant text. "
         "Find it and memorize them. I will quiz you about the important information there.")
FILLER_BLOCK = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. "
KEY_LINE = "The pass key is {key}. Remember it. {key} is the pass key. "
QUESTION = "What is the pass key? The pass key is"
ANSWER = " {key}."

# Character vocabulary: SentencePiece conventions (space is U+2581, a leading space is added to
# the text, BOS starts every input). Every character of the task has its own piece.
SPACE = "\u2581"
SPECIAL = ["<unk>", "<s>", "</s>"]
CHARS = [SPACE] + list(".,?!'") + [str(d) for d in range(10)] + \
    [chr(c) for c in range(ord("a"), ord("z") + 1)] + [chr(c) for c in range(ord("A"), ord("Z") + 1)]
VOCAB = SPECIAL + CHARS
UNK, BOS, EOS = 0, 1, 2
PIECE_ID = {p: i for i, p in enumerate(VOCAB)}


def encode(text):
    """Token ids of `text` as the runtime's SPM tokenizer produces them for this vocabulary."""
    escaped = SPACE + text.replace(" ", SPACE)
    return [BOS] + [PIECE_ID.get(c, UNK) for c in escaped]


def encode_continuation(text):
    """Ids of text that follows earlier text (no BOS, no added leading space)."""
    return [PIECE_ID.get(c, UNK) for c in text.replace(" ", SPACE)]


def sentence_starts():
    """Offsets inside FILLER_BLOCK where a sentence starts."""
    return [0] + [i + 2 for i in range(len(FILLER_BLOCK) - 2) if FILLER_BLOCK[i:i + 2] == ". "]


def filler_with_key(filler_chars, depth, key):
    """F characters of cycled filler with the key line inserted at the sentence start nearest to
    depth * F (depth in [0, 1]). The key line is extra: the result has F + len(key line) chars."""
    block = len(FILLER_BLOCK)
    target = depth * filler_chars
    best = 0
    for start_block in range(int(target // block) - 1, int(target // block) + 2):
        for s in sentence_starts():
            at = start_block * block + s
            if 0 <= at <= filler_chars and abs(at - target) < abs(best - target):
                best = at
    stream = (FILLER_BLOCK * (filler_chars // block + 1))[:filler_chars]
    return stream[:best] + KEY_LINE.format(key=key) + stream[best:]


def fixed_chars(key="00000"):
    """Characters of an input that are not filler."""
    return len(INTRO) + 1 + len(KEY_LINE.format(key=key)) + len(QUESTION)


def passkey_text(filler_chars, depth, key):
    return INTRO + " " + filler_with_key(filler_chars, depth, key) + QUESTION


def filler_for_length(length_tokens):
    """Filler characters that make the whole input exactly `length_tokens` tokens (BOS and the
    leading space count)."""
    return max(0, length_tokens - 2 - fixed_chars())
