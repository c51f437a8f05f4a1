"""Judge QA answers against gold answers with the ``wes_similarity`` evaluate metric, once
without the questions and once with them: "NYC" is right for "New York City", which exact
match and token F1 score 0. By default the metric's own scorer (namesake-wes-scorer-v5) judges
a few built-in answers, each question with a right answer phrased unlike the gold one and a
wrong one::

    python examples/score_answers.py
    python examples/score_answers.py --answers mine.jsonl   # {"question", "answer", "gold": [...]}

Nothing to build first: the metric's default scorer ships with namesake (``make install``).
"""

from __future__ import annotations

import argparse
import json

#: (question, gold answers, answer): per question a right answer, then a wrong one
ANSWERS = [
    ("Where are the headquarters of the United Nations?", ["New York City"], "NYC"),
    ("Where are the headquarters of the United Nations?", ["New York City"], "Geneva"),
    ("Who discovered polonium?", ["Marie Curie"], "It was discovered by Curie in 1898."),
    ("Who discovered polonium?", ["Marie Curie"], "Ernest Rutherford"),
    ("When did Apollo 11 land on the Moon?", ["20 July 1969"], "On July 20, 1969."),
    ("When did Apollo 11 land on the Moon?", ["20 July 1969"], "In 1972."),
    ("Who wrote Pride and Prejudice?", ["Jane Austen"], "Austen"),
    ("Who wrote Pride and Prejudice?", ["Jane Austen"], "Charlotte Bronte"),
]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--answers", help="JSON lines: question, answer, gold (default: built in)")
    p.add_argument("--metric", help="the wes_similarity folder (default: namesake's copy)")
    p.add_argument("--model", help="a saved WES scorer or cross-encoder (default: the metric's)")
    return p


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    import evaluate

    from namesake.metrics import metric_path

    answers = ANSWERS
    if args.answers:
        with open(args.answers, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        answers = [(row.get("question", ""), row["gold"], row["answer"]) for row in rows]
    questions, gold, predictions = (list(column) for column in zip(*answers, strict=True))
    wes = evaluate.load(args.metric or str(metric_path("wes_similarity")))
    kwargs = {"predictions": predictions, "references": gold, "model_name_or_path": args.model}
    without, with_questions = wes.compute(**kwargs), wes.compute(**kwargs, questions=questions)

    scorer, threshold = f"{without['model']} ({without['scorer']})", without["threshold"]
    print(f"{scorer}: an answer is right at {threshold:.3f} or above")
    print("question | gold | answer | without the question | with it")
    for row, *scores in zip(answers, without["scores"], with_questions["scores"], strict=True):
        verdicts = [f"{s:.3f} {'right' if s >= threshold else 'wrong'}" for s in scores]
        print(" | ".join([row[0], " / ".join(row[1]), row[2], *verdicts]))
    for result in (without, with_questions):
        right = round(result["accuracy"] * len(answers))
        print(
            f"{result['regime']}: {right} of {len(answers)} judged right; {result['regime_reason']}"
        )
    print(f"exact match {without['exact_match']:.1f}, token F1 {without['f1']:.1f} (in points)")


if __name__ == "__main__":
    main()
