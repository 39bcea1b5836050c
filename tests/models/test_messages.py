"""Messages: text and image parts, data URLs, cache-key form."""

from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image

from flaneur.models import ImagePart, Message, ModelConfigError, assistant, image, system, user
from flaneur.models.messages import key_form, normalize_messages, to_openai


def _decode(url: str) -> Image.Image:
    head, b64 = url.split(",", 1)
    assert head.startswith("data:image/") and head.endswith(";base64")
    return Image.open(io.BytesIO(base64.b64decode(b64)))


def test_text_messages_round_trip():
    msgs = normalize_messages([system("be brief"), user("hi"), assistant("hello")])
    assert to_openai(msgs) == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]


def test_pil_image_becomes_png_data_url():
    img = Image.new("RGB", (8, 6), (10, 200, 30))
    (msg,) = normalize_messages([user("what is this?", img)])
    wire = to_openai([msg])[0]
    assert wire["content"][0] == {"type": "text", "text": "what is this?"}
    part = wire["content"][1]
    assert part["type"] == "image_url"
    assert part["image_url"]["url"].startswith("data:image/png;base64,")
    back = _decode(part["image_url"]["url"])
    assert back.size == (8, 6) and back.getpixel((3, 3)) == (10, 200, 30)


def test_jpeg_and_file_images(tmp_path):
    img = Image.new("RGBA", (4, 4), (255, 0, 0, 255))
    jpeg = image(img, format="jpeg", detail="low")
    assert jpeg.data_url().startswith("data:image/jpeg;base64,")
    assert jpeg.to_openai()["image_url"]["detail"] == "low"
    path = tmp_path / "view.png"
    img.save(path)
    part = ImagePart(path)
    assert part.data_url().startswith("data:image/png;base64,")
    assert base64.b64decode(part.data_url().split(",", 1)[1]) == path.read_bytes()
    bmp = tmp_path / "view.bmp"
    img.convert("RGB").save(bmp)
    assert ImagePart(str(bmp)).data_url().startswith("data:image/png;base64,")


def test_key_form_uses_hash_not_base64():
    img = Image.new("RGB", (64, 64), "blue")
    part = ImagePart(img)
    form = key_form([user("look", part)])
    text = json.dumps(form)
    assert part.digest() in text
    assert "base64" not in text and len(text) < 300
    assert part._url is None  # the key never needed the encoding
    other = ImagePart(Image.new("RGB", (64, 64), "red"))
    assert other.digest() != part.digest()
    assert ImagePart(Image.new("RGB", (64, 64), "blue")).digest() == part.digest()


def test_openai_style_dicts_are_accepted():
    img = Image.new("L", (2, 2))
    msgs = normalize_messages(
        [
            {"role": "system", "content": "s"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "a"},
                    {"type": "image", "image": img},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                ],
            },
        ]
    )
    assert isinstance(msgs[1], Message) and len(msgs[1].images) == 2
    assert msgs[1].text == "a"
    wire = to_openai(msgs)[1]["content"]
    assert wire[2]["image_url"]["url"] == "data:image/png;base64,AAAA"


@pytest.mark.parametrize(
    "bad",
    [
        lambda: [],
        lambda: [{"content": "no role"}],
        lambda: [{"role": "wizard", "content": "x"}],
        lambda: [user("x", 3)],
        lambda: [{"role": "user", "content": [{"type": "audio"}]}],
    ],
)
def test_bad_messages_are_clear_errors(bad):
    with pytest.raises(ModelConfigError):
        normalize_messages(bad())


def test_missing_image_file(tmp_path):
    with pytest.raises(ModelConfigError, match="not found"):
        ImagePart(tmp_path / "nope.png")
