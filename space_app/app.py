"""namesake's Space: watch retrievers confuse entities that share a name.

Five tabs: ambiguous search (BM25 and dense side by side, each hit judged gold / confused /
unrelated), an AmbER set browser (each query's gold-page rank per retriever), where the
passage encoder looks (CLS attention heatmap with entities ranked), answer scoring with
the WES metric next to exact match and F1, and the leaderboard of ``make demo``'s systems
with their popularity curve.

Locally, after ``make demo``::

    python space_app/app.py [--artifacts demo_output] [--port 7860]

It serves on 127.0.0.1 only; ``--host 0.0.0.0`` to serve others, ``--share`` for a public
Gradio link (off by default). The Space that ``namesake publish space`` stages carries its
artifacts in ``artifacts/`` beside this file, which is then the default; elsewhere set
``NAMESAKE_ARTIFACTS`` (and, if the indexes are not there yet, ``NAMESAKE_CORPUS``) as Space
variables. The page logic lives in ``namesake.space``; this file only lays it out.
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # no network calls of our own

import gradio as gr  # noqa: E402

from namesake.data import AMBER_SAMPLE_DIR, AMBER_SAMPLE_FILES  # noqa: E402
from namesake.errors import NamesakeError  # noqa: E402
from namesake.space import formatting  # noqa: E402
from namesake.space.artifacts import STAGED_FOLDER, load_artifacts  # noqa: E402
from namesake.space.explorer import Explorer, head_or_tail  # noqa: E402

logger = logging.getLogger("namesake.space")
# The bundled sample ships inside the namesake package: the Space has no checkout around it.
SAMPLE_CORPUS = AMBER_SAMPLE_DIR / AMBER_SAMPLE_FILES["kilt"]
# A staged Space (`namesake publish space`) carries its artifacts here; a checkout has none.
STAGED_ARTIFACTS = Path(__file__).resolve().parent / STAGED_FOLDER
CSS = """
.ns-hit { border: 1px solid #d0d7de; border-radius: 8px; padding: .5em .75em; margin: .4em 0; }
.ns-hit[data-verdict="gold"] { border-left: 6px solid #1a7f37; }
.ns-hit[data-verdict="confused"] { border-left: 6px solid #cf222e; }
.ns-hit[data-verdict="same_name"] { border-left: 6px solid #bf8700; }
.ns-hit-head { font-weight: 600; }
.ns-entity, .ns-score { font-size: .85em; color: #57606a; }
.ns-snippet { margin: .25em 0; }
.ns-message { padding: .5em .75em; border-radius: 6px; background: #ddf4ff; margin: .4em 0; }
.ns-message.ns-error { background: #ffebe9; color: #a40e26; }
.ns-table { border-collapse: collapse; width: 100%; font-size: .9em; margin: .5em 0; }
.ns-table th, .ns-table td { border-bottom: 1px solid #d0d7de; padding: .25em .5em; }
.ns-gold-row { background: #dafbe1; }
.ns-scroll { overflow-x: auto; }
.ns-heatmap { line-height: 1.9; font-size: 1.05em; }
.ns-mention { text-decoration-thickness: 2px; text-underline-offset: 3px; }
"""
INTRO = """# namesake: retrieval on ambiguous names
Many entities share a name, and retrievers favour the popular one. Try a query from the
AmbER benchmark, e.g. *What musical instrument does Abe Lincoln play?*: the trombonist is
asked about, and the president is what comes back."""


# Gradio's queue, sized by benchmarks/bench_space_load.py (benchmarks/README.md, "The Space
# under load"; 2 CPU cores). One request of each kind at a time: with 2 at a time, 8 users got
# 11% fewer requests through (22.9/s against 25.6/s), since search, open set and score already
# run side by side and share the two cores. Up to 64 waiting requests: 32 users (at most one
# request each) waited 3.6 s at p95 for a search with no request refused; at 64 the wait
# would double, and later arrivals are better told to come back than left waiting longer.
CONCURRENCY_LIMIT = 1
MAX_QUEUE = 64


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--artifacts",
        default=os.environ.get("NAMESAKE_ARTIFACTS")
        or (str(STAGED_ARTIFACTS) if STAGED_ARTIFACTS.is_dir() else "demo_output"),
        help="folder `make demo` wrote (default: $NAMESAKE_ARTIFACTS, else the staged "
        f"Space's {STAGED_FOLDER}/ beside this file, else demo_output)",
    )
    parser.add_argument(
        "--corpus",
        default=os.environ.get("NAMESAKE_CORPUS")
        or (str(SAMPLE_CORPUS) if SAMPLE_CORPUS.exists() else None),
        help="KILT knowledge source to build missing indexes from (default: the bundled sample)",
    )
    parser.add_argument("--dataset", help="AmbER folder or Hub id (default: <artifacts>/amber)")
    parser.add_argument("--wes-model", help="saved WES scorer (default: <artifacts>/wes_scorer)")
    parser.add_argument("--passage-encoder", help="encoder whose attention is shown")
    parser.add_argument(
        "--host",
        default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        help="address to serve on (default 127.0.0.1: this machine only)",
    )
    parser.add_argument(
        "--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", "7860"))
    )
    parser.add_argument("--share", action="store_true", help="also open a public Gradio link")
    parser.add_argument(
        "--concurrency-limit",
        type=int,
        default=CONCURRENCY_LIMIT,
        help=f"requests of one kind run at once (default {CONCURRENCY_LIMIT}; see below)",
    )
    parser.add_argument(
        "--max-queue",
        type=int,
        default=MAX_QUEUE,
        help=f"requests waiting before new ones are turned away (default {MAX_QUEUE})",
    )
    return parser.parse_args(argv)


def guarded(*on_error):
    """Shows a handler's failure as a message in its first output and `on_error` in the
    others: bad input says what to fix; anything else is logged, never shown as a trace."""

    def decorate(handler):
        @functools.wraps(handler)
        def run(*args):
            try:
                return handler(*args)
            except NamesakeError as error:
                notice = formatting.message(str(error), "error")
            except Exception:
                logger.exception("%s failed", handler.__name__)
                notice = formatting.message(
                    "Something went wrong on the server (details in its log); "
                    "the app is still running.",
                    "error",
                )
            return (notice, *on_error)

        return run

    return decorate


def entity_choices(result) -> list[tuple[str, str]]:
    return [
        (f"{m.label} ({m.qid}, {head_or_tail(m.is_head)})", m.qid)
        for m in sorted(result.members, key=lambda m: -m.popularity)
    ]


def build_demo(explorer: Explorer | None, problem: str | None = None) -> gr.Blocks:
    """The page. Without an explorer (artifacts missing), every tab shows `problem`."""

    def require() -> Explorer:
        if explorer is None:
            raise NamesakeError(problem or "The app's artifacts are not loaded.")
        return explorer

    banner = formatting.message(problem, "error") if problem else ""
    examples = explorer.examples() if explorer else []
    pages = explorer.passage_choices() if explorer else []
    first_title, first_passage = explorer.first_passage(pages[0][1]) if pages else ("", "")
    with gr.Blocks(title="namesake: ambiguous entity retrieval", analytics_enabled=False) as demo:
        gr.Markdown(INTRO)
        gr.HTML(banner, elem_id="artifacts-problem")

        with gr.Tab("Ambiguous search", id="search-tab"):
            with gr.Row():
                example = gr.Dropdown(
                    examples,
                    value=examples[0] if examples else None,
                    label="An AmbER query (tail entity first, then head)",
                    elem_id="example",
                )
                k = gr.Slider(1, 20, value=5, step=1, label="Documents per retriever")
            query = gr.Textbox(
                label="Query",
                value=examples[0] if examples else "",
                placeholder="Ask about an ambiguous name",
                elem_id="query",
            )
            search = gr.Button("Search", variant="primary", elem_id="search")
            search_notice = gr.HTML(elem_id="search-notice")
            with gr.Row():
                bm25_hits = gr.HTML(elem_id="bm25-results")
                dense_hits = gr.HTML(elem_id="dense-results")
                with gr.Column():
                    gold = gr.Radio([], label="Which entity is the query about?", elem_id="gold")
                    members = gr.HTML(elem_id="set-members")
            result_state = gr.State()

        with gr.Tab("AmbER browser", id="browser-tab"):
            with gr.Row():
                set_name = gr.Textbox(
                    label="Set name", placeholder="e.g. Abe Lincoln", elem_id="set-name"
                )
                set_pick = gr.Dropdown(
                    explorer.set_names() if explorer else [],
                    value=None,
                    label="…or pick a set (type to filter)",
                    elem_id="set-pick",
                )
            open_set = gr.Button("Open set", variant="primary", elem_id="open-set")
            set_notice = gr.HTML(elem_id="set-notice")
            set_view = gr.HTML(elem_id="set-view")

        with gr.Tab("Where the encoder looks", id="attention-tab"):
            gr.Markdown(
                "CLS attention of the passage encoder's last layer over `title [SEP] passage`"
                " (darker = more attention); named entities (spaCy) are underlined and ranked,"
                " least attended first: the ones a dense retriever tends to miss."
                + (f" Encoder: `{explorer.artifacts.passage_encoder}`." if explorer else "")
            )
            page = gr.Dropdown(
                pages,
                value=pages[0][1] if pages else None,
                label="A page's first passage",
                elem_id="page-pick",
            )
            title = gr.Textbox(first_title, label="Title", elem_id="passage-title")
            passage = gr.Textbox(first_passage, label="Passage", lines=5, elem_id="passage")
            show = gr.Button("Show attention", variant="primary", elem_id="show-attention")
            attention_notice = gr.HTML(elem_id="attention-notice")
            heat = gr.HTML(elem_id="heatmap")
            ranking = gr.HTML(elem_id="entity-ranking")

        with gr.Tab("Is this answer right?", id="answer-tab"):
            gr.Markdown(
                "Exact match says *NYC* is wrong for *New York City*. The WES metric weighs"
                " lexical evidence and the best-matching span of the answer, as people judge."
                " The question is optional: the metric judges answers with or without it."
            )
            question = gr.Textbox(
                label="Question (optional)",
                value="Which city is the largest in the United States?",
                elem_id="question",
            )
            references = gr.Textbox(
                label="Reference answers, one per line",
                lines=3,
                value="New York City",
                elem_id="references",
            )
            candidate = gr.Textbox(label="Candidate answer", value="NYC", elem_id="candidate")
            score = gr.Button("Score", variant="primary", elem_id="score")
            answer_notice = gr.HTML(elem_id="answer-notice")
            answer = gr.HTML(elem_id="answer")

        with gr.Tab("Leaderboard", id="leaderboard-tab"):
            board, curve, board_problem = "", None, ""
            try:
                board, curve = require().leaderboard()
            except NamesakeError as error:
                board_problem = formatting.message(str(error), "error")
            gr.HTML(board_problem, elem_id="leaderboard-notice")
            gr.Image(
                curve,
                label="Accuracy@1 and entity confusion by popularity decile",
                interactive=False,
                visible=curve is not None,
                elem_id="popularity-curve",
            )
            gr.Markdown(board, elem_id="leaderboard")

        # --- events ----------------------------------------------------------------------
        example.input(lambda text: text, example, query)

        @guarded("", "", gr.Radio(choices=[], value=None, visible=False), "", None)
        def run_search(text, depth):
            result = require().search(text, depth)
            choices = entity_choices(result)
            return (
                formatting.search_summary(result),
                formatting.results_column(result, "bm25"),
                formatting.results_column(result, "dense"),
                gr.Radio(choices=choices, value=result.gold_qid, visible=bool(choices)),
                formatting.members_table(result.members, result.gold_qid) if choices else "",
                result,
            )

        search_outputs = [search_notice, bm25_hits, dense_hits, gold, members, result_state]
        search.click(run_search, [query, k], search_outputs)
        query.submit(run_search, [query, k], search_outputs)

        @guarded(gr.skip(), gr.skip(), gr.skip())
        def rejudge(result, qid):
            if result is None:
                raise NamesakeError("Search first, then pick the entity the query is about.")
            result = require().with_gold(result, qid or None)
            return (
                formatting.search_summary(result),
                formatting.results_column(result, "bm25"),
                formatting.results_column(result, "dense"),
                formatting.members_table(result.members, result.gold_qid),
            )

        gold.input(rejudge, [result_state, gold], [search_notice, bm25_hits, dense_hits, members])

        @guarded("")
        def show_set(name):
            found, entities, queries = require().open_set(name)
            return "", formatting.set_view(found, entities, queries)

        open_set.click(show_set, set_name, [set_notice, set_view])
        set_name.submit(show_set, set_name, [set_notice, set_view])
        set_pick.input(lambda name: name, set_pick, set_name).then(
            show_set, set_name, [set_notice, set_view]
        )

        @guarded(gr.skip(), gr.skip())
        def pick_page(wikipedia_id):
            return ("", *require().first_passage(wikipedia_id))

        page.input(pick_page, page, [attention_notice, title, passage])

        @guarded("", "")
        def run_attention(title_text, passage_text):
            view = require().attention(title_text, passage_text)
            return "", formatting.heatmap(view), formatting.entity_ranking(view)

        show.click(run_attention, [title, passage], [attention_notice, heat, ranking])

        @guarded("")
        def run_score(reference_text, candidate_text, question_text):
            result = require().score_answer(reference_text, candidate_text, question_text)
            return "", formatting.answer_verdict(result)

        answer_inputs = [references, candidate, question]
        score.click(run_score, answer_inputs, [answer_notice, answer])
        candidate.submit(run_score, answer_inputs, [answer_notice, answer])
    return demo


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    try:
        artifacts = load_artifacts(
            args.artifacts,
            corpus=args.corpus,
            dataset=args.dataset,
            wes_model=args.wes_model,
            passage_encoder=args.passage_encoder,
            report=logger.info,
        )
        explorer, problem = Explorer(artifacts), None
        logger.info("Loaded %s: %d AmbER sets", args.artifacts, len(explorer.sets))
    except NamesakeError as error:  # still serve, and say on the page what is missing
        explorer, problem = None, str(error)
        logger.warning("%s", error)
    theme = gr.themes.Default(font=["system-ui", "sans-serif"], font_mono=["monospace"])
    demo = build_demo(explorer, problem)
    demo.queue(default_concurrency_limit=args.concurrency_limit, max_size=args.max_queue)
    demo.launch(
        server_name=args.host,
        server_port=args.port,
        share=args.share,
        css=CSS,
        theme=theme,
        show_error=False,
    )


if __name__ == "__main__":
    main()
