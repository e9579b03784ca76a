"""The passkey retrieval task (Mohtashami & Jaggi 2023, used by the Infini-attention paper) and the
character vocabulary of the demo model.

The C++ `infini passkey` command builds exactly the same text (tools/infini/passkey_text.cpp);
tests/passkey/check_passkey_text.py compares the two.

Layout of one input, all plain text:

    INTRO + " " + filler stream of F characters with KEY_LINE inserted at a sentence start + QUESTION

The filler stream cycles FILLER_BLOCK and is cut at exactly F characters (possibly mid-word), so
the length of an input can be set to the token. The answer the model must produce is " 71432."

`infini passkey --filler rivers` cycles RIVERS_BLOCK instead (sentences the first demo model never
saw), and `--keys K` hides K named keys (KEY_NAMES[:K]: "The blue pass key is 71432. Remember it.
71432 is the blue pass key. ") and asks for one of them ("What is the blue pass key? The blue pass
key is"); passkey_text_keys builds those inputs as the C++ does (keys at the same sentence start in
the order given), filler_for_length(n, keys, asked) sizes them.
"""
import math

INTRO = ("There is an important info hidden inside a lot of irrelevant text. "
         "Find it and memorize them. I will quiz you about the important information there.")
FILLER_BLOCK = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. "
KEY_LINE = "The pass key is {key}. Remember it. {key} is the pass key. "
QUESTION = "What is the pass key? The pass key is"
ANSWER = " {key}."
# The second filler of `infini passkey --filler rivers` (tools/infini/passkey_text.cpp's kRiversBlock).
RIVERS_BLOCK = ("Rivers run down to the sea. Wind moves over the hills at night. Fresh bread is baked before "
                "dawn. Ships rest in the harbour. In winter the birds fly south. ")
FILLERS = {"grass": FILLER_BLOCK, "rivers": RIVERS_BLOCK}
# The names of the keys of an input with several (`infini passkey --keys K` uses the first K, key j
# named KEY_NAMES[j]); all of one length, so the inputs asking for each are the same up to the question.
KEY_NAMES = ["blue", "gold", "grey", "pink", "rose", "sand", "teal", "mint"]

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


def sentence_starts(block=FILLER_BLOCK):
    """Offsets inside a filler block (FILLER_BLOCK by default) where a sentence starts."""
    return [0] + [i + 2 for i in range(len(block) - 2) if block[i:i + 2] == ". "]


def key_title(name=""):
    """"pass key", or "blue pass key" for a named key."""
    return name + " pass key" if name else "pass key"


def key_line(key, name=""):
    """The line that hides a key: KEY_LINE for the unnamed key, else with the name before "pass key"."""
    title = key_title(name)
    return f"The {title} is {key}. Remember it. {key} is the {title}. "


def question(name=""):
    """The question for a key: QUESTION for the unnamed key."""
    title = key_title(name)
    return f"What is the {title}? The {title} is"


def key_place(filler_chars, depth, block=FILLER_BLOCK):
    """The sentence start of the cycled block nearest to depth * filler_chars, in [0, filler_chars]."""
    size = len(block)
    target = depth * filler_chars
    best = 0
    for start_block in range(math.floor(target / size) - 1, math.floor(target / size) + 2):
        for s in sentence_starts(block):
            at = start_block * size + s
            if 0 <= at <= filler_chars and abs(at - target) < abs(best - target):
                best = at
    return best


def insert_key_lines(stream, places, keys):
    """stream with each key's line (keys: (depth, key, name) tuples) inserted at its place (places[i]
    for keys[i]); keys at the same place keep their order."""
    order = sorted(range(len(keys)), key=lambda i: (places[i], i))
    out, done = [], 0
    for i in order:
        out.append(stream[done:places[i]])
        out.append(key_line(keys[i][1], keys[i][2]))
        done = places[i]
    out.append(stream[done:])
    return "".join(out)


def filler_with_keys(filler_chars, keys, block=FILLER_BLOCK):
    """F characters of the cycled block with each key's line ((depth, key, name) tuples) inserted at
    the sentence start nearest to depth * F, as tools/infini/passkey_text.cpp does."""
    stream = (block * (filler_chars // len(block) + 1))[:filler_chars]
    return insert_key_lines(stream, [key_place(filler_chars, d, block) for d, _, _ in keys], keys)


def passkey_text_keys(filler_chars, keys, asked=0, filler="grass"):
    """The input `infini passkey` builds with these keys ((depth, key, name) tuples; one unnamed key
    is the task's own input) and filler ("grass" or "rivers"), asking for keys[asked]."""
    return INTRO + " " + filler_with_keys(filler_chars, keys, FILLERS[filler]) + question(keys[asked][2])


def filler_with_key(filler_chars, depth, key):
    """F characters of cycled filler with the key line inserted at the sentence start nearest to
    depth * F (depth in [0, 1]). The key line is extra: the result has F + len(key line) chars."""
    return filler_with_keys(filler_chars, [(depth, key, "")])


def fixed_chars(key="00000", keys=None, asked=0):
    """Characters of an input that are not filler (of the single unnamed key, or of `keys`, (depth,
    key, name) tuples, asking for keys[asked])."""
    if keys is None:
        return len(INTRO) + 1 + len(KEY_LINE.format(key=key)) + len(QUESTION)
    return len(INTRO) + 1 + sum(len(key_line(k, n)) for _, k, n in keys) + len(question(keys[asked][2]))


def passkey_text(filler_chars, depth, key):
    return INTRO + " " + filler_with_key(filler_chars, depth, key) + QUESTION


def filler_for_length(length_tokens, keys=None, asked=0):
    """Filler characters that make the whole input exactly `length_tokens` tokens (BOS and the
    leading space count), of the single unnamed key or of `keys` asking for keys[asked]."""
    return max(0, length_tokens - 2 - fixed_chars(keys=keys, asked=asked))
