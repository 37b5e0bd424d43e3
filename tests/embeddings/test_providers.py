"""Remote embedding providers against a real HTTP server on 127.0.0.1 that speaks each API."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

import numpy as np
import pytest

from mnemoclaw.api import auto_provider, build_provider
from mnemoclaw.config import load_settings
from mnemoclaw.embeddings.base import create_provider
from mnemoclaw.embeddings.http import (
    ProviderAuthError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderUnavailableError,
    RetryPolicy,
)
from mnemoclaw.embeddings.remote import EmbeddingDataError
from mnemoclaw.errors import ProviderError, UnknownProviderError

from conftest import REPO, write
from provider_server import KEY, ProviderServer, fake_vector

REMOTE = ["openai", "gemini", "voyage", "mistral", "ollama"]
BATCH = ["openai", "gemini", "voyage"]
FAST = RetryPolicy(base_s=0.01, cap_s=0.05)  # the real policy's numbers are tested below


def make(flavor, srv, *, key=KEY, retry=FAST, timeout_s=5.0, **extra):
    from mnemoclaw.embeddings import gemini, mistral, ollama, openai, voyage

    cls = {"openai": openai.OpenAIEmbeddings, "gemini": gemini.GeminiEmbeddings, "voyage": voyage.VoyageEmbeddings,
           "mistral": mistral.MistralEmbeddings, "ollama": ollama.OllamaEmbeddings}[flavor]
    remote = {"baseUrl": srv.base_url, "apiKey": key, **extra.pop("remote", {})}
    return cls({"remote": remote, **extra}, retry=retry, timeout_s=timeout_s)


def expected(texts, flavor, query=False):
    if flavor == "ollama":  # nomic-embed gets its task prefix
        texts = [("search_query: " if query else "search_document: ") + t for t in texts]
    m = np.asarray([fake_vector(t) for t in texts], dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


@pytest.fixture(params=REMOTE)
def flavor(request):
    return request.param


@pytest.fixture
def server(flavor):
    with ProviderServer(flavor) as srv:
        yield srv


def test_success_speaks_the_api(flavor, server):
    p = make(flavor, server, key=None if flavor == "ollama" else KEY)
    out = p.embed(["first note", "第二条笔记"])
    np.testing.assert_allclose(out, expected(["first note", "第二条笔记"], flavor), atol=1e-6)
    req = server.embedding_requests()[0]
    if flavor == "gemini":
        assert req["path"] == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
        assert req["headers"]["x-goog-api-key"] == KEY
        assert {r["taskType"] for r in req["body"]["requests"]} == {"RETRIEVAL_DOCUMENT"}
    elif flavor == "ollama":
        assert req["path"] == "/api/embed" and req["body"]["model"] == "nomic-embed-text"
        assert "authorization" not in req["headers"]
    else:
        assert req["path"] == "/v1/embeddings"
        assert req["headers"]["authorization"] == f"Bearer {KEY}"
        assert req["body"]["model"] == {"openai": "text-embedding-3-small", "voyage": "voyage-4-large",
                                        "mistral": "mistral-embed"}[flavor]
    q = p.embed(["a question"], query=True)
    np.testing.assert_allclose(q, expected(["a question"], flavor, query=True), atol=1e-6)
    last = server.embedding_requests()[-1]["body"]
    if flavor == "gemini":
        assert last["requests"][0]["taskType"] == "RETRIEVAL_QUERY"
    if flavor == "voyage":
        assert last["input_type"] == "query"


def test_429_then_success(flavor, server):
    server.script = ["429", "ok"]
    out = make(flavor, server).embed(["hello"])
    assert out.shape == (1, 16) and len(server.embedding_requests()) == 2


def test_a_500_storm_gives_up_after_three_attempts(flavor, server):
    server.script = ["500"] * 5
    with pytest.raises(ProviderUnavailableError, match="failed 3 times.*HTTP 500"):
        make(flavor, server).embed(["hello"])
    assert len(server.embedding_requests()) == 3


def test_a_bad_key_is_not_retried_and_says_check_your_key(flavor, server):
    if flavor == "ollama":
        pytest.skip("Ollama has no keys")
    with pytest.raises(ProviderAuthError, match="Check your key") as err:
        make(flavor, server, key="wrong").embed(["hello"])
    assert "wrong" not in str(err.value)  # a key never appears in a message
    assert len(server.embedding_requests()) == 1


def test_a_400_is_not_retried(flavor, server):
    server.script = ["400"]
    with pytest.raises(ProviderRequestError, match="too long"):
        make(flavor, server).embed(["hello"])
    assert len(server.embedding_requests()) == 1


def test_malformed_json_is_a_clear_error(flavor, server):
    server.script = ["malformed"]
    with pytest.raises(ProviderResponseError, match="not JSON"):
        make(flavor, server).embed(["hello"])


def test_a_timeout_is_retried_then_reported(flavor, server):
    server.script = ["timeout"] * 3
    server.hang_s = 1.0
    with pytest.raises(ProviderUnavailableError, match=r"no answer within 0.2s"):
        make(flavor, server, timeout_s=0.2).embed(["hello"])
    assert len(server.embedding_requests()) == 3


def test_a_timeout_then_an_answer_succeeds(flavor, server):
    server.script = ["timeout", "ok"]
    server.hang_s = 0.6
    assert make(flavor, server, timeout_s=0.2).embed(["hello"]).shape == (1, 16)


@pytest.mark.parametrize("action, message", [
    ("wrong_dims", "dimensional"), ("nan", "NaN"), ("empty", "0 vectors for 2"), ("short", "1 vectors for 2"),
    ("other_model", "some-other-model"),
])
def test_unusable_answers_are_detected(flavor, server, action, message):
    if action == "other_model" and flavor == "gemini":
        pytest.skip("Gemini does not echo the model")
    p = make(flavor, server)
    if action == "wrong_dims":
        p.embed(["one", "two"])  # 16 dimensions first, then 17
    server.script = [action]
    with pytest.raises(EmbeddingDataError, match=message):
        p.embed(["one", "two"])


@pytest.mark.parametrize("flavor", BATCH)
def test_a_batch_job_that_completes(flavor, server):
    texts = [f"backfill note {i}" for i in range(150)]
    p = make(flavor, server, remote={"batch": {"enabled": True, "pollIntervalMs": 10}})
    out = p.embed(texts)
    np.testing.assert_allclose(out, expected(texts, flavor), atol=1e-6)
    assert server.embedding_requests() == []  # nothing went inline
    assert len(server.batches) == 1
    polls = [r for r in server.log if r["method"] == "GET" and "batches" in r["path"]]
    assert len(polls) >= server.batch_polls


@pytest.mark.parametrize("flavor", BATCH)
def test_a_batch_job_failing_twice_falls_back_to_inline(flavor, server):
    server.batch_script = ["fail", "fail"]
    texts = [f"backfill note {i}" for i in range(120)]
    p = make(flavor, server, remote={"batch": {"enabled": True, "pollIntervalMs": 10}})
    first = p.embed(texts)  # job 1 fails: this call is embedded inline
    assert p.batch_active and p.batch_failures == 1
    second = p.embed(texts)  # job 2 fails: inline from now on
    assert not p.batch_active and p.batch_failures == 2
    third = p.embed(texts)
    assert len(server.batches) == 2  # no third job
    for out in (first, second, third):
        np.testing.assert_allclose(out, expected(texts, flavor), atol=1e-6)
    assert len(server.embedding_requests()) >= 3


def test_batches_follow_the_api_limits_with_bounded_concurrency():
    with ProviderServer("openai") as srv:
        srv.delay = 0.05
        p = make("openai", srv)
        p.max_batch_items = 100
        texts = [f"note {i}" for i in range(1000)]
        out = p.embed(texts)
        assert out.shape == (1000, 16)
        sizes = [len(r["body"]["input"]) for r in srv.embedding_requests()]
        assert sizes == [100] * 10
        assert 1 < srv.max_in_flight <= 4
        np.testing.assert_allclose(out[-1], expected(["note 999"], "openai")[0], atol=1e-6)


def test_the_retry_policy_numbers():
    policy = RetryPolicy()
    assert (policy.attempts, policy.base_s, policy.factor, policy.cap_s) == (3, 0.5, 2.0, 8.0)
    for attempt, base in ((1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0)):
        for _ in range(50):
            assert base * 0.8 <= policy.delay(attempt) <= base * 1.2
    assert policy.delay(10) == 8.0  # capped
    assert policy.delay(1, retry_after=30) == 8.0  # Retry-After honoured within the cap


def test_provider_key_follows_endpoint_model_and_headers_not_the_key():
    base = {"remote": {"baseUrl": "https://proxy.example/v1", "apiKey": "k1"}}
    a = create_provider("openai", base).provider_key
    assert create_provider("openai", {"remote": {**base["remote"], "apiKey": "k2"}}).provider_key == a
    assert create_provider("openai", {"remote": {**base["remote"], "baseUrl": "https://other/v1"}}).provider_key != a
    assert create_provider("openai", {**base, "model": "text-embedding-3-large"}).provider_key != a
    assert create_provider("openai", {"remote": {**base["remote"], "headers": {"X-Org": "b"}}}).provider_key != a
    assert create_provider("openai", {"remote": {**base["remote"], "headers": {"X-Api-Key": "s"}}}).provider_key == a


def test_models_providers_is_a_second_source_and_remote_wins(tmp_path):
    cfg = {"models": {"providers": {"openai": {"baseUrl": "https://from-models/v1", "apiKey": "m"}}},
           "agents": {"defaults": {"memorySearch": {"provider": "openai"}}}}
    s = load_settings(workspace=tmp_path, state_dir=tmp_path, config=cfg, env={})
    assert build_provider("openai", s).endpoint == "https://from-models/v1"
    cfg["agents"]["defaults"]["memorySearch"]["remote"] = {"baseUrl": "https://from-remote/v1"}
    s = load_settings(workspace=tmp_path, state_dir=tmp_path, config=cfg, env={})
    assert build_provider("openai", s).endpoint == "https://from-remote/v1"


def test_a_missing_key_says_where_to_put_it(monkeypatch):
    monkeypatch.delenv("VOYAGE_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="VOYAGE_API_KEY"):
        create_provider("voyage", {})


def test_an_unknown_provider_lists_the_available_ones():
    with pytest.raises(UnknownProviderError, match="gemini, local, mistral, ollama, openai, voyage"):
        create_provider("cohere", {})


@pytest.mark.parametrize("env, want", [
    ({}, "local"),
    ({"MISTRAL_API_KEY": "x"}, "mistral"),
    ({"VOYAGE_API_KEY": "x", "MISTRAL_API_KEY": "x"}, "voyage"),
    ({"GEMINI_API_KEY": "x", "VOYAGE_API_KEY": "x"}, "gemini"),
    ({"OPENAI_API_KEY": "x", "GEMINI_API_KEY": "x"}, "openai"),
])
def test_auto_follows_the_key_order(monkeypatch, tmp_path, env, want):
    for name in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "VOYAGE_API_KEY", "MISTRAL_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    s = load_settings(workspace=tmp_path, state_dir=tmp_path, config={}, env={})
    assert auto_provider(s) == want


def test_auto_prefers_a_configured_local_model(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    s = load_settings(workspace=tmp_path, state_dir=tmp_path, env={},
                      config={"agents": {"defaults": {"memorySearch": {"local": {"modelPath": "/models/e.gguf"}}}}})
    assert auto_provider(s) == "local"


def test_indexing_through_a_remote_provider(workspace, make_memory):
    write(workspace / "MEMORY.md", "- the office wifi password hint is on the fridge")
    write(workspace / "memory" / "2026-05-01.md", "- booked the dentist for Tuesday")
    with ProviderServer("openai") as srv:
        p = make("openai", srv)
        mem = make_memory(workspace, provider=p)
        r = mem.sync()
        assert r.chunks_embedded == 2 and r.failed == []
        hits = mem.search("dentist appointment", sync=False, mode="keyword")
        assert hits[0].path == "memory/2026-05-01.md"
        # the server's vectors are hashes, not meanings: plumbing only, so no floor
        assert mem.search("dentist", sync=False, mode="vector", min_score=0.0)


def test_bad_vectors_fail_those_files_and_keep_the_old_index(workspace, make_memory):
    write(workspace / "MEMORY.md", "- the boat is called Saltmarsh")
    with ProviderServer("openai") as srv:
        p = make("openai", srv)
        mem = make_memory(workspace, provider=p)
        mem.sync()
        write(workspace / "MEMORY.md", "- the boat is now called Kestrel")
        write(workspace / "memory" / "new.md", "- a new note")
        srv.script = ["nan"]
        r = mem.sync()
        assert sorted(p for p, _ in r.failed) == ["MEMORY.md", "memory/new.md"]
        assert all("NaN" in why for _, why in r.failed)
        hits = mem.search("boat", sync=False, mode="keyword")
        assert "Saltmarsh" in hits[0].text  # the old chunk still serves
        r = mem.sync()  # the server is fine again
        assert r.failed == [] and "Kestrel" in mem.search("boat", sync=False, mode="keyword")[0].text


def test_a_dimension_change_behind_the_endpoint_is_caught(workspace, make_memory):
    write(workspace / "MEMORY.md", "- first")
    with ProviderServer("openai") as srv:
        mem = make_memory(workspace, provider=make("openai", srv))
        mem.sync()
        mem.close()
        srv.dims = 24  # the server now runs another model, under the same name
        mem = make_memory(workspace, provider=make("openai", srv))
        write(workspace / "memory" / "n.md", "- second")
        r = mem.sync()
        assert [p for p, _ in r.failed] == ["memory/n.md"]
        assert "24" in r.failed[0][1] and "16" in r.failed[0][1] and "--full" in r.failed[0][1]


def test_a_dead_endpoint_keeps_the_index(workspace, make_memory):
    write(workspace / "MEMORY.md", "- the boat is called Saltmarsh")
    with ProviderServer("openai") as srv:
        p = make("openai", srv)
        mem = make_memory(workspace, provider=p)
        mem.sync()
    write(workspace / "memory" / "new.md", "- a new note about the harbour")  # the server is gone now
    r = mem.sync()  # indexes the new note for keyword search instead of giving up on it
    assert r.vectors_pending == 1 and "cannot connect" in r.vectors_error and not r.failed
    assert mem.search("boat Saltmarsh", sync=False, mode="keyword")[0].path == "MEMORY.md"
    assert mem.search("harbour", sync=False, mode="keyword")[0].path == "memory/new.md"
    assert mem.backend.vectors_usable()  # the old vectors still serve


def test_with_a_failing_embedder_keyword_search_still_finds_everything(workspace, make_memory):
    """No fallback configured and the provider down from the start: everything in the files
    is indexed for keyword search, says so, and gets its vectors once the provider is back."""
    write(workspace / "MEMORY.md", "- the boat is called Saltmarsh\n")
    write(workspace / "memory" / "2026-02-01.md", "- 周五和王芳去看了港口的新码头\n")
    with ProviderServer("openai") as srv:
        srv.script = ["500"] * 1000  # down for everything that follows
        mem = make_memory(workspace, provider=make("openai", srv))
        r = mem.sync()
        assert r.added == 2 and r.vectors_pending == 2 and "failed 3 times" in r.vectors_error
        st = mem.status()
        assert st["vectorsPending"] == 2 and st["vectors"] == 0
        out = mem.tools.memory_search("Saltmarsh")
        assert out["results"][0]["path"] == "MEMORY.md" and "keyword only" in out["warning"]
        assert out["results"] and mem.tools.memory_search("码头")["results"][0]["path"] == "memory/2026-02-01.md"
        write(workspace / "memory" / "2026-02-02.md", "- the dinghy needs new oars\n")
        assert mem.tools.memory_search("dinghy oars")["results"][0]["path"] == "memory/2026-02-02.md"  # inline, no vectors
        srv.script = []  # the provider is back
        r = mem.sync(retry=True)
        assert r.vectors_pending == 0 and not r.vectors_error
        st = mem.status()
        assert st["vectorsPending"] == 0 and st["vectors"] == st["chunks"] == 3
        mem._query_embedding_off_until = 0.0
        out = mem.tools.memory_search("Saltmarsh", mode="vector", min_score=0.0)  # hashed vectors: no floor
        assert out["results"][0]["path"] == "MEMORY.md" and "warning" not in out


def test_status_names_provider_endpoint_and_cache_never_the_key(workspace, make_memory):
    write(workspace / "MEMORY.md", "- one\n\n" + "x " * 900 + "\n\n- two")
    with ProviderServer("voyage") as srv:
        mem = make_memory(workspace, provider=make("voyage", srv))
        mem.sync()
        mem.sync(full=True)  # everything comes from the cache
        st = mem.status()
        assert st["provider"] == "voyage" and st["model"] == "voyage-4-large"
        assert st["endpoint"] == srv.base_url
        assert st["cache"]["entries"] >= 1 and st["cache"]["hitRate"] == 0.5
        assert KEY not in str(st)


@pytest.mark.parametrize("flavor", ["openai", "gemini", "voyage", "mistral"])
def test_an_error_that_echoes_the_key_never_shows_it(flavor, server, workspace, make_memory, caplog):
    """A server (or a proxy in front of it) that quotes the request headers in its error
    bodies must not get the API key into an exception, a warning, a log line or a tool result."""
    caplog.set_level(logging.DEBUG)
    server.echo_headers = True
    provider = make(flavor, server)
    seen = []
    for script in (["400"], ["500", "500", "500"], ["echo_raw", "echo_raw", "echo_raw"]):
        server.script = list(script)
        with pytest.raises(ProviderError) as err:
            provider.embed(["hello"])
        seen.append(str(err.value))
    with pytest.raises(ProviderAuthError) as err:
        make(flavor, server, key="wrong-key-7f3a9c").embed(["hello"])
    seen.append(str(err.value))
    write(workspace / "MEMORY.md", "- the boat is blue\n")
    mem = make_memory(workspace, provider=provider)
    server.script = ["500"] * 30
    out = mem.tools.memory_search("boat")
    seen.append(json.dumps(out))
    seen += [r.getMessage() for r in caplog.records]
    for text in seen:
        assert KEY not in text and "wrong-key-7f3a9c" not in text, text
    assert any("request headers" in t for t in seen)  # the echo did happen, scrubbed


def test_chat_model_errors_give_chat_model_advice_and_hide_the_key():
    from mnemoclaw.runtime.llm import ChatClient, LLMError

    from chat_server import ChatServer

    secret = "sk-chat-0123456789abcdefXYZ"
    with ChatServer(lambda body: (503, {"error": {"message": f"upstream said: Authorization: Bearer {secret}"}})) as srv:
        client = ChatClient(srv.base_url, "m", api_key=secret, retry=FAST)
        with pytest.raises(LLMError) as err:
            client.complete([{"role": "user", "content": "hi"}])
    message = str(err.value)
    assert secret not in message
    assert "llm.baseUrl" in message and "llm.model" in message and "memorySearch.fallback" not in message


def test_a_provider_of_another_package_is_registered_by_entry_point_and_accepted_by_the_config(tmp_path):
    """A package declares `tiny = "tiny_embedder:create"` in the `mnemoclaw.providers` group:
    `memorySearch.provider: "tiny"` then works in a real `mnemoclaw` process, like a built-in."""
    site = tmp_path / "site"
    (site / "tiny_embedder-1.0.dist-info").mkdir(parents=True)
    (site / "tiny_embedder-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-embedder\n"
                                                                    "Version: 1.0\n")
    (site / "tiny_embedder-1.0.dist-info" / "entry_points.txt").write_text(
        "[mnemoclaw.providers]\ntiny = tiny_embedder:create\n")
    (site / "tiny_embedder.py").write_text(
        "import zlib\nimport numpy as np\n\n"
        "class Tiny:\n    id = 'tiny'\n    model = 'tiny-8'\n    provider_key = 'tiny-8'\n    max_input_tokens = None\n"
        "    def embed(self, texts, *, query=False):\n"
        "        out = np.zeros((len(texts), 8), dtype=np.float32)\n"
        "        for i, t in enumerate(texts):\n"
        "            for w in t.lower().split():\n                out[i, zlib.crc32(w.encode()) % 8] += 1\n"
        "        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)\n\n"
        "def create(settings):\n    return Tiny()\n")
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("- the heron nests by the weir\n")
    cfg = tmp_path / "config.json5"
    cfg.write_text('{agents: {defaults: {memorySearch: {provider: "tiny"}}}}')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO / "src")])}
    env.pop("MNEMOCLAW_PROVIDER", None)
    env.pop("MNEMOCLAW_PLUGINS", None)  # the suite runs without plugins (conftest.py); they are what this tests
    base = [sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(ws), "--state-dir", str(tmp_path / "st"),
            "--config", str(cfg)]
    r = subprocess.run([*base, "index"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    status = json.loads(subprocess.run([*base, "status", "--json", "--fast"], capture_output=True, text=True,
                                       env=env, timeout=120).stdout)
    assert status["provider"] == "tiny" and status["model"] == "tiny-8"
    found = json.loads(subprocess.run([*base, "search", "heron weir", "--json"], capture_output=True, text=True,
                                      env=env, timeout=120).stdout)
    assert found["provider"] == "tiny" and found["results"][0]["path"] == "MEMORY.md"
    # without the package, the name is refused with the registry listed
    env["PYTHONPATH"] = str(REPO / "src")
    r = subprocess.run([*base, "status"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1 and "agents.defaults.memorySearch.provider must be one of auto, gemini" in r.stderr
    assert "'tiny'" in r.stderr and "mnemoclaw.providers entry point" in r.stderr and "Traceback" not in r.stderr


def _plugin_package(site, entry_points: str, modules: dict[str, str]) -> None:
    """An installed package named `plugged`, as pip leaves one: its metadata and its modules."""
    (site / "plugged-1.0.dist-info").mkdir(parents=True)
    (site / "plugged-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: plugged\nVersion: 1.0\n")
    (site / "plugged-1.0.dist-info" / "entry_points.txt").write_text(entry_points)
    for name, text in modules.items():
        (site / f"{name}.py").write_text(text)


def _mnemoclaw(tmp_path, site, *argv: str, **env: str) -> subprocess.CompletedProcess:
    (tmp_path / "ws").mkdir(exist_ok=True)
    (tmp_path / "ws" / "MEMORY.md").write_text("- the heron nests by the weir\n")
    run_env = {k: v for k, v in os.environ.items() if k != "MNEMOCLAW_PLUGINS"}  # on, unless env says
    run_env.update(PYTHONPATH=os.pathsep.join([str(site), str(REPO / "src")]), **env)
    return subprocess.run([sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(tmp_path / "ws"), "--state-dir",
                           str(tmp_path / "st"), *argv], capture_output=True, text=True, env=run_env, timeout=120)


def test_a_plugin_that_cannot_be_imported_is_named_in_one_line_never_a_traceback(tmp_path):
    site = tmp_path / "site"
    _plugin_package(site, "[mnemoclaw.providers]\nbroke = broken_embedder:create\nmissing = no_such_module:create\n"
                          "noattr = plain_module:nothere\n",
                    {"broken_embedder": "raise ImportError('needs libfoo')\n", "plain_module": "x = 1\n"})
    # a package whose entry_points.txt is damaged: every other plugin still loads
    (site / "damaged-2.0.dist-info").mkdir()
    (site / "damaged-2.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: damaged\nVersion: 2.0\n")
    (site / "damaged-2.0.dist-info" / "entry_points.txt").write_text("[mnemoclaw.providers]\njust-a-name\n")

    status = _mnemoclaw(tmp_path, site, "status", "--fast", MNEMOCLAW_PROVIDER="none")
    assert status.returncode == 0 and "Traceback" not in status.stderr, status.stderr
    named = [line for line in status.stdout.splitlines() if line.startswith("warning") and "cannot be" in line]
    assert len(named) == 4, status.stdout
    assert "provider plugin 'broke' (broke = broken_embedder:create, from plugged 1.0) cannot be imported " \
           "(ImportError: needs libfoo): skipped" in status.stdout
    assert "'missing' (missing = no_such_module:create, from plugged 1.0) cannot be imported (ModuleNotFoundError" \
           in status.stdout and "'noattr'" in status.stdout
    assert "the entry points of the installed package damaged 2.0 cannot be read" in status.stdout
    as_json = json.loads(_mnemoclaw(tmp_path, site, "status", "--fast", "--json", MNEMOCLAW_PROVIDER="none").stdout)
    assert sum("cannot be" in w for w in as_json["warnings"]) == 4

    # the one configured: its command says so in one line
    for argv in (["index"], ["search", "heron"], ["status"]):
        r = _mnemoclaw(tmp_path, site, *argv, MNEMOCLAW_PROVIDER="broke")
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.strip().splitlines() == ["Error: the provider plugin 'broke' (broke = broken_embedder:create, "
                                                 "from plugged 1.0) cannot be imported (ImportError: needs libfoo): "
                                                 "reinstall its package, or choose another provider"]


def test_plugins_off_reads_no_entry_point(tmp_path):
    site = tmp_path / "site"
    _plugin_package(site, "[mnemoclaw.providers]\nhash = hash_embedder:create\n", {"hash_embedder": (
        "import numpy as np\n\nclass Hash:\n    id = 'hash'\n    model = 'hash-4'\n    provider_key = 'hash-4'\n"
        "    max_input_tokens = None\n    def embed(self, texts, *, query=False):\n"
        "        return np.ones((len(texts), 4), dtype=np.float32) / 2\n\ndef create(settings):\n    return Hash()\n")})
    on = _mnemoclaw(tmp_path, site, "status", "--fast", "--json", MNEMOCLAW_PROVIDER="hash")
    assert on.returncode == 0 and json.loads(on.stdout)["provider"] == "hash", on.stderr
    for off in ("off", "False"):
        r = _mnemoclaw(tmp_path, site, "status", "--fast", MNEMOCLAW_PROVIDER="hash", MNEMOCLAW_PLUGINS=off)
        assert r.returncode == 1 and "must be one of auto, gemini" in r.stderr and "'hash'" in r.stderr, r.stderr
    assert os.environ["MNEMOCLAW_PLUGINS"] == "off"  # and the suite itself runs so (conftest.py)


def test_register_provider_makes_a_name_the_config_accepts(tmp_path, monkeypatch):
    from mnemoclaw.api import Memory
    from mnemoclaw.embeddings import base as registry

    from conftest import HashEmbedder

    monkeypatch.setitem(registry._REGISTRY, "mine", lambda settings: HashEmbedder())
    write(tmp_path / "ws" / "MEMORY.md", "- the heron nests by the weir\n")
    settings = load_settings(workspace=tmp_path / "ws", state_dir=tmp_path / "st", env={},
                             config={"agents": {"defaults": {"memorySearch": {"provider": "mine"}}}})
    with Memory(settings, background=False) as mem:
        mem.sync()
        assert mem.provider.id == "test-hash" and mem.tools.memory_search("heron weir")["results"]
