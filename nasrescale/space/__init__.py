"""The search space: cell ops and families, architecture encodings, topology functions, analysis, the family registry, architecture selection and the NB201 benchmark table."""
