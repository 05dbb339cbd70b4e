"""Typing like a person: typos in words the vault lacks, alias names inside a question, and a
partial name match that does not override BM25 and vectors agreeing. Real index, real model."""
from __future__ import annotations

import random

import pytest

from conftest import write_notes
from vaultrag.indexer import reindex
from vaultrag.retrieve import search
from vaultrag.retrieve.channels import build_fts_query
from vaultrag.store import Store, Term
from vaultrag.store.sqlite import fts
from vaultrag.store.sqlite.vocab import _osa_distance, _within_one

NET = {
    "ARP.md": """
        ---
        aliases: [Address Resolution Protocol]
        ---
        # ARP

        The Address Resolution Protocol maps an IPv4 address to a MAC address on the local network. A host
        broadcasts an ARP request asking who has a given IP address; the owner replies with its MAC address,
        and the answer is cached in the ARP table for a few minutes.

        ## Gratuitous ARP

        A host announces its own IP-to-MAC mapping without being asked, for example after a failover.
        """,
    "MAC address.md": """
        ---
        aliases: [hardware address]
        ---
        # MAC address

        A MAC address is the 48-bit hardware address of a network interface, written as six pairs of hex
        digits. The first three bytes identify the vendor.
        """,
    "Kerberos.md": """
        # Kerberos

        Kerberos is a network authentication protocol that uses tickets issued by a key distribution center.
        A client proves its identity once and receives a ticket-granting ticket for later services.
        """,
    "DHCP.md": """
        # DHCP

        The Dynamic Host Configuration Protocol hands out IP addresses. Each address comes with a lease time;
        the client renews the lease at half of the lease time and rebinds at 87.5 percent.
        """,
    "WPA3.md": """
        ---
        aliases: [Dragonfly Handshake, SAE]
        ---
        # WPA3

        WPA3 replaces the pre-shared key exchange with Simultaneous Authentication of Equals, which resists
        offline dictionary attacks on the password.
        """,
    "Printer setup.md": """
        # Printer setup

        Print a test page after installing the driver. If the test page fails, check the USB cable.
        """,
    "Snippets.md": """
        # Snippets

        Call `parse_cfg2` before `load_kerberos_keytab`; the flag is --kerberos-realm.
        """,
}


@pytest.fixture
def net(tmp_path, cfg_for):
    cfg = cfg_for(write_notes(tmp_path / "net", NET))
    reindex(cfg)
    return cfg


def _naive_osa(a: str, b: str) -> int:
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


def test_banded_edit_distance_agrees_with_the_full_table():
    rng = random.Random(7)
    for _ in range(3000):
        a = "".join(rng.choice("abcd") for _ in range(rng.randint(0, 8)))
        b = "".join(rng.choice("abcd") for _ in range(rng.randint(0, 8)))
        true = _naive_osa(a, b)
        for cap in (1, 2):
            assert _osa_distance(a, b, cap) == min(true, cap + 1), (a, b, cap)
        assert _within_one(a, b) == (true <= 1), (a, b)


def test_the_index_stems_and_finds_near_terms(net):
    with Store(net.db_path(), readonly=True) as s:
        stems = s.stem(["kerberose", "authentification", "leese"])
        assert stems == {"kerberose": "kerberos", "authentification": "authentif", "leese": "lees"}
        assert [t for t, _, _ in s.near_terms("kerberos", 1, 3)] == ["kerbero"]
        assert ("authent", 2) in [(t, d) for t, d, _ in s.near_terms("authentif", 2, 3)]
        assert [t for t, _, _ in s.near_terms("lees", 1, 3)] == ["leas"]


@pytest.mark.parametrize("query,note", [
    ("Kerberose authentification protocol", "Kerberos.md"),
    ("dhcp leese time", "DHCP.md"),
    ("the adress resolution protocl", "ARP.md"),
])
def test_typos_find_the_note(net, query, note):
    ans = search(query, net)
    assert ans.status == "ok" and ans.hits[0].path == note
    assert ans.evidence["term_coverage"] >= 0.5, "the corrected word counts (half), the others whole"


def test_known_words_and_identifiers_stay_exact(net):
    with Store(net.db_path(), readonly=True) as s:
        exact = build_fts_query("kerberos lease", s)
        assert exact.terms == (Term("kerberos"), Term("lease"))
        ident = build_fts_query("parse_cfg3 kerberos5 --kerberos-reelm", s)
        assert not any(t.alternatives for t in ident.terms if "cfg" in t.text or "kerberos5" in t.text)
        fixed = build_fts_query("kerberose", s)
        assert fixed.terms[0].text == "kerberose" and fixed.terms[0].alternatives[0] == "kerbero"
        assert fts.expression(fixed.terms[0]).startswith('("kerberose" OR "kerbero"*')


def test_an_alias_inside_a_question_is_evidence(net):
    ans = search("what is the dragonfly handshake", net)
    assert ans.status == "ok" and ans.hits[0].path == "WPA3.md"
    assert ans.evidence["named"] is True and ans.evidence["pinned"] is False


def test_a_partial_name_match_does_not_override_two_agreeing_channels(net):
    ans = search("how does ARP find a MAC address", net)
    assert ans.hits[0].path == "ARP.md"
    assert ans.hits[0].ranks["bm25"] == 1 and ans.hits[0].ranks["vec"] == 1
    # an exact name still wins outright
    assert search("MAC address", net).hits[0].path == "MAC address.md"
