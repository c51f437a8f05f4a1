"""Publishing namesake's datasets, metrics, Space and models on the Hugging Face Hub: each
kind is staged into a folder, validated, and only then uploaded (``namesake publish``)."""
