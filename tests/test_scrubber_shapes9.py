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

from scrub_helpers import gone, untouched

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
    "wifi key for the guests", "clé WPA", "clé wifi", "clave wifi", "chiave di rete", "Network security key"])
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
    "echo 'root:{}' | chpasswd", "echo 'deploy:{}' | sudo chpasswd", "echo {} | sudo passwd --stdin bob", "printf '%s\\n' '{}' | sudo -S true", "sudo -S apt update <<< '{}'",
    "echo -n '{}' | docker login registry.local -u me --password-stdin"])
def test_a_password_piped_into_a_command(form):
    both_ways(lambda r: (lambda s: (form.format(s), s))(typed(r)))


@pytest.mark.parametrize("text", [
    "echo 'hello' | sudo -S apt update", 'echo "$PASSWORD" | sudo -S apt update',
    "echo $TOKEN | docker login -u x --password-stdin", "echo password | sudo -S ls", "cat pw.txt | sudo -S ls",
    'echo "test" | sudo -S cat', 'echo "$(cat ~/.pw)" | sudo -S ls', 'echo "${PW}" | sudo -S ls'])
def test_piped_words_and_variables_stay(text):
    assert untouched(text)


# ---------------------------------------------------------------------------- recovery codes and keys
def digit_code(rng: random.Random, n: int = 8) -> str:
    return str(rng.randint(10 ** (n - 1), 10 ** n - 1))


def test_digit_recovery_codes_on_the_labels_line():
    def make(r):
        codes = [digit_code(r) for _ in range(r.randint(2, 8))]
        return f"{r.choice(['Recovery codes', 'Backup codes', '2FA codes'])}: {' '.join(codes)}", codes[-1]
    both_ways(make)
    for seed in SEEDS:  # every code goes, not only the last
        text, _ = make(random.Random(seed))
        assert not any(c.isdigit() for c in scrub(text)[0].split(":", 1)[1].replace("recovery-codes", ""))


@pytest.mark.parametrize("form", [
    "## Recovery codes\n```\n{}\n```\n", "GitHub recovery codes\n\n{}\n", "**Recovery codes**\n~~~\n{}\n~~~\n",
    "### Backup codes (GitHub)\n{}\n"])
def test_recovery_codes_under_a_heading(form):
    def make(r):
        codes = [f"{pick(r, HEX, 5)}-{pick(r, HEX, 4)}{r.randint(0, 9)}" for _ in range(16)]
        return form.format("\n".join(codes)), codes[r.randrange(16)]
    both_ways(make)


@pytest.mark.parametrize("text", [
    "Recovery codes are shown once.", "## Recovery codes\nRecovery codes are shown once.\n",
    "## Backup codes\n\n- v2.1 released\n- 2024-01-05 generated", "Backup codes: 10 codes generated 2024-01-05",
    "## Recovery codes\n```\nabc\n```", "Use recovery codes\n12 codes\n", "## Recovery codes\n\n1. 2024-01-05\n"])
def test_lines_about_recovery_codes_stay(text):
    assert untouched(text)


def bitlocker(rng: random.Random) -> str:
    return "-".join(f"{rng.randint(0, 65535) * 11:06d}" for _ in range(8))  # each block a multiple of 11


def test_a_bitlocker_key_by_its_shape_alone():
    both_ways(lambda r: (lambda s: (r.choice([s, f"BitLocker recovery key: {s}", f"- laptop: {s}"]), s))(bitlocker(r)))


@pytest.mark.parametrize("label", [
    "recovery key", "Apple ID recovery key", "Wiederherstellungsschlüssel", "clé de récupération",
    "the recovery key is", "Recovery Key (laptop)", "clave de recuperación", "chiave di ripristino"])
def test_a_recovery_key_under_its_label(label):
    sep = " " if label.endswith(" is") else ": "
    both_ways(lambda r: (lambda s: (f"{label}{sep}{s}", s))(
        "-".join(pick(r, string.ascii_uppercase + string.digits, 4) for _ in range(r.randint(4, 8)))))
    both_ways(lambda r: (lambda s: (f"{label}{sep}{s}", s))("-".join(digit_code(r, 4) for _ in range(6))))


@pytest.mark.parametrize("text", [
    "Recovery key ID: 4B2F1E9A-1234-5678-9ABC-DEF012345678", "recovery key format is XXXX-XXXX-XXXX-XXXX",
    "recovery key: Keep-This-Safe-Always", "The recovery key is shown once.", "000000-000000-000000-000000-000000-000000-000000-000000",
    "serial 123456-234567-345678", "part 123456-234567-345678-456789-567890-678901-789012-890123-901234"])
def test_recovery_key_lookalikes_stay(text):
    assert untouched(text)


# ---------------------------------------------------------------------------- wallets
def wif(rng: random.Random) -> str:
    return rng.choice(["5" + pick(rng, BASE58, 50), rng.choice("KL") + pick(rng, BASE58, 51)])


def eth_key(rng: random.Random) -> str:
    return rng.choice(["0x", ""]) + pick(rng, HEX, 64)


@pytest.mark.parametrize("form", [
    "private key: {}", "Private key (WIF): {}", "MetaMask private key {}", "Private Key: `{}`", "Privater Schlüssel: {}",
    "Private key:\n{}", "- **private key:** {}", "clé privée : {}", "privkey = {}"])
def test_a_wallet_private_key_under_its_label(form):
    both_ways(lambda r: (lambda s: (form.format(s), s))(wif(r)))
    both_ways(lambda r: (lambda s: (form.format(s), s))(eth_key(r)))


def test_wallet_key_shapes_elsewhere_stay():
    for seed in SEEDS:
        r = random.Random(seed)
        digest, key = pick(r, HEX, 64), eth_key(r)
        for text in (f"sha256: {digest}", f"private key fingerprint (sha256): {digest}", f"address: 0x{digest[:40]}",
                     f"tx {key}", f"commit {digest[:40]}", f"private key hash: {digest}", f"wallet private key id {key}",
                     "wallet address: 1BoatSLRHtKNngkdXEeobR76b53LETtpyT",
                     "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", f"checksum {digest}\nnext line"):
            assert untouched(text), text


def test_bip32_extended_private_keys_and_not_public_ones():
    both_ways(lambda r: (lambda s: (f"zpub/xprv backup {s}", s))(r.choice(["xprv", "tprv", "zprv"]) + pick(r, BASE58, 107)))
    assert untouched("xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8")


# ---------------------------------------------------------------------------- vendor shapes and hashes
def test_age_secret_keys_in_either_case():
    both_ways(lambda r: (lambda s: (f"# created: 2026-01-01\n{s}\n", s))(
        r.choice([str.upper, str.lower])("AGE-SECRET-KEY-1" + pick(r, BECH32, 58))))
    assert untouched("age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p")  # a public key


def test_sendgrid_key_whose_first_part_is_all_lower_case():
    """The 22-char first part is not a window when it lacks digits and capitals: the prefix then sits
    26 characters before the 43-char run, within TOKEN_REACH."""
    assert engine.TOKEN_REACH >= len("SG.") + 22 + 1
    both_ways(lambda r: (lambda s: (f"SENDGRID_KEY {s}", s))(
        "SG." + pick(r, string.ascii_lowercase, 22) + "." + pick(r, ALNUM, 43)))
    assert gone("SG.abcdefghijklmnopqrstuv.ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefg", "SG.")


def test_htpasswd_hashes_with_doubled_dollars_and_sha():
    alphabet = ALNUM + "./"
    both_ways(lambda r: (lambda s: (f'- "admin:{s}"', s))(f"$$apr1$${pick(r, ALNUM, 8)}$${pick(r, alphabet, 22)}"))
    both_ways(lambda r: (lambda s: (f"traefik users: admin:{s}", s))(f"$$2y$$05$${pick(r, alphabet, 53)}"))
    both_ways(lambda r: (lambda s: (f"user:{s}", s))("{SHA}" + pick(r, ALNUM + "+/", 27) + "="))
    for text in ("The hash prefix {SHA} marks SHA-1.", "costs $$ and $$$", "echo $$ prints the PID"):
        assert untouched(text), text


# ---------------------------------------------------------------------------- digits
def cvv(rng: random.Random) -> str:
    return str(rng.randint(100, 9999))


@pytest.mark.parametrize("label", [
    "Kartenprüfnummer:", "Sicherheitscode", "cryptogramme visuel :", "código de seguridad:", "codice di sicurezza",
    "kod bezpieczeństwa:", "код безопасности:", "CVV-код", "CVV code:", "CVC-Nummer", "código de segurança:", "säkerhetskod"])
def test_cvv_words_of_other_languages(label):
    both_ways(lambda r: (lambda s: (f"{label} {s}", s))(cvv(r)))


def test_a_check_number_is_a_cvv_next_to_a_card():
    both_ways(lambda r: (lambda s: (f"Visa 4111 1111 1111 1111 Prüfziffer {s}", s))(cvv(r)))
    both_ways(lambda r: (lambda s: (f"Kreditkarte der Firma\nPrüfnummer: {s}", s))(cvv(r)))
    for text in ("ISBN 978-3-16-148410-0, Prüfziffer 0", "Die Prüfziffer 123 der ISBN", "Prüfnummer 4711 des TÜV"):
        assert untouched(text), text


def test_spaced_digits_and_combos():
    both_ways(lambda r: (lambda s: (f"{r.choice(['alarm code is', 'the door code:', 'PIN:', 'Türcode -'])} {s}", s))(
        " ".join(str(r.randint(0, 9)) for _ in range(r.randint(4, 8)))))
    both_ways(lambda r: (lambda s: (f"{r.choice(['the safe combo is', 'bike lock combo:', 'Gun safe combo'])} {s}", s))(
        "-".join(str(r.randint(1, 39)) for _ in range(3))))
    for text in ("the combo box lists 3 items", "combo 1234", "pins 1 2 3 4 are ground", "PIN 1 2 3 4 pinout",
                 "a combo of 12-34-56 colours"):
        assert untouched(text), text


def ssn(rng: random.Random) -> str:
    sep = rng.choice(["-", "-", " ", ""])
    return f"{rng.randint(1, 665):03d}{sep}{rng.randint(1, 99):02d}{sep}{rng.randint(1, 9999):04d}"


@pytest.mark.parametrize("form", ["SSN: {}", "my social security number is {}", "SSN# {}", "Social Security No. {}",
                                  "**SSN:** {}"])
def test_an_ssn_under_its_label(form):
    both_ways(lambda r: (lambda s: (form.format(s), s))(ssn(r)))


@pytest.mark.parametrize("text", [
    "SSN format is AAA-GG-SSSS", "SSN: 000-00-0000", "SSN: 666-12-3456", "SSN: 912-34-5678",
    "SSN length is 9 digits: 123456789", "IBAN: DE89 3704 0044 0532 0130 00", "order 123-45-6789 shipped",
    "call 555-12-3456"])
def test_ssn_lookalikes_and_ibans_stay(text):
    assert untouched(text)


def test_a_definition_lists_password_term():
    both_ways(lambda r: (lambda s: (f"{r.choice(['Password', '**Passwort**', '- Passphrase'])}\n: {s}\n", s))(typed(r)))
    for text in ("the password\n: nope123!", "Password\n: see the vault", "Password\n:"):
        assert untouched(text), text


@pytest.mark.parametrize("label", ["**Password for the NAS:**", "**WLAN-Schlüssel:**", "**Passwort vom Router:**"])
def test_a_qualified_label_in_bold(label):
    both_ways(lambda r: (lambda s: (f"{label} {s}", s))(typed(r)))


@pytest.mark.parametrize("text", [
    "Password to the NAS: {}", "Password of the router: {}", "Admin password for Grafana: {}", "WiFi PSK: {}",
    "Netzwerkschlüssel (WPA2): {}", "Password for the NAS (admin): {}", "WLAN-Key (Gäste): {}",
    "Kennwort für den Server: {}", "WLAN-Passwort für Gäste: {}"])
def test_more_qualified_forms(text):
    both_ways(lambda r: (lambda s: (text.format(s), s))(typed(r)))


@pytest.mark.parametrize("label", [
    "Microsoft account recovery code:", "Wiederherstellungscode:", "código de recuperación:", "code de récupération :",
    "chiave di recupero:"])
def test_a_single_grouped_recovery_code(label):
    both_ways(lambda r: (lambda s: (f"{label} {s}", s))(
        "-".join(pick(r, string.ascii_uppercase + string.digits, 5) for _ in range(5))))
    assert untouched(f"{label} see 1Password") and untouched("Recovery code is shown once")


def test_the_new_shapes_come_out_the_same_without_the_fast_paths(monkeypatch):
    """Reference run (every rule over the whole text, triggers in the lowered text itself): the new
    rules' triggers are inside every match they gate."""
    import dataclasses
    r = random.Random(9)
    texts = [f"Password for the NAS: {typed(r)}", f"WLAN-Schlüssel: {typed(r)}", f"clé WPA : {typed(r)}",
             f"clave wifi: {typed(r)}", f"Network security key: {typed(r)}", f"pw {typed(r)}",
             f"API secret -> {pick(r, ALNUM, 24)}", f"echo '{typed(r)}' | sudo -S ls", f"sudo -S ls <<< '{typed(r)}'",
             f"Recovery codes: {digit_code(r)} {digit_code(r)}", f"## Recovery codes\n```\n{pick(r, HEX, 5)}-{pick(r, HEX, 5)}\n"
             f"{pick(r, HEX, 5)}-{pick(r, HEX, 5)}\n```", bitlocker(r), "recovery key: " + "-".join(digit_code(r, 4) for _ in range(6)),
             "Wiederherstellungsschlüssel: " + "-".join(digit_code(r, 4) for _ in range(6)),
             "código de recuperación: " + "-".join(digit_code(r, 4) for _ in range(6)),
             f"private key: {wif(r)}", f"Kartenprüfnummer: {cvv(r)}", f"Visa 4111 1111 1111 1111 Prüfziffer {cvv(r)}",
             f"kod bezpieczeństwa: {cvv(r)}", "alarm code is 1 9 8 4", "the safe combo is 24-36-12", f"SSN: {ssn(r)}",
             f"user:{{SHA}}{pick(r, ALNUM, 27)}=", f"Password\n: {typed(r)}", f'Passphrase is "{" ".join(WORDS[:3])}"']
    for text in texts:  # each rule that redacts in a text has a trigger there (in the line, if one_line)
        low = engine._ascii(text.lower())
        for rule in engine._RULES:
            if not rule.triggers or rule.digit_masks:
                continue
            for m in rule.regex().finditer(text):
                if rule.check(m):
                    where = low if not rule.one_line else low[low.rfind("\n", 0, m.start()) + 1:m.end()]
                    gate = where if not rule.non_ascii else text.lower()
                    assert any(t.lower() in gate for t in rule.triggers), (rule.name, text)
    texts += [NOISE * 40 + t + "\n" + NOISE for t in texts]
    fast = [scrub(t) for t in texts]
    assert all(found for _, found in fast)
    monkeypatch.setattr(engine, "_RULES", tuple(dataclasses.replace(r, line_needs="", one_line=False)
                                                for r in engine._RULES))
    monkeypatch.setattr(engine, "_ascii", lambda low: low)
    assert [scrub(t) for t in texts] == fast


@pytest.mark.parametrize("text", [
    "Password: (same as router)", "mot de passe : (voir coffre)", "Password for the NAS: (same as router)",
    "Password for the NAS: ask Bob", "WLAN-Schlüssel: steht auf der Rückseite", "WPA2-Schlüssel: siehe Fritzbox",
    "Wi-Fi key: printed on the router", "Recovery key: stored in iCloud Keychain", "private key: see ~/.ssh/id_ed25519",
    "Kennwort für den Server: siehe Passwortmanager", "Password for the NAS: ********"])
def test_labels_followed_by_prose_or_a_parenthesis_stay(text):
    assert untouched(text)
