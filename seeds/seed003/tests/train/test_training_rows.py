"""Training rows (seed 003's LoRA trainers) carry thinking off where the chat template takes
the switch, as the lab's renderers do."""

from __future__ import annotations

from tests.llm.test_thinking import tokenizer_folder


def test_training_rows_carry_thinking_off_where_the_template_takes_it(tmp_path):
    from statelab_seed003.train.trainers import _rows_kwargs

    _, tok = tokenizer_folder(tmp_path)
    assert _rows_kwargs(tok) == {"chat_template_kwargs": {"enable_thinking": False}}
    tok.chat_template = "{{ messages }}"
    assert _rows_kwargs(tok) == {}
