"""Secrets made only of digits: PINs, PUKs, door and safe codes, payment cards and their CVV.

A bare number is never a secret ("pin 13", "code 404", "exit code 1", port 8080, issue 4711, line
4711): a number is one when a label that names a secret number stands right before it, or when it
is a payment card number printed as cards are. Three rules:
- pin-code: a PIN word (PIN, PUK, PIN-Code, PIN-Nummer, Handy-PIN, pincode, PIN-kod, PIN-koodi,
  code PIN, kod PIN, ПИН-код), a code word made a lock's code by its qualifier (door / gate / alarm
  / safe / access / keypad code, Türcode, Zugangscode, digicode, code d'accès, código de acceso), or
  a lock's combination, then `:` / `=` / a copula (is, ist, lautet, est, es, é, je, är...) / a dash
  / a space, then 4-10 digits (a combination: 2-5 groups, `12-34-56`). A few words may stand
  between the label and a colon or copula ("the PIN for the Visa card is 4711"), none with a digit
  and none that makes it something else than the code ("pin count is 1024"). Electronics pins are
  1-3 digits ("pin 13", "PIN 4 is ground"); a number followed by `.5`, `:80`, `/2` or a letter is a
  version, a time, a ratio or a quantity ("pin the version to 1.2.3").
- card-number: 13-19 digits, Luhn-valid, starting 2-6 (the issuer ranges of Visa, Mastercard, Amex,
  Discover, JCB, Diners, UnionPay, Maestro, Mir), either grouped as cards are printed (4-4-4-4,
  4-4-4-4-3, 4-6-5, 4-6-4 with one kind of separator, not inside a longer run of groups such as an
  IBAN or a hex dump) or after a card label on its line (card, Visa, Kreditkarte, carte, tarjeta,
  kort...). An ungrouped Luhn-valid run with no label (ids, timestamps: 1 in 10 pass) stays.
  Grouped runs have no literal to gate on: `Rule.digit_groups` rules run only in texts whose
  digit mask (`engine._has_digit_groups`) holds such a grouping.
- card-cvv: 3-4 digits after CVV / CVC / CVV2 / CVC2 / CVN / card security code / card
  verification code / Sicherheitscode / Kartenprüfnummer.
Values under a PIN or card label are redacted whatever they look like (`0000` and `1234` are the
commonest real PINs; a note that lists them means them).
"""
from __future__ import annotations

import re
from typing import Optional

from .rules import PRIORITY_GENERIC, add

MIN_PIN = 4        # digits; pins of a connector or a chip are 1-3 ("pin 13", "PIN 40")
MAX_PIN = 10       # ISO 9564 PINs are 4-12, PUKs 8; longer runs under "code" are ids
MAX_GAP_WORDS = 4  # words between a label and its colon or copula ("PIN for the Visa card is")
CARD_DIGITS = (13, 19)
CARD_LABEL_REACH = 40  # chars between a card label and the number on its line

# Copulas of the languages labels.py reads passwords in (not "to": "pin the year to 2024").
_COPULAS = "is|was|ist|war|lautet|lautete|est|es|era|é|è|jest|je|är|er|on|este|là|adalah|είναι|это"
_SEP = (r"(?P<sep>[ \t]*[:=：][ \t]*|[ \t]+(?P<cop>(?i:%s))(?:[ \t]*:)?[ \t]+|[ \t]+[-–—][ \t]+|[ \t]+)"
        % _COPULAS)
# What a value must not run into: more digits or letters, or a decimal / time / ratio / range part.
_END = r"(?![\w%°]|[.,:/-]\d|-)"

# A code word needs a qualifier: a compound (Türcode), the word before it (door code), or after it.
_CODE_COMPOUNDS = frozenset("""passcode pincode pinkode pinkod pinkoodi digicode türcode turcode torcode
    haustürcode haustuercode zugangscode tresorcode alarmcode entsperrcode sicherheitscode schlosscode
    deurcode toegangscode alarmkode dørkode dorkode portkod dörrkod dorrkod larmkod ovikoodi
    hälytyskoodi""".split())
_CODE_QUALIFIERS = frozenset("""pin puk door gate garage alarm safe lock locker padlock access entry
    entrance keypad unlock building house front security lockbox""".split())
_LOCK_WORDS = frozenset("""safe lock locker padlock vault lockbox bike gun tresor schloss safes coffre
    cadenas caja fuerte cofre lucchetto cassaforte kluis""".split())
# Words between the label and its separator that make the number something else than the code.
_ABOUT_WORDS = frozenset("""count counts length size pitch spacing mode state header headers layout
    diagram number numbers value values index policy attempts retries tries digits limit changes
    reset expires expiry entry entries version versions mapping assignment out voltage current
    frequency""".split())

_PIN_LABEL = (r"(?P<label>(?i:pin|puk|code|kod|koodi|kode|codice|combination|kombination|combinaison"
              r"|geheimzahl|geheimnummer))")
_PIN_SUFFIX = (r"(?P<suffix>(?i:s|-?(?:code|kod|kode|koodi|nummer|number|код)|[ \t](?:code|number|nummer"
               r"|nr\.?|no\.?)|码|碼|コード|번호|코드)?)")
_PIN_POST = (r"(?P<post>[ \t]+(?i:pin|puk|secret|confidentiel|d['’]acc[eè]s|de[ \t]+acceso|de[ \t]+acesso"
             r"|di[ \t]+accesso|dost[eę]pu|de[ \t]+seguridad|di[ \t]+sicurezza|de[ \t]+la[ \t]+porte))?")
_GAP = r"(?P<gap>(?:[ \t]+[^\W\d_]{1,20}){0,%d}?)" % MAX_GAP_WORDS
_PIN_VALUE = r"""["'`]?(?P<s>\d{%d,%d}|\d{1,3}(?:[- ]\d{1,3}){1,4})%s""" % (MIN_PIN, MAX_PIN, _END)


def _word_before(text: str, i: int) -> str:
    """The word that ends just before index i (spaces skipped), lower-cased."""
    j = i
    while j > 0 and text[j - 1] in " \t":
        j -= 1
    k = j
    while k > 0 and text[k - 1].isalpha():
        k -= 1
    return text[k:j].lower()


def _pin(m: re.Match) -> Optional[tuple]:
    text, a = m.string, m.start()
    label = m.group("label").lower()
    head = a  # letters glued to the front of the label: "Tür" of Türcode, "s" of "spin"
    while head > 0 and text[head - 1].isalpha():
        head -= 1
    word = text[head:a].lower() + label
    before = text[head - 1] if head else ""
    if before.isdigit() or before == "_":
        return None  # `led_pin`, `2pin`: a name in code
    gap = m.group("gap").split()
    if gap and m.group("sep").strip() == "":
        return None  # "pin of the chip 4711": words, then a number with no colon or copula
    if any(w.lower() in _ABOUT_WORDS for w in gap):
        return None  # "pin count is 1024", "PIN length: 6"
    value = m.group("s")
    grouped = not value.isdigit()
    if label in ("pin", "puk"):
        if head != a:
            return None  # spin, mapping, ledPin
    elif label.startswith(("combination", "kombination", "combinaison")):
        if head != a or not ({_word_before(text, a)} | {w.lower() for w in gap}) & _LOCK_WORDS:
            return None  # "a linear combination is 12-34": no lock named
        return m.span("s")
    elif label in ("geheimzahl", "geheimnummer"):
        if head != a:
            return None
    elif head != a:  # Türcode, passcode; not barcode, opcode, unicode, exitcode
        if word not in _CODE_COMPOUNDS:
            return None
    elif not (m.group("post") or _word_before(text, a) in _CODE_QUALIFIERS):
        return None  # code 404, exit code 1, error code 0x80070005, area code 0711
    return None if grouped else m.span("s")


# First: "card security code 123" is the card's, though a code word with a qualifier too.
add("card-cvv", r"\b(?i:cvv2?|cvc2?|cvn|(?:card[ \t]+)?security[ \t]+code|card[ \t]+verification(?:[ \t]+"
    r"(?:code|value|number))?|sicherheitscode|kartenpr(?:ü|ue|u)fnummer|pr(?:ü|ue|u)fnummer)"
    r"(?:[ \t]*[:=：#][ \t]*|[ \t]+(?:(?i:is|ist|lautet|est|es)[ \t]+)?)[\"'`]?(?P<s>\d{3,4})" + _END,
    ["cvv", "cvc", "cvn", "security code", "card verification", "sicherheitscode", "fnummer"],
    lambda m: m.span("s"), needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC,
    one_line=True)
add("pin-code", r"%s%s%s%s%s%s" % (_PIN_LABEL, _PIN_SUFFIX, _PIN_POST, _GAP, _SEP, _PIN_VALUE),
    ["pin", "puk", "code", "kod", "koodi", "codice", "combination", "kombination", "combinaison",
     "geheimzahl", "geheimnummer"], _pin, needs_long=False, vendor=False, anchored=True,
    priority=PRIORITY_GENERIC)
# Labels in other scripts: ПИН(-код), пин, код доступа / от двери, código (de acceso), combinación
# de la caja fuerte (a combination's groups only under a combination label).
add("pin-code", r"(?<![^\W\d_])(?P<s0>(?i:пин(?:-?код)?|код[ \t]+(?:доступа|от[ \t]+[^\W\d_]{1,12})"
    r"|código[ \t]+(?:pin|de[ \t]+acceso|de[ \t]+acesso|de[ \t]+seguridad|de[ \t]+la[ \t]+puerta)"
    r"|combinación[ \t]+(?:de[ \t]+la[ \t]+caja[ \t]+fuerte|del[ \t]+candado|de[ \t]+la[ \t]+cerradura)))"
    r"%s%s" % (_SEP, _PIN_VALUE), ["пин", "код", "código", "combinación"],
    lambda m: m.span("s") if m.group("s").isdigit() or m.group("s0").lower().startswith("comb") else None,
    needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC, non_ascii=True)


# ---------------------------------------------------------------------------- payment cards
def luhn(digits: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = ord(c) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card_span(text: str, a: int, b: int) -> Optional[tuple]:
    value = text[a:b]
    digits = value.replace(" ", "").replace("-", "")
    if not CARD_DIGITS[0] <= len(digits) <= CARD_DIGITS[1]:
        return None
    if len({c for c in value if not c.isdigit()}) > 1 or not luhn(digits):
        return None  # mixed separators, or the check digit fails: not a card number
    return a, b


def _card(m: re.Match) -> Optional[tuple]:
    return _card_span(m.string, *m.span("s"))


# Printed as cards are: one separator kind, groups of 4 (16 or 19 digits), or 4-6-5 / 4-6-4 (Amex,
# Diners); not a slice of a longer run of groups (IBAN, hex dump, phone number).
_GROUPED = (r"(?<![\w.,/+-])(?<!\d[ -])(?P<s>[2-6]\d{3}(?P<g>[ -])\d{4}(?P=g)\d{4}(?P=g)\d{4}(?:(?P=g)\d{3})?"
            r"|3\d{3}(?P<g2>[ -])\d{6}(?P=g2)\d{4,5})(?![\w]|[ -]\d|[.,/]\d)")
_CARD_LABELS = ("card", "creditcard", "kreditkart", "visa", "master", "amex", "american express", "discover", "maestro", "jcb", "diners",
                "unionpay", "cart", "kart", "kaart", "kort", "tarjeta", "cc#", "cc no", "cc num")
_LABELLED = (r"\b(?i:%s)[^\n]{0,%d}?(?<![\w.,/+-])(?<!\d[ -])"
             r"(?P<s>[2-6]\d{3}(?:[ -]\d{2,7}){1,4}|[2-6]\d{12,18})(?![\w]|[ -]\d|[.,/]\d)"
             % ("|".join(_CARD_LABELS), CARD_LABEL_REACH))
add("card-number", _GROUPED, (), _card, needs_long=False, vendor=False, anchored=False,
    priority=PRIORITY_GENERIC, digit_groups=True)
add("card-number", _LABELLED, _CARD_LABELS, _card, needs_long=False, vendor=False, anchored=True,
    priority=PRIORITY_GENERIC)
