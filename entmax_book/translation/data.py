"""The generic data path: sentence pairs → padded id arrays with word indices and gold alignments.

Layout (the usual teacher-forcing setup of Vaswani et al., 2017): the encoder reads the source
pieces followed by EOS; the decoder reads BOS + target pieces (``tgt_in``) and predicts target
pieces + EOS (``tgt_out``), so ``tgt_in[t]`` is the token before ``tgt_out[t]``.

Nothing here knows the generated corpus: :func:`encode` works unchanged on any sentence pairs
(e.g. a real corpus read with :func:`entmax_book.translation.corpus.load_tsv`). Besides the ids it
keeps what the head analyses of Correia et al. (2019, §5.2) need from any corpus: the word each
piece belongs to (subword merging) and the gold alignment between target and source pieces
(context attention). Word *tags* (which words are questions, two-word nouns, …) come from a
*tagger* passed to :func:`encode`: the generated corpus has one
(:func:`entmax_book.translation.corpus.tag_pieces`); a real corpus needs its own, or none.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping

import numpy as np

from entmax_book import checks
from entmax_book.translation.tokenizer import SubwordTokenizer

__all__ = [
    "Example",
    "Split",
    "Tagger",
    "batches",
    "encode",
    "required_lengths",
    "token_batches",
]


@dataclasses.dataclass(frozen=True)
class Example:
    """One sentence pair.

    ``src`` is the source (English) and ``tgt`` the target (German), words separated by single
    spaces. ``alignment`` holds gold word alignment links (i, j): word i of ``src`` (0-based,
    split on spaces) translates to word j of ``tgt``. Words may have zero, one or several links;
    ``()`` means "no alignment known" (e.g. a TSV file without an alignment column).

    >>> Example("the dog sleeps .", "der Hund schläft .", ((0, 0), (1, 1), (2, 2), (3, 3))).tgt.split()[1]
    'Hund'
    """

    src: str
    tgt: str
    alignment: tuple[tuple[int, int], ...] = ()


#: A tagger: ``tagger(example, src_words, tgt_words) -> {name: bool mask}``, where ``src_words``
#: (``tgt_words``) gives the word index of each source (target) piece, EOS excluded; each mask
#: covers the source pieces (a name starting "src_") or the target pieces ("tgt_", aligned with
#: ``tgt_out``: the pieces whose prediction is tagged).
Tagger = Callable[[Example, np.ndarray, np.ndarray], Mapping[str, np.ndarray]]


@dataclasses.dataclass(frozen=True)
class Split:
    """A prepared split of N pairs (S = most source positions, T = most target positions).

    Attributes:
      examples: the N pairs.
      src: (N, S) int32, source piece ids + EOS, then the padding id.
      tgt_in: (N, T) int32, BOS + target piece ids, then padding.
      tgt_out: (N, T) int32, target piece ids + EOS, then padding.
      src_words: (N, S) int32, the source word of each source piece (−1 at EOS and padding).
      tgt_words: (N, T) int32, the target word of each ``tgt_out`` piece (−1 at EOS and padding).
      align: (N, T, S) float32, 1 where target piece t and source piece s belong to aligned
        words (every piece of an aligned word pair is linked to every piece of the other word).
      tags: name → (N, S) or (N, T) bool mask, from the tagger (empty without one).
    """

    examples: tuple[Example, ...]
    src: np.ndarray
    tgt_in: np.ndarray
    tgt_out: np.ndarray
    src_words: np.ndarray
    tgt_words: np.ndarray
    align: np.ndarray
    tags: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.src)

    def columns(self) -> dict[str, np.ndarray]:
        """The arrays a training step reads: "src", "tgt_in" and "tgt_out"."""
        return {"src": self.src, "tgt_in": self.tgt_in, "tgt_out": self.tgt_out}

    def take(self, index) -> Split:
        """The pairs at ``index`` (a slice, or an array of indices), as a split of their own."""
        rows = np.arange(len(self))[index]
        arrays = {f.name: getattr(self, f.name)[rows] for f in dataclasses.fields(self)[1:-1]}
        tags = {name: mask[rows] for name, mask in self.tags.items()}
        return Split(tuple(self.examples[i] for i in rows), **arrays, tags=tags)


def required_lengths(examples, tokenizer: SubwordTokenizer) -> tuple[int, int]:
    """The smallest (max_src_len, max_tgt_len) that :func:`encode` accepts for ``examples``.

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


def _pieces(example, tokenizer, max_src_len, max_tgt_len, index):
    """The pair's piece ids and piece→word indices, refused if they do not fit the caps."""
    src_ids, tgt_ids = tokenizer.encode(example.src), tokenizer.encode(example.tgt)
    if len(src_ids) + 1 > max_src_len:
        raise ValueError(
            f"example {index}: source needs {len(src_ids) + 1} positions with EOS, max_src_len is "
            f"{max_src_len}: {example.src!r}"
        )
    if len(tgt_ids) + 1 > max_tgt_len:
        raise ValueError(
            f"example {index}: target needs {len(tgt_ids) + 1} positions with BOS/EOS, max_tgt_len "
            f"is {max_tgt_len}: {example.tgt!r}"
        )
    src_words = np.asarray(tokenizer.word_ids(example.src), np.int32)
    tgt_words = np.asarray(tokenizer.word_ids(example.tgt), np.int32)
    return src_ids, tgt_ids, src_words, tgt_words


def _piece_alignment(example, src_words, tgt_words):
    """(t, s) float32: 1 where the target piece's word is aligned to the source piece's word."""
    word_links = np.zeros((len(example.tgt.split()), len(example.src.split())), np.float32)
    if example.alignment:
        src_index, tgt_index = np.asarray(example.alignment).T
        word_links[tgt_index, src_index] = 1.0
    return word_links[np.ix_(tgt_words, src_words)]


def _place_tags(tags, found, i, s, t, shape):
    """Put one pair's tag masks (from the tagger) into the split's (N, S) / (N, T) arrays."""
    for name, mask in found.items():
        side = name.split("_", 1)[0]
        if side not in ("src", "tgt"):
            raise ValueError(f"tagger: tag names start with 'src_' or 'tgt_', got {name!r}.")
        length = s if side == "src" else t
        mask = np.asarray(mask, bool)
        if mask.shape != (length,):
            raise ValueError(
                f"tagger: tag {name!r} of example {i} has shape {mask.shape}, expected ({length},)."
            )
        width = shape[1] if side == "src" else shape[2]
        tags.setdefault(name, np.zeros((shape[0], width), bool))[i, :length] = mask


def encode(
    examples, tokenizer: SubwordTokenizer, max_src_len: int, max_tgt_len: int, tagger: Tagger | None = None
) -> Split:
    """Encode, pad and annotate N sentence pairs (S = ``max_src_len``, T = ``max_tgt_len``).

    Args:
      examples: N :class:`Example` pairs.
      tokenizer: the subword tokenizer.
      max_src_len, max_tgt_len: S and T (see :func:`required_lengths`).
      tagger: optional :data:`Tagger`, whose masks become the split's ``tags``.

    Returns:
      a :class:`Split`.

    Raises:
      ValueError if a sentence needs more than ``max_src_len`` (``max_tgt_len``) positions with its
      EOS (BOS): sentences are never silently cut.

    >>> from entmax_book.translation.tokenizer import train_tokenizer
    >>> tokenizer = train_tokenizer(["who sleeps ?", "wer schläft ?"], vocab_size=40)
    >>> split = encode([Example("who sleeps ?", "wer schläft ?", ((0, 0), (1, 1), (2, 2)))], tokenizer, 5, 5)
    >>> split.src_words[0].tolist(), split.align[0, 0].tolist()
    ([0, 1, 2, -1, -1], [1.0, 0.0, 0.0, 0.0, 0.0])
    """
    max_src_len, max_tgt_len = (
        checks.count("max_src_len", max_src_len),
        checks.count("max_tgt_len", max_tgt_len),
    )
    examples = tuple(examples)
    n, pad = len(examples), tokenizer.pad_id
    ids = {
        name: np.full((n, max_src_len if name == "src" else max_tgt_len), pad, np.int32)
        for name in ("src", "tgt_in", "tgt_out")
    }
    src_words_all = np.full((n, max_src_len), -1, np.int32)
    tgt_words_all = np.full((n, max_tgt_len), -1, np.int32)
    align = np.zeros((n, max_tgt_len, max_src_len), np.float32)
    tags = {}
    for i, example in enumerate(examples):
        src_ids, tgt_ids, src_words, tgt_words = _pieces(example, tokenizer, max_src_len, max_tgt_len, i)
        s, t = len(src_ids), len(tgt_ids)
        ids["src"][i, : s + 1] = [*src_ids, tokenizer.eos_id]
        ids["tgt_in"][i, : t + 1] = [tokenizer.bos_id, *tgt_ids]
        ids["tgt_out"][i, : t + 1] = [*tgt_ids, tokenizer.eos_id]
        src_words_all[i, :s], tgt_words_all[i, :t] = src_words, tgt_words
        align[i, :t, :s] = _piece_alignment(example, src_words, tgt_words)
        if tagger is not None:
            _place_tags(tags, tagger(example, src_words, tgt_words), i, s, t, (n, max_src_len, max_tgt_len))
    return Split(examples, **ids, src_words=src_words_all, tgt_words=tgt_words_all, align=align, tags=tags)


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
    checks.count("batch_size", batch_size)
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
    for name, value in {
        "max_tokens": max_tokens,
        "multiple_of": multiple_of,
        "bucket_width": bucket_width,
    }.items():
        checks.count(name, value)
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
