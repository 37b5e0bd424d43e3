import hashlib
import json
import os
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from mnemoclaw.cli import cli
from mnemoclaw.search.relevance import DEFAULT_MIN_SCORE

from conftest import REPO, write

COMMANDS = sorted(cli.commands)


def run(*args, env=None, input=None):
    # keyword-only keeps these fast; the demo test below uses the real local model
    base = {"MNEMOCLAW_PROVIDER": "none"}
    result = CliRunner().invoke(cli, list(args), env={**base, **(env or {})}, input=input, catch_exceptions=False)
    return result


@pytest.fixture
def dirs(tmp_path):
    ws, state = tmp_path / "ws", tmp_path / "state"
    return ["--workspace", str(ws), "--state-dir", str(state)], ws, state


def test_every_command_has_help_and_is_in_the_readme():
    readme = (REPO / "README.md").read_text()
    for name in COMMANDS:
        r = run(name, "--help")
        assert r.exit_code == 0 and "Usage:" in r.output, name
        assert re.search(rf"mnemoclaw( [-\w]+ \S+)* {name}\b", readme), f"README does not show `mnemoclaw {name}`"


def test_init_index_search_get_status(dirs):
    flags, ws, state = dirs
    r = run(*flags, "init")
    assert r.exit_code == 0, r.output
    assert (ws / "AGENTS.md").exists() and (ws / "MEMORY.md").exists() and (ws / "memory").is_dir()
    assert "memory_search" in (ws / "AGENTS.md").read_text()
    assert (state / "config.json5").exists()
    assert "created" in run(*flags, "init").output or "nothing changed" in run(*flags, "init").output

    write(ws / "memory" / "2026-11-28.md", "# 2026-11-28\n\n- 团队聚餐定在周六晚上。\n- Deploy key PR-4821 rotated.\n")
    r = run(*flags, "index")
    assert r.exit_code == 0, r.output
    assert "1 added" in r.output or "2 added" in r.output
    r = run(*flags, "index", "--json")
    report = json.loads(r.output)
    assert report["unchanged"] == 2 and report["failed"] == []

    r = run(*flags, "search", "聚餐", "--json")
    out = json.loads(r.output)
    assert out["results"][0]["path"] == "memory/2026-11-28.md"
    assert out["results"][0]["citation"].startswith("memory/2026-11-28.md#L")
    r = run(*flags, "search", "tungsten melting point")  # nothing in memory is about it
    assert r.exit_code == 0 and r.output.startswith(
        f"Nothing in memory matches this: no result scored {DEFAULT_MIN_SCORE:g} or more"), r.output
    r = run(*flags, "search", "PR-4821", "-n", "1")
    assert r.exit_code == 0 and "memory/2026-11-28.md#L" in r.output

    r = run(*flags, "get", "memory/2026-11-28.md", "--from", "3", "--lines", "1")
    assert r.output.strip() == "- 团队聚餐定在周六晚上。"
    r = run(*flags, "get", "../etc/passwd.md")
    assert r.exit_code == 1 and "climbs out of the workspace" in r.output

    st = json.loads(run(*flags, "status", "--json").output)
    assert st["files"] == 2 and st["dirty"] is False and st["provider"] == "none"
    human = run(*flags, "status").output
    assert "vector search" in human and "fts tokenizer" in human


def test_init_creates_the_config_file_it_is_pointed_at(tmp_path):
    cfg = tmp_path / "conf" / "mine.json5"
    r = run("init", "--workspace", str(tmp_path / "ws"), "--config", str(cfg))
    assert r.exit_code == 0, r.output
    assert cfg.exists() and str(tmp_path / "ws") in cfg.read_text()
    assert run("--config", str(cfg), "--state-dir", str(tmp_path / "st"), "index").exit_code == 0


def test_config_and_state_dir_from_the_environment(tmp_path):
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "- prefers oolong tea")
    cfg = tmp_path / "conf.json5"
    cfg.write_text(f'{{agents: {{defaults: {{workspace: "{ws}"}}}}}}')
    env = {"MNEMOCLAW_STATE_DIR": str(tmp_path / "st"), "MNEMOCLAW_CONFIG": str(cfg)}
    assert run("index", env=env).exit_code == 0
    assert (tmp_path / "st" / "memory" / "main.sqlite").exists()
    assert "MEMORY.md" in run("search", "oolong", env=env).output


def test_bad_config_is_one_clear_line_not_a_traceback(tmp_path):
    cfg = tmp_path / "bad.json5"
    cfg.write_text("{agents: {defaults: {memorySearch: {provider: 'openia'}}}}")
    r = run("--config", str(cfg), "--state-dir", str(tmp_path), "status")
    assert r.exit_code == 1
    assert "agents.defaults.memorySearch.provider" in r.output and "Traceback" not in r.output


def test_empty_workspace_message(dirs):
    flags, ws, _ = dirs
    ws.mkdir()
    r = run(*flags, "index")
    assert r.exit_code == 0 and "No memory files yet" in r.output


def test_skipped_files_exit_3_with_reasons(dirs):
    flags, ws, _ = dirs
    write(ws / "memory" / "ok.md", "fine")
    (ws / "memory" / "bad.md").write_bytes(b"\xff\xfe\x00\x00binary")
    r = run(*flags, "index")
    assert r.exit_code == 3 and "memory/bad.md" in r.output and "binary" in r.output


def test_eval_prints_the_documented_json_keys(tmp_path):
    beir = tmp_path / "beir"
    beir.mkdir()
    docs = [("d1", "The cat sat on the mat", "a"), ("d2", "Dogs chase cats", "a"), ("d3", "猫在垫子上", "b")]
    (beir / "corpus.jsonl").write_text("\n".join(json.dumps({"_id": i, "title": "", "text": t, "metadata": {"g": g}})
                                               for i, t, g in docs))
    (beir / "queries.jsonl").write_text("\n".join([
        json.dumps({"_id": "q1", "text": "which mat did the cat sit on", "metadata": {"g": "a", "category": 1}}),
        json.dumps({"_id": "q2", "text": "猫", "metadata": {"g": "b", "category": 2}}),
    ]))
    (beir / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n")
    r = run("eval", str(beir), "--scope-field", "g", "--mode", "keyword", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    for key in ("queries", "recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10", "latency_ms_p50",
                "latency_ms_p95", "by_category"):
        assert key in out
    assert out["queries"] == 2 and out["recall@1"] == 1.0
    assert set(out["by_category"]) == {"1", "2"}


def test_eval_asks_workspaces_what_they_cannot_answer_and_reports_the_empty_share(tmp_path):
    """Workspace mode with --out-of-scope and --others: the share answered with nothing,
    per kind of question, beside recall with minScore in force."""
    root = tmp_path / "convs"
    write(root / "a" / "session1.md", "- (D1:1) Alice adopted a grey cat called Miso\n- (D1:2) Alice paints on Sundays\n")
    write(root / "b" / "session1.md", "- (D1:1) Bruno repairs vintage motorbikes\n- (D1:2) Bruno lives near the harbour\n")
    queries = tmp_path / "queries"
    queries.mkdir()
    (queries / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in [
        {"_id": "a1", "text": "what is the name of Alice's cat", "metadata": {"conv": "a", "evidence": ["D1:1"],
                                                                           "answer": "Miso"}},
        {"_id": "b1", "text": "what does Bruno repair", "metadata": {"conv": "b", "evidence": ["D1:1"]}},
    ]))
    unrelated = tmp_path / "unrelated"
    unrelated.mkdir()
    (unrelated / "queries.jsonl").write_text("\n".join(json.dumps({"_id": f"u{i}", "text": t}) for i, t in enumerate(
        ["tungsten melting point kelvin", "photosynthesis chlorophyll wavelength", "量子纠缠实验"])))
    args = ("eval", str(root), "--queries", str(queries), "--mode", "keyword", "--out-of-scope", str(unrelated),
            "--others", "1", "--work-dir", str(tmp_path / "work"))
    r = run(*args, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["recall@5"] == 1.0 and out["empty"] == 0.0 and out["min_score"] == DEFAULT_MIN_SCORE
    assert out["snippet_recall@5"] == 1.0
    assert out["snippet_answer@5"] == {"queries": 1, "shown": 1.0}  # only the question with an answer
    label = f"{tmp_path.name}/unrelated"
    assert out["out_of_scope"][label] == {"queries": 6, "empty": 1.0, "weak": 0.0}  # 3 questions x 2 workspaces
    assert out["weak"] == 0.0
    assert out["out_of_scope"]["other scopes"]["queries"] == 2
    assert sum(out["score_histogram"]["relevant_top"]) == 2
    text = run(*args)
    assert text.exit_code == 0, text.output
    assert (f"out of scope, {label}: 6 queries (none has an answer), answered with something 0.000 (weak 0.000), "
            "with nothing 1.000") in text.output
    assert "answered with nothing: 0.000 of these queries (each has an answer); with only a weak result: 0.000" \
        in text.output
    assert "of the answer's words the first five results hold, their snippets show 1.000 (questions with an answer: 1)" in text.output


def test_the_real_entry_point_and_the_demo(tmp_path):
    """The installed command, the real default embedder: what `make demo` runs."""
    exe = os.path.join(os.path.dirname(sys.executable), "mnemoclaw")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMOCLAW_")}
    p = subprocess.run([exe, "demo"], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "local/use-multilingual-v3" in out
    sections = out.split("\n[")[1:]
    assert len(sections) == 4
    expected = ["memory/2026-11-26.md", "memory/2026-11-24.md", "memory/2026-11-28.md", "memory/2026-11-24.md"]
    for section, path in zip(sections, expected, strict=False):
        first = [ln for ln in section.splitlines() if ln.startswith("1. ")][0]
        assert first.startswith(f"1. {path}#L"), section


def test_init_with_another_workspace_says_which_one_plain_commands_use_and_fixes_it(tmp_path):
    state, a, b = tmp_path / "state", tmp_path / "A", tmp_path / "B"
    assert run("init", "--workspace", str(a), "--state-dir", str(state)).exit_code == 0
    r = CliRunner().invoke(cli, ["init", "--workspace", str(b), "--state-dir", str(state)],
                           env={"MNEMOCLAW_PROVIDER": "none"})
    assert r.exit_code == 0 and (b / "MEMORY.md").exists()
    said = r.output + (r.stderr if r.stderr_bytes is not None else "")
    assert f"names the workspace {a}" in said and "--set-default" in said
    cfg = (state / "config.json5").read_text()
    assert str(a) in cfg and str(b) not in cfg  # not changed without being asked
    write(b / "memory" / "2026-01-01.md", "- a note only B has: pelican\n")
    st = json.loads(run("--state-dir", str(state), "status", "--json", "--fast").output)
    assert st["workspace"] == str(a)  # which is what the message said
    r = run("init", "--workspace", str(b), "--state-dir", str(state), "--set-default")
    assert r.exit_code == 0 and "now names this workspace" in r.output
    after = (state / "config.json5").read_text()
    assert str(b) in after and str(a) not in after and after.count("//") == cfg.count("//")  # comments kept
    assert run("--state-dir", str(state), "index").exit_code == 0
    out = json.loads(run("--state-dir", str(state), "search", "pelican", "--json").output)
    assert out["results"][0]["path"] == "memory/2026-01-01.md"


def test_a_first_search_on_a_big_new_workspace_says_how_far_indexing_got_and_what_to_run(dirs):
    flags, ws, _ = dirs
    for i in range(100):  # more than one search indexes inline
        write(ws / "memory" / f"n{i:03d}.md", f"- note {i} about the harbour\n")
    r = CliRunner().invoke(cli, [*flags, "search", "lighthouse keeper"],
                                           env={"MNEMOCLAW_PROVIDER": "none"}, catch_exceptions=False)
    assert r.exit_code == 0
    assert re.fullmatch(r"Nothing found in what is indexed so far \(\d+ of 100 changed files\)\.\n", r.stdout), r.stdout
    assert "run `mnemoclaw index` to index the rest" in r.stderr and "search again shortly" not in r.stderr
    assert "Nothing in memory matches" not in r.stdout


def test_the_cli_shows_real_paths_where_an_agent_sees_scrubbed_ones(tmp_path):
    missing = tmp_path / "no-such-workspace"
    r = CliRunner().invoke(cli, ["--workspace", str(missing), "--state-dir", str(tmp_path / "st"),
                                                 "search", "hello"], env={"MNEMOCLAW_PROVIDER": "none"})
    assert r.exit_code == 1
    assert f"workspace {missing} does not exist; create it with `mnemoclaw init --workspace {missing}`" in r.stderr
    assert "the workspace does not exist" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_reader_that_stops_reading_is_not_an_error_message(dirs):
    flags, ws, state = dirs
    for i in range(40):
        write(ws / "memory" / f"n{i:02d}.md", "".join(f"- harbour note {i} {j}\n\n" for j in range(40)))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none"}
    cmd = [sys.executable, "-m", "mnemoclaw.cli", *flags]
    subprocess.run([*cmd, "index"], check=True, capture_output=True, env=env, timeout=120)
    proc = subprocess.Popen([*cmd, "search", "harbour note", "-n", "20"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    proc.stdout.read(10)
    proc.stdout.close()  # as `| head -1` does
    err = proc.stderr.read().decode()
    proc.wait(60)
    assert "Broken pipe" not in err and "Traceback" not in err and err == "", err


def test_input_nested_past_any_parsers_depth_is_one_line(dirs, tmp_path):
    """A config 60 levels deep, an export 100 000 deep, a transcript line as deep: one line each."""
    flags, ws, _ = dirs
    write(ws / "MEMORY.md", "- a note\n")
    deep_config = write(tmp_path / "deep.json5", "{a:" * 60 + "1" + "}" * 60)
    r = CliRunner().invoke(cli, [*flags, "--config", str(deep_config), "status"], env={"MNEMOCLAW_PROVIDER": "none"})
    assert r.exit_code == 1 and r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert f"config file {deep_config} is not valid JSON5: nested too deeply" in r.stderr
    export = write(tmp_path / "conversations.json", "[" * 100_000 + "]" * 100_000)
    r = CliRunner().invoke(cli, [*flags, "import", "chatgpt", str(export)], env={"MNEMOCLAW_PROVIDER": "none"})
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), r.exception
    assert "is not JSON (nested too deeply" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_get_takes_the_citation_search_prints_and_an_empty_search_asks_for_words(dirs):
    flags, ws, _ = dirs
    write(ws / "MEMORY.md", "# Memory\n\n- the otter sleeps in the reeds\n- lunch at noon\n")
    r = run(*flags, "search", "otter reeds")
    cited = re.search(r"(MEMORY\.md#L\d+-L\d+)", r.output)[1]
    got = run(*flags, "get", cited)
    assert got.exit_code == 0 and "the otter sleeps in the reeds" in got.output
    assert run(*flags, "get", "MEMORY.md#L4").output == "- lunch at noon\n"
    empty = run(*flags, "search", "  ")
    assert empty.exit_code == 2 and "the query is empty" in empty.output and "Nothing in memory" not in empty.output


def test_eval_leaves_half_out_and_asks_what_the_other_half_answered(tmp_path):
    """--leave-half-out: the questions on documents left out of the index are out of scope, and
    the share answered with nothing is reported beside the in-scope figures."""
    beir = tmp_path / "beir"
    beir.mkdir()
    titles = [f"article {i}" for i in range(12)]
    kept = [t for t in titles if hashlib.sha256(t.encode()).digest()[0] % 2 == 0]
    assert 0 < len(kept) < len(titles)
    topics = ["volcano basalt eruption", "violin concerto tuning", "glacier moraine ice", "tram network depot",
              "honeybee waggle dance", "saffron harvest crocus", "lighthouse keeper lamp", "chess endgame rook",
              "coral reef bleaching", "printing press movable type", "kite surfing wind", "tea ceremony matcha"]
    (beir / "corpus.jsonl").write_text("\n".join(json.dumps({"_id": f"d{i}", "title": t, "text": f"Notes on {topics[i]}."})
                                               for i, t in enumerate(titles)))
    (beir / "queries.jsonl").write_text("\n".join(json.dumps({"_id": f"q{i}", "text": f"what about {topics[i]}"})
                                                for i in range(12)))
    (beir / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{i}\t1\n" for i in range(12)))
    r = run("eval", str(beir), "--mode", "keyword", "--leave-half-out", "--json", "--work-dir", str(tmp_path / "w"))
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["queries"] == len(kept) and out["recall@1"] == 1.0
    absent = out["out_of_scope"]["not in memory"]
    assert absent["queries"] == len(titles) - len(kept) and absent["empty"] == 1.0


def test_eval_puts_several_folders_in_one_workspace_and_asks_about_the_rest(tmp_path):
    root = tmp_path / "convs"
    people = {"a": "Alice adopted a grey cat called Miso", "b": "Bruno repairs vintage motorbikes",
              "c": "Chen grows chillies on her balcony", "d": "Dara sings in a harbour choir"}
    for folder, line in people.items():
        write(root / folder / "session1.md", f"- (D1:1) {line}\n")
    queries = tmp_path / "queries"
    queries.mkdir()
    asked = {"a": "what is the name of Alice's cat", "b": "what does Bruno repair", "c": "what does Chen grow",
             "d": "where does Dara sing"}
    (queries / "queries.jsonl").write_text("\n".join(json.dumps(
        {"_id": k, "text": t, "metadata": {"conv": k, "evidence": ["D1:1"]}}) for k, t in asked.items()))
    r = run("eval", str(root), "--queries", str(queries), "--mode", "keyword", "--together", "2", "--others", "5",
            "--json", "--work-dir", str(tmp_path / "w"))
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    # two workspaces of two people; each question found in its own folder despite the shared D1:1
    assert out["scopes"] == 4 and out["queries"] == 4 and out["recall@1"] == 1.0
    assert out["out_of_scope"]["other scopes"]["queries"] == 4  # two about the other pair, per workspace
