"""What several report kinds share: Markdown tables (``markdown``), how figures are written
(``plots``), provenance and job records, verdict sentences, the section machinery (``page``), the
benchmark reference and protocol order (``reference``), short architecture names, the held-out
tuning cells and the Method table."""
