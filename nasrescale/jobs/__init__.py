"""Training jobs: one architecture x protocol x seed (``job``), fused groups of jobs (``fusion``) and how an executor groups them (``grouping``)."""
