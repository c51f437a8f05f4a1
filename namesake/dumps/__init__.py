"""Dumps read as streams: `reading` (bz2/gzip/plain, in blocks of whole lines, decompressed in
background threads, parsed here or in worker processes) and `restart` (a pass resumed partway
through a dump, from a recorded offset). Writing outputs is `namesake.outputs`'s job.
"""
