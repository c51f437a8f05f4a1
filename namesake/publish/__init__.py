"""Everything namesake puts on the Hugging Face Hub, each first staged as the exact folder
to upload and validated there: ``namesake publish``."""
