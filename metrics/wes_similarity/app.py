from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

# Load the module from this folder (a Space serves it from its own checkout).
module = evaluate.load(str(Path(__file__).resolve().parent / "wes_similarity.py"))
launch_gradio_widget(module)
