"""The references are what the code says (docs/config.md, docs/cli.md, docs/architecture.md and
the README's layout table)."""

from mnemoclaw.cli import reference

from conftest import REPO


def test_every_config_key_says_what_it_does():
    assert reference.undocumented() == []


def test_the_references_in_docs_are_the_code_s():
    for name, text in (("config.md", reference.config_reference()), ("cli.md", reference.cli_reference()),
                       ("architecture.md", reference.architecture_md())):
        on_disk = (REPO / "docs" / name).read_text("utf-8")
        assert on_disk == text, f"docs/{name} is stale: run `python -m mnemoclaw.cli.reference`"
    readme = (REPO / "README.md").read_text("utf-8")
    assert reference.readme_with_layout(readme) == readme, \
        "the README's layout table is stale: run `python -m mnemoclaw.cli.reference`"


def test_every_command_and_key_is_in_them():
    from mnemoclaw.cli import cli

    cli_md = reference.cli_reference()
    assert all(f"## `mnemoclaw {name}" in cli_md for name in cli.commands)
    config_md = reference.config_reference()
    for key in ("`provider`", "`query.minScore`", "`store.shared`", "`citations`", "agents.defaults.contextTokens"):
        assert key in config_md
