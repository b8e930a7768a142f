"""What several report kinds share: Markdown tables (``markdown``), how figures are written
(``figure_output``), provenance and job records, verdict sentences (``claim_verdicts``), the
section machinery (``page``), the benchmark reference and protocol order (``reference``), short
architecture names, the held-out tuning cells and the Method table."""
