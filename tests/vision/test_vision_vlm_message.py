"""The VLM path for real: ``VLMLandmarks`` sends the view through the model layer's
OpenAI-compatible client over HTTP to the project's fake server, and the request carries
the view as an OpenAI image message (a base64 JPEG data URL of the view's size)."""

from __future__ import annotations

import base64
import io

import numpy as np
from PIL import Image

from flaneur.models.openai_compatible import OpenAICompatible
from flaneur.perception.landmarks.vlm import VLMLandmarks
from flaneur.testing import FakeOpenAIServer
from flaneur.views.base import View

PREFIX = "data:image/jpeg;base64,"


def _images(server: FakeOpenAIServer) -> list[tuple[str, Image.Image]]:
    """Each chat request's image: its data URL and the decoded picture."""
    out = []
    for request in server.requests:
        [message] = request.messages
        [text, image] = message["content"]
        assert text["type"] == "text" and image["type"] == "image_url"
        url = image["image_url"]["url"]
        assert url.startswith(PREFIX)
        picture = Image.open(io.BytesIO(base64.b64decode(url[len(PREFIX) :], validate=True)))
        assert picture.format == "JPEG"
        out.append((url, picture))
    return out


def _gradient(width: int, height: int, flip: bool = False) -> View:
    """A smooth picture (JPEG keeps it close), different when flipped."""
    x = np.linspace(0, 255, width)[None, :, None]
    y = np.linspace(0, 255, height)[:, None, None]
    pixels = np.concatenate([x + 0 * y, y + 0 * x, (x + y) / 2], axis=2)
    if flip:
        pixels = pixels[:, ::-1]
    return View(Image.fromarray(pixels.astype(np.uint8)), "n1", 30.0)


async def test_the_view_goes_out_as_a_jpeg_data_url_of_its_size():
    view, other = _gradient(96, 60), _gradient(96, 60, flip=True)
    with FakeOpenAIServer(["A", "B", "A"]) as server:
        model = OpenAICompatible(
            "fake-model", provider="vllm", base_url=server.base_url, timeout=5.0
        )
        try:
            scorer = VLMLandmarks(model)
            seen = await scorer.ascore(view, ["Kiosk", "Stockmann"])
            again = await scorer.ascore(view, ["Kiosk", "Stockmann"])
            await scorer.ascore(other, ["Kiosk", "Stockmann"])
        finally:
            await model.aclose()
        sent = _images(server)
    assert [o.visible for o in seen] == [True, False] and [o.visible for o in again] == [
        False,
        True,
    ]
    assert len(sent) == 3
    (url, picture), (url_again, _), (url_other, picture_other) = sent
    assert picture.size == view.image.size == (96, 60) and picture.mode == "RGB"
    assert url == url_again  # the same view is the same message
    assert url != url_other  # another view is another message
    error = np.abs(np.asarray(picture, float) - np.asarray(view.image, float)).mean()
    assert error < 3.0  # the view's own pixels, JPEG quality 88
    assert np.abs(np.asarray(picture_other, float) - np.asarray(view.image, float)).mean() > 30
