"""Context rules: a secret recognised by where it sits, not by its own shape.

`name = value` in every syntax a note or a transcript carries (.env, INI, TOML, YAML incl. block
scalars, JSON incl. escaped JSON, XML elements and attributes, name/value pairs, code in any
language, Makefiles, CSV, HTTP headers, query strings, ODBC/JDBC strings), URLs with a password,
command-line flags, Authorization headers, PEM/OpenSSH/PGP/PuTTY private keys and JWTs.

The name side is judged by `judge.key_kind` (a keyword anywhere in the name, unless a metadata word
follows it: `token_type`, `password_policy`); the value side by `judge.looks_secret_value` (secret
names) or "any literal but a placeholder" (password names: human passwords are not random).
"""
from __future__ import annotations

import re
from typing import Optional

from .judge import (TYPED_SYMBOLS, entropy, wordiness, is_placeholder, key_kind, looks_random, looks_secret_value,
                    stands_in_for_password)
from .rules import (PRIORITY_ARMOUR, PRIORITY_GENERIC, add, basic, jwt, literal, pem, random, target,
                    wrapped_jwt, wrapped_pem)

MIN_PASSWORD_LEN = 4     # below this a `password:` value is a flag, a digit or a typo, not a password
MAX_PEM_SPAN = 16000     # chars to look for -----END; a 4096-bit PGP secret key block is ~7 KB
KEYWORD_WINDOW = 40      # chars between "token"/"secret" and a random string in prose
MAX_KEY_WALKBACK = 60    # chars of identifier before the keyword (`some_service_api_token`)

_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-$@")
# a.b.c, a::b, a->b, f(...), x[...]: an unquoted value written as code is a reference, not a literal
_CODE_REF_RE = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)+|[A-Za-z_$][\w$.]*[(\[].*")
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_PATH_RE = re.compile(r"(?:~|\.{1,2})?/|[A-Za-z]:\\")
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_KEYWORDS = ("pass", "pw", "secret", "token", "key", "cred", "auth", "psk")  # pw: pwd too; cred: creds too

# The name: keyword, then the rest of the identifier (`_123`, `Token`, `_secure`, `[]`).
_NAME = (r"(?P<name>(?i:pass(?:word|wd|phrase|code|wort)?|pwd|pw|psk|secret|token|key|credentials?"
         r"|creds|auth(?:orization)?)[\w.-]{0,40}?)(?!\w)")  # never cut inside a word
_CLOSE = r"""(?:\\?["'`])?(?:\[\d*\])?\]?"""  # closing quote of "key", [] of a C array, ] of [key]
# `var token string = ..`, `val key: String = ..`, `token: str = ..` (then the value is code)
_TYPE = r"""(?:(?:[ \t]*:[ \t]*|[ \t]+)[A-Za-z_][\w.]*(?:<[\w, .]*>|\[\w*\])?\??(?=[ \t]*:?=[^=]))?"""
# Whitespace is taken possessively ((?=(x))(?P=x)): a run of spaces after a keyword (`PASSED   [ 0%]`
# in pytest output) is then tried once, not once per split between two space quantifiers.
_OP = (r"""(?=(?P<ws>[ \t]*))(?P=ws)(?:\*+[ \t]*)?"""
       r"""(?:(?P<sep>:{1,3}=|[?+.]=|={2,3}|!==?|=>|<-|=|:(?!//)|,|(?<=[ \t])(?:->|→|⇒)(?=[ \t]))[ \t]*(?:\*+[ \t]*)?"""
       r"""(?:!!?[A-Za-z]+[ \t]+)?"""  # a YAML tag: `key: !!binary AbC...`
       r"""|(?<=[ \t])(?=@?["'][^\n"']{1,400}["'][ \t]*[;,)]*[ \t]*$))""")  # `secret "abc";` (BIND, Juniper);
# the `$` needs (?m): the assignment pattern is compiled with it
# A value: quoted (q, s), possibly JSON-escaped (\"..\") or C#-verbatim (@".."); or bare (s2).
_VALUE = (r"""(?:(?:@|\b[rbuRBU]{1,2})?\\?(?P<q>["'`])(?P<s>[^\n"'`]{1,400}?)\\?(?P=q)"""
          r"""|(?P<s2>[^\s"'`;&,<]{1,400}))""")  # `<`: the next XML tag, not the password
_DB_SCHEME_RE = re.compile(
    r"(?i)(?:^|[^\w+.-])(?:jdbc:)?(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?"
    r"|mssql|sqlserver|oracle|cockroachdb|clickhouse|couchdb|neo4j(?:\+s)?|bolt|memcached|cassandra"
    r"|db2|snowflake|presto|trino|redshift|hive2|vertica|sybase|informix|firebird|timescale)"
    r"(?:\+\w+)?$")
# user:password@ (a raw "?" or "#" in a pasted password is common; "/" would swallow host:port/@x)
_USERINFO = r"://(?P<u>[^\s:/?#@\[\]'\"<>]*):(?P<s>[^\s/@\[\]'\"<>]+)@"


def _prose_follows(text: str, value: str, end: int) -> bool:
    """`Password: see the vault`, `Password: (same as router)`: an unquoted all-letter word (or one
    opening a parenthesis) followed by more words is prose."""
    line_end = text.find("\n", end)
    rest = text[end:line_end if line_end >= 0 else len(text)].lstrip(" \t")
    return value.removeprefix("(").isalpha() and rest[:1].isalnum()


def _random_part(value: str) -> bool:
    """A dotted value with a long random segment is a token (hvs.CAES..., s.Xk3...), not code."""
    return any(len(part) >= 20 and "_" not in part and any(c.isupper() for c in part)
               and any(c.islower() for c in part) and any(c.isdigit() for c in part)
               and looks_random(part, 0.3) for part in re.split(r"\.|::|->", value))


def _name_kind(text: str, start: int, end: int) -> Optional[str]:
    """Walk back from the keyword over identifier characters and judge the whole name."""
    a = start
    while a > 0 and text[a - 1] in _KEY_CHARS and start - a < MAX_KEY_WALKBACK:
        a -= 1
    return key_kind(text[a:end].lstrip(".-$@"))


def judge_value(text: str, kind: str, a: int, b: int, quoted: bool, sep: str) -> Optional[tuple]:
    """Span (a, b) if the value at text[a:b] is a secret for a name of this kind."""
    value = text[a:b]
    if not quoted:  # `f(token=abc)`, `{key: abc}`: drop closers the value did not open
        while value and value[-1] in _CLOSERS and value.count(value[-1]) > value.count(_CLOSERS[value[-1]]):
            value = value[:-1]
        b = a + len(value)
    if not value or (stands_in_for_password(value) if kind == "password" else is_placeholder(value)):
        return None  # a placeholder; but `password: 123456` is a (weak) password, not a stand-in
    if not quoted and (_PATH_RE.match(value) or (_CODE_REF_RE.fullmatch(value) and not _random_part(value))):
        return None  # password = os.environ["X"], token: process.env.TOKEN, pwd=/home/me
    if kind == "secret" or sep == ",":
        return (a, b) if looks_secret_value(value) else None
    if not quoted:  # could still be a variable, a type annotation, a namespace or prose
        if len(value) < MIN_PASSWORD_LEN:
            return None
        if re.fullmatch(r"\w+", value) and "_" in value and key_kind(value):
            return None  # password=db_password: a variable, not a literal
        if _prose_follows(text, value, b) or text[b:b + 3].lstrip(" \t")[:1] == "=":
            return None  # prose, or `password: str = ...`
        if text[a - 1] == ":" and sep == ":":
            return None  # `user:password:generate`, `a:hover`: a namespace, not YAML
        if text[b:b + 2] in (' "', " '"):
            return None  # `$pw = ConvertTo-SecureString "x"`: a command and its argument (judged there)
    elif len(value) < MIN_PASSWORD_LEN and not looks_random(value):
        return None
    return a, b


def _named(kind: str, span: Optional[tuple]) -> Optional[tuple]:
    return span and (*span, "password-assignment" if kind == "password" else "secret-assignment")


_TYPED_AS_RE = re.compile(r"""(?:\\?["'`])?[ \t]*:[ \t]*(?P<t>[A-Za-z_][\w.]*)""")  # what _TYPE took as a type


def _assignment(m: re.Match) -> Optional[tuple]:
    """`key = value` in .env, code, JSON, YAML, TOML, INI, Makefiles, headers and query strings."""
    text = m.string
    kind = _name_kind(text, m.start(), m.end("name"))
    if kind is None:
        return None
    a, b = target(m)
    sep = m.group("sep") or ""
    typed = _TYPED_AS_RE.match(text, m.end("name"), m.start("sep") if sep else a)
    if typed and looks_random(typed.group("t")):
        # `Password: SqqxC8954pPpQ=Rc` is not `password: Type = value`: a random "type" is the
        # password's start, and the password runs to the next space
        stop = typed.start("t")
        while stop < len(text) and not text[stop].isspace():
            stop += 1
        return _named(kind, judge_value(text, kind, typed.start("t"), stop, False, ":"))
    if sep in ("==", "===", "!=", "!==") and m.group("q") is None:
        return None  # `if token == other_token`: a comparison of names
    if m.group("q") is None and text[b:b + 1] == ",":  # `secret = A,.:-¨@*¿?!`: commas typed in
        stop = b
        while stop < len(text) and not text[stop].isspace():
            stop += 1
        if looks_secret_value(text[a:stop]) and not looks_random(text[a:stop]):
            b = stop
    if m.group("q") is None and text[b:b + 1] == "&":  # `password: Tr0ub4dor&3`: `&` typed in,
        stop = b                                       # unless a query string goes on (`&user=x`)
        while stop < len(text) and not text[stop].isspace():
            stop += 1
        if "=" not in text[b:stop]:
            b = stop
    name_quoted = text[m.end("name"):m.end("name") + 1] in "\"'`"
    if sep == "," and kind == "password" and m.group("q") is not None and name_quoted:
        # `define('DB_PASSWORD', 'x')`, `setenv("PGPASSWORD", "x")`, `config.set("password", "x")`: a
        # quoted password name and a quoted value are a pair when the value is typed as passwords are
        # (a digit, and a capital or a symbol), not a list of names or a validation rule (`min:8`)
        value = text[a:b]
        if (_typed_shape(value) and any(c.isdigit() for c in value) and not key_kind(value)
                and any(c.isupper() or c in TYPED_SYMBOLS for c in value) and not re.search(r"[\s:|]", value)):
            return _named(kind, judge_value(text, kind, a, b, True, "="))
    span = judge_value(text, kind, a, b, m.group("q") is not None, sep)
    if span is None and kind == "secret" and sep in ("=", ":", ":=") and _names_a_secret(text, m.start(), m.end("name")):
        span = _typed_secret(text, a, b, m.group("q") is not None, sep)
    return _named(kind, span)


# A secret a person chose is typed, not random: MinIO's and rclone's `secret_access_key = Nube670?`,
# `client_secret: Sommer2024!`. Under a name holding the word "secret", a value typed as strong
# passwords are (a letter, a digit, and a symbol or both cases; no space) counts as under `password`;
# `secret: v1.2.3`, `secret: db-creds`, `secret_name: x` stay.


def _names_a_secret(text: str, start: int, end: int) -> bool:
    a = start
    while a > 0 and text[a - 1] in _KEY_CHARS and start - a < MAX_KEY_WALKBACK:
        a -= 1
    words = [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", text[a:end])]
    return any(w in ("secret", "secrets") or w.endswith("secret") for w in words)


def _typed_secret(text: str, a: int, b: int, quoted: bool, sep: str) -> Optional[tuple]:
    span = judge_value(text, "password", a, b, quoted, sep)
    if not span:
        return None
    value = text[span[0]:span[1]]
    if not 6 <= len(value) <= 64 or any(c.isspace() for c in value) or key_kind(value):
        return None
    letters, digit = any(c.isalpha() for c in value), any(c.isdigit() for c in value)
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value)
    if not (letters and digit and (mixed or any(c in TYPED_SYMBOLS for c in value))):
        return None
    if re.fullmatch(r"[A-Za-z]+(?:[-_.][A-Za-z0-9]+)+|v?\d+(?:\.\d+)+[\w.-]*", value):
        return None  # `my-Secret-v2` names, versions
    return span


def _reverse_comparison(m: re.Match) -> Optional[tuple]:
    """`if ("literal" == password)`: the literal comes first."""
    kind = _name_kind(m.string, m.start("name"), m.end("name"))
    return kind and _named(kind, judge_value(m.string, kind, *m.span("s"), True, "=="))


def _block(m: re.Match) -> Optional[tuple]:
    """YAML block scalars (`token: |` + indented value) and XML elements (`<apiToken>v</apiToken>`)."""
    kind = key_kind(m.group("tag")) if "tag" in m.re.groupindex else _name_kind(
        m.string, m.start(), m.end("name"))
    return kind and _named(kind, judge_value(m.string, kind, *m.span("s"), True, "="))


def _name_value(m: re.Match) -> Optional[tuple]:
    """`{"name": "api_token", "value": "..."}`, `<add key="DbPassword" value="..."/>`, k8s env."""
    kind = key_kind(m.group("key"))
    quoted = "q" in m.re.groupindex and m.group("q") is not None
    return kind and _named(kind, judge_value(m.string, kind, *target(m), quoted, "="))


def _url_password(db: bool):
    """user:password@ after `scheme://`; the regex starts at the literal `://` (fast search)."""
    def check(m: re.Match) -> Optional[tuple]:
        scheme = re.search(r"[A-Za-z][\w+.:-]{0,30}$", m.string[max(0, m.start() - 32):m.start()])
        if not scheme or bool(_DB_SCHEME_RE.search(scheme.group())) != db:
            return None
        return literal(m)
    return check


def _flag_value(m: re.Match) -> Optional[tuple]:
    """`--password X`, `--token=X`, `sshpass -p X`, `mysql -pX`, `curl -u user:X`."""
    a, b = target(m)
    value = m.string[a:b]
    if value.startswith(("-", "{{")) or len(value) < MIN_PASSWORD_LEN or stands_in_for_password(value):
        return None  # the next flag, `-p` alone (prompt), or a template (`-p{{kata sandi}}`: cut at its space)
    if "s2" in m.re.groupindex and m.start("s2") == a and _prose_follows(m.string, value, b):
        return None  # help text: `--password   Prompt for the password`
    flag = m.groupdict().get("flag")
    if flag and flag.lower() not in ("password", "passwd", "passphrase", "pass"):
        return (a, b) if looks_random(value) else None
    return a, b


def _authorization(m: re.Match) -> Optional[tuple]:
    """`Authorization: <scheme> <credential>` for any scheme but Basic (its own rule decodes it)."""
    if m.group("scheme").lower() in ("basic", "bearer"):
        return None
    return random(m)


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
    if _PATH_RE.match(value) and any(wordiness(p) >= 0.5 for p in value.split("/") if p):
        return None  # "Enter passphrase for /home/u/.ssh/id_ed25519:": a path with words in it
    return random(m)


def _generic(name: str, pattern: str, triggers, check=literal, anchored: bool = False,
             names: tuple = (), requires: tuple = (), one_line: bool = False, line_needs: str = "") -> None:
    add(name, pattern, triggers, check, needs_long=False, vendor=False, anchored=anchored,
        priority=PRIORITY_GENERIC, names=names, requires=requires, one_line=one_line,
        line_needs=line_needs)


# ---------------------------------------------------------------------------- rules
add("pem-private-key",
    r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----(?:[\s\S]{0,%d}?-----END \1-----"
    r"|(?:[ \t]*\r?\n[ \t]*[A-Za-z0-9+/=]{16,})+)" % MAX_PEM_SPAN, ["private key"], pem, needs_long=False, vendor=False, anchored=False, priority=PRIORITY_ARMOUR)
add("pem-private-key", r"\bLS0tLS1CRUdJTi[A-Za-z0-9+/]{40,}={0,2}", ["ls0tls1crudjti"], wrapped_pem,
    needs_long=False, vendor=False, anchored=False, priority=PRIORITY_ARMOUR)
add("putty-private-key", r"Private-Lines: \d+(?P<s>(?:\r?\n[A-Za-z0-9+/=]{8,})+)", ["private-lines"],
    literal, needs_long=False, vendor=False, anchored=False, priority=PRIORITY_ARMOUR)

_generic("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*){0,3}", ["eyj"], jwt)
_generic("jwt", r"\bZXlK[A-Za-z0-9+/]{40,}={0,2}", ["zxlk"], wrapped_jwt)
_generic("database-url", _USERINFO, ["://"], _url_password(db=True))
_generic("database-url", r"\bjdbc:oracle:\w+:(?P<u>[\w.$#-]+)/(?P<s>[^@\s\"'<>/]+)@", ["jdbc:oracle"])
_generic("url-credentials", _USERINFO, ["://"], _url_password(db=False))
_generic("bearer-token",
         r"\b(?i:bearer|authorization:[ \t]*(?:token|bot))[ \t]+(?P<s>[A-Za-z0-9._~+/-]{12,}=*)",
         ["bearer", "auth"], random, anchored=True)
_generic("authorization-header",
         r"""\b(?i:(?:proxy-)?authorization)["']?[ \t]*[:=][ \t]*["']?(?P<scheme>[A-Za-z][\w-]{1,24})[ \t]+"""
         r"(?P<s>[A-Za-z0-9._~+/-]{12,}=*)", ["auth"], _authorization, anchored=True)
_generic("basic-auth-credentials", r"\b(?i:basic)[ \t]+(?P<s>[A-Za-z0-9+/]{8,}={0,2})(?![\w+/=])",
         ["basic"], basic, anchored=True)


def _basic_in_prose(m: re.Match) -> Optional[tuple]:
    """`basic auth header value is dXNlcjpwYXNz`: a base64 `user:password` a few words after "basic"
    (each run of the window is decoded; the first that is one counts)."""
    for run in _B64_RUN_RE.finditer(m.string, m.start("w"), m.end("w")):
        span = basic(run)
        if span:
            return span
    return None


_B64_RUN_RE = re.compile(r"(?<![\w+/=])(?P<s>[A-Za-z0-9+/]{12,}={0,2})(?![\w+/=])")
_generic("basic-auth-credentials", r"\b(?i:basic)\b(?P<w>[^\n]{1,60})", ["basic"], _basic_in_prose, one_line=True)
_generic("netrc-password", r"\b(?i:machine)[ \t]+[\w.-]+(?:\s+(?:login|port|account)[ \t]+\S+){0,3}\s+"
         r"password[ \t]+(?P<s>\S+)", ["machine"], anchored=True)
_generic("cli-credential-flag",
         r"--(?:[\w-]*-)?(?P<flag>(?i:password|passwd|passphrase|pass|token|secret|api-?key|access-key|auth-token))"
         r"(?:=|[ \t]+)" + _VALUE, ["--"], _flag_value)
_generic("cli-credential-flag",
         r"\b(?:sshpass|(?:docker|podman|nerdctl|helm|buildah|skopeo|oras|crane|az|cf) (?:registry )?login)"
         r"\b[^\n]*?[ \t]-p[ \t]*['\"]?(?P<s>[^\s'\"]+)", ["sshpass", "login"], _flag_value)
_generic("cli-credential-flag", r"\bmysql\w*\b[^\n]*?[ \t]-p['\"]?(?P<s>[^\s'\"]+)", ["mysql"], _flag_value)
_generic("cli-credential-flag", r"\bsqlcmd\b[^\n]*?[ \t]-P[ \t]*['\"]?(?P<s>[^\s'\"]+)", ["sqlcmd"],
         _flag_value)
_generic("cli-credential-flag", r"\bredis-cli\b[^\n]*?[ \t]-a[ \t]+['\"]?(?P<s>[^\s'\"]+)", ["redis-cli"],
         _flag_value)
_generic("cli-credential-flag",
         r"\b(?:curl|wget|http|https|xh)\b[^\n]*?[ \t](?:-u|--user|-U|--proxy-user|-a|--auth)[ \t=]+"
         r"(?P<uq>['\"]?)[^\s:'\"]+:(?P<s>[^\s'\"]+)", ["curl", "wget", "http ", "https ", "xh "], _flag_value,
         anchored=True, line_needs="-")
# A YAML block scalar (`token: |` then the value indented on the next line) is one more value form.
_BLOCK = r"""(?:[|>][-+]?[ \t]*\r?\n[ \t]+(?P<s3>[^\s"'`]{4,400})|"""
_generic("cli-credential-flag", r"\bnet use\b[^\n]*?/user:\S+[ \t]+['\"]?(?P<s>[^\s/'\"][^\s'\"]*)", ["net use"],
         _flag_value)
_generic("cli-credential-flag", r"\bldap\w*\b[^\n]*?[ \t]-w[ \t]+['\"]?(?P<s>[^\s'\"]+)", ["ldap"], _flag_value)
_generic("cli-credential-flag", r"\bnet user\b[ \t]+\S+[ \t]+['\"]?(?P<s>[^\s/'\"*][^\s'\"]*)", ["net user"],
         _flag_value)
_generic("cli-credential-flag", r"\bConvertTo-SecureString\b[^\n]*?['\"](?P<s>[^'\"\n]+)['\"][^\n]*?-AsPlainText",
         ["convertto-securestring"], _flag_value)
# A password piped into a command that reads it from stdin: `echo 'x' | sudo -S apt update`,
# `echo x | passwd --stdin bob`, `echo 'bob:x' | chpasswd`, `echo x | docker login --password-stdin`,
# `sudo -S cmd <<< 'x'`. The echoed value must look typed or random: `echo 'hello' | sudo -S` in a
# tutorial, `echo "$PASS" | ...` and `echo password | ...` stay.
_ECHOED = (r"""\b(?:echo|printf)(?:[ \t]+-[A-Za-z]+)*(?:[ \t]+(?P<fq>['"])%[^'"\n]*(?P=fq))?[ \t]+"""
           r"""(?:(?P<q>['"])(?P<s>[^'"\n]{1,200}?)(?P=q)|(?P<s2>[^\s'"|;&<>]{1,200}))[ \t]*\|[ \t]*""")
_STDIN_READERS = (r"(?:sudo\b[^\n|]*?[ \t]-[A-Za-z]*S(?![\w-])|(?:sudo(?:[ \t]+-\w+)*[ \t]+)?(?:passwd\b[^\n|]*?"
                  r"[ \t]--stdin\b|(?P<pair>chpasswd\b))|[^\n|]*?[ \t]--password-stdin\b)")
_HERE_STRING = (r"""\bsudo\b[^\n]*?[ \t]-[A-Za-z]*S(?![\w-])[^\n]*?<<<[ \t]*"""
                r"""(?:(?P<q>['"])(?P<s>[^'"\n]{1,200}?)(?P=q)|(?P<s2>[^\s'"|;&<>]{1,200}))""")


def _piped_password(m: re.Match) -> Optional[tuple]:
    a, b = target(m)
    if "pair" in m.re.groupindex and m.group("pair"):  # chpasswd reads `user:password` lines
        colon = m.string.find(":", a, b)
        if colon < 0:
            return None
        a = colon + 1
    value = m.string[a:b]
    if value.startswith(("$", "`", "-")) or "\\n" in value or stands_in_for_password(value):
        return None  # a variable, a command substitution, a flag, `echo -e "x\nx"`, a placeholder
    if not (_typed_shape(value) or looks_random(value)):
        return None  # `echo 'hello' | sudo -S`: a word in a tutorial
    return a, b


def _typed_shape(value: str) -> bool:
    """A letter and a digit or symbol, or 4+ digits: how a typed password looks."""
    if value.isdigit():
        return len(value) >= MIN_PASSWORD_LEN and len(set(value)) > 1
    return (len(value) >= MIN_PASSWORD_LEN and any(c.isalpha() for c in value)
            and any(c.isdigit() or not c.isalnum() for c in value) and " " not in value)


# (gated by words other rules look up anyway: `--password-stdin` holds "password", a here-string "sudo")
_generic("cli-credential-flag", _ECHOED + _STDIN_READERS, ["sudo", "passwd", "password"], _piped_password, one_line=True)
_generic("cli-credential-flag", _HERE_STRING, ["sudo"], _piped_password, one_line=True)

# SQL (`CREATE USER .. IDENTIFIED BY 'x'`, MySQL and Oracle) and redis.conf (`requirepass x`).
_generic("password-assignment", r"\b(?i:identified[ \t]+(?:with[ \t]+\w+[ \t]+)?by[ \t]+(?:password[ \t]+)?)"
         r"(?P<q>['\"])(?P<s>[^'\"\n]+)(?P=q)", ["by '", 'by "'], one_line=True)  # lines with a quoted BY
_generic("password-assignment", r"(?m)^[ \t]*(?:requirepass|masterauth)[ \t]+(?P<s>\S+)", ["requirepass", "masterauth"],
         one_line=True)
# A presigned URL's signature: anyone holding the URL has the object until it expires.
_generic("presigned-url-signature", r"[?&](?i:x-amz-signature|x-goog-signature)=(?P<s>[A-Za-z0-9%/+=_~.-]{16,})",
         ["signature="], one_line=True)
# `htpasswd -b file user password`; with -n there is no file (`htpasswd -nbB user password`).
_generic("cli-credential-flag", r"\bhtpasswd(?=[^\n]*[ \t]-\w*b)"
         r"(?:(?=(?:[ \t]+-\w+)*[ \t]+-\w*n)(?:[ \t]+-\w+)+[ \t]+\S+|(?:[ \t]+-\w+)*[ \t]+\S+[ \t]+\S+)"
         r"[ \t]+['\"]?(?P<s>[^\s'\"]+)", ["htpasswd"], _flag_value)
# Between the keyword and its separator nothing crosses a line: a keyword with no `= : , <` or quote
# after it on its line (`PASSED [ 10%]` in pytest output) cannot start a match.
_generic("secret-assignment", "(?m)" + _NAME + _CLOSE + _TYPE + _OP + _BLOCK + _VALUE[3:], _KEYWORDS, _assignment,
         anchored=True, names=("password-assignment",), line_needs="=:,<\"'>→⇒")
_generic("secret-assignment",
         r"""(?P<q>["'`])(?P<s>[^\n"'`]{1,400})(?P=q)[ \t]*[!=]==?[ \t]*(?P<name>[\w.$]{0,40}?"""
         r"""(?i:pass|pwd|secret|token|key|credential|auth)[\w.]{0,40})""", ["==", "!="],
         _reverse_comparison, names=("password-assignment",), one_line=True)
_generic("secret-assignment",
         r"<(?P<tag>[\w.:-]{0,40}?(?i:pass|pwd|secret|token|key|credential|auth)[\w.:-]{0,40})"
         r"(?:[ \t][^<>\n]*)?>[ \t]*(?:\r?\n[ \t]*)?(?P<s>[^<>\s](?:[^<>\n]{0,400}?[^<>\s])?)[ \t]*"
         r"(?:\r?\n[ \t]*)?</(?P=tag)>", ["</"], _block, names=("password-assignment",),
         requires=_KEYWORDS)  # gated by "</": the keywords then gate only anchored rules (no scan)
_generic("secret-assignment",
         r"""\b(?i:name|key)["']?[ \t]*[=:][ \t]*(?P<nq>["']?)(?P<key>[\w.:-]{1,60})"""
         r"""(?P=nq)[ \t]*,?[ \t]*(?:\r?\n[ \t-]*)?["']?(?i:value|password)["']?[ \t]*[=:][ \t]*"""
         r"""(?:(?P<q>["'])(?P<s>[^"'\n]{1,400})(?P=q)|(?P<s2>[^\s"'<>,;}]{1,400}))""",
         ["name", "key"], _name_value, anchored=True,
         names=("password-assignment",), requires=("value", "password"))
_generic("secret-assignment",
         r"""\b(?i:name|key)=(?P<nq>["'])(?P<key>[\w.:-]{1,60})(?P=nq)[^<>\n]*>[ \t]*(?P<s>[^<>\s]{1,400})[ \t]*</""",
         ["name", "key"], _name_value, anchored=True, names=("password-assignment",),
         requires=("</",))
# `aws configure set aws_secret_access_key X`, `npm config set //reg/:_authToken X`: name then value
_generic("secret-assignment",
         r"""\b(?:(?:aws|az|gcloud) configure set|git config(?:[ \t]+--\w+)*|(?:npm|yarn|pnpm) config set"""
         r"""|set -[gU]?x|setx)[ \t]+(?P<key>[\w.:/@-]{2,80})[ \t]+['"]?(?P<s>[^\s'"]{4,400})""",
         ["configure set", "git config", "config set", "set -", "setx"], _name_value,
         names=("password-assignment",), one_line=True)
_generic("keyword-high-entropy",
         r"\b(?i:(?:secret|token|password|passwd|passphrase|api[ _-]?key|access[ _-]?key|credentials?)"
         r"s?(?![-.]?\w))"
         r"[^\n]{0,%d}?(?<![\w+/=.-])(?P<s>[A-Za-z0-9+/_.=-]{20,})" % KEYWORD_WINDOW,
         ["secret", "token", "pass", "api", "access", "credential"], _keyword_random, anchored=True)

# ---------------------------------------------------------------------------- standalone strings
# No name, no prefix: only the random-looking runs the engine already found are searched (in_runs),
# so prose pays nothing for these rules.
MIN_QUOTED_RANDOM = 32   # chars; 16-24-char quoted ids, cache keys and short hashes are common
MIN_QUOTED_ENTROPY = 4.0  # bits/char for non-hex values (random base64 of 32 chars ~4.7)
DIGEST_HEX_LENGTHS = frozenset({40, 56, 64, 96, 128})  # SHA-1/2 digests, git object ids
_B64_LINE_RE = re.compile(r"[A-Za-z0-9+/=]{60,}")
_DIGEST_LABEL_RE = re.compile(r"(?i)(?<![a-z])(?:sha\d*|md5|checksum|hash|digest|fingerprint|commit|integrity"
                              r"|etag|id|uuid|nonce|rev|revision|signature|sum|oid|salt|cid)(?![a-z])")
LABEL_LOOKBACK = 60      # chars before the value on its line where a digest label is looked for


def _line_before(text: str, a: int) -> str:
    return text[max(text.rfind("\n", 0, a) + 1, a - LABEL_LOOKBACK):a]


def _inside_base64_block(text: str, a: int) -> bool:
    """The last line of a PEM certificate or base64 blob: the line above is a long base64 line."""
    start = text.rfind("\n", 0, a)
    prev = text[text.rfind("\n", 0, max(start, 0)) + 1:max(start, 0)].strip()
    return start >= 0 and bool(_B64_LINE_RE.fullmatch(prev))


def _is_path(value: str) -> bool:
    """`/usr/share/locale/x/LC_MESSAGES/`, `src/a+b/PKG-INFO`: rooted, or made of wordy segments."""
    if _PATH_RE.match(value) or "://" in value:
        return True
    return sum(wordiness(p) >= 0.5 for p in value.split("/") if p) >= 2  # two word-like segments


def _aws_secret_shape(m: re.Match) -> Optional[tuple]:
    """A standalone 40-character base64 string with all of upper, lower and digits: the shape of an
    AWS secret access key (`f(foo, wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY)`). Hex digests and
    git ids lack capitals; pronounceable paths fail the randomness test."""
    a, b = m.span("s")
    value = m.string[a:b]
    if not (any(c.isupper() for c in value) and any(c.islower() for c in value)
            and any(c.isdigit() for c in value)) or not looks_random(value, 0.6):
        return None
    if _inside_base64_block(m.string, a) or _DIGEST_LABEL_RE.search(_line_before(m.string, a)):
        return None
    return a, b


def _quoted_random(m: re.Match) -> Optional[tuple]:
    """A long quoted literal of high entropy (`"2b00042f7481c7b0..."`, `'I6FwzQZFL9l-44nv...='`), as
    secret scanners flag them; not when labelled as a digest, id or signature on its line, nor a
    hex string of a digest's length."""
    a, b = m.span("s")
    value = m.string[a:b]
    is_hex = all(c in "0123456789abcdefABCDEF" for c in value)
    if is_hex and (len(value) in DIGEST_HEX_LENGTHS or not any(c.isdigit() for c in value)):
        return None
    if not is_hex and entropy(value.rstrip("=")) < MIN_QUOTED_ENTROPY:
        return None
    if not looks_random(value) or re.match(r"(?i)(?:sha|md)\d*[-:=_]", value) or _is_path(value):
        return None
    if _DIGEST_LABEL_RE.search(_line_before(m.string, a - 1)):
        return None
    return a, b


add("aws-secret-access-key", r"(?<![A-Za-z0-9/+_.-])(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=_.-])", (),
    _aws_secret_shape, needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC,
    in_runs=True)
add("high-entropy-string", r"""(?<=["'`])(?P<s>[A-Za-z0-9+/_-]{%d,}[A-Za-z0-9+/_=-]*)(?=["'`])""" % MIN_QUOTED_RANDOM,
    (), _quoted_random, needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC,
    in_runs=True)


# A label on a line of its own, the key alone on the next (a code fence may open between them):
# `config/master.key:` then its 32 hex digits, `**API key:**` then the key. The whole label line is
# the name (`Public key:`, `Host key fingerprint:` are not secrets) and the value must look random.
_LABEL_ABOVE = (r"(?i:pass|pw|secret|token|key|cred|auth)[\w./-]{0,40}?[ \t]*(?:\*\*|__)?[ \t]*[:：][ \t]*(?:\*\*|__)?"
                r"[ \t]*\r?\n(?:[ \t>]*(?:```|~~~)[\w-]*[ \t]*\r?\n)?"  # a fence may open
                r"[ \t>]*`?(?P<s>[A-Za-z0-9+/=_.-]{16,400})`?[ \t]*(?:\r?\n|\Z)")


def _key_under_label(m: re.Match) -> Optional[tuple]:
    text, a = m.string, m.start()
    line_start = text.rfind("\n", 0, a) + 1
    label = text[line_start:text.find(":", a) if text.find(":", a) >= 0 else a].strip(" \t>*_#-`")
    if not label or len(label) > 60 or _DIGEST_LABEL_RE.search(label) or "://" in label:
        return None
    kind = key_kind(re.sub(r"[^\w.]+", "_", label.replace("-", "_")))
    if kind is None:
        return None
    return _named(kind, (m.start("s"), m.end("s"))) if looks_secret_value(m.group("s")) else None


_generic("secret-assignment", _LABEL_ABOVE, _KEYWORDS, _key_under_label, anchored=True,
         names=("password-assignment",), line_needs=":：")
