"""The metric's Space: `python app.py` serves its page (namesake.publish.metric_widget)."""

from pathlib import Path

HERE = Path(__file__).resolve().parent

if (HERE / "metric_widget.py").is_file():  # the staged Space's copy: it has no namesake
    from metric_widget import launch
else:  # namesake's checkout, or an installed namesake
    from namesake.publish.metric_widget import launch

launch(HERE / "wes_similarity.py")
