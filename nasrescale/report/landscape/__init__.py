"""The landscape report (``kind = "landscape"``): each cell's own best LR against the path-depth
rule, the headroom a per-cell LR leaves, and the ranking it gives (:mod:`.write`)."""
