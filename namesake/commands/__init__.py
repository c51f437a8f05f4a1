"""`namesake` commands, one file per command group, each registering its parser beside its
handler (`register(groups)`), as huggingface/datasets' CLI does."""
