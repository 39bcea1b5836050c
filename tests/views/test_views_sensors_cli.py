"""Image sensors and the ``flaneur render`` command."""

from __future__ import annotations

import json

import pytest
from PIL import Image
from typer.testing import CliRunner

from flaneur.cli import app
from flaneur.perception.landmarks.map import MapLandmarks
from flaneur.views.base import ViewError
from flaneur.views.sensors import ImageSensor


def test_velma_and_virl_layouts(toy_views):
    velma = ImageSensor(toy_views, size=(160, 92))
    dirs = velma.directions("n100_100", 350.0)
    assert [d[0] for d in dirs] == ["left", "slightly left", "ahead", "slightly right", "right"]
    assert [d[1] for d in dirs] == [260.0, 305.0, 350.0, 35.0, 80.0]
    virl = ImageSensor(toy_views, layout="virl", size=(160, 92))
    views = virl.views("n100_100", 0.0)
    assert len(views) == 8 and views["behind"].heading == 180.0
    assert views["ahead"].fov == 45.0


def test_navigable_layout(toy, toy_views):
    sensor = ImageSensor(toy_views, toy.graph, layout="navigable", size=(160, 92))
    dirs = sensor.directions("n100_100", 0.0)
    assert sorted(round(h) % 360 for _, h in dirs) == [0, 90, 180, 270]
    with pytest.raises(ViewError, match="layout"):
        ImageSensor(toy_views, layout="fisheye")
    with pytest.raises(ViewError, match="street graph"):
        ImageSensor(toy_views, layout="navigable")


def test_observe_with_a_scorer(toy, toy_views):
    sensor = ImageSensor(toy_views, size=(160, 92))
    obs = sensor.observe(
        "n100_060", 0.0, scorer=MapLandmarks(toy), landmarks=["Stockmann", "Nowhere"]
    )
    assert set(obs.views) == {"left", "slightly left", "ahead", "slightly right", "right"}
    assert [o.landmark for o in obs.landmarks] == ["Stockmann"]
    assert obs.landmarks[0].heading == pytest.approx(90.0, abs=1.0)


async def test_aobserve(toy, toy_views):
    sensor = ImageSensor(toy_views, size=(160, 92))
    obs = await sensor.aobserve("n100_060", 0.0, scorer=MapLandmarks(toy), landmarks=["Stockmann"])
    assert [o.landmark for o in obs.landmarks] == ["Stockmann"]


@pytest.fixture(scope="module")
def pack(toy, tmp_path_factory):
    folder = tmp_path_factory.mktemp("pack") / "toy"
    toy.save(folder)
    return folder


def test_cli_render_one_view(pack, tmp_path):
    out = tmp_path / "view.png"
    result = CliRunner().invoke(
        app,
        [
            "render",
            str(pack),
            "--node",
            "n100_060",
            "--heading",
            "90",
            "--size",
            "400x230",
            "-o",
            str(out),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["size"] == [400, 230] and "Stockmann" in data["signs"]
    assert Image.open(out).size == (400, 230)


def test_cli_render_contact_sheet(pack, tmp_path):
    out = tmp_path / "views.png"
    result = CliRunner().invoke(
        app,
        [
            "render",
            str(pack),
            "--node",
            "n100_100",
            "--around",
            "8",
            "--size",
            "200x115",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert Image.open(out).size == (800, 230)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--node", "zzz"], "unknown node id 'zzz'"),
        (["--node", "n100_100", "--fov", "180"], "fov"),
        (["--node", "n100_100", "--size", "big"], "size"),
    ],
)
def test_cli_render_errors(pack, tmp_path, capsys, args, message):
    from flaneur.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["render", str(pack), *args, "-o", str(tmp_path / "x.png")])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
