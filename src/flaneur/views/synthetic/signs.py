"""Signs carrying place names: their record, dimensions and images.

Three kinds: *fascia* signs hang flat on a facade above the shop windows and are readable
from in front of it; *blade* signs stick out of the facade beside each fascia, double-sided,
readable from along the street; *column* signs stand on the sidewalk for places that are
not inside a building (stops, kiosks, artworks); a column is round, so its label is drawn
facing the camera.  Where each sign goes is decided in :mod:`flaneur.views.synthetic.layout`.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from PIL import Image
from scipy.spatial import cKDTree

from flaneur.views.synthetic.lettering import board_size, render_text

SIGN_COLOURS = [
    ((246, 243, 232), (22, 22, 28)),
    ((24, 58, 44), (246, 240, 220)),
    ((22, 40, 92), (250, 250, 250)),
    ((150, 26, 32), (255, 255, 255)),
    ((28, 28, 28), (250, 212, 70)),
    ((250, 250, 250), (150, 20, 30)),
]
"""(board, text) colour pairs, chosen per place by a hash of its id."""

FONT_PX = 44
"""Font size of the full-resolution sign images."""

FASCIA, COLUMN, BLADE, LABEL = 0, 1, 2, 3
"""Sign kinds (a LABEL is placed per view, see :mod:`flaneur.views.synthetic.labels`)."""


@dataclass
class SignParams:
    """Sign dimensions in metres.

    Attributes
    ----------
    board_height
        Height of a fascia board (the capitals take about half of it).
    min_board_height
        Boards of long names on short facades shrink down to this height.
    rows
        Bottom heights of the rows of fascia boards on a facade.
    gap
        Free space between two boards on one row.
    max_shift
        How far along its facade a board may move from the point in front of its place.
    column_height, column_bottom, column_max_width
        Board size and height of column signs.
    blade_width, blade_height, blade_offset
        Largest blade board, and its distance out from the facade.
    radius
        Signs farther than this from the camera are not drawn.
    second_street
        Also put fascias on the facades facing other streets within this distance.
    max_fronts
        At most this many fascias per place.
    """

    board_height: float = 1.4
    min_board_height: float = 0.8
    rows: tuple[float, ...] = (3.0, 4.6, 6.2)
    gap: float = 0.8
    max_shift: float = 16.0
    column_height: float = 1.0
    column_bottom: float = 2.0
    column_max_width: float = 4.5
    blade_width: float = 2.2
    blade_height: float = 1.3
    blade_offset: float = 0.35
    radius: float = 60.0
    second_street: float = 32.0
    max_fronts: int = 3


@dataclass
class Signs:
    """Laid-out signs as arrays (a place may have more than one sign).

    Attributes
    ----------
    place
        Row of the place in ``city.places``.
    text, label, colours
        Place name, the text as laid out on the board (lines split at ``"\\n"``), and
        ``(board, ink)`` colours.
    centre
        Bottom-centre point ``(n, 2)`` in metres.
    direction
        Fascia: unit vector along which the text runs (left to right seen from the front);
        blade: unit normal of the board plane; column: zero (it faces the camera).
    width, bottom, top
        Board width and heights in metres.
    pieces
        Wall pieces a sign hangs on (it is drawn right after the nearest of them when it
        is partly hidden).
    kind
        :data:`FASCIA`, :data:`COLUMN` or :data:`BLADE`.
    unplaced
        Rows of named places that got no sign.
    """

    place: NDArray[np.int64]
    text: list[str]
    label: list[str]
    colours: list[tuple[tuple[int, int, int], tuple[int, int, int]]]
    centre: NDArray[np.float64]
    direction: NDArray[np.float64]
    width: NDArray[np.float64]
    bottom: NDArray[np.float64]
    top: NDArray[np.float64]
    pieces: list[NDArray[np.int64]]
    kind: NDArray[np.int8]
    unplaced: list[int] = field(default_factory=list)
    radius: float = 60.0
    named_rows: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    named_xy: NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 2)))
    named_text: list[str] = field(default_factory=list)
    _named_tree: cKDTree | None = field(default=None, repr=False)
    _tree: cKDTree | None = field(default=None, repr=False)
    _images: dict[tuple[str, int], list[Image.Image]] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.place)

    @property
    def column(self) -> NDArray[np.bool_]:
        """Whether each sign is a column sign."""
        return self.kind == COLUMN

    @property
    def normal(self) -> NDArray[np.float64]:
        """Outward normals of fascia signs, ``(n, 2)`` (meaningless for other kinds)."""
        return np.column_stack([self.direction[:, 1], -self.direction[:, 0]])

    def near(self, xy: NDArray[np.float64], radius: float) -> NDArray[np.int64]:
        """Indices of signs whose centre lies within ``radius`` of ``xy``."""
        if len(self.place) == 0:
            return np.zeros(0, dtype=np.int64)
        if self._tree is None:
            self._tree = cKDTree(self.centre)
        return np.asarray(sorted(self._tree.query_ball_point(xy, radius)), dtype=np.int64)

    def corners(self, i: int, camera_xy: NDArray[np.float64]) -> NDArray[np.float64]:
        """World corners ``(4, 3)`` of sign ``i``: top-left, top-right, bottom-right,
        bottom-left as seen from the front (columns turn to ``camera_xy``)."""
        c = self.centre[i]
        kind = self.kind[i]
        if kind in (COLUMN, LABEL):
            d = c - camera_xy
            n = float(np.hypot(*d)) or 1.0
            t = np.array([d[1], -d[0]]) / n
        elif kind == BLADE:
            m = self.direction[i]
            if np.dot(m, camera_xy - c) < 0:
                m = -m
            t = np.array([-m[1], m[0]])
        else:
            t = self.direction[i]
        half = t * (self.width[i] / 2.0)
        left, right = c - half, c + half
        b, top = self.bottom[i], self.top[i]
        return np.array(
            [
                [left[0], left[1], top],
                [right[0], right[1], top],
                [right[0], right[1], b],
                [left[0], left[1], b],
            ]
        )

    def named_near(self, xy: NDArray[np.float64], radius: float) -> NDArray[np.int64]:
        """Indices into ``named_*`` of the named places within ``radius`` of ``xy``."""
        if len(self.named_rows) == 0:
            return np.zeros(0, dtype=np.int64)
        if self._named_tree is None:
            self._named_tree = cKDTree(self.named_xy)
        return np.asarray(sorted(self._named_tree.query_ball_point(xy, radius)), dtype=np.int64)

    def image(self, i: int, width_px: float) -> Image.Image:
        """Sign ``i`` as an RGBA image about ``width_px`` wide or more (see :func:`board_image`)."""
        return board_image(self.label[i], self.colours[i], width_px)


FONT_SIZES = (FONT_PX, 30, 20, 13, 9)
_BOARDS: OrderedDict[tuple, Image.Image] = OrderedDict()
_WIDTHS: dict[str, tuple[int, ...]] = {}


def board_image(label: str, colours, width_px: float, oversample: float = 1.3) -> Image.Image:
    """A sign board with ``label`` in ``(board, ink)`` colours, drawn at the smallest font
    size whose board is at least ``oversample * width_px`` wide (or the largest size).

    Drawing at the size it is shown keeps small signs crisp and cheap; boards are cached
    (they depend only on the text and colours).
    """
    widths = _WIDTHS.get(label)
    if widths is None:
        widths = _WIDTHS[label] = tuple(board_size(label, f)[0] for f in FONT_SIZES)
    size = FONT_SIZES[0]
    for f, w in zip(FONT_SIZES, widths, strict=True):
        if w >= oversample * width_px:
            size = f
    key = (label, colours, size)
    img = _BOARDS.get(key)
    if img is None:
        board, ink = colours
        img = _BOARDS[key] = render_text(label, size, ink, board)
        while len(_BOARDS) > 8192:
            _BOARDS.popitem(last=False)
    else:
        _BOARDS.move_to_end(key)
    return img
