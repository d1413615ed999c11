"""A joint source+target subword tokenizer: sentencepiece BPE trained in-process.

The paper (Correia et al., 2019, §4) trains on "BPE-preprocessed datasets using joint segmentations
with 32k merge operations". Here the corpus is tiny, so the vocabulary is tiny too (a few hundred
pieces): frequent words stay whole and rare words — long compounds such as "Bahnhofsvorsteher" —
are split into several pieces, which is what the paper's subword-merging head works on.

Training is offline and in memory (no files), single-threaded and without input sampling, so two
trainings on the same texts give the same model. Ids: pad 0, unk 1, bos 2, eos 3. Text is not
normalised (sentencepiece's "identity" rule), so ``decode(encode(s)) == s`` for any ``s`` whose
characters were seen in training and whose words are separated by single spaces.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import sentencepiece as spm

__all__ = ["DEFAULT_VOCAB_SIZE", "PAD_ID", "SubwordTokenizer", "train_tokenizer"]

#: A vocabulary size that suits the generated corpus of :mod:`entmax_book.translation.corpus`:
#: the ~1000 word types of a 10k-pair corpus then give source/target sentences of ~11/13 pieces
#: on average, and rare words and compounds are split into several pieces.
DEFAULT_VOCAB_SIZE = 800

#: The padding id of every tokenizer :func:`train_tokenizer` makes (masked as a key everywhere).
PAD_ID = 0

_WORD_BOUNDARY = "\u2581"  # "▁", sentencepiece's marker for "a word starts here"


class SubwordTokenizer:
    """Encode text to piece ids and back with a trained sentencepiece model.

    Attributes: ``pad_id`` (0), ``unk_id`` (1), ``bos_id`` (2), ``eos_id`` (3) and ``vocab_size``
    (number of pieces, special ones included). ``model_proto`` holds the serialised model; the
    tokenizer pickles through it and :meth:`save` / :meth:`load` write and read it.

    Args:
      model_proto: a serialised sentencepiece model (e.g. from :func:`train_tokenizer`).

    >>> tokenizer = train_tokenizer(["the dog sleeps .", "der Hund schläft ."], vocab_size=40)
    >>> tokenizer.decode(tokenizer.encode("der Hund schläft .")), tokenizer.word_ids("der Hund")[-1]
    ('der Hund schläft .', 1)
    """

    def __init__(self, model_proto: bytes):
        self.model_proto = bytes(model_proto)
        self._sp = spm.SentencePieceProcessor(model_proto=self.model_proto)
        self.pad_id = self._sp.pad_id()
        self.unk_id = self._sp.unk_id()
        self.bos_id = self._sp.bos_id()
        self.eos_id = self._sp.eos_id()
        self.vocab_size = self._sp.get_piece_size()

    def __reduce__(self):
        return (SubwordTokenizer, (self.model_proto,))

    def __repr__(self) -> str:
        return f"SubwordTokenizer(vocab_size={self.vocab_size})"

    def encode(self, text: str) -> list[int]:
        """Piece ids of ``text``, without BOS/EOS."""
        return list(self._sp.encode(text))

    def decode(self, ids) -> str:
        """Text of the piece ids ``ids`` (any int sequence or array); pad, BOS and EOS are dropped."""
        special = {self.pad_id, self.bos_id, self.eos_id}
        return self._sp.decode([int(i) for i in np.asarray(ids).reshape(-1) if int(i) not in special])

    def pieces(self, text: str) -> list[str]:
        """The pieces of ``text`` as strings ("▁" marks the start of a word)."""
        return list(self._sp.encode(text, out_type=str))

    def id_to_piece(self, piece_id: int) -> str:
        """The piece with id ``piece_id`` as a string."""
        return self._sp.id_to_piece(int(piece_id))

    def word_ids(self, text: str) -> list[int]:
        """For each piece of ``encode(text)``, the index of the whitespace word it belongs to.

        A piece starts a new word iff it begins with "▁" (sentencepiece never lets a piece cross
        a space), so word w of ``text.split()`` is exactly the pieces with index w.
        """
        word_ids, word = [], -1
        for piece in self.pieces(text):
            if piece.startswith(_WORD_BOUNDARY):
                word += 1
            word_ids.append(max(word, 0))
        return word_ids

    def save(self, path) -> None:
        """Write the sentencepiece model (the usual ``.model`` file)."""
        Path(path).write_bytes(self.model_proto)

    @classmethod
    def load(cls, path) -> SubwordTokenizer:
        """A tokenizer from a sentencepiece ``.model`` file (as written by :meth:`save`)."""
        return cls(Path(path).read_bytes())


def train_tokenizer(texts: list[str], vocab_size: int, seed: int = 0) -> SubwordTokenizer:
    """Train a joint BPE model on ``texts`` (source and target sentences together).

    Every character of the texts gets a piece (character coverage 1), so the training texts
    never produce ``unk``. Deterministic: one thread, no sentence sampling or shuffling, and
    ``seed`` fixes sentencepiece's random generator (which BPE training does not otherwise use).

    Args:
      texts: training sentences; blank ones are ignored.
      vocab_size: number of pieces, the four special ones included; if the texts support fewer
        merges the model is smaller (``tokenizer.vocab_size`` says how many).
      seed: sentencepiece's random seed.

    Returns:
      a :class:`SubwordTokenizer`.

    Raises:
      ValueError if no text is left or ``vocab_size`` cannot hold every character.

    References:
      Sennrich, Haddow & Birch (2016), BPE for NMT: https://aclanthology.org/P16-1162/ ;
      Kudo & Richardson (2018), SentencePiece: https://aclanthology.org/D18-2012/ .

    >>> tokenizer = train_tokenizer(["the dog sleeps .", "the cat sleeps ."], vocab_size=60)
    >>> tokenizer.pieces("the dog sleeps .")
    ['▁the', '▁dog', '▁sleeps', '▁.']
    """
    texts = [t for t in texts if t.strip()]
    if not texts:
        raise ValueError("train_tokenizer needs at least one non-empty text")
    n_chars = len({c for t in texts for c in t if not c.isspace()})
    if vocab_size < n_chars + 5:
        raise ValueError(
            f"vocab_size={vocab_size} is too small: the texts have {n_chars} distinct characters, "
            f"so at least {n_chars + 5} pieces are needed (characters, word boundary, 4 special ids)"
        )
    spm.set_random_generator_seed(seed)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts),
        model_writer=model,
        model_type="bpe",
        vocab_size=vocab_size,
        hard_vocab_limit=False,
        character_coverage=1.0,
        normalization_rule_name="identity",
        pad_id=PAD_ID,
        unk_id=1,
        bos_id=2,
        eos_id=3,
        num_threads=1,
        input_sentence_size=0,
        shuffle_input_sentence=False,
        minloglevel=2,
    )
    return SubwordTokenizer(model.getvalue())
