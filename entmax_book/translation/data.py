"""Turn sentence pairs into padded id arrays with word indices and gold piece-level alignments.

Layout (the usual teacher-forcing setup of Vaswani et al., 2017): the encoder reads the source
pieces followed by EOS; the decoder reads BOS + target pieces (``tgt_in``) and predicts target
pieces + EOS (``tgt_out``), so ``tgt_in[t]`` is the token before ``tgt_out[t]``.

Besides the ids, :func:`encode_examples` returns what the head analyses of Correia et al. (2019,
§5.2) need: the word each piece belongs to (subword-merging head), where "?" and interrogative
words are (interrogation head), and the gold alignment between target and source pieces
(how well context attention aligns, beyond the paper).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from entmax_book.translation.corpus import Example
from entmax_book.translation.lexicon import AUXILIARIES, INTERROGATIVES, TWO_WORD_NOUNS
from entmax_book.translation.tokenizer import SubwordTokenizer

__all__ = [
    "CONSTRUCTIONS",
    "batches",
    "encode_examples",
    "is_marker_question",
    "required_lengths",
    "token_batches",
]

#: The planted dependencies of the generated corpus, each the name of a (N, T) mask over the
#: target pieces whose prediction needs it (see :func:`encode_examples`).
CONSTRUCTIONS = ("tgt_compound", "tgt_multi_piece", "tgt_marker")


def required_lengths(examples: list[Example], tokenizer: SubwordTokenizer) -> tuple[int, int]:
    """The smallest (max_src_len, max_tgt_len) that :func:`encode_examples` accepts for ``examples``.

    max_src_len = max over pairs of (source pieces + 1 for EOS); max_tgt_len = max of (target
    pieces + 1 for BOS or EOS).

    Args:
      examples: sentence pairs (compute over every split you encode).
      tokenizer: the subword tokenizer.

    Returns:
      (max_src_len, max_tgt_len); (1, 1) for no examples.

    >>> from entmax_book.translation.tokenizer import train_tokenizer
    >>> tokenizer = train_tokenizer(["the dog sleeps .", "der Hund schläft ."], vocab_size=40)
    >>> example = Example("the dog sleeps .", "der Hund schläft .")
    >>> src, tgt = tokenizer.encode(example.src), tokenizer.encode(example.tgt)
    >>> required_lengths([example], tokenizer) == (len(src) + 1, len(tgt) + 1)
    True
    """
    src = max((len(tokenizer.encode(e.src)) for e in examples), default=0)
    tgt = max((len(tokenizer.encode(e.tgt)) for e in examples), default=0)
    return src + 1, tgt + 1


def is_marker_question(src: str) -> bool:
    """Whether an English sentence is a question marked by its final "?" alone.

    No interrogative word and no opening auxiliary: "the dog sleeps ?" (German "schläft der
    Hund ?") but not "does the dog sleep ?" or "who sleeps ?".

    >>> is_marker_question("the dog sleeps ?"), is_marker_question("does the dog sleep ?")
    (True, False)
    """
    words = src.split()
    return (
        bool(words)
        and words[-1] == "?"
        and words[0].lower() not in AUXILIARIES
        and not any(w.lower() in INTERROGATIVES for w in words)
    )


def _word_masks(example: Example) -> dict[str, np.ndarray]:
    """Per source word: "?", interrogative, second word of a two-word noun; per target word: linked."""
    words = example.src.split()
    compound_head = [i > 0 and (words[i - 1], w) in TWO_WORD_NOUNS for i, w in enumerate(words)]
    marker = is_marker_question(example.src)
    return {
        "question": np.array([w == "?" for w in words]),
        "interrogative": np.array([w.lower() in INTERROGATIVES for w in words]),
        "compound_head": np.array(compound_head),
        "marker": np.array([marker and w != "?" for w in words]),
    }


def _aligned_constructions(example, src_words, tgt_words):
    """Two bool masks over the target pieces: aligned to the second word of a two-word noun,
    and aligned to a source word of two or more pieces."""
    words = example.src.split()
    pieces_per_word = np.bincount(src_words, minlength=len(words))
    n_tgt = len(example.tgt.split())
    compound, multi = np.zeros(n_tgt, bool), np.zeros(n_tgt, bool)
    for i, j in example.alignment:
        compound[j] |= i > 0 and (words[i - 1], words[i]) in TWO_WORD_NOUNS
        multi[j] |= pieces_per_word[i] > 1
    return compound[tgt_words], multi[tgt_words]


def encode_examples(
    examples: list[Example], tokenizer: SubwordTokenizer, max_src_len: int, max_tgt_len: int
) -> dict[str, np.ndarray]:
    """Encode, pad and annotate N sentence pairs (S = ``max_src_len``, T = ``max_tgt_len``).

    Args:
      examples: N sentence pairs.
      tokenizer: the subword tokenizer.
      max_src_len, max_tgt_len: S and T (see :func:`required_lengths`).

    Returns:
      a dict of arrays:

      - ``src`` (N, S) int32: source piece ids + EOS, then ``pad_id``;
      - ``tgt_in`` (N, T) int32: BOS + target piece ids, then pad;
      - ``tgt_out`` (N, T) int32: target piece ids + EOS, then pad;
      - ``src_words`` (N, S) int32: index of the source word of each source piece (−1 at EOS/pad);
      - ``tgt_words`` (N, T) int32: index of the target word of each ``tgt_out`` piece (−1 at EOS/pad);
      - ``align`` (N, T, S) float32: ``align[n, t, s] = 1`` iff word ``tgt_words[n, t]`` is aligned
        to word ``src_words[n, s]`` in ``examples[n].alignment``, else 0 — every piece of an aligned
        word pair is linked to every piece of the other word;
      - ``src_question`` (N, S) bool: True at the piece(s) of the source word "?";
      - ``src_interrogative`` (N, S) bool: True at the pieces of source words in INTERROGATIVES
        (compared in lower case);
      - ``src_compound_head`` (N, S) bool: True at the pieces of the second word of a two-word
        noun (``TWO_WORD_NOUNS``), whose German depends on the previous word;
      - ``src_marker`` (N, S) bool: True at every piece but the "?" of a marker question
        (:func:`is_marker_question`);
      - the planted constructions (:data:`CONSTRUCTIONS`), (N, T) bool over ``tgt_out``:
        ``tgt_compound`` (pieces of German words aligned to such a second word),
        ``tgt_multi_piece`` (aligned to a source word of two or more pieces) and ``tgt_marker``
        (the first German piece of a marker question, whose word order the "?" decides).

    Raises:
      ValueError if a sentence needs more than ``max_src_len`` (``max_tgt_len``) positions with its
      EOS (BOS): sentences are never silently cut.

    >>> from entmax_book.translation.tokenizer import train_tokenizer
    >>> tokenizer = train_tokenizer(["who sleeps ?", "wer schläft ?"], vocab_size=40)
    >>> arrays = encode_examples([Example("who sleeps ?", "wer schläft ?", ((0, 0), (1, 1), (2, 2)))],
    ...                          tokenizer, 5, 5)
    >>> arrays["src_words"][0].tolist(), arrays["src_question"][0].tolist()
    ([0, 1, 2, -1, -1], [False, False, True, False, False])
    """
    n = len(examples)
    arrays = {
        "src": np.full((n, max_src_len), tokenizer.pad_id, np.int32),
        "tgt_in": np.full((n, max_tgt_len), tokenizer.pad_id, np.int32),
        "tgt_out": np.full((n, max_tgt_len), tokenizer.pad_id, np.int32),
        "src_words": np.full((n, max_src_len), -1, np.int32),
        "tgt_words": np.full((n, max_tgt_len), -1, np.int32),
        "align": np.zeros((n, max_tgt_len, max_src_len), np.float32),
        "src_question": np.zeros((n, max_src_len), bool),
        "src_interrogative": np.zeros((n, max_src_len), bool),
        "src_compound_head": np.zeros((n, max_src_len), bool),
        "src_marker": np.zeros((n, max_src_len), bool),
        **{name: np.zeros((n, max_tgt_len), bool) for name in CONSTRUCTIONS},
    }
    for i, example in enumerate(examples):
        src_ids, tgt_ids = tokenizer.encode(example.src), tokenizer.encode(example.tgt)
        if len(src_ids) + 1 > max_src_len:
            raise ValueError(
                f"example {i}: source needs {len(src_ids) + 1} positions with EOS, max_src_len is "
                f"{max_src_len}: {example.src!r}"
            )
        if len(tgt_ids) + 1 > max_tgt_len:
            raise ValueError(
                f"example {i}: target needs {len(tgt_ids) + 1} positions with BOS/EOS, max_tgt_len "
                f"is {max_tgt_len}: {example.tgt!r}"
            )
        src_words = np.asarray(tokenizer.word_ids(example.src), np.int32)
        tgt_words = np.asarray(tokenizer.word_ids(example.tgt), np.int32)
        s, t = len(src_ids), len(tgt_ids)
        arrays["src"][i, : s + 1] = [*src_ids, tokenizer.eos_id]
        arrays["tgt_in"][i, : t + 1] = [tokenizer.bos_id, *tgt_ids]
        arrays["tgt_out"][i, : t + 1] = [*tgt_ids, tokenizer.eos_id]
        arrays["src_words"][i, :s] = src_words
        arrays["tgt_words"][i, :t] = tgt_words

        for name, mask in _word_masks(example).items():
            arrays[f"src_{name}"][i, :s] = mask[src_words]
        arrays["tgt_marker"][i, 0] = is_marker_question(example.src)

        if example.alignment:
            words = example.src.split()
            compound, multi = _aligned_constructions(example, src_words, tgt_words)
            arrays["tgt_compound"][i, :t], arrays["tgt_multi_piece"][i, :t] = compound, multi
            word_links = np.zeros((len(example.tgt.split()), len(words)), np.float32)
            src_index, tgt_index = np.asarray(example.alignment).T
            word_links[tgt_index, src_index] = 1.0
            arrays["align"][i, :t, :s] = word_links[np.ix_(tgt_words, src_words)]
    return arrays


def batches(
    arrays: dict[str, np.ndarray],
    batch_size: int,
    seed: int,
    epochs: int | None = None,
    *,
    shuffle: bool = True,
    drop_remainder: bool = True,
) -> Iterator[dict[str, np.ndarray]]:
    """Yield minibatches: dicts with the same keys as ``arrays``, sliced along the first axis.

    Each epoch visits the N examples once in an order drawn from ``np.random.default_rng(seed)``
    (one generator for the whole run, so epochs differ but the run is reproducible); with
    ``shuffle=False`` the order is 0..N−1. With ``drop_remainder`` (the default, so every batch
    has the same shape and a jitted step compiles once) the last N mod ``batch_size`` examples
    of each epoch are skipped; otherwise the last batch is smaller. Training uses the endless
    default; evaluation passes ``epochs=1, shuffle=False, drop_remainder=False``.

    Args:
      arrays: dict of arrays with the same first dimension N.
      batch_size: examples per batch.
      seed: seed of the shuffling.
      epochs: number of passes; None loops forever.
      shuffle: draw a new order every epoch.
      drop_remainder: skip an incomplete last batch.

    Returns:
      an iterator of dicts of arrays.

    >>> data = {"x": np.arange(5)}
    >>> [b["x"].tolist() for b in batches(data, 2, seed=0, epochs=1, shuffle=False, drop_remainder=False)]
    [[0, 1], [2, 3], [4]]
    """
    sizes = {key: len(value) for key, value in arrays.items()}
    if len(set(sizes.values())) != 1:
        raise ValueError(f"arrays have different lengths: {sizes}")
    n = next(iter(sizes.values()))
    if batch_size < 1:
        raise ValueError(f"batch_size must be ≥ 1, got {batch_size}")
    if drop_remainder and batch_size > n:
        raise ValueError(f"batch_size={batch_size} exceeds the {n} examples and drop_remainder is set")
    rng = np.random.default_rng(seed)
    epoch = 0
    while epochs is None or epoch < epochs:
        order = rng.permutation(n) if shuffle else np.arange(n)
        stop = n - n % batch_size if drop_remainder else n
        for start in range(0, stop, batch_size):
            index = order[start : start + batch_size]
            yield {key: value[index] for key, value in arrays.items()}
        epoch += 1


def token_batches(
    arrays: dict[str, np.ndarray],
    max_tokens: int,
    seed: int,
    *,
    pad_id: int = 0,
    multiple_of: int = 1,
    bucket_width: int = 8,
) -> Iterator[dict[str, np.ndarray]]:
    """Yield training batches of about ``max_tokens`` tokens each, sentences grouped by length.

    The standard Transformer recipe batches by tokens, not sentences (Vaswani et al., 2017, §5.1):
    short sentences go in large batches, long ones in small ones. Each pair is put in the
    bucket of its longer side (source or target, without padding) rounded up to a multiple of
    ``bucket_width``; a bucket of length ℓ makes batches of n = ⌊max_tokens / ℓ⌋ pairs (rounded
    down to a multiple of ``multiple_of``, e.g. the number of devices), cut to ℓ columns. So
    every batch shape is one of a few (one compilation per bucket), and padding is at most
    ``bucket_width − 1`` per sentence. Every epoch shuffles within the buckets and then the
    order of the batches; incomplete batches are dropped.

    Args:
      arrays: dict with at least "src", "tgt_in", "tgt_out", shape (N, L); 2-D arrays with the
        same second axis as "src" or "tgt_in" are cut along with them, others are kept whole.
      max_tokens: the most tokens (pairs × bucket length) per batch.
      seed: seed of the shuffling.
      pad_id: the padding id, to measure lengths.
      multiple_of: batch sizes are multiples of this.
      bucket_width: bucket lengths are multiples of this.

    Returns:
      an endless iterator of dicts of arrays.

    >>> src = np.array([[5, 6, 0, 0], [5, 0, 0, 0], [5, 6, 7, 8], [6, 7, 8, 9]])
    >>> data = {"src": src, "tgt_in": src, "tgt_out": src}
    >>> batch = next(token_batches(data, max_tokens=8, seed=0, bucket_width=2))
    >>> batch["src"].shape in {(4, 2), (2, 4)}
    True
    """
    counts = {"max_tokens": max_tokens, "multiple_of": multiple_of, "bucket_width": bucket_width}
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    src, tgt = np.asarray(arrays["src"]), np.asarray(arrays["tgt_in"])
    src_width, tgt_width = src.shape[1], tgt.shape[1]
    longest = np.maximum((src != pad_id).sum(1), (tgt != pad_id).sum(1))
    length = np.minimum(-(-longest // bucket_width) * bucket_width, max(src_width, tgt_width))
    buckets = {}
    for bucket_length in np.unique(length):
        size = (max_tokens // int(bucket_length)) // multiple_of * multiple_of
        members = np.flatnonzero(length == bucket_length)
        if size >= 1 and len(members) >= size:
            buckets[int(bucket_length)] = (members, size)
    if not buckets:
        raise ValueError(
            f"max_tokens={max_tokens} makes no complete batch (a multiple of {multiple_of} pairs) from "
            f"{len(longest)} pairs; raise max_tokens or add data."
        )

    def cut(value, bucket_length):
        if value.ndim == 2 and value.shape[1] in (src_width, tgt_width):
            return value[:, : min(bucket_length, value.shape[1])]
        return value

    rng = np.random.default_rng(seed)
    while True:
        plan = []
        for bucket_length, (members, size) in buckets.items():
            order = rng.permutation(members)
            plan += [(bucket_length, order[i : i + size]) for i in range(0, len(order) - size + 1, size)]
        for k in rng.permutation(len(plan)):
            bucket_length, index = plan[k]
            yield {key: cut(np.asarray(value)[index], bucket_length) for key, value in arrays.items()}
