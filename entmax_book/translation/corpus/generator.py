"""A small generated English → German parallel corpus with gold word alignments.

The paper (Correia et al., 2019) analyses heads of Transformers trained on real translation data
(IWSLT, WMT). Its head analyses need to know where a dependency is: which word a German compound
depends on, which word decides a question's word order. A generated corpus plants such
dependencies with a known ground truth (:func:`tag_pieces` tags them), and is small enough for a
CPU training of a few minutes. This module *generates* sentence pairs from a hand-written lexicon
(a few hundred real words) and a grammar that carries the phenomena the paper's heads specialise on:

* **reordering**: verb-final subordinate clauses ("… that the dog sees the cat" → "… , dass der
  Hund die Katze sieht"), verb-second after a fronted adverb or a fronted "if" clause ("today the
  dog sleeps" → "heute schläft der Hund"), the participle / infinitive / separable particle at the
  end of the clause ("has seen the cat" → "hat die Katze gesehen", "calls the teacher" → "ruft den
  Lehrer an");
* **questions** with inversion and a final "?": yes/no questions ("does the dog sleep ?" → "schläft
  der Hund ?") and wh-questions with the words in
  :data:`~entmax_book.translation.corpus.lexicon.INTERROGATIVES` ("where does the teacher live ?" →
  "wo wohnt der Lehrer ?", "who does the child help ?" → "wem hilft das Kind ?");
* **agreement**: gender, number and case of articles, possessives, "dieser" and "welcher"
  (nominative / accusative / dative, with prepositions that govern a case and the contraction
  "in dem" → "im"), weak / mixed / strong adjective endings, weak masculine nouns ("den Jungen"),
  dative plural "-n", and verb conjugation by person and number, including stem changes
  ("sieht", "hilft", "läuft");
* **long and rare words** that a small BPE vocabulary splits into several pieces: German compounds
  ("Bahnhofsvorsteher", "Kindergärtnerin", "Geburtstagskuchen", "Feuerwehrauto") and English
  ones ("grandmother", "stationmaster", "toothbrush").

Conventions: words are separated by single spaces, punctuation ("," "." "?") is a separate token,
sentences start in lower case (German nouns are capitalised, as is English "I"). The words are in
:mod:`~entmax_book.translation.corpus.lexicon`, the sentence structures in
:mod:`~entmax_book.translation.corpus.grammar`, the file format in
:mod:`~entmax_book.translation.corpus.tsv`. The translation
of an English sentence is a function of the sentence (no free choices on the German side), so the
task is learnable. Every pair carries a gold word alignment: a set of (English word index, German
word index) pairs. Content words are aligned one-to-one ("has" → "hat", "seen" → "gesehen"),
except for multi-word units: English compounds written as two words ("train station" →
"Bahnhof"), particle verbs ("looks for" → "sucht") and German separable verbs ("calls" → "ruft …
an"). English do-support ("does") is aligned to the German finite verb, the contraction "im" to
both "in" and "the", punctuation to the same punctuation, and the German comma that opens a
subordinate clause, which has no English counterpart, to nothing. Every English word is aligned.
"""

from __future__ import annotations

import random

import numpy as np

from entmax_book import checks
from entmax_book.translation.corpus.grammar import (
    VERSION_1,
    VERSION_2,
    VERSION_3,
    Generator,
    Version,
    aligned_words,
)
from entmax_book.translation.corpus.lexicon import AUXILIARIES, INTERROGATIVES, TWO_WORD_NOUNS_V2
from entmax_book.translation.data import Example

__all__ = [
    "CONSTRUCTIONS",
    "CORPUS_VERSIONS",
    "MAX_WORDS",
    "MIN_WORDS",
    "generate_corpus",
    "is_marker_question",
    "make_splits",
    "sample_example",
    "tag_pieces",
    "version_of",
]

#: The corpus versions, by number (``DataConfig.corpus_version``). A version is never changed
#: once a record uses it (the records' tests regenerate its corpus); a harder or different
#: corpus is a new version.
#:
#: * 1: the corpus of Chapter 5's first records (:data:`~.grammar.VERSION_1`): 88 nouns,
#:   one or two clauses, 4–16 words a side. Three of its nine two-word nouns ("fairy tale",
#:   "fire engine", "bus driver") can be told by their second word alone, which occurs nowhere
#:   else.
#: * 2: a harder task (:data:`~.grammar.VERSION_2`): 173 nouns, 46 adjectives, 63 verbs; 29
#:   two-word nouns, each of whose words is also a noun of its own (so both are needed: "fire" →
#:   "Feuer", "engine" → "Motor", "fire engine" → "Feuerwehrauto"); more adjectives and
#:   prepositional phrases and a quarter of the sentences with three clauses, 6–26 words a side.
#: * 3: the next record's (:data:`~.grammar.VERSION_3`): version 2's words in version 1's
#:   sentence shapes and lengths (one or two clauses, 4–16 words a side), so that a training step
#:   costs what it costs on version 1 while each word is seen less often.
CORPUS_VERSIONS: dict[int, Version] = {1: VERSION_1, 2: VERSION_2, 3: VERSION_3}

#: Words per side (punctuation included) of a generated pair of version 1.
MIN_WORDS = VERSION_1.min_words
MAX_WORDS = VERSION_1.max_words


def version_of(version) -> Version:
    """The :class:`~.grammar.Version` numbered ``version`` in :data:`CORPUS_VERSIONS`.

    >>> version_of(1).max_words
    16
    >>> version_of(4)
    Traceback (most recent call last):
    ...
    ValueError: corpus_version must be one of [1, 2, 3], got 4.
    """
    if not checks.is_int(version):
        known = list(CORPUS_VERSIONS)
        raise TypeError(f"corpus_version must be an integer, one of {known}, got {version!r}.")
    if version not in CORPUS_VERSIONS:
        raise ValueError(f"corpus_version must be one of {list(CORPUS_VERSIONS)}, got {version!r}.")
    return CORPUS_VERSIONS[version]


def sample_example(rng: random.Random, version: int = 1) -> Example:
    """One random sentence pair from the grammar (not length-filtered, possibly a repeat).

    Args:
      rng: the random generator to draw from.
      version: the corpus version (:data:`CORPUS_VERSIONS`).

    Returns:
      an :class:`Example` with its gold alignment.

    >>> example = sample_example(random.Random(0))
    >>> example.src.split()[-1] in (".", "?") and example.src.split()[-1] == example.tgt.split()[-1]
    True
    """
    src, tgt, alignment = aligned_words(*Generator(rng, version_of(version)).sentence())
    return Example(" ".join(src), " ".join(tgt), alignment)


def generate_corpus(n: int, seed: int = 0, version: int = 1) -> list[Example]:
    """``n`` distinct sentence pairs (distinct English sentences), deterministic given ``seed``.

    Each side has between the version's ``min_words`` and ``max_words`` words (punctuation
    included; :data:`MIN_WORDS` and :data:`MAX_WORDS` in version 1).

    Args:
      n: number of pairs.
      seed: seed of the sampler.
      version: the corpus version (:data:`CORPUS_VERSIONS`).

    Returns:
      list of :class:`Example`.

    Raises:
      ValueError if ``n`` is not a non-negative integer, if ``version`` is not a corpus version,
      or if ``n`` distinct pairs cannot be found (the grammar has far more than 10⁶).

    >>> [e.src for e in generate_corpus(2, seed=1)] == [e.src for e in generate_corpus(2, seed=1)]
    True
    """
    checks.count("n", n, minimum=0)
    shape = version_of(version)
    low, high = shape.min_words, shape.max_words
    rng = random.Random(seed)
    seen: set[str] = set()
    examples: list[Example] = []
    for _ in range(20 * n + 1000):
        if len(examples) == n:
            break
        example = sample_example(rng, version)
        n_src, n_tgt = len(example.src.split()), len(example.tgt.split())
        if example.src in seen or not (low <= n_src <= high and low <= n_tgt <= high):
            continue
        seen.add(example.src)
        examples.append(example)
    if len(examples) < n:
        raise ValueError(f"could only generate {len(examples)} distinct sentence pairs, asked for {n}")
    return examples


def make_splits(
    n_train: int, n_valid: int, n_test: int, seed: int = 0, version: int = 1
) -> dict[str, list[Example]]:
    """Disjoint train/valid/test splits: no English sentence occurs in two splits.

    The three splits are consecutive slices of one :func:`generate_corpus` call, whose sentences
    are distinct, so they come from the same distribution and never overlap.

    Args:
      n_train, n_valid, n_test: pairs per split.
      seed: seed of the sampler.
      version: the corpus version (:data:`CORPUS_VERSIONS`).

    Returns:
      ``{"train": [...], "valid": [...], "test": [...]}`` lists of :class:`Example`.

    >>> {k: len(v) for k, v in make_splits(3, 1, 2).items()}
    {'train': 3, 'valid': 1, 'test': 2}
    """
    for name, value in (("n_train", n_train), ("n_valid", n_valid), ("n_test", n_test)):
        checks.count(name, value, minimum=0)
    corpus = generate_corpus(n_train + n_valid + n_test, seed, version)
    return {
        "train": corpus[:n_train],
        "valid": corpus[n_train : n_train + n_valid],
        "test": corpus[n_train + n_valid :],
    }


#: The planted dependencies, each the name of a tag over the target pieces whose prediction
#: needs it (see :func:`tag_pieces`).
CONSTRUCTIONS = ("tgt_compound", "tgt_multi_piece", "tgt_marker")


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


def _source_word_tags(example: Example) -> dict[str, np.ndarray]:
    """Per source word: "?", interrogative, second word of a two-word noun, marker question."""
    words = example.src.split()
    compound_head = [i > 0 and (words[i - 1], w) in TWO_WORD_NOUNS_V2 for i, w in enumerate(words)]
    marker = is_marker_question(example.src)
    return {
        "src_question": np.array([w == "?" for w in words]),
        "src_interrogative": np.array([w.lower() in INTERROGATIVES for w in words]),
        "src_compound_head": np.array(compound_head),
        "src_marker": np.array([marker and w != "?" for w in words]),
    }


def tag_pieces(example: Example, src_words: np.ndarray, tgt_words: np.ndarray) -> dict[str, np.ndarray]:
    """The generated corpus's tagger (see :data:`entmax_book.translation.data.Tagger`).

    Source pieces (each mask over the pieces of the tagged words):

    - ``src_question``: the word "?"; ``src_interrogative``: an interrogative word
      (:data:`~entmax_book.translation.corpus.lexicon.INTERROGATIVES`, in lower case);
    - ``src_compound_head``: the second word of a two-word noun of any corpus version
      (:data:`~entmax_book.translation.corpus.lexicon.TWO_WORD_NOUNS_V2`, which holds version 1's),
      whose German depends on the word before it (the generator never puts two noun phrases side
      by side so that they read as one);
    - ``src_marker``: every word but the "?" of a marker question (:func:`is_marker_question`).

    Target pieces, the planted constructions (:data:`CONSTRUCTIONS`): ``tgt_compound`` (pieces of
    German words aligned to such a second word), ``tgt_multi_piece`` (aligned to a source word of
    two or more pieces) and ``tgt_marker`` (the first German piece of a marker question, whose
    word order the "?" decides).

    Args:
      example: the pair.
      src_words, tgt_words: the word index of each source / target piece (EOS excluded).

    Returns:
      name → bool mask over the source or target pieces.

    >>> example = Example("the dog sleeps ?", "schläft der Hund ?", ((0, 1), (1, 2), (2, 0), (3, 3)))
    >>> tags = tag_pieces(example, np.arange(4), np.arange(4))
    >>> tags["src_marker"].tolist(), tags["tgt_marker"].tolist()
    ([True, True, True, False], [True, False, False, False])
    """
    words = example.src.split()
    out = {name: mask[src_words] for name, mask in _source_word_tags(example).items()}
    pieces_per_word = np.bincount(src_words, minlength=len(words))
    n_tgt = len(example.tgt.split())
    compound, multi = np.zeros(n_tgt, bool), np.zeros(n_tgt, bool)
    for i, j in example.alignment:
        compound[j] |= i > 0 and (words[i - 1], words[i]) in TWO_WORD_NOUNS_V2
        multi[j] |= pieces_per_word[i] > 1
    marker = np.zeros(len(tgt_words), bool)
    marker[:1] = is_marker_question(example.src)
    out.update(tgt_compound=compound[tgt_words], tgt_multi_piece=multi[tgt_words], tgt_marker=marker)
    return out
