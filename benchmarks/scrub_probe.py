"""Credential shapes as users' notes and configs hold them, with random values: which does the scrubber miss?

    .venv/bin/python benchmarks/scrub_probe.py [-v]

Two probes written for stop 16 (66 + 42 shapes: connection strings, CLIs, config files, vendor
tokens, Markdown tables, Wi-Fi QR strings, prose in several languages), a third for stop 31
(qualified labels, Wi-Fi keys, piped passwords, recovery codes and keys, wallet keys, CVV words,
SSNs), a fourth for stop 32 and a fifth for stop 34 (scrub12: labels of more languages, user / password
pairs, lock codes, Wi-Fi keys after the network's name, Azure DevOps PATs, rclone, passwords in
parentheses or after a comma), and a list of texts that use the same words and hold no secret (printed when altered). Each case is (name, text,
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


def probe_four() -> list:
    """Stop 32 (scrub10): config files pasted into notes, commands, URLs, TOTP seeds, keys in odd
    wrappings, vendor tokens by their published shapes, secrets in tables, frontmatter, callouts,
    labels of other languages and prose."""
    r = random.Random(10)
    A = string.ascii_letters + string.digits
    U = A + "_-"
    rs = lambda n, chars=A: "".join(r.choice(chars) for _ in range(n))  # noqa: E731
    hexs = lambda n: rs(n, "0123456789abcdef")  # noqa: E731
    digits = lambda n: rs(n, string.digits)  # noqa: E731
    pw = lambda: r.choice(["Otter", "Lupo", "Cedar", "Nube", "Brisa", "Havik"]) + digits(r.randint(2, 4)) + r.choice("!#%?$&*")  # noqa: E731
    b32 = lambda n: rs(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")  # noqa: E731
    b64 = lambda nbytes: base64.b64encode(r.randbytes(nbytes)).decode()  # noqa: E731
    cases = []
    def c(name, text, secret): cases.append((name, text, secret))
    # config files pasted into notes
    v = "npm_" + rs(36); c("npmrc-scoped", f"@acme:registry=https://npm.pkg.github.com\n//npm.pkg.github.com/:_authToken={v}", v)
    v = pw(); c("pypirc", f"[distutils]\nindex-servers = private\n\n[private]\nrepository = https://pypi.corp/\nusername = deploy\npassword = {v}", v)
    v = pw(); c("netrc-multiline", f"machine git.corp.example\n  login deploy\n  password {v}", v)
    v = pw(); c("pip-conf-extra", f"[global]\nextra-index-url = https://ci:{v}@nexus.corp/repository/pypi/simple", v)
    v = base64.b64encode(f"robot:{pw()}".encode()).decode(); c("docker-config", json.dumps({"auths": {"https://index.docker.io/v1/": {"auth": v}}}, indent=2), v)
    v = "ey" + rs(30); v = "eyJhbGciOiJSUzI1NiIsImtpZCI6IiJ9." + base64.urlsafe_b64encode(b'{"iss":"kubernetes/serviceaccount"}').decode().rstrip("=") + "." + rs(86, U); c("kubeconfig-token", f"users:\n- name: ci\n  user:\n    token: {v}", v)
    v = rs(40, "abcdefghijklmnopqrstuvwxyz0123456789"); c("kubeconfig-token-opaque", f"users:\n- name: admin\n  user:\n    token: {v}", v)
    v = pw(); c("tfvars-heredoc", f'variable "db" {{}}\nadmin_password = "{v}"', v)
    v = rs(16, A + "!@#"); c("ansible-vault-pass", f"echo '{v}' > ~/.vault_pass.txt", v)
    v = pw(); c("ansible-become", f"ansible_become_pass: {v}", v)
    v = pw(); c("app-properties", f"spring.datasource.url=jdbc:mysql://db:3306/app\nspring.datasource.password={v}", v)
    v = pw(); c("appsettings", json.dumps({"ConnectionStrings": {"Default": f"Server=db;Database=app;User Id=sa;Password={v};"}}, indent=2), v)
    v = pw(); c("wp-config", f"define( 'DB_PASSWORD', '{v}' );", v)
    v = rs(50, string.ascii_lowercase + string.digits + "!@#$%^&*(-_=+)"); c("django-secret", f"SECRET_KEY = 'django-insecure-{v}'", v)
    v = hexs(32); c("rails-master-key", f"config/master.key:\n{v}", v)
    v = hexs(128); c("rails-credentials", f"# rails credentials:edit\nsecret_key_base: {v}", v)
    v = pw(); c("env-export-comment", f"export SMTP_PASSWORD=\"{v}\"  # rotated in May", v)
    v = rs(24); c("env-inline-comment", f"API_SECRET={v} # prod", v)
    v = pw(); c("systemd-env", f"[Service]\nEnvironment=\"DB_PASS={v}\"", v)
    v = pw(); c("systemd-env-two", f"Environment=DB_USER=app DB_PASSWORD={v}", v)
    v = pw(); c("docker-run-e-space", f"docker run -e MYSQL_ROOT_PASSWORD='{v}' -d mysql:8", v)
    v = pw(); c("helm-set", f"helm install pg bitnami/postgresql --set auth.postgresPassword={v}", v)
    v = pw(); c("helm-set-string", f"helm upgrade app ./chart --set-string secrets.apiToken={rs(32)} --set db.password={v}", v)
    # commands
    v = pw(); c("curl-u-quoted", f"curl -u 'admin:{v}' https://nexus.local/service/rest", v)
    v = rs(40); c("curl-bearer", f'curl -H "Authorization: Bearer {v}" https://api.corp/v1/me', v)
    v = base64.b64encode(f"svc:{pw()}".encode()).decode(); c("curl-basic", f"curl -H 'Authorization: Basic {v}' https://x.corp", v)
    v = pw(); c("wget-password", f"wget --user=bob --password={v} https://files.corp/a.iso", v)
    v = pw(); c("wget-http-password", f"wget --http-user=bob --http-password='{v}' https://files.corp/a.iso", v)
    v = pw(); c("mysql-password-long", f"mysql --user=root --password={v} app", v)
    v = pw(); c("psql-pgpassword-quoted", f"PGPASSWORD='{v}' psql -h db -U postgres", v)
    v = pw(); c("redis-cli-auth", f"redis-cli -h cache -p 6379 -a '{v}' ping", v)
    v = pw(); c("mongosh", f"mongosh \"mongodb+srv://cluster0.x.mongodb.net/app\" --username admin --password {v}", v)
    v = pw(); c("smbclient", f"smbclient //nas/share -U alice%{v}", v)
    v = pw(); c("mount-cifs", f"sudo mount -t cifs //nas/share /mnt -o username=alice,password={v}", v)
    v = pw(); c("openssl-pass", f"openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:{v}", v)
    v = pw(); c("keytool", f"keytool -importkeystore -srckeystore a.p12 -srcstorepass {v} -deststorepass {v}", v)
    v = pw(); c("rdesktop", f"xfreerdp /v:10.0.0.9 /u:Administrator /p:{v}", v)
    v = pw(); c("git-clone-token", f"git clone https://oauth2:{rs(20)}@gitlab.corp/team/app.git\n# or with password {v}", v)
    # URLs
    v = pw(); c("mongodb-srv", f"MONGO_URI=mongodb+srv://app:{v}@cluster0.ab1cd.mongodb.net/?retryWrites=true", v)
    v = pw(); c("jdbc-sqlserver", f"jdbc:sqlserver://db:1433;databaseName=app;user=sa;password={v};encrypt=true", v)
    v = pw(); c("jdbc-mysql-query", f"jdbc:mysql://db:3306/app?user=root&password={v}&useSSL=false", v)
    v = pw(); c("ftp-url", f"ftp://backup:{v}@ftp.corp.example/dumps/", v)
    v = pw(); c("smb-url", f"smb://alice:{v}@nas.local/share", v)
    v = "ghp_" + rs(36); c("git-remote-token", f"git remote set-url origin https://{v}@github.com/me/repo.git", v)
    v = "glpat-" + rs(20, U); c("git-remote-glpat", f"[remote \"origin\"]\n\turl = https://gitlab-ci-token:{v}@gitlab.com/g/p.git", v)
    v = pw(); c("url-query-password", f"https://router.local/login.cgi?username=admin&password={v}", v)
    # TOTP
    v = b32(32); c("otpauth-hotp", f"otpauth://hotp/ACME:bob?secret={v}&counter=0", v)
    v = " ".join(b32(4).lower() for _ in range(8)); c("totp-grouped", f"2FA setup key: {v}", v)
    v = b32(16); c("totp-secret-label", f"TOTP secret: {v}", v)
    v = b32(32); c("mfa-seed-yaml", f"mfa_seed: {v}", v)
    # keys in odd wrappings
    body = "\n".join(b64(48) for _ in range(8))
    c("pem-blockquote", "> -----BEGIN RSA PRIVATE KEY-----\n" + "\n".join("> " + l for l in body.split("\n")) + "\n> -----END RSA PRIVATE KEY-----", body.split("\n")[3])
    c("pem-list-item", "- key:\n  ```\n  -----BEGIN EC PRIVATE KEY-----\n" + "\n".join("  " + l for l in body.split("\n")[:3]) + "\n  -----END EC PRIVATE KEY-----\n  ```", body.split("\n")[1])
    c("pem-crlf", "-----BEGIN PRIVATE KEY-----\r\n" + "\r\n".join(body.split("\n")) + "\r\n-----END PRIVATE KEY-----\r\n", body.split("\n")[4])
    c("pem-one-line-escaped", '"key": "-----BEGIN PRIVATE KEY-----\\n' + "\\n".join(body.split("\n")) + '\\n-----END PRIVATE KEY-----\\n"', body.split("\n")[2])
    c("pem-spaces-one-line", "-----BEGIN OPENSSH PRIVATE KEY----- " + " ".join(body.split("\n")) + " -----END OPENSSH PRIVATE KEY-----", body.split("\n")[2])
    c("pgp-private", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n" + body + "\n=" + rs(4) + "\n-----END PGP PRIVATE KEY BLOCK-----", body.split("\n")[5])
    c("pem-callout", "> [!warning] server key\n> ```\n> -----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join("> " + l for l in body.split("\n")[:4]) + "\n> -----END OPENSSH PRIVATE KEY-----\n> ```", body.split("\n")[2])
    c("encrypted-pem", "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + body + "\n-----END ENCRYPTED PRIVATE KEY-----", body.split("\n")[6])
    v = "eyJhbGciOiJIUzI1NiJ9." + base64.urlsafe_b64encode(b'{"sub":"42","role":"admin"}').decode().rstrip("=") + "." + rs(43, U); c("jwt-in-table", f"| env | token |\n|---|---|\n| prod | {v} |", v)
    # cookies
    v = rs(32, U); c("cookie-session", f"Cookie: session={v}; theme=dark", v)
    v = rs(40, U); c("set-cookie", f"Set-Cookie: sessionid={v}; Path=/; HttpOnly; Secure", v)
    v = "s%3A" + rs(32, U) + "." + rs(43, A + "%"); c("express-sid", f"Cookie: connect.sid={v}", v)
    v = rs(26, string.ascii_lowercase + string.digits); c("php-sessid", f"PHPSESSID={v}", v)
    # vendor tokens (shapes from their public docs)
    v = "sk_live_" + rs(99); c("stripe-long", f"STRIPE_SECRET_KEY={v}", v)
    v = "xoxp-" + digits(11) + "-" + digits(12) + "-" + digits(13) + "-" + hexs(32); c("slack-xoxp", f"slack user token {v}", v)
    v = "xoxe.xoxp-1-" + rs(140, string.ascii_uppercase + string.digits); c("slack-rotated", f"refresh {v}", v)
    v = rs(24, U) + "." + rs(6, U) + "." + rs(38, U); v = "M" + v[1:]; c("discord-bot", f"DISCORD_TOKEN={v}", v)
    v = digits(10) + ":AA" + rs(33, U); c("telegram-url", f"https://api.telegram.org/bot{v}/sendMessage", v)
    v = hexs(32); c("twilio-auth-token", f"TWILIO_ACCOUNT_SID=AC{hexs(32)}\nTWILIO_AUTH_TOKEN={v}", v)
    v = "key-" + hexs(32); c("mailgun-legacy", f"api:{v}", v)
    v = hexs(32) + "-" + hexs(8) + "-" + hexs(8); c("mailgun-new", f"MAILGUN_API_KEY={v}", v)
    v = "sk-" + rs(48); c("openai-legacy", f"openai.api_key = \"{v}\"", v)
    v = "sk-svcacct-" + rs(74, U) + "T3BlbkFJ" + rs(74, U); c("openai-svcacct", f"key: {v}", v)
    v = "sk-ant-api03-" + rs(93, U) + "AA"; c("anthropic-prose", f"use {v} for the eval runs", v)
    v = "hf_" + rs(34); c("hf-prose", f"my HF token is {v}", v)
    v = "glpat-" + rs(20, U); c("glpat-prose", f"GitLab PAT {v} (expires 2027)", v)
    v = "npm_" + rs(36); c("npm-prose", f"publish with {v}", v)
    v = "pypi-AgEIcHlwaS5vcmc" + rs(120, U); c("pypi-env", f"TWINE_PASSWORD={v}", v)
    v = "dop_v1_" + hexs(64); c("do-prose", f"doctl auth init -t {v}", v)
    v = "shpss_" + hexs(32); c("shopify-shared", f"Shopify shared secret {v}", v)
    v = "EAAA" + rs(60, U); c("square-access", f"SQUARE_ACCESS_TOKEN={v}", v)
    v = b64(64); c("azure-accountkey", f"DefaultEndpointsProtocol=https;AccountName=st1;AccountKey={v};EndpointSuffix=core.windows.net", v)
    v = rs(43, A + "%") + "%3D"; c("azure-sas-connstr", f"BlobEndpoint=https://st1.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sig={v}", v)
    v = rs(44, A + "+/"); c("azure-sb", f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={v}=", v)
    key = "-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----\n"
    c("gcp-sa-inline", json.dumps({"type": "service_account", "private_key": key, "client_email": "a@p.iam.gserviceaccount.com"}), body.split("\n")[3])
    v = rs(40, A + "+/"); c("aws-pair-env", f"AWS_ACCESS_KEY_ID=AKIA{rs(16, string.ascii_uppercase + '234567')}\nAWS_SECRET_ACCESS_KEY={v}", v)
    v = rs(40, A + "+/"); c("aws-pair-prose", f"access key AKIA{rs(16, string.ascii_uppercase + '234567')} / secret {v}", v)
    v = rs(40, A + "+/"); c("aws-pair-table", f"| key id | secret |\n|---|---|\n| AKIA{rs(16, string.ascii_uppercase + '234567')} | {v} |", v)
    # tables, frontmatter, callouts
    v = pw(); c("table-pass-col", f"| Host | Login | Pass |\n| --- | --- | --- |\n| nas | admin | {v} |", v)
    v = pw(); c("table-de", f"| Dienst | Benutzer | Kennwort |\n|:--|:--|:--|\n| Router | admin | {v} |", v)
    v = rs(32); c("table-api-key", f"| Service | API key |\n|---|---|\n| Mapbox | {v} |", v)
    v = pw(); c("frontmatter-nested", f"---\ntitle: NAS\nlogin:\n  user: admin\n  password: \"{v}\"\n---\nbody", v)
    v = pw(); c("callout-bold", f"> [!info] Zugang\n> **Passwort:** {v}", v)
    v = pw(); c("callout-inline-code", f"> [!tip]\n> root pw: `{v}`", v)
    # other languages' labels
    v = pw(); c("fr-mdp-colon", f"Mot de passe : {v}", v)
    v = pw(); c("es-clave", f"Clave: {v}", v)
    v = pw(); c("it-password", f"La password del router è {v}", v)
    v = pw(); c("pt-senha-wifi", f"Senha do Wi-Fi: {v}", v)
    v = pw(); c("nl-wachtwoord", f"Wachtwoord: {v}", v)
    v = pw(); c("pl-haslo", f"Hasło do routera: {v}", v)
    v = pw(); c("cs-heslo", f"Heslo k Wi-Fi: {v}", v)
    v = pw(); c("tr-sifre", f"Şifre: {v}", v)
    v = pw(); c("ja-pw", f"パスワードは {v} です", v)
    v = pw(); c("zh-pw", f"WiFi密码：{v}", v)
    v = pw(); c("ko-pw", f"와이파이 비밀번호: {v}", v)
    v = pw(); c("ru-pw", f"пароль от почты — {v}", v)
    v = digits(4); c("de-pin", f"PIN der EC-Karte: {v}", v)
    v = digits(6); c("fr-code", f"Code d'accès : {v}", v)
    v = digits(4); c("ja-pin", f"暗証番号：{v}", v)
    v = digits(4); c("ru-pin", f"ПИН-код: {v}", v)
    v = rs(32); c("de-api-schluessel", f"API-Schlüssel: {v}", v)
    v = rs(32); c("fr-cle-api", f"Clé API : {v}", v)
    v = rs(32); c("es-clave-api", f"Clave de API: {v}", v)
    # prose
    v = digits(4); c("prose-gate", f"the code for the gate is {v}", v)
    v = pw(); c("prose-login-with", f"log in as admin with password {v}", v)
    v = pw(); c("prose-use", f"the router login is admin and the password {v}", v)
    v = pw(); c("prose-set-to", f"I set the root password to {v} yesterday", v)
    v = pw(); c("prose-changed", f"changed the wifi password to {v}", v)
    v = base64.b64encode(f"admin:{pw()}".encode()).decode(); c("b64-basic-prose", f"basic auth header value is {v}", v)
    v = "$apr1$" + rs(8, A + "./") + "$" + rs(22, A + "./"); c("htpasswd-label", f"htpasswd: admin:{v}", v)
    v = "$2y$10$" + rs(53, A + "./"); c("htpasswd-bcrypt-label", f"- basic auth users: `admin:{v}`", v)
    # more tools, configs and labels (written after the first fixes: tried on main too)
    v=pw(); c("pgpass", f"~/.pgpass:\n\ndb.internal:5432:app:app_user:{v}", v)
    v=pw(); c("ssh-keygen-N", f"ssh-keygen -t ed25519 -N '{v}' -f ~/.ssh/id", v)
    v=pw(); c("openssl-k", f"openssl enc -aes-256-cbc -salt -in a -out a.enc -k {v}", v)
    v=pw(); c("zip-P", f"zip -P {v} secret.zip notes.txt", v)
    v=pw(); c("7z-p", f"7z a -p{v} backup.7z docs/", v)
    v=pw(); c("gpg-passphrase", f"gpg --batch --passphrase {v} -c file", v)
    v=pw(); c("sqlplus", f"sqlplus scott/{v}@orcl", v)
    v=pw(); c("lftp", f"lftp -u deploy,{v} sftp://files.corp", v)
    v=pw(); c("mysql_pwd", f"MYSQL_PWD={v} mysqldump app > app.sql", v)
    v=pw(); c("wpa-psk", f'network={{\n  ssid="HomeNet"\n  psk="{v}"\n}}', v)
    v=pw(); c("cisco-user", f"username admin privilege 15 password 0 {v}", v)
    v=pw(); c("cisco-enable", f"enable password {v}", v)
    v=pw(); c("pw-abbr", f"PW: {v}", v)
    v=pw(); c("pwd-label", f"pwd: {v}", v)
    v=pw(); c("pass-label", f"Pass: {v}", v)
    v="Fluffy"+str(r.randint(1,9)); c("security-answer", f"Security question answer: {v}", v)
    v=" ".join(rs(4, string.ascii_lowercase) for _ in range(4)); c("google-app-pw", f"Gmail app password: {v}", v)
    v="-".join(rs(4, string.ascii_lowercase) for _ in range(4)); c("apple-app-pw", f"app-specific password: {v}", v)
    v="ATBB"+rs(32); c("bitbucket", f"bitbucket app password {v}", v)
    v="gldt-"+rs(20); c("gitlab-deploy", f"deploy token {v}", v)
    v="glrt-"+rs(20); c("gitlab-runner", f"runner {v}", v)
    v="dckr_pat_"+rs(27, A+"_-"); c("dockerhub", f"docker login -u me --password-stdin <<< {v}", v)
    v="dckr_pat_"+rs(27, A+"_-"); c("dockerhub-bare", f"Docker Hub PAT {v}", v)
    v=rs(14)+".atlasv1."+rs(67); c("tfc", f"credentials app.terraform.io {{ token = {v} }}", v)
    v="nfp_"+rs(36); c("netlify", f"netlify {v}", v)
    v="GOCSPX-"+rs(28, A+"_-"); c("google-oauth", f"client secret GOCSPX {v}", v)
    v="GOCSPX-"+rs(28, A+"_-"); c("google-oauth-bare", f"{v}", v)
    v="figd_"+rs(40, A+"_-"); c("figma", f"figma {v}", v)
    v="CFPAT-"+rs(43, A+"_-"); c("contentful", f"contentful {v}", v)
    v="rubygems_"+rs(48, "0123456789abcdef"); c("rubygems", f":rubygems_api_key: {v}", v)
    v="rzp_live_"+rs(14); c("razorpay", f"razorpay key rzp {v}", v)
    v=base64.urlsafe_b64encode(r.randbytes(256)).decode().rstrip("="); c("jwk-d", json.dumps({"kty":"RSA","n":rs(40),"e":"AQAB","d":v}), v)
    body="\n".join("  "+base64.b64encode(r.randbytes(48)).decode() for _ in range(5)); c("pem-yaml-indented", "ssh_key: |\n  -----BEGIN OPENSSH PRIVATE KEY-----\n"+body+"\n  -----END OPENSSH PRIVATE KEY-----", body.split("\n")[2].strip())
    v=pw(); c("user-pass-slash", f"user/pass: admin/{v}", v)
    v=pw(); c("u-p", f"u: admin p: {v}", v)
    v="-".join(str(r.randint(10,99)) for _ in range(3)); c("safe-label", f"Safe: {v}", v)
    v=pw(); c("id-kata-sandi", f"Kata sandi: {v}", v)
    v=pw(); c("ca-contrasenya", f"Contrasenya: {v}", v)
    v=pw(); c("et-parool", f"Parool: {v}", v)
    v=pw(); c("lt", f"Slaptažodis: {v}", v)
    v=pw(); c("zh-shi", f"密码是{v}", v)
    v=pw(); c("emoji-key", f"🔑 {v}", v)
    v=pw(); c("wifi-prose-key", f"Wi-Fi HomeNet, key {v}", v)
    v=rs(52, "abcdefghijklmnopqrstuvwxyz234567"); c("azdo-pat", f"Azure DevOps PAT: {v}", v)
    v=rs(37, "0123456789abcdef"); c("cf-global", f"CF_API_KEY={v}", v)
    v=rs(32, "0123456789abcdef"); c("algolia", f"Algolia admin key: {v}", v)
    v=pw(); c("xml-attr-pw", f'<user name="admin" password="{v}"/>', v)
    v=pw(); c("ini-spaces", f"password       =     {v}", v)
    v=pw(); c("yaml-anchor", f"password: &pw {v}", v)
    v=pw(); c("powershell-cred", f"$cred = New-Object PSCredential('admin', (ConvertTo-SecureString '{v}' -AsPlainText -Force))", v)
    v=pw(); c("python-kwarg", f"psycopg2.connect(host='db', user='app', password='{v}')", v)
    v=pw(); c("js-object", f"const cfg = {{ user: 'app', pass: '{v}' }}", v)
    v=pw(); c("go-struct", f'Password: "{v}",', v)
    v=pw(); c("rust", f'let pw = "{v}";', v)
    v=pw(); c("bash-read", f'read -s PASS <<< "{v}"', v)
    v=pw(); c("heroku-config", f"heroku config:set DB_PASSWORD={v}", v)
    v=pw(); c("gh-secret", f"gh secret set DB_PASSWORD --body '{v}'", v)
    v=pw(); c("kubectl-docker", f"kubectl create secret docker-registry reg --docker-username=me --docker-password={v}", v)
    v=pw(); c("ldap-url", f"ldap://cn=admin,dc=corp:{v}@ldap.corp", v)
    v=pw(); c("vnc", f"vncpasswd -f <<< '{v}'", v)
    v=pw(); c("mikrotik", f"/user add name=ops group=full password={v}", v)
    v=pw(); c("snmpv3", f"snmpwalk -v3 -u ops -l authPriv -a SHA -A {v} -x AES -X {v} 10.0.0.1", v)
    v=pw(); c("ipmitool", f"ipmitool -I lanplus -H 10.0.0.8 -U ADMIN -P {v} power status", v)
    v=pw(); c("mongo-u-p", f"mongo -u admin -p {v} --authenticationDatabase admin", v)
    v=pw(); c("psql-url", f'psql "host=db user=app password={v} dbname=app"', v)
    v=pw(); c("rclone", f"rclone config create s3 s3 access_key_id AKIA secret_access_key {v}", v)
    v=pw(); c("pass-in-parens", f"admin ({v})", v)
    return cases


def probe_five() -> list:
    """Stop 34 (scrub12): password words of more languages, `u: admin p: X` pairs, lock codes named
    by the lock, a network's key after its name, Azure DevOps PATs, rclone settings, a password in
    parentheses after its user, a password word after a comma mid-sentence."""
    r = random.Random(12)
    A = string.ascii_letters + string.digits
    rs = lambda n, chars=A: "".join(r.choice(chars) for _ in range(n))  # noqa: E731
    digits = lambda n: rs(n, string.digits)  # noqa: E731
    pw = lambda: r.choice(["Tamm", "Lacis", "Sarv", "Vuori", "Kedr", "Orzel", "Lipa", "Sokol"]) + digits(r.randint(2, 4)) + r.choice("!#%?$&*@")  # noqa: E731
    ado = lambda: rs(52, "abcdefghijklmnopqrstuvwxyz234567")  # noqa: E731
    combo = lambda sep="-": sep.join(str(r.randint(1, 59)) for _ in range(3))  # noqa: E731
    cases = []
    def c(name, text, secret): cases.append((name, text, secret))
    # 1. password words of more languages
    for lang, label in (("et", "Parool"), ("et-native", "Salasõna"), ("lv", "Parole"), ("ro", "Parola"),
                        ("pt-PT", "Palavra-passe"), ("nl-BE", "Paswoord"), ("da", "Kodeord"), ("fi", "Tunnussana"),
                        ("is", "Lykilorð"), ("el", "Συνθηματικό"), ("ko", "패스워드"), ("ko-clipped", "비번"),
                        ("he", "סיסמא"), ("fa", "گذرواژه"), ("ms", "Kata laluan"), ("af", "Wagwoord"),
                        ("sq", "Fjalëkalimi"), ("eu", "Pasahitza"), ("gl", "Contrasinal"), ("cy", "Cyfrinair"),
                        ("lt-ascii", "Slaptazodis"), ("it", "Parola d'ordine")):
        v = pw(); c(f"label-{lang}", f"- {label}: {v}", v)
    v = pw(); c("label-et-qualified", f"Wifi parool: {v}", v)
    v = pw(); c("label-et-bold", f"**Parool:** `{v}`", v)
    v = digits(4); c("pin-et", f"PIN-kood: {v}", v)
    v = digits(4); c("pin-cs", f"PIN kód: {v}", v)
    v = digits(4); c("pin-lt", f"PIN kodas {v}", v)
    v = rs(32); c("key-fi", f"API-avain: {v}", v)
    v = rs(32); c("key-da", f"API-nøgle: {v}", v)
    v = rs(32); c("key-hu", f"API kulcs: {v}", v)
    v = rs(32); c("key-tr", f"Gizli anahtar: {v}", v)
    v = rs(32); c("key-cs", f"API klíč: {v}", v)
    v = rs(32); c("secret-de", f"Geheimnis: {v}", v)
    # 2. short user / password pairs on one line
    v = pw(); c("u-p", f"u: admin p: {v}", v)
    v = pw(); c("U-P-comma", f"U: admin, P: {v}", v)
    v = pw(); c("u-p-slash", f"u: root / p: {v}", v)
    v = pw(); c("user-pass", f"user: bob pass: {v}", v)
    v = pw(); c("usr-pwd", f"usr admin pwd {v}", v)
    v = pw(); c("login-slash", f"login admin / {v}", v)
    v = pw(); c("login-as-slash", f"Login as `operator` / {v}", v)
    v = pw(); c("benutzer-kw", f"Benutzer: admin Kennwort: {v}", v)
    # 3. lock codes
    v = digits(4); c("safe-code", f"Safe code {v}", v)
    v = digits(5); c("safe-code-comma", f"Safe code {v}, spare key under the mat", v)
    v = combo(); c("safe-code-grouped", f"Safe code {v}", v)
    v = combo(); c("safe-colon", f"Safe: {v}", v)
    v = combo(", "); c("safe-combination-commas", f"safe combination {v}", v)
    v = "L" + combo("-R").replace("-R", "-R", 1); c("safe-combination-turns", f"safe combination {v}", v)
    v = digits(4); c("tresor", f"Tresor-Code {v}", v)
    v = digits(4); c("safecode", f"Safecode {v}", v)
    v = digits(4); c("coffre", f"Code du coffre : {v}", v)
    v = combo(); c("locker", f"Gym locker: {v}", v)
    v = digits(4); c("cassaforte", f"combinazione della cassaforte: {v}", v)
    # 4. a network's key after its name
    v = pw(); c("wifi-comma-key", f"Wi-Fi HomeNet, key {v}", v)
    v = pw(); c("wifi-colon-password", f"WiFi: Gast, password {v}", v)
    v = pw(); c("wlan-schluessel", f"WLAN FritzBox-7590, Schlüssel {v}", v)
    v = pw(); c("ssid-key", f"SSID Office5G key {v}", v)
    v = pw(); c("wifi-quoted", f'Wi-Fi "Home Net", pass {v}', v)
    v = pw(); c("wifi-slash", f"wifi Cafe / key: {v}", v)
    # 5. Azure DevOps PATs
    v = ado(); c("ado-label", f"Azure DevOps PAT: {v}", v)
    v = ado(); c("ado-token", f"ADO token {v}", v)
    v = ado(); c("ado-env", f"export AZURE_DEVOPS_EXT_PAT={v}", v)
    v = ado(); c("ado-url", f"git clone https://{v}@dev.azure.com/org/proj/_git/repo", v)
    v = ado(); c("vsts", f"vsts pat = {v}", v)
    # 6. rclone
    v = pw(); c("rclone-ini", f"[minio]\ntype = s3\nprovider = Minio\naccess_key_id = minio\nsecret_access_key = {v}", v)
    v = rs(20, string.ascii_uppercase + string.digits); c("rclone-key-id", f"[wasabi]\ntype = s3\naccess_key_id = {v}", v)
    v = rs(22, A + "_-"); c("rclone-pass", f"[mega]\ntype = mega\nuser = me@example.org\npass = {v}", v)
    v = pw(); c("rclone-create", f"rclone config create s3 s3 access_key_id AKIA secret_access_key {v}", v)
    v = pw(); c("rclone-create-eq", f"rclone config create box box client_secret={v}", v)
    v = pw(); c("rclone-obscure", f"rclone obscure '{v}'", v)
    v = pw(); c("client-secret-typed", f"client_secret: {v}", v)
    # 7. a password in parentheses after its user
    v = pw(); c("paren-admin", f"admin ({v})", v)
    v = pw(); c("paren-login", f"NAS login: nasuser ({v})", v)
    v = pw(); c("paren-root", f"router: root ({v})", v)
    v = pw(); c("paren-de", f"Zugang: verwalter ({v})", v)
    # 8. a password word after a comma mid-sentence
    v = pw(); c("comma-kennwort", f"Router im Keller, Kennwort {v}", v)
    v = pw(); c("comma-password", f"NAS at 10.0.0.5, password {v}", v)
    v = pw(); c("comma-contrasena", f"usuario admin, contraseña {v}", v)
    v = pw(); c("semicolon-haslo", f"konto: jan; hasło {v}", v)
    v = pw(); c("comma-mdp", f"compte admin, mot de passe {v}", v)
    v = pw(); c("comma-parool", f"kasutaja admin, parool {v}", v)
    v = pw(); c("dash-wachtwoord", f"gebruiker admin - wachtwoord {v}", v)
    v = pw(); c("comma-and-password", f"the printer is at 10.0.0.9, and the password {v}", v)
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
    # round 10: the words of its rules in text without a secret
    "Cookie: theme=dark; lang=en", "Set-Cookie: id=a3fWa; Expires=Thu, 21 Oct 2026 07:28:00 GMT; Secure",
    "session_id: 550e8400-e29b-41d4-a716-446655440000",
    "Claude-Session: https://claude.ai/code/session_01UnLnhsH25Nnv7LHhekUfPd",
    "2FA: enabled via the authenticator app", "MFA code: 123456 (it expires in 30 s)",
    "error code for the door sensor is 4040 ms", "palabra clave: Python3", "Clave primaria: id_usuario",
    "with password reset enabled", "hash the password SHA256-style", "encrypt with password AES-256",
    'fields = ["password", "user_name"]', 'validate("password", "required|min:8")',
    "Basic authentication is configured in nginx.conf", "echo hello > secret.txt",
    "Public key:\nAAAAC3NzaC1lZDI1NTE5AAAAIQ0nrBgBffOrtqtWNW9JEH1WAFrAlEO6i",
    "Host key fingerprint:\nSHA256nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
    "ssh-keygen -t ed25519 -N '' -f key", "7z a -mx=9 -p backup.7z docs/", "sqlplus / as sysdba",
    "zip -r -P ${ZIP_PASSWORD} out.zip dir", "PSK_IDENTITY=client1", "key_mgmt=WPA-PSK",
    "security answers: must be at least 3 characters", "🔑 Keys and tokens", "service password-encryption",
    "API-Schlüssel: siehe Tresor", "Clé API : dans le coffre", "snmpwalk -v2c -c public 10.0.0.1",
    'read -s PASS <<< "$INPUT"', "openssl enc -d -aes-256-cbc -k $KEY -in a.enc",
    # round 12: its shapes' words with no secret
    "Parola: casa", "Paroles : Jacques Brel", "change your password every 90 days", "the key insight is speed",
    "Safe: 2-3 days", "safe 2024", "Safe mode: 1234", "the safe is 10-20 m away", "fail-safe: 1234",
    "Wi-Fi HomeNet, key type WPA2-PSK", "Wi-Fi 2.4GHz, password on the router label", "SSID HomeNet key WPA2",
    "u: admin p: $PASSWORD", "user: bob pass: none", "login page / Settings2", "graphical apps (X11/Wayland)",
    "admin (see vault)", "root (UID0)", "admin (v2.1.0)", "Router im Keller, Kennwort vergessen",
    "NAS at 10.0.0.5, password reset via the web UI", "users, passwords, keys", "rclone config create s3 s3 provider AWS",
    "secret: v1.2.3", "secret_name: Abc123!x", "access_key_id = my-access-key",
    "sha256: ieqh746yng7by3a4rogubbbayn3bo47owoo5sb2glshv3mts7zc6",
)


def main() -> int:
    verbose = "-v" in sys.argv
    altered = [t for t in FALSE_POSITIVES if scrub(t)[0] != t]
    for t in altered:
        print("ALTERED " + t)
    print(f"false-positive texts: {len(altered)} altered / {len(FALSE_POSITIVES)}")
    for name, probe in (("first probe", probe_one), ("second probe", probe_two), ("third probe", probe_three), ("fourth probe", probe_four),
                        ("fifth probe", probe_five)):
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
