"""A small glossary of sign words in Finnish and Swedish, glossed in English.

The sentence embedder (all-MiniLM-L6-v2) was trained on English: it does not know that
"Apteekki Eliel" is a pharmacy or that "Kansalliskirjasto" holds a library. A reader of
Helsinki's signs does, so the explorer adds English glosses to a text that contains one of
these common shop-sign stems (Finnish compounds are matched inside words:
"Esplanadin*puisto*" is a park), or the name of a well-known chain (:data:`CHAINS`,
matched as whole words: "Alepa" is a grocery, "Nordea" a bank). The lists are general
vocabulary and common knowledge of shop signs (written from a dictionary and general
knowledge, not from any task set); other cities' languages and chains can be added the
same way.
"""

from __future__ import annotations

import re
from functools import lru_cache

from flaneur.perception.matching import normalize_name

SIGN_WORDS: dict[str, str] = {
    # food and drink
    "ravintola": "restaurant",
    "kahvila": "cafe",
    "kahvio": "cafe",
    "kohvik": "cafe",
    "leipomo": "bakery",
    "konditoria": "bakery cafe",
    "baari": "bar",
    "pubi": "pub",
    "olut": "beer",
    "viini": "wine",
    "grilli": "grill fast food",
    "pizzeria": "pizza",
    "ruoka": "food",
    "lounas": "lunch",
    "kebab": "kebab fast food",
    "jäätelö": "ice cream",
    "krog": "restaurant",
    "bageri": "bakery",
    # shops
    "kauppa": "shop",
    "myymälä": "store",
    "kauppakeskus": "shopping mall",
    "tavaratalo": "department store",
    "kirjakauppa": "book store",
    "antikvariaatti": "second-hand book store",
    "vaate": "clothing",
    "kenkä": "shoe store",
    "kello": "watches",
    "kulta": "jewelry gold",
    "koru": "jewelry",
    "kukka": "florist flowers",
    "lelu": "toy store",
    "lahja": "gift shop",
    "optiikka": "optician glasses",
    "optikko": "optician glasses",
    "silmä": "eyes optician",
    "urheilu": "sports",
    "apteekki": "pharmacy",
    "apotek": "pharmacy",
    "kioski": "kiosk",
    "kauppatori": "market square",
    "kauppahalli": "market hall",
    "bokhandel": "book store",
    # services
    "pankki": "bank",
    "posti": "post office",
    "parturi": "barber hair salon",
    "kampaamo": "hair salon",
    "frisör": "hair salon",
    "hammaslääk": "dentist",
    "lääkäri": "doctor clinic",
    "lääkäriasema": "medical clinic",
    "terveys": "health clinic",
    "sairaala": "hospital",
    "klinikka": "clinic",
    "hieronta": "massage",
    "kuntosali": "gym fitness",
    "uimahalli": "swimming pool",
    "sauna": "sauna",
    "hotelli": "hotel",
    "hostelli": "hostel",
    "majatalo": "guest house",
    "matkatoimisto": "travel agency",
    "valuutta": "currency exchange",
    "pesula": "laundry",
    "korjaamo": "repair shop",
    "pankkiautomaatti": "ATM cash machine",
    # culture and leisure
    "kirjasto": "library",
    "bibliotek": "library",
    "museo": "museum",
    "galleria": "art gallery",
    "taide": "art",
    "teatteri": "theater",
    "teater": "theater",
    "elokuva": "cinema",
    "kino": "cinema",
    "kirkko": "church",
    "kyrka": "church",
    "puisto": "park",
    "leikkipuisto": "playground",
    # transport
    "asema": "station",
    "rautatieasema": "railway station train",
    "juna": "train",
    "raitiovaunu": "tram",
    "ratikka": "tram",
    "pysäkki": "stop",
    "linja-auto": "bus",
    "bussi": "bus",
    "taksi": "taxi",
    "pysäköinti": "parking",
    "parkki": "parking",
    "pyörä": "bicycle",
    "satama": "harbour ferry",
    "terminaali": "terminal",
}
"""Sign-word stem (matched inside words, accents kept) -> English gloss."""

CHAINS: dict[str, str] = {
    # banks and cash
    "nordea": "bank",
    "op": "bank",
    "danske bank": "bank",
    "handelsbanken": "bank",
    "aktia": "bank",
    "s pankki": "bank",
    "pop pankki": "bank",
    "saastopankki": "bank",
    "otto": "ATM cash machine",
    "forex": "currency exchange",
    # groceries and kiosks
    "alepa": "supermarket grocery",
    "sale": "convenience store grocery",
    "k market": "supermarket grocery",
    "k supermarket": "supermarket grocery",
    "k citymarket": "hypermarket grocery",
    "s market": "supermarket grocery",
    "prisma": "hypermarket grocery",
    "lidl": "supermarket grocery",
    "siwa": "convenience store grocery",
    "r kioski": "kiosk convenience store",
    "alko": "liquor store",
    "tokmanni": "discount store",
    # food and coffee
    "hesburger": "burger fast food",
    "mcdonald s": "burger fast food",
    "burger king": "burger fast food",
    "subway": "sandwich fast food",
    "kotipizza": "pizza",
    "robert s coffee": "cafe coffee",
    "espresso house": "cafe coffee",
    "starbucks": "cafe coffee",
    "wayne s coffee": "cafe coffee",
    "fazer": "cafe bakery",
    "picnic": "cafe",
    "pancho villa": "mexican restaurant",
    # shops
    "stockmann": "department store",
    "sokos": "department store",
    "marimekko": "clothing design store",
    "h m": "clothing store",
    "lindex": "clothing store",
    "kappahl": "clothing store",
    "seppala": "clothing store",
    "instrumentarium": "optician",
    "specsavers": "optician",
    "silmaasema": "optician",
    "suomalainen kirjakauppa": "book store",
    "akateeminen kirjakauppa": "book store",
    "verkkokauppa": "electronics store",
    "gigantti": "electronics store",
    "tiimari": "gift shop",
    # lodging and transport
    "scandic": "hotel",
    "radisson": "hotel",
    "hilton": "hotel",
    "clarion": "hotel",
    "holiday inn": "hotel",
    "best western": "hotel",
    "omena": "hotel",
    "cumulus": "hotel",
    "hsl": "public transport",
    "vr": "train",
    "posti": "post office",
}
"""Well-known chains of Finland (whole words of the folded name) -> what they are. A local
reads "Alepa" as a grocery and "Nordea" as a bank; the English embedder does not."""


def _fold(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.casefold()).split())


_STEMS = sorted(((_fold(k), v) for k, v in SIGN_WORDS.items()), key=lambda kv: -len(kv[0]))
_CHAINS = sorted(CHAINS.items(), key=lambda kv: -len(kv[0]))


@lru_cache(maxsize=65536)
def gloss(text: str) -> str:
    """``text`` with English glosses of the sign words it contains, or ``""`` if none.

    >>> gloss("Apteekki Eliel")
    'Apteekki Eliel (pharmacy)'
    >>> gloss("Hotel Haven")
    ''
    >>> gloss("Alepa Kluuvi")
    'Alepa Kluuvi (supermarket grocery)'
    >>> gloss("Shop Optimal")   # chains match whole words only ("op" is not in "shop")
    ''
    """
    folded = _fold(text)
    plain = normalize_name(text)
    found: list[str] = []
    words = f" {plain} "
    for chain, english in _CHAINS:
        if f" {chain} " in words and english not in found:
            found.append(english)
    for stem, english in _STEMS:
        seen = stem in folded or normalize_name(stem) in plain
        if seen and english not in found and not any(english in f for f in found):
            found.append(english)
    if not found or all(w in folded for g in found for w in g.split()):
        return ""
    return f"{text} ({', '.join(found)})"


__all__ = ["CHAINS", "SIGN_WORDS", "gloss"]
