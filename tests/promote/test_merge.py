"""What a merged line may say: nothing its sources do not name."""

from __future__ import annotations

from mnemoclaw.promote.merge import unsupported

SOURCES = ["Decided to move the billing service database to Postgres 16, because SQLite locked.",
           "The Postgres 16 cut-over finished on Friday night; Priya signed it off.",
           "我们决定每周五下午三点开账单服务的复盘会，由 Priya 主持。"]


def test_a_rewording_names_nothing_new():
    assert unsupported("Billing moved from SQLite to Postgres 16; the cut-over finished Friday night, signed off "
                       "by Priya.", SOURCES) == []
    assert unsupported("每周五下午三点开账单服务复盘会，Priya 主持。", SOURCES) == []


def test_a_number_a_name_an_identifier_or_a_chinese_name_it_invents_is_caught():
    assert unsupported("Billing moved to Postgres 17 on Friday.", SOURCES) == ["17"]
    assert unsupported("Marta signed off the Postgres 16 cut-over.", SOURCES) == ["Marta"]
    assert unsupported("The cut-over ran on db-billing-9.internal.", SOURCES) == ["db-billing-9.internal"]
    assert unsupported("每周五下午三点开账单服务的复盘会，由王芳和李雷主持。", SOURCES) == ["由王芳和李雷主持"]
