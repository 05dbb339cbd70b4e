"""Secrets made only of digits: PINs, PUKs, door and safe codes, payment cards and their CVV.

A bare number is never a secret ("pin 13", "code 404", "exit code 1", port 8080, issue 4711, line
4711): a number is one when a label that names a secret number stands right before it, or when it
is a payment card number printed as cards are. Four rules:
- pin-code: a PIN word (PIN, PUK, PIN-Code, PIN-Nummer, Handy-PIN, pincode, PIN-kod, PIN-koodi,
  code PIN, kod PIN, ПИН-код), a code word made a lock's code by its qualifier (door / gate / alarm
  / safe / access / keypad code, Türcode, Zugangscode, digicode, code d'accès, código de acceso), or
  a lock's combination or combo, then `:` / `=` / a copula (is, ist, lautet, est, es, é, je, är...) /
  a dash / a space, then 4-10 digits (a combination: 2-5 groups, `12-34-56`), or 4-10 single digits
  spaced ("the alarm code is 1 9 8 4", after a colon, a copula or a dash, not a bare space: "pins
  1 2 3 4" are pins). A few words may stand
  between the label and a colon or copula ("the PIN for the Visa card is 4711"), none with a digit
  and none that makes it something else than the code ("pin count is 1024"). Electronics pins are
  1-3 digits ("pin 13", "PIN 4 is ground"); a number followed by `.5`, `:80`, `/2` or a letter is a
  version, a time, a ratio or a quantity ("pin the version to 1.2.3").
- card-number: 13-19 digits, Luhn-valid, starting 2-6 (the issuer ranges of Visa, Mastercard, Amex,
  Discover, JCB, Diners, UnionPay, Maestro, Mir), either grouped as cards are printed (4-4-4-4,
  4-4-4-4-3, 4-6-5, 4-6-4 with one kind of separator, not inside a longer run of groups such as an
  IBAN or a hex dump) or after a card label on its line (card, Visa, Kreditkarte, carte, tarjeta,
  kort...). An ungrouped Luhn-valid run with no label (ids, timestamps: 1 in 10 pass) stays.
  Numbers have no literal to gate on: PINs and card numbers are `Rule.digit_masks` rules, searched
  only on the lines whose digit mask (see engine) holds 4 digits in a row, a card's grouping or 13
  digits in a row, so their labels cost no literal lookups.
- card-cvv: 3-4 digits after CVV / CVC / CVV2 / CVC2 / CVN (`CVV code`, `CVC-Nummer`, `CVV-код`) / card
  security code, and the card's words in other languages (Kartenprüfnummer, Sicherheitscode,
  cryptogramme visuel, código de seguridad / segurança, codice di sicurezza, kod bezpieczeństwa,
  säkerhetskod, код безопасности); "Prüfziffer" / "Prüfnummer" (an ISBN's and an
  IBAN's check digits too) only with a card word or a card number on its line or the line above.
- social-security-number: a US SSN (`123-45-6789`, `078051120`) under its label (SSN, SS#, social
  security number) that the SSA could issue (not area 000 / 666 / 9xx, group 00, serial 0000). An
  SSN is an authenticator and is masked; an IBAN is handed out to be paid, and is left alone.
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
    hälytyskoodi safecode kluiscode lockercode tresorkode tresorkod kassaskåpskod""".split())
_CODE_QUALIFIERS = frozenset("""pin puk door gate garage alarm safe lock locker padlock access entry
    entrance keypad unlock building house front security lockbox""".split())
_LOCK_WORDS = frozenset("""safe lock locker padlock vault lockbox bike gun tresor schloss safes coffre
    cadenas caja fuerte cofre lucchetto cassaforte kluis""".split())
# Words before a code word that make it a machine's code whatever lock follows ("error code for
# the door sensor is 4040").
_NOT_LOCK_CODES = frozenset("""error exit status return response http result fault event area zip postal
    country promo discount coupon product reason""".split())
# Words between the label and its separator that make the number something else than the code.
_ABOUT_WORDS = frozenset("""count counts length size pitch spacing mode state header headers layout
    diagram number numbers value values index policy attempts retries tries digits limit changes
    reset expires expiry entry entries version versions mapping assignment out voltage current
    frequency""".split())

# Labels of other scripts (case variants spelt out: their lines are found in the text itself) carry
# their qualifier (код доступа, código de acceso): taken as they are.
_PIN_LABEL = r"(?P<label>(?i:pin|puk|code|kod|kode|geheimzahl|geheimnummer))"
_OTHER_LABEL = (r"(?P<label>ПИН|[Пп]ин|[Кк]од[ \t]+(?:доступа|от[ \t]+[^\W\d_]{1,12})"
                r"|[Cc]ódigo[ \t]+(?:PIN|pin|de[ \t]+acceso|de[ \t]+acesso|de[ \t]+seguridad|de[ \t]+la[ \t]+puerta))")
# A combination is matched from its "ombina": one literal for combination, Kombination, combinaison.
_COMBINATION = r"(?P<label>(?i:ombination|ombinaison|ombinación|ombo))"  # "combo" too: "the safe combo is"
_PIN_SUFFIX = (r"(?P<suffix>(?i:s|-?(?:code|kod|kode|koodi|kood|kód|koda|kodas|kods|kodu|kodi|nummer|number|numero"
               r"|número|код|кодът|κωδικός)|[ \t](?:code|kod|kood|kód|koda|kodas|kods|kodu|kodi|number|nummer|numero|número"
               r"|nr\.?|no\.?)|码|碼|コード|番号|번호|코드)?)")
_PIN_POST = (r"(?P<post>[ \t]+(?i:pin|puk|secret|confidentiel|d['’]acc[eè]s|de[ \t]+acceso|de[ \t]+acesso"
             r"|di[ \t]+accesso|dost[eę]pu|de[ \t]+seguridad|di[ \t]+sicurezza|de[ \t]+la[ \t]+porte"
             r"|du[ \t]+coffre(?:-fort)?|du[ \t]+cadenas|de[ \t]+la[ \t]+caja(?:[ \t]+fuerte)?|del[ \t]+candado"
             r"|della[ \t]+cassaforte|del[ \t]+lucchetto|do[ \t]+cofre|van[ \t]+de[ \t]+kluis|vom[ \t]+tresor"
             r"|des[ \t]+tresors|f(?:ü|ue)r[ \t]+den[ \t]+tresor))?")
# Words, then perhaps a parenthesis ("PIN (Visa): 4711"), then the closing quote of a JSON key or
# the end of Markdown bold (`"pin": "4711"`, `**PIN:** 4711`).
_GAP = (r"""(?P<gap>(?:[ \t]+[^\W\d_](?:-?[^\W\d_]){0,19}){0,%d}?(?:[ \t]*\([^()\n]{1,30}\))?)"""
        r"""(?:["'`]|\*{1,2})?""" % MAX_GAP_WORDS)  # (a word may be hyphenated: "PIN der EC-Karte:")
_BOLD_END = r"(?:\*{1,2}[ \t]*)?"  # `**PIN:** 4711`
# A code read out digit by digit is written with spaces (`1 9 8 4`): 4-10 single digits.
_PIN_VALUE = _BOLD_END + r"""["'`]?(?P<s>\d{%d,%d}|\d(?: \d){%d,%d}|\d{1,3}(?:[- ]\d{1,3}){1,4})%s""" % (
    MIN_PIN, MAX_PIN, MIN_PIN - 1, MAX_PIN - 1, _END)
_SPACED_RE = re.compile(r"\d(?: \d)+")


QUALIFIER_REACH = 2  # words before a code word that may name its lock ("garage door opener code")
LOCK_REACH = 40  # characters before a combination, on its line, where its lock may be named
_LOCK_WORD_RE = re.compile(r"[^\W\d_]+")


def _words_before(text: str, i: int, n: int = QUALIFIER_REACH) -> set:
    """The n words that end just before index i (spaces and hyphens between them), lower-cased."""
    words = set()
    for _ in range(n):
        j = i
        while j > 0 and text[j - 1] in " \t-":
            j -= 1
        k = j
        while k > 0 and text[k - 1].isalpha():
            k -= 1
        if k == j:
            break
        words.add(text[k:j].lower())
        i = k
    return words


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
    gap = (m.groupdict().get("gap") or "").split()
    if gap and m.group("sep").strip() == "":
        return None  # "pin of the chip 4711": words, then a number with no colon or copula
    if any(w.lower() in _ABOUT_WORDS for w in gap):
        return None  # "pin count is 1024", "PIN length: 6"
    value = m.group("s")
    grouped = not value.isdigit()
    if grouped and _SPACED_RE.fullmatch(value) and m.group("sep").strip():
        grouped = False  # "the alarm code is 1 9 8 4": digits spaced, after a colon or copula
    if label in ("pin", "puk", "пин"):
        if head != a:
            return None  # spin, mapping, ledPin
    elif label.startswith(("ombina", "ombo")):
        line = text[text.rfind("\n", 0, head) + 1:head]  # a lock named earlier on the line: "Locker 42, combination 3-17-29"
        named = _words_before(text, head) | {w.lower() for w in gap} | set(_LOCK_WORD_RE.findall(line[-LOCK_REACH:].lower()))
        if head != a - 1 or text[head] not in "cCkK" or not named & _LOCK_WORDS:
            return None  # "a linear combination is 12-34": no lock named
        return m.span("s")
    elif label.startswith(("код", "código")):
        if head != a:
            return None  # штрихкод
    elif label in ("geheimzahl", "geheimnummer"):
        if head != a:
            return None
    elif head != a:  # Türcode, passcode; not barcode, opcode, unicode, exitcode
        if word not in _CODE_COMPOUNDS:
            return None
    elif not (m.groupdict().get("post") or _words_before(text, a) & _CODE_QUALIFIERS
              or (m.group("sep").strip() and {w.lower() for w in gap} & _CODE_QUALIFIERS
                  and not _words_before(text, a) & _NOT_LOCK_CODES)):
        return None  # code 404, exit code 1, error code 0x80070005, area code 0711 (the code *for
                     # the gate* is, after a colon or a copula)
    return None if grouped else m.span("s")


# First: "card security code 123" is the card's, though a code word with a qualifier too.
_CVV_SEP = r"(?:[ \t]*(?:\([^()\n]{1,30}\)[ \t]*)?[:=：#][ \t]*|[ \t]+(?:(?i:is|ist|lautet|est|es|é|è|jest|är)[ \t]+)?)"
# The card's own words in other languages: Sicherheitscode, cryptogramme (visuel), codice di
# sicurezza; those written with their own letters (Kartenprüfnummer, código de seguridad, kod
# bezpieczeństwa, säkerhetskod, код безопасности) are looked up in texts with a non-ASCII character
# (each literal is one more scan of every text).
_CVV_WORDS = r"sicherheitscode|cryptogramme(?:[ \t]+visuel)?|codice di sicurezza"
add("card-cvv", r"\b(?i:(?:cvv2?|cvc2?|cvn)(?:[ \t-]?(?:code|kod|nummer|number|код))?|(?:card[ \t]+)?security[ \t]+code"
    r"|%s)%s%s[\"'`]?(?P<s>\d{3,4})" % (_CVV_WORDS, _CVV_SEP, _BOLD_END) + _END,
    ["cv", "security code", "sicherheitscode", "cryptogramme", "di sicurezza"],
    lambda m: m.span("s"), needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC,
    one_line=True)
add("card-cvv", r"(?<!\w)(?i:kartenprüf(?:nummer|ziffer)|код[ \t]+безопасности|код[ \t]+cvv2?|код[ \t]+cvc2?"
    r"|kod[ \t]+bezpieczeństwa|säkerhetskod|código de segur(?:idad|ança))%s%s[\"'`]?(?P<s>\d{3,4})"
    % (_CVV_SEP, _BOLD_END) + _END,
    ["kartenprüf", "код безопасности", "код cv", "bezpieczeńs", "säkerhetskod", "código"],  # gates: text searched
    lambda m: m.span("s"), needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC,
    non_ascii=True)


def _cvv_by_a_card(m: re.Match) -> Optional[tuple]:
    """A check number ("Prüfziffer", "Prüfnummer": also an ISBN's or an IBAN's) is a card's CVV
    only with a card on its line or the line above: a card word or a card-shaped number."""
    text, a = m.string, m.start()
    line_start = text.rfind("\n", 0, a) + 1
    context = text[text.rfind("\n", 0, max(line_start - 1, 0)) + 1 if line_start else 0:text.find("\n", a) % (len(text) + 1)]
    if _CARD_LABEL_RE.search(context) or _CARD_IN_TEXT_RE.search(context):
        return m.span("s")
    return None


add("card-cvv", r"\b(?i:prüf(?:ziffer|nummer)(?:n)?)%s%s[\"'`]?(?P<s>\d{3,4})" % (_CVV_SEP, _BOLD_END) + _END,
    ["prüf"], _cvv_by_a_card, needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC,
    non_ascii=True)
# A PIN holds 4 digits in a row: a text without (most prose) skips the rule and its label lookups
# (see engine); "pin", "code" and their kin are in most texts.
add("pin-code", r"%s%s%s%s%s%s" % (_PIN_LABEL, _PIN_SUFFIX, _PIN_POST, _GAP, _SEP, _PIN_VALUE),
    ["pin", "puk", "code", "kod", "geheim"], _pin, needs_long=False, vendor=False,
    anchored=True, priority=PRIORITY_GENERIC, line_needs="0123456789", digit_masks=(b"0000", b"0 0 0 0"))
add("pin-code", r"%s%s%s%s" % (_OTHER_LABEL, _PIN_SUFFIX, _SEP, _PIN_VALUE),
    ["пин", "Пин", "ПИН", "код", "Код", "código", "Código"], _pin, needs_long=False, vendor=False,
    anchored=False, priority=PRIORITY_GENERIC, non_ascii=True, one_line=True)
add("pin-code", r"%s%s%s%s" % (_COMBINATION, _GAP, _SEP, _PIN_VALUE), ["ombina", "ombo"], _pin, needs_long=False,
    vendor=False, anchored=False, priority=PRIORITY_GENERIC, one_line=True)


# ---------------------------------------------------------------------------- US social security numbers
# An SSN is used as an authenticator (banks, payroll, the IRS ask for it to prove who you are): under
# its label it is masked. An IBAN is not: it is handed out to receive payments, and stays.
_SSN = (r"\b(?P<label>(?i:ssn|ss#|social[ \t]+security(?:[ \t]+(?:number|no\.?|nr\.?|num\.?))?))(?:[ \t]*#)?"
        r"%s%s%s[\"'`]?(?P<s>\d{3}(?P<g>[- ]?)\d{2}(?P=g)\d{4})%s" % (_GAP, _SEP, _BOLD_END, _END))


def _ssn(m: re.Match) -> Optional[tuple]:
    """A number the SSA could issue: area not 000, 666 or 9xx, group not 00, serial not 0000."""
    gap = (m.group("gap") or "").split()
    if gap and m.group("sep").strip() == "" or any(w.lower() in _ABOUT_WORDS for w in gap):
        return None  # "SSN of the holder 123..." (no colon), "SSN length is 9"
    digits = m.group("s").replace("-", "").replace(" ", "")
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    if area in ("000", "666") or area[0] == "9" or group == "00" or serial == "0000":
        return None
    return m.span("s")


add("social-security-number", _SSN, ["ssn", "ss#", "social security"], _ssn, needs_long=False, vendor=False,
    anchored=True, priority=PRIORITY_GENERIC, line_needs="0123456789", digit_masks=(b"0000",))


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
# Ungrouped, a card label must stand on its line before the number: a word of a card (glued into
# compounds too: Kreditkarte, creditcard, Bankkarte) or a network's name.
_CARD_LABEL_RE = re.compile(r"(?i)card|kart|cart|kaart|kort|tarjeta|visa|master|amex|maestro|discover|diners"
                            r"|\bjcb\b|unionpay|\bcc\b|карт|信用卡|卡号|カード|카드")
_UNGROUPED = r"(?<![\w.,/+-])(?P<s>[2-6]\d{%d,%d})(?![\w]|[ -]\d|[.,/]\d)" % (CARD_DIGITS[0] - 1, CARD_DIGITS[1] - 1)
_CARD_IN_TEXT_RE = re.compile(r"(?<!\d)[2-6]\d{3}(?:[ -]?\d{4}){3}(?!\d)|\[REDACTED:card-number\]")


def _labelled_card(m: re.Match) -> Optional[tuple]:
    text, a = m.string, m.start("s")
    line_start = text.rfind("\n", 0, a) + 1
    if not _CARD_LABEL_RE.search(text, max(line_start, a - CARD_LABEL_REACH), a):
        return None  # an id, a timestamp, an order number: 1 in 10 runs of digits pass Luhn
    return _card_span(text, *m.span("s"))


_CARD_MASKS = (b"0000 0000 0000 0000", b"0000 000000 0000")  # 4-4-4-4(-3), 4-6-4/5
add("card-number", _GROUPED, (), _card, needs_long=False, vendor=False, anchored=False,
    priority=PRIORITY_GENERIC, digit_masks=_CARD_MASKS)
add("card-number", _UNGROUPED, (), _labelled_card, needs_long=False, vendor=False, anchored=False,
    priority=PRIORITY_GENERIC, digit_masks=(b"0" * CARD_DIGITS[0],))


# ---------------------------------------------------------------------------- a lock named first
# The lock itself as the label, perhaps with its code word glued on or after it: "Safe: 10-64-49",
# "Safe code 48-21-93", "Tresor-Code 4821", "Safecode 4821", "safe combination L10-R64-L49",
# "Locker combo 12, 34, 56", "Code du coffre : 4821" reads the other way (`_PIN_POST`). A combination
# dial's numbers are 2-6 groups of 1-3 digits (turns may be marked L / R), a keypad's 4-10 digits.
# With no code word, only a colon, `=`, a copula or a dash separates ("Safe: 4821"; not "safe 2024").
_LOCKS = (r"safe|tresor|coffre(?:-fort)?|kluis|lockbox|lock[ \t-]?box|padlock|locker|schlie(?:ß|ss)fach"
          r"|cassaforte|caja[ \t]+fuerte|cofre|vorhängeschloss|vorhaengeschloss|lucchetto|cadenas|candado"
          r"|hangslot|kassaskåp|pengeskab|gun[ \t]+safe|wall[ \t]+safe"
          # a lock named by what it locks ("Bike lock: 5182", "phone lock code 1234"), a keypad or an
          # opener ("Door keypad 2468#", "Garage opener 8 4 1 7": a code is typed into it, so no colon
          # is needed: _TYPED_INTO); "lock" and "opener" need the thing they lock before them
          r"|key[ \t-]?pad|lock|opener")
_TYPED_INTO = ("pad", "opener")
_LOCKED_THINGS = frozenset("""bike bicycle cable chain door gate shed mailbox letterbox luggage suitcase garage
    combination front phone screen locker gym""".split())
_LOCK_CODE_WORDS = (r"code|kod|kode|koodi|pin|combination|combo|kombination|combinaison|combinación|combinazione"
                    r"|combinação|combinatie|kombinasjon|zahlencode|zahlenkombination|nummer|number|numbers")
_COMBO_VALUE = (r"(?P<s>\d{%d,%d}|[LRlr]?\d{1,3}(?:(?:[ \t]*[-,/][ \t]*|[ \t]+)[LRlr]?\d{1,3}){1,5}|\d(?: \d){%d,%d})"
                % (MIN_PIN, MAX_PIN, MIN_PIN - 1, MAX_PIN - 1))
_LOCK_LABEL = (r"(?<![\w-])(?P<label>(?i:%s))(?P<word>(?i:[ \t-]?(?:%s)s?)|)(?:[ \t]*\([^()\n]{1,30}\))?"
               r"(?P<sep>[ \t]*[:=：][ \t]*|[ \t]+(?i:%s)(?:[ \t]*:)?[ \t]+|[ \t]+[-–—][ \t]+|[ \t]+)%s%s"
               % (_LOCKS, _LOCK_CODE_WORDS, _COPULAS, _BOLD_END, _COMBO_VALUE.replace("(?P<s>", "[\"'`]?(?P<s>", 1)))
# Words after a number that make it a quantity ("Safe: 2-3 days", "safe 10 - 20 kg").
_QUANTITY_WORDS = frozenset("""days day hours hour minutes min weeks months years times items people pages kg g lb
    lbs m cm mm km ft in inch inches percent % mb gb tb ms seconds s steps
    model models edition version series review remote remotes""".split())  # (a product: "opener 2024 model")
_NEXT_WORD_RE = re.compile(r"[ \t]*([^\W\d]+|%)")


def _lock_code(m: re.Match) -> Optional[tuple]:
    text, (a, b) = m.string, m.span("s")
    value, sep, word = m.group("s"), m.group("sep").strip(), m.group("word").strip(" \t-").lower()
    label = m.group("label").lower()
    if label in ("lock", "opener") and not (word and label == "lock") and not _words_before(text, m.start()) & _LOCKED_THINGS:
        return None  # "Lock: 30", "opener 2": what it locks is not named ("lock code 1234" is a code)
    groups = re.findall(r"\d+", value)
    digits = sum(len(g) for g in groups)
    if not sep and not word and not (label.endswith(_TYPED_INTO) and digits >= MIN_PIN):
        return None  # "safe 2024", "locker 12": no code word, no colon (a keypad's 4+ digits are its code)
    nxt = _NEXT_WORD_RE.match(text, b)
    if nxt and nxt.group(1).lower() in _QUANTITY_WORDS:
        return None
    if b < len(text) and (text[b].isalnum() or text[b] in "%°" or text[b:b + 2] in (".5",)):
        return None
    if re.fullmatch(r"[0-9]+(?:[.,][0-9]+)?", value) and not value.isdigit():
        return None
    if len(groups) == 1:
        return (a, b) if MIN_PIN <= digits <= MAX_PIN else None
    # several groups: a dial's numbers (3+ groups, or 2 under a code word), not a range ("10-20")
    if len(groups) < (2 if word else 3) or digits < 3:
        return None
    if len(groups) == 2 and "," not in value and not word:
        return None
    return a, b


add("pin-code", _LOCK_LABEL, ["safe", "tresor", "coffre", "kluis", "lock", "keypad", "key pad", "key-pad", "opener", "schlie", "cassaforte", "caja",
                              "cofre", "vorh", "lucchetto", "cadenas", "candado", "hangslot", "kass", "pengeskab", "gun",
                              "wall"],
    _lock_code, needs_long=False, vendor=False, anchored=True, priority=PRIORITY_GENERIC, line_needs="0123456789")
