"""Publishing to the Hugging Face Hub (`namesake publish`): every kind stages the exact
folder it uploads (`staging`), checks it, and uploads that folder and nothing else
(`upload`, one code path over ``huggingface_hub.HfApi``). The kinds: the AmbER and WES
datasets (`datasets`), a trained model (`models`, also the training scripts'
``--push_to_hub``), the metrics as Spaces (`metric_space`) and the demo Space
(`demo_space`).

Nothing is imported here: the training plumbing (`namesake.training`) imports `models`, and
must not load the dataset kinds with it.
"""
