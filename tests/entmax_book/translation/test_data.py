"""The array encoding of sentence pairs and the minibatches (entmax_book.translation.data)."""

import numpy as np
import pytest

from entmax_book.translation.corpus import CONSTRUCTIONS, is_marker_question, tag_pieces
from entmax_book.translation.corpus.lexicon import INTERROGATIVES
from entmax_book.translation.data import (
    Example,
    batches,
    encode,
    required_lengths,
)
from entmax_book.translation.tokenizer import train_tokenizer


def test_encode_layout(tokenizer, examples):
    S, T = required_lengths(examples, tokenizer)
    arrays = encode(examples, tokenizer, S + 2, T + 3, tag_pieces)
    n = len(examples)
    fields = ("src", "tgt_in", "tgt_out", "src_words", "tgt_words", "align")
    shapes = {k: getattr(arrays, k).shape for k in fields} | {k: v.shape for k, v in arrays.tags.items()}
    assert arrays.examples == tuple(examples) and len(arrays) == n
    assert shapes == {
        "src": (n, S + 2),
        "tgt_in": (n, T + 3),
        "tgt_out": (n, T + 3),
        "src_words": (n, S + 2),
        "tgt_words": (n, T + 3),
        "align": (n, T + 3, S + 2),
        "src_question": (n, S + 2),
        "src_interrogative": (n, S + 2),
        "src_compound_head": (n, S + 2),
        "src_marker": (n, S + 2),
        "tgt_compound": (n, T + 3),
        "tgt_multi_piece": (n, T + 3),
        "tgt_marker": (n, T + 3),
    }
    assert arrays.src.dtype == np.int32 and arrays.align.dtype == np.float32
    for i, e in enumerate(examples):
        src, tgt = tokenizer.encode(e.src), tokenizer.encode(e.tgt)
        s, t = len(src), len(tgt)
        assert list(arrays.src[i]) == src + [tokenizer.eos_id] + [0] * (S + 1 - s)
        assert list(arrays.tgt_in[i, : t + 1]) == [tokenizer.bos_id, *tgt]
        assert list(arrays.tgt_out[i, : t + 1]) == [*tgt, tokenizer.eos_id]
        assert not arrays.tgt_in[i, t + 1 :].any() and not arrays.tgt_out[i, t + 1 :].any()
        assert tokenizer.decode(arrays.src[i]) == e.src
        assert list(arrays.src_words[i, :s]) == tokenizer.word_ids(e.src)
        assert (arrays.src_words[i, s:] == -1).all() and (arrays.tgt_words[i, t:] == -1).all()


def test_encode_annotations(tokenizer, examples):
    arrays = encode(examples, tokenizer, *required_lengths(examples, tokenizer), tag_pieces)
    n_questions = 0
    for i, e in enumerate(examples):
        src_words = e.src.split()
        links = set(e.alignment)
        sw, tw = arrays.src_words[i], arrays.tgt_words[i]
        # Independent reference for the piece-level alignment, element by element.
        for t in range(arrays.align.shape[1]):
            for s in range(arrays.align.shape[2]):
                expected = tw[t] >= 0 and sw[s] >= 0 and (sw[s], tw[t]) in links
                assert arrays.align[i, t, s] == float(expected)
        pieces_of = {w: [p for p in range(len(sw)) if sw[p] == w] for w in range(len(src_words))}
        question = [p for w, word in enumerate(src_words) if word == "?" for p in pieces_of[w]]
        asking = [p for w, word in enumerate(src_words) if word in INTERROGATIVES for p in pieces_of[w]]
        assert list(np.flatnonzero(arrays.tags["src_question"][i])) == question
        assert list(np.flatnonzero(arrays.tags["src_interrogative"][i])) == asking
        n_questions += bool(question)
    assert n_questions > 50


def test_encode_rejects_long_sentences(tokenizer, examples):
    S, T = required_lengths(examples, tokenizer)
    encode(examples, tokenizer, S, T, tag_pieces)
    with pytest.raises(ValueError, match="max_src_len"):
        encode(examples, tokenizer, S - 1, T, tag_pieces)
    with pytest.raises(ValueError, match="max_tgt_len"):
        encode(examples, tokenizer, S, T - 1, tag_pieces)
    unaligned = encode([Example("the dog .", "der Hund .")], tokenizer, S, T, tag_pieces)
    assert not unaligned.align.any()


def test_batches_cover_every_example_reproducibly():
    arrays = {"x": np.arange(10), "y": np.arange(10) * 2}
    run = list(batches(arrays, 4, seed=3, epochs=2, drop_remainder=False))
    assert [len(b["x"]) for b in run] == [4, 4, 2, 4, 4, 2]
    first, second = np.concatenate([b["x"] for b in run[:3]]), np.concatenate([b["x"] for b in run[3:]])
    assert sorted(first) == sorted(second) == list(range(10))
    assert not np.array_equal(first, second)  # each epoch is reshuffled
    assert all(np.array_equal(b["y"], 2 * b["x"]) for b in run)
    again = list(batches(arrays, 4, seed=3, epochs=2, drop_remainder=False))
    assert all(np.array_equal(a["x"], b["x"]) for a, b in zip(run, again, strict=True))
    dropped = list(batches(arrays, 4, seed=3, epochs=1))
    assert [len(b["x"]) for b in dropped] == [4, 4]
    ordered = list(batches(arrays, 3, seed=0, epochs=1, shuffle=False, drop_remainder=False))
    assert [list(b["x"]) for b in ordered] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    endless = batches(arrays, 4, seed=0)
    assert len([next(endless) for _ in range(7)]) == 7
    with pytest.raises(ValueError, match="different lengths"):
        next(batches({"x": np.arange(3), "y": np.arange(4)}, 2, seed=0))


def test_planted_constructions_by_hand():
    """Each planted dependency is found where it is, and nowhere else."""
    tokenizer = train_tokenizer(
        ["the kitchen table stands ?", "steht der Küchentisch ?", "does the table stand ?"],
        vocab_size=60,
    )
    pairs = [
        Example(
            "the kitchen table stands ?",
            "steht der Küchentisch ?",
            ((0, 1), (1, 2), (2, 2), (3, 0), (4, 3)),
        ),
        Example("does the table stand ?", "steht der Tisch ?", ((0, 0), (1, 1), (2, 2), (3, 0), (4, 3))),
    ]
    arrays = encode(pairs, tokenizer, 12, 12, tag_pieces)
    words = [tokenizer.word_ids(p.src) for p in pairs]
    head = np.flatnonzero(np.asarray(words[0]) == 2)  # "table" after "kitchen"
    assert np.flatnonzero(arrays.tags["src_compound_head"][0]).tolist() == head.tolist()
    assert not arrays.tags["src_compound_head"][1].any()  # "table" after "the" is not a compound
    tgt_words = arrays.tgt_words[0]
    assert np.array_equal(arrays.tags["tgt_compound"][0], tgt_words == 2)  # "Küchentisch"
    assert arrays.tags["tgt_marker"].tolist()[0][:2] == [True, False]  # first German piece only
    assert not arrays.tags["tgt_marker"][1].any()  # "does" asks the question: no marker question
    real = np.asarray(words[0]) != 4  # every piece but the "?"
    assert arrays.tags["src_marker"][0, : len(real)].tolist() == real.tolist()


@pytest.mark.parametrize(
    ("src", "marker"),
    [
        ("the dog sleeps ?", True),
        ("does the dog sleep ?", False),
        ("who sleeps ?", False),
        ("the dog sleeps .", False),
        ("can the dog sleep ?", False),
    ],
)
def test_marker_questions(src, marker):
    assert is_marker_question(src) is marker


def test_generated_corpus_carries_every_planted_construction(tokenizer, examples):
    """Marker questions translate to verb-first German; every construction occurs in 400 pairs."""
    arrays = encode(examples, tokenizer, *required_lengths(examples, tokenizer), tag_pieces)
    for name in CONSTRUCTIONS:
        assert arrays.tags[name].any(1).mean() > 0.03, name
    markers = [e for e in examples if is_marker_question(e.src)]
    assert markers
    for example in markers:  # inverted: the German opens with the verb, not the English subject
        first = {i for i, j in example.alignment if j == 0}
        assert first and 0 not in first, example
