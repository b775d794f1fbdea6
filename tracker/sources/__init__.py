"""The files of one source, wherever they are: a folder, an archive or a download.

* :mod:`tracker.sources.tree`: the :class:`~tracker.sources.tree.SourceTree` every reader
  walks, with a record of every file read (also in parts, by other processes).
* :mod:`tracker.sources.archive` and :mod:`tracker.sources.archive_index`: ``.tar*`` and
  ``.zip`` archives read in place, every hostile entry refused;
  :mod:`tracker.sources.tar`: tar streams read forward, headers read by hand.
* :mod:`tracker.sources.trail`: what a source looked like, so that an unchanged one is
  not read again.
* :mod:`tracker.sources.fetch`: downloads over HTTP(S), cached; the only user of httpx.
"""
