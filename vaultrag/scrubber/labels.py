"""Passwords written the way people write them in notes: in prose, and labelled in their own language.

`generic.py` finds `password: x` in every file syntax; a note also says "the wifi password is
Tr0ub4dor&3" or "пароль: Qw3rty!24", and a vault in Polish, Chinese or Russian labels its passwords
in Polish, Chinese or Russian. Two rules:
- password-prose: a password word (password, passphrase, passcode, pre-shared key, PSK), at most a
  few words, then "is" / "was" and a value that is shaped like a typed password: 6-64 characters
  with a letter and a digit or symbol, not a placeholder, path, URL or hyphenated adjective
  (`case-sensitive`), or 4+ digits ("my password is 123456": digit runs are the commonest
  passwords) not followed by a unit; or 14+ lower-case letters run together that do not end as an
  adjective, participle or adverb does (`correcthorsebatterystaple`, not `indecipherable`); or a
  quoted group of 3-10 words none of which is a word of a sentence (`is "purple monkey
  dishwasher"`, not `is "not set"`). "The password is stored in 1Password", "the password policy
  is strict" and "the password is 8 characters" stay.
- password-label: a password label of another language (mot de passe, contraseña, senha, Kennwort,
  hasło, heslo, wachtwoord, lösenord, salasana, şifre, parolă, пароль, 密码, パスワード, 비밀번호,
  סיסמה, كلمة المرور, รหัสผ่าน, mật khẩu...) then `:` / `：` / `=` (or 是 / は / 는) and a value in
  printable ASCII (a label followed by words of its own script is prose: "пароль: в менеджере").
  Labels with a non-ASCII letter are looked up (str.find) only in texts that hold a non-ASCII
  character (`Rule.non_ascii`), and their regex runs only where one is found. Also labels:
  - English and German password words with 1-4 words qualifying them before a colon ("Password for
    the NAS:", "Passwort vom Router:", `Passwort (Router):`), unless a qualifier makes the label
    about the password ("policy", "type", "must", a copula) or the value is a label itself;
  - Wi-Fi keys, a network's password (`WLAN-Schlüssel:`, `Netzwerkschlüssel:`, `WPA2 key:`, `Wi-Fi
    key:`, `clé WPA :`, `clave wifi:`), 8-64 characters as WPA keys are;
  - a definition list's term (`Password` alone on its line, `: Sommer2024!` under it);
  - `pw` without a colon (`Wi-Fi: HomeNet / pw Sommer2024!`) and a typed password with a digit or a
    symbol: not `pwd` (a shell command), nor FreeBSD's `pw useradd bob`.
"""
from __future__ import annotations

import re
from typing import Optional

from .judge import (MIN_NUMERIC_PASSWORD, TYPED_SYMBOLS, _CAMEL_WORDS_RE, is_placeholder, key_kind, looks_random, numeric_password,
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
          r"(?:[\"'`«“‘](?P<words>[^\s\"'`«»“”‘’]{1,30}(?:[ \t][^\s\"'`«»“”‘’]{1,30}){1,9})[\"'`»”’]"
          r"|[\"'`«“‘]?(?P<s>[^\s\"'`«»“”‘’]{%d,64}))" % (MAX_PROSE_GAP, MIN_NUMERIC_PASSWORD))

_ASCII_LABELS = ("mot de passe", "contrasena", "senha", "kennwort", "wachtwoord", "salasana", "passord",
                 "adgangskode", "heslo", "haslo", "lozinka", "geslo", "jelszo", "sifre", "losenord",
                 "mat khau", "kata sandi", "contrasenya",
                 # et, nl (Flemish), da, fi, lt/is/et unaccented, af, ms, pt-PT, eo, cy, gl, eu, sw, sq, it
                 "parool", "paswoord", "kodeord", "tunnussana", "slaptazodis", "lykilord", "salasona",
                 "wagwoord", "kata laluan", "palavra-passe", "palavra passe", "pasvorto", "cyfrinair",
                 "contrasinal", "pasahitza", "nenosiri", "fjalekalimi", "fjalekalim", "parola d'ordine")
_OTHER_LABELS = ("contraseña", "hasło", "lösenord", "jelszó", "şifre", "parolă", "mật khẩu", "slaptažodis",
                 "пароль", "парола", "лозинка", "гасло", "κωδικός πρόσβασης", "κωδικός", "סיסמה",
                 "كلمة المرور", "كلمة السر", "رمز عبور", "गुप्तशब्द", "पासवर्ड", "รหัสผ่าน",
                 "密码", "密碼", "口令", "パスワード", "暗証番号", "비밀번호", "암호",
                 # et, is, el, ko (and its clipped 비번), he (common spelling), fa, sq, kk, ka, hy, ta, bn, ur
                 "salasõna", "lykilorð", "συνθηματικό", "패스워드", "비번", "סיסמא", "گذرواژه", "fjalëkalimi",
                 "fjalëkalim", "құпия сөз", "პაროლი", "գաղտնաբառ", "கடவுச்சொல்", "পাসওয়ার্ড", "پاس ورڈ")
# Short words may qualify the label: up to MAX_QUALIFIER_WORDS before its colon ("пароль от роутера:",
# "Contraseña del wifi de invitados:", "Passwort für das WLAN im Keller:": five words, leaking at the
# old three), up to three before a copula; a particle (是, は, 는) only right after it ("비밀번호는",
# not "...식별하는").
MAX_QUALIFIER_WORDS = 6  # "WLAN password of the guest network:", "password of the guest wifi network:"
_QUALIFIERS = r"(?:[ \t]+[^\s:：=.,;!?()\[\]{}\"'`]{1,20}){0,3}?"
_COLON_QUALIFIERS = _QUALIFIERS.replace("{0,3}?", "{0,%d}?" % MAX_QUALIFIER_WORDS)
_SEP = r"(?:%s[ \t]*[:：=](?:[ \t]*(?:\*\*|__))?|[ \t]*(?:是|为|為|は|는|은))[ \t]*" % _COLON_QUALIFIERS  # (`**Parool:** X`)
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


# Words of a sentence, not of a passphrase: a quoted group of words holding one is a message or a
# description ("is 'not set'", "was 'the same as before'").
_FUNCTION_WORDS = frozenset("""a an the and or but not no nor of to in on at by for from with as is are
    was were be been being it its this that these those if then than so too very can cannot could must
    should will would may might do does did done has have had set same you your we our they their he she
    his her my me us them any all some none every each only also just still yet here there where when
    what which who how why ask see use used stored saved kept shown sent""".split())
MIN_PASSPHRASE_WORDS = 3  # a quoted group of words after "is": 'is "purple monkey dishwasher"'


def _quoted_passphrase(value: str) -> bool:
    """3-10 words quoted after a copula, none a word of a sentence, not a placeholder."""
    words = value.split()
    return (MIN_PASSPHRASE_WORDS <= len(words) <= 10 and len(value) <= 64 and not is_placeholder(value)
            and not any(w.lower().strip(".,;:!?") in _FUNCTION_WORDS for w in words))


# A password of words typed together, in lower case ("is correcthorsebatterystaple"): as long as
# English words hardly are, and not ending as the adjectives, participles and adverbs that say
# what a password is ("required", "incorrect", "automatically", "indecipherable").
MIN_RUN_TOGETHER = 14  # letters; "unrecoverable" is 13, "incomprehensible" 16 but ends in -ible
_DESCRIPTIVE_ENDINGS = ("able", "ible", "tion", "sion", "ment", "ness", "less", "ly", "ed", "ing", "ic",
                        "ive", "ous", "ful", "ize", "ise", "ent", "ant", "ary", "ory", "al", "ity", "ism")


def _run_together(value: str) -> bool:
    return (len(value) >= MIN_RUN_TOGETHER and value.isascii() and value.isalpha() and value.islower()
            and not value.endswith(_DESCRIPTIVE_ENDINGS))


def _prose(m: re.Match) -> Optional[tuple]:
    text = m.string
    gap_words = re.findall(r"[A-Za-z]+", m.group("gap"))
    if any(w.lower() in _ABOUT_WORDS for w in gap_words[:2]):
        return None  # "the password policy is ...", "password reset is ..."
    if m.group("words") is not None:
        return (*m.span("words"), "password-prose") if _quoted_passphrase(m.group("words")) else None
    a, b = _without_sentence_end(text, *m.span("s"))
    return (a, b, "password-prose") if _given_in_prose(text[a:b], text, b) else None


def _given_in_prose(value: str, text: str, b: int, english: bool = True) -> bool:
    """A value prose gives as a password after "is" / "lautet" / a dash (ending at text[b]): a
    quoted group of words is a passphrase if no word of a sentence is among them; else a typed
    password that is not a quantity or a hyphenated adjective, or (after English "is") lower-case
    words run together (German compounds are lower-case words as long: "ist zwischengespeichert")."""
    if any(c.isspace() for c in value):
        return _quoted_passphrase(value)
    if english and _run_together(value):
        return True
    return _typed_in_prose(value) and not _a_quantity(value, text, b) and not _two_words(value)


def _two_words(value: str) -> bool:
    """`case-sensitive`, `auto-generated`, `write-only`: a hyphenated adjective, not a password (three
    or more words joined, `purple-monkey-dishwasher`, are a passphrase)."""
    return bool(re.fullmatch(r"[a-z]+-[a-z]+", value))


def _label(m: re.Match) -> Optional[tuple]:
    quoted = m.group("q") is not None
    a, b = m.span("s") if quoted else m.span("s2")
    text = m.string
    if not quoted:
        a, b = _without_sentence_end(text, a, b)
    value = text[a:b]
    if len(value) < 4 or stands_in_for_password(value) or _a_variable_name(value) or value.startswith(_NOT_VALUES):
        return None  # `hasło: password`, a variable's name, a path, or a marker of an earlier pass
    word = value.removeprefix("(")  # "mot de passe : (voir coffre)" too
    if not quoted and word and not any(c.isdigit() or not c.isalnum() for c in word) and text[b:b + 1] == " " \
            and text[b + 1:b + 2].isalpha():
        return None  # an ASCII word followed by more words: prose ("Kennwort: siehe Tresor")
    if any(g in m.re.groupindex and m.group(g) is not None for g in ("cop", "cop2")) \
            and (not _given_in_prose(value, text, b, _english_copula(m))
                 or ("qual" in m.re.groupindex and m.group("qual") is not None
                     and any(w.lower() in _ABOUT_WORDS for w in m.group("qual").split()))):
        return None  # "das Passwort ist geheim", "mot de passe - voir le coffre", "password policy is X"
    return a, b, "password-label"


# English and German password words with words qualifying them before the colon ("Password for
# the NAS:", "Passwort vom Router:", "WLAN password of the guest network:"); without them, generic.py
# reads `password: x` in every syntax.
_QUALIFIED_LABELS = ("password", "passwort", "passwd", "passphrase", "passcode", "parola")
_QUALIFIED_SEP = (r"(?P<qual>(?:[ \t]+[^\W_][\w-]{0,19}){1,%d}?(?:[ \t]*\([^()\n]{1,30}\))?)[ \t]*[:：][ \t]*"
                  r"(?:(?:\*\*|__)[ \t]*)?" % MAX_QUALIFIER_WORDS)  # words (and a parenthesis), a colon


def _qualified_label(m: re.Match) -> Optional[tuple]:
    """A password label with a qualifier: judged as a label is, unless a qualifier makes it about the
    password ("Password policy for admins:") or the value is itself a label (`psql:`)."""
    if any(w.lower() in _ABOUT_WORDS or w.lower() in _LABEL_ABOUT_WORDS for w in m.group("qual").split()):
        return None
    span = _label(m)
    return None if not span or m.string[span[1]:span[1] + 1] == ":" else span


# Words in a qualifier that make the label about the password, not the password itself.
_LABEL_ABOUT_WORDS = frozenset("""must should will can cannot could may needs need expired expires is was
    are were required incorrect wrong invalid forgotten forgot lost changed change updated stored saved
    sent type types format management mode kind id hash hashes hint size version protocol encryption
    cipher algorithm method generator index status regel regeln richtlinie richtlinien länge laenge
    anforderungen hinweis muss sollte wurde""".split()) | (frozenset(_COPULAS.split("|")) - {"to", "on"})
# ("to" and "on" are copulas in Polish and Finnish, and qualifiers in English: "Password to the NAS:")

# A Wi-Fi key is its network's password: `WLAN-Schlüssel: X`, `WPA2 key: X`, `Wi-Fi key: X`,
# `Netzwerkschlüssel: X`, `clé WPA : X`, `clave wifi: X`; WPA keys are 8-63 characters (or 64 hex).
# Gated by the key words (each trigger is one more lookup in every text; "key" and "psk" are looked
# up anyway) and the Romance words that come first; `Schlüssel` and `clé` in texts with a non-ASCII
# character.
_NETWORK = r"(?:wlan|wi-?fi|wpa[23]?|netzwerk(?:sicherheits)?)[ \t-]?"
_WIFI_KEYS = r"%s(?:key|psk)|(?:network|wireless)[ \t]+(?:security[ \t]+)?key|wpa[23]?[ \t-]psk" % _NETWORK
_ROMANCE_WIFI_KEY = (r"(?:%s)(?:[ \t]+(?:de|du|di|del|della|d[eu][ \t]+la))?[ \t-]+"
                     r"(?:wlan|wi-?fi|wpa[23]?|red|rete|réseau|reseau)")
_WIFI_KEY_TRIGGERS = ("key", "psk")  # (only their lines are searched: a network word in `requires` would
                                     # cost up to 9 scans of every large text, which holds "key")
MIN_WIFI_KEY, MAX_WIFI_KEY = 8, 64


def _wifi_key(m: re.Match) -> Optional[tuple]:
    span = _qualified_label(m)
    return span if span and MIN_WIFI_KEY <= span[1] - span[0] <= MAX_WIFI_KEY else None


def _bare_pw(m: re.Match) -> Optional[tuple]:
    """`pw Sommer2024!`, `Wi-Fi: HomeNet / pw Sommer2024!`: the abbreviation and a typed password with
    no colon. Not `pwd` (a shell command), a flag, a path or a bracket; the value needs a digit or a
    symbol typed into passwords (`pw useradd bob`: FreeBSD's user tool with its subcommand)."""
    a, b = _without_sentence_end(m.string, *m.span("s"))
    value = m.string[a:b]
    if value.startswith(("-", "(", "[", "{", "<", "\"", "'", "`")) \
            or not any(c.isdigit() or c in TYPED_SYMBOLS for c in value):
        return None
    return (a, b, "password-label") if _typed_in_prose(value) and not _a_quantity(value, m.string, b) else None




def _definition(m: re.Match) -> Optional[tuple]:
    """`Password` as a term on a line of its own (after nothing but `**` or `- `): then a label."""
    text, a = m.string, m.start()
    line = text[text.rfind("\n", 0, a) + 1:a]
    return _label(m) if not line.strip(" \t*-") else None


def _english_copula(m: re.Match) -> bool:
    cop = m.groupdict().get("cop")
    return cop is not None and cop.lower() in ("is", "was")


# Labels written in Chinese, Japanese or Korean follow other words without a space ("WiFi密码：",
# "路由器密码："): no word boundary before them.
_CJK = r"(?=[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])"  # kana, CJK ideographs, Hangul


def _labels(labels: tuple) -> str:
    return "|".join(re.escape(label).replace(r"\ ", "[ \t]") for label in sorted(labels, key=len, reverse=True))


add("password-prose", _PROSE, ["password", "passwd", "passphrase", "passcode", "pre-shared", "psk", "pw"], _prose,
    needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC, one_line=True)
add("password-label", r"\b(?i:%s)%s%s" % (_labels(_ASCII_LABELS), _SEP, _LABEL_VALUE), _ASCII_LABELS, _label,
    needs_long=False, vendor=False, anchored=True, priority=PRIORITY_GENERIC, line_needs=":=")
add("password-label", r"\b(?i:%s)%s%s" % (_labels(_PROSE_LABELS), _PROSE_SEP, _LABEL_VALUE), _PROSE_LABELS,
    _label, needs_long=False, vendor=False, anchored=True, priority=PRIORITY_GENERIC)
add("password-label", r"\b(?i:(?:wi-?fi |admin |root |user |guest |master |vpn |router |)(?:password|passwd"
    r"|passphrase|passcode|passwort))%s%s" % (_ENGLISH_SEP, _LABEL_VALUE),
    ["password", "passwd", "passphrase", "passcode", "passwort"],
    _label, needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC, one_line=True)
add("password-label", r"\b(?i:%s)%s%s" % (_labels(_QUALIFIED_LABELS), _QUALIFIED_SEP, _LABEL_VALUE),
    _QUALIFIED_LABELS, _qualified_label, needs_long=False, vendor=False, anchored=True,
    priority=PRIORITY_GENERIC, line_needs=":：")
# A definition list (Pandoc, MultiMarkdown): the password word alone on its line, `: value` under it.
add("password-label", r"(?i:password|passwort|passphrase|passcode|kennwort)(?:\*\*)?[ \t]*\n:[ \t]+%s"
    % _LABEL_VALUE, ["password", "passwort", "passphrase", "passcode", "kennwort"], _definition, needs_long=False,
    vendor=False, anchored=True, priority=PRIORITY_GENERIC, requires=("\n:",))
_WIFI_SEP = _QUALIFIED_SEP.replace("{1,", "{0,", 1)
add("password-label", r"\b(?i:%s|%s)%s%s" % (_WIFI_KEYS, _ROMANCE_WIFI_KEY % "clave|chiave", _WIFI_SEP, _LABEL_VALUE),
    _WIFI_KEY_TRIGGERS + ("clave", "chiave"), _wifi_key, needs_long=False, vendor=False, anchored=False,
    priority=PRIORITY_GENERIC, one_line=True)
add("password-label", r"\b(?i:%sschlüssel|%s)%s%s" % (_NETWORK, _ROMANCE_WIFI_KEY % "clé", _WIFI_SEP, _LABEL_VALUE),
    ["schlüssel", "clé"], _wifi_key, needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC,
    non_ascii=True)
add("password-label", r"(?<![\w./$-])(?i:pw)[ \t]+(?P<s>[!-~]{%d,64})" % MIN_PROSE_PASSWORD, ["pw"], _bare_pw,
    needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC, one_line=True)
add("password-label", r"(?:(?<!\w)|%s)(?i:%s)(?:%s|%s)%s" % (_CJK, _labels(_OTHER_LABELS), _SEP, _PROSE_SEP,
                                                             _LABEL_VALUE),
    tuple(dict.fromkeys(label.lower() for label in _OTHER_LABELS)), _label,
    needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC, non_ascii=True)


# Spanish "clave" is a password ("Clave: X", "clave del router: X") and a key of a table or a keyword
# ("palabra clave", "clave primaria: id"): its value must look typed or random, and not be a name.
_NOT_A_PASSWORD_CLAVE = r"(?:[ \t]+(?i:primaria|for[aá]nea|[uú]nica|compuesta|p[uú]blica|de[ \t]+b[uú]squeda))"


def _clave(m: re.Match) -> Optional[tuple]:
    span = _label(m)
    if not span:
        return None
    value = m.string[span[0]:span[1]]
    if re.fullmatch(r"[A-Za-z]+(?:[_.-][A-Za-z0-9]+)+", value) or not (_typed_password(value) or looks_random(value)):
        return None  # `clave: user_id`, `clave: valor`
    return span


add("password-label", r"(?<!\w)(?<!(?i:palabra) )(?<!(?i:palabras) )(?i:clave)(?!%s)%s%s" % (
    _NOT_A_PASSWORD_CLAVE, _SEP, _LABEL_VALUE), ["clave"], _clave, needs_long=False, vendor=False,
    anchored=False, priority=PRIORITY_GENERIC, one_line=True)

# "log in with password X", "and the password X", "use the admin password X": a password word after
# a preposition or a determiner, then a typed password with no colon or copula. The value needs a
# digit or a symbol typed into passwords, as after `pw` (`_bare_pw`): "with password reset" and
# "the password field" stay, and so does SQL's `password VARCHAR(255)` (no determiner before it).
_NAMED_SCHEMES_RE = re.compile(r"(?i)(?:sha|md[45]|bcrypt|scrypt|argon|pbkdf|crypt|hmac|ntlm|aes|rsa|des)[\w-]*")


def _password_after_a_word(m: re.Match) -> Optional[tuple]:
    """`_bare_pw`, and not a hash or cipher named after the word (`SHA256-style`, `AES-256`), an
    acronym in capitals (`WPA2-PSK`) or a hyphenated adjective (`base64-encoded`)."""
    value = m.group("s")
    bare = value.rstrip(".,;:!?)")
    if _NAMED_SCHEMES_RE.match(value) or re.fullmatch(r"[A-Z0-9_-]+|[a-z0-9]+(?:-[a-z]{2,})+", bare):
        return None
    return _bare_pw(m)


_LEAD_WORDS = r"(?i:with|using|use|and|new|the|my|our|your|his|her|their|its|plus)"
add("password-label", r"\b%s[ \t]+(?:(?i:wi-?fi|admin|root|user|guest|master|vpn|router|db|database|ssh|sudo)[ \t]+)?"
    r"(?i:password|passwort|passwd|passphrase|passcode)[ \t]+(?P<s>[!-~]{%d,64})" % (_LEAD_WORDS, MIN_PROSE_PASSWORD),
    ["password", "passwort", "passwd", "passphrase", "passcode"], _password_after_a_word, needs_long=False,
    vendor=False, anchored=False, priority=PRIORITY_GENERIC, one_line=True)


# The answer to a security question opens the account as a password does: `Security question answer:
# Fluffy`, `Secret answer: Springfield`, `Sicherheitsantwort: Bello`. The value runs to the end of the
# line (answers are words), unless it is prose about the answer ("must be 3 characters", "see vault").
_ANSWER_LABEL = (r"\b(?i:security[ \t-]+(?:question[ \t-]+)?answers?|secret[ \t-]+answers?"
                 r"|answer[ \t]+to[ \t]+(?:the[ \t]+|my[ \t]+)?security[ \t]+question|sicherheitsantwort|antwort[ \t]+(?:auf[ \t]+)?(?:die[ \t]+)?sicherheitsfrage)"
                 r"(?:[ \t]*\([^()\n]{1,30}\))?[ \t]*(?:\*\*|__)?[ \t]*[:：=][ \t]*(?:\*\*|__)?[ \t]*[\"'`]?"
                 r"(?P<s>[^\s\"'`][^\n\"'`]{0,58}?)[\"'`]?[ \t]*(?:\r?\n|\Z)")


def _answer(m: re.Match) -> Optional[tuple]:
    a, b = _without_sentence_end(m.string, *m.span("s"))
    value = m.string[a:b]
    words = value.lower().split()
    if not value or is_placeholder(value) or value.startswith(_NOT_VALUES) or value.startswith("[REDACTED"):
        return None
    if any(w.strip(".,;:!?()") in _FUNCTION_WORDS for w in words[:2]) or len(words) > 6:
        return None  # "must be set", "see the vault", "(stored in 1Password)": prose about it
    return a, b, "password-label"


add("password-label", _ANSWER_LABEL, ["answer", "antwort"], _answer, needs_long=False, vendor=False, anchored=False,
    priority=PRIORITY_GENERIC, one_line=True)

# A key emoji as the label (`🔑 Sommer2024!`, `🔐: X`): a typed password after it, as after `pw`.
add("password-label", r"(?:🔑|🔐|🗝\ufe0f?)[ \t]*(?:[:：=-][ \t]*)?(?P<s>[!-~]{%d,64})" % MIN_PROSE_PASSWORD,
    ["🔑", "🔐", "🗝"], _bare_pw, needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC,
    non_ascii=True, one_line=True)


# Words that name a password in one language and something else in another: Latvian "parole",
# Romanian / Turkish / Italian "parola" are Italian "words" / "word" and French "paroles" (lyrics):
# the value must look typed or random, as under "clave" (`Parola: casa` stays).
add("password-label", r"(?<!\w)(?i:parol[ae])%s%s" % (_SEP, _LABEL_VALUE), ["parol"], _clave,
    needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC, one_line=True)


# ---------------------------------------------------------------------------- words mid-line
# A password word that opens a clause of a line, after a comma, a semicolon, a slash or a dash,
# with no colon: "Router im Keller, Kennwort X", "NAS at 10.0.0.5, password X", "usuario admin;
# contraseña X". The value must look typed with a digit or symbol (`_password_after_a_word`): ",
# password reset", ", Passwort vergessen" and ", password SHA256-style" stay. The words are those
# of every language read here (a mid-line word is the same word as a label).
_MIDLINE_WORDS = ("password", "passwort", "passwd", "passphrase", "passcode", "pwd") + tuple(
    w for w in _ASCII_LABELS if w not in ("sifre",))  # (`sifre` is also an ASCII word: "sifre" = ciphers, ro)
_MIDLINE_OTHER = tuple(w for w in _OTHER_LABELS if not re.search(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]", w))
_CLAUSE_WORDS = frozenset("""and und et y e en och og ja i the my das le la el o a il het de der die wi-fi wifi wlan
    wireless admin root user guest master vpn router db ssh sudo""".split())
_MIDLINE = r"\b(?i:%s)[ \t]*(?::[ \t]*|[ \t]+)(?P<s>[!-~]{%d,64})"


def _opens_a_clause(text: str, i: int) -> bool:
    """text[i] starts a clause of its line: a comma, semicolon or pipe before it, or a spaced slash or
    dash, with at most two words between (and, the, a network or account word)."""
    for _ in range(3):
        j = i
        while j > 0 and text[j - 1] in " \t":
            j -= 1
        if j and (text[j - 1] in ",;|" or (text[j - 1] in "/–—-" and j > 1 and text[j - 2] in " \t")):
            return True
        k = j
        while k > 0 and (text[k - 1].isalpha() or text[k - 1] == "-"):
            k -= 1
        if k == j or j == i or text[k:j].lower() not in _CLAUSE_WORDS:
            return False
        i = k
    return False


def _midline(m: re.Match) -> Optional[tuple]:
    return _password_after_a_word(m) if _opens_a_clause(m.string, m.start()) else None


add("password-label", _MIDLINE % (_labels(_MIDLINE_WORDS), MIN_PROSE_PASSWORD), _MIDLINE_WORDS, _midline,
    needs_long=False, vendor=False, anchored=True, priority=PRIORITY_GENERIC)
add("password-label", _MIDLINE.replace("\\b", "(?<!\\w)", 1) % (_labels(_MIDLINE_OTHER), MIN_PROSE_PASSWORD),
    tuple(dict.fromkeys(v for w in _MIDLINE_OTHER for v in (w, w.capitalize(), w.upper()))), _midline,
    needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC, non_ascii=True, one_line=True)

# A network's name, then its key or password with no label colon: "Wi-Fi HomeNet, key X", "SSID
# HomeNet key X", "WLAN Gast / Schlüssel X", "wifi HomeNet pass X". A network word opens the line's
# clause, the name is 1-40 characters (a quoted name may hold spaces), then the key word.
_NET_KEY_WORDS = (r"key|psk|pass|password|passwort|passwd|pw|pwd|kennwort|schlüssel|schluessel|clé|cle|clave"
                  r"|chiave|senha|wachtwoord|lösenord|losenord|passord|salasana|hasło|haslo|heslo|пароль|密码|密碼")
_NET_KEY = (r"(?<![\w-])(?i:wi-?fi|wlan|ssid|wireless|network|netzwerk|reseau|red|rete)(?:[ \t]*:)?[ \t]+"
            r"(?:[\"'“‘«][^\n\"'”’»]{1,40}[\"'”’»]|[^\s,;/|:\"']{1,32})"
            r"(?:[ \t]*[,;/|(][ \t]*|[ \t]+(?:[-–—][ \t]+)?)(?:(?i:and|und|et|y|the|der|die|le|la|el)[ \t]+)?"
            r"(?i:%s)[ \t]*(?:[:=][ \t]*|[ \t]+)(?P<s>[!-~]{%d,64})" % (_NET_KEY_WORDS, MIN_PROSE_PASSWORD))


def _network_key(m: re.Match) -> Optional[tuple]:
    """`_password_after_a_word` without its capitals test: a WPA key may be all capitals and digits."""
    a, b = _without_sentence_end(m.string, *m.span("s"))
    value = m.string[a:b]
    if value.startswith(("-", "(", "[", "{", "<", "$", "%")) or _NAMED_SCHEMES_RE.match(value) \
            or re.fullmatch(r"[a-z0-9]+(?:-[a-z]{2,})+|WPA\d?[\w-]*|\d+(?:[.,]\d+)*(?:[a-zA-Z]{1,3})?", value):
        return None  # `WPA2-PSK`, `base64-encoded`, `2.4GHz`, a flag, a template
    if not any(c.isdigit() or c in TYPED_SYMBOLS for c in value) or not _typed_in_prose(value):
        return None
    return (a, b, "password-label") if not _a_quantity(value, m.string, b) else None


add("password-label", _NET_KEY, ["wifi", "wi-fi", "wlan", "ssid", "wireless", "network", "netzwerk", "reseau", "red ",
                                 "rete"], _network_key, needs_long=False, vendor=False, anchored=True,
    priority=PRIORITY_GENERIC)

# ---------------------------------------------------------------------------- a user, then a password
# `u: admin p: X`, `user: bob pass: X`, `U: admin, P: X`, `usr admin pwd X`: a short user label and a
# name, then a short password label on the same line. With colons any value but a stand-in counts
# (as after `password:`); without, a typed one with a digit or symbol.
_USER_LABEL = (r"(?i:u|usr|user(?:name)?|login|benutzer(?:name)?|nutzer|uid|acct|account|usuario|utilisateur"
               r"|utente|gebruiker|anv|användare|bruker|käyttäjä|kayttaja|użytkownik|uzytkownik|login-id)")
_PASS_LABEL = r"(?i:p|pw|pwd|pass|passw|passwd|password|pword|passwort|pass-?wort|kennwort|pwort|mdp|kw)"
_USER_PASS = (r"(?<![\w./$-])%s[ \t]*(?P<c1>[:=])[ \t]*[\w.@+\\-]{1,64}[ \t]*(?:[,;/|][ \t]*|[ \t]+)%s[ \t]*"
              r"(?P<c2>[:=])[ \t]*(?P<s>[!-~]{4,64})" % (_USER_LABEL, _PASS_LABEL))
_USER_PASS_BARE = (r"(?<![\w./$-])(?i:usr|user(?:name)?|login|benutzer)[ \t]+[\w.@+\\-]{1,64}[ \t]*[,;/|]?[ \t]+"
                   r"(?i:p|pw|pwd|pass|passwd|password|passwort|kennwort)[ \t]+(?P<s>[!-~]{%d,64})" % MIN_PROSE_PASSWORD)


def _user_then_password(m: re.Match) -> Optional[tuple]:
    a, b = _without_sentence_end(m.string, *m.span("s"))
    value = m.string[a:b]
    if not value or stands_in_for_password(value) or value.startswith(_NOT_VALUES) or value.startswith("[REDACTED"):
        return None
    if _a_variable_name(value) or (len(value) < 6 and not _typed_password(value)):
        return None  # `u: $USER p: DB_PASSWORD`, `p: ok`
    return a, b, "password-label"


add("password-label", _USER_PASS, ["u:", "u=", "u :", "usr", "user", "login", "benutzer", "nutzer", "uid", "acct",
                                   "account", "usuario", "utilisateur", "utente", "gebruiker", "anv", "bruker",
                                   "kayttaja", "uzytkownik"],
    _user_then_password, needs_long=False, vendor=False, anchored=True, priority=PRIORITY_GENERIC, line_needs=":=")
add("password-label", _USER_PASS_BARE, ["usr", "user", "login", "benutzer"], _password_after_a_word, needs_long=False,
    vendor=False, anchored=True, priority=PRIORITY_GENERIC)

# ---------------------------------------------------------------------------- a password in parentheses
# "admin (X)", "NAS login admin (X)", "router: root (X)": an account name and its password in
# parentheses after it. A well-known account name (admin, root, pi...) or a line about logging in
# (login, user, account, password words) makes the parenthesis a password, when its content is typed
# as passwords are: a digit and a symbol or both letter cases, no space (`admin (v2.1)`, `root (UID0)`,
# `admin (see vault)` stay).
_ACCOUNTS = frozenset("""admin administrator root sa pi ubuntu guest postgres sysadmin superuser su
    ec2-user oracle operator webadmin""".split())
_LOGIN_RE = re.compile(r"(?i)log[ -]?in|logon|sign[ -]?in|\buser(?:name)?[ \t]*[:=]|\baccount[ \t]*[:=]|\bcreds?\b"
                       r"|credential|passw|\bpw\b|kennwort|zugang|benutzer|anmeld|identifiant|usuario|utente|gebruiker")
_PAREN = r"\((?P<s>[^\s()]{6,64})\)"  # (the regex starts at the literal; the user is read back from it)
_USER_BEFORE_RE = re.compile(r"(?<![\w.@-])[A-Za-z][\w.@-]{0,31}[ \t]+\Z")


def _in_parentheses(m: re.Match) -> Optional[tuple]:
    text, value = m.string, m.group("s")
    if not m.start() or text[m.start() - 1] not in " \t":
        return None  # `f(x1)`: a call, not a user and a parenthesis
    before = _USER_BEFORE_RE.search(text, max(0, m.start() - 40), m.start())
    if not before:
        return None
    user = before.group().strip().lower()
    if user not in _ACCOUNTS:
        line = text[text.rfind("\n", 0, m.start()) + 1:before.start()]
        if not _LOGIN_RE.search(line) or _LOGIN_RE.fullmatch(user):
            return None
    if not any(c.isdigit() for c in value) or is_placeholder(value) or value.startswith(_NOT_VALUES) \
            or re.fullmatch(r"[\w.-]+(?:/[\w.-]+)+", value):
        return None  # (`X11/Wayland`: alternatives, a path)
    if not (any(c in TYPED_SYMBOLS for c in value) or (any(c.islower() for c in value)
                                                          and any(c.isupper() for c in value))):
        return None  # `root (UID0)`, `admin (v2.1)`, `user (id 42)`
    if _NAMED_SCHEMES_RE.match(value) or _a_variable_name(value) or re.fullmatch(r"[A-Za-z]+\d*[-_.]?\d*", value) \
            and not any(c in TYPED_SYMBOLS for c in value) and sum(c.isupper() for c in value) <= 1:
        return None  # `admin (SHA256)`, `admin (Ubuntu22)`: a word and its number
    return m.start("s"), m.end("s"), "password-label"


_ACCOUNT_TRIGGERS = sorted(a for a in _ACCOUNTS if len(a) > 2)  # (`sa`, `pi`, `su`: in most lines; found with a login word)
add("password-label", _PAREN, sorted(set(_ACCOUNT_TRIGGERS) | {"login", "user", "account", "passw", "pw", "cred", "kennwort",
                                                 "zugang", "benutzer", "anmeld", "konto"}),
    _in_parentheses, needs_long=False, vendor=False, anchored=False, priority=PRIORITY_GENERIC, one_line=True,
    requires=(" (",))
# The same account names with an arrow to their password: `root -> X`, `admin → X` (typed as after `pw`).
add("password-label", r"(?<![\w.@/-])(?i:%s)[ \t]+(?:->|→|⇒|=>)[ \t]+(?P<s>[!-~]{%d,64})" % (
    "|".join(sorted(_ACCOUNT_TRIGGERS, key=len, reverse=True)), MIN_PROSE_PASSWORD), _ACCOUNT_TRIGGERS,
    _password_after_a_word, needs_long=False, vendor=False, anchored=True, priority=PRIORITY_GENERIC,
    line_needs=">→⇒")
