"""Word lists and inflection tables of the generated English → German corpus.

Nouns, adjectives and verbs are written as small tables (one entry per line) and parsed into
frozen dataclasses; pronouns, possessives, adverbs and the German declension tables are plain
dicts. :mod:`~entmax_book.translation.corpus.grammar` combines them into sentences.
"""

from __future__ import annotations

import dataclasses

#: English interrogative words the generator uses (the "interrogation head" analysis of the paper
#: measures attention from these words to the final "?").
INTERROGATIVES: frozenset[str] = frozenset({"what", "who", "where", "when", "why", "how", "which"})

RARE_WEIGHT = 0.25  # relative sampling weight of nouns marked rare

#: English words that open a question by inversion ("does the dog sleep ?"). A question that
#: opens with none of them and has no interrogative word is a *marker question* ("the dog
#: sleeps ?"): only its final "?" tells that the German verb comes first ("schläft der Hund ?").
AUXILIARIES: frozenset[str] = frozenset({"do", "does", "is", "are", "am", "can", "must", "has", "have"})

ANIMATE = frozenset({"person", "animal"})
INANIMATE = frozenset({"thing", "food", "reading", "vehicle", "place"})
ANY = ANIMATE | INANIMATE


@dataclasses.dataclass(frozen=True)
class Noun:
    en_sg: str  # may be several words ("train station")
    en_pl: str
    gender: str  # "m", "f", "n"
    de_sg: str
    de_pl: str
    category: str
    de_oblique: str  # accusative/dative singular (differs for weak masculine nouns: "Jungen")
    rare: bool  # sampled 4x less often, like long compounds in real text


def _nouns(table: str) -> tuple[Noun, ...]:
    """Parse lines ``[*]en_sg|en_pl|gender|de_sg|de_pl|category[|oblique singular]``; "*" marks a
    rare word (mostly compounds)."""
    nouns = []
    for line in table.strip().splitlines():
        fields = [f.strip() for f in line.split("|")]
        en_sg, en_pl, gender, de_sg, de_pl, category = fields[:6]
        oblique = fields[6] if len(fields) > 6 else de_sg
        rare = en_sg.startswith("*")
        nouns.append(Noun(en_sg.lstrip("*"), en_pl, gender, de_sg, de_pl, category, oblique, rare))
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
    kindergarten teacher|kindergarten teachers|f|Kindergärtnerin|Kindergärtnerinnen|person
    bus driver|bus drivers|m|Busfahrer|Busfahrer|person
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
    kitchen table|kitchen tables|m|Küchentisch|Küchentische|thing
    hat|hats|m|Hut|Hüte|thing
    *umbrella|umbrellas|m|Regenschirm|Regenschirme|thing
    *raincoat|raincoats|m|Regenmantel|Regenmäntel|thing
    *toothbrush|toothbrushes|f|Zahnbürste|Zahnbürsten|thing
    apple|apples|m|Apfel|Äpfel|food
    cake|cakes|m|Kuchen|Kuchen|food
    birthday cake|birthday cakes|m|Geburtstagskuchen|Geburtstagskuchen|food
    strawberry|strawberries|f|Erdbeere|Erdbeeren|food
    *sandwich|sandwiches|n|Butterbrot|Butterbrote|food
    book|books|n|Buch|Bücher|reading
    picture book|picture books|n|Bilderbuch|Bilderbücher|reading
    newspaper|newspapers|f|Zeitung|Zeitungen|reading
    letter|letters|m|Brief|Briefe|reading
    fairy tale|fairy tales|n|Märchen|Märchen|reading
    *map|maps|f|Landkarte|Landkarten|reading
    *timetable|timetables|m|Fahrplan|Fahrpläne|reading
    car|cars|n|Auto|Autos|vehicle
    *bicycle|bicycles|n|Fahrrad|Fahrräder|vehicle
    *motorcycle|motorcycles|n|Motorrad|Motorräder|vehicle
    train|trains|m|Zug|Züge|vehicle
    bus|buses|m|Bus|Busse|vehicle
    fire engine|fire engines|n|Feuerwehrauto|Feuerwehrautos|vehicle
    house|houses|n|Haus|Häuser|place
    garden|gardens|m|Garten|Gärten|place
    school|schools|f|Schule|Schulen|place
    park|parks|m|Park|Parks|place
    kitchen|kitchens|f|Küche|Küchen|place
    city|cities|f|Stadt|Städte|place
    village|villages|n|Dorf|Dörfer|place
    forest|forests|m|Wald|Wälder|place
    *hospital|hospitals|n|Krankenhaus|Krankenhäuser|place
    train station|train stations|m|Bahnhof|Bahnhöfe|place
    *library|libraries|f|Bibliothek|Bibliotheken|place
    *playroom|playrooms|n|Spielzimmer|Spielzimmer|place
    *airport|airports|m|Flughafen|Flughäfen|place
    *bakery|bakeries|f|Bäckerei|Bäckereien|place
    *museum|museums|n|Museum|Museen|place
    zoo|zoos|m|Zoo|Zoos|place
    fire station|fire stations|f|Feuerwache|Feuerwachen|place
    *lighthouse|lighthouses|m|Leuchtturm|Leuchttürme|place
    """
)

#: English nouns written as two words ("kitchen table" → "Küchentisch"), as word pairs. The
#: German word for the second word depends on the word before it ("table" alone is "Tisch"):
#: the corpus's planted previous-token dependency. None is rare, so that it is frequent.
TWO_WORD_NOUNS: frozenset[tuple[str, str]] = frozenset(
    tuple(name.split()) for noun in NOUNS for name in (noun.en_sg, noun.en_pl) if " " in name
)


@dataclasses.dataclass(frozen=True)
class Adjective:
    en: str
    de: str  # predicative (uninflected) form
    applies_to: frozenset[str]  # noun categories it is used with
    gradable: bool  # usable in "how old is …"

    @property
    def de_stem(self) -> str:
        """Stem for attributive endings: "müde" → "müd" so that "müd" + "en" = "müden"."""
        return self.de[:-1] if self.de.endswith("e") else self.de


def _adjectives(table: str) -> tuple[Adjective, ...]:
    """Parse lines ``en | de | noun categories it goes with | gradable (0/1)``; "animate" and
    "inanimate" abbreviate category groups."""
    groups = {"animate": ANIMATE, "inanimate": INANIMATE, "any": ANY}
    out = []
    for line in table.strip().splitlines():
        en, de, scope, gradable = (f.strip() for f in line.split("|"))
        applies_to = frozenset().union(*(groups.get(c, {c}) for c in scope.split()))
        out.append(Adjective(en, de, applies_to, gradable == "1"))
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
class Verb:
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


def _verbs(table: str) -> tuple[Verb, ...]:
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
            Verb(
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
PERSON_INDEX = {"1sg": 0, "2sg": 1, "3sg": 2, "1pl": 3, "3pl": 4}

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

DEFINITE = {
    ("nom", "m"): "der", ("nom", "f"): "die", ("nom", "n"): "das", ("nom", "pl"): "die",
    ("acc", "m"): "den", ("acc", "f"): "die", ("acc", "n"): "das", ("acc", "pl"): "die",
    ("dat", "m"): "dem", ("dat", "f"): "der", ("dat", "n"): "dem", ("dat", "pl"): "den",
}  # fmt: skip
DIESER_ENDINGS = {  # "dies-", "welch-"
    ("nom", "m"): "er", ("nom", "f"): "e", ("nom", "n"): "es", ("nom", "pl"): "e",
    ("acc", "m"): "en", ("acc", "f"): "e", ("acc", "n"): "es", ("acc", "pl"): "e",
    ("dat", "m"): "em", ("dat", "f"): "er", ("dat", "n"): "em", ("dat", "pl"): "en",
}  # fmt: skip
EIN_ENDINGS = {  # "ein", "mein", "unser", ...
    ("nom", "m"): "", ("nom", "f"): "e", ("nom", "n"): "", ("nom", "pl"): "e",
    ("acc", "m"): "en", ("acc", "f"): "e", ("acc", "n"): "", ("acc", "pl"): "e",
    ("dat", "m"): "em", ("dat", "f"): "er", ("dat", "n"): "em", ("dat", "pl"): "en",
}  # fmt: skip
WEAK_ADJECTIVE = {  # after der / dieser / welcher, and after any determiner in the plural
    ("nom", "m"): "e", ("nom", "f"): "e", ("nom", "n"): "e", ("nom", "pl"): "en",
    ("acc", "m"): "en", ("acc", "f"): "e", ("acc", "n"): "e", ("acc", "pl"): "en",
    ("dat", "m"): "en", ("dat", "f"): "en", ("dat", "n"): "en", ("dat", "pl"): "en",
}  # fmt: skip
MIXED_ADJECTIVE = {  # after ein / mein / unser ... (singular)
    ("nom", "m"): "er", ("nom", "f"): "e", ("nom", "n"): "es",
    ("acc", "m"): "en", ("acc", "f"): "e", ("acc", "n"): "es",
    ("dat", "m"): "en", ("dat", "f"): "en", ("dat", "n"): "en",
}  # fmt: skip
STRONG_ADJECTIVE_PLURAL = {"nom": "e", "acc": "e", "dat": "en"}  # no determiner ("große Hunde")

# --- corpus version 2: a larger lexicon (see generator.CORPUS_VERSIONS) ------------------------------
#
# Version 2 adds the words below to those above. Its two-word nouns are chosen so that *both*
# words are needed: every first word (modifier) and every second word (head) of a two-word noun
# is also a noun of its own ("fire" → "Feuer", "engine" → "Motor", "fire engine" →
# "Feuerwehrauto"), and most heads follow two or three modifiers ("bus / train / taxi driver",
# "house / car key"). So neither word alone gives the German word.

NOUNS_V2 = NOUNS + _nouns(
    """
    driver|drivers|m|Fahrer|Fahrer|person
    fairy|fairies|f|Fee|Feen|person
    cook|cooks|m|Koch|Köche|person
    pilot|pilots|m|Pilot|Piloten|person|Piloten
    singer|singers|m|Sänger|Sänger|person
    painter|painters|m|Maler|Maler|person
    uncle|uncles|m|Onkel|Onkel|person
    aunt|aunts|f|Tante|Tanten|person
    prince|princes|m|Prinz|Prinzen|person|Prinzen
    princess|princesses|f|Prinzessin|Prinzessinnen|person
    *nurse|nurses|f|Krankenschwester|Krankenschwestern|person
    *postman|postmen|m|Briefträger|Briefträger|person
    *astronaut|astronauts|m|Astronaut|Astronauten|person|Astronauten
    train driver|train drivers|m|Lokführer|Lokführer|person
    taxi driver|taxi drivers|m|Taxifahrer|Taxifahrer|person
    school friend|school friends|m|Schulfreund|Schulfreunde|person
    fox|foxes|m|Fuchs|Füchse|animal
    bear|bears|m|Bär|Bären|animal|Bären
    duck|ducks|f|Ente|Enten|animal
    goat|goats|f|Ziege|Ziegen|animal
    pig|pigs|n|Schwein|Schweine|animal
    frog|frogs|m|Frosch|Frösche|animal
    owl|owls|f|Eule|Eulen|animal
    lion|lions|m|Löwe|Löwen|animal|Löwen
    *crocodile|crocodiles|n|Krokodil|Krokodile|animal
    *kangaroo|kangaroos|n|Känguru|Kängurus|animal
    *giraffe|giraffes|f|Giraffe|Giraffen|animal
    house cat|house cats|f|Hauskatze|Hauskatzen|animal
    engine|engines|m|Motor|Motoren|thing
    fire|fires|n|Feuer|Feuer|thing
    birthday|birthdays|m|Geburtstag|Geburtstage|thing
    tree|trees|m|Baum|Bäume|thing
    toy|toys|n|Spielzeug|Spielzeuge|thing
    cup|cups|f|Tasse|Tassen|thing
    bag|bags|f|Tasche|Taschen|thing
    clock|clocks|f|Uhr|Uhren|thing
    lamp|lamps|f|Lampe|Lampen|thing
    bed|beds|n|Bett|Betten|thing
    shoe|shoes|m|Schuh|Schuhe|thing
    bottle|bottles|f|Flasche|Flaschen|thing
    house key|house keys|m|Hausschlüssel|Hausschlüssel|thing
    car key|car keys|m|Autoschlüssel|Autoschlüssel|thing
    kitchen chair|kitchen chairs|m|Küchenstuhl|Küchenstühle|thing
    garden chair|garden chairs|m|Gartenstuhl|Gartenstühle|thing
    apple tree|apple trees|m|Apfelbaum|Apfelbäume|thing
    toy car|toy cars|n|Spielzeugauto|Spielzeugautos|thing
    school bag|school bags|f|Schultasche|Schultaschen|thing
    bread|breads|n|Brot|Brote|food
    banana|bananas|f|Banane|Bananen|food
    pear|pears|f|Birne|Birnen|food
    cherry|cherries|f|Kirsche|Kirschen|food
    soup|soups|f|Suppe|Suppen|food
    egg|eggs|n|Ei|Eier|food
    *pancake|pancakes|m|Pfannkuchen|Pfannkuchen|food
    apple cake|apple cakes|m|Apfelkuchen|Apfelkuchen|food
    cherry cake|cherry cakes|m|Kirschkuchen|Kirschkuchen|food
    tale|tales|f|Erzählung|Erzählungen|reading
    story|stories|f|Geschichte|Geschichten|reading
    poem|poems|n|Gedicht|Gedichte|reading
    postcard|postcards|f|Postkarte|Postkarten|reading
    magazine|magazines|f|Zeitschrift|Zeitschriften|reading
    *dictionary|dictionaries|n|Wörterbuch|Wörterbücher|reading
    school book|school books|n|Schulbuch|Schulbücher|reading
    city map|city maps|m|Stadtplan|Stadtpläne|reading
    taxi|taxis|n|Taxi|Taxis|vehicle
    boat|boats|n|Boot|Boote|vehicle
    ship|ships|n|Schiff|Schiffe|vehicle
    plane|planes|n|Flugzeug|Flugzeuge|vehicle
    truck|trucks|m|Lastwagen|Lastwagen|vehicle
    *tram|trams|f|Straßenbahn|Straßenbahnen|vehicle
    *tractor|tractors|m|Traktor|Traktoren|vehicle
    school bus|school buses|m|Schulbus|Schulbusse|vehicle
    station|stations|f|Station|Stationen|place
    kindergarten|kindergartens|m|Kindergarten|Kindergärten|place
    farm|farms|m|Bauernhof|Bauernhöfe|place
    church|churches|f|Kirche|Kirchen|place
    castle|castles|n|Schloss|Schlösser|place
    shop|shops|m|Laden|Läden|place
    beach|beaches|m|Strand|Strände|place
    bridge|bridges|f|Brücke|Brücken|place
    market|markets|m|Markt|Märkte|place
    bus station|bus stations|m|Busbahnhof|Busbahnhöfe|place
    flower garden|flower gardens|m|Blumengarten|Blumengärten|place
    city park|city parks|m|Stadtpark|Stadtparks|place
    village school|village schools|f|Dorfschule|Dorfschulen|place
    """
)

ADJECTIVES_V2 = ADJECTIVES + _adjectives(
    """
    quiet | ruhig | animate place | 1
    strong | stark | animate | 1
    brown | braun | animal inanimate | 0
    grey | grau | animal inanimate | 0
    warm | warm | food place | 1
    cold | kalt | food place | 1
    heavy | schwer | thing vehicle | 1
    cheap | billig | thing food reading vehicle | 1
    long | lang | reading vehicle | 1
    short | kurz | reading | 1
    shy | schüchtern | animate | 1
    proud | stolz | person animal | 1
    wild | wild | animal | 1
    round | rund | thing food | 0
    sweet | süß | food animal | 1
    empty | leer | place vehicle | 0
    angry | wütend | animate | 1
    rich | reich | person | 1
    poor | arm | person animal | 1
    strange | seltsam | any | 1
    """
)

VERBS_V2 = VERBS + _verbs(
    """
    hear hears heard | - | hören | höre hörst hört hören hören | - | gehört | haben
        acc | person animal | person animal vehicle | loc | 0
    paint paints painted | - | malen | male malst malt malen malen | - | gemalt | haben
        acc | person | person animal thing food vehicle place | for loc | 0
    sell sells sold | - | verkaufen | verkaufe verkaufst verkauft verkaufen verkaufen | - | verkauft | haben
        acc | person | thing food reading vehicle animal | - | 0
    lose loses lost | - | verlieren | verliere verlierst verliert verlieren verlieren | - | verloren | haben
        acc | person animal | thing reading | loc | 0
    open opens opened | - | öffnen | öffne öffnest öffnet öffnen öffnen | - | geöffnet | haben
        acc | person | thing reading vehicle | - | 0
    feed feeds fed | - | füttern | füttere fütterst füttert füttern füttern | - | gefüttert | haben
        acc | person | person animal | - | 0
    catch catches caught | - | fangen | fange fängst fängt fangen fangen | - | gefangen | haben
        acc | person animal | animal thing | loc | 0
    meet meets met | - | treffen | treffe triffst trifft treffen treffen | - | getroffen | haben
        acc | person animal | person animal | loc | 0
    pick picks picked | up | abholen | hole holst holt holen holen | ab | abgeholt | haben
        acc | person | person animal thing | - | 0
    answer answers answered|-|antworten|antworte antwortest antwortet antworten antworten|-|geantwortet|haben
        dat | person | person | - | 0
    believe believes believed | - | glauben | glaube glaubst glaubt glauben glauben | - | geglaubt | haben
        dat | person | person | - | 0
    send sends sent | - | schicken | schicke schickst schickt schicken schicken | - | geschickt | haben
        ditransitive | person | thing food reading | - | 0
    tell tells told | - | erzählen | erzähle erzählst erzählt erzählen erzählen | - | erzählt | haben
        ditransitive | person | reading | - | 0
    jump jumps jumped | - | springen | springe springst springt springen springen | - | gesprungen | sein
        intransitive | person animal | - | loc with | 1
    fly flies flown | - | fliegen | fliege fliegst fliegt fliegen fliegen | - | geflogen | sein
        intransitive | person animal | - | with | 1
    climb climbs climbed | - | klettern | klettere kletterst klettert klettern klettern | - | geklettert|sein
        intransitive | person animal | - | loc with | 1
    wake wakes woken | up | aufwachen | wache wachst wacht wachen wachen | auf | aufgewacht | sein
        intransitive | person animal | - | loc | 0
    sit sits sat | - | sitzen | sitze sitzt sitzt sitzen sitzen | - | gesessen | haben
        intransitive | person animal | - | loc! | 0
    stay stays stayed | - | bleiben | bleibe bleibst bleibt bleiben bleiben | - | geblieben | sein
        intransitive | person animal | - | loc! | 0
    """
)

CLAUSE_VERBS_V2 = CLAUSE_VERBS + _verbs(
    """
    dream dreams dreamt | - | träumen | träume träumst träumt träumen träumen | - | geträumt | haben
        clause | person | - | - | 0
    forget forgets forgotten|-|vergessen|vergesse vergisst vergisst vergessen vergessen|-|vergessen|haben
        clause | person | - | - | 0
    """
)

#: The two-word nouns of version 2 (a superset of :data:`TWO_WORD_NOUNS`).
TWO_WORD_NOUNS_V2: frozenset[tuple[str, str]] = frozenset(
    tuple(name.split()) for noun in NOUNS_V2 for name in (noun.en_sg, noun.en_pl) if " " in name
)
