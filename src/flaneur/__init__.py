"""flaneur: agents that live in real cities.

The package is organised in layers (see ``docs/DESIGN.md``): :mod:`flaneur.geo` and
:mod:`flaneur.world` model a city; the environment, views, models, agents and the
evaluation runner build on them.
"""

__version__ = "0.1.0"
