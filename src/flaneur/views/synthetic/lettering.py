"""Sign lettering with the TrueType font that ships inside Pillow (no system fonts).

Pillow's built-in scalable font covers ASCII only, while place names carry accents (ä, ö,
å, é, ...).  Accented letters are drawn as their base letter plus the accent drawn by hand
(dots, ring, acute, grave, circumflex, tilde, cedilla), so that ``"Kämp"`` reads as
``Kämp`` rather than as boxes; anything else outside ASCII is transliterated.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont, features

from flaneur.views.base import ViewError

_ASCII = {chr(c) for c in range(32, 127)}
_MARKS = {"\u0308", "\u030a", "\u0301", "\u0300", "\u0302", "\u0303", "\u0327", "\u030c"}
_REPLACE = {
    "ß": "ss",
    "æ": "ae",
    "Æ": "AE",
    "ø": "o",
    "Ø": "O",
    "œ": "oe",
    "Œ": "OE",
    "ł": "l",
    "Ł": "L",
    "đ": "d",
    "Đ": "D",
    "–": "-",
    "—": "-",
    "‘": "'",
    "’": "'",
    "“": '"',
    "”": '"',
    "´": "'",
    "…": "...",
}


@lru_cache(maxsize=8)
def sign_font(size: int) -> ImageFont.FreeTypeFont:
    """Pillow's built-in scalable font at ``size`` pixels.

    Raises
    ------
    ViewError
        If Pillow was built without FreeType (then it has no scalable font).
    """
    if not features.check("freetype2"):
        raise ViewError("Pillow was built without FreeType; signs need its scalable font")
    font = ImageFont.load_default(size=size)
    if not isinstance(font, ImageFont.FreeTypeFont):
        raise ViewError("Pillow >= 10.1 is needed for its built-in scalable font")
    return font


def glyphs(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """Split ``text`` into drawable ``(ascii base, accents)`` pairs."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for ch in text:
        if ch in _ASCII:
            out.append((ch, ()))
            continue
        if ch in _REPLACE:
            out.extend((c, ()) for c in _REPLACE[ch])
            continue
        decomposed = unicodedata.normalize("NFD", ch)
        base, marks = decomposed[0], tuple(m for m in decomposed[1:] if m in _MARKS)
        if base in _ASCII:
            out.append((base, marks))
        elif unicodedata.category(ch).startswith("Z"):
            out.append((" ", ()))
        else:
            folded = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
            out.extend((c, ()) for c in (folded or "?"))
    return out


def plain_text(text: str) -> str:
    """What a sign shows for ``text`` with the accents dropped (for measuring)."""
    return "".join(base for base, _ in glyphs(text))


def _padding(size: int) -> tuple[int, int]:
    return int(size * 0.4), int(size * 0.16)


def _line_height(size: int) -> int:
    ascent, descent = sign_font(size).getmetrics()
    return ascent + descent


def board_size(text: str, size: int) -> tuple[int, int]:
    """``(width, height)`` in pixels of the board :func:`render_text` draws (lines split
    at ``"\\n"``)."""
    font = sign_font(size)
    lines = text.split("\n")
    pad_x, pad_y = _padding(size)
    width = max(int(font.getlength(plain_text(line))) for line in lines) + 2 * pad_x + 2
    return max(width, 8), len(lines) * _line_height(size) + 2 * pad_y


def wrap(text: str, max_chars: int = 11, max_lines: int = 3) -> str:
    """Break ``text`` at spaces into at most ``max_lines`` lines of about ``max_chars``."""
    words = text.split()
    if not words:
        return text
    width = max(max_chars, len(text) // max_lines + 1, *(len(w) for w in words))
    lines: list[str] = []
    for word in words:
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    while len(lines) > max_lines:
        lines[-2] += " " + lines.pop()
    return "\n".join(lines)


def _draw_mark(draw: ImageDraw.ImageDraw, mark: str, box, size: int, fill) -> None:
    x0, top, x1, bottom = box
    cx = (x0 + x1) / 2.0
    r = max(1.0, size * 0.06)
    y = top - size * 0.13
    w = max(1, round(size * 0.06))
    if mark == "\u0308":  # diaeresis
        for dx in (-size * 0.13, size * 0.13):
            draw.ellipse([cx + dx - r, y - r, cx + dx + r, y + r], fill=fill)
    elif mark == "\u030a":  # ring
        rr = size * 0.1
        draw.ellipse([cx - rr, y - rr * 1.2, cx + rr, y + rr * 0.8], outline=fill, width=w)
    elif mark in ("\u0301", "\u0300"):  # acute, grave
        s = 1 if mark == "\u0301" else -1
        draw.line([cx - s * size * 0.06, y + r, cx + s * size * 0.08, y - 2.2 * r], fill, w)
    elif mark in ("\u0302", "\u030c"):  # circumflex, caron
        s = 1 if mark == "\u0302" else -1
        yy = y - s * r
        draw.line([cx - size * 0.1, y + s * r, cx, yy - s * r, cx + size * 0.1, y + s * r], fill, w)
    elif mark == "\u0303":  # tilde
        pts = [(cx - size * 0.12, y + r), (cx - size * 0.04, y - r), (cx + 0.04 * size, y + r)]
        draw.line([*pts, (cx + size * 0.12, y - r)], fill, w)
    elif mark == "\u0327":  # cedilla
        draw.line([cx, bottom, cx + size * 0.05, bottom + size * 0.15], fill, w)


def _draw_line(draw, x: float, y: float, text: str, size: int, fill) -> None:
    font = sign_font(size)
    stroke = max(1, size // 28)
    parts = glyphs(text)
    if all(not marks for _, marks in parts):
        plain = "".join(base for base, _ in parts)
        draw.text((x, y), plain, font=font, fill=fill, stroke_width=stroke, stroke_fill=fill)
        return
    for base, marks in parts:
        draw.text((x, y), base, font=font, fill=fill, stroke_width=stroke, stroke_fill=fill)
        if marks:
            box = draw.textbbox((x, y), base, font=font)
            for mark in marks:
                _draw_mark(draw, mark, box, size, fill)
        x += font.getlength(base)


def render_text(text: str, size: int, fill, background) -> Image.Image:
    """Draw ``text`` (lines split at ``"\\n"``, centred) at font ``size`` on a tight RGBA
    board with ``background``, padded by a fraction of the font size."""
    font = sign_font(size)
    _pad_x, pad_y = _padding(size)
    img = Image.new("RGBA", board_size(text, size), (*background, 255))
    draw = ImageDraw.Draw(img)
    step = _line_height(size)
    for k, line in enumerate(text.split("\n")):
        x = (img.width - font.getlength(plain_text(line))) / 2.0
        _draw_line(draw, x, pad_y + k * step, line, size, fill)
    return img
