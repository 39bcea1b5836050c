"""Reports and maps: HTML pages that show cities, runs and episodes."""
