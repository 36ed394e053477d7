"""A model without a price: the cost caps refuse to start on it, a price can be given to it
(``--price``, ``[prices]`` in reins.toml), and what its turns cost is said to be unknown.

The model server is the fake OpenAI-compatible one of the test kit (``openai_ok`` reports 12
prompt and 3 completion tokens a call, and no cost).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reins import SQLiteStore
from tests.kit.cli import Cli
from tests.kit.http import FakeServer, openai_ok

UNLISTED = "gpt-4.1"  # not in reins' price table (the README's --strong)


def spec(server: FakeServer, model: str = UNLISTED) -> str:
    return f"openai:{model}?base_url={server.url}/v1&backoff=0.001&max_wait=0.5"


def costs(folder: Path) -> list[float | None]:
    with SQLiteStore.open(folder / "tiny.reins.db") as led:
        return [a.usage.cost for key in ("a", "b", "c") for a in led.snapshot(key)[1]]


@pytest.mark.parametrize("cap", ["--max-cost", "--max-item-cost"])
def test_a_cost_cap_refuses_to_start_on_a_model_without_a_price(
    cli: Cli, http_server: FakeServer, cap: str
) -> None:
    http_server.default = openai_ok()
    assert cli("scan").exit_code == 0
    out = cli("loop", "-m", spec(http_server), cap, "1")
    assert out.exit_code == 2, out.output
    said = out.stderr
    assert f"{cap} cannot act on openai:{UNLISTED}" in said
    assert f"--price openai:{UNLISTED}=IN/OUT" in said and "[prices]" in said
    assert http_server.seen == []  # nothing was sent, nothing leased
    with SQLiteStore.open(cli.folder / "tiny.reins.db") as led:
        assert led.stats().attempts == 0 and led.stats().leased == 0


def test_the_strong_model_without_a_price_is_named_too(cli: Cli, http_server: FakeServer) -> None:
    cli("scan")
    out = cli(
        "loop", "-m", spec(http_server, "gpt-4.1-mini"), "--strong", spec(http_server),
        "--escalate-on", "not-bad", "--max-cost", "2.50",
    )  # fmt: skip
    assert out.exit_code == 2
    assert f"cannot act on openai:{UNLISTED}:" in out.stderr  # the listed model is not named
    assert "gpt-4.1-mini" not in out.stderr.split("cannot act on")[1].split(":", 2)[1]


def test_price_prices_the_model_and_the_cap_acts(cli: Cli, http_server: FakeServer) -> None:
    http_server.default = openai_ok()
    cli("scan")
    out = cli("loop", "-m", spec(http_server), "--price", "2/8", "--max-cost", "0.00005")
    assert out.exit_code == 0, out.output
    each = (12 * 2 + 3 * 8) / 1e6
    assert costs(cli.folder) == [pytest.approx(each)] * 2  # the cap stopped it after two turns
    assert "loop max-cost" in out.stderr and "cost unknown" not in out.stderr


def test_prices_in_reins_toml_price_a_model_by_its_spec(cli: Cli, http_server: FakeServer) -> None:
    http_server.default = openai_ok()
    (cli.folder / "reins.toml").write_text(
        f'[reins]\nquest = "tests.kit:TINY"\n\n[prices]\n"openai:{UNLISTED}" = "1/4"\n'
        '"openai:other" = { input = 9, output = 9 }\n'
    )
    cli("scan")
    out = cli("loop", "-m", spec(http_server), "--max-cost", "5", "--json")
    assert out.exit_code == 0, out.output
    assert costs(cli.folder) == [pytest.approx((12 + 3 * 4) / 1e6)] * 3
    summary = json.loads(out.stdout.splitlines()[-1])
    assert summary["unpriced"] == 0 and summary["cost"] == pytest.approx(3 * 24 / 1e6)


def test_a_bad_price_is_refused_with_what_to_write(cli: Cli, http_server: FakeServer) -> None:
    cli("scan")
    out = cli("loop", "-m", spec(http_server), "--price", "cheap")
    assert out.exit_code == 2 and "write IN/OUT" in out.stderr
    (cli.folder / "reins.toml").write_text('[prices]\n"openai:x" = 3\n')
    out = cli("status")
    assert out.exit_code == 2 and "[prices] 'openai:x'" in out.stderr


def test_an_unpriced_run_says_its_cost_is_unknown_not_zero(
    cli: Cli, http_server: FakeServer
) -> None:
    http_server.default = openai_ok()
    cli("scan")
    out = cli("loop", "-m", spec(http_server))
    assert out.exit_code == 0, out.output
    assert "cost unknown (no price for the model: 3 turns)" in out.stderr
    assert "0.0000" not in out.stderr
    status = cli("status")
    assert "no cost recorded" in status.stdout and "0.0000" not in status.stdout
    report = cli("report")
    assert "no cost recorded" in report.stdout and "$0.0000" not in report.stdout
