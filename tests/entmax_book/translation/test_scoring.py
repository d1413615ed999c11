"""BLEU and chrF of translations (entmax_book.translation.scoring)."""

import logging

import pytest
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from entmax_book.translation.corpus import generate_corpus
from entmax_book.translation.scoring import corpus_bleu, corpus_chrf


def test_bleu_and_chrf():
    refs = ["der Hund sieht die Katze .", "wo wohnt der Lehrer ?"]
    assert corpus_bleu(refs, refs) == pytest.approx(100.0)
    assert corpus_chrf(refs, refs) == pytest.approx(100.0)
    assert corpus_bleu(["a b c d", "e f g h"], refs) == 0.0
    partial = corpus_bleu(["der Hund sieht die Maus .", "wo wohnt der Lehrer ?"], refs)
    assert 0.0 < partial < 100.0
    with pytest.raises(ValueError, match="references"):
        corpus_bleu(refs, refs[:1])
    with pytest.raises(ValueError, match="empty"):
        corpus_chrf([], [])


def test_bleu_scores_the_given_tokens():
    # Tokenised BLEU: "Hund." is one token, unlike "Hund ." (13a would split the period off).
    assert corpus_bleu(["der Hund ."], ["der Hund."]) < 50.0
    # By hand: unigram precision 3/4, bigram 2/3, trigram 1/2, no 4-gram match (sacrebleu's default
    # "exp" smoothing counts it as 1/2); equal lengths, so no brevity penalty.
    expected = 100 * (3 / 4 * 2 / 3 * 1 / 2 * 1 / 2) ** (1 / 4)
    assert corpus_bleu(["a b c x"], ["a b c d"]) == pytest.approx(expected)


def test_no_detokenisation_warning(caplog):
    sentences = ["der Hund schläft ."] * 120  # sacrebleu warns from 100 lines ending in " ."
    with caplog.at_level(logging.WARNING, logger="sacrebleu"):
        corpus_bleu(sentences, sentences)
    assert not caplog.records


def test_generated_sentences_are_already_13a_tokenised():
    # So tokenised BLEU equals sacrebleu's default BLEU on this corpus.
    tokenise = Tokenizer13a()
    for e in generate_corpus(500, seed=2):
        assert tokenise(e.src) == e.src and tokenise(e.tgt) == e.tgt
