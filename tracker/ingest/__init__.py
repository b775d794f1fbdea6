"""Getting results in: sources found, read by their format's reader, labelled and stored.

* :mod:`tracker.ingest.jobs`: declarative TOML jobs (the shipped ones live in ``jobs/``)
  and where a remote source lives.
* :mod:`tracker.ingest.run`: one source end to end (fetch, unpack, detect, read, store),
  and ``tracker pull`` for published rounds.
* :mod:`tracker.ingest.parallel`: a large folder read by a pool of worker processes.
"""
