"""The service's secret masking lives in `funes_py.redact` (the source adapters use it too); kept here so
`funes_py.server.redact.mask_secrets` still names it."""

from ..redact import mask_secrets

__all__ = ["mask_secrets"]
