"""Everything namesake puts on the Hugging Face Hub (``namesake publish``): datasets,
metrics, the demo Space and models, each first staged as the exact folder to upload and
validated there, then uploaded."""
