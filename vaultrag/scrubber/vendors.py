"""Vendor rules: tokens recognised by their own published prefix and shape.

Shapes come from the vendors' documentation and public scanners' rule lists; the rules are written
here. `PREFIXED` is a plain table (prefix, body alphabet, length) so a test can generate a sample of
every entry; shapes that need more than that are regexes below it.
"""
from __future__ import annotations

import re

from .judge import is_filled_shape, is_filler, looks_random
from .rules import PRIORITY_VENDOR, add, around, literal, plain, random, random_vendor

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_SEP = r"""["'*\]]{0,2}[ \t]*(?P<sep>:=|=>|=|:(?!//))[ \t]*\**[ \t]*"""

# Body alphabets, as regex classes.
ALPHABETS = {
    "hex": "0-9a-f", "HEX": "0-9A-F", "Hex": "0-9a-fA-F", "b62": "A-Za-z0-9", "a36": "a-z0-9",
    "A36": "A-Z0-9", "url": "A-Za-z0-9_-", "b64": "A-Za-z0-9+/", "b64url=": "A-Za-z0-9_=-",
    "a36url": "a-z0-9_-", "b32": "A-Z2-7", "b58": "1-9A-HJ-NP-Za-km-z",
}

# (rule, literal prefix, alphabet, min body length, max body length, case-insensitive prefix)
PREFIXED: tuple[tuple[str, str, str, int, int], ...] = (
    # AI providers
    ("anthropic-api-key", "sk-ant-admin01-", "url", 80, 120),
    ("openrouter-api-key", "sk-or-v1-", "hex", 64, 64),
    ("groq-api-key", "gsk_", "b62", 52, 52),
    ("xai-api-key", "xai-", "b62", 80, 80),
    ("perplexity-api-key", "pplx-", "b62", 48, 56),
    ("replicate-api-token", "r8_", "b62", 37, 37),
    ("langsmith-api-key", "lsv2_pt_", "hex", 32, 32),
    ("langsmith-api-key", "lsv2_sk_", "hex", 32, 32),
    ("pinecone-api-key", "pcsk_", "url", 60, 100),
    ("huggingface-token", "api_org_", "b62", 34, 34),
    ("tavily-api-key", "tvly-", "url", 32, 48),
    ("firecrawl-api-key", "fc-", "hex", 32, 32),
    ("fireworks-api-key", "fw_", "b62", 24, 32),
    ("elevenlabs-api-key", "sk_", "hex", 48, 48),
    ("deepseek-api-key", "sk-", "hex", 32, 32),
    # cloud and hosting
    ("aws-bedrock-api-key", "ABSK", "b64", 100, 300),
    ("aws-bedrock-api-key", "bedrock-api-key-", "b64", 100, 2000),
    ("alibaba-access-key-id", "LTAI", "b62", 20, 24),
    ("gcp-oauth-access-token", "ya29.", "url", 30, 400),
    ("digitalocean-token", "dop_v1_", "hex", 64, 64),
    ("flyio-token", "fo1_", "url", 43, 43),
    ("flyio-token", "fm2_", "b64", 100, 1000),
    ("render-api-key", "rnd_", "b62", 32, 32),
    ("netlify-token", "nfp_", "b62", 36, 40),
    ("neon-api-key", "napi_", "a36", 64, 64),
    ("supabase-token", "sb_secret_", "url", 31, 60),
    ("planetscale-token", "pscale_tkn_", "url", 32, 64),
    ("planetscale-token", "pscale_pw_", "url", 32, 64),
    ("planetscale-token", "pscale_oauth_", "url", 32, 64),
    ("scalingo-token", "tk-us-", "url", 48, 48),
    ("tailscale-key", "tskey-", "url", 30, 80),
    ("yandex-api-key", "AQVN", "url", 35, 38),
    ("cloudflare-origin-ca-key", "v1.0-", "Hex", 170, 171),
    ("dynatrace-token", "dt0c01.", "url", 70, 100),
    ("terraform-cloud-token", "atlasv1.", "url", 60, 70),
    ("prefect-api-key", "pnu_", "b62", 36, 36),
    ("infracost-api-key", "ico-", "b62", 32, 32),
    ("octopus-deploy-api-key", "API-", "A36", 26, 26),
    # source control, CI, registries
    ("gitlab-token", "glrt-", "url", 20, 60),
    ("gitlab-token", "glffct-", "url", 20, 60),
    ("gitlab-token", "glcbt-", "url", 20, 60),
    ("bitbucket-app-password", "ATBB", "b64url=", 32, 40),
    ("docker-hub-token", "dckr_pat_", "url", 27, 27),
    ("docker-hub-token", "dckr_oat_", "url", 27, 32),
    ("circleci-token", "CCIPAT_", "url", 60, 70),
    ("buildkite-token", "bkua_", "hex", 40, 40),
    ("sonarqube-token", "squ_", "hex", 40, 40),
    ("sonarqube-token", "sqp_", "hex", 40, 40),
    ("sonarqube-token", "sqa_", "hex", 40, 40),
    ("sourcegraph-token", "sgp_", "url", 40, 60),
    ("clojars-token", "CLOJARS_", "a36", 60, 60),
    ("rubygems-api-key", "rubygems_", "hex", 48, 48),
    ("nuget-api-key", "oy2", "a36", 43, 43),
    ("artifactory-token", "AKCp", "b62", 69, 69),
    ("artifactory-token", "cmVmdGtuOjAxOj", "b62", 40, 80),
    ("readme-api-key", "rdme_", "a36", 70, 70),
    # payment and commerce
    ("square-token", "sq0atp-", "url", 22, 22),
    ("square-token", "sq0csp-", "url", 43, 43),
    ("square-token", "EAAA", "b64url=", 60, 60),
    ("shippo-token", "shippo_live_", "hex", 40, 40),
    ("shippo-token", "shippo_test_", "hex", 40, 40),
    ("duffel-token", "duffel_live_", "url", 43, 43),
    ("duffel-token", "duffel_test_", "url", 43, 43),
    ("flutterwave-secret-key", "FLWSECK_TEST-", "hex", 32, 34),
    ("flutterwave-secret-key", "FLWSECK-", "hex", 32, 34),
    ("easypost-api-key", "EZAK", "b62", 54, 54),
    ("easypost-api-key", "EZTK", "b62", 54, 54),
    ("razorpay-key", "rzp_live_", "b62", 14, 14),
    ("woocommerce-secret", "cs_", "hex", 40, 40),
    ("woocommerce-secret", "ck_", "hex", 40, 40),
    ("paddle-api-key", "pdl_live_apikey_", "url", 40, 60),
    ("paddle-api-key", "pdl_sdbx_apikey_", "url", 40, 60),
    # chat, mail, messaging
    ("brevo-api-key", "xkeysib-", "url", 81, 81),
    ("brevo-api-key", "xsmtpsib-", "url", 81, 81),
    ("mailersend-token", "mlsn.", "hex", 64, 64),
    ("resend-api-key", "re_", "url", 30, 40),
    ("frameio-token", "fio-u-", "url", 64, 64),
    ("typeform-token", "tfp_", "url", 59, 59),
    ("figma-token", "figd_", "url", 40, 48),
    # monitoring and analytics
    ("sentry-dsn", "sntryu_", "hex", 64, 64),
    ("new-relic-key", "NRII-", "url", 32, 32),
    ("new-relic-key", "NRAA-", "a36", 27, 27),
    ("posthog-personal-key", "phx_", "b62", 43, 43),
    ("grafana-token", "eyJrIjoi", "b64", 70, 400),
    ("contentful-token", "CFPAT-", "url", 43, 43),
    ("defined-networking-key", "dnkey-", "url", 80, 80),
    ("unkey-token", "unkey_", "b62", 20, 60),
    # identity and secrets managers
    ("onepassword-service-token", "ops_eyJ", "b64", 250, 4000),
    ("mapbox-secret-token", "sk.eyJ", "url", 60, 300),
    ("adobe-client-secret", "p8e-", "url", 32, 32),
    # wallets: BIP-32 extended private keys (mainnet, testnet, BIP-49/84 forms); `xpub` is public
    ("bip32-private-key", "xprv", "b58", 107, 107),
    ("bip32-private-key", "tprv", "b58", 107, 107),
    ("bip32-private-key", "yprv", "b58", 107, 107),
    ("bip32-private-key", "zprv", "b58", 107, 107),
)

# Words of the prefix that also start common identifiers: the body must look random (loose test).
_LOOSE = {"ck_", "cs_", "re_", "sk_", "sk-", "fc-", "fw_", "r8_", "API-", "ya29.", "oy2", "v1.0-",
          "ABSK", "EAAA", "LTAI", "AQVN"}


def _register_prefixed() -> None:
    for name, prefix, alphabet, lo, hi in PREFIXED:
        cls = ALPHABETS[alphabet]
        body = f"[{cls}]{{{lo},{hi}}}"
        tail = "=" if "+" in cls else ""
        pattern = r"\b" + re.escape(prefix) + body + (f"[{tail}]{{0,2}}" if tail else "") \
            + f"(?![{cls}{tail}])"
        long_run = lo >= 20 and not set("+/=") & set(cls)  # the body alone holds a 20-char run
        add(name, pattern, [prefix.lower()], random_vendor if prefix in _LOOSE else plain,
            needs_long=long_run, vendor=True, anchored=False, priority=PRIORITY_VENDOR, in_token=True)


def _vendor(name: str, pattern: str, triggers, check=plain, needs_long: bool = True,
            anchored: bool = False, in_token: bool = True) -> None:
    """`in_token=False` when a trigger is context outside the token (`datadog_api_key = <hex>`)."""
    add(name, pattern, triggers, check, needs_long=needs_long, vendor=True, anchored=anchored,
        priority=PRIORITY_VENDOR, in_token=in_token)


_vendor("anthropic-api-key", r"\bsk-ant-[a-z]{3,6}\d\d-[A-Za-z0-9_-]{40,}", ["sk-ant-"])
_vendor("openai-api-key", r"\bsk-(?:(?:(?:proj|svcacct|admin|None)-)?[A-Za-z0-9_-]{20,}T3BlbkFJ"
        r"[A-Za-z0-9_-]{20,}|(?:proj|svcacct|admin)-[A-Za-z0-9_-]{80,}|[A-Za-z0-9]{48}\b)", ["sk-"],
        random_vendor)
_vendor("github-pat-classic", r"\bghp_[A-Za-z0-9]{36}\b", ["ghp_"])
_vendor("github-pat-fine-grained", r"\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b", ["github_pat_"])
_vendor("github-oauth-token", r"\bgho_[A-Za-z0-9]{36}\b", ["gho_"])
_vendor("github-app-token", r"\bgh[usr]_[A-Za-z0-9]{36}\b", ["ghu_", "ghs_", "ghr_"])
# GitLab's documented prefixes, each with its body length: PATs, deploy, feed, runner, SCIM and CI
# job tokens 20+ (newer ones add `.01.xyz` routing parts), incoming mail 25, pipeline triggers 40,
# agents 50+, OAuth application secrets 64. The length tells `glptt-hellOworld380_testin` apart.
_GITLAB = (("pat|dt|rt|ft|soat|cbt", "{20,}"), ("imt", "{25}"), ("ptt", "{40}"), ("agent", "{50,}"),
           ("oas", "{64}"))
for _p, _n in _GITLAB:
    _vendor("gitlab-token", r"\bgl(?:%s)-[A-Za-z0-9_-]%s(?![\w-])(?:\.[A-Za-z0-9_-]+)*" % (_p, _n),
            [f"gl{p}-" for p in _p.split("|")])
_vendor("gitlab-token", r"\bGR1348941[A-Za-z0-9_-]{20,}", ["gr1348941"])  # runner registration
_vendor("aws-access-key-id", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",  # base32 in AWS; scanners take 0-9
        ["akia", "asia", "abia", "acca", "a3t"])
_vendor("aws-secret-access-key", r"(?i:aws[\w.-]{0,20}?secret[\w.-]{0,20}?|secret_?access_?key)" + _SEP
        + r"""["']?(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])""", ["aws", "secret_access", "secretaccess"],
        random_vendor, needs_long=False, anchored=True, in_token=False)
_vendor("azure-ad-client-secret", r"(?<![\w~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])",
        ["q~"], random_vendor, needs_long=False, in_token=False)
_vendor("azure-cognitive-key", r"\b[A-Za-z0-9]{52}JQQJ9[A-Za-z0-9]{27}\b", ["jqqj9"], random_vendor)
_vendor("azure-devops-pat", r"\b[A-Za-z0-9]{52}AZDO[A-Za-z0-9]{28}\b", ["azdo"], random_vendor)
_vendor("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}(?![\w-])", ["aiza"])
_vendor("google-oauth-client-secret", r"\bGOCSPX-[A-Za-z0-9_-]{28}(?![\w-])", ["gocspx-"])
_vendor("gcp-oauth-refresh-token", r"\b1//0[A-Za-z0-9_-]{40,}", ["1//0"], random_vendor)
_vendor("gcp-service-account-key", r'"private_key(?:_id)?"\s*:\s*"(?P<s>[^"]{16,})"', ["private_key"],
        literal, needs_long=False, in_token=False)
_vendor("azure-storage-key", r"\bAccountKey=(?P<s>[A-Za-z0-9+/]{86}==)", ["accountkey="], needs_long=False)
_vendor("azure-shared-access-key", r"\bSharedAccess(?:Key|Signature)=(?P<s>[A-Za-z0-9+/=%&:.-]{20,})",
        ["sharedaccess"], literal, needs_long=False, in_token=False)
_vendor("azure-sas-token", r"[?&]sig=(?P<s>[A-Za-z0-9%+/]{30,}(?:%3D|=)*)", ["sig="], random_vendor,
        needs_long=False, in_token=False)
_vendor("stripe-secret-key", r"\bsk_live_[A-Za-z0-9]{20,}", ["sk_live_"])
_vendor("stripe-test-key", r"\bsk_test_[A-Za-z0-9]{20,}", ["sk_test_"])
_vendor("stripe-restricted-key", r"\brk_(?:live|test)_[A-Za-z0-9]{20,}", ["rk_live_", "rk_test_"])
_vendor("stripe-webhook-secret", r"\bwhsec_[A-Za-z0-9]{24,}", ["whsec_"])
_vendor("slack-token", r"\bxox[abposre]-[A-Za-z0-9-]{20,}", ["xox"])
_vendor("slack-token", r"\bxoxe\.xox[bp]-\d-[A-Z0-9]{100,}", ["xoxe."])
_vendor("slack-token", r"\bxapp-\d-[A-Z0-9]+-\d+-[a-f0-9]{20,}", ["xapp-"])
_vendor("slack-webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/-]{20,})",
        ["hooks.slack.com"], needs_long=False, in_token=False)
_vendor("teams-webhook", r"\.webhook\.office\.com/webhookb2/(?P<s>[A-Za-z0-9@/-]{40,})",
        ["webhook.office.com"], needs_long=False, in_token=False)
_vendor("twilio-api-key", r"\bSK[0-9a-fA-FxX]{32}\b", ["sk"], random_vendor)  # x: a filled-in template
_vendor("sendgrid-api-key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![\w-])", ["sg."])
_vendor("mailgun-api-key", r"\bkey-[0-9a-f]{32}\b", ["key-"], random_vendor)
_vendor("mailgun-api-key", r"\b[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}\b", ["mailgun"], random_vendor, in_token=False)
_vendor("mailchimp-api-key", r"\b[0-9a-f]{32}-us\d{1,2}\b", ["-us"], random_vendor)
_vendor("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", ["npm_"])
def _npm_auth(m: re.Match):
    """`_authToken=` names the credential: any literal, and an `npm_` value even when filled with x."""
    return m.span("s") if m.group("s").startswith("npm_") else literal(m)


_vendor("npm-token", r"_authToken=(?P<s>[^\s\"'<>]{8,})", ["_authtoken"], _npm_auth, needs_long=False, in_token=False)
_vendor("pypi-token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}", ["pypi-age"])
_vendor("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}\b", ["hf_"], random_vendor)
_vendor("discord-bot-token", r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![\w.-])", (),
        around(re.compile(r"(?<![\w.-])(?P<p>[A-Za-z0-9_-]{0,3}[MNO][A-Za-z0-9_-]{23,25})\Z")))
# (up to 3 stray characters glued to the token's front are redacted with it)
_vendor("discord-webhook", r"discord(?:app)?\.com/api/webhooks/\d+/(?P<s>[A-Za-z0-9_-]{50,})", ["discord"], in_token=False)
_vendor("telegram-bot-token", r":[A-Za-z0-9_-]{35}(?![\w-])", (),
        around(re.compile(r"(?:(?<![\w:])|(?<=bot))(?P<p>\d{8,10})\Z")))
_vendor("shopify-token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", ["shpat_", "shpca_", "shppa_", "shpss_"])
_vendor("datadog-api-key", r"(?i:(?:datadog|dd)[\w-]{0,20}?(?:api|app|application)[_-]?key)" + _SEP
        + r"""["']?(?P<s>[a-f0-9]{32}|[a-f0-9]{40})\b""", ["datadog", "dd_", "dd-"], random_vendor,
        anchored=True, in_token=False)
_vendor("sentry-dsn", r"://(?P<s>[0-9a-f]{32}(?::[0-9a-f]{32})?)@[\w.-]+(?::\d+)?/\d+", ["://"])
_vendor("sentry-dsn", r"\bsntry[su]_[A-Za-z0-9+/=_-]{40,}", ["sntry"])
_vendor("digitalocean-token", r"\bdo[or]_v1_[a-f0-9]{64}\b", ["doo_v1_", "dor_v1_"])
_vendor("heroku-api-key", r"\bHRKU-[A-Za-z0-9_-]{30,}", ["hrku-"])
_vendor("heroku-api-key", r"\b(?i:heroku[\w-]{0,20}?(?:key|token|secret))" + _SEP + r"""["']?(?P<s>%s)"""
        % _UUID, ["heroku"], anchored=True, in_token=False)
# Bech32: one case throughout (age prints upper case; a lower-cased copy is the same key)
_vendor("age-secret-key", r"\b(?:AGE-SECRET-KEY-1[0-9A-Z]{58}|age-secret-key-1[0-9a-z]{58})\b", ["age-secret-key-1"])
_vendor("databricks-token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", ["dapi"], random_vendor)
_vendor("postman-api-key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", ["pmak-"])
_vendor("linear-api-key", r"\blin_api_[A-Za-z0-9]{40}\b", ["lin_api_"])
_vendor("notion-token", r"\bntn_[A-Za-z0-9]{40,}\b", ["ntn_"], random_vendor)
_vendor("notion-token", r"\bsecret_[A-Za-z0-9]{43}\b", ["secret_"], random_vendor)
_vendor("grafana-token", r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b", ["glsa_"])
_vendor("grafana-token", r"\bglc_[A-Za-z0-9+/]{32,}={0,2}", ["glc_"])
# Vault: service tokens are hvs. + 90+ characters, root tokens (operator init) hvs. + 24.
_vendor("hashicorp-vault-token", r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}", ["hvs.", "hvb.", "hvr."], random_vendor)
_vendor("doppler-token", r"\bdp\.(?:pt|st(?:\.[a-z0-9_-]{2,35})?|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\b",
        ["dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."])
_vendor("supabase-token", r"\bsbp_[a-f0-9]{40}\b", ["sbp_"])
_vendor("pulumi-token", r"\bpul-[a-f0-9]{40}\b", ["pul-"])
_vendor("new-relic-key", r"\bNRAK-[A-Z0-9]{27}\b", ["nrak-"])
_vendor("atlassian-api-token", r"\bATATT3[A-Za-z0-9_=-]{180,}", ["atatt3"])
_vendor("hubspot-token", r"\bpat-(?:na|eu)\d-%s\b" % _UUID, ["pat-na", "pat-eu"])
_vendor("plaid-token", r"\b(?:access|public)-(?:sandbox|development|production)-%s\b" % _UUID,
        ["-sandbox-", "-development-", "-production-"])
_vendor("launchdarkly-key", r"\b(?:api|sdk|mob)-%s\b" % _UUID, ["api-", "sdk-", "mob-"], needs_long=False)
_vendor("braintree-token", r"\baccess_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}\b",
        ["access_token$"], in_token=False)
for _v in "12":  # one literal prefix per pattern: re then searches for it instead of a class
    _vendor("asana-token", r"\b%s/\d{13,16}(?::|/)[A-Za-z0-9]{32}\b" % _v, [f"{_v}/"], random_vendor)
_vendor("dropbox-token", r"\bsl\.[A-Za-z0-9_=-]{130,}", ["sl."], random_vendor)
def _whole_if_body(m: re.Match):
    """Redact the whole token, but judge only its body (Twitter's 21 leading A's are the format)."""
    return None if is_filler(m.group("b")) else m.span()


_vendor("twitter-bearer-token", r"\bA{21}(?P<b>[A-Za-z0-9%]{30,})", ["aaaaaaaaaaaaaaaaaaaaa"], _whole_if_body)
_vendor("onepassword-secret-key", r"\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})"
        r"-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b", ["a3-"], needs_long=False)
_vendor("okta-api-token", r"\b(?i:ssws)[ \t]+(?P<s>00[A-Za-z0-9_-]{40})(?![\w-])", ["ssws"], random_vendor,
        needs_long=False, in_token=False)
_vendor("softlayer-api-key", r"api\.softlayer\.com/(?:soap|rest)/v3(?:\.1)?/(?P<s>[a-z0-9]{64})\b",
        ["softlayer"], plain, in_token=False)

_vendor("airtable-token", r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b", ["pat"])
_vendor("harness-token", r"\b(?:pat|sat)\.[\w-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}\b", ["pat.", "sat."])
_vendor("clickup-token", r"\bpk_\d{3,10}_[A-Z0-9]{32}\b", ["pk_"])
_vendor("telnyx-api-key", r"\bKEY[0-9A-F]{32}_[A-Za-z0-9]{22}\b", ["key"])
_vendor("infisical-token", r"\bst\.[a-f0-9-]{36}\.[a-f0-9]{32}\.[a-f0-9]{32}\b", ["st."])

# Square's published secret shape lets a backslash into the body (an escaped `-` or `_`).
_vendor("square-token", r"\bsq0csp-[0-9A-Za-z\\_-]{43}(?![\w\\-])", ["sq0csp-"], needs_long=False)


def _artifactory(m: re.Match):
    """JFrog API keys (`AKC...`) and encrypted passwords / identity references (`AP[0-9A-F]...`):
    a short two-letter prefix, so the token must stand alone (after a space, `=`, `:` or a quote)
    and either be a filled-in template of the shape or long and random."""
    start = m.start()
    if start and m.string[start - 1] not in " \t\n\r=:\"'`(,;":
        return None  # `testAP6within...`, a path or a dotted name
    value = m.group()
    body = value[3:]
    if is_filled_shape(body) or (len(value) >= ARTIFACTORY_RANDOM_LEN and looks_random(value)):
        return m.span()
    return None


ARTIFACTORY_RANDOM_LEN = 20  # real keys are 64-73 chars; short all-letter runs are words (APACHE...)
_vendor("artifactory-token", r"AKC[A-Za-z0-9]{10,}(?![A-Za-z0-9])", (), _artifactory, needs_long=False)
_vendor("artifactory-token", r"AP[0-9A-F][A-Za-z0-9]{8,}(?![A-Za-z0-9])", (), _artifactory, needs_long=False)

_register_prefixed()
