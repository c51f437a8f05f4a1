"""Answer scorers measured against human judgments (``namesake wes judge``).

A **scorer** is a callable ``(questions, references, candidates) -> np.ndarray`` of floats, one
per candidate, higher = more likely correct (``namesake.wes.scoring.classic_metrics`` has the
classic metrics as scorers). A scorer may carry a fixed ``threshold`` attribute (a saved scorer's
decision threshold); ``saved_thresholds`` gives one by name too.

``evaluate_scorers(records, scorers)`` scores every judged answer once per scorer and reports,
for each dataset and for "all" datasets pooled, per scorer and per group (``all``, the answer
kinds ``short`` / ``sentence``, and ``system:<name>`` per EVOUNA system):

- ``n`` answers and ``share_correct`` (people's judgement) in the group, both splits;
- ``roc_auc`` on the group's **test** split (Mann-Whitney U, ties count half; None with one class);
- ``accuracy`` on the group's test split at the scorer's **dev threshold**. The threshold is
  chosen **per dataset**, as a user with that kind of data would: the one maximising accuracy on
  the dataset's dev split (every kind and system together), then applied unchanged to each of
  its groups. Pooled over datasets, each answer is judged at its own dataset's threshold;
- ``accuracy_saved``: test accuracy at the scorer's own fixed threshold, when it has one;
- ``kappa`` / ``kappa_saved``: Cohen's κ (scikit-learn's ``cohen_kappa_score``) between
  people's verdicts and the scorer's at the dev / saved threshold, on the same test answers:
  agreement as answer-equivalence studies report it (BEM, LLM-as-judge), beside accuracy,
  which a scorer can inflate by calling most answers right when most are (None when κ is
  undefined: both sides give one verdict only);
- ``delta_vs_lexical_sum``: ``accuracy`` minus the lexical sum's accuracy at its own dev
  threshold on the same test answers (the lexical sum, ``namesake.text.lexical_evidence``, is
  always scored as the reference point, also when it is not asked for as a scorer); for a saved
  threshold, ``delta_saved_vs_lexical_sum`` likewise.

Rows where a scorer does worse than the lexical sum are kept. ``markdown_tables(result)`` renders
one table per dataset.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from namesake.markdown import markdown_table
from namesake.wes.scoring.judgments import KINDS, JudgedAnswer
from namesake.wes.scoring.thresholds import best_threshold, roc_auc

Scorer = Callable[[Sequence[str], Sequence[Sequence[str]], Sequence[str]], np.ndarray]
BASELINE = "lexical_sum"
ALL = "all"

# --- scoring ---


def score_records(
    records: Sequence[JudgedAnswer], scorers: Mapping[str, Scorer]
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """({name: one score per record}, {name: seconds taken})."""
    questions = [r.question for r in records]
    references = [list(r.references) for r in records]
    candidates = [r.candidate for r in records]
    scores, seconds = {}, {}
    for name, scorer in scorers.items():
        start = time.perf_counter()
        values = np.asarray(scorer(questions, references, candidates), dtype=np.float64)
        seconds[name] = time.perf_counter() - start
        if values.shape != (len(records),):
            raise ValueError(f"scorer {name!r} returned {values.shape} scores for {len(records)}")
        if np.isnan(values).any():
            raise ValueError(f"scorer {name!r} returned NaN scores")
        scores[name] = values
    return scores, seconds


def _nan_to_none(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def _kappa(labels: np.ndarray, verdicts: np.ndarray) -> float | None:
    """Cohen's κ of the scorer's verdicts against people's; None where it is undefined (no
    answer, or people and scorer each give a single verdict, the same one)."""
    if (
        not len(labels)
        or (labels.all() or not labels.any())
        and (verdicts.all() or not verdicts.any())
    ):
        return None
    from sklearn.metrics import cohen_kappa_score

    return _nan_to_none(float(cohen_kappa_score(labels, verdicts)))


def _groups(records: Sequence[JudgedAnswer]) -> dict[str, np.ndarray]:
    kinds = np.array([r.kind for r in records])
    systems = np.array([r.system for r in records])
    groups = {ALL: np.ones(len(records), dtype=bool)}
    for kind in KINDS:
        groups[kind] = kinds == kind
    for system in sorted(set(systems) - {""}):
        groups[f"system:{system}"] = systems == system
    return groups


def evaluate_scorers(
    records: Sequence[JudgedAnswer],
    scorers: Mapping[str, Scorer],
    *,
    saved_thresholds: Mapping[str, float] | None = None,
    scores: Mapping[str, np.ndarray] | None = None,
    seconds: Mapping[str, float] | None = None,
) -> dict:
    """The JSON-able evaluation of ``scorers`` on ``records`` (see the module docstring).

    ``scores`` / ``seconds``: scores already computed (``score_records``), by scorer name."""
    if not records:
        raise ValueError("no judged answer to evaluate")
    saved = dict(saved_thresholds or {})
    for name, scorer in scorers.items():
        threshold = getattr(scorer, "threshold", None)
        if name not in saved and isinstance(threshold, int | float):
            saved[name] = float(threshold)
    scores = dict(scores or {})
    seconds = dict(seconds or {})
    todo = {n: s for n, s in scorers.items() if n not in scores}
    if BASELINE not in scores and BASELINE not in todo:
        from namesake.wes.scoring.classic_metrics import LexicalScorer

        todo[BASELINE] = LexicalScorer(BASELINE)
    new_scores, new_seconds = score_records(records, todo)
    scores |= new_scores
    seconds |= new_seconds
    names = [n for n in scorers if n in scores] + [n for n in scores if n not in scorers]

    labels = np.array([r.label for r in records], dtype=bool)
    test = np.array([r.split == "test" for r in records])
    datasets = np.array([r.dataset for r in records])
    dataset_names = sorted(set(datasets))

    # Dev thresholds, per dataset; each answer's threshold is its dataset's.
    thresholds = {
        d: {
            n: best_threshold(labels[(datasets == d) & ~test], scores[n][(datasets == d) & ~test])
            for n in names
        }
        for d in dataset_names
    }
    per_answer = {n: np.zeros(len(records)) for n in names}
    for d in dataset_names:
        for n in names:
            per_answer[n][datasets == d] = thresholds[d][n]
    verdicts = {n: scores[n] >= per_answer[n] for n in names}
    verdicts_saved = {n: scores[n] >= saved[n] for n in names if n in saved}
    correct = {n: v == labels for n, v in verdicts.items()}
    correct_saved = {n: v == labels for n, v in verdicts_saved.items()}

    def block(mask: np.ndarray) -> dict:
        groups = {}
        for group, member in _groups([r for r, m in zip(records, mask, strict=True) if m]).items():
            where = np.flatnonzero(mask)[member]
            on_test = where[test[where]]
            base = float(np.mean(correct[BASELINE][on_test])) if len(on_test) else math.nan
            rows = {}
            for n in names:
                accuracy = float(np.mean(correct[n][on_test])) if len(on_test) else math.nan
                row = {
                    "roc_auc": _nan_to_none(roc_auc(labels[on_test], scores[n][on_test])),
                    "accuracy": _nan_to_none(accuracy),
                    "kappa": _kappa(labels[on_test], verdicts[n][on_test]),
                    "delta_vs_lexical_sum": _nan_to_none(accuracy - base),
                }
                if n in correct_saved:
                    hits = correct_saved[n][on_test]
                    acc_saved = float(np.mean(hits)) if len(hits) else math.nan
                    row["accuracy_saved"] = _nan_to_none(acc_saved)
                    row["kappa_saved"] = _kappa(labels[on_test], verdicts_saved[n][on_test])
                    row["delta_saved_vs_lexical_sum"] = _nan_to_none(acc_saved - base)
                rows[n] = row
            groups[group] = {
                "n": int(len(where)),
                "n_test": int(len(on_test)),
                "share_correct": _nan_to_none(
                    float(np.mean(labels[where])) if len(where) else math.nan
                ),
                "share_correct_test": _nan_to_none(
                    float(np.mean(labels[on_test])) if len(on_test) else math.nan
                ),
                "scorers": rows,
            }
        return groups

    result = {
        "n": len(records),
        "n_test": int(test.sum()),
        "threshold_rule": "per dataset: the accuracy-maximising threshold on its dev split",
        "baseline": BASELINE,
        "scorers": {
            n: {
                "seconds": _nan_to_none(seconds.get(n, math.nan)),
                "answers_per_second": _nan_to_none(
                    len(records) / seconds[n] if seconds.get(n) else math.nan
                ),
                "saved_threshold": saved.get(n),
                "asked": n in scorers,
            }
            for n in names
        },
        "datasets": {},
    }
    for d in dataset_names:
        result["datasets"][d] = {"dev_thresholds": thresholds[d], "groups": block(datasets == d)}
    if len(dataset_names) > 1:
        result["datasets"][ALL] = {
            "dev_thresholds": None,
            "groups": block(np.ones(len(records), dtype=bool)),
        }
    return result


# --- Markdown ---


def _fmt(value, digits=3) -> str:
    return "–" if value is None else f"{round(value, digits) + 0.0:.{digits}f}"  # no "-0.000"


def markdown_tables(result: Mapping, *, fid_system: str = "fid") -> str:
    """One Markdown table per dataset: rows = scorers, columns = test ROC-AUC over all answers,
    short ones, sentences and FiD's; the dev threshold; test accuracy and Cohen's κ at it and the
    accuracy's gain over the lexical sum; test accuracy and κ at a saved threshold where a scorer
    has one."""
    has_saved = any(s["saved_threshold"] is not None for s in result["scorers"].values())
    shown = [n for n, s in result["scorers"].items() if s["asked"]] or list(result["scorers"])
    if BASELINE not in shown:
        shown.append(BASELINE)
    out = []
    for dataset, block in result["datasets"].items():
        groups = block["groups"]
        top = groups[ALL]
        title = "All datasets (per-dataset dev thresholds)" if dataset == ALL else dataset.upper()
        counts = ", ".join(f"{k} {groups[k]['n']:,}" for k in KINDS if k in groups)
        out.append(
            f"### {title}: {top['n']:,} judged answers ({counts}), {top['n_test']:,} on test, "
            f"{100 * top['share_correct']:.1f}% correct\n"
        )
        header = [
            "Scorer",
            "AUC all",
            "AUC short",
            "AUC sentence",
            "AUC FiD",
            "dev threshold",
            "test accuracy",
            "κ",
            "Δ vs lexical sum",
        ]
        if has_saved:
            header += ["saved threshold", "accuracy @ saved", "κ @ saved"]
        rows = []  # one list of cells per scorer
        fid = groups.get(f"system:{fid_system}")
        for name in shown:

            def auc(group, name=name):
                return _fmt(group["scorers"][name]["roc_auc"]) if group else "–"

            row = top["scorers"][name]
            threshold = (
                "per dataset"
                if block["dev_thresholds"] is None
                else _fmt(block["dev_thresholds"][name], 4)
            )
            delta = row["delta_vs_lexical_sum"]
            cells = [
                name,
                auc(top),
                auc(groups.get("short")),
                auc(groups.get("sentence")),
                auc(fid),
                threshold,
                _fmt(row["accuracy"]),
                _fmt(row["kappa"]),
                "–" if delta is None else f"{delta:+.3f}",
            ]
            if has_saved:
                saved = result["scorers"][name]["saved_threshold"]
                cells += [
                    _fmt(saved, 4),
                    _fmt(row.get("accuracy_saved")),
                    _fmt(row.get("kappa_saved")),
                ]
            rows.append(cells)
        out += [markdown_table(header, rows), ""]
    return "\n".join(out)


def judge_scorers(
    records: Sequence[JudgedAnswer],
    scorers: Mapping[str, Scorer],
    left_out: Mapping[str, str] | None = None,
    announce: Callable[[str], None] = print,
) -> dict:
    """`evaluate_scorers` over every scorer that runs: each scores the judged answers on its
    own, and one that fails is left out (``result["left_out"]`` names it, with its error)
    rather than sinking the other scorers' results. `announce` hears each scorer's time."""
    left_out = dict(left_out or {})
    scores, seconds = {}, {}
    for name, scorer in scorers.items():
        try:
            got, took = score_records(records, {name: scorer})
        except Exception as exc:  # one failing scorer does not sink the others' results
            left_out[name] = f"failed: {type(exc).__name__}: {exc}"
            continue
        scores |= got
        seconds |= took
        announce(f"scored {len(records):,} answers with {name} in {took[name]:.1f} s")
    scored = {name: scorer for name, scorer in scorers.items() if name in scores}
    result = evaluate_scorers(records, scored, scores=scores, seconds=seconds)
    result["left_out"] = left_out
    return result
