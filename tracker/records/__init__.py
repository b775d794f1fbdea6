"""Plain records passed between the layers: frozen dataclasses and the standard library only.

* :mod:`tracker.records.results`: what sources hold and the store keeps — labels,
  parsed and stored results, systems, software versions, artifacts, the samples the
  analysis reads, and what storing a source did.
* :mod:`tracker.records.findings`: what one analysis run hands to the gate and the
  report — what a series key stands for, sweeps read at a target, findings as made
  and as stored, and the settings they were made under.

Nothing here imports another part of the tracker at run time; every other layer
may import it.
"""
