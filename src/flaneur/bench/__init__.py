"""V-IRL's benchmarks on flaneur cities: data builders and evaluators.

Place recognition (:mod:`flaneur.bench.recognition`, recognisers in
:mod:`flaneur.bench.recognisers`) and place VQA (:mod:`flaneur.bench.vqa`, answer parsing in
:mod:`flaneur.bench.parse`, answerers in :mod:`flaneur.bench.answerers`), on regions
(:mod:`flaneur.bench.regions`) and V-IRL's type lists (:mod:`flaneur.bench.types`), with
the paper's metrics (:mod:`flaneur.bench.metrics`). Place detection:
:mod:`flaneur.bench.detection` (set, evaluation), :mod:`flaneur.bench.detection_metrics`,
:mod:`flaneur.bench.detection_run`. VLN: :mod:`flaneur.bench.vln_routes`,
:mod:`flaneur.bench.vln_metrics`, :mod:`flaneur.bench.vln_eval`,
:mod:`flaneur.bench.vln_recognisers`. Per-city tables: :mod:`flaneur.bench.tables`.
``flaneur bench --help`` runs them.
"""
