"""V-IRL's benchmarks on flaneur cities: set generators, solvers and metrics.

Place recognition (generator :mod:`flaneur.bench.recognition`, recognisers in
:mod:`flaneur.bench.recognisers`) and place VQA (generator :mod:`flaneur.bench.vqa`,
answerers in :mod:`flaneur.bench.answerers`, reply reading in :mod:`flaneur.bench.parse`)
run as the task kinds ``virl-recognition`` and ``virl-vqa`` of the one runner
(:mod:`flaneur.evaluate.kinds.virl_bench`), on V-IRL's type lists
(:mod:`flaneur.bench.types`) with the paper's metrics (:mod:`flaneur.bench.metrics`). Place
detection: :mod:`flaneur.bench.detection`, :mod:`flaneur.bench.detection_metrics`. VLN:
:mod:`flaneur.bench.vln_routes`, :mod:`flaneur.bench.vln_metrics`. Per-city tables of run
folders: :mod:`flaneur.bench.tables`. ``flaneur bench --help`` runs them.
"""
