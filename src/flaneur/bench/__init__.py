"""V-IRL's benchmarks on flaneur's cities (VLN: :mod:`flaneur.bench.vln_routes`,
:mod:`flaneur.bench.vln_metrics`, :mod:`flaneur.bench.vln_eval`)."""
