"""Passwords written the way people write them in notes: in prose, and labelled in their own language.

`generic.py` finds `password: x` in every file syntax; a note also says "the wifi password is
Tr0ub4dor&3" or "пароль: Qw3rty!24", and a vault in Polish, Chinese or Russian labels its passwords
in Polish, Chinese or Russian. Two rules:
- password-prose: a password word (password, passphrase, passcode, pre-shared key, PSK), at most a
  few words, then "is" / "was" and a value that is shaped like a typed password: 6-64 characters
  with a letter and a digit or symbol, not a placeholder, path or URL, or 4+ digits ("my password
  is 123456": digit runs are the commonest passwords) not followed by a unit. "The password is
  stored in 1Password", "the password policy is strict" and "the password is 8 characters" stay.
- password-label: a password label of another language (mot de passe, contraseña, senha, Kennwort,
  hasło, heslo, wachtwoord, lösenord, salasana, şifre, parolă, пароль, 密码, パスワード, 비밀번호,
  סיסמה, كلمة المرور, รหัสผ่าน, mật khẩu...) then `:` / `：` / `=` (or 是 / は / 는) and a value in
  printable ASCII (a label followed by words of its own script is prose: "пароль: в менеджере").
  Labels with a non-ASCII letter are looked up (str.find) only in texts that hold a non-ASCII
  character (`Rule.non_ascii`), and their regex runs only where one is found.
"""
from __future__ import annotations

import re
from typing import Optional

from .judge import (MIN_NUMERIC_PASSWORD, _CAMEL_WORDS_RE, is_placeholder, key_kind, numeric_password,
                    stands_in_for_password)
from .rules import PRIORITY_GENERIC, add

MIN_PROSE_PASSWORD = 6   # chars; "is 8+" or "is abc1" in prose is a rule, not a password
MAX_PROSE_GAP = 40       # chars between the password word and its "is" ("for the guest network")
_SENTENCE_END = ".,;:)]}»”’"  # not "!" or "?": typed into passwords as often as they end a sentence
# Words after the password word that make it something else than the password itself.
_ABOUT_WORDS = frozenset("""policy policies length hint hints reset resets manager managers rule rules
requirement requirements field fields prompt prompts strength hash hashes expiry expiration change
changes protected protection option options setting settings file files""".split())

_PROSE = (r"\b(?i:(?:wi-?fi |admin |root |user |guest |master |vpn |router |)(?:password|passwd|passphrase"
          r"|passcode|pre-shared key|psk|pw(?!\w)))(?P<gap>[^\n.;:=\"'`]{0,%d}?)[ \t]+(?i:is|was)[ \t]+"
          r"[\"'`«“‘]?(?P<s>[^\s\"'`«»“”‘’]{%d,64})" % (MAX_PROSE_GAP, MIN_NUMERIC_PASSWORD))

_ASCII_LABELS = ("mot de passe", "contrasena", "senha", "kennwort", "wachtwoord", "salasana", "passord",
                 "adgangskode", "heslo", "haslo", "lozinka", "geslo", "jelszo", "sifre", "losenord",
                 "mat khau")
_OTHER_LABELS = ("contraseña", "hasło", "lösenord", "jelszó", "şifre", "parolă", "mật khẩu",
                 "пароль", "парола", "лозинка", "гасло", "κωδικός πρόσβασης", "κωδικός", "סיסמה",
                 "كلمة المرور", "كلمة السر", "رمز عبور", "गुप्तशब्द", "पासवर्ड", "รหัสผ่าน",
                 "密码", "密碼", "口令", "パスワード", "暗証番号", "비밀번호", "암호")
# Up to three short words may qualify the label before its colon ("пароль от роутера:", "mot de
# passe du wifi :"); a particle (是, は, 는) only right after it ("비밀번호는", not "...식별하는").
_QUALIFIERS = r"(?:[ \t]+[^\s:：=.,;!?()\[\]{}\"'`]{1,20}){0,3}?"
_SEP = r"(?:%s[ \t]*[:：=]|[ \t]*(?:是|为|為|は|는|은))[ \t]*" % _QUALIFIERS
# A dash or a copula ("mot de passe du routeur est X", "Passwort lautet X", "пароль — X",
# "admin password (basic auth): X") is prose: the value must then look typed (`_typed_password`).
_COPULAS = "est|ist|lautet|es|é|è|is|jest|to|je|är|er|on|este|là|adalah|είναι|это"
_PROSE_SEP = r"(?P<qual>%s)[ \t]+(?P<cop>[-–—]|(?i:%s))[ \t]+" % (_QUALIFIERS, _COPULAS)
# Under a copula, the words that name a password in languages whose colon form generic.py reads.
_PROSE_LABELS = _ASCII_LABELS + ("password", "passwort", "parola")
_ENGLISH_SEP = r"(?:[ \t]*\((?P<cop>[^()\n]{1,40})\)[ \t]*[:=]|[ \t]+(?P<cop2>[-–—]))[ \t]+"
# The value: quoted, or a run of printable ASCII (a password typed with `&`, `;` or `,` in it too).
_LABEL_VALUE = r"""(?:(?P<q>["'`])(?P<s>[!-~ ]{1,200}?)(?P=q)|(?P<s2>[!#-&(-_a-~]{4,200}))"""


# Words after a number that make it a quantity, not a password ("the password is 1000 days old").
_UNITS = frozenset("""characters character chars char digits digit letters symbols bytes bits days day
    hours minutes seconds weeks months years times rounds iterations zeichen stellen tage jahre caractères
    chiffres jours caracteres dígitos días""".split())
_NEXT_WORD_RE = re.compile(r"[ \t]+([^\W\d_]+)")
_NOT_VALUES = ("http", "www.", "/", "~", "./", "$", "%", "<", "{", "[")


def _typed_password(value: str) -> bool:
    """A value a person typed as a password: a letter and a digit or symbol, or 4+ digits (`4711`,
    `123456`: not one repeated digit); not a placeholder."""
    if numeric_password(value):
        return True
    if is_placeholder(value) or value.startswith(_NOT_VALUES):
        return False
    letters = any(c.isalpha() for c in value)
    others = any(c.isdigit() or not c.isalnum() for c in value)
    return letters and others and not re.fullmatch(r"\d+(?:[.,:/-]\d+)*[a-zA-Z]{0,3}", value)


def _typed_in_prose(value: str) -> bool:
    """A value prose gives as a password ("is X", "lautet X", "- X"): long enough and typed, or
    digits (`4711`)."""
    return numeric_password(value) or (len(value) >= MIN_PROSE_PASSWORD and _typed_password(value))


def _a_quantity(value: str, text: str, b: int) -> bool:
    """`value` (ending at text[b]) is a number followed by a unit: "is 12345678 characters", "ist 2024 Tage"."""
    if not value.isdigit():
        return False
    m = _NEXT_WORD_RE.match(text, b)
    return bool(m) and m.group(1).lower() in _UNITS


def _without_sentence_end(text: str, a: int, b: int) -> tuple[int, int]:
    """The span (a, b) without the sentence's own full stop or closing bracket after the value."""
    while b > a and text[b - 1] in _SENTENCE_END:
        b -= 1
    return a, b


def _a_variable_name(value: str) -> bool:
    """`DB_PASSWORD`, `apiKey`, `myPwd`: a name a label points at, not a password. Its key word must
    stand among word-like parts: most of its letters in runs of 3+ (a random `I9PwRq9tWH4S` holds
    "Pw" by chance, in parts of one or two letters)."""
    if not key_kind(value):
        return False
    parts = [p for p in _CAMEL_WORDS_RE.findall(value) if not p.isdigit()]  # key_kind's own split
    letters = sum(len(p) for p in parts)
    return sum(len(p) for p in parts if len(p) >= 3) >= 0.6 * letters


def _prose(m: re.Match) -> Optional[tuple]:
    text = m.string
    a, b = _without_sentence_end(text, *m.span("s"))
    gap_words = re.findall(r"[A-Za-z]+", m.group("gap"))
    if any(w.lower() in _ABOUT_WORDS for w in gap_words[:2]):
        return None  # "the password policy is ...", "password reset is ..."
    value = text[a:b]
    if not _typed_in_prose(value) or _a_quantity(value, text, b):
        return None
    return a, b, "password-prose"


def _label(m: re.Match) -> Optional[tuple]:
    quoted = m.group("q") is not None
    a, b = m.span("s") if quoted else m.span("s2")
    text = m.string
    if not quoted:
        a, b = _without_sentence_end(text, a, b)
    value = text[a:b]
    if len(value) < 4 or stands_in_for_password(value) or _a_variable_name(value) or value.startswith(_NOT_VALUES):
        return None  # `hasło: password`, a variable's name, a path, or a marker of an earlier pass
    if not quoted and not any(c.isdigit() or not c.isalnum() for c in value) and text[b:b + 1] == " " \
            and text[b + 1:b + 2].isalpha():
        return None  # an ASCII word followed by more words: prose ("Kennwort: siehe Tresor")
    if any(g in m.re.groupindex and m.group(g) is not None for g in ("cop", "cop2")) \
            and (not _typed_in_prose(value) or _a_quantity(value, text, b)
                 or ("qual" in m.re.groupindex and m.group("qual") is not None
                     and any(w.lower() in _ABOUT_WORDS for w in m.group("qual").split()))):
        return None  # "das Passwort ist geheim", "mot de passe - voir le coffre", "password policy is X"
    return a, b, "password-label"


def _labels(labels: tuple) -> str:
    return "|".join(re.escape(label).replace(r"\ ", "[ \t]") for label in sorted(labels, key=len, reverse=True))


add("password-prose", _PROSE, ["password", "passwd", "passphrase", "passcode", "pre-shared", "psk", "pw"], _prose,
    needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC, one_line=True)
add("password-label", r"\b(?i:%s)%s%s" % (_labels(_ASCII_LABELS), _SEP, _LABEL_VALUE), _ASCII_LABELS, _label,
    needs_long=False, vendor=False, anchored=True, priority=PRIORITY_GENERIC, line_needs=":=")
add("password-label", r"\b(?i:%s)%s%s" % (_labels(_PROSE_LABELS), _PROSE_SEP, _LABEL_VALUE), _PROSE_LABELS,
    _label, needs_long=False, vendor=False, anchored=True, priority=PRIORITY_GENERIC)
add("password-label", r"\b(?i:(?:wi-?fi |admin |root |user |guest |master |vpn |router |)(?:password|passwd"
    r"|passphrase|passcode))%s%s" % (_ENGLISH_SEP, _LABEL_VALUE), ["password", "passwd", "passphrase", "passcode"],
    _label, needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC, one_line=True)
add("password-label", r"(?<!\w)(?i:%s)(?:%s|%s)%s" % (_labels(_OTHER_LABELS), _SEP, _PROSE_SEP, _LABEL_VALUE),
    tuple(dict.fromkeys(label.lower() for label in _OTHER_LABELS)), _label,
    needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC, non_ascii=True)
