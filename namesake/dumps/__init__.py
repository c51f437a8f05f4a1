"""Dumps read as streams: `reading` (bz2/gzip/plain, in blocks of whole lines, decompressed in
background threads, parsed here or in worker processes) and `restart` (a pass resumed partway
through a dump, from a recorded offset); and written: `formats` (each dump format's records and
files, for the test fixtures, the hand-made AmbER sample and the benchmark dumps). Writing
outputs is `namesake.outputs`'s job.
"""
