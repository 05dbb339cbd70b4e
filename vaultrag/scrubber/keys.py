"""Keys notes keep that carry no vendor prefix: disk and account recovery keys, wallets' private keys.

- recovery-key: a BitLocker recovery key by its shape alone (8 groups of 6 digits joined by dashes:
  nothing else is written so); and under a recovery-key label (recovery key or code, Wiederher-
  stellungsschlüssel / -code, clé / code de récupération, clave / código de recuperación, chave de
  recuperação, chiave di ripristino, återställningsnyckel, ключ / код восстановления, 回復キー, 恢复密钥, 復原金鑰,
  복구 키), then a colon, a copula or a dash, 4-12 groups of 4-8 letters and digits joined by one
  kind of separator (`1234-5678-9012-3456-7890-1234`, Apple's `ABCD-EFGH-IJKL-MNOP-QRST-UVWX-YZ12`,
  Microsoft's `ABCDE-FGH12-...`): with a digit or
  all in capitals, not filler (`XXXX-XXXX-...`), and not when the label names the key's id ("recovery
  key ID:", which BitLocker shows to find the key) or its format.
- wallet-private-key: a Bitcoin WIF key (base58; 51 characters from `5`, 52 from `K` / `L`, testnet
  `9` / `c`) or an Ethereum key (64 hex digits, with or without `0x`) under a private-key label on its
  line or alone on the line under one (private key, privkey, WIF, privater Schlüssel, clé privée,
  clave privada, chiave privata, klucz prywatny, приватный ключ, 秘密鍵, 私钥...). A digest-length hex
  string anywhere else stays a hash, as does one labelled as a digest, id or fingerprint after the
  label ("private key fingerprint (sha256): ..."); public addresses (`1...`, `bc1...`, `0x` + 40 hex)
  never fit the shapes. The values are long random runs: searched only inside the text's
  random-looking runs (`Rule.in_runs`), so text without one pays nothing. BIP-32 extended private
  keys (`xprv...`) have a prefix: `vendors.PREFIXED`.
"""
from __future__ import annotations

import re
from typing import Optional

from .judge import is_filler, looks_secret_value
from .labels import _CJK
from .rules import PRIORITY_GENERIC, add

# ---------------------------------------------------------------------------- recovery keys
BITLOCKER_GROUPS = 8
_BITLOCKER = r"(?<![\w-])(?P<s>\d{6}(?:-\d{6}){%d})(?![\w-])" % (BITLOCKER_GROUPS - 1)
_BITLOCKER_MASK = b" ".join([b"000000"] * BITLOCKER_GROUPS)  # see engine: digit "0", dash " "


def _bitlocker(m: re.Match) -> Optional[tuple]:
    digits = m.group("s").replace("-", "")
    return m.span("s") if len(set(digits)) > 1 else None  # `000000-000000-...`: filler


# Labels spelt in ASCII (each trigger is one more scan of every text: "chiave di r" only where the
# Wi-Fi rule found "chiave"), and labels with letters of their own, looked up in texts that hold one.
_ASCII_RECOVERY_LABELS = r"recovery[ \t-]?(?:key|code)|wiederherstellungscode|chiave di r(?:ipristino|ecupero)"
_RECOVERY_TRIGGERS = ("recovery", "wiederherstellungscode", "chiave di r")
_OTHER_RECOVERY_LABELS = ("wiederherstellungsschlüssel", "clé de récupération", "code de récupération",
                          "clave de recuperación", "código de recuperación", "chave de recuperação",
                          "återställningsnyckel", "ключ восстановления", "код восстановления", "回復キー",
                          "恢复密钥", "復原金鑰", "복구 키")
# Words between the label and its separator that make the value something else than the key.
_NOT_THE_KEY = frozenset("""id ids identifier kennung format length size type location file hint
    example""".split())
MAX_LABEL_GAP_WORDS = 4  # "recovery key for the work laptop:"
_GAP = r"(?P<gap>(?:[ \t]+[^\W\d_]{1,20}){0,%d}?)(?:[ \t]*\([^()\n]{1,30}\))?" % MAX_LABEL_GAP_WORDS
_SEP = (r"(?:[ \t]*[:=：][ \t]*|[ \t]+(?i:is|was|ist|lautet|est|es|é|è|är|er)[ \t]+(?::[ \t]*)?"
        r"|[ \t]+[-–—][ \t]+)(?:\*\*[ \t]*)?[\"'`]?")
_GROUPS = r"(?P<s>[A-Za-z0-9]{4,8}(?P<g>[- ])[A-Za-z0-9]{4,8}(?:(?P=g)[A-Za-z0-9]{4,8}){2,10})(?![\w-])"


def _labelled_recovery_key(m: re.Match) -> Optional[tuple]:
    if any(w.lower() in _NOT_THE_KEY for w in m.group("gap").split()):
        return None  # "recovery key ID: 4B2F...", "recovery key format is XXXX-..."
    value = m.group("s")
    if is_filler(value) or not (any(c.isdigit() for c in value) or value.replace(m.group("g"), "").isupper()):
        return None  # `XXXX-XXXX-...`, or words joined by dashes
    return m.span("s")


def _labels(labels: tuple) -> str:
    return "|".join(re.escape(label).replace(r"\ ", "[ \t]").replace(r"\-", "[ \t-]?")
                    for label in sorted(labels, key=len, reverse=True))


add("recovery-key", _BITLOCKER, (), _bitlocker, needs_long=False, vendor=False, anchored=False,
    priority=PRIORITY_GENERIC, digit_masks=(_BITLOCKER_MASK,))
add("recovery-key", r"(?<!\w)(?i:%s)%s%s%s" % (_ASCII_RECOVERY_LABELS, _GAP, _SEP, _GROUPS),
    _RECOVERY_TRIGGERS, _labelled_recovery_key, needs_long=False, vendor=False, anchored=False,
    priority=PRIORITY_GENERIC, one_line=True)
add("recovery-key", r"(?<!\w)(?i:%s)%s%s%s" % (_labels(_OTHER_RECOVERY_LABELS), _GAP, _SEP, _GROUPS),
    tuple(label.lower() for label in _OTHER_RECOVERY_LABELS), _labelled_recovery_key, needs_long=False,
    vendor=False, anchored=False, priority=PRIORITY_GENERIC, non_ascii=True)

# ---------------------------------------------------------------------------- wallet private keys
_BASE58 = "1-9A-HJ-NP-Za-km-z"
_WALLET_KEY = (r"(?<![A-Za-z0-9+/=_-])(?P<s>(?:0x)?[0-9a-fA-F]{64}|[5KL9c][%s]{50,51})(?![A-Za-z0-9+/=_-])"
               % _BASE58)
WIF_LENGTHS = {"5": 51, "9": 51, "K": 52, "L": 52, "c": 52}
_WALLET_LABEL_RE = re.compile(
    r"(?i)priv(?:ate)?[ \t_-]?key|\bwif\b|privater[ \t]+schl(?:ü|ue)ssel|cl[ée][ \t]+priv[ée]e|clave[ \t]+privada"
    r"|chiave[ \t]+privata|chave[ \t]+privada|klucz[ \t]+prywatny|приватный[ \t]+ключ|закрытый[ \t]+ключ"
    r"|秘密鍵|私钥|私鑰|개인[ \t]?키")
_NOT_A_KEY_RE = re.compile(r"(?i)(?<![a-z])(?:sha\d*|md5|hash|digest|fingerprint|checksum|id|address|adresse|tx"
                           r"|txid)(?![a-z])")
LABEL_REACH = 60  # chars before the value on its line where the label is looked for


def _wallet_key(m: re.Match) -> Optional[tuple]:
    text, (a, b) = m.string, m.span("s")
    value = m.group("s")
    if value[0] in WIF_LENGTHS and not value.startswith("0x") and len(value) != WIF_LENGTHS[value[0]]:
        if not re.fullmatch(r"[0-9a-fA-F]{64}", value):
            return None  # base58 of the wrong length for its version byte
    if len(set(value.removeprefix("0x"))) < 4:
        return None  # `0x000...0`: filler
    line_start = text.rfind("\n", 0, a) + 1
    before = text[max(line_start, a - LABEL_REACH):a]
    if not before.strip(" \t-*>`\"'") and line_start:
        before = text[text.rfind("\n", 0, line_start - 1) + 1:line_start - 1][-LABEL_REACH:]  # under its label
    label = None
    for label in _WALLET_LABEL_RE.finditer(before):
        pass  # the label nearest the value
    if label is None or _NOT_A_KEY_RE.search(before, label.end()):
        return None  # no private-key label, or the value is the key's hash, id or address
    return a, b


add("wallet-private-key", _WALLET_KEY, (), _wallet_key, needs_long=False, vendor=False, anchored=False,
    priority=PRIORITY_GENERIC, in_runs=True)

# ---------------------------------------------------------------------------- TOTP / HOTP seeds
# The base32 secret an authenticator app is set up with (its QR code's `secret=`, which the
# otpauth:// rule reads): `TOTP secret: JBSW...`, `2FA setup key: 7l6p yz5g ...` (Google prints it
# lower case in groups of 4), `mfa_seed: ...`. Anyone holding it makes the codes.
MIN_OTP_SEED, MAX_OTP_SEED = 16, 128  # base32 chars: 80-bit seeds are 16, 160-bit ones 32
_OTP_LABEL = (r"(?<![\w-])(?i:[th]?otp|2fa|mfa|authenticator)[^\n:=]{0,30}?[ \t]*[:=][ \t]*"
              r"(?:\*\*[ \t]*)?[\"'`]?(?P<s>[A-Za-z2-7]{4,}(?: [A-Za-z2-7]{4,}){0,31}=*)(?![\w-])")


def _otp_seed(m: re.Match) -> Optional[tuple]:
    value = m.group("s")
    groups = value.rstrip("=").split(" ")
    seed = "".join(groups)
    letters = [c for c in seed if c.isalpha()]
    if not MIN_OTP_SEED <= len(seed) <= MAX_OTP_SEED or not any(c.isdigit() for c in seed):
        return None  # no base32 digit: words ("backup codes: see below")
    if not (all(c.isupper() for c in letters) or all(c.islower() for c in letters)) or is_filler(seed):
        return None  # base32 is one case throughout
    if len(groups) > 1 and len({len(g) for g in groups[:-1]}) > 1:
        return None  # groups of unequal length: words and numbers
    return m.span("s")


add("otp-seed", _OTP_LABEL, ("otp", "2fa", "mfa", "authenticator"), _otp_seed,
    needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC, one_line=True)

# ---------------------------------------------------------------------------- keys labelled in other languages
# `API-Schlüssel: X`, `Clé API : X`, `Clave de API: X`, `Chiave segreta = X`, `API密钥：X`, `APIキー: X`,
# `API 키: X`, `Ключ API: X`, `jeton : X`: a key or token word of another language, then at most three
# words and a colon or `=`; the value must look random (`looks_secret_value`), as under `api_key`.
_ASCII_KEY_LABELS = ("clave", "chiave", "chave", "klucz", "sleutel",  # (each one more lookup in every text)
                     # fi, hu, tr, ro, id/ms, lt, de/nl, it, pl/cs, sv, no, da, fi: key and secret words
                     "avain", "kulcs", "anahtar", "cheie", "kunci", "raktas", "geheimnis", "segreto", "sekret",
                     "hemlighet", "hemmelighet", "hemmelighed", "salaisuus")
_OTHER_KEY_LABELS = ("schlüssel", "clé", "ключ", "токен", "キー", "トークン", "密钥", "密鑰", "키",
                     # da/no, sv, cs, sk, sl/hr/sr, el, et, lv, vi, bg/ru secret, zh, ja, ko
                     "nøgle", "nøkkel", "nyckel", "klíč", "kľúč", "ključ", "κλειδί", "võti", "atslēga", "khóa",
                     "секрет", "秘钥", "シークレット", "시크릿", "titkos kulcs", "tajný klíč")
_KEY_QUALIFIERS = r"(?:[ \t-]+[^\s:：=.,;!?()\[\]{}\"'`]{1,20}){0,3}?"
_KEY_VALUE = r"""[ \t]*[:：=][ \t]*(?:\*\*[ \t]*)?(?P<q>["'`]?)(?P<s>[^\s"'`]{16,400})(?P=q)"""


def _labelled_key(m: re.Match) -> Optional[tuple]:
    a, b = m.span("s")
    while b > a and m.string[b - 1] in ".,;)":
        b -= 1
    return (a, b, "secret-assignment") if looks_secret_value(m.string[a:b]) else None


def _key_labels(labels: tuple) -> str:
    return "|".join(re.escape(label) for label in sorted(labels, key=len, reverse=True))


add("secret-assignment", r"(?<![\w-])(?:(?i:api)[ \t-]?)?(?i:%s)%s%s" % (
    _key_labels(_ASCII_KEY_LABELS), _KEY_QUALIFIERS, _KEY_VALUE), _ASCII_KEY_LABELS, _labelled_key, needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC,
    one_line=True)
# (their lines are found in the text itself: each label's case variants are its triggers)
add("secret-assignment", r"(?:(?<![\w-])(?:(?i:api)[ \t-]?)?|%s)(?i:%s)%s%s" % (
    _CJK, _key_labels(_OTHER_KEY_LABELS), _KEY_QUALIFIERS, _KEY_VALUE),
    tuple(dict.fromkeys(v for label in _OTHER_KEY_LABELS for v in (label, label.capitalize(), label.upper()))),
    _labelled_key, needs_long=False, vendor=False,
    anchored=False, priority=PRIORITY_GENERIC, non_ascii=True, one_line=True)

# ---------------------------------------------------------------------------- Azure DevOps PATs
# A classic Azure DevOps personal access token is 52 characters of lower-case base32 (`a-z2-7`) with no
# prefix (the newer 84-character ones hold `AZDO`: `vendors`): redacted under a label that names it on
# its line ("Azure DevOps PAT: X", "ADO token X", `AZURE_DEVOPS_EXT_PAT=X`, `vsts pat = X`). A Nix
# hash of that length uses another alphabet (no `e o t u`, with `0 1 8 9`).
ADO_PAT_CHARS = 52
_ADO_PAT = r"(?<![A-Za-z0-9+_-])(?P<s>[a-z2-7]{%d}|[A-Z2-7]{%d})(?![A-Za-z0-9+/=_-])" % (ADO_PAT_CHARS, ADO_PAT_CHARS)
_ADO_LABEL_RE = re.compile(r"(?i)azure|devops|(?<![a-z])(?:ado|azdo|vsts|pat|tfs)(?![a-z])|personal[ \t_-]+access"
                           r"|token|secret|password|passwort|credential")
_ADO_HOST_RE = re.compile(r"@(?:dev\.azure\.com|[\w-]+\.visualstudio\.com)")  # `https://PAT@dev.azure.com/...`


def _ado_pat(m: re.Match) -> Optional[tuple]:
    text, (a, b) = m.string, m.span("s")
    value = m.group("s")
    if sum(c.isdigit() for c in value) < 2 or len(set(value)) < 12:
        return None  # words run together, filler
    line_start = text.rfind("\n", 0, a) + 1
    if not _ADO_LABEL_RE.search(text, max(line_start, a - LABEL_REACH), a) \
            and not _ADO_HOST_RE.match(text, b):
        return None
    return a, b


add("azure-devops-pat", _ADO_PAT, (), _ado_pat, needs_long=False, vendor=False, anchored=False,
    priority=PRIORITY_GENERIC, in_runs=True)
