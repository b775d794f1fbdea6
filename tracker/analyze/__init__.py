"""The analysis use case: what is stored → the statistics of :mod:`tracker.stats` → findings.

* :mod:`tracker.analyze.run`: one analysis run (store → records → statistics → findings
  → store), and :mod:`tracker.analyze.settings`, the settings it runs under.
* :mod:`tracker.analyze.collect`: the stored samples as series; :mod:`tracker.analyze.sweeps`:
  throughput at the interactivity target per stored sweep.
* :mod:`tracker.analyze.groupings`: which results may be grouped or compared, and
  findings that share a cause as one issue.
* :mod:`tracker.analyze.findings`: analysis results as findings to store.
* :mod:`tracker.analyze.platforms`: platforms compared per accelerator (``tracker compare``).
* :mod:`tracker.analyze.summary`: a run and stored findings as text and JSON.
"""
