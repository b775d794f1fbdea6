"""The release gate: one version pair of one analysis and a policy → a verdict and an exit code.

* :mod:`tracker.gate.policy`: the policy file (floors, q level, what fails) and the
  acknowledgements file, with stored triage as acknowledgements.
* :mod:`tracker.gate.decision`: the analysis of exactly the pair, judged under the policy.
* :mod:`tracker.gate.items`: what the gate reports — one item per series, the
  ``missing``, ``invalid``, ``expected`` and ``scaling`` kinds, and items that share a
  cause as one issue.
* :mod:`tracker.gate.output`: the verdict as text (one line per issue), Markdown (and a
  sticky pull-request comment's body), JSON, JUnit XML and GitHub annotations.
"""
