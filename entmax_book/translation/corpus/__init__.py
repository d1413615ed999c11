"""The generated English → German corpus, and sentence pairs as TSV files.

:mod:`~entmax_book.translation.corpus.generator` draws sentence pairs with gold word alignments
from the words of :mod:`~entmax_book.translation.corpus.lexicon` and the sentence structures of
:mod:`~entmax_book.translation.corpus.grammar`, and tags the dependencies it plants
(:func:`tag_pieces`, the tagger :func:`entmax_book.translation.data.encode` takes);
:mod:`~entmax_book.translation.corpus.tsv` reads and writes pairs as tab-separated text, the
way a real corpus comes in.
"""

from entmax_book.translation.corpus.generator import (
    CONSTRUCTIONS,
    CORPUS_VERSIONS,
    MAX_WORDS,
    MIN_WORDS,
    generate_corpus,
    is_marker_question,
    make_splits,
    sample_example,
    tag_pieces,
    version_of,
)
from entmax_book.translation.corpus.tsv import load_tsv, write_tsv

__all__ = [
    "CONSTRUCTIONS",
    "CORPUS_VERSIONS",
    "MAX_WORDS",
    "MIN_WORDS",
    "generate_corpus",
    "is_marker_question",
    "load_tsv",
    "make_splits",
    "sample_example",
    "tag_pieces",
    "version_of",
    "write_tsv",
]
