"""Tests run offline, as the demo does: set before `datasets` / `huggingface_hub` are imported,
since both read these variables once, at import time."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
