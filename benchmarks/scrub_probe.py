"""Credential shapes as users' notes and configs hold them, with random values: which does the scrubber miss?

    .venv/bin/python benchmarks/scrub_probe.py [-v]

Two probes written for stop 16 (66 + 42 shapes: connection strings, CLIs, config files, vendor
tokens, Markdown tables, Wi-Fi QR strings, prose in several languages), a third for stop 31
(qualified labels, Wi-Fi keys, piped passwords, recovery codes and keys, wallet keys, CVV words,
SSNs), and a list of texts that use the same words and hold no secret (printed when altered). Each case is (name, text,
secret); a leak is the secret still in `scrub(text)`. Values are random (fixed seeds), so no case
is a dev-set row. Prints the leaks (every case with -v) and a count per probe.
"""
from __future__ import annotations

import base64
import json
import random
import string
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from vaultrag.scrubber import scrub  # noqa: E402


def probe_one() -> list:
    r = random.Random(16)
    rs = lambda n, chars=string.ascii_letters + string.digits: "".join(r.choice(chars) for _ in range(n))  # noqa: E731
    hexs = lambda n: rs(n, "0123456789abcdef")  # noqa: E731
    cases = []
    def c(name, text, secret): cases.append((name, text, secret))
    v = rs(24); c("jdbc", f"jdbc:postgresql://db.internal:5432/app?user=app&password={v}", v)
    v = "Qw8!" + rs(10); c("odbc", f"Driver={{ODBC Driver 18}};Server=tcp:x.database.windows.net;Uid=sa;Pwd={v};Encrypt=yes", v)
    v = rs(86) + "=="; c("azure-storage", f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={v};EndpointSuffix=core.windows.net", v)
    v = "Sup3r" + rs(8); c("netrc", f"machine api.example.com login deploy password {v}", v)
    v = "h0rse" + rs(8); c("curl-u", f"curl -u admin:{v} https://jenkins.local/api/json", v)
    v = "Pa55" + rs(8); c("mysql-p", f"mysql -u root -p{v} -h 10.0.0.5 prod", v)
    v = "pg" + rs(14); c("pgpassword", f"PGPASSWORD={v} psql -h db -U app", v)
    v = "w1f1" + rs(8); c("wifi-qr", f"WIFI:S:HomeNet;T:WPA;P:{v};;", v)
    v = rs(32, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"); c("otpauth", f"otpauth://totp/GitHub:me?secret={v}&issuer=GitHub", v)
    v = "AGE-SECRET-KEY-1" + rs(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L").upper(); c("age", f"my age key: {v}", v)
    v = "github_pat_" + rs(22) + "_" + rs(59); c("gh-fine", f"token {v}", v)
    v = "glpat-" + rs(20); c("gitlab", f"GITLAB_TOKEN {v}", v)
    v = "npm_" + rs(36); c("npm", f"//registry.npmjs.org/:_authToken={v}", v)
    v = "pypi-AgEIcHlwaS5vcmc" + rs(60); c("pypi", f"[pypi]\nusername = __token__\npassword = {v}", v)
    v = "AIza" + rs(35, string.ascii_letters + string.digits + "-_"); c("google-api", f"maps key {v}", v)
    v = "sk-proj-" + rs(74) + "T3BlbkFJ" + rs(74); c("openai-proj", f"OPENAI key is {v}", v)
    v = "sk-ant-api03-" + rs(93, string.ascii_letters + string.digits + "-_") + "AA"; c("anthropic", f"ANTHROPIC_API_KEY: {v}", v)
    v = "hf_" + rs(34); c("hf", f"huggingface-cli login --token {v}", v)
    v = "xoxb-" + "".join(r.choice(string.digits) for _ in range(12)) + "-" + "".join(r.choice(string.digits) for _ in range(13)) + "-" + rs(24); c("slack-bot", f"bot: {v}", v)
    v = "https://hooks.slack.com/services/T" + rs(8, string.ascii_uppercase+string.digits) + "/B" + rs(8, string.ascii_uppercase+string.digits) + "/" + rs(24); c("slack-webhook", f"alerts go to {v}", v.rsplit("/",1)[1])
    v = "".join(r.choice(string.digits) for _ in range(10)) + ":AA" + rs(33, string.ascii_letters+string.digits+"_-"); c("telegram", f"telegram bot token {v}", v)
    v = "sk_live_" + rs(24); c("stripe", f"stripe secret {v}", v)
    v = "SG." + rs(22) + "." + rs(43); c("sendgrid", f"SENDGRID {v}", v)
    v = base64.b64encode(f"me:{rs(16)}".encode()).decode(); c("docker-auth", '{"auths":{"ghcr.io":{"auth":"%s"}}}' % v, v)
    v = base64.b64encode(r.randbytes(600)).decode(); c("kube-client-key", f"    client-key-data: {v}", v[:60])
    v = rs(40); c("basic-auth-hdr", f"Authorization: Basic {base64.b64encode(('u:'+v).encode()).decode()}", base64.b64encode(('u:'+v).encode()).decode())
    v = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + base64.urlsafe_b64encode(b'{"sub":"1234567890","name":"x","iat":1516239022}').decode().rstrip("=") + "." + rs(43, string.ascii_letters+string.digits+"-_"); c("jwt", f"test with bearer {v}", v)
    words = "abandon ability able about above absent absorb abstract absurd abuse access accident".split()
    v = " ".join(r.sample(words, 12)); c("seed-phrase", f"wallet recovery phrase: {v}", v)
    v = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(base64.b64encode(r.randbytes(51)).decode() for _ in range(6)) + "\n-----END OPENSSH PRIVATE KEY-----"; c("openssh", f"```\n{v}\n```", v.split("\n")[2])
    v = "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: me\nPublic-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAI" + rs(40) + "\nPrivate-Lines: 1\n" + rs(44) + "\nPrivate-MAC: " + hexs(64); c("ppk", v, v.split("\n")[6])
    v = "Blue" + rs(6) + "!"; c("htpasswd-plain", f"admin password (basic auth): {v}", v)
    v = "$apr1$" + rs(8) + "$" + rs(22, string.ascii_letters+string.digits+"./"); c("htpasswd", f"admin:{v}", v)
    v = rs(20); c("yaml-nested", f"database:\n  host: db\n  credentials:\n    user: app\n    pass: {v}", v)
    v = rs(20); c("toml-secret", f'[auth]\nclient_secret = "{v}"', v)
    v = rs(20); c("xml", f"<password>{v}</password>", v)
    v = rs(20); c("xml-attr", f'<add key="ApiKey" value="{v}" />', v)
    v = rs(20); c("ini-pw", f"[db]\nPassword={v}", v)
    v = "Tr1cky-" + rs(6); c("env-export", f"export DB_PASS='{v}'", v)
    v = rs(32, string.ascii_letters+string.digits); c("docker-run", f"docker run -e POSTGRES_PASSWORD={v} postgres", v)
    v = rs(24); c("k8s-secret-literal", f"kubectl create secret generic db --from-literal=password={v}", v)
    v = rs(30); c("redis-url", f"REDIS_URL=redis://:{v}@cache:6379/0", v)
    v = rs(18); c("mongodb", f"mongodb+srv://admin:{v}@cluster0.abcde.mongodb.net/test", v)
    v = rs(16); c("amqp", f"amqp://guest:{v}@rabbit:5672/", v)
    v = "Zx" + rs(10) + "#"; c("md-table", f"| service | user | password |\n|---|---|---|\n| grafana | admin | {v} |", v)
    v = "Kp" + rs(10) + "9"; c("md-bold", f"**Password:** {v}", v)
    v = "Mn" + rs(10) + "7"; c("md-code", f"password: `{v}`", v)
    v = "Lq" + rs(10) + "3"; c("md-bullet-de", f"- Passwort: {v}", v)
    v = "Rt" + rs(10) + "5"; c("es", f"contraseña: {v}", v)
    v = "Yu" + rs(10) + "2"; c("jp", f"パスワード：{v}", v)
    v = "Io" + rs(10) + "4"; c("ko", f"비밀번호: {v}", v)
    v = "Vb" + rs(10) + "6"; c("pin", f"The alarm code is 4 digits: 8 3 1 9; the safe password is {v}", v)
    v = rs(40, string.ascii_letters+string.digits+"/+"); c("aws-secret-cfg", f"[default]\naws_access_key_id = AKIA{rs(16, string.ascii_uppercase+string.digits)}\naws_secret_access_key = {v}", v)
    v = "ASIA" + rs(16, string.ascii_uppercase+string.digits); c("aws-sts", f"session id {v}", v)
    v = rs(64, "0123456789abcdef"); c("hex-key-named", f"ENCRYPTION_KEY={v}", v)
    v = rs(44, string.ascii_letters+string.digits+"+/"); c("fernet", f"SECRET_KEY = '{v}='", v)
    v = "dapi" + hexs(32); c("databricks", f"databricks token {v}", v)
    v = "shpat_" + hexs(32); c("shopify", f"shopify {v}", v)
    v = "xapp-1-A" + rs(10, string.ascii_uppercase + string.digits) + "-" + "".join(r.choice(string.digits) for _ in range(13)) + "-" + hexs(64); c("slack-app", f"{v}", v)
    v = "dop_v1_" + hexs(64); c("digitalocean", f"DO token: {v}", v)
    v = "lin_api_" + rs(40); c("linear", f"linear {v}", v)
    v = "ntn_" + rs(46); c("notion", f"notion integration secret {v}", v)
    v = rs(32); c("password-in-sentence-fr", f"Le mot de passe du routeur est {v}", v)
    v = "Gr33n" + rs(5); c("passphrase-colon-space", f"Passphrase - {v}", v)
    v = "Ch" + rs(8) + "1!"; c("login-line", f"login: alice / {v}", v)
    v = "Ab" + rs(8) + "1!"; c("creds-slash", f"creds: alice/{v}", v)
    v = "Ef" + rs(8) + "2?"; c("user-pass-pair", f"user=alice pass={v}", v)
    return cases


def probe_two() -> list:
    r = random.Random(2026)
    A = string.ascii_letters + string.digits
    rs = lambda n, chars=A: "".join(r.choice(chars) for _ in range(n))  # noqa: E731
    hexs = lambda n: rs(n, "0123456789abcdef")  # noqa: E731
    pw = lambda: rs(4, string.ascii_letters) + str(r.randint(10, 99)) + r.choice("!#%^*") + rs(4)  # noqa: E731
    cases = []
    def c(name, text, secret): cases.append((name, text, secret))
    key = "-----BEGIN PRIVATE KEY-----\\n" + "\\n".join(base64.b64encode(r.randbytes(48)).decode() for _ in range(8)) + "\\n-----END PRIVATE KEY-----\\n"
    c("gcp-sa-json", json.dumps({"type": "service_account", "project_id": "p", "private_key_id": hexs(40), "private_key": key.replace("\\n", "\n")}, indent=2), base64.b64encode(r.randbytes(1)).decode() and key.split("\\n")[3])
    v = rs(43, A + "%"); c("azure-sas", f"https://acct.blob.core.windows.net/c/f.zip?sv=2022-11-02&ss=b&srt=o&sp=r&se=2027-01-01&sig={v}", v)
    v = hexs(64); c("aws-presigned", f"https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA{rs(16, string.ascii_uppercase+string.digits)}%2F20261201%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature={v}", v)
    v = base64.b64encode(pw().encode()).decode(); c("k8s-secret", f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {v}\n  username: YWRtaW4=", v)
    v = pw(); c("tfvars", f'db_password = "{v}"', v)
    v = base64.b64encode(f"me:{pw()}".encode()).decode(); c("npmrc-auth", f"_auth={v}\nemail=me@x.io", v)
    v = pw(); c("pip-conf", f"[global]\nindex-url = https://deploy:{v}@pypi.corp.example/simple", v)
    v = "ghp_" + rs(36); c("git-cred-store", f"https://octocat:{v}@github.com", v)
    v = pw(); c("ldap-bind", f"ldapsearch -x -D 'cn=admin,dc=corp' -w {v} -b dc=corp", v)
    v = pw(); c("ansible", f"web1 ansible_host=10.0.0.5 ansible_user=root ansible_ssh_pass={v}", v)
    v = pw(); c("sshpass", f"sshpass -p {v} ssh root@10.0.0.5", v)
    v = "hvs." + rs(90); c("vault-token", f"export VAULT_TOKEN={v}", v)
    v = rs(40, A + "_-"); c("cloudflare", f"CF_API_TOKEN={v}", v)
    v = f"https://{hexs(32)}@o{r.randint(10**5,10**6)}.ingest.sentry.io/{r.randint(10**6,10**7)}"; c("sentry-dsn", f"SENTRY_DSN={v}", v.split('//')[1].split('@')[0])
    v = "glsa_" + rs(32) + "_" + hexs(8); c("grafana-sa", f"grafana token {v}", v)
    v = "AAAA" + rs(7, A + "_-") + ":APA91b" + rs(134, A + "_-"); c("fcm", f"server key: {v}", v)
    v = "sk.eyJ1Ijoi" + rs(60, A) + "." + rs(22, A + "_-"); c("mapbox", f"MAPBOX={v}", v)
    v = "LTAI" + rs(20); c("alibaba", f"AccessKeyId: {v}", v)
    v = pw(); c("net-user", f"net user backupadmin {v} /add", v)
    v = pw(); c("powershell", f'$pw = ConvertTo-SecureString "{v}" -AsPlainText -Force', v)
    v = pw(); c("mysql-identified", f"CREATE USER 'app'@'%' IDENTIFIED BY '{v}';", v)
    v = pw(); c("pg-role", f"CREATE ROLE app LOGIN PASSWORD '{v}';", v)
    v = pw(); c("redis-requirepass", f"requirepass {v}", v)
    v = pw(); c("docker-login", f"docker login -u me -p {v} registry.corp", v)
    v = pw(); c("smtp-yaml", f"smtp:\n  host: smtp.gmail.com\n  user: me@gmail.com\n  app_password: {v}", v)
    v = "xoxp-" + "-".join(str(r.randint(10**10, 10**12)) for _ in range(3)) + "-" + hexs(32); c("slack-user", v, v)
    v = f"https://discord.com/api/webhooks/{r.randint(10**17,10**18)}/{rs(68, A+'_-')}"; c("discord-webhook", f"webhook: {v}", v.rsplit('/',1)[1])
    v = pw(); c("env-quoted-space", f'ADMIN_PASS="{v} {rs(4)}"', v)
    v = pw(); c("json-nested", json.dumps({"db": {"user": "x", "passwd": v}}), v)
    v = pw(); c("cli-long-eq", f"./run --admin-password={v}", v)
    v = pw(); c("yaml-list", f"users:\n  - name: bob\n    password: {v}", v)
    v = pw(); c("prose-my", f"my bank PIN is 4821 and my online banking password is {v}", v)
    v = pw(); c("prose-de", f"Das WLAN-Passwort ist {v}", v)
    v = pw(); c("prose-es", f"La contraseña del wifi es {v}", v)
    v = pw(); c("prose-pt", f"A senha do roteiro é {v}", v)
    v = pw(); c("prose-ru", f"Пароль от wifi: {v}", v)
    v = pw(); c("md-def", f"Password\n: {v}", v)
    v = pw(); c("callout", f"> [!note] Credentials\n> user: admin\n> pass: {v}", v)
    v = pw(); c("frontmatter", f"---\ntitle: Server\npassword: {v}\n---\n# Server", v)
    v = pw(); c("inline-code-creds", f"Log in with `admin` / `{v}`", v)
    v = pw(); c("arrow", f"root -> {v}", v)
    v = pw(); c("user-pass-colon", f"Credentials: admin:{v}", v)
    return cases


def probe_three() -> list:
    """Stop 31 (scrub9): labels qualified before their colon, Wi-Fi keys, `pw`, arrows, passphrases
    after "is", piped passwords, recovery codes and keys, wallet keys, CVV words, spaced codes, SSNs."""
    r = random.Random(31)
    A = string.ascii_letters + string.digits
    rs = lambda n, chars=A: "".join(r.choice(chars) for _ in range(n))  # noqa: E731
    pw = lambda: r.choice(["Herbst", "Rosen", "Maple", "Kiwi", "Sonne"]) + str(r.randint(10, 9999)) + r.choice("!#%?$")  # noqa: E731
    digits = lambda n: "".join(r.choice(string.digits) for _ in range(n))  # noqa: E731
    b58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    words = "amber canyon velvet orbit walnut frost pepper lagoon cobalt thimble".split()
    cases = []
    def c(name, text, secret): cases.append((name, text, secret))
    v = pw(); c("qualified-en", f"- Password for the guest Wi-Fi: {v}", v)
    v = pw(); c("qualified-de", f"Passwort für den Drucker: {v}", v)
    v = pw(); c("qualified-paren", f"Passwort (Synology): {v}", v)
    v = pw(); c("wlan-key", f"**WLAN-Schlüssel:** {v}", v)
    v = pw(); c("wpa2-key", f"WPA2-Key: `{v}`", v)
    v = pw(); c("network-security-key", f"Network security key: {v}", v)
    v = pw(); c("clave-wifi", f"Clave WiFi: {v}", v)
    v = pw(); c("pw-slash", f"Fritzbox: admin / pw {v}", v)
    v = rs(28); c("arrow-secret", f"client secret -> {v}", v)
    v = pw(); c("arrow-unicode", f"router password → {v}", v)
    v = " ".join(r.sample(words, 4)); c("quoted-passphrase", f"the vault passphrase is '{v}'", v)
    v = "".join(r.sample(words, 4)); c("run-together", f"root password is {v}", v)
    v = pw(); c("sudo-S", f'echo "{v}" | sudo -S systemctl restart nginx', v)
    v = pw(); c("chpasswd", f"echo 'deploy:{v}' | sudo chpasswd", v)
    v = digits(8); c("digit-codes", f"Google backup codes: {v} {digits(8)} {digits(8)}", v)
    v = rs(5, "0123456789abcdef") + "-" + rs(5, "0123456789abcdef"); c("github-codes", "## GitHub recovery codes\n\n```text\n" + "\n".join([v] + [rs(5, "0123456789abcdef") + "-" + rs(5, "0123456789abcdef") for _ in range(15)]) + "\n```", v)
    v = "-".join(f"{r.randint(0, 65535) * 11:06d}" for _ in range(8)); c("bitlocker", f"| Laptop | {v} |", v)
    v = "-".join(digits(4) for _ in range(6)); c("recovery-key", f"Recovery key for the Mac: {v}", v)
    v = "-".join(rs(4, string.ascii_uppercase + string.digits) for _ in range(7)); c("apple-recovery", f"Apple ID recovery key - {v}", v)
    v = "K" + rs(51, b58); c("wif", f"BTC paper wallet, private key (WIF): {v}", v)
    v = "0x" + rs(64, "0123456789abcdef"); c("eth", f"MetaMask account 2 private key = {v}", v)
    v = "xprv9s21ZrQH143K" + rs(95, b58); c("xprv", f"electrum master key {v}", v)
    v = digits(3); c("kpn", f"Kartenprüfnummer (Rückseite): {v}", v)
    v = digits(3); c("cryptogramme", f"Cryptogramme visuel : {v}", v)
    v = digits(3); c("cvv-es", f"Código de seguridad {v}", v)
    v = " ".join(digits(1) for _ in range(4)); c("spaced-code", f"garage door code is {v}", v)
    v = f"{r.randint(1, 39)}-{r.randint(1, 39)}-{r.randint(1, 39)}"; c("combo", f"gym locker combo: {v}", v)
    v = f"{r.randint(1, 665):03d}-{r.randint(10, 99)}-{digits(4)}"; c("ssn", f"Social Security Number: {v}", v)
    v = "AGE-SECRET-KEY-1" + rs(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"); c("age", f"key.txt:\n{v}", v)
    v = "SG." + rs(22, string.ascii_lowercase) + "." + rs(43); c("sendgrid-lower", f"SENDGRID {v}", v)
    v = "$$apr1$$" + rs(8) + "$$" + rs(22, A + "./"); c("htpasswd-compose", f'      - "traefik.http.middlewares.a.basicauth.users=admin:{v}"', v)
    v = pw(); c("def-list", f"Passwort\n: {v}", v)
    return cases


# Prose and code that use the same words and hold no secret: each must come back unchanged.
FALSE_POSITIVES = (
    "The PIN header has 40 pins; pin 13 drives the LED.", "Recovery codes are shown once: store them offline.",
    "SSN format is AAA-GG-SSSS.", "Pick a value in the combo box.", "echo 'hello' | sudo -S true",
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "Donations: bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq or 1BoatSLRHtKNngkdXEeobR76b53LETtpyT",
    "the password is required", "the password is stored hashed", "The password is case-sensitive.",
    "Password for user postgres: ", "Password policy for admins: Min8Chars!", "Network key type: WPA2-Personal",
    "pw useradd alice -m -s /bin/sh", "pwd", "the recovery key ID is 4B2F1E9A", "IBAN: DE89 3704 0044 0532 0130 00",
    "ISBN 978-3-16-148410-0 (Prüfziffer 0)", "$this->token->refresh();", "key -> value", "pins 1 2 3 4 are GND",
    "Backup codes: see the 1Password vault", "private key fingerprint: SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
    "commit 4c0883a69102937d6231471b5dbb6204fe512961", 'the passphrase was "not set"',
)


def main() -> int:
    verbose = "-v" in sys.argv
    altered = [t for t in FALSE_POSITIVES if scrub(t)[0] != t]
    for t in altered:
        print("ALTERED " + t)
    print(f"false-positive texts: {len(altered)} altered / {len(FALSE_POSITIVES)}")
    for name, probe in (("first probe", probe_one), ("second probe", probe_two), ("third probe", probe_three)):
        cases = probe()
        leaks = 0
        for case, text, secret in cases:
            clean = scrub(text)[0]
            leak = secret in clean
            leaks += leak
            if leak or verbose:
                print(("LEAK " if leak else "ok   ") + case + ": " + clean.replace("\n", "\\n")[:160])
        print(f"{name}: {leaks} leaks / {len(cases)} shapes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
