r"""Credential scrubber: text -> (clean text, findings). Pure, standard library only, no I/O.

Layout: `judge` (placeholder / randomness / key-name judgements), `rules` (the rule type, its
registry and the match checks), `vendors` (prefix-and-shape rules, `PREFIXED` table), `generic`
(context rules: assignments in every syntax, URLs, flags, headers, keys), `labels` (passwords in
prose and under labels of other languages, after a colon, a dash or a copula), `shapes` (credentials
with no key name: Markdown table columns, Wi-Fi QR strings, seed phrases, crypt(3) hashes, `login:
user / password`), `keys` (keys with no prefix: BitLocker and labelled recovery keys, wallets'
private keys, TOTP seeds, keys labelled in other languages), `commands` (passwords on the command
lines of tools with their own spelling: keytool, openssl, FreeRDP, Samba, zip, SQL*Plus, SNMPv3,
Cisco IOS, .pgpass lines), `cookies` (session cookies), `digits` (secrets made of digits: PINs, door
and safe codes, payment cards and their CVV, US SSNs), `engine` (scrub()).

Everything vaultrag stores or injects passes through `scrub` first: the raw note before it is parsed
(so headings, frontmatter, FTS rows, vectors and citations never see a secret), hook tool output, and
log lines. A secret becomes `[REDACTED:rule-name]`; a `Finding` records the rule and the 1-based line,
never the secret, and the log line names only rules and counts.

Choices, and why:
- Line structure is preserved. A redacted span keeps every line break it covered, so a PEM block
  becomes the marker on its first line followed by empty lines: line k in is line k out, and the
  parser can run on scrubbed text and still cite true line numbers.
- Vendor rules key on a published prefix and shape (ghp_, AKIA, sk-ant-, xoxb-, SG., ABSK, sq0csp-,
  `xxx8Q~`); generic rules key on context (PEM armour, URL userinfo, Authorization headers,
  `name = value` in any syntax, `--token`) and then judge the value: placeholder, code reference,
  or literal/random? A name is secret if a keyword (password, pwd, secret, token, key, credential,
  auth...) is one of its words and no metadata word follows it (`token_type`, `password_policy`):
  `some_api_token_123`, `my_password_secure`, `discordToken` count; `secretName` does not.
- Placeholders are recognised by form, not by a list of known examples: template syntax (`<..>`,
  `{{ }}`, `${ }`, `$VAR`, `%VAR%`, `^PASS^`), ellipses, runs of x/*/#, ALL_CAPS names (env vars,
  metavars), type names, code references (`os.environ[..]`, `process.env.X`), paths, and the words
  example/sample/your/dummy/fake/placeholder/changeme/redacted. Context rules also stay silent inside
  a `{{ ... }}` span (documentation templates such as `{{mysql://user:pass@host}}`).
- Randomness (`judge.looks_random`) = length >= 16, two or more character classes (symbols count),
  Shannon entropy >= 3 bits/char, and "wordiness" (share of characters in pronounceable letter runs)
  <= 0.5 (or <= 0.75 for separator-free values whose letters and digits alternate, as random
  lower-case alphanumerics do): identifiers, slugs and file names score 0.5-1, random base62 ~0.05.
  10-15 characters count only with all three classes and no words; a secret name also takes 16+
  digits (Discord ids). Measured cost: context rules miss ~0.5% of
  uniformly random 20-char values and <0.1% of 32-char ones (tests pin this); vendor rules use 0.8.
- Checksums: GitHub tokens end in a 6-character base62 CRC32. We do not require it to match: a
  token-shaped string with a failing checksum is a mistyped, hand-edited or future-format token, and
  users want a near-credential hidden more than one lookalike kept; prefix + exact length + charset
  already never occur in prose. Tests generate checksummed tokens and check a broken one is redacted.
- Filled-in vendor shapes: a vendor prefix with the exact shape is redacted even if its tail is
  filler (`AKIAZZZZZZZZZZZZZZZZ`, `ghp_` + 36 x, AWS's `...EXAMPLE` ids): losing a placeholder costs
  a user nothing, keeping a real key that looks like one costs a lot. Bare templates (`<token>`,
  `${VAR}`, `ghp_...`, wrong lengths) do not fit a vendor shape and stay.
- Standalone strings: only two shapes, searched only inside the random-looking runs: a 40-char
  base64 string with upper, lower and digits (an AWS secret key's shape), and a quoted literal of
  32+ high-entropy chars that is not a digest-length hex string, not labelled as a hash/id/etag/
  signature on its line and not a path. Anything else unnamed (certificates, SRI hashes, SSH public
  keys, lock files, base64 images) is left alone, as are public identifiers (Stripe pk_, Twilio AC
  SIDs, AWS AIDA/AROA ids). Prose is `labels`' business: "the wifi password is X" when X is shaped
  like a typed password, and password labels of other languages (`пароль: X`, `密码：X`, `hasło: X`).
- Digits: a number is a secret only under a label that names a secret number (`PIN: 4711`, "the
  door code is 4711", `CVV 123`, `password: 123456`: a digit run of 4+ under a password name is a
  password, not a stand-in, unless one digit repeated) or as a Luhn-valid card number grouped as
  cards are printed; "pin 13", "code 404", "exit code 1", ports, ids and versions stay (`digits`).
  A US social security number under its label is masked (it is used to prove who one is); an IBAN
  is not a secret (it is handed out to be paid into) and stays.
- Keys without a prefix are found by a shape only they have (a BitLocker key's 8 groups of 6
  digits) or by a shape under their label: recovery keys and codes, a wallet's WIF or 64-hex key
  under "private key" (a digest-length hex string elsewhere is a hash and stays) (`keys`, `shapes`).
- Labels are written with qualifiers ("Password for the NAS:", "Passwort vom Router:"), as Wi-Fi
  keys (`WLAN-Schlüssel:`), abbreviated (`pw X`), with arrows (`->`, `→`) and as commands that read
  a password from stdin (`echo 'x' | sudo -S`); each form judges its value as a password (`labels`,
  `generic`).
- A secret found once is redacted wherever the same value (12+ chars) repeats in the text.
- Idempotent: no rule matches a marker, and scrub re-runs until nothing new fires (MAX_PASSES).
- Fast path (exact: the same output as running every gated rule over the whole text): each rule is
  gated by lowercase literals, looked up once per text in an ASCII copy of the lowered text (same
  offsets) through a plan that tries a literal only after its rarest character or the longest
  literal inside it was found (generated nested `if`s); vendor triggers are looked up only in the
  random-looking runs (found by `str.find` in a byte-mapped copy) and the characters before them;
  anchored keyword rules start `re.match` only where a shared per-text position list has their
  keyword, and not at a keyword with no separator after it on its line; rules whose matches stay
  on one line search only the lines holding a trigger; a leading `\b` is checked in Python so
  `re` can use its literal-prefix search; regexes compile on first use. Figures: BENCHMARKS.md,
  "Secrets (#13)".
"""
from __future__ import annotations

from .engine import GENERIC_RULES, RULES, VENDOR_RULES, Finding, scrub, summarize
from .rules import COMPILED as _COMPILED
from .rules import REGISTRY as _REGISTRY

__all__ = ["Finding", "GENERIC_RULES", "RULES", "VENDOR_RULES", "ruleset_id", "scrub", "summarize"]

# Bump when a rule's judgement changes in code without its pattern changing (a pattern change is
# seen by ruleset_id on its own). The index records the ruleset it was scrubbed with; the next
# reindex under another ruleset re-scrubs every note, so a secret an older scrubber missed does
# not stay in an index built before the rule that finds it (indexer.settings_fingerprint).
RULES_VERSION = "2026-12-04.2"  # locks named by what they lock, keypads and openers; more languages' password words, user / password pairs, lock codes, network keys after the name, Azure DevOps PATs, rclone, passwords in parentheses or after a comma


def ruleset_id() -> str:
    """RULES_VERSION and a digest of every rule's name, pattern and triggers."""
    import hashlib

    h = hashlib.blake2b(digest_size=6)
    for rule in _REGISTRY:
        h.update(repr((rule.name, rule.pattern, rule.triggers)).encode("utf-8"))
    return f"{RULES_VERSION}-{h.hexdigest()}"
