"""Words a prompt uses as a name: "use `tar` to ...", "the ss command", "ss options", "tar -xzf",
"with find" at the end, a Latin word inside a Chinese prompt ("如何用 ss 列出端口").

A note named with one short word (tldr-pages: tar, ss, find, make, test) is a name the metadata
channel ignores inside a longer prompt: as a bare word it says too little ("find files larger than
100 MB" uses "find" as English, "make the tests faster" "make"). Used as a name, the word is
evidence for the note of that name (channels.meta_channel), and the hook's injection decides on it
by its own null rate (inject.py, route "command"). Standard library only (hook path).
"""
from __future__ import annotations

import re

from ..textutil import is_stopword, meta_key

# Nouns that make the word before them a tool's name ("the ss command", "ss options", "tar flags"),
# in the languages of the null prompts and the dev vaults.
TOOL_NOUNS = frozenset("""
command commands cmd tool utility program binary cli subcommand options flags switches manpage
befehl kommando programm optionen comando comandos opciones commande outil commandes polecenie
команда команду команды утилита утилиту опции
""".split())
# Words that make the word after them a tool's name at the end of a prompt ("... with find",
# "... mit tar?") or before a "to" word ("use tar to extract", "uso find para buscar").
TOOL_VERBS = frozenset("with using via use mit benutze verwende con uso usar avec utiliser utilise użyj".split())
TO_WORDS = frozenset("to um zu para pour чтобы".split())
ARTICLES = frozenset("the a der den dem das die el la le un una".split())
# Chinese and Japanese: the word before a Latin name ("用", use) or after it ("命令", command). Any
# Latin word in a Chinese prompt was too much: obsidian-help zh descriptions name Obsidian's features
# in Latin letters (description MRR 0.762 -> 0.638 on benchmarks/eval.py obs-zh).
CJK_USE = ("用", "使用", "利用")
CJK_COMMAND = ("命令", "指令", "コマンド", "명령")
_CODE_SPAN_RE = re.compile(r"`+\s*([^`\s]+)[^`]*`+")
_FLAG_RE = re.compile(r"-{1,2}[A-Za-z]")
_LATIN_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]*")
_WORD_RE = re.compile(r"\S+")
_PUNCT = ".,;:!?()[]{}\"'“”«»？，。：；！"


def _key(token: str) -> str:
    return meta_key(token.strip(_PUNCT))


# A coding instruction names tools it does not ask about ("sqlite-utils convert --help, refs #686",
# "serve --watch preloads the model"): there a name counts only in a question about it. Question
# words open a question (the first two words), in the languages of the null prompts and dev vaults.
QUESTION_WORDS = frozenset("""
how what which why where when who can could does do did is are should would
wie was welche welcher welches warum wo wann kann
cómo como qué que cuál cual dónde donde cuándo puedo
comment quel quelle quels pourquoi où peut
как что какой какая какие почему где когда можно
jak co który która które dlaczego gdzie kiedy czy
""".split())
QUESTION_MARKS = ("如何", "怎么", "怎样", "什么", "哪", "吗", "为什么", "どう", "何", "어떻게", "무엇")


# A sentence ends at . ! ? (and their CJK forms) before a space or the end, or at a line break:
# "serve.py", "v1.2" and "e.g.x" do not end one.
_SENTENCE_END_RE = re.compile(r"(?<=[.!?？。！])\s+|[\r\n]+|(?<=[？。！])")


def asks(sentence: str) -> bool:
    """Whether `sentence` opens as a question (a question word among its first two words, or a
    Chinese, Japanese or Korean question word anywhere)."""
    if not sentence.isascii() and any(m in sentence for m in QUESTION_MARKS):
        return True
    return any(_key(w) in QUESTION_WORDS for w in sentence.split()[:2])


def sentences(text: str) -> list[str]:
    """The sentences of `text` (see _SENTENCE_END_RE), blank ones left out."""
    return [s for s in _SENTENCE_END_RE.split(text) if s.strip()]


def asking_part(prompt: str) -> str:
    """The sentences of `prompt` that ask, joined ("" when none does): "Fix the flaky test in
    serve.py. How do I use tar to extract it?" asks in its second sentence only."""
    return " ".join(s for s in sentences(prompt) if asks(s))


def name_uses(prompt: str) -> frozenset[str]:
    """The metadata keys (textutil.meta_key) of the words `prompt` uses as names; in a coding
    instruction, only those of its sentences that ask (see QUESTION_WORDS), so a question inside
    an instruction counts and the tools the instruction merely names do not."""
    from .inject import prompt_kind

    if prompt_kind(prompt) == "code":
        prompt = asking_part(prompt)
        if not prompt:
            return frozenset()
    out: set[str] = set()
    for m in _CODE_SPAN_RE.finditer(prompt):
        out.add(_key(m.group(1)))
    if not prompt.isascii():  # "如何用 ss 列出", "ss 命令": a Latin word after 用 (use) or before 命令 (command)
        for m in _LATIN_RE.finditer(prompt):
            before, after = prompt[:m.start()].rstrip(), prompt[m.end():].lstrip()
            if before.endswith(CJK_USE) or after.startswith(CJK_COMMAND):
                out.add(_key(m.group(0)))
    toks = _WORD_RE.findall(prompt)
    low = [_key(t) for t in toks]
    for i, w in enumerate(low):
        if len(w) < 2 or (len(w) <= 3 and is_stopword(w)) or toks[i].startswith("-"):  # "a --limit", "the CLI"
            continue
        nxt = low[i + 1] if i + 1 < len(low) else None
        raw_next = toks[i + 1] if i + 1 < len(toks) else ""
        prev = low[i - 1] if i else None
        article = low[i - 2] if i > 1 else None
        if ((nxt in TOOL_NOUNS and w not in QUESTION_WORDS) or _FLAG_RE.match(raw_next)  # "ss options", "tar -x"
                or (prev in TOOL_NOUNS and article in ARTICLES)):  # "der Befehl ss", "the command ss"
            out.add(w)
        if prev in TOOL_VERBS and (nxt is None or nxt in TO_WORDS or toks[i][-1:] in _PUNCT):
            out.add(w)
        if prev == "man":
            out.add(w)
    out.discard("")
    return frozenset(out)
