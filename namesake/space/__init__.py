"""The Space's logic, without the UI: artifacts (what it loads), documents (page texts),
explorer (search, sets, attention, answer scoring) and formatting (the HTML it shows).
``space_app/app.py`` wires them into Gradio."""
