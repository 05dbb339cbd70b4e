"""Secrets made only of digits (PINs, door / safe codes, numeric passwords, payment cards, CVVs) and
credential pairs under a credentials label; and the technical numbers beside them that must stay
(electronics pins, ports, status / exit / error codes, versions, ids). Values are generated here."""
from __future__ import annotations

import random
import string

import pytest

from vaultrag.scrubber import scrub
from vaultrag.scrubber.digits import luhn

from scrub_helpers import untouched


def digits(rng: random.Random, lo: int, hi: int) -> str:
    while True:
        value = "".join(rng.choice(string.digits) for _ in range(rng.randint(lo, hi)))
        if len(set(value)) > 1:
            return value


def card(rng: random.Random, head: str, n: int) -> str:
    body = head + "".join(rng.choice(string.digits) for _ in range(n - len(head) - 1))
    return next(body + c for c in string.digits if luhn(body + c))


def redacted(text: str, secret: str, rule: str | None = None) -> bool:
    clean, findings = scrub(text)
    return secret not in clean and bool(findings) and (rule is None or rule in {f.rule for f in findings})


def test_luhn_oracle():
    # the reference: double every second digit from the right, sum the digits of each, total % 10
    rng = random.Random(3)
    for _ in range(2000):
        value = digits(rng, 12, 19)
        total = sum(int(c) if i % 2 == 0 else sum(map(int, str(int(c) * 2)))
                    for i, c in enumerate(reversed(value)))
        assert luhn(value) == (total % 10 == 0), value


PIN_TEMPLATES = [
    "my bank PIN is {v}", "PIN: {v}", "bank pin = {v}", "Card PIN: {v}", "PIN code: {v}", "Meine PIN ist {v}",
    "PIN-Nummer: {v}", "my passcode is {v}", "the door code is {v}", "Handy-PIN: {v}", "SIM PIN {v}, more",
    "PUK {v}", "the PIN for the Visa card is {v}.", "Die PIN lautet {v}", "Pincode: {v}", "PIN-kod: {v}",
    "code PIN : {v}", "le code d'accès est {v}", "kod PIN: {v}", "el PIN es {v}", "il PIN è {v}",
    "garage code - {v}", "Zugangscode {v}", "Türcode: {v}", "alarm code: {v}", "keypad code is `{v}`",
    "ПИН-код: {v}", "пин {v}", "código de acceso: {v}", "код от двери {v}", "код доступа: {v}", "PIN码：{v}", "- gate code: {v} (front)",
    "Geheimzahl: {v}", "--pin {v}", "PIN={v}", "**PIN:** {v}", "- **Türcode**: {v}", '{{"pin": "{v}"}}',
    '{{"pin": {v}}}', "PIN (Visa): {v}", "Garage door opener code: {v}",
]


@pytest.mark.parametrize("template", PIN_TEMPLATES)
def test_pin_under_its_label_is_redacted(template):
    rng = random.Random(template)
    for _ in range(5):
        value = digits(rng, 4, 8)
        assert redacted(template.format(v=value), value), (template, value, scrub(template.format(v=value)))


def test_pin_column_of_a_table():
    clean, findings = scrub("| Service | PIN |\n|---|---|\n| Bank | 4711 |\n| SIM | 0815 |\n")
    assert "4711" not in clean and "0815" not in clean and [f.rule for f in findings] == ["table-password"] * 2
    pinout = "| Pin | Name |\n|---|---|\n| 1 | GPIO4 |\n| 13 | LED |\n| 2 | 3V3 |\n"
    assert untouched(pinout)


@pytest.mark.parametrize("text", [
    "the safe combination is {a}-{b}-{c}", "Tresor Kombination: {a}-{b}-{c}", "lock combination {a} {b} {c}",
    "combination for the gun safe is {a}-{b}-{c}"])
def test_lock_combination_is_redacted(text):
    rng = random.Random(text)
    for _ in range(5):
        a, b, c = (str(rng.randint(10, 59)) for _ in range(3))
        filled = text.format(a=a, b=b, c=c)
        value = filled[filled.index(a, len(filled) - 8 - len(a)):]
        assert redacted(filled, value, "pin-code"), (filled, scrub(filled))


def test_two_pins_on_one_line():
    clean, findings = scrub("SIM PIN 1234, PUK 12345678")
    assert clean == "SIM PIN [REDACTED:pin-code], PUK [REDACTED:pin-code]"
    assert [f.rule for f in findings] == ["pin-code", "pin-code"]


@pytest.mark.parametrize("text", [
    "GPIO pin 4", "connect the LED to pin 13 on the Arduino", "pin the version to 1.2.3", "a PIN diode",
    "I pinned 3 tabs", "PIN 4 is ground", "Pin: 13", "set pin = 13", "pinMode(13, OUTPUT);", "led_pin = 2048",
    "int ledPin = 1023;", "the pin count is 1024", "pins 40", "pin to 2024.1", "pin numpy==1.26.4",
    "listen on port 8080", "the server returned code 404", "exit code 1", "error code 0x80070005",
    "status code 200", "HTTP status 500", "see issue #4711", "line 4711", "zip code 12345", "area code 0711",
    "barcode 4006381333931", "opcode 0x4711", "unicode 2603", "country code 0049",
    "code 1234", "Process finished with exit code 137", "the code is 2024 lines long",
    "a linear combination is 12-34-56", "pin 12:30", "PIN: 12/34", "pin 1234abc", "spinning 4711 times",
    "mapping 4711 entries", "kod pocztowy: 12345", "код ошибки 4711", "код 4711", "código 4711",
    "combinación 12-34-56", "пинать 4711",
])
def test_technical_numbers_stay(text):
    assert untouched(text), scrub(text)


# ---------------------------------------------------------------------------- numeric passwords
@pytest.mark.parametrize("template", [
    "my password is {v}", "the password is {v}", "Password: {v}", "password: {v}", "Passwort: {v}",
    "password = \"{v}\"", "DB_PASSWORD={v}", "Kennwort: {v}", "mot de passe : {v}", "hasło: {v}",
    "пароль: {v}", "Das Passwort lautet {v}", "the wifi password was {v} until March", "sshpass -p {v} ssh host",
    "| service | password |\n|---|---|\n| nas | {v} |",
])
def test_numeric_password_is_redacted(template):
    rng = random.Random(template)
    for value in ["123456", "12345678", "4711", "47114711"] + [digits(rng, 4, 12) for _ in range(4)]:
        text = template.format(v=value)
        assert redacted(text, value), (text, scrub(text))


@pytest.mark.parametrize("text", [
    "the password is 8 characters", "the password is 12 characters long", "Password: 0000",
    "password: 123", "the password is 1000 days old", "Das Passwort ist 8 Zeichen lang",
    "password_length: 12345", "token: 123456", "api_key = 4711",
])
def test_numbers_about_a_password_stay(text):
    assert untouched(text), scrub(text)


# ---------------------------------------------------------------------------- payment cards
@pytest.mark.parametrize("head,n,shape", [
    ("4", 16, (4, 4, 4, 4)), ("51", 16, (4, 4, 4, 4)), ("2221", 16, (4, 4, 4, 4)), ("37", 15, (4, 6, 5)),
    ("36", 14, (4, 6, 4)), ("6011", 16, (4, 4, 4, 4)), ("62", 19, (4, 4, 4, 4, 3)), ("35", 16, (4, 4, 4, 4))])
def test_grouped_card_number_is_redacted_without_a_label(head, n, shape):
    rng = random.Random(head)
    for sep in (" ", "-"):
        for _ in range(5):
            number = card(rng, head, n)
            parts, i = [], 0
            for size in shape:
                parts.append(number[i:i + size])
                i += size
            printed = sep.join(parts)
            for text in (f"paid with {printed} yesterday", f"{printed}", f"- {printed} (expires 12/27)"):
                assert redacted(text, printed, "card-number"), (text, scrub(text))


@pytest.mark.parametrize("template", [
    "credit card {v}", "Kreditkarte: {v}", "Visa {v}", "card number: {v}", "Mastercard - {v}", "carte bancaire : {v}",
    "tarjeta {v}", "cc# {v}", "Amex card ending ... full number {v}"])
def test_ungrouped_card_number_is_redacted_after_a_card_label(template):
    rng = random.Random(template)
    for _ in range(5):
        number = card(rng, rng.choice(["4", "55", "37"]), 16)
        text = template.format(v=number)
        assert redacted(text, number, "card-number"), (text, scrub(text))


def test_trial_card_lines():
    clean, _ = scrub("credit card 4111 1111 1111 1111 exp 12/27 CVV 123")
    assert clean == "credit card [REDACTED:card-number] exp 12/27 CVV [REDACTED:card-cvv]"
    clean, _ = scrub("Visa: 4539 1488 0343 6467, CVC 847")
    assert clean == "Visa: [REDACTED:card-number], CVC [REDACTED:card-cvv]"


def test_card_lookalikes_stay():
    rng = random.Random(11)
    for _ in range(200):
        number = card(rng, "4", 16)
        bad = number[:-1] + str((int(number[-1]) + 1) % 10)  # the check digit broken
        grouped_bad = " ".join(bad[i:i + 4] for i in range(0, 16, 4))
        for text in (f"paid with {grouped_bad}", f"credit card {bad}",
                     f"id {number}", f"order {number} shipped", f"ts={number}"):  # no label, no grouping
            assert untouched(text), (text, scrub(text))
    for text in ("IBAN DE89 3704 0044 0532 0130 00", "xxd: 00000010: 3132 3334 3536 3738 3930 3132 3334 3536",
                 "phone +49 4111 1111 1111 1111", "0000 0000 0000 0000", "version 4111.1111.1111.1111",
                 "1234 5678 9012 3456 7890 1234", "card 4111 1111 1111 1111 1111 1111"):
        assert untouched(text), (text, scrub(text))


@pytest.mark.parametrize("text,value", [
    ("CVV 123", "123"), ("CVC: 847", "847"), ("CVV2=0815", "0815"), ("security code 902", "902"),
    ("cvc is 708", "708")])
def test_cvv_is_redacted(text, value):
    assert redacted(text, value, "card-cvv"), scrub(text)


@pytest.mark.parametrize("text", ["CVE-2021-4711", "CVV 12", "CVV 12345", "cvc.js 1.2.3 installed", "cvv 1.234"])
def test_cvv_lookalikes_stay(text):
    assert untouched(text), scrub(text)


# ---------------------------------------------------------------------------- credential pairs
@pytest.mark.parametrize("label", ["Zugangsdaten", "Anmeldedaten", "credentials", "login", "identifiants",
                                   "credenciales", "inloggegevens"])
def test_credentials_label_pair(label):
    rng = random.Random(label)
    for _ in range(5):
        secret = "".join(rng.choice(string.ascii_letters) for _ in range(6)) + str(rng.randint(10, 9999)) + "!"
        text = f"{label}: jdoe / {secret}"
        assert redacted(text, secret, "credential-pair"), scrub(text)
        assert "jdoe" in scrub(text)[0]


@pytest.mark.parametrize("text", ["Zugangsdaten: siehe Tresor / KeePass", "credentials: read / write",
                                  "login: 2024 / 2025"])
def test_credentials_label_without_a_password_stays(text):
    assert untouched(text), scrub(text)


# ---------------------------------------------------------------------------- fast paths
def test_digit_group_gate_is_exact(monkeypatch):
    """The digit-mask gates (card numbers: the lines whose mask holds a card's grouping; PINs: texts
    whose mask holds 4 digits in a row) skip only what the rules cannot match: searching whole texts
    finds the same on texts full of digit groups, card and PIN labels."""
    from vaultrag.scrubber import engine
    rng = random.Random(5)
    texts = []
    for _ in range(400):
        parts = []
        for _ in range(rng.randint(1, 8)):
            kind = rng.random()
            if kind < 0.3:
                number = card(rng, rng.choice(["4", "51", "37", "36", "62"]), rng.choice([14, 15, 16, 19]))
                sizes = rng.choice([(4, 4, 4, 4, 3), (4, 6, 5), (4, 6, 4), (4, 4, 4, 4), (3, 4, 4, 5)])
            else:
                number = digits(rng, 8, 22)
                sizes = tuple(rng.randint(1, 6) for _ in range(6))
            sep, pieces, i = rng.choice([" ", "-", " - ", "  ", ""]), [], 0
            for size in sizes:
                if i < len(number):
                    pieces.append(number[i:i + size])
                    i += size
            parts.append(rng.choice(["", "x", "+", "id ", "(", "0 ", "card ", "Visa: ", "PIN: ", "door code "]) + sep.join(pieces) + rng.choice(["", ".", " ", "1"]))
        texts.append(rng.choice([" ", "\n", ", "]).join(parts))
    gated = [scrub(t) for t in texts]
    assert sum("[REDACTED:card-number]" in clean for clean, _ in gated) >= 10  # the test sees the rule fire

    def everywhere(text, low, mask, candidates):  # the reference: no mask, whole texts searched
        for order in engine._IN_DIGIT_MASKS:
            rule = engine._RULES[order]
            if rule.triggers:  # anchored at its triggers, wherever they are
                engine._match_rules(text, low, (order,), candidates, (None, [], frozenset()))
                continue
            for m in rule.regex().finditer(text):
                span = rule.check(m)
                if span:
                    candidates.append((span[0], -span[1], order, rule.name))
    monkeypatch.setattr(engine, "_match_digit_masks", everywhere)
    assert [scrub(t) for t in texts] == gated


@pytest.mark.parametrize("body", ["PIN: 4711\n", "the door code is 4711\n", "Visa: 4539 1488 0343 6467, CVC 847\n",
                                  "credit card 4539148803436467\n", "password: 123456\n"])
def test_digit_secrets_get_the_same_findings_inside_large_noise(body):
    from vaultrag.scrubber import engine
    noise = ("tests/test_api.py::test_pin_mapping PASSED  [ 10%] exit code 1, port 8080, pin 13\n"
             "commit 3f2a 🚀 修复 the card layout — naïve café, code 404, spinning 4711 times\n")
    alone, alone_findings = scrub(body)
    assert alone != body and alone_findings
    noise = noise * (2 + engine.SELF_GATE_MIN_CHARS // len(noise))
    mixed, findings = scrub(noise + body + noise)
    assert mixed == noise + alone + noise
    lines = noise.count("\n")
    assert [(f.rule, f.line) for f in findings] == [(f.rule, f.line + lines) for f in alone_findings]
