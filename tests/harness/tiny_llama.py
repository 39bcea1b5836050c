"""A tiny randomly initialised llama-architecture model with a word-level tokenizer, built
offline (the tests of ``flaneur train`` and the ``hf:`` backend, and
``benchmarks/train_velma.py --quick``); needs the ``train`` extra."""

from __future__ import annotations

import re
from pathlib import Path

from flaneur.agents.prompts import load_prompt
from flaneur.agents.velma.finetune import gold_prompts
from flaneur.env import toy_city, toy_episodes
from flaneur.env.schemes.turns import TurnsScheme

ACTIONS = ["FORWARD", "LEFT", "RIGHT", "TURN_AROUND", "STOP"]
TEMPLATE = (
    "{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}<assistant> {% endif %}"
)


def toy_words() -> list[str]:
    """Every word of the VELMA prompts of the toy episodes (and the action words)."""
    city = toy_city()
    scheme = TurnsScheme(city.graph)
    texts = [load_prompt("velma", "system").fill()[0]]
    for episode in toy_episodes():
        texts += [text for text, _, _ in gold_prompts(scheme, city, episode)]
    words = {w for text in texts for w in re.findall(r"\w+|[^\w\s]", text)}
    return sorted((words | {"system", "user", "assistant", "<", ">"}) - set(ACTIONS))


def build_tiny_model(folder: Path, *, seed: int = 0) -> Path:
    """Save a 2-layer, 32-wide llama model and a word-level tokenizer to ``folder``."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(["[PAD]", "[UNK]", "[EOS]", *ACTIONS, *toy_words()])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]"
    )
    tokenizer.chat_template = TEMPLATE
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        pad_token_id=0,
        eos_token_id=2,
        bos_token_id=None,
    )
    model = LlamaForCausalLM(config)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
