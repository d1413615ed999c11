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
  der Hund ?") and wh-questions with the words in :data:`INTERROGATIVES` ("where does the teacher
  live ?" → "wo wohnt der Lehrer ?", "who does the child help ?" → "wem hilft das Kind ?");
* **agreement**: gender, number and case of articles, possessives, "dieser" and "welcher"
  (nominative / accusative / dative, with prepositions that govern a case and the contraction
  "in dem" → "im"), weak / mixed / strong adjective endings, weak masculine nouns ("den Jungen"),
  dative plural "-n", and verb conjugation by person and number, including stem changes
  ("sieht", "hilft", "läuft");
* **long and rare words** that a small BPE vocabulary splits into several pieces: German compounds
  ("Bahnhofsvorsteher", "Kindergärtnerin", "Geburtstagskuchen", "Feuerwehrauto") and English
  ones ("grandmother", "stationmaster", "toothbrush").

Conventions: words are separated by single spaces, punctuation ("," "." "?") is a separate token,
sentences start in lower case (German nouns are capitalised, as is English "I"). The translation
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
import itertools
import random
from pathlib import Path

__all__ = [
    "INTERROGATIVES",
    "Example",
    "generate_corpus",
    "load_tsv",
    "make_splits",
    "write_tsv",
]

#: English interrogative words the generator uses (the "interrogation head" analysis of the paper
#: measures attention from these words to the final "?").
INTERROGATIVES: frozenset[str] = frozenset({"what", "who", "where", "when", "why", "how", "which"})

MIN_WORDS = 4
MAX_WORDS = 16
RARE_WEIGHT = 0.25  # relative sampling weight of nouns marked rare


@dataclasses.dataclass(frozen=True)
class Example:
    """One sentence pair.

    ``src`` is English and ``tgt`` German, words separated by single spaces. ``alignment`` holds
    gold word alignment links (i, j): word i of ``src`` (0-based, split on spaces) translates to
    word j of ``tgt``. Words may have zero, one or several links; ``()`` means "no alignment
    known" (e.g. a TSV file without an alignment column).
    """

    src: str
    tgt: str
    alignment: tuple[tuple[int, int], ...] = ()


# ---------------------------------------------------------------------------------------------
# Lexicon
# ---------------------------------------------------------------------------------------------

ANIMATE = frozenset({"person", "animal"})
INANIMATE = frozenset({"thing", "food", "reading", "vehicle", "place"})
ANY = ANIMATE | INANIMATE


@dataclasses.dataclass(frozen=True)
class _Noun:
    en_sg: str  # may be several words ("train station")
    en_pl: str
    gender: str  # "m", "f", "n"
    de_sg: str
    de_pl: str
    category: str
    de_oblique: str  # accusative/dative singular (differs for weak masculine nouns: "Jungen")
    rare: bool  # sampled 4x less often, like long compounds in real text


def _nouns(table: str) -> tuple[_Noun, ...]:
    """Parse lines ``[*]en_sg|en_pl|gender|de_sg|de_pl|category[|oblique singular]``; "*" marks a
    rare word (mostly compounds)."""
    nouns = []
    for line in table.strip().splitlines():
        fields = [f.strip() for f in line.split("|")]
        en_sg, en_pl, gender, de_sg, de_pl, category = fields[:6]
        oblique = fields[6] if len(fields) > 6 else de_sg
        rare = en_sg.startswith("*")
        nouns.append(_Noun(en_sg.lstrip("*"), en_pl, gender, de_sg, de_pl, category, oblique, rare))
    return tuple(nouns)


NOUNS = _nouns(
    """
    teacher|teachers|m|Lehrer|Lehrer|person
    woman|women|f|Frau|Frauen|person
    man|men|m|Mann|Männer|person
    child|children|n|Kind|Kinder|person
    girl|girls|n|Mädchen|Mädchen|person
    boy|boys|m|Junge|Jungen|person|Jungen
    doctor|doctors|m|Arzt|Ärzte|person
    student|students|m|Student|Studenten|person|Studenten
    neighbour|neighbours|m|Nachbar|Nachbarn|person|Nachbarn
    farmer|farmers|m|Bauer|Bauern|person|Bauern
    policeman|policemen|m|Polizist|Polizisten|person|Polizisten
    mother|mothers|f|Mutter|Mütter|person
    father|fathers|m|Vater|Väter|person
    sister|sisters|f|Schwester|Schwestern|person
    brother|brothers|m|Bruder|Brüder|person
    friend|friends|m|Freund|Freunde|person
    *grandmother|grandmothers|f|Großmutter|Großmütter|person
    *grandfather|grandfathers|m|Großvater|Großväter|person
    *grandchild|grandchildren|n|Enkelkind|Enkelkinder|person
    baker|bakers|m|Bäcker|Bäcker|person
    queen|queens|f|Königin|Königinnen|person
    king|kings|m|König|Könige|person
    *stationmaster|stationmasters|m|Bahnhofsvorsteher|Bahnhofsvorsteher|person
    *firefighter|firefighters|m|Feuerwehrmann|Feuerwehrmänner|person
    *shopkeeper|shopkeepers|m|Ladenbesitzer|Ladenbesitzer|person
    *headmistress|headmistresses|f|Schulleiterin|Schulleiterinnen|person
    *kindergarten teacher|kindergarten teachers|f|Kindergärtnerin|Kindergärtnerinnen|person
    *bus driver|bus drivers|m|Busfahrer|Busfahrer|person
    dog|dogs|m|Hund|Hunde|animal
    cat|cats|f|Katze|Katzen|animal
    horse|horses|n|Pferd|Pferde|animal
    bird|birds|m|Vogel|Vögel|animal
    mouse|mice|f|Maus|Mäuse|animal
    cow|cows|f|Kuh|Kühe|animal
    rabbit|rabbits|n|Kaninchen|Kaninchen|animal
    *elephant|elephants|m|Elefant|Elefanten|animal|Elefanten
    monkey|monkeys|m|Affe|Affen|animal|Affen
    *squirrel|squirrels|n|Eichhörnchen|Eichhörnchen|animal
    *hedgehog|hedgehogs|m|Igel|Igel|animal
    *butterfly|butterflies|m|Schmetterling|Schmetterlinge|animal
    ball|balls|m|Ball|Bälle|thing
    key|keys|m|Schlüssel|Schlüssel|thing
    flower|flowers|f|Blume|Blumen|thing
    *sunflower|sunflowers|f|Sonnenblume|Sonnenblumen|thing
    picture|pictures|n|Bild|Bilder|thing
    chair|chairs|m|Stuhl|Stühle|thing
    table|tables|m|Tisch|Tische|thing
    *kitchen table|kitchen tables|m|Küchentisch|Küchentische|thing
    hat|hats|m|Hut|Hüte|thing
    *umbrella|umbrellas|m|Regenschirm|Regenschirme|thing
    *raincoat|raincoats|m|Regenmantel|Regenmäntel|thing
    *toothbrush|toothbrushes|f|Zahnbürste|Zahnbürsten|thing
    apple|apples|m|Apfel|Äpfel|food
    cake|cakes|m|Kuchen|Kuchen|food
    *birthday cake|birthday cakes|m|Geburtstagskuchen|Geburtstagskuchen|food
    strawberry|strawberries|f|Erdbeere|Erdbeeren|food
    *sandwich|sandwiches|n|Butterbrot|Butterbrote|food
    book|books|n|Buch|Bücher|reading
    *picture book|picture books|n|Bilderbuch|Bilderbücher|reading
    newspaper|newspapers|f|Zeitung|Zeitungen|reading
    letter|letters|m|Brief|Briefe|reading
    *fairy tale|fairy tales|n|Märchen|Märchen|reading
    *map|maps|f|Landkarte|Landkarten|reading
    *timetable|timetables|m|Fahrplan|Fahrpläne|reading
    car|cars|n|Auto|Autos|vehicle
    *bicycle|bicycles|n|Fahrrad|Fahrräder|vehicle
    *motorcycle|motorcycles|n|Motorrad|Motorräder|vehicle
    train|trains|m|Zug|Züge|vehicle
    bus|buses|m|Bus|Busse|vehicle
    *fire engine|fire engines|n|Feuerwehrauto|Feuerwehrautos|vehicle
    house|houses|n|Haus|Häuser|place
    garden|gardens|m|Garten|Gärten|place
    school|schools|f|Schule|Schulen|place
    park|parks|m|Park|Parks|place
    kitchen|kitchens|f|Küche|Küchen|place
    city|cities|f|Stadt|Städte|place
    village|villages|n|Dorf|Dörfer|place
    forest|forests|m|Wald|Wälder|place
    *hospital|hospitals|n|Krankenhaus|Krankenhäuser|place
    *train station|train stations|m|Bahnhof|Bahnhöfe|place
    *library|libraries|f|Bibliothek|Bibliotheken|place
    *playroom|playrooms|n|Spielzimmer|Spielzimmer|place
    *airport|airports|m|Flughafen|Flughäfen|place
    *bakery|bakeries|f|Bäckerei|Bäckereien|place
    *museum|museums|n|Museum|Museen|place
    zoo|zoos|m|Zoo|Zoos|place
    *fire station|fire stations|f|Feuerwache|Feuerwachen|place
    *lighthouse|lighthouses|m|Leuchtturm|Leuchttürme|place
    """
)


@dataclasses.dataclass(frozen=True)
class _Adjective:
    en: str
    de: str  # predicative (uninflected) form
    applies_to: frozenset[str]  # noun categories it is used with
    gradable: bool  # usable in "how old is …"

    @property
    def de_stem(self) -> str:
        """Stem for attributive endings: "müde" → "müd" so that "müd" + "en" = "müden"."""
        return self.de[:-1] if self.de.endswith("e") else self.de


def _adjectives(table: str) -> tuple[_Adjective, ...]:
    """Parse lines ``en | de | noun categories it goes with | gradable (0/1)``; "animate" and
    "inanimate" abbreviate category groups."""
    groups = {"animate": ANIMATE, "inanimate": INANIMATE, "any": ANY}
    out = []
    for line in table.strip().splitlines():
        en, de, scope, gradable = (f.strip() for f in line.split("|"))
        applies_to = frozenset().union(*(groups.get(c, {c}) for c in scope.split()))
        out.append(_Adjective(en, de, applies_to, gradable == "1"))
    return tuple(out)


ADJECTIVES = _adjectives(
    """
    big | groß | any | 1
    small | klein | any | 1
    old | alt | any | 1
    young | jung | animate | 1
    new | neu | inanimate | 0
    red | rot | inanimate | 0
    black | schwarz | animal inanimate | 0
    white | weiß | animal inanimate | 0
    green | grün | inanimate | 0
    yellow | gelb | inanimate | 0
    blue | blau | inanimate | 0
    beautiful | schön | any | 1
    famous | berühmt | person animal reading | 1
    dirty | schmutzig | any | 1
    clean | sauber | inanimate | 1
    fast | schnell | animate vehicle | 1
    loud | laut | animate vehicle | 1
    friendly | freundlich | animate | 1
    hungry | hungrig | animate | 1
    tired | müde | animate | 1
    happy | glücklich | animate | 1
    sad | traurig | animate | 1
    funny | lustig | animate | 1
    clever | klug | animate | 1
    brave | mutig | person | 0
    lazy | faul | animate | 1
    """
)


@dataclasses.dataclass(frozen=True)
class _Verb:
    """A verb with its English and German forms and its valency.

    ``de_forms`` lists the present tense for ich, du, er/sie, wir, sie (of the stem without
    a separable particle: "komme … " for "ankommen"); ``de_particle`` is the separable particle
    ("an"); ``kind`` is "intransitive", "acc", "dat" (object case) or "ditransitive" (dative +
    accusative). ``pps`` lists the prepositional phrases the verb takes ("loc", "with", "for"; a final "!"
    makes the phrase obligatory).
    """

    en_base: str
    en_3sg: str
    en_participle: str
    en_particle: str  # "for" in "look for", "up" in "tidy up"
    de_infinitive: str
    de_forms: tuple[str, ...]
    de_particle: str
    de_participle: str
    de_auxiliary: str  # "haben" or "sein"
    kind: str
    subjects: frozenset[str]
    objects: frozenset[str]
    pps: tuple[str, ...]
    how: bool = False  # "how does the child sleep ?"
    needs_pp: bool = False  # "live" needs a place ("lives in the city") unless asked "where"


def _verbs(table: str) -> tuple[_Verb, ...]:
    """Parse pairs of lines.

    First line: ``English base 3sg participle | English particle | German infinitive | German
    present (ich du er wir sie) | separable particle | participle | auxiliary``; second ``kind | subject
    categories | object categories ("any" = all) | prepositional phrases | usable with "how" (0/1)``.
    "-" marks an empty field.
    """
    lines = [line.strip() for line in table.strip().splitlines()]
    out = []
    for forms, valency in zip(lines[0::2], lines[1::2], strict=True):
        f = ["" if x.strip() == "-" else x.strip() for x in forms.split("|")]
        kind, subjects, objects, pps, how = (
            "" if x.strip() == "-" else x.strip() for x in valency.split("|")
        )
        en_base, en_3sg, en_participle = f[0].split()
        out.append(
            _Verb(
                en_base=en_base,
                en_3sg=en_3sg,
                en_participle=en_participle,
                en_particle=f[1],
                de_infinitive=f[2],
                de_forms=tuple(f[3].split()),
                de_particle=f[4],
                de_participle=f[5],
                de_auxiliary=f[6],
                kind=kind,
                subjects=frozenset(subjects.split()),
                objects=ANY if objects == "any" else frozenset(objects.split()),
                pps=tuple(p.rstrip("!") for p in pps.split()),
                needs_pp=pps.endswith("!"),
                how=how == "1",
            )
        )
    return tuple(out)


VERBS = _verbs(
    """
    see sees seen | - | sehen | sehe siehst sieht sehen sehen | - | gesehen | haben
        acc | person animal | any | loc | 0
    find finds found | - | finden | finde findest findet finden finden | - | gefunden | haben
        acc | person animal | person animal thing food reading | loc | 0
    visit visits visited | - | besuchen | besuche besuchst besucht besuchen besuchen | - | besucht | haben
        acc | person | person place | with | 0
    read reads read | - | lesen | lese liest liest lesen lesen | - | gelesen | haben
        acc | person | reading | loc | 0
    eat eats eaten | - | essen | esse isst isst essen essen | - | gegessen | haben
        acc | person | food | loc with | 0
    eat eats eaten | - | fressen | fresse frisst frisst fressen fressen | - | gefressen | haben
        acc | animal | food | loc | 0
    buy buys bought | - | kaufen | kaufe kaufst kauft kaufen kaufen | - | gekauft | haben
        acc | person | thing food reading vehicle animal | for | 0
    like likes liked | - | mögen | mag magst mag mögen mögen | - | gemocht | haben
        acc | person animal | any | - | 0
    know knows known | - | kennen | kenne kennst kennt kennen kennen | - | gekannt | haben
        acc | person | person animal place | - | 0
    carry carries carried | - | tragen | trage trägst trägt tragen tragen | - | getragen | haben
        acc | person | thing food reading animal | for | 0
    need needs needed | - | brauchen | brauche brauchst braucht brauchen brauchen | - | gebraucht | haben
        acc | person animal | thing food reading vehicle | for | 0
    draw draws drawn | - | zeichnen | zeichne zeichnest zeichnet zeichnen zeichnen | - | gezeichnet | haben
        acc | person | person animal thing food vehicle place | for loc | 0
    wash washes washed | - | waschen | wasche wäschst wäscht waschen waschen | - | gewaschen | haben
        acc | person | person animal thing vehicle | loc | 0
    look looks looked | for | suchen | suche suchst sucht suchen suchen | - | gesucht | haben
        acc | person animal | any | - | 0
    call calls called | - | anrufen | rufe rufst ruft rufen rufen | an | angerufen | haben
        acc | person | person | - | 0
    invite invites invited | - | einladen | lade lädst lädt laden laden | ein | eingeladen | haben
        acc | person | person | - | 0
    tidy tidies tidied | up | aufräumen | räume räumst räumt räumen räumen | auf | aufgeräumt | haben
        acc | person | place | - | 0
    help helps helped | - | helfen | helfe hilfst hilft helfen helfen | - | geholfen | haben
        dat | person animal | person animal | loc | 0
    follow follows followed | - | folgen | folge folgst folgt folgen folgen | - | gefolgt | sein
        dat | person animal | person animal vehicle | - | 0
    thank thanks thanked | - | danken | danke dankst dankt danken danken | - | gedankt | haben
        dat | person | person | - | 0
    give gives given | - | geben | gebe gibst gibt geben geben | - | gegeben | haben
        ditransitive | person | thing food reading animal | - | 0
    show shows shown | - | zeigen | zeige zeigst zeigt zeigen zeigen | - | gezeigt | haben
        ditransitive | person | thing reading animal vehicle place | - | 0
    bring brings brought | - | bringen | bringe bringst bringt bringen bringen | - | gebracht | haben
        ditransitive | person | thing food reading | - | 0
    sleep sleeps slept | - | schlafen | schlafe schläfst schläft schlafen schlafen | - | geschlafen | haben
        intransitive | person animal | - | loc | 1
    live lives lived | - | wohnen | wohne wohnst wohnt wohnen wohnen | - | gewohnt | haben
        intransitive | person | - | loc! | 0
    play plays played | - | spielen | spiele spielst spielt spielen spielen | - | gespielt | haben
        intransitive | person animal | - | loc with | 1
    laugh laughs laughed | - | lachen | lache lachst lacht lachen lachen | - | gelacht | haben
        intransitive | person | - | with | 1
    cry cries cried | - | weinen | weine weinst weint weinen weinen | - | geweint | haben
        intransitive | person | - | loc | 0
    work works worked | - | arbeiten | arbeite arbeitest arbeitet arbeiten arbeiten | - | gearbeitet | haben
        intransitive | person | - | loc with | 1
    wait waits waited | - | warten | warte wartest wartet warten warten | - | gewartet | haben
        intransitive | person animal | - | loc with | 0
    run runs run | - | laufen | laufe läufst läuft laufen laufen | - | gelaufen | sein
        intransitive | person animal | - | loc with | 1
    come comes come | - | kommen | komme kommst kommt kommen kommen | - | gekommen | sein
        intransitive | person animal vehicle | - | with | 0
    travel travels travelled | - | reisen | reise reist reist reisen reisen | - | gereist | sein
        intransitive | person | - | with | 1
    sing sings sung | - | singen | singe singst singt singen singen | - | gesungen | haben
        intransitive | person animal | - | loc with | 1
    swim swims swum | - | schwimmen | schwimme schwimmst schwimmt schwimmen schwimmen | - | geschwommen | sein
        intransitive | person animal | - | with | 1
    dance dances danced | - | tanzen | tanze tanzt tanzt tanzen tanzen | - | getanzt | haben
        intransitive | person | - | loc with | 1
    arrive arrives arrived | - | ankommen | komme kommst kommt kommen kommen | an | angekommen | sein
        intransitive | person vehicle | - | loc with | 0
    get gets got | up | aufstehen | stehe stehst steht stehen stehen | auf | aufgestanden | sein
        intransitive | person | - | with | 0
    """
)

#: Verbs that take a "that" clause ("I know that …" → "ich weiß , dass …"). Only "say" is used in
#: the perfect ("has said that …").
CLAUSE_VERBS = _verbs(
    """
    know knows known | - | wissen | weiß weißt weiß wissen wissen | - | gewusst | haben
        clause | person | - | - | 0
    think thinks thought | - | denken | denke denkst denkt denken denken | - | gedacht | haben
        clause | person | - | - | 0
    say says said | - | sagen | sage sagst sagt sagen sagen | - | gesagt | haben
        clause | person | - | - | 0
    hope hopes hoped | - | hoffen | hoffe hoffst hofft hoffen hoffen | - | gehofft | haben
        clause | person | - | - | 0
    """
)

# Person/number codes index the present-tense forms: ich, du, er/sie, wir, sie (no "ihr": English
# "you" is always translated as "du").
_PERSON_INDEX = {"1sg": 0, "2sg": 1, "3sg": 2, "1pl": 3, "3pl": 4}

HABEN = ("habe", "hast", "hat", "haben", "haben")
SEIN = ("bin", "bist", "ist", "sind", "sind")
MODALS = {  # English modal → German present forms and infinitive
    "can": ("kann", "kannst", "kann", "können", "können"),
    "must": ("muss", "musst", "muss", "müssen", "müssen"),
}
EN_BE = {"1sg": "am", "2sg": "are", "3sg": "is", "1pl": "are", "3pl": "are"}

# Personal pronouns: English subject, English object, German nominative, accusative, dative.
PRONOUNS = {
    "1sg": ("I", "me", "ich", "mich", "mir"),
    "2sg": ("you", "you", "du", "dich", "dir"),
    "3sg_m": ("he", "him", "er", "ihn", "ihm"),
    "3sg_f": ("she", "her", "sie", "sie", "ihr"),
    "1pl": ("we", "us", "wir", "uns", "uns"),
    "3pl": ("they", "them", "sie", "sie", "ihnen"),
}

# Possessive determiners: English → German stem (declined like "ein").
POSSESSIVES = {"my": "mein", "your": "dein", "his": "sein", "her": "ihr", "our": "unser", "their": "ihr"}

# Fronted time adverbs and the tenses they combine with.
ADVERBS = {
    "today": ("heute", ("pres", "perf", "can", "must")),
    "now": ("jetzt", ("pres", "can", "must")),
    "tomorrow": ("morgen", ("pres", "can", "must")),
    "sometimes": ("manchmal", ("pres", "can")),
    "usually": ("meistens", ("pres",)),
}

# Locative prepositions (all with the dative here).
LOCATIVE_PREPOSITIONS = {"in": "in", "behind": "hinter", "next to": "neben"}

# --- German declension tables, keyed by (case, gender or "pl") -------------------------------------

_DEFINITE = {
    ("nom", "m"): "der", ("nom", "f"): "die", ("nom", "n"): "das", ("nom", "pl"): "die",
    ("acc", "m"): "den", ("acc", "f"): "die", ("acc", "n"): "das", ("acc", "pl"): "die",
    ("dat", "m"): "dem", ("dat", "f"): "der", ("dat", "n"): "dem", ("dat", "pl"): "den",
}  # fmt: skip
_DIESER_ENDINGS = {  # "dies-", "welch-"
    ("nom", "m"): "er", ("nom", "f"): "e", ("nom", "n"): "es", ("nom", "pl"): "e",
    ("acc", "m"): "en", ("acc", "f"): "e", ("acc", "n"): "es", ("acc", "pl"): "e",
    ("dat", "m"): "em", ("dat", "f"): "er", ("dat", "n"): "em", ("dat", "pl"): "en",
}  # fmt: skip
_EIN_ENDINGS = {  # "ein", "mein", "unser", ...
    ("nom", "m"): "", ("nom", "f"): "e", ("nom", "n"): "", ("nom", "pl"): "e",
    ("acc", "m"): "en", ("acc", "f"): "e", ("acc", "n"): "", ("acc", "pl"): "e",
    ("dat", "m"): "em", ("dat", "f"): "er", ("dat", "n"): "em", ("dat", "pl"): "en",
}  # fmt: skip
_WEAK_ADJECTIVE = {  # after der / dieser / welcher, and after any determiner in the plural
    ("nom", "m"): "e", ("nom", "f"): "e", ("nom", "n"): "e", ("nom", "pl"): "en",
    ("acc", "m"): "en", ("acc", "f"): "e", ("acc", "n"): "e", ("acc", "pl"): "en",
    ("dat", "m"): "en", ("dat", "f"): "en", ("dat", "n"): "en", ("dat", "pl"): "en",
}  # fmt: skip
_MIXED_ADJECTIVE = {  # after ein / mein / unser ... (singular)
    ("nom", "m"): "er", ("nom", "f"): "e", ("nom", "n"): "es",
    ("acc", "m"): "en", ("acc", "f"): "e", ("acc", "n"): "es",
    ("dat", "m"): "en", ("dat", "f"): "en", ("dat", "n"): "en",
}  # fmt: skip
_STRONG_ADJECTIVE_PLURAL = {"nom": "e", "acc": "e", "dat": "en"}  # no determiner ("große Hunde")


# ---------------------------------------------------------------------------------------------
# Tokens with alignment keys
# ---------------------------------------------------------------------------------------------

# A token is (word, keys); an English and a German token are aligned iff their key sets intersect.
Token = tuple[str, frozenset]


def _tok(word: str, *keys: int) -> Token:
    return (word, frozenset(keys))


@dataclasses.dataclass
class _NP:
    """A noun phrase (or pronoun / wh-word) with alignment keys shared by both languages."""

    kind: str  # "noun", "pronoun", "who", "what"
    noun: _Noun | None = None
    determiner: str = "the"  # "the", "a", "none", "this", "which", or a possessive ("my", ...)
    adjective: _Adjective | None = None
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
            out.append(_tok(_DEFINITE[slot], det_key))
            adjective_endings = _WEAK_ADJECTIVE
        elif self.determiner in ("this", "which"):
            stem = "dies" if self.determiner == "this" else "welch"
            out.append(_tok(stem + _DIESER_ENDINGS[slot], det_key))
            adjective_endings = _WEAK_ADJECTIVE
        elif self.determiner == "none":
            adjective_endings = None
        else:  # "a" or a possessive: ein-words
            stem = "ein" if self.determiner == "a" else POSSESSIVES[self.determiner]
            out.append(_tok(stem + _EIN_ENDINGS[slot], det_key))
            adjective_endings = _WEAK_ADJECTIVE if self.plural else _MIXED_ADJECTIVE
        if self.adjective:
            if adjective_endings is None:
                ending = _STRONG_ADJECTIVE_PLURAL[case]
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
class _PP:
    kind: str  # "loc", "with", "for"
    preposition: str  # English
    np: _NP
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
class _Clause:
    """A clause before linearisation; realised as a main clause, question or subordinate clause."""

    subject: _NP
    verb: _Verb | None  # None: copula "be" + adjective
    tense: str  # "pres", "perf", "can", "must"
    keys: tuple[int, int]  # lexical verb, auxiliary/modal/copula
    obj: _NP | None = None
    indirect: _NP | None = None
    pp: _PP | None = None
    adjective: tuple[_Adjective, int] | None = None  # predicate adjective and its key
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
        index = _PERSON_INDEX[self.subject.person]
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

    def _objects(self, fronted: str | None) -> list[_NP]:
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


# ---------------------------------------------------------------------------------------------
# Sampling
# ---------------------------------------------------------------------------------------------


class _Generator:
    """Samples clauses and sentences; one instance per sentence keeps alignment keys unique."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self._keys = itertools.count(1)

    def key(self) -> int:
        return next(self._keys)

    def noun_phrase(self, categories, *, pronoun_ok: bool, avoid: tuple = ()) -> _NP:
        rng = self.rng
        keys = (self.key(), self.key(), self.key())
        if pronoun_ok and "person" in categories and rng.random() < 0.25:
            choices = [p for p in PRONOUNS if p not in avoid]
            return _NP("pronoun", pronoun=rng.choice(choices), keys=keys)
        nouns = [n for n in NOUNS if n.category in categories and n not in avoid]
        noun = rng.choices(nouns, [RARE_WEIGHT if n.rare else 1.0 for n in nouns])[0]
        plural = rng.random() < 0.3
        if plural:
            determiner = rng.choices(["the", "none", "possessive", "this"], [0.5, 0.25, 0.15, 0.1])[0]
        else:
            determiner = rng.choices(["the", "a", "possessive", "this"], [0.45, 0.2, 0.2, 0.15])[0]
        if determiner == "possessive":
            determiner = rng.choice(list(POSSESSIVES))
        adjective = None
        if rng.random() < 0.3:
            adjective = rng.choice([a for a in ADJECTIVES if noun.category in a.applies_to])
        return _NP("noun", noun, determiner, adjective, plural, keys=keys)

    def clause(self, *, copula_ok: bool = True, person_subject: bool = False) -> _Clause:
        """A clause with a random verb (or copula), subject, objects and optional PP."""
        rng = self.rng
        keys = (self.key(), self.key())
        if copula_ok and rng.random() < 0.15:
            subject = self.noun_phrase(["person"] if person_subject else ANY, pronoun_ok=True)
            subject.adjective = None  # not "green buses are yellow"
            adjective = rng.choice([a for a in ADJECTIVES if subject.category in a.applies_to])
            negated = (self.key(),) if rng.random() < 0.25 else None
            return _Clause(subject, None, "pres", keys, adjective=(adjective, self.key()), negated=negated)
        verbs = [v for v in VERBS if not person_subject or "person" in v.subjects]
        verb = rng.choice(verbs)
        subject = self.noun_phrase(["person"] if person_subject else verb.subjects, pronoun_ok=True)
        tense = rng.choices(["pres", "perf", "can", "must"], [0.55, 0.25, 0.12, 0.08])[0]
        clause = _Clause(subject, verb, tense, keys)
        avoid = (subject.noun,) if subject.noun else (subject.pronoun,)
        if verb.kind == "ditransitive":
            clause.indirect = self.noun_phrase(["person"], pronoun_ok=True, avoid=avoid)
            clause.obj = self.noun_phrase(verb.objects, pronoun_ok=False, avoid=avoid)
        elif verb.kind in ("acc", "dat"):
            # English "tidy up" would need "tidy it up": pronoun objects only for plain verbs.
            pronoun_ok = verb.en_particle != "up"
            clause.obj = self.noun_phrase(verb.objects, pronoun_ok=pronoun_ok, avoid=avoid)
        if verb.needs_pp or verb.pps and rng.random() < 0.3:
            clause.pp = self.prepositional_phrase(rng.choice(verb.pps), avoid)
        return clause

    def prepositional_phrase(self, kind: str, avoid: tuple) -> _PP:
        if kind == "loc":
            preposition = self.rng.choice(list(LOCATIVE_PREPOSITIONS))
            np = self.noun_phrase(["place"], pronoun_ok=False, avoid=avoid)
            np.plural = False  # one location
            if np.determiner in ("none",):
                np.determiner = "the"
        else:
            preposition = kind
            np = self.noun_phrase(["person", "animal"], pronoun_ok=True, avoid=avoid)
        return _PP(kind, preposition, np, self.key())

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
        clause.wh = self.rng.choice(options)
        if clause.wh == "where" and clause.pp is not None and clause.pp.kind == "loc":
            clause.pp = None  # "where does the teacher live ?"
        if clause.wh == "subject":
            self._make_wh(clause.subject, dative=False)
        elif clause.wh == "object":
            self._make_wh(clause.obj, dative=clause.verb.kind == "dat")
        return clause.english_question(), clause.german_question(), True

    def _make_wh(self, np: _NP, dative: bool) -> None:
        """Turn a noun phrase into "who"/"what" or "which N" (German "wer/wen/wem", "was", "welch-")."""
        # "was" has no dative: a non-person dative object is asked for with "which".
        if self.rng.random() < 0.4 or dative and np.category != "person":
            np.determiner = "which"
            return
        np.kind = "who" if np.category == "person" else "what"
        np.plural = False

    def that_clause(self) -> tuple[list[Token], list[Token], bool]:
        verb = self.rng.choice(CLAUSE_VERBS)
        subject = self.noun_phrase(["person"], pronoun_ok=True)
        tense = "perf" if verb.en_base == "say" and self.rng.random() < 0.4 else "pres"
        matrix = _Clause(subject, verb, tense, (self.key(), self.key()))
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

    def sentence(self) -> tuple[list[Token], list[Token]]:
        """A random sentence pair (as aligned tokens) ending in "." or "?"."""
        make = self.rng.choices(
            [self.statement, self.question, self.that_clause, self.because_clause, self.if_clause],
            [0.3, 0.35, 0.15, 0.1, 0.1],
        )[0]
        english, german, question = make()
        final = _tok("?" if question else ".", self.key())
        return [*english, final], [*german, final]


def _to_example(english: list[Token], german: list[Token]) -> Example:
    alignment = tuple(
        (i, j)
        for i, (_, en_keys) in enumerate(english)
        for j, (_, de_keys) in enumerate(german)
        if en_keys & de_keys
    )
    return Example(" ".join(w for w, _ in english), " ".join(w for w, _ in german), alignment)


def sample_example(rng: random.Random) -> Example:
    """One random sentence pair (not length-filtered, possibly a repeat)."""
    return _to_example(*_Generator(rng).sentence())


def generate_corpus(n: int, seed: int = 0) -> list[Example]:
    """``n`` distinct sentence pairs (distinct English sentences), deterministic given ``seed``.

    Each side has between MIN_WORDS and MAX_WORDS words (punctuation included). Raises
    ValueError if ``n`` distinct pairs cannot be found (the grammar has far more than 10⁶).
    """
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
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
    """
    corpus = generate_corpus(n_train + n_valid + n_test, seed)
    return {
        "train": corpus[:n_train],
        "valid": corpus[n_train : n_train + n_valid],
        "test": corpus[n_train + n_valid :],
    }


# ---------------------------------------------------------------------------------------------
# TSV files (to swap in real data)
# ---------------------------------------------------------------------------------------------


def _parse_alignment(field: str, n_src: int, n_tgt: int, where: str) -> tuple[tuple[int, int], ...]:
    links = []
    for link in field.split():
        parts = link.split("-")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise ValueError(f"{where}: bad alignment link {link!r}, expected 'i-j' with integers i, j ≥ 0")
        i, j = int(parts[0]), int(parts[1])
        if i >= n_src or j >= n_tgt:
            raise ValueError(
                f"{where}: alignment link {link!r} out of range ({n_src} source, {n_tgt} target words)"
            )
        links.append((i, j))
    return tuple(sorted(set(links)))


def load_tsv(path) -> list[Example]:
    """Read sentence pairs from a UTF-8 file with lines ``src<TAB>tgt[<TAB>alignment]``.

    The alignment column holds space-separated links "i-j" (English word i, German word j,
    0-based, as in fast_align / Pharaoh format); it may be absent or empty. Words are re-joined
    with single spaces. Blank lines are skipped; any other malformed line raises ValueError
    naming the file and line.
    """
    examples = []
    path = Path(path)
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        fields = line.split("\t")
        if len(fields) not in (2, 3):
            raise ValueError(f"{where}: expected 2 or 3 tab-separated fields, found {len(fields)}")
        src, tgt = " ".join(fields[0].split()), " ".join(fields[1].split())
        if not src or not tgt:
            raise ValueError(f"{where}: empty source or target sentence")
        alignment = ()
        if len(fields) == 3:
            alignment = _parse_alignment(fields[2], len(src.split()), len(tgt.split()), where)
        examples.append(Example(src, tgt, alignment))
    return examples


def write_tsv(examples, path) -> None:
    """Write ``examples`` in the format :func:`load_tsv` reads.

    The alignment column is written only if some example has an alignment.
    """
    with_alignment = any(e.alignment for e in examples)
    lines = []
    for e in examples:
        if "\t" in e.src + e.tgt or "\n" in e.src + e.tgt:
            raise ValueError(f"sentence contains a tab or newline: {e.src!r} / {e.tgt!r}")
        fields = [e.src, e.tgt]
        if with_alignment:
            fields.append(" ".join(f"{i}-{j}" for i, j in e.alignment))
        lines.append("\t".join(fields) + "\n")
    Path(path).write_text("".join(lines), encoding="utf-8")
