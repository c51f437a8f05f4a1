"""The AmbER build: dumps in, a Hub dataset folder out. `pipeline` runs the stages, each in the
file named after it: `entities` (1), `names` (2), `relations` (3), `alignment` (4),
`instances` (5); the inputs (`wikidata`, `pageviews`, `kilt`), the published reference data
(`reference`), the dataset folder (`dataset`), stage 1's resumable chunks (`entity_chunks`) and
the import of the authors' release (`released`)."""
