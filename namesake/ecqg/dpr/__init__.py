"""DPR (Karpukhin et al. 2020) for the entity-conditioned question generation pipeline, one
module per job as in Tevatron:

- :mod:`.data`: DPR's training files (``read_dpr_file``), test files (``read_qa_file``) and
  the passage string the encoders see (``passage_string``);
- :mod:`.modeling`: the bi-encoder, its in-batch-negative loss and the export to a
  sentence-transformers folder;
- :mod:`.evaluation`: DPR's answer matching (``has_answer``) and top-k retrieval accuracy.

**Dot product.** DPR is trained and searched with the unnormalised dot product. The
exported encoders declare it (sentence-transformers' ``similarity_fn_name="dot"``), and
``namesake.retrieval.DenseRetriever`` searches with the similarity a model declares, so
``namesake retrieve --model`` and the Space serve a trained DPR as it was trained.

**Passage input.** Passages are encoded as ``"{title} {sep} {text}"`` (the tokenizer's own
separator token), exactly the string the DenseRetriever encodes
(``namesake.retrieval.dense.passage_input``), so training and retrieval see the same tokens.
"""
