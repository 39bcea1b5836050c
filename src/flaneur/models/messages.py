"""Chat messages with text and images, and their two wire forms.

A message list is turned into

* the OpenAI ``messages`` array (:func:`to_openai`), where images become base64 data URLs
  in ``image_url`` content parts, and
* a cache-key form (:func:`key_form`), where every image is replaced by the SHA-256 of its
  bytes, so a cache lookup never has to encode an image.

Callers may pass :class:`Message` objects (built with :func:`system`, :func:`user`,
:func:`assistant`) or plain OpenAI-style dicts; dict parts of type ``"image"`` may hold a PIL
image or a path.
"""

from __future__ import annotations

import base64
import hashlib
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from flaneur.models.errors import ModelConfigError

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_MIME_BY_SUFFIX = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".gif": "image/gif",
}


class ImagePart:
    """An image inside a message: a PIL image, an image file, or a ready URL.

    Parameters
    ----------
    source
        A :class:`PIL.Image.Image`, a path to an image file, or an ``http(s)``/``data:`` URL.
    format
        Encoding for PIL images (and files of other types): ``"PNG"`` (default) or
        ``"JPEG"``. Files that already are PNG, JPEG, WebP or GIF are sent as they are.
    detail
        OpenAI's optional ``detail`` hint (``"low"``, ``"high"``, ``"auto"``).
    quality
        JPEG quality.
    """

    __slots__ = ("_digest", "_url", "detail", "format", "quality", "source")

    def __init__(
        self,
        source: Image.Image | str | Path,
        *,
        format: str = "PNG",
        detail: str | None = None,
        quality: int = 90,
    ):
        fmt = format.upper()
        if fmt == "JPG":
            fmt = "JPEG"
        if fmt not in ("PNG", "JPEG"):
            raise ModelConfigError(f"image format must be PNG or JPEG, not {format!r}")
        if isinstance(source, str) and not source.startswith(("data:", "http://", "https://")):
            source = Path(source)
        if isinstance(source, Path) and not source.is_file():
            raise ModelConfigError(f"image file not found: {source}")
        if not isinstance(source, Image.Image | Path | str):
            raise ModelConfigError(f"an image must be a PIL image, a path or a URL, not {source!r}")
        self.source = source
        self.format = fmt
        self.detail = detail
        self.quality = quality
        self._digest: str | None = None
        self._url: str | None = None

    def digest(self) -> str:
        """SHA-256 of the image's bytes (pixels for PIL images, file bytes for files)."""
        if self._digest is None:
            src = self.source
            h = hashlib.sha256()
            if isinstance(src, Image.Image):
                h.update(f"{src.mode}:{src.size[0]}x{src.size[1]}:".encode())
                h.update(src.tobytes())
            elif isinstance(src, Path):
                h.update(src.read_bytes())
            else:
                h.update(src.encode())
            self._digest = h.hexdigest()
        return self._digest

    def data_url(self) -> str:
        """The ``data:<mime>;base64,...`` (or http) URL sent to the server."""
        if self._url is None:
            self._url = self._encode()
        return self._url

    def _encode(self) -> str:
        src = self.source
        if isinstance(src, str):
            return src
        if isinstance(src, Path):
            mime = _MIME_BY_SUFFIX.get(src.suffix.lower())
            if mime is not None:
                return _data_url(mime, src.read_bytes())
            with Image.open(src) as img:
                return self._encode_pil(img)
        return self._encode_pil(src)

    def _encode_pil(self, img: Image.Image) -> str:
        buf = io.BytesIO()
        if self.format == "JPEG":
            if img.mode not in ("RGB", "L"):
                img = img.convert("RGB")
            img.save(buf, format="JPEG", quality=self.quality)
            return _data_url("image/jpeg", buf.getvalue())
        img.save(buf, format="PNG")
        return _data_url("image/png", buf.getvalue())

    def key_form(self) -> dict[str, Any]:
        """What enters the cache key: the digest and the encoding settings."""
        out: dict[str, Any] = {"image_sha256": self.digest(), "format": self.format}
        if self.detail is not None:
            out["detail"] = self.detail
        if self.format == "JPEG":
            out["quality"] = self.quality
        return out

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI ``image_url`` content part."""
        image_url: dict[str, Any] = {"url": self.data_url()}
        if self.detail is not None:
            image_url["detail"] = self.detail
        return {"type": "image_url", "image_url": image_url}

    def __repr__(self) -> str:
        src = self.source
        what = (
            f"PIL {src.mode} {src.size[0]}x{src.size[1]}"
            if isinstance(src, Image.Image)
            else str(src)[:60]
        )
        return f"ImagePart({what}, format={self.format})"


def _data_url(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


Part = str | ImagePart


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message: a role and either a string or a sequence of text/image parts."""

    role: str
    content: str | tuple[Part, ...]

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ModelConfigError(
                f"unknown message role {self.role!r}; use one of {sorted(ROLES)}"
            )

    @property
    def images(self) -> tuple[ImagePart, ...]:
        """The image parts of this message."""
        if isinstance(self.content, str):
            return ()
        return tuple(p for p in self.content if isinstance(p, ImagePart))

    @property
    def text(self) -> str:
        """All text parts joined by newlines."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p for p in self.content if isinstance(p, str))


def image(source: Image.Image | str | Path, **kwargs: Any) -> ImagePart:
    """Make an :class:`ImagePart` (see its parameters)."""
    return ImagePart(source, **kwargs)


def _as_part(part: Any) -> Part:
    if isinstance(part, str | ImagePart):
        return part
    if isinstance(part, Image.Image | Path):
        return ImagePart(part)
    raise ModelConfigError(
        f"a message part must be text, an image or a path, not {type(part).__name__}"
    )


def system(text: str) -> Message:
    """A system message."""
    return Message("system", text)


def user(*parts: Any) -> Message:
    """A user message from text, PIL images, paths or :class:`ImagePart` objects."""
    if len(parts) == 1 and isinstance(parts[0], str):
        return Message("user", parts[0])
    return Message("user", tuple(_as_part(p) for p in parts))


def assistant(text: str) -> Message:
    """An assistant message (e.g. a previous reply in a multi-turn prompt)."""
    return Message("assistant", text)


def _dict_part(part: Any) -> Part:
    if not isinstance(part, dict):
        return _as_part(part)
    kind = part.get("type")
    if kind == "text":
        return str(part.get("text", ""))
    if kind == "image_url":
        spec = part.get("image_url")
        url = spec.get("url") if isinstance(spec, dict) else spec
        detail = spec.get("detail") if isinstance(spec, dict) else None
        return ImagePart(str(url), detail=detail)
    if kind == "image":
        return ImagePart(part["image"], format=part.get("format", "PNG"), detail=part.get("detail"))
    raise ModelConfigError(f"unsupported content part type {kind!r}")


def normalize_messages(messages: Iterable[Message | dict[str, Any]]) -> tuple[Message, ...]:
    """Turn :class:`Message` objects and OpenAI-style dicts into :class:`Message` objects.

    Raises
    ------
    ModelConfigError
        On an unknown role, part type or an empty message list.
    """
    out: list[Message] = []
    for msg in messages:
        if isinstance(msg, Message):
            out.append(msg)
            continue
        if not isinstance(msg, dict) or "role" not in msg:
            raise ModelConfigError(
                f"a message must be a Message or a dict with a role, not {msg!r}"[:200]
            )
        content = msg.get("content", "")
        if isinstance(content, str):
            out.append(Message(msg["role"], content))
        else:
            out.append(Message(msg["role"], tuple(_dict_part(p) for p in content)))
    if not out:
        raise ModelConfigError("no messages to send")
    return tuple(out)


def key_form(messages: Sequence[Message]) -> list[Any]:
    """A JSON-serialisable form of ``messages`` with images replaced by their digests."""
    out: list[Any] = []
    for m in messages:
        if isinstance(m.content, str):
            out.append([m.role, m.content])
        else:
            out.append([m.role, [p if isinstance(p, str) else p.key_form() for p in m.content]])
    return out


def to_openai(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The OpenAI chat ``messages`` array, images as base64 data URLs."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m.content, str):
            out.append({"role": m.role, "content": m.content})
        else:
            parts = [
                {"type": "text", "text": p} if isinstance(p, str) else p.to_openai()
                for p in m.content
            ]
            out.append({"role": m.role, "content": parts})
    return out
