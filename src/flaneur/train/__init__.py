"""Training VELMA's language model (``flaneur train velma``): fine-tuning on gold
verbalizations (FT) and VELMA's response-based learning (RBL, its Algorithm 1).

Modules: :mod:`~flaneur.train.examples` (what the model learns from: gold steps, student
walks corrected by the teacher), :mod:`~flaneur.train.tokens` (the rendered prompt, loss on
the action words only), :mod:`~flaneur.train.setup` (loading, LoRA, the memory check),
:mod:`~flaneur.train.checkpoints` (resumable epochs), :mod:`~flaneur.train.loop` (epochs,
dev evaluation with the runner, the summary). Torch, transformers and peft are imported
inside the functions that need them (the ``train`` extra), so importing this package is cheap.
"""
