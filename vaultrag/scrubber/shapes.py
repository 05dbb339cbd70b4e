"""Credentials that notes hold without a `name = value` around them.

- table-password / table-secret: a Markdown table whose header names a password, secret or token
  column (`| service | user | password |`): each row's cell in that column, judged as the named
  value would be (typed-password shape for passwords, `looks_secret_value` for secrets). Header
  names are judged by `key_kind` ("Password policy", "Token type" are not secret columns).
- wifi-password: the `P:` field of a Wi-Fi QR string (`WIFI:S:net;T:WPA;P:secret;;`).
- seed-phrase: a wallet's recovery phrase under its label: 12, 15, 18, 21 or 24 lower-case words
  of 3-8 letters (BIP-39 words all are; prose has short words such as "of", "a", "to").
- passphrase-words: a passphrase of words under its label, to the end of the line (`GPG passphrase:
  zebra copper lantern`, `Password: correct horse battery staple`): 3-8 lower-case words of 3-12
  letters after a passphrase label, 4-8 after a password label, none of them a word that makes the
  line prose ("stored in the vault", "ask the admin", "see 1Password").
- recovery-codes: the one-time codes a service gives to print (`Recovery codes:` then `3f9a2-7c1d4`,
  `8b2e 1f90` ...): up to 16 codes of 4-12 letters and digits (a digit in each, one `-` or space
  allowed inside), on the label's line or one a line under it; a code list stops at the first line
  that is not one. Also two or more under a heading or a line of its own that names them, in a code
  block or not (GitHub's recovery codes file pasted under "## Recovery codes"), and digit codes
  separated by spaces on the label's line (`Backup codes: 83749201 19283746`).
- password-hash: crypt(3) strings (`$2y$10$...`, `$apr1$`, `$1$`, `$5$`, `$6$`, `$y$`, `$argon2id$`)
  as htpasswd, /etc/shadow and app configs hold them, also with every `$` doubled (docker-compose,
  Traefik labels), and htpasswd's `{SHA}` / LDAP's `{SSHA}` base64: crackable offline, so not
  stored either.
- credential-pair: `login: alice / Tr0ub4dor&3`, `Zugangsdaten: jdoe / Sommer2019!`, "log in with
  `admin` / `Tr0ub4dor&3`" (a credentials label, a user, a slash, a typed password).
"""
from __future__ import annotations

import re
from typing import Optional

from .judge import TYPED_SYMBOLS, is_placeholder, key_kind, looks_random, looks_secret_value, numeric_password
from .digits import MAX_PIN, MIN_PIN
from .labels import _ASCII_LABELS, _OTHER_LABELS, _typed_password
from .rules import PRIORITY_GENERIC, add, literal

SEED_WORDS = (12, 15, 18, 21, 24)
_LABEL_CELLS = frozenset(label.lower() for label in _ASCII_LABELS + _OTHER_LABELS)
_CELL_MARKUP = "*_`~ \t"
_TABLE = (r"(?m)^(?P<h>[ \t]*\|[^\n]*\|[ \t]*)\n[ \t]*\|[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*\n"
          r"(?P<body>(?:[ \t]*\|[^\n]*(?:\n|\Z))+)")


def _cells(line: str, offset: int) -> list[tuple[int, int]]:
    """(start, end) of each cell's text between unescaped pipes, markup and spaces trimmed."""
    bounds = [i for i, c in enumerate(line) if c == "|" and (i == 0 or line[i - 1] != "\\")]
    out = []
    for a, b in zip(bounds, bounds[1:]):
        a += 1
        while a < b and line[a] in _CELL_MARKUP:
            a += 1
        while b > a and line[b - 1] in _CELL_MARKUP:
            b -= 1
        out.append((offset + a, offset + b))
    return out


# Columns of secret numbers: their cells are 4-10 digits (a pinout's "Pin" column holds 1-3
# digits or names such as GPIO4, and stays).
_PIN_CELLS = frozenset("pin pins pin-code pincode passcode".split()) | {"pin code"}


def _column_kind(name: str) -> Optional[str]:
    name = name.strip(_CELL_MARKUP).lower()
    if name in _LABEL_CELLS:
        return "password"
    if name in _PIN_CELLS:
        return "pin"
    if not name or len(name) > 40 or not re.fullmatch(r"[a-z0-9 _/-]+", name):
        return None
    return key_kind(re.sub(r"[ /-]+", "_", name))


def _table(m: re.Match) -> Optional[list]:
    text = m.string
    header = _cells(m.group("h"), m.start("h"))
    kinds = {i: kind for i, (a, b) in enumerate(header) if (kind := _column_kind(text[a:b]))}
    if not kinds:
        return None
    spans, pos = [], m.start("body")
    for line in m.group("body").split("\n"):
        cells = _cells(line, pos)
        pos += len(line) + 1
        for i, kind in kinds.items():
            if i >= len(cells):
                continue
            a, b = cells[i]
            value = text[a:b]
            if (len(value) < 4 or any(c.isspace() for c in value) or value.startswith("[REDACTED")
                    or (is_placeholder(value) and not (kind == "password" and numeric_password(value)))):
                continue
            if kind == "pin":
                if value.isascii() and value.isdigit() and MIN_PIN <= len(value) <= MAX_PIN:
                    spans.append((a, b, "table-password"))
            elif looks_secret_value(value) if kind == "secret" else (_typed_password(value) or looks_random(value)):
                spans.append((a, b, "table-password" if kind == "password" else "table-secret"))
    return spans or None


def _seed(m: re.Match) -> Optional[tuple]:
    return m.span("s") if len(m.group("s").split()) in SEED_WORDS else None


def _pair(m: re.Match) -> Optional[tuple]:
    a, b = m.span("s")
    value = m.string[a:b].rstrip(".,;)")
    return (a, a + len(value)) if len(value) >= 6 and _typed_password(value) else None


# Words that make the rest of a password label's line prose rather than a passphrase of words.
_PROSE_WORDS = frozenset("""the and for are was were not you your our their its this that with from into via see
ask use used uses using stored saved kept keep held set sent shared same
as per any all every each last next new old none only also then when where which who how why what
manager vault keychain keepass bitwarden lastpass onepassword envelope safe drawer wallet
reset changed change rotated rotate expires expired expiry required needed below above here there""".split())


def _passphrase(m: re.Match) -> Optional[tuple]:
    words = m.group("s").split()
    least = 3 if "phrase" in m.group("label").lower() else 4
    if len(words) < least or any(w in _PROSE_WORDS for w in words):
        return None
    return m.span("s")


_CODE = r"(?=[A-Za-z]*(?:[- ][A-Za-z]*)?\d)[A-Za-z0-9]{2,6}[- ]?[A-Za-z0-9]{2,6}"
_ONE_CODE = r"(?<![\w.-])%s(?![\w-])" % _CODE  # compiled on first use (re's cache), as the rules are


def _codes(m: re.Match) -> Optional[list]:
    """Each code of the list after the label, as its own span."""
    a = m.start("s")
    return [(a + c.start(), a + c.end()) for c in re.finditer(_ONE_CODE, m.group("s"))] or None


def _digit_codes(m: re.Match) -> Optional[list]:
    a = m.start("s")
    return [(a + c.start(), a + c.end()) for c in re.finditer(r"\d+", m.group("s"))]


_HASH_ALPHABET = "[./A-Za-z0-9]"
_TABLE_ASCII = ["password", "passwd", "pwd", "pass", "secret", "token", "key", "credential", "pin"]
add("table-password", _TABLE, _TABLE_ASCII + sorted(t for t in _LABEL_CELLS if t.isascii()), _table,
    needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC, names=("table-secret",),
    requires=("|-", "| -", "|:", "| :"))
add("table-password", _TABLE, sorted(t for t in _LABEL_CELLS if not t.isascii()), _table, needs_long=False,
    vendor=False, anchored=False, priority=PRIORITY_GENERIC, names=("table-secret",), non_ascii=True)
add("wifi-password", r"WIFI:(?:[A-Z]:(?:\\.|[^;\\\n])*;)*?P:(?P<s>(?:\\.|[^;\\\n])+)", ["wifi:"], literal,
    needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC, one_line=True)
add("seed-phrase", r"\b(?i:(?:secret |wallet |)(?:recovery|seed|backup|mnemonic) (?:phrase|words|seed)|mnemonic|seed)"
    r"[ \t]*[:=：][ \t]*(?P<s>[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,23})\b",
    ["seed", "mnemonic", "recovery phrase", "recovery words", "backup phrase", "backup words"], _seed,
    needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC, one_line=True)
add("passphrase-words", r"\b(?P<label>(?i:(?:gpg |pgp |ssh |key |wi-?fi |master |vault |disk |)(?:pass ?phrase|password)))"
    r"[ \t]*[:=：][ \t]*(?P<s>[a-z]{3,12}(?:[ \t]+[a-z]{3,12}){2,7})[ \t]*$",
    ["passphrase", "pass phrase", "password"], _passphrase, needs_long=False, vendor=False, anchored=False,
    priority=PRIORITY_GENERIC, one_line=True)
_CODE_WORDS = r"(?i:(?:recovery|backup|emergency|scratch|one-time|2fa|mfa) codes?)"
_CODE_TRIGGERS = ["recovery code", "backup code", "emergency code", "scratch code", "one-time code", "2fa code",
                  "mfa code"]
_CODE_LIST = r"(?P<s>(?:[ \t]*(?:[-*+][ \t]+|\d{1,2}[.)][ \t]+)?`?%s`?[ \t]*(?:[,;][ \t]*|\n|$)){%%s,16})" % _CODE
add("recovery-codes", r"(?m)\b%s[^\n:]{0,30}:[ \t]*(?:\n[ \t]*){0,2}%s" % (_CODE_WORDS, _CODE_LIST % 1), _CODE_TRIGGERS,
    _codes, needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC)
# A heading or a line of its own names them, the codes follow under it (in a code block, as GitHub's
# github-recovery-codes.txt is pasted): two or more, so a line that merely mentions codes is no label.
add("recovery-codes", r"(?m)^[ \t]*(?:#{1,6}[ \t]+|\*\*|__)?(?:[\w-]+[ \t]+){0,3}%s(?:[ \t]+\([^()\n]{1,30}\))?"
    r"(?:\*\*|__)?[ \t]*\n(?:[ \t]*\n){0,2}(?:[ \t]*(?:```|~~~)[\w.-]*[ \t]*\n)?%s" % (_CODE_WORDS, _CODE_LIST % 2),
    _CODE_TRIGGERS, _codes, needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC)
# Codes of digits only, on the label's line and separated by spaces (`Backup codes: 8374 9201 1928 3746`).
add("recovery-codes", r"\b%s[^\n:]{0,30}:[ \t]*(?P<s>\d{4,10}(?:[ \t]*[ ,;][ \t]*\d{4,10}){1,15})(?![\w-])"
    % _CODE_WORDS, _CODE_TRIGGERS, _digit_codes, needs_long=False, vendor=False, anchored=False,
    priority=PRIORITY_GENERIC, one_line=True)
_CRYPT = (r"%(d)s(?:2[abxy]?%(d)s\d\d%(d)s%(a)s{53}|(?:1|apr1)%(d)s%(a)s{1,8}%(d)s%(a)s{22}"
          r"|[56]%(d)s(?:rounds=\d+%(d)s)?%(a)s{1,16}%(d)s%(a)s{43}(?:%(a)s{43})?|y%(d)s%(a)s+%(d)s%(a)s+%(d)s%(a)s{43}"
          r"|argon2(?:id|i|d)%(d)sv=\d+%(d)sm=\d+,t=\d+,p=\d+%(d)s[A-Za-z0-9+/]{11,}%(d)s[A-Za-z0-9+/]{16,})")
# Each `$` doubled is the same hash in a docker-compose file or a Traefik label (`admin:$$apr1$$...`);
# `{SHA}` + base64 is htpasswd's SHA-1 form, `{SSHA}` LDAP's salted one.
add("password-hash", r"(?<![\w$])(?:%s|%s|\{S?SHA\}[A-Za-z0-9+/]{27,}={0,2})" % (
        _CRYPT % {"a": _HASH_ALPHABET, "d": r"\$"}, _CRYPT % {"a": _HASH_ALPHABET, "d": r"\$\$"}),
    ["$2a$", "$2b$", "$2x$", "$2y$", "$1$", "$apr1$", "$5$", "$6$", "$y$", "$argon2", "sha}"], literal,
    needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC, one_line=True)
# Credentials labels: en, and the languages labels.py reads passwords in (Zugangsdaten, identifiants...).
_PAIR_LABELS = ("login", "credentials", "creds", "account", "zugangsdaten", "anmeldedaten", "logindaten",
                "login-daten", "identifiants", "credenciales", "credenziali", "credenciais", "inloggegevens",
                "inloggningsuppgifter", "dane logowania")
add("credential-pair", r"\b(?i:%s)[ \t]*[:=：][ \t]*[\w.@+-]{1,64}[ \t]* / [ \t]*"
    r"(?P<s>[!-~]{6,64})" % "|".join(_PAIR_LABELS),  # gated by the slash: labels cost no lookups
    [" / "], _pair, needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC,
    one_line=True)
add("credential-pair", r"\b(?i:log[ -]?in|sign[ -]?in|credentials?|creds|account|user(?:name)?)\b[^\n`]{0,30}"
    r"`[^`\s]{1,64}`[ \t]*/[ \t]*`(?P<s>[^`\s]{6,64})`", ["` / `", "`/`", "` /`", "`/ `"], _pair,
    needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC, one_line=True)


def _bare_pair(m: re.Match) -> Optional[tuple]:
    """`login admin / X` with no colon: the value must be typed as passwords are beyond a word and a
    number (a digit, and a symbol or a capital inside it): "login page / Settings2" stays."""
    span = _pair(m)
    if not span:
        return None
    value = m.string[span[0]:span[1]]
    if not any(c.isdigit() for c in value) or re.fullmatch(r"[A-Z]?[a-z]+\d+", value):
        return None
    if not (any(c in TYPED_SYMBOLS for c in value) or any(c.isupper() for c in value[1:])):
        return None
    return span


add("credential-pair", r"\b(?i:log[ -]?in|sign[ -]?in|credentials?|creds|account|zugang|zugangsdaten|anmeldung"
    r"|identifiants|acceso)[ \t]+(?:(?i:as|with|mit|avec|con|is|ist)[ \t]+)?`?[\w.@+-]{1,64}`?[ \t]* / [ \t]*"
    r"(?P<s>[!-~]{6,64})", [" / "], _bare_pair, needs_long=False, vendor=False, anchored=False,
    priority=PRIORITY_GENERIC, one_line=True)
