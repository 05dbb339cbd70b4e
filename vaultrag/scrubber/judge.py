"""Value and name judgements: is this a placeholder, is it random, does this key name a secret?

Pure functions over short strings; no regex here runs over a whole text.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from typing import Optional

MIN_RANDOM_LEN = 16      # shorter "random" strings collide with words, versions and short hashes
MIN_SHORT_RANDOM_LEN = 10  # 10-15 chars count only with all three classes and hardly any words
MIN_ENTROPY_BITS = 3.0   # bits/char; random hex of 16 chars averages ~3.4, `aaaa1111bbbb2222` 2.0
MAX_WORDINESS = 0.5      # context rules: misses 0.5% of random 20-char and 0.08% of 32-char base62
                         # values; `report_2023_q4_final`, `prod-db-credentials` score 0.55-0.9
MAX_WORDINESS_MIXED = 0.75  # a separator-free value whose letters and digits alternate often
MIN_TRANSITIONS = 0.2    # class changes per char: random a-z0-9 ~0.4, `report2023final` 0.13
MIN_SHORT_TRANSITIONS = 0.3  # 10-15 char values of one letter case must alternate with digits
MIN_DIGIT_SECRET = 16    # a bare run of digits under a secret name (Discord ids are 17-19 digits)
MIN_DISTINCT_DIGITS = 6  # random 16+ digits use 8-10 distinct ones; `1000000000000000` uses 2
MAX_WORDINESS_VENDOR = 0.8  # prefix+shape already say "token"; only reject obvious identifiers
RANDOM_PART_WORDINESS = 0.3  # stricter than MAX_WORDINESS: the value also parses as code

# ---------------------------------------------------------------------------- placeholders
_PLACEHOLDER_WORDS = ("example", "sample", "placeholder", "dummy", "fake", "your", "changeme",
                      "change_me", "redacted", "insert", "replace_me", "replaceme")
_PLACEHOLDER_VALUES = frozenset("""password passwd pass pwd secret token key apikey api_key
    credentials none null nil true false yes no on off undefined required optional string str int
    bool bytes any object secretstr empty default hidden masked ask prompt env auto test testing todo
    tbd n/a foo bar baz foobar value""".split())
# Runs anyone types as "some value": a value that is one of these alphabets' substrings
_SEQUENCES = ("0123456789abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz0123456789",
              "9876543210", "qwertyuiop", "asdfghjkl")
# Template syntax, well formed: <name>, {{ .. }}, ${VAR}/${VAR:-x}, $VAR, %VAR%, %(name)s, [name],
# (name), YAML !tags, and symmetric markers such as ^PASS^ or @TOKEN@. A literal with a broken
# brace soup (`m{{h}o)p${e]nob(...`) is a password, not a template.
_TEMPLATE_RE = re.compile(r"^<[^<>]*>$|^<[\w .|/-]+>|\{\{[^{}]*\}\}|\$\{[A-Za-z_][\w.]*(?::?[-=?+][^}]*)?\}"
                          r"|%\(\w+\)|^\$[A-Za-z_]\w*$|^\$\(\w+\)$|^%[A-Za-z_]\w*%$|^![A-Za-z]+$"
                          r"|^\{[\w .-]*\}$|^\[[\w .-]*\]$|^\([\w .-]*\)$"
                          r"|^([^\w\s])[A-Za-z_][\w.-]*\1[.,:;!?]?$")
_FILLER_RE = re.compile(r"([xX*#\u2022\u25cf])\1{3,}")
_REPEAT_RE = re.compile(r"(.)\1{7,}")
MIN_FILLER_SHARE = 0.4  # a run of one character over 40% of a value: random tokens never have one
# ENV_NAMES, METAVARS and COMBO00:COMBO01: capital words, digits only at a word's end.
_ENV_NAME_RE = re.compile(r"[A-Z][A-Z]+\d*(?:[_:./-][A-Z0-9]+)*|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def _mostly_one_char(value: str) -> bool:
    """`ghp_000000000000000000000000000000000000`: one character repeated over much of the value."""
    run = max((m.end() - m.start() for m in _REPEAT_RE.finditer(value)), default=0)
    return run >= MIN_FILLER_SHARE * len(value)


def is_filler(value: str) -> bool:
    """Template, filler or example text: never a real secret, whatever the prefix says."""
    low = value.lower()
    return (not any(c.isalnum() for c in value) or "[redacted" in low or "..." in value
            or _mostly_one_char(value)
            or "\u2026" in value or len(set(low)) == 1 or bool(_TEMPLATE_RE.search(value))
            or bool(_FILLER_RE.search(value)) or any(w in low for w in _PLACEHOLDER_WORDS))


def is_filled_shape(value: str) -> bool:
    """A token whose tail is x/X/*/# filler or one repeated character (`SKxxxx...`, `AKIAZZZZ...`):
    what vendor rules redact anyway once the prefix and length fit."""
    return _mostly_one_char(value) or bool(_FILLER_RE.search(value))


def is_sequence(value: str) -> bool:
    """`0123456789a`, `abcdef`: typed as a stand-in value."""
    low = value.lower()
    return len(low) >= 4 and any(low in s for s in _SEQUENCES)


MIN_NUMERIC_PASSWORD = 4  # digits; "password: 8" or "is 12" (characters) is a rule, `4711` a password
# Symbols a person types into a password ("Sommer2024!"): with a digit, a typed value, not a word.
TYPED_SYMBOLS = "!#$%&*+=?@^~"


def numeric_password(value: str) -> bool:
    """`4711`, `123456`, `47114711`: digits a person chose as a password (the commonest passwords are
    digit runs: `123456` is a sequence, not a stand-in, under a password name). One repeated digit
    (`0000`, `00000000`) stays filler."""
    return (value.isascii() and value.isdigit() and len(value) >= MIN_NUMERIC_PASSWORD
            and len(set(value)) > 1)


def stands_in_for_password(value: str) -> bool:
    """A placeholder where a password goes (`is_placeholder`), a digit run aside: `password:
    123456` is a weak password, not a stand-in (`numeric_password`)."""
    return is_placeholder(value) and not numeric_password(value)


def is_placeholder(value: str) -> bool:
    """A filler, or a bare name where a value would go: `none`, `string`, `DB_PASSWORD`, `TEXT`."""
    return (is_filler(value) or value.lower() in _PLACEHOLDER_VALUES or is_sequence(value)
            or bool(_ENV_NAME_RE.fullmatch(value)))


# ---------------------------------------------------------------------------- randomness
_WORDY_RE = re.compile(r"[a-z]{4,}|[A-Z][a-z]{3,}")
_WORDY_CAPS_RE = re.compile(r"[A-Z]{4,}")
_VOWEL_RE = re.compile(r"[aeiouAEIOU]")
_WORD_RE = re.compile(r"[A-Z]?[a-z]+[.,;:!?]*")
_CLUSTER_RE = re.compile(r"[^aeiouyAEIOUY]{4}")
_SEPARATORS = frozenset("_-. /:")


def entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def wordiness(value: str) -> float:
    """Share of characters in pronounceable letter runs (4+ letters, a vowel, no 4-consonant
    cluster): identifiers, slugs and file names score 0.5-1; random base62 averages ~0.05."""
    runs = _WORDY_RE.findall(value)
    if not any(c.islower() for c in value) and any(c in "_-. " for c in value):
        runs += _WORDY_CAPS_RE.findall(value)  # NAME_LIKE_THIS; base32 secrets are never separated
    return sum(len(r) for r in runs if _VOWEL_RE.search(r) and not _CLUSTER_RE.search(r)) / len(value)


def _transitions(value: str) -> float:
    """Changes between lower case, upper case and digits per character: random base62 ~0.6,
    random a-z0-9 ~0.4, `report2023final` 0.13, `getUser2AccountSettings` 0.17."""
    kinds = [c.isdigit() + 2 * c.isupper() for c in value if c.isalnum()]
    return sum(a != b for a, b in zip(kinds, kinds[1:])) / max(len(value), 1)


def looks_random(value: str, max_wordiness: float = MAX_WORDINESS) -> bool:
    """Machine-generated (key, token, hash) rather than a word, identifier, slug or sentence."""
    n = len(value)
    if n < MIN_SHORT_RANDOM_LEN or any(c.isspace() for c in value) or _WORD_RE.fullmatch(value):
        return False  # short, several words, or one natural word ("Authentifizierungsmethode.")
    lower, upper = any(c.islower() for c in value), any(c.isupper() for c in value)
    digit = any(c.isdigit() for c in value)
    symbol = any(not c.isalnum() and c not in _SEPARATORS for c in value)
    if n < MIN_RANDOM_LEN:  # 10-15 chars: `Zx9kQ2mP7wRt`, `k3j9x8m2p4q7` yes; `HelloWorld1`, `us-east-1a` no
        mixed = (lower and upper) or _transitions(value) >= MIN_SHORT_TRANSITIONS
        return digit and mixed and entropy(value) >= 3.0 and wordiness(value) <= 0.3
    if lower + upper + digit + symbol < 2 or entropy(value) < MIN_ENTROPY_BITS:
        return False
    segments = [p for p in re.split(r"[_.-]+", value) if p]
    if len(segments) >= 4 and all(p.isalpha() for p in segments):
        return False  # checking_Length-Is-checking: an identifier or slug, however mixed its case
    words = wordiness(value)
    if words <= max_wordiness:
        return True
    # Random lower-case alphanumerics (`xhoof76impb2ckmzk4tx...`) form pronounceable runs by
    # chance; their letters and digits alternate far more often than in `report2023final`.
    return (max_wordiness >= MAX_WORDINESS and words <= MAX_WORDINESS_MIXED and digit
            and not any(c in _SEPARATORS for c in value) and _transitions(value) >= MIN_TRANSITIONS)


MIN_SYMBOL_SECRET = 8    # chars of a mostly-punctuation value (`A,.:-¨@*¿?!`): typed, not a word
MIN_SYMBOL_SHARE = 0.5


def _symbol_dense(value: str) -> bool:
    """A typed password made mostly of punctuation: no words, no spaces, not one repeated mark."""
    symbols = sum(not c.isalnum() for c in value)
    return (len(value) >= MIN_SYMBOL_SECRET and symbols >= MIN_SYMBOL_SHARE * len(value)
            and not any(c.isspace() for c in value) and len(set(value)) >= len(value) // 2
            and not _LETTER_RUN_RE.search(value) and not is_filler(value)
            and not any(t in value for t in ("${", "{{", "%(", "$(")))  # `mypy|${{ hashFiles(..) }}`


_LETTER_RUN_RE = re.compile(r"[^\W\d_]{3}")  # a word inside: `mypy|${{`, not a typed password


def looks_secret_value(value: str) -> bool:
    """What a secret-named key holds: random text, a long run of digits (Discord ids, PINs), or a
    punctuation-dense typed password."""
    if _symbol_dense(value):
        return True
    if value.isdigit():
        return len(value) >= MIN_DIGIT_SECRET and len(set(value)) >= MIN_DISTINCT_DIGITS
    return looks_random(value)


# ---------------------------------------------------------------------------- key names
_PASSWORD_WORDS = frozenset("password passwd passphrase passwort passcode pwd pass pw pswd passw psk".split())
_SECRET_WORDS = frozenset("""secret secrets token tokens credential credentials creds authorization
    apikey apitoken auth authtoken accesstoken privatekey secretkey clientsecret""".split())
_KEY_WORDS = frozenset({"key", "keys"})
# "secret" misspelt or in a neighbouring language (not `secretary`, `secretion`)
_SECRET_VARIANTS = frozenset("secrete secreto secreta secretos secretas segredo geheimnis".split())
# A qualifier before "key" that makes it a key of a data structure, a public key or an id.
_NOT_SECRET_KEYS = frozenset("""primary sort foreign partition cache hash range row map dict lookup
    unique composite shard index public pub idempotency routing object group column field hot
    short primary_key natural surrogate cluster dedup dedupe s3 registry""".split())
# A word after the keyword that makes the name describe the secret rather than hold it.
_METADATA_WORDS = frozenset("""name names id ids type types url uri urls endpoint path paths file
    filename files dir location length len size count counts expiry expires expiration expired ttl
    timeout lifetime age policy policies field fields header headers param params prefix suffix env
    var variable label ref refs version format mode kind limit limits min max regex pattern provider
    store manager helper arn source enabled enable disabled required validator validation strength
    rotation reset hint prompt question input placeholder description help text message msg error
    column attribute option options config method methods scheme server host port user username
    login email index position usage used budget encoding encoder tokenizer endpoint service uses
    issuer audience scope scopes generator generation algorithm algo alg cipher lifespan refresh
    ttl_seconds period interval window rate style length_min length_max min_length max_length
    class handler callback func function fn getter setter factory provider loader reader file_path
    secret_name key_name id_token type_hint schema set list map dict item items number num protected
    authentication grant flow less changed change changes update updated expire set storage command
    cmd char chars characters rule rules requirements complexity history attempts retries retry lock
    lockout mismatch match visible visibility toggle show hide icon button form page screen view
    component dialog modal widget box enabled required stdin file fd env_var identity""".split())
_CAMEL_WORDS_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def key_kind(key: str) -> Optional[str]:
    """'password', 'secret' or None from a key name: DB_PASSWORD, apiKey, some_api_token_123,
    my_password_secure, x-auth-token; None for secretName, token_type, password_policy, sort_key."""
    words = [w.lower() for w in _CAMEL_WORDS_RE.findall(key)]
    kinds = []
    for i, w in enumerate(words):
        if w in _PASSWORD_WORDS or w.endswith(("password", "passwd")):
            kinds.append((i, "password"))
        elif w in _SECRET_WORDS or w.endswith(("secret", "token", "apikey")) or w in _SECRET_VARIANTS:
            kinds.append((i, "secret"))
        elif w in _KEY_WORDS and not (i and words[i - 1] in _NOT_SECRET_KEYS):
            kinds.append((i, "secret"))
    if not kinds:
        return None
    i, kind = kinds[-1]
    if words[i - 1:i + 2] == ["access", "key", "id"] and kind == "secret":
        return "secret"  # an access key id is half of its key pair (`access_key_id`, rclone's, S3's)
    tail = [w for w in words[i + 1:] if not w.isdigit()]
    if any(w in _METADATA_WORDS for w in tail):
        return None  # password_policy, token_type, api_key_env, secret_name
    if tail and kind == "secret":
        return "secret"  # apikey_myservice, secret_for_ci: the value must also look random
    return kind  # a password word with a qualifier (db_password_prod) still names a password
