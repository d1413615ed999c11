"""The subword tokenizer (sentencepiece BPE)."""

import pickle

import numpy as np
import pytest

from entmax_book.translation.tokenizer import SubwordTokenizer, train_tokenizer


def test_special_ids_and_size(tokenizer):
    assert (tokenizer.pad_id, tokenizer.unk_id, tokenizer.bos_id, tokenizer.eos_id) == (0, 1, 2, 3)
    assert tokenizer.vocab_size == 300
    assert [tokenizer.id_to_piece(i) for i in range(4)] == ["<pad>", "<unk>", "<s>", "</s>"]


def test_round_trip_on_the_corpus(tokenizer, texts):
    for text in texts:
        ids = tokenizer.encode(text)
        assert min(ids) > tokenizer.eos_id  # no special ids, no unk for training text
        assert tokenizer.decode(ids) == text
        padded = [tokenizer.bos_id, *ids, tokenizer.eos_id, tokenizer.pad_id, tokenizer.pad_id]
        assert tokenizer.decode(np.array(padded)) == text


def test_word_ids_match_whitespace_words(tokenizer, texts):
    for text in texts:
        pieces, word_ids = tokenizer.pieces(text), tokenizer.word_ids(text)
        assert len(pieces) == len(word_ids) == len(tokenizer.encode(text))
        assert word_ids[0] == 0 and all(0 <= b - a <= 1 for a, b in zip(word_ids, word_ids[1:], strict=False))
        words = text.split()
        assert word_ids[-1] == len(words) - 1
        for w, word in enumerate(words):
            joined = "".join(p for p, i in zip(pieces, word_ids, strict=True) if i == w)
            assert joined == "\u2581" + word


def test_rare_words_are_split(tokenizer, texts):
    words = {w for t in texts for w in t.split()}
    n_pieces = {w: len(tokenizer.encode(w)) for w in words}
    assert n_pieces["."] == 1 and n_pieces["der"] == 1  # frequent words stay whole
    split = [w for w, n in n_pieces.items() if n >= 2]
    assert 0.2 < len(split) / len(words) < 0.95
    assert max(n_pieces.values()) >= 4
    # The longest words are split.
    longest = sorted(words, key=len)[-5:]
    assert all(n_pieces[w] >= 2 for w in longest)


def test_training_is_deterministic(tokenizer, texts):
    again = train_tokenizer(texts, vocab_size=300)
    assert again.model_proto == tokenizer.model_proto
    other = train_tokenizer(texts[::-1], vocab_size=200)
    assert other.vocab_size == 200 and other.model_proto != tokenizer.model_proto


def test_unknown_characters_and_serialisation(tokenizer, tmp_path):
    ids = tokenizer.encode("der Hund ☃")
    assert tokenizer.unk_id in ids
    assert tokenizer.word_ids("der Hund ☃") == [0] * len(tokenizer.encode("der")) + [1] * len(
        tokenizer.encode("Hund")
    ) + [2] * len(tokenizer.encode("☃"))
    copy = pickle.loads(pickle.dumps(tokenizer))
    assert copy.encode("der Hund") == tokenizer.encode("der Hund")
    tokenizer.save(tmp_path / "bpe.model")
    assert SubwordTokenizer.load(tmp_path / "bpe.model").model_proto == tokenizer.model_proto


def test_bad_training_input(texts):
    with pytest.raises(ValueError, match="too small"):
        train_tokenizer(texts, vocab_size=20)
    with pytest.raises(ValueError, match="non-empty"):
        train_tokenizer(["", " "], vocab_size=100)
