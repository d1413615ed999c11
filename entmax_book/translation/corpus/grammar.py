"""The grammar of the generated corpus: clauses realised in English and German with aligned tokens.

A token is ``(word, keys)``: an English and a German token are aligned iff their key sets
intersect. :class:`Generator` samples a clause structure (subject, verb, tense, objects,
prepositional phrase) from the :mod:`~entmax_book.translation.corpus.lexicon`, then linearises it in
both languages: English statements and questions with do-support, German verb-second main
clauses, verb-first questions and verb-final subordinate clauses. Some yes/no questions
are asked by the final "?" alone ("the dog sleeps ?"), so that the German word order depends on
a marker token at the other end of the sentence.
"""

from __future__ import annotations

import dataclasses
import itertools
import random

from entmax_book.translation.corpus.lexicon import (
    ADJECTIVES,
    ADJECTIVES_V2,
    ADVERBS,
    ANY,
    CLAUSE_VERBS,
    CLAUSE_VERBS_V2,
    DEFINITE,
    DIESER_ENDINGS,
    EIN_ENDINGS,
    EN_BE,
    HABEN,
    LOCATIVE_PREPOSITIONS,
    MIXED_ADJECTIVE,
    MODALS,
    NOUNS,
    NOUNS_V2,
    PERSON_INDEX,
    POSSESSIVES,
    PRONOUNS,
    RARE_WEIGHT,
    SEIN,
    STRONG_ADJECTIVE_PLURAL,
    VERBS,
    VERBS_V2,
    WEAK_ADJECTIVE,
    Adjective,
    Noun,
    Verb,
)

__all__ = [
    "MARKER_QUESTION_SHARE",
    "VERSION_1",
    "VERSION_2",
    "VERSION_3",
    "Clause",
    "Generator",
    "NounPhrase",
    "PrepositionalPhrase",
    "Token",
    "Version",
    "aligned_words",
]

Token = tuple[str, frozenset]

#: Share of questions asked by the final "?" alone, in statement word order (a marker question,
#: see :data:`~entmax_book.translation.corpus.lexicon.AUXILIARIES`).
MARKER_QUESTION_SHARE = 0.3


def _tok(word: str, *keys: int) -> Token:
    return (word, frozenset(keys))


#: The sentence types a :class:`Generator` draws, in the order of ``Version.sentence_weights``.
SENTENCE_TYPES = ("statement", "question", "that_clause", "because_clause", "if_clause", "that_because")


@dataclasses.dataclass(frozen=True)
class Version:
    """A version of the corpus: the words a :class:`Generator` draws and how it builds sentences.

    Attributes:
      nouns, adjectives, verbs, clause_verbs: the lexicon (verbs that take a "that" clause apart).
      adjective_share: share of noun phrases with an attributive adjective.
      pp_share: share of clauses with an optional prepositional phrase (when the verb takes one).
      sentence_weights: relative weights of the :data:`SENTENCE_TYPES`, in that order (a type
        left out at the end is never drawn).
      min_words, max_words: words per side (punctuation included) of a pair the corpus keeps.
    """

    nouns: tuple[Noun, ...]
    adjectives: tuple[Adjective, ...]
    verbs: tuple[Verb, ...]
    clause_verbs: tuple[Verb, ...]
    adjective_share: float
    pp_share: float
    sentence_weights: tuple[float, ...]
    min_words: int
    max_words: int

    @property
    def two_word_nouns(self) -> frozenset[tuple[str, str]]:
        """The English nouns written as two words, as word pairs (singular and plural)."""
        return frozenset(
            tuple(name.split()) for noun in self.nouns for name in (noun.en_sg, noun.en_pl) if " " in name
        )


#: Version 1, the corpus of Chapter 5's first records: 88 nouns (9 of them two-word nouns), 26
#: adjectives, 38 verbs and 4 that take a "that" clause; one or two clauses; 4–16 words a side.
VERSION_1 = Version(
    nouns=NOUNS,
    adjectives=ADJECTIVES,
    verbs=VERBS,
    clause_verbs=CLAUSE_VERBS,
    adjective_share=0.3,
    pp_share=0.3,
    sentence_weights=(0.3, 0.35, 0.15, 0.1, 0.1),
    min_words=4,
    max_words=16,
)

#: Version 2, a harder task: the larger lexicon of :data:`~entmax_book.translation.corpus.lexicon.NOUNS_V2`
#: (nearly twice the nouns; every word of a two-word noun also a noun of its own), more adjectives
#: and prepositional phrases, a quarter of the sentences with three clauses ("… that … because …"),
#: 6–26 words a side.
VERSION_2 = Version(
    nouns=NOUNS_V2,
    adjectives=ADJECTIVES_V2,
    verbs=VERBS_V2,
    clause_verbs=CLAUSE_VERBS_V2,
    adjective_share=0.45,
    pp_share=0.5,
    sentence_weights=(0.15, 0.3, 0.1, 0.1, 0.1, 0.25),
    min_words=6,
    max_words=26,
)


#: Version 3, a task off the ceiling at version 1's cost: version 2's lexicon (every word of a
#: two-word noun also a noun of its own, so both words are needed) in version 1's sentence
#: shapes and lengths (one or two clauses, 4–16 words a side). With more words spread over the
#: same number of training pairs, each word is seen less often.
VERSION_3 = dataclasses.replace(
    VERSION_2, sentence_weights=VERSION_1.sentence_weights, min_words=4, max_words=16
)


@dataclasses.dataclass
class NounPhrase:
    """A noun phrase (or pronoun / wh-word) with alignment keys shared by both languages."""

    kind: str  # "noun", "pronoun", "who", "what"
    noun: Noun | None = None
    determiner: str = "the"  # "the", "a", "none", "this", "which", or a possessive ("my", ...)
    adjective: Adjective | None = None
    plural: bool = False
    pronoun: str = ""  # key of PRONOUNS
    keys: tuple[int, int, int] = (0, 0, 0)  # determiner, adjective, noun

    @property
    def person(self) -> str:
        if self.kind == "pronoun":
            return self.pronoun[:3]
        return "3pl" if self.plural else "3sg"

    @property
    def category(self) -> str:
        if self.kind in ("pronoun", "who"):
            return "person"
        return self.noun.category if self.noun else "thing"

    def english(self, role: str = "subject") -> list[Token]:
        det_key, adj_key, noun_key = self.keys
        if self.kind == "pronoun":
            subject, obj = PRONOUNS[self.pronoun][:2]
            return [_tok(subject if role == "subject" else obj, noun_key)]
        if self.kind in ("who", "what"):
            return [_tok(self.kind, noun_key)]
        out = []
        words = (self.noun.en_pl if self.plural else self.noun.en_sg).split()
        if self.adjective:
            words = [self.adjective.en, *words]
        if self.determiner == "a":
            out.append(_tok("an" if words[0][0] in "aeiou" else "a", det_key))
        elif self.determiner == "this":
            out.append(_tok("these" if self.plural else "this", det_key))
        elif self.determiner != "none":
            out.append(_tok(self.determiner, det_key))
        if self.adjective:
            out.append(_tok(words.pop(0), adj_key))
        out.extend(_tok(w, noun_key) for w in words)
        return out

    def german(self, case: str) -> list[Token]:
        det_key, adj_key, noun_key = self.keys
        if self.kind == "pronoun":
            nom, acc, dat = PRONOUNS[self.pronoun][2:]
            return [_tok({"nom": nom, "acc": acc, "dat": dat}[case], noun_key)]
        if self.kind == "who":
            return [_tok({"nom": "wer", "acc": "wen", "dat": "wem"}[case], noun_key)]
        if self.kind == "what":
            return [_tok("was", noun_key)]
        slot = (case, "pl" if self.plural else self.noun.gender)
        out = []
        if self.determiner == "the":
            out.append(_tok(DEFINITE[slot], det_key))
            adjective_endings = WEAK_ADJECTIVE
        elif self.determiner in ("this", "which"):
            stem = "dies" if self.determiner == "this" else "welch"
            out.append(_tok(stem + DIESER_ENDINGS[slot], det_key))
            adjective_endings = WEAK_ADJECTIVE
        elif self.determiner == "none":
            adjective_endings = None
        else:  # "a" or a possessive: ein-words
            stem = "ein" if self.determiner == "a" else POSSESSIVES[self.determiner]
            out.append(_tok(stem + EIN_ENDINGS[slot], det_key))
            adjective_endings = WEAK_ADJECTIVE if self.plural else MIXED_ADJECTIVE
        if self.adjective:
            if adjective_endings is None:
                ending = STRONG_ADJECTIVE_PLURAL[case]
            else:
                ending = adjective_endings[slot]
            out.append(_tok(self.adjective.de_stem + ending, adj_key))
        out.append(_tok(self._german_noun(case), noun_key))
        return out

    def _german_noun(self, case: str) -> str:
        noun = self.noun
        if not self.plural:
            return noun.de_sg if case == "nom" else noun.de_oblique
        if case == "dat" and not noun.de_pl.endswith(("n", "s")):
            return noun.de_pl + "n"  # dative plural: "den Kindern"
        return noun.de_pl


@dataclasses.dataclass
class PrepositionalPhrase:
    kind: str  # "loc", "with", "for"
    preposition: str  # English
    np: NounPhrase
    key: int

    def english(self) -> list[Token]:
        return [*(_tok(w, self.key) for w in self.preposition.split()), *self.np.english("object")]

    def german(self) -> list[Token]:
        if self.kind == "for":
            return [_tok("für", self.key), *self.np.german("acc")]
        german = "mit" if self.kind == "with" else LOCATIVE_PREPOSITIONS[self.preposition]
        phrase = self.np.german("dat")
        if german == "in" and self.np.determiner == "the" and phrase[0][0] == "dem":
            # "in dem" contracts to "im"; the contraction is aligned to both "in" and "the".
            return [("im", frozenset({self.key}) | phrase[0][1]), *phrase[1:]]
        return [_tok(german, self.key), *phrase]


@dataclasses.dataclass
class Clause:
    """A clause before linearisation; realised as a main clause, question or subordinate clause."""

    subject: NounPhrase
    verb: Verb | None  # None: copula "be" + adjective
    tense: str  # "pres", "perf", "can", "must"
    keys: tuple[int, int]  # lexical verb, auxiliary/modal/copula
    obj: NounPhrase | None = None
    indirect: NounPhrase | None = None
    pp: PrepositionalPhrase | None = None
    adjective: tuple[Adjective, int] | None = None  # predicate adjective and its key
    negated: tuple[int] | None = None  # key of "not"/"nicht" when negated
    wh: str | None = None  # None, "subject", "object", "where", "when", "why", "how", "how_adj"
    wh_key: int = 0

    # --- English ---------------------------------------------------------------------------

    def _en_lexical(self, form: str) -> list[Token]:
        verb_key = self.keys[0]
        word = {"base": self.verb.en_base, "3sg": self.verb.en_3sg, "part": self.verb.en_participle}[form]
        out = [_tok(word, verb_key)]
        if self.verb.en_particle:
            out.append(_tok(self.verb.en_particle, verb_key))
        return out

    def _en_complements(self, with_object: bool = True) -> list[Token]:
        out = []
        if self.indirect:
            out += self.indirect.english("object")
        if self.obj and with_object:
            out += self.obj.english("object")
        if self.pp:
            out += self.pp.english()
        return out

    def _en_auxiliary(self) -> Token:
        """The word that inverts in questions: do/does, has/have, can/must, am/is/are."""
        verb_key, aux_key = self.keys
        third = self.subject.person == "3sg"
        if self.verb is None:
            return _tok(EN_BE[self.subject.person], aux_key)
        if self.tense == "pres":
            return _tok("does" if third else "do", verb_key)  # do-support: aligned to the German verb
        if self.tense == "perf":
            return _tok("has" if third else "have", aux_key)
        return _tok(self.tense, aux_key)

    def _en_predicate_tail(self) -> list[Token]:
        """What follows the subject in a question after the inverted auxiliary."""
        if self.verb is None:
            adjective, adj_key = self.adjective
            neg = [_tok("not", self.negated[0])] if self.negated else []
            return [*neg, _tok(adjective.en, adj_key)]
        form = "part" if self.tense == "perf" else "base"
        return self._en_lexical(form)

    def _en_declarative(self) -> list[Token]:
        """subject + verb group + complements ("the dog has seen the cat")."""
        subject = self.subject.english("subject")
        if self.verb is None:
            return [*subject, self._en_auxiliary(), *self._en_predicate_tail()]
        if self.tense == "pres":
            third = self.subject.person == "3sg"
            verb_group = self._en_lexical("3sg" if third else "base")
        else:
            verb_group = [self._en_auxiliary(), *self._en_predicate_tail()]
        return [*subject, *verb_group, *self._en_complements()]

    def english_statement(self) -> list[Token]:
        return self._en_declarative()

    def english_question(self) -> list[Token]:
        subject = self.subject.english("subject")
        wh = [_tok(self.wh, self.wh_key)] if self.wh in ("where", "when", "why", "how") else []
        if self.wh == "subject":
            return self._en_declarative()  # "who sees the cat", no inversion
        if self.wh == "how_adj":
            adjective, adj_key = self.adjective
            return [_tok("how", self.wh_key), _tok(adjective.en, adj_key), self._en_auxiliary(), *subject]
        if self.wh == "object":
            return [
                *self.obj.english("object"),
                self._en_auxiliary(),
                *subject,
                *self._en_predicate_tail(),
                *self._en_complements(with_object=False),
            ]
        complements = [] if self.verb is None else self._en_complements()
        return [*wh, self._en_auxiliary(), *subject, *self._en_predicate_tail(), *complements]

    # --- German ----------------------------------------------------------------------------

    def _de_finite(self) -> Token:
        verb_key, aux_key = self.keys
        index = PERSON_INDEX[self.subject.person]
        if self.verb is None:
            return _tok(SEIN[index], aux_key)
        if self.tense == "pres":
            return _tok(self.verb.de_forms[index], verb_key)
        if self.tense == "perf":
            forms = HABEN if self.verb.de_auxiliary == "haben" else SEIN
            return _tok(forms[index], aux_key)
        return _tok(MODALS[self.tense][index], aux_key)

    def _de_nonfinite(self) -> list[Token]:
        """Right sentence bracket of a main clause: separable particle, participle or infinitive."""
        verb_key = self.keys[0]
        if self.verb is None:
            return []
        if self.tense == "pres":
            return [_tok(self.verb.de_particle, verb_key)] if self.verb.de_particle else []
        if self.tense == "perf":
            return [_tok(self.verb.de_participle, verb_key)]
        return [_tok(self.verb.de_infinitive, verb_key)]

    def _de_middle(self, fronted: str | None) -> list[Token]:
        """Middle field: subject, dative, accusative, PP, (nicht) predicate adjective.

        Unstressed object pronouns come before a noun subject ("heute sieht ihn der Hund",
        "dass ihm der Lehrer ein Buch gibt"), as is usual in German.
        """
        objects = []
        if self.indirect:
            objects += [self.indirect.german("dat")]
        if self.obj and fronted != "object":
            objects += [self.obj.german("dat" if self.verb.kind == "dat" else "acc")]
        out = []
        if fronted != "subject":
            if self.subject.kind == "noun":
                pronouns = [
                    o for o, np in zip(objects, self._objects(fronted), strict=True) if np.kind == "pronoun"
                ]
                objects = [o for o in objects if o not in pronouns]
                out += [t for o in pronouns for t in o]
            out += self.subject.german("nom")
        out += [t for o in objects for t in o]
        if self.pp:
            out += self.pp.german()
        if self.negated:
            out.append(_tok("nicht", self.negated[0]))
        if self.adjective and fronted != "how_adj":
            adjective, adj_key = self.adjective
            out.append(_tok(adjective.de, adj_key))
        return out

    def _objects(self, fronted: str | None) -> list[NounPhrase]:
        """The object noun phrases in the middle field, in the order of ``_de_middle``."""
        return [np for np in (self.indirect, None if fronted == "object" else self.obj) if np is not None]

    def _de_fronted(self) -> list[Token]:
        if self.wh == "subject":
            return self.subject.german("nom")
        if self.wh == "object":
            return self.obj.german("dat" if self.verb.kind == "dat" else "acc")
        if self.wh == "how_adj":
            adjective, adj_key = self.adjective
            return [_tok("wie", self.wh_key), _tok(adjective.de, adj_key)]
        words = {"where": "wo", "when": "wann", "why": "warum", "how": "wie"}
        return [_tok(words[self.wh], self.wh_key)] if self.wh else []

    def german_verb_second(self, fronted: list[Token] | None = None) -> list[Token]:
        """Main clause with the finite verb in second position after ``fronted`` (default: the
        subject), e.g. "heute sieht der Hund die Katze"."""
        if fronted is None:
            return [*self.subject.german("nom"), self._de_finite(), *self._de_middle("subject"),
                    *self._de_nonfinite()]  # fmt: skip
        return [*fronted, self._de_finite(), *self._de_middle(None), *self._de_nonfinite()]

    def german_question(self) -> list[Token]:
        """Verb-first (yes/no) or wh-word + verb-second; also the main clause after "wenn …,"."""
        front = self._de_fronted()
        role = self.wh if self.wh in ("subject", "object", "how_adj") else None
        return [*front, self._de_finite(), *self._de_middle(role), *self._de_nonfinite()]

    def german_subordinate(self) -> list[Token]:
        """Verb-final: "dass der Hund die Katze gesehen hat", "weil der Zug ankommt"."""
        finite = self._de_finite()
        if self.verb is not None and self.tense == "pres":
            # No right bracket in the present; a separable particle joins the verb: "ankommt".
            return [*self._de_middle(None), (self.verb.de_particle + finite[0], finite[1])]
        return [*self._de_middle(None), *self._de_nonfinite(), finite]


class Generator:
    """Samples clauses and sentences; one instance per sentence keeps alignment keys unique.

    Args:
      rng: the random generator to draw from.
      version: the corpus :class:`Version` (words and sentence shapes) to draw.
    """

    def __init__(self, rng: random.Random, version: Version = VERSION_1):
        self.rng = rng
        self.version = version
        self._keys = itertools.count(1)

    def key(self) -> int:
        return next(self._keys)

    def noun_phrase(self, categories, *, pronoun_ok: bool, avoid: tuple = ()) -> NounPhrase:
        rng = self.rng
        keys = (self.key(), self.key(), self.key())
        if pronoun_ok and "person" in categories and rng.random() < 0.25:
            choices = [p for p in PRONOUNS if p not in avoid]
            return NounPhrase("pronoun", pronoun=rng.choice(choices), keys=keys)
        nouns = [n for n in self.version.nouns if n.category in categories and n not in avoid]
        noun = rng.choices(nouns, [RARE_WEIGHT if n.rare else 1.0 for n in nouns])[0]
        plural = rng.random() < 0.3
        if plural:
            determiner = rng.choices(["the", "none", "possessive", "this"], [0.5, 0.25, 0.15, 0.1])[0]
        else:
            determiner = rng.choices(["the", "a", "possessive", "this"], [0.45, 0.2, 0.2, 0.15])[0]
        if determiner == "possessive":
            determiner = rng.choice(list(POSSESSIVES))
        adjective = None
        if rng.random() < self.version.adjective_share:
            adjective = rng.choice([a for a in self.version.adjectives if noun.category in a.applies_to])
        return NounPhrase("noun", noun, determiner, adjective, plural, keys=keys)

    def clause(self, *, copula_ok: bool = True, person_subject: bool = False) -> Clause:
        """A clause with a random verb (or copula), subject, objects and optional PP."""
        rng = self.rng
        keys = (self.key(), self.key())
        if copula_ok and rng.random() < 0.15:
            subject = self.noun_phrase(["person"] if person_subject else ANY, pronoun_ok=True)
            subject.adjective = None  # not "green buses are yellow"
            adjective = rng.choice([a for a in self.version.adjectives if subject.category in a.applies_to])
            negated = (self.key(),) if rng.random() < 0.25 else None
            return Clause(subject, None, "pres", keys, adjective=(adjective, self.key()), negated=negated)
        verbs = [v for v in self.version.verbs if not person_subject or "person" in v.subjects]
        verb = rng.choice(verbs)
        subject = self.noun_phrase(["person"] if person_subject else verb.subjects, pronoun_ok=True)
        tense = rng.choices(["pres", "perf", "can", "must"], [0.55, 0.25, 0.12, 0.08])[0]
        clause = Clause(subject, verb, tense, keys)
        avoid = (subject.noun,) if subject.noun else (subject.pronoun,)
        if verb.kind == "ditransitive":
            clause.indirect = self.noun_phrase(["person"], pronoun_ok=True, avoid=avoid)
            clause.obj = self.noun_phrase(verb.objects, pronoun_ok=False, avoid=avoid)
            self._keep_apart(clause.indirect, clause.obj)
        elif verb.kind in ("acc", "dat"):
            # English "tidy up" would need "tidy it up": pronoun objects only for plain verbs.
            pronoun_ok = verb.en_particle != "up"
            clause.obj = self.noun_phrase(verb.objects, pronoun_ok=pronoun_ok, avoid=avoid)
        if verb.needs_pp or verb.pps and rng.random() < self.version.pp_share:
            clause.pp = self.prepositional_phrase(rng.choice(verb.pps), avoid)
        return clause

    def _keep_apart(self, first: NounPhrase, second: NounPhrase) -> None:
        """Two adjacent English noun phrases ("gives the fairy tales") must not read as one
        two-word noun ("fairy tale"): the second then takes "the" (no draw, so a corpus where this
        never happens, version 1, is unchanged)."""
        words = [w for w, _ in first.english("object")], [w for w, _ in second.english("object")]
        if (words[0][-1], words[1][0]) in self.version.two_word_nouns:
            second.determiner = "the"

    def prepositional_phrase(self, kind: str, avoid: tuple) -> PrepositionalPhrase:
        if kind == "loc":
            preposition = self.rng.choice(list(LOCATIVE_PREPOSITIONS))
            np = self.noun_phrase(["place"], pronoun_ok=False, avoid=avoid)
            np.plural = False  # one location
            if np.determiner in ("none",):
                np.determiner = "the"
        else:
            preposition = kind
            np = self.noun_phrase(["person", "animal"], pronoun_ok=True, avoid=avoid)
        return PrepositionalPhrase(kind, preposition, np, self.key())

    # --- sentence types (each returns English tokens, German tokens, is_question) -----------------

    def statement(self) -> tuple[list[Token], list[Token], bool]:
        clause = self.clause()
        if self.rng.random() < 0.3:
            adverbs = [
                a for a, (_, tenses) in ADVERBS.items() if clause.verb is None or clause.tense in tenses
            ]
            adverb, key = self.rng.choice(adverbs), self.key()
            english = [_tok(adverb, key), *clause.english_statement()]
            return english, clause.german_verb_second([_tok(ADVERBS[adverb][0], key)]), False
        return clause.english_statement(), clause.german_verb_second(), False

    def question(self) -> tuple[list[Token], list[Token], bool]:
        clause = self.clause()
        clause.negated = None
        clause.wh_key = self.key()
        options = [None, "why"]
        if clause.tense != "perf" and clause.verb is not None:  # not "when has the dog slept"
            options.append("when")
        person_subject = clause.subject.kind == "noun" and clause.subject.category == "person"
        if person_subject:
            options.append("subject")
        if clause.verb is None:
            if clause.adjective[0].gradable and clause.subject.kind == "noun":
                options.append("how_adj")
        else:
            if clause.obj and clause.obj.kind == "noun" and clause.verb.en_particle != "up":
                options.append("object")
            has_place = clause.pp is not None and clause.pp.kind == "loc"
            if "loc" in clause.verb.pps and (not has_place or clause.verb.needs_pp):
                options.append("where")
            if clause.verb.how and not clause.pp:
                options.append("how")
        marker = self.rng.random() < MARKER_QUESTION_SHARE
        clause.wh = None if marker else self.rng.choice(options)
        if clause.wh == "where" and clause.pp is not None and clause.pp.kind == "loc":
            clause.pp = None  # "where does the teacher live ?"
        if clause.wh == "subject":
            self._make_wh(clause.subject, dative=False)
        elif clause.wh == "object":
            self._make_wh(clause.obj, dative=clause.verb.kind == "dat")
        if marker:
            # "the dog sleeps ?" → "schläft der Hund ?": the German order hangs on the final "?".
            return clause.english_statement(), clause.german_question(), True
        return clause.english_question(), clause.german_question(), True

    def _make_wh(self, np: NounPhrase, dative: bool) -> None:
        """Turn a noun phrase into "who"/"what" or "which N" (German "wer/wen/wem", "was", "welch-")."""
        # "was" has no dative: a non-person dative object is asked for with "which".
        if self.rng.random() < 0.4 or dative and np.category != "person":
            np.determiner = "which"
            return
        np.kind = "who" if np.category == "person" else "what"
        np.plural = False

    def that_clause(self) -> tuple[list[Token], list[Token], bool]:
        verb = self.rng.choice(self.version.clause_verbs)
        subject = self.noun_phrase(["person"], pronoun_ok=True)
        tense = "perf" if verb.en_base == "say" and self.rng.random() < 0.4 else "pres"
        matrix = Clause(subject, verb, tense, (self.key(), self.key()))
        inner = self.clause()
        that = self.key()
        question = self.rng.random() < 0.25
        if question:  # "does the teacher know that …" → "weiß der Lehrer , dass …"
            en_matrix = [matrix._en_auxiliary(), *subject.english("subject"), *matrix._en_predicate_tail()]
            de_matrix = matrix.german_question()
        else:
            en_matrix, de_matrix = matrix.english_statement(), matrix.german_verb_second()
        english = [*en_matrix, _tok("that", that), *inner.english_statement()]
        german = [*de_matrix, _tok(","), _tok("dass", that), *inner.german_subordinate()]
        return english, german, question

    def because_clause(self) -> tuple[list[Token], list[Token], bool]:
        main, inner = self.clause(), self.clause()
        because = self.key()
        english = [*main.english_statement(), _tok("because", because), *inner.english_statement()]
        german = [*main.german_verb_second(), _tok(","), _tok("weil", because), *inner.german_subordinate()]
        return english, german, False

    def if_clause(self) -> tuple[list[Token], list[Token], bool]:
        main, inner = self.clause(), self.clause()
        conj = self.key()
        if self.rng.random() < 0.5:  # "if …, …": the German main clause then starts with its verb
            comma = self.key()
            english = [
                _tok("if", conj),
                *inner.english_statement(),
                _tok(",", comma),
                *main.english_statement(),
            ]
            german = [
                _tok("wenn", conj),
                *inner.german_subordinate(),
                _tok(",", comma),
                *main.german_question(),
            ]
        else:
            english = [*main.english_statement(), _tok("if", conj), *inner.english_statement()]
            german = [*main.german_verb_second(), _tok(","), _tok("wenn", conj), *inner.german_subordinate()]
        return english, german, False

    def that_because(self) -> tuple[list[Token], list[Token], bool]:
        """Three clauses: "the teacher says that the dog sleeps because it is tired" → "der
        Lehrer sagt , dass der Hund schläft , weil er müde ist": two verb-final clauses."""
        english, german, question = self.that_clause()
        inner = self.clause()
        because = self.key()
        english = [*english, _tok("because", because), *inner.english_statement()]
        german = [*german, _tok(","), _tok("weil", because), *inner.german_subordinate()]
        return english, german, question

    def sentence(self) -> tuple[list[Token], list[Token]]:
        """A random sentence pair (as aligned tokens) ending in "." or "?"."""
        weights = self.version.sentence_weights
        make = self.rng.choices([getattr(self, name) for name in SENTENCE_TYPES[: len(weights)]], weights)[0]
        english, german, question = make()
        final = _tok("?" if question else ".", self.key())
        return [*english, final], [*german, final]


def aligned_words(english: list[Token], german: list[Token]) -> tuple[list[str], list[str], tuple]:
    """The words of both sides and their alignment links (i, j): tokens i and j share a key."""
    alignment = tuple(
        (i, j)
        for i, (_, en_keys) in enumerate(english)
        for j, (_, de_keys) in enumerate(german)
        if en_keys & de_keys
    )
    return [w for w, _ in english], [w for w, _ in german], alignment
