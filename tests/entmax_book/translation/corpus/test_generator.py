"""The generated English → German corpus: lexicon, grammar, alignments and splits.

The German expectations below are written by hand from German grammar (articles by gender and
case, adjective endings, verb positions), not derived from the generator's tables.
"""

import itertools
import random
import re

import pytest

from entmax_book.translation import corpus
from entmax_book.translation.corpus import generate_corpus, grammar, lexicon, make_splits
from entmax_book.translation.corpus.lexicon import INTERROGATIVES

PUNCTUATION = {".", "?", ","}


@pytest.fixture(scope="module", params=[1, 2], ids=["v1", "v2"])
def examples(request):
    """3000 pairs of each corpus version (seed 0); ``examples.version`` says which."""
    return Corpus(generate_corpus(3000, seed=0, version=request.param), request.param)


class Corpus(list):
    """Generated pairs that know their corpus version."""

    def __init__(self, pairs, version):
        super().__init__(pairs)
        self.version = version


# --- hand-built phrases and clauses through the generator's realisation code --------------------

_keys = itertools.count(1)


def noun_phrase(en_sg, determiner="the", adjective=None, plural=False, kind="noun"):
    noun = next(n for n in lexicon.NOUNS if n.en_sg == en_sg)
    adj = next(a for a in lexicon.ADJECTIVES if a.en == adjective) if adjective else None
    keys = (next(_keys), next(_keys), next(_keys))
    return grammar.NounPhrase(kind, noun, determiner, adj, plural, keys=keys)


def pronoun(code):
    return grammar.NounPhrase("pronoun", pronoun=code, keys=(next(_keys), next(_keys), next(_keys)))


def verb(german_infinitive):
    return next(v for v in lexicon.VERBS if v.de_infinitive == german_infinitive)


def clause(subject, infinitive, tense="pres", **parts):
    return grammar.Clause(subject, verb(infinitive), tense, (next(_keys), next(_keys)), **parts)


def words(tokens):
    return " ".join(w for w, _ in tokens)


@pytest.mark.parametrize(
    ("english", "args", "case", "german"),
    [
        ("the dog", ("dog",), "nom", "der Hund"),
        ("the dog", ("dog",), "acc", "den Hund"),
        ("the dog", ("dog",), "dat", "dem Hund"),
        ("the cat", ("cat",), "dat", "der Katze"),
        ("the children", ("child", "the", None, True), "dat", "den Kindern"),
        ("a big dog", ("dog", "a", "big"), "nom", "ein großer Hund"),
        ("a big dog", ("dog", "a", "big"), "acc", "einen großen Hund"),
        ("an old elephant", ("elephant", "a", "old"), "acc", "einen alten Elefanten"),
        ("our new car", ("car", "our", "new"), "nom", "unser neues Auto"),
        ("our new car", ("car", "our", "new"), "dat", "unserem neuen Auto"),
        ("this tired girl", ("girl", "this", "tired"), "nom", "dieses müde Mädchen"),
        ("this tired girl", ("girl", "this", "tired"), "dat", "diesem müden Mädchen"),
        ("these tired girls", ("girl", "this", "tired", True), "nom", "diese müden Mädchen"),
        ("hungry dogs", ("dog", "none", "hungry", True), "nom", "hungrige Hunde"),
        ("hungry dogs", ("dog", "none", "hungry", True), "dat", "hungrigen Hunden"),
        ("my red umbrellas", ("umbrella", "my", "red", True), "acc", "meine roten Regenschirme"),
        ("the boy", ("boy",), "acc", "den Jungen"),
        ("which cat", ("cat", "which"), "acc", "welche Katze"),
        ("her grandmother", ("grandmother", "her"), "dat", "ihrer Großmutter"),
    ],
)
def test_noun_phrase_agreement(english, args, case, german):
    np_ = noun_phrase(*args)
    assert words(np_.english()) == english
    assert words(np_.german(case)) == german


def test_prepositional_phrases_govern_case_and_contract():
    house = grammar.PrepositionalPhrase("loc", "in", noun_phrase("house"), next(_keys))
    school = grammar.PrepositionalPhrase("loc", "in", noun_phrase("school"), next(_keys))
    beside = grammar.PrepositionalPhrase("loc", "next to", noun_phrase("garden", "a"), next(_keys))
    dogs = grammar.PrepositionalPhrase("with", "with", noun_phrase("dog", "my", None, True), next(_keys))
    him = grammar.PrepositionalPhrase("for", "for", pronoun("3sg_m"), next(_keys))
    assert [words(p.german()) for p in (house, school, beside, dogs, him)] == [
        "im Haus",
        "in der Schule",
        "neben einem Garten",
        "mit meinen Hunden",
        "für ihn",
    ]
    assert words(beside.english()) == "next to a garden"
    # The contraction is aligned to both English words.
    (im, keys), *_ = house.german()
    assert im == "im" and len(keys) == 2


def test_clauses_place_verbs_like_german():
    dog, cat = noun_phrase("dog"), noun_phrase("cat", "the", "small", True)
    sees = clause(dog, "sehen", obj=cat)
    assert words(sees.english_statement()) == "the dog sees the small cats"
    assert words(sees.german_verb_second()) == "der Hund sieht die kleinen Katzen"
    assert words(sees.german_subordinate()) == "der Hund die kleinen Katzen sieht"

    seen = clause(noun_phrase("dog", "a", "big"), "sehen", "perf", obj=cat)
    assert words(seen.english_statement()) == "a big dog has seen the small cats"
    assert words(seen.german_verb_second()) == "ein großer Hund hat die kleinen Katzen gesehen"
    assert words(seen.german_subordinate()) == "ein großer Hund die kleinen Katzen gesehen hat"

    train = noun_phrase("train")
    assert words(clause(train, "ankommen").german_verb_second()) == "der Zug kommt an"
    assert words(clause(train, "ankommen").german_subordinate()) == "der Zug ankommt"
    assert words(clause(train, "ankommen", "perf").german_subordinate()) == "der Zug angekommen ist"
    assert words(clause(train, "ankommen", "can").german_subordinate()) == "der Zug ankommen kann"

    helps = clause(noun_phrase("child"), "helfen", obj=noun_phrase("boy"))
    assert words(helps.german_verb_second()) == "das Kind hilft dem Jungen"
    gives = clause(
        noun_phrase("teacher"),
        "geben",
        indirect=noun_phrase("child", "the", None, True),
        obj=noun_phrase("ball", "a", "red"),
    )
    assert words(gives.english_statement()) == "the teacher gives the children a red ball"
    assert words(gives.german_verb_second()) == "der Lehrer gibt den Kindern einen roten Ball"
    followed = clause(pronoun("1pl"), "folgen", "perf", obj=noun_phrase("cat"))
    assert words(followed.german_verb_second()) == "wir sind der Katze gefolgt"


def test_fronting_questions_and_pronoun_order():
    sees_him = clause(noun_phrase("dog"), "sehen", obj=pronoun("3sg_m"))
    today = [("heute", frozenset())]
    # Verb second after a fronted adverb; the unstressed pronoun precedes the noun subject.
    assert words(sees_him.german_verb_second(today)) == "heute sieht ihn der Hund"
    assert words(sees_him.english_question()) == "does the dog see him"
    assert words(sees_him.german_question()) == "sieht ihn der Hund"

    calls = clause(pronoun("3sg_m"), "anrufen", obj=noun_phrase("doctor"))
    assert words(calls.english_question()) == "does he call the doctor"
    assert words(calls.german_question()) == "ruft er den Arzt an"

    helps = clause(noun_phrase("child"), "helfen", obj=noun_phrase("teacher", kind="who"))
    helps.wh = "object"
    assert words(helps.english_question()) == "who does the child help"
    assert words(helps.german_question()) == "wem hilft das Kind"

    lives = clause(noun_phrase("teacher"), "wohnen")
    lives.wh = "where"
    assert words(lives.english_question()) == "where does the teacher live"
    assert words(lives.german_question()) == "wo wohnt der Lehrer"

    looked = clause(noun_phrase("dog"), "suchen", "perf", obj=noun_phrase("ball", kind="what"))
    looked.wh = "object"
    assert words(looked.english_question()) == "what has the dog looked for"
    assert words(looked.german_question()) == "was hat der Hund gesucht"


# --- properties of generated corpora --------------------------------------------------------------


def test_generation_is_deterministic_and_distinct(examples):
    assert generate_corpus(200, seed=0, version=examples.version) == examples[:200]
    assert generate_corpus(200, seed=1, version=examples.version) != examples[:200]
    assert len({e.src for e in examples}) == len(examples)


@pytest.mark.slow
@pytest.mark.parametrize("version", [1, 2])
def test_translation_is_a_function_of_the_source(version):
    """The same English sentence always gets the same German one (no free choices)."""
    rng = random.Random(5)
    seen = {}
    for _ in range(8000):
        e = corpus.sample_example(rng, version)
        assert seen.setdefault(e.src, e.tgt) == e.tgt


def test_sentence_format(examples):
    low, high = {1: (4, 16), 2: (6, 26)}[examples.version]
    assert (corpus.version_of(examples.version).min_words, corpus.version_of(examples.version).max_words) == (
        low,
        high,
    )
    for e in examples:
        src, tgt = e.src.split(), e.tgt.split()
        assert " ".join(src) == e.src and " ".join(tgt) == e.tgt  # single spaces
        assert low <= len(src) <= high
        assert low <= len(tgt) <= high
        assert src[-1] == tgt[-1] and src[-1] in {".", "?"}
        assert not src[0][0].isupper() or src[0] == "I"


def test_alignments_are_consistent(examples):
    for e in examples:
        src, tgt = e.src.split(), e.tgt.split()
        assert list(e.alignment) == sorted(set(e.alignment))
        assert all(0 <= i < len(src) and 0 <= j < len(tgt) for i, j in e.alignment)
        aligned_src = {i for i, _ in e.alignment}
        aligned_tgt = {j for _, j in e.alignment}
        # Every English word has a counterpart; in German only the comma that opens a
        # subordinate clause ("…, dass …") can be unaligned.
        assert aligned_src == set(range(len(src))), e
        assert all(tgt[j] == "," for j in set(range(len(tgt))) - aligned_tgt), e
        for i, j in e.alignment:
            if src[i] in PUNCTUATION or tgt[j] in PUNCTUATION:
                assert src[i] == tgt[j], e
        # Articles are aligned to German determiners, nouns to capitalised German nouns.
        for i, j in e.alignment:
            if src[i] == "the":
                assert tgt[j] in {"der", "die", "das", "den", "dem", "im"}, e


def test_phenomena_are_present(examples):
    src_words = {w for e in examples for w in e.src.split()}
    assert INTERROGATIVES <= src_words
    questions = [e for e in examples if e.src.endswith("?")]
    assert 0.2 < len(questions) / len(examples) < 0.6
    assert all(e.tgt.endswith("?") for e in questions)
    # Verb-final subordinate clauses: "…, dass/weil … <finite verb> ." with the finite verb last.
    verbs = corpus.version_of(examples.version).verbs
    finite = {f for v in verbs for f in v.de_forms} | set(lexicon.HABEN) | set(lexicon.SEIN)
    finite |= {f for forms in lexicon.MODALS.values() for f in forms}
    finite |= {v.de_particle + f for v in verbs if v.de_particle for f in v.de_forms}
    subordinate = [e for e in examples if re.search(r", (dass|weil) [^,]*[.?]$", e.tgt)]
    assert len(subordinate) > 100
    assert all(e.tgt.split()[-2] in finite for e in subordinate)
    # Long compounds exist on both sides.
    tgt_words = {w for e in examples for w in e.tgt.split()}
    assert {"Bahnhofsvorsteher", "Kindergärtnerin", "Geburtstagskuchen"} <= tgt_words
    assert {"grandmother", "stationmaster"} <= src_words
    assert len(src_words) > 300 and len(tgt_words) > 500


def test_make_splits_are_disjoint_and_deterministic():
    splits = make_splits(300, 50, 60, seed=4)
    assert [len(splits[k]) for k in ("train", "valid", "test")] == [300, 50, 60]
    train = {e.src for e in splits["train"]}
    assert not train & {e.src for e in splits["valid"] + splits["test"]}
    assert not {e.src for e in splits["valid"]} & {e.src for e in splits["test"]}
    assert make_splits(300, 50, 60, seed=4) == splits
