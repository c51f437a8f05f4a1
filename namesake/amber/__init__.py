"""AmbER, two subsystems.

- `namesake.amber.build`: the benchmark built from dumps (Wikidata, page views, KILT), stage by
  stage (`build.pipeline` runs them), written as a Hub dataset folder; or the authors' release
  imported (`build.released`).
- `namesake.amber.evaluation.scoring`: retrievers run on its configs (`evaluation.retrieve`), their
  predictions scored (`evaluation.scoring`) and reported beside the paper's figures
  (`evaluation.report`, `evaluation.paper`), compared (`evaluation.compare`,
  `evaluation.compare_runs`, `evaluation.statistics`) and read end to end
  (`evaluation.readers`).

Evaluation reads the build's reference data and instances; the build never imports the
evaluation.
"""
