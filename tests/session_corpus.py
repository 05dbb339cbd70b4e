"""Generated Claude Code transcripts (issue 17): never real ones. Importable by tests and by
benchmarks/sessions_eval.py (which puts tests/ on sys.path).

The lines follow the shapes in ../shared/reference/claude-code-hooks.md, "Transcript JSONL":
user prompts (string and block content), assistant stream chunks (one line per block, grouped by
message.id: thinking, text, tool_use), tool results with `toolUseResult`, attachments, progress,
system entries (compact_boundary, turn_duration), metadata (summary, custom-title,
file-history-snapshot, queue-operation), isMeta and isSidechain entries, a compaction summary,
an unknown entry type, and optionally a half-written last line.
"""
from __future__ import annotations

import json
import random
import uuid as uuidlib
from dataclasses import dataclass, field
from pathlib import Path

PROJECT = "-home-dev-acme-api"


@dataclass
class Transcript:
    session_id: str
    rng: random.Random
    lines: list[str] = field(default_factory=list)
    parent: str | None = None
    clock: int = 0
    cwd: str = "/home/dev/acme-api"

    def _uuid(self) -> str:
        return str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))

    def _stamp(self) -> str:
        self.clock += self.rng.randint(5, 90)
        h, rem = divmod(self.clock, 3600)
        m, s = divmod(rem, 60)
        return f"2026-11-{10 + (h // 24) % 18:02d}T{h % 24:02d}:{m:02d}:{s:02d}.000Z"

    def _base(self, kind: str, **extra) -> dict:
        u = self._uuid()
        d = {"type": kind, "uuid": u, "parentUuid": self.parent, "sessionId": self.session_id,
             "timestamp": self._stamp(), "version": "2.1.300", "cwd": self.cwd, "gitBranch": "main",
             "isSidechain": False, "userType": "external", "entrypoint": "cli", **extra}
        self.parent = u
        return d

    def add(self, d: dict) -> dict:
        self.lines.append(json.dumps(d))
        return d

    def user(self, text, **extra) -> str:
        content = text if isinstance(text, str) else [{"type": "text", "text": t} for t in text]
        d = self._base("user", message={"role": "user", "content": content}, promptId=self._uuid(),
                       permissionMode="default", **extra)
        return self.add(d)["uuid"]

    def assistant(self, text: str | None = None, thinking: str | None = None, tool: tuple[str, dict] | None = None,
                  split: bool = True) -> tuple[str | None, str | None]:
        """One assistant message as stream chunks: (uuid of the text line, uuid of the tool_use)."""
        mid = "msg_" + self._uuid().replace("-", "")[:24]
        blocks = []
        if thinking:
            blocks.append({"type": "thinking", "thinking": thinking, "signature": "sig" + self._uuid()[:8]})
        if text:
            blocks.append({"type": "text", "text": text})
        if tool:
            blocks.append({"type": "tool_use", "id": "toolu_" + self._uuid()[:12], "name": tool[0], "input": tool[1]})
        text_uuid = tool_id = None
        parts = [[b] for b in blocks] if split else [blocks]
        for part in parts:
            d = self._base("assistant", requestId="req_" + self._uuid()[:10], message={
                "id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-5",
                "content": part, "stop_reason": "tool_use" if tool else "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 20}})
            self.add(d)
            if any(b["type"] == "text" for b in part) and text_uuid is None:
                text_uuid = d["uuid"]
            for b in part:
                if b["type"] == "tool_use":
                    tool_id = b["id"]
        return text_uuid, tool_id

    def tool_result(self, tool_id: str, output: str) -> None:
        self.add(self._base("user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "content": output}]},
            toolUseResult={"stdout": output, "stderr": "", "interrupted": False}))

    def noise(self) -> None:
        """Entries that are mechanism, not conversation."""
        self.add(self._base("attachment", attachment={"type": "hook_success", "hookName": "vaultrag",
                                                     "hookEvent": "UserPromptSubmit", "content": "hook ran",
                                                     "stdout": "", "exitCode": 0, "durationMs": 41}))
        self.add(self._base("progress", data={"type": "hook_progress", "hookEvent": "PreToolUse"}))
        self.add(self._base("system", subtype="turn_duration", durationMs=1234))
        self.add({"type": "file-history-snapshot", "messageId": self._uuid(), "snapshot": {"trackedFileBackups": {}}})
        self.add({"type": "queue-operation", "operation": "enqueue", "timestamp": self._stamp()})

    def write(self, folder: Path, half_line: str | None = None) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.session_id}.jsonl"
        data = "\n".join(self.lines) + "\n" + (half_line or "")
        path.write_text(data, encoding="utf-8")
        return path


def new_transcript(seed: int) -> Transcript:
    rng = random.Random(seed)
    sid = str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
    return Transcript(sid, rng)


# -- the planted corpus of the tests ----------------------------------------------------------------
SECRETS = ("ghp_" + "x7Kq2mPz9LwR4tVb8NcD5fGh1JkS3aE6yUoI",  # GitHub token shape
           "AKIA" + "QWERTYUIOPASDFGH",                     # AWS access key id shape
           "sk-ant-api03-" + "Zx9" * 30)                    # Anthropic key shape

HIDDEN = {  # word -> where it is stated (only there): never found
    "zorbluxtool": "tool result", "quimthinking": "thinking", "vexmetaword": "isMeta entry",
    "plonksidechain": "sidechain entry", "trozzattach": "attachment", "wumbletooluse": "tool_use input",
    "flimprogress": "progress entry", "snorgsystem": "system entry", "blarpunknown": "unknown entry type",
    "grelchhalfline": "half-written last line",
}


def planted_sessions(root: Path) -> dict:
    """Three sessions with every entry type. Returns {"found": {word: (session_id, uuid, role)},
    "hidden": HIDDEN, "secrets": SECRETS, "sessions": [ids], "paths": [paths]}."""
    folder = root / PROJECT
    found: dict[str, tuple[str, str, str]] = {}
    paths = []
    # session 1: a decision, stream chunks, tool calls, a compaction, secrets pasted by the user
    t = new_transcript(1)
    t.add({"type": "summary", "summary": "Choosing the queue for billing events", "leafUuid": t._uuid()})
    u = t.user("We need a queue for the billing events. Options are kafkaroo or rabbitine; which one fits?")
    found["kafkaroo"] = (t.session_id, u, "user")
    t.noise()
    a, tool = t.assistant(text="Let me check the current broker config first.", thinking="quimthinking is a plan",
                          tool=("Bash", {"command": "cat broker.conf # wumbletooluse"}))
    t.tool_result(tool, "broker=zorbluxtool\nport=5672")
    a, _ = t.assistant(text="Decision: use the flurbigate broker for billing events; it keeps ordering per account.",
                       thinking="weighing quimthinking against latency")
    found["flurbigate"] = (t.session_id, a, "assistant")
    t.add(t._base("user", message={"role": "user", "content": "<local-command-stdout>vexmetaword</local-command-stdout>"},
                  isMeta=True))
    t.add(t._base("attachment", attachment={"type": "hook_additional_context", "content": "trozzattach"}))
    t.add(t._base("progress", data={"type": "hook_progress", "note": "flimprogress"}))
    t.add(t._base("system", subtype="compact_boundary", content="snorgsystem", logicalParentUuid=t.parent,
                  compactMetadata={"trigger": "auto", "preTokens": 150000}))
    u = t.user("This session is being continued from a previous conversation. Summary: the team chose the "
               "flurbigate broker and postponed the dashboards to the glimmerdash milestone.", isCompactSummary=True)
    found["glimmerdash"] = (t.session_id, u, "user")
    u = t.user(f"Here is the deploy token for CI, store it in the secret manager: {SECRETS[0]} and the AWS key "
               f"{SECRETS[1]} ; the pipeline is named spindlewharf")
    found["spindlewharf"] = (t.session_id, u, "user")
    sc = t._base("user", message={"role": "user", "content": "subagent task: plonksidechain"})
    sc["isSidechain"] = True
    t.add(sc)
    sa = t._base("assistant", message={"id": "msg_side", "role": "assistant", "content": [
        {"type": "text", "text": "sidechain reply plonksidechain"}]})
    sa["isSidechain"] = True
    t.add(sa)
    t.add({"type": "blarp-new-entry", "uuid": t._uuid(), "payload": "blarpunknown"})
    t.user("Thanks, go ahead")  # too short to index
    paths.append(t.write(folder))
    # session 2: a fix, a prompt logged twice, block content, a half-written last line
    t2 = new_transcript(2)
    t2.add({"type": "custom-title", "customTitle": "Flaky tests in CI"})
    u = t2.user(["The ordering test fails one run in five on CI.", "It is the one named test_quokkasort."])
    found["quokkasort"] = (t2.session_id, u, "user")
    t2.user(["The ordering test fails one run in five on CI.", "It is the one named test_quokkasort."])
    a, tool = t2.assistant(text="I'll rerun it with the random order plugin disabled.",
                           tool=("Bash", {"command": "pytest -p no:randomly"}))
    t2.tool_result(tool, "42 passed in 3.1s zorbluxtool")
    a, _ = t2.assistant(text="Running pytest with -p no:randomly and seeding the clock with freezegun "
                             "fixed the flaky quokkasort test: the fix is the snickerbolt fixture.")
    found["snickerbolt"] = (t2.session_id, a, "assistant")
    u = t2.user(f"Also rotate the key {SECRETS[2]} please")
    paths.append(t2.write(folder, half_line='{"type":"user","uuid":"half","message":{"role":"user","content":"grelchhalfline'))
    # session 3: a different project, its own folder
    t3 = new_transcript(3)
    u = t3.user("Where did we put the runbook for the nightly backup job called moonvault?")
    found["moonvault"] = (t3.session_id, u, "user")
    a, _ = t3.assistant(text="The moonvault runbook lives in ops/runbooks/backup.md and is owned by the platform team.",
                        split=False)
    found["runbook"] = (t3.session_id, a, "assistant")
    paths.append(t3.write(root / "-home-dev-ops"))
    return {"found": found, "hidden": HIDDEN, "secrets": SECRETS, "paths": paths,
            "sessions": [t.session_id, t2.session_id, t3.session_id]}


# -- the eval corpus: questions about past sessions ----------------------------------------------
COMPONENTS = [("billing events", "queue"), ("user sessions", "cache"), ("search index", "database"),
              ("image uploads", "object store"), ("feature flags", "config service"), ("audit log", "storage"),
              ("email sending", "provider"), ("metrics", "time-series database"), ("job scheduling", "scheduler"),
              ("secrets", "vault backend"), ("API gateway", "proxy"), ("mobile push", "notification service")]
CHOICES = ["Kafka", "Redis", "PostgreSQL", "MinIO", "Unleash", "ClickHouse", "Postmark", "Prometheus",
           "Temporal", "OpenBao", "Envoy", "Firebase", "RabbitMQ", "Memcached", "SQLite", "Ceph", "NATS",
           "TimescaleDB", "Celery", "Traefik"]
REASONS = ["it keeps ordering per key", "the team already runs it", "it is cheaper at our volume",
           "it has the best client library", "it survives a zone outage", "it needs no extra ops work"]
PROBLEMS = [("the flaky ordering test", "pytest -p no:randomly"), ("the stale docker layer cache", "docker builder prune -af"),
            ("the npm lockfile conflict", "npm ci --legacy-peer-deps"), ("the failing migration", "alembic stamp head"),
            ("the out-of-memory webpack build", "NODE_OPTIONS=--max-old-space-size=4096 npm run build"),
            ("the detached git HEAD", "git switch -c rescue-branch"), ("the expired TLS certificate", "certbot renew --force-renewal"),
            ("the slow test suite", "pytest -n auto"), ("the broken virtualenv", "uv venv --clear"),
            ("the port already in use", "fuser -k 8080/tcp"), ("the locked sqlite database", "sqlite3 app.db 'PRAGMA wal_checkpoint'"),
            ("the missing locale", "locale-gen en_US.UTF-8")]
FILLER_USER = ["Can you look at the logs from this morning?", "Please tidy up the README section on setup.",
               "What does this function return when the list is empty?", "Rename the helper to something clearer.",
               "Let's add a test for the edge case with zero items.", "Why is the linter complaining about this import?"]
FILLER_ASSISTANT = ["I read the file and the function returns None for an empty list; I added a guard.",
                    "The linter flags the import because it is unused since the refactor; I removed it.",
                    "I renamed the helper and updated the three call sites.", "The logs show a timeout talking to the cache at 09:12.",
                    "I added the test; it covers the empty input and a single item.", "The README now lists the setup steps in order."]


def eval_corpus(root: Path, n_sessions: int = 24, seed: int = 17) -> list[dict]:
    """Sessions holding decisions and fixes among filler turns and tool noise. Returns the
    questions: {"question", "session_id", "message_uuid", "kind"}."""
    rng = random.Random(seed)
    questions: list[dict] = []
    distractors: list[str] = []
    comps = COMPONENTS[:]
    probs = PROBLEMS[:]
    rng.shuffle(comps)
    rng.shuffle(probs)
    for i in range(n_sessions):
        t = new_transcript(1000 + i)
        project = f"-home-dev-proj{i % 4}"
        for _ in range(rng.randint(1, 3)):
            t.user(rng.choice(FILLER_USER))
            _, tool = t.assistant(text=rng.choice(FILLER_ASSISTANT), thinking="considering the options",
                                  tool=("Read", {"file_path": "src/app.py"}))
            t.tool_result(tool, "def main():\n    return run()\n" * rng.randint(1, 20))
            t.noise()
        if i < len(comps):
            what, kind = comps[i]
            choice, other = rng.sample(CHOICES, 2)
            t.user(f"For the {what} we need a {kind}. Should we pick {choice} or {other}?")
            a, _ = t.assistant(text=f"Decision: we go with {choice} as the {kind} for the {what}, because "
                                    f"{rng.choice(REASONS)}. {other} stays out for now.")
            questions.append({"question": f"what did we decide for the {kind} of the {what}?",
                              "session_id": t.session_id, "message_uuid": a, "kind": "decision"})
            questions.append({"question": f"which {kind} did we pick for {what}?",
                              "session_id": t.session_id, "message_uuid": a, "kind": "decision-paraphrase"})
            distractors.append(f"Remind me to look at the {kind} for the {what} again next quarter; "
                               f"nothing is settled about {other} yet.")
        if i < len(probs):
            problem, command = probs[i]
            t.user(f"I keep hitting {problem}, any idea?")
            _, tool = t.assistant(text="Let me try a couple of things.", tool=("Bash", {"command": command}))
            t.tool_result(tool, "done")
            a, _ = t.assistant(text=f"Running `{command}` fixed {problem}; it was the root cause.")
            questions.append({"question": f"which command fixed {problem}?", "session_id": t.session_id,
                              "message_uuid": a, "kind": "fix"})
            questions.append({"question": f"how did we get rid of {problem.removeprefix('the ')} last time?",
                              "session_id": t.session_id, "message_uuid": a, "kind": "fix-paraphrase"})
            distractors.append(f"I saw {problem} again on another machine, but did not try anything yet.")
        if distractors and rng.random() < 0.7:  # an earlier topic mentioned again, unresolved
            t.user(distractors.pop(rng.randrange(len(distractors))))
            t.assistant(text="Noted; I will leave it as it is for now.")
        t.user(rng.choice(FILLER_USER))
        t.assistant(text=rng.choice(FILLER_ASSISTANT))
        t.write(root / project)
    return questions


def bulk_corpus(root: Path, n: int = 1000, target_bytes: int = 200_000, seed: int = 99) -> int:
    """`n` transcripts of about `target_bytes` each (most of it tool output, as in real ones).
    Returns the bytes written."""
    rng = random.Random(seed)
    total = 0
    words = (FILLER_USER + FILLER_ASSISTANT)
    for i in range(n):
        t = new_transcript(50_000 + i)
        size = 0
        while size < target_bytes:
            t.user(rng.choice(FILLER_USER) + f" (ticket {rng.randint(100, 9999)})")
            _, tool = t.assistant(text=rng.choice(FILLER_ASSISTANT), thinking="thinking " * 20,
                                  tool=("Bash", {"command": f"grep -rn item{rng.randint(0, 99)} src/"}))
            out = "\n".join(f"src/mod{rng.randint(0, 50)}.py:{rng.randint(1, 900)}: " + rng.choice(words)
                            for _ in range(rng.randint(20, 120)))
            t.tool_result(tool, out)
            t.assistant(text=rng.choice(FILLER_ASSISTANT) + " " + rng.choice(FILLER_ASSISTANT))
            t.noise()
            size = sum(len(x) + 1 for x in t.lines)
        total += t.write(root / f"-home-dev-bulk{i % 10}").stat().st_size
    return total
