"""The common machinery: Retry-After parsing, backoff, the retry loop, and the rate limiter."""

from __future__ import annotations

import asyncio
import email.utils
import random
import time

import pytest

from reins.backends import limits as limits_module
from reins.backends._common import Guard, Price, Reply
from reins.backends.limits import Limiter, Limits, estimate_tokens
from reins.backends.redact import REDACTED, redact
from reins.backends.retry import RetryPolicy, parse_retry_after, with_retries
from reins.errors import BackendError, BackendTimeout, TransientError, TransientTimeout

# -- Retry-After and backoff ---------------------------------------------------------------


def test_retry_after_in_seconds_and_as_an_http_date() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(" 0.5 ") == 0.5
    assert parse_retry_after("-3") == 0.0
    now = time.time()
    later = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after(later, now=now) == pytest.approx(30, abs=1)
    earlier = email.utils.formatdate(now - 30, usegmt=True)
    assert parse_retry_after(earlier, now=now) == 0.0
    for junk in (None, "", "soon", "nan", "Wed, 99 Foo 2024"):
        assert parse_retry_after(junk) is None


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    policy = RetryPolicy(backoff=1.0, max_backoff=5.0, max_wait=60.0, jitter=0.5)
    rng = random.Random(1)
    for retry, full in ((1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)):
        for _ in range(20):
            assert full / 2 <= policy.delay(retry, rng=rng) <= full
    assert policy.delay(1, retry_after=3.0) == 3.0
    assert policy.delay(1, retry_after=3600.0) == 60.0  # a server's wish, capped


def _flaky(failures: list[BackendError], result: str = "ok"):  # type: ignore[no-untyped-def]
    calls: list[int] = []

    async def call() -> str:
        calls.append(1)
        if failures:
            raise failures.pop(0)
        return result

    return call, calls


def test_transient_failures_are_retried_until_success() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    call, calls = _flaky([TransientError("503"), TransientError("429", retry_after=2.0)])
    policy = RetryPolicy(retries=4, backoff=0.1, jitter=0.0)
    assert asyncio.run(with_retries(call, policy=policy, backend="b", sleep=sleep)) == "ok"
    assert len(calls) == 3 and waits == [0.1, 2.0]


def test_a_permanent_failure_is_raised_at_once() -> None:
    call, calls = _flaky([BackendError("400 bad request", backend="b")])
    with pytest.raises(BackendError, match=r"^400 bad request$"):
        asyncio.run(with_retries(call, policy=RetryPolicy(backoff=0), backend="b"))
    assert len(calls) == 1


def test_used_up_retries_raise_a_retryable_error_and_keep_timeouts_timeouts() -> None:
    call, calls = _flaky([TransientError("boom")] * 3)
    with pytest.raises(BackendError, match=r"^boom \(gave up after 3 tries\)$") as info:
        asyncio.run(with_retries(call, policy=RetryPolicy(retries=2, backoff=0), backend="b"))
    assert info.value.retryable and info.value.backend == "b" and len(calls) == 3
    assert not isinstance(info.value, BackendTimeout)
    call, _ = _flaky([TransientTimeout("slow")])
    with pytest.raises(BackendTimeout, match=r"slow \(gave up after 1 try\)"):
        asyncio.run(with_retries(call, policy=RetryPolicy(retries=0), backend="b"))


# -- the limiter ---------------------------------------------------------------------------


def test_concurrency_cap_holds_under_load() -> None:
    limiter = Limiter(Limits(concurrency=3))
    peak = 0

    async def work() -> None:
        nonlocal peak
        async with limiter.slot():
            peak = max(peak, limiter.in_flight)
            await asyncio.sleep(0.01)

    async def main() -> None:
        await asyncio.gather(*(work() for _ in range(20)))

    asyncio.run(main())
    assert peak == 3 and limiter.in_flight == 0


def test_rpm_and_tpm_follow_a_sliding_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits_module, "WINDOW", 0.3)

    async def admitted_at(limiter: Limiter, tokens: list[int]) -> list[float]:
        start = time.monotonic()
        times = []
        for n in tokens:
            async with limiter.slot(n):
                times.append(time.monotonic() - start)
        return times

    rpm = asyncio.run(admitted_at(Limiter(Limits(rpm=2)), [0, 0, 0]))
    assert rpm[1] < 0.15 and rpm[2] >= 0.29
    tpm = asyncio.run(admitted_at(Limiter(Limits(tpm=100)), [60, 30, 20, 500]))
    assert tpm[1] < 0.15  # 90 fits
    assert 0.29 <= tpm[2] < 0.55  # 110 does not: wait for the first 60 to age out
    assert tpm[3] >= 0.58  # larger than the whole budget: alone, once the window is empty


def test_settling_replaces_the_estimate_with_the_real_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(limits_module, "WINDOW", 0.3)
    limiter = Limiter(Limits(tpm=100))

    async def main() -> float:
        async with limiter.slot(90) as ticket:
            ticket.settle(10)  # the call was cheaper than feared
        start = time.monotonic()
        async with limiter.slot(80):
            return time.monotonic() - start

    assert asyncio.run(main()) < 0.15


def test_pause_holds_every_caller_back() -> None:
    limiter = Limiter(Limits())

    async def main() -> float:
        limiter.pause(0.2)
        start = time.monotonic()
        async with limiter.slot():
            return time.monotonic() - start

    assert asyncio.run(main()) >= 0.19


def test_shared_limiters_are_one_per_key_and_limits() -> None:
    a = Limiter.shared(("x", "url", "m"), Limits(rpm=5))
    assert Limiter.shared(("x", "url", "m"), Limits(rpm=5)) is a
    assert Limiter.shared(("x", "url", "m"), Limits(rpm=6)) is not a


def test_token_estimates_are_generous_for_non_latin_text() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcdef") == 2
    assert estimate_tokens("한국어") == 6


# -- usage -----------------------------------------------------------------------------------


def test_guard_reports_usage_cost_and_latency() -> None:
    guard = Guard(
        "g", limits=Limits(), retry=RetryPolicy(backoff=0), price=Price(1.0, 2.0), key="guard"
    )
    failures = [TransientError("503")]

    async def request(seconds: float) -> Reply:
        assert 0 < seconds <= 5
        await asyncio.sleep(0.01)
        if failures:
            raise failures.pop()
        return Reply("text", "model-x", input_tokens=1000, output_tokens=500)

    done = asyncio.run(guard.run(request, tokens=10, timeout=5))
    assert (done.text, done.model, done.input_tokens, done.output_tokens) == (
        "text",
        "model-x",
        1000,
        500,
    )
    assert done.cost == pytest.approx(0.002)
    assert done.latency is not None and done.latency >= 0.02  # both tries count


def test_guard_gives_each_try_the_smaller_of_the_time_left_and_request_timeout() -> None:
    guard = Guard(
        "g", limits=Limits(), retry=RetryPolicy(backoff=0), price=None, key="t", request_timeout=0.5
    )
    given: list[float] = []

    async def request(seconds: float) -> Reply:
        given.append(seconds)
        if len(given) == 1:
            await asyncio.sleep(0.1)
            raise TransientTimeout("slow")
        return Reply("ok", "m")

    asyncio.run(guard.run(request, tokens=0, timeout=0.3))
    assert given[0] == pytest.approx(0.3, abs=0.05)  # less than request_timeout
    assert given[1] == pytest.approx(0.2, abs=0.05)  # what the first try left


def test_a_limiter_that_cannot_admit_in_time_is_a_timeout() -> None:
    guard = Guard("g", limits=Limits(rpm=1), retry=RetryPolicy(retries=0), price=None, key="rl")

    async def request(seconds: float) -> Reply:
        return Reply("ok", "m")

    async def twice() -> None:
        await guard.run(request, tokens=0, timeout=1)
        await guard.run(request, tokens=0, timeout=0.1)

    with pytest.raises(BackendTimeout, match=r"the rate limit left no room within 0\.1s"):
        asyncio.run(twice())


def test_unknown_usage_means_unknown_cost() -> None:
    assert Price(1.0, 1.0).cost(None, None) is None


# -- redaction -------------------------------------------------------------------------------


def test_redaction_scrubs_keys_labels_and_url_passwords(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACME_API_KEY", "acme-0123456789")
    text = redact(
        "headers {'authorization': 'Bearer sk-live-abc', 'x-goog-api-key': 'AIzaXYZ'} "
        "url https://user:hunter22@example.com/x key=acme-0123456789 pw=planted%2Fsecret "
        "and planted/secret and max_tokens: 5",
        ["planted/secret"],
    )
    for secret in ("sk-live-abc", "AIzaXYZ", "hunter22", "acme-0123456789", "planted"):
        assert secret not in text
    assert "'authorization': 'Bearer " + REDACTED in text
    assert "max_tokens: 5" in text  # ordinary words survive
