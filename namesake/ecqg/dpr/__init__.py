"""DPR (Karpukhin et al. 2020) for the entity-conditioned question generation pipeline, one
module per job as in Tevatron:

- :mod:`.data`: DPR's training files (``read_dpr_file``), test files (``read_qa_file``) and
  the passage string the encoders see (``passage_string``);
- :mod:`.modeling`: the bi-encoder, its in-batch-negative loss and the export to a
  sentence-transformers folder;
- :mod:`.evaluation`: DPR's answer matching (``has_answer``) and top-k retrieval accuracy.

**Dot product vs cosine.** DPR is trained and searched with the unnormalised dot product.
``namesake.retrieval.DenseRetriever`` L2-normalises embeddings, i.e. ranks by cosine. The
exported encoders therefore rank slightly differently there than under DPR's own scoring;
``training/evaluate_dpr.py --similarity dot`` searches with the unnormalised dot product
(DPR's setting), ``--similarity cosine`` (default) with the DenseRetriever.

**Passage input.** Passages are encoded as ``"{title} {sep} {text}"`` (the tokenizer's own
separator token), exactly the string the DenseRetriever encodes
(``namesake.retrieval.dense.passage_input``), so training and retrieval see the same tokens.
"""
