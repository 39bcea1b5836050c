"""Loaders that turn source data into :class:`~flaneur.world.city.City` objects."""
