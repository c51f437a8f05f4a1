"""WES (Wiki Entity Similarity), two subsystems.

- Mining (this package's modules: `mining`, `pairs`, `hard_negatives`, `dataset`, `build`):
  entity names from link texts out of Wikipedia dumps, the synonym pairs and their negatives,
  and the Hub dataset.
- Answer scoring (`namesake.wes.scoring`): judging QA answers the way people do, with the
  `wes_similarity` metric's scorers (`scoring.metric_code`), fitting them on human judgments
  (`scoring.answer_scorer`, `scoring.scorer_training`), the judgments themselves
  (`scoring.judgments`), agreement with people (`scoring.judge`, `scoring.thresholds`) and
  the classic metrics beside them (`scoring.classic_metrics`).
"""
