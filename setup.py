"""Package discovery for setuptools (everything else is in pyproject.toml).

``find_namespace_packages`` finds every package under ``nasrescale/`` (data folders such as
``data/splits`` included, so their files ship as package data); the three data packages are added by
name, since their folders sit at the repository root (mapped in ``[tool.setuptools.package-dir]``)
and cannot be discovered under ``nasrescale/``.
"""

from setuptools import find_namespace_packages, setup

DATA_PACKAGES = ["nasrescale.cells", "nasrescale.protocols", "nasrescale.pipelines"]

setup(packages=find_namespace_packages(include=["nasrescale", "nasrescale.*"], exclude=["*.__pycache__"]) + DATA_PACKAGES)
