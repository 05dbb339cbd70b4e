r"""Credential scrubber: text -> (clean text, findings). Pure, standard library only, no I/O.

Everything vaultrag stores or injects passes through `scrub` first: the raw note before it is parsed
(so headings, frontmatter, FTS rows, vectors and citations never see a secret), hook tool output, and
log lines. A secret becomes `[REDACTED:rule-name]`; a `Finding` records the rule and the 1-based line,
never the secret, and the log line names only rules and counts.

Choices, and why:
- Line structure is preserved. A redacted span keeps every line break it covered, so a PEM block
  becomes the marker on its first line followed by empty lines: line k in is line k out, and the
  parser can run on scrubbed text and still cite true line numbers.
- Vendor rules key on a published prefix and shape (ghp_, AKIA, sk-ant-, xoxb-, SG.); generic rules key
  on context (PEM armour, URL userinfo, Authorization headers, `password =`, `--token`) and then judge
  the value: placeholder, code reference, or literal/random?
- Placeholders are recognised by form, not by a list of known examples: template syntax (`<..>`,
  `{{ }}`, `${ }`, `$VAR`, `%VAR%`, `^PASS^`), ellipses, runs of x/*/#, ALL_CAPS names (env vars,
  metavars), type names, code references (`os.environ[..]`, `process.env.X`), paths, and the words
  example/sample/your/dummy/fake/placeholder/changeme/redacted. Context rules also stay silent inside
  a `{{ ... }}` span (documentation templates such as `{{mysql://user:pass@host}}`).
- Randomness (`_looks_random`) = length >= 16, two or more character classes, Shannon entropy >= 3
  bits/char, and "wordiness" (share of characters in pronounceable letter runs) <= 0.5: identifiers,
  slugs and file names score 0.5-1, random base62 ~0.05. Measured cost: context rules miss ~0.5% of
  uniformly random 20-char values and <0.1% of 32-char ones (tests pin this); vendor rules use 0.8.
- Checksums: GitHub tokens end in a 6-character base62 CRC32. We do not require it to match: a
  token-shaped string with a failing checksum is a mistyped, hand-edited or future-format token, and
  users want a near-credential hidden more than one lookalike kept; prefix + exact length + charset
  already never occur in prose. Tests generate checksummed tokens and check a broken one is redacted.
- Not detected, on purpose: standalone high-entropy strings with no keyword or prefix (they shred
  certificates, SRI hashes, SSH public keys, lock files, base64 images); public identifiers (Stripe
  pk_, Twilio AC SIDs, AWS AIDA/AROA ids, public keys, certificates); bare prose "the password is x";
  less common CLI forms (`redis-cli -a`).
- Idempotent: no rule matches a marker, and scrub re-runs until nothing new fires (MAX_PASSES).
- Fast path (26 MB/s on tldr's 38k small pages, 16 MB/s on large tool output): vendor rules run only
  if the text has a 20-char token-like run; each rule is gated by lowercase literals looked up once
  per text; a leading `\b` is checked in Python so `re` can use its literal-prefix search; keyword
  rules start `re.match` only where `str.find` found the keyword; regexes compile on first use.
"""
from __future__ import annotations

import base64
import binascii
import logging
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

__all__ = ["Finding", "GENERIC_RULES", "RULES", "VENDOR_RULES", "scrub", "summarize"]

log = logging.getLogger(__name__)

MIN_RANDOM_LEN = 16      # shorter "random" strings collide with words, versions and short hashes
MIN_ENTROPY_BITS = 3.0   # bits/char; random hex of 16 chars averages ~3.4, `aaaa1111bbbb2222` 2.0
MAX_WORDINESS = 0.5      # context rules: misses 0.5% of random 20-char and 0.08% of 32-char base62
                         # values; `report_2023_q4_final`, `prod-db-credentials` score 0.55-0.9
MAX_WORDINESS_VENDOR = 0.8  # prefix+shape already say "token"; only reject obvious identifiers
MIN_PASSWORD_LEN = 4     # below this a `password:` value is a flag, a digit or a typo, not a password
MIN_PEM_BODY = 40        # base64 chars; a real key has hundreds, a doc snippet `MIIE...` a dozen
MAX_PEM_SPAN = 16000     # chars to look for -----END; a 4096-bit PGP secret key block is ~7 KB
KEYWORD_WINDOW = 40      # chars between "token"/"secret" and a random string in prose
MAX_PASSES = 3           # re-scan after redaction until stable; real text settles in one pass
_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # everything str.splitlines() breaks on


@dataclass(frozen=True)
class Finding:
    rule: str
    line: int  # 1-based line of the secret's first character


# ---------------------------------------------------------------------------- value judgements
_PLACEHOLDER_WORDS = ("example", "sample", "placeholder", "dummy", "fake", "your", "changeme",
                      "change_me", "redacted", "insert", "12345", "abcde")
_PLACEHOLDER_VALUES = frozenset("""password passwd pass pwd secret token key apikey api_key
    credentials none null nil true false yes no on off undefined required optional string str int
    bool bytes any object secretstr empty default hidden masked ask prompt env auto""".split())
# Template syntax: <..>, {..}, {{ }}, ${..}, $VAR, %VAR%, %(name)s, [..], (..), YAML !tags, and
# symmetric markers such as ^PASS^ or @TOKEN@. A literal starting like this is treated as a template.
_TEMPLATE_RE = re.compile(r"^[<{\[(]|\{\{|\$\{|%\(\w+\)|^\$[A-Za-z_]\w*$|^![A-Za-z]+$"
                          r"|^([^\w\s])[A-Za-z_][\w.-]*\1[.,:;!?]?$")
_FILLER_RE = re.compile(r"([xX*#\u2022\u25cf])\1{3,}")
# ENV_NAMES, METAVARS and COMBO00:COMBO01: capital words, digits only at a word's end.
_ENV_NAME_RE = re.compile(r"[A-Z][A-Z]+\d*(?:[_:./-][A-Z0-9]+)*|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
# a.b.c, a::b, a->b, f(...), x[...]: an unquoted value written as code is a reference, not a literal
_CODE_REF_RE = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)+|[A-Za-z_$][\w$.]*[(\[].*")
_PATH_RE = re.compile(r"(?:~|\.{1,2})?/|[A-Za-z]:\\")
_WORDY_RE = re.compile(r"[a-z]{4,}|[A-Z][a-z]{3,}")
_WORDY_CAPS_RE = re.compile(r"[A-Z]{4,}")
_VOWEL_RE = re.compile(r"[aeiouAEIOU]")
_WORD_RE = re.compile(r"[A-Z]?[a-z]+[.,;:!?]*")
_CLUSTER_RE = re.compile(r"[^aeiouyAEIOUY]{4}")


def _is_filler(value: str) -> bool:
    """Template, filler or example text: never a real secret, whatever the prefix says."""
    low = value.lower()
    return (not any(c.isalnum() for c in value) or "[redacted" in low or "..." in value
            or "\u2026" in value or bool(_TEMPLATE_RE.search(value)) or bool(_FILLER_RE.search(value))
            or any(w in low for w in _PLACEHOLDER_WORDS))


def _is_placeholder(value: str) -> bool:
    """A filler, or a bare name where a value would go: `none`, `string`, `DB_PASSWORD`, `TEXT`."""
    return (_is_filler(value) or value.lower() in _PLACEHOLDER_VALUES
            or bool(_ENV_NAME_RE.fullmatch(value)))


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _wordiness(value: str) -> float:
    """Share of characters in pronounceable letter runs (4+ letters, a vowel, no 4-consonant
    cluster): identifiers, slugs and file names score 0.5-1; random base62 averages ~0.05."""
    runs = _WORDY_RE.findall(value)
    if not any(c.islower() for c in value) and any(c in "_-. " for c in value):
        runs += _WORDY_CAPS_RE.findall(value)  # NAME_LIKE_THIS; base32 secrets are never separated
    return sum(len(r) for r in runs if _VOWEL_RE.search(r) and not _CLUSTER_RE.search(r)) / len(value)


RANDOM_PART_WORDINESS = 0.3  # stricter than MAX_WORDINESS: the value also parses as code


def _looks_random(value: str, max_wordiness: float = MAX_WORDINESS) -> bool:
    """Machine-generated (key, token, hash) rather than a word, identifier, slug or sentence."""
    if len(value) < MIN_RANDOM_LEN or any(c.isspace() for c in value) or _WORD_RE.fullmatch(value):
        return False  # short, several words, or one natural word ("Authentifizierungsmethode.")
    classes = (any(c.islower() for c in value) + any(c.isupper() for c in value)
               + any(c.isdigit() for c in value))
    if classes < 2 or _entropy(value) < MIN_ENTROPY_BITS:
        return False
    return _wordiness(value) <= max_wordiness


# ---------------------------------------------------------------------------- rule machinery
Check = Callable[[re.Match], Optional[tuple]]
# Every vendor token holds a run of 20+ [A-Za-z0-9_-]; ~12% of tldr pages do. Searching for one run
# first (~130 MB/s) lets most text skip the vendor triggers altogether.
_LONG_RUN_RE = re.compile(r"[A-Za-z0-9_-]{20}")
_COMPILED: dict[str, re.Pattern] = {}


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


@dataclass(frozen=True)
class _Rule:
    name: str
    pattern: str       # compiled on first use: import stays ~2 ms for hook processes
    triggers: tuple    # lowercase literals; the regex runs only if one is in the text (empty: always)
    check: Check       # match -> span to redact, or None
    needs_long: bool   # the secret contains a _LONG_RUN_RE run
    vendor: bool       # vendor shape; context rules (not vendor) never fire inside `{{ ... }}`
    anchored: bool     # the regex starts at one of the triggers: try it only where they occur
    word_start: bool   # a match must not follow a letter, digit or underscore

    def matches(self, text: str, low: str) -> Iterable[re.Match]:
        regex = _COMPILED.get(self.pattern)
        if regex is None:
            regex = _COMPILED[self.pattern] = re.compile(self.pattern)
        if not self.anchored or len(low) != len(text):  # lower() may change length ("İ")
            for m in regex.finditer(text):
                if not (self.word_start and m.start() and _is_word(text[m.start() - 1])):
                    yield m
            return
        # A case-insensitive keyword start defeats re's prefix search (every "s", "t", "k" is a
        # candidate); str.find over the lowered text is ~10x faster on code and tool output.
        for trigger in self.triggers:
            i = low.find(trigger)
            while i >= 0:
                m = regex.match(text, i)
                if m and not (self.word_start and i and _is_word(text[i - 1])):
                    yield m
                i = low.find(trigger, i + 1)


def _target(m: re.Match) -> tuple[int, int]:
    """The span to redact: named group `s` (or `s2`...) when it took part, else the whole match."""
    for group in ("s", "s2"):
        if group in m.re.groupindex and m.start(group) >= 0:
            return m.span(group)
    return m.span()


def _plain(m: re.Match) -> Optional[tuple]:
    """Vendor shapes: only filler disqualifies (a random AKIA id can be all capitals)."""
    a, b = _target(m)
    return None if _is_filler(m.string[a:b]) else (a, b)


def _literal(m: re.Match) -> Optional[tuple]:
    """Context rules (netrc, connection strings): any value but a placeholder or a bare name."""
    a, b = _target(m)
    return None if _is_placeholder(m.string[a:b]) else (a, b)


def _random(m: re.Match) -> Optional[tuple]:
    a, b = _target(m)
    value = m.string[a:b]
    return None if _is_placeholder(value) or not _looks_random(value) else (a, b)


def _random_vendor(m: re.Match) -> Optional[tuple]:
    return _random_span(m.string, *_target(m))


def _jwt(m: re.Match) -> Optional[tuple]:
    header = m.group().split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(header + "=" * (-len(header) % 4))
    except (binascii.Error, ValueError):
        return None
    return m.span() if b'"alg"' in decoded or b'"typ"' in decoded else None


def _basic(m: re.Match) -> Optional[tuple]:
    a, b = _target(m)
    try:
        text = base64.b64decode(m.string[a:b] + "=" * (-(b - a) % 4), validate=True).decode()
    except (binascii.Error, ValueError):
        return None  # "Basic authentication" and friends are not base64 of user:password
    user, sep, pw = text.partition(":")
    return (a, b) if sep and user.isprintable() and pw and not _is_placeholder(pw) else None


def _pem(m: re.Match) -> Optional[tuple]:
    body = re.sub(r"-----[A-Z ]+-----|\\n", "", m.group())
    return m.span() if len(re.findall(r"[A-Za-z0-9+/]", body)) >= MIN_PEM_BODY else None


def _url_password(db: bool) -> Check:
    """user:password@ after `scheme://`; the regex starts at the literal `://` (fast search)."""
    def check(m: re.Match) -> Optional[tuple]:
        scheme = re.search(r"[A-Za-z][\w+.:-]{0,30}$", m.string[max(0, m.start() - 32):m.start()])
        if not scheme or bool(_DB_SCHEME_RE.search(scheme.group())) != db:
            return None
        return _literal(m)
    return check


def _around(prefix_re: re.Pattern) -> Check:
    """For regexes that start at a literal in the middle of a token (Telegram's `:`, Discord's
    first `.`): extend the span back over the part `prefix_re` matches at the end of the text."""
    def check(m: re.Match) -> Optional[tuple]:
        before = prefix_re.search(m.string, max(0, m.start() - 40), m.start())
        return _random_span(m.string, before.start("p"), m.end()) if before else None
    return check


def _random_span(text: str, a: int, b: int) -> Optional[tuple]:
    """Vendor shape with a loose randomness test (the prefix already says "token")."""
    value = text[a:b]
    return None if _is_filler(value) or not _looks_random(value, MAX_WORDINESS_VENDOR) else (a, b)


_PASSWORD_KEYS = ("password", "passwd", "passphrase", "pwd", "pass", "pw")
_SECRET_KEYS = ("secret", "token", "credential", "credentials", "authorization", "apikey", "auth")
_KEY_QUALIFIERS = frozenset("""api access secret private auth client master encryption signing app
    license account service session webhook consumer shared storage subscription""".split())
_CAMEL_WORDS_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-$@")


def _key_kind(key: str) -> Optional[str]:
    """'password', 'secret' or None from a key name: DB_PASSWORD, apiKey, x-auth-token, secretName."""
    words = [w.lower() for w in _CAMEL_WORDS_RE.findall(key)]
    if not words:
        return None
    last, prev = words[-1], (words[-2] if len(words) > 1 else "")
    if last in _PASSWORD_KEYS or last.endswith(("password", "passwd")):
        return "password"
    if last in _SECRET_KEYS or last.endswith(("secret", "token", "apikey")) or (
            last == "key" and prev in _KEY_QUALIFIERS):
        return "secret"
    return None


def _prose_follows(text: str, value: str, end: int) -> bool:
    """`Password: see the vault`: an unquoted all-letter word followed by more words is prose."""
    line_end = text.find("\n", end)
    rest = text[end:line_end if line_end >= 0 else len(text)].lstrip(" \t")
    return value.isalpha() and rest[:1].isalnum()


def _assignment(kind: str) -> Check:
    """`key = value` in .env, code, JSON, YAML, TOML, INI, headers and query strings. The regex
    starts at the keyword (fast); the key is recovered by walking back over identifier chars."""
    def check(m: re.Match) -> Optional[tuple]:
        text, start = m.string, m.start()
        while start > 0 and text[start - 1] in _KEY_CHARS and m.start() - start < 60:
            start -= 1
        if _key_kind(text[start:m.end("kw")].lstrip(".-")) != kind:
            return None
        a, b = _target(m)
        value = text[a:b].rstrip(")]}")
        b = a + len(value)
        if not value or _is_placeholder(value):
            return None
        quoted = m.group("q") is not None
        if not quoted and (_PATH_RE.match(value) or (_CODE_REF_RE.fullmatch(value) and not _random_part(value))):
            return None  # password = os.environ["X"], token: process.env.TOKEN, pwd=/home/me
        if kind == "secret":
            return (a, b) if _looks_random(value) else None
        if not quoted:  # could still be a variable, a type annotation, a namespace or prose
            if len(value) < MIN_PASSWORD_LEN:
                return None
            if re.fullmatch(r"\w+", value) and "_" in value and _key_kind(value):
                return None  # password=db_password: a variable, not a literal
            if _prose_follows(text, value, b) or text[b:b + 3].lstrip(" \t")[:1] == "=":
                return None  # prose, or `password: str = ...`
            if text[a - 1] == ":" and m.group("sep") == ":":
                return None  # `user:password:generate`, `a:hover`: a namespace, not YAML
        return a, b
    return check


def _random_part(value: str) -> bool:
    """A dotted value with a long random segment is a token (hvs.CAES..., s.Xk3...), not code: the
    segment mixes upper case, lower case and digits, has no '_' and hardly any words (unlike
    `self.aws4HmacSha256SigningKeyV2` or a build hash `main.e3b0c442...chunk.js`)."""
    return any(len(part) >= 20 and "_" not in part and any(c.isupper() for c in part)
               and any(c.islower() for c in part) and any(c.isdigit() for c in part)
               and _looks_random(part, RANDOM_PART_WORDINESS) for part in re.split(r"\.|::|->", value))


def _flag_value(m: re.Match) -> Optional[tuple]:
    """`--password X`, `--token=X`, `sshpass -p X`, `mysql -pX`, `curl -u user:X`."""
    a, b = _target(m)
    value = m.string[a:b]
    if value.startswith("-") or len(value) < MIN_PASSWORD_LEN or _is_placeholder(value):
        return None  # the next flag, `-p` alone (prompt), or a template
    if "s2" in m.re.groupindex and m.start("s2") == a and _prose_follows(m.string, value, b):
        return None  # help text: `--password   Prompt for the password`
    flag = m.groupdict().get("flag")
    if flag and flag.lower() not in ("password", "passwd"):
        return (a, b) if _looks_random(value) else None
    return a, b


_HASH_LABEL_RE = re.compile(r"(?i)sha-?\d*|md5|checksum|hash|digest|fingerprint|commit|base64,|ssh-")


def _keyword_random(m: re.Match) -> Optional[tuple]:
    """`the new token is X`: a random string shortly after a secret keyword, in prose."""
    a, b = m.span("s")
    value, gap = m.string[a:b], m.string[m.start():a]
    if m.start() and m.string[m.start() - 1] in "-./_@" or value.startswith("//"):
        return None  # part of a name (js-tokens, .secret) or a URL path
    if re.search(r"[=<>\"'`]", gap) or re.fullmatch(_UUID, value):
        return None  # the keyword had its own value or sat in a <placeholder>; UUIDs are ids
    if _HASH_LABEL_RE.search(gap) or re.match(r"(?i)(?:sha|md)\d*[-:=]", value):
        return None  # labelled as a checksum, commit, fingerprint, data URI or public key
    return _random(m)


def _in_template(text: str, pos: int) -> bool:
    """Inside an unclosed `{{` on the same line: a documented placeholder (`{{mysql://u:p@h}}`)."""
    line = text[text.rfind("\n", 0, pos) + 1:pos]
    return line.rfind("{{") > line.rfind("}}")


_rules: list[_Rule] = []


def _add(name: str, pattern: str, triggers: Iterable[str], check: Check, needs_long: bool,
         vendor: bool, anchored: bool) -> None:
    # A leading \b stops re from searching for the literal prefix (60 vs 3,000 MB/s): drop it
    # and test the boundary in Rule.matches instead.
    word_start = pattern.startswith(r"\b")
    _rules.append(_Rule(name, pattern[2:] if word_start else pattern, tuple(triggers), check,
                        needs_long, vendor, anchored, word_start))


def _vendor(name: str, pattern: str, triggers: Iterable[str], check: Check = _plain,
            needs_long: bool = True, anchored: bool = False) -> None:
    _add(name, pattern, triggers, check, needs_long, True, anchored)


def _generic(name: str, pattern: str, triggers: Iterable[str], check: Check = _literal,
             anchored: bool = False) -> None:
    _add(name, pattern, triggers, check, False, False, anchored)


# A value after `key =`: quoted (group q, value s) or bare (s2): no whitespace, quotes or separators.
_VALUE = r"""(?:(?P<q>["'`])(?P<s>[^\n"'`]{1,400})(?P=q)|(?P<s2>[^\s"'`;&,]{1,400}))"""
_SEP = r"""["'*\]]{0,2}[ \t]*(?P<sep>:=|=>|=|:(?!//))[ \t]*\**[ \t]*"""
_DB_SCHEME_RE = re.compile(
    r"(?i)(?:^|[^\w+.-])(?:jdbc:)?(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?"
    r"|mssql|sqlserver|oracle|cockroachdb|clickhouse|couchdb|neo4j(?:\+s)?|bolt|memcached|cassandra)"
    r"(?:\+\w+)?$")
# user:password@ (a raw "?" or "#" in a pasted password is common; "/" would swallow host:port/@x)
_USERINFO = r"://(?P<u>[^\s:/?#@\[\]'\"<>]*):(?P<s>[^\s/@\[\]'\"<>]+)@"
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"

# ---------------------------------------------------------------------------- rules
# Order matters only for ties (same span): more specific rules first. Several rules are registered
# more than once (one pattern per shape) so each pattern keeps a literal prefix.
_generic("pem-private-key",
         r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----(?:[\s\S]{0,%d}?-----END \1-----"
         r"|(?:[ \t]*\r?\n[ \t]*[A-Za-z0-9+/=]{16,})+)" % MAX_PEM_SPAN, ["private key"], _pem)
_generic("putty-private-key", r"Private-Lines: \d+(?P<s>(?:\r?\n[A-Za-z0-9+/=]{8,})+)", ["private-lines"])
_vendor("anthropic-api-key", r"\bsk-ant-[a-z]{3,6}\d\d-[A-Za-z0-9_-]{40,}", ["sk-ant-"])
_vendor("openai-api-key", r"\bsk-(?:(?:(?:proj|svcacct|admin|None)-)?[A-Za-z0-9_-]{20,}T3BlbkFJ"
        r"[A-Za-z0-9_-]{20,}|(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|[A-Za-z0-9]{48}\b)", ["sk-"],
        _random_vendor)
_vendor("github-pat-classic", r"\bghp_[A-Za-z0-9]{36}\b", ["ghp_"])
_vendor("github-pat-fine-grained", r"\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b", ["github_pat_"])
_vendor("github-oauth-token", r"\bgho_[A-Za-z0-9]{36}\b", ["gho_"])
_vendor("github-app-token", r"\bgh[usr]_[A-Za-z0-9]{36}\b", ["ghu_", "ghs_", "ghr_"])
_GITLAB = "pat dt rt ptt ft soat imt agent oas cbt".split()
_vendor("gitlab-token", r"\bgl(?:%s)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*" % "|".join(_GITLAB),
        [f"gl{p}-" for p in _GITLAB])
_vendor("gitlab-token", r"\bGR1348941[A-Za-z0-9_-]{20,}", ["gr1348941"])  # runner registration
_vendor("aws-access-key-id", r"\bA(?:KIA|SIA|BIA|CCA)[A-Z2-7]{16}\b", ["akia", "asia", "abia", "acca"])
_vendor("aws-secret-access-key", r"(?i:aws[\w.-]{0,20}?secret[\w.-]{0,20}?|secret_?access_?key)" + _SEP
        + r"""["']?(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])""", ["aws", "secret_access", "secretaccess"],
        _random_vendor, needs_long=False, anchored=True)
_vendor("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}(?![\w-])", ["aiza"])
_vendor("google-oauth-client-secret", r"\bGOCSPX-[A-Za-z0-9_-]{28}(?![\w-])", ["gocspx-"])
_vendor("gcp-service-account-key", r'"private_key(?:_id)?"\s*:\s*"(?P<s>[^"]{16,})"', ["private_key"],
        _literal, needs_long=False)
_vendor("azure-storage-key", r"\bAccountKey=(?P<s>[A-Za-z0-9+/]{86}==)", ["accountkey="], needs_long=False)
_vendor("azure-shared-access-key", r"\bSharedAccess(?:Key|Signature)=(?P<s>[A-Za-z0-9+/=%&:.-]{20,})",
        ["sharedaccess"], _literal, needs_long=False)
_vendor("azure-sas-token", r"[?&]sig=(?P<s>[A-Za-z0-9%+/]{30,}(?:%3D|=)*)", ["sig="], _random_vendor,
        needs_long=False)
_vendor("stripe-secret-key", r"\bsk_live_[A-Za-z0-9]{20,}", ["sk_live_"])
_vendor("stripe-test-key", r"\bsk_test_[A-Za-z0-9]{20,}", ["sk_test_"])
_vendor("stripe-restricted-key", r"\brk_(?:live|test)_[A-Za-z0-9]{20,}", ["rk_live_", "rk_test_"])
_vendor("stripe-webhook-secret", r"\bwhsec_[A-Za-z0-9]{24,}", ["whsec_"])
_vendor("slack-token", r"\bxox[abposre]-[A-Za-z0-9-]{20,}", ["xox"])
_vendor("slack-token", r"\bxapp-\d-[A-Z0-9]+-\d+-[a-f0-9]{20,}", ["xapp-"])
_vendor("slack-webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/-]{20,})",
        ["hooks.slack.com"], needs_long=False)
_vendor("twilio-api-key", r"\bSK[0-9a-fA-F]{32}\b", ["sk"], _random_vendor)
_vendor("sendgrid-api-key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![\w-])", ["sg."])
_vendor("mailgun-api-key", r"\bkey-[0-9a-f]{32}\b", ["key-"], _random_vendor)
_vendor("mailgun-api-key", r"\b[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}\b", ["mailgun"], _random_vendor)
_vendor("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", ["npm_"])
_vendor("npm-token", r"_authToken=(?P<s>[^\s\"'<>]{8,})", ["_authtoken"], _literal, needs_long=False)
_vendor("pypi-token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}", ["pypi-age"])
_vendor("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}\b", ["hf_"], _random_vendor)
_vendor("discord-bot-token", r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![\w.-])", (),
        _around(re.compile(r"(?<![\w.-])(?P<p>[MNO][A-Za-z0-9_-]{23,27})\Z")))
_vendor("discord-webhook", r"discord(?:app)?\.com/api/webhooks/\d+/(?P<s>[A-Za-z0-9_-]{50,})", ["discord"])
_vendor("telegram-bot-token", r":[A-Za-z0-9_-]{35}(?![\w-])", (),
        _around(re.compile(r"(?:(?<![\w:])|(?<=bot))(?P<p>\d{8,10})\Z")))
_vendor("shopify-token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", ["shpat_", "shpca_", "shppa_", "shpss_"])
_vendor("datadog-api-key", r"(?i:(?:datadog|dd)[\w-]{0,20}?(?:api|app|application)[_-]?key)" + _SEP
        + r"""["']?(?P<s>[a-f0-9]{32}|[a-f0-9]{40})\b""", ["datadog", "dd_", "dd-"], _random_vendor,
        anchored=True)
_vendor("sentry-dsn", r"://(?P<s>[0-9a-f]{32}(?::[0-9a-f]{32})?)@[\w.-]+(?::\d+)?/\d+", ["://"])
_vendor("sentry-dsn", r"\bsntry[su]_[A-Za-z0-9+/=_-]{40,}", ["sntry"])
_vendor("digitalocean-token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", ["dop_v1_", "doo_v1_", "dor_v1_"])
_vendor("heroku-api-key", r"\bHRKU-[A-Za-z0-9_-]{30,}", ["hrku-"])
_vendor("heroku-api-key", r"\b(?i:heroku[\w-]{0,20}?(?:key|token|secret))" + _SEP + r"""["']?(?P<s>%s)"""
        % _UUID, ["heroku"], anchored=True)
_vendor("age-secret-key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b", ["age-secret-key-1"])
_vendor("databricks-token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", ["dapi"], _random_vendor)
_vendor("postman-api-key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", ["pmak-"])
_vendor("linear-api-key", r"\blin_api_[A-Za-z0-9]{40}\b", ["lin_api_"])
_vendor("notion-token", r"\bntn_[A-Za-z0-9]{40,}\b", ["ntn_"], _random_vendor)
_vendor("notion-token", r"\bsecret_[A-Za-z0-9]{43}\b", ["secret_"], _random_vendor)
_vendor("grafana-token", r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b", ["glsa_"])
_vendor("grafana-token", r"\bglc_[A-Za-z0-9+/]{32,}={0,2}", ["glc_"])
# Vault: service tokens are hvs. + 90+ characters, root tokens (operator init) hvs. + 24.
_vendor("hashicorp-vault-token", r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}", ["hvs.", "hvb.", "hvr."], _random_vendor)
_vendor("doppler-token", r"\bdp\.(?:pt|st(?:\.[a-z0-9_-]{2,35})?|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\b",
        ["dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."])
_vendor("supabase-token", r"\bsbp_[a-f0-9]{40}\b", ["sbp_"])
_vendor("pulumi-token", r"\bpul-[a-f0-9]{40}\b", ["pul-"])
_vendor("new-relic-key", r"\bNRAK-[A-Z0-9]{27}\b", ["nrak-"])
_vendor("atlassian-api-token", r"\bATATT3[A-Za-z0-9_=-]{180,}", ["atatt3"])

_generic("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*){1,3}", ["eyj"], _jwt)
_generic("database-url", _USERINFO, ["://"], _url_password(db=True))
_generic("url-credentials", _USERINFO, ["://"], _url_password(db=False))
_generic("bearer-token",
         r"\b(?i:bearer|authorization:[ \t]*(?:token|bot))[ \t]+(?P<s>[A-Za-z0-9._~+/-]{12,}=*)",
         ["bearer", "auth"], _random, anchored=True)
_generic("basic-auth-credentials", r"\b(?i:basic)[ \t]+(?P<s>[A-Za-z0-9+/]{8,}={0,2})(?![\w+/=])",
         ["basic"], _basic, anchored=True)
_generic("netrc-password", r"\b(?i:machine)[ \t]+\S+[^\n]*?\bpassword[ \t]+(?P<s>\S+)", ["machine"],
         anchored=True)
_generic("cli-credential-flag",
         r"--(?:[\w-]*-)?(?P<flag>(?i:password|passwd|token|secret|api-?key|access-key))(?:=|[ \t]+)"
         + _VALUE, ["--"], _flag_value)
_generic("cli-credential-flag", r"\b(?:sshpass|(?:docker|podman|helm|buildah) (?:registry )?login)\b[^\n]*?"
         r"[ \t]-p[ \t]*['\"]?(?P<s>[^\s'\"]+)", ["sshpass", "login"], _flag_value)
_generic("cli-credential-flag", r"\bmysql\w*\b[^\n]*?[ \t]-p['\"]?(?P<s>[^\s'\"]+)", ["mysql"], _flag_value)
_generic("cli-credential-flag",
         r"\bcurl\b[^\n]*?[ \t](?:-u|--user)[ \t]+['\"]?[^\s:'\"]+:(?P<s>[^\s'\"@]+)", ["curl"], _flag_value)
_generic("password-assignment", r"(?P<kw>(?i:pass(?:word|wd|phrase)?|pwd|pw))" + _SEP + _VALUE,
         ["pass", "pw"], _assignment("password"), anchored=True)
_generic("secret-assignment",
         r"(?P<kw>(?i:secret|token|key|credentials?|auth(?:orization)?))" + _SEP + _VALUE,
         ["secret", "token", "key", "credential", "auth"], _assignment("secret"), anchored=True)
_generic("keyword-high-entropy",
         r"\b(?i:(?:secret|token|password|passwd|passphrase|api[ _-]?key|access[ _-]?key|credentials?)"
         r"s?(?![-.]?\w))"
         r"[^\n]{0,%d}?(?<![\w+/=.-])(?P<s>[A-Za-z0-9+/_.=-]{20,})" % KEYWORD_WINDOW,
         ["secret", "token", "pass", "api", "access", "credential"], _keyword_random, anchored=True)

_RULES: tuple[_Rule, ...] = tuple(_rules)
del _rules
RULES: tuple[str, ...] = tuple(dict.fromkeys(r.name for r in _RULES))
# Each distinct trigger is looked up once per text (vendor ones only if a long run exists) and
# selects the rules it gates.
_SHORT_TRIGGERS = tuple(dict.fromkeys(t for r in _RULES if not r.needs_long for t in r.triggers))
_LONG_TRIGGERS = tuple(dict.fromkeys(t for r in _RULES if r.needs_long for t in r.triggers
                                     if t not in _SHORT_TRIGGERS))
_GATED: dict[str, list[int]] = {}
for _i, _r in enumerate(_RULES):
    for _t in _r.triggers:
        _GATED.setdefault(_t, []).append(_i)
_UNGATED = [i for i, r in enumerate(_RULES) if not r.triggers]
VENDOR_RULES: tuple[str, ...] = tuple(dict.fromkeys(r.name for r in _RULES if r.vendor))
GENERIC_RULES: tuple[str, ...] = tuple(n for n in RULES if n not in VENDOR_RULES)


# ---------------------------------------------------------------------------- public API
def _find(text: str) -> list[tuple[int, int, str]]:
    """Non-overlapping (start, end, rule) spans: earliest first, then longest, then rule order."""
    low = text.lower()
    has_long = _LONG_RUN_RE.search(text) is not None
    present = [t for t in _SHORT_TRIGGERS if t in low]
    if has_long:
        present += [t for t in _LONG_TRIGGERS if t in low]
    active = set(_UNGATED).union(*(_GATED[t] for t in present))
    candidates = []
    for order in sorted(active):
        rule = _RULES[order]
        if rule.needs_long and not has_long:
            continue
        for m in rule.matches(text, low):
            span = rule.check(m)
            if span and span[1] > span[0] and (rule.vendor or not _in_template(text, span[0])):
                candidates.append((span[0], -span[1], order, rule.name))
    candidates.sort()
    chosen, end = [], -1
    for start, neg_end, _, name in candidates:
        if start >= end:
            chosen.append((start, -neg_end, name))
            end = -neg_end
    return chosen


def scrub(text: str) -> tuple[str, tuple[Finding, ...]]:
    """Replace every secret in `text` with `[REDACTED:rule]`, keeping every line break in place."""
    findings: list[Finding] = []
    for _ in range(MAX_PASSES):
        spans = _find(text)
        if not spans:
            break
        out, pos, line = [], 0, 1
        for start, end, name in spans:
            line += text.count("\n", pos, start)
            findings.append(Finding(name, line))
            secret = text[start:end]
            out += (text[pos:start], f"[REDACTED:{name}]", "".join(c for c in secret if c in _BREAKS))
            line += secret.count("\n")
            pos = end
        out.append(text[pos:])
        text = "".join(out)
    if findings:
        findings.sort(key=lambda f: (f.line, f.rule))
        log.info("scrubbed %d secret(s): %s", len(findings),
                 ", ".join(f"{k}={v}" for k, v in summarize(findings).items()))
    return text, tuple(findings)


def summarize(findings: Iterable[Finding]) -> dict[str, int]:
    """Count findings by rule name, sorted by name (for reports and logs; never the secret)."""
    return dict(sorted(Counter(f.rule for f in findings).items()))
