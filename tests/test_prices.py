"""The price table and what a call's usage costs: list, cached, batch, batch and cached.

Every figure is worked out by hand from the table's rates (USD per million tokens).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reins.backends.batch import BATCH_PRICE
from reins.backends.prices import PRICES, TABLE_DATE, Price, lookup
from reins.cli import make_group
from reins.testing import FakeBackend
from reins.values import Completion
from tests.kit import TINY_REF
from tests.kit.loopkit import make_ledger, registered

SOL = lookup("openai", "gpt-6-sol")  # $2 input, $0.20 cached, $2.50 cache write, $10 output


def test_every_entry_carries_its_rates_date_and_source() -> None:
    assert TABLE_DATE == "2026-12-01"
    for provider, models in PRICES.items():
        assert provider in {"openai", "anthropic"} and models
        for model, price in models.items():
            assert price.date == TABLE_DATE and price.source.startswith("https://"), model
            assert price.batch == BATCH_PRICE == 0.5
            assert 0 < (price.cache_read or 0) < price.input < price.output, model
            assert price.cache_write is not None and price.cache_write >= price.input


def test_a_dated_snapshot_is_priced_as_its_model_and_nothing_else_is_guessed() -> None:
    assert lookup("anthropic", "claude-haiku-4-5-20251001") == lookup(
        "anthropic", "claude-haiku-4-5"
    )
    assert lookup("openai", "gpt-4.1-mini-2025-04-14") == lookup("openai", "gpt-4.1-mini")
    assert lookup("openai", "gpt-6-sol-pro") is None and lookup("openai", "gpt-6") is None
    assert lookup("gemini", "gemini-2.5-flash") is None and lookup("nobody", "gpt-6-sol") is None


def test_list_cache_batch_and_batch_with_cache_on_a_million_tokens() -> None:
    assert SOL is not None
    million, cached = 1_000_000, 800_000
    assert SOL.list_cost(million, million) == pytest.approx(12.0)  # 2 + 10
    assert SOL.cost(million, million) == pytest.approx(12.0)
    assert SOL.cost(million, million, batch=True) == pytest.approx(6.0)
    with_cache = 200_000 * 2.0 / million + cached * 0.2 / million + 10.0  # 0.4 + 0.16 + 10
    assert SOL.cost(million, million, cache_read=cached) == pytest.approx(with_cache)  # 10.56
    assert SOL.cost(million, million, cache_read=cached, batch=True) == pytest.approx(5.28)
    # A cache write costs 1.25 times the input rate: a prefix written and never read costs more.
    assert SOL.cost(million, 0, cache_write=million) == pytest.approx(2.5)
    assert SOL.list_cost(million, 0) == pytest.approx(2.0)


def test_counts_that_do_not_add_up_never_bill_negative_input() -> None:
    price = Price(input=1.0, output=1.0, cache_read=0.1)
    assert price.cost(100, 0, cache_read=150) == pytest.approx(150 * 0.1 / 1e6)
    assert price.cost(None, None, cache_read=5) is None and price.list_cost(None, None) is None


def test_report_splits_the_saving_into_the_caches_part_and_the_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert SOL is not None
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REINS_DRIVER", "alice")
    make_ledger(tmp_path / "tiny.reins.db")

    def turn(cached: int, batch: bool) -> Completion:
        cost = SOL.cost(1000, 100, cache_read=cached, batch=batch)
        return Completion(
            "good", "gpt-6-sol", input_tokens=1000, output_tokens=100, cache_read_tokens=cached,
            cost=cost, list_cost=SOL.list_cost(1000, 100), batch=batch,
        )  # fmt: skip

    # a: batch and cached (780e-6), b: cached (1560e-6), c: neither (3000e-6); list 3000e-6 each
    fake = FakeBackend({"a": [turn(800, True)], "b": [turn(800, False)], "c": [turn(0, False)]})
    runner = CliRunner()
    with registered(w=fake):
        argv = ["--quest", TINY_REF, "loop", "--model", "fake:w", "--no-export"]
        assert runner.invoke(make_group(), argv).exit_code == 0
    out = runner.invoke(make_group(), ["--quest", TINY_REF, "report", "--json"])
    report = json.loads(out.stdout)
    assert report["usage"]["cost"] == pytest.approx(5340e-6)
    assert report["usage"]["list_cost"] == pytest.approx(9000e-6)
    assert report["usage"]["batch_cost"] == pytest.approx(780e-6)
    assert report["cache_hit_rate"] == pytest.approx(1600 / 3000)
    # batch: 1560e-6 outside a batch less 780e-6 in one; cache: 1440e-6 on each of a and b
    assert report["saved"] == {
        "total": pytest.approx(3660e-6), "cache": pytest.approx(2880e-6),
        "batch": pytest.approx(780e-6),
    }  # fmt: skip


def test_a_batch_answer_prices_its_cache_reads_at_the_cached_rate_and_the_batch_share() -> None:
    from reins.backends._common import Reply
    from reins.backends.batch import priced

    assert SOL is not None
    reply = Reply("good", "gpt-6-sol", input_tokens=1000, output_tokens=100, cache_read_tokens=800)
    done = priced(reply, SOL, latency=None)
    # 200 uncached at $2, 800 cached at $0.20, 100 out at $10, all at half: 0.00078
    assert done.cost == pytest.approx(780e-6) and done.batch
    assert done.list_cost == pytest.approx(3000e-6)  # every input token uncached, no discount
    assert done.cache_read_tokens == 800  # the ledger counts the cache's share of a batch too
    reported = priced(Reply("good", "m", 10, 10, cost=0.5), SOL, latency=None)
    assert (reported.cost, reported.list_cost) == (0.5, 1.0)  # billed as reported, list = 2x
