"""errbook: the ROCm migration error notebook toolkit (entries, validation, triage, runbooks, site)."""

__version__ = "0.1.0"
SCHEMA_VERSION = "1.2.0"
