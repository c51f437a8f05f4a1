# namesake — `make install && make demo`, then `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_OUT ?= demo_output
# Everything runs offline: models and datasets come from local paths or installed packages.
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1

.PHONY: install test demo lint bench bench-retrieval

install:
	$(PYTHON) -m venv $(VENV)
	# Pinned: this version has a local CPU wheel; anything else pulls GBs of CUDA packages.
	$(BIN)/pip install torch==2.13.0
	$(BIN)/pip install -e ".[dev]"

test:
	$(BIN)/python -m pytest -q

demo:
	$(BIN)/python dataset_scripts/amber/build.py --out $(DEMO_OUT)/amber --jsonl-dir $(DEMO_OUT)/amber_jsonl
	$(BIN)/namesake amber compare --corpus dataset_scripts/amber/sample/kilt_knowledgesource-sample.json \
		--dataset $(DEMO_OUT)/amber --out $(DEMO_OUT)/retrieval
	# WES from the real 206-page Wikipedia excerpt; --all-targets keeps links to pages outside it.
	$(BIN)/python dataset_scripts/wes/build.py --out $(DEMO_OUT)/wes --all-targets
	$(BIN)/python training/train_wes_cross_encoder.py --dataset $(DEMO_OUT)/wes \
		--config 2016thresh2pairs --output_dir $(DEMO_OUT)/wes_cross_encoder --epochs 1
	$(BIN)/namesake wes score --model $(DEMO_OUT)/wes_cross_encoder \
		--answer "NYC" "New York City" --answer "U.S." "United States" \
		--answer "the Big Apple" "New York City" --answer "Paris" "London"

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench:
	$(BIN)/python benchmarks/bench_amber_stage1.py
	$(BIN)/python benchmarks/bench_entity_confusion.py

bench-retrieval:
	$(BIN)/python benchmarks/bench_retrieval.py
