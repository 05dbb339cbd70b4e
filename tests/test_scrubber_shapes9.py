"""Round 9 of the scrubber: secrets in shapes no earlier test had. Labels qualified before their
colon, Wi-Fi keys, `pw` without a colon, arrows, quoted passphrases and run-together words after
"is", passwords piped into `sudo -S`, recovery codes and keys, wallet keys, CVV words of other
languages, spaced and combination codes, SSNs, and vendor shapes that slipped. Every value is
generated here (seeded); each shape has prose around it that uses the same words and must stay."""
from __future__ import annotations

import random
import string

import pytest

from vaultrag.scrubber import engine, scrub

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
SEEDS = range(12)


def pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def typed(rng: random.Random) -> str:
    """A password as people type them: a word, digits, a symbol (`Sommer2024!`)."""
    word = rng.choice(["Sommer", "Winter", "Katze", "Blue", "Tiger", "Lemon", "Fuchs", "Ocean"])
    return word + str(rng.randint(10, 9999)) + rng.choice("!#%&*?@$")


def gone(text: str, secret: str) -> bool:
    clean, findings = scrub(text)
    return secret not in clean and bool(findings)


def untouched(text: str) -> bool:
    return scrub(text) == (text, ())


def both_ways(make, seeds=SEEDS) -> None:
    """Each generated (text, secret) is redacted alone, and inside large noise with the same findings."""
    for seed in seeds:
        text, secret = make(random.Random(seed))
        assert gone(text, secret), text
        alone, found = scrub(text)
        noise = NOISE * (2 + engine.SELF_GATE_MIN_CHARS // len(NOISE))
        mixed, found_mixed = scrub(noise + text + "\n" + noise)
        assert mixed == noise + alone + "\n" + noise, text
        lines = noise.count("\n")
        assert [(f.rule, f.line + lines) for f in found] == [(f.rule, f.line) for f in found_mixed]


# The words of the new rules, in text that holds no secret (and exercises the large-text paths).
NOISE = ("The PIN header on the board has 40 pins; pin 13 is the LED.\n"
         "Recovery codes are shown once. The recovery key ID is listed in the portal.\n"
         "SSN format is AAA-GG-SSSS; the combo box lists 3 items.\n"
         "echo 'hello' | sudo -S true; pwd; the password is required (case-sensitive).\n"
         "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n"
         "Network key type: WPA2-Personal 🚀 naïve\n")


def test_noise_alone_is_untouched():
    assert untouched(NOISE) and untouched(NOISE * 40)


# ---------------------------------------------------------------------------- labels
@pytest.mark.parametrize("label", [
    "Password for the NAS", "Passwort vom Router", "Passwort (Router)", "WLAN password of the guest network",
    "passphrase for the backup disk", "Passwort für das WLAN"])
def test_a_password_label_with_a_qualifier_before_its_colon(label):
    both_ways(lambda r: (lambda s: (f"{label}: {s}", s))(typed(r)))


@pytest.mark.parametrize("label", [
    "WLAN-Schlüssel", "Netzwerkschlüssel", "Netzwerksicherheitsschlüssel", "WPA-Key", "WPA2 key", "Wi-Fi key",
    "wifi key for the guests", "clé WPA", "clave wifi", "chiave di rete"])
def test_a_wifi_key_is_a_password(label):
    both_ways(lambda r: (lambda s: (f"{label}: {s}", s))(typed(r) + pick(r, ALNUM, 2)))


@pytest.mark.parametrize("text", [
    "Password for the NAS: see vault", "Password for user postgres: ", "Password policy for admins: Min8Chars!",
    "Password for the NAS must be: Min8Chars!", "Password for 'https://github.com': ", "Die Passwort Regeln lautet: min-12",
    "WPA2 key: on the router sticker", "WPA key: AES", "network key: see sticker", "Network key type: WPA2-Personal",
    "Wi-Fi key management: WPA2-PSK", "struct passwd *pw = getpwuid(uid); printf(\"%s\", pw->pw_dir);",
    "Enter passphrase for /home/u/.ssh/id_ed25519: "])
def test_qualified_labels_leave_prose_and_code(text):
    assert untouched(text)


@pytest.mark.parametrize("form", ["Wi-Fi: HomeNet / pw {}", "PW {}", "user admin, pw {}", "login bob pw {} (old)"])
def test_pw_without_a_colon(form):
    both_ways(lambda r: (lambda s: (form.format(s), s))(typed(r)))


@pytest.mark.parametrize("text", [
    "pw useradd bob -m", "pwd", "pw -V /etc useradd", "the pw hash: abc", "pw 1200mAh", "pw (optional)",
    "pw_dir /home/x", "cd /usr/sbin/pw lock bob", "pw groupmod wheel -m bob"])
def test_pw_words_and_commands_stay(text):
    assert untouched(text)


@pytest.mark.parametrize("arrow", ["->", "=>", "→"])
def test_arrow_separators(arrow):
    both_ways(lambda r: (lambda s: (f"API secret {arrow} {s}", s))(pick(r, ALNUM, 24)))
    both_ways(lambda r: (lambda s: (f"NAS password {arrow} {s}", s))(typed(r)))


@pytest.mark.parametrize("text", [
    "pw->pw_name", "\\password -> hashPassword password", "password -> password.trim()", "token -> token.value",
    '"password" -> handlePassword()', "key -> value", "secret -> secret_name", "tokens -> parse tokens"])
def test_arrows_in_code_stay(text):
    assert untouched(text)


WORDS = ("purple monkey dishwasher lantern copper zebra violet walnut harbor meadow falcon ember "
         "granite saddle thistle").split()


def test_a_quoted_passphrase_after_a_copula():
    both_ways(lambda r: (lambda s: (f'{r.choice(["Passphrase is", "The wifi passphrase was", "the password is"])} "{s}"', s))(
        " ".join(r.sample(WORDS, r.randint(3, 5)))))


def test_lower_case_words_run_together_after_password_is():
    both_ways(lambda r: (lambda s: (f"ssh root@10.0.0.5 password is {s}", s))(
        "".join(r.sample(WORDS, 3)) + r.choice(["staple", "horse", "rock"])))


@pytest.mark.parametrize("text", [
    "the password is required", "the password is incorrect", "the password is stored in the vault",
    "the password is hashed with bcrypt", "the password is case-sensitive", "the password is automatically generated",
    "the password is indecipherable", "the password is unrecoverable", 'the passphrase is "not set"',
    'the password was "the same as before"', 'the passphrase is "long and random"', 'The error is "password is too short"',
    'the password is "Remember me on this device"', "the password is alphanumeric", "the password is passwordless",
    "the password is interchangeable", "Das Passwort ist zwischengespeichert"])
def test_prose_about_a_password_stays(text):
    assert untouched(text)


# ---------------------------------------------------------------------------- piped into a command
@pytest.mark.parametrize("form", [
    "echo '{}' | sudo -S apt update", "echo {} | sudo -kS apt update", 'echo "{}" | passwd --stdin bob',
    "echo 'root:{}' | chpasswd", "printf '%s\\n' '{}' | sudo -S true", "sudo -S apt update <<< '{}'",
    "echo -n '{}' | docker login registry.local -u me --password-stdin"])
def test_a_password_piped_into_a_command(form):
    both_ways(lambda r: (lambda s: (form.format(s), s))(typed(r)))


@pytest.mark.parametrize("text", [
    "echo 'hello' | sudo -S apt update", 'echo "$PASSWORD" | sudo -S apt update',
    "echo $TOKEN | docker login -u x --password-stdin", "echo password | sudo -S ls", "cat pw.txt | sudo -S ls",
    'echo "test" | sudo -S cat', 'echo "$(cat ~/.pw)" | sudo -S ls', 'echo "${PW}" | sudo -S ls'])
def test_piped_words_and_variables_stay(text):
    assert untouched(text)
