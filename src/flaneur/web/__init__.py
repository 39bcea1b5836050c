"""The local web app behind ``flaneur serve``: runs, episode replay, live runs, human play
and annotation, served by Starlette on 127.0.0.1 with no network access needed.

>>> from flaneur.web import create_app                          # doctest: +SKIP
>>> app = create_app(["runs/"], play_dir="runs/")               # doctest: +SKIP
"""

from flaneur.web.app import create_app

__all__ = ["create_app"]
