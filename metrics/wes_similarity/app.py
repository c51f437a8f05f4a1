"""The metric's Space: its page, served by gradio (`python app.py`, as the Hub runs it).

The page's code has one source, namesake's `namesake.publish.metric_widget`: a staged
Space (`namesake publish metric wes_similarity`) carries a copy of it beside this
file, since it has no namesake installed; in namesake's checkout the package provides it.
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent

if (HERE / "metric_widget.py").is_file():  # the staged Space's copy
    from metric_widget import launch
else:  # namesake's checkout, or an installed namesake
    from namesake.publish.metric_widget import launch

launch(HERE / "wes_similarity.py")
