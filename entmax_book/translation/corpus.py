"""A small generated English → German parallel corpus with gold word alignments.

The paper (Correia et al., 2019) analyses heads of Transformers trained on real translation data
(IWSLT, WMT). Real corpora cannot be downloaded here, and a 1–2 minute CPU training needs a much
smaller task, so this module *generates* sentence pairs from a hand-written lexicon (a few hundred
real words) and a grammar that carries the phenomena the paper's heads specialise on:

* **reordering**: verb-final subordinate clauses ("… that the dog sees the cat" → "… , dass der
  Hund die Katze sieht"), verb-second after a fronted adverb or a fronted "if" clause ("today the
  dog sleeps" → "heute schläft der Hund"), the participle / infinitive / separable particle at the
  end of the clause ("has seen the cat" → "hat die Katze gesehen", "calls the teacher" → "ruft den
  Lehrer an");
* **questions** with inversion and a final "?": yes/no questions ("does the dog sleep ?" → "schläft
  der Hund ?") and wh-questions with the words in
  :data:`~entmax_book.translation.lexicon.INTERROGATIVES` ("where does the teacher live ?" →
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
:mod:`~entmax_book.translation.lexicon`, the sentence structures in
:mod:`~entmax_book.translation.grammar`, the file format in
:mod:`~entmax_book.translation.tsv`. The translation
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

import dataclasses
import random

from entmax_book.translation import tsv
from entmax_book.translation.grammar import Generator, aligned_words

__all__ = [
    "MAX_WORDS",
    "MIN_WORDS",
    "Example",
    "generate_corpus",
    "load_tsv",
    "make_splits",
    "sample_example",
    "write_tsv",
]

#: Words per side (punctuation included) of a generated pair.
MIN_WORDS = 4
MAX_WORDS = 16


@dataclasses.dataclass(frozen=True)
class Example:
    """One sentence pair.

    ``src`` is English and ``tgt`` German, words separated by single spaces. ``alignment`` holds
    gold word alignment links (i, j): word i of ``src`` (0-based, split on spaces) translates to
    word j of ``tgt``. Words may have zero, one or several links; ``()`` means "no alignment
    known" (e.g. a TSV file without an alignment column).

    >>> Example("the dog sleeps .", "der Hund schläft .", ((0, 0), (1, 1), (2, 2), (3, 3))).tgt.split()[1]
    'Hund'
    """

    src: str
    tgt: str
    alignment: tuple[tuple[int, int], ...] = ()


def sample_example(rng: random.Random) -> Example:
    """One random sentence pair from the grammar (not length-filtered, possibly a repeat).

    Args:
      rng: the random generator to draw from.

    Returns:
      an :class:`Example` with its gold alignment.

    >>> example = sample_example(random.Random(0))
    >>> example.src.split()[-1] in (".", "?") and example.src.split()[-1] == example.tgt.split()[-1]
    True
    """
    src, tgt, alignment = aligned_words(*Generator(rng).sentence())
    return Example(" ".join(src), " ".join(tgt), alignment)


def _check_count(value, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a count of pairs (an integer ≥ 0), got {value!r}")


def generate_corpus(n: int, seed: int = 0) -> list[Example]:
    """``n`` distinct sentence pairs (distinct English sentences), deterministic given ``seed``.

    Each side has between :data:`MIN_WORDS` and :data:`MAX_WORDS` words (punctuation included).

    Args:
      n: number of pairs.
      seed: seed of the sampler.

    Returns:
      list of :class:`Example`.

    Raises:
      ValueError if ``n`` is not a non-negative integer, or if ``n`` distinct pairs cannot be
      found (the grammar has far more than 10⁶).

    >>> [e.src for e in generate_corpus(2, seed=1)] == [e.src for e in generate_corpus(2, seed=1)]
    True
    """
    _check_count(n, "n")
    rng = random.Random(seed)
    seen: set[str] = set()
    examples: list[Example] = []
    for _ in range(20 * n + 1000):
        if len(examples) == n:
            break
        example = sample_example(rng)
        n_src, n_tgt = len(example.src.split()), len(example.tgt.split())
        if example.src in seen or not (MIN_WORDS <= n_src <= MAX_WORDS and MIN_WORDS <= n_tgt <= MAX_WORDS):
            continue
        seen.add(example.src)
        examples.append(example)
    if len(examples) < n:
        raise ValueError(f"could only generate {len(examples)} distinct sentence pairs, asked for {n}")
    return examples


def make_splits(n_train: int, n_valid: int, n_test: int, seed: int = 0) -> dict[str, list[Example]]:
    """Disjoint train/valid/test splits: no English sentence occurs in two splits.

    The three splits are consecutive slices of one :func:`generate_corpus` call, whose sentences
    are distinct, so they come from the same distribution and never overlap.

    Args:
      n_train, n_valid, n_test: pairs per split.
      seed: seed of the sampler.

    Returns:
      ``{"train": [...], "valid": [...], "test": [...]}`` lists of :class:`Example`.

    >>> {k: len(v) for k, v in make_splits(3, 1, 2).items()}
    {'train': 3, 'valid': 1, 'test': 2}
    """
    for name, value in (("n_train", n_train), ("n_valid", n_valid), ("n_test", n_test)):
        _check_count(value, name)
    corpus = generate_corpus(n_train + n_valid + n_test, seed)
    return {
        "train": corpus[:n_train],
        "valid": corpus[n_train : n_train + n_valid],
        "test": corpus[n_train + n_valid :],
    }


def load_tsv(path) -> list[Example]:
    """Read sentence pairs from a file of lines ``src<TAB>tgt[<TAB>alignment]``.

    The format is that of :mod:`~entmax_book.translation.tsv` (UTF-8, alignment links "i-j").

    Args:
      path: the file.

    Returns:
      list of :class:`Example`.

    Raises:
      ValueError naming the file and line for bytes that are not UTF-8 or a malformed line.
    """
    return [Example(src, tgt, alignment) for src, tgt, alignment in tsv.read_rows(path)]


def write_tsv(examples, path) -> None:
    """Write ``examples`` so that :func:`load_tsv` reads them back unchanged.

    Args:
      examples: :class:`Example` pairs; the alignment column is written if any has an alignment.
      path: the file to (over)write.

    Raises:
      ValueError naming the example if it could not be read back as written (see
      :func:`entmax_book.translation.tsv.write_rows`).

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "pairs.tsv"
    >>> pairs = generate_corpus(3)
    >>> write_tsv(pairs, path)
    >>> load_tsv(path) == pairs
    True
    """
    tsv.write_rows([(e.src, e.tgt, e.alignment) for e in examples], path)
