"""Tenancy: many users' memories under one data root, kept warm and indexed. Shared by the recall service
(`funes_py.server`) and the agent-archive proxy (`funes_py.proxy`), which keep only their policy.

| module      | job                                                                                    |
|-------------|----------------------------------------------------------------------------------------|
| `auth`      | who is asking: bearer tokens and JWTs, the ingest key, a user's tenant id (a hash)       |
| `storage`   | where tenants live: a local directory or an S3 prefix; sources, stamps, index plans      |
| `registry`  | tenant -> warm engine: open on first use, close idle or least recently used ones         |
| `scheduler` | when a tenant is indexed: debounce, one run at a time, the stamp that survives a crash   |
| `tenants`   | `Tenants`: the above together, with the recall, store and forget paths and their threads |

Nothing here imports the compiled engine at import time: `Engine` is imported when a tenant opens.
"""

from .auth import TenantTokenVerifier, tenant_id
from .registry import TenantRegistry
from .scheduler import IndexScheduler
from .storage import LocalData, S3Data, TenantData, open_data
from .tenants import TenancyLimits, Tenants, live_tenancy, open_engine

__all__ = [
    "IndexScheduler",
    "LocalData",
    "S3Data",
    "TenancyLimits",
    "TenantData",
    "TenantRegistry",
    "TenantTokenVerifier",
    "Tenants",
    "live_tenancy",
    "open_data",
    "open_engine",
    "tenant_id",
]
