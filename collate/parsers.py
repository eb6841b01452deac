"""Every command's flags, in a module that loads no heavy library: `collate CMD --help` answers from here
in well under a second (it took 5-29 s when it imported dspy, mlflow and faiss with the command).

Each command module builds its parser with the function of its name here. The choices some flags take
are their modules' constants, copied because those modules load the heavy libraries;
tests/cli/test_usage.py checks each copy against its source.
"""

from __future__ import annotations

import argparse
import os

from collate.budget_flags import add_budget_arguments
from collate.inputs import add_lm_arguments
from programs.lm.stages import ANALYST_STAGES

# Copies of constants whose modules load dspy, faiss or pdfium (checked equal by the test above).
OPTIMIZERS = ("bootstrap", "mipro", "gepa", "simba")  # optimize.optimizers.OPTIMIZERS
PARTS = ("all", "train", "dev", "test")  # evaluate.dataset.PARTS
DENSE_CHUNKS = ("figures", "all")  # retrievers.embedding.dense_text.DENSE_CHUNKS
DENSE_POLICIES = ("auto", "all", "none")  # retrievers.building.build.DENSE_POLICIES
HASHING, MINILM = "hashing-256", "all-MiniLM-L6-v2-int8"  # retrievers.embedding.embedders
JIEBA, NGRAM = "jieba", "ngram"  # retrievers.indexing.lexical
OCR_MODES = ("auto", "off")  # retrievers.building.ocr_build.OCR_MODES
MODES = ("hybrid", "dense", "bm25")  # retrievers.indexing.document_index.MODES
CONCURRENCY, K = 16, 5  # programs.lm.settings.Settings.concurrency, .k
SYNTH_YEARS = [2021, 2022]  # data.synth.corpus.DEFAULT_YEARS (data.synth loads reportlab)
SYNTH_MAX_COMPANIES = 60  # data.synth.corpus.MAX_COMPANIES
SYNTH_STYLES = ("dev", "heldout")  # data.synth.style.FAMILIES
ESTIMATE_HELP = (  # collate.estimate.HELP
    "print the documents in scope, LM calls and tokens per stage and dollars, then exit: "
    "no LM call, nothing written"
)


def add_estimate_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--estimate", action="store_true", help=ESTIMATE_HELP)


def synth() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m data.synth",
        description=(
            "Write a synthetic corpus of MuDABench-style filings (US 10-K, A股年报, A股ESG报告, A股利润分配权益类公告, "
            "A股股东大会类公告) with gold questions and per-field truth."
        ),
    )
    p.add_argument(
        "--out",
        required=True,
        help="output folder (created); gets pdf/, dataset.json, catalog.jsonl, truth.jsonl",
    )
    p.add_argument(
        "--companies",
        type=int,
        default=10,
        help=f"number of companies, 2..{SYNTH_MAX_COMPANIES}; ~2/5 US (1 doc/year), the rest A-share (4 docs/year)",
    )
    p.add_argument(
        "--years", type=int, nargs="+", default=list(SYNTH_YEARS), help="fiscal years, e.g. 2021 2022 2023"
    )
    p.add_argument("--seed", type=int, default=0, help="same seed, same bytes")
    p.add_argument(
        "--pages",
        type=int,
        default=None,
        help="target pages per document (default: per doctype, 10-44, like real filings)",
    )
    p.add_argument(
        "--styles",
        choices=SYNTH_STYLES,
        default="dev",
        help="layout family: dev (default corpus) or heldout (ways of printing record dates, attendance and GRI "
        "adoption the default corpus never uses: recall on layouts retrieval was not tuned on)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    return p


def ask() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="collate ask", description="Ask one question over an indexed collection."
    )
    p.add_argument("question", nargs="?", help="the question (default with --dataset: the item's question)")
    p.add_argument("--index", required=True, help="index folder built by collate build")
    p.add_argument("--dataset", help="MuDABench-format dataset.json: scope = the item's documents")
    p.add_argument("--question-id", help="question_id of the dataset item (needs --dataset)")
    p.add_argument("--program", help="compiled.json saved by an optimizer (program.save)")
    p.add_argument("--run-dir", help="write the stage trace and run_log.json here")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the answer text")
    p.add_argument(
        "--report",
        help="write an audit report here (one HTML file: answer, code, records, every "
        "quote on its rendered page)",
    )
    p.add_argument("--baseline", choices=["flat", "flat-meta"], help="run the flat-RAG baseline instead")
    add_lm_arguments(p)
    for stage in ANALYST_STAGES:
        p.add_argument(f"--lm-{stage}", help=f"model for the {stage} stage (COLLATE_LM_{stage.upper()})")
    p.add_argument(
        "--concurrency",
        type=int,
        help=f"documents extracted at once (COLLATE_CONCURRENCY, default {CONCURRENCY})",
    )
    p.add_argument("--k", type=int, help=f"passages per field per document (COLLATE_K, default {K})")
    p.add_argument(
        "--fact-store", help="SQLite fact store (COLLATE_FACT_STORE; default <index>/facts.sqlite)"
    )
    p.add_argument(
        "--reuse-facts-from-any-model",
        action="store_true",
        default=None,
        help="reuse facts another model or extractor prompt produced (COLLATE_REUSE_FACTS_FROM_ANY_MODEL)",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the documents done / total display")
    p.add_argument("-v", "--verbose", action="store_true")
    add_estimate_argument(p)
    return p


def run() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m evaluate.run",
        description="`collate run` / `python -m evaluate.run`: answer and score a dataset with one program variant, logged to MLflow.",
    )
    p.add_argument(
        "--dataset",
        help="MuDABench-format dataset.json (or its folder); default with --program compiled.json: its compile's",
    )
    p.add_argument(
        "--index",
        help="index folder built by collate build; default with --program compiled.json: its compile's",
    )
    p.add_argument(
        "--program", help="compiled.json, 'flat-rag' or 'flat-rag-plain'; omitted = uncompiled Analyst"
    )
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument(
        "--split",
        choices=["all", "train", "dev", "test"],
        help="evaluate one part of the seeded, doctype-stratified split (default all; test on the "
        "dataset a compiled program's compile recorded, which it trained on)",
    )
    p.add_argument("--seed", type=int, help="seed of the split (default 0, or the compile's)")
    p.add_argument(
        "--out",
        help="run folder (default runs/<variant>-<time>); answers are appended to OUT/answers.jsonl as they "
        "come, so the same command with the same --out resumes a stopped run (Ctrl-C: exit 130), asking "
        "only what is missing",
    )
    p.add_argument("--concurrency", type=int, default=2, help="questions answered at once (default 2)")
    p.add_argument(
        "--max-calls",
        type=int,
        help="cap on the questions' LM requests (cache hits are free); once reached no new request is "
        "sent, the questions it cuts fail with the reason and the rest are kept (default: no cap)",
    )
    add_budget_arguments(p, "the questions'")
    add_lm_arguments(p)
    p.add_argument(
        "--judge",
        help="judge model for what the matcher cannot decide (COLLATE_LM_JUDGE); 'self' = the model under "
        "test, and the run is tagged self_judged; default none: those answers are reported undecided",
    )
    p.add_argument("--no-judge", action="store_true", help="no judge, even if COLLATE_LM_JUDGE names one")
    p.add_argument(
        "--no-autolog", action="store_true", help="write no MLflow traces (one per question by default)"
    )
    p.add_argument(
        "--lm-traces",
        action="store_true",
        help="also DSPy's MLflow autolog: a trace of every module and LM call (prompts and replies)",
    )
    p.add_argument(
        "--log-only",
        action="store_true",
        help="ask nothing: log the run kept in --out to the MLflow store (after a store fault)",
    )
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("-v", "--verbose", action="store_true")
    add_estimate_argument(p)
    return p


def compile() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m optimize.compile",
        description="`collate compile` / `python -m optimize.compile`: tune the program with a DSPy optimizer, logged to MLflow.",
    )
    p.add_argument("--dataset", required=True, help="MuDABench-format dataset.json (or its folder)")
    p.add_argument("--index", required=True, help="index folder built by collate build")
    p.add_argument("--optimizer", required=True, choices=sorted(OPTIMIZERS), help="which DSPy optimizer")
    p.add_argument("--out", required=True, help="where to save the compiled program (compiled.json)")
    p.add_argument(
        "--stage",
        choices=["program", "extractor"],
        default="program",
        help="tune the whole program (default) or only the extractor against gold cells",
    )
    p.add_argument(
        "--max-calls",
        type=int,
        help="cap on the optimizer's LM requests; cache hits are free (default: no cap). A cap too small "
        "to buy one scored candidate is refused before any request, naming the one that would do",
    )
    add_budget_arguments(p, "the optimizer's")
    p.add_argument(
        "--force", action="store_true", help="spend a --max-calls the estimate says is too small (warned)"
    )
    p.add_argument("--seed", type=int, default=0, help="split and optimizer seed (default 0)")
    p.add_argument("--limit", type=int, help="at most N training (and N validation) examples")
    p.add_argument("--threads", type=int, default=2, help="examples evaluated at once (default 2)")
    p.add_argument("--max-demos", type=int, default=4, help="bootstrapped demos per predictor (default 4)")
    p.add_argument(
        "--threshold",
        type=float,
        help="metric a trace needs to become a demo (default 0.75 program, 1.0 extractor)",
    )
    p.add_argument(
        "--final-weight",
        type=float,
        default=0.5,
        help="program stage: weight of final accuracy vs cell accuracy in the metric (default 0.5)",
    )
    add_lm_arguments(p, model_help="model id (COLLATE_LM); GEPA reflects with it too")
    p.add_argument("--no-autolog", action="store_true", help="no MLflow traces of every LM call")
    p.add_argument("-v", "--verbose", action="store_true")
    add_estimate_argument(p)
    return p


def demo() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m evaluate.demo",
        description="The main job: generate the demo corpus, index it, answer its questions and score them in MLflow.",
    )
    p.add_argument("--out", default="demo", help="demo folder: corpus/, index/, runs/ (default ./demo)")
    p.add_argument("--limit", type=int, default=10, help="questions to answer (default 10; 0 = all)")
    p.add_argument("--concurrency", type=int, default=2, help="questions answered at once (default 2)")
    p.add_argument(
        "--no-reader",
        action="store_true",
        help="without an LM configured, stop after preparing (exit 2) instead of starting the demo reader",
    )
    p.add_argument("--no-baseline", action="store_true", help="skip the flat-RAG baseline run")
    add_lm_arguments(p)
    return p


def score() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evaluate.score",
        description="`collate score` / `python -m evaluate.score`: score a run again, or saved answers, against a dataset.",
    )
    parser.add_argument("run", nargs="?", help="run folder (or its results.jsonl / agent_output.json)")
    parser.add_argument(
        "--dataset", help="MuDABench-format JSON (or its folder); default: the one the run names"
    )
    parser.add_argument("--predictions", help="JSON list of {question_id, model_answer} (instead of RUN)")
    parser.add_argument(
        "--split", choices=PARTS, help="score one part of the seeded split (default: the run's)"
    )
    parser.add_argument("--seed", type=int, help="seed of the split (default: the run's, else 0)")
    parser.add_argument(
        "--limit", type=int, help="only the first N questions of the part (default: the run's)"
    )
    parser.add_argument(
        "--judge",
        metavar="MODEL",
        help="LM for answers the matcher cannot decide (COLLATE_LM_JUDGE); 'self' = the run's model under test",
    )
    parser.add_argument(
        "--no-judge", action="store_true", help="no judge, even if COLLATE_LM_JUDGE names one"
    )
    parser.add_argument(
        "--judge-cache", help="SQLite verdict cache (default: judge_cache.sqlite beside the answers)"
    )
    parser.add_argument("--records", help="facts or records per question for process accuracy")
    parser.add_argument("--json", action="store_true", help="print the full report as JSON")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per question")
    return parser


def build() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m retrievers.build",
        description="`collate build` / `python -m retrievers.build`: parse, chunk, embed and index a catalog's PDFs.",
    )
    p.add_argument(
        "--catalog",
        help="dataset.json (MuDABench), catalog .csv or .jsonl; without it a catalog is drafted from the PDFs "
        "into the index folder (retrievers.catalog_draft.for_build)",
    )
    p.add_argument("--pdf-dir", required=True, help="folder holding <id>.pdf files")
    p.add_argument("--index", required=True, help="index folder to create or update")
    p.add_argument(
        "--workers", type=int, default=os.cpu_count(), help="parallel processes (default: core count)"
    )
    p.add_argument("--embedder", default=MINILM, choices=[MINILM, HASHING], help=argparse.SUPPRESS)
    p.add_argument(
        "--dense",
        default="auto",
        choices=DENSE_POLICIES,
        help="which documents get MiniLM embeddings besides BM25 (auto: English ones)",
    )
    p.add_argument(
        "--dense-chunks",
        default="figures",
        choices=DENSE_CHUNKS,
        help="which chunks of those documents MiniLM reads (figures: the ones stating amounts, about a third "
        "of a 10-K's, for ~3x less embedding; all: every chunk, for questions about prose)",
    )
    p.add_argument(
        "--ocr",
        default="auto",
        choices=OCR_MODES,
        help="pages that are only images (scans): auto reads them by OCR when rapidocr-onnxruntime is "
        "installed (~10 s a page, cached in the index); off leaves them unread",
    )
    p.add_argument("--tokenizer", default=NGRAM, choices=[NGRAM, JIEBA], help="Chinese tokenization for BM25")
    p.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="index on a Ray cluster (HOST:PORT, or auto for this machine's; default $COLLATE_RAY_ADDRESS or "
        "auto); the index and PDFs must be on storage every node can reach",
    )
    p.add_argument(
        "--keep-duplicates",
        action="store_true",
        help="index each of two byte-identical PDFs (default: the first catalog row only, the other named)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the per-document results as JSON")
    return p


def search() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m retrievers.search", description="Search one document's index from the command line."
    )
    p.add_argument("--index", required=True, help="index folder made by collate build")
    p.add_argument("--doc", help="document id to search")
    p.add_argument("--query", help="query text")
    p.add_argument("--queries", help='JSONL file of {"doc_id", "query"} lines')
    p.add_argument("-k", type=int, default=5, help="passages per query (default 5)")
    p.add_argument("--mode", default="hybrid", choices=MODES, help="which side(s) to rank with")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    return p


def catalog() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="collate catalog",
        description="Draft a catalog from a folder of PDFs: id, symbol, year, doctype, language, company, by rules.",
    )
    p.add_argument("--pdf-dir", required=True, help="folder holding the PDFs (any names)")
    p.add_argument("--out", required=True, help="catalog to write (.jsonl)")
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    p.add_argument("--no-lm", action="store_true", help="rules only, even when an LM is configured")
    p.add_argument(
        "--keep-duplicates",
        action="store_true",
        help="keep a row for each of two byte-identical PDFs (default: the first by name, the other named)",
    )
    add_lm_arguments(p)
    return p


class IntermixedParser(argparse.ArgumentParser):
    """Positionals may come after flags (`dataset new --catalog C --out O "Q1" "Q2"`): parse_cli parses
    it with parse_intermixed_args, where plain argparse leaves the questions unrecognized."""

    intermixed = True


def comma_list(kind, what: str):
    """An argparse type: "2022,2023" -> [2022, 2023] (blank items dropped), each converted by `kind`."""

    def parse(text: str) -> list:
        items = [part.strip() for part in text.split(",") if part.strip()]
        try:
            values = [kind(item) for item in items]
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r}: give {what} as a comma list, e.g. 2022,2023"
            ) from None
        if not values:
            raise argparse.ArgumentTypeError(f"{text!r}: give at least one of the {what}")
        return values

    return parse


def dataset() -> argparse.ArgumentParser:
    p = IntermixedParser(
        prog="collate dataset",
        description="start a dataset of your own questions over your collection (new), or check one (check)",
    )
    p.add_argument(
        "action", choices=["new", "check"], help="new: write questions; check: say what is missing"
    )
    p.add_argument("items", nargs="*", help="new: the questions; check: the dataset file")
    p.add_argument("--catalog", help="new: the collection's catalog.jsonl (collate catalog)")
    p.add_argument("--out", help="new: the dataset to write (.json)")
    p.add_argument("--questions", help="new: a text file, one question a line (besides any given)")
    # One value each, a comma list (repeatable): with nargs="+", `--years 2022 "QUESTION"` took the
    # question for a year, so the questions could only come before these flags.
    for flag, kind, what, letter, example in (
        ("--years", int, "fiscal years", "Y", "2022,2023"),
        ("--doctypes", str, "doctypes", "T", "10k,10q"),
        ("--symbols", str, "symbols", "S", "AMD,PEP"),
    ):
        p.add_argument(
            flag,
            type=comma_list(kind, what),
            action="extend",
            metavar=f"{letter}[,{letter}...]",
            help=f"new: only documents of these {what} in scope ({example})",
        )
    p.add_argument("--force", action="store_true", help="new: overwrite --out")
    p.add_argument("--index", help="check: also check that every document is in this index")
    return p
