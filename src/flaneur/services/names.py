"""How names are compared: one normal form of place names, addresses and street names."""

from __future__ import annotations

import re
import unicodedata

_NON_WORD = re.compile(r"[\W_]+")  # keeps letters of every script (Chinese names stay)


def normalize(text: str) -> str:
    """Lower case, no diacritics, words of letters (any script) and digits, one space apart.

    Examples
    --------
    >>> normalize("Café  Ateneum, Helsinki!")
    'cafe ateneum helsinki'
    >>> normalize("Straße")
    'strasse'
    """
    decomposed = unicodedata.normalize("NFKD", text.casefold().replace("ß", "ss"))
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _NON_WORD.sub(" ", plain).strip()


__all__ = ["normalize"]
