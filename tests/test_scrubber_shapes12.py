"""Round 12 of the scrubber (a new-user trial's leaks): password words of more languages, short user /
password pairs on one line (`u: admin p: X`), lock codes named by the lock ("Safe code 4821"), a
network's key after its name ("Wi-Fi HomeNet, key X"), Azure DevOps PATs, rclone settings, a
password in parentheses after its user ("admin (X)"), a password word after a comma mid-sentence
("Router im Keller, Kennwort X"). Every value is generated here (seeded, other words than the probe's);
each family has text with the same words that must stay."""
from __future__ import annotations

import random
import string

import pytest

from scrub_helpers import gone, untouched

ALNUM = string.ascii_letters + string.digits
SEEDS = range(8)


def typed(rng: random.Random) -> str:
    word = rng.choice(["Kask", "Ozols", "Pihlaja", "Bjork", "Javor", "Dab", "Salcie", "Meşe"])
    return word + str(rng.randint(10, 9999)) + rng.choice("!#%&*?@$")


def each_seed(make) -> None:
    for seed in SEEDS:
        text, secret = make(random.Random(seed))
        assert gone(text, secret), text
        assert gone(f"Notes from the move.\n\n{text}\n\nCall the landlord on Monday.", secret), text


@pytest.mark.parametrize("label", ["Parool", "parool", "Salasõna", "Kodeord", "Paswoord", "Tunnussana", "Lykilorð",
                                   "Wagwoord", "Kata laluan", "Palavra-passe", "Pasahitza", "Contrasinal",
                                   "Cyfrinair", "Fjalëkalimi", "Συνθηματικό", "패스워드", "비번", "סיסמא", "گذرواژه"])
def test_password_words_of_more_languages(label):
    each_seed(lambda r: (lambda v: (f"{label}: {v}", v))(typed(r)))
    each_seed(lambda r: (lambda v: (f"* **{label}:** `{v}`", v))(typed(r)))


def test_parola_and_parole_need_a_typed_value():
    each_seed(lambda r: (lambda v: (f"Parola: {v}", v))(typed(r)))
    each_seed(lambda r: (lambda v: (f"Parole: {v}", v))(typed(r)))
    for text in ("Parola: casa", "Paroles : Jacques Brel", "Parole: Liebe"):
        assert untouched(text), text


@pytest.mark.parametrize("shape", ["u: admin p: {v}", "U: admin, P: {v}", "u: root / p: {v}", "user: ops pass: {v}",
                                   "usr deploy pwd {v}", "Benutzer: verwalter Kennwort: {v}",
                                   "username=svc; password={v}"])
def test_a_user_then_a_password_on_one_line(shape):
    each_seed(lambda r: (lambda v: (shape.format(v=v), v))(typed(r)))


def test_user_password_pairs_leave_placeholders_and_prose():
    for text in ("u: admin p: $PASSWORD", "user: bob pass: none", "u: $USER p: DB_PASSWORD", "user: bob pass: ok",
                 "the login page / Settings", "user: alice password: <redacted>"):
        assert untouched(text), text


@pytest.mark.parametrize("shape", ["Safe code {v}", "safe code: {v}", "Tresor-Code {v}", "Code du coffre : {v}",
                                   "Gym locker: {v}", "safe combination {v}", "Safecode {v}"])
def test_lock_codes_named_by_the_lock(shape):
    each_seed(lambda r: (lambda v: (shape.format(v=v), v))("".join(r.choice(string.digits) for _ in range(r.randint(4, 6)))))


def test_lock_words_without_a_code_stay():
    for text in ("Safe: 2-3 days", "safe 2024", "the safe is 10-20 m away", "fail-safe: 1234",
                 "Safe mode: 1234", "Thread-safe since 3.12", "locker room 12"):
        assert untouched(text), text


@pytest.mark.parametrize("shape", ["Wi-Fi {n}, key {v}", "WiFi: {n}, password {v}", "WLAN {n}, Schlüssel {v}",
                                   "SSID {n} key {v}", 'Wi-Fi "{n} 5G", pass {v}', "wifi {n} / key: {v}"])
def test_a_networks_key_after_its_name(shape):
    def make(r):
        v, n = typed(r), r.choice(["Kodu", "Majas", "Casa", "Dom", "Talo"]) + str(r.randint(1, 99))
        return shape.format(n=n, v=v), v
    each_seed(make)


def test_network_words_without_a_key_stay():
    for text in ("Wi-Fi HomeNet, key type WPA2-PSK", "Wi-Fi 2.4GHz, password on the router label",
                 "SSID HomeNet key WPA2", "network policy, key rotation every 90 days", "WLAN Gast, Schlüssel im Flur"):
        assert untouched(text), text


def test_azure_devops_pats():
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    for shape in ("Azure DevOps PAT: {v}", "ADO token {v}", "export AZURE_DEVOPS_EXT_PAT={v}",
                  "git clone https://{v}@dev.azure.com/acme/app/_git/app", "vsts pat = {v}"):
        each_seed(lambda r: (lambda v: (shape.format(v=v), v))("".join(r.choice(alphabet) for _ in range(52))))
    assert untouched("sha256: ieqh746yng7by3a4rogubbbayn3bo47owoo5sb2glshv3mts7zc6")


def test_rclone_settings():
    each_seed(lambda r: (lambda v: (f"[backup]\ntype = s3\nprovider = Wasabi\naccess_key_id = ops\n"
                                    f"secret_access_key = {v}\n", v))(typed(r)))
    each_seed(lambda r: (lambda v: (f"[cloud]\ntype = mega\nuser = me@example.org\npass = {v}\n", v))(
        "".join(r.choice(ALNUM + "_-") for _ in range(24))))
    each_seed(lambda r: (lambda v: (f"rclone config create s3 s3 access_key_id AKIA secret_access_key {v}", v))(typed(r)))
    each_seed(lambda r: (lambda v: (f"rclone obscure '{v}'", v))(typed(r)))
    for text in ("rclone config create s3 s3 provider AWS", "access_key_id = my-access-key", "secret_access_key = $KEY"):
        assert untouched(text), text


@pytest.mark.parametrize("shape", ["admin ({v})", "NAS login: nasuser ({v})", "router: root ({v})",
                                   "Zugang: verwalter ({v})"])
def test_a_password_in_parentheses_after_its_user(shape):
    each_seed(lambda r: (lambda v: (shape.format(v=v), v))(typed(r)))


def test_parentheses_that_hold_no_password_stay():
    for text in ("admin (see vault)", "root (UID0)", "admin (v2.1.0)", "graphical apps (X11/Wayland)",
                 "log in as admin (the default account)", "root (0)"):
        assert untouched(text), text


@pytest.mark.parametrize("shape", ["Router im Keller, Kennwort {v}", "NAS at 10.0.0.5, password {v}",
                                   "usuario admin, contraseña {v}", "konto: jan; hasło {v}",
                                   "compte admin, mot de passe {v}", "kasutaja admin, parool {v}",
                                   "the printer is at 10.0.0.9, and the password {v}"])
def test_a_password_word_after_a_comma(shape):
    each_seed(lambda r: (lambda v: (shape.format(v=v), v))(typed(r)))


def test_a_password_word_after_a_comma_in_prose_stays():
    for text in ("Router im Keller, Kennwort vergessen", "NAS at 10.0.0.5, password reset via the web UI",
                 "users, passwords, keys", "On login, password managers autofill", "Hinweis, Kennwort ändern"):
        assert untouched(text), text


@pytest.mark.parametrize("shape", ["Bike lock: {v}", "Front door lock: {v}", "phone lock code {v}", "Door keypad {v}#",
                                   "Keypad: {v}", "Garage opener {s}", "gate opener {v}", "garage door opener {s}",
                                   "Locker 42, combination {c}", "suitcase lock combination {c}"])
def test_locks_named_by_what_they_lock_keypads_and_openers(shape):
    """A new-user trial's leaks: 'Bike lock: 5182', 'Door keypad 2468#', 'Garage opener 8 4 1 7',
    'Locker 42, combination 3-17-29' were stored as written."""
    def make(r):
        v = "".join(r.choice(string.digits) for _ in range(r.randint(4, 6)))
        values = {"v": v, "s": " ".join(v), "c": "-".join(str(r.randint(1, 39)) for _ in range(3))}
        key = "c" if "{c}" in shape else "s" if "{s}" in shape else "v"
        return shape.format(**values), values[key]
    each_seed(make)


def test_lock_keypad_and_opener_words_without_a_code_stay():
    for text in ("Lock: 1234", "mutex lock 1000", "lock 2048", "file lock: 0644", "screen lock timeout: 300",
                 "keypad 3x4 matrix", "the keypad has 12 keys", "Keypad 12 keys, 3 rows", "garage opener 2 remotes",
                 "garage door opener 2024 model", "Bike lock 2023 models", "door lock 15 minutes", "opener 2019",
                 "a linear combination 12-34", "Locker 12"):
        assert untouched(text), text
