"""Retrieval-quality evaluation of vaultrag on real, human-labelled data.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/eval.py [--parts P,P,...] [--max-queries 300] [--render-only]
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/eval.py --overlap 200 --parts ...   # side run, eval.md untouched

Reads ../shared/eval (see its README.md); exits cleanly if it is absent. Uses the real library:
load_config + reindex + search, model "bundled". Each part caches its numbers as JSON in
$TMPDIR/vaultrag-eval/ so parts can run in separate processes; the Markdown report
(benchmarks/results/eval.md) is rendered from whatever parts are cached.

Parts: xquad-en xquad-de xquad-es xquad-ru xquad-zh scifact obs-en obs-de obs-pl obs-ru obs-zh gate typos british
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import random
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
EVAL = Path(os.environ.get("VAULTRAG_EVAL_DIR", ROOT.parent / "shared" / "eval"))
CACHE = Path(tempfile.gettempdir()) / "vaultrag-eval"
OUT = ROOT / "benchmarks" / "results" / "eval.md"
SEED = 13
K = 10

ABLATIONS = {  # name -> (channels, graph)
    "default (meta+bm25+vec, graph)": (["meta", "bm25", "vec"], True),
    "meta only": (["meta"], True),
    "bm25 only": (["bm25"], True),
    "vec only": (["vec"], True),
    "meta+bm25 (no vectors)": (["meta", "bm25"], True),
    "meta+bm25+vec, no graph": (["meta", "bm25", "vec"], False),
    "plain RRF (meta+bm25+vec, weights 1)": (["meta", "bm25", "vec"], True),
}
# Config overrides of an ablation (on top of the defaults): plain RRF fuses every vector hit by rank.
ABLATION_CONFIG = {"plain RRF (meta+bm25+vec, weights 1)": {"fusion": "rrf", "weight_vec": 1.0}}
DEFAULT = "default (meta+bm25+vec, graph)"
ABLATE_PARTS = {"xquad-en", "xquad-ru", "xquad-zh", "scifact", "obs-en", "obs-zh"}

BASELINES = {
    "scifact": "BM25 Anserini 0.665; bm25s 0.687; FTS5 bm25() 0.682; potion-base-8M dense 0.506; "
               "MiniLM-L6 dense 0.645; distilled static 0.396; RRF FTS5+static 0.555",
    "xquad-en": "BM25 (bm25s) 0.965",
    "xquad-ru": "BM25 (bm25s) 0.871",
    "xquad-zh": "BM25 (bm25s) 0.121; FTS5 unicode61 0.114; FTS5 CJK single chars + bigram phrases 0.964",
    "xquad-de": "—",
    "xquad-es": "—",
}
OBS_BASELINE = {"description": 0.80, "anchor": 0.58, "heading": 0.61}


# ---------------------------------------------------------------- library glue
def lib():
    from vaultrag.config import load_config
    from vaultrag.indexer import reindex
    from vaultrag.retrieve import search
    return load_config, reindex, search


CHUNK_OVERRIDES: dict = {}  # --overlap: chunking settings of a side run


def make_cfg(vault: Path, db: Path):
    load_config, _, _ = lib()
    cfg = load_config(vault=str(vault), db=str(db), model=os.environ.get("VAULTRAG_EVAL_MODEL", "bundled"))
    return dataclasses.replace(cfg, **CHUNK_OVERRIDES) if CHUNK_OVERRIDES else cfg


def open_store(cfg):
    try:
        from vaultrag.store import Store
        return Store(cfg.db_path(), readonly=True)
    except Exception:  # fall back to search() opening its own
        return None


def ranked_paths(query: str, cfg, store, channels, graph) -> tuple[list[str], str]:
    _, _, search = lib()
    kw = dict(k=K, channels=channels, graph=graph, max_tokens=0, gate=False)
    if store is not None:
        kw["store"] = store
    ans = search(query, cfg, **kw)
    passed = ans.status == "ok" and ans.evidence.get("passed", True)
    # document level: dedupe by path, keep order. The gate is applied by the caller, so one run
    # measures both the ranking (gate off) and what the user gets (gate on).
    return list(dict.fromkeys(h.path for h in ans.hits)), "ok" if passed else "no_evidence"


# ---------------------------------------------------------------- metrics
def ndcg(ranked: list[str], rels: dict[str, int], k=K) -> float:
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rels.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall(ranked, rels, k=K):
    return len([d for d in ranked[:k] if d in rels]) / len(rels) if rels else 0.0


def mrr(ranked, rels, k=K):
    for i, d in enumerate(ranked[:k]):
        if d in rels:
            return 1.0 / (i + 1)
    return 0.0


def hit(ranked, rels, k=5):
    return 1.0 if any(d in rels for d in ranked[:k]) else 0.0


# ---------------------------------------------------------------- data
def read_jsonl(p: Path):
    with p.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def safe_name(_id: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]", "_", _id)
    return s[:150] or "_"


def load_beir(name: str):
    d = EVAL / "beir" / name
    corpus = read_jsonl(d / "corpus.jsonl")
    queries = {q["_id"]: q["text"] for q in read_jsonl(d / "queries.jsonl")}
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with (d / "qrels" / "test.tsv").open(encoding="utf-8") as f:
        next(f)
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 3 and int(float(parts[2])) > 0:
                qrels[parts[0]][parts[1]] = int(float(parts[2]))
    return corpus, queries, dict(qrels)


def build_beir_vault(corpus, root: Path) -> dict[str, str]:
    """Write one note per doc; return vault-relative path -> _id."""
    root.mkdir(parents=True, exist_ok=True)
    path2id, used = {}, set()
    for doc in corpus:
        base = safe_name(str(doc["_id"]))
        name, n = base, 1
        while name.lower() in used:
            n += 1
            name = f"{base}__{n}"
        used.add(name.lower())
        title = (doc.get("title") or "").strip() or str(doc["_id"])
        (root / f"{name}.md").write_text(f"# {title}\n\n{doc.get('text', '')}\n", encoding="utf-8")
        path2id[f"{name}.md"] = str(doc["_id"])
    return path2id


def subsample(items: list, n: int, seed=SEED) -> list:
    if n <= 0 or len(items) <= n:
        return list(items)
    return sorted(random.Random(seed).sample(items, n), key=str)


def index(cfg) -> dict:
    _, reindex, _ = lib()
    t = time.monotonic()
    rep = reindex(cfg, full=True)
    info = {"index_s": round(time.monotonic() - t, 1)}
    for attr in ("files", "chunks", "indexed", "added"):
        if hasattr(rep, attr):
            info[attr] = getattr(rep, attr)
    return info


# ---------------------------------------------------------------- parts
def run_beir(name: str, max_q: int, work: Path) -> dict:
    corpus, queries, qrels = load_beir(name)
    vault, db = work / name / "vault", work / name / "index.db"
    path2id = build_beir_vault(corpus, vault)
    cfg = make_cfg(vault, db)
    info = index(cfg)
    qids = subsample([q for q in qrels if q in queries], max_q)
    store = open_store(cfg)
    abl = ABLATIONS if name in ABLATE_PARTS else {DEFAULT: ABLATIONS[DEFAULT]}
    res = {"part": name, "kind": "beir", "docs": len(corpus), "queries_total": len(qrels),
           "queries_run": len(qids), "index": info, "configs": {}}
    for label, (channels, graph) in abl.items():
        acfg = dataclasses.replace(cfg, **ABLATION_CONFIG.get(label, {}))
        m = defaultdict(float)
        t = time.monotonic()
        for qid in qids:
            paths, status = ranked_paths(queries[qid], acfg, store, channels, graph)
            ranked = [path2id.get(p, p) for p in paths]
            rels = qrels[qid]
            m["ndcg_ranking"] += ndcg(ranked, rels)
            m["recall_ranking"] += recall(ranked, rels)
            m["mrr_ranking"] += mrr(ranked, rels)
            if status == "no_evidence":
                ranked = []
            m["ndcg"] += ndcg(ranked, rels)
            m["recall"] += recall(ranked, rels)
            m["mrr"] += mrr(ranked, rels)
            m["no_evidence"] += status == "no_evidence"
            m["docs"] += len(ranked)
        n = max(1, len(qids))
        res["configs"][label] = {k: round(v / n, 4) for k, v in m.items()}
        res["configs"][label]["ms_per_query"] = round((time.monotonic() - t) * 1000 / n, 1)
        print(name, label, res["configs"][label], flush=True)
    return res


def run_obs(lang: str, max_q: int, work: Path) -> dict:
    vault = EVAL / "vaults" / "obsidian-help" / lang
    qs = read_jsonl(EVAL / "vault-queries" / "obsidian-help" / f"{lang}.jsonl")
    cfg = make_cfg(vault, work / f"obs-{lang}" / "index.db")
    (work / f"obs-{lang}").mkdir(parents=True, exist_ok=True)
    info = index(cfg)
    store = open_store(cfg)
    by_type: dict[str, list] = defaultdict(list)
    for q in qs:
        by_type[q["type"]].append(q)
    part = f"obs-{lang}"
    abl = ABLATIONS if part in ABLATE_PARTS else {DEFAULT: ABLATIONS[DEFAULT]}
    res = {"part": part, "kind": "obs", "index": info, "configs": {}, "types": {}}
    for typ, items in by_type.items():
        res["types"][typ] = {"total": len(items), "run": len(subsample(items, max_q))}
    for label, (channels, graph) in abl.items():
        acfg = dataclasses.replace(cfg, **ABLATION_CONFIG.get(label, {}))
        res["configs"][label] = {}
        for typ, items in sorted(by_type.items()):
            sample = subsample(items, max_q, seed=SEED)
            m = defaultdict(float)
            for q in sample:
                ranked, status = ranked_paths(q["text"], acfg, store, channels, graph)
                rels = {q["note"]: 1}
                m["mrr_ranking"] += mrr(ranked, rels)
                if status == "no_evidence":
                    ranked = []
                m["mrr"] += mrr(ranked, rels)
                m["hit5"] += hit(ranked, rels, 5)
                m["no_evidence"] += status == "no_evidence"
            n = max(1, len(sample))
            res["configs"][label][typ] = {k: round(v / n, 4) for k, v in m.items()}
            print(part, label, typ, res["configs"][label][typ], flush=True)
    return res


GATE_PAIRS = (  # unanswerable: (query set, obsidian-help vault language)
    ("xquad-en", "en"), ("scifact", "en"), ("xquad-de", "en"), ("xquad-es", "en"), ("xquad-ru", "en"),
    ("xquad-zh", "en"), ("xquad-de", "de"), ("xquad-ru", "ru"), ("xquad-zh", "zh"))


def run_gate(max_q: int, work: Path) -> dict:
    """Unanswerable queries: question sets against obsidian-help vaults, in another language and
    in the same one (xquad-de against the German help, ...)."""
    res = {"part": "gate", "kind": "gate", "sets": {}}
    channels, graph = ABLATIONS[DEFAULT]
    stores = {}
    for name, lang in GATE_PAIRS:
        d, vault = EVAL / "beir" / name, EVAL / "vaults" / "obsidian-help" / lang
        if not d.is_dir() or not vault.is_dir():
            continue
        if lang not in stores:
            cfg = make_cfg(vault, work / f"gate-{lang}" / "index.db")
            (work / f"gate-{lang}").mkdir(parents=True, exist_ok=True)
            index(cfg)
            stores[lang] = (cfg, open_store(cfg))
        cfg, store = stores[lang]
        qs = [q["text"] for q in read_jsonl(d / "queries.jsonl")]
        sample = subsample(qs, max_q)
        answered = sum(ranked_paths(q, cfg, store, channels, graph)[1] != "no_evidence" for q in sample)
        res["sets"][f"{name} → obsidian-help {lang}"] = {"queries": len(sample), "answered": answered,
                                                          "answered_share": round(answered / max(1, len(sample)), 4)}
        print("gate", name, lang, res["sets"][f"{name} → obsidian-help {lang}"], flush=True)
    return res


_EDIT_WORD = re.compile(r"[A-Za-z]{5,}")


def typo_variant(text: str, rng: random.Random) -> str | None:
    """`text` with one random edit (delete, insert, substitute or swap two neighbours, anywhere
    in the word) in one randomly chosen content word of 5+ ASCII letters; None if it has none."""
    from vaultrag.textutil import STOPWORDS

    spots = [m for m in _EDIT_WORD.finditer(text) if m.group(0).lower() not in STOPWORDS]
    if not spots:
        return None
    m = rng.choice(spots)
    w = m.group(0)
    i = rng.randrange(len(w))
    op = rng.choice(("delete", "insert", "substitute", "swap"))
    letter = rng.choice("abcdefghijklmnopqrstuvwxyz")
    if op == "delete":
        new = w[:i] + w[i + 1:]
    elif op == "insert":
        new = w[:i] + letter + w[i:]
    elif op == "substitute":
        new = w[:i] + (letter if letter != w[i].lower() else "q") + w[i + 1:]
    else:
        i = min(i, len(w) - 2)
        new = w[:i] + w[i + 1] + w[i] + w[i + 2:]
    return text[:m.start()] + new + text[m.end():]


def _obs_en(where: Path):
    """The obsidian-help en vault indexed under `where`, and its queries."""
    where.mkdir(parents=True, exist_ok=True)
    cfg = make_cfg(EVAL / "vaults" / "obsidian-help" / "en", where / "index.db")
    index(cfg)
    return cfg, read_jsonl(EVAL / "vault-queries" / "obsidian-help" / "en.jsonl")


def _beir_set(name: str, where: Path, max_q: int):
    """(name, config, [(query, qrels)], path -> doc id) of a BEIR set indexed under `where`."""
    corpus, queries, qrels = load_beir(name)
    path2id = build_beir_vault(corpus, where / "vault")
    cfg = make_cfg(where / "vault", where / "index.db")
    index(cfg)
    qids = subsample([q for q in qrels if q in queries], max_q)
    return name, cfg, [(queries[q], qrels[q]) for q in qids], path2id


def run_typos(max_q: int, work: Path) -> dict:
    """Dev queries with one random edit in one content word (fixed seed): ranking (gate off) and
    what the user gets (gate on), clean vs typo, on the queries that have such a word."""
    rng = random.Random(SEED)
    res = {"part": "typos", "kind": "typos", "sets": {}}
    sets = []
    cfg, qs = _obs_en(work / "typos-obs-en")
    for typ in ("description", "alias", "heading", "anchor"):
        items = subsample([q for q in qs if q["type"] == typ], max_q)
        sets.append((f"obsidian-help en {typ}", cfg, [(q["text"], {q["note"]: 1}) for q in items], None))
    sets.append(_beir_set("xquad-en", work / "typos-xquad-en", max_q))
    for label, c, items, p2id in sets:
        res["sets"][label] = clean_vs_variant(c, items, p2id, lambda text: typo_variant(text, rng))
        print("typos", label, res["sets"][label], flush=True)
    return res


def clean_vs_variant(cfg, items, p2id, variant) -> dict:
    """MRR/nDCG ranking and as answered of each query and its `variant` (None: left out), on the
    queries that have one; keys clean_* and typo_* (the variant)."""
    channels, graph = ABLATIONS[DEFAULT]
    store = open_store(cfg)
    m = defaultdict(float)
    n = 0
    for text, rels in items:
        other = variant(text)
        if other is None:
            continue
        n += 1
        for tag, q in (("clean", text), ("typo", other)):
            paths, status = ranked_paths(q, cfg, store, channels, graph)
            ranked = [p2id.get(p, p) for p in paths] if p2id else paths
            m[f"{tag}_mrr_ranking"] += mrr(ranked, rels)
            m[f"{tag}_ndcg_ranking"] += ndcg(ranked, rels)
            if status == "no_evidence":
                ranked = []
            m[f"{tag}_mrr"] += mrr(ranked, rels)
            m[f"{tag}_no_evidence"] += status == "no_evidence"
    return {"queries": n, **{k: round(v / max(1, n), 4) for k, v in m.items()}}


# American -> British spellings of words the dev queries use (a hand-made table of real pairs,
# written apart from vaultrag/retrieve/spelling.py's rules; "colorectal", "factor", "error" stay).
BRITISH = dict(pair.split(":") for pair in """
color:colour colors:colours colored:coloured coloring:colouring behavior:behaviour behaviors:behaviours
behavioral:behavioural favor:favour favorite:favourite favorites:favourites flavor:flavour flavors:flavours
labor:labour neighbor:neighbour neighbors:neighbours honor:honour humor:humour tumor:tumour tumors:tumours
tumorigenesis:tumourigenesis antitumor:antitumour rumor:rumour vapor:vapour harbor:harbour
customize:customise customized:customised customizing:customising customization:customisation
organize:organise organized:organised organizing:organising organization:organisation
organizations:organisations optimize:optimise optimized:optimised optimization:optimisation
localize:localise localizes:localises localization:localisation mislocalization:mislocalisation
colocalize:colocalise capitalize:capitalise capitalization:capitalisation visualize:visualise
visualization:visualisation summarize:summarise recognize:recognise recognized:recognised
synchronize:synchronise synchronization:synchronisation prioritize:prioritise categorize:categorise
initialize:initialise normalize:normalise normalized:normalised minimize:minimise maximize:maximise
realize:realise utilize:utilise authorize:authorise authorization:authorisation finalize:finalise
stabilizing:stabilising destabilizes:destabilises synthesized:synthesised ionizing:ionising
mobilization:mobilisation metabolize:metabolise anabolized:anabolised randomized:randomised
characterized:characterised hospitalized:hospitalised immunization:immunisation specialized:specialised
analyze:analyse analyzed:analysed analyzing:analysing paralyze:paralyse catalyze:catalyse
center:centre centers:centres centered:centred liter:litre liters:litres meter:metre meters:metres
fiber:fibre fibers:fibres theater:theatre
catalog:catalogue catalogs:catalogues dialog:dialogue dialogs:dialogues analog:analogue
license:licence defense:defence offense:offence
traveled:travelled traveling:travelling canceled:cancelled canceling:cancelling labeled:labelled
labeling:labelling modeled:modelled modeling:modelling signaling:signalling leveled:levelled
gray:grey program:programme judgment:judgement aluminum:aluminium mold:mould enroll:enrol
fulfill:fulfil skillful:skilful
anemia:anaemia leukemia:leukaemia hypoglycemia:hypoglycaemia thalassemia:thalassaemia
hyperfibrinogenemia:hyperfibrinogenaemia hematopoietic:haematopoietic hemoglobin:haemoglobin
hemorrhage:haemorrhage estrogen:oestrogen edema:oedema fetal:foetal fetus:foetus pediatric:paediatric
orthopedic:orthopaedic anesthesia:anaesthesia esophagus:oesophagus diarrhea:diarrhoea
""".split())
_BRIT_WORD = re.compile(r"[A-Za-z]+")


def british(text: str) -> str | None:
    """`text` with every word of BRITISH in its British spelling (case kept for a capital first
    letter); None if it has none."""
    def sub(m: re.Match) -> str:
        w = m.group(0)
        b = BRITISH.get(w.lower())
        return w if b is None else (b.capitalize() if w[0].isupper() else b)
    out = _BRIT_WORD.sub(sub, text)
    return out if out != text else None


def run_british(max_q: int, work: Path) -> dict:
    """Dev queries as a British writer types them, against vaults in American spelling
    (obsidian-help en, SciFact, XQuAD en): ranking and as answered, American vs British, on the
    queries that have such a word (BRITISH)."""
    res = {"part": "british", "kind": "typos", "sets": {}}
    cfg, qs = _obs_en(work / "brit-obs-en")
    sets = [("obsidian-help en (all types)", cfg, [(q["text"], {q["note"]: 1}) for q in subsample(qs, max_q)], None)]
    sets += [_beir_set(name, work / f"brit-{name}", max_q) for name in ("scifact", "xquad-en")]
    for label, c, items, p2id in sets:
        res["sets"][label] = clean_vs_variant(c, items, p2id, british)
        print("british", label, res["sets"][label], flush=True)
    return res


# ---------------------------------------------------------------- report
def render(cmd: str) -> str:
    parts = {}
    for p in sorted(CACHE.glob("*.json")):
        r = json.loads(p.read_text())
        parts[r["part"]] = r
    L = ["# Retrieval evaluation", "",
         f"Command: `{cmd}`  ", f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  ",
         "Model: `bundled`, `HF_HUB_OFFLINE=1`, `search(q, cfg, k=10, channels=..., graph=..., max_tokens=0, gate=False)`. "
         "Data: `../shared/eval` (README there). Document/note level: hits deduplicated by path in rank order; "
         "`ranking` columns: the ranking with the evidence gate off; other columns: as the user gets it, "
         "`no_evidence` counting as an empty result list.", ""]
    beir = [parts[n] for n in ("xquad-en", "xquad-de", "xquad-es", "xquad-ru", "xquad-zh", "scifact") if n in parts]
    if beir:
        L += ["## BEIR sets (default pipeline)", "",
              "| set | docs | queries run / total | nDCG@10 ranking | recall@10 ranking | nDCG@10 | recall@10 | MRR@10 | no_evidence share | ms/query | index s | published baselines (nDCG@10) |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in beir:
            c = r["configs"][DEFAULT]
            L.append(f"| {r['part']} | {r['docs']} | {r['queries_run']} / {r['queries_total']} | "
                     f"{c.get('ndcg_ranking', 0):.3f} | {c.get('recall_ranking', 0):.3f} | {c['ndcg']:.3f} | "
                     f"{c['recall']:.3f} | {c['mrr']:.3f} | {c['no_evidence']:.3f} | {c['ms_per_query']} | "
                     f"{r['index']['index_s']} | {BASELINES.get(r['part'], '—')} |")
        capped = any(r["queries_run"] < r["queries_total"] for r in beir)
        L += ["", ("Queries subsampled per set with a fixed seed (random.Random(%d))." % SEED) if capped else
              "All queries with a positive qrel were run (no subsampling: the whole run takes about 2.5 minutes).", ""]
    for r in beir:
        if len(r["configs"]) < 2:
            continue
        L += [f"## Ablations: {r['part']}", "",
              "| config | nDCG@10 ranking | MRR@10 ranking | nDCG@10 | recall@10 | MRR@10 | no_evidence share | ms/query |",
              "|---|---|---|---|---|---|---|---|"]
        for label, c in r["configs"].items():
            L.append(f"| {label} | {c.get('ndcg_ranking', 0):.3f} | {c.get('mrr_ranking', 0):.3f} | {c['ndcg']:.3f} | "
                     f"{c['recall']:.3f} | {c['mrr']:.3f} | {c['no_evidence']:.3f} | {c['ms_per_query']} |")
        L += ["", f"Published (nDCG@10): {BASELINES.get(r['part'], '—')}.", ""]
    obs = [parts[f"obs-{l}"] for l in ("en", "de", "pl", "ru", "zh") if f"obs-{l}" in parts]
    for r in obs:
        L += [f"## obsidian-help {r['part'][4:]} (note level)", "",
              "| config | type | queries run / total | MRR@10 ranking | MRR@10 | hit@5 | no_evidence share | FTS5 BM25 baseline MRR@10 |",
              "|---|---|---|---|---|---|---|---|"]
        for label, per in r["configs"].items():
            for typ, c in per.items():
                base = OBS_BASELINE.get(typ, "—") if r["part"] == "obs-en" else "—"
                t = r["types"][typ]
                L.append(f"| {label} | {typ} | {t['run']} / {t['total']} | {c.get('mrr_ranking', 0):.3f} | "
                         f"{c['mrr']:.3f} | {c['hit5']:.3f} | "
                         f"{c['no_evidence']:.3f} | {base} |")
        L.append("")
    if "gate" in parts:
        L += ["## Evidence gate", "", "Unanswerable: queries from another corpus run against an obsidian-help vault "
              "(default pipeline). Should all be `no_evidence`.", "",
              "| queries | n | answered (false positives) | share answered |", "|---|---|---|---|"]
        for name, s in parts["gate"]["sets"].items():
            L.append(f"| {name} | {s['queries']} | {s['answered']} | {s['answered_share']:.3f} |")
        if "obs-en" in parts:
            d = parts["obs-en"]["configs"][DEFAULT].get("description")
            if d:
                L.append(f"| answerable obsidian-help en `description` queries that got no_evidence (false negatives) | "
                         f"{parts['obs-en']['types']['description']['run']} | — | {d['no_evidence']:.3f} |")
        L.append("")
    if "typos" in parts:
        L += ["## Typos", "", "Each dev query with one random edit (delete / insert / substitute / swap, anywhere) in one "
              "random content word of 5+ ASCII letters (fixed seed; queries without such a word left out). "
              "MRR@10, ranking = gate off; no_evidence share with the gate on.", "",
              "| set | queries | MRR ranking clean | MRR ranking typo | MRR clean | MRR typo | no_evidence clean | no_evidence typo |",
              "|---|---|---|---|---|---|---|---|"]
        for name, t in parts["typos"]["sets"].items():
            L.append(f"| {name} | {t['queries']} | {t['clean_mrr_ranking']:.3f} | {t['typo_mrr_ranking']:.3f} | "
                     f"{t['clean_mrr']:.3f} | {t['typo_mrr']:.3f} | {t['clean_no_evidence']:.3f} | {t['typo_no_evidence']:.3f} |")
        L.append("")
    if "british" in parts:
        L += ["## British spelling", "", "Each dev query with every word of eval.py's BRITISH table (real American -> "
              "British pairs) respelled, against the same vaults (American spelling); queries without such a word "
              "left out. MRR@10, ranking = gate off; no_evidence share with the gate on.", "",
              "| set | queries | MRR ranking American | MRR ranking British | MRR American | MRR British | "
              "no_evidence American | no_evidence British |", "|---|---|---|---|---|---|---|---|"]
        for name, t in parts["british"]["sets"].items():
            L.append(f"| {name} | {t['queries']} | {t['clean_mrr_ranking']:.3f} | {t['typo_mrr_ranking']:.3f} | "
                     f"{t['clean_mrr']:.3f} | {t['typo_mrr']:.3f} | {t['clean_no_evidence']:.3f} | {t['typo_no_evidence']:.3f} |")
        L.append("")
    missing = [p for p in ALL_PARTS if p not in parts]
    if missing:
        L += [f"Not run in this cut (time box): {', '.join(missing)}.", ""]
    L += ["## Observations", "", "(Written by hand after reading the tables; a re-run regenerates the tables only.)", ""]
    return "\n".join(L)


ALL_PARTS = ["xquad-en", "obs-en", "gate", "xquad-zh", "xquad-ru", "xquad-de", "xquad-es", "scifact",
             "obs-zh", "obs-ru", "obs-de", "obs-pl", "typos", "british"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default=",".join(ALL_PARTS))
    ap.add_argument("--max-queries", type=int, default=0,
                    help="cap per BEIR set / per obsidian query type (fixed-seed subsample); 0 = all")
    ap.add_argument("--overlap", type=int, default=None, metavar="CHARS",
                    help="side run with chunking.overlap_chars=CHARS: prints results, caches them under "
                         "overlap-CHARS/, leaves eval.md alone")
    ap.add_argument("--render-only", action="store_true")
    ap.add_argument("--no-render", action="store_true")
    a = ap.parse_args()
    if not EVAL.is_dir():
        print(f"eval data not found at {EVAL}; nothing to do", file=sys.stderr)
        return 0
    cache = CACHE
    if a.overlap is not None:
        CHUNK_OVERRIDES["overlap_chars"] = a.overlap
        cache, a.no_render = CACHE / f"overlap-{a.overlap}", True
    cache.mkdir(parents=True, exist_ok=True)
    if not a.render_only:
        with tempfile.TemporaryDirectory(prefix="vaultrag-eval-") as tmp:
            work = Path(tmp)
            for part in [p for p in a.parts.split(",") if p]:
                t = time.monotonic()
                if part.startswith("xquad") or part == "scifact":
                    if not (EVAL / "beir" / part).is_dir():
                        continue
                    r = run_beir(part, a.max_queries, work)
                elif part.startswith("obs-"):
                    r = run_obs(part[4:], a.max_queries, work)
                elif part == "gate":
                    r = run_gate(a.max_queries, work)
                elif part == "typos":
                    r = run_typos(a.max_queries, work)
                elif part == "british":
                    r = run_british(a.max_queries, work)
                else:
                    print(f"unknown part {part}", file=sys.stderr)
                    continue
                r["wall_s"] = round(time.monotonic() - t, 1)
                (cache / f"{part}.json").write_text(json.dumps(r, indent=1))
                print(f"== {part} done in {r['wall_s']}s", flush=True)
    if not a.no_render:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(render("HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/eval.py"), encoding="utf-8")
        print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
