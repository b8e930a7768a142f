"""The search space: cell ops and families, architecture encodings, topology functions, analysis, the family registry, architecture selection and the NB201 benchmark table."""

from . import family_loader as _family_loader  # noqa: F401,E402 - loads the family names parse_arch accepts
