"""A tiny outside package for flaneur: one agent and one view provider, nothing else.

It is never imported by flaneur's code; ``tests/plugins/test_outside_package.py`` makes it
visible the way ``pip install`` would (a ``.dist-info`` folder with ``entry_points.txt``)::

    [flaneur.agents]
    wanderer = flaneur_wanderer.agent:WandererAgent

    [flaneur.views]
    flat = flaneur_wanderer.views:FlatViews

and runs ``flaneur run --agent wanderer --views flat`` with the installed console script.
"""
