"""Passwords on command lines of tools that take them their own way (`generic` reads `--password X`,
`-p` of docker/mysql/sshpass, `curl -u`, `redis-cli -a`, `net use`, piped and here-string passwords).

Each tool's own spelling: Java keytool (`-storepass X`), openssl (`-passout pass:X`, `enc -k X`),
FreeRDP / rdesktop (`/p:X`, `-p X`), Samba (`-U user%X`), ssh-keygen (`-N X`, `-P X`), zip (`-P X`),
7-Zip / RAR (`-pX`), SQL*Plus (`user/X@db`), lftp (`-u user,X`), ipmitool (`-P X`),
the MongoDB shell (`-p X`), SNMPv3 (`-A X`, `-X X`), `gh secret set NAME --body X`, a password
written to a file whose name names it (`echo 'x' > ~/.vault_pass.txt`), and here-strings into
commands that read one (`read -s PASS <<< "x"`, `vncpasswd -f <<< 'x'`). Every value is judged
as `--password` is (`generic._flag_value`: not a flag, a template or help text) or, when echoed,
as a piped password (`generic._piped_password`: typed or random).
"""
from __future__ import annotations

import re
from typing import Optional

from .generic import _ECHOED, _KEYWORDS, _flag_value, _generic, _piped_password
from .judge import key_kind

_V = r"""['"]?(?P<s>[^\s'"]+)"""  # the value, perhaps quoted

_generic("cli-credential-flag", r"(?<![\w-])-(?:src|dest|new)?(?:store|key)pass[ \t]+" + _V,
         ["storepass", "keypass"], _flag_value, one_line=True)
_generic("cli-credential-flag", r"(?<![\w-])-(?:pass(?:in|out)?|password|k)[ \t]+['\"]?pass:(?P<s>[^\s'\"]+)",
         ["pass:"], _flag_value, one_line=True)
_generic("cli-credential-flag", r"\bopenssl\b[^\n]*?[ \t]-k[ \t]+" + _V, ["openssl"], _flag_value, one_line=True)
_generic("cli-credential-flag", r"\b(?:[\w-]*freerdp[\w-]*|rdesktop)\b[^\n]*?[ \t][/-]p[: \t]" + _V,
         ["rdp", "rdesktop"], _flag_value, one_line=True)
_generic("cli-credential-flag", r"\bsmb\w*\b[^\n]*?[ \t](?:-U|--user(?:name)?)[ \t=]+['\"]?"
         r"[^\s%'\"]+%(?P<s>[^\s'\"]+)", ["smb"], _flag_value, one_line=True)
_generic("cli-credential-flag", r"\bssh-keygen\b[^\n]*?[ \t]-[NP][ \t]+" + _V, ["ssh-keygen"], _flag_value,
         one_line=True)
_generic("cli-credential-flag", r"\b(?:zip|zipcloak)\b[^\n]*?[ \t](?:-P|--password)[ \t]+" + _V, ["zip"], _flag_value,
         one_line=True)
_generic("cli-credential-flag", r"\b(?:7z[ar]?|rar|unrar)\b[^\n]*?[ \t]-p(?P<s>[^\s'\"-][^\s'\"]*)", ["7z", "rar "],
         _flag_value, one_line=True)
_generic("cli-credential-flag", r"\bsqlplus\b(?:[ \t]+-\w+)*[ \t]+['\"]?"
         r"[\w.$#-]+/(?P<s>[^\s@'\"/]+)(?=@|[\s'\"]|$)", ["sqlplus"],
         _flag_value, one_line=True)
_generic("cli-credential-flag", r"\blftp\b[^\n]*?[ \t]-u[ \t]+['\"]?[^\s,'\"]+,(?P<s>[^\s'\"]+)", ["lftp"],
         _flag_value, one_line=True)
_generic("cli-credential-flag", r"\bipmitool\b[^\n]*?[ \t]-P[ \t]+" + _V, ["ipmitool"], _flag_value, one_line=True)
_generic("cli-credential-flag", r"\bmongo(?:sh|dump|restore|import|export|stat|top)?\b[^\n]*?[ \t]-p[ \t]+" + _V,
         ["mongo"], _flag_value, one_line=True)
_generic("cli-credential-flag", r"\bgh[ \t]+secret[ \t]+set\b[^\n]*?[ \t](?:--body|-b)[ \t=]+" + _V, ["gh secret"],
         _flag_value, one_line=True)


_SNMP_FLAG_RE = re.compile(r"[ \t]-[AX][ \t]+['\"]?(?P<s>[^\s'\"]+)")


def _snmp(m: re.Match) -> Optional[list]:
    """SNMPv3's authentication (-A) and privacy (-X) passphrases: both, on one command line."""
    spans = []
    for flag in _SNMP_FLAG_RE.finditer(m.string, m.start("w"), m.end("w")):
        span = _flag_value(flag)
        if span:
            spans.append(span)
    return spans or None


_generic("cli-credential-flag", r"\bsnmp\w*\b(?P<w>[^\n]*)", ["snmp"], _snmp, one_line=True)


def _echoed_to_secret_file(m: re.Match) -> Optional[tuple]:
    """`echo 'x' > ~/.vault_pass.txt`, `printf '%s' x > /run/secrets/db_password`: a value written to
    a file whose name names a password, secret or token (Ansible's vault password file, Docker
    secrets, token files); judged as a piped password is."""
    stem = re.split(r"[/\\]", m.group("file"))[-1].lstrip(".").split(".")[0]
    return _piped_password(m) if stem and key_kind(stem) else None


# (gated by echo and printf: the keywords the file's name holds are on most lines of a text)
_generic("cli-credential-flag", _ECHOED[:-len(r"[ \t]*\|[ \t]*")] + r"[ \t]*>>?[ \t]*(?P<file>[^\s;&|<>]+)",
         ["echo", "printf"], _echoed_to_secret_file, one_line=True)
# A here-string into a command that reads a password: `read -s PASS <<< "x"` (a variable named for
# one), `vncpasswd -f <<< 'x'`, `passwd <<< ...`.
_generic("cli-credential-flag", r"""\b(?:read\b[^\n<]*?[ \t]\w*(?i:pass|pw|secret|token)\w*|[\w-]*passw?d\b[^\n<]*?)"""
         r"""[ \t]*<<<[ \t]*(?:(?P<q>['"])(?P<s>[^'"\n]{1,200}?)(?P=q)|(?P<s2>[^\s'"|;&<>]{1,200}))""",
         ["<<<"], _piped_password, one_line=True)
# Cisco IOS configuration: `enable secret 0 X`, `enable password X`, `username bob privilege 15
# password 0 X`, ` password 7 X` under a `line` (type 0 is the password in clear, type 7 a reversible
# encoding of it: both are it).
_generic("cli-credential-flag", r"(?m)^[ \t]*(?:(?:enable|username[ \t]+\S+(?:[ \t]+privilege[ \t]+\d+)?)[ \t]+"
         r"(?:password|secret)(?:[ \t]+[07])?|(?:password|secret)[ \t]+[07])[ \t]+(?P<s>\S+)[ \t]*$",
         ["password", "secret"], _flag_value, one_line=True)
# A .pgpass line: `host:port:database:user:password` (each field may be `*`), where "pgpass" is named.
_generic("password-assignment", r"(?m)^[ \t]*[\w*][\w.*-]*:(?:\d{1,5}|\*):[^\s:]+:[^\s:]+:(?P<s>\S+)[ \t]*$",
         ["pgpass"], _flag_value)


# rclone takes a remote's settings as `key value` pairs (or `key=value`) on the command line: `rclone
# config create s3 s3 access_key_id AKIA... secret_access_key X`, `rclone config update gd
# client_secret X`; `rclone obscure X` reads the password it obscures. A pair whose key names a
# secret or a password (`secret_access_key`, `pass`, `client_secret`, `token`, `key`) loses its
# value, `access_key_id` too (half of the pair; an AKIA id is redacted as such anyway).
_RCLONE_PAIR_RE = re.compile(r"""(?<![\w-])(?P<key>[A-Za-z][\w-]{0,40})(?:[ \t]+|=)(?P<q>['"]?)(?P<s>[^\s'"]+)(?P=q)""")


def _rclone_pairs(m: re.Match) -> Optional[list]:
    spans, pos, end = [], m.start("w"), m.end("w")
    while True:
        pair = _RCLONE_PAIR_RE.search(m.string, pos, end)
        if not pair:
            break
        key = pair.group("key").lower().replace("-", "_")
        if key_kind(key) or key in ("access_key_id", "pass", "password2", "pass2"):
            span = _flag_value(pair)
            if span:
                spans.append(span)
            pos = pair.end()
        else:
            pos = pair.start("s") if pair.group("q") == "" and pair.start("s") > pair.end("key") else pair.end("key")
    return spans or None


_generic("cli-credential-flag", r"\brclone[ \t]+config[ \t]+(?:create|update)\b(?P<w>[^\n]*)", ["rclone"], _rclone_pairs,
         one_line=True)
_generic("cli-credential-flag", r"\brclone[ \t]+obscure[ \t]+" + _V, ["rclone"], _flag_value, one_line=True)
