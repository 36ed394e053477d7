"""Mailboxes in real mail: ids, routes and URLs are not addresses; an address counts only whole."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reins.verify import mailaddr
from reins.verify.mailaddr import Kind

HEADERS = """\
Return-Path: <ana.lindqvist@ice-research.example>
Received: from mail.ice-research.example (mail.ice-research.example [192.0.2.17])
\tby mx1.ice-research.example (Postfix) with ESMTPS id 4QX8kL2Zz1
\tfor <hugo.brandt@ice-research.example>; Tue, 6 Jan 2026 09:12:03 +0100 (CET)
Received: by mail.ice-research.example with SMTP id <20260106.GA4711@mail.ice-research.example>;
\tTue, 6 Jan 2026 09:12:02 +0100
Authentication-Results: mx1.ice-research.example; dkim=pass header.i=@ice-research.example;
\tspf=pass smtp.mailfrom=ana.lindqvist@ice-research.example
DKIM-Signature: v=1; a=rsa-sha256; d=ice-research.example; i=@ice-research.example;
\ts=mail2025; h=from:to:cc:subject:message-id; bh=k2N7lqYkGd1m8Qe0XjH1t0r4wq8sXx1GdA8Qp4x9Y2o=
Message-ID: <CAH7x=q9+KLm0b2@mail.ice-research.example>
In-Reply-To: <87fs2k1q9z.fsf@volkov-laptop.ice-research.example>
References: <20260105.1130.run41@ci.ice-research.example>
 <87fs2k1q9z.fsf@volkov-laptop.ice-research.example>
Content-ID: <part1.7F3A@ice-research.example>
From: =?UTF-8?Q?Ana_Lindqvist?= <ana.lindqvist@ice-research.example>
To: "Volkov, Dmitri" <D.Volkov@ICE-Research.example>, runs@lists.ice-research.example
Cc: =?UTF-8?B?SHVnbyBCcmFuZHQ=?= <hugo.brandt@ice-research.example>,
 "john doe"@ice-research.example
Subject: Re: raw logs from run 41

Dmitri, the logs are on the share. The CI job was <20260105.1130.run41@ci.ice-research.example>.

On Mon, 5 Jan 2026 at 11:30, Dmitri Volkov <D.Volkov@ice-research.example> wrote:
> Can you share the raw logs? Ask storage-admins@ice-research.example.
> > On Sun, 4 Jan 2026, Hugo <hugo.brandt@ice-research.example> wrote:
> > > Message-ID: <quoted.9@ice-research.example>
> > > References: <a.1@ice-research.example>
> > >  <b.2@ice-research.example>
> > > Who has them? Try ops-desk@ice-research.example.
"""

MAILBOXES = [
    "ana.lindqvist@ice-research.example",
    "hugo.brandt@ice-research.example",
    "D.Volkov@ICE-Research.example",
    "runs@lists.ice-research.example",
    '"john doe"@ice-research.example',
    "storage-admins@ice-research.example",
    "ops-desk@ice-research.example",
]

IDS = [
    "20260106.GA4711@mail.ice-research.example",
    "CAH7x=q9+KLm0b2@mail.ice-research.example",
    "87fs2k1q9z.fsf@volkov-laptop.ice-research.example",
    "20260105.1130.run41@ci.ice-research.example",
    "part1.7F3A@ice-research.example",
    "quoted.9@ice-research.example",
    "a.1@ice-research.example",
    "b.2@ice-research.example",
]


def test_the_mailboxes_of_a_raw_reply_are_exactly_its_mailboxes() -> None:
    assert mailaddr.addresses(HEADERS) == MAILBOXES


@pytest.mark.parametrize("token", IDS)
def test_message_ids_are_not_mailboxes(token: str) -> None:
    kinds = {a.kind for a in mailaddr.scan(HEADERS) if a.text == token}
    assert kinds == {Kind.MESSAGE_ID}
    assert "message id" in mailaddr.why_absent(HEADERS, token)


def test_received_for_is_a_mailbox_and_received_id_is_not() -> None:
    received = [a for a in mailaddr.scan(HEADERS) if a.field == "received"]
    assert [(a.text, a.kind) for a in received] == [
        ("hugo.brandt@ice-research.example", Kind.MAILBOX),
        ("20260106.GA4711@mail.ice-research.example", Kind.MESSAGE_ID),
    ]


def test_tag_value_headers_give_their_values_not_their_tags() -> None:
    texts = [a.text for a in mailaddr.scan(HEADERS)]
    assert not any("=" in t.partition("@")[0] and "mailfrom" in t for t in texts)
    assert "header.i=@ice-research.example" not in texts
    assert not any(t.startswith("i=") for t in texts)


def test_a_news_path_and_article_citations_are_not_mailboxes() -> None:
    article = (
        "Path: news.example.net!feeder.example.org!gwen@allotment-gazette.example\n"
        "From: gwen.ashdown@allotment-gazette.example (Gwen Ashdown)\n"
        "Message-ID: <seedswap.0310@allotment-gazette.example>\n"
        "\n"
        "In article <tomatoes.0309@news.example.net>, Ray Okafor wrote:\n"
        ">Mail the committee...committee@allotment-gazette.example\n"
        "See news:faq@allotment-gazette.example or <mid:faq.2@allotment-gazette.example>.\n"
    )
    assert mailaddr.addresses(article) == [
        "gwen.ashdown@allotment-gazette.example",
        "committee@allotment-gazette.example",
    ]
    route = next(a for a in mailaddr.scan(article) if a.field == "path")
    assert (
        route.kind is Kind.ROUTE and route.describe() == "a news route (Path field), not a mailbox"
    )


def test_a_references_line_of_a_letter_names_referees_not_message_ids() -> None:
    letter = (
        "Dear committee,\n\nplease find my application attached.\n"
        "References: Dr. Ama Mensah, a.mensah@uni-accra.example; Prof. Li Wei,\n"
        "  li.wei@tsinghua.example\n"
        "In-Reply-To: <job.4411@hr.uni-accra.example>\n"
    )
    assert mailaddr.addresses(letter) == ["a.mensah@uni-accra.example", "li.wei@tsinghua.example"]


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("X-Xxmessage-Id", "X-Xxmessage-ID"),
        ("X-Original-Message-ID", "X-Original-Message-ID"),
        ("resent-message-id", "Resent-Message-ID"),
        ("XMessage-ID", "Xmessage-ID"),
    ],
)
def test_a_field_whose_name_ends_in_message_id_holds_ids(name: str, shown: str) -> None:
    text = f"From: bob@lab.example.org\n{name}: <9a3f00c2e71b@lab.example.org>\n"
    assert mailaddr.addresses(text) == ["bob@lab.example.org"]
    assert mailaddr.why_absent(text, "9a3f00c2e71b@lab.example.org") == (
        f"a message id ({shown} field), not a mailbox"
    )


@pytest.mark.parametrize(
    ("references", "token"),
    [
        ("<1993Nov4.104207.42.7@po.Example.Organization", "1993Nov4.104207.42.7"),  # unclosed
        ("<a.1@x.example> <1993Nov4.10:42.7@po.Example.Organization", "42.7"),  # cut, a colon
        ("<1993Nov4.10:42.7@po.Example.Organization>", "42.7"),  # closed, with a colon inside
        ("<Pine 42.7@po.Example.Organization", "42.7"),  # a space inside
        ("<a.1@x.example>\n <1993Nov4.\n 42.7@po.Example.Organization", "42.7"),  # folded
    ],
)
def test_nothing_inside_an_open_bracket_of_an_id_list_is_a_mailbox(
    references: str, token: str
) -> None:
    """Ids are not mailboxes: a "<" that no ">" closes before the field ends still opens one.
    The fields after it are read as themselves."""
    text = f"References: {references}\nFrom: Bob <bob@lab.example.org>\nTo: ann@example.org\n"
    assert mailaddr.addresses(text) == ["bob@lab.example.org", "ann@example.org"]
    assert mailaddr.why_absent(text, f"{token}@po.Example.Organization") == (
        "a message id (References field), not a mailbox"
    )


def test_a_field_glued_onto_an_id_list_is_read_as_itself() -> None:
    text = (
        "References: <a.1@x.example> <b.2@po.Example.Organization Cc: Ann <ann@example.org>\n"
        "In-Reply-To: <c.3@x.example> From: bob@lab.example.org\n"
    )
    assert mailaddr.addresses(text) == ["ann@example.org", "bob@lab.example.org"]
    fields = {a.text: a.field for a in mailaddr.scan(text)}
    assert fields["ann@example.org"] == "cc" and fields["b.2@po.Example.Organization"] == (
        "references"
    )


def test_a_word_with_a_colon_inside_a_closed_id_is_part_of_the_id() -> None:
    text = "References: <old id: 42.7@po.Example.Organization>\n"
    assert mailaddr.addresses(text) == []


def test_urls_and_scp_targets_are_not_mailboxes_but_mailto_is() -> None:
    text = (
        "Mirror: git@git.corvid.example:quotes/118.git, portal https://guest@portal.corvid.example/q"
        " and <mailto:sales@corvid.example?subject=Quote>."
    )
    assert mailaddr.addresses(text) == ["sales@corvid.example"]


@pytest.mark.parametrize(
    "near",
    [
        "bob@example.co",  # a prefix of the domain
        "ob@example.com",  # the end of the local part
        "bob@example.com.au",  # longer than what is written
        "bob@mail.example.com",
        "bob.smith@example.com",
    ],
)
def test_an_address_is_in_the_text_only_whole(near: str) -> None:
    text = "Write to bob@example.com. Or to bob@example.com.br, if you must."
    assert mailaddr.why_absent(text, "bob@example.com") == ""
    assert mailaddr.why_absent(text, near) != ""


def test_a_near_miss_is_named() -> None:
    assert mailaddr.why_absent("bob@example.com", "bob@example.co") == (
        "not whole: the text writes bob@example.com"
    )


def test_the_domain_ignores_case_and_the_local_part_does_not() -> None:
    text = "Invoices to AP.Team@Kestrel-Freight.example."
    assert mailaddr.addresses(text) == ["AP.Team@Kestrel-Freight.example"]
    assert mailaddr.why_absent(text, "AP.Team@kestrel-freight.EXAMPLE") == ""
    assert mailaddr.same("AP.Team@kestrel-freight.example", "AP.Team@KESTREL-freight.example")
    assert not mailaddr.same("ap.team@kestrel-freight.example", "AP.Team@kestrel-freight.example")
    assert "case" in mailaddr.why_absent(text, "ap.team@kestrel-freight.example")


def test_one_mailbox_in_two_spellings_of_its_domain_is_listed_once_as_first_written() -> None:
    assert mailaddr.addresses(
        "D.Volkov@ICE.example wrote to d.volkov@ice.example and D.Volkov@ice.example"
    ) == [
        "D.Volkov@ICE.example",
        "d.volkov@ice.example",
    ]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Mail bob@example.com.", "bob@example.com"),
        ("Mail bob@example.com...", "bob@example.com"),
        ("(bob@example.com)", "bob@example.com"),
        ("'bob@example.com'", "bob@example.com"),
        ("**bob@example.com**", "bob@example.com"),
        ("`bob@example.com`", "bob@example.com"),
        ("Write to...bob@example.com", "bob@example.com"),
        ("bob@example.com's inbox", "bob@example.com"),
        ("请联系bob@example.com谢谢", "bob@example.com"),
        ("Was it bob@example.com?", "bob@example.com"),
        ("a+tag@example.com", "a+tag@example.com"),
        ("Mail bob@lab.example.org-- or call", "bob@lab.example.org"),  # a dash, not the domain
        ("Mail bob@lab.example.org- or call", "bob@lab.example.org"),
        ("or bob@my-lab.example.org-\n", "bob@my-lab.example.org"),  # the inner hyphen stays
        ("bob@example.com.--", "bob@example.com"),
        (
            "bounce+srs=x1=ice.example@lists.ice.example",
            "bounce+srs=x1=ice.example@lists.ice.example",
        ),
    ],
)
def test_punctuation_around_an_address_is_not_part_of_it(text: str, found: str) -> None:
    assert mailaddr.addresses(text) == [found]


@pytest.mark.parametrize(
    "text",
    [
        "renée.dubois@example.fr",  # an internationalized local part: "dubois@…" is a fragment
        "josé@example.es",
        "bob@example.com_old",
        "Ask john.@example.com",  # a local part ending in a dot
        "a@b@example.com",
        "bob@localhost",
        "bob@example.c",
    ],
)
def test_fragments_and_malformed_tokens_are_no_address(text: str) -> None:
    assert mailaddr.addresses(text) == []


def test_quoted_local_parts_follow_rfc_5322() -> None:
    text = 'Account manager: "Lena M."@corvid.example; legacy: "j\\"q"@corvid.example.'
    assert mailaddr.addresses(text) == ['"Lena M."@corvid.example', '"j\\"q"@corvid.example']
    assert mailaddr.parse('"john doe"@example.com') is not None
    # the quotes are not part of the local part: quoting a dot-atom changes nothing
    assert mailaddr.same('"john.doe"@example.com', "john.doe@example.com")
    assert not mailaddr.same('"john doe"@example.com', "johndoe@example.com")
    # a quoted display name is not a local part
    assert mailaddr.addresses('"Smith, Jo" <jo@example.com>') == ["jo@example.com"]


@pytest.mark.parametrize(
    "text",
    [
        "john doe@example.com",
        "john..doe@example.com",
        ".john@example.com",
        "john.@example.com",
        "john@example.com.",
        "john@example",
        "john@-example.com",
        "a@b@example.com",
        '"unclosed@example.com',
        " john@example.com",
        "",
        "@example.com",
    ],
)
def test_parse_refuses_what_is_not_one_address(text: str) -> None:
    assert mailaddr.parse(text) is None


ATEXT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_+-", min_size=1, max_size=8)
LABEL = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)


@given(
    local=st.lists(ATEXT, min_size=1, max_size=3).map(".".join).filter(lambda s: s[0].isalnum()),
    labels=st.lists(LABEL, min_size=1, max_size=3),
    tld=st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=6),
    before=st.sampled_from(["", " ", "(", "<", "'", "mailto:", "To: ", "> "]),
    after=st.sampled_from(["", ".", ",", ")", ">", "'s", "!", "...", "\n", "--", "-"]),
)
def test_a_written_address_is_found_whole_and_round_trips(
    local: str, labels: list[str], tld: str, before: str, after: str
) -> None:
    address = f"{local}@{'.'.join(labels)}.{tld}"
    assert mailaddr.addresses(f"Mail {before}{address}{after} today") == [address]
    parsed = mailaddr.parse(address)
    assert parsed is not None and parsed.text == address
    assert mailaddr.why_absent(f"x {address} y", address[:-1]) != ""


@given(st.text(max_size=300))
def test_any_text_scans_to_well_formed_tokens(text: str) -> None:
    for token in mailaddr.scan(text):
        assert mailaddr.parse(token.text) is not None, token
        assert text[token.start : token.end] == token.text
